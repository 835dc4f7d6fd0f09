// SPDX-License-Identifier: GPL-2.0
/*
 * Boot-time KUnit suites for the kprobes core (CONFIG_KPROBES_KUNIT_TEST):
 * the fixtures all of them share (declared in kprobes_kunit.h) and suite
 * kprobes_core, whose cases hold on every architecture.  Return probes are
 * tested in kretprobes_kunit.c; what only one architecture does (x86: its
 * instruction kinds, boosting, emulation, the jump optimization of
 * kprobes_opt_kunit.c) in that architecture's suites.
 *
 * Only the public API of <linux/kprobes.h> is used, but for one case that
 * calls what a module's unloading calls (kprobe_kill_range()).  The probed
 * code is
 *
 *  - small C functions here, only ever called through a hidden function
 *    pointer, so that the compiler keeps one real, out-of-line body for
 *    each;
 *  - hand-written assembly functions in kprobes_kunit_<arch>.c, whose
 *    instructions are known exactly, so that a probe can be put on a
 *    chosen instruction (the second of a function, the inside of one).
 *
 * Handlers run in breakpoint context: they only count and record, with
 * atomics and plain stores.  All checks are made afterwards by the test
 * thread.  Every probe a test registers is also handed to a KUnit action
 * that unregisters it when the test ends, however it ends.
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/jiffies.h>
#include <linux/jump_label.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "kprobes_internal.h"
#include "kprobes_kunit.h"

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
	if (fn == kpkunit_asm_jcc)
		return x + (x >= 10 ? 1000 : 0) + (x < 20 ? 3000 : 0);
	if (fn == kpkunit_asm_call)
		return x + 11;
	return LONG_MIN;
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
	if (instruction_pointer(regs) !=
	    (unsigned long)p->addr + kpk_arch_pre_ip_off)
		atomic_inc(&kpk_seen.bad_ip);
	WRITE_ONCE(kpk_seen.pre_ip[i], instruction_pointer(regs));
	WRITE_ONCE(kpk_seen.pre_arg[i], regs_get_kernel_argument(regs, 0));
	atomic_inc(&kpk_seen.pre[i]);
	return 0;
}

static void kpk_post(struct kprobe *p, struct pt_regs *regs,
		     unsigned long flags)
{
	int i = kpk_index(p);

	if (i < 0)
		return;
	WRITE_ONCE(kpk_seen.post_ip[i], instruction_pointer(regs));
	atomic_inc(&kpk_seen.post[i]);
}

/* Send the probed call to kpkunit_target_repl instead. */
static int kpk_pre_redirect(struct kprobe *p, struct pt_regs *regs)
{
	kpk_pre(p, regs);
	instruction_pointer_set(regs, (unsigned long)kpkunit_target_repl);
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
int kpk_try_register(struct kprobe *p)
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

/* Where a probe asked for at @fn + 0 may be. */
bool kpk_at_entry(void *fn, kprobe_opcode_t *addr)
{
	unsigned long f = (unsigned long)fn, a = (unsigned long)addr;

	return a == f || a == f + kpk_arch_entry_skip(fn);
}

#ifdef CONFIG_KPROBES_ON_FTRACE
/* The ftrace call site at the entry of @fn, 0 when there is none. */
unsigned long kpk_fentry(kpk_fn_t *fn)
{
	return ftrace_location((unsigned long)fn);
}
#endif

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
		 * A pause, as any spinning loop should: QEMU's TCG, which
		 * runs the vCPUs in turn, moves to the other one there.
		 * Without it, a vCPU waiting for this one (the IPIs of
		 * text_poke_sync()) ran once per whole turn of this loop;
		 * under -icount its ticks then came so rarely that RCU
		 * reported a 26 s stall in kpk_test_batch_concurrent.
		 */
		cpu_relax();
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
		kpk_seen.pre_arg[i] = 0;
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
			    "pre handler saw another instruction pointer");
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
	KUNIT_EXPECT_EQ(test, kpk_seen.pre_ip[0] - kpk_arch_pre_ip_off,
			(unsigned long)p->addr);
	KUNIT_EXPECT_EQ(test, kpk_seen.pre_arg[0], 0x1234UL);

	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, -3),
			kpk_model(kpkunit_target_a, -3));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 2);
	KUNIT_EXPECT_EQ(test, kpk_seen.pre_arg[0], (unsigned long)-3L);

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
		KUNIT_EXPECT_EQ(test, kpk_seen.pre_arg[0], 77UL + round);
		KUNIT_EXPECT_EQ(test, kpk_seen.pre_ip[0] - kpk_arch_pre_ip_off,
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

	/* Both an address and a name. */
	p = kpk_probe(0, kpkunit_target_a, "kpkunit_target_a", 0, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -EINVAL);

	/* Neither. */
	p = kpk_probe(0, NULL, NULL, 0, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -EINVAL);

	/* A name kallsyms does not know. */
	p = kpk_probe(0, NULL, "kpkunit_no_such_symbol", 0, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), -ENOENT);

	/*
	 * Not on an instruction boundary: the first two instructions of
	 * kpkunit_asm_add are longer than two bytes on every architecture.
	 */
	p = kpk_probe(0, NULL, "kpkunit_asm_add", 1, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), kpk_arch_mid_insn_err);
	p = kpk_probe(0, fn + 1, NULL, 0, false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), kpk_arch_mid_insn_err);
	p = kpk_probe(0, (void *)kpk_point(KPK_add_mov) + 2, NULL, 0,
		      false, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(p), kpk_arch_mid_insn_err);

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
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 0);
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
	/* The hit paths' shortcut never holds a disabled probe. */
	KUNIT_EXPECT_NULL(test, kprobe_site_fast(p->site));
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_b, 4),
			kpk_model(kpkunit_target_b, 4));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 0);

	KUNIT_ASSERT_EQ(test, enable_kprobe(p), 0);
	KUNIT_EXPECT_FALSE(test, kprobe_disabled(p));
	KUNIT_EXPECT_PTR_EQ(test, kprobe_site_fast(p->site), p);
	KUNIT_EXPECT_EQ(test, enable_kprobe(p), 0);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_b, 5),
			kpk_model(kpkunit_target_b, 5));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(0), 1);

	KUNIT_ASSERT_EQ(test, disable_kprobe(p), 0);
	KUNIT_EXPECT_TRUE(test, kprobe_disabled(p));
	KUNIT_EXPECT_NULL(test, kprobe_site_fast(p->site));
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
	/* Several probes: every hit walks the site's list. */
	KUNIT_EXPECT_NULL(test, kprobe_site_fast(p[0]->site));

	for (x = 1; x <= 6; x++)
		KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_b, x),
				kpk_model(kpkunit_target_b, x));
	kpk_expect_hits(test, (int[]){ 6, 6, 6 }, (int[]){ 0, 6, 0 }, 3);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, kpk_seen.pre_arg[i], 6UL);

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
	KUNIT_EXPECT_PTR_EQ(test, kprobe_site_fast(p[0]->site), p[0]);
	kpk_call(kpkunit_target_b, 10);
	kpk_expect_hits(test, (int[]){ 8, 9, 7 }, (int[]){ 0, 9, 0 }, 3);

	/* Add one back while another is still there. */
	p[2] = kpk_probe(2, kpkunit_target_b, NULL, 0, true, 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, p[2]), 0);
	KUNIT_EXPECT_PTR_EQ(test, p[2]->addr, p[0]->addr);
	KUNIT_EXPECT_NULL(test, kprobe_site_fast(p[0]->site));
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_b, 11),
			kpk_model(kpkunit_target_b, 11));
	kpk_expect_hits(test, (int[]){ 9, 9, 8 }, (int[]){ 0, 9, 1 }, 3);

	kpk_unregister(test, p[0]);
	kpk_unregister(test, p[2]);
	kpk_call(kpkunit_target_b, 12);
	kpk_expect_hits(test, (int[]){ 9, 9, 8 }, (int[]){ 0, 9, 1 }, 3);
}

/*
 * A pre handler that moves the instruction pointer and returns 1 skips the
 * function.
 */
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

static bool kpk_is_addr(unsigned long addr, void *arg)
{
	return addr == (unsigned long)arg;
}

/*
 * Text that goes away under a probe, as a module's does when it unloads,
 * gets its instruction back first: the probe stays registered, marked
 * gone, and no breakpoint of ours is left in memory that may be reused.
 */
static void kpk_test_text_gone(struct kunit *test)
{
	kprobe_opcode_t *at = (kprobe_opcode_t *)kpk_point(KPK_add_mov);
	kprobe_opcode_t orig = READ_ONCE(*at);
	struct kprobe *p = kpk_probe(0, at, NULL, 0, true, 0);

	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_EXPECT_NE(test, READ_ONCE(*at), orig);
	mutex_lock(&kprobe_mutex);
	kprobe_kill_range(kpk_is_addr, at, true);
	mutex_unlock(&kprobe_mutex);
	KUNIT_EXPECT_EQ(test, READ_ONCE(*at), orig);
	KUNIT_EXPECT_TRUE(test, kprobe_gone(p));
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_asm_add, 9), 14L);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 0);
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
 * (kpk_pre checks the instruction pointer, kpk_index the probe), and once the batch is in
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

#ifdef CONFIG_KPROBES_ON_FTRACE
/*
 * With the function tracer, a function's entry is ftrace's call site: a
 * probe there is [FTRACE] and looks to its handlers like a breakpoint probe
 * (kpk_pre checks the instruction pointer); a probe on the next instruction of the same
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

	/* Inside the call: no instruction starts there. */
	q = kpk_probe(1, (void *)p->addr + 1, NULL, 0, true, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(q), kpk_arch_mid_insn_err);
	q = kpk_probe(1, NULL, "kpkunit_target_a",
		      (unsigned long)p->addr + KPK_FENTRY_LEN - 1 -
		      (unsigned long)kpkunit_target_a, true, 0);
	KUNIT_EXPECT_EQ(test, kpk_try_register(q), kpk_arch_mid_insn_err);

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
	KUNIT_EXPECT_EQ(test, kpk_seen.pre_arg[0], (unsigned long)x);
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
 * A pre handler of an [FTRACE] probe that moves the instruction pointer
 * and returns 1:
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
	KUNIT_EXPECT_EQ(test, kpk_seen.pre_ip[0], site + kpk_arch_pre_ip_off);
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

/*
 * Other ftrace users of the probed functions, with filters of their own:
 * kpk_ft_count_fn counts the calls of each.
 */
#define KPK_FT_NFN	3
static kpk_fn_t *const kpk_ft_fns[KPK_FT_NFN] = {
	kpkunit_target_a, kpkunit_target_b, kpkunit_target_c,
};
static const char *const kpk_ft_syms[KPK_FT_NFN] = {
	"kpkunit_target_a", "kpkunit_target_b", "kpkunit_target_c",
};
static unsigned long kpk_ft_site[KPK_FT_NFN];
static atomic_t kpk_ft_calls[KPK_FT_NFN];

static void kpk_ft_count_fn(unsigned long ip, unsigned long parent_ip,
			    struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	int i;

	for (i = 0; i < KPK_FT_NFN; i++)
		if (ip == kpk_ft_site[i])
			atomic_inc(&kpk_ft_calls[i]);
}

static void kpk_ft_nop_fn(unsigned long ip, unsigned long parent_ip,
			  struct ftrace_ops *op, struct ftrace_regs *fregs)
{
}

static void kpk_ft_ops_action(void *ops)
{
	unregister_ftrace_function(ops);
	ftrace_free_filter(ops);
}

/*
 * A new ops (ftrace_free_filter() leaves an ops unusable, so each test
 * has its own) calling @func on @n sites, registered until the end of
 * @test; NULL if ftrace refused.
 */
static struct ftrace_ops *kpk_ft_ops_add(struct kunit *test,
					 ftrace_func_t func, unsigned long flags,
					 const unsigned long *sites, int n)
{
	struct ftrace_ops *ops;
	int i, ret;

	ops = kunit_kzalloc(test, sizeof(*ops), GFP_KERNEL);
	if (!ops)
		return NULL;
	ops->func = func;
	ops->flags = flags;
	for (i = 0; i < n; i++) {
		ret = ftrace_set_filter_ip(ops, sites[i], 0, 0);
		if (ret)
			goto out_free;
	}
	ret = register_ftrace_function(ops);
	if (ret)
		goto out_free;
	if (kunit_add_action_or_reset(test, kpk_ft_ops_action, ops))
		return NULL;
	return ops;
out_free:
	ftrace_free_filter(ops);
	return NULL;
}

/* The sites of kpk_ft_fns; false if one has none. */
static bool kpk_ft_sites(void)
{
	int i;

	for (i = 0; i < KPK_FT_NFN; i++) {
		kpk_ft_site[i] = kpk_fentry(kpk_ft_fns[i]);
		atomic_set(&kpk_ft_calls[i], 0);
		if (!kpk_ft_site[i])
			return false;
	}
	return true;
}

/*
 * ftrace's record of @site has @n users, and its flags and call are what
 * a recount of the registered ops gives (ftrace_check_rec_ip(), built
 * with the startup tests).
 */
static void kpk_ft_expect_users(struct kunit *test, unsigned long site, int n)
{
#ifdef CONFIG_FTRACE_STARTUP_TEST
	KUNIT_EXPECT_EQ_MSG(test, ftrace_check_rec_ip(site), n,
			    "ftrace users of %pS", (void *)site);
#endif
}

/*
 * [FTRACE] probes registered, disarmed, armed and removed one by one while
 * another ftrace user traces the same functions (and a third one another
 * function): each change moves one record by one user, in the two ops of
 * ours (a post handler takes the IPMODIFY one), every call is seen by
 * each user that is on at the time, an IPMODIFY conflict is refused
 * without a trace, and removal leaves the records as they were.
 */
static void kpk_test_ftrace_one_by_one(struct kunit *test)
{
	static const int base[KPK_FT_NFN] = { 1, 1, 0 };
	struct ftrace_ops *count, *far_ops, *ipmodify;
	struct kprobe *p[KPK_FT_NFN], *q;
	unsigned long far;
	int i, j;
	long x = 5;

	if (!kpk_ft_sites())
		kunit_skip(test, "no ftrace call site at the entry");
	far = kpk_fentry(kpkunit_target_repl);
	KUNIT_ASSERT_NE(test, far, 0UL);
	/* One user on a and b, one on a function no probe goes on. */
	count = kpk_ft_ops_add(test, kpk_ft_count_fn, 0, kpk_ft_site, 2);
	KUNIT_ASSERT_NOT_NULL(test, count);
	far_ops = kpk_ft_ops_add(test, kpk_ft_nop_fn, 0, &far, 1);
	KUNIT_ASSERT_NOT_NULL(test, far_ops);
	for (i = 0; i < KPK_FT_NFN; i++)
		kpk_ft_expect_users(test, kpk_ft_site[i], base[i]);
	kpk_ft_expect_users(test, far, 1);

	for (i = 0; i < KPK_FT_NFN; i++) {
		p[i] = kpk_probe(i, NULL, kpk_ft_syms[i], 0, i == 1, 0);
		KUNIT_ASSERT_EQ(test, kpk_register(test, p[i]), 0);
		KUNIT_ASSERT_EQ(test, (unsigned long)p[i]->addr,
				kpk_ft_site[i]);
		KUNIT_EXPECT_TRUE(test, kprobe_ftrace(p[i]));
		for (j = 0; j < KPK_FT_NFN; j++)
			kpk_ft_expect_users(test, kpk_ft_site[j],
					    base[j] + (j <= i));
	}
	for (i = 0; i < KPK_FT_NFN; i++) {
		KUNIT_EXPECT_EQ(test, kpk_call(kpk_ft_fns[i], x + i),
				kpk_model(kpk_ft_fns[i], x + i));
		KUNIT_EXPECT_EQ(test, kpk_pre_hits(i), 1);
		KUNIT_EXPECT_EQ(test, kpk_post_hits(i), i == 1);
		KUNIT_EXPECT_EQ(test, atomic_read(&kpk_ft_calls[i]), base[i]);
	}

	/*
	 * A post handler on c's site needs the IPMODIFY ops, which another
	 * IPMODIFY user holds there: refused, and c's probe stays as it was.
	 */
	ipmodify = kpk_ft_ops_add(test, kpk_ft_nop_fn,
				  FTRACE_OPS_FL_SAVE_REGS |
				  FTRACE_OPS_FL_IPMODIFY, &kpk_ft_site[2], 1);
	KUNIT_ASSERT_NOT_NULL(test, ipmodify);
	kpk_ft_expect_users(test, kpk_ft_site[2], 2);
	q = kpk_probe(3, NULL, kpk_ft_syms[2], 0, true, 0);
	KUNIT_EXPECT_NE(test, kpk_try_register(q), 0);
	kpk_ft_expect_users(test, kpk_ft_site[2], 2);
	kpk_call(kpk_ft_fns[2], x);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(2), 2);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(3), 0);
	kunit_release_action(test, kpk_ft_ops_action, ipmodify);
	kpk_ft_expect_users(test, kpk_ft_site[2], 1);

	/* Off and on again: the other user keeps seeing every call. */
	KUNIT_ASSERT_EQ(test, disable_kprobe(p[0]), 0);
	kpk_ft_expect_users(test, kpk_ft_site[0], base[0]);
	kpk_call(kpk_ft_fns[0], x);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpk_ft_calls[0]), 2);
	KUNIT_ASSERT_EQ(test, enable_kprobe(p[0]), 0);
	kpk_ft_expect_users(test, kpk_ft_site[0], base[0] + 1);
	kpk_call(kpk_ft_fns[0], x);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&kpk_ft_calls[0]), 3);

	/* Removed one by one, the last first: nothing of ours is left. */
	for (i = KPK_FT_NFN - 1; i >= 0; i--) {
		kpk_unregister(test, p[i]);
		kpk_ft_expect_users(test, kpk_ft_site[i], base[i]);
	}
	for (i = 0; i < KPK_FT_NFN; i++) {
		int hits = kpk_pre_hits(i), calls = atomic_read(&kpk_ft_calls[i]);

		kpk_call(kpk_ft_fns[i], x);
		KUNIT_EXPECT_EQ(test, kpk_pre_hits(i), hits);
		KUNIT_EXPECT_EQ(test, atomic_read(&kpk_ft_calls[i]),
				calls + base[i]);
	}
	kunit_release_action(test, kpk_ft_ops_action, count);
	kunit_release_action(test, kpk_ft_ops_action, far_ops);
	for (i = 0; i < KPK_FT_NFN; i++)
		kpk_ft_expect_users(test, kpk_ft_site[i], 0);
	kpk_ft_expect_users(test, far, 0);
}

/* One round of kpk_test_ftrace_one_concurrent: probes on b and c come and go. */
static int kpk_ft_churn_round(int round)
{
	struct kprobe *p, *q;
	int err, err_q;

	p = kpk_probe(1, NULL, kpk_ft_syms[1], 0, round & 1, 0);
	err = register_kprobe(p);
	if (err)
		return err;
	q = kpk_probe(2, NULL, kpk_ft_syms[2], 0, round & 2, 0);
	err_q = register_kprobe(q);
	err = err_q ?: disable_kprobe(p);
	err = err ?: enable_kprobe(p);
	/* Removal while the CPUs run through the sites is for stress=1. */
	if (!stress && !kpk_park_workers())
		err = err ?: -ETIMEDOUT;
	if (!err_q)
		unregister_kprobe(q);
	unregister_kprobe(p);
	kpk_unpark_workers();
	return err;
}

/*
 * [FTRACE] probes armed and disarmed one by one on b and c while one CPU
 * calls a, where a probe stays, and the other calls b; another ftrace user
 * traces a and b throughout.  The steady probe and the other user see
 * every call, and the records end as they began.
 */
static void kpk_test_ftrace_one_concurrent(struct kunit *test)
{
	unsigned long calls[2];
	int cpu[2], i, round, err = 0;
	struct kprobe *s;
	bool joined;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	if (!kpk_ft_sites())
		kunit_skip(test, "no ftrace call site at the entry");
	cpu[0] = cpumask_first(cpu_online_mask);
	cpu[1] = cpumask_next(cpu[0], cpu_online_mask);
	KUNIT_ASSERT_NOT_NULL(test, kpk_ft_ops_add(test, kpk_ft_count_fn, 0,
						   kpk_ft_site, 2));
	s = kpk_probe(0, NULL, kpk_ft_syms[0], 0, false, 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, s), 0);
	kpk_ft_expect_users(test, kpk_ft_site[0], 2);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
				kpk_workers_action, NULL), 0);

	/* No ASSERT until the workers are joined. */
	for (i = 0; i < 2 && !err; i++)
		err = kpk_worker_start(&kpk_workers[i], kpk_ft_fns[i],
				       i << 20, ULONG_MAX, cpu[i]);
	for (round = 0; round < KPK_CHURN_ROUNDS && !err; round++)
		err = kpk_ft_churn_round(round);
	WRITE_ONCE(kpk_stop, true);
	joined = kpk_join_all();
	KUNIT_EXPECT_EQ_MSG(test, err, 0, "round %d", round);
	KUNIT_ASSERT_TRUE_MSG(test, joined, "worker threads did not finish");
	for (i = 0; i < 2; i++) {
		calls[i] = kpk_workers[i].calls;
		KUNIT_EXPECT_EQ(test, kpk_workers[i].bad, 0UL);
		KUNIT_EXPECT_EQ(test, (unsigned long)atomic_read(&kpk_ft_calls[i]),
				calls[i]);
	}
	KUNIT_EXPECT_GT(test, calls[1], 0UL);
	KUNIT_EXPECT_EQ(test, (unsigned long)kpk_pre_hits(0), calls[0]);
	KUNIT_EXPECT_LE(test, (unsigned long)kpk_pre_hits(1), calls[1]);
	KUNIT_EXPECT_EQ(test, s->nmissed, 0UL);
	kpk_ft_expect_users(test, kpk_ft_site[0], 2);
	kpk_ft_expect_users(test, kpk_ft_site[1], 1);
	kpk_ft_expect_users(test, kpk_ft_site[2], 0);
}
#endif /* CONFIG_KPROBES_ON_FTRACE */

static struct kunit_case kpk_core_cases[] = {
	KUNIT_CASE(kpk_test_by_symbol),
	KUNIT_CASE(kpk_test_by_addr),
	KUNIT_CASE(kpk_test_register_errors),
	KUNIT_CASE(kpk_test_register_twice),
	KUNIT_CASE(kpk_test_not_registered),
	KUNIT_CASE(kpk_test_disabled),
	KUNIT_CASE(kpk_test_aggregate),
	KUNIT_CASE(kpk_test_redirect),
	KUNIT_CASE(kpk_test_recursion),
#ifdef CONFIG_KPROBES_ON_FTRACE
	KUNIT_CASE(kpk_test_ftrace),
	KUNIT_CASE(kpk_test_ftrace_redirect),
	KUNIT_CASE(kpk_test_ftrace_recursion),
	KUNIT_CASE(kpk_test_ftrace_one_by_one),
	KUNIT_CASE_SLOW(kpk_test_ftrace_one_concurrent),
#endif
	KUNIT_CASE(kpk_test_adjacent),
	KUNIT_CASE(kpk_test_text_gone),
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
