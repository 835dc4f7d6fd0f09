#!/usr/bin/env python3
"""Turn the benchmark's guest output into one table: measure, stock, ours.

    bench_table.py OUT_DIR UPSTREAM_VERSION [DOC README COMMAND COMMIT]

Reads OUT_DIR/<side>-{icount,wall,testcfg}.txt (the "kpbench: ..." lines of each
boot, see tools/testing/kprobes/bench/kpbench.c) and writes OUT_DIR/bench.md
and OUT_DIR/bench.csv, then prints the Markdown table.

With DOC and README (tools/testing/kprobes/bench/README.md and the top-level
README.md), it also writes the table, headed by the run's date, COMMAND and
COMMIT, between DOC's "<!-- bench-table begin" and "<!-- bench-table end"
lines, and the HEADLINE rows between README's "<!-- headline begin" and
"<!-- headline end" lines, so that the documents show what was measured.

The kernels' .config says which architecture was measured.  arm64 (make
bench ARCH=arm64) has its own hit and uprobe rows (A64_HITS, A64_UHITS),
i386 its own uprobe rows (I386_UHITS); both leave out the rows neither
kernel measured, add their goals (GOALS_OF) under the table, and go
between DOC's "<!-- bench-table-ARCH begin" and "<!-- bench-table-ARCH
end" lines; README may then be empty (no headline rows).
"""
import csv
import datetime
import os
import sys

SIDES = ("stock", "ours")

HITS = [
    ("hit.none", "call, no probe (per call)"),
    ("hit.int3", "kprobe, int3 with post_handler"),
    ("hit.boost", "kprobe, no post_handler, boosted where the kernel "
     "boosts (jump optimization off)"),
    ("hit.opt", "kprobe, optimized"),
    ("hit.ftrace", "kprobe, ftrace-based"),
    ("hit.kret", "kretprobe (jump optimization off)"),
    ("hit.kp+kret", "kprobe + kretprobe, same function (optimization off)"),
    ("hit.optkret", "kretprobe, optimized entry"),
    ("hit.hwbp", "data breakpoint on a store, register_wide_hw_breakpoint "
     "with a counting handler"),
    ("hit.watch", "write watch: a wprobe where the kernel has them (ours), "
     "else the same hw_breakpoint (stock)"),
]
# arm64: the probed instruction of each row is chosen (kpbench.c).
A64_HITS = [
    ("hit.none", "call, no probe (per call)"),
    ("hit.brk", "kprobe, BRK with post_handler, on `stp x29, x30, [sp, "
     "#-16]!` (run out of line on both)"),
    ("hit.boost", "kprobe, no post_handler, the same `stp`: a boosted copy "
     "on ours (stock arm64 does not boost; jump optimization off)"),
    ("hit.sim", "kprobe with post_handler on `adr` (simulated on both)"),
    ("hit.nop", "kprobe with post_handler on `nop` (simulated on ours, run "
     "out of line on stock)"),
    ("hit.opt", "kprobe, optimized"),
    ("hit.ftrace", "kprobe, ftrace-based"),
    ("hit.kret", "kretprobe on the `stp` function (jump optimization off)"),
    ("hit.kp+kret", "kprobe + kretprobe, same function (optimization off)"),
    ("hit.optkret", "kretprobe, optimized entry"),
]
REG = [
    ("one.armed", "registered one by one: until armed"),
    ("one.armed.ftrace", "registered one by one: until armed, the "
     "ftrace-based ones"),
    ("one.armed.other", "registered one by one: until armed, the others"),
    ("one.optimized", "registered one by one: until optimized"),
    ("one.unreg", "unregistered one by one"),
    ("batch.armed", "register_kprobes: until armed"),
    ("batch.optimized", "register_kprobes: until optimized"),
    ("batch.unreg", "unregister_kprobes"),
]
UHITS = [
    ("uhit.nop", "uprobe on nop"),
    ("uhit.push", "uprobe on push %rbp"),
    ("uhit.endbr", "uprobe on endbr64"),
    ("uhit.ret", "uprobe on ret"),
    ("uhit.riprel", "uprobe on a RIP-relative load"),
    ("uhit.nop5", "uprobe on a 5-byte nop"),
    ("uhit.uret", "uretprobe"),
]
# i386: the x86_64 rows 32-bit code has (no RIP-relative load).
I386_UHITS = [
    ("uhit.nop", "uprobe on nop"),
    ("uhit.push", "uprobe on push %ebp"),
    ("uhit.endbr", "uprobe on endbr32"),
    ("uhit.ret", "uprobe on ret"),
    ("uhit.nop5", "uprobe on a 5-byte nop"),
    ("uhit.uret", "uretprobe"),
]
A64_UHITS = [
    ("uhit.nop", "uprobe on nop"),
    ("uhit.stp", "uprobe on stp x29, x30, [sp, #-16]!"),
    ("uhit.ret", "uprobe on ret"),
    ("uhit.adrp", "uprobe on adrp"),
    ("uhit.uret", "uretprobe"),
]
ULIFE = [
    ("uattach.attach", "10,000 uprobes in one BPF uprobe_multi link on a "
     "running program: attach, per probe", "ns/probe"),
    ("uattach.detach", "10,000 uprobes in one BPF uprobe_multi link: "
     "detach, per probe", "ns/probe"),
    ("ulife.fork", "fork + exit + wait of an unprobed program", "ns/op"),
    ("ulife.exec", "fork + exec + exit + wait of an unprobed program",
     "ns/op"),
    ("ulife.mmap", "mmap + munmap of a program's text", "ns/op"),
]
# With a perf uprobe PMU counting event as the consumer (run.sh "uperf").
UPERF = [
    ("uclose.elapsed", "1,000 uprobe perf events closed one by one, "
     "elapsed", "ns/close"),
    ("uclose.cpu", "the same, the process's CPU time", "ns/close"),
    ("upmmap.never", "mmap + first touch + munmap of a probed page, by a "
     "process never probed (another one is)", "ns/op"),
    ("upmmap.gone", "the same, by a process whose probes are gone",
     "ns/op"),
    ("upfork.hits", "fork + exit + wait, the child hitting a probed "
     "function 10 times (inherited perf event)", "ns/op"),
]
# Fork of a process whose probes are gone, and of one with armed
# (optimized) sites (run.sh "ufork", issue 49): in both configs.
UFORK = [
    ("ufork.never", "fork + exit + wait, before the process had a probe",
     "ns/op"),
    ("ufork.gone", "the same, after it had 1,000 perf uprobe events on its "
     "text and closed them", "ns/op"),
    ("ufork.calls", "the same, the child calling five formerly probed "
     "functions once each", "ns/op"),
    ("ufork.sys", "fork + exit + wait with a system-wide event on each of "
     "five functions (5-byte nops, hit once by the parent first), the child "
     "calling each once", "ns/op"),
]
COVER = [
    ("registered", "registered"),
    ("ftrace", "ftrace-based"),
    ("optimized", "optimized"),
]
EVERY = [
    ("every.sift", "every function entry: finding what the kernel refuses "
     "(each registered disabled, then one unregister_kprobes())", "s"),
    ("every.reg", "every function entry: one register_kprobes(), until "
     "armed", "s"),
    ("every.hits", "every function entry: hits under the workload", "hits"),
    ("every.unreg", "every function entry: one unregister_kprobes()", "s"),
]


# The README's short table: (key, run, what it says there).
HEADLINE = [
    ("hit.int3", "icount", "kprobe hit, int3 with a post handler"),
    ("hit.boost", "icount", "kprobe hit, boosted"),
    ("hit.opt", "icount", "kprobe hit, jump-optimized"),
    ("hit.ftrace", "icount", "kprobe hit, on an ftrace call site"),
    ("hit.kret", "icount", "kretprobe hit"),
    ("reg1000.batch.armed", "icount",
     "1000 kprobes, one register_kprobes(), until armed"),
    ("reg1000.batch.unreg", "icount", "1000 kprobes, one unregister_kprobes()"),
    ("uhit.nop", "icount", "uprobe hit on `nop`"),
    ("uhit.nop5", "icount", "uprobe hit on a 5-byte nop (USDT)"),
    ("uhit.uret", "icount", "uretprobe hit"),
    ("uattach.attach", "icount",
     "10,000 uprobes in one BPF uprobe_multi link: attach"),
    ("uattach.detach", "icount", "the same: detach"),
    ("hit.watch", "icount",
     "write watch (stock: a hw_breakpoint, ours: a wprobe)"),
]


# The goals of an architecture's run: (what, ours' key, stock's key, at
# most).  arm64's:
GOALS = [
    ("kprobe hit, BRK with a post handler", "hit.brk", "hit.brk", 0.5),
    ("kprobe hit, no post handler (boosted on ours)", "hit.boost",
     "hit.boost", 0.5),
    ("kprobe hit, simulated `adr`", "hit.sim", "hit.sim", 0.5),
    ("kprobe hit, `nop`", "hit.nop", "hit.nop", 0.5),
    ("kretprobe hit", "hit.kret", "hit.kret", 0.5),
    ("optimized kprobe hit against stock's BRK probe", "hit.opt", "hit.brk",
     0.2),
    ("1000 kprobes, one register_kprobes(), until armed, per probe",
     "reg1000.batch.armed", "reg1000.batch.armed", 0.05),
]
# i386's, those of x86_64: trap-based hits at most half of stock's,
# optimized ones 0.75, ftrace-based ones 0.8.
I386_GOALS = [
    ("kprobe hit, int3 with a post handler", "hit.int3", "hit.int3", 0.5),
    ("kprobe hit, boosted", "hit.boost", "hit.boost", 0.5),
    ("kretprobe hit", "hit.kret", "hit.kret", 0.5),
    ("kprobe + kretprobe hit", "hit.kp+kret", "hit.kp+kret", 0.5),
    ("kprobe hit, optimized", "hit.opt", "hit.opt", 0.75),
    ("kretprobe hit, optimized entry", "hit.optkret", "hit.optkret", 0.75),
    ("kprobe hit, ftrace-based", "hit.ftrace", "hit.ftrace", 0.8),
    ("1000 kprobes, one register_kprobes(), until armed, per probe",
     "reg1000.batch.armed", "reg1000.batch.armed", 0.05),
]
GOALS_OF = {"arm64": GOALS, "i386": I386_GOALS}
MACHINE = {"arm64": ", qemu-system-aarch64 virt, cortex-a57",
           "i386": ", qemu-system-i386 pc, qemu32"}

ARCH = "x86_64"


def splice(path, begin, end, lines):
    """Replace what lies between the lines starting with BEGIN and END."""
    with open(path) as f:
        text = f.read().split("\n")
    try:
        b = next(i for i, l in enumerate(text) if l.startswith(begin))
        e = next(i for i, l in enumerate(text) if i > b and l.startswith(end))
    except StopIteration:
        sys.exit("bench_table.py: no %s ... %s lines in %s" % (begin, end, path))
    text[b + 1:e] = lines
    with open(path, "w") as f:
        f.write("\n".join(text))


def write_docs(doc, readme, md, table, version, command, commit):
    date = datetime.date.today().isoformat()
    origin = "`%s` of %s (Linux %s, commit %s)" % (command, date, version, commit)
    marker = "bench-table" if ARCH == "x86_64" else "bench-table-" + ARCH
    splice(doc, "<!-- %s begin" % marker, "<!-- %s end" % marker,
           ["Written by %s." % origin, ""] + md)
    if not readme:
        return
    unit = {(key, run): (measure, u) for key, run, measure, u in rows()}
    cells = {(key, run): r for (key, run, _, _), r in zip(rows(), table)}
    head = ("measure", "unit", "stock", "ours", "ours/stock")
    short = ["| " + " | ".join(head) + " |",
             "| " + " | ".join("---" for _ in head) + " |"]
    for key, run, what in HEADLINE:
        if (key, run) in cells:
            r = cells[key, run]
            short.append("| %s | %s | %s | %s | %s |"
                         % (what, unit[key, run][1], r[2], r[3], r[4]))
    splice(readme, "<!-- headline begin", "<!-- headline end",
           short + ["", "From %s; the full table: tools/testing/kprobes/bench/README.md." % origin])


def rows():
    """(key, run, measure, unit) in table order."""
    hits = A64_HITS if ARCH == "arm64" else HITS
    uhits = {"arm64": A64_UHITS, "i386": I386_UHITS}.get(ARCH, UHITS)
    inner = "+8 bytes" if ARCH == "arm64" else "+9 bytes"
    for key, what in hits:
        yield key, "icount", "hit cost: " + what, "insn"
    for n in (1000, 10000):
        for key, what in REG:
            yield "reg%d.%s" % (n, key), "icount", \
                "%d probes %s" % (n, what), "us/probe"
    for where, what in (("entry", "function entries"),
                        ("inner", "function entry " + inner)):
        for key, w in COVER:
            yield "cover.%s.%s" % (where, key), "icount", \
                "coverage, %s: %s" % (what, w), "probes"
    for key, what, unit in EVERY:
        yield key, "icount", what, unit
    for key, what in uhits:
        yield key, "icount", "hit cost: " + what + " (1,000,000 calls)", \
            "insn"
    for key, what, unit in ULIFE:
        yield key, "icount", what, unit
    for key, what in uhits:
        yield "up" + key[1:], "icount", "hit cost, perf counting event: " \
            + what + " (1,000,000 calls)", "insn"
    for key, what, unit in UPERF:
        yield key, "icount", what, unit
    for key, what, unit in UFORK:
        yield key, "icount", what, unit
    for key, what in hits:
        yield key, "wall", "hit cost: " + what, "ns (wall)"
    yield "umulti.scale", "multi", "uprobe hits/s, 2 threads on 2 vCPUs " \
        "over 1 thread (multi-threaded TCG)", "x"
    yield "umulti.scale_nop5", "multi", "the same, probe on a 5-byte nop " \
        "(optimized where the kernel can: no trap)", "x"
    for key, what in hits:
        yield key, "testcfg", "hit cost, test config: " + what, "insn"
    for key, what, unit in UFORK:
        yield key, "testcfg", "test config: " + what, unit


def parse(path):
    """measure -> (value, note) from one run's lines."""
    res = {}
    if not os.path.exists(path):
        return res
    with open(path, errors="replace") as f:
        for line in f:
            words = line.split()
            if len(words) < 3 or words[0] != "kpbench:":
                continue
            name, value = words[1], words[2]
            if value in ("n/a", "skipped"):
                res[name] = (value.replace("skipped", "not run") + ": " +
                             " ".join(words[3:]), "")
                continue
            try:
                float(value)
            except ValueError:
                continue
            res[name] = (value, " ".join(words[4:]))
    return res


def first_int(note):
    """The first number in a note such as "per probe (916 of 4298, ...)"."""
    for w in note.translate(str.maketrans("(),", "   ")).split():
        if w.isdigit():
            return int(w)
    return None


def cell(side, run, data, key):
    """(value as shown, note) of one measure on one side."""
    if run != "testcfg" and os.path.exists(os.path.join(OUT, side + ".failed")):
        return "n/a: kernel did not build", ""
    if (side, run) not in data:
        return "not run", ""
    got = data[side, run].get(key)
    if not got:
        # A whole group the guest skipped, e.g. "reg10000".
        group = data[side, run].get(key.split(".")[0])
        if group:
            return group
        if "end" not in data[side, run]:
            return "n/a: run did not finish", ""
        return "n/a: not measured", ""
    value, note = got
    if key == "hit.boost" and side == "stock" and ARCH == "x86_64" \
            and preemptible(side):
        # Upstream 6.12 boosts only when CONFIG_PREEMPTION is off.
        value += " (not boosted: CONFIG_PREEMPTION)"
    elif key.startswith("reg") and note:
        n = first_int(note)
        if key.endswith(".optimized"):
            value += " (%s optimized)" % n
        if "bound hit" in note:
            # A bound cut the loop short: the figure is a rate.
            value += " (bound hit: rate over %s)" % n
        elif not key.endswith(".optimized") and n is not None \
                and n < int(key[3:].split(".")[0]):
            value += " (over %s)" % n
    return value, note


def brief(note):
    """A note without what the table already says."""
    note = note.replace("per probe", "").strip()
    if note.startswith("(") and note.endswith(")"):
        note = note[1:-1]
    return "" if note.isdigit() else note


def probe_set():
    try:
        with open(os.path.join(OUT, "probe-set.txt")) as f:
            n = sum(1 for _ in f)
    except OSError:
        return "no common set was written, each kernel's own text symbols"
    return "%d function names that both kernels have, once each " \
        "(the guest keeps those outside init text)" % n


def arch():
    """The architecture the kernels were built for, from a .config."""
    for side in SIDES:
        try:
            with open(os.path.join(OUT, side, "linux", ".config")) as f:
                config = f.read()
            if "CONFIG_ARM64=y\n" in config:
                return "arm64"
            if "CONFIG_X86_32=y\n" in config:
                return "i386"
        except OSError:
            pass
    return "x86_64"


def goals(data):
    """The architecture's goals, each with its figures and verdict."""
    head = ("goal", "stock", "ours", "ours/stock", "at most", "met")
    out = ["Goals, insn per hit or us per probe as above:", "",
           "| " + " | ".join(head) + " |",
           "| " + " | ".join("---" for _ in head) + " |"]
    for what, okey, skey, limit in GOALS_OF[ARCH]:
        s = cell("stock", "icount", data, skey)[0]
        o = cell("ours", "icount", data, okey)[0]
        r = ratio(s, o)
        met = "" if not r else ("yes" if float(r) <= limit else "no")
        out.append("| %s | %s | %s | %s | %.2f | %s |"
                   % (what, s, o, r, limit, met))
    return out


def preemptible(side):
    try:
        with open(os.path.join(OUT, side, "linux", ".config")) as f:
            return "CONFIG_PREEMPTION=y\n" in f.read()
    except OSError:
        return False


def ratio(a, b):
    try:
        x, y = float(a.split()[0]), float(b.split()[0])
    except ValueError:
        return ""
    return "%.2f" % (y / x) if x else ""


OUT = sys.argv[1]


def main():
    global ARCH
    ARCH = arch()
    version = sys.argv[2] if len(sys.argv) > 2 else "unknown"
    data = {}
    for side in SIDES:
        for run in ("icount", "wall", "multi", "testcfg"):
            path = os.path.join(OUT, "%s-%s.txt" % (side, run))
            if os.path.exists(path):
                data[side, run] = parse(path)
                with open(path, errors="replace") as f:
                    if any(l.startswith("kpbench: end") for l in f):
                        data[side, run]["end"] = ("", "")
    table, notes = [], []
    keys = []
    for key, run, measure, unit in rows():
        (s, sn), (o, on) = (cell(side, run, data, key) for side in SIDES)
        if ARCH != "x86_64" and all(c in ("not run", "n/a: not measured")
                                    for c in (s, o)):
            continue	# a row this architecture's run does not have
        keys.append((key, run, measure, unit))
        table.append((measure, unit, s, o, ratio(s, o)))
        said = ["%s: %s" % (side, brief(note))
                for side, note in (("stock", sn), ("ours", on))
                if brief(note) and (key.startswith(("reg", "cover", "every",
                                                    "umulti"))
                                    or "hits of" in note)]
        if said:
            notes.append("%s (%s): %s" % (measure, unit, "; ".join(said)))
    date = datetime.date.today().isoformat()
    head = ("measure", "unit", "stock", "ours", "ours/stock")
    machine = MACHINE.get(ARCH, "")
    kernel = version if ARCH == "x86_64" else "%s (%s)" % (version, ARCH)
    md = ["Linux %s, %s. insn: guest instructions (QEMU TCG%s, "
          "-icount shift=0, one vCPU); us/probe: guest time under icount "
          "(1 us = 1000 instructions run, plus the virtual time the guest "
          "waited, e.g. for grace periods); "
          "ns (wall): wall-clock nanoseconds under TCG without icount (one "
          "vCPU; they vary with the host and its load), best of 3 loops. "
          "Hit costs are per hit, minus the unprobed call; \"test config\" "
          "rows: the same under -icount, with the kernels of make test and "
          "make stock (lockdep, atomic-sleep checks; KUnit off at boot). "
          "Registration and "
          "coverage probe the same functions on both sides: %s."
          % (kernel, date, machine, probe_set()), "",
          "| " + " | ".join(head) + " |",
          "| " + " | ".join("---" for _ in head) + " |"]
    md += ["| " + " | ".join(r) + " |" for r in table]
    if ARCH in GOALS_OF:
        md += [""] + goals(data)
    if notes:
        md += ["", "Notes:", ""] + ["- " + n for n in notes]
    with open(os.path.join(OUT, "bench.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(OUT, "bench.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head + ("stock note", "ours note"))
        for (key, run, _, _), r in zip(keys, table):
            notes_ = [cell(side, run, data, key)[1] for side in SIDES]
            w.writerow(r + tuple(notes_))
    print("\n".join(md))
    if len(sys.argv) > 6:
        write_docs(sys.argv[3], sys.argv[4], md, table, version, sys.argv[5],
                   sys.argv[6])


if __name__ == "__main__":
    main()
