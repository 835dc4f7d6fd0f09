// SPDX-License-Identifier: GPL-2.0
/*
 * kp_stress: kprobes and kretprobes coming and going on a busy system.
 *
 * A pool of probes sits on every instruction boundary of the first bytes
 * of a few functions: this module's kps_short() (short instructions first,
 * optimizable), kps_count() and kps_call() (ftrace call sites at their
 * entries, an emulated call), the kernel's snprintf(), vsnprintf() and
 * sort_r() (also used by the kernel's own printing and module loading, and
 * by some of our handlers), and kp_target.ko's functions (loaded and
 * unloaded by the guest script meanwhile).  Probes are pre-only (boosted
 * or optimized), pre+post (always a breakpoint), kretprobes at entries,
 * and several share an address.
 *
 * For seconds= seconds, churn threads register, unregister, enable and
 * disable random pool probes, alone and in batches, while caller threads
 * (one per CPU) call the probed functions and check their results; the
 * guest script toggles debug.kprobes-optimization and kprobes/enabled and
 * loads and unloads kp_target.  Persistent probes on kps_count() and
 * kps_short() stay registered throughout.
 *
 * Reading /sys/kernel/debug/kp_stress/result ends the run: the churn
 * stops, an exact phase counts every call of the persistent probes while
 * the churn goes on in the same functions (the script has stopped its
 * toggles by then), everything is unregistered, and the result comes back
 * as TAP lines.  Checked: no handler ran after its unregister returned; no
 * kretprobe instance was handed to the wrong probe; the probed functions
 * always computed the right result; a failed registration left nothing
 * registered; the persistent probes saw every call of the exact phase; the
 * text is as before once everything is gone.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/sort.h>

static unsigned int seconds = 60;
module_param(seconds, uint, 0444);
MODULE_PARM_DESC(seconds, "length of the churn phase");

static unsigned int nchurn = 3;
module_param(nchurn, uint, 0444);
MODULE_PARM_DESC(nchurn, "churn threads");

static unsigned int exact_calls = 3000;
module_param(exact_calls, uint, 0444);
MODULE_PARM_DESC(exact_calls, "calls per caller in the exact phase");

/* ---------------------------------------------------------------------- */
/* Probed functions                                                        */
/* ---------------------------------------------------------------------- */

/* Global, so that kallsyms knows them by these names. */
long kps_short(long x);		/* kp_stress_asm.S: 2x + 10 */
long kps_count(long x);
long kps_leaf(long x);
long kps_call(long x);

noinline long kps_count(long x)
{
	barrier();
	return x * 5 - 3;
}

noinline long kps_leaf(long x)
{
	barrier();
	return x * 3 + 1;
}

noinline long kps_call(long x)
{
	return kps_leaf(x + 1) + 2;
}

#define KPS_SHORT(x)	(2 * (x) + 10)
#define KPS_COUNT(x)	((x) * 5 - 3)
#define KPS_CALL(x)	(3 * ((x) + 1) + 1 + 2)

/* ---------------------------------------------------------------------- */
/* Probes                                                                  */
/* ---------------------------------------------------------------------- */

#define KPS_POOL_MAX	96
/*
 * Boundaries are looked for in the first bytes of each scanned target: on
 * arm64, riscv64, powerpc64, 32-bit arm and s390x a little further, to
 * reach kps_short's simulated (s390x: fixed-up) instructions.
 */
#if defined(CONFIG_ARM64) || defined(CONFIG_RISCV) || defined(CONFIG_PPC64) || \
    defined(CONFIG_ARM) || defined(CONFIG_S390)
#define KPS_SCAN_BYTES	40
#else
#define KPS_SCAN_BYTES	24
#endif
#define KPS_BATCH	6
#define KPS_MAXERR	160

enum kps_kind { KPS_PRE, KPS_POST, KPS_RET };
enum kps_state { KPS_UNREG, KPS_REG };

struct kps_probe {
	struct kretprobe rp;	/* rp.kp is the probe for the other kinds */
	const char *sym;
	unsigned int offset;
	enum kps_kind kind;
	bool print;		/* the pre handler prints (re-enters probes) */
	bool modular;		/* in kp_target.ko, which comes and goes */
	bool persistent;	/* never churned */
	/* Churn state, under the busy bit. */
	unsigned long busy;
	enum kps_state state;
	/* Set before registering, cleared once unregister has returned. */
	int alive;
	atomic_long_t pre, post, entry, ret;
};

struct kps_target {
	const char *sym;
	bool scan;		/* look for boundaries; else use @offsets */
	bool print;
	int offsets[8];		/* -1 ends */
};

static const struct kps_target kps_targets[] = {
	{ "kps_short",	true,	true },
	{ "kps_count",	true,	false },
	{ "kps_call",	true,	true },
	{ "snprintf",	true,	false },
	{ "vsnprintf",	true,	false },
	{ "sort_r",	true,	true },
#ifdef CONFIG_X86
	/* kp_target_asm: boundaries in its nops with or without endbr64 */
	{ "kp_target:kp_target_asm", false, false, { 0, 5, 6, 7, -1 } },
#elif defined(CONFIG_ARM64)
	/* kp_target_asm: bti, nop, adr, ldr literal, b (see its source) */
	{ "kp_target:kp_target_asm", false, false, { 0, 8, 20, 28, 40, -1 } },
#elif defined(CONFIG_PPC64)
	/* kp_target_asm: nop, nop, nop, lis, sldi, blr (see its source) */
	{ "kp_target:kp_target_asm", false, false, { 0, 8, 20, 24, 32, 44, -1 } },
#elif defined(CONFIG_ARM)
	/* kp_target_asm: nop, nop, adr, ldr literal, b (see its source) */
	{ "kp_target:kp_target_asm", false, false, { 0, 8, 16, 24, 36, -1 } },
#elif defined(CONFIG_S390)
	/* kp_target_asm: nopr, nopr, lgrl, jnz, br (see its source) */
	{ "kp_target:kp_target_asm", false, false, { 0, 4, 8, 18, 26, -1 } },
#else
	/* kp_target_asm: nop, nop, auipc, beqz, j (see its source) */
	{ "kp_target:kp_target_asm", false, false, { 0, 8, 16, 24, 28, -1 } },
#endif
	{ "kp_target:kp_target_func", false, false, { 0, -1 } },
};

static struct kps_probe kps_pool[KPS_POOL_MAX];
static unsigned int kps_npool;

/* Persistent probes, counted exactly in the last phase. */
enum {
	KPS_P_COUNT_ENTRY,	/* kps_count entry: ftrace site */
	KPS_P_COUNT_RET,	/* kretprobe on kps_count, same site */
	KPS_P_SHORT_ENTRY,	/* kps_short entry: x86 push, optimizable */
	KPS_P_SHORT_POST,	/* kps_short +KPS_SHORT_POST: a post handler */
	KPS_P_SHORT_RET,	/* kretprobe on kps_short */
	KPS_NPERSIST
};
static struct kps_probe kps_persist[KPS_NPERSIST];

/* Violations and statistics. */
static atomic_long_t kps_late;		/* handler after unregister returned */
static atomic_long_t kps_mixup;		/* instance data of another probe */
static atomic_long_t kps_bad;		/* wrong result from a probed function */
static atomic_long_t kps_leftover;	/* failed registration left it in */
static atomic_long_t kps_nreg, kps_nunreg, kps_ntoggle, kps_nbatch;
static atomic_long_t kps_nfail[KPS_MAXERR];
static atomic_long_t kps_calls;

struct kps_ri {
	u64 magic;		/* 64 bits on 32-bit arm too */
	struct kps_probe *owner;
};
#define KPS_MAGIC	0x6b707374726573ULL

static void kps_check_alive(struct kps_probe *e)
{
	if (!READ_ONCE(e->alive))
		atomic_long_inc(&kps_late);
}

/* Printing from a handler re-enters probes on snprintf and vsnprintf. */
static void kps_print(struct pt_regs *regs)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lx", instruction_pointer(regs));
}

static int kps_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct kps_probe *e = container_of(p, struct kps_probe, rp.kp);

	kps_check_alive(e);
	atomic_long_inc(&e->pre);
	if (e->print)
		kps_print(regs);
	return 0;
}

static void kps_post(struct kprobe *p, struct pt_regs *regs,
		     unsigned long flags)
{
	struct kps_probe *e = container_of(p, struct kps_probe, rp.kp);

	kps_check_alive(e);
	atomic_long_inc(&e->post);
}

/* Our kprobes promise get_kretprobe() inside handlers (upstream does not). */
static atomic_long_t kps_no_rp;

static struct kps_probe *kps_of(struct kretprobe_instance *ri)
{
	struct kretprobe *rp = get_kretprobe(ri);

	if (!rp) {
		atomic_long_inc(&kps_no_rp);
		return NULL;
	}
	return container_of(rp, struct kps_probe, rp);
}

static int kps_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kps_probe *e = kps_of(ri);
	struct kps_ri *d = (struct kps_ri *)ri->data;

	if (!e)
		return 1;
	kps_check_alive(e);
	d->magic = KPS_MAGIC;
	d->owner = e;
	atomic_long_inc(&e->entry);
	return 0;
}

static int kps_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kps_probe *e = kps_of(ri);
	struct kps_ri *d = (struct kps_ri *)ri->data;

	if (!e)
		return 0;
	kps_check_alive(e);
	if (d->magic != KPS_MAGIC || d->owner != e)
		atomic_long_inc(&kps_mixup);
	d->magic = 0;
	atomic_long_inc(&e->ret);
	return 0;
}

static void kps_prepare(struct kps_probe *e, bool disabled)
{
	memset(&e->rp, 0, sizeof(e->rp));
	e->rp.kp.symbol_name = e->sym;
	e->rp.kp.offset = e->offset;
	if (disabled)
		e->rp.kp.flags = KPROBE_FLAG_DISABLED;
	switch (e->kind) {
	case KPS_RET:
		e->rp.handler = kps_ret;
		e->rp.entry_handler = kps_entry;
		e->rp.data_size = sizeof(struct kps_ri);
		e->rp.maxactive = 8;
		break;
	case KPS_POST:
		e->rp.kp.post_handler = kps_post;
		fallthrough;
	case KPS_PRE:
		e->rp.kp.pre_handler = kps_pre;
		break;
	}
}

/*
 * Errors by errno, module targets apart: while kp_target comes and goes,
 * its symbols are unknown (-ENOENT) or its text is not (yet, any more)
 * text kprobes accept (-EINVAL).  Anything else is unexpected.
 */
static atomic_long_t kps_nfail_mod[KPS_MAXERR];

static void kps_count_fail(struct kps_probe *e, int err)
{
	int i = clamp(-err, 0, KPS_MAXERR - 1);

	if (e->modular && (err == -ENOENT || err == -EINVAL))
		atomic_long_inc(&kps_nfail_mod[i]);
	else
		atomic_long_inc(&kps_nfail[i]);
}

/* After a failed registration the probe must not be known to kprobes. */
static void kps_check_not_registered(struct kps_probe *e)
{
	if (disable_kprobe(&e->rp.kp) != -EINVAL)
		atomic_long_inc(&kps_leftover);
}

static int kps_register(struct kps_probe *e, bool disabled)
{
	int ret;

	kps_prepare(e, disabled);
	WRITE_ONCE(e->alive, 1);
	if (e->kind == KPS_RET)
		ret = register_kretprobe(&e->rp);
	else
		ret = register_kprobe(&e->rp.kp);
	if (ret) {
		WRITE_ONCE(e->alive, 0);
		kps_check_not_registered(e);
		kps_count_fail(e, ret);
		return ret;
	}
	e->state = KPS_REG;
	atomic_long_inc(&kps_nreg);
	return 0;
}

static void kps_unregister(struct kps_probe *e)
{
	if (e->kind == KPS_RET)
		unregister_kretprobe(&e->rp);
	else
		unregister_kprobe(&e->rp.kp);
	WRITE_ONCE(e->alive, 0);
	e->state = KPS_UNREG;
	atomic_long_inc(&kps_nunreg);
}

static void kps_toggle(struct kps_probe *e)
{
	int ret;

	if (kprobe_disabled(&e->rp.kp))
		ret = enable_kprobe(&e->rp.kp);
	else
		ret = disable_kprobe(&e->rp.kp);
	/* Probes whose module went away cannot be enabled again. */
	if (ret && !kprobe_gone(&e->rp.kp))
		kps_count_fail(e, ret);
	atomic_long_inc(&kps_ntoggle);
}

/* ---------------------------------------------------------------------- */
/* Churn                                                                   */
/* ---------------------------------------------------------------------- */

static bool kps_lock(struct kps_probe *e)
{
	return !test_and_set_bit_lock(0, &e->busy);
}

static void kps_unlock(struct kps_probe *e)
{
	clear_bit_unlock(0, &e->busy);
}

static void kps_churn_one(u32 r)
{
	struct kps_probe *e = &kps_pool[r % kps_npool];

	if (!kps_lock(e))
		return;
	r >>= 8;
	if (e->state == KPS_UNREG)
		kps_register(e, !(r & 7));
	else if (r & 1)
		kps_unregister(e);
	else
		kps_toggle(e);
	kps_unlock(e);
}

/* Lock up to KPS_BATCH pool probes of one type (kretprobe or not). */
static int kps_pick(u32 r, bool ret, enum kps_state state,
		    struct kps_probe **picked)
{
	unsigned int i, n = 0;
	struct kps_probe *e;

	for (i = 0; i < kps_npool && n < KPS_BATCH; i++) {
		e = &kps_pool[(r + i) % kps_npool];
		if ((e->kind == KPS_RET) != ret || !kps_lock(e))
			continue;
		if (e->state != state) {
			kps_unlock(e);
			continue;
		}
		picked[n++] = e;
	}
	return n;
}

/*
 * A batch fails as a whole, with the error of the member that failed: when
 * a kp_target member is in it, that is the one expected to.
 */
static struct kps_probe *kps_batch_blame(struct kps_probe **e, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (e[i]->modular)
			return e[i];
	return e[0];
}

static void kps_batch_register(struct kps_probe **e, int n, bool ret)
{
	struct kretprobe *rps[KPS_BATCH];
	struct kprobe *kps[KPS_BATCH];
	int i, err;

	for (i = 0; i < n; i++) {
		kps_prepare(e[i], false);
		WRITE_ONCE(e[i]->alive, 1);
		rps[i] = &e[i]->rp;
		kps[i] = &e[i]->rp.kp;
	}
	err = ret ? register_kretprobes(rps, n) : register_kprobes(kps, n);
	for (i = 0; i < n; i++) {
		if (err) {
			WRITE_ONCE(e[i]->alive, 0);
			kps_check_not_registered(e[i]);
		} else {
			e[i]->state = KPS_REG;
		}
	}
	if (err)
		kps_count_fail(kps_batch_blame(e, n), err);
	else
		atomic_long_add(n, &kps_nreg);
}

static void kps_batch_unregister(struct kps_probe **e, int n, bool ret)
{
	struct kretprobe *rps[KPS_BATCH];
	struct kprobe *kps[KPS_BATCH];
	int i;

	for (i = 0; i < n; i++) {
		rps[i] = &e[i]->rp;
		kps[i] = &e[i]->rp.kp;
	}
	if (ret)
		unregister_kretprobes(rps, n);
	else
		unregister_kprobes(kps, n);
	for (i = 0; i < n; i++) {
		WRITE_ONCE(e[i]->alive, 0);
		e[i]->state = KPS_UNREG;
	}
	atomic_long_add(n, &kps_nunreg);
}

static void kps_churn_batch(u32 r)
{
	struct kps_probe *e[KPS_BATCH];
	bool ret = r & 0x100;
	bool reg = r & 0x200;
	int i, n;

	n = kps_pick(r, ret, reg ? KPS_UNREG : KPS_REG, e);
	if (n) {
		if (reg)
			kps_batch_register(e, n, ret);
		else
			kps_batch_unregister(e, n, ret);
		atomic_long_inc(&kps_nbatch);
	}
	for (i = 0; i < n; i++)
		kps_unlock(e[i]);
}

static int kps_churn_fn(void *unused)
{
	while (!kthread_should_stop()) {
		u32 r = get_random_u32();

		if ((r & 0xf000000) == 0)
			kps_churn_batch(r);
		else
			kps_churn_one(r);
		cond_resched();
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Callers                                                                 */
/* ---------------------------------------------------------------------- */

static int kps_cmp(const void *a, const void *b, const void *priv)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void kps_call_all(long x)
{
	int v[8], i;
	char buf[32];

	if (kps_short(x) != KPS_SHORT(x))
		atomic_long_inc(&kps_bad);
	if (kps_count(x) != KPS_COUNT(x))
		atomic_long_inc(&kps_bad);
	if (kps_call(x) != KPS_CALL(x))
		atomic_long_inc(&kps_bad);
	if (snprintf(buf, sizeof(buf), "%05ld:%s", x & 0xffff, "kps") != 9 ||
	    buf[5] != ':')
		atomic_long_inc(&kps_bad);
	for (i = 0; i < ARRAY_SIZE(v); i++)
		v[i] = (int)((x * 7 + i * 13) % 17);
	sort_r(v, ARRAY_SIZE(v), sizeof(v[0]), kps_cmp, NULL, NULL);
	for (i = 1; i < ARRAY_SIZE(v); i++)
		if (v[i - 1] > v[i])
			atomic_long_inc(&kps_bad);
}

struct kps_caller {
	struct task_struct *task;
	unsigned long limit;	/* calls of the exact phase; 0: until stopped */
	unsigned long done;
	struct completion finished;
};

static int kps_caller_fn(void *data)
{
	struct kps_caller *c = data;
	unsigned long i;

	for (i = 0; !kthread_should_stop(); i++) {
		if (c->limit) {
			if (c->done == c->limit) {
				complete(&c->finished);
				break;
			}
			/*
			 * Each called every time: a wrong result of one must
			 * not take a call from the other's exact count.
			 */
			if (kps_short(i) != KPS_SHORT(i))
				atomic_long_inc(&kps_bad);
			if (kps_count(i) != KPS_COUNT(i))
				atomic_long_inc(&kps_bad);
			c->done++;
		} else {
			kps_call_all(i);
			atomic_long_inc(&kps_calls);
		}
		/* The optimizer waits for every task to pass a quiescent state. */
		if ((i & 7) == 7)
			cond_resched_tasks_rcu_qs();
	}
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

#define KPS_NCALLERS	2

static struct task_struct *kps_churners[8];
static struct kps_caller kps_callers[KPS_NCALLERS];

static int kps_start_callers(unsigned long limit)
{
	struct task_struct *t;
	int i;

	for (i = 0; i < KPS_NCALLERS; i++) {
		struct kps_caller *c = &kps_callers[i];

		c->limit = limit;
		c->done = 0;
		init_completion(&c->finished);
		t = kthread_create(kps_caller_fn, c, "kps_call/%d", i);
		if (IS_ERR(t))
			return PTR_ERR(t);
		kthread_bind(t, i % num_online_cpus());
		get_task_struct(t);
		c->task = t;
		wake_up_process(t);
	}
	return 0;
}

static void kps_stop_callers(void)
{
	int i;

	for (i = 0; i < KPS_NCALLERS; i++) {
		if (kps_callers[i].task)
			kthread_stop_put(kps_callers[i].task);
		kps_callers[i].task = NULL;
	}
}

static int kps_start_churn(void)
{
	struct task_struct *t;
	int i;

	for (i = 0; i < min_t(int, nchurn, ARRAY_SIZE(kps_churners)); i++) {
		t = kthread_run(kps_churn_fn, NULL, "kps_churn/%d", i);
		if (IS_ERR(t))
			return PTR_ERR(t);
		get_task_struct(t);
		kps_churners[i] = t;
	}
	return 0;
}

static void kps_stop_churn(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(kps_churners); i++) {
		if (kps_churners[i])
			kthread_stop_put(kps_churners[i]);
		kps_churners[i] = NULL;
	}
}

/* ---------------------------------------------------------------------- */
/* Setting up                                                              */
/* ---------------------------------------------------------------------- */

static void kps_add(const char *sym, unsigned int off, enum kps_kind kind,
		    bool print)
{
	struct kps_probe *e;

	if (kps_npool == KPS_POOL_MAX)
		return;
	e = &kps_pool[kps_npool++];
	e->sym = sym;
	e->offset = off;
	e->kind = kind;
	e->print = print && kind != KPS_RET;
	e->modular = strchr(sym, ':') != NULL;
}

/* Is @sym+@off an instruction boundary we may probe?  Asks kprobes. */
static bool kps_probeable(const char *sym, unsigned int off,
			  struct kprobe *p)
{
	memset(p, 0, sizeof(*p));
	p->symbol_name = sym;
	p->offset = off;
	p->pre_handler = kps_pre;
	p->flags = KPROBE_FLAG_DISABLED;
	return register_kprobe(p) == 0;
}

/*
 * The pool: for each target, every probeable boundary in its first bytes
 * gets a probe, pre-only and pre+post by turns; the first one (the entry)
 * also gets a kretprobe and a second pre-only probe.
 */
static int __init kps_scan(const struct kps_target *tg)
{
	static struct kprobe scan[KPS_SCAN_BYTES];
	struct kprobe *found[KPS_SCAN_BYTES];
	unsigned int off, n = 0, k;

	for (off = 0; off < KPS_SCAN_BYTES; off++) {
		if (kps_probeable(tg->sym, off, &scan[n])) {
			found[n] = &scan[n];
			n++;
		}
	}
	if (!n) {
		pr_err("no probeable boundary in %s\n", tg->sym);
		return -ENOENT;
	}
	for (k = 0; k < n; k++)
		kps_add(tg->sym, scan[k].offset, k & 1 ? KPS_POST : KPS_PRE,
			tg->print);
	kps_add(tg->sym, scan[0].offset, KPS_PRE, false);
	kps_add(tg->sym, 0, KPS_RET, false);
	unregister_kprobes(found, n);
	return 0;
}

static int __init kps_build_pool(void)
{
	unsigned int t, k;
	int ret;

	for (t = 0; t < ARRAY_SIZE(kps_targets); t++) {
		const struct kps_target *tg = &kps_targets[t];

		if (tg->scan) {
			ret = kps_scan(tg);
			if (ret)
				return ret;
			continue;
		}
		for (k = 0; tg->offsets[k] >= 0; k++)
			kps_add(tg->sym, tg->offsets[k],
				k & 1 ? KPS_POST : KPS_PRE, false);
		kps_add(tg->sym, 0, KPS_RET, false);
	}
	return 0;
}

/*
 * Persistent probes: kps_count's entry (an ftrace site on x86) with a
 * kretprobe on it, kps_short's entry (x86: push, optimizable, a 1-byte
 * first instruction) with a kretprobe, and a post-handler probe a few bytes
 * in (x86: +5, a mov, stepped; arm64: +12, an adr, simulated; riscv64: +4,
 * an auipc, simulated; powerpc64: +20, a branch not taken, emulated;
 * 32-bit arm: +4, an adr, simulated; s390x: +10, a larl, stepped from its
 * slot with the displacement rewritten).
 */
#if defined(CONFIG_X86)
#define KPS_SHORT_POST	5
#elif defined(CONFIG_ARM64)
#define KPS_SHORT_POST	12
#elif defined(CONFIG_PPC64)
#define KPS_SHORT_POST	20
#elif defined(CONFIG_ARM)
#define KPS_SHORT_POST	4
#elif defined(CONFIG_S390)
#define KPS_SHORT_POST	10
#else
#define KPS_SHORT_POST	4
#endif

static int __init kps_register_persistent(void)
{
	static const struct {
		const char *sym;
		unsigned int off;
		enum kps_kind kind;
	} def[KPS_NPERSIST] = {
		[KPS_P_COUNT_ENTRY] = { "kps_count", 0, KPS_PRE },
		[KPS_P_COUNT_RET] = { "kps_count", 0, KPS_RET },
		[KPS_P_SHORT_ENTRY] = { "kps_short", 0, KPS_PRE },
		[KPS_P_SHORT_POST] = { "kps_short", KPS_SHORT_POST, KPS_POST },
		[KPS_P_SHORT_RET] = { "kps_short", 0, KPS_RET },
	};
	int i, ret;

	for (i = 0; i < KPS_NPERSIST; i++) {
		struct kps_probe *e = &kps_persist[i];

		e->sym = def[i].sym;
		e->offset = def[i].off;
		e->kind = def[i].kind;
		e->persistent = true;
		ret = kps_register(e, false);
		if (ret) {
			pr_err("persistent probe %s+%u: %d\n", e->sym,
			       e->offset, ret);
			while (--i >= 0)
				kps_unregister(&kps_persist[i]);
			return ret;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The text must come back as it was                                       */
/* ---------------------------------------------------------------------- */

#define KPS_TEXT_BYTES	48

/* Our asm function has no ftrace site: every byte must come back. */
static u8 kps_text_before[KPS_TEXT_BYTES];

static void __init kps_snapshot(void)
{
	memcpy(kps_text_before, (void *)kps_short, KPS_TEXT_BYTES);
}

static bool kps_text_restored(void)
{
	return !memcmp(kps_text_before, (void *)kps_short, KPS_TEXT_BYTES);
}

/* ---------------------------------------------------------------------- */
/* The end: exact phase, teardown, report                                  */
/* ---------------------------------------------------------------------- */

static DEFINE_MUTEX(kps_result_mutex);
static char *kps_report;
static size_t kps_report_len;
/*
 * Seconds on the monotonic clock, as the guest script's date(1): with a
 * periodic tick under TCG, lost timer interrupts make jiffies fall behind.
 */
static time64_t kps_started;

static __printf(3, 4) void kps_say(bool ok, const char *what,
				   const char *fmt, ...)
{
	size_t room = PAGE_SIZE * 2 - kps_report_len;
	va_list args;

	kps_report_len += scnprintf(kps_report + kps_report_len, room,
				    "%s - %s", ok ? "ok" : "not ok", what);
	room = PAGE_SIZE * 2 - kps_report_len;
	va_start(args, fmt);
	kps_report_len += vscnprintf(kps_report + kps_report_len, room, fmt,
				     args);
	va_end(args);
	kps_report_len += scnprintf(kps_report + kps_report_len,
				    PAGE_SIZE * 2 - kps_report_len, "\n");
}

static void kps_zero(struct kps_probe *e)
{
	atomic_long_set(&e->pre, 0);
	atomic_long_set(&e->post, 0);
	atomic_long_set(&e->entry, 0);
	atomic_long_set(&e->ret, 0);
	e->rp.kp.nmissed = 0;
	e->rp.nmissed = 0;
}

/*
 * What the exact phase saw, reported once the pool is unregistered: its
 * probes cover every boundary of vsnprintf(), which kps_say() runs, and
 * where a probed instruction does not run as it should (QEMU's s390x
 * loses the condition code of a stepped one) the report itself would be
 * garbled.
 */
static struct {
	unsigned long calls;
	int err;
	bool optimized[KPS_NPERSIST], ftrace[KPS_NPERSIST];
} kps_exact;

static bool kps_exact_ok(struct kps_probe *e, unsigned long calls,
			 bool optimized, bool ftrace)
{
	unsigned long pre = atomic_long_read(&e->pre);
	unsigned long post = atomic_long_read(&e->post);
	unsigned long entry = atomic_long_read(&e->entry);
	unsigned long ret = atomic_long_read(&e->ret);
	bool ok;

	switch (e->kind) {
	case KPS_RET:
		ok = entry + e->rp.nmissed == calls && ret == entry;
		break;
	case KPS_POST:
		ok = pre == calls && post == calls;
		break;
	default:
		ok = pre == calls;
		break;
	}
	ok &= e->rp.kp.nmissed == 0;
	kps_say(ok, "exact phase: ", "%s+%u (%s%s): %lu calls, pre %lu post %lu entry %lu return %lu, missed %lu/%d",
		e->sym, e->offset,
		e->kind == KPS_RET ? "kretprobe" :
		e->kind == KPS_POST ? "post" : "pre",
		optimized ? ", optimized" : ftrace ? ", ftrace" : "",
		calls, pre, post, entry, ret, e->rp.kp.nmissed, e->rp.nmissed);
	return ok;
}

/*
 * The churn goes on in the same functions while both callers make a known
 * number of calls: the persistent probes must count each one.
 */
static void kps_exact_phase(void)
{
	unsigned long calls = 0;
	int i, err;

	for (i = 0; i < KPS_NPERSIST; i++)
		kps_zero(&kps_persist[i]);
	err = kps_start_churn();
	if (!err)
		err = kps_start_callers(exact_calls);
	for (i = 0; i < KPS_NCALLERS && !err; i++) {
		if (!wait_for_completion_timeout(&kps_callers[i].finished,
						 600 * HZ))
			err = -ETIMEDOUT;
		calls += kps_callers[i].done;
	}
	kps_stop_callers();
	kps_stop_churn();
	kps_exact.calls = calls;
	kps_exact.err = err;
	for (i = 0; i < KPS_NPERSIST; i++) {
		kps_exact.optimized[i] = kprobe_optimized(&kps_persist[i].rp.kp);
		kps_exact.ftrace[i] = kprobe_ftrace(&kps_persist[i].rp.kp);
	}
}

static void kps_exact_report(void)
{
	int i;

	if (kps_exact.err) {
		kps_say(false, "exact phase", ": could not run (%d)",
			kps_exact.err);
		return;
	}
	for (i = 0; i < KPS_NPERSIST; i++)
		kps_exact_ok(&kps_persist[i], kps_exact.calls,
			     kps_exact.optimized[i], kps_exact.ftrace[i]);
}

/* Unregister what the churn left registered, in batches like a user. */
static void kps_unregister_pool(void)
{
	struct kps_probe *e[KPS_BATCH];
	int n, ret, more;

	do {
		more = 0;
		for (ret = 0; ret < 2; ret++) {
			n = kps_pick(0, ret, KPS_REG, e);
			if (n)
				kps_batch_unregister(e, n, ret);
			more += n;
			while (n > 0)
				kps_unlock(e[--n]);
		}
	} while (more);
}

/* "-2:17 -22:3" for the non-zero counts of @counts; the total in @total. */
static void kps_errnos(atomic_long_t *counts, char *buf, size_t size,
		       unsigned long *total)
{
	size_t len = 0;
	unsigned long n;
	int err;

	*total = 0;
	buf[0] = 0;
	for (err = 0; err < KPS_MAXERR; err++) {
		n = atomic_long_read(&counts[err]);
		if (!n)
			continue;
		len += scnprintf(buf + len, size - len, " -%d:%lu", err, n);
		*total += n;
	}
}

static void kps_errors(void)
{
	char bad[128], mod[128];
	unsigned long nbad, nmod;

	kps_errnos(kps_nfail, bad, sizeof(bad), &nbad);
	kps_errnos(kps_nfail_mod, mod, sizeof(mod), &nmod);
	kps_say(!nbad, "only expected errors",
		" (unexpected, by errno:%s; expected on kp_target:%s)",
		nbad ? bad : " none", nmod ? mod : " none");
}

static void kps_finish(void)
{
	unsigned long late, calls, t = ktime_get_seconds() - kps_started;
	unsigned long nreg, nbatch, nunreg, ntoggle;
	int i;

	kps_stop_churn();
	kps_stop_callers();
	calls = atomic_long_read(&kps_calls);
	nreg = atomic_long_read(&kps_nreg);
	nbatch = atomic_long_read(&kps_nbatch);
	nunreg = atomic_long_read(&kps_nunreg);
	ntoggle = atomic_long_read(&kps_ntoggle);

	kps_exact_phase();

	kps_unregister_pool();
	/* No probe on vsnprintf() from here on: the report can be written. */
	kps_say(calls > 0, "churn ran", ": %lu s, %lu registrations (%lu batches), %lu unregistrations, %lu enable/disable, %lu rounds of calls",
		t, nreg, nbatch, nunreg, ntoggle, calls);
	kps_exact_report();
	for (i = 0; i < KPS_NPERSIST; i++)
		kps_unregister(&kps_persist[i]);
	/* Nothing may fire now. */
	late = atomic_long_read(&kps_late);
	for (i = 0; i < 100; i++)
		kps_call_all(i);
	kps_say(atomic_long_read(&kps_late) == late,
		"no handler after everything was unregistered", "%s", "");
	kps_say(!late, "no handler ran after its unregister returned",
		" (%lu did)", late);
	kps_say(!atomic_long_read(&kps_no_rp),
		"get_kretprobe() was never NULL inside a handler",
		" (%ld times it was)", atomic_long_read(&kps_no_rp));
	kps_say(!atomic_long_read(&kps_mixup),
		"return handlers got their own instances", " (%ld mixed up)",
		atomic_long_read(&kps_mixup));
	kps_say(!atomic_long_read(&kps_bad),
		"probed functions computed the right results", " (%ld wrong)",
		atomic_long_read(&kps_bad));
	kps_say(!atomic_long_read(&kps_leftover),
		"failed registrations left nothing registered", " (%ld did)",
		atomic_long_read(&kps_leftover));
	kps_errors();
	kps_say(kps_text_restored(), "kps_short's text restored", "%s", "");
}

static int kps_result_show(struct seq_file *m, void *v)
{
	mutex_lock(&kps_result_mutex);
	if (!kps_report_len)
		kps_finish();
	seq_write(m, kps_report, kps_report_len);
	mutex_unlock(&kps_result_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kps_result);

static struct dentry *kps_dir;

static int __init kps_init(void)
{
	int ret;

	kps_report = kzalloc(PAGE_SIZE * 2, GFP_KERNEL);
	if (!kps_report)
		return -ENOMEM;
	kps_snapshot();
	ret = kps_build_pool();
	if (!ret)
		ret = kps_register_persistent();
	if (ret)
		goto fail;
	pr_info("%u pool probes, %d persistent, %u s of churn\n", kps_npool,
		KPS_NPERSIST, seconds);

	kps_started = ktime_get_seconds();
	ret = kps_start_callers(0);
	if (!ret)
		ret = kps_start_churn();
	if (ret) {
		kps_stop_churn();
		kps_stop_callers();
		kps_unregister_pool();
		for (ret = 0; ret < KPS_NPERSIST; ret++)
			kps_unregister(&kps_persist[ret]);
		ret = -ENOMEM;
		goto fail;
	}
	kps_dir = debugfs_create_dir("kp_stress", NULL);
	debugfs_create_file("result", 0400, kps_dir, NULL, &kps_result_fops);
	return 0;
fail:
	kfree(kps_report);
	return ret;
}

static void __exit kps_exit(void)
{
	debugfs_remove_recursive(kps_dir);
	mutex_lock(&kps_result_mutex);
	if (!kps_report_len)
		kps_finish();
	mutex_unlock(&kps_result_mutex);
	kfree(kps_report);
}

module_init(kps_init);
module_exit(kps_exit);
MODULE_DESCRIPTION("kprobes stress test: probes coming and going on a busy system");
MODULE_LICENSE("GPL");
