// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /sys/kernel/debug/uprobes: "list" shows every site (file, offset, how its
 * hits are carried out, hits and missed return probes) and every
 * per-process probe; "optimize" and "boost" (where the architecture has
 * them) turn optimized sites and boosted copies off for new hits, to
 * compare or to rule them out.
 */
#include <linux/debugfs.h>
#include <linux/rbtree.h>
#include <linux/seq_file.h>
#include <linux/srcu.h>
#include <linux/uprobes.h>

#include "uprobes_internal.h"

/* How a hit of the site is carried out, when nothing else decides. */
static const char *site_how(struct arch_uprobe *a)
{
	if (IS_ENABLED(CONFIG_UPROBES_OPT) && arch_uprobe_optimizable(a))
		return "jump";
	if (arch_uprobe_emulated(a))
		return "emulate";
	return uprobe_boost_on(a) ? "boost" : "step";
}

static int list_show(struct seq_file *m, void *v)
{
	struct uprobe_site *s;
	struct rb_node *n;

	spin_lock(&uprobe_sites_lock);
	for (n = rb_first(&uprobe_sites); n; n = rb_next(n)) {
		struct uprobe_consumer *uc;
		int nc = 0, idx;

		s = rb_entry(n, struct uprobe_site, node);
		/* Writers hold reg_lock, not the tree's lock: count under SRCU. */
		idx = uprobe_read_lock();
		list_for_each_entry_srcu(uc, &s->consumers, cons_node,
					 srcu_read_lock_held(&uprobes_srcu))
			nc++;
		uprobe_read_unlock(idx);
		seq_printf(m, "%lu:%#llx consumers=%d %s hits=%lu missed=%ld\n",
			   s->inode->i_ino, s->offset, nc, site_how(&s->arch),
			   uprobe_site_hits(s),
			   atomic_long_read(&s->missed));
	}
	spin_unlock(&uprobe_sites_lock);

	uprobe_seeds_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(list);

static int __init uprobes_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("uprobes", NULL);

	debugfs_create_file("list", 0400, dir, NULL, &list_fops);
#ifdef CONFIG_UPROBES_OPT
	debugfs_create_bool("optimize", 0600, dir, &uprobe_opt_enabled);
#endif
#ifdef CONFIG_UPROBES_BOOST
	debugfs_create_bool("boost", 0600, dir, &uprobe_boost_enabled);
#endif
	return 0;
}
late_initcall(uprobes_debugfs_init);
