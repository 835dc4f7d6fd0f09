// SPDX-License-Identifier: GPL-2.0
/*
 * Boot-time KUnit suite kretprobes_core (CONFIG_KPROBES_KUNIT_TEST with
 * CONFIG_KRETPROBES): return probes, on the targets of kprobes_kunit.h,
 * two of them for the flags a return hands back.
 *
 * The return handler records the value, the return address and the
 * registers it was handed, and, when the probe has an entry handler,
 * checks the value against the target's model and the entry's private
 * data; the tests compare the records afterwards.  Covered: enabling and
 * disabling, entry handlers that turn calls down, the kretprobe rows of
 * the errno table, maxactive with sleeping and recursive callers and
 * across CPUs, a kprobe on the same address, probes on ftrace call sites,
 * unregistering and disabling while a probed call sleeps, the flags the
 * trampoline hands back, batches, and two CPUs running a return-probed
 * function.
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "kprobes_kunit.h"

#define KPK_NRP		3
#define KPK_NREC	8
#define KPK_TAG		0x6b70726574UL

static struct kretprobe kpk_rp[KPK_NRP];
static kpk_fn_t *kpk_rp_fn[KPK_NRP];

/* Private data of one instance, written at entry and read at return. */
struct kpk_rp_data {
	long arg;
	unsigned long tag;
};

static struct {
	atomic_t entries[KPK_NRP];
	atomic_t returns[KPK_NRP];
	atomic_t bad;		/* wrong data, value or kretprobe */
	atomic_t nrec;
	unsigned long entry_ip;	/* the latest entry handler's */
	long ret[KPK_NREC];
	unsigned long retaddr[KPK_NREC];
	unsigned long retip[KPK_NREC];
	unsigned long retflags[KPK_NREC];
	bool skip_odd;		/* entry handler refuses odd arguments */
} kpk_rs;

static int kpk_rp_index(struct kretprobe *rp)
{
	int i;

	for (i = 0; i < KPK_NRP; i++)
		if (rp == &kpk_rp[i])
			return i;
	atomic_inc(&kpk_rs.bad);
	return -1;
}

static int kpk_rp_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kpk_rp_data *d = (struct kpk_rp_data *)ri->data;
	int i = kpk_rp_index(get_kretprobe(ri));
	long arg = regs_get_kernel_argument(regs, 0);

	if (i < 0)
		return 1;
	d->arg = arg;
	d->tag = KPK_TAG ^ arg;
	WRITE_ONCE(kpk_rs.entry_ip, instruction_pointer(regs));
	atomic_inc(&kpk_rs.entries[i]);
	if (READ_ONCE(kpk_rs.skip_odd) && (arg & 1))
		return 1;
	return 0;
}

static int kpk_rp_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	long ret = regs_return_value(regs);
	int i = kpk_rp_index(rp);
	int n;

	if (i < 0)
		return 0;
	if (rp->entry_handler) {
		struct kpk_rp_data *d = (struct kpk_rp_data *)ri->data;

		if (d->tag != (KPK_TAG ^ d->arg) ||
		    ret != kpk_model(kpk_rp_fn[i], d->arg))
			atomic_inc(&kpk_rs.bad);
	}
	n = atomic_inc_return(&kpk_rs.nrec) - 1;
	if (n < KPK_NREC) {
		kpk_rs.ret[n] = ret;
		kpk_rs.retaddr[n] = get_kretprobe_retaddr(ri);
		kpk_rs.retip[n] = instruction_pointer(regs);
		kpk_rs.retflags[n] = kpk_arch_ret_flags(regs);
	}
	atomic_inc(&kpk_rs.returns[i]);
	return 0;
}

static struct kretprobe *kpk_rprobe(int i, kpk_fn_t *fn, const char *sym,
				    int maxactive, bool entry)
{
	struct kretprobe *rp = &kpk_rp[i];

	memset(rp, 0, sizeof(*rp));
	if (sym)
		rp->kp.symbol_name = sym;
	else
		rp->kp.addr = (kprobe_opcode_t *)fn;
	rp->handler = kpk_rp_return;
	if (entry) {
		rp->entry_handler = kpk_rp_entry;
		rp->data_size = sizeof(struct kpk_rp_data);
	}
	rp->maxactive = maxactive;
	kpk_rp_fn[i] = fn;
	return rp;
}

static void kpk_rp_unregister_action(void *rp)
{
	unregister_kretprobe(rp);
}

static int kpk_rp_register(struct kunit *test, struct kretprobe *rp)
{
	int ret = register_kretprobe(rp);

	if (ret)
		return ret;
	return kunit_add_action_or_reset(test, kpk_rp_unregister_action, rp);
}

static void kpk_rp_unregister(struct kunit *test, struct kretprobe *rp)
{
	kunit_release_action(test, kpk_rp_unregister_action, rp);
}

static struct kretprobe *kpk_rp_batch[KPK_NRP];

static void kpk_rp_unregister_batch_action(void *unused)
{
	unregister_kretprobes(kpk_rp_batch, 2);
}

static int kpk_returns(int i)
{
	return atomic_read(&kpk_rs.returns[i]);
}

static int kpk_entries(int i)
{
	return atomic_read(&kpk_rs.entries[i]);
}

static int kpk_rp_init(struct kunit *test)
{
	int i;

	kpk_core_init(test);
	for (i = 0; i < KPK_NRP; i++) {
		memset(&kpk_rp[i], 0, sizeof(kpk_rp[i]));
		kpk_rp_fn[i] = NULL;
		atomic_set(&kpk_rs.entries[i], 0);
		atomic_set(&kpk_rs.returns[i], 0);
	}
	atomic_set(&kpk_rs.bad, 0);
	atomic_set(&kpk_rs.nrec, 0);
	kpk_rs.entry_ip = 0;
	memset(kpk_rs.ret, 0, sizeof(kpk_rs.ret));
	memset(kpk_rs.retaddr, 0, sizeof(kpk_rs.retaddr));
	memset(kpk_rs.retip, 0, sizeof(kpk_rs.retip));
	memset(kpk_rs.retflags, 0, sizeof(kpk_rs.retflags));
	kpk_rs.skip_odd = false;
	atomic_set(&kpk_wait_in, 0);
	kpk_wait_want = 0;
	reinit_completion(&kpk_wait_all_in);
	reinit_completion(&kpk_wait_go);
	return 0;
}

static void kpk_rp_exit(struct kunit *test)
{
	kpk_core_exit(test);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&kpk_rs.bad), 0,
			    "return handler saw a wrong value, data or kretprobe");
}

static void kpk_rtest_basic(struct kunit *test)
{
	struct kretprobe *rp = kpk_rprobe(0, kpkunit_target_a,
					  "kpkunit_target_a", 0, false);
	long x;
	int n;

	KUNIT_ASSERT_EQ(test, kpk_rp_register(test, rp), 0);
	KUNIT_EXPECT_TRUE(test, kpk_at_entry(kpkunit_target_a, rp->kp.addr));
	for (x = 1; x <= 5; x++)
		KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, x * 100),
				kpk_model(kpkunit_target_a, x * 100));
	KUNIT_EXPECT_EQ(test, kpk_returns(0), 5);
	for (n = 0; n < 5; n++)
		KUNIT_EXPECT_EQ(test, kpk_rs.ret[n],
				kpk_model(kpkunit_target_a, (n + 1) * 100));
	KUNIT_EXPECT_EQ(test, rp->nmissed, 0);

	KUNIT_ASSERT_EQ(test, disable_kretprobe(rp), 0);
	KUNIT_EXPECT_TRUE(test, kprobe_disabled(&rp->kp));
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, 8),
			kpk_model(kpkunit_target_a, 8));
	KUNIT_EXPECT_EQ(test, kpk_returns(0), 5);
	KUNIT_ASSERT_EQ(test, enable_kretprobe(rp), 0);
	KUNIT_EXPECT_FALSE(test, kprobe_disabled(&rp->kp));
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, 9),
			kpk_model(kpkunit_target_a, 9));
	KUNIT_EXPECT_EQ(test, kpk_returns(0), 6);
	KUNIT_EXPECT_EQ(test, kpk_rs.ret[5], kpk_model(kpkunit_target_a, 9));

	kpk_rp_unregister(test, rp);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, 10),
			kpk_model(kpkunit_target_a, 10));
	KUNIT_EXPECT_EQ(test, kpk_returns(0), 6);
}

/* entry_handler, per-instance data, and entries it turns down. */
static void kpk_rtest_entry_data(struct kunit *test)
{
	struct kretprobe *rp = kpk_rprobe(0, kpkunit_target_b, NULL, 0, true);
	long x;

	kpk_rs.skip_odd = true;
	KUNIT_ASSERT_EQ(test, kpk_rp_register(test, rp), 0);
	for (x = 2; x <= 7; x++)
		KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_b, x),
				kpk_model(kpkunit_target_b, x));
	KUNIT_EXPECT_EQ(test, kpk_entries(0), 6);
	KUNIT_EXPECT_EQ(test, kpk_returns(0), 3);
	KUNIT_EXPECT_EQ(test, kpk_rs.ret[0], kpk_model(kpkunit_target_b, 2));
	KUNIT_EXPECT_EQ(test, kpk_rs.ret[1], kpk_model(kpkunit_target_b, 4));
	KUNIT_EXPECT_EQ(test, kpk_rs.ret[2], kpk_model(kpkunit_target_b, 6));
	KUNIT_EXPECT_EQ(test, rp->nmissed, 0);
}

/* The handler sees the real return address, as instruction pointer too. */
static void kpk_rtest_return_address(struct kunit *test)
{
	struct kretprobe *rp = kpk_rprobe(0, kpkunit_asm_add, NULL, 0, false);

	KUNIT_ASSERT_EQ(test, kpk_rp_register(test, rp), 0);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_asm_call, 30), 41L);
	KUNIT_ASSERT_EQ(test, kpk_returns(0), 2);
	KUNIT_EXPECT_EQ(test, kpk_rs.ret[0], 35L);
	KUNIT_EXPECT_EQ(test, kpk_rs.ret[1], 40L);
	KUNIT_EXPECT_EQ(test, kpk_rs.retaddr[0], kpk_point(KPK_call_ret1));
	KUNIT_EXPECT_EQ(test, kpk_rs.retaddr[1], kpk_point(KPK_call_ret2));
	KUNIT_EXPECT_EQ(test, kpk_rs.retip[0], kpk_point(KPK_call_ret1));
	KUNIT_EXPECT_EQ(test, kpk_rs.retip[1], kpk_point(KPK_call_ret2));
}

/* The kretprobe rows of the errno table. */
static void kpk_rtest_errors(struct kunit *test)
{
	struct kretprobe *rp;

	/* More instances than the pool can hold: -ENOMEM, as upstream. */
	rp = kpk_rprobe(0, kpkunit_target_a, NULL, INT_MAX, false);
	KUNIT_EXPECT_EQ(test, register_kretprobe(rp), -ENOMEM);
	rp = kpk_rprobe(0, kpkunit_target_a, NULL, 4, true);
	rp->data_size = KRETPROBE_MAX_DATA_SIZE + 1;
	KUNIT_EXPECT_EQ(test, register_kretprobe(rp), -E2BIG);
	rp = kpk_rprobe(0, NULL, "kpkunit_asm_add", 0, false);
	rp->kp.offset = kpk_point(KPK_add_mov) - (unsigned long)kpkunit_asm_add;
	KUNIT_EXPECT_EQ(test, register_kretprobe(rp), -EINVAL);
	if (kpk_arch_kretprobe_refused) {
		rp = kpk_rprobe(0, NULL, kpk_arch_kretprobe_refused, 0, false);
		KUNIT_EXPECT_EQ(test, register_kretprobe(rp), -EINVAL);
	}

	/* None of them left anything behind. */
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, 2),
			kpk_model(kpkunit_target_a, 2));
	KUNIT_EXPECT_EQ(test, atomic_read(&kpk_rs.returns[0]), 0);
}

/* More sleeping callers than instances: the rest are missed. */
static void kpk_rtest_maxactive(struct kunit *test)
{
	const int nthreads = KPK_NWORKERS, maxactive = 2;
	struct kretprobe *rp;
	unsigned long bad = 0;
	bool all_in, joined;
	int i, err = 0;

	rp = kpk_rprobe(0, kpkunit_target_wait, NULL, maxactive, true);
	KUNIT_ASSERT_EQ(test, kpk_rp_register(test, rp), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
				kpk_workers_action, NULL), 0);
	WRITE_ONCE(kpk_wait_want, nthreads);

	/* No ASSERT until the workers are joined. */
	for (i = 0; i < nthreads && !err; i++)
		err = kpk_worker_start(&kpk_workers[i], kpkunit_target_wait,
				       100 + i, 1, -1);
	all_in = !err && wait_for_completion_timeout(&kpk_wait_all_in,
						     60 * HZ);
	complete_all(&kpk_wait_go);
	joined = kpk_join_all();
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_TRUE_MSG(test, all_in, "callers did not all get in");
	KUNIT_ASSERT_TRUE_MSG(test, joined, "worker threads did not finish");

	for (i = 0; i < nthreads; i++) {
		bad += kpk_workers[i].bad;
		KUNIT_EXPECT_EQ(test, kpk_workers[i].calls, 1UL);
	}
	KUNIT_EXPECT_EQ(test, bad, 0UL);
	KUNIT_EXPECT_EQ(test, kpk_entries(0), maxactive);
	KUNIT_EXPECT_EQ(test, kpk_returns(0), maxactive);
	KUNIT_EXPECT_EQ(test, rp->nmissed, nthreads - maxactive);
}

/* Recursion deeper than maxactive: the outermost calls get instances. */
static void kpk_rtest_recursion(struct kunit *test)
{
	struct kretprobe *rp = kpk_rprobe(0, kpkunit_rec, NULL, 3, false);

	KUNIT_ASSERT_EQ(test, kpk_rp_register(test, rp), 0);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_rec, 8), 36L);
	KUNIT_EXPECT_EQ(test, kpk_returns(0), 3);
	KUNIT_EXPECT_EQ(test, rp->nmissed, 5);
	KUNIT_EXPECT_EQ(test, kpk_rs.ret[0], kpk_model(kpkunit_rec, 6));
	KUNIT_EXPECT_EQ(test, kpk_rs.ret[1], kpk_model(kpkunit_rec, 7));
	KUNIT_EXPECT_EQ(test, kpk_rs.ret[2], kpk_model(kpkunit_rec, 8));

	/* Instances all came back. */
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_rec, 3), 6L);
	KUNIT_EXPECT_EQ(test, kpk_returns(0), 6);
	KUNIT_EXPECT_EQ(test, rp->nmissed, 5);
}

static long kpk_rtest_cpus_call(void *arg)
{
	return kpk_call(kpkunit_target_a, (long)arg);
}

/*
 * maxactive 1 and one call on each CPU in turn, twice round: every call
 * gets the one instance, which each return leaves in its CPU's cache, so
 * the next CPU must find it there instead of counting a miss.
 */
static void kpk_rtest_cpus(struct kunit *test)
{
	struct kretprobe *rp = kpk_rprobe(0, kpkunit_target_a, NULL, 1, false);
	int cpu, round, calls = 0;
	long x;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs to move the instance between");
	KUNIT_ASSERT_EQ(test, kpk_rp_register(test, rp), 0);
	for (round = 0; round < 2; round++) {
		for_each_online_cpu(cpu) {
			x = 10 * round + cpu;
			KUNIT_EXPECT_EQ(test, work_on_cpu(cpu, kpk_rtest_cpus_call,
							  (void *)x),
					kpk_model(kpkunit_target_a, x));
			calls++;
		}
	}
	KUNIT_EXPECT_EQ(test, kpk_returns(0), calls);
	KUNIT_EXPECT_EQ(test, rp->nmissed, 0);
}

/* A kprobe and a kretprobe on one function. */
static void kpk_rtest_with_kprobe(struct kunit *test)
{
	struct kprobe *p = kpk_probe(0, kpkunit_target_b, NULL, 0, false, 0);
	struct kretprobe *rp = kpk_rprobe(0, kpkunit_target_b, NULL, 0, true);

	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_ASSERT_EQ(test, kpk_rp_register(test, rp), 0);
	KUNIT_EXPECT_PTR_EQ(test, p->addr, rp->kp.addr);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_b, 21),
			kpk_model(kpkunit_target_b, 21));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_seen.pre_arg[0], 21UL);
	KUNIT_EXPECT_EQ(test, kpk_entries(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_returns(0), 1);

	kpk_unregister(test, p);
	kpk_call(kpkunit_target_b, 22);
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_returns(0), 2);

	p = kpk_probe(0, kpkunit_target_b, NULL, 0, true, 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	kpk_rp_unregister(test, rp);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_b, 23),
			kpk_model(kpkunit_target_b, 23));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 2);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_returns(0), 2);
}

#ifdef CONFIG_KPROBES_ON_FTRACE
/*
 * A kretprobe alone on an ftrace call site: its kprobe is [FTRACE], the
 * entry handler sees the argument and the instruction pointer as a
 * breakpoint at the site would show it, the return handler the value
 * (checked against the entry's private data by kpk_rp_return()) and, as
 * instruction pointer too, a real return address.
 */
static void kpk_rtest_ftrace(struct kunit *test)
{
	unsigned long site = kpk_fentry(kpkunit_target_c);
	struct kretprobe *rp;
	long x;
	int n;

	if (!site)
		kunit_skip(test, "no ftrace call site at the entry");
	rp = kpk_rprobe(0, kpkunit_target_c, "kpkunit_target_c", 0, true);
	KUNIT_ASSERT_EQ(test, kpk_rp_register(test, rp), 0);
	KUNIT_EXPECT_EQ(test, (unsigned long)rp->kp.addr, site);
	KUNIT_EXPECT_TRUE(test, kprobe_ftrace(&rp->kp));

	for (x = 1; x <= 4; x++)
		KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_c, x * 7),
				kpk_model(kpkunit_target_c, x * 7));
	KUNIT_EXPECT_EQ(test, kpk_entries(0), 4);
	KUNIT_EXPECT_EQ(test, kpk_returns(0), 4);
	KUNIT_EXPECT_EQ(test, kpk_rs.entry_ip, site + kpk_arch_pre_ip_off);
	for (n = 0; n < 4; n++) {
		KUNIT_EXPECT_EQ(test, kpk_rs.ret[n],
				kpk_model(kpkunit_target_c, (n + 1) * 7));
		KUNIT_EXPECT_EQ(test, kpk_rs.retip[n], kpk_rs.retaddr[n]);
		KUNIT_EXPECT_TRUE(test, kernel_text_address(kpk_rs.retaddr[n]));
		KUNIT_EXPECT_NE(test, kpk_rs.retaddr[n],
				(unsigned long)kretprobe_trampoline_addr());
	}
	KUNIT_EXPECT_EQ(test, rp->nmissed, 0);
	KUNIT_EXPECT_EQ(test, rp->kp.nmissed, 0UL);

	kpk_rp_unregister(test, rp);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_c, 5),
			kpk_model(kpkunit_target_c, 5));
	KUNIT_EXPECT_EQ(test, kpk_entries(0), 4);
	KUNIT_EXPECT_EQ(test, kpk_returns(0), 4);
}

/*
 * A kprobe and a kretprobe share one ftrace call site: both fire on every
 * call; with either one unregistered the other goes on working.
 */
static void kpk_rtest_ftrace_shared(struct kunit *test)
{
	unsigned long site = kpk_fentry(kpkunit_target_c);
	struct kretprobe *rp;
	struct kprobe *p;

	if (!site)
		kunit_skip(test, "no ftrace call site at the entry");
	p = kpk_probe(0, (void *)site, NULL, 0, true, 0);
	rp = kpk_rprobe(0, kpkunit_target_c, "kpkunit_target_c", 0, true);
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_ASSERT_EQ(test, kpk_rp_register(test, rp), 0);
	KUNIT_EXPECT_PTR_EQ(test, p->addr, rp->kp.addr);
	KUNIT_EXPECT_TRUE(test, kprobe_ftrace(p));
	KUNIT_EXPECT_TRUE(test, kprobe_ftrace(&rp->kp));

	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_c, 31),
			kpk_model(kpkunit_target_c, 31));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_seen.pre_arg[0], 31UL);
	KUNIT_EXPECT_EQ(test, kpk_seen.post_ip[0], site + KPK_FENTRY_LEN);
	KUNIT_EXPECT_EQ(test, kpk_entries(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_returns(0), 1);

	/* The kprobe goes: the kretprobe still fires. */
	kpk_unregister(test, p);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_c, 32),
			kpk_model(kpkunit_target_c, 32));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_entries(0), 2);
	KUNIT_EXPECT_EQ(test, kpk_returns(0), 2);
	KUNIT_EXPECT_EQ(test, kpk_rs.ret[1], kpk_model(kpkunit_target_c, 32));

	/* A kprobe comes back, the kretprobe goes: the kprobe still fires. */
	p = kpk_probe(1, (void *)site, NULL, 0, true, 0);
	KUNIT_ASSERT_EQ(test, kpk_register(test, p), 0);
	KUNIT_EXPECT_TRUE(test, kprobe_ftrace(p));
	kpk_rp_unregister(test, rp);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_c, 33),
			kpk_model(kpkunit_target_c, 33));
	KUNIT_EXPECT_EQ(test, kpk_pre_hits(1), 1);
	KUNIT_EXPECT_EQ(test, kpk_post_hits(1), 1);
	KUNIT_EXPECT_EQ(test, kpk_seen.pre_arg[1], 33UL);
	KUNIT_EXPECT_EQ(test, kpk_entries(0), 2);
	KUNIT_EXPECT_EQ(test, kpk_returns(0), 2);
}
#endif /* CONFIG_KPROBES_ON_FTRACE */

/*
 * A probed call sleeps while its kretprobe is unregistered (it must still
 * return home, with no handler) or disabled (its return handler still
 * runs: users pair entry and return handlers).
 */
static void kpk_rtest_sleeping(struct kunit *test, bool disable)
{
	struct kretprobe *rp;
	struct kpk_worker *w = &kpk_workers[0];
	bool in, joined;
	int err;

	rp = kpk_rprobe(0, kpkunit_target_wait, NULL, 0, true);
	KUNIT_ASSERT_EQ(test, kpk_rp_register(test, rp), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
				kpk_workers_action, NULL), 0);
	WRITE_ONCE(kpk_wait_want, 1);

	/* No ASSERT until the worker is joined. */
	err = kpk_worker_start(w, kpkunit_target_wait, 7, 1, -1);
	in = !err && wait_for_completion_timeout(&kpk_wait_all_in, 60 * HZ);
	if (disable)
		err = err ?: disable_kretprobe(rp);
	else
		kpk_rp_unregister(test, rp);
	complete_all(&kpk_wait_go);
	joined = kpk_join_all();
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_TRUE_MSG(test, in, "caller did not get in");
	KUNIT_ASSERT_TRUE_MSG(test, joined, "worker thread did not finish");

	KUNIT_EXPECT_EQ(test, w->calls, 1UL);
	KUNIT_EXPECT_EQ(test, w->bad, 0UL);
	KUNIT_EXPECT_EQ(test, w->last, kpk_model(kpkunit_target_wait, 7));
	KUNIT_EXPECT_EQ(test, kpk_entries(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_returns(0), disable ? 1 : 0);

	/* And the function runs unprobed afterwards. */
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_wait, 8),
			kpk_model(kpkunit_target_wait, 8));
	KUNIT_EXPECT_EQ(test, kpk_entries(0), 1);
}

static void kpk_rtest_unregister_sleeping(struct kunit *test)
{
	kpk_rtest_sleeping(test, false);
}

static void kpk_rtest_disable_sleeping(struct kunit *test)
{
	kpk_rtest_sleeping(test, true);
}

/* What kpkunit_flags_call(x) returns. */
static long kpk_flags_model(long x)
{
	return x | (long)(x < 5) << 32 | (long)(x == 5) << 33;
}

/* The return trampoline gives the caller the function's flags. */
static void kpk_rtest_flags(struct kunit *test)
{
	struct kretprobe *rp = kpk_rprobe(0, kpkunit_flags_ret, NULL, 0, false);
	static const long args[] = { 3, 5, 9 };
	int i;

	KUNIT_ASSERT_EQ(test, kpk_rp_register(test, rp), 0);
	for (i = 0; i < ARRAY_SIZE(args); i++) {
		KUNIT_EXPECT_EQ_MSG(test, kpk_call(kpkunit_flags_call, args[i]),
				    kpk_flags_model(args[i]), "argument %ld",
				    args[i]);
		KUNIT_EXPECT_EQ(test, !!(kpk_rs.retflags[i] & KPK_FLAG_BELOW),
				args[i] < 5);
		KUNIT_EXPECT_EQ(test, !!(kpk_rs.retflags[i] & KPK_FLAG_EQUAL),
				args[i] == 5);
	}
	KUNIT_EXPECT_EQ(test, kpk_returns(0), (int)ARRAY_SIZE(args));
}

static void kpk_rtest_batch(struct kunit *test)
{
	int ret;

	kpk_rp_batch[0] = kpk_rprobe(0, kpkunit_target_a, NULL, 0, true);
	kpk_rp_batch[1] = kpk_rprobe(1, kpkunit_target_b, NULL, 0, false);
	kpk_rp_batch[2] = kpk_rprobe(2, NULL, "kpkunit_no_such_symbol", 0,
				     false);
	ret = register_kretprobes(kpk_rp_batch, 3);
	if (!ret)
		unregister_kretprobes(kpk_rp_batch, 3);
	KUNIT_EXPECT_EQ(test, ret, -ENOENT);
	kpk_call(kpkunit_target_a, 1);
	kpk_call(kpkunit_target_b, 1);
	KUNIT_ASSERT_EQ_MSG(test, kpk_entries(0) + kpk_returns(0) +
			    kpk_returns(1), 0,
			    "the good kretprobes of a failed batch still fire");

	/* The same kretprobe twice in one batch: refused, nothing stays. */
	kpk_rp_batch[2] = kpk_rp_batch[0];
	ret = register_kretprobes(kpk_rp_batch, 3);
	if (!ret)
		unregister_kretprobes(kpk_rp_batch, 2);
	KUNIT_EXPECT_EQ(test, ret, -EINVAL);
	KUNIT_EXPECT_NULL(test, kpk_rp_batch[0]->rph);
	KUNIT_EXPECT_NULL(test, kpk_rp_batch[1]->rph);
	kpk_call(kpkunit_target_a, 1);
	KUNIT_ASSERT_EQ_MSG(test, kpk_entries(0) + kpk_returns(0), 0,
			    "a kretprobe of a refused batch fires");

	kpk_rprobe(0, kpkunit_target_a, NULL, 0, true);
	kpk_rprobe(1, kpkunit_target_b, NULL, 0, false);
	KUNIT_ASSERT_EQ(test, register_kretprobes(kpk_rp_batch, 2), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
				kpk_rp_unregister_batch_action, NULL), 0);
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_a, 2),
			kpk_model(kpkunit_target_a, 2));
	KUNIT_EXPECT_EQ(test, kpk_call(kpkunit_target_b, 3),
			kpk_model(kpkunit_target_b, 3));
	KUNIT_EXPECT_EQ(test, kpk_returns(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_returns(1), 1);

	kunit_release_action(test, kpk_rp_unregister_batch_action, NULL);
	kpk_call(kpkunit_target_a, 2);
	kpk_call(kpkunit_target_b, 3);
	KUNIT_EXPECT_EQ(test, kpk_returns(0), 1);
	KUNIT_EXPECT_EQ(test, kpk_returns(1), 1);
}

#define KPK_RP_CALLS	3000

/*
 * Both CPUs run a return-probed function at once: every call is followed,
 * every return handled once, each with its own private data.
 */
static void kpk_rtest_two_cpus(struct kunit *test)
{
	struct kretprobe *rp = kpk_rprobe(0, kpkunit_target_c,
					  "kpkunit_target_c", 0, true);
	unsigned long calls = 0, bad = 0;
	int cpu[2], i, err = 0;
	bool joined;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	cpu[0] = cpumask_first(cpu_online_mask);
	cpu[1] = cpumask_next(cpu[0], cpu_online_mask);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
				kpk_workers_action, NULL), 0);
	KUNIT_ASSERT_EQ(test, kpk_rp_register(test, rp), 0);

	for (i = 0; i < 2 && !err; i++)
		err = kpk_worker_start(&kpk_workers[i], kpkunit_target_c,
				       i << 20, KPK_RP_CALLS, cpu[i]);
	joined = kpk_join_all();
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_ASSERT_TRUE_MSG(test, joined, "worker threads did not finish");
	for (i = 0; i < 2; i++) {
		calls += kpk_workers[i].calls;
		bad += kpk_workers[i].bad;
	}
	KUNIT_EXPECT_EQ(test, calls, 2UL * KPK_RP_CALLS);
	KUNIT_EXPECT_EQ(test, bad, 0UL);
	KUNIT_EXPECT_EQ(test, (unsigned long)kpk_returns(0), calls);
	KUNIT_EXPECT_EQ(test, (unsigned long)atomic_read(&kpk_rs.entries[0]),
			calls);
	KUNIT_EXPECT_EQ(test, rp->nmissed, 0);
}

static struct kunit_case kpk_rp_cases[] = {
	KUNIT_CASE(kpk_rtest_basic),
	KUNIT_CASE(kpk_rtest_entry_data),
	KUNIT_CASE(kpk_rtest_return_address),
	KUNIT_CASE(kpk_rtest_errors),
	KUNIT_CASE(kpk_rtest_maxactive),
	KUNIT_CASE(kpk_rtest_recursion),
	KUNIT_CASE(kpk_rtest_cpus),
	KUNIT_CASE(kpk_rtest_with_kprobe),
#ifdef CONFIG_KPROBES_ON_FTRACE
	KUNIT_CASE(kpk_rtest_ftrace),
	KUNIT_CASE(kpk_rtest_ftrace_shared),
#endif
	KUNIT_CASE(kpk_rtest_unregister_sleeping),
	KUNIT_CASE(kpk_rtest_disable_sleeping),
	KUNIT_CASE(kpk_rtest_flags),
	KUNIT_CASE(kpk_rtest_batch),
	KUNIT_CASE_SLOW(kpk_rtest_two_cpus),
	{}
};

static struct kunit_suite kpk_rp_suite = {
	.name = "kretprobes_core",
	.init = kpk_rp_init,
	.exit = kpk_rp_exit,
	.test_cases = kpk_rp_cases,
};

kunit_test_suites(&kpk_rp_suite);
