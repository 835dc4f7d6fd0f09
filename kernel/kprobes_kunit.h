/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the KUnit suites of the kprobes core share: the probed targets,
 * the kprobes and handlers that record what they saw, and the worker
 * threads.  The C targets, handlers and threads are defined in
 * kprobes_kunit.c, next to suite kprobes_core; the assembly targets, whose
 * instructions must be known, in the architecture's kprobes_kunit_<arch>.c.
 * kretprobes_kunit.c and the architecture's own suites use them all.
 */
#ifndef _KERNEL_KPROBES_KUNIT_H
#define _KERNEL_KPROBES_KUNIT_H

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/completion.h>
#include <linux/kprobes.h>
#include <linux/types.h>
#include <linux/ftrace.h>
#include <linux/ptrace.h>

/* Every probed function here takes one long and returns one. */
typedef long kpk_fn_t(long);

/*
 * An assembly target: aligned, global (the suites are separate objects),
 * typed and sized as a function.
 */
#define KPK_ASM_FUNC(name)						\
	"	.balign 16\n"						\
	"	.globl " #name "\n"					\
	"	.type " #name ", STT_FUNC\n"				\
	#name ":\n"

#define KPK_ASM_END(name)						\
	"	.size " #name ", . - " #name "\n"

/*
 * Probe points inside the assembly targets of the architecture's
 * kprobes_kunit_<arch>.c: KPK_<name> is the local label ".Lkpk_<name>",
 * and kpk_point(KPK_<name>) returns its address.  Every architecture has
 * these; an architecture's own points follow them (KPK_NR_COMMON_POINTS
 * on), in kprobes_kunit_<arch>.h.
 */
enum kpk_point {
	KPK_add_entry,
	KPK_add_nop,
	KPK_add_mov,
	KPK_add_add,
	KPK_add_ret,
	KPK_jcc_near,
	KPK_call_ret1,
	KPK_call_ret2,
	KPK_NR_COMMON_POINTS
};

/*
 * The assembly targets every architecture has:
 *
 * kpkunit_asm_add(x)   = x + 5: a no-op, a register move, an add and a
 *			  return, each at a probe point.
 * kpkunit_asm_jcc(x)   = x (+1000 if x >= 10) (+3000 if x < 20), with two
 *			  conditional branches; the second is at KPK_jcc_near.
 * kpkunit_asm_call(x)  = x + 11: calls kpkunit_asm_add directly (returning
 *			  to KPK_call_ret1), then through a register
 *			  (returning to KPK_call_ret2), and adds one.
 * kpkunit_asm_point(i) = address of probe point i.
 * kpkunit_flags_ret(x) = x, with the condition flags of an unsigned
 *			  compare of x with 5 left for the caller.
 * kpkunit_flags_call(x) calls kpkunit_flags_ret(x) and returns
 *			  x | below << 32 | equal << 33, as it finds the flags
 *			  after the return.
 */
kpk_fn_t kpkunit_asm_add, kpkunit_asm_jcc, kpkunit_asm_call;
kpk_fn_t kpkunit_asm_point, kpkunit_flags_ret, kpkunit_flags_call;

/* The C targets. */
kpk_fn_t kpkunit_target_a, kpkunit_target_b, kpkunit_target_c;
kpk_fn_t kpkunit_rec, kpkunit_target_wait;

#ifdef CONFIG_KPROBES_ON_FTRACE
/* An ftrace call site: the call (or branch) to the tracer. */
#define KPK_FENTRY_LEN	MCOUNT_INSN_SIZE

unsigned long kpk_fentry(kpk_fn_t *fn);
#endif

static inline unsigned long kpk_point(int pt)
{
	return (unsigned long)kpkunit_asm_point(pt);
}

/*
 * What the architecture's kprobes_kunit_<arch>.c tells the suites:
 *
 * kpk_arch_pre_ip_off: instruction_pointer() in a pre handler, less the
 *	probe's address (x86: 1, past the int3).
 * kpk_arch_mid_insn_err: the errno of a probe inside an instruction.
 * kpk_arch_kretprobe_refused: a function whose return cannot be taken
 *	over, or NULL.
 * kpk_arch_entry_skip(): how far past @fn a probe asked for at @fn + 0
 *	may land (x86: an ENDBR).
 * kpk_arch_ret_flags(): the flags of @regs, as KPK_FLAG_BELOW and
 *	KPK_FLAG_EQUAL after an unsigned compare.
 * kpk_arch_irqs_on(): whether @regs had interrupts on.
 */
#define KPK_FLAG_BELOW	1UL
#define KPK_FLAG_EQUAL	2UL

extern const unsigned long kpk_arch_pre_ip_off;
extern const int kpk_arch_mid_insn_err;
extern const char * const kpk_arch_kretprobe_refused;
unsigned long kpk_arch_entry_skip(void *fn);
unsigned long kpk_arch_ret_flags(const struct pt_regs *regs);
bool kpk_arch_irqs_on(const struct pt_regs *regs);

/* Call @fn(@x) through a pointer the compiler cannot see through. */
static inline long __nocfi kpk_call(kpk_fn_t *fn, long x)
{
	OPTIMIZER_HIDE_VAR(fn);
	return fn(x);
}

/*
 * Each call of kpkunit_target_wait() counts itself in kpk_wait_in; the
 * kpk_wait_want-th completes kpk_wait_all_in, and all sleep until
 * kpk_wait_go is completed.
 */
extern atomic_t kpk_wait_in;
extern int kpk_wait_want;
extern struct completion kpk_wait_all_in, kpk_wait_go;

long kpk_model(kpk_fn_t *fn, long x);

/* Arguments the instruction tests call each target with. */
#define KPK_NARGS	4
extern const long kpk_args[KPK_NARGS];

/* Hits per call of a probe that not every call reaches. */
long kpk_even(long x);
long kpk_bit1_clear(long x);
long kpk_x(long x);

/* Probes in slots 0 to KPK_NKP - 1, and what their handlers saw. */
#define KPK_NKP		8

struct kpk_seen {
	atomic_t pre[KPK_NKP];
	atomic_t post[KPK_NKP];
	unsigned long pre_ip[KPK_NKP];
	unsigned long pre_arg[KPK_NKP];	/* first argument */
	unsigned long post_ip[KPK_NKP];
	atomic_t bad_ip;	/* pre handler at another address */
	atomic_t stray;		/* handler called with a foreign kprobe */
	/* kpk_pre_nest */
	long nest_result;
	bool nest_running_ok;
};

extern struct kpk_seen kpk_seen;

static inline int kpk_pre_hits(int i)
{
	return atomic_read(&kpk_seen.pre[i]);
}

static inline int kpk_post_hits(int i)
{
	return atomic_read(&kpk_seen.post[i]);
}

int kpk_pre(struct kprobe *p, struct pt_regs *regs);
struct kprobe *kpk_probe(int i, void *addr, const char *sym,
			 unsigned int off, bool post, u32 flags);
int kpk_register(struct kunit *test, struct kprobe *p);
int kpk_try_register(struct kprobe *p);
void kpk_unregister(struct kunit *test, struct kprobe *p);
void kpk_expect_hits(struct kunit *test, const int *pre, const int *post,
		     int n);
bool kpk_at_entry(void *fn, kprobe_opcode_t *addr);

/* Worker threads that call a target over and over. */
#define KPK_NWORKERS	4

struct kpk_worker {
	struct task_struct *task;
	struct completion done;
	kpk_fn_t *fn;
	long arg;
	unsigned long iters;
	unsigned long calls;
	unsigned long bad;
	long last;
};

extern struct kpk_worker kpk_workers[KPK_NWORKERS];
/* What workers check their results against; suites may widen it. */
extern long (*kpk_worker_model)(kpk_fn_t *fn, long x);

int kpk_worker_start(struct kpk_worker *w, kpk_fn_t *fn, long arg,
		     unsigned long iters, int cpu);
bool kpk_join_all(void);
bool kpk_stop_workers(int n, unsigned long *calls, unsigned long *bad);
void kpk_workers_action(void *unused);

/* init and exit of suite kprobes_core, which the other suites build on. */
int kpk_core_init(struct kunit *test);
void kpk_core_exit(struct kunit *test);

#endif /* _KERNEL_KPROBES_KUNIT_H */
