// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probes in module text.  A probe holds its module only while it is being
 * set up: probes pin nothing.  When a module goes (or its init text is
 * freed), the sites in its text get their instructions back and are marked
 * gone, their probes still registered, and its blacklist entries go with
 * it.
 */
#include <linux/module.h>

#include "kprobes_internal.h"

/* Hold @mod while a probe at @a in it is set up: -ENOENT if @a is going. */
int kprobe_module_hold(struct module *mod, unsigned long a)
{
	if (!try_module_get(mod))
		return -ENOENT;		/* on its way out */
	if (within_module_init(a, mod) && mod->state != MODULE_STATE_COMING) {
		module_put(mod);	/* init text is gone */
		return -ENOENT;
	}
	return 0;
}

static bool kp_in_module(unsigned long addr, void *mod)
{
	return within_module(addr, mod);
}

static bool kp_in_module_init(unsigned long addr, void *mod)
{
	return within_module_init(addr, mod);
}

static int kp_module_notify(struct notifier_block *nb, unsigned long val,
			    void *data)
{
	struct module *mod = data;

	mutex_lock(&kprobe_mutex);
	switch (val) {
	case MODULE_STATE_COMING:
		kprobe_blacklist_module_add(mod);
		break;
	case MODULE_STATE_LIVE:
		/* Its init text is freed next. */
		kprobe_kill_range(kp_in_module_init, mod, true);
		break;
	case MODULE_STATE_GOING:
		kprobe_kill_range(kp_in_module, mod, true);
		kprobe_blacklist_module_remove(mod);
		break;
	}
	mutex_unlock(&kprobe_mutex);
	return NOTIFY_DONE;
}

static struct notifier_block kp_module_nb = {
	.notifier_call = kp_module_notify,
	/* After the other users of module text have seen a coming module. */
	.priority = 0,
};

int __init kprobe_modules_init(void)
{
	return register_module_notifier(&kp_module_nb);
}
