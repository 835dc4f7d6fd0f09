/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Watchpoint probes (wprobes): kprobes-style probes that fire when the CPU
 * touches a piece of kernel data instead of running an instruction.
 *
 * A wprobe names 1, 2, 4 or 8 naturally aligned bytes (by address, or by
 * symbol and offset; a per-CPU variable is watched in every CPU's own copy)
 * and gets its handler called right after an instruction wrote them (kind
 * WPROBE_WRITE) or read or wrote them (WPROBE_RW).  The debug registers are
 * borrowed from the hw_breakpoint layer, which shares them with ptrace,
 * perf and kgdb: when every register is taken, registration fails with
 * -EBUSY.
 *
 * The handler runs in the debug exception, with interrupts off and in an
 * NMI-like context: it must not sleep nor take locks that other contexts
 * take.  Inside it, wprobe_old_value() and wprobe_new_value() give the
 * watched bytes before and after the access (the core keeps a shadow copy
 * of the value for that), and regs->ip is the instruction after the one
 * that made the access.
 */
#ifndef _LINUX_WPROBES_H
#define _LINUX_WPROBES_H

#include <linux/errno.h>
#include <linux/list.h>
#include <linux/types.h>

struct module;
struct pt_regs;
struct seq_file;
struct wprobe;
struct wprobe_state;

typedef void (*wprobe_handler_t)(struct wprobe *wp, struct pt_regs *regs);

/* What a wprobe fires on. */
enum wprobe_kind {
	WPROBE_WRITE = 0,	/* stores to the watched bytes */
	WPROBE_RW = 1,		/* loads and stores (x86 has no load-only kind) */
};

/* struct wprobe.flags: set by the caller before registering */
#define WPROBE_FLAG_DISABLED	0x01	/* registered, but not armed */
#define WPROBE_FLAG_CHANGED	0x02	/* call the handler only on a change */
#define WPROBE_FLAG_PERCPU	0x04	/* @addr is a __percpu pointer */
/* set by the core */
#define WPROBE_FLAG_GONE	0x10	/* the watched module data went away */

/**
 * struct wprobe - a probe on a few bytes of kernel data
 * @list: link in the core's list while registered
 * @addr: watched address; filled in by register_wprobe() from @symbol_name.
 *	With %WPROBE_FLAG_PERCPU it is the __percpu address of a per-CPU
 *	variable and each CPU watches its own copy
 * @symbol_name: the watched symbol ("sym" or "module:sym"), or NULL; a
 *	per-CPU variable of the kernel is recognised as such
 * @offset: byte offset from @symbol_name (or from @addr)
 * @len: how many bytes to watch: 1, 2, 4 or (64-bit kernels) 8, aligned
 *	to that size
 * @kind: %WPROBE_WRITE or %WPROBE_RW
 * @flags: %WPROBE_FLAG_*; see above which ones belong to the caller
 * @handler: called after each access (NULL: only count the hits)
 * @state: the core's, while registered
 */
struct wprobe {
	struct list_head list;
	void *addr;
	const char *symbol_name;
	unsigned int offset;
	unsigned int len;
	enum wprobe_kind kind;
	unsigned int flags;
	wprobe_handler_t handler;
	struct wprobe_state *state;
};

static inline bool wprobe_gone(const struct wprobe *wp)
{
	return wp->flags & WPROBE_FLAG_GONE;
}

static inline bool wprobe_disabled(const struct wprobe *wp)
{
	return wp->flags & (WPROBE_FLAG_DISABLED | WPROBE_FLAG_GONE);
}

#ifdef CONFIG_WPROBES
int register_wprobe(struct wprobe *wp);
void unregister_wprobe(struct wprobe *wp);
int register_wprobes(struct wprobe **wps, int num);
void unregister_wprobes(struct wprobe **wps, int num);
int enable_wprobe(struct wprobe *wp);
int disable_wprobe(struct wprobe *wp);

unsigned long wprobe_hits(struct wprobe *wp);
unsigned long wprobe_missed(struct wprobe *wp);

struct wprobe *wprobe_running(void);
u64 wprobe_old_value(void);
u64 wprobe_new_value(void);

/* For the kprobes debugfs files: list, stats and enabled. */
void wprobe_debugfs_list(struct seq_file *m, bool show_addr);
void wprobe_debugfs_stats(struct seq_file *m, bool show_addr);
int wprobe_arm_all(bool disarmed);
#else
static inline int register_wprobe(struct wprobe *wp) { return -EOPNOTSUPP; }
static inline void unregister_wprobe(struct wprobe *wp) { }
static inline int register_wprobes(struct wprobe **wps, int num)
{
	return -EOPNOTSUPP;
}

static inline void unregister_wprobes(struct wprobe **wps, int num) { }
static inline int enable_wprobe(struct wprobe *wp) { return -EOPNOTSUPP; }
static inline int disable_wprobe(struct wprobe *wp) { return -EOPNOTSUPP; }
static inline unsigned long wprobe_hits(struct wprobe *wp) { return 0; }
static inline unsigned long wprobe_missed(struct wprobe *wp) { return 0; }
static inline struct wprobe *wprobe_running(void) { return NULL; }
static inline u64 wprobe_old_value(void) { return 0; }
static inline u64 wprobe_new_value(void) { return 0; }
static inline void wprobe_debugfs_list(struct seq_file *m, bool show_addr) { }
static inline void wprobe_debugfs_stats(struct seq_file *m, bool show_addr) { }
static inline int wprobe_arm_all(bool disarmed) { return 0; }
#endif /* CONFIG_WPROBES */

#endif /* _LINUX_WPROBES_H */
