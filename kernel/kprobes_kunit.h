/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the KUnit suites of the kprobes core share: the probed targets,
 * the kprobes and handlers that record what they saw, and the worker
 * threads.  All of it is defined in kprobes_kunit.c, next to suite
 * kprobes_core; kretprobes_kunit.c and kprobes_opt_kunit.c use it.
 */
#ifndef _KERNEL_KPROBES_KUNIT_H
#define _KERNEL_KPROBES_KUNIT_H

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/completion.h>
#include <linux/kprobes.h>
#include <linux/types.h>
#include <asm/text-patching.h>

/* Every probed function here takes one long and returns one. */
typedef long kpk_fn_t(long);

/*
 * An assembly target: aligned, global (the suites are separate objects),
 * typed and sized as a function.
 */
#define KPK_ASM_FUNC(name)						\
	"	.balign 16\n"						\
	"	.globl " #name "\n"					\
	"	.type " #name ", @function\n"				\
	#name ":\n"

#define KPK_ASM_END(name)						\
	"	.size " #name ", . - " #name "\n"

/*
 * Probe points inside the assembly of kprobes_kunit.c: KPK_<name> is the
 * local label ".Lkpk_<name>", and kpkunit_asm_point(KPK_<name>) returns its
 * address.  The table at the end of the assembly lists them in this order.
 */
enum kpk_point {
	KPK_add_entry,
	KPK_add_nop,
	KPK_add_mov,
	KPK_add_add,
	KPK_add_ret,
	KPK_rip_load,
	KPK_rip_lea,
	KPK_rip_mem,
	KPK_rip_store,
	KPK_rip_after_store,
	KPK_rip_imm,
	KPK_rip_after_imm,
	KPK_jmp_short,
	KPK_jmp_t1,
	KPK_jmp_near,
	KPK_jmp_t2,
	KPK_jcc_short,
	KPK_jcc_nt1,
	KPK_jcc_t1,
	KPK_jcc_near,
	KPK_jcc_nt2,
	KPK_jcc_t2,
	KPK_call_direct,
	KPK_call_ret1,
	KPK_call_ind,
	KPK_call_ret2,
	KPK_stk_push,
	KPK_stk_after_push,
	KPK_stk_pushimm,
	KPK_stk_after_pushimm,
	KPK_stk_pop,
	KPK_stk_leave,
	KPK_stk_after_leave,
	KPK_flg_xor,
	KPK_flg_pushf,
	KPK_flg_after_pushf,
	KPK_flg_popf,
	KPK_flg_after_popf,
	KPK_loop_body,
	KPK_loop_insn,
	KPK_loop_jrcxz,
	KPK_loop_end,
	KPK_NR_POINTS
};

/* The assembly targets; kprobes_kunit.c says what each computes. */
kpk_fn_t kpkunit_asm_add, kpkunit_asm_rip, kpkunit_asm_jmp, kpkunit_asm_jcc;
kpk_fn_t kpkunit_asm_call, kpkunit_asm_stack, kpkunit_asm_flags;
kpk_fn_t kpkunit_asm_loop, kpkunit_asm_point;

/* The C targets. */
kpk_fn_t kpkunit_target_a, kpkunit_target_b, kpkunit_target_c;
kpk_fn_t kpkunit_rec, kpkunit_target_wait;

/* An ftrace call site: the 5-byte call to __fentry__ (MCOUNT_INSN_SIZE). */
#define KPK_FENTRY_LEN	CALL_INSN_SIZE

static inline unsigned long kpk_point(enum kpk_point pt)
{
	return (unsigned long)kpkunit_asm_point(pt);
}

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
long kpk_run(kpk_fn_t *fn, long x);

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
	unsigned long pre_di[KPK_NKP];
	unsigned long post_ip[KPK_NKP];
	atomic_t bad_ip;	/* pre handler with regs->ip != addr + 1 */
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
void kpk_unregister(struct kunit *test, struct kprobe *p);
void kpk_expect_hits(struct kunit *test, const int *pre, const int *post,
		     int n);
bool kpk_at_entry(void *fn, kprobe_opcode_t *addr);
unsigned long kpk_fentry(kpk_fn_t *fn);

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
