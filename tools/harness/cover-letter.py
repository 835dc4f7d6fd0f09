#!/usr/bin/env python3
"""Fill in the cover letter git format-patch wrote, and measure the series.

    cover-letter.py TEMPLATE PATCH_DIR VERSION   fill 0000-cover-letter.patch
    cover-letter.py --size PATCH_DIR             print the series size

TEMPLATE's first line is the subject, the rest the text; in it @VERSION@,
@NPATCHES@, @SERIES@ (one line per patch: changed lines and subject) and
@LARGEST@ are replaced by what the series in PATCH_DIR measures.
"""
import glob
import os
import re
import sys


def patches(pdir):
    return sorted(p for p in glob.glob(os.path.join(pdir, '*.patch'))
                  if not os.path.basename(p).startswith('0000-'))


def measure(path):
    """(subject, lines added, lines removed) of one format-patch file."""
    subject, added, removed = None, 0, 0
    in_subject = in_diff = False
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            if subject is None and line.startswith('Subject: '):
                subject = re.sub(r'^Subject: (\[PATCH[^]]*\] )?', '', line)
                in_subject = True
            elif in_subject and line.startswith(' '):
                subject += line     # a folded header line
            elif line.startswith('diff --git '):
                in_diff = True
            elif in_diff and line == '-- ':
                break               # the signature git appends
            elif in_diff and line.startswith('+') and \
                    not line.startswith('+++ '):
                added += 1
            elif in_diff and line.startswith('-') and \
                    not line.startswith('--- '):
                removed += 1
            else:
                in_subject = False
    return subject or '', added, removed


def size(pdir):
    """Per patch (file, subject, added, removed); totals; the largest."""
    rows = [(os.path.basename(p),) + measure(p) for p in patches(pdir)]
    total = sum(r[2] + r[3] for r in rows)
    largest = max(rows, key=lambda r: r[2] + r[3]) if rows else \
        ('', '', 0, 0)
    return rows, total, largest


def series_lines(rows):
    return '\n'.join('%2d %6s %6s  %s' % (i + 1, '+%d' % r[2], '-%d' % r[3],
                                           r[1])
                     for i, r in enumerate(rows))


def print_size(pdir):
    rows, total, largest = size(pdir)
    print('series: %d patches, %d lines added or removed, %d per patch on '
          'average, largest %d (%s)' %
          (len(rows), total, total // max(len(rows), 1),
           largest[2] + largest[3], largest[0]))
    print(' #  added removed  subject')
    print(series_lines(rows))


def fill(template, pdir, version):
    rows, total, largest = size(pdir)
    with open(template) as f:
        subject, _, text = f.read().partition('\n')
    largest_text = '%s, %d lines' % (largest[1], largest[2] + largest[3])
    for key, val in (('@VERSION@', version), ('@NPATCHES@', str(len(rows))),
                     ('@SERIES@', series_lines(rows)),
                     ('@TOTAL@', str(total)), ('@LARGEST@', largest_text)):
        subject = subject.replace(key, val)
        text = text.replace(key, val)
    cover = os.path.join(pdir, '0000-cover-letter.patch')
    with open(cover) as f:
        letter = f.read()
    if '*** SUBJECT HERE ***' not in letter or \
            '*** BLURB HERE ***' not in letter:
        sys.exit('cover-letter.py: %s is not git\'s template' % cover)
    letter = letter.replace('*** SUBJECT HERE ***', subject)
    letter = letter.replace('*** BLURB HERE ***', text.strip('\n'))
    with open(cover, 'w') as f:
        f.write(letter)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--size':
        print_size(sys.argv[2])
    elif len(sys.argv) == 4:
        fill(*sys.argv[1:])
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
