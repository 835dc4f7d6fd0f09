#!/usr/bin/env python3
"""Summarise a guest log: KUnit KTAP results, the shell tests' TAP lines and
the health of the kernel log.  Prints each failure, then one closing line
'N passed, N failed, N skipped' and exits 1 when anything failed."""
import re
import sys

TS = re.compile(r"^\[\s*\d+\.\d+\]\s?")
RESULT = re.compile(r"^(\s*)(ok|not ok) (\d+) (.*)$")
KPTEST = re.compile(r"^kptest: (ok|not ok) (\d+) (.*)$")
# Kernel messages that mean something went wrong whatever the tests said.
BAD = re.compile(r"(BUG:|WARNING:|Oops|Kernel panic|general protection fault|"
                 r"INFO: possible|possible recursive locking|circular locking|"
                 r"UBSAN:|kretprobe BUG!|Call Trace:)")


def parse(lines):
    passed, failed, skipped, bad = [], [], [], []
    child_seen = {}
    done = False
    for raw in lines:
        line = TS.sub("", raw.rstrip("\r\n"))
        m = KPTEST.match(line)
        if m:
            verdict, _, desc = m.groups()
            skip = "# SKIP" in desc
            (skipped if skip else passed if verdict == "ok" else failed).append("shell: " + desc)
            continue
        if line.startswith("kptest: done"):
            done = True
            continue
        m = RESULT.match(line)
        if m:
            indent, verdict, _, desc = m.groups()
            depth = len(indent)
            leaf = not child_seen.get(depth, False)
            child_seen[depth] = False
            if depth >= 4:
                child_seen[depth - 4] = True
            elif depth == 0:
                child_seen.clear()
            if leaf and depth > 0:
                skip = "# SKIP" in desc
                (skipped if skip else passed if verdict == "ok" else failed).append("kunit: " + desc)
            elif verdict != "ok" and depth > 0 and "# SKIP" not in desc:
                pass  # a suite fails when a case fails; the case is counted
            continue
        if BAD.search(line):
            bad.append(line)
    return passed, failed, skipped, bad, done


def main():
    path = sys.argv[1]
    with open(path, errors="replace") as f:
        passed, failed, skipped, bad, done = parse(f)
    if bad:
        failed.append("kernel log: %d problem line(s), first: %s" % (len(bad), bad[0]))
        for b in bad[:20]:
            print("  log: " + b)
    if not done:
        failed.append("guest did not reach the end (timeout or crash); see " + path)
    for s in skipped:
        print("SKIP " + s)
    for f in failed:
        print("FAIL " + f)
    print("%d passed, %d failed, %d skipped" % (len(passed), len(failed), len(skipped)))
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
