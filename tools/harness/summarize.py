#!/usr/bin/env python3
"""Summarise a guest log: KUnit KTAP results, the shell tests' TAP lines, the
kprobe events boot-time self test and the health of the kernel log.  Prints
each failure, then one closing line 'N passed, N failed, N skipped' (and ', N
known failures' when a case failed that the kernel cannot pass in this guest
on any kernel, which the test marks "not ok ... # TODO why") and exits 1 when
anything failed.

    summarize.py LOG [CONFIG]

With the kernel's CONFIG, a missing self-test result is a failure when
CONFIG_FTRACE_STARTUP_TEST is set, and a KUnit case of KNOWN_KUNIT that
fails on a kernel with the architecture's symbol is a known failure, the
kernel log's problem lines since the result before it with it; so is a
boot-time self test of KNOWN_SELFTEST that says it failed, with the
WARNING of run_tracer_selftest() after it."""
import re
import sys

TS = re.compile(r"^\[\s*\d+\.\d+\]\s?")
RESULT = re.compile(r"^(\s*)(ok|not ok) (\d+) (.*)$")
KPTEST = re.compile(r"^kptest: (ok|not ok) (\d+) (.*)$")
# Kernel messages that mean something went wrong whatever the tests said.
BAD = re.compile(r"(BUG:|WARNING:|Oops|Kernel panic|general protection fault|"
                 r"INFO: possible|possible recursive locking|circular locking|"
                 r"UBSAN:|kretprobe BUG!|Call Trace:)")
# trace_kprobe.c's startup test: "Testing kprobe tracing: " then, with
# pr_cont() (so possibly on a line of its own), "OK" or "NG: ...".
SELFTEST = re.compile(r"^(?:trace_kprobe: )?Testing kprobe tracing: ?(.*)$")
SELFTEST_END = re.compile(r"^(OK|NG\b.*)$")
SELFTEST_NAME = "selftest: kprobe tracing (CONFIG_FTRACE_STARTUP_TEST)"
# KUnit cases of upstream's that fail in this guest on the stock kernel too,
# by the architecture's config symbol: (symbol, case) -> why.
KNOWN_KUNIT = {
    ("CONFIG_S390", "test_stacktrace_on_nested_kretprobe"):
        "upstream's s390 code under QEMU's TCG (stock 6.12 the same: "
        "make test-stock ARCH=s390x of 2026-12-02, same PSW and %r2): the "
        "larl at kprobe_stacktrace_internal_target+0 stepped from its slot "
        "loads an address 4 GiB off and the next load oopses",
}
# Boot-time self tests of upstream's that fail in this guest on the stock
# kernel too, by the architecture's config symbol: (symbol, the line that
# says so) -> why.  The failure is a known failure, and the kernel log's
# WARNING that run_tracer_selftest() gives for it is not a log problem.
KNOWN_SELFTEST = {
    ("CONFIG_ARM", "Testing fgraph storage of 1 byte: *** Failed to execute storage byte"):
        "upstream's function graph on 32-bit arm (stock 6.12 the same, "
        "booted on 2026-12-02): the fgraph storage self test's return "
        "handler never runs on its filtered function",
}
SELFTEST_WARNING = re.compile(r"WARNING: .* at kernel/trace/trace\.c:\d+ run_tracer_selftest\b")


def parse(lines, known=None, known_selftest=None):
    known = known or {}
    known_selftest = known_selftest or {}
    selftest_known = False  # a known self-test failure waits for its WARNING
    passed, failed, skipped, todo, bad = [], [], [], [], []
    bad_mark = 0        # len(bad) at the last KUnit result
    child_seen = {}
    done = False
    selftest = None     # None: not seen, "": verdict pending, else verdict
    for raw in lines:
        line = TS.sub("", raw.rstrip("\r\n"))
        m = SELFTEST.match(line)
        if m or (selftest == "" and SELFTEST_END.match(line)):
            selftest = (m.group(1) if m else line).strip()
            if selftest:
                (passed if selftest == "OK" else failed).append(
                    SELFTEST_NAME + ("" if selftest == "OK" else ": " + selftest))
            continue
        if line in known_selftest:
            todo.append("selftest: %s # TODO %s" % (line, known_selftest[line]))
            selftest_known = True
            continue
        if selftest_known and SELFTEST_WARNING.search(line):
            selftest_known = False
            continue
        m = KPTEST.match(line)
        if m:
            verdict, _, desc = m.groups()
            skip = "# SKIP" in desc
            if verdict != "ok" and "# TODO" in desc:
                todo.append("shell: " + desc)
                continue
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
            name = desc.split(" #")[0].strip()
            if leaf and depth > 0 and verdict != "ok" and name in known:
                todo.append("kunit: %s # TODO %s (%d kernel log problem line(s) with it)"
                            % (desc, known[name], len(bad) - bad_mark))
                del bad[bad_mark:]
                continue
            bad_mark = len(bad)
            if leaf and depth > 0:
                skip = "# SKIP" in desc
                (skipped if skip else passed if verdict == "ok" else failed).append("kunit: " + desc)
            elif verdict != "ok" and depth > 0 and "# SKIP" not in desc:
                pass  # a suite fails when a case fails; the case is counted
            continue
        if BAD.search(line):
            bad.append(line)
    if selftest == "":
        failed.append(SELFTEST_NAME + ": no verdict after 'Testing kprobe tracing:'")
    return passed, failed, skipped, todo, bad, done, selftest is not None


def config_symbols(config):
    with open(config, errors="replace") as f:
        return {l.strip().split("=")[0] for l in f if l.strip().endswith("=y")}


def known_kunit(symbols):
    return {case: why for (sym, case), why in KNOWN_KUNIT.items() if sym in symbols}


def known_selftests(symbols):
    return {line: why for (sym, line), why in KNOWN_SELFTEST.items() if sym in symbols}


def main():
    path = sys.argv[1]
    symbols = config_symbols(sys.argv[2]) if len(sys.argv) > 2 else set()
    with open(path, errors="replace") as f:
        passed, failed, skipped, todo, bad, done, selftest_seen = parse(
            f, known_kunit(symbols), known_selftests(symbols))
    if "CONFIG_FTRACE_STARTUP_TEST" in symbols and not selftest_seen:
        failed.append(SELFTEST_NAME + ": not in the log")
    if bad:
        failed.append("kernel log: %d problem line(s), first: %s" % (len(bad), bad[0]))
        for b in bad[:20]:
            print("  log: " + b)
    if not done:
        failed.append("guest did not reach the end (timeout or crash); see " + path)
    for s in skipped:
        print("SKIP " + s)
    for t in todo:
        print("TODO " + t)
    for f in failed:
        print("FAIL " + f)
    print("%d passed, %d failed, %d skipped%s" % (
        len(passed), len(failed), len(skipped),
        ", %d known failures" % len(todo) if todo else ""))
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
