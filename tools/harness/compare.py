#!/usr/bin/env python3
"""Upstream's ftrace selftests for kprobes, stock against ours, side by side.

    compare.py STOCK_LOG OURS_LOG

Reads two guest logs of "make test"-style runs (the kptest lines of
tools/testing/kprobes/guest/70-ftracetest.sh: "ftrace: <dir>/<case>.tc:
<description>") and prints one line per case: the result on the stock kernel
and on ours (PASS; SKIP and why, e.g. UNSUPPORTED; FAIL or UNRESOLVED...;
"-" when the case has no result in that log).  Exits 1 when ours does not
pass a case that stock passes, or when a log has no ftracetest result."""
import re
import sys

TS = re.compile(r"^\[\s*\d+\.\d+\]\s?")
LINE = re.compile(r"^kptest: (ok|not ok) \d+ [^:]*: ftrace: (\S+\.tc): (.*)$")
WORD = re.compile(r"\[([^\]]+)\]\s*$")
SKIP = re.compile(r"# SKIP (\w+)")


def results(path):
    """{case: (verdict, detail)}: verdict PASS, SKIP or FAIL."""
    res = {}
    with open(path, errors="replace") as f:
        for raw in f:
            m = LINE.match(TS.sub("", raw.rstrip("\r\n")))
            if not m:
                continue
            verdict, case, rest = m.groups()
            s = SKIP.search(rest)
            if s:
                res[case] = ("SKIP", s.group(1))
            elif verdict == "ok":
                res[case] = ("PASS", "")
            else:
                w = WORD.search(rest)
                res[case] = ("FAIL", w.group(1) if w else "")
    return res


def show(r):
    if r is None:
        return "-"
    verdict, detail = r
    if verdict == "PASS":
        return "PASS"
    if verdict == "SKIP":
        return "SKIP (%s)" % detail if detail else "SKIP"
    return "FAIL (%s)" % detail if detail and detail != "FAIL" else "FAIL"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: compare.py STOCK_LOG OURS_LOG")
    stock, ours = results(sys.argv[1]), results(sys.argv[2])
    bad = []
    for name, r in (("stock", stock), ("ours", ours)):
        if not r:
            bad.append("no ftracetest result in the %s log (%s)" % (name, sys.argv[1 if name == "stock" else 2]))
    cases = list(stock) + [c for c in ours if c not in stock]  # run order
    width = max([len(c) for c in cases] + [len("ftracetest case")])
    print("%-*s  %-24s %s" % (width, "ftracetest case", "stock", "ours"))
    regressions = []
    for c in cases:
        s, o = stock.get(c), ours.get(c)
        mark = ""
        if s and s[0] == "PASS" and (not o or o[0] != "PASS"):
            regressions.append(c)
            mark = "   <-- stock passes, ours does not"
        elif o and o[0] == "PASS" and (not s or s[0] != "PASS"):
            mark = "   (ours only)"
        print("%-*s  %-24s %s%s" % (width, c, show(s), show(o), mark))

    def count(r, v):
        return sum(1 for x in r.values() if x[0] == v)
    for name, r in (("stock", stock), ("ours", ours)):
        print("%s: %d passed, %d failed, %d skipped" % (name, count(r, "PASS"), count(r, "FAIL"), count(r, "SKIP")))
    for c in regressions:
        bad.append("ours does not pass %s, which stock passes" % c)
    for b in bad:
        print("FAIL " + b)
    if not bad:
        print("ours passes every ftracetest case stock passes")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
