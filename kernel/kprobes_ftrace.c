// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probes on ftrace call sites.  A probe on a function's __fentry__ call is
 * not a breakpoint: its site is armed by putting the address in the filter
 * of an ftrace_ops of ours, and the architecture's ftrace handler runs the
 * site's handlers.  Batches (see kprobes.c) update each filter once; a
 * single site joins or leaves a registered ops' filter through
 * ftrace_set_filter_ip_one(), which updates that site's record alone.
 */
#define pr_fmt(fmt) "kprobes: " fmt

#include <linux/ftrace.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "kprobes_internal.h"

bool kprobe_ftrace_disabled __read_mostly;

/*
 * Two ops: sites with a post handler go on the one that says it modifies
 * regs->ip (the handler sets it to after the call for the post handlers),
 * so that ftrace refuses them on a function another IPMODIFY user, such
 * as livepatch, owns; and refuses that user while they are there.  Each
 * ops is registered while it has an armed site.
 */
static struct kp_ftrace_hook {
	struct ftrace_ops ops;
	unsigned int armed;
} kp_ftrace_hooks[2] = {
	{ .ops = {
		.func	= KPROBE_FTRACE_FUNC,
		.flags	= FTRACE_OPS_FL_SAVE_REGS,
	} },
	{ .ops = {
		.func	= KPROBE_FTRACE_FUNC,
		.flags	= FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY,
		/* Which ops calls: the handler compares it with the site's. */
		.private = (void *)1UL,
	} },
};

bool kprobe_ftrace_site(kprobe_opcode_t *addr)
{
	return ftrace_location((unsigned long)addr) == (unsigned long)addr;
}

/* Put @s's address into @h's filter, registering @h for the first one. */
static int kp_ftrace_hook_add(struct kp_ftrace_hook *h, struct kprobe_site *s)
{
	unsigned long ip = (unsigned long)s->addr;
	int ret;

	/*
	 * The filter first: registered with an empty one, it traces all.
	 * Once the ops is registered, ftrace updates the one record of @ip.
	 */
	ret = ftrace_set_filter_ip_one(&h->ops, ip, 0);
	if (ret)
		return ret;
	if (!h->armed) {
		ret = register_ftrace_function(&h->ops);
		if (ret) {
			ftrace_set_filter_ip_one(&h->ops, ip, 1);
			return ret;
		}
	}
	h->armed++;
	return 0;
}

static int kp_ftrace_hook_del(struct kp_ftrace_hook *h, struct kprobe_site *s)
{
	unsigned long ip = (unsigned long)s->addr;
	int ret;

	/* Unregister before the filter empties, for the same reason. */
	if (h->armed == 1) {
		ret = unregister_ftrace_function(&h->ops);
		if (ret) {
			pr_warn("cannot unhook ftrace ops: %d\n", ret);
			return ret;
		}
	}
	h->armed--;
	ret = ftrace_set_filter_ip_one(&h->ops, ip, 1);
	if (ret)
		pr_warn("cannot drop ftrace site %pS from the filter: %d\n",
			s->addr, ret);
	return 0;
}

/* Hook one site on @h (kp_ftrace_hook_add()); -ENODEV once ftrace is dead. */
static int kp_ftrace_hook_one(struct kp_ftrace_hook *h, struct kprobe_site *s)
{
	int ret;

	if (kprobe_ftrace_disabled)
		return -ENODEV;
	ret = kp_ftrace_hook_add(h, s);
	if (ret)
		pr_warn("cannot hook ftrace site %pS: %d\n", s->addr, ret);
	return ret;
}

int kprobe_ftrace_arm(struct kprobe_site *s)
{
	bool ipmodify = kprobe_site_has_post(s);
	int ret;

	ret = kp_ftrace_hook_one(&kp_ftrace_hooks[ipmodify], s);
	if (!ret)
		WRITE_ONCE(s->ftrace_ipmodify, ipmodify);
	return ret;
}

int kprobe_ftrace_disarm(struct kprobe_site *s)
{
	return kp_ftrace_hook_del(&kp_ftrace_hooks[s->ftrace_ipmodify], s);
}

/*
 * An armed site moves to the other ops when it gains its first post
 * handler or loses its last.  The new ops is hooked before the old one is
 * unhooked, and the handler only acts on calls from the ops the site
 * names (kp_ftrace_ops_acts() in the handler), so no hit is lost or run
 * twice.
 */
int kprobe_ftrace_rehook(struct kprobe_site *s)
{
	bool ipmodify = kprobe_site_has_post(s);
	int ret;

	if (s->ftrace_ipmodify == ipmodify)
		return 0;
	ret = kp_ftrace_hook_add(&kp_ftrace_hooks[ipmodify], s);
	if (ret)
		return ret;
	WRITE_ONCE(s->ftrace_ipmodify, ipmodify);
	kp_ftrace_hook_del(&kp_ftrace_hooks[!ipmodify], s);
	return 0;
}

/*
 * Batches (see kp_batch_begin()): ftrace sites whose hook must come or go,
 * by ops.  A queued site is hooked as !s->armed says, on the ops
 * s->ftrace_ipmodify names (for a queued arm: the one it will go on).
 */
static struct list_head kp_ft_to_arm[2] = {
	LIST_HEAD_INIT(kp_ft_to_arm[0]), LIST_HEAD_INIT(kp_ft_to_arm[1]),
};

static struct list_head kp_ft_to_disarm[2] = {
	LIST_HEAD_INIT(kp_ft_to_disarm[0]), LIST_HEAD_INIT(kp_ft_to_disarm[1]),
};

/* In a batch: queue @s's change to @want.  Return: a rehook's error. */
int kprobe_ftrace_queue(struct kprobe_site *s, bool want)
{
	bool post = kprobe_site_has_post(s);

	if (list_empty(&s->poke)) {
		if (want && s->armed)
			return kprobe_ftrace_rehook(s);
		if (want == s->armed)
			return 0;
		if (want)
			WRITE_ONCE(s->ftrace_ipmodify, post);
		list_add_tail(&s->poke, want ?
			      &kp_ft_to_arm[s->ftrace_ipmodify] :
			      &kp_ft_to_disarm[s->ftrace_ipmodify]);
		s->armed = want;
		return 0;
	}
	if (want != s->armed) {
		/* Cancelled: back to what ftrace has, on the ops it has. */
		list_del_init(&s->poke);
		s->armed = want;
		return want ? kprobe_ftrace_rehook(s) : 0;
	}
	/* Still to be armed: on the ops its post handlers need by now. */
	if (want && s->ftrace_ipmodify != post) {
		WRITE_ONCE(s->ftrace_ipmodify, post);
		list_move_tail(&s->poke, &kp_ft_to_arm[post]);
	}
	return 0;
}

/* The addresses of the sites on @list (NULL if none or out of memory). */
static unsigned long *kp_ftrace_ips(struct list_head *list, unsigned int *n)
{
	struct kprobe_site *s;
	unsigned long *ips;
	unsigned int i = 0;

	*n = list_count_nodes(list);
	if (!*n)
		return NULL;
	ips = kvmalloc_array(*n, sizeof(*ips), GFP_KERNEL);
	if (!ips)
		return NULL;
	list_for_each_entry(s, list, poke)
		ips[i++] = (unsigned long)s->addr;
	return ips;
}

/* Unhook the queued sites of ops @ipm with one filter update. */
static void kp_ftrace_flush_disarm(int ipm)
{
	struct kp_ftrace_hook *h = &kp_ftrace_hooks[ipm];
	struct kprobe_site *s;
	unsigned long *ips;
	unsigned int n;
	int ret;

	/* One site: ftrace can update its record alone. */
	if (list_is_singular(&kp_ft_to_disarm[ipm])) {
		kp_ftrace_hook_del(h, list_first_entry(&kp_ft_to_disarm[ipm],
						       struct kprobe_site, poke));
		return;
	}
	ips = kp_ftrace_ips(&kp_ft_to_disarm[ipm], &n);
	if (!n)
		return;
	if (!ips) {
		/* No memory for the array: one filter update per site. */
		list_for_each_entry(s, &kp_ft_to_disarm[ipm], poke)
			kp_ftrace_hook_del(h, s);
		return;
	}
	/* Unregister before the filter empties: it would trace all. */
	if (h->armed == n) {
		ret = unregister_ftrace_function(&h->ops);
		if (ret) {
			/* Left hooked; the handler finds no site there. */
			pr_warn("cannot unhook ftrace ops: %d\n", ret);
			kvfree(ips);
			return;
		}
	}
	h->armed -= n;
	ret = ftrace_set_filter_ips(&h->ops, ips, n, 1, 0);
	if (ret)
		pr_warn("cannot drop %u ftrace sites from the filter: %d\n",
			n, ret);
	kvfree(ips);
}

/*
 * Hook the queued sites of ops @ipm with one filter update.  When ftrace
 * refuses, none of them is hooked and each is marked disarmed.
 */
static int kp_ftrace_flush_arm(int ipm)
{
	struct kp_ftrace_hook *h = &kp_ftrace_hooks[ipm];
	struct kprobe_site *s;
	unsigned long *ips;
	unsigned int n;
	int ret;

	/* One site: ftrace can update its record alone. */
	if (list_is_singular(&kp_ft_to_arm[ipm])) {
		s = list_first_entry(&kp_ft_to_arm[ipm], struct kprobe_site,
				     poke);
		ret = kp_ftrace_hook_one(h, s);
		if (ret)
			s->armed = false;
		return ret;
	}
	ips = kp_ftrace_ips(&kp_ft_to_arm[ipm], &n);
	if (!n)
		return 0;
	if (kprobe_ftrace_disabled)
		ret = -ENODEV;
	else if (!ips)
		ret = -ENOMEM;
	else
		ret = ftrace_set_filter_ips(&h->ops, ips, n, 0, 0);
	if (!ret && !h->armed) {
		ret = register_ftrace_function(&h->ops);
		if (ret)
			ftrace_set_filter_ips(&h->ops, ips, n, 1, 0);
	}
	kvfree(ips);
	if (ret) {
		pr_warn("cannot hook %u ftrace sites: %d\n", n, ret);
		list_for_each_entry(s, &kp_ft_to_arm[ipm], poke)
			s->armed = false;
		return ret;
	}
	h->armed += n;
	return 0;
}

/* Write every queued ftrace change; the first error of the arms. */
int kprobe_ftrace_flush(bool arm)
{
	struct kprobe_site *s, *tmp;
	int ipm, err, ret = 0;

	for (ipm = 0; ipm < 2; ipm++) {
		if (arm) {
			err = kp_ftrace_flush_arm(ipm);
			ret = ret ?: err;
		} else {
			kp_ftrace_flush_disarm(ipm);
		}
		list_for_each_entry_safe(s, tmp, arm ? &kp_ft_to_arm[ipm] :
					 &kp_ft_to_disarm[ipm], poke)
			list_del_init(&s->poke);
	}
	return ret;
}

/**
 * kprobe_ftrace_kill() - ftrace has shut down: stop using its call sites
 */
void kprobe_ftrace_kill(void)
{
	kprobe_ftrace_disabled = true;
}
