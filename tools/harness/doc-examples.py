#!/usr/bin/env python3
"""The commands the documentation shows, so that none of them rots.

    doc-examples.py OUT_DIR

Reads the documents listed in DOCS (relative to the repository) and sorts
every example of commands in them:

- a Markdown block fenced as ```sh guest [TAG...], or an RST literal block
  after the comment ".. kp-example: guest [TAG...]", runs in the test
  guest: it is written to OUT_DIR/NNN.sh, and OUT_DIR/index gets a line
  "NNN FILE:LINE TAGS" (TAGS: x86_64 runs it on x86_64 only, x86 on x86_64
  and i386, needs=TOOL only
  where TOOL is in the guest's PATH, ours only on a kernel with our debugfs
  files, not on stock, kprobe-trace only where a kprobe's event reaches the
  trace buffer: not riscv, uprobe-busybox only where the guest's busybox is
  code the architecture's uprobes take: not 32-bit arm, whose Debian busybox
  is Thumb-2).  tools/testing/kprobes/guest/
  15-doc-examples.sh runs each with "sh -ex" from /kptest/modules, where the
  example modules are;
- a block fenced as ```sh host holds commands for the build host (make
  targets, harness scripts).  Those are checked here, not run: each make
  target must be one of the Makefile's, each VAR= given to make or in front
  of a command must be read by the Makefile or the harness, and each script
  named must exist and be executable;
- a block fenced as ```c from=PATH must be an excerpt of PATH: its lines,
  those that are not "...", appear in PATH in the same order;
- any other ```sh, ```bash, ```shell or ```console block is an error:
  a command that says neither where it runs nor is checked.

The host checks become TAP lines in OUT_DIR/host.tap, which the guest
script prints with its own results, so that they count in make test.
Exits 1 when a document cannot be read.
"""
import os
import re
import shlex
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOCS = [
    "README.md",
    "tools/testing/kprobes/README.md",
    "tools/testing/kprobes/bench/README.md",
    "Documentation/trace/kprobes.rst",
    "Documentation/trace/uprobes.rst",
]
SHELLS = ("sh", "bash", "shell", "console")
FENCE = re.compile(r"^(\s*)```(.*)$")
RST_MARK = re.compile(r"^\.\. kp-example:\s*(.*)$")


def blocks_md(path, lines):
    """(line number, info words, text) of each fenced block."""
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, info = len(m.group(1)), m.group(2).split()
        start, body = i + 1, []
        i += 1
        while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
            body.append(lines[i][indent:] if not lines[i][:indent].strip() else lines[i])
            i += 1
        i += 1
        yield start, info, "\n".join(body) + "\n"


def blocks_rst(path, lines):
    """The literal block after each ".. kp-example: TAGS" comment."""
    for i, line in enumerate(lines):
        m = RST_MARK.match(line)
        if not m:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].rstrip().endswith("::"):
            j += 1
        j += 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        start, body = j + 1, []
        while j < len(lines) and (not lines[j].strip() or lines[j][:1].isspace()):
            body.append(lines[j].expandtabs(8))
            j += 1
        while body and not body[-1].strip():
            body.pop()
        indent = min((len(l) - len(l.lstrip()) for l in body if l.strip()), default=0)
        text = "\n".join(l[indent:] if l.strip() else "" for l in body)
        # The RST list is never rendered with a language: "sh" stands in.
        yield start, ["sh"] + m.group(1).split(), text + "\n"


def make_targets():
    targets = set()
    with open(os.path.join(TOP, "Makefile")) as f:
        for line in f:
            m = re.match(r"^([a-zA-Z][\w.-]*(?:\s+[a-zA-Z][\w.-]*)*)\s*:(?!=)", line)
            if m:
                targets.update(m.group(1).split())
    return targets


def harness_text():
    """The Makefile and every harness and guest script, to look variables up."""
    text = []
    paths = [os.path.join(TOP, "Makefile")]
    for d in ("tools/harness", "tools/harness/guest", "tools/testing/kprobes/guest",
              "tools/testing/kprobes/bench"):
        full = os.path.join(TOP, d)
        paths += [os.path.join(full, n) for n in sorted(os.listdir(full))]
    for p in paths:
        if os.path.isfile(p):
            with open(p, errors="replace") as f:
                text.append(f.read())
    return "\n".join(text)


def check_host(text):
    """Problems with one host block's commands (an empty list: none)."""
    problems = []
    targets, known = make_targets(), harness_text()
    joined = re.sub(r"\\\n", " ", text)
    for line in joined.splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError as e:
            problems.append("cannot parse %r: %s" % (line, e))
            continue
        if not words:
            continue
        env = []
        while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
            env.append(words.pop(0).split("=", 1)[0])
        if not words:
            problems.append("no command in %r" % line)
            continue
        cmd, args = words[0], words[1:]
        if cmd == "make":
            for a in args:
                if a.startswith("-"):
                    continue
                if "=" in a:
                    env.append(a.split("=", 1)[0])
                elif a not in targets:
                    problems.append("make has no target %r" % a)
        elif "/" in cmd:
            p = os.path.join(TOP, cmd)
            if not (os.path.isfile(p) and os.access(p, os.X_OK)):
                problems.append("%s is not an executable of the repository" % cmd)
        else:
            problems.append("%r: only make and the repository's scripts are checked" % cmd)
        for v in env:
            if not re.search(r"\b%s\b" % re.escape(v), known):
                problems.append("nothing in the harness reads %s" % v)
    return problems


def check_excerpt(text, src):
    path = os.path.join(TOP, src)
    if not os.path.isfile(path):
        return ["%s does not exist" % src]
    with open(path) as f:
        have = [l.strip() for l in f]
    pos = 0
    for l in text.splitlines():
        l = l.strip()
        if not l or l == "...":
            continue
        try:
            pos = have.index(l, pos) + 1
        except ValueError:
            return ["%r is not in %s (in this order)" % (l, src)]
    return []


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for n in os.listdir(out):
        os.unlink(os.path.join(out, n))
    index, tap, n = [], [], 0
    for doc in DOCS:
        path = os.path.join(TOP, doc)
        with open(path) as f:
            lines = f.read().splitlines()
        found = blocks_rst if doc.endswith(".rst") else blocks_md
        for line, info, text in found(path, lines):
            where = "%s:%d" % (doc, line)
            lang, tags = (info[0] if info else ""), info[1:]
            if lang == "c" and tags and tags[0].startswith("from="):
                src = tags[0][5:]
                bad = check_excerpt(text, src)
                desc = "%s: the C example is an excerpt of %s" % (where, src)
            elif lang in SHELLS and tags[:1] == ["guest"]:
                n += 1
                with open(os.path.join(out, "%03d.sh" % n), "w") as f:
                    f.write("# %s\n%s" % (where, text))
                index.append("%03d %s %s" % (n, where, " ".join(tags[1:])))
                continue
            elif lang in SHELLS and tags[:1] == ["host"]:
                bad = check_host(text)
                desc = "%s: host commands name make targets, variables and scripts that exist" % where
            elif lang in SHELLS:
                bad = ["a command block marked neither guest nor host"]
                desc = "%s: commands say where they run" % where
            else:
                continue
            tap.append(("ok - " if not bad else "not ok - ") + desc)
            tap += ["# " + b for b in bad]
    with open(os.path.join(out, "index"), "w") as f:
        f.write("".join(l + "\n" for l in index))
    with open(os.path.join(out, "host.tap"), "w") as f:
        f.write("".join(l + "\n" for l in tap))
    print("doc-examples: %d guest examples, %d host checks (%d failed) in %s"
          % (n, sum(1 for l in tap if not l.startswith("#")),
             sum(1 for l in tap if l.startswith("not ok")), out), file=sys.stderr)


if __name__ == "__main__":
    main()
