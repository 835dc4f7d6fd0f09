/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of the uprobes core share: the site, the XOL area, the
 * helpers that find a site's mappings, and the calls the core makes into
 * the parts that come on top of it.  Per-process probes, optimized sites
 * and boosted copies each have a Kconfig symbol of their own; without one,
 * the calls into that part are empty inlines, so the core builds and runs
 * on its own (single-stepping every instruction it does not emulate).
 */
#ifndef _KERNEL_EVENTS_UPROBES_INTERNAL_H
#define _KERNEL_EVENTS_UPROBES_INTERNAL_H

#include <linux/mm.h>
#include <linux/percpu-rwsem.h>
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/srcu.h>
#include <linux/uprobes.h>
#include <linux/wait.h>
#include <linux/xarray.h>

struct seq_file;

/* A probed instruction of a file. */
struct uprobe_site {
	struct rb_node		node;		/* uprobe_sites, its lock */
	struct rcu_head		rcu;		/* freed after uprobes_srcu */
	refcount_t		ref;
	struct inode		*inode;		/* igrab()bed */
	loff_t			offset;
	loff_t			ref_ctr_offset;	/* USDT semaphore, or 0 */
	struct mutex		reg_lock;
	struct list_head	consumers;	/* SRCU; written under reg_lock */
	struct uprobe		handle;		/* what uprobe_register() returns */
	struct arch_uprobe	arch;
	uprobe_opcode_t		bp;		/* the breakpoint, see set_swbp() */
	unsigned long __percpu	*hits;		/* no shared line on the hit path */
	int			hits_id;	/* its slot, see hits_get() */
	atomic_long_t		missed;		/* return probes not armed */
	/*
	 * A consumer's filter may say no where the site is still armed:
	 * uprobe_apply(..., false) leaves the breakpoints in place, and hits
	 * ask each filter before its handler (and take the breakpoint out
	 * where no consumer wants it).  Set under reg_lock; cleared when a
	 * full disarm leaves one consumer or none.
	 */
	bool			filters_changed;
};

/* Sites by (inode, offset); uprobes_srcu guards readers without the lock. */
extern struct rb_root uprobe_sites;
extern spinlock_t uprobe_sites_lock;
extern struct srcu_struct uprobes_srcu;

/*
 * Every uprobes_srcu read section is also counted per CPU, entries and
 * exits apart, so that uprobe_sync_consumers() can see without a grace
 * period that no section was running when it was called: the common case
 * when perf closes an event, one close and one wait at a time.
 */
struct uprobe_readers {
	unsigned long	entered;
	unsigned long	left;
};

DECLARE_PER_CPU(struct uprobe_readers, uprobe_readers);

/* Enter a section that may reach a consumer (handler, filter, list). */
static inline int uprobe_read_lock(void)
{
	int idx;

	this_cpu_inc(uprobe_readers.entered);
	idx = srcu_read_lock(&uprobes_srcu);
	/* Counted before any consumer is read: see uprobe_sync_consumers(). */
	smp_mb__after_srcu_read_lock();
	return idx;
}

static inline void uprobe_read_unlock(int idx)
{
	srcu_read_unlock(&uprobes_srcu, idx);
	/* Done with every consumer before it is counted out. */
	smp_mb__after_srcu_read_unlock();
	this_cpu_inc(uprobe_readers.left);
}

void uprobe_sync_consumers(void);

/* Per process, in mm->uprobes_state: the XOL page and its slots. */
#define XOL_SLOTS	(PAGE_SIZE / UPROBE_XOL_SLOT_BYTES)

struct xol_area {
	unsigned long		vaddr;		/* of the mapping */
	struct page		*page;
	unsigned long		busy[BITS_TO_LONGS(XOL_SLOTS)];
	wait_queue_head_t	wq;		/* for a free slot */
};

/*
 * May the site be armed in this mapping?  Private, executable, file
 * backed, and when arming also not writable (a breakpoint in a page the
 * program writes itself could be overwritten or copied around).  Whether
 * the process runs the kind of code the site was analysed as is asked per
 * site (vma_has_site()).
 */
static inline bool valid_vma(struct vm_area_struct *vma, bool arming)
{
	vm_flags_t mask = VM_HUGETLB | VM_MAYEXEC | VM_MAYSHARE;

	if (arming)
		mask |= VM_WRITE;
	return vma->vm_file && (vma->vm_flags & mask) == VM_MAYEXEC;
}

static inline loff_t vma_offset(struct vm_area_struct *vma, unsigned long vaddr)
{
	return ((loff_t)vma->vm_pgoff << PAGE_SHIFT) + (vaddr - vma->vm_start);
}

static inline unsigned long offset_vaddr(struct vm_area_struct *vma,
					 loff_t offset)
{
	return vma->vm_start + offset - ((loff_t)vma->vm_pgoff << PAGE_SHIFT);
}

/*
 * Does @vma map @s at @vaddr, in a process of the kind of code @s was
 * analysed as?  In the other kind (a file mapped by a 64-bit and a 32-bit
 * process) it would run wrongly: it is never armed there, and an int3
 * found there is someone else's.  The kind is the file's: all the sites of
 * a file agree.
 */
static inline bool vma_has_site(struct vm_area_struct *vma,
				struct uprobe_site *s, unsigned long vaddr,
				bool arming)
{
	return vma && valid_vma(vma, arming) &&
	       file_inode(vma->vm_file) == s->inode &&
	       vma_offset(vma, vaddr) == s->offset &&
	       arch_uprobe_mm_supported(&s->arch, vma->vm_mm);
}

/* Does @vma map the page of @s? */
static inline bool vma_covers(struct vm_area_struct *vma, struct uprobe_site *s)
{
	loff_t start = (loff_t)vma->vm_pgoff << PAGE_SHIFT;

	return vma->vm_file && file_inode(vma->vm_file) == s->inode &&
	       s->offset >= start &&
	       s->offset < start + (vma->vm_end - vma->vm_start);
}

static inline struct uprobe_site *get_site(struct uprobe_site *s)
{
	refcount_inc(&s->ref);
	return s;
}

/*
 * Is this thread running uprobe handlers?  It is then inside a uprobes_srcu
 * read section itself, so it must not wait for one to end.
 */
static inline bool in_uprobe_handler(void)
{
	return current->utask && current->utask->in_handler;
}

/* Taken for writing while sites are armed or disarmed: fork waits. */
extern struct percpu_rw_semaphore uprobe_dup_mmap_sem;

static inline bool uprobe_consumer_wants(struct uprobe_consumer *uc,
					 struct mm_struct *mm)
{
	return !uc->filter || uc->filter(uc, mm);
}

/* Room for the processes of a file on the stack: see uprobe_collect_mms(). */
#define FEW_TARGETS	4

/* The page cache folio the last instruction was read from, kept. */
struct uprobe_text_cursor {
	struct folio	*folio;
#ifdef UPROBE_FILE_HDR_BYTES
	/* The first bytes of the file hdr_inode, read once for its sites. */
	struct inode	*hdr_inode;
	u8		hdr[UPROBE_FILE_HDR_BYTES];
#endif
};

int uprobe_check_probe(struct inode *inode, loff_t offset,
		       loff_t ref_ctr_offset, struct uprobe_consumer *uc);
struct uprobe_site *uprobe_site_get_or_create(struct inode *inode,
					      loff_t offset,
					      loff_t ref_ctr_offset,
					      struct uprobe_text_cursor *cur);
void uprobe_text_cursor_done(struct uprobe_text_cursor *cur);
struct uprobe_site *uprobe_site_find(struct inode *inode, loff_t offset);
void uprobe_site_put(struct uprobe_site *s);
bool uprobe_site_wanted(struct uprobe_site *s, struct mm_struct *mm);
bool uprobe_is_consumer(struct uprobe_site *s, struct uprobe_consumer *uc);
void uprobe_consumer_add(struct uprobe_site *s, struct uprobe_consumer *uc);
struct mm_struct **uprobe_collect_mms(struct inode *inode, pgoff_t first,
				      pgoff_t last, int *nr,
				      struct mm_struct **few);
int uprobe_arm_in_page(struct uprobe_site *s, struct vm_area_struct *vma,
		       struct page *page, void *kpage, unsigned long vaddr);
void uprobe_disarm_in_page(struct uprobe_site *s, struct vm_area_struct *vma,
			   struct page *page, void *kpage, unsigned long vaddr);
/* After disarming in an mm: clear MMF_HAS_UPROBES once nothing is armed. */
void uprobe_mm_recheck(struct mm_struct *mm);
void uprobe_restore_file_page(struct mm_struct *mm, unsigned long vaddr);
unsigned long uprobe_site_hits(struct uprobe_site *s);
int uprobe_access_mm(struct mm_struct *mm, unsigned long vaddr, void *buf,
		     int len, bool write);
struct uprobe_task *uprobe_alloc_utask(void);
struct uprobe_site *uprobe_site_lookup(unsigned long bp_vaddr,
				       unsigned long gen, bool *is_bp);
void uprobe_handler_chain(struct uprobe_site *s, struct pt_regs *regs,
			  unsigned long bp_vaddr);

/* The thread's uprobes state, allocated on its first hit. */
static inline struct uprobe_task *uprobe_get_utask(void)
{
	return current->utask ?: uprobe_alloc_utask();
}

/* See the comment above its definition in uprobes.c. */
extern atomic_long_t uprobe_site_gen;

/*
 * Find the site the int3 at @bp_vaddr belongs to; under uprobes_srcu, which
 * keeps it.  When there is none, *@is_bp says whether an int3 is still
 * there (someone else's).  The common case, a thread hitting the probe it
 * hit last, is settled here without a call.
 */
static inline struct uprobe_site *uprobe_site_at(unsigned long bp_vaddr,
						 bool *is_bp)
{
	struct uprobe_task *utask = current->utask;
	/* Read before the lookup, so that a change during it is seen. */
	unsigned long gen = atomic_long_read_acquire(&uprobe_site_gen);

	/* A dead site not freed yet is skipped, as find_site_srcu() does. */
	if (utask && utask->last_vaddr == bp_vaddr && utask->last_gen == gen &&
	    utask->last_mm == current->mm &&
	    refcount_read(&utask->last_site->ref)) {
		*is_bp = false;
		return utask->last_site;
	}
	return uprobe_site_lookup(bp_vaddr, gen, is_bp);
}

/*
 * The probed address whose stub made the system call at @stub_ip, if this
 * thread's last hit came from there, else 0.  Which address a stub serves
 * never changes while its mm lives (see stub_take()), and the
 * generation moves when an mm with stubs goes (uprobe_clear_state()): an
 * mm allocated at the same address later is not taken for this one.
 */
static inline unsigned long uprobe_stub_remembered(unsigned long stub_ip)
{
	struct uprobe_task *utask = current->utask;

	if (!utask || !stub_ip || utask->last_stub != stub_ip ||
	    utask->last_gen != atomic_long_read(&uprobe_site_gen) ||
	    utask->last_mm != current->mm)
		return 0;
	return utask->last_vaddr;
}

/* The stub at @stub_ip serves @vaddr: remember it with @vaddr's site. */
static inline void uprobe_stub_remember(unsigned long stub_ip,
					unsigned long vaddr)
{
	struct uprobe_task *utask = current->utask;

	if (utask && utask->last_vaddr == vaddr && utask->last_mm == current->mm)
		utask->last_stub = stub_ip;
}

/* uprobes_xol.c */
struct xol_area *uprobe_xol_area_at(unsigned long vaddr);
unsigned long uprobe_xol_take_slot(struct xol_area *area);
void uprobe_xol_put_slot(struct xol_area *area, unsigned long vaddr);
void uprobe_xol_free(struct xol_area *area);
int uprobe_xol_mremap(const struct vm_special_mapping *sm,
		      struct vm_area_struct *new_vma);

static inline struct xol_area *uprobe_xol_area(void)
{
	return uprobe_xol_area_at(0);
}

/* uprobes_process.c: register_uprobe() */
#ifdef CONFIG_UPROBES_PER_PROCESS
extern struct list_head uprobe_seeds;

bool uprobe_seed_irq_handlers(struct pt_regs *regs, unsigned long bp_vaddr);
bool uprobe_seed_trap_handlers(struct pt_regs *regs);
void uprobe_seeds_exit(struct mm_struct *mm);
void uprobe_seeds_show(struct seq_file *m);

static inline bool uprobe_seeds_none(void)
{
	return list_empty(&uprobe_seeds);
}
#else
static inline bool uprobe_seeds_none(void)
{
	return true;
}

static inline bool uprobe_seed_trap_handlers(struct pt_regs *regs)
{
	return false;
}

static inline void uprobe_seeds_exit(struct mm_struct *mm) { }
#endif

/* uprobes_opt.c: optimized sites, and the stub pages boosted copies use too */
#ifdef CONFIG_UPROBES_OPT
#define STUB_PAGES	8			/* per process */

struct stub_page {
	refcount_t		ref;
	spinlock_t		lock;		/* site[], boost_len[] entries */
	struct page		*page;
	unsigned long		vaddr;
	unsigned long		site[UPROBE_STUBS_PER_PAGE];
	/* 0: the system call stub; else a boosted copy of that length */
	u8			boost_len[UPROBE_STUBS_PER_PAGE];
};

struct stub_set {
	struct hlist_node	node;		/* stub_sets, RCU */
	struct mm_struct	*mm;
	struct rcu_head		rcu;
	struct stub_page	*pages[STUB_PAGES];	/* set under mmap_lock */
	unsigned long		unmapped;	/* bit i: pages[i] is not here */
	/* A page went (munmap, MADV_DONTFORK): no new stubs or copies. */
	bool			retired;
	/* probed address -> its boosted copy here, or BOOST_NONE */
	struct xarray		boosts;
	/* probed addresses whose mapping here cannot take the jump */
	struct xarray		no_opt;
	/*
	 * Bit i: pages[i]'s mapping was made VM_DONTCOPY by us, for forks
	 * with nothing armed (uprobe_stub_fork()); hiding: that is the
	 * pages' state.  Under the mmap_lock.
	 */
	unsigned long		hidden;
	bool			hiding;
};

extern bool uprobe_opt_enabled;

/* Where the stub of entry @i of @sp starts. */
static inline unsigned long stub_vaddr(struct stub_page *sp, int i)
{
	return sp->vaddr + i * UPROBE_STUB_BYTES;
}

struct stub_set *uprobe_stub_set_of(struct mm_struct *mm);
unsigned long uprobe_stub_get(struct mm_struct *mm, unsigned long vaddr,
			      struct arch_uprobe *a);
unsigned long uprobe_stub_site(struct mm_struct *mm, unsigned long vaddr,
			       unsigned int *off, unsigned int *blen);
bool uprobe_site_optimized(struct uprobe_site *s, struct mm_struct *mm,
			   unsigned long vaddr);
int uprobe_unoptimize_site(struct uprobe_site *s, struct mm_struct *mm,
			   unsigned long vaddr);
void uprobe_optimize_site(struct uprobe_site *s, unsigned long vaddr);
void uprobe_stub_rewind(struct pt_regs *regs);
bool uprobe_stub_step(struct pt_regs *regs);
void uprobe_stub_dup(struct mm_struct *oldmm, struct mm_struct *newmm);
void uprobe_stub_fork(struct mm_struct *oldmm, bool armed);
void uprobe_stub_clear(struct mm_struct *mm);
void uprobe_stub_moved(struct vm_area_struct *old, unsigned long start,
		       unsigned long end);

/* After the handlers of an int3 hit: the jump instead, from now on. */
static inline void uprobe_try_optimize(struct uprobe_site *s,
				       unsigned long vaddr)
{
	if (arch_uprobe_optimizable(&s->arch))
		uprobe_optimize_site(s, vaddr);
}
#else
static inline unsigned long uprobe_stub_site(struct mm_struct *mm,
					     unsigned long vaddr,
					     unsigned int *off,
					     unsigned int *blen)
{
	return 0;
}

static inline bool uprobe_site_optimized(struct uprobe_site *s,
					 struct mm_struct *mm,
					 unsigned long vaddr)
{
	return false;
}

static inline int uprobe_unoptimize_site(struct uprobe_site *s,
					 struct mm_struct *mm,
					 unsigned long vaddr)
{
	return 0;
}

static inline bool uprobe_stub_step(struct pt_regs *regs)
{
	return false;
}

static inline void uprobe_try_optimize(struct uprobe_site *s,
				       unsigned long vaddr) { }
static inline void uprobe_stub_rewind(struct pt_regs *regs) { }
static inline void uprobe_stub_dup(struct mm_struct *oldmm,
				   struct mm_struct *newmm) { }
static inline void uprobe_stub_fork(struct mm_struct *oldmm, bool armed) { }
static inline void uprobe_stub_clear(struct mm_struct *mm) { }
static inline void uprobe_stub_moved(struct vm_area_struct *old,
				     unsigned long start, unsigned long end) { }
#endif

/* uprobes_boost.c: boosted copies, in entries of the stub pages */
#ifdef CONFIG_UPROBES_BOOST
extern bool uprobe_boost_enabled;

/* Would a hit of @a now run from a boosted copy (debugfs list)? */
static inline bool uprobe_boost_on(struct arch_uprobe *a)
{
	return READ_ONCE(uprobe_boost_enabled) && arch_uprobe_boostable(a, NULL);
}

bool uprobe_boost_fits(struct stub_page *sp, int i, struct arch_uprobe *a,
		       unsigned long vaddr, bool fresh);
bool uprobe_boost(struct uprobe_site *s, struct pt_regs *regs,
		  unsigned long vaddr);
void uprobe_boost_forget(struct mm_struct *mm, unsigned long start,
			 unsigned long end);
void uprobe_boost_rewind(struct pt_regs *regs, unsigned int off,
			 unsigned int len, unsigned long vaddr);
bool uprobe_boost_again(struct uprobe_task *utask, struct pt_regs *regs,
			unsigned long vaddr);
bool uprobe_boost_resumed(struct pt_regs *regs, unsigned long vaddr);
#else
struct stub_page;

static inline bool uprobe_boost_on(struct arch_uprobe *a)
{
	return false;
}

static inline bool uprobe_boost_fits(struct stub_page *sp, int i,
				     struct arch_uprobe *a,
				     unsigned long vaddr, bool fresh)
{
	return false;
}

static inline bool uprobe_boost(struct uprobe_site *s, struct pt_regs *regs,
				unsigned long vaddr)
{
	return false;
}

static inline bool uprobe_boost_again(struct uprobe_task *utask,
				      struct pt_regs *regs,
				      unsigned long vaddr)
{
	return false;
}

static inline bool uprobe_boost_resumed(struct pt_regs *regs,
					unsigned long vaddr)
{
	return false;
}

static inline void uprobe_boost_forget(struct mm_struct *mm,
				       unsigned long start,
				       unsigned long end) { }
static inline void uprobe_boost_rewind(struct pt_regs *regs,
				       unsigned int off, unsigned int len,
				       unsigned long vaddr) { }
#endif

#endif /* _KERNEL_EVENTS_UPROBES_INTERNAL_H */
