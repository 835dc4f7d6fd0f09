/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * User-space probes: breakpoints in user code whose hits call kernel
 * handlers.  Two interfaces share one implementation:
 *
 *  - the file interface the rest of the kernel uses (trace_uprobe, perf,
 *    BPF): uprobe_register() puts a probe on (inode, offset) in every
 *    process that maps it, a consumer's filter() chooses the processes;
 *  - the per-process interface of the original uprobes design:
 *    register_uprobe() on (pid, vaddr), handlers optionally run in the
 *    breakpoint trap itself.
 *
 * Documentation/trace/uprobes.rst describes both.
 */
#ifndef _LINUX_UPROBES_H
#define _LINUX_UPROBES_H

#include <linux/err.h>
#include <linux/errno.h>
#include <linux/list.h>
#include <linux/types.h>

struct uprobe;
struct uprobe_site;
struct uprobe_seed;
struct vm_area_struct;
struct mm_struct;
struct inode;
struct notifier_block;
struct page;
struct pt_regs;
struct task_struct;

/* A handler's return value: take the breakpoint out of this process. */
#define UPROBE_HANDLER_REMOVE		1
#define UPROBE_HANDLER_MASK		1

/* Nested return probes a task may have pending at once. */
#define MAX_URETPROBE_DEPTH		64

#define UPROBE_NO_TRAMPOLINE_VADDR	(~0UL)

/*
 * One user of a file probe.  handler() runs on a hit before the probed
 * instruction, ret_handler() when the probed function returns (@func is the
 * probe's address).  filter() says whether the consumer wants the probe in
 * @mm; it also confirms a UPROBE_HANDLER_REMOVE from handler(): the
 * breakpoint leaves a process only when no consumer's filter wants it.
 */
struct uprobe_consumer {
	int (*handler)(struct uprobe_consumer *self, struct pt_regs *regs);
	int (*ret_handler)(struct uprobe_consumer *self, unsigned long func,
			   struct pt_regs *regs);
	bool (*filter)(struct uprobe_consumer *self, struct mm_struct *mm);

	struct list_head cons_node;	/* on the site's consumer list */
	/*
	 * Set by each registration, increasing (uprobe_consumer_add()): a
	 * return runs only the ret_handlers of consumers its entry saw.
	 */
	u64 id;
};

/*
 * A per-process probe (register_uprobe()).  The caller fills in the first
 * five fields; the rest belong to the implementation.  Also the type of the
 * opaque handle uprobe_register() returns, where the public fields are
 * unused.
 */
struct uprobe {
	pid_t		pid;		/* process to probe (global pid) */
	unsigned long	vaddr;		/* instruction address in it */
	void		(*handler)(struct uprobe *u, struct pt_regs *regs);
	/* optional: called when the function starting at vaddr returns */
	void		(*ret_handler)(struct uprobe *u, unsigned long func,
				       struct pt_regs *regs);
	bool		handler_in_interrupt;

	/* private */
	struct uprobe_seed	*seed;	/* per-process probe state, or NULL */
	struct uprobe_site	*site;	/* for handles from uprobe_register() */
};

/*
 * One probe of a batch (uprobe_register_batch()): where it goes, who
 * consumes it, and where its handle is stored.  The caller's callback
 * fills it in for each index.
 */
struct uprobe_batch_probe {
	loff_t			offset;
	loff_t			ref_ctr_offset;
	struct uprobe_consumer	*uc;
	struct uprobe		**handle;
};

typedef void (*uprobe_batch_fn)(void *ctx, unsigned int i,
				struct uprobe_batch_probe *p);

#ifdef CONFIG_UPROBES
#include <asm/uprobes.h>

enum uprobe_task_state {
	UTASK_RUNNING,
	UTASK_SSTEP,		/* running the copy in the XOL slot */
	UTASK_SSTEP_ACK,	/* the step trapped back to us */
	UTASK_SSTEP_TRAPPED,	/* a fault or signal interrupted the step */
};

/*
 * A function whose return address we replaced, newest first.  Read by
 * perf's callchain code (->next, ->orig_ret_vaddr).
 */
struct return_instance {
	struct uprobe_site	*site;		/* holds a reference */
	unsigned long		func;		/* probe address */
	unsigned long		stack;		/* sp at the hijack */
	unsigned long		orig_ret_vaddr;	/* the real return address */
	/* The newest consumer the entry's walk met: later ones not called */
	u64			cons_id;
	bool			ask;		/* the entry asked the filters */
	bool			chained;	/* same frame as the next one */
	struct return_instance	*next;
};

enum rp_check {
	RP_CHECK_CALL,
	RP_CHECK_CHAIN_CALL,
	RP_CHECK_RET,
};

/* Per-thread state, created on the first hit. */
struct uprobe_task {
	enum uprobe_task_state		state;
	struct arch_uprobe_task		autask;
	/*
	 * Free for consumers while their handlers run: trace_uprobe stores
	 * a pointer to its dispatch data here, BPF reads it back.
	 */
	unsigned long			vaddr;
	unsigned long			bp_vaddr;	/* the hit's address */
	unsigned long			xol_vaddr;	/* slot in use, or 0 */
	struct uprobe_site		*active;	/* site being stepped */
	struct arch_uprobe		*auprobe;	/* during the handlers */

	struct return_instance		*return_instances;
	unsigned int			depth;
	/* Spent instances kept for the next calls: no allocation per call. */
	struct return_instance		*ri_cache;
	unsigned int			ri_cached;
	bool				in_handler;	/* consumers running */
	/*
	 * A boosted hit whose copy had not run yet when a signal took the
	 * thread back to the probed address: its handlers ran; when it comes
	 * back there with the same registers, they do not run again.
	 */
	unsigned long			boost_vaddr;
	unsigned long			boost_regs;	/* hash of the registers */
	/*
	 * The site of this thread's last hit, found again without the VMA
	 * while the generation it was found in lasts (see site_at()).
	 */
	struct mm_struct		*last_mm;
	unsigned long			last_vaddr;
	struct uprobe_site		*last_site;
	unsigned long			last_gen;
	/* The stub whose system call led to last_vaddr, or 0 */
	unsigned long			last_stub;
	/* The system call being run is a stub's, hidden from its exit work */
	bool				stub_syscall;
	/* fork: the child recreates the parent's XOL area at this address */
	unsigned long			dup_xol_addr;
	struct callback_head		dup_xol_work;
};

struct xol_area;

/* In mm_struct.  fork clears xol_area: everything per-mm hangs off this. */
struct uprobes_state {
	struct xol_area		*xol_area;
	/*
	 * Stub pages may exist for this mm (kernel/events/uprobes_opt.c):
	 * set before they are made, never cleared.  fork copies it, and
	 * uprobe_dup_mmap() then says what the child has.  The map hooks of
	 * a process that never had any skip looking for them.
	 */
	bool			stubs;
	/*
	 * Sites armed in this mm: breakpoints written by us, and the jumps
	 * some of them became.  Counted by the paths that write or take out
	 * a breakpoint, under the mmap_lock for writing; MMF_HAS_UPROBES is set
	 * while it is not 0, so that fork, munmap and exit of a process
	 * whose probes are gone skip the uprobes work (see
	 * uprobe_mm_recheck()).  It may count too many (a mapping that went
	 * with its breakpoints), never too few.
	 */
	unsigned long		armed;
	/*
	 * Something was armed here once: set with MMF_HAS_UPROBES, never
	 * cleared.  A breakpoint executed just before its site was disarmed is
	 * still taken for ours when the flag is already clear again.
	 */
	bool			probed;
};

void __init uprobes_init(void);
struct uprobe *uprobe_register(struct inode *inode, loff_t offset,
			       loff_t ref_ctr_offset,
			       struct uprobe_consumer *uc);
int uprobe_apply(struct uprobe *uprobe, struct uprobe_consumer *uc, bool add);
void uprobe_unregister_nosync(struct uprobe *uprobe,
			      struct uprobe_consumer *uc);
void uprobe_unregister_sync(void);
int uprobe_register_batch(struct inode *inode, unsigned int cnt,
			  uprobe_batch_fn get, void *ctx);
void uprobe_unregister_batch(unsigned int cnt, uprobe_batch_fn get, void *ctx);

int register_uprobe(struct uprobe *u);
void unregister_uprobe(struct uprobe *u);

int uprobe_mmap(struct vm_area_struct *vma);
void uprobe_munmap(struct vm_area_struct *vma, unsigned long start,
		   unsigned long end);
void uprobe_start_dup_mmap(void);
void uprobe_end_dup_mmap(void);
void uprobe_dup_mmap(struct mm_struct *oldmm, struct mm_struct *newmm);
void uprobe_free_utask(struct task_struct *t);
void uprobe_copy_process(struct task_struct *t, unsigned long flags);
int uprobe_post_sstep_notifier(struct pt_regs *regs);
int uprobe_pre_sstep_notifier(struct pt_regs *regs);
void uprobe_notify_resume(struct pt_regs *regs);
bool uprobe_deny_signal(void);
void uprobe_clear_state(struct mm_struct *mm);
unsigned long uprobe_get_swbp_addr(struct pt_regs *regs);
unsigned long uprobe_get_trap_addr(struct pt_regs *regs);
unsigned long uprobe_get_trampoline_vaddr(void);
void uprobe_handle_trampoline(struct pt_regs *regs);

/* Architecture side (the architecture's uprobes.c). */
bool is_swbp_insn(uprobe_opcode_t *insn);
bool is_trap_insn(uprobe_opcode_t *insn);
int arch_uprobe_analyze_insn(struct arch_uprobe *aup, struct mm_struct *mm,
			     unsigned long addr);
/* The site's breakpoint (weak: UPROBE_SWBP_INSN), see uprobes_xol.c. */
int set_swbp(struct arch_uprobe *aup, struct mm_struct *mm, unsigned long vaddr);
int uprobe_write_opcode(struct arch_uprobe *aup, struct mm_struct *mm,
			unsigned long vaddr, uprobe_opcode_t opcode);
/* May the hit go without handlers?  Only with HAVE_UPROBE_IGNORE. */
bool arch_uprobe_ignore(struct arch_uprobe *aup, struct pt_regs *regs);
int arch_uprobe_pre_xol(struct arch_uprobe *aup, struct pt_regs *regs);
int arch_uprobe_post_xol(struct arch_uprobe *aup, struct pt_regs *regs);
bool arch_uprobe_xol_was_trapped(struct task_struct *tsk);
/*
 * A breakpoint trap while @aup's copy is being stepped: is it the step's
 * end, the kernel having carried the copy out without the step's trap?
 * (weak: never; x86's UMIP emulation, see arch/x86/kernel/uprobes.c)
 */
bool arch_uprobe_step_skipped(struct arch_uprobe *aup, struct pt_regs *regs);
#ifdef UPROBE_FILE_HDR_BYTES
/* From the first UPROBE_FILE_HDR_BYTES of the file: the kind of its code. */
void arch_uprobe_file_mode(struct arch_uprobe *aup, const u8 *hdr);
#endif
bool arch_uprobe_mm_supported(struct arch_uprobe *aup, struct mm_struct *mm);
int arch_uprobe_exception_notify(struct notifier_block *self,
				 unsigned long val, void *data);
void arch_uprobe_abort_xol(struct arch_uprobe *aup, struct pt_regs *regs);
bool arch_uprobe_skip_sstep(struct arch_uprobe *aup, struct pt_regs *regs);
/* Is @aup carried out by arch_uprobe_skip_sstep(), never stepped? */
bool arch_uprobe_emulated(struct arch_uprobe *aup);
unsigned long arch_uretprobe_hijack_return_addr(unsigned long trampoline_vaddr,
						struct pt_regs *regs);
bool arch_uretprobe_is_alive(struct return_instance *ret, enum rp_check ctx,
			     struct pt_regs *regs);
void *arch_uprobe_trampoline(unsigned long *psize);
bool uprobe_stub_syscall(struct pt_regs *regs);
bool arch_uprobe_optimizable(struct arch_uprobe *aup);
void arch_uprobe_stub_write(void *kaddr);
bool arch_uprobe_stub_reaches(unsigned long vaddr, unsigned long target);
void arch_uprobe_stub_window(unsigned long vaddr, unsigned long *lo,
			     unsigned long *hi);
void arch_uprobe_jmp_insn(u8 *buf, unsigned long vaddr, unsigned long target);
unsigned long arch_uprobe_jmp_target(const u8 *buf, unsigned long vaddr);
void arch_uprobe_text_sync(void);
bool arch_uprobe_stub_return(struct pt_regs *regs, unsigned long vaddr);
bool arch_uprobe_stub_syscall_nr(struct pt_regs *regs);
void arch_uprobe_stub_rewind(struct pt_regs *regs, unsigned int off,
			     unsigned long vaddr);
void arch_uprobe_copy_ixol(struct page *page, unsigned long vaddr,
			   void *src, unsigned long len);
bool arch_uprobe_boostable(struct arch_uprobe *aup, struct pt_regs *regs);
int arch_uprobe_boost_code(struct arch_uprobe *aup, unsigned long vaddr,
			   unsigned long slot, u8 *buf);
unsigned long arch_uprobe_regs_hash(struct pt_regs *regs);
void arch_uprobe_boost_enter(struct arch_uprobe_task *autask);
bool arch_uprobe_boost_trapped(struct arch_uprobe_task *autask);

#else /* !CONFIG_UPROBES */

struct uprobes_state {
};

static inline void uprobes_init(void)
{
}

#define uprobe_get_trap_addr(regs)	instruction_pointer(regs)

static inline struct uprobe *
uprobe_register(struct inode *inode, loff_t offset, loff_t ref_ctr_offset,
		struct uprobe_consumer *uc)
{
	return ERR_PTR(-ENOSYS);
}

static inline int
uprobe_apply(struct uprobe *uprobe, struct uprobe_consumer *uc, bool add)
{
	return -ENOSYS;
}

static inline void
uprobe_unregister_nosync(struct uprobe *uprobe, struct uprobe_consumer *uc)
{
}

static inline void uprobe_unregister_sync(void)
{
}

static inline int uprobe_register_batch(struct inode *inode, unsigned int cnt,
					uprobe_batch_fn get, void *ctx)
{
	return -ENOSYS;
}

static inline void uprobe_unregister_batch(unsigned int cnt,
					   uprobe_batch_fn get, void *ctx)
{
}

static inline int register_uprobe(struct uprobe *u)
{
	return -EOPNOTSUPP;
}

static inline void unregister_uprobe(struct uprobe *u)
{
}

static inline int uprobe_mmap(struct vm_area_struct *vma)
{
	return 0;
}

static inline void
uprobe_munmap(struct vm_area_struct *vma, unsigned long start,
	      unsigned long end)
{
}

static inline void uprobe_start_dup_mmap(void)
{
}

static inline void uprobe_end_dup_mmap(void)
{
}

static inline void
uprobe_dup_mmap(struct mm_struct *oldmm, struct mm_struct *newmm)
{
}

static inline void uprobe_notify_resume(struct pt_regs *regs)
{
}

static inline bool uprobe_deny_signal(void)
{
	return false;
}

static inline void uprobe_free_utask(struct task_struct *t)
{
}

static inline void uprobe_copy_process(struct task_struct *t,
				       unsigned long flags)
{
}

static inline void uprobe_clear_state(struct mm_struct *mm)
{
}

static inline int uprobe_pre_sstep_notifier(struct pt_regs *regs)
{
	return 0;
}

#endif /* !CONFIG_UPROBES */

/* For the system call entry and exit work: see uprobes_opt.c. */
#ifdef CONFIG_UPROBES_OPT
bool uprobe_stub_syscall_enter(struct pt_regs *regs);
bool uprobe_stub_syscall_exit(void);
#else
static inline bool uprobe_stub_syscall_enter(struct pt_regs *regs)
{
	return false;
}

static inline bool uprobe_stub_syscall_exit(void)
{
	return false;
}
#endif
#endif /* _LINUX_UPROBES_H */
