// SPDX-License-Identifier: GPL-2.0
/*
 * Boot-time KUnit suites for the kprobes core (CONFIG_KPROBES_KUNIT_TEST):
 * the fixtures all of them share (declared in kprobes_kunit.h) and suite
 * kprobes_core.  Return probes are tested in kretprobes_kunit.c, jump
 * optimization in kprobes_opt_kunit.c.
 *
 * Only the public API of <linux/kprobes.h> is used.  The probed code the
 * suites share lives in this file:
 *
 *  - small C functions that are only ever called through a hidden function
 *    pointer, so the compiler keeps one real, out-of-line body for each;
 *  - hand-written assembly functions whose instructions are known exactly,
 *    so that a probe can be put on an instruction of a chosen kind and the
 *    result of the function compared with and without the probe.
 *
 * Handlers run in breakpoint context: they only count and record, with
 * atomics and plain stores.  All checks are made afterwards by the test
 * thread.  Every probe a test registers is also handed to a KUnit action
 * that unregisters it when the test ends, however it ends.
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpufeature.h>
#include <linux/cpumask.h>
#include <linux/jiffies.h>
#include <linux/jump_label.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/string.h>
#include <linux/unaligned.h>
#include <linux/workqueue.h>
#include <asm/ibt.h>
#include <asm/insn.h>
#include <asm/nospec-branch.h>
#include <asm/processor-flags.h>
#include <asm/vsyscall.h>

#include "kprobes_kunit.h"

/* ---------------------------------------------------------------------- */
/* Hand-written targets                                                    */
/* ---------------------------------------------------------------------- */

/* The probe points of enum kpk_point, as offsets from kpkunit_asm_add. */
#define KPK_PT(name)	"	.long .Lkpk_" #name " - kpkunit_asm_add\n"

/*
 * kpkunit_asm_add(x)   = x + 5: a 5-byte NOP, mov, add, ret.
 * kpkunit_asm_rip(x)   = x + 2 * 0x1234 + 1: RIP-relative load, lea, store
 *			  and a compare of a RIP-relative operand with imm32.
 * kpkunit_asm_jmp(x)   = x + 7 (+100 if bit 0, +200 if bit 1): jmp rel8
 *			  and rel32, each taken only when the bit is clear.
 * kpkunit_asm_jcc(x)   = x (+1000 if x >= 10) (+3000 if x < 20): jb rel8,
 *			  jae rel32.
 * kpkunit_asm_call(x)  = x + 11: calls kpkunit_asm_add directly, then
 *			  through a register.
 * kpkunit_asm_stack(x) = x + 0x58: push/pop of registers and of an
 *			  immediate, a frame and leave.
 * kpkunit_asm_flags(x) = RFLAGS after "xor %eax,%eax" (low half) and again
 *			  after popf of that value (high half).
 * kpkunit_asm_loop(x)  = 2 * x for x >= 1: loop, then a taken jrcxz.
 * kpkunit_asm_point(i) = address of probe point i (enum kpk_point).
 */
asm(
"	.pushsection .text, \"ax\"\n"
KPK_ASM_FUNC(kpkunit_asm_add)
".Lkpk_add_entry:\n"
	ASM_ENDBR
".Lkpk_add_nop:\n"
"	nopl 0x8(%rax,%rax,1)\n"
".Lkpk_add_mov:\n"
"	mov %rdi, %rax\n"
".Lkpk_add_add:\n"
"	add $5, %rax\n"
".Lkpk_add_ret:\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_add)

KPK_ASM_FUNC(kpkunit_asm_rip)
	ASM_ENDBR
".Lkpk_rip_load:\n"
"	mov .Lkpk_word(%rip), %rax\n"
".Lkpk_rip_lea:\n"
"	lea .Lkpk_word(%rip), %rdx\n"
".Lkpk_rip_mem:\n"
"	add (%rdx), %rax\n"
".Lkpk_rip_store:\n"
"	mov %rdi, .Lkpk_scratch(%rip)\n"
".Lkpk_rip_after_store:\n"
"	add .Lkpk_scratch(%rip), %rax\n"
".Lkpk_rip_imm:\n"
"	cmpq $0x1234, .Lkpk_word(%rip)\n"
".Lkpk_rip_after_imm:\n"
"	sete %dl\n"
"	movzbl %dl, %edx\n"
"	add %rdx, %rax\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_rip)

KPK_ASM_FUNC(kpkunit_asm_jmp)
	ASM_ENDBR
"	mov %rdi, %rax\n"
"	test $1, %dil\n"
"	jnz .Lkpk_jmp_odd\n"
".Lkpk_jmp_short:\n"
"	jmp .Lkpk_jmp_t1\n"
".Lkpk_jmp_odd:\n"
"	add $100, %rax\n"
".Lkpk_jmp_t1:\n"
"	test $2, %dil\n"
"	jnz .Lkpk_jmp_two\n"
".Lkpk_jmp_near:\n"
"	{disp32} jmp .Lkpk_jmp_t2\n"
".Lkpk_jmp_two:\n"
"	add $200, %rax\n"
".Lkpk_jmp_t2:\n"
"	add $7, %rax\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_jmp)

KPK_ASM_FUNC(kpkunit_asm_jcc)
	ASM_ENDBR
"	mov %rdi, %rax\n"
"	cmp $10, %rdi\n"
".Lkpk_jcc_short:\n"
"	jb .Lkpk_jcc_t1\n"
".Lkpk_jcc_nt1:\n"
"	add $1000, %rax\n"
".Lkpk_jcc_t1:\n"
"	cmp $20, %rdi\n"
".Lkpk_jcc_near:\n"
"	{disp32} jae .Lkpk_jcc_t2\n"
".Lkpk_jcc_nt2:\n"
"	add $3000, %rax\n"
".Lkpk_jcc_t2:\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_jcc)

KPK_ASM_FUNC(kpkunit_asm_call)
	ASM_ENDBR
".Lkpk_call_direct:\n"
"	call kpkunit_asm_add\n"
".Lkpk_call_ret1:\n"
"	mov %rax, %rdi\n"
"	lea kpkunit_asm_add(%rip), %rdx\n"
".Lkpk_call_ind:\n"
	ANNOTATE_RETPOLINE_SAFE
"	call *%rdx\n"
".Lkpk_call_ret2:\n"
"	add $1, %rax\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_call)

KPK_ASM_FUNC(kpkunit_asm_stack)
	ASM_ENDBR
".Lkpk_stk_push:\n"
"	push %rbp\n"
".Lkpk_stk_after_push:\n"
"	mov %rsp, %rbp\n"
"	push %rbx\n"
"	lea 3(%rdi), %rbx\n"
".Lkpk_stk_pushimm:\n"
"	push $0x55\n"
".Lkpk_stk_after_pushimm:\n"
"	pop %rax\n"
"	add %rbx, %rax\n"
".Lkpk_stk_pop:\n"
"	pop %rbx\n"
".Lkpk_stk_leave:\n"
"	leave\n"
".Lkpk_stk_after_leave:\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_stack)

KPK_ASM_FUNC(kpkunit_asm_flags)
	ASM_ENDBR
".Lkpk_flg_xor:\n"
"	xor %eax, %eax\n"
".Lkpk_flg_pushf:\n"
"	pushf\n"
".Lkpk_flg_after_pushf:\n"
"	pop %rax\n"
"	push %rax\n"
".Lkpk_flg_popf:\n"
"	popf\n"
".Lkpk_flg_after_popf:\n"
"	pushf\n"
"	pop %rdx\n"
"	shl $32, %rdx\n"
"	or %rdx, %rax\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_flags)

KPK_ASM_FUNC(kpkunit_asm_loop)
	ASM_ENDBR
"	xor %eax, %eax\n"
"	mov %rdi, %rcx\n"
".Lkpk_loop_body:\n"
"	add $2, %rax\n"
".Lkpk_loop_insn:\n"
"	loop .Lkpk_loop_body\n"
".Lkpk_loop_jrcxz:\n"
"	jrcxz .Lkpk_loop_end\n"
"	add $500, %rax\n"
".Lkpk_loop_end:\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_loop)

KPK_ASM_FUNC(kpkunit_asm_point)
	ASM_ENDBR
"	lea .Lkpk_table(%rip), %rdx\n"
"	movslq (%rdx,%rdi,4), %rax\n"
"	lea kpkunit_asm_add(%rip), %rdx\n"
"	add %rdx, %rax\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_point)
"	.popsection\n"

"	.pushsection .rodata, \"a\"\n"
"	.balign 8\n"
".Lkpk_word:\n"
"	.quad 0x1234\n"
".Lkpk_table:\n"
KPK_PT(add_entry)
KPK_PT(add_nop)
KPK_PT(add_mov)
KPK_PT(add_add)
KPK_PT(add_ret)
KPK_PT(rip_load)
KPK_PT(rip_lea)
KPK_PT(rip_mem)
KPK_PT(rip_store)
KPK_PT(rip_after_store)
KPK_PT(rip_imm)
KPK_PT(rip_after_imm)
KPK_PT(jmp_short)
KPK_PT(jmp_t1)
KPK_PT(jmp_near)
KPK_PT(jmp_t2)
KPK_PT(jcc_short)
KPK_PT(jcc_nt1)
KPK_PT(jcc_t1)
KPK_PT(jcc_near)
KPK_PT(jcc_nt2)
KPK_PT(jcc_t2)
KPK_PT(call_direct)
KPK_PT(call_ret1)
KPK_PT(call_ind)
KPK_PT(call_ret2)
KPK_PT(stk_push)
KPK_PT(stk_after_push)
KPK_PT(stk_pushimm)
KPK_PT(stk_after_pushimm)
KPK_PT(stk_pop)
KPK_PT(stk_leave)
KPK_PT(stk_after_leave)
KPK_PT(flg_xor)
KPK_PT(flg_pushf)
KPK_PT(flg_after_pushf)
KPK_PT(flg_popf)
KPK_PT(flg_after_popf)
KPK_PT(loop_body)
KPK_PT(loop_insn)
KPK_PT(loop_jrcxz)
KPK_PT(loop_end)
"	.popsection\n"

"	.pushsection .data, \"aw\"\n"
"	.balign 8\n"
".Lkpk_scratch:\n"
"	.quad 0\n"
"	.popsection\n"
);

#define KPK_FLAGS_MASK	(X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_ZF | \
			 X86_EFLAGS_SF | X86_EFLAGS_TF | X86_EFLAGS_IF | \
			 X86_EFLAGS_DF | X86_EFLAGS_OF)
#define KPK_FLAGS_XOR	(X86_EFLAGS_PF | X86_EFLAGS_ZF | X86_EFLAGS_IF)

/* ---------------------------------------------------------------------- */
/* C targets                                                               */
/* ---------------------------------------------------------------------- */

static unsigned long kpkunit_sink;
static unsigned long kpkunit_data_word;

noinline long kpkunit_target_a(long x)
{
	WRITE_ONCE(kpkunit_sink, x);
	return 3 * x + 1;
}

noinline long kpkunit_target_b(long x)
{
	WRITE_ONCE(kpkunit_sink, x + 2);
	return 5 * x + 2;
}

noinline long kpkunit_target_c(long x)
{
	WRITE_ONCE(kpkunit_sink, x ^ 0x55);
	return (x ^ 0x5a5a) + 9;
}

/* What a pre handler switches kpkunit_target_a to. */
static noinline long kpkunit_target_repl(long x)
{
	WRITE_ONCE(kpkunit_sink, x + 4);
	return 7 * x + 3;
}

/* Listed in the kprobes blacklist: registering on it must fail. */
static noinline long kpkunit_forbidden(long x)
{
	WRITE_ONCE(kpkunit_sink, x + 6);
	return x - 13;
}
NOKPROBE_SYMBOL(kpkunit_forbidden);

/* 1 + 2 + ... + n, one call frame per level. */
noinline long kpkunit_rec(long n)
{
	WRITE_ONCE(kpkunit_sink, n);
	if (n <= 1)
		return 1;
	return kpk_call(kpkunit_rec, n - 1) + n;
}

/* A function that sleeps until the test releases it. */
atomic_t kpk_wait_in;
int kpk_wait_want;
DECLARE_COMPLETION(kpk_wait_all_in);
DECLARE_COMPLETION(kpk_wait_go);

noinline long kpkunit_target_wait(long x)
{
	WRITE_ONCE(kpkunit_sink, x + 8);
	if (atomic_inc_return(&kpk_wait_in) == READ_ONCE(kpk_wait_want))
		complete(&kpk_wait_all_in);
	wait_for_completion_timeout(&kpk_wait_go, 60 * HZ);
	return 11 * x + 5;
}

/* Expected result of each target, computed without calling it. */
long kpk_model(kpk_fn_t *fn, long x)
{
	if (fn == kpkunit_target_a)
		return 3 * x + 1;
	if (fn == kpkunit_target_b)
		return 5 * x + 2;
	if (fn == kpkunit_target_c)
		return (x ^ 0x5a5a) + 9;
	if (fn == kpkunit_target_repl)
		return 7 * x + 3;
	if (fn == kpkunit_rec)
		return x * (x + 1) / 2;
	if (fn == kpkunit_target_wait)
		return 11 * x + 5;
	if (fn == kpkunit_asm_add)
		return x + 5;
	if (fn == kpkunit_asm_rip)
		return x + 2 * 0x1234 + 1;
	if (fn == kpkunit_asm_jmp)
		return x + 7 + (x & 1 ? 100 : 0) + (x & 2 ? 200 : 0);
	if (fn == kpkunit_asm_jcc)
		return x + (x >= 10 ? 1000 : 0) + (x < 20 ? 3000 : 0);
	if (fn == kpkunit_asm_call)
		return x + 11;
	if (fn == kpkunit_asm_stack)
		return x + 0x58;
	if (fn == kpkunit_asm_flags)
		return KPK_FLAGS_XOR | ((long)KPK_FLAGS_XOR << 32);
	if (fn == kpkunit_asm_loop)
		return 2 * x;
	return LONG_MIN;
}

/* Call a target; for the flags function keep only the bits that matter. */
long kpk_run(kpk_fn_t *fn, long x)
{
	long r = kpk_call(fn, x);

	if (fn == kpkunit_asm_flags)
		r &= KPK_FLAGS_MASK | ((long)KPK_FLAGS_MASK << 32);
	return r;
}

/* ---------------------------------------------------------------------- */
/* kprobes, handlers and what they saw                                     */
/* ---------------------------------------------------------------------- */

static struct kprobe kpk_kp[KPK_NKP];
struct kpk_seen kpk_seen;

static int kpk_index(struct kprobe *p)
{
	int i;

	for (i = 0; i < KPK_NKP; i++)
		if (p == &kpk_kp[i])
			return i;
	atomic_inc(&kpk_seen.stray);
	return -1;
}

int kpk_pre(struct kprobe *p, struct pt_regs *regs)
{
	int i = kpk_index(p);

	if (i < 0)
		return 0;
	if (regs->ip != (unsigned long)p->addr + 1)
		atomic_inc(&kpk_seen.bad_ip);
	WRITE_ONCE(kpk_seen.pre_ip[i], regs->ip);
	WRITE_ONCE(kpk_seen.pre_di[i], regs->di);
	atomic_inc(&kpk_seen.pre[i]);
	return 0;
}

static void kpk_post(struct kprobe *p, struct pt_regs *regs,
		     unsigned long flags)
{
	int i = kpk_index(p);

	if (i < 0)
		return;
	WRITE_ONCE(kpk_seen.post_ip[i], regs->ip);
	atomic_inc(&kpk_seen.post[i]);
}

/* Send the probed call to kpkunit_target_repl instead. */
static int kpk_pre_redirect(struct kprobe *p, struct pt_regs *regs)
{
	kpk_pre(p, regs);
	regs->ip = (unsigned long)kpkunit_target_repl;
	return 1;
}

/* Call another probed function from inside a handler. */
static int kpk_pre_nest(struct kprobe *p, struct pt_regs *regs)
{
	struct kprobe *cur = kprobe_running();

	kpk_pre(p, regs);
	WRITE_ONCE(kpk_seen.nest_running_ok, cur && cur->addr == p->addr);
	WRITE_ONCE(kpk_seen.nest_result, kpk_call(kpkunit_target_b, 11));
	return 0;
}

/* Reset slot @i and describe a probe on @addr or on @sym + @off. */
struct kprobe *kpk_probe(int i, void *addr, const char *sym,
			 unsigned int off, bool post, u32 flags)
{
	struct kprobe *p = &kpk_kp[i];

	memset(p, 0, sizeof(*p));
	p->addr = addr;
	p->symbol_name = sym;
	p->offset = off;
	p->pre_handler = kpk_pre;
	p->post_handler = post ? kpk_post : NULL;
	p->flags = flags;
	return p;
}

static void kpk_unregister_action(void *p)
{
	unregister_kprobe(p);
}

/* register_kprobe(), with unregistration guaranteed at the end of @test. */
int kpk_register(struct kunit *test, struct kprobe *p)
{
	int ret = register_kprobe(p);

	if (ret)
		return ret;
	return kunit_add_action_or_reset(test, kpk_unregister_action, p);
}

void kpk_unregister(struct kunit *test, struct kprobe *p)
{
	kunit_release_action(test, kpk_unregister_action, p);
}

/* For registrations that must fail: undo one that did not. */
static int kpk_try_register(struct kprobe *p)
{
	int ret = register_kprobe(p);

	if (!ret)
		unregister_kprobe(p);
	return ret;
}

static struct kprobe *kpk_batch[KPK_NKP];
static int kpk_batch_n;

static void kpk_unregister_batch_action(void *unused)
{
	unregister_kprobes(kpk_batch, kpk_batch_n);
}

static struct kprobe *kpk_running_now(void)
{
	struct kprobe *cur;

	preempt_disable();
	cur = kprobe_running();
	preempt_enable();
	return cur;
}

/* Where a probe asked for at @fn + 0 may be: @fn, or just past its ENDBR. */
bool kpk_at_entry(void *fn, kprobe_opcode_t *addr)
{
	unsigned long f = (unsigned long)fn, a = (unsigned long)addr;

	if (a == f)
		return true;
	return is_endbr(*(u32 *)fn) && a == f + ENDBR_INSN_SIZE;
}

/* The ftrace call site at the entry of @fn, 0 when there is none. */
unsigned long kpk_fentry(kpk_fn_t *fn)
{
	return ftrace_location((unsigned long)fn);
}

/* Each pre handler was called pre[i] times, each post handler post[i]. */
void kpk_expect_hits(struct kunit *test, const int *pre, const int *post,
		     int n)
{
	int i;

	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ_MSG(test, kpk_pre_hits(i), pre[i],
				    "pre handler of kprobe %d", i);
		KUNIT_EXPECT_EQ_MSG(test, kpk_post_hits(i), post[i],
				    "post handler of kprobe %d", i);
	}
}

const long kpk_args[KPK_NARGS] = { 3, 14, 25, 40 };

/* Hits per call, for probe points some calls do not reach. */
long kpk_even(long x)
{
	return !(x & 1);
}

long kpk_bit1_clear(long x)
{
	return !(x & 2);
}

long kpk_x(long x)
{
	return x;
}

/* ---------------------------------------------------------------------- */
/* Worker threads                                                          */
/* ---------------------------------------------------------------------- */

struct kpk_worker kpk_workers[KPK_NWORKERS];
static bool kpk_stop;
long (*kpk_worker_model)(kpk_fn_t *fn, long x) = kpk_model;

/* Workers asked to stand still (kpk_park), how many do, how many run. */
static bool kpk_park;
static atomic_t kpk_parked;
static atomic_t kpk_running;

static void kpk_worker_park(void)
{
	atomic_inc(&kpk_parked);
	while (READ_ONCE(kpk_park) && !READ_ONCE(kpk_stop))
		schedule_timeout_uninterruptible(1);
	atomic_dec(&kpk_parked);
}

/* How long a worker runs flat out before it sleeps for a jiffy. */
#define KPK_WORKER_RUN_JIFFIES	2

static int kpk_worker_fn(void *data)
{
	struct kpk_worker *w = data;
	unsigned long i, rest = jiffies + KPK_WORKER_RUN_JIFFIES;

	for (i = 0; i < w->iters && !READ_ONCE(kpk_stop); i++) {
		long x = w->arg + (long)(i & 0xffff);

		if (READ_ONCE(kpk_park))
			kpk_worker_park();

		w->last = kpk_call(w->fn, x);
		if (w->last != kpk_worker_model(w->fn, x))
			w->bad++;
		w->calls++;
		/*
		 * A PREEMPT kernel never sees this loop schedule on its own,
		 * and the kprobe optimizer waits for RCU Tasks: tell it.
		 */
		if ((i & 63) != 63)
			continue;
		cond_resched_tasks_rcu_qs();
		/*
		 * Leave the CPU to others now and then, by sleeping: being
		 * preemptible is not enough.  Under QEMU's single-threaded
		 * TCG with -icount, a vCPU that waits for the other one (the
		 * IPIs of text_poke_sync(), a lock) spins until its turn
		 * ends, and that time is charged to the waiting task.  The
		 * optimizer's kworker, preempted at the end of such a wait
		 * with kprobe_mutex and text_mutex held, then sat runnable
		 * behind this loop for tens of guest seconds at a time, and
		 * kpo_test_churn, which waits for the optimizer every round,
		 * never finished.
		 */
		if (time_after(jiffies, rest)) {
			schedule_timeout_uninterruptible(1);
			rest = jiffies + KPK_WORKER_RUN_JIFFIES;
		}
	}
	atomic_dec(&kpk_running);
	complete(&w->done);
	return 0;
}

/* Have every running worker stand still, outside the probed function. */
static bool kpk_park_workers(void)
{
	unsigned long timeout = jiffies + 60 * HZ;

	WRITE_ONCE(kpk_park, true);
	while (atomic_read(&kpk_parked) < atomic_read(&kpk_running)) {
		if (time_after(jiffies, timeout))
			return false;
		schedule_timeout_uninterruptible(1);
	}
	return true;
}

static void kpk_unpark_workers(void)
{
	WRITE_ONCE(kpk_park, false);
}

/* Start worker @w on @cpu (any CPU if negative). */
int kpk_worker_start(struct kpk_worker *w, kpk_fn_t *fn, long arg,
		     unsigned long iters, int cpu)
{
	struct task_struct *t;

	if (w->task)
		return -EBUSY;
	init_completion(&w->done);
	w->fn = fn;
	w->arg = arg;
	w->iters = iters;
	w->calls = 0;
	w->bad = 0;
	w->last = 0;
	t = kthread_create(kpk_worker_fn, w, "kpkunit/%d",
			   (int)(w - kpk_workers));
	if (IS_ERR(t))
		return PTR_ERR(t);
	atomic_inc(&kpk_running);
	get_task_struct(t);
	if (cpu >= 0)
		kthread_bind(t, cpu);
	w->task = t;
	wake_up_process(t);
	return 0;
}

/* Reap a worker; false if it did not finish in time (it is left alone). */
static bool kpk_worker_join(struct kpk_worker *w)
{
	if (!w->task)
		return true;
	if (!wait_for_completion_timeout(&w->done, 60 * HZ))
		return false;
	kthread_stop_put(w->task);
	w->task = NULL;
	return true;
}

bool kpk_join_all(void)
{
	bool ok = true;
	int i;

	for (i = 0; i < KPK_NWORKERS; i++)
		ok &= kpk_worker_join(&kpk_workers[i]);
	return ok;
}

/* Stop the first @n workers, reap them and add up their calls and errors. */
bool kpk_stop_workers(int n, unsigned long *calls, unsigned long *bad)
{
	bool joined;
	int i;

	WRITE_ONCE(kpk_stop, true);
	joined = kpk_join_all();
	*calls = 0;
	*bad = 0;
	for (i = 0; i < n; i++) {
		*calls += kpk_workers[i].calls;
		*bad += kpk_workers[i].bad;
	}
	return joined;
}

/* End of a test that started workers: stop and release them all. */
void kpk_workers_action(void *unused)
{
	WRITE_ONCE(kpk_stop, true);
	WRITE_ONCE(kpk_park, false);
	complete_all(&kpk_wait_go);
	kpk_join_all();
}

/* ---------------------------------------------------------------------- */
/* Suite kprobes_core                                                      */
/* ---------------------------------------------------------------------- */

int kpk_core_init(struct kunit *test)
{
	int i;

	for (i = 0; i < KPK_NKP; i++) {
		memset(&kpk_kp[i], 0, sizeof(kpk_kp[i]));
		atomic_set(&kpk_seen.pre[i], 0);
		atomic_set(&kpk_seen.post[i], 0);
		kpk_seen.pre_ip[i] = 0;
		kpk_seen.pre_di[i] = 0;
		kpk_seen.post_ip[i] = 0;
	}
	atomic_set(&kpk_seen.bad_ip, 0);
	atomic_set(&kpk_seen.stray, 0);
	kpk_seen.nest_result = 0;
	kpk_seen.nest_running_ok = false;
	WRITE_ONCE(kpk_stop, false);
	WRITE_ONCE(kpk_park, false);
	kpk_worker_model = kpk_model;
	return 0;
}

void kpk_core_exit(struct kunit *test)
{
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&kpk_seen.bad_ip), 0,
			    "pre handler saw regs->ip != probe address + 1");
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&kpk_seen.stray), 0,
			    "handler called with a kprobe it was not set on");
}

/* By name: lands on the function, handlers see the call's registers. */
static void kpk_test_by_symbol(struct kunit *test)
{
	struct kprobe *p = kpk_probe(0, NULL, "kpkunit_target_a", 0, true, 0);

	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_EXPECT_TRUE(test, kpk_at_entry(kpkunit_target_a, p->addr));
	KUNIT_EXPECT_FALSE(test, kprobe_disabled(p));
	KUNIT_EXPECT_FALSE(test, kprobe_gone(p));

	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, 0x1234),
			kpk_model(kpkunit_target_a, 0x1234));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_seen.pre_ip[0] - 1, (unsigned long)p->addr);
	KUNIT_EXPECT_EQ(test, kpk_seen.pre_di[0], 0x1234UL);

	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, -3),
			kpk_model(kpkunit_target_a, -3));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 2);
	KUNIT_EXPECT_EQ(test, kpk_seen.pre_di[0], (unsigned long)-3L);

	kpk_unregister(test, p);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, 5),
			kpk_model(kpkunit_target_a, 5));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 2);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(0), 2);
}

/* By address, and again with the same (re-zeroed) kprobe. */
static void kpk_test_by_addr(struct kunit *test)
{
	struct kprobe *p;
	int round;

	for (round = 0; round < 2; round++) {
		p = kpk_probe(0, kpkunit_target_b, NULL, 0, round == 0, 0);
		KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
		KUNIT_EXPECT_TRUE(test,
				  kpk_at_entry(kpkunit_target_b, p->addr));

		KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_b, 77 + round),
				kpk_model(kpkunit_target_b, 77 + round));
		KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), round + 1);
		KUNIT_EXPECT_EQ(test, kpk_post_hits(0), 1);
		KUNIT_EXPECT_EQ(test, kpk_seen.pre_di[0], 77UL + round);
		KUNIT_EXPECT_EQ(test, kpk_seen.pre_ip[0] - 1,
				(unsigned long)p->addr);
		kpk_unregister(test, p);
	}
	kpk_call(kpkunit_target_b, 1);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 2);
}

static void kpk_test_register_errors(struct kunit *test)
{
	void *fn = kpkunit_asm_add;
	struct kprobe *p;
	struct insn insn;

	/* Both an address and a name. */
	p = kpk_probe(0, kpkunit_target_a, "kpkunit_target_a", 0, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -EINVAL);

	/* Neither. */
	p = kpk_probe(0, NULL, NULL, 0, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -EINVAL);

	/* A name kallsyms does not know. */
	p = kpk_probe(0, NULL, "kpkunit_no_such_symbol", 0, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -ENOENT);

	/* Not on an instruction boundary. */
	KUNIT_ASSERT_EQ(test, insn_decode_kernel(&insn, fn), 0);
	KUNIT_ASSERT_GT(test, (int)insn.length, 1);
	p = kpk_probe(0, NULL, "kpkunit_asm_add", 1, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -EILSEQ);
	p = kpk_probe(0, fn + 1, NULL, 0, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -EILSEQ);
	p = kpk_probe(0, (void *)kpk_point(KPK_rip_load) + 3, NULL, 0,
		      false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -EILSEQ);

	/* Blacklisted: NOKPROBE_SYMBOL() here, and a core kernel one. */
	p = kpk_probe(0, kpkunit_forbidden, NULL, 0, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -EINVAL);
	p = kpk_probe(0, NULL, "notifier_call_chain", 0, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -EINVAL);

	/* Not text at all. */
	p = kpk_probe(0, &kpkunit_data_word, NULL, 0, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -EINVAL);

	/* None of the above left a breakpoint behind. */
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, 2),
			kpk_model(kpkunit_target_a, 2));
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_asm_add, 2), 7L);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_asm_rip, 2),
			kpk_model(kpkunit_asm_rip, 2));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 0);
}

/*
 * The instruction rows of the errno table in Documentation/trace/kprobes.rst:
 * kpkunit_asm_refused() holds one of each.  It is never called, only probed,
 * so objtool is told not to follow it.  __pfx_kpkunit_asm_refused() stands
 * for the padding the compiler puts in front of functions with
 * CONFIG_CALL_PADDING: not code anyone calls.
 */
#define KPK_RF(name)	"	.long .Lkpk_rf_" #name " - kpkunit_asm_refused\n"

asm(
"	.pushsection .text, \"ax\"\n"
"	.balign 16\n"
"	.type __pfx_kpkunit_asm_refused, @function\n"
"__pfx_kpkunit_asm_refused:\n"
"	.rept 16\n"
"	nop\n"
"	.endr\n"
"	.size __pfx_kpkunit_asm_refused, . - __pfx_kpkunit_asm_refused\n"
"	.type kpkunit_asm_refused, @function\n"
"kpkunit_asm_refused:\n"
".Lkpk_rf_movds:\n	mov %eax, %ds\n"
".Lkpk_rf_movss:\n	mov %eax, %ss\n"
".Lkpk_rf_int3:\n	int3\n"
".Lkpk_rf_intn:\n	int $0x80\n"
".Lkpk_rf_int1:\n	.byte 0xf1\n"
".Lkpk_rf_ud2:\n	ud2\n"
".Lkpk_rf_ud1:\n	.byte 0x0f, 0xb9, 0xc0\n"
".Lkpk_rf_iret:\n	iretq\n"
".Lkpk_rf_ljmp:\n	ljmp *(%rax)\n"
".Lkpk_rf_lcall:\n	lcall *(%rax)\n"
".Lkpk_rf_lret:\n	lretq\n"
".Lkpk_rf_hlt:\n	hlt\n"
".Lkpk_rf_syscall:\n	syscall\n"
".Lkpk_rf_swapgs:\n	swapgs\n"
".Lkpk_rf_vmcall:\n	vmcall\n"
".Lkpk_rf_ret:\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_refused)
"	.popsection\n"
"	.pushsection .rodata, \"a\"\n"
"	.balign 4\n"
"kpkunit_refused_off:\n"
KPK_RF(movds) KPK_RF(movss) KPK_RF(int3) KPK_RF(intn) KPK_RF(int1)
KPK_RF(ud2) KPK_RF(ud1) KPK_RF(iret) KPK_RF(ljmp) KPK_RF(lcall)
KPK_RF(lret) KPK_RF(hlt) KPK_RF(syscall) KPK_RF(swapgs) KPK_RF(vmcall)
KPK_RF(ret)
"	.popsection\n"
);

kpk_fn_t kpkunit_asm_refused;
STACK_FRAME_NON_STANDARD(kpkunit_asm_refused);

/* Same order as kpkunit_refused_off[]. */
static const struct {
	const char *insn;
	int err;
} kpk_refused[] = {
	{ "mov %eax,%ds", 0 },		{ "mov %eax,%ss", -EINVAL },
	{ "int3", -EILSEQ },		{ "int $0x80", -EILSEQ },
	{ "int1", -EILSEQ },		{ "ud2", -EILSEQ },
	{ "ud1", -EILSEQ },		{ "iretq", -EOPNOTSUPP },
	{ "ljmp *(%rax)", -EOPNOTSUPP },	{ "lcall *(%rax)", -EOPNOTSUPP },
	{ "lret", -EOPNOTSUPP },	{ "hlt", -EOPNOTSUPP },
	{ "syscall", -EOPNOTSUPP },	{ "swapgs", -EOPNOTSUPP },
	{ "vmcall", -EOPNOTSUPP },	{ "ret", 0 },
};

/* Each row of the errno table that a kprobe can reach. */
static void kpk_test_errno_table(struct kunit *test)
{
	u8 copy[MAX_INSN_SIZE];
	struct kprobe *p;
	struct insn insn;
	int i;

	for (i = 0; i < ARRAY_SIZE(kpk_refused); i++) {
		p = kpk_probe(0, NULL, "kpkunit_asm_refused",
			      kpkunit_refused_off[i], true, 0);
		KUNIT_EXPECT_EQ_MSG(test, kpk_try_register(p),
				    kpk_refused[i].err, "%s",
				    kpk_refused[i].insn);
	}

	/* The padding in front of a function, and anything in it. */
	p = kpk_probe(0, NULL, "__pfx_kpkunit_asm_refused", 0, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -EINVAL);
	p = kpk_probe(0, NULL, "__pfx_kpkunit_asm_refused", 11, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -EINVAL);

#ifdef CONFIG_X86_VSYSCALL_EMULATION
	/* The vsyscall page: text user space calls, but not ours. */
	p = kpk_probe(0, (void *)VSYSCALL_ADDR, NULL, 0, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -EINVAL);
#endif

	/*
	 * A RIP-relative operand the copy cannot reach: execmem keeps slots
	 * within reach, so the fixup is asked directly.
	 */
	KUNIT_ASSERT_EQ(test, insn_decode_kernel(&insn,
				(void *)kpk_point(KPK_rip_load)), 0);
	KUNIT_EXPECT_EQ(test, kp_copy_insn(copy, (u8 *)kpk_point(KPK_rip_load),
					   &insn, 1L << 40), -EINVAL);
	KUNIT_EXPECT_EQ(test, kp_copy_insn(copy, (u8 *)kpk_point(KPK_rip_load),
					   &insn, 16), 0);
	KUNIT_EXPECT_EQ(test, (long)get_unaligned((s32 *)
				&copy[insn_offset_displacement(&insn)]),
			(long)insn.displacement.value + 16);
}

/* Registering a kprobe that is already registered fails, harmlessly. */
static void kpk_test_register_twice(struct kunit *test)
{
	struct kprobe *p = kpk_probe(0, kpkunit_target_a, NULL, 0, false, 0);

	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_EXPECT_EQ(test, register_kprobe(p), -EINVAL);

	/* The first registration still works, once per hit. */
	kpk_call(kpkunit_target_a, 1);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
	kpk_unregister(test, p);
	kpk_call(kpkunit_target_a, 1);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
}

/* unregister/enable/disable of a kprobe that is not registered. */
static void kpk_test_not_registered(struct kunit *test)
{
	struct kprobe *p0, *p1;

	/* Another kprobe on the same address is registered meanwhile. */
	p0 = kpk_probe(0, kpkunit_target_a, NULL, 0, false, 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, p0), 0);

	p1 = kpk_probe(1, NULL, NULL, 0, false, 0);
	p1->addr = p0->addr;
	KUNIT_EXPECT_EQ(test, enable_kprobe(p1), -EINVAL);
	KUNIT_EXPECT_EQ(test, disable_kprobe(p1), -EINVAL);
	unregister_kprobe(p1);
	KUNIT_EXPECT_NULL(test, p1->addr);

	p1 = kpk_probe(1, NULL, NULL, 0, false, 0);
	unregister_kprobe(p1);
	p1 = kpk_probe(1, NULL, "kpkunit_target_a", 0, false, 0);
	unregister_kprobe(p1);

	/* p0 was not touched by any of that. */
	KUNIT_EXPECT_FALSE(test, kprobe_disabled(p0));
	kpk_call(kpkunit_target_a, 3);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(1), 0);

	/* Unregistering twice. */
	kpk_unregister(test, p0);
	unregister_kprobe(p0);
	KUNIT_EXPECT_EQ(test, enable_kprobe(p0), -EINVAL);
	kpk_call(kpkunit_target_a, 3);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
}

static void kpk_test_disabled(struct kunit *test)
{
	struct kprobe *p;

	p = kpk_probe(0, kpkunit_target_b, NULL, 0, true, KPROBE_FLAG_DISABLED);
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_EXPECT_TRUE(test, kprobe_disabled(p));
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_b, 4),
			kpk_model(kpkunit_target_b, 4));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 0);

	KUNIT_ASSERT_EQ(test, enable_kprobe(p), 0);
	KUNIT_EXPECT_FALSE(test, kprobe_disabled(p));
	KUNIT_EXPECT_EQ(test, enable_kprobe(p), 0);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_b, 5),
			kpk_model(kpkunit_target_b, 5));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(0), 1);

	KUNIT_ASSERT_EQ(test, disable_kprobe(p), 0);
	KUNIT_EXPECT_TRUE(test, kprobe_disabled(p));
	KUNIT_EXPECT_EQ(test, disable_kprobe(p), 0);
	kpk_call(kpkunit_target_b, 6);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(0), 1);

	KUNIT_ASSERT_EQ(test, enable_kprobe(p), 0);
	kpk_call(kpkunit_target_b, 7);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 2);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(0), 2);
}

/* Several kprobes on one address. */
static void kpk_test_aggregate(struct kunit *test)
{
	struct kprobe *p[3];
	long x;
	int i;

	for (i = 0; i < 3; i++) {
		p[i] = kpk_probe(i, kpkunit_target_b, NULL, 0, i == 1, 0);
		KUNIT_ASSERT_EQ(test, kpk_register(test, p[i]), 0);
	}
	KUNIT_EXPECT_PTR_EQ(test, p[1]->addr, p[0]->addr);
	KUNIT_EXPECT_PTR_EQ(test, p[2]->addr, p[0]->addr);

	for (x = 1; x <= 6; x++)
		KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_b, x),
				kpk_model(kpkunit_target_b, x));
	kpk_expect_hits(test, (int[]){ 6, 6, 6 }, (int[]){ 0, 6, 0 }, 3);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, kpk_seen.pre_di[i], 6UL);

	KUNIT_ASSERT_EQ(test, disable_kprobe(p[0]), 0);
	KUNIT_EXPECT_TRUE(test, kprobe_disabled(p[0]));
	KUNIT_EXPECT_FALSE(test, kprobe_disabled(p[1]));
	kpk_call(kpkunit_target_b, 7);
	kpk_expect_hits(test, (int[]){ 6, 7, 7 }, (int[]){ 0, 7, 0 }, 3);

	kpk_unregister(test, p[2]);
	kpk_call(kpkunit_target_b, 8);
	kpk_expect_hits(test, (int[]){ 6, 8, 7 }, (int[]){ 0, 8, 0 }, 3);

	KUNIT_ASSERT_EQ(test, enable_kprobe(p[0]), 0);
	kpk_call(kpkunit_target_b, 9);
	kpk_expect_hits(test, (int[]){ 7, 9, 7 }, (int[]){ 0, 9, 0 }, 3);

	/* Drop the one with the post handler. */
	kpk_unregister(test, p[1]);
	kpk_call(kpkunit_target_b, 10);
	kpk_expect_hits(test, (int[]){ 8, 9, 7 }, (int[]){ 0, 9, 0 }, 3);

	/* Add one back while another is still there. */
	p[2] = kpk_probe(2, kpkunit_target_b, NULL, 0, true, 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, p[2]), 0);
	KUNIT_EXPECT_PTR_EQ(test, p[2]->addr, p[0]->addr);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_b, 11),
			kpk_model(kpkunit_target_b, 11));
	kpk_expect_hits(test, (int[]){ 9, 9, 8 }, (int[]){ 0, 9, 1 }, 3);

	kpk_unregister(test, p[0]);
	kpk_unregister(test, p[2]);
	kpk_call(kpkunit_target_b, 12);
	kpk_expect_hits(test, (int[]){ 9, 9, 8 }, (int[]){ 0, 9, 1 }, 3);
}

/* A pre handler that changes regs->ip and returns 1 skips the function. */
static void kpk_test_redirect(struct kunit *test)
{
	struct kprobe *p = kpk_probe(0, kpkunit_target_a, NULL, 0, true, 0);

	/* The post handler also keeps the probe from being optimized. */
	p->pre_handler = kpk_pre_redirect;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);

	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, 6),
			kpk_model(kpkunit_target_repl, 6));
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, -9),
			kpk_model(kpkunit_target_repl, -9));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 2);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(0), 0);

	kpk_unregister(test, p);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, 6),
			kpk_model(kpkunit_target_a, 6));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 2);
}

/* A probe hit from inside a handler is skipped and counted as missed. */
static void kpk_test_recursion(struct kunit *test)
{
	struct kprobe *outer, *inner;
	int i;

	outer = kpk_probe(0, kpkunit_target_a, NULL, 0, false, 0);
	outer->pre_handler = kpk_pre_nest;
	inner = kpk_probe(1, kpkunit_target_b, NULL, 0, false, 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, inner), 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, outer), 0);

	KUNIT_EXPECT_NULL(test, kpk_running_now());
	for (i = 1; i <= 3; i++) {
		KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, i),
				kpk_model(kpkunit_target_a, i));
		KUNIT_EXPECT_EQ(test, inner->nmissed, (unsigned long)i);
	}
	KUNIT_EXPECT_NULL(test, kpk_running_now());
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 3);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(1), 0);
	KUNIT_EXPECT_EQ(test, outer->nmissed, 0UL);
	KUNIT_EXPECT_TRUE_MSG(test, kpk_seen.nest_running_ok,
			      "kprobe_running() in a handler is not the probe");
	KUNIT_EXPECT_EQ(test, kpk_seen.nest_result,
			kpk_model(kpkunit_target_b, 11));

	/* Outside a handler the inner probe works as usual. */
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_b, 12),
			kpk_model(kpkunit_target_b, 12));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(1), 1);
	KUNIT_EXPECT_EQ(test, inner->nmissed, 3UL);
}

/*
 * First opcode byte of the instruction at each probe point (0: not
 * checked), so that the point table and the enum cannot drift apart.
 */
static const u8 kpk_point_opcode[KPK_NR_POINTS] = {
	[KPK_add_nop] = 0x0f,		[KPK_add_mov] = 0x89,
	[KPK_add_add] = 0x83,		[KPK_rip_load] = 0x8b,
	[KPK_rip_lea] = 0x8d,		[KPK_rip_mem] = 0x03,
	[KPK_rip_store] = 0x89,		[KPK_rip_imm] = 0x81,
	[KPK_jmp_short] = 0xeb,		[KPK_jmp_t1] = 0xf6,
	[KPK_jmp_near] = 0xe9,		[KPK_jmp_t2] = 0x83,
	[KPK_jcc_short] = 0x72,		[KPK_jcc_t1] = 0x83,
	[KPK_jcc_near] = 0x0f,		[KPK_call_direct] = 0xe8,
	[KPK_call_ret1] = 0x89,		[KPK_call_ind] = 0xff,
	[KPK_call_ret2] = 0x83,		[KPK_stk_push] = 0x55,
	[KPK_stk_pushimm] = 0x6a,	[KPK_stk_pop] = 0x5b,
	[KPK_stk_leave] = 0xc9,		[KPK_flg_xor] = 0x31,
	[KPK_flg_pushf] = 0x9c,		[KPK_flg_popf] = 0x9d,
	[KPK_loop_body] = 0x83,		[KPK_loop_insn] = 0xe2,
	[KPK_loop_jrcxz] = 0xe3,	[KPK_rip_after_store] = 0x03,
	[KPK_rip_after_imm] = 0x0f,	[KPK_jcc_nt1] = 0x05,
	[KPK_jcc_nt2] = 0x05,		[KPK_stk_after_push] = 0x89,
	[KPK_stk_after_pushimm] = 0x58,	[KPK_flg_after_pushf] = 0x58,
	[KPK_flg_after_popf] = 0x9c,
};

/* The assembly targets are what their comments say (no probes yet). */
static void kpk_test_asm_model(struct kunit *test)
{
	static kpk_fn_t * const fns[] = {
		kpkunit_asm_add, kpkunit_asm_rip, kpkunit_asm_jmp,
		kpkunit_asm_jcc, kpkunit_asm_call, kpkunit_asm_stack,
		kpkunit_asm_flags, kpkunit_asm_loop,
	};
	struct insn insn;
	int i, j;

	for (i = 0; i < ARRAY_SIZE(fns); i++)
		for (j = 0; j < ARRAY_SIZE(kpk_args); j++)
			KUNIT_EXPECT_EQ_MSG(test, kpk_run(fns[i], kpk_args[j]),
					    kpk_model(fns[i], kpk_args[j]),
					    "function %d, argument %ld", i,
					    kpk_args[j]);

	KUNIT_EXPECT_EQ(test, kpk_point(KPK_add_entry),
			(unsigned long)kpkunit_asm_add);
	for (i = 0; i < KPK_NR_POINTS; i++) {
		if (!kpk_point_opcode[i])
			continue;
		KUNIT_ASSERT_EQ(test, insn_decode_kernel(&insn,
					(void *)kpk_point(i)), 0);
		KUNIT_EXPECT_EQ_MSG(test, insn.opcode.bytes[0],
				    kpk_point_opcode[i], "probe point %d", i);
	}
}

/*
 * Out-of-line execution of one kind of instruction.  The instruction
 * lengths come from the labels, not from decoding the live text: right
 * after an optimized probe is unregistered its jump may still be there.
 */
#define KPK_NEXT_ANY	-1	/* where it goes is not checked */

struct kpk_insn_case {
	const char *desc;
	kpk_fn_t *owner;		/* function holding the probe point */
	const char *owner_name;
	kpk_fn_t *call;			/* function the test calls */
	int point;
	int next;			/* where execution goes on */
	int fall;			/* for a jcc: where it goes if not taken */
	bool (*taken)(long x);		/* for a jcc: whether it is taken */
	long (*hits)(long x);		/* hits per call; NULL: one */
};

static bool kpk_below_10(long x)
{
	return x < 10;
}

static bool kpk_from_20(long x)
{
	return x >= 20;
}

static long kpk_two(long x)
{
	return 2;
}

#define KPK_CASE_FROM(d, fn, caller, pt, nx, ...)			\
	{ .desc = d, .owner = fn, .owner_name = #fn, .call = caller,	\
	  .point = KPK_##pt, .next = nx, __VA_ARGS__ }
#define KPK_CASE(d, fn, pt, nx, ...)					\
	KPK_CASE_FROM(d, fn, fn, pt, nx, __VA_ARGS__)

static const struct kpk_insn_case kpk_insn_cases[] = {
	KPK_CASE("nopl 5 bytes", kpkunit_asm_add, add_nop, KPK_add_mov),
	KPK_CASE("mov reg,reg", kpkunit_asm_add, add_mov, KPK_add_add),
	KPK_CASE("add imm8", kpkunit_asm_add, add_add, KPK_add_ret),
	KPK_CASE("ret", kpkunit_asm_add, add_ret, KPK_NEXT_ANY),
	KPK_CASE_FROM("ret to asm caller", kpkunit_asm_add, kpkunit_asm_call,
		      add_ret, KPK_call_ret2, .hits = kpk_two),
	KPK_CASE("mov rip-relative load", kpkunit_asm_rip, rip_load,
		 KPK_rip_lea),
	KPK_CASE("lea rip-relative", kpkunit_asm_rip, rip_lea, KPK_rip_mem),
	KPK_CASE("add (reg)", kpkunit_asm_rip, rip_mem, KPK_rip_store),
	KPK_CASE("mov rip-relative store", kpkunit_asm_rip, rip_store,
		 KPK_rip_after_store),
	KPK_CASE("cmp rip-relative,imm32", kpkunit_asm_rip, rip_imm,
		 KPK_rip_after_imm),
	KPK_CASE("jmp rel8", kpkunit_asm_jmp, jmp_short, KPK_jmp_t1,
		 .hits = kpk_even),
	KPK_CASE("jmp rel32", kpkunit_asm_jmp, jmp_near, KPK_jmp_t2,
		 .hits = kpk_bit1_clear),
	KPK_CASE("jb rel8", kpkunit_asm_jcc, jcc_short, KPK_jcc_t1,
		 .fall = KPK_jcc_nt1, .taken = kpk_below_10),
	KPK_CASE("jae rel32", kpkunit_asm_jcc, jcc_near, KPK_jcc_t2,
		 .fall = KPK_jcc_nt2, .taken = kpk_from_20),
	KPK_CASE("call rel32", kpkunit_asm_call, call_direct, KPK_add_entry),
	KPK_CASE("call *reg", kpkunit_asm_call, call_ind, KPK_add_entry),
	KPK_CASE("push reg", kpkunit_asm_stack, stk_push, KPK_stk_after_push),
	KPK_CASE("push imm8", kpkunit_asm_stack, stk_pushimm,
		 KPK_stk_after_pushimm),
	KPK_CASE("pop reg", kpkunit_asm_stack, stk_pop, KPK_stk_leave),
	KPK_CASE("leave", kpkunit_asm_stack, stk_leave, KPK_stk_after_leave),
	KPK_CASE("xor reg,reg", kpkunit_asm_flags, flg_xor, KPK_flg_pushf),
	KPK_CASE("pushf", kpkunit_asm_flags, flg_pushf, KPK_flg_after_pushf),
	KPK_CASE("popf", kpkunit_asm_flags, flg_popf, KPK_flg_after_popf),
	KPK_CASE("add in a loop", kpkunit_asm_loop, loop_body, KPK_loop_insn,
		 .hits = kpk_x),
	/* On its last pass the loop goes on to the jrcxz. */
	KPK_CASE("loop", kpkunit_asm_loop, loop_insn, KPK_loop_jrcxz,
		 .hits = kpk_x),
	KPK_CASE("jrcxz", kpkunit_asm_loop, loop_jrcxz, KPK_loop_end),
};

KUNIT_ARRAY_PARAM_DESC(kpk_insn, kpk_insn_cases, desc);

static void kpk_test_insn(struct kunit *test)
{
	const struct kpk_insn_case *c = test->param_value;
	unsigned long addr = kpk_point(c->point);
	unsigned long off = addr - (unsigned long)c->owner;
	long base[ARRAY_SIZE(kpk_args)];
	int pass, i, hits, want_hits, next;
	struct kprobe *p;

	for (i = 0; i < ARRAY_SIZE(kpk_args); i++) {
		base[i] = kpk_run(c->call, kpk_args[i]);
		KUNIT_ASSERT_EQ(test, base[i], kpk_model(c->call, kpk_args[i]));
	}

	/* Pass 0 with a post handler (single-step), pass 1 without. */
	for (pass = 0; pass < 2; pass++) {
		p = kpk_probe(0, NULL, c->owner_name, off, pass == 0, 0);
		KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
		KUNIT_EXPECT_EQ(test, (unsigned long)p->addr, addr);

		for (i = 0; i < ARRAY_SIZE(kpk_args); i++) {
			long x = kpk_args[i];

			atomic_set(&kpk_seen.pre[0], 0);
			atomic_set(&kpk_seen.post[0], 0);
			KUNIT_EXPECT_EQ_MSG(test, kpk_run(c->call, x), base[i],
					    "probed result, argument %ld", x);
			hits = kpk_pre_hits(0);
			want_hits = c->hits ? c->hits(x) : 1;
			KUNIT_EXPECT_EQ_MSG(test, hits, want_hits,
					    "hits, argument %ld", x);
			if (pass || !hits)
				continue;
			KUNIT_EXPECT_EQ(test, kpk_post_hits(0), hits);

			next = c->next;
			if (c->taken && !c->taken(x))
				next = c->fall;
			if (next == KPK_NEXT_ANY)
				continue;
			KUNIT_EXPECT_EQ_MSG(test, kpk_seen.post_ip[0],
					    kpk_point(next),
					    "regs->ip after the instruction, argument %ld",
					    x);
		}
		kpk_unregister(test, p);
	}
	KUNIT_EXPECT_EQ(test, kpk_run(c->call, 5), kpk_model(c->call, 5));
}

/* Probes on every instruction of a function at once. */
static void kpk_test_adjacent(struct kunit *test)
{
	static const int pts[] = {
		KPK_add_nop, KPK_add_mov, KPK_add_add, KPK_add_ret
	};
	struct kprobe *p;
	int i;

	for (i = 0; i < ARRAY_SIZE(pts); i++) {
		p = kpk_probe(i, (void *)kpk_point(pts[i]), NULL, 0, i & 1, 0);
		KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	}
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_asm_add, 9), 14L);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_asm_call, 9), 20L);
	kpk_expect_hits(test, (int[]){ 3, 3, 3, 3 }, (int[]){ 0, 3, 0, 3 }, 4);
	KUNIT_EXPECT_EQ(test, kpk_seen.post_ip[1], kpk_point(KPK_add_add));
	KUNIT_EXPECT_EQ(test, kpk_seen.post_ip[3], kpk_point(KPK_call_ret2));
	for (i = 0; i < ARRAY_SIZE(pts); i++)
		kpk_unregister(test, &kpk_kp[i]);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_asm_call, 1), 12L);
	kpk_expect_hits(test, (int[]){ 3, 3, 3, 3 }, (int[]){ 0, 3, 0, 3 }, 4);
}

/* register_kprobes() undoes the whole batch when one kprobe is bad. */
static void kpk_test_batch_error(struct kunit *test)
{
	int ret;

	kpk_batch[0] = kpk_probe(0, kpkunit_target_a, NULL, 0, false, 0);
	kpk_batch[1] = kpk_probe(1, kpkunit_target_b, NULL, 0, true, 0);
	kpk_batch[2] = kpk_probe(2, NULL, "kpkunit_no_such_symbol", 0, false, 0);
	ret = register_kprobes(kpk_batch, 3);
	if (!ret)
		unregister_kprobes(kpk_batch, 3);
	KUNIT_EXPECT_EQ(test, ret, -ENOENT);

	kpk_call(kpkunit_target_a, 1);
	kpk_call(kpkunit_target_b, 1);
	KUNIT_ASSERT_EQ_MSG(test, kpk_pre_hits(0) + kpk_pre_hits(1), 0,
			    "the good kprobes of a failed batch still fire");

	/* They can be registered again, as a batch. */
	kpk_probe(0, kpkunit_target_a, NULL, 0, false, 0);
	kpk_probe(1, kpkunit_target_b, NULL, 0, true, 0);
	kpk_batch_n = 2;
	KUNIT_ASSERT_EQ(test, register_kprobes(kpk_batch, 2), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
				kpk_unregister_batch_action, NULL), 0);
	kpk_call(kpkunit_target_a, 1);
	kpk_call(kpkunit_target_b, 1);
	kpk_expect_hits(test, (int[]){ 1, 1 }, (int[]){ 0, 1 }, 2);
	kunit_release_action(test, kpk_unregister_batch_action, NULL);
	kpk_call(kpkunit_target_a, 1);
	kpk_call(kpkunit_target_b, 1);
	kpk_expect_hits(test, (int[]){ 1, 1 }, (int[]){ 0, 1 }, 2);
}

/* Batches over several addresses, including an unregistered kprobe. */
static void kpk_test_batch_many(struct kunit *test)
{
	int i;

	for (i = 0; i < 3; i++)
		kpk_batch[i] = kpk_probe(i, kpkunit_target_a, NULL, 0, i == 2, 0);
	kpk_batch[3] = kpk_probe(3, kpkunit_target_b, NULL, 0, false, 0);
	kpk_batch[4] = kpk_probe(4, (void *)kpk_point(KPK_add_mov), NULL, 0,
				 true, 0);
	kpk_batch[5] = kpk_probe(5, NULL, "kpkunit_asm_jcc",
				 kpk_point(KPK_jcc_near) -
				 (unsigned long)kpkunit_asm_jcc, false, 0);
	kpk_batch_n = 6;
	KUNIT_ASSERT_EQ(test, register_kprobes(kpk_batch, 6), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
				kpk_unregister_batch_action, NULL), 0);

	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, 2),
			kpk_model(kpkunit_target_a, 2));
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_b, 2),
			kpk_model(kpkunit_target_b, 2));
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_asm_call, 2), 13L);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_asm_jcc, 2),
			kpk_model(kpkunit_asm_jcc, 2));
	kpk_expect_hits(test, (int[]){ 1, 1, 1, 1, 2, 1 },
			(int[]){ 0, 0, 1, 0, 2, 0 }, 6);

	/* A kprobe never registered, on an address that has probes. */
	kpk_batch[6] = kpk_probe(6, kpkunit_target_a, NULL, 0, false, 0);
	kpk_batch[6]->addr = kpk_batch[0]->addr;
	kpk_batch_n = 7;
	kunit_release_action(test, kpk_unregister_batch_action, NULL);
	KUNIT_EXPECT_NULL(test, kpk_batch[6]->addr);

	kpk_call(kpkunit_target_a, 2);
	kpk_call(kpkunit_target_b, 2);
	kpk_call(kpkunit_asm_call, 2);
	kpk_call(kpkunit_asm_jcc, 2);
	kpk_expect_hits(test, (int[]){ 1, 1, 1, 1, 2, 1, 0 },
			(int[]){ 0, 0, 1, 0, 2, 0, 0 }, 7);
}

#define KPK_CHURN_ROUNDS	50
#define KPK_STEADY_CALLS	5000

/*
 * By default the callers are parked while a kprobe is unregistered.  QEMU
 * with multi-threaded TCG can run a stale translation of the breakpoint
 * on another vCPU after the text was restored and the probe removed,
 * which ends in an unhandled int3 even on upstream kprobes.  Boot with
 * kprobes_kunit.stress=1 to unregister under fire as well.
 */
static bool stress;
module_param(stress, bool, 0444);
MODULE_PARM_DESC(stress, "unregister kprobes while other CPUs run through them");

/* One round of arming and disarming kprobe 0 on kpkunit_target_c. */
static int kpk_churn_round(int round)
{
	bool off = round & 1;
	struct kprobe *p;
	int err;

	p = kpk_probe(0, kpkunit_target_c, NULL, 0, round & 2,
		      off ? KPROBE_FLAG_DISABLED : 0);
	err = register_kprobe(p);
	if (err)
		return err;
	if (off)
		err = enable_kprobe(p);
	if (!err)
		err = disable_kprobe(p);
	if (!err)
		err = enable_kprobe(p);
	if (!stress && !kpk_park_workers())
		err = err ?: -ETIMEDOUT;
	unregister_kprobe(p);
	kpk_unpark_workers();
	return err;
}

#ifdef CONFIG_JUMP_LABEL
/*
 * The sorted table behind kprobe_jump_label_reserved() answers as the
 * kernel's walk does: on, just before, inside and just after a sample of
 * the kernel's jump labels.
 */
static void kpk_test_jump_label_table(struct kunit *test)
{
	struct jump_entry *j;
	unsigned long c;
	int d, n = 0;

	jump_label_lock();
	for (j = __start___jump_table; j < __stop___jump_table; j += 7) {
		if (jump_entry_is_init(j))
			continue;	/* the walk skips them once booted */
		c = jump_entry_code(j);
		for (d = -1; d <= jump_entry_size(j); d++) {
			void *a = (void *)(c + d);

			KUNIT_EXPECT_EQ_MSG(test, kprobe_jump_label_reserved(a, a),
					    !!jump_label_text_reserved(a, a),
					    "%pS%+d", (void *)c, d);
		}
		n++;
	}
	jump_label_unlock();
	kunit_info(test, "%d jump labels compared\n", n);
}
#else
static void kpk_test_jump_label_table(struct kunit *test)
{
	kunit_skip(test, "no jump labels");
}
#endif

/*
 * A bad kprobe in the middle of a batch: none of the batch stays, the
 * breakpoints it queued were never written, and a kprobe that was already
 * on one of its addresses is untouched.
 */
static void kpk_test_batch_atomic(struct kunit *test)
{
	unsigned long mov = kpk_point(KPK_add_mov);
	unsigned long jcc = kpk_point(KPK_jcc_near);
	u8 mov_byte = *(u8 *)mov, jcc_byte = *(u8 *)jcc;
	struct kprobe *q, *found;
	int i, ret;

	/* Already on add_add: that site is armed before the batch. */
	q = kpk_probe(5, (void *)kpk_point(KPK_add_add), NULL, 0, false, 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, q), 0);

	kpk_batch[0] = kpk_probe(0, (void *)mov, NULL, 0, false, 0);
	kpk_batch[1] = kpk_probe(1, q->addr, NULL, 0, true, 0);
	kpk_batch[2] = kpk_probe(2, kpkunit_forbidden, NULL, 0, false, 0);
	kpk_batch[3] = kpk_probe(3, (void *)jcc, NULL, 0, false, 0);
	kpk_batch[4] = kpk_probe(4, NULL, "kpkunit_target_b", 0, false, 0);
	ret = register_kprobes(kpk_batch, 5);
	if (!ret)
		unregister_kprobes(kpk_batch, 5);
	KUNIT_EXPECT_EQ(test, ret, -EINVAL);

	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_NULL_MSG(test, kpk_batch[i]->site, "kprobe %d", i);
	KUNIT_EXPECT_EQ(test, *(u8 *)mov, mov_byte);
	KUNIT_EXPECT_EQ(test, *(u8 *)jcc, jcc_byte);
	preempt_disable();
	found = get_kprobe((void *)mov);
	preempt_enable();
	KUNIT_EXPECT_NULL(test, found);

	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_asm_add, 2), 7L);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_asm_jcc, 2),
			kpk_model(kpkunit_asm_jcc, 2));
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_b, 2),
			kpk_model(kpkunit_target_b, 2));
	kpk_expect_hits(test, (int[]){ 0, 0, 0, 0, 0, 1 },
			(int[]){ 0, 0, 0, 0, 0, 0 }, 6);

	/* The same batch without the bad one goes in whole. */
	kpk_batch[2] = kpk_probe(2, NULL, "kpkunit_target_c", 0, false, 0);
	kpk_probe(0, (void *)mov, NULL, 0, false, 0);
	kpk_probe(1, q->addr, NULL, 0, true, 0);
	kpk_probe(3, (void *)jcc, NULL, 0, false, 0);
	kpk_probe(4, NULL, "kpkunit_target_b", 0, false, 0);
	kpk_batch_n = 5;
	KUNIT_ASSERT_EQ(test, register_kprobes(kpk_batch, 5), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
				kpk_unregister_batch_action, NULL), 0);
	kpk_call(kpkunit_asm_add, 2);
	kpk_call(kpkunit_asm_jcc, 2);
	kpk_call(kpkunit_target_b, 2);
	kpk_call(kpkunit_target_c, 2);
	kpk_expect_hits(test, (int[]){ 1, 1, 1, 1, 1, 2 },
			(int[]){ 0, 1, 0, 0, 0, 0 }, 6);

	/* disable_kprobes()/enable_kprobes(): one pass each way. */
	KUNIT_EXPECT_EQ(test, disable_kprobes(kpk_batch, 5), 0);
	KUNIT_EXPECT_EQ(test, *(u8 *)mov, mov_byte);
	kpk_call(kpkunit_asm_add, 2);
	kpk_call(kpkunit_target_b, 2);
	kpk_expect_hits(test, (int[]){ 1, 1, 1, 1, 1, 3 },
			(int[]){ 0, 1, 0, 0, 0, 0 }, 6);
	KUNIT_EXPECT_EQ(test, enable_kprobes(kpk_batch, 5), 0);
	kpk_call(kpkunit_asm_add, 2);
	kpk_call(kpkunit_target_b, 2);
	kpk_expect_hits(test, (int[]){ 2, 2, 1, 1, 2, 4 },
			(int[]){ 0, 2, 0, 0, 0, 0 }, 6);
	kunit_release_action(test, kpk_unregister_batch_action, NULL);
	KUNIT_EXPECT_EQ(test, *(u8 *)mov, mov_byte);
	KUNIT_EXPECT_EQ(test, *(u8 *)jcc, jcc_byte);
	/* Not registered any more: refused. */
	KUNIT_EXPECT_EQ(test, enable_kprobes(kpk_batch, 1), -EINVAL);
}

#define KPK_BATCH_ROUNDS	30

/* One round of batch_concurrent: register, toggle, remove the batch. */
static int kpk_batch_round(int round)
{
	u32 off = round & 1 ? KPROBE_FLAG_DISABLED : 0;
	int err;

	kpk_batch[0] = kpk_probe(0, (void *)kpk_point(KPK_add_mov), NULL, 0,
				 false, off);
	kpk_batch[1] = kpk_probe(1, (void *)kpk_point(KPK_add_add), NULL, 0,
				 round & 2, off);
	kpk_batch[2] = kpk_probe(2, NULL, "kpkunit_target_b", 0, round & 2,
				 off);
	err = register_kprobes(kpk_batch, 3);
	if (err)
		return err;
	if (off)
		err = enable_kprobes(kpk_batch, 3);
	if (!err)
		err = disable_kprobes(kpk_batch, 3);
	if (!err)
		err = enable_kprobes(kpk_batch, 3);
	if (!stress && !kpk_park_workers())
		err = err ?: -ETIMEDOUT;
	unregister_kprobes(kpk_batch, 3);
	kpk_unpark_workers();
	return err;
}

/*
 * Batches armed, toggled and removed while each CPU runs through every
 * probed address: results stay right, every handler sees a whole probe
 * (kpk_pre checks regs->ip, kpk_index the probe), and once the batch is in
 * place every call is seen.
 */
static void kpk_test_batch_concurrent(struct kunit *test)
{
	unsigned long calls = 0, bad = 0, add_calls = 0, b_calls = 0;
	int cpu[2], i, round, err = 0;
	bool joined;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	cpu[0] = cpumask_first(cpu_online_mask);
	cpu[1] = cpumask_next(cpu[0], cpu_online_mask);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
				kpk_workers_action, NULL), 0);

	/* Phase 1: churn.  No ASSERT until the workers are joined. */
	for (i = 0; i < 4 && !err; i++)
		err = kpk_worker_start(&kpk_workers[i],
				       i < 2 ? kpkunit_asm_add :
					       kpkunit_target_b,
				       (i & 1) << 20, ULONG_MAX, cpu[i & 1]);
	for (round = 0; round < KPK_BATCH_ROUNDS && !err; round++)
		err = kpk_batch_round(round);
	joined = kpk_stop_workers(4, &calls, &bad);
	KUNIT_EXPECT_EQ_MSG(test, err, 0, "round %d", round);
	KUNIT_ASSERT_TRUE_MSG(test, joined, "worker threads did not finish");
	KUNIT_EXPECT_EQ(test, bad, 0UL);
	KUNIT_EXPECT_LE(test, (unsigned long)kpk_pre_hits(0), calls);

	/* Phase 2: a batch in place sees every call on both CPUs. */
	for (i = 0; i < 3; i++) {
		atomic_set(&kpk_seen.pre[i], 0);
		atomic_set(&kpk_seen.post[i], 0);
	}
	WRITE_ONCE(kpk_stop, false);
	kpk_batch[0] = kpk_probe(0, (void *)kpk_point(KPK_add_mov), NULL, 0,
				 false, 0);
	kpk_batch[1] = kpk_probe(1, (void *)kpk_point(KPK_add_add), NULL, 0,
				 true, 0);
	kpk_batch[2] = kpk_probe(2, NULL, "kpkunit_target_b", 0, false, 0);
	kpk_batch_n = 3;
	KUNIT_ASSERT_EQ(test, register_kprobes(kpk_batch, 3), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
				kpk_unregister_batch_action, NULL), 0);
	for (i = 0, err = 0; i < 4 && !err; i++)
		err = kpk_worker_start(&kpk_workers[i],
				       i < 2 ? kpkunit_asm_add :
					       kpkunit_target_b,
				       (i & 1) << 20, KPK_STEADY_CALLS,
				       cpu[i & 1]);
	joined = kpk_join_all();
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_ASSERT_TRUE_MSG(test, joined, "worker threads did not finish");
	bad = 0;
	for (i = 0; i < 4; i++) {
		if (i < 2)
			add_calls += kpk_workers[i].calls;
		else
			b_calls += kpk_workers[i].calls;
		bad += kpk_workers[i].bad;
	}
	KUNIT_EXPECT_EQ(test, add_calls, 2UL * KPK_STEADY_CALLS);
	KUNIT_EXPECT_EQ(test, b_calls, 2UL * KPK_STEADY_CALLS);
	KUNIT_EXPECT_EQ(test, bad, 0UL);
	KUNIT_EXPECT_EQ(test, (unsigned long)kpk_pre_hits(0), add_calls);
	KUNIT_EXPECT_EQ(test, (unsigned long)kpk_pre_hits(1), add_calls);
	KUNIT_EXPECT_EQ(test, (unsigned long)kpk_post_hits(1), add_calls);
	KUNIT_EXPECT_EQ(test, (unsigned long)kpk_pre_hits(2), b_calls);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, kpk_batch[i]->nmissed, 0UL);
	kunit_release_action(test, kpk_unregister_batch_action, NULL);
}

/* Arm, disarm and remove a kprobe while two CPUs keep running through it. */
static void kpk_test_concurrent(struct kunit *test)
{
	unsigned long calls = 0, bad = 0;
	int cpu[2], i, round, err = 0;
	struct kprobe *p;
	bool joined;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	cpu[0] = cpumask_first(cpu_online_mask);
	cpu[1] = cpumask_next(cpu[0], cpu_online_mask);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
				kpk_workers_action, NULL), 0);

	/* Phase 1: churn.  No ASSERT until the workers are joined. */
	for (i = 0; i < 2 && !err; i++)
		err = kpk_worker_start(&kpk_workers[i], kpkunit_target_c,
				       i << 20, ULONG_MAX, cpu[i]);
	for (round = 0; round < KPK_CHURN_ROUNDS && !err; round++)
		err = kpk_churn_round(round);
	joined = kpk_stop_workers(2, &calls, &bad);
	KUNIT_EXPECT_EQ_MSG(test, err, 0, "round %d", round);
	KUNIT_ASSERT_TRUE_MSG(test, joined, "worker threads did not finish");
	KUNIT_EXPECT_EQ(test, bad, 0UL);
	KUNIT_EXPECT_LE(test, (unsigned long)kpk_pre_hits(0), calls);

	/* Phase 2: a steady probe sees every call. */
	atomic_set(&kpk_seen.pre[0], 0);
	WRITE_ONCE(kpk_stop, false);
	p = kpk_probe(0, kpkunit_target_c, NULL, 0, false, 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	for (i = 0, err = 0; i < 2 && !err; i++)
		err = kpk_worker_start(&kpk_workers[i], kpkunit_target_c,
				       i << 20, KPK_STEADY_CALLS, cpu[i]);
	joined = kpk_join_all();
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_ASSERT_TRUE_MSG(test, joined, "worker threads did not finish");
	calls = 0;
	bad = 0;
	for (i = 0; i < 2; i++) {
		calls += kpk_workers[i].calls;
		bad += kpk_workers[i].bad;
	}
	KUNIT_EXPECT_EQ(test, calls, 2UL * KPK_STEADY_CALLS);
	KUNIT_EXPECT_EQ(test, bad, 0UL);
	KUNIT_EXPECT_EQ(test, (unsigned long)kpk_pre_hits(0), calls);
	KUNIT_EXPECT_EQ(test, p->nmissed, 0UL);
	kpk_unregister(test, p);
}

/*
 * Boosting (x86): a plain instruction probed without a post handler runs
 * its boosted copy and jumps back without a second trap; a post handler
 * arriving on the same address sends hits back to single-stepping.
 */
static void kpk_test_boost(struct kunit *test)
{
	const struct kpk_insn_case *c = &kpk_insn_cases[1];	/* mov reg,reg */
	unsigned long addr = kpk_point(c->point);
	unsigned long off = addr - (unsigned long)c->owner;
	struct kprobe *p, *q;
	long x = 41;

	KUNIT_ASSERT_STREQ(test, c->desc, "mov reg,reg");
	p = kpk_probe(0, NULL, c->owner_name, off, false, 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
#ifdef CONFIG_X86
	KUNIT_EXPECT_TRUE(test, p->site->arch.boost);
#endif
	atomic_set(&kpk_seen.pre[0], 0);
	KUNIT_EXPECT_EQ(test, kpk_run(c->call, x), kpk_model(c->call, x));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);

	q = kpk_probe(1, NULL, c->owner_name, off, true, 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, q), 0);
	atomic_set(&kpk_seen.pre[0], 0);
	atomic_set(&kpk_seen.post[1], 0);
	KUNIT_EXPECT_EQ(test, kpk_run(c->call, x), kpk_model(c->call, x));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(1), 1);
	KUNIT_EXPECT_EQ(test, kpk_seen.post_ip[1], kpk_point(c->next));
}

/*
 * With the function tracer, a function's entry is ftrace's call site: a
 * probe there is [FTRACE] and looks to its handlers like a breakpoint probe
 * (kpk_pre checks regs->ip); a probe on the next instruction of the same
 * function is a breakpoint.  Both fire once per call, each can be disabled
 * on its own.
 */
static void kpk_test_ftrace(struct kunit *test)
{
	unsigned long next;
	struct kprobe *p, *q;
	long x = 7;

	p = kpk_probe(0, NULL, "kpkunit_target_a", 0, true, 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	if (ftrace_location((unsigned long)p->addr) != (unsigned long)p->addr)
		kunit_skip(test, "no ftrace call site at the entry");
	KUNIT_EXPECT_TRUE(test, kprobe_ftrace(p));

	/* Inside the call: no instruction starts there (upstream's errno). */
	q = kpk_probe(1, (void *)p->addr + 1, NULL, 0, true, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(q), -EILSEQ);
	q = kpk_probe(1, NULL, "kpkunit_target_a",
		      (unsigned long)p->addr + KPK_FENTRY_LEN - 1 -
		      (unsigned long)kpkunit_target_a, true, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(q), -EILSEQ);

	next = (unsigned long)p->addr + KPK_FENTRY_LEN;
	q = kpk_probe(1, (void *)next, NULL, 0, true, 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, q), 0);
	KUNIT_EXPECT_FALSE(test, kprobe_ftrace(q));

	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, x),
			kpk_model(kpkunit_target_a, x));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(1), 1);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(1), 1);
	KUNIT_EXPECT_EQ(test, kpk_seen.pre_di[0], (unsigned long)x);
	KUNIT_EXPECT_EQ(test, kpk_seen.post_ip[0], next);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpk_seen.bad_ip), 0);

	KUNIT_ASSERT_EQ(test, disable_kprobe(p), 0);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, x),
			kpk_model(kpkunit_target_a, x));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(1), 2);
	KUNIT_ASSERT_EQ(test, enable_kprobe(p), 0);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, x),
			kpk_model(kpkunit_target_a, x));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 2);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(1), 3);
}

/*
 * A pre handler of an [FTRACE] probe that moves regs->ip and returns 1:
 * ftrace resumes at the new address in the caller's frame, so the call
 * returns what the replacement computes, the probed body never runs and
 * no post handler is called.
 */
static void kpk_test_ftrace_redirect(struct kunit *test)
{
	unsigned long site = kpk_fentry(kpkunit_target_c);
	struct kprobe *p;
	long x = 19;

	if (!site)
		kunit_skip(test, "no ftrace call site at the entry");
	p = kpk_probe(0, NULL, "kpkunit_target_c", 0, true, 0);
	p->pre_handler = kpk_pre_redirect;
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_EXPECT_EQ(test, (unsigned long)p->addr, site);
	KUNIT_EXPECT_TRUE(test, kprobe_ftrace(p));

	WRITE_ONCE(kpkunit_sink, 0);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_c, x),
			kpk_model(kpkunit_target_repl, x));
	KUNIT_EXPECT_EQ_MSG(test, READ_ONCE(kpkunit_sink), (unsigned long)x + 4,
			    "the sink was not written by the replacement alone");
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_c, -x),
			kpk_model(kpkunit_target_repl, -x));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 2);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(0), 0);
	KUNIT_EXPECT_EQ(test, kpk_seen.pre_ip[0], site + INT3_INSN_SIZE);
	KUNIT_EXPECT_EQ(test, p->nmissed, 0UL);

	kpk_unregister(test, p);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_c, x),
			kpk_model(kpkunit_target_c, x));
	KUNIT_EXPECT_EQ(test, READ_ONCE(kpkunit_sink), (unsigned long)x ^ 0x55);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 2);
}

/*
 * A probe hit from a handler, with ftrace call sites on either side: the
 * outer probe's handler (kpk_pre_nest) calls kpkunit_target_b.  Whatever
 * the kinds of the two probes, the inner one runs no handler, counts one
 * miss per hit and its function still returns the right value.
 */
static void kpk_test_ftrace_recursion(struct kunit *test)
{
	static const struct {
		const char *desc;
		unsigned int outer_off, inner_off;
	} mix[] = {
		{ "ftrace in ftrace", 0, 0 },
		{ "breakpoint in ftrace", 0, KPK_FENTRY_LEN },
		{ "ftrace in breakpoint", KPK_FENTRY_LEN, 0 },
	};
	unsigned long a = kpk_fentry(kpkunit_target_a);
	unsigned long b = kpk_fentry(kpkunit_target_b);
	struct kprobe *outer, *inner;
	int m, i;

	if (!a || !b)
		kunit_skip(test, "no ftrace call site at the entry");
	for (m = 0; m < ARRAY_SIZE(mix); m++) {
		outer = kpk_probe(2 * m, (void *)(a + mix[m].outer_off), NULL,
				  0, false, 0);
		outer->pre_handler = kpk_pre_nest;
		inner = kpk_probe(2 * m + 1, (void *)(b + mix[m].inner_off),
				  NULL, 0, false, 0);
		KUNIT_ASSERT_EQ(test, kpk_register(test, inner), 0);
		KUNIT_ASSERT_EQ(test, kpk_register(test, outer), 0);
		KUNIT_EXPECT_EQ_MSG(test, (int)kprobe_ftrace(outer), !mix[m].outer_off,
				    "%s: outer probe kind", mix[m].desc);
		KUNIT_EXPECT_EQ_MSG(test, (int)kprobe_ftrace(inner), !mix[m].inner_off,
				    "%s: inner probe kind", mix[m].desc);

		kpk_seen.nest_running_ok = false;
		for (i = 1; i <= 3; i++)
			KUNIT_EXPECT_EQ_MSG(test, kpk_call(kpkunit_target_a, i),
					    kpk_model(kpkunit_target_a, i),
					    "%s", mix[m].desc);
		KUNIT_EXPECT_EQ_MSG(test, inner->nmissed, 3UL, "%s", mix[m].desc);
		KUNIT_EXPECT_EQ_MSG(test, outer->nmissed, 0UL, "%s", mix[m].desc);
		KUNIT_EXPECT_EQ_MSG(test, kpk_pre_hits(2 * m), 3, "%s",
				    mix[m].desc);
		KUNIT_EXPECT_EQ_MSG(test, kpk_pre_hits(2 * m + 1), 0, "%s",
				    mix[m].desc);
		KUNIT_EXPECT_TRUE_MSG(test, kpk_seen.nest_running_ok,
				      "%s: kprobe_running() in the handler is not the probe",
				      mix[m].desc);
		KUNIT_EXPECT_EQ_MSG(test, kpk_seen.nest_result,
				    kpk_model(kpkunit_target_b, 11), "%s",
				    mix[m].desc);
		KUNIT_EXPECT_NULL(test, kpk_running_now());

		/* Outside a handler the inner probe fires as usual. */
		kpk_call(kpkunit_target_b, 12);
		KUNIT_EXPECT_EQ_MSG(test, kpk_pre_hits(2 * m + 1), 1, "%s",
				    mix[m].desc);
		kpk_unregister(test, outer);
		kpk_unregister(test, inner);
	}
}

/* ---------------------------------------------------------------------- */
/* Emulated instructions against stepped ones                              */
/* ---------------------------------------------------------------------- */

/*
 * kpkunit_asm_emu(x): sets every register from x, then runs one instruction
 * of each kind the int3 handler emulates (arch/x86/kernel/kprobes/decode.c)
 * for a probe with a post handler, and returns a sum of all the registers
 * and of the two data words (kpkunit_emu_words).  kpkunit_asm_emu_point(i)
 * is the offset of the i-th probed instruction in the function.
 */
static unsigned long kpkunit_emu_words[2] __used;

#define KPE_PT(name)	"	.long .Lkpe_" #name " - kpkunit_asm_emu\n"

asm(
"	.pushsection .text, \"ax\"\n"
KPK_ASM_FUNC(kpkunit_asm_emu)
	ASM_ENDBR
"	push %rbp\n"
"	push %rbx\n"
"	push %r12\n"
"	push %r13\n"
"	push %r14\n"
"	push %r15\n"
"	mov %rdi, %rax\n"
"	lea 0x101(%rdi), %rbx\n"
"	lea 0x202(%rdi), %rcx\n"
"	lea -0x303(%rdi), %rdx\n"
"	lea 0x404(%rdi), %rsi\n"
"	lea 0x505(%rdi), %rbp\n"
"	lea -0x606(%rdi), %r8\n"
"	lea 0x707(%rdi), %r9\n"
"	lea 0x808(%rdi), %r10\n"
"	lea 0x909(%rdi), %r11\n"
"	lea -0xa0a(%rdi), %r12\n"
"	lea 0xb0b(%rdi), %r13\n"
"	lea 0xc0c(%rdi), %r14\n"
"	lea 0xd0d(%rdi), %r15\n"
"	cmp $25, %rdi\n"
".Lkpe_push:		push %rbx\n"
".Lkpe_pop:		pop %r12\n"
".Lkpe_mov_sp:		mov %rsp, %r11\n"
".Lkpe_mov32:		mov %ecx, %r9d\n"
".Lkpe_mov_load:	mov %r14, %rbp\n"
".Lkpe_sub_sp:		sub $0x18, %rsp\n"
".Lkpe_lea_sp:		lea 0x8(%rsp), %rdx\n"
".Lkpe_lea_sib:		lea -0x7(%rax,%r13,4), %r10\n"
".Lkpe_lea_nobase:	lea 0x10(,%rsi,8), %r8d\n"
".Lkpe_lea_rip:		lea kpkunit_emu_words(%rip), %r14\n"
".Lkpe_add_sp:		add $0x18, %rsp\n"
".Lkpe_add_rr:		add %rcx, %rax\n"
".Lkpe_sub_rr32:	sub %edx, %esi\n"
".Lkpe_xor32:		xor %r9d, %r9d\n"
".Lkpe_or_imm32:	or $0x12345, %r15\n"
".Lkpe_and_imm8:	and $0x7f, %rbx\n"
".Lkpe_cmp_rr:		cmp %rbx, %rax\n"
".Lkpe_test_rr:		test %rdi, %rdx\n"
".Lkpe_mov_imm:		movq $-5, %rbp\n"
".Lkpe_inc_r:		inc %r13\n"
".Lkpe_dec_r32:		dec %ecx\n"
".Lkpe_add_load:	add kpkunit_emu_words(%rip), %rdx\n"
".Lkpe_inc_m:		incq kpkunit_emu_words(%rip)\n"
".Lkpe_dec_m32:		decl kpkunit_emu_words+8(%rip)\n"
".Lkpe_add_m_imm:	addq $0x40, kpkunit_emu_words(%rip)\n"
".Lkpe_or_m_r:		or %rdi, kpkunit_emu_words+8(%rip)\n"
".Lkpe_cmp_m:		cmpq $0x41, kpkunit_emu_words(%rip)\n"
".Lkpe_load:		mov kpkunit_emu_words(%rip), %rsi\n"
".Lkpe_store:		mov %rax, kpkunit_emu_words+8(%rip)\n"
".Lkpe_mov_m_imm:	movq $7, kpkunit_emu_words(%rip)\n"
".Lkpe_sub_m_r32:	sub %ecx, kpkunit_emu_words+8(%rip)\n"
".Lkpe_end:\n"
"	add %rbx, %rax\n"
"	add %rcx, %rax\n"
"	add %rdx, %rax\n"
"	add %rsi, %rax\n"
"	add %rbp, %rax\n"
"	add %r8, %rax\n"
"	add %r9, %rax\n"
"	add %r10, %rax\n"
"	sub %r11, %rax\n"
"	add %r12, %rax\n"
"	add %r13, %rax\n"
"	sub %r14, %rax\n"
"	add %r15, %rax\n"
"	add kpkunit_emu_words(%rip), %rax\n"
"	add kpkunit_emu_words+8(%rip), %rax\n"
"	lea (%rsp), %rdx\n"
"	add %rdx, %rax\n"
"	pop %r15\n"
"	pop %r14\n"
"	pop %r13\n"
"	pop %r12\n"
"	pop %rbx\n"
"	pop %rbp\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_emu)

KPK_ASM_FUNC(kpkunit_asm_emu_point)
	ASM_ENDBR
"	lea .Lkpe_table(%rip), %rdx\n"
"	movslq (%rdx,%rdi,4), %rax\n"
	ASM_RET
KPK_ASM_END(kpkunit_asm_emu_point)
"	.popsection\n"

"	.pushsection .rodata, \"a\"\n"
"	.balign 4\n"
".Lkpe_table:\n"
KPE_PT(push) KPE_PT(pop) KPE_PT(mov_sp) KPE_PT(mov32) KPE_PT(mov_load)
KPE_PT(sub_sp) KPE_PT(lea_sp) KPE_PT(lea_sib) KPE_PT(lea_nobase)
KPE_PT(lea_rip) KPE_PT(add_sp) KPE_PT(add_rr) KPE_PT(sub_rr32)
KPE_PT(xor32) KPE_PT(or_imm32) KPE_PT(and_imm8) KPE_PT(cmp_rr)
KPE_PT(test_rr) KPE_PT(mov_imm) KPE_PT(inc_r) KPE_PT(dec_r32)
KPE_PT(add_load) KPE_PT(inc_m) KPE_PT(dec_m32) KPE_PT(add_m_imm)
KPE_PT(or_m_r) KPE_PT(cmp_m) KPE_PT(load) KPE_PT(store) KPE_PT(mov_m_imm)
KPE_PT(sub_m_r32) KPE_PT(end)
"	.popsection\n"
);

kpk_fn_t kpkunit_asm_emu, kpkunit_asm_emu_point;

/* Names of the points, in order; the last is not probed. */
static const char * const kpk_emu_names[] = {
	"push %rbx", "pop %r12", "mov %rsp,%r11", "mov %ecx,%r9d",
	"mov %r14,%rbp", "sub $0x18,%rsp", "lea 0x8(%rsp),%rdx",
	"lea -0x7(%rax,%r13,4),%r10", "lea 0x10(,%rsi,8),%r8d",
	"lea rip,%r14", "add $0x18,%rsp", "add %rcx,%rax", "sub %edx,%esi",
	"xor %r9d,%r9d", "or $0x12345,%r15", "and $0x7f,%rbx",
	"cmp %rbx,%rax", "test %rdi,%rdx", "movq $-5,%rbp", "inc %r13",
	"dec %ecx", "add rip,%rdx", "incq rip", "decl rip", "addq $0x40,rip",
	"or %rdi,rip", "cmpq $0x41,rip", "mov rip,%rsi", "mov %rax,rip",
	"movq $7,rip", "sub %ecx,rip", "end",
};

static struct {
	struct pt_regs pre, post;
	unsigned long words[2];
	int hits;
} kpk_emu_seen;

static int kpk_emu_pre(struct kprobe *p, struct pt_regs *regs)
{
	kpk_emu_seen.pre = *regs;
	return 0;
}

static void kpk_emu_post(struct kprobe *p, struct pt_regs *regs,
			 unsigned long flags)
{
	kpk_emu_seen.post = *regs;
	kpk_emu_seen.words[0] = READ_ONCE(kpkunit_emu_words[0]);
	kpk_emu_seen.words[1] = READ_ONCE(kpkunit_emu_words[1]);
	kpk_emu_seen.hits++;
}

/* Is the site at @addr one the int3 handler emulates instead of stepping? */
static bool kpk_emu_site_emulates(unsigned long addr)
{
	struct kprobe_site *s;
	bool ret;

	rcu_read_lock();
	s = kprobe_site_lookup(addr);
	ret = s && s->arch.op == KPX_STEP && s->arch.emulate;
	rcu_read_unlock();
	return ret;
}

/* One call of kpkunit_asm_emu(@x) with a probe with a post handler at @pt. */
static long kpk_emu_run(struct kunit *test, int pt, long x, bool step)
{
	unsigned long addr = (unsigned long)kpkunit_asm_emu +
			     kpkunit_asm_emu_point(pt);
	struct kprobe *p = &kpk_kp[0];
	long ret;

	memset(p, 0, sizeof(*p));
	p->addr = (void *)addr;
	p->pre_handler = kpk_emu_pre;
	p->post_handler = kpk_emu_post;
	memset(&kpk_emu_seen, 0, sizeof(kpk_emu_seen));
	WRITE_ONCE(kprobe_x86_emu_off, step);
	ret = kpk_register(test, p);
	WRITE_ONCE(kprobe_x86_emu_off, false);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "%s", kpk_emu_names[pt]);
	KUNIT_EXPECT_EQ_MSG(test, kpk_emu_site_emulates(addr), !step,
			    "%s: emulated", kpk_emu_names[pt]);

	kpkunit_emu_words[0] = 0x1000 + x;
	kpkunit_emu_words[1] = 0xffffffff00000001UL;
	ret = kpk_call(kpkunit_asm_emu, x);
	kpk_unregister(test, p);
	KUNIT_EXPECT_EQ_MSG(test, kpk_emu_seen.hits, 1, "%s: hits",
			    kpk_emu_names[pt]);
	return ret;
}

#define KPK_EMU_FLAGS	(X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_AF | \
			 X86_EFLAGS_ZF | X86_EFLAGS_SF | X86_EFLAGS_OF | \
			 X86_EFLAGS_TF | X86_EFLAGS_IF | X86_EFLAGS_DF)

#define KPK_EMU_REG(r)	{ #r, offsetof(struct pt_regs, r) }

static const struct {
	const char *name;
	unsigned int off;
} kpk_emu_regs[] = {
	KPK_EMU_REG(ax), KPK_EMU_REG(bx), KPK_EMU_REG(cx), KPK_EMU_REG(dx),
	KPK_EMU_REG(si), KPK_EMU_REG(di), KPK_EMU_REG(bp), KPK_EMU_REG(sp),
	KPK_EMU_REG(r8), KPK_EMU_REG(r9), KPK_EMU_REG(r10), KPK_EMU_REG(r11),
	KPK_EMU_REG(r12), KPK_EMU_REG(r13), KPK_EMU_REG(r14), KPK_EMU_REG(r15),
	KPK_EMU_REG(ip), KPK_EMU_REG(cs), KPK_EMU_REG(ss),
};

static unsigned long kpk_emu_reg(const struct pt_regs *regs, unsigned int off)
{
	return *(const unsigned long *)((const u8 *)regs + off);
}

/*
 * For every instruction kind the int3 handler emulates: the post handler
 * sees the same registers (each one, and the flags), and memory holds the
 * same, as when the same probe's instruction is run from the slot (the
 * stepped path, forced with kprobe_x86_emu_off).  Looks at the site itself
 * (kprobe_site_lookup()) to be sure which path each run took.
 */
static void kpk_test_emulate(struct kunit *test)
{
	static const long args[] = { 3, 40 };
	struct pt_regs step_pre, step_post;
	unsigned long step_words[2];
	long want, got;
	int pt, i, r;

	/* The names and the point table go in step (offsets only grow). */
	for (pt = 1; pt < ARRAY_SIZE(kpk_emu_names); pt++)
		KUNIT_ASSERT_GT(test, kpkunit_asm_emu_point(pt),
				kpkunit_asm_emu_point(pt - 1));
	for (pt = 0; pt < ARRAY_SIZE(kpk_emu_names) - 1; pt++) {
		for (i = 0; i < ARRAY_SIZE(args); i++) {
			want = kpk_emu_run(test, pt, args[i], true);
			step_pre = kpk_emu_seen.pre;
			step_post = kpk_emu_seen.post;
			memcpy(step_words, kpk_emu_seen.words,
			       sizeof(step_words));
			got = kpk_emu_run(test, pt, args[i], false);

			KUNIT_EXPECT_EQ_MSG(test, got, want, "%s: result",
					    kpk_emu_names[pt]);
			/* Same call chain: the same stack at the hit. */
			KUNIT_ASSERT_EQ_MSG(test, kpk_emu_seen.pre.sp,
					    step_pre.sp, "%s: stack",
					    kpk_emu_names[pt]);
			for (r = 0; r < ARRAY_SIZE(kpk_emu_regs); r++)
				KUNIT_EXPECT_EQ_MSG(test,
					kpk_emu_reg(&kpk_emu_seen.post,
						    kpk_emu_regs[r].off),
					kpk_emu_reg(&step_post,
						    kpk_emu_regs[r].off),
					"%s, x=%ld: %%%s after emulation",
					kpk_emu_names[pt], args[i],
					kpk_emu_regs[r].name);
			KUNIT_EXPECT_EQ_MSG(test,
					    kpk_emu_seen.post.flags & KPK_EMU_FLAGS,
					    step_post.flags & KPK_EMU_FLAGS,
					    "%s, x=%ld: flags after emulation",
					    kpk_emu_names[pt], args[i]);
			KUNIT_EXPECT_EQ_MSG(test, kpk_emu_seen.words[0],
					    step_words[0], "%s: word 0",
					    kpk_emu_names[pt]);
			KUNIT_EXPECT_EQ_MSG(test, kpk_emu_seen.words[1],
					    step_words[1], "%s: word 1",
					    kpk_emu_names[pt]);
			KUNIT_EXPECT_EQ_MSG(test, step_post.ip,
					    (unsigned long)kpkunit_asm_emu +
					    kpkunit_asm_emu_point(pt + 1),
					    "%s: ip after the step",
					    kpk_emu_names[pt]);
		}
	}
}

static struct kunit_case kpk_core_cases[] = {
	KUNIT_CASE(kpk_test_by_symbol),
	KUNIT_CASE(kpk_test_by_addr),
	KUNIT_CASE(kpk_test_register_errors),
	KUNIT_CASE(kpk_test_errno_table),
	KUNIT_CASE(kpk_test_register_twice),
	KUNIT_CASE(kpk_test_not_registered),
	KUNIT_CASE(kpk_test_disabled),
	KUNIT_CASE(kpk_test_aggregate),
	KUNIT_CASE(kpk_test_redirect),
	KUNIT_CASE(kpk_test_recursion),
	KUNIT_CASE(kpk_test_asm_model),
	KUNIT_CASE_PARAM(kpk_test_insn, kpk_insn_gen_params),
	KUNIT_CASE(kpk_test_boost),
	KUNIT_CASE(kpk_test_emulate),
	KUNIT_CASE(kpk_test_ftrace),
	KUNIT_CASE(kpk_test_ftrace_redirect),
	KUNIT_CASE(kpk_test_ftrace_recursion),
	KUNIT_CASE(kpk_test_adjacent),
	KUNIT_CASE(kpk_test_batch_error),
	KUNIT_CASE(kpk_test_batch_many),
	KUNIT_CASE_SLOW(kpk_test_concurrent),
	KUNIT_CASE(kpk_test_batch_atomic),
	KUNIT_CASE(kpk_test_jump_label_table),
	KUNIT_CASE_SLOW(kpk_test_batch_concurrent),
	{}
};

static struct kunit_suite kpk_core_suite = {
	.name = "kprobes_core",
	.init = kpk_core_init,
	.exit = kpk_core_exit,
	.test_cases = kpk_core_cases,
};

kunit_test_suites(&kpk_core_suite);
