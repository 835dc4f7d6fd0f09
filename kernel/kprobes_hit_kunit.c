// SPDX-License-Identifier: GPL-2.0
/*
 * Suite kprobes_hit: what one hit of a probe site runs while the site
 * changes under it, and what becomes of a probed instruction's fault.
 *
 * A hit runs the post handlers of the probes whose pre handler it ran, and
 * of no other: a probe registered on the site, or enabled there, between
 * the two gets neither.  To make that window certain, a pre handler holds
 * the hit until a thread bound to another CPU has changed the site; each
 * path is taken, with one probe (the trap's shortcut) and with a list of
 * them, on an instruction carried out in the trap (simulated or emulated)
 * and on one run out of line (an access to user memory, which no
 * architecture carries out in the trap).
 *
 * An access to user memory that faults inside the out-of-line copy (a
 * page not yet present) is handled as it is without the probe: with the
 * probed code's interrupts on, so that the fault may sleep, and the access
 * is then done.  A probe on handle_mm_fault() sees the interrupt state of
 * the fault's handling.
 */
#include <linux/delay.h>
#include <linux/extable.h>
#include <linux/kallsyms.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/uaccess.h>

#include "kprobes_kunit.h"

/* How long a held hit waits for the other CPU, in microseconds. */
#define KPH_HOLD_US	(5 * USEC_PER_SEC)

/*
 * old = *@p, *@p = old + @v: an access to user memory each way, at the
 * instructions that have an exception table entry.  Return: old, or
 * -EFAULT.
 */
static noinline long kph_user_add(u32 __user *p, long v)
{
	u32 old;

	if (!user_access_begin(p, sizeof(*p)))
		return -EFAULT;
	unsafe_get_user(old, p, efault);
	unsafe_put_user(old + v, p, efault);
	user_access_end();
	return old;
efault:
	user_access_end();
	return -EFAULT;
}

/*
 * The first two instructions of kph_user_add() with an exception table
 * entry, the load and the store, each byte tried (x86 instructions have
 * any length).  Return: how many were found.
 */
static int kph_user_insns(unsigned long *at)
{
	unsigned long size, off, a, start = (unsigned long)kph_user_add;
	int n = 0;

	if (!kallsyms_lookup_size_offset(start, &size, &off))
		return 0;
	for (a = start; a < start + size && n < 2; a++)
		if (search_exception_tables(a))
			at[n++] = a;
	return n;
}

/* A page of the test's own user memory, not yet present. */
static u32 __user *kph_user_page(struct kunit *test)
{
	unsigned long u = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE,
					PROT_READ | PROT_WRITE,
					MAP_ANONYMOUS | MAP_PRIVATE, 0);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR_VALUE(u), "mmap: %ld", (long)u);
	return (u32 __user *)u;
}

/* A hit held in a pre handler, and the change another CPU makes meanwhile. */
static struct {
	atomic_t armed;		/* the next hit of kph_pre_hold() holds */
	atomic_t in;		/* it does now */
	atomic_t go;		/* the change is made */
	bool timed_out;
	int (*change)(struct kprobe *p);
	struct kprobe *changed;
	int ret;		/* what the change returned */
	struct completion done;
} kph_hold;

static int kph_pre_hold(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long us;

	kpk_pre(p, regs);
	if (!atomic_xchg(&kph_hold.armed, 0))
		return 0;
	atomic_set(&kph_hold.in, 1);
	for (us = 0; !atomic_read(&kph_hold.go); us++) {
		if (us == KPH_HOLD_US) {
			kph_hold.timed_out = true;
			break;
		}
		udelay(1);
	}
	return 0;
}

/* The pre handler cannot wake anybody (it runs in the trap): poll. */
static int kph_changer(void *unused)
{
	int n;

	for (n = 0; !atomic_read(&kph_hold.in) && n < 100000; n++)
		usleep_range(100, 200);
	kph_hold.ret = kph_hold.change(kph_hold.changed);
	atomic_set(&kph_hold.go, 1);
	complete(&kph_hold.done);
	return 0;
}

static int kph_join(struct kprobe *p)
{
	return register_kprobe(p);
}

static int kph_enable(struct kprobe *p)
{
	return enable_kprobe(p);
}

static void kph_unregister(void *p)
{
	unregister_kprobe(p);
}

/*
 * Hit the site of the holding probe once with @call(@arg), while a
 * thread on another CPU applies @change to @changed.
 */
static void kph_held_hit(struct kunit *test, long (*call)(long), long arg,
			 int (*change)(struct kprobe *p), struct kprobe *changed)
{
	struct task_struct *t;
	int cpu, other;

	atomic_set(&kph_hold.armed, 1);
	atomic_set(&kph_hold.in, 0);
	atomic_set(&kph_hold.go, 0);
	kph_hold.timed_out = false;
	kph_hold.change = change;
	kph_hold.changed = changed;
	kph_hold.ret = -EINPROGRESS;
	init_completion(&kph_hold.done);

	migrate_disable();
	cpu = smp_processor_id();
	other = cpumask_any_but(cpu_online_mask, cpu);
	if (other >= nr_cpu_ids) {
		migrate_enable();
		kunit_skip(test, "needs a second CPU");
	}
	t = kthread_create(kph_changer, NULL, "kph_changer");
	if (IS_ERR(t)) {
		migrate_enable();
		KUNIT_FAIL(test, "kthread_create: %ld", PTR_ERR(t));
		return;
	}
	kthread_bind(t, other);
	wake_up_process(t);
	call(arg);
	migrate_enable();

	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&kph_hold.done,
							    30 * HZ));
	if (change == kph_join && !kph_hold.ret) {
		int ret = kunit_add_action_or_reset(test, kph_unregister,
						    changed);

		KUNIT_ASSERT_EQ(test, ret, 0);
	}
	KUNIT_ASSERT_FALSE_MSG(test, kph_hold.timed_out,
			       "the other CPU did not change the site in time");
	KUNIT_ASSERT_EQ(test, kph_hold.ret, 0);
}

/* The two instructions: one carried out in the trap, one out of line. */
static long kph_call_trap(long x)
{
	return kpk_call(kpkunit_asm_add, x);
}

static u32 __user *kph_page;

static long kph_call_user(long x)
{
	return kph_user_add(kph_page, x);
}

struct kph_case {
	const char *name;
	bool user;	/* the user access, else kpkunit_asm_add's mov */
	bool list;	/* a disabled probe is enabled, else one registered */
};

static const struct kph_case kph_cases[] = {
	{ "trap, one probe, another registered",	false,	false },
	{ "trap, a list, a disabled probe enabled",	false,	true },
	{ "out of line, one probe, another registered", true,	false },
	{ "out of line, a list, a disabled probe enabled", true, true },
};

static void kph_case_desc(const struct kph_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kph_post, kph_cases, kph_case_desc);

/*
 * Probe 0 holds the hit in its pre handler; probe 1 joins the site, or is
 * enabled there, meanwhile.  Probe 1 runs in neither pass of that hit,
 * probe 0 in both, and both in the next hit.
 */
static void kph_test_post_after_pre(struct kunit *test)
{
	const struct kph_case *c = test->param_value;
	long (*call)(long) = c->user ? kph_call_user : kph_call_trap;
	unsigned long at[2];
	struct kprobe *hold, *late;
	void *addr;

	if (c->user) {
		KUNIT_ASSERT_EQ(test, kph_user_insns(at), 2);
		addr = (void *)at[0];
		kph_page = kph_user_page(test);
		KUNIT_ASSERT_EQ(test, put_user(0, kph_page), 0);	/* present */
	} else {
		addr = (void *)kpk_point(KPK_add_mov);
	}
	hold = kpk_probe(0, addr, NULL, 0, true, 0);
	hold->pre_handler = kph_pre_hold;
	KUNIT_ASSERT_EQ(test, kpk_register(test, hold), 0);
	late = kpk_probe(1, addr, NULL, 0, true,
			 c->list ? KPROBE_FLAG_DISABLED : 0);
	if (c->list)
		KUNIT_ASSERT_EQ(test, kpk_register(test, late), 0);

	kph_held_hit(test, call, 1, c->list ? kph_enable : kph_join, late);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(0), 1);
	KUNIT_EXPECT_EQ_MSG(test, kpk_pre_hits(1), 0,
			    "a pre handler for a probe added after the hit");
	KUNIT_EXPECT_EQ_MSG(test, kpk_post_hits(1), 0,
			    "a post handler without its pre handler");

	call(1);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 2);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(0), 2);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(1), 1);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(1), 1);
	if (c->user)
		KUNIT_EXPECT_EQ(test, kph_call_user(0), 2);
	else
		KUNIT_EXPECT_EQ(test, call(1), 6);
}

/* Faults handle_mm_fault() was given on kph_page, with interrupts off. */
static atomic_t kph_faults, kph_faults_irqs_off;

static int kph_fault_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long addr = regs_get_kernel_argument(regs, 1);

	if ((addr & PAGE_MASK) != ((unsigned long)kph_page & PAGE_MASK))
		return 0;
	atomic_inc(&kph_faults);
	if (!kpk_arch_irqs_on(regs))
		atomic_inc(&kph_faults_irqs_off);
	return 0;
}

static struct kprobe kph_fault_kp;

/*
 * The load and the store of kph_user_add() fault on a page not yet
 * present, with a probe on each, one with a post handler and one without,
 * then the other way round: the faults are handled with interrupts on and
 * the value lands.  Each probe may fire twice for one access (the hit
 * before the fault, and the one after it when the access is done again),
 * but its post handler only once.
 */
static void kph_test_user_fault(struct kunit *test)
{
	unsigned long at[2];
	int round, i;
	u32 v;

	KUNIT_ASSERT_EQ(test, kph_user_insns(at), 2);
	atomic_set(&kph_faults, 0);
	atomic_set(&kph_faults_irqs_off, 0);
	kph_page = NULL;
	kph_fault_kp = (struct kprobe) {
		.symbol_name = "handle_mm_fault",
		.pre_handler = kph_fault_pre,
	};
	KUNIT_ASSERT_EQ(test, kpk_register(test, &kph_fault_kp), 0);

	for (round = 0; round < 2; round++) {
		struct kprobe *p[2];

		kph_page = kph_user_page(test);
		for (i = 0; i < 2; i++) {
			p[i] = kpk_probe(2 * round + i, (void *)at[i], NULL, 0,
					 i == round, 0);
			KUNIT_ASSERT_EQ(test, kpk_register(test, p[i]), 0);
		}
		KUNIT_EXPECT_EQ(test, kph_user_add(kph_page, 7), 0);
		KUNIT_EXPECT_EQ(test, get_user(v, kph_page), 0);
		KUNIT_EXPECT_EQ(test, v, 7);
		for (i = 0; i < 2; i++) {
			int k = 2 * round + i;

			KUNIT_EXPECT_GE(test, kpk_pre_hits(k), 1);
			KUNIT_EXPECT_LE(test, kpk_pre_hits(k), 2);
			KUNIT_EXPECT_EQ(test, kpk_post_hits(k), i == round ? 1 : 0);
			kpk_unregister(test, p[i]);
		}
	}
	KUNIT_EXPECT_GE(test, atomic_read(&kph_faults), 2);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&kph_faults_irqs_off), 0,
			    "a user page fault handled with interrupts off");
}

static struct kunit_case kph_cases_list[] = {
	KUNIT_CASE_PARAM(kph_test_post_after_pre, kph_post_gen_params),
	KUNIT_CASE(kph_test_user_fault),
	{}
};

static struct kunit_suite kph_suite = {
	.name = "kprobes_hit",
	.init = kpk_core_init,
	.exit = kpk_core_exit,
	.test_cases = kph_cases_list,
};

kunit_test_suites(&kph_suite);
