#!/usr/bin/env python3
"""Rewrite the integration hunks' line numbers after one of them changed.

    rehunk.py [--fuzz] PRISTINE_TREE [PATCH_DIR]

Applies the hunks of PATCH_DIR (default tools/harness/patches) in file
name order, as prepare.sh does, to copies of the files they touch taken
from PRISTINE_TREE (an upstream tree no hunk was applied to, such as
build/stock/linux), letting patch(1) find each hunk at an offset, and
writes each hunk file back with its text before the first "--- a/" line
unchanged and its diff made anew against the files as the hunks before
it left them: three lines of context, files in the order they had.  A
hunk that patch(1) cannot place at all (fuzz) is an error: rewrite that
one by hand, or with --fuzz let patch(1) place it (and check where it
went).  Prints the hunk files it changed.
"""
import os
import re
import subprocess
import sys
import tempfile


def split_hunk_file(text):
    """(header text, [(path, diff text)]) of one hunk file."""
    pos = text.find("--- a/")
    if pos < 0:
        raise ValueError("no '--- a/' line")
    header, body = text[:pos], text[pos:]
    parts = re.split(r"(?m)^(?=--- a/)", body)
    files = []
    for part in parts:
        if not part:
            continue
        m = re.match(r"--- a/(\S+)", part)
        files.append((m.group(1), part))
    return header, files


def apply_diff(content, diff, name):
    """(content after patch(1) applied diff, whether at an offset); no fuzz."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "f")
        with open(path, "w") as f:
            f.write(content)
        body = re.sub(r"(?m)^(---|\+\+\+) [ab]/\S+", lambda m: m.group(1) + " f", diff, count=2)
        r = subprocess.run(["patch", f"--fuzz={FUZZ}", "--no-backup-if-mismatch", path],
                           input=body, text=True, capture_output=True)
        if r.returncode:
            raise RuntimeError(f"{name}: does not apply: {r.stdout}{r.stderr}")
        with open(path) as f:
            return f.read(), "offset" in r.stdout or "fuzz" in r.stdout


def make_diff(old, new, path):
    """GNU diff -U3 of the two contents, labelled a/PATH and b/PATH."""
    with tempfile.TemporaryDirectory() as tmp:
        a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
        for name, content in ((a, old), (b, new)):
            with open(name, "w") as f:
                f.write(content)
        r = subprocess.run(["diff", "-U3", "--label", f"a/{path}", "--label",
                            f"b/{path}", a, b], text=True, capture_output=True)
        if r.returncode > 1:
            raise RuntimeError(f"diff {path}: {r.stderr}")
        return r.stdout


FUZZ = 0


def main():
    global FUZZ
    if sys.argv[1] == "--fuzz":
        # A hunk whose context an earlier one changed: let patch(1) place
        # it with fuzz, then check the result before committing it.
        FUZZ = 2
        del sys.argv[1]
    pristine = sys.argv[1]
    pdir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "patches")
    current = {}
    for name in sorted(os.listdir(pdir)):
        if not name.endswith(".patch"):
            continue
        full = os.path.join(pdir, name)
        with open(full) as f:
            text = f.read()
        header, files = split_hunk_file(text)
        out = header
        for path, diff in files:
            if path not in current:
                with open(os.path.join(pristine, path)) as f:
                    current[path] = f.read()
            old = current[path]
            new, moved = apply_diff(old, diff, f"{name} ({path})")
            current[path] = new
            # Where it still applies as it is, it stays as it is.
            out += make_diff(old, new, path) if moved else diff
        if out != text:
            with open(full, "w") as f:
                f.write(out)
            print(f"rewrote {name}")


if __name__ == "__main__":
    main()
