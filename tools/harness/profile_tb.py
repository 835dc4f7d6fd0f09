#!/usr/bin/env python3
"""The two halves of profile-tb.sh.

    profile_tb.py log CONSOLE MONITOR AFTER DELAY SECONDS TRACE
        once CONSOLE shows the regular expression AFTER, wait DELAY
        seconds, then have QEMU's monitor (a Unix socket) log each
        translation block it runs ("exec,nochain") to TRACE for SECONDS.

    profile_tb.py count TRACE VMLINUX MODULE MODBASE BOUNDARY
        split TRACE at each run of the instruction at BOUNDARY and print
        the instructions of the iterations (the commonest first) and, for
        one iteration of the commonest length, the functions it ran
        through: in total and stretch by stretch, in order.

The log has a block's first address only.  Its length comes from the
disassembly of VMLINUX and of MODULE (loaded at MODBASE): a block runs to
the first branch, exception, exception return, barrier that ends one or
system register write, or to the end of its page.  Anything else (user
space, probe slots) counts as 2 instructions a block and shows as
"[other]".  The counts come out within about 10 instructions of make
bench's -icount figures.
"""
import bisect
import collections
import re
import socket
import subprocess
import sys
import time

ENDS = re.compile(r"^(b|bl|br|blr|ret|b\..*|cbn?z|tbn?z|brk|svc|hvc|smc|"
                  r"eret|isb|wfi|wfe|msr)$")
TRACE = re.compile(r"Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")


def log(console, sock, after, delay, seconds, trace):
    end = time.time() + 3600
    while not re.search(after, open(console, errors="replace").read()
                        if _exists(console) else ""):
        if time.time() > end:
            sys.exit("profile_tb.py: the console never showed " + after)
        time.sleep(0.05)
    time.sleep(float(delay))
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    s.sendall(("logfile %s\nlog exec,nochain\n" % trace).encode())
    time.sleep(float(seconds))
    s.sendall(b"log none\n")
    time.sleep(0.5)
    s.close()


def _exists(path):
    try:
        open(path).close()
        return True
    except OSError:
        return False


def disassemble(path, base):
    """{address: mnemonic} and [(address, symbol)] of PATH's code."""
    insns, syms = {}, []
    p = subprocess.run(["aarch64-linux-gnu-objdump", "-d", "--no-show-raw-insn",
                        path], capture_output=True, text=True, check=True)
    for line in p.stdout.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.*)>:", line)
        if m:
            syms.append((int(m.group(1), 16) + base, m.group(2)))
            continue
        m = re.match(r"^\s*([0-9a-f]+):\s+(\S+)", line)
        if m:
            insns[int(m.group(1), 16) + base] = m.group(2)
    return insns, syms


def count(trace, vmlinux, module, modbase, boundary):
    pcs = [int(m.group(1), 16) for m in
           map(TRACE.match, open(trace, errors="replace")) if m]
    insns, syms = disassemble(vmlinux, 0)
    minsns, msyms = disassemble(module, modbase)
    insns.update(minsns)
    syms = sorted(syms + msyms)
    addrs = [a for a, _ in syms]
    lengths = {}

    def length(pc):
        if pc not in lengths:
            n, a = 0, pc
            while True:
                n += 1
                op = insns.get(a)
                if op is None:
                    n = max(n, 2)
                    break
                if ENDS.match(op) or (a + 4) % 4096 == 0 or n >= 512:
                    break
                a += 4
            lengths[pc] = n
        return lengths[pc]

    def function(pc):
        i = bisect.bisect_right(addrs, pc) - 1
        return syms[i][1] if i >= 0 and pc in insns else "[other]"

    marks = [i for i, pc in enumerate(pcs) if pc == boundary]
    its = [(sum(length(pc) for pc in pcs[s:e]), s, e)
           for s, e in zip(marks, marks[1:])]
    if not its:
        sys.exit("profile_tb.py: %#x ran less than twice in the trace" % boundary)
    common = collections.Counter(n for n, _, _ in its).most_common(4)
    print("%d iterations; instructions per iteration: %s" % (len(its), common))
    n, s, e = next(it for it in its if it[0] == common[0][0])
    stretches = []
    for pc in pcs[s:e]:
        f = function(pc)
        if stretches and stretches[-1][0] == f:
            stretches[-1][1] += length(pc)
        else:
            stretches.append([f, length(pc)])
    total = collections.Counter()
    for f, k in stretches:
        total[f] += k
    print("one iteration of %d, by function:" % n)
    for f, k in total.most_common():
        print("  %5d %s" % (k, f))
    print("in order: " + " > ".join("%s %d" % (f, k) for f, k in stretches))


def main():
    if len(sys.argv) == 8 and sys.argv[1] == "log":
        log(*sys.argv[2:])
    elif len(sys.argv) == 7 and sys.argv[1] == "count":
        count(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5], 16),
              int(sys.argv[6], 16))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
