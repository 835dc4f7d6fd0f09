// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kprobes directory in debugfs: "list" (every probe, as upstream
 * prints it), "enabled" (arm or disarm every probe at once), "blacklist"
 * and, our addition, "stats" (each probe's hits and misses).  Watchpoint
 * probes are listed with the kprobes.
 */
#include <linux/debugfs.h>
#include <linux/kallsyms.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

#include "kprobes_internal.h"

/* "symbol+0xoffset" of a probe; the module name, if any, in @modname. */
static void kp_show_symbol(struct seq_file *m, struct kprobe *p,
			   char **modname)
{
	char name[KSYM_NAME_LEN];
	unsigned long size, offset;
	const char *sym;

	*modname = NULL;
	sym = kallsyms_lookup((unsigned long)p->addr, &size, &offset, modname,
			      name);
	if (sym)
		seq_printf(m, "%s+0x%lx", sym, offset);
	else
		seq_printf(m, "%pS", p->addr);	/* e.g. its module is gone */
}

/* "address  k|r  symbol+offset  module " as the documentation shows. */
static void kp_show_where(struct seq_file *m, struct kprobe *p, bool show)
{
	char *modname;

	seq_printf(m, "%px  %s  ", show ? p->addr : NULL,
		   kprobe_is_kretprobe(p) ? "r" : "k");
	kp_show_symbol(m, p, &modname);
	seq_printf(m, "  %s ", modname ?: " ");
}

static int kp_list_show(struct seq_file *m, void *v)
{
	bool show = kallsyms_show_value(m->file->f_cred);
	struct kprobe_site *s;
	struct kprobe *p;
	unsigned int b;

	mutex_lock(&kprobe_mutex);
	for (b = 0; b < ARRAY_SIZE(kprobe_sites); b++) {
		hlist_for_each_entry(s, &kprobe_sites[b], hash) {
			list_for_each_entry(p, &s->probes, list) {
				kp_show_where(m, p, show);
				seq_printf(m, "%s%s%s%s\n",
					   kprobe_gone(p) ? "[GONE]" : "",
					   kprobe_disabled(p) && !kprobe_gone(p) ?
					   "[DISABLED]" : "",
					   kprobe_optimized(p) ? "[OPTIMIZED]" : "",
					   kprobe_ftrace(p) ? "[FTRACE]" : "");
			}
		}
	}
	mutex_unlock(&kprobe_mutex);
	wprobe_debugfs_list(m, show);	/* watchpoint probes, type w */
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kp_list);

static unsigned long kp_sum_hits(struct kprobe *p)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *per_cpu_ptr(p->nhit, cpu);
	return sum;
}

/* Our addition: per-probe hit and miss counts. */
static int kp_stats_show(struct seq_file *m, void *v)
{
	bool show = kallsyms_show_value(m->file->f_cred);
	struct kprobe_site *s;
	struct kprobe *p;
	unsigned int b;

	seq_puts(m, "# address  symbol+offset  hits  missed\n");
	mutex_lock(&kprobe_mutex);
	for (b = 0; b < ARRAY_SIZE(kprobe_sites); b++) {
		hlist_for_each_entry(s, &kprobe_sites[b], hash) {
			list_for_each_entry(p, &s->probes, list) {
				char *modname;

				seq_printf(m, "%px  ", show ? p->addr : NULL);
				kp_show_symbol(m, p, &modname);
				seq_printf(m, "  %lu  %lu\n", kp_sum_hits(p),
					   READ_ONCE(p->nmissed));
			}
		}
	}
	mutex_unlock(&kprobe_mutex);
	wprobe_debugfs_stats(m, show);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kp_stats);

static int kp_blacklist_show(struct seq_file *m, void *v)
{
	bool show = kallsyms_show_value(m->file->f_cred);
	struct kprobe_blacklist_entry *ent;

	mutex_lock(&kprobe_mutex);
	list_for_each_entry(ent, &kprobe_blacklist, list)
		seq_printf(m, "0x%px-0x%px\t%ps\n",
			   show ? (void *)ent->start_addr : NULL,
			   show ? (void *)ent->end_addr : NULL,
			   (void *)ent->start_addr);
	mutex_unlock(&kprobe_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kp_blacklist);

static ssize_t kp_enabled_read(struct file *file, char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	const char *val = READ_ONCE(kprobes_all_disarmed) ? "0\n" : "1\n";

	return simple_read_from_buffer(ubuf, count, ppos, val, 2);
}

/* Whatever kstrtobool() takes: 0/1, y/n, on/off, with a newline or not. */
static ssize_t kp_enabled_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	bool enable;
	int ret;

	ret = kstrtobool_from_user(ubuf, count, &enable);
	if (ret)
		return ret;
	ret = kprobe_arm_all(!enable);
	return ret ? ret : count;
}

static const struct file_operations kp_enabled_fops = {
	.read =		kp_enabled_read,
	.write =	kp_enabled_write,
	.llseek =	default_llseek,
};

static int __init kp_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("kprobes", NULL);

	debugfs_create_file("list", 0400, dir, NULL, &kp_list_fops);
	debugfs_create_file("enabled", 0600, dir, NULL, &kp_enabled_fops);
	debugfs_create_file("blacklist", 0400, dir, NULL, &kp_blacklist_fops);
	debugfs_create_file("stats", 0400, dir, NULL, &kp_stats_fops);
	return 0;
}
late_initcall(kp_debugfs_init);
