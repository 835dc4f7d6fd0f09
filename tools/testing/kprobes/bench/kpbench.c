// SPDX-License-Identifier: GPL-2.0
/*
 * kpbench: what a probe hit and a probe registration cost on this kernel.
 *
 * Driven from user space (run.sh) through debugfs:
 *   /sys/kernel/debug/kpbench/syms  write: kernel text addresses, one per line
 *                                   in hex, the candidates for "reg", "cover"
 *                                   and "every"
 *   /sys/kernel/debug/kpbench/run   write: one measure to run, see kpb_run()
 *
 * Every result is one console line, "kpbench: <measure> <value> <unit>
 * [<note>]", or "kpbench: <measure> n/a <reason>" when this kernel cannot do
 * what the measure asks.  Times come from ktime: under QEMU -icount shift=0
 * one nanosecond is one guest instruction.  Only the exported kprobes API is
 * used, so the module builds unchanged against upstream's kprobes and ours.
 */
#define pr_fmt(fmt) "kpbench: " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/hw_breakpoint.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uio.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#ifdef CONFIG_X86
#include <asm/asm.h>
#include <asm/text-patching.h>
#endif
#ifdef CONFIG_ARM64
#include <asm/debug-monitors.h>
#endif

/*
 * The breakpoint a probe that is not optimized leaves in the text, as the
 * module names it in its states and measures: "int3" on x86, "brk" on
 * arm64.  Coverage's inner probes go this far into each function: on x86
 * past endbr64 and the ftrace call, on arm64 past ftrace's two nops (an
 * instruction boundary either way).
 */
#ifdef CONFIG_ARM64
#define KPB_TRAP	"brk"
#define KPB_INNER_OFF	8
#else
#define KPB_TRAP	"int3"
#define KPB_INNER_OFF	9
#endif

static unsigned long loops = 1000000;
module_param(loops, ulong, 0444);
MODULE_PARM_DESC(loops, "calls of the test function per loop");

static unsigned int reps = 1;
module_param(reps, uint, 0444);
MODULE_PARM_DESC(reps, "loops per measure, the fastest counts");

static unsigned int bound_ms = 30000;
module_param(bound_ms, uint, 0444);
MODULE_PARM_DESC(bound_ms, "guest-time bound of a one-by-one loop or a wait (coverage: 3x)");

static unsigned int inner_off = KPB_INNER_OFF;
module_param(inner_off, uint, 0444);
MODULE_PARM_DESC(inner_off, "coverage: offset of the probe inside a function");

static bool verbose;
module_param(verbose, bool, 0444);
MODULE_PARM_DESC(verbose, "coverage: also list the probes refused and the ones left on " KPB_TRAP);

#define KPB_MAX_SYMS	65536
#define KPB_LIST	"/sys/kernel/debug/kprobes/list"

static DEFINE_PER_CPU(unsigned long, kpb_hits);
static unsigned long kpb_sink;

static unsigned long *syms;
static unsigned int nsyms;
static char carry[32];
static size_t ncarry;
static DEFINE_MUTEX(kpb_lock);
static struct dentry *kpb_dir;

/*
 * The probed functions.  kpb_target gets the compiler's ftrace call at its
 * entry (with FUNCTION_TRACER); kpb_target_nt does not, so that its entry is
 * ordinary code a kernel can boost or optimize, also under a kretprobe.
 */
#ifdef CONFIG_ARM64
static noinline void kpb_target(void)
{
	WRITE_ONCE(kpb_sink, kpb_sink + 1);
}

/*
 * arm64: the probed instruction of each row is chosen, so the targets are
 * assembly.  kpb_target_nt starts with the usual frame set-up, a store
 * pair with writeback that no kernel simulates: it runs out of line (the
 * plain BRK rows).  kpb_a64_adr starts with an instruction both kernels
 * simulate (pc-relative), kpb_a64_nop with the nop that starts a function
 * ftrace may patch (ours simulates it, stock runs it out of line).
 */
void kpb_target_nt(void), kpb_a64_adr(void), kpb_a64_nop(void);
asm("	.pushsection .text, \"ax\"\n"
"	.p2align 3\n"
"	.type kpb_target_nt, %function\n"
"kpb_target_nt:\n"
"	stp	x29, x30, [sp, #-16]!\n"
"	mov	x29, sp\n"
"	ldp	x29, x30, [sp], #16\n"
"	ret\n"
"	.size kpb_target_nt, . - kpb_target_nt\n"
"	.p2align 3\n"
"	.type kpb_a64_adr, %function\n"
"kpb_a64_adr:\n"
"	adr	x9, kpb_a64_adr\n"
"	ret\n"
"	.size kpb_a64_adr, . - kpb_a64_adr\n"
"	.p2align 3\n"
"	.type kpb_a64_nop, %function\n"
"kpb_a64_nop:\n"
"	nop\n"
"	ret\n"
"	.size kpb_a64_nop, . - kpb_a64_nop\n"
"	.popsection\n");
#else
static noinline void kpb_target(void)
{
	asm volatile(_ASM_INC "%0" : "+m" (kpb_sink));
}

static noinline notrace void kpb_target_nt(void)
{
	asm volatile(_ASM_INC "%0\n\t" _ASM_INC "%0" : "+m" (kpb_sink));
}
#endif

/* Which of them a measure probes. */
enum kpb_tgt { KPB_T_TRACED, KPB_T_PLAIN, KPB_T_SIM, KPB_T_NOP };

static void *kpb_tgt_fn(enum kpb_tgt t)
{
	switch (t) {
	case KPB_T_TRACED:
		return kpb_target;
#ifdef CONFIG_ARM64
	case KPB_T_SIM:
		return kpb_a64_adr;
	case KPB_T_NOP:
		return kpb_a64_nop;
#endif
	default:
		return kpb_target_nt;
	}
}

/* The timed loops: direct calls, so the loop costs the same probed or not. */
static noinline u64 kpb_loop(enum kpb_tgt t)
{
	u64 t0, best = U64_MAX;
	unsigned long i;
	unsigned int r;

	for (r = 0; r < max(reps, 1U); r++) {
		t0 = ktime_get_ns();
		switch (t) {
		case KPB_T_TRACED:
			for (i = 0; i < loops; i++)
				kpb_target();
			break;
#ifdef CONFIG_ARM64
		case KPB_T_SIM:
			for (i = 0; i < loops; i++)
				kpb_a64_adr();
			break;
		case KPB_T_NOP:
			for (i = 0; i < loops; i++)
				kpb_a64_nop();
			break;
#endif
		default:
			for (i = 0; i < loops; i++)
				kpb_target_nt();
			break;
		}
		best = min(best, ktime_get_ns() - t0);
	}
	return best;
}

/* The same trivial work in every handler: count the hit on this CPU. */
static int kpb_pre(struct kprobe *p, struct pt_regs *regs)
{
	this_cpu_inc(kpb_hits);
	return 0;
}

static void kpb_post(struct kprobe *p, struct pt_regs *regs,
		     unsigned long flags)
{
}

static int kpb_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	this_cpu_inc(kpb_hits);
	return 0;
}

static unsigned long kpb_hits_take(void)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		sum += per_cpu(kpb_hits, cpu);
		per_cpu(kpb_hits, cpu) = 0;
	}
	return sum;
}

/* Print a/b with one decimal, as "value unit note". */
static void kpb_report(const char *measure, s64 a, u64 b, const char *unit,
		       const char *note)
{
	u64 x;
	u32 tenth;

	if (!b) {
		pr_info("%s n/a nothing measured\n", measure);
		return;
	}
	/* div_u64_rem(): no 64-bit division of its own on 32-bit kernels. */
	x = div64_u64((a < 0 ? -a : a) * 10 + b / 2, b);
	x = div_u64_rem(x, 10, &tenth);
	pr_info("%s %s%llu.%u %s%s%s\n", measure, a < 0 ? "-" : "",
		x, tenth, unit, note ? " " : "", note ?: "");
}

/* What the kernel made of a registered probe, read from the text itself. */
static const char *kpb_state(struct kprobe *p)
{
#ifdef CONFIG_ARM64
	__le32 insn;
#else
	u8 op;
#endif

#ifdef KPROBE_FLAG_FTRACE
	if (p->flags & KPROBE_FLAG_FTRACE)
		return "ftrace";
#endif
#ifdef CONFIG_ARM64
	/*
	 * Whatever an optimized probe puts there (a branch to its detour),
	 * it is neither the BRK nor the instruction it replaced.
	 */
	if (copy_from_kernel_nofault(&insn, p->addr, sizeof(insn)))
		return "unreadable";
	if (le32_to_cpu(insn) == BRK64_OPCODE_KPROBES)
		return "brk";
	if (le32_to_cpu(insn) != p->opcode)
		return "optimized";
#else
	if (copy_from_kernel_nofault(&op, p->addr, 1))
		return "unreadable";
	if (op == JMP32_INSN_OPCODE)
		return "optimized";
	if (op == INT3_INSN_OPCODE)
		return "int3";
#endif
	return "unarmed";
}

static bool kpb_optimized(struct kprobe *p)
{
	return !strcmp(kpb_state(p), "optimized");
}

/*
 * How many times @tag occurs in the debugfs probe list, or -1 when it cannot
 * be read.  kernel_read() refuses debugfs files (no read_iter in the proxy),
 * so read the list's seq_file directly when it is one.
 */
static long kpb_list_count(const char *tag)
{
	size_t tl = strlen(tag), keep = 0, len;
	const struct file_operations *real;
	struct iov_iter iter;
	struct kiocb kiocb;
	struct file *f;
	struct kvec kv;
	long n = -1;
	ssize_t r;
	char *buf, *s;

	f = filp_open(KPB_LIST, O_RDONLY, 0);
	if (IS_ERR(f))
		return -1;
	if (debugfs_file_get(f->f_path.dentry)) {
		filp_close(f, NULL);
		return -1;
	}
	real = debugfs_real_fops(f);
	buf = kmalloc(PAGE_SIZE + 1, GFP_KERNEL);
	if (!buf || !real || real->read != seq_read)
		goto out;
	init_sync_kiocb(&kiocb, f);
	n = 0;
	for (;;) {
		kv.iov_base = buf + keep;
		kv.iov_len = PAGE_SIZE - keep;
		iov_iter_kvec(&iter, ITER_DEST, &kv, 1, kv.iov_len);
		r = seq_read_iter(&kiocb, &iter);
		if (r <= 0)
			break;
		len = keep + r;
		buf[len] = '\0';
		for (s = buf; (s = strstr(s, tag)); s += tl)
			n++;
		/* Keep the last tl - 1 bytes: a tag may straddle two reads. */
		keep = min(len, tl - 1);
		memmove(buf, buf + len - keep, keep);
	}
out:
	kfree(buf);
	debugfs_file_put(f->f_path.dentry);
	filp_close(f, NULL);
	return n;
}

/*
 * Wait until the probes of @kps that the kernel queued for optimization (the
 * list's [OPTIMIZED] marks) carry their jump.  Without a readable list, wait
 * until no probe changed for KPB_QUIET_MS.  Return the guest time since @t0
 * of the last change seen (0 when nothing was queued), or -1 when the bound
 * ran out first; *@got is how many carry a jump.
 */
#define KPB_QUIET_MS	2000

static s64 kpb_wait_optimized(struct kprobe **kps, unsigned int n, u64 t0,
			      long *got)
{
	u64 now, last = t0, end = ktime_get_ns() + (u64)bound_ms * NSEC_PER_MSEC;
	long want = kpb_list_count("[OPTIMIZED]"), cnt, prev = 0;
	unsigned int i;

	*got = 0;
	if (!want)
		return 0;
	for (;;) {
		for (i = 0, cnt = 0; i < n; i++)
			cnt += kpb_optimized(kps[i]);
		now = ktime_get_ns();
		if (cnt != prev)
			last = now;
		*got = prev = cnt;
		if (want > 0 && cnt >= want)
			return now - t0;
		if (want < 0 && now - last > KPB_QUIET_MS * NSEC_PER_MSEC)
			return last - t0;
		if (now > end)
			return -1;
		usleep_range(1000, 2000);
	}
}

/* Probe hit cost: one kind of probe on one of the test functions. */
enum kpb_kind { KPB_NONE, KPB_KPROBE, KPB_KRETPROBE, KPB_BOTH };

static int kpb_hit(const char *measure, enum kpb_kind kind, enum kpb_tgt tgt,
		   bool post, const char *want)
{
	void *fn = kpb_tgt_fn(tgt);
	struct kprobe kp = { .addr = fn, .pre_handler = kpb_pre };
	struct kretprobe rp = { .kp.addr = fn, .handler = kpb_ret };
	bool use_kp = kind == KPB_KPROBE || kind == KPB_BOTH;
	bool use_rp = kind == KPB_KRETPROBE || kind == KPB_BOTH;
	struct kprobe *kps[1] = { use_kp ? &kp : &rp.kp };
	unsigned long expect, hits;
	const char *state = NULL;
	u64 base, probed;
	char note[64];
	long got;
	int ret;

	if (post)
		kp.post_handler = kpb_post;
	base = kpb_loop(tgt);
	if (kind == KPB_NONE) {
		kpb_report(measure, base, loops, "ns", "per call");
		return 0;
	}
	if (use_kp) {
		ret = register_kprobe(&kp);
		if (ret) {
			pr_info("%s n/a register_kprobe: %d\n", measure, ret);
			return 0;
		}
	}
	if (use_rp) {
		ret = register_kretprobe(&rp);
		if (ret) {
			pr_info("%s n/a register_kretprobe: %d\n", measure, ret);
			goto out_kp;
		}
	}
	if (!strcmp(want, "optimized"))
		kpb_wait_optimized(kps, 1, ktime_get_ns(), &got);
	state = kpb_state(kps[0]);
	if (strcmp(state, want)) {
		pr_info("%s n/a %s, not %s, on this kernel\n", measure, state, want);
		goto out;
	}
	kpb_hits_take();
	probed = kpb_loop(tgt);
	hits = kpb_hits_take();
	expect = (unsigned long)max(reps, 1U) * loops * (use_kp + use_rp);
	snprintf(note, sizeof(note), "%s", state);
	if (hits != expect)
		snprintf(note, sizeof(note), "%s, %lu hits of %lu", state, hits,
			 expect);
	kpb_report(measure, (s64)probed - (s64)base, loops, "ns", note);
out:
	if (use_rp)
		unregister_kretprobe(&rp);
out_kp:
	if (use_kp)
		unregister_kprobe(&kp);
	return 0;
}

/*
 * Write watch hit cost: a loop of stores to one variable, watched by a data
 * breakpoint on every CPU, minus the same loop unwatched.  "hwbp" is the
 * hw_breakpoint layer's register_wide_hw_breakpoint() with a handler that
 * only counts (what a kernel developer would use without wprobes); "watch"
 * is a wprobe doing the same where the kernel has them (it keeps the old
 * value and counts per probe on top), the hw_breakpoint one elsewhere.
 */
static u64 kpb_wvar;

static noinline u64 kpb_wloop(void)
{
	u64 t0, best = U64_MAX;
	unsigned long i;
	unsigned int r;

	for (r = 0; r < max(reps, 1U); r++) {
		t0 = ktime_get_ns();
		for (i = 0; i < loops; i++)
			WRITE_ONCE(kpb_wvar, i);
		best = min(best, ktime_get_ns() - t0);
	}
	return best;
}

static void kpb_bp_handler(struct perf_event *bp, struct perf_sample_data *data,
			   struct pt_regs *regs)
{
	this_cpu_inc(kpb_hits);
}

#ifdef CONFIG_WPROBES
static void kpb_wp_handler(struct wprobe *wp, struct pt_regs *regs)
{
	this_cpu_inc(kpb_hits);
}
#endif

static int kpb_watch(const char *measure, bool wprobe)
{
	struct perf_event * __percpu *bps = NULL;
	struct perf_event_attr attr;
	unsigned long expect, hits;
	const char *how = "hw_breakpoint";
	u64 base, probed;
	char note[64];
#ifdef CONFIG_WPROBES
	struct wprobe wp = {
		.addr = &kpb_wvar,
		.len = sizeof(kpb_wvar),
		.kind = WPROBE_WRITE,
		.handler = kpb_wp_handler,
	};
#endif

	base = kpb_wloop();
#ifdef CONFIG_WPROBES
	if (wprobe) {
		int ret = register_wprobe(&wp);

		if (ret) {
			pr_info("%s n/a register_wprobe: %d\n", measure, ret);
			return 0;
		}
		how = "wprobe";
	}
#else
	wprobe = false;
#endif
	if (!wprobe) {
		hw_breakpoint_init(&attr);
		attr.bp_addr = (unsigned long)&kpb_wvar;
		attr.bp_len = HW_BREAKPOINT_LEN_8;
		attr.bp_type = HW_BREAKPOINT_W;
		bps = register_wide_hw_breakpoint(&attr, kpb_bp_handler, NULL);
		if (IS_ERR((void __force *)bps)) {
			pr_info("%s n/a register_wide_hw_breakpoint: %ld\n",
				measure, PTR_ERR((void __force *)bps));
			return 0;
		}
	}
	kpb_hits_take();
	probed = kpb_wloop();
	hits = kpb_hits_take();
	expect = (unsigned long)max(reps, 1U) * loops;
	snprintf(note, sizeof(note), "%s", how);
	if (hits != expect)
		snprintf(note, sizeof(note), "%s, %lu hits of %lu", how, hits,
			 expect);
	kpb_report(measure, (s64)probed - (s64)base, loops, "ns", note);
#ifdef CONFIG_WPROBES
	if (wprobe)
		unregister_wprobe(&wp);
#endif
	if (bps)
		unregister_wide_hw_breakpoint(bps);
	return 0;
}

/* A probe set over the candidate addresses, reused by "reg" and "cover". */
struct kpb_set {
	struct kprobe *kp;
	struct kprobe **kps;
	unsigned int n;
};

static int kpb_set_alloc(struct kpb_set *s, unsigned int max)
{
	s->kp = vcalloc(max, sizeof(*s->kp));
	s->kps = vcalloc(max, sizeof(*s->kps));
	s->n = 0;
	if (s->kp && s->kps)
		return 0;
	vfree(s->kp);
	vfree(s->kps);
	return -ENOMEM;
}

static void kpb_set_free(struct kpb_set *s)
{
	vfree(s->kp);
	vfree(s->kps);
}

/* A fresh probe on @addr; kprobes are not re-registered as they are. */
static struct kprobe *kpb_probe_init(struct kprobe *p, unsigned long addr)
{
	memset(p, 0, sizeof(*p));
	p->addr = (kprobe_opcode_t *)addr;
	p->pre_handler = kpb_pre;
	return p;
}

static void kpb_count_states(struct kpb_set *s, long *opt, long *ftr)
{
	unsigned int i;
	const char *st;

	*opt = 0;
	*ftr = 0;
	for (i = 0; i < s->n; i++) {
		st = kpb_state(s->kps[i]);
		*opt += !strcmp(st, "optimized");
		*ftr += !strcmp(st, "ftrace");
	}
}

/*
 * After registering the set from @t0 on: when did every probe the kernel
 * queued for optimization carry its jump, per probe.
 */
static void kpb_report_optimized(const char *m, struct kpb_set *s, u64 t0,
				 u64 skipped)
{
	long got, opt, ftr;
	char name[48], note[96];
	s64 t;

	snprintf(name, sizeof(name), "%s.optimized", m);
	t = kpb_wait_optimized(s->kps, s->n, t0, &got);
	kpb_count_states(s, &opt, &ftr);
	if (!got) {
		pr_info("%s n/a none optimized (%ld ftrace-based of %u)\n", name,
			ftr, s->n);
		return;
	}
	snprintf(note, sizeof(note), "per probe (%ld optimized, %ld ftrace-based of %u%s)",
		 opt, ftr, s->n, t < 0 ? ", bound hit before all were" : "");
	kpb_report(name, t < 0 ? ktime_get_ns() - t0 - skipped : t - skipped,
		   s->n * 1000ULL, "us", note);
}

/*
 * Registration: @want probes on distinct function entries, picked from the
 * candidates in order, every step-th that registers (then the ones in
 * between, if needed).  One by one, then with one register_kprobes() call.
 */
static int kpb_reg(unsigned int want)
{
	u64 bound = (u64)bound_ms * NSEC_PER_MSEC, t0, t, skipped = 0;
	unsigned int step, first, i, tried = 0, nftr = 0;
	u64 tftr = 0;
	struct kpb_set s;
	char m[32], name[48], note[64];
	bool cut = false;
	int ret;

	if (!nsyms)
		return -ENODATA;
	if (kpb_set_alloc(&s, want))
		return -ENOMEM;
	snprintf(m, sizeof(m), "reg%u", want);
	step = max(1U, nsyms / (2 * want));

	/* One by one; the time of failed attempts does not count. */
	t0 = ktime_get_ns();
	for (first = 0; first < step && s.n < want && !cut; first++) {
		for (i = first; i < nsyms && s.n < want; i += step) {
			struct kprobe *p = kpb_probe_init(&s.kp[s.n], syms[i]);

			t = ktime_get_ns();
			ret = register_kprobe(p);
			tried++;
			if (ret) {
				skipped += ktime_get_ns() - t;
				continue;
			}
			s.kps[s.n++] = p;
			if (!strcmp(kpb_state(p), "ftrace")) {
				tftr += ktime_get_ns() - t;
				nftr++;
			}
			if (ktime_get_ns() - t0 - skipped > bound) {
				cut = true;
				break;
			}
		}
	}
	t = ktime_get_ns() - t0 - skipped;
	snprintf(note, sizeof(note), "per probe (%u of %u tried%s)", s.n, tried,
		 cut ? ", bound hit" : "");
	snprintf(name, sizeof(name), "%s.one.armed", m);
	kpb_report(name, t, s.n * 1000ULL, "us", note);
	/* The split by kind, for profiles (not in the table). */
	snprintf(note, sizeof(note), "per probe (%u ftrace-based)", nftr);
	snprintf(name, sizeof(name), "%s.one.armed.ftrace", m);
	kpb_report(name, tftr, nftr * 1000ULL, "us", note);
	snprintf(note, sizeof(note), "per probe (%u others)", s.n - nftr);
	snprintf(name, sizeof(name), "%s.one.armed.other", m);
	kpb_report(name, t - tftr, (s.n - nftr) * 1000ULL, "us", note);
	snprintf(name, sizeof(name), "%s.one", m);
	kpb_report_optimized(name, &s, t0, skipped);

	t0 = ktime_get_ns();
	for (i = 0; i < s.n; i++) {
		unregister_kprobe(s.kps[i]);
		if (ktime_get_ns() - t0 > bound && i + 1 < s.n) {
			i++;
			break;
		}
	}
	t = ktime_get_ns() - t0;
	snprintf(note, sizeof(note), "per probe (%u of %u%s)", i, s.n,
		 i < s.n ? ", bound hit" : "");
	snprintf(name, sizeof(name), "%s.one.unreg", m);
	kpb_report(name, t, i * 1000ULL, "us", note);
	if (i < s.n)
		unregister_kprobes(s.kps + i, s.n - i);

	/* The same set with one call each way. */
	for (i = 0; i < s.n; i++)
		kpb_probe_init(s.kps[i], (unsigned long)s.kps[i]->addr);
	t0 = ktime_get_ns();
	ret = register_kprobes(s.kps, s.n);
	t = ktime_get_ns() - t0;
	snprintf(name, sizeof(name), "%s.batch.armed", m);
	if (ret) {
		pr_info("%s n/a register_kprobes: %d\n", name, ret);
		goto out;
	}
	snprintf(note, sizeof(note), "per probe (%u)", s.n);
	kpb_report(name, t, s.n * 1000ULL, "us", note);
	snprintf(name, sizeof(name), "%s.batch", m);
	kpb_report_optimized(name, &s, t0, 0);
	t0 = ktime_get_ns();
	unregister_kprobes(s.kps, s.n);
	snprintf(name, sizeof(name), "%s.batch.unreg", m);
	kpb_report(name, ktime_get_ns() - t0, s.n * 1000ULL, "us", note);
out:
	kpb_set_free(&s);
	return 0;
}

/* Is @addr + @off inside the function that starts at @addr? */
static bool kpb_inside(unsigned long addr, unsigned int off)
{
	char buf[KSYM_SYMBOL_LEN], *p;
	unsigned long o;

	if (!off)
		return true;
	sprint_symbol(buf, addr + off);
	p = strrchr(buf, '+');
	return p && sscanf(p, "+%lx", &o) == 1 && o == off;
}

/*
 * Coverage: a probe on every candidate (at @off into it) that registers; how
 * many the kernel makes ftrace-based or optimizes.  The probes are
 * registered disabled, which already decides ftrace or not; the others are
 * then enabled, so that only they pay for arming.
 */
static int kpb_cover(const char *what, unsigned int off)
{
	u64 bound = 3ULL * bound_ms * NSEC_PER_MSEC, t0 = ktime_get_ns();
	unsigned int i, en = 0;
	long got, opt, ftr;
	struct kpb_set s;
	char note[96];

	if (!nsyms)
		return -ENODATA;
	if (kpb_set_alloc(&s, nsyms))
		return -ENOMEM;
	for (i = 0; i < nsyms && ktime_get_ns() - t0 < bound; i++) {
		struct kprobe *p = kpb_probe_init(&s.kp[s.n], syms[i] + off);
		int ret;

		p->flags = KPROBE_FLAG_DISABLED;
		if (!kpb_inside(syms[i], off))
			continue;
		ret = register_kprobe(p);
		if (!ret)
			s.kps[s.n++] = p;
		else if (verbose)
			pr_info("cover.%s.refused %pS %d\n", what, p->addr, ret);
	}
	snprintf(note, sizeof(note), "of %u candidates%s", i,
		 i < nsyms ? ", bound hit" : "");
	pr_info("cover.%s.registered %u probes %s\n", what, s.n, note);
	kpb_count_states(&s, &opt, &ftr);
	for (i = 0; i < s.n && ktime_get_ns() - t0 < bound; i++)
		if (strcmp(kpb_state(s.kps[i]), "ftrace"))
			en += !enable_kprobe(s.kps[i]);
	snprintf(note, sizeof(note), "of %u registered (%u others enabled%s)",
		 s.n, en, i < s.n ? ", bound hit" : "");
	kpb_wait_optimized(s.kps, s.n, ktime_get_ns(), &got);
	for (i = 0; verbose && i < s.n; i++)
		if (!strcmp(kpb_state(s.kps[i]), KPB_TRAP))
			pr_info("cover.%s." KPB_TRAP " %pS\n", what,
				s.kps[i]->addr);
	pr_info("cover.%s.ftrace %ld probes %s\n", what, ftr, note);
	pr_info("cover.%s.optimized %ld probes %s\n", what, got, note);
	unregister_kprobes(s.kps, s.n);
	kpb_set_free(&s);
	return 0;
}

/*
 * Every candidate at once ("every on" / "every off"): the probe set of the
 * issue's last row.  register_kprobes() is all or nothing, so the
 * candidates this kernel refuses (run.sh already dropped the blacklisted
 * ones) are found first by registering each one disabled, which checks and
 * prepares it but arms nothing (no text patching, no ftrace filter
 * update), and taking them all off again with one call; the set that
 * remains is then registered enabled with one timed call, and stays until
 * "every off".  (Halving a refused batch instead armed and disarmed most
 * of the set again for each refused probe: far too slow under TCG.)
 */
static struct kpb_set kpb_every;
static bool kpb_every_on;

static int kpb_every_start(void)
{
	u64 bound = 10ULL * bound_ms * NSEC_PER_MSEC, t0, t;
	unsigned int i;
	char note[96];
	int ret;

	if (kpb_every_on)
		return -EBUSY;
	if (!nsyms)
		return -ENODATA;
	if (kpb_set_alloc(&kpb_every, nsyms))
		return -ENOMEM;

	t0 = ktime_get_ns();
	for (i = 0; i < nsyms && ktime_get_ns() - t0 < bound; i++) {
		struct kprobe *p = kpb_probe_init(&kpb_every.kp[kpb_every.n],
						  syms[i]);

		p->flags = KPROBE_FLAG_DISABLED;
		if (!register_kprobe(p))
			kpb_every.kps[kpb_every.n++] = p;
		else if (verbose)
			pr_info("every.refused %pS\n", p->addr);
		cond_resched();
	}
	unregister_kprobes(kpb_every.kps, kpb_every.n);
	t = ktime_get_ns() - t0;
	snprintf(note, sizeof(note), "(%u of %u candidates kept%s)",
		 kpb_every.n, i, i < nsyms ? ", bound hit" : "");
	kpb_report("every.sift", t, 1000000000ULL, "s", note);
	if (!kpb_every.n)
		goto fail;

	/* The clean measure: the set the kernel takes, in one call each way. */
	for (i = 0; i < kpb_every.n; i++)
		kpb_probe_init(kpb_every.kps[i],
			       (unsigned long)kpb_every.kps[i]->addr);
	kpb_hits_take();
	t0 = ktime_get_ns();
	ret = register_kprobes(kpb_every.kps, kpb_every.n);
	t = ktime_get_ns() - t0;
	if (ret) {
		pr_info("every.reg n/a register_kprobes: %d\n", ret);
		goto fail;
	}
	snprintf(note, sizeof(note), "(%u probes armed with one call)",
		 kpb_every.n);
	kpb_report("every.reg", t, 1000000000ULL, "s", note);
	kpb_every_on = true;
	return 0;
fail:
	kpb_set_free(&kpb_every);
	return -EIO;
}

static int kpb_every_stop(void)
{
	char note[64];
	u64 t0, t;

	if (!kpb_every_on)
		return -EINVAL;
	pr_info("every.hits %lu hits (%u probes)\n", kpb_hits_take(),
		kpb_every.n);
	t0 = ktime_get_ns();
	unregister_kprobes(kpb_every.kps, kpb_every.n);
	t = ktime_get_ns() - t0;
	snprintf(note, sizeof(note), "(%u probes with one call)", kpb_every.n);
	kpb_report("every.unreg", t, 1000000000ULL, "s", note);
	kpb_set_free(&kpb_every);
	kpb_every_on = false;
	return 0;
}

static int kpb_run(char *cmd)
{
	unsigned int n;

	if (!strcmp(cmd, "base"))
		return kpb_hit("hit.none", KPB_NONE, KPB_T_PLAIN, false, NULL);
	if (!strcmp(cmd, KPB_TRAP))
		return kpb_hit("hit." KPB_TRAP, KPB_KPROBE, KPB_T_PLAIN, true,
			       KPB_TRAP);
	if (!strcmp(cmd, "boost"))
		return kpb_hit("hit.boost", KPB_KPROBE, KPB_T_PLAIN, false, KPB_TRAP);
	if (!strcmp(cmd, "opt"))
		return kpb_hit("hit.opt", KPB_KPROBE, KPB_T_PLAIN, false, "optimized");
	if (!strcmp(cmd, "ftrace"))
		return kpb_hit("hit.ftrace", KPB_KPROBE, KPB_T_TRACED, false, "ftrace");
	if (!strcmp(cmd, "kret"))
		return kpb_hit("hit.kret", KPB_KRETPROBE, KPB_T_PLAIN, false, KPB_TRAP);
	if (!strcmp(cmd, "kpkret"))
		return kpb_hit("hit.kp+kret", KPB_BOTH, KPB_T_PLAIN, false, KPB_TRAP);
	if (!strcmp(cmd, "optkret"))
		return kpb_hit("hit.optkret", KPB_KRETPROBE, KPB_T_PLAIN, false,
			       "optimized");
#ifdef CONFIG_ARM64
	/* With a post handler: no boosted copy to leave by on either kernel. */
	if (!strcmp(cmd, "sim"))
		return kpb_hit("hit.sim", KPB_KPROBE, KPB_T_SIM, true, KPB_TRAP);
	if (!strcmp(cmd, "nop"))
		return kpb_hit("hit.nop", KPB_KPROBE, KPB_T_NOP, true, KPB_TRAP);
	/*
	 * arm64 takes a watchpoint before the store and steps over it only
	 * for perf's own overflow handler: under a counting handler the
	 * store would trap for ever.
	 */
	if (!strcmp(cmd, "hwbp") || !strcmp(cmd, "watch")) {
		pr_info("hit.%s n/a arm64 steps over a kernel watchpoint only for perf's handler\n",
			cmd);
		return 0;
	}
#endif
	if (!strcmp(cmd, "hwbp"))
		return kpb_watch("hit.hwbp", false);
	if (!strcmp(cmd, "watch"))
		return kpb_watch("hit.watch", true);
	if (sscanf(cmd, "reg %u", &n) == 1 && n)
		return kpb_reg(n);
	if (!strcmp(cmd, "cover entry"))
		return kpb_cover("entry", 0);
	if (!strcmp(cmd, "cover inner"))
		return kpb_cover("inner", inner_off);
	if (!strcmp(cmd, "every on"))
		return kpb_every_start();
	if (!strcmp(cmd, "every off"))
		return kpb_every_stop();
	if (!strcmp(cmd, "clear syms")) {
		nsyms = 0;
		return 0;
	}
	return -EINVAL;
}

static ssize_t kpb_run_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	char cmd[32];
	int ret;

	if (len >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, len))
		return -EFAULT;
	cmd[len] = '\0';
	strim(cmd);
	mutex_lock(&kpb_lock);
	ret = kpb_run(strim(cmd));
	mutex_unlock(&kpb_lock);
	return ret ? ret : len;
}

/* Take one address; lines may straddle writes, hence the carry. */
static int kpb_add_sym(const char *s)
{
	unsigned long a;

	if (!*s)
		return 0;
	if (kstrtoul(s, 16, &a))
		return -EINVAL;
	if (nsyms >= KPB_MAX_SYMS)
		return -ENOSPC;
	syms[nsyms++] = a;
	return 0;
}

static ssize_t kpb_syms_write(struct file *file, const char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	size_t i, done = min_t(size_t, len, PAGE_SIZE);
	char *buf;
	int ret = 0;

	buf = memdup_user(ubuf, done);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	mutex_lock(&kpb_lock);
	for (i = 0; i < done && !ret; i++) {
		if (buf[i] != '\n') {
			if (ncarry >= sizeof(carry) - 1)
				ret = -EINVAL;
			else
				carry[ncarry++] = buf[i];
			continue;
		}
		carry[ncarry] = '\0';
		ret = kpb_add_sym(strim(carry));
		ncarry = 0;
	}
	mutex_unlock(&kpb_lock);
	kfree(buf);
	return ret ? ret : done;
}

static const struct file_operations kpb_run_fops = {
	.owner = THIS_MODULE,
	.write = kpb_run_write,
};

static const struct file_operations kpb_syms_fops = {
	.owner = THIS_MODULE,
	.write = kpb_syms_write,
};

static int __init kpb_init(void)
{
	syms = vcalloc(KPB_MAX_SYMS, sizeof(*syms));
	if (!syms)
		return -ENOMEM;
	kpb_dir = debugfs_create_dir("kpbench", NULL);
	debugfs_create_file("run", 0200, kpb_dir, NULL, &kpb_run_fops);
	debugfs_create_file("syms", 0200, kpb_dir, NULL, &kpb_syms_fops);
	pr_info("loaded, %lu calls per loop, %u loops per measure\n", loops,
		max(reps, 1U));
	return 0;
}

static void __exit kpb_exit(void)
{
	if (kpb_every_on)
		kpb_every_stop();
	debugfs_remove_recursive(kpb_dir);
	vfree(syms);
}

module_init(kpb_init);
module_exit(kpb_exit);
MODULE_DESCRIPTION("kprobes benchmark: hit and registration cost");
MODULE_LICENSE("GPL");
