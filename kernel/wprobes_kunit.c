// SPDX-License-Identifier: GPL-2.0
/*
 * Boot-time KUnit suite for watchpoint probes (CONFIG_WPROBES_KUNIT_TEST).
 *
 * The watched data lives in this file: a buffer whose bytes are probed at
 * each length, a variable and an array found by symbol, a per-CPU variable
 * and a few more variables for running out of debug registers.  Stores and
 * loads go through noinline helpers, so that the handler's regs->ip can be
 * checked to point into the helper that made the access.
 *
 * Handlers only record (atomics, plain stores); every check is made by the
 * test thread afterwards.  Each probe a test registers is also handed to a
 * KUnit action that unregisters it however the test ends.  The hotplug
 * case takes the last CPU offline and brings it back.
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/hw_breakpoint.h>
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/smp.h>
#include <linux/workqueue.h>
#include <linux/wprobes.h>
#include <asm/hw_breakpoint.h>

/* Found by symbol name: keep them global and uniquely named. */
u32 wprobe_kunit_var;
u64 wprobe_kunit_arr[4];
DEFINE_PER_CPU(unsigned long, wprobe_kunit_pcpu);

/*
 * The longest watch: a word, 8 bytes on x86_64, 4 on i386 (whose debug
 * registers take no 8-byte length).
 */
#define WPK_WORD	sizeof(long)

static u64 wpk_buf[2] __aligned(16);
static u64 wpk_vars[HBP_NUM + 2];

/* What the handlers saw. */
static struct {
	atomic_t hits;
	u64 old;
	u64 new;
	unsigned long ip;
	bool running_ok;
	int recurse;		/* stores the handler makes itself */
	u64 recurse_val;
} wpk;

static void wpk_reset(void)
{
	atomic_set(&wpk.hits, 0);
	wpk.old = 0;
	wpk.new = 0;
	wpk.ip = 0;
	wpk.running_ok = false;
	wpk.recurse = 0;
}

static noinline void wpk_store(void *p, unsigned int len, u64 v)
{
	switch (len) {
	case 1:
		WRITE_ONCE(*(u8 *)p, v);
		break;
	case 2:
		WRITE_ONCE(*(u16 *)p, v);
		break;
	case 4:
		WRITE_ONCE(*(u32 *)p, v);
		break;
	default:
		WRITE_ONCE(*(u64 *)p, v);
		break;
	}
}

static noinline u64 wpk_load(void *p, unsigned int len)
{
	switch (len) {
	case 1:
		return READ_ONCE(*(u8 *)p);
	case 2:
		return READ_ONCE(*(u16 *)p);
	case 4:
		return READ_ONCE(*(u32 *)p);
	default:
		return READ_ONCE(*(u64 *)p);
	}
}

static bool wpk_ip_in(unsigned long ip, void *fn)
{
	return ip > (unsigned long)fn && ip < (unsigned long)fn + 256;
}

static void wpk_handler(struct wprobe *wp, struct pt_regs *regs)
{
	wpk.old = wprobe_old_value();
	wpk.new = wprobe_new_value();
	wpk.ip = instruction_pointer(regs);
	wpk.running_ok = wprobe_running() == wp;
	if (wpk.recurse > 0) {
		wpk.recurse--;
		wpk_store(wp->addr, wp->len, wpk.recurse_val);
	}
	atomic_inc(&wpk.hits);
}

static void wpk_unregister_action(void *data)
{
	struct wprobe *wp = data;

	if (wp->state)
		unregister_wprobe(wp);
}

/* A zeroed probe, unregistered at the end of the test if registered. */
static struct wprobe *wpk_new(struct kunit *test, void *addr,
			      unsigned int len, enum wprobe_kind kind)
{
	struct wprobe *wp = kunit_kzalloc(test, sizeof(*wp), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, wp);
	wp->addr = addr;
	wp->len = len;
	wp->kind = kind;
	wp->handler = wpk_handler;
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, wpk_unregister_action,
						  wp));
	return wp;
}

static const u64 wpk_pattern = 0x8877665544332211ULL;

/* Every length a watch can have here. */
static const unsigned int wpk_lens[] = {
	1, 2, 4,
#ifdef CONFIG_64BIT
	8,
#endif
};

static u64 wpk_mask(unsigned int len)
{
	return len == 8 ? ~0ULL : (1ULL << (len * 8)) - 1;
}

/* Write watches of each length: old and new values, ip, neighbours. */
static void wpk_test_write_lengths(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(wpk_lens); i++) {
		unsigned int len = wpk_lens[i];
		/* Watch the bytes at offset len (offset 0 for len 8). */
		u8 *p = (u8 *)wpk_buf + (len == 8 ? 0 : len);
		u64 newv = 0xa5a5a5a5a5a5a5a5ULL & wpk_mask(len);
		struct wprobe *wp;

		wpk_buf[0] = wpk_pattern;
		wpk_buf[1] = wpk_pattern;
		wpk_reset();
		wp = wpk_new(test, p, len, WPROBE_WRITE);
		KUNIT_ASSERT_EQ_MSG(test, 0, register_wprobe(wp), "len %u", len);

		/* A load does not fire a write watch. */
		KUNIT_EXPECT_EQ(test, wpk_load(p, len),
				wpk_load((u8 *)&wpk_pattern + (p - (u8 *)wpk_buf),
					 len));
		KUNIT_EXPECT_EQ_MSG(test, 0, atomic_read(&wpk.hits),
				    "len %u: a load fired a write watch", len);
		/* The byte just below the watched ones is not watched. */
		if (len != 8) {
			wpk_store(p - 1, 1, 0x42);
			KUNIT_EXPECT_EQ_MSG(test, 0, atomic_read(&wpk.hits),
					    "len %u: a store next to it fired", len);
		}
		/* Nor the bytes just above. */
		wpk_store(p + len, 1, 0x24);
		KUNIT_EXPECT_EQ_MSG(test, 0, atomic_read(&wpk.hits),
				    "len %u: a store above it fired", len);

		wpk_store(p, len, newv);
		KUNIT_EXPECT_EQ_MSG(test, 1, atomic_read(&wpk.hits), "len %u", len);
		KUNIT_EXPECT_EQ_MSG(test, wpk.old,
				    wpk_load((u8 *)&wpk_pattern + (p - (u8 *)wpk_buf), len),
				    "len %u: old value", len);
		KUNIT_EXPECT_EQ_MSG(test, wpk.new, newv, "len %u: new value", len);
		KUNIT_EXPECT_TRUE_MSG(test, wpk_ip_in(wpk.ip, wpk_store),
				      "len %u: ip %pS is not in wpk_store()",
				      len, (void *)wpk.ip);
		KUNIT_EXPECT_TRUE(test, wpk.running_ok);
		KUNIT_EXPECT_EQ(test, 1UL, wprobe_hits(wp));
		KUNIT_EXPECT_EQ(test, 0UL, wprobe_missed(wp));

		/* A second store: its old value is the first one's new. */
		wpk_store(p, len, 0x3c & wpk_mask(len));
		KUNIT_EXPECT_EQ(test, 2, atomic_read(&wpk.hits));
		KUNIT_EXPECT_EQ(test, wpk.old, newv);
		KUNIT_EXPECT_EQ(test, wpk.new, 0x3cULL);

		unregister_wprobe(wp);
		KUNIT_EXPECT_NULL(test, wp->state);
		/* Unregistered: no more hits. */
		wpk_store(p, len, 1);
		KUNIT_EXPECT_EQ(test, 2, atomic_read(&wpk.hits));
	}
}

/* Read-write watches fire on loads too, with old == new. */
static void wpk_test_rw_lengths(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(wpk_lens); i++) {
		unsigned int len = wpk_lens[i];
		u8 *p = (u8 *)&wpk_buf[1];
		struct wprobe *wp;
		u64 v;

		wpk_buf[1] = wpk_pattern;
		wpk_reset();
		wp = wpk_new(test, p, len, WPROBE_RW);
		KUNIT_ASSERT_EQ_MSG(test, 0, register_wprobe(wp), "len %u", len);

		v = wpk_load(p, len);
		KUNIT_EXPECT_EQ(test, v, wpk_pattern & wpk_mask(len));
		KUNIT_EXPECT_EQ_MSG(test, 1, atomic_read(&wpk.hits),
				    "len %u: a load did not fire", len);
		KUNIT_EXPECT_EQ(test, wpk.old, v);
		KUNIT_EXPECT_EQ(test, wpk.new, v);
		KUNIT_EXPECT_TRUE_MSG(test, wpk_ip_in(wpk.ip, wpk_load),
				      "len %u: ip %pS is not in wpk_load()",
				      len, (void *)wpk.ip);

		wpk_store(p, len, 7);
		KUNIT_EXPECT_EQ(test, 2, atomic_read(&wpk.hits));
		KUNIT_EXPECT_EQ(test, wpk.old, v);
		KUNIT_EXPECT_EQ(test, wpk.new, 7ULL);
		unregister_wprobe(wp);
	}
}

/* Requests that must be refused, leaving nothing behind. */
static void wpk_test_refused(struct kunit *test)
{
	struct {
		unsigned int off, len;
		enum wprobe_kind kind;
	} bad[] = {
		{ 0, 3, WPROBE_WRITE }, { 0, 0, WPROBE_WRITE },
		{ 0, 16, WPROBE_WRITE }, { 0, 6, WPROBE_RW },
		{ 1, 2, WPROBE_WRITE }, { 2, 4, WPROBE_WRITE },
		{ 4, 8, WPROBE_RW }, { 6, 4, WPROBE_RW },
		{ 0, 4, 7 },
	};
	struct wprobe *wp, *good[HBP_NUM];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		void *addr = (u8 *)wpk_buf + bad[i].off;

		wp = wpk_new(test, addr, bad[i].len, bad[i].kind);
		KUNIT_EXPECT_EQ_MSG(test, -EINVAL, register_wprobe(wp),
				    "offset %u len %u kind %d", bad[i].off,
				    bad[i].len, bad[i].kind);
		KUNIT_EXPECT_NULL(test, wp->state);
		KUNIT_EXPECT_PTR_EQ(test, wp->addr, addr);
	}

	/* 8 bytes where the debug registers watch at most 4. */
	if (!IS_ENABLED(CONFIG_64BIT)) {
		wp = wpk_new(test, &wpk_buf[0], 8, WPROBE_WRITE);
		KUNIT_EXPECT_EQ(test, -EINVAL, register_wprobe(wp));
		KUNIT_EXPECT_NULL(test, wp->state);
	}

	wp = wpk_new(test, NULL, 4, WPROBE_WRITE);
	KUNIT_EXPECT_EQ(test, -EINVAL, register_wprobe(wp));	/* neither */
	wp->symbol_name = "wprobe_kunit_var";
	wp->addr = &wprobe_kunit_var;
	KUNIT_EXPECT_EQ(test, -EINVAL, register_wprobe(wp));	/* both */
	wp->addr = NULL;
	wp->symbol_name = "wprobe_kunit_no_such_symbol";
	KUNIT_EXPECT_EQ(test, -ENOENT, register_wprobe(wp));
	KUNIT_EXPECT_NULL(test, wp->addr);
	wp->symbol_name = NULL;
	wp->addr = (void *)0x1000;			/* user space */
	KUNIT_EXPECT_EQ(test, -EINVAL, register_wprobe(wp));
	KUNIT_EXPECT_NULL(test, wp->state);

	/* The same struct twice. */
	wp = wpk_new(test, &wpk_buf[0], WPK_WORD, WPROBE_WRITE);
	KUNIT_ASSERT_EQ(test, 0, register_wprobe(wp));
	KUNIT_EXPECT_EQ(test, -EINVAL, register_wprobe(wp));
	KUNIT_EXPECT_NOT_NULL(test, wp->state);
	unregister_wprobe(wp);

	/* None of the refusals kept a debug register: all are free. */
	for (i = 0; i < HBP_NUM; i++) {
		good[i] = wpk_new(test, &wpk_vars[i], WPK_WORD, WPROBE_WRITE);
		KUNIT_EXPECT_EQ_MSG(test, 0, register_wprobe(good[i]),
				    "register %u of %d", i, HBP_NUM);
	}
}

/* By symbol, with an offset; per-CPU variables watch each CPU's copy. */
static void wpk_test_symbol(struct kunit *test)
{
	struct wprobe *wp;

	wp = wpk_new(test, NULL, 4, WPROBE_WRITE);
	wp->symbol_name = "wprobe_kunit_var";
	WRITE_ONCE(wprobe_kunit_var, 11);
	wpk_reset();
	KUNIT_ASSERT_EQ(test, 0, register_wprobe(wp));
	KUNIT_EXPECT_PTR_EQ(test, wp->addr, (void *)&wprobe_kunit_var);
	KUNIT_EXPECT_FALSE(test, wp->flags & WPROBE_FLAG_PERCPU);
	wpk_store(&wprobe_kunit_var, 4, 12);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&wpk.hits));
	KUNIT_EXPECT_EQ(test, wpk.old, 11ULL);
	KUNIT_EXPECT_EQ(test, wpk.new, 12ULL);
	unregister_wprobe(wp);

	wp = wpk_new(test, NULL, WPK_WORD, WPROBE_WRITE);
	wp->symbol_name = "wprobe_kunit_arr";
	wp->offset = 16;
	wpk_reset();
	KUNIT_ASSERT_EQ(test, 0, register_wprobe(wp));
	KUNIT_EXPECT_PTR_EQ(test, wp->addr, (void *)&wprobe_kunit_arr[2]);
	wpk_store(&wprobe_kunit_arr[1], WPK_WORD, 5);
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&wpk.hits));
	wpk_store(&wprobe_kunit_arr[2], WPK_WORD, 6);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&wpk.hits));
	KUNIT_EXPECT_EQ(test, wpk.new, 6ULL);
}

static void wpk_pcpu_store(void *info)
{
	this_cpu_write(wprobe_kunit_pcpu, (unsigned long)info);
}

static void wpk_test_percpu(struct kunit *test)
{
	struct wprobe *wp;
	int cpu, other;

	for_each_possible_cpu(cpu)
		per_cpu(wprobe_kunit_pcpu, cpu) = 100 + cpu;
	wp = wpk_new(test, NULL, WPK_WORD, WPROBE_WRITE);
	wp->symbol_name = "wprobe_kunit_pcpu";
	wpk_reset();
	KUNIT_ASSERT_EQ(test, 0, register_wprobe(wp));
	KUNIT_EXPECT_TRUE(test, wp->flags & WPROBE_FLAG_PERCPU);

	cpu = get_cpu();
	this_cpu_write(wprobe_kunit_pcpu, 7);
	put_cpu();
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&wpk.hits));
	KUNIT_EXPECT_EQ(test, wpk.old, 100ULL + cpu);
	KUNIT_EXPECT_EQ(test, wpk.new, 7ULL);

	other = cpumask_any_but(cpu_online_mask, cpu);
	if (other >= nr_cpu_ids) {
		kunit_skip(test, "one CPU online: no second copy to watch");
		return;
	}
	/* Another CPU storing to its own copy: its own old value. */
	smp_call_function_single(other, wpk_pcpu_store, (void *)9UL, 1);
	KUNIT_EXPECT_EQ(test, 2, atomic_read(&wpk.hits));
	KUNIT_EXPECT_EQ(test, wpk.old, 100ULL + other);
	KUNIT_EXPECT_EQ(test, wpk.new, 9ULL);
	/* This CPU storing into another CPU's copy: not that CPU's access. */
	cpu = get_cpu();
	other = cpumask_any_but(cpu_online_mask, cpu);
	WRITE_ONCE(per_cpu(wprobe_kunit_pcpu, other), 10);
	put_cpu();
	KUNIT_EXPECT_EQ(test, 2, atomic_read(&wpk.hits));
}

/* WPROBE_FLAG_CHANGED: stores of the same value do not call the handler. */
static void wpk_test_changed(struct kunit *test)
{
	struct wprobe *wp;

	wpk_vars[0] = 5;
	wp = wpk_new(test, &wpk_vars[0], WPK_WORD, WPROBE_WRITE);
	wp->flags = WPROBE_FLAG_CHANGED;
	wpk_reset();
	KUNIT_ASSERT_EQ(test, 0, register_wprobe(wp));
	wpk_store(&wpk_vars[0], WPK_WORD, 5);
	wpk_store(&wpk_vars[0], WPK_WORD, 5);
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&wpk.hits));
	wpk_store(&wpk_vars[0], WPK_WORD, 6);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&wpk.hits));
	KUNIT_EXPECT_EQ(test, wpk.old, 5ULL);
	KUNIT_EXPECT_EQ(test, wpk.new, 6ULL);
	wpk_store(&wpk_vars[0], WPK_WORD, 6);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&wpk.hits));
	KUNIT_EXPECT_EQ(test, 1UL, wprobe_hits(wp));

	/* Without the flag, the same stores all fire. */
	unregister_wprobe(wp);
	wp->flags = 0;
	KUNIT_ASSERT_EQ(test, 0, register_wprobe(wp));
	wpk_store(&wpk_vars[0], WPK_WORD, 6);
	wpk_store(&wpk_vars[0], WPK_WORD, 6);
	KUNIT_EXPECT_EQ(test, 3, atomic_read(&wpk.hits));
	KUNIT_EXPECT_EQ(test, wpk.old, 6ULL);
}

/* A handler storing to the watched data: a missed hit, a true old value. */
static void wpk_test_recursion(struct kunit *test)
{
	struct wprobe *wp;

	wpk_vars[1] = 1;
	wp = wpk_new(test, &wpk_vars[1], WPK_WORD, WPROBE_WRITE);
	wpk_reset();
	KUNIT_ASSERT_EQ(test, 0, register_wprobe(wp));
	wpk.recurse = 1;
	wpk.recurse_val = 1000;
	wpk_store(&wpk_vars[1], WPK_WORD, 2);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&wpk.hits));
	KUNIT_EXPECT_EQ(test, wpk.new, 2ULL);
	KUNIT_EXPECT_EQ(test, READ_ONCE(wpk_vars[1]), 1000ULL);
	KUNIT_EXPECT_EQ(test, 1UL, wprobe_hits(wp));
	KUNIT_EXPECT_EQ(test, 1UL, wprobe_missed(wp));

	wpk_store(&wpk_vars[1], WPK_WORD, 3);
	KUNIT_EXPECT_EQ(test, 2, atomic_read(&wpk.hits));
	KUNIT_EXPECT_EQ(test, wpk.old, 1000ULL);
	KUNIT_EXPECT_EQ(test, wpk.new, 3ULL);
	KUNIT_EXPECT_EQ(test, 1UL, wprobe_missed(wp));
	/* Outside a handler there is no hit to describe. */
	KUNIT_EXPECT_NULL(test, wprobe_running());
	KUNIT_EXPECT_EQ(test, 0ULL, wprobe_old_value());
}

/* Every debug register taken: -EBUSY, nothing left, then reusable. */
static void wpk_test_busy(struct kunit *test)
{
	struct wprobe *wp[HBP_NUM + 1], *extra;
	int i;

	for (i = 0; i <= HBP_NUM; i++)
		wp[i] = wpk_new(test, &wpk_vars[i], WPK_WORD, WPROBE_WRITE);
	for (i = 0; i < HBP_NUM; i++)
		KUNIT_ASSERT_EQ_MSG(test, 0, register_wprobe(wp[i]),
				    "probe %d of %d", i, HBP_NUM);
	KUNIT_EXPECT_EQ(test, -EBUSY, register_wprobe(wp[HBP_NUM]));
	KUNIT_EXPECT_NULL(test, wp[HBP_NUM]->state);
	/* The refused one does not fire. */
	wpk_reset();
	wpk_store(&wpk_vars[HBP_NUM], WPK_WORD, 1);
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&wpk.hits));
	/* The others all do. */
	for (i = 0; i < HBP_NUM; i++)
		wpk_store(&wpk_vars[i], WPK_WORD, 40 + i);
	KUNIT_EXPECT_EQ(test, HBP_NUM, atomic_read(&wpk.hits));

	/* A batch that does not fit leaves none of its probes. */
	unregister_wprobe(wp[0]);
	unregister_wprobe(wp[1]);
	extra = wpk_new(test, &wpk_vars[HBP_NUM + 1], WPK_WORD, WPROBE_WRITE);
	{
		struct wprobe *batch[] = { wp[0], wp[HBP_NUM], extra };

		KUNIT_EXPECT_EQ(test, -EBUSY,
				register_wprobes(batch, ARRAY_SIZE(batch)));
		KUNIT_EXPECT_NULL(test, wp[0]->state);
		KUNIT_EXPECT_NULL(test, wp[HBP_NUM]->state);
		KUNIT_EXPECT_NULL(test, extra->state);
		/* Two fit, and now register. */
		KUNIT_EXPECT_EQ(test, 0, register_wprobes(batch, 2));
		wpk_reset();
		wpk_store(&wpk_vars[HBP_NUM], WPK_WORD, 2);
		KUNIT_EXPECT_EQ(test, 1, atomic_read(&wpk.hits));
		unregister_wprobes(batch, 2);
	}
	/* Freed registers are reusable. */
	KUNIT_EXPECT_EQ(test, 0, register_wprobe(extra));
	KUNIT_EXPECT_EQ(test, 0, register_wprobe(wp[HBP_NUM]));
	wpk_reset();
	wpk_store(&wpk_vars[HBP_NUM + 1], WPK_WORD, 3);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&wpk.hits));
	KUNIT_EXPECT_EQ(test, wpk.new, 3ULL);
}

/* disable/enable: no hit while disabled, the old value refreshed. */
static void wpk_test_disable(struct kunit *test)
{
	struct wprobe *wp;

	wpk_vars[2] = 1;
	wp = wpk_new(test, &wpk_vars[2], WPK_WORD, WPROBE_WRITE);
	wp->flags = WPROBE_FLAG_DISABLED;
	wpk_reset();
	KUNIT_ASSERT_EQ(test, 0, register_wprobe(wp));
	wpk_store(&wpk_vars[2], WPK_WORD, 2);
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&wpk.hits));
	KUNIT_EXPECT_EQ(test, 0, enable_wprobe(wp));
	KUNIT_EXPECT_FALSE(test, wprobe_disabled(wp));
	wpk_store(&wpk_vars[2], WPK_WORD, 3);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&wpk.hits));
	KUNIT_EXPECT_EQ(test, wpk.old, 2ULL);
	KUNIT_EXPECT_EQ(test, 0, disable_wprobe(wp));
	KUNIT_EXPECT_TRUE(test, wprobe_disabled(wp));
	wpk_store(&wpk_vars[2], WPK_WORD, 4);
	KUNIT_EXPECT_EQ(test, 1, atomic_read(&wpk.hits));
	KUNIT_EXPECT_EQ(test, 0, enable_wprobe(wp));
	wpk_store(&wpk_vars[2], WPK_WORD, 5);
	KUNIT_EXPECT_EQ(test, 2, atomic_read(&wpk.hits));
	KUNIT_EXPECT_EQ(test, wpk.old, 4ULL);
	unregister_wprobe(wp);
	KUNIT_EXPECT_EQ(test, -EINVAL, enable_wprobe(wp));
	KUNIT_EXPECT_EQ(test, -EINVAL, disable_wprobe(wp));
}

static atomic_t wpk_perf_hits;

static void wpk_perf_handler(struct perf_event *bp,
			     struct perf_sample_data *data,
			     struct pt_regs *regs)
{
	atomic_inc(&wpk_perf_hits);
}

/*
 * The #DB handler hands a wprobe's hits to the wprobe core instead of
 * perf_bp_event(): a plain hw_breakpoint next to a wprobe must still get
 * exactly its own hits through perf, and the wprobe only its own.
 */
static void wpk_test_perf_neighbour(struct kunit *test)
{
	struct perf_event * __percpu *bps;
	struct perf_event_attr attr;
	struct wprobe *wp;
	int i;

	wp = wpk_new(test, &wpk_vars[0], WPK_WORD, WPROBE_WRITE);
	KUNIT_ASSERT_EQ(test, 0, register_wprobe(wp));
	hw_breakpoint_init(&attr);
	attr.bp_addr = (unsigned long)&wpk_vars[1];
	attr.bp_len = WPK_WORD;
	attr.bp_type = HW_BREAKPOINT_W;
	bps = register_wide_hw_breakpoint(&attr, wpk_perf_handler, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR((void __force *)bps));

	wpk_reset();
	atomic_set(&wpk_perf_hits, 0);
	for (i = 0; i < 5; i++) {
		wpk_store(&wpk_vars[0], WPK_WORD, 10 + i);
		wpk_store(&wpk_vars[1], WPK_WORD, 20 + i);
	}
	wpk_store(&wpk_vars[1], WPK_WORD, 30);
	unregister_wide_hw_breakpoint(bps);
	KUNIT_EXPECT_EQ(test, 5, atomic_read(&wpk.hits));
	KUNIT_EXPECT_EQ(test, 5UL, wprobe_hits(wp));
	KUNIT_EXPECT_EQ(test, wpk.old, 13ULL);
	KUNIT_EXPECT_EQ(test, wpk.new, 14ULL);
	KUNIT_EXPECT_EQ(test, 6, atomic_read(&wpk_perf_hits));
}

#define WPK_STORES 500

static void wpk_store_loop(struct work_struct *work)
{
	int i;

	for (i = 0; i < WPK_STORES; i++)
		wpk_store(&wpk_vars[3], WPK_WORD, i);
}

/* Two CPUs storing at once: every store is a hit, none missed. */
static void wpk_test_two_cpus(struct kunit *test)
{
	struct work_struct work;
	struct wprobe *wp;
	int cpu, other, i;

	cpu = get_cpu();
	other = cpumask_any_but(cpu_online_mask, cpu);
	put_cpu();
	if (other >= nr_cpu_ids) {
		kunit_skip(test, "needs two online CPUs");
		return;
	}
	wp = wpk_new(test, &wpk_vars[3], WPK_WORD, WPROBE_WRITE);
	wp->handler = NULL;		/* counting only */
	KUNIT_ASSERT_EQ(test, 0, register_wprobe(wp));
	INIT_WORK_ONSTACK(&work, wpk_store_loop);
	schedule_work_on(other, &work);
	for (i = 0; i < WPK_STORES; i++)
		wpk_store(&wpk_vars[3], WPK_WORD, i);
	flush_work(&work);
	destroy_work_on_stack(&work);
	KUNIT_EXPECT_EQ(test, 2UL * WPK_STORES, wprobe_hits(wp));
	KUNIT_EXPECT_EQ(test, 0UL, wprobe_missed(wp));
}

static void wpk_ipi_store(void *info)
{
	wpk_store(info, WPK_WORD, 7);
}

/*
 * A CPU going offline and coming back watches again, for a probe
 * registered while it was offline too.  The two probes watch different
 * variables, stored in the order they were registered: QEMU's TCG reports
 * only the first of two watchpoints that match one access, and keeps a
 * later watchpoint's old hit until an access goes past it.
 */
static void wpk_test_hotplug(struct kunit *test)
{
	struct wprobe *before, *during;
	int cpu, ret;

	before = wpk_new(test, &wpk_vars[4], WPK_WORD, WPROBE_WRITE);
	during = wpk_new(test, &wpk_vars[5], WPK_WORD, WPROBE_WRITE);
	before->handler = NULL;
	during->handler = NULL;
	cpu = cpumask_last(cpu_online_mask);
	if (cpu == 0 || cpu >= nr_cpu_ids) {
		kunit_skip(test, "needs a second CPU to take offline");
		return;
	}
	KUNIT_ASSERT_EQ(test, 0, register_wprobe(before));
	smp_call_function_single(cpu, wpk_ipi_store, &wpk_vars[4], 1);
	KUNIT_EXPECT_EQ(test, 1UL, wprobe_hits(before));

	ret = remove_cpu(cpu);
	if (ret) {
		kunit_skip(test, "CPU %d cannot go offline (%d)", cpu, ret);
		return;
	}
	ret = register_wprobe(during);
	KUNIT_EXPECT_EQ(test, 0, ret);
	wpk_store(&wpk_vars[4], WPK_WORD, 2);
	wpk_store(&wpk_vars[5], WPK_WORD, 2);
	KUNIT_EXPECT_EQ(test, 2UL, wprobe_hits(before));
	KUNIT_EXPECT_EQ(test, 1UL, wprobe_hits(during));
	KUNIT_ASSERT_EQ(test, 0, add_cpu(cpu));
	KUNIT_ASSERT_TRUE(test, cpu_online(cpu));

	/* The CPU that came back watches for both probes. */
	smp_call_function_single(cpu, wpk_ipi_store, &wpk_vars[4], 1);
	smp_call_function_single(cpu, wpk_ipi_store, &wpk_vars[5], 1);
	KUNIT_EXPECT_EQ(test, 3UL, wprobe_hits(before));
	KUNIT_EXPECT_EQ(test, 2UL, wprobe_hits(during));
	KUNIT_EXPECT_EQ(test, 0UL, wprobe_missed(before));
	KUNIT_EXPECT_EQ(test, 0UL, wprobe_missed(during));
}

static struct kunit_case wpk_cases[] = {
	KUNIT_CASE(wpk_test_write_lengths),
	KUNIT_CASE(wpk_test_rw_lengths),
	KUNIT_CASE(wpk_test_refused),
	KUNIT_CASE(wpk_test_symbol),
	KUNIT_CASE(wpk_test_percpu),
	KUNIT_CASE(wpk_test_changed),
	KUNIT_CASE(wpk_test_recursion),
	KUNIT_CASE(wpk_test_busy),
	KUNIT_CASE(wpk_test_disable),
	KUNIT_CASE(wpk_test_perf_neighbour),
	KUNIT_CASE(wpk_test_two_cpus),
	KUNIT_CASE(wpk_test_hotplug),
	{}
};

static struct kunit_suite wpk_suite = {
	.name = "wprobes",
	.test_cases = wpk_cases,
};

kunit_test_suites(&wpk_suite);
