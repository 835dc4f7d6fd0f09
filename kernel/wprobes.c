// SPDX-License-Identifier: GPL-2.0-only
/*
 * Watchpoint probes: kprobes-style probes on kernel data, built on the
 * hw_breakpoint layer.
 *
 * Each registered wprobe owns one data breakpoint per online CPU, the
 * kernel perf events of a "wide" hw_breakpoint (for a per-CPU variable,
 * each on its own CPU's copy); CPUs coming online get theirs from a hotplug
 * callback, CPUs going offline give theirs back.  The hw_breakpoint layer does
 * the slot accounting against ptrace, perf and kgdb; we turn its -ENOSPC
 * into -EBUSY and say so.  A registration that fails leaves nothing behind:
 * either every CPU got its breakpoint or none has one.
 *
 * The hit path runs in the debug exception (NMI-like, interrupts off) and
 * takes no lock.  It is entered from the #DB handler's wprobe_bp_event()
 * (<linux/hw_breakpoint.h>) instead of perf_bp_event(), skipping perf's
 * sample path (some 250 of the 590 instructions a bare hw_breakpoint hit
 * costs, spent on counters nobody reads).  The hit reads the watched
 * bytes, swaps them into the probe's shadow copy to learn the old value,
 * and calls the handler with both reachable through per-CPU state.  x86
 * clears DR7 while it handles #DB, so a handler that writes the watched
 * bytes itself raises no trap: we see it by reading them again afterwards,
 * count it as a missed hit (what kprobes does with a probe hit inside a
 * handler) and take the handler's value as the shadow, so the next hit
 * still reports a true old value.
 *
 * The registered probes sit on wprobe_list under wprobe_mutex, which also
 * covers enabling, the module notifier, the hotplug callbacks and the
 * debugfs views.  Registration takes the CPU hotplug lock before it, as
 * the hotplug callbacks are called with it held.
 */
#define pr_fmt(fmt) "wprobes: " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/hw_breakpoint.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wprobes.h>
#include <asm/sections.h>

/* One CPU's view of a probe. */
struct wprobe_cpu {
	unsigned long hits;
	unsigned long missed;
	unsigned long shadow;	/* per-CPU probes: this CPU's last value */
};

/* What the core keeps for a registered probe. */
struct wprobe_state {
	struct perf_event * __percpu *bps;	/* NULL once gone */
	struct wprobe_cpu __percpu *pcpu;
	unsigned long shadow;		/* the last value seen (shared probes) */
	bool armed;			/* the breakpoints are enabled */
	struct module *mod;		/* owner of the data, for comparison */
	bool mod_init;			/* in that module's init data */
	char *where;			/* "symbol+0xoff", kept for [GONE] */
	char *modname;			/* NULL for the kernel's data */
};

/* The hit this CPU is handling, for wprobe_old_value() & co. */
struct wprobe_ctlblk {
	struct wprobe *running;
	unsigned long old;
	unsigned long new;
};

static DEFINE_PER_CPU(struct wprobe_ctlblk, wprobe_ctlblk);
static DEFINE_MUTEX(wprobe_mutex);
static LIST_HEAD(wprobe_list);
static bool wprobe_all_disarmed;	/* debugfs kprobes/enabled is 0 */

/* A watched value: at most a word (wp_check()), so a shadow holds it. */
static unsigned long wp_read(const void *p, unsigned int len)
{
	switch (len) {
	case 1:
		return READ_ONCE(*(const u8 *)p);
	case 2:
		return READ_ONCE(*(const u16 *)p);
	case 4:
		return READ_ONCE(*(const u32 *)p);
	default:
		return READ_ONCE(*(const unsigned long *)p);
	}
}

static bool wp_percpu(const struct wprobe *wp)
{
	return wp->flags & WPROBE_FLAG_PERCPU;
}

/* The address CPU @cpu watches. */
static void *wp_cpu_addr(const struct wprobe *wp, int cpu)
{
	if (wp_percpu(wp))
		return per_cpu_ptr((void __percpu __force *)wp->addr, cpu);
	return wp->addr;
}

/* ------------------------------------------------------------------ */
/* The hit path (debug exception).                                      */
/* ------------------------------------------------------------------ */

/**
 * wprobe_bp_hit() - a wprobe's data breakpoint hit
 * @bp: the breakpoint that hit (one CPU's of the probe's)
 * @data: perf's sample, unused (NULL when called by wprobe_bp_event())
 * @regs: the registers after the access
 *
 * The perf overflow handler of every wprobe breakpoint.  The x86 #DB
 * handler's wprobe_bp_event() recognises our breakpoints by it and calls
 * it directly, without perf's sample path: nothing reads the counts or
 * samples of these kernel counters, and with a period of one perf never
 * throttles them.
 */
void wprobe_bp_hit(struct perf_event *bp, struct perf_sample_data *data,
		   struct pt_regs *regs)
{
	struct wprobe *wp = bp->overflow_handler_context;
	struct wprobe_ctlblk *kcb = this_cpu_ptr(&wprobe_ctlblk);
	struct wprobe_state *st = wp->state;
	void *addr = (void *)hw_breakpoint_addr(bp);
	struct wprobe_cpu *pc = this_cpu_ptr(st->pcpu);
	unsigned long *shadow = wp_percpu(wp) ? &pc->shadow : &st->shadow;
	unsigned long old, new, after;

	if (unlikely(kcb->running)) {
		/* Only a nested exception could get here: not ours to run. */
		pc->missed++;
		return;
	}
	new = wp_read(addr, wp->len);
	old = xchg(shadow, new);
	if ((wp->flags & WPROBE_FLAG_CHANGED) && old == new)
		return;
	pc->hits++;
	if (!wp->handler)
		return;

	kcb->old = old;
	kcb->new = new;
	kcb->running = wp;
	wp->handler(wp, regs);
	kcb->running = NULL;

	/* A store by the handler itself went by without a trap. */
	after = wp_read(addr, wp->len);
	if (unlikely(after != new)) {
		pc->missed++;
		cmpxchg(shadow, new, after);
	}
}

/**
 * wprobe_running() - the wprobe whose handler this CPU is running
 *
 * Return: the probe, or NULL outside a wprobe handler.
 */
struct wprobe *wprobe_running(void)
{
	return this_cpu_read(wprobe_ctlblk.running);
}
EXPORT_SYMBOL_GPL(wprobe_running);

/**
 * wprobe_old_value() - the watched bytes before the access being handled
 *
 * Valid in a wprobe handler only (0 elsewhere).  For a load (%WPROBE_RW)
 * it equals wprobe_new_value().  The value is the one the core saw last:
 * after a store it did not see (the probe was disabled, or the store came
 * from the handler itself) it is what the core read when it looked again.
 *
 * Return: the old value, zero-extended.
 */
u64 wprobe_old_value(void)
{
	return this_cpu_read(wprobe_ctlblk.running) ?
	       this_cpu_read(wprobe_ctlblk.old) : 0;
}
EXPORT_SYMBOL_GPL(wprobe_old_value);

/**
 * wprobe_new_value() - the watched bytes after the access being handled
 *
 * Valid in a wprobe handler only (0 elsewhere).
 *
 * Return: the new value, zero-extended.
 */
u64 wprobe_new_value(void)
{
	return this_cpu_read(wprobe_ctlblk.running) ?
	       this_cpu_read(wprobe_ctlblk.new) : 0;
}
EXPORT_SYMBOL_GPL(wprobe_new_value);

/**
 * wprobe_hits() - how many times a wprobe's handler was called
 * @wp: a registered wprobe
 *
 * With %WPROBE_FLAG_CHANGED, accesses that did not change the value are
 * not counted.
 *
 * Return: the sum over all CPUs, or 0 if @wp is not registered.
 */
unsigned long wprobe_hits(struct wprobe *wp)
{
	unsigned long sum = 0;
	int cpu;

	if (!wp->state)
		return 0;
	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(wp->state->pcpu, cpu)->hits);
	return sum;
}
EXPORT_SYMBOL_GPL(wprobe_hits);

/**
 * wprobe_missed() - how many hits a wprobe could not report
 * @wp: a registered wprobe
 *
 * A hit is missed when it came while this CPU was already running a wprobe
 * handler; that includes the handler's own stores to the watched bytes.
 *
 * Return: the sum over all CPUs, or 0 if @wp is not registered.
 */
unsigned long wprobe_missed(struct wprobe *wp)
{
	unsigned long sum = 0;
	int cpu;

	if (!wp->state)
		return 0;
	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(wp->state->pcpu, cpu)->missed);
	return sum;
}
EXPORT_SYMBOL_GPL(wprobe_missed);

/* ------------------------------------------------------------------ */
/* Arming.                                                              */
/* ------------------------------------------------------------------ */

static bool wp_wants_arming(struct wprobe *wp)
{
	return !wprobe_disabled(wp) && !wprobe_all_disarmed;
}

/* Take the current value(s) as the shadow: stores missed while unarmed. */
static void wp_refresh_shadow(struct wprobe *wp)
{
	struct wprobe_state *st = wp->state;
	int cpu;

	if (!wp_percpu(wp)) {
		WRITE_ONCE(st->shadow, wp_read(wp->addr, wp->len));
		return;
	}
	for_each_possible_cpu(cpu)
		WRITE_ONCE(per_cpu_ptr(st->pcpu, cpu)->shadow,
			   wp_read(wp_cpu_addr(wp, cpu), wp->len));
}

/* Bring the breakpoints in line with the probe's flags. */
static void wp_sync(struct wprobe *wp)
{
	struct wprobe_state *st = wp->state;
	bool want = wp_wants_arming(wp);
	struct perf_event *bp;
	int cpu;

	lockdep_assert_held(&wprobe_mutex);
	if (!st->bps || st->armed == want)
		return;
	if (want)
		wp_refresh_shadow(wp);
	for_each_possible_cpu(cpu) {
		bp = *per_cpu_ptr(st->bps, cpu);
		if (!bp)
			continue;
		if (want)
			perf_event_enable(bp);
		else
			perf_event_disable(bp);
	}
	st->armed = want;
}

/* The breakpoint of @wp on @cpu, armed or not as the probe wants. */
static int wp_create_on(struct wprobe *wp, int cpu)
{
	struct perf_event_attr attr;
	struct perf_event *bp;

	hw_breakpoint_init(&attr);
	attr.bp_addr = (unsigned long)wp_cpu_addr(wp, cpu);
	attr.bp_len = wp->len;
	attr.bp_type = wp->kind == WPROBE_RW ? HW_BREAKPOINT_RW :
						HW_BREAKPOINT_W;
	attr.disabled = !wp_wants_arming(wp);
	bp = perf_event_create_kernel_counter(&attr, cpu, NULL, wprobe_bp_hit,
					      wp);
	if (IS_ERR(bp))
		return PTR_ERR(bp);
	*per_cpu_ptr(wp->state->bps, cpu) = bp;
	return 0;
}

/*
 * A breakpoint on every online CPU (each on its own copy of a per-CPU
 * variable), or none.  This is register_wide_hw_breakpoint()'s loop, done
 * here so that it runs under our own hold of the CPU hotplug lock (taken
 * before wprobe_mutex, as the hotplug callbacks below have them) and can
 * give CPUs that come online later their breakpoints too.
 */
static int wp_create(struct wprobe *wp)
{
	struct wprobe_state *st = wp->state;
	int cpu, ret = 0;

	lockdep_assert_cpus_held();
	lockdep_assert_held(&wprobe_mutex);
	st->bps = alloc_percpu(struct perf_event *);
	if (!st->bps)
		return -ENOMEM;
	st->armed = wp_wants_arming(wp);
	for_each_online_cpu(cpu) {
		ret = wp_create_on(wp, cpu);
		if (ret)
			break;
	}
	if (!ret)
		return 0;
	unregister_wide_hw_breakpoint(st->bps);	/* also frees the array */
	st->bps = NULL;
	st->armed = false;
	if (ret == -ENOSPC) {
		pr_warn("%s: every debug register is taken on CPU %d (%d per CPU); not registered\n",
			st->where, cpu, HBP_NUM);
		return -EBUSY;
	}
	pr_err("%s: the hw_breakpoint layer refused a %u-byte %s watch on CPU %d (%d)\n",
	       st->where, wp->len,
	       wp->kind == WPROBE_RW ? "read-write" : "write", cpu, ret);
	return ret;
}

static void wp_destroy(struct wprobe *wp)
{
	struct wprobe_state *st = wp->state;

	if (st->bps) {
		unregister_wide_hw_breakpoint(st->bps);
		st->bps = NULL;
	}
	st->armed = false;
}

/* ------------------------------------------------------------------ */
/* Registration.                                                        */
/* ------------------------------------------------------------------ */

static void wp_free_state(struct wprobe *wp)
{
	struct wprobe_state *st = wp->state;

	if (!st)
		return;
	free_percpu(st->pcpu);
	kfree(st->where);
	kfree(st->modname);
	kfree(st);
	wp->state = NULL;
}

/* Resolve @wp->addr from the symbol, and recognise per-CPU variables. */
static int wp_resolve(struct wprobe *wp)
{
	unsigned long a;

	if (wp->symbol_name && wp->addr) {
		pr_err("give either an address or a symbol name, not both\n");
		return -EINVAL;
	}
	if (!wp->symbol_name) {
		if (!wp->addr) {
			pr_err("no address and no symbol name\n");
			return -EINVAL;
		}
		wp->addr = (char *)wp->addr + wp->offset;
		wp->offset = 0;
		return 0;
	}
	a = kallsyms_lookup_name(wp->symbol_name);
	if (!a) {
		pr_err("unknown symbol %s\n", wp->symbol_name);
		return -ENOENT;
	}
	a += wp->offset;
#ifdef CONFIG_SMP
	if (a >= (unsigned long)__per_cpu_start &&
	    a < (unsigned long)__per_cpu_end)
		wp->flags |= WPROBE_FLAG_PERCPU;
#endif
	wp->addr = (void *)a;
	return 0;
}

static int wp_check(struct wprobe *wp)
{
	unsigned long a = (unsigned long)wp->addr;
	u64 val;
	int cpu;

	if (wp->len != 1 && wp->len != 2 && wp->len != 4 &&
	    wp->len != sizeof(long)) {
		/* The debug registers of a 32-bit kernel watch 4 at most. */
		pr_err("length %u: only %s bytes can be watched\n", wp->len,
		       IS_ENABLED(CONFIG_64BIT) ? "1, 2, 4 or 8" : "1, 2 or 4");
		return -EINVAL;
	}
	if (wp->kind != WPROBE_WRITE && wp->kind != WPROBE_RW) {
		pr_err("unknown kind %d\n", wp->kind);
		return -EINVAL;
	}
	if (a & (wp->len - 1)) {
		pr_err("address %pS is not aligned to the length %u\n",
		       wp->addr, wp->len);
		return -EINVAL;
	}
	for_each_possible_cpu(cpu) {
		void *p = wp_cpu_addr(wp, cpu);

		if (copy_from_kernel_nofault(&val, p, wp->len)) {
			pr_err("%p is not readable kernel memory\n", p);
			return -EINVAL;
		}
		if (system_state >= SYSTEM_FREEING_INITMEM &&
		    init_section_contains(p, wp->len)) {
			pr_err("%pS is in the kernel's freed init data\n", p);
			return -EINVAL;
		}
		if (!wp_percpu(wp))
			break;
	}
	return 0;
}

/* Name the watched bytes ("sym+0xoff" and the module) for the listings. */
static int wp_name(struct wprobe *wp)
{
	struct wprobe_state *st = wp->state;
	char sym[KSYM_NAME_LEN];
	unsigned long size, off;
	char *modname = NULL;
	const char *name;

	name = kallsyms_lookup((unsigned long)wp->addr, &size, &off, &modname,
			       sym);
	if (name)
		st->where = kasprintf(GFP_KERNEL, "%s+0x%lx", name, off);
	else
		st->where = kasprintf(GFP_KERNEL, "0x%lx",
				      (unsigned long)wp->addr);
	if (!st->where)
		return -ENOMEM;
	if (modname) {
		st->modname = kstrdup(modname, GFP_KERNEL);
		if (!st->modname)
			return -ENOMEM;
	}
	return 0;
}

/* Note the module that owns the data; refuse data of a module leaving. */
static int wp_find_module(struct wprobe *wp)
{
#ifdef CONFIG_MODULES
	struct wprobe_state *st = wp->state;
	struct module *mod;
	int ret = 0;

	if (wp_percpu(wp))
		return 0;	/* the kernel's per-CPU area */
	preempt_disable();
	mod = __module_address((unsigned long)wp->addr);
	if (mod) {
		if (mod->state != MODULE_STATE_LIVE &&
		    mod->state != MODULE_STATE_COMING) {
			pr_err("%s: module %s is going away\n", st->where,
			       mod->name);
			ret = -ENOENT;
		}
		st->mod = mod;
		st->mod_init = within_module_init((unsigned long)wp->addr, mod);
	}
	preempt_enable();
	return ret;
#else
	return 0;
#endif
}

static bool wp_registered(struct wprobe *wp)
{
	struct wprobe *p;

	list_for_each_entry(p, &wprobe_list, list)
		if (p == wp)
			return true;
	return false;
}

/**
 * register_wprobe() - start watching a few bytes of kernel data
 * @wp: the probe; @addr or @symbol_name (+ @offset), @len, @kind, @flags
 *	and @handler filled in, the rest zeroed
 *
 * Every online CPU gets a data breakpoint on the bytes (on its own copy
 * for a per-CPU variable).  With %WPROBE_FLAG_DISABLED the probe is
 * registered unarmed; enable_wprobe() arms it.  Data of a module may be
 * watched; when the module goes, the probe stays registered, marked
 * %WPROBE_FLAG_GONE, and never fires again.  May sleep.
 *
 * Return: 0 when the probe is in place; -EINVAL for a bad length, kind,
 * alignment or address, both or neither of @addr and @symbol_name, or @wp
 * already registered; -ENOENT for an unknown symbol or the data of a
 * module being unloaded; -EBUSY when every debug register is taken (on
 * some CPU); -ENOMEM.  On failure nothing of @wp is left installed.
 */
int register_wprobe(struct wprobe *wp)
{
	void *addr = wp->addr;
	unsigned int offset = wp->offset, flags = wp->flags;
	int ret;

	cpus_read_lock();
	mutex_lock(&wprobe_mutex);
	if (wp_registered(wp)) {
		pr_err("this wprobe is already registered\n");
		ret = -EINVAL;
		goto out;
	}
	wp->flags &= WPROBE_FLAG_DISABLED | WPROBE_FLAG_CHANGED |
		     WPROBE_FLAG_PERCPU;
	wp->state = NULL;
	ret = wp_resolve(wp);
	if (ret)
		goto fail;
	ret = wp_check(wp);
	if (ret)
		goto fail;
	ret = -ENOMEM;
	wp->state = kzalloc(sizeof(*wp->state), GFP_KERNEL);
	if (!wp->state)
		goto fail;
	wp->state->pcpu = alloc_percpu(struct wprobe_cpu);
	if (!wp->state->pcpu)
		goto fail;
	ret = wp_name(wp);
	if (ret)
		goto fail;
	ret = wp_find_module(wp);
	if (ret)
		goto fail;
	wp_refresh_shadow(wp);
	ret = wp_create(wp);
	if (ret)
		goto fail;
	list_add_tail(&wp->list, &wprobe_list);
	mutex_unlock(&wprobe_mutex);
	cpus_read_unlock();
	return 0;

fail:
	wp_free_state(wp);
	/* Leave the caller's struct as it was given. */
	wp->addr = addr;
	wp->offset = offset;
	wp->flags = flags;
out:
	mutex_unlock(&wprobe_mutex);
	cpus_read_unlock();
	return ret;
}
EXPORT_SYMBOL_GPL(register_wprobe);

static void __unregister_wprobe(struct wprobe *wp)
{
	lockdep_assert_held(&wprobe_mutex);
	if (!wp_registered(wp)) {
		pr_warn("unregistering a wprobe that is not registered\n");
		return;
	}
	list_del_init(&wp->list);
	/* Once the events are released no handler runs or will run. */
	wp_destroy(wp);
	wp_free_state(wp);
	/* A probe given by symbol can be registered again as it was. */
	if (wp->symbol_name) {
		wp->addr = NULL;
		wp->flags &= ~WPROBE_FLAG_PERCPU;
	}
}

/**
 * unregister_wprobe() - stop watching
 * @wp: a probe registered with register_wprobe() (gone or not)
 *
 * When this returns, the handler is not running and will not run again;
 * @wp may be freed or registered again (a probe given by symbol has its
 * @addr cleared for that).  May sleep.
 */
void unregister_wprobe(struct wprobe *wp)
{
	mutex_lock(&wprobe_mutex);
	__unregister_wprobe(wp);
	mutex_unlock(&wprobe_mutex);
}
EXPORT_SYMBOL_GPL(unregister_wprobe);

/**
 * register_wprobes() - register several wprobes, all or none
 * @wps: the probes
 * @num: how many
 *
 * Return: 0, or the first error of register_wprobe(), in which case the
 * probes registered before it are unregistered again.
 */
int register_wprobes(struct wprobe **wps, int num)
{
	int i, ret;

	if (num <= 0 || !wps)
		return -EINVAL;
	for (i = 0; i < num; i++) {
		ret = register_wprobe(wps[i]);
		if (ret) {
			if (i)
				unregister_wprobes(wps, i);
			return ret;
		}
	}
	return 0;
}
EXPORT_SYMBOL_GPL(register_wprobes);

/**
 * unregister_wprobes() - unregister several wprobes
 * @wps: the probes
 * @num: how many
 */
void unregister_wprobes(struct wprobe **wps, int num)
{
	int i;

	if (num <= 0 || !wps)
		return;
	mutex_lock(&wprobe_mutex);
	for (i = 0; i < num; i++)
		__unregister_wprobe(wps[i]);
	mutex_unlock(&wprobe_mutex);
}
EXPORT_SYMBOL_GPL(unregister_wprobes);

static int wp_set_disabled(struct wprobe *wp, bool disable)
{
	int ret = 0;

	mutex_lock(&wprobe_mutex);
	if (!wp_registered(wp)) {
		ret = -EINVAL;
	} else if (wprobe_gone(wp)) {
		ret = -EINVAL;		/* nothing left to watch */
	} else {
		if (disable)
			wp->flags |= WPROBE_FLAG_DISABLED;
		else
			wp->flags &= ~WPROBE_FLAG_DISABLED;
		wp_sync(wp);
	}
	mutex_unlock(&wprobe_mutex);
	return ret;
}

/**
 * enable_wprobe() - arm a registered wprobe again
 * @wp: the probe
 *
 * The value at this moment becomes the old value of the next hit.  May
 * sleep.
 *
 * Return: 0, or -EINVAL if @wp is not registered or its data is gone.
 */
int enable_wprobe(struct wprobe *wp)
{
	return wp_set_disabled(wp, false);
}
EXPORT_SYMBOL_GPL(enable_wprobe);

/**
 * disable_wprobe() - disarm a wprobe and keep it registered
 * @wp: the probe
 *
 * Its breakpoints stay reserved, so enable_wprobe() cannot fail for lack
 * of debug registers.  May sleep.
 *
 * Return: 0, or -EINVAL if @wp is not registered or its data is gone.
 */
int disable_wprobe(struct wprobe *wp)
{
	return wp_set_disabled(wp, true);
}
EXPORT_SYMBOL_GPL(disable_wprobe);

/* ------------------------------------------------------------------ */
/* Module data going away.                                              */
/* ------------------------------------------------------------------ */

#ifdef CONFIG_MODULES
static void wp_kill_module(struct module *mod, bool init_only)
{
	struct wprobe *wp;

	lockdep_assert_held(&wprobe_mutex);
	list_for_each_entry(wp, &wprobe_list, list) {
		if (wprobe_gone(wp) || wp->state->mod != mod)
			continue;
		if (init_only && !wp->state->mod_init)
			continue;
		wp_destroy(wp);
		wp->flags |= WPROBE_FLAG_GONE;
		wp->state->mod = NULL;
	}
}

static int wp_module_notify(struct notifier_block *nb, unsigned long val,
			    void *data)
{
	struct module *mod = data;

	if (val != MODULE_STATE_GOING && val != MODULE_STATE_LIVE)
		return NOTIFY_DONE;
	mutex_lock(&wprobe_mutex);
	/* Going live, the module's init sections are freed next. */
	wp_kill_module(mod, val == MODULE_STATE_LIVE);
	mutex_unlock(&wprobe_mutex);
	return NOTIFY_DONE;
}

static struct notifier_block wp_module_nb = {
	.notifier_call = wp_module_notify,
};

#endif /* CONFIG_MODULES */

/* ------------------------------------------------------------------ */
/* CPUs coming and going.                                               */
/* ------------------------------------------------------------------ */

/* Runs on @cpu, the hotplug lock held: give it every live probe. */
static int wp_cpu_online(unsigned int cpu)
{
	struct wprobe *wp;
	int ret;

	mutex_lock(&wprobe_mutex);
	list_for_each_entry(wp, &wprobe_list, list) {
		if (!wp->state->bps || *per_cpu_ptr(wp->state->bps, cpu))
			continue;
		if (wp_percpu(wp))
			WRITE_ONCE(per_cpu_ptr(wp->state->pcpu, cpu)->shadow,
				   wp_read(wp_cpu_addr(wp, cpu), wp->len));
		ret = wp_create_on(wp, cpu);
		if (ret)
			pr_warn("%s: CPU %u got no breakpoint (%d): not watched there\n",
				wp->state->where, cpu, ret);
	}
	mutex_unlock(&wprobe_mutex);
	return 0;
}

/* @cpu is going offline: its breakpoints go before perf leaves it. */
static int wp_cpu_offline(unsigned int cpu)
{
	struct perf_event **bpp;
	struct wprobe *wp;

	mutex_lock(&wprobe_mutex);
	list_for_each_entry(wp, &wprobe_list, list) {
		if (!wp->state->bps)
			continue;
		bpp = per_cpu_ptr(wp->state->bps, cpu);
		if (*bpp) {
			unregister_hw_breakpoint(*bpp);
			*bpp = NULL;
		}
	}
	mutex_unlock(&wprobe_mutex);
	return 0;
}

static int __init wprobes_init(void)
{
	int ret;

	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "wprobes:online",
					wp_cpu_online, wp_cpu_offline);
	if (ret < 0) {
		pr_warn("no CPU hotplug callbacks (%d): CPUs coming online later will not watch\n",
			ret);
	}
#ifdef CONFIG_MODULES
	ret = register_module_notifier(&wp_module_nb);
	if (ret)
		pr_err("no module notifier (%d): probes on module data will not go [GONE]\n",
		       ret);
#endif
	return 0;
}
core_initcall(wprobes_init);

/* ------------------------------------------------------------------ */
/* The kprobes debugfs files.                                           */
/* ------------------------------------------------------------------ */

/*
 * As %px prints it (a word's hex digits: 16, or 8 on 32-bit kernels), or
 * zeroes for a reader who may not see addresses.
 */
#define WP_ADDR_DIGITS	((int)(2 * sizeof(long)))

static unsigned long wp_shown_addr(struct wprobe *wp, bool show_addr)
{
	return show_addr ? (unsigned long)wp->addr : 0;
}

/**
 * wprobe_debugfs_list() - the wprobe lines of debugfs kprobes/list
 * @m: the file
 * @show_addr: whether the reader may see addresses
 *
 * "ADDRESS  w  SYMBOL+0xOFF  MODULE  len=N KIND FLAGS" where KIND is w or
 * rw; the flags are [GONE], [DISABLED], [PERCPU] (ADDRESS is then the
 * per-CPU offset) and [CHANGED] (the handler runs on changes only).
 */
void wprobe_debugfs_list(struct seq_file *m, bool show_addr)
{
	struct wprobe *wp;

	mutex_lock(&wprobe_mutex);
	list_for_each_entry(wp, &wprobe_list, list)
		seq_printf(m, "%0*lx  w  %s  %s  len=%u %s %s%s%s%s\n",
			   WP_ADDR_DIGITS, wp_shown_addr(wp, show_addr),
			   wp->state->where,
			   wp->state->modname ?: " ", wp->len,
			   wp->kind == WPROBE_RW ? "rw" : "w",
			   wprobe_gone(wp) ? "[GONE]" : "",
			   wprobe_disabled(wp) && !wprobe_gone(wp) ?
			   "[DISABLED]" : "",
			   wp_percpu(wp) ? "[PERCPU]" : "",
			   wp->flags & WPROBE_FLAG_CHANGED ? "[CHANGED]" : "");
	mutex_unlock(&wprobe_mutex);
}

/**
 * wprobe_debugfs_stats() - the wprobe lines of debugfs kprobes/stats
 * @m: the file
 * @show_addr: whether the reader may see addresses
 */
void wprobe_debugfs_stats(struct seq_file *m, bool show_addr)
{
	struct wprobe *wp;

	mutex_lock(&wprobe_mutex);
	list_for_each_entry(wp, &wprobe_list, list)
		seq_printf(m, "%0*lx  %s  %lu  %lu\n",
			   WP_ADDR_DIGITS, wp_shown_addr(wp, show_addr),
			   wp->state->where,
			   wprobe_hits(wp), wprobe_missed(wp));
	mutex_unlock(&wprobe_mutex);
}

/**
 * wprobe_arm_all() - debugfs kprobes/enabled for the wprobes
 * @disarmed: true to disarm every wprobe, false to arm the enabled ones
 *
 * Return: 0.
 */
int wprobe_arm_all(bool disarmed)
{
	struct wprobe *wp;

	mutex_lock(&wprobe_mutex);
	if (wprobe_all_disarmed != disarmed) {
		wprobe_all_disarmed = disarmed;
		list_for_each_entry(wp, &wprobe_list, list)
			wp_sync(wp);
	}
	mutex_unlock(&wprobe_mutex);
	return 0;
}
