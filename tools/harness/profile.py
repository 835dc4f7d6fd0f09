#!/usr/bin/env python3
"""Guest instructions of one probe hit, function by function.

Two halves in one file:

* run inside gdb (profile.sh does that): attach to QEMU's gdb stub, stop at
  KP_PROF_START (a kernel symbol or *ADDRESS) once KP_PROF_COND holds and
  KP_PROF_SKIP hits went by (and, with KP_PROF_AFTER=SYMBOL, only once
  SYMBOL was reached), then single-step until the hit is over -- the
  return address found on the stack at START is reached (KP_PROF_UNTIL=
  return, for a breakpoint on a function's first instruction) or the CPU is
  back in user space (user, for an exception entry taken from user mode)
  or an iretq has run (iret: a whole trap, entry to exit, x86).
  Every program counter goes to KP_PROF_TRACE, one per line, each trace
  closed by "END <count>".  KP_PROF_N traces are kept; a trace shorter than
  KP_PROF_MIN instructions is dropped (a hit of another kind) and the
  breakpoint is let go KP_PROF_RESKIP times before the next try.

* run as a script: profile.py TRACE SYSTEM_MAP prints each trace's count
  and, for the last one, the functions in the order the hit ran through
  them, with the instructions spent in each stretch.  Addresses outside
  the kernel image's text (modules, probe buffers) show as "[outside]".

Under TCG a "rep" string instruction steps once per iteration, as -icount
counts it, so the totals match make bench's per-hit figures.
"""
import bisect
import os
import sys

KERNEL_SPACE = 0xffff800000000000


def trace_in_gdb():
    import gdb  # only there

    env = os.environ
    out = env["KP_PROF_TRACE"]
    until = env.get("KP_PROF_UNTIL", "return")
    want = int(env.get("KP_PROF_N", "3"))
    shortest = int(env.get("KP_PROF_MIN", "0"))
    gdb.execute("set pagination off")
    gdb.execute("target remote :%s" % env["KP_PROF_PORT"])
    bp = 1
    if env.get("KP_PROF_AFTER"):
        # Boot past the kernel's own uses of START (ftrace's self tests
        # take an int3 per patched site) before START's breakpoint goes in.
        gdb.execute("hbreak %s" % env["KP_PROF_AFTER"])
        gdb.execute("continue")
        gdb.execute("delete 1")
        bp = 2
    gdb.execute("hbreak %s" % env["KP_PROF_START"])
    if env.get("KP_PROF_COND"):
        gdb.execute("condition %d %s" % (bp, env["KP_PROF_COND"]))
    if int(env.get("KP_PROF_SKIP", "0")):
        gdb.execute("ignore %d %s" % (bp, env["KP_PROF_SKIP"]))
    gdb.execute("continue")

    def pc():
        return int(gdb.parse_and_eval("$pc")) & 0xffffffffffffffff

    def iretq(at):
        insn = gdb.selected_inferior().read_memory(at, 2).tobytes()
        return insn == b"\x48\xcf"

    def done(ret, at):
        if until == "iret":
            return False
        if until == "user":
            return at < KERNEL_SPACE
        return at == ret

    kept = 0
    with open(out, "w") as f:
        while kept < want:
            ret = int(gdb.parse_and_eval("*(unsigned long *)$rsp"))
            ret &= 0xffffffffffffffff
            seen = []
            at = pc()
            while not done(ret, at):
                seen.append(at)
                last = iretq(at) if until == "iret" else False
                gdb.execute("stepi", to_string=True)
                at = pc()
                if last:
                    break
            if len(seen) >= shortest:
                f.write("".join("%x\n" % a for a in seen))
                f.write("END %d\n" % len(seen))
                f.flush()
                kept += 1
            elif int(env.get("KP_PROF_RESKIP", "0")):
                gdb.execute("ignore %d %s" % (bp, env["KP_PROF_RESKIP"]),
                            to_string=True)
            gdb.execute("continue", to_string=True)
    gdb.execute("kill")


def load_map(path):
    syms = []
    text = [None, None]
    for line in open(path):
        parts = line.split()
        if len(parts) < 3:
            continue
        addr, kind, name = int(parts[0], 16), parts[1], parts[2]
        if name == "_stext":
            text[0] = addr
        elif name == "_etext":
            text[1] = addr
        if kind in "tTwW":
            syms.append((addr, name))
    syms.sort()
    return syms, text


def summarize(trace_path, map_path):
    syms, (stext, etext) = load_map(map_path)
    addrs = [a for a, _ in syms]
    traces, cur = [], []
    for line in open(trace_path):
        if line.startswith("END"):
            traces.append(cur)
            cur = []
        else:
            cur.append(int(line, 16))
    if not traces:
        sys.exit("no complete trace in %s" % trace_path)
    print("instructions per trace: %s" % ", ".join(str(len(t)) for t in traces))

    def name(a):
        if stext is not None and not stext <= a < (etext or a + 1):
            return "[outside]"
        return syms[bisect.bisect_right(addrs, a) - 1][1]

    stretch, count = None, 0
    for a in traces[-1] + [None]:
        n = name(a) if a is not None else None
        if n != stretch:
            if stretch is not None:
                print("%6d  %s" % (count, stretch))
            stretch, count = n, 0
        count += 1


if __name__ == "__main__":
    if "gdb" in sys.modules:
        trace_in_gdb()
    else:
        if len(sys.argv) != 3:
            sys.exit("usage: profile.py TRACE SYSTEM_MAP")
        summarize(sys.argv[1], sys.argv[2])
