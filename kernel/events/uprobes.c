// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * User-space probes, the architecture-independent part.
 *
 * A probe site is one instruction of one file, (inode, offset).  Sites live
 * in a tree keyed that way; each carries the analysis of its instruction
 * and the list of consumers that want it.  Arming a site in a process
 * writes an int3 over the first byte of the instruction in that process's
 * private copy of the page (the page cache never changes), and only in the
 * processes some consumer's filter accepts.  New mappings of the file are
 * armed in uprobe_mmap(); a fork inherits the copied pages and, with them,
 * the breakpoints.
 *
 * A hit traps (int3), the die notifier flags the thread with TIF_UPROBE and
 * uprobe_notify_resume() does the rest in task context, where handlers may
 * sleep: it finds the site through the VMA, runs the consumers, and then
 * either emulates the instruction on the registers or single-steps a copy
 * of it in a slot of the process's XOL area (a one-page "[uprobes]"
 * mapping).  Return probes replace the return address with the address of
 * a trampoline in the same page.
 *
 * The per-process interface (register_uprobe()) is built on the same sites:
 * its consumer's filter accepts just the probed process, and its handler
 * may also run inside the trap, with interrupts off.
 *
 * Locking, outermost first:
 *   uprobe_site.reg_lock		(un)registration of one site
 *   dup_mmap_sem (write)		keeps fork out while sites are (dis)armed
 *   mmap_lock (write)			per process, while arming or disarming
 *   i_mmap_rwsem, sites_lock, delayed_lock, seed_lock	leaves
 * Consumer lists are read under SRCU (handlers may sleep) and written under
 * reg_lock; the per-process probe list is read under RCU from the trap.
 *
 * A hit takes no lock shared by the process or by all probes: the VMA is
 * found under its own lock (mmap_lock only when that is contended) and the
 * site in the tree under uprobes_srcu and sites_seq; sites are freed after
 * an SRCU grace period.  A site is pinned by a reference only where it
 * outlives the hit: a step out of line, a pending return.
 */
#define pr_fmt(fmt) "uprobes: " fmt

#include <linux/debugfs.h>
#include <linux/hashtable.h>
#include <linux/highmem.h>
#include <linux/idr.h>
#include <linux/kdebug.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/pagemap.h>
#include <linux/percpu-rwsem.h>
#include <linux/ptrace.h>
#include <linux/rbtree.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/seq_file.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/srcu.h>
#include <linux/task_work.h>
#include <linux/uprobes.h>
#include <linux/workqueue.h>

/* A probed instruction of a file. */
struct uprobe_site {
	struct rb_node		node;		/* in sites, under sites_lock */
	struct rcu_head		rcu;		/* freed after uprobes_srcu */
	refcount_t		ref;
	struct inode		*inode;		/* igrab()bed */
	loff_t			offset;
	loff_t			ref_ctr_offset;	/* USDT semaphore, or 0 */
	struct mutex		reg_lock;
	struct list_head	consumers;	/* SRCU; written under reg_lock */
	struct uprobe		handle;		/* what uprobe_register() returns */
	struct arch_uprobe	arch;
	unsigned long __percpu	*hits;		/* no shared line on the hit path */
	int			hits_id;	/* its slot, see hits_get() */
	atomic_long_t		missed;		/* return probes not armed */
	bool			no_opt;		/* optimizing it failed */
};

/* Per process, in mm->uprobes_state: the XOL page and its slots. */
#define XOL_SLOTS	(PAGE_SIZE / UPROBE_XOL_SLOT_BYTES)

struct xol_area {
	unsigned long		vaddr;		/* of the mapping */
	struct page		*page;
	unsigned long		busy[BITS_TO_LONGS(XOL_SLOTS)];
	wait_queue_head_t	wq;		/* for a free slot */
};

/* A per-process probe: the consumer register_uprobe() puts on a site. */
struct uprobe_seed {
	struct uprobe_consumer	uc;
	struct uprobe		*u;		/* the caller's */
	struct uprobe_site	*site;
	struct mm_struct	*mm;		/* mmgrab()bed */
	unsigned long		vaddr;
	bool			gone;		/* exec, exit or unregistered */
	bool			in_irq;		/* u->handler_in_interrupt */
	atomic_long_t		hits;		/* handler calls */
	struct list_head	node;		/* seeds, RCU */
	struct list_head	reap;		/* reap_list */
};

/* A USDT semaphore whose mapping had not appeared when the site armed. */
struct delayed_ref {
	struct list_head	node;
	struct mm_struct	*mm;
	struct uprobe_site	*site;		/* holds a reference */
};

/* Optimized sites (jumps to stubs), further down. */
struct stub_set;
static bool site_optimized(struct uprobe_site *s, struct mm_struct *mm,
			   unsigned long vaddr);
static int unoptimize_site(struct uprobe_site *s, struct mm_struct *mm,
			   unsigned long vaddr);
static void stub_dup(struct mm_struct *oldmm, struct mm_struct *newmm);
static void stub_clear(struct mm_struct *mm);
static void stub_moved(struct vm_area_struct *old, unsigned long start,
		       unsigned long end);
static void stub_rewind(struct pt_regs *regs);
static bool stub_step(struct pt_regs *regs);
static unsigned long stub_site(struct mm_struct *mm, unsigned long vaddr,
			       unsigned int *off, unsigned int *blen);
static bool boost_resumed(struct pt_regs *regs, unsigned long vaddr);
static bool boost_again(struct uprobe_task *utask, struct pt_regs *regs,
			unsigned long vaddr);
static bool boost(struct uprobe_site *s, struct pt_regs *regs,
		  unsigned long vaddr);
static void boost_forget(struct mm_struct *mm, unsigned long start,
			 unsigned long end);
static void boost_rewind(struct pt_regs *regs, unsigned int off,
			 unsigned int len, unsigned long vaddr);

static struct rb_root sites = RB_ROOT;
static DEFINE_SPINLOCK(sites_lock);
/* Tells a lockless lookup that the tree changed under it. */
static seqcount_spinlock_t sites_seq = SEQCNT_SPINLOCK_ZERO(sites_seq, &sites_lock);
DEFINE_STATIC_SRCU(uprobes_srcu);
DEFINE_STATIC_PERCPU_RWSEM(dup_mmap_sem);

static LIST_HEAD(seeds);
static DEFINE_SPINLOCK(seed_lock);
static LIST_HEAD(reap_list);
static void seed_reap_fn(struct work_struct *work);
static DECLARE_WORK(seed_reap_work, seed_reap_fn);

static LIST_HEAD(delayed_refs);
static DEFINE_MUTEX(delayed_lock);

/* ---- sites ------------------------------------------------------------- */

static __always_inline int site_cmp(const struct inode *inode,
				    loff_t offset, const struct uprobe_site *s)
{
	if (inode != s->inode)
		return inode < s->inode ? -1 : 1;
	if (offset != s->offset)
		return offset < s->offset ? -1 : 1;
	return 0;
}

/* The first site at or after (inode, offset); under sites_lock. */
static struct uprobe_site *site_ceil(struct inode *inode, loff_t offset)
{
	struct rb_node *n = sites.rb_node;
	struct uprobe_site *best = NULL;

	while (n) {
		struct uprobe_site *s = rb_entry(n, struct uprobe_site, node);
		int c = site_cmp(inode, offset, s);

		if (!c)
			return s;
		if (c < 0) {
			best = s;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	return best;
}

static struct uprobe_site *get_site(struct uprobe_site *s)
{
	refcount_inc(&s->ref);
	return s;
}

static struct uprobe_site *find_site(struct inode *inode, loff_t offset)
{
	struct uprobe_site *s;

	spin_lock(&sites_lock);
	s = site_ceil(inode, offset);
	if (s && site_cmp(inode, offset, s))
		s = NULL;
	/* Every site in the tree has a reference: see put_site(). */
	if (s)
		get_site(s);
	spin_unlock(&sites_lock);
	return s;
}

struct site_key {
	struct inode	*inode;
	loff_t		offset;
};

static int site_key_cmp(const void *key, const struct rb_node *n)
{
	const struct site_key *k = key;

	return site_cmp(k->inode, k->offset,
			rb_entry(n, struct uprobe_site, node));
}

/*
 * The site of (inode, offset), without sites_lock: for the hit path, under
 * uprobes_srcu, which keeps the site's memory until the reader is done.  A
 * lookup that raced with a rotation of the tree may miss: sites_seq tells,
 * and it looks again.  A site whose last reference is gone may still be
 * found; it has given up its inode, which may already be another file's,
 * so it is not taken.  One with a reference holds its inode, so if it
 * matches @inode now it is that file's.
 */
static struct uprobe_site *find_site_srcu(struct inode *inode, loff_t offset)
{
	struct site_key key = { inode, offset };
	struct uprobe_site *s;
	struct rb_node *n;
	unsigned int seq;

	do {
		seq = read_seqcount_begin(&sites_seq);
		n = rb_find_rcu(&key, &sites, site_key_cmp);
	} while (!n && read_seqcount_retry(&sites_seq, seq));
	if (!n)
		return NULL;
	s = rb_entry(n, struct uprobe_site, node);
	return refcount_read(&s->ref) ? s : NULL;
}

/*
 * Per-CPU hit counters, HITS_PER_BLOCK sites to one percpu allocation.
 * alloc_percpu() for each site searched the percpu allocator's maps every
 * time and was most of the cost of registering thousands of probes (a BPF
 * uprobe_multi link).  A site takes a slot number; the blocks are never
 * freed (one word per CPU for each site alive at the peak).
 */
#define HITS_PER_BLOCK	512
static DEFINE_IDA(hits_ida);
static DEFINE_XARRAY(hits_blocks);
static DEFINE_MUTEX(hits_lock);

static int hits_get(struct uprobe_site *s)
{
	unsigned long __percpu *block;
	int id, cpu, ret = 0;

	id = ida_alloc(&hits_ida, GFP_KERNEL);
	if (id < 0)
		return id;
	mutex_lock(&hits_lock);
	block = (unsigned long __percpu __force *)
		xa_load(&hits_blocks, id / HITS_PER_BLOCK);
	if (!block) {
		block = __alloc_percpu(HITS_PER_BLOCK * sizeof(*block),
				       sizeof(*block));
		ret = block ? xa_err(xa_store(&hits_blocks, id / HITS_PER_BLOCK,
					      (void __force *)block,
					      GFP_KERNEL)) : -ENOMEM;
		if (ret)
			free_percpu(block);
	}
	mutex_unlock(&hits_lock);
	if (ret) {
		ida_free(&hits_ida, id);
		return ret;
	}
	s->hits = block + id % HITS_PER_BLOCK;
	s->hits_id = id;
	for_each_possible_cpu(cpu)
		*per_cpu_ptr(s->hits, cpu) = 0;
	return 0;
}

static void free_site(struct uprobe_site *s)
{
	/* From an SRCU callback too: ida_free() is fine in any context. */
	if (s->hits)
		ida_free(&hits_ida, s->hits_id);
	kfree(s);
}

static void free_site_rcu(struct rcu_head *rcu)
{
	free_site(container_of(rcu, struct uprobe_site, rcu));
}

static unsigned long site_hits(struct uprobe_site *s)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *per_cpu_ptr(s->hits, cpu);
	return sum;
}

/*
 * Each thread remembers the site of its last hit, to find it again on the
 * next hit at the same address without looking up the VMA and the sites
 * tree (two thirds of the lookup's cost).  The memory is good while this
 * generation lasts: it moves on when a site leaves the tree (before its
 * grace period starts, so a reader that still sees the old generation is
 * inside a read section the grace period waits for), when a mapping of a
 * process with probes goes or changes (uprobe_munmap(), called with the
 * VMA write-locked and taken out of the tree, so a lookup that read the
 * new generation sees the new mapping), and when such a process's mm is
 * torn down (exec: the next mm may be allocated at the same address).
 */
static atomic_long_t site_gen;

static void site_gen_next(void)
{
	/* Whatever the caller changed is seen by who sees the new value. */
	smp_mb__before_atomic();
	atomic_long_inc(&site_gen);
}

static void put_site(struct uprobe_site *s)
{
	if (!refcount_dec_and_lock(&s->ref, &sites_lock))
		return;
	write_seqcount_begin(&sites_seq);
	rb_erase(&s->node, &sites);
	write_seqcount_end(&sites_seq);
	spin_unlock(&sites_lock);
	site_gen_next();
	iput(s->inode);
	/* A hit may have found it just before: see find_site_srcu(). */
	call_srcu(&uprobes_srcu, &s->rcu, free_site_rcu);
}

static void insert_site(struct uprobe_site *new)
{
	struct rb_node **p = &sites.rb_node, *parent = NULL;

	while (*p) {
		struct uprobe_site *s = rb_entry(*p, struct uprobe_site, node);

		parent = *p;
		if (site_cmp(new->inode, new->offset, s) < 0)
			p = &(*p)->rb_left;
		else
			p = &(*p)->rb_right;
	}
	write_seqcount_begin(&sites_seq);
	rb_link_node_rcu(&new->node, parent, p);
	rb_insert_color(&new->node, &sites);
	write_seqcount_end(&sites_seq);
}

/* Up to @len bytes of the file at @offset, zeroes past its end. */
static int read_file_bytes(struct inode *inode, loff_t offset, u8 *buf,
			   int len)
{
	struct address_space *mapping = inode->i_mapping;
	loff_t size = i_size_read(inode);

	memset(buf, 0, len);
	while (len > 0 && offset < size) {
		unsigned int off = offset_in_page(offset);
		int n = min_t(loff_t, min_t(int, len, PAGE_SIZE - off),
			      size - offset);
		struct folio *folio;

		if (shmem_mapping(mapping))
			folio = shmem_read_folio(mapping, offset >> PAGE_SHIFT);
		else
			folio = read_mapping_folio(mapping,
						   offset >> PAGE_SHIFT, NULL);
		if (IS_ERR(folio))
			return PTR_ERR(folio);
		memcpy_from_folio(buf, folio, offset_in_folio(folio, offset), n);
		folio_put(folio);
		buf += n;
		offset += n;
		len -= n;
	}
	return 0;
}

static struct uprobe_site *alloc_site(struct inode *inode, loff_t offset,
				      loff_t ref_ctr_offset)
{
	struct uprobe_site *s = kzalloc(sizeof(*s), GFP_KERNEL);
	int ret;

	if (!s)
		return ERR_PTR(-ENOMEM);
	ret = hits_get(s);
	if (ret) {
		kfree(s);
		return ERR_PTR(ret);
	}
	refcount_set(&s->ref, 1);
	s->offset = offset;
	s->ref_ctr_offset = ref_ctr_offset;
	mutex_init(&s->reg_lock);
	INIT_LIST_HEAD(&s->consumers);
	s->handle.site = s;

	/*
	 * Analyse now, from the page cache, so that a bad address fails the
	 * registration rather than some later mmap.
	 */
	ret = read_file_bytes(inode, offset, s->arch.insn, MAX_UINSN_BYTES);
	if (!ret)
		ret = arch_uprobe_analyze_insn(&s->arch, NULL, 0);
	if (ret) {
		free_site(s);
		return ERR_PTR(ret);
	}
	s->inode = igrab(inode);
	if (!s->inode) {
		free_site(s);
		return ERR_PTR(-ENOENT);
	}
	return s;
}

/* The site for (inode, offset), created on first use; holds a reference. */
static struct uprobe_site *get_or_create_site(struct inode *inode,
					      loff_t offset,
					      loff_t ref_ctr_offset)
{
	struct uprobe_site *s, *new;

	s = find_site(inode, offset);
	if (!s) {
		new = alloc_site(inode, offset, ref_ctr_offset);
		if (IS_ERR(new))
			return new;
		spin_lock(&sites_lock);
		s = site_ceil(inode, offset);
		if (s && !site_cmp(inode, offset, s)) {
			get_site(s);
		} else {
			insert_site(new);
			s = new;
			new = NULL;
		}
		spin_unlock(&sites_lock);
		if (new) {
			iput(new->inode);
			free_site(new);
		}
	}
	/* One semaphore per site: a second one cannot be counted. */
	if (s->ref_ctr_offset != ref_ctr_offset) {
		pr_warn("ref_ctr_offset mismatch: inode %lu offset %#llx has %#llx, not %#llx\n",
			inode->i_ino, offset, s->ref_ctr_offset, ref_ctr_offset);
		put_site(s);
		return ERR_PTR(-EINVAL);
	}
	return s;
}

/* ---- VMAs and breakpoint writes ------------------------------------------ */

/*
 * May the site be armed in this mapping?  Private, executable, file
 * backed, and when arming also not writable (a breakpoint in a page the
 * program writes itself could be overwritten or copied around) and in a
 * process whose code the architecture can analyse.
 */
static bool valid_vma(struct vm_area_struct *vma, bool arming)
{
	vm_flags_t mask = VM_HUGETLB | VM_MAYEXEC | VM_MAYSHARE;

	if (arming) {
		mask |= VM_WRITE;
		if (!arch_uprobe_mm_supported(vma->vm_mm))
			return false;
	}
	return vma->vm_file && (vma->vm_flags & mask) == VM_MAYEXEC;
}

static loff_t vma_offset(struct vm_area_struct *vma, unsigned long vaddr)
{
	return ((loff_t)vma->vm_pgoff << PAGE_SHIFT) + (vaddr - vma->vm_start);
}

static unsigned long offset_vaddr(struct vm_area_struct *vma, loff_t offset)
{
	return vma->vm_start + offset - ((loff_t)vma->vm_pgoff << PAGE_SHIFT);
}

/* Does @vma map @s at @vaddr? */
static bool vma_has_site(struct vm_area_struct *vma, struct uprobe_site *s,
			 unsigned long vaddr, bool arming)
{
	return vma && valid_vma(vma, arming) &&
	       file_inode(vma->vm_file) == s->inode &&
	       vma_offset(vma, vaddr) == s->offset;
}

/*
 * Read or write process memory the way a debugger does (FOLL_FORCE): a
 * write to a private file page breaks copy-on-write first, so it stays in
 * this process.  The caller holds the mmap_lock.
 */
static int access_mm(struct mm_struct *mm, unsigned long vaddr, void *buf,
		     int len, bool write)
{
	unsigned int flags = FOLL_FORCE | (write ? FOLL_WRITE : 0);
	struct vm_area_struct *vma;
	struct page *page;
	void *kaddr;

	if (offset_in_page(vaddr) + len > PAGE_SIZE)
		return -EINVAL;
	page = get_user_page_vma_remote(mm, vaddr, flags, &vma);
	if (IS_ERR(page))
		return PTR_ERR(page);
	kaddr = kmap_local_page(page) + offset_in_page(vaddr);
	if (write) {
		copy_to_user_page(vma, page, vaddr, kaddr, buf, len);
		set_page_dirty_lock(page);
	} else {
		memcpy(buf, kaddr, len);
	}
	kunmap_local(kaddr - offset_in_page(vaddr));
	put_page(page);
	return 0;
}

/* The VMA of @mm where @s's semaphore lives, and its address there. */
static struct vm_area_struct *ref_ctr_vma(struct uprobe_site *s,
					  struct mm_struct *mm,
					  unsigned long *vaddr)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct vm_area_struct *vma;

	for_each_vma(vmi, vma) {
		loff_t start = (loff_t)vma->vm_pgoff << PAGE_SHIFT;

		if (!vma->vm_file || file_inode(vma->vm_file) != s->inode ||
		    (vma->vm_flags & (VM_WRITE | VM_SHARED)) != VM_WRITE)
			continue;
		if (s->ref_ctr_offset < start ||
		    s->ref_ctr_offset >= start + (vma->vm_end - vma->vm_start))
			continue;
		*vaddr = offset_vaddr(vma, s->ref_ctr_offset);
		return vma;
	}
	return NULL;
}

static int ref_ctr_add(struct mm_struct *mm, unsigned long vaddr, short d)
{
	short val;
	int ret;

	ret = access_mm(mm, vaddr, &val, sizeof(val), false);
	if (ret)
		return ret;
	/* Never below zero, whatever the program did to it meanwhile. */
	if (val + d < 0)
		return 0;
	val += d;
	return access_mm(mm, vaddr, &val, sizeof(val), true);
}

static void drop_delayed(struct mm_struct *mm, struct uprobe_site *s)
{
	struct delayed_ref *d, *tmp;

	mutex_lock(&delayed_lock);
	list_for_each_entry_safe(d, tmp, &delayed_refs, node) {
		if (d->mm != mm || (s && d->site != s))
			continue;
		list_del(&d->node);
		put_site(d->site);
		kfree(d);
	}
	mutex_unlock(&delayed_lock);
}

/* Count the armed site in its USDT semaphore, now or once it is mapped. */
static int ref_ctr_update(struct uprobe_site *s, struct mm_struct *mm, short d)
{
	struct delayed_ref *dr;
	unsigned long vaddr;

	if (!s->ref_ctr_offset)
		return 0;
	if (ref_ctr_vma(s, mm, &vaddr))
		return ref_ctr_add(mm, vaddr, d);
	if (d < 0) {
		drop_delayed(mm, s);
		return 0;
	}
	dr = kmalloc(sizeof(*dr), GFP_KERNEL);
	if (!dr)
		return -ENOMEM;
	dr->mm = mm;
	dr->site = get_site(s);
	mutex_lock(&delayed_lock);
	list_add(&dr->node, &delayed_refs);
	mutex_unlock(&delayed_lock);
	return 0;
}

/* A writable mapping appeared: count the semaphores waiting for it. */
static void ref_ctr_mmap(struct vm_area_struct *vma)
{
	struct delayed_ref *d, *tmp;
	unsigned long vaddr;

	mutex_lock(&delayed_lock);
	list_for_each_entry_safe(d, tmp, &delayed_refs, node) {
		if (d->mm != vma->vm_mm || ref_ctr_vma(d->site, d->mm, &vaddr) != vma)
			continue;
		ref_ctr_add(d->mm, vaddr, 1);
		list_del(&d->node);
		put_site(d->site);
		kfree(d);
	}
	mutex_unlock(&delayed_lock);
}

/* Arm @s at @vaddr of @mm; mmap_lock held.  Arming twice is harmless. */
static int arm_site(struct uprobe_site *s, struct mm_struct *mm,
		    unsigned long vaddr)
{
	u8 cur, bp = UPROBE_SWBP_INSN;
	int ret;

	ret = access_mm(mm, vaddr, &cur, 1, false);
	if (ret)
		return ret;
	if (is_swbp_insn(&cur) || site_optimized(s, mm, vaddr)) {
		set_bit(MMF_HAS_UPROBES, &mm->flags);
		return 0;
	}
	ret = ref_ctr_update(s, mm, 1);
	if (ret)
		return ret;
	/* Set first: the int3 may be hit the moment it is written. */
	set_bit(MMF_HAS_UPROBES, &mm->flags);
	ret = access_mm(mm, vaddr, &bp, 1, true);
	if (ret)
		ref_ctr_update(s, mm, -1);
	return ret;
}

/* Is @page the same as the file's page cache page @index, when cached? */
static bool same_as_cached(struct address_space *mapping, pgoff_t index,
			   struct page *page)
{
	struct folio *folio = filemap_get_folio(mapping, index);
	void *a, *b;
	bool same;

	if (IS_ERR(folio))
		return false;
	same = folio_test_uptodate(folio);
	if (same) {
		a = kmap_local_page(page);
		b = kmap_local_page(folio_file_page(folio, index));
		same = !memcmp(a, b, PAGE_SIZE);
		kunmap_local(b);
		kunmap_local(a);
	}
	folio_put(folio);
	return same;
}

/*
 * Once its last breakpoint is gone, the process's private copy of a text
 * page is dropped when it equals the file's page again: the next access
 * maps the page cache page, so a probed library does not keep costing
 * every process that mapped it a page.  Only in a mapping that cannot be
 * written: nobody can change the copy there without mmap_lock (FOLL_FORCE
 * writers take it; we hold it for writing), so what we compared is what
 * we drop.  Threads faulting the page back in meanwhile are fine: the
 * zap and the fault are ordered by the page table lock, as for
 * MADV_DONTNEED.
 */
static void restore_file_page(struct mm_struct *mm, unsigned long vaddr)
{
	struct vm_area_struct *vma;
	struct page *page;
	bool drop;

	vaddr &= PAGE_MASK;
	page = get_user_page_vma_remote(mm, vaddr, FOLL_FORCE, &vma);
	if (IS_ERR(page))
		return;
	drop = PageAnon(page) && !PageCompound(page) && vma->vm_file &&
	       !(vma->vm_flags & (VM_WRITE | VM_SHARED)) &&
	       same_as_cached(vma->vm_file->f_mapping,
			      linear_page_index(vma, vaddr), page);
	put_page(page);
	if (drop)
		zap_page_range_single(vma, vaddr, PAGE_SIZE, NULL);
}

/*
 * Does another site lie in the same page of the file as @s?  Its
 * breakpoint is then most likely in this process's copy too, which
 * cannot equal the file's page: the look and the compare are left to
 * whoever disarms the last site of the page (with thousands of probes in
 * a few pages, they were a third of each removal).  A neighbour this
 * process never armed (a filter) keeps its copy until that site goes.
 */
static bool site_page_shared(struct uprobe_site *s)
{
	loff_t start = s->offset & PAGE_MASK;
	struct uprobe_site *n;
	struct rb_node *node = NULL;
	bool shared = false;

	spin_lock(&sites_lock);
	for (n = site_ceil(s->inode, start); n && !shared;
	     n = node ? rb_entry(node, struct uprobe_site, node) : NULL) {
		if (n->inode != s->inode || n->offset >= start + PAGE_SIZE)
			break;
		shared = n != s;
		node = rb_next(&n->node);
	}
	spin_unlock(&sites_lock);
	return shared;
}

/* Put the original byte back at @vaddr of @mm; mmap_lock held for writing. */
static int disarm_site(struct uprobe_site *s, struct mm_struct *mm,
		       unsigned long vaddr)
{
	u8 cur;
	int ret;

	mmap_assert_write_locked(mm);
	if (site_optimized(s, mm, vaddr)) {
		ret = unoptimize_site(s, mm, vaddr);
		if (ret)
			return ret;
	}
	ret = access_mm(mm, vaddr, &cur, 1, false);
	if (ret || !is_swbp_insn(&cur))
		return ret;
	ret = access_mm(mm, vaddr, &s->arch.insn[0], 1, true);
	if (ret)
		return ret;
	ref_ctr_update(s, mm, -1);
	if (!site_page_shared(s))
		restore_file_page(mm, vaddr);
	return 0;
}

/* ---- consumers ------------------------------------------------------------ */

static bool consumer_wants(struct uprobe_consumer *uc, struct mm_struct *mm)
{
	return !uc->filter || uc->filter(uc, mm);
}

/* Does any consumer of @s want it armed in @mm? */
static bool site_wanted(struct uprobe_site *s, struct mm_struct *mm)
{
	struct uprobe_consumer *uc;
	bool want = false;
	int idx;

	idx = srcu_read_lock(&uprobes_srcu);
	list_for_each_entry_srcu(uc, &s->consumers, cons_node,
				 srcu_read_lock_held(&uprobes_srcu)) {
		if (consumer_wants(uc, mm)) {
			want = true;
			break;
		}
	}
	srcu_read_unlock(&uprobes_srcu, idx);
	return want;
}

/*
 * Every process mapping @s, pinned (mmget()), possibly more than once.
 * Nothing may sleep under i_mmap_rwsem for memory, so count first,
 * allocate, and start over if the count grew.
 */
static struct mm_struct **collect_targets(struct uprobe_site *s, int *nr)
{
	struct address_space *mapping = s->inode->i_mapping;
	pgoff_t pgoff = s->offset >> PAGE_SHIFT;
	struct vm_area_struct *vma;
	struct mm_struct **t;
	int n, cap = 0, i;

	for (;;) {
		n = 0;
		i_mmap_lock_read(mapping);
		vma_interval_tree_foreach(vma, &mapping->i_mmap, pgoff, pgoff)
			if (valid_vma(vma, false))
				n++;
		i_mmap_unlock_read(mapping);
		if (!n) {
			*nr = 0;
			return NULL;
		}
		cap = n + 4;
		t = kvmalloc_array(cap, sizeof(*t), GFP_KERNEL);
		if (!t)
			return ERR_PTR(-ENOMEM);
		n = 0;
		i_mmap_lock_read(mapping);
		vma_interval_tree_foreach(vma, &mapping->i_mmap, pgoff, pgoff) {
			if (!valid_vma(vma, false))
				continue;
			if (n == cap) {
				n = -1;
				break;
			}
			if (mmget_not_zero(vma->vm_mm))
				t[n++] = vma->vm_mm;
		}
		i_mmap_unlock_read(mapping);
		if (n >= 0)
			break;
		/* Grew meanwhile: mmput() may sleep, so only now. */
		for (i = 0; i < cap; i++)
			mmput(t[i]);
		kvfree(t);
	}
	*nr = n;
	return t;
}

/* Does @vma map the page of @s? */
static bool vma_covers(struct vm_area_struct *vma, struct uprobe_site *s)
{
	loff_t start = (loff_t)vma->vm_pgoff << PAGE_SHIFT;

	return vma->vm_file && file_inode(vma->vm_file) == s->inode &&
	       s->offset >= start &&
	       s->offset < start + (vma->vm_end - vma->vm_start);
}

#define SITE_MAPS_MAX	8

/*
 * The addresses of @s in @mm, from the file's i_mmap tree rather than a
 * walk over all of @mm's VMAs (a tenth of each registration with
 * thousands of probes on one file).  Not armed under i_mmap_rwsem: arming
 * may allocate, and reclaim takes it.  Return: how many, or -1 when more
 * than SITE_MAPS_MAX (the caller walks the VMAs then).
 */
static int site_vaddrs(struct uprobe_site *s, struct mm_struct *mm,
		       unsigned long *vaddrs)
{
	struct address_space *mapping = s->inode->i_mapping;
	pgoff_t pgoff = s->offset >> PAGE_SHIFT;
	struct vm_area_struct *vma;
	int n = 0;

	i_mmap_lock_read(mapping);
	vma_interval_tree_foreach(vma, &mapping->i_mmap, pgoff, pgoff) {
		if (vma->vm_mm != mm)
			continue;
		if (n == SITE_MAPS_MAX) {
			n = -1;
			break;
		}
		vaddrs[n++] = offset_vaddr(vma, s->offset);
	}
	i_mmap_unlock_read(mapping);
	return n;
}

static int apply_site_at(struct uprobe_site *s, struct mm_struct *mm,
			 unsigned long vaddr, bool arm)
{
	if (!vma_has_site(vma_lookup(mm, vaddr), s, vaddr, arm))
		return 0;
	return arm ? arm_site(s, mm, vaddr) : disarm_site(s, mm, vaddr);
}

/*
 * Arm @s in every mapping of it in @mm if @uc wants it there (@arm), or
 * disarm it there if no consumer does; mmap_lock held for writing.  The
 * mappings are looked up here, not remembered from collect_targets():
 * the process may have moved one (mremap) in between, and a breakpoint
 * moves with its page.  A mapping is in the file's i_mmap tree at every
 * instant of a move (the new one is linked before the old one goes), so
 * collect_targets() cannot miss a process.
 * Arming stops at the first error; disarming tries them all.
 */
static int apply_site_mm(struct uprobe_site *s, struct uprobe_consumer *uc,
			 struct mm_struct *mm, bool arm)
{
	VMA_ITERATOR(vmi, mm, 0);
	unsigned long vaddrs[SITE_MAPS_MAX];
	struct vm_area_struct *vma;
	int n, i, ret, err = 0;

	if (arm ? !consumer_wants(uc, mm) :
		  !test_bit(MMF_HAS_UPROBES, &mm->flags) || site_wanted(s, mm))
		return 0;
	n = site_vaddrs(s, mm, vaddrs);
	for (i = 0; i < n && !(arm && err); i++) {
		ret = apply_site_at(s, mm, vaddrs[i], arm);
		err = err ?: ret;
	}
	if (n >= 0)
		return err;

	for_each_vma(vmi, vma) {
		if (arm && err)
			break;
		if (!vma_covers(vma, s))
			continue;
		ret = apply_site_at(s, mm, offset_vaddr(vma, s->offset), arm);
		err = err ?: ret;
	}
	return err;
}

/*
 * Arm @s where @uc wants it (@arm), or disarm it where no consumer wants
 * it any more.  Called under s->reg_lock.  Each process is handled under
 * its mmap_lock for writing, which orders us against uprobe_mmap() there.
 */
static int apply_site(struct uprobe_site *s, struct uprobe_consumer *uc,
		      bool arm)
{
	struct mm_struct **t;
	int n, i, err = 0;

	percpu_down_write(&dup_mmap_sem);
	t = collect_targets(s, &n);
	if (IS_ERR(t)) {
		percpu_up_write(&dup_mmap_sem);
		return PTR_ERR(t);
	}
	for (i = 0; i < n; i++) {
		int ret;

		if (!arm || !err) {
			mmap_write_lock(t[i]);
			ret = apply_site_mm(s, uc, t[i], arm);
			mmap_write_unlock(t[i]);
			if (ret && !err)
				err = ret;
		}
		mmput(t[i]);
	}
	kvfree(t);
	percpu_up_write(&dup_mmap_sem);
	return err;
}

/*
 * Disarm @s where no consumer wants it any more; reg_lock held.  When that
 * fails somewhere (GUP interrupted by a fatal signal of the caller, no
 * memory), a breakpoint may be left in some process, and a hit on an int3
 * without a site would kill it with SIGTRAP.  So the site then keeps an
 * extra reference and stays in the tree for good: its hits find it, run no
 * consumer and execute the instruction.
 */
static void disarm_or_keep(struct uprobe_site *s)
{
	int ret = apply_site(s, NULL, false);

	if (ret) {
		get_site(s);
		pr_warn("inode %lu offset 0x%llx: breakpoint not removed everywhere (%d); keeping the site\n",
			s->inode->i_ino, s->offset, ret);
	}
}

/*
 * Is this thread running uprobe handlers?  It is then inside a uprobes_srcu
 * read section itself, so it must not wait for one to end.
 */
static bool in_uprobe_handler(void)
{
	return current->utask && current->utask->in_handler;
}

static bool is_consumer(struct uprobe_site *s, struct uprobe_consumer *uc)
{
	struct uprobe_consumer *c;

	list_for_each_entry(c, &s->consumers, cons_node)
		if (c == uc)
			return true;
	return false;
}

/**
 * uprobe_register() - probe an instruction of a file in every process
 * @inode: the file
 * @offset: the instruction's offset in it
 * @ref_ctr_offset: offset of a USDT semaphore to count the armed processes
 *	in, or 0
 * @uc: the consumer: handler and/or ret_handler, optional filter
 *
 * May sleep.  It may also be called from a handler of another probe; when
 * it fails there, it cannot wait for other threads to leave @uc's handlers,
 * so @uc must then live until uprobe_unregister_sync() (called outside any
 * handler) returns, as after uprobe_unregister_nosync().
 *
 * Return: the probe's handle, for uprobe_apply() and
 * uprobe_unregister_nosync(), or an ERR_PTR: -EINVAL (no handler, bad
 * offset, unaligned or conflicting @ref_ctr_offset), -EIO (a file we cannot
 * read), -ENOEXEC (no instruction there), -ENOTSUPP (one that cannot be
 * probed), -ENOMEM, or an error from arming it in a process (-EFAULT for
 * a USDT semaphore the process cannot access).
 */
struct uprobe *uprobe_register(struct inode *inode, loff_t offset,
			       loff_t ref_ctr_offset,
			       struct uprobe_consumer *uc)
{
	struct uprobe_site *s;
	int ret;

	might_sleep();
	if (!uc->handler && !uc->ret_handler)
		return ERR_PTR(-EINVAL);
	if (!inode->i_mapping->a_ops->read_folio &&
	    !shmem_mapping(inode->i_mapping))
		return ERR_PTR(-EIO);
	if (offset < 0 || offset > i_size_read(inode))
		return ERR_PTR(-EINVAL);
	if (ref_ctr_offset < 0 || !IS_ALIGNED(ref_ctr_offset, sizeof(short)))
		return ERR_PTR(-EINVAL);

	s = get_or_create_site(inode, offset, ref_ctr_offset);
	if (IS_ERR(s))
		return ERR_CAST(s);

	mutex_lock(&s->reg_lock);
	list_add_rcu(&uc->cons_node, &s->consumers);
	ret = apply_site(s, uc, true);
	if (ret) {
		list_del_rcu(&uc->cons_node);
		disarm_or_keep(s);
	}
	mutex_unlock(&s->reg_lock);
	if (ret) {
		/* A hit may be running @uc's handler; the caller frees it. */
		if (!in_uprobe_handler())
			synchronize_srcu(&uprobes_srcu);
		put_site(s);
		return ERR_PTR(ret);
	}
	/* The consumer's reference on the site is the one we got above. */
	return &s->handle;
}
EXPORT_SYMBOL_GPL(uprobe_register);

/**
 * uprobe_apply() - re-evaluate a consumer's filter in every process
 * @uprobe: from uprobe_register()
 * @uc: a consumer of it
 * @add: arm where @uc's filter now wants the probe; else disarm where no
 *	consumer wants it any more
 *
 * Return: 0, -ENOENT when @uc is not a consumer of @uprobe, or an error
 * from arming.
 */
int uprobe_apply(struct uprobe *uprobe, struct uprobe_consumer *uc, bool add)
{
	struct uprobe_site *s = uprobe->site;
	int ret = -ENOENT;

	mutex_lock(&s->reg_lock);
	if (is_consumer(s, uc))
		ret = apply_site(s, add ? uc : NULL, add);
	mutex_unlock(&s->reg_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(uprobe_apply);

/**
 * uprobe_unregister_nosync() - remove a consumer
 * @uprobe: from uprobe_register()
 * @uc: the consumer
 *
 * Its handlers may still be running on other threads until
 * uprobe_unregister_sync() returns; @uc must live until then.
 */
void uprobe_unregister_nosync(struct uprobe *uprobe, struct uprobe_consumer *uc)
{
	struct uprobe_site *s = uprobe->site;
	bool found;

	mutex_lock(&s->reg_lock);
	found = is_consumer(s, uc);
	if (found) {
		list_del_rcu(&uc->cons_node);
		disarm_or_keep(s);
	}
	mutex_unlock(&s->reg_lock);
	if (WARN_ON_ONCE(!found))
		return;
	put_site(s);
}
EXPORT_SYMBOL_GPL(uprobe_unregister_nosync);

/**
 * uprobe_unregister_sync() - wait for handlers of removed consumers
 *
 * After it returns, no handler of a consumer removed before the call is
 * running or will run.  Not from a handler: it would wait for itself.
 */
void uprobe_unregister_sync(void)
{
	if (WARN_ON_ONCE(in_uprobe_handler()))
		return;
	synchronize_srcu(&uprobes_srcu);
}
EXPORT_SYMBOL_GPL(uprobe_unregister_sync);

/* ---- memory map hooks ----------------------------------------------------- */

/*
 * A file mapping appeared (mmap, split, merge, mremap); the caller holds
 * the mmap_lock for writing.  Arm the sites it covers that a consumer wants
 * here, and count USDT semaphores that were waiting for it.
 */
int uprobe_mmap(struct vm_area_struct *vma)
{
	struct mm_struct *mm = vma->vm_mm;
	struct inode *inode;
	loff_t off, end;

	if (!vma->vm_file)
		return 0;
	if ((vma->vm_flags & (VM_WRITE | VM_SHARED)) == VM_WRITE &&
	    !list_empty(&delayed_refs))
		ref_ctr_mmap(vma);
	if (RB_EMPTY_ROOT(&sites) || !valid_vma(vma, true))
		return 0;

	inode = file_inode(vma->vm_file);
	off = (loff_t)vma->vm_pgoff << PAGE_SHIFT;
	end = off + (vma->vm_end - vma->vm_start);
	while (!fatal_signal_pending(current)) {
		struct uprobe_site *s;

		spin_lock(&sites_lock);
		s = site_ceil(inode, off);
		if (s && (s->inode != inode || s->offset >= end))
			s = NULL;
		if (s)
			get_site(s);
		spin_unlock(&sites_lock);
		if (!s)
			break;
		if (site_wanted(s, mm))
			arm_site(s, mm, offset_vaddr(vma, s->offset));
		off = s->offset + 1;
		put_site(s);
	}
	return 0;
}

/*
 * Part of a mapping goes away or changes.  The breakpoints go with the
 * pages; what is kept per address (stubs, boosted copies, each thread's
 * last site) is forgotten.
 */
void uprobe_munmap(struct vm_area_struct *vma, unsigned long start,
		   unsigned long end)
{
	/* Not at exit: nothing moves then, and the mm is being torn down. */
	if (test_bit(MMF_HAS_UPROBES, &vma->vm_mm->flags) &&
	    atomic_read(&vma->vm_mm->mm_users)) {
		site_gen_next();
		stub_moved(vma, start, end);
		boost_forget(vma->vm_mm, start, end);
	}
}

/* fork: arming and fork exclude each other, see apply_site(). */
void uprobe_start_dup_mmap(void)
{
	percpu_down_read(&dup_mmap_sem);
}

void uprobe_end_dup_mmap(void)
{
	percpu_up_read(&dup_mmap_sem);
}

/*
 * The child gets copies of the parent's pages, breakpoints included, and
 * no XOL area (VM_DONTCOPY).  A breakpoint no consumer wants in the child
 * is taken out on its first hit there.
 */
void uprobe_dup_mmap(struct mm_struct *oldmm, struct mm_struct *newmm)
{
	if (test_bit(MMF_HAS_UPROBES, &oldmm->flags)) {
		set_bit(MMF_HAS_UPROBES, &newmm->flags);
		stub_dup(oldmm, newmm);
	}
}

/* ---- the XOL area ----------------------------------------------------------- */

static vm_fault_t xol_fault(const struct vm_special_mapping *sm,
			    struct vm_area_struct *vma, struct vm_fault *vmf)
{
	struct xol_area *area = READ_ONCE(vma->vm_mm->uprobes_state.xol_area);

	if (!area || vmf->pgoff)
		return VM_FAULT_SIGBUS;
	vmf->page = area->page;
	get_page(vmf->page);
	return 0;
}

/* Slots and the trampoline are addressed by area->vaddr: it stays put. */
static int xol_mremap(const struct vm_special_mapping *sm,
		      struct vm_area_struct *new_vma)
{
	return -EPERM;
}

static const struct vm_special_mapping xol_mapping = {
	.name	= "[uprobes]",
	.fault	= xol_fault,
	.mremap	= xol_mremap,
};

static struct xol_area *xol_alloc(void)
{
	struct xol_area *area = kzalloc(sizeof(*area), GFP_KERNEL);
	unsigned long tsize;
	void *tramp, *kaddr;

	if (!area)
		return NULL;
	/* Zeroed: nothing of the kernel's may show through to user space. */
	area->page = alloc_page(GFP_HIGHUSER | __GFP_ZERO);
	if (!area->page) {
		kfree(area);
		return NULL;
	}
	init_waitqueue_head(&area->wq);
	/* Slot 0 holds the return-probe trampoline for good. */
	set_bit(0, area->busy);
	tramp = arch_uprobe_trampoline(&tsize);
	kaddr = kmap_local_page(area->page);
	memcpy(kaddr, tramp, min_t(unsigned long, tsize, UPROBE_XOL_SLOT_BYTES));
	kunmap_local(kaddr);
	return area;
}

static void xol_free(struct xol_area *area)
{
	put_page(area->page);
	kfree(area);
}

/* Map @area into the current process at @vaddr, or anywhere if 0. */
static int xol_map(struct mm_struct *mm, struct xol_area *area,
		   unsigned long vaddr)
{
	struct vm_area_struct *vma;

	if (!vaddr) {
		vaddr = get_unmapped_area(NULL, TASK_SIZE - PAGE_SIZE,
					  PAGE_SIZE, 0, 0);
		if (IS_ERR_VALUE(vaddr))
			return vaddr;
	} else if (find_vma_intersection(mm, vaddr, vaddr + PAGE_SIZE)) {
		return -ENOMEM;
	}
	vma = _install_special_mapping(mm, vaddr, PAGE_SIZE,
				       VM_EXEC | VM_MAYEXEC | VM_DONTCOPY |
				       VM_IO, &xol_mapping);
	if (IS_ERR(vma))
		return PTR_ERR(vma);
	area->vaddr = vaddr;
	return 0;
}

/* The current process's XOL area, mapped on first use (at @vaddr if set). */
static struct xol_area *get_xol_area_at(unsigned long vaddr)
{
	struct mm_struct *mm = current->mm;
	struct xol_area *area = READ_ONCE(mm->uprobes_state.xol_area);

	if (area)
		return area;
	area = xol_alloc();
	if (!area)
		return NULL;
	mmap_write_lock(mm);
	if (!mm->uprobes_state.xol_area && !xol_map(mm, area, vaddr)) {
		/* Published under the lock: faults on it wait for us. */
		smp_store_release(&mm->uprobes_state.xol_area, area);
		area = NULL;
	}
	mmap_write_unlock(mm);
	if (area)
		xol_free(area);
	return READ_ONCE(mm->uprobes_state.xol_area);
}

static struct xol_area *get_xol_area(void)
{
	return get_xol_area_at(0);
}

/* A free slot, waiting for one if every slot has a stepping thread. */
static unsigned long xol_take_slot(struct xol_area *area)
{
	unsigned int i;

	for (;;) {
		i = find_first_zero_bit(area->busy, XOL_SLOTS);
		if (i < XOL_SLOTS) {
			if (!test_and_set_bit(i, area->busy))
				return area->vaddr + i * UPROBE_XOL_SLOT_BYTES;
			continue;
		}
		if (wait_event_killable(area->wq,
				find_first_zero_bit(area->busy, XOL_SLOTS) < XOL_SLOTS))
			return 0;
	}
}

static void xol_put_slot(struct xol_area *area, unsigned long vaddr)
{
	unsigned int i = (vaddr - area->vaddr) / UPROBE_XOL_SLOT_BYTES;

	if (WARN_ON_ONCE(!i || i >= XOL_SLOTS))
		return;
	clear_bit(i, area->busy);
	/* The cleared bit before the waiter check; pairs with wait_event. */
	smp_mb__after_atomic();
	if (wq_has_sleeper(&area->wq))
		wake_up(&area->wq);
}

void __weak arch_uprobe_copy_ixol(struct page *page, unsigned long vaddr,
				  void *src, unsigned long len)
{
	void *kaddr = kmap_local_page(page);

	memcpy(kaddr + offset_in_page(vaddr), src, len);
	flush_dcache_page(page);
	kunmap_local(kaddr);
}

unsigned long uprobe_get_trampoline_vaddr(void)
{
	struct mm_struct *mm = current->mm;
	struct xol_area *area = mm ? READ_ONCE(mm->uprobes_state.xol_area) : NULL;

	return area ? area->vaddr : UPROBE_NO_TRAMPOLINE_VADDR;
}

unsigned long __weak uprobe_get_swbp_addr(struct pt_regs *regs)
{
	return instruction_pointer(regs) - UPROBE_SWBP_INSN_SIZE;
}

/*
 * Where a trap happened as far as the user may know: a fault in a slot
 * copy, a boosted copy or a stub is reported at the probed instruction.
 */
unsigned long uprobe_get_trap_addr(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	struct mm_struct *mm = current->mm;
	unsigned long vaddr = 0;
	unsigned int off, blen;

	if (unlikely(utask && utask->active))
		return utask->bp_vaddr;
	if (mm && test_bit(MMF_HAS_UPROBES, &mm->flags)) {
		rcu_read_lock();
		vaddr = stub_site(mm, instruction_pointer(regs), &off, &blen);
		rcu_read_unlock();
	}
	return vaddr ?: instruction_pointer(regs);
}

/* ---- per-task state ---------------------------------------------------- */

static struct uprobe_task *get_utask(void)
{
	if (!current->utask)
		current->utask = kzalloc(sizeof(struct uprobe_task), GFP_KERNEL);
	return current->utask;
}

/* Instances a task keeps for reuse: enough for usual call depths. */
#define RI_CACHE_MAX	16

static struct return_instance *alloc_ri(struct uprobe_task *utask)
{
	struct return_instance *ri = utask->ri_cache;

	if (!ri)
		return kmalloc(sizeof(*ri), GFP_KERNEL);
	utask->ri_cache = ri->next;
	utask->ri_cached--;
	return ri;
}

static void cache_ri(struct uprobe_task *utask, struct return_instance *ri)
{
	if (utask->ri_cached >= RI_CACHE_MAX) {
		kfree(ri);
		return;
	}
	ri->next = utask->ri_cache;
	utask->ri_cache = ri;
	utask->ri_cached++;
}

static void free_ri(struct uprobe_task *utask, struct return_instance *ri)
{
	utask->return_instances = ri->next;
	utask->depth--;
	put_site(ri->site);
	cache_ri(utask, ri);
}

/* exec and exit: the thread's pending returns and a step in progress. */
void uprobe_free_utask(struct task_struct *t)
{
	struct uprobe_task *utask = t->utask;
	struct xol_area *area;

	if (!utask)
		return;
	if (utask->active) {
		area = t->mm ? t->mm->uprobes_state.xol_area : NULL;
		if (area && utask->xol_vaddr)
			xol_put_slot(area, utask->xol_vaddr);
		put_site(utask->active);
	}
	while (utask->return_instances)
		free_ri(utask, utask->return_instances);
	while (utask->ri_cache)
		kfree(alloc_ri(utask));
	kfree(utask);
	t->utask = NULL;
}

static void dup_xol_work(struct callback_head *work)
{
	struct uprobe_task *utask = current->utask;

	if (current->flags & PF_EXITING)
		return;
	if (!get_xol_area_at(utask->dup_xol_addr))
		pr_warn_ratelimited("pid %d: no XOL area for the return probes fork copied\n",
				    current->pid);
}

/*
 * A new task.  Threads start with nothing.  A forked child returns through
 * the same frames as its parent, so it gets copies of the pending return
 * instances and, from task work before it reaches user space, an XOL area
 * at the parent's address for the trampoline those frames return to.
 */
void uprobe_copy_process(struct task_struct *t, unsigned long flags)
{
	struct uprobe_task *utask = current->utask, *nu;
	struct return_instance *ri, **tail;
	struct xol_area *area;

	t->utask = NULL;
	if (!utask || !utask->return_instances)
		return;
	if (t->mm == current->mm && !(flags & CLONE_VFORK))
		return;
	area = READ_ONCE(current->mm->uprobes_state.xol_area);
	if (!area)
		return;

	nu = kzalloc(sizeof(*nu), GFP_KERNEL);
	if (!nu)
		goto fail;
	t->utask = nu;
	tail = &nu->return_instances;
	for (ri = utask->return_instances; ri; ri = ri->next) {
		struct return_instance *c = kmemdup(ri, sizeof(*ri), GFP_KERNEL);

		if (!c)
			goto fail;
		get_site(c->site);
		c->next = NULL;
		*tail = c;
		tail = &c->next;
		nu->depth++;
	}
	if (t->mm == current->mm)
		return;
	nu->dup_xol_addr = area->vaddr;
	init_task_work(&nu->dup_xol_work, dup_xol_work);
	task_work_add(t, &nu->dup_xol_work, TWA_RESUME);
	return;
fail:
	pr_warn_ratelimited("pid %d: cannot copy pending return probes\n",
			    t->pid);
}

/* ---- per-process probes (register_uprobe) ------------------------------ */

static bool seed_filter(struct uprobe_consumer *uc, struct mm_struct *mm)
{
	struct uprobe_seed *seed = container_of(uc, struct uprobe_seed, uc);

	return mm == seed->mm && !READ_ONCE(seed->gone);
}

static int seed_handler(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	struct uprobe_seed *seed = container_of(uc, struct uprobe_seed, uc);

	if (!seed_filter(uc, current->mm))
		return UPROBE_HANDLER_REMOVE;
	/* Ran in the trap already (uprobe_pre_sstep_notifier()). */
	if (!seed->in_irq) {
		atomic_long_inc(&seed->hits);
		seed->u->handler(seed->u, regs);
	}
	return 0;
}

static int seed_ret_handler(struct uprobe_consumer *uc, unsigned long func,
			    struct pt_regs *regs)
{
	struct uprobe_seed *seed = container_of(uc, struct uprobe_seed, uc);

	if (seed_filter(uc, current->mm))
		seed->u->ret_handler(seed->u, func, regs);
	return 0;
}

/*
 * Take @seed off its site (unless its registration failed) and free it;
 * may sleep.
 */
static void seed_detach(struct uprobe_seed *seed)
{
	if (seed->site)
		uprobe_unregister_nosync(&seed->site->handle, &seed->uc);
	synchronize_srcu(&uprobes_srcu);
	/* The trap looks at the seeds list under RCU. */
	synchronize_rcu();
	mmdrop(seed->mm);
	kfree(seed);
}

static void seed_reap_fn(struct work_struct *work)
{
	struct uprobe_seed *seed;
	unsigned long flags;

	for (;;) {
		spin_lock_irqsave(&seed_lock, flags);
		seed = list_first_entry_or_null(&reap_list, struct uprobe_seed,
						reap);
		if (seed)
			list_del(&seed->reap);
		spin_unlock_irqrestore(&seed_lock, flags);
		if (!seed)
			break;
		seed_detach(seed);
	}
}

/* Unlink @seed from the caller's struct uprobe; seed_lock held. */
static void seed_unlink(struct uprobe_seed *seed)
{
	WRITE_ONCE(seed->gone, true);
	list_del_rcu(&seed->node);
	seed->u->seed = NULL;
}

static struct uprobe_seed *seed_of(struct uprobe *u)
{
	struct uprobe_seed *seed;

	list_for_each_entry(seed, &seeds, node)
		if (seed->u == u)
			return seed;
	return NULL;
}

/**
 * register_uprobe() - probe an address in one process
 * @u: pid, vaddr and handler set, ret_handler and handler_in_interrupt
 *	optional, the rest zero
 *
 * Every thread of the process hits it, threads created later too; forked
 * children do not.  exec and exit end the probe.
 *
 * May sleep.  When called from a handler of another probe and it fails,
 * other threads may still be running @u's handler: call unregister_uprobe()
 * outside any handler before freeing @u (it then waits for them).
 *
 * Return: 0; -EINVAL for no handler, @u already registered, a kernel
 * thread, an address not in an executable mapping or in one that is
 * writable or shared; -ESRCH when there is no such process;
 * -EOPNOTSUPP for anonymous code; -EEXIST when someone else's breakpoint
 * is already there; or an error of uprobe_register() (-ENOEXEC,
 * -ENOTSUPP for an instruction that cannot be probed, -ENOMEM).
 */
int register_uprobe(struct uprobe *u)
{
	struct uprobe_site *existing;
	struct uprobe_seed *seed;
	struct task_struct *task;
	struct vm_area_struct *vma;
	struct inode *inode = NULL;
	struct mm_struct *mm;
	struct uprobe *h;
	unsigned long flags;
	loff_t offset = 0;
	bool reap;
	int ret = 0;
	u8 byte = 0;

	might_sleep();
	if (!u || !u->handler)
		return -EINVAL;
	spin_lock_irqsave(&seed_lock, flags);
	if (seed_of(u))
		ret = -EINVAL;
	spin_unlock_irqrestore(&seed_lock, flags);
	if (ret)
		return ret;

	task = find_get_task_by_vpid(u->pid);
	if (!task)
		return -ESRCH;
	if (task->flags & PF_KTHREAD) {
		put_task_struct(task);
		return -EINVAL;
	}
	mm = get_task_mm(task);
	put_task_struct(task);
	if (!mm)
		return -ESRCH;

	mmap_read_lock(mm);
	vma = vma_lookup(mm, u->vaddr);
	if (!vma || !(vma->vm_flags & VM_EXEC))
		ret = -EINVAL;
	else if (!vma->vm_file)
		ret = -EOPNOTSUPP;
	else if (!valid_vma(vma, true))
		ret = -EINVAL;
	else
		ret = access_mm(mm, u->vaddr, &byte, 1, false);
	if (!ret) {
		inode = igrab(file_inode(vma->vm_file));
		offset = vma_offset(vma, u->vaddr);
	}
	mmap_read_unlock(mm);
	if (!ret && !inode)
		ret = -ESRCH;
	if (ret)
		goto out_mm;

	/* A breakpoint that is not ours: a debugger's, say. */
	existing = find_site(inode, offset);
	if (existing)
		put_site(existing);
	else if (is_swbp_insn(&byte)) {
		ret = -EEXIST;
		goto out_inode;
	}

	seed = kzalloc(sizeof(*seed), GFP_KERNEL);
	if (!seed) {
		ret = -ENOMEM;
		goto out_inode;
	}
	seed->u = u;
	seed->mm = mm;
	mmgrab(mm);
	seed->vaddr = u->vaddr;
	seed->in_irq = u->handler_in_interrupt;
	seed->uc.handler = seed_handler;
	seed->uc.filter = seed_filter;
	if (u->ret_handler)
		seed->uc.ret_handler = seed_ret_handler;
	INIT_LIST_HEAD(&seed->reap);

	/* On the list first, so the trap finds it from the first hit on. */
	spin_lock_irqsave(&seed_lock, flags);
	if (seed_of(u)) {
		ret = -EINVAL;
	} else {
		list_add_rcu(&seed->node, &seeds);
		u->seed = seed;
	}
	spin_unlock_irqrestore(&seed_lock, flags);
	if (ret) {
		mmdrop(mm);
		kfree(seed);
		goto out_inode;
	}

	h = uprobe_register(inode, offset, 0, &seed->uc);
	if (IS_ERR(h)) {
		ret = PTR_ERR(h);
		/*
		 * From a handler, threads may still be in seed_handler()
		 * (uprobe_register() could not wait): the reaper frees it,
		 * and unregister_uprobe() waits for the reaper.
		 */
		reap = in_uprobe_handler();
		spin_lock_irqsave(&seed_lock, flags);
		if (u->seed == seed)
			seed_unlink(seed);
		if (reap)
			list_add_tail(&seed->reap, &reap_list);
		spin_unlock_irqrestore(&seed_lock, flags);
		if (reap) {
			schedule_work(&seed_reap_work);
		} else {
			synchronize_rcu();
			mmdrop(mm);
			kfree(seed);
		}
		goto out_inode;
	}
	/*
	 * exit, exec or unregister_uprobe() may have come meanwhile and left
	 * the reaping to us: they only queue seeds that have their site.
	 */
	spin_lock_irqsave(&seed_lock, flags);
	seed->site = h->site;
	reap = seed->gone;
	if (reap)
		list_add_tail(&seed->reap, &reap_list);
	spin_unlock_irqrestore(&seed_lock, flags);
	/* Not seed->reap: once queued, the reaper may free it. */
	if (reap)
		schedule_work(&seed_reap_work);
out_inode:
	iput(inode);
out_mm:
	mmput(mm);
	return ret;
}
EXPORT_SYMBOL_GPL(register_uprobe);

/**
 * unregister_uprobe() - remove a probe of register_uprobe()
 * @u: the probe
 *
 * May be called from the probe's handler, in either context: the probe is
 * off at once, but other threads may still be running the handler when it
 * returns.  Elsewhere it sleeps until no handler of @u runs, also when the
 * probe was already off (exit, exec, or from the handler), so @u may be
 * freed when it returns; the kernel may write to @u until then.
 */
void unregister_uprobe(struct uprobe *u)
{
	struct uprobe_seed *seed;
	unsigned long flags;
	bool deferred;

	spin_lock_irqsave(&seed_lock, flags);
	seed = seed_of(u);
	if (seed)
		seed_unlink(seed);
	/* Registration still in progress: register_uprobe() reaps it. */
	if (seed && !seed->site)
		seed = NULL;
	/* From a handler we may neither sleep nor wait for ourselves. */
	deferred = seed && (irqs_disabled_flags(flags) || in_atomic() ||
			    in_uprobe_handler());
	if (deferred)
		list_add_tail(&seed->reap, &reap_list);
	spin_unlock_irqrestore(&seed_lock, flags);
	if (deferred) {
		schedule_work(&seed_reap_work);
	} else if (seed) {
		seed_detach(seed);
	} else if (!irqs_disabled_flags(flags) && !in_atomic() &&
		   !in_uprobe_handler()) {
		/*
		 * Already off (from its handler, or by exit or exec): its
		 * handlers may still be running on other threads until the
		 * reaper is through.  Reap here and wait, so that the caller
		 * may free @u and its module when this returns.
		 */
		seed_reap_fn(NULL);
		flush_work(&seed_reap_work);
	}
}
EXPORT_SYMBOL_GPL(unregister_uprobe);

/* The process is gone (exit, or exec replaced its mm). */
void uprobe_clear_state(struct mm_struct *mm)
{
	struct xol_area *area = mm->uprobes_state.xol_area;
	struct uprobe_seed *seed, *tmp;
	unsigned long flags;
	bool reap = false;

	/* Threads that exec'ed from it may remember sites in it. */
	if (test_bit(MMF_HAS_UPROBES, &mm->flags))
		site_gen_next();

	spin_lock_irqsave(&seed_lock, flags);
	list_for_each_entry_safe(seed, tmp, &seeds, node) {
		if (seed->mm != mm)
			continue;
		seed_unlink(seed);
		if (seed->site) {
			list_add_tail(&seed->reap, &reap_list);
			reap = true;
		}
	}
	spin_unlock_irqrestore(&seed_lock, flags);
	if (reap)
		schedule_work(&seed_reap_work);

	if (!list_empty(&delayed_refs))
		drop_delayed(mm, NULL);
	if (area) {
		mm->uprobes_state.xol_area = NULL;
		xol_free(area);
	}
	stub_clear(mm);
}

/* ---- hits ---------------------------------------------------------------- */

/* Run the handlers of per-process probes that want the trap's context. */
static bool seed_irq_handlers(struct pt_regs *regs, unsigned long bp_vaddr)
{
	struct mm_struct *mm = current->mm;
	struct uprobe_seed *seed;
	bool any = false;

	rcu_read_lock();
	list_for_each_entry_rcu(seed, &seeds, node) {
		if (seed->mm != mm || seed->vaddr != bp_vaddr || !seed->in_irq ||
		    READ_ONCE(seed->gone))
			continue;
		atomic_long_inc(&seed->hits);
		seed->u->handler(seed->u, regs);
		any = true;
	}
	rcu_read_unlock();
	return any;
}

/* Return: true when a handler sent the thread elsewhere: nothing more. */
static bool seed_trap_handlers(struct pt_regs *regs)
{
	unsigned long bp_vaddr = uprobe_get_swbp_addr(regs);

	if (boost_again(current->utask, regs, bp_vaddr))
		return false;
	regs->ip = bp_vaddr;
	seed_irq_handlers(regs, bp_vaddr);
	if (regs->ip != bp_vaddr)
		return true;
	regs->ip += UPROBE_SWBP_INSN_SIZE;
	return false;
}

/*
 * An int3 from user mode: from the x86 int3 handler directly (see
 * kprobe_int3_handler()), or DIE_INT3 through the die chain.  Interrupts
 * are off: only flag the thread, except for handlers registered to run
 * right here.  Return: 1 when the trap is ours (or may be: the thread
 * finds out on its way out), 0 when it cannot be.
 */
int uprobe_pre_sstep_notifier(struct pt_regs *regs)
{
	struct mm_struct *mm = current->mm;

	if (!mm || (!test_bit(MMF_HAS_UPROBES, &mm->flags) &&
		    !(current->utask && current->utask->return_instances)))
		return 0;
	if (list_empty(&seeds) || !seed_trap_handlers(regs))
		set_thread_flag(TIF_UPROBE);
	return 1;
}

/* DIE_DEBUG from user mode: the step of a slot copy finished. */
int uprobe_post_sstep_notifier(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;

	if (!current->mm || !utask || !utask->active ||
	    utask->state != UTASK_SSTEP)
		return stub_step(regs);
	utask->state = UTASK_SSTEP_ACK;
	set_thread_flag(TIF_UPROBE);
	return 1;
}

static struct notifier_block uprobe_die_nb = {
	.notifier_call	= arch_uprobe_exception_notify,
	/* After kprobes and kgdb, which look at kernel traps only anyway. */
	.priority	= INT_MAX - 1,
};

static struct uprobe_site *site_in_vma(struct vm_area_struct *vma,
				       unsigned long vaddr)
{
	if (!vma || !valid_vma(vma, false))
		return NULL;
	return find_site_srcu(file_inode(vma->vm_file), vma_offset(vma, vaddr));
}

static struct uprobe_site *site_remembered(struct uprobe_task *utask,
					   unsigned long vaddr,
					   unsigned long gen)
{
	struct uprobe_site *s;

	if (!utask || utask->last_vaddr != vaddr || utask->last_gen != gen ||
	    utask->last_mm != current->mm)
		return NULL;
	s = utask->last_site;
	/* Dead but not freed yet: as find_site_srcu() would. */
	return refcount_read(&s->ref) ? s : NULL;
}

/*
 * Find the site the int3 at @bp_vaddr belongs to; under uprobes_srcu, which
 * keeps it.  When there is none, *@is_bp says whether an int3 is still
 * there (someone else's).  The VMA is held by its own lock, so threads
 * hitting probes do not queue behind each other or behind mmap() on
 * mmap_lock; that is taken only when a writer holds the VMA.
 */
static struct uprobe_site *site_at(unsigned long bp_vaddr, bool *is_bp)
{
	struct uprobe_task *utask = current->utask;
	struct mm_struct *mm = current->mm;
	struct uprobe_site *s;
	struct vm_area_struct *vma;
	unsigned long gen;
	u8 byte;

	/* Read before the lookup, so that a change during it is seen. */
	gen = atomic_long_read_acquire(&site_gen);
	s = site_remembered(utask, bp_vaddr, gen);
	if (s) {
		*is_bp = false;
		return s;
	}
	vma = lock_vma_under_rcu(mm, bp_vaddr);
	if (vma) {
		s = site_in_vma(vma, bp_vaddr);
		vma_end_read(vma);
	} else {
		mmap_read_lock(mm);
		s = site_in_vma(vma_lookup(mm, bp_vaddr), bp_vaddr);
		mmap_read_unlock(mm);
	}
	if (s && utask) {
		utask->last_mm = mm;
		utask->last_vaddr = bp_vaddr;
		utask->last_site = s;
		utask->last_gen = gen;
	}
	/* Read the text only now: a fault must not nest in the lock. */
	*is_bp = !s && !copy_from_user(&byte, (void __user *)bp_vaddr, 1) &&
		 is_swbp_insn(&byte);
	return s;
}

/* Make @s's next return instance: hijack the return address. */
static void prepare_uretprobe(struct uprobe_site *s, struct pt_regs *regs,
			      unsigned long bp_vaddr)
{
	struct uprobe_task *utask = current->utask;
	struct return_instance *ri;
	struct xol_area *area;
	unsigned long orig, tramp;
	bool chained;

	area = get_xol_area();
	if (!area)
		goto miss;
	if (utask->depth >= MAX_URETPROBE_DEPTH) {
		pr_warn_ratelimited("pid %d: more than %d nested return probes\n",
				    current->pid, MAX_URETPROBE_DEPTH);
		goto miss;
	}
	ri = alloc_ri(utask);
	if (!ri)
		goto miss;
	/* A pending return pins the site (it may be going: then miss). */
	if (!refcount_inc_not_zero(&s->ref)) {
		cache_ri(utask, ri);
		goto miss;
	}
	tramp = area->vaddr;
	orig = arch_uretprobe_hijack_return_addr(tramp, regs);
	if (orig == -1UL) {
		put_site(s);
		cache_ri(utask, ri);
		goto miss;
	}
	chained = orig == tramp;
	/* Frames longjmp() skipped never return through the trampoline. */
	while (utask->return_instances &&
	       !arch_uretprobe_is_alive(utask->return_instances,
					chained ? RP_CHECK_CHAIN_CALL :
						  RP_CHECK_CALL, regs))
		free_ri(utask, utask->return_instances);
	if (chained) {
		/* A tail call from a probed function: same frame, same return. */
		if (!utask->return_instances) {
			pr_warn_ratelimited("pid %d: return address is the trampoline but nothing is pending\n",
					    current->pid);
			put_site(s);
			cache_ri(utask, ri);
			force_sig(SIGSEGV);
			return;
		}
		orig = utask->return_instances->orig_ret_vaddr;
	}
	ri->site = s;
	ri->func = bp_vaddr;
	ri->stack = user_stack_pointer(regs);
	ri->orig_ret_vaddr = orig;
	ri->chained = chained;
	ri->next = utask->return_instances;
	utask->return_instances = ri;
	utask->depth++;
	return;
miss:
	atomic_long_inc(&s->missed);
}

static void handler_chain(struct uprobe_site *s, struct pt_regs *regs,
			  unsigned long bp_vaddr)
{
	struct uprobe_task *utask = current->utask;
	struct uprobe_consumer *uc;
	bool remove = true, need_ret = false;

	this_cpu_inc(*s->hits);
	utask->auprobe = &s->arch;
	utask->in_handler = true;
	/* The caller's uprobes_srcu read section covers the consumers too. */
	list_for_each_entry_srcu(uc, &s->consumers, cons_node,
				 srcu_read_lock_held(&uprobes_srcu)) {
		int rc = 0;

		if (uc->handler) {
			rc = uc->handler(uc, regs);
			WARN_ONCE(rc & ~UPROBE_HANDLER_MASK,
				  "uprobe handler %ps returned %d\n",
				  uc->handler, rc);
		}
		if (uc->ret_handler)
			need_ret = true;
		remove &= rc == UPROBE_HANDLER_REMOVE;
	}
	utask->in_handler = false;
	utask->auprobe = NULL;

	/* Only when the function is entered as it was probed. */
	if (need_ret && instruction_pointer(regs) == bp_vaddr)
		prepare_uretprobe(s, regs, bp_vaddr);

	/*
	 * Every consumer asked to leave this process, or none is left (a site
	 * kept after a failed disarm): disarm if the filters agree.  Not for
	 * a site that lost its last reference: it has given up its inode
	 * and its int3s, and one at this address now is a new site's.
	 */
	if (remove && refcount_inc_not_zero(&s->ref)) {
		struct mm_struct *mm = current->mm;
		struct vm_area_struct *vma;

		mutex_lock(&s->reg_lock);
		mmap_write_lock(mm);
		vma = vma_lookup(mm, bp_vaddr);
		if (vma_has_site(vma, s, bp_vaddr, false) && !site_wanted(s, mm))
			disarm_site(s, mm, bp_vaddr);
		mmap_write_unlock(mm);
		mutex_unlock(&s->reg_lock);
		put_site(s);
	}
}

static void ret_handler_chain(struct return_instance *ri, struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	struct uprobe_site *s = ri->site;
	struct uprobe_consumer *uc;
	int idx;

	utask->auprobe = &s->arch;
	utask->in_handler = true;
	idx = srcu_read_lock(&uprobes_srcu);
	list_for_each_entry_srcu(uc, &s->consumers, cons_node,
				 srcu_read_lock_held(&uprobes_srcu))
		if (uc->ret_handler)
			uc->ret_handler(uc, ri->func, regs);
	srcu_read_unlock(&uprobes_srcu, idx);
	utask->in_handler = false;
	utask->auprobe = NULL;
}

/*
 * A probed function returned to the trampoline; @regs are as right after
 * its ret, with ip at the trampoline.  Run the return handlers of its
 * instance (and of the instances chained to it by tail calls) and go back
 * to the real return address.
 */
void uprobe_handle_trampoline(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	struct return_instance *ri;
	bool chained;

	if (!utask)
		goto bad;
	/* Drop instances of frames that longjmp() unwound. */
	while (utask->return_instances &&
	       !arch_uretprobe_is_alive(utask->return_instances, RP_CHECK_RET,
					regs))
		free_ri(utask, utask->return_instances);
	if (!utask->return_instances)
		goto bad;
	do {
		ri = utask->return_instances;
		chained = ri->chained;
		instruction_pointer_set(regs, ri->orig_ret_vaddr);
		ret_handler_chain(ri, regs);
		/* A handler may have redirected it: keep what it set. */
		free_ri(utask, ri);
	} while (chained && utask->return_instances);
	return;
bad:
	pr_warn_ratelimited("pid %d: return through the trampoline with no return probe pending\n",
			    current->pid);
	force_sig(SIGSEGV);
}

/* ---- optimized sites ------------------------------------------------------ */

/*
 * An instruction the architecture can overwrite with a jump (x86: a 5-byte
 * nop, as USDT and -fpatchable-function-entry emit) is, on its first int3
 * hit in a process, turned into a jump to a stub near it that enters the
 * kernel by a system call: no trap, and nothing written below the stack
 * pointer's red zone (arch/x86/kernel/uprobes.c has the stub).
 *
 * The stubs of a page are all the same code; which probed address a stub
 * serves is in site[] of its page, set once and never changed while a
 * process maps the page.  So a thread still inside a stub after its site
 * went away, or was unregistered, still knows where to resume.  Stub pages
 * are mapped without VM_DONTCOPY: a forked child's text has the parent's
 * jumps, so it shares the parent's stub pages (refcounted, each at the same
 * address in both).  A process's set of stub pages is found by its mm in
 * stub_sets; the mm itself has no room for it that fork would clear.
 */
struct stub_page {
	refcount_t		ref;
	spinlock_t		lock;		/* site[], boost_len[] entries */
	struct page		*page;
	unsigned long		vaddr;
	unsigned long		site[UPROBE_STUBS_PER_PAGE];
	/* 0: the system call stub; else a boosted copy of that length */
	u8			boost_len[UPROBE_STUBS_PER_PAGE];
};

#define STUB_PAGES	8			/* per process */

struct stub_set {
	struct hlist_node	node;		/* stub_sets, RCU */
	struct mm_struct	*mm;
	struct rcu_head		rcu;
	struct stub_page	*pages[STUB_PAGES];	/* set under mmap_lock */
	/* probed address -> its boosted copy here, or BOOST_NONE */
	struct xarray		boosts;
};

#define BOOST_NONE	1UL	/* no copy for this address fits here */

static DEFINE_HASHTABLE(stub_sets, 6);
static DEFINE_SPINLOCK(stub_sets_lock);
static bool uprobe_opt_enabled = true;		/* debugfs uprobes/optimize */
static bool uprobe_boost_enabled = true;	/* debugfs uprobes/boost */

/*
 * The stub pages of @mm, or NULL.  The set stays while the caller holds
 * @mm's mmap_lock, runs in @mm, or is in an RCU read section: it goes only
 * with the mm (stub_clear()).
 */
static struct stub_set *stub_set_of(struct mm_struct *mm)
{
	struct stub_set *set;

	rcu_read_lock();
	hash_for_each_possible_rcu(stub_sets, set, node, (unsigned long)mm)
		if (set->mm == mm)
			break;
	rcu_read_unlock();
	return set;
}

static void put_stub_page(struct stub_page *sp)
{
	if (refcount_dec_and_test(&sp->ref)) {
		put_page(sp->page);
		kfree(sp);
	}
}

static void free_stub_set(struct rcu_head *rcu)
{
	struct stub_set *set = container_of(rcu, struct stub_set, rcu);
	int i;

	for (i = 0; i < STUB_PAGES && set->pages[i]; i++)
		put_stub_page(set->pages[i]);
	kfree(set);
}

static vm_fault_t stub_fault(const struct vm_special_mapping *sm,
			     struct vm_area_struct *vma, struct vm_fault *vmf)
{
	struct stub_set *set;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	int i;

	rcu_read_lock();
	set = stub_set_of(vma->vm_mm);
	for (i = 0; set && !vmf->pgoff && i < STUB_PAGES; i++) {
		struct stub_page *sp = READ_ONCE(set->pages[i]);

		if (sp && sp->vaddr == vma->vm_start) {
			vmf->page = sp->page;
			get_page(vmf->page);
			ret = 0;
			break;
		}
	}
	rcu_read_unlock();
	return ret;
}

static const struct vm_special_mapping stub_mapping = {
	.name	= "[uprobes]",
	.fault	= stub_fault,
	.mremap	= xol_mremap,		/* the jumps to it are relative */
};

/*
 * The probed address the stub at @vaddr serves, or 0; @off is set to
 * @vaddr's offset in its stub, @blen to the length of its boosted copy (0
 * for a system call stub).  Under RCU or the mmap_lock.
 */
static unsigned long stub_site(struct mm_struct *mm, unsigned long vaddr,
			       unsigned int *off, unsigned int *blen)
{
	struct stub_set *set = stub_set_of(mm);
	int i;

	for (i = 0; set && i < STUB_PAGES; i++) {
		struct stub_page *sp = READ_ONCE(set->pages[i]);
		unsigned long o;

		if (!sp)
			break;
		o = vaddr - sp->vaddr;
		if (o >= PAGE_SIZE)
			continue;
		*off = o % UPROBE_STUB_BYTES;
		*blen = READ_ONCE(sp->boost_len[o / UPROBE_STUB_BYTES]);
		return READ_ONCE(sp->site[o / UPROBE_STUB_BYTES]);
	}
	return 0;
}

/* Where the stub of entry @i of @sp starts. */
static unsigned long stub_vaddr(struct stub_page *sp, int i)
{
	return sp->vaddr + i * UPROBE_STUB_BYTES;
}

/*
 * Can entry @i of @sp serve @vaddr as a system call stub (@a NULL), or as
 * the boosted copy of @a?  A @fresh entry gets the copy written; one that
 * served before must already hold exactly that code: code once written is
 * never changed, so a thread preempted inside it (perhaps after the probe
 * went away, or in a forked child sharing the page) runs what it came for.
 */
static bool stub_fits(struct stub_page *sp, int i, struct arch_uprobe *a,
		      unsigned long vaddr, bool fresh)
{
	u8 code[UPROBE_STUB_BYTES];
	void *kaddr;
	bool ok = true;

	if (!a)
		return !sp->boost_len[i];
	if (arch_uprobe_boost_code(a, vaddr, stub_vaddr(sp, i), code))
		return false;
	kaddr = kmap_local_page(sp->page) + i * UPROBE_STUB_BYTES;
	if (fresh) {
		memcpy(kaddr, code, sizeof(code));
		WRITE_ONCE(sp->boost_len[i], a->len);
	} else {
		ok = sp->boost_len[i] == a->len && !memcmp(kaddr, code, sizeof(code));
	}
	kunmap_local(kaddr);
	return ok;
}

/*
 * The stub for @vaddr in @sp (see stub_fits() for @a): the one it already
 * has, else a free one; -1 if none.  A stub once given to an address stays
 * that address's.
 */
static int stub_take(struct stub_page *sp, unsigned long vaddr,
		     struct arch_uprobe *a)
{
	int i, free = -1;
	bool fresh = false;

	if (!arch_uprobe_stub_reaches(vaddr, sp->vaddr) ||
	    !arch_uprobe_stub_reaches(vaddr, sp->vaddr + PAGE_SIZE))
		return -1;
	spin_lock(&sp->lock);
	for (i = 0; i < UPROBE_STUBS_PER_PAGE; i++) {
		if (sp->site[i] == vaddr)
			break;
		if (!sp->site[i] && free < 0)
			free = i;
	}
	if (i == UPROBE_STUBS_PER_PAGE && free >= 0) {
		i = free;
		fresh = true;
	}
	if (i < UPROBE_STUBS_PER_PAGE && !stub_fits(sp, i, a, vaddr, fresh))
		i = UPROBE_STUBS_PER_PAGE;
	else if (fresh)
		WRITE_ONCE(sp->site[i], vaddr);
	spin_unlock(&sp->lock);
	return i < UPROBE_STUBS_PER_PAGE ? i : -1;
}

/* A new stub page mapped within reach of @vaddr; mmap_lock held for writing. */
static struct stub_page *stub_page_new(struct mm_struct *mm, unsigned long vaddr)
{
	struct vm_unmapped_area_info info = { .length = PAGE_SIZE };
	struct vm_area_struct *vma;
	struct stub_page *sp;
	unsigned long addr;
	void *kaddr;
	int i;

	arch_uprobe_stub_window(vaddr, &info.low_limit, &info.high_limit);
	/* The search returns the start of a gap: the window gives pages. */
	info.low_limit = PAGE_ALIGN(max(info.low_limit, mmap_min_addr));
	info.high_limit = min(info.high_limit, TASK_SIZE) & PAGE_MASK;
	if (info.low_limit >= info.high_limit)
		return NULL;
	addr = vm_unmapped_area(&info);
	if (IS_ERR_VALUE(addr) || WARN_ON_ONCE(offset_in_page(addr)))
		return NULL;

	sp = kzalloc(sizeof(*sp), GFP_KERNEL);
	if (!sp)
		return NULL;
	sp->page = alloc_page(GFP_HIGHUSER | __GFP_ZERO);
	if (!sp->page) {
		kfree(sp);
		return NULL;
	}
	refcount_set(&sp->ref, 1);
	spin_lock_init(&sp->lock);
	sp->vaddr = addr;
	kaddr = kmap_local_page(sp->page);
	for (i = 0; i < UPROBE_STUBS_PER_PAGE; i++)
		arch_uprobe_stub_write(kaddr + i * UPROBE_STUB_BYTES);
	kunmap_local(kaddr);

	vma = _install_special_mapping(mm, addr, PAGE_SIZE,
				       VM_EXEC | VM_MAYEXEC | VM_IO |
				       VM_DONTEXPAND, &stub_mapping);
	if (IS_ERR(vma)) {
		put_stub_page(sp);
		return NULL;
	}
	return sp;
}

/*
 * The stub for @vaddr in @mm (@a: see stub_fits()), mapping a stub page if
 * needed; 0 when none is free within reach.  mmap_lock held for writing: it
 * orders the pages[] slots, which only this fills (fork copies them under
 * the same lock).
 */
static unsigned long stub_get(struct mm_struct *mm, unsigned long vaddr,
			      struct arch_uprobe *a)
{
	struct stub_set *set = stub_set_of(mm);
	struct stub_page *sp;
	int i, n;

	if (!set) {
		set = kzalloc(sizeof(*set), GFP_KERNEL);
		if (!set)
			return 0;
		set->mm = mm;
		xa_init(&set->boosts);
		spin_lock(&stub_sets_lock);
		hash_add_rcu(stub_sets, &set->node, (unsigned long)mm);
		spin_unlock(&stub_sets_lock);
	}
	for (i = 0; i < STUB_PAGES && set->pages[i]; i++) {
		n = stub_take(set->pages[i], vaddr, a);
		if (n >= 0)
			return stub_vaddr(set->pages[i], n);
	}
	if (i == STUB_PAGES)
		return 0;
	sp = stub_page_new(mm, vaddr);
	if (!sp)
		return 0;
	/* Published after its contents: stub_fault() reads it under RCU. */
	smp_store_release(&set->pages[i], sp);
	n = stub_take(sp, vaddr, a);
	return n < 0 ? 0 : stub_vaddr(sp, n);
}

/*
 * Text of @mm changes under threads that may be running it, so by the
 * cross-modifying rule kernel text follows too: while the first byte is
 * an int3 no CPU runs the bytes after it; every CPU serializes after the
 * tail is written, before the first byte changes.  A thread that sees the
 * int3 meanwhile takes an ordinary hit.
 */
static int patch_site(struct mm_struct *mm, unsigned long vaddr,
		      const u8 *insn, int len)
{
	u8 bp = UPROBE_SWBP_INSN;
	int ret;

	ret = access_mm(mm, vaddr, &bp, 1, true);
	if (!ret)
		ret = access_mm(mm, vaddr + 1, (void *)insn + 1, len - 1, true);
	arch_uprobe_text_sync();
	if (!ret)
		ret = access_mm(mm, vaddr, (void *)insn, 1, true);
	arch_uprobe_text_sync();
	return ret;
}

/* Does the text at @vaddr of @mm jump to a stub that serves @vaddr? */
static bool site_optimized(struct uprobe_site *s, struct mm_struct *mm,
			   unsigned long vaddr)
{
	u8 cur[UPROBE_JMP_INSN_SIZE];
	unsigned long target;
	unsigned int off, blen;

	if (!arch_uprobe_optimizable(&s->arch) ||
	    access_mm(mm, vaddr, cur, sizeof(cur), false))
		return false;
	target = arch_uprobe_jmp_target(cur, vaddr);
	return target && stub_site(mm, target, &off, &blen) == vaddr &&
	       !off && !blen;
}

/* Back from the jump to the int3; mmap_lock held for writing. */
static int unoptimize_site(struct uprobe_site *s, struct mm_struct *mm,
			   unsigned long vaddr)
{
	u8 insn[UPROBE_JMP_INSN_SIZE];

	memcpy(insn, s->arch.insn, sizeof(insn));
	insn[0] = UPROBE_SWBP_INSN;
	return patch_site(mm, vaddr, insn, sizeof(insn));
}

/*
 * The first int3 hit of an optimizable site in this process: replace the
 * int3 by the jump.  Only while the int3 is there and the mapping is the
 * site's, under the mmap_lock that disarming takes too, so the jump is
 * never left behind by a disarm.  A site that cannot be optimized here is
 * not tried again anywhere (flagged), so hits do not keep taking the lock.
 */
static void optimize_site(struct uprobe_site *s, unsigned long vaddr)
{
	struct mm_struct *mm = current->mm;
	u8 cur[UPROBE_JMP_INSN_SIZE], insn[UPROBE_JMP_INSN_SIZE];
	unsigned long stub;
	bool done = false;

	if (!READ_ONCE(uprobe_opt_enabled) || READ_ONCE(s->no_opt) ||
	    offset_in_page(vaddr) > PAGE_SIZE - sizeof(insn))
		return;
	if (mmap_write_lock_killable(mm))
		return;
	if (vma_has_site(vma_lookup(mm, vaddr), s, vaddr, true) &&
	    !access_mm(mm, vaddr, cur, sizeof(cur), false) &&
	    is_swbp_insn(&cur[0]) &&
	    !memcmp(cur + 1, s->arch.insn + 1, sizeof(cur) - 1)) {
		stub = stub_get(mm, vaddr, NULL);
		if (stub) {
			arch_uprobe_jmp_insn(insn, vaddr, stub);
			done = !patch_site(mm, vaddr, insn, sizeof(insn));
		}
		if (!done)
			WRITE_ONCE(s->no_opt, true);
	}
	mmap_write_unlock(mm);
}

/*
 * A stub's system call: @regs as the architecture restored them, with ip
 * at the probed address.  Run the hit as the int3 path would, and skip the
 * instruction (a nop) unless a handler moved ip.
 */
static void stub_hit(struct pt_regs *regs, unsigned long vaddr)
{
	struct uprobe_site *s;
	bool is_bp;
	int idx;

	if (!list_empty(&seeds)) {
		/* Their trap-context handlers run with interrupts off. */
		local_irq_disable();
		seed_irq_handlers(regs, vaddr);
		local_irq_enable();
		if (instruction_pointer(regs) != vaddr)
			return;
	}
	idx = srcu_read_lock(&uprobes_srcu);
	s = site_at(vaddr, &is_bp);
	if (s && get_utask())
		handler_chain(s, regs, vaddr);
	srcu_read_unlock(&uprobes_srcu, idx);
	if (instruction_pointer(regs) == vaddr)
		instruction_pointer_set(regs, vaddr + UPROBE_JMP_INSN_SIZE);
}

/**
 * uprobe_stub_syscall() - a system call from a stub of an optimized site
 * @regs: the registers at the system call
 *
 * Called by the architecture's system call for stubs and the return-probe
 * trampoline.
 *
 * Return: false when @regs are not at the end of one of the process's
 * stubs (the caller then treats the call as a misuse); true once the hit is
 * done and @regs are what the thread resumes with.
 */
bool uprobe_stub_syscall(struct pt_regs *regs)
{
	unsigned long vaddr;
	unsigned int off, blen;

	if (!current->mm)
		return false;
	rcu_read_lock();
	vaddr = stub_site(current->mm, instruction_pointer(regs), &off, &blen);
	rcu_read_unlock();
	if (!vaddr || off != UPROBE_STUB_SYSCALL_END || blen)
		return false;
	if (!arch_uprobe_stub_return(regs, vaddr))
		return false;
	stub_hit(regs, vaddr);
	return true;
}

/*
 * A thread stopped inside a stub, for a signal or a debugger: undo what the
 * stub did so far and put it back at the probed address, which it runs
 * again afterwards (one hit, as if it never got into the stub); from a
 * boosted copy, see boost_rewind().  Nobody outside sees a stub's address
 * in a signal frame, a core or a ptrace stop.
 */
static void stub_rewind(struct pt_regs *regs)
{
	struct mm_struct *mm = current->mm;
	unsigned long vaddr;
	unsigned int off, blen;

	if (!mm || !test_bit(MMF_HAS_UPROBES, &mm->flags))
		return;
	rcu_read_lock();
	vaddr = stub_site(mm, instruction_pointer(regs), &off, &blen);
	rcu_read_unlock();
	if (vaddr && blen)
		boost_rewind(regs, off, blen, vaddr);
	else if (vaddr)
		arch_uprobe_stub_rewind(regs, off, vaddr);
}

/*
 * A debugger (or the program) stepped the jump with TF: the trap is at the
 * stub's first byte.  Swallow it and take the hit the int3 way, with ip
 * just past a would-be int3 at the probed address: the emulation of the
 * nop then raises the SIGTRAP the step owes, after the instruction, as on
 * the int3 path.
 */
static bool stub_step(struct pt_regs *regs)
{
	struct mm_struct *mm = current->mm;
	unsigned long vaddr;
	unsigned int off, blen;

	if (!mm || !test_bit(MMF_HAS_UPROBES, &mm->flags))
		return false;
	rcu_read_lock();
	vaddr = stub_site(mm, instruction_pointer(regs), &off, &blen);
	rcu_read_unlock();
	if (!vaddr || off || blen)
		return false;
	instruction_pointer_set(regs, vaddr + UPROBE_SWBP_INSN_SIZE);
	set_thread_flag(TIF_UPROBE);
	return true;
}

/* fork: the child's text has the parent's jumps, and their stub pages. */
static void stub_dup(struct mm_struct *oldmm, struct mm_struct *newmm)
{
	struct stub_set *set = stub_set_of(oldmm), *nset;
	int i;

	if (!set)
		return;
	/*
	 * Small, and the child's copied jumps need it: a failure here would
	 * leave the child faulting on its first probe hit.
	 */
	nset = kzalloc(sizeof(*nset), GFP_KERNEL | __GFP_NOFAIL);
	nset->mm = newmm;
	/* Its boosted copies are found again on its first hits (shared). */
	xa_init(&nset->boosts);
	for (i = 0; i < STUB_PAGES && set->pages[i]; i++) {
		refcount_inc(&set->pages[i]->ref);
		nset->pages[i] = set->pages[i];
	}
	spin_lock(&stub_sets_lock);
	hash_add_rcu(stub_sets, &nset->node, (unsigned long)newmm);
	spin_unlock(&stub_sets_lock);
}

static void stub_clear(struct mm_struct *mm)
{
	struct stub_set *set;

	spin_lock(&stub_sets_lock);
	set = stub_set_of(mm);
	if (set)
		hash_del_rcu(&set->node);
	spin_unlock(&stub_sets_lock);
	if (set) {
		xa_destroy(&set->boosts);
		call_rcu(&set->rcu, free_stub_set);
	}
}

/*
 * Where else in @mm the file offset @vaddr had in @old is mapped, a copy of
 * its jump that does not lead to that address's own stub is one that
 * moved: make it the int3 again.
 */
static void stub_find_moved(struct mm_struct *mm, struct vm_area_struct *old,
			    unsigned long vaddr, unsigned long stub)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct inode *inode = file_inode(old->vm_file);
	loff_t offset = vma_offset(old, vaddr);
	u8 cur[UPROBE_JMP_INSN_SIZE], want[UPROBE_JMP_INSN_SIZE];
	struct uprobe_site *s = find_site(inode, offset);
	struct vm_area_struct *vma;

	if (!s)
		return;
	arch_uprobe_jmp_insn(want, vaddr, stub);
	for_each_vma(vmi, vma) {
		unsigned long y;

		if (vma == old || !vma_covers(vma, s))
			continue;
		y = offset_vaddr(vma, offset);
		if (y == vaddr || !vma_has_site(vma, s, y, false) ||
		    access_mm(mm, y, cur, sizeof(cur), false) ||
		    memcmp(cur, want, sizeof(cur)) || site_optimized(s, mm, y))
			continue;
		unoptimize_site(s, mm, y);
	}
	put_site(s);
}

/*
 * mremap() moved text with a jump in it: the old range is being unmapped
 * and its jumps are now in another range, still relative to where they
 * were, so they point at no stub.  Turn each back into the int3 there
 * (the breakpoint moved with its page, as an unoptimized one does), before
 * mremap() returns the new address; nobody can know that address sooner.
 * mmap_lock is held for writing on that path (munmap() may hold it only for
 * reading, but then its pages are gone, not moved, and nothing matches).
 */
static void stub_moved(struct vm_area_struct *old, unsigned long start,
		       unsigned long end)
{
	struct mm_struct *mm = old->vm_mm;
	struct stub_set *set;
	int i, n;

	if (!old->vm_file || !(old->vm_flags & VM_EXEC))
		return;
	set = stub_set_of(mm);
	for (i = 0; set && i < STUB_PAGES && set->pages[i]; i++) {
		struct stub_page *sp = set->pages[i];

		for (n = 0; n < UPROBE_STUBS_PER_PAGE; n++) {
			unsigned long vaddr = READ_ONCE(sp->site[n]);

			if (vaddr >= start && vaddr < end && !sp->boost_len[n])
				stub_find_moved(mm, old, vaddr,
						stub_vaddr(sp, n));
		}
	}
}


/* ---- boosted copies ------------------------------------------------------- */

/*
 * An instruction that would be single-stepped from an XOL slot runs instead
 * from a stub entry near the text that holds a copy of it and a jump back
 * (arch_uprobe_boost_code()): the int3 is the only trap of the hit.  The
 * entry is made on the first hit in a process, under the mmap_lock, and
 * found on later hits without a lock in the process's boosts (probed
 * address -> entry).  A mapping that goes away takes its addresses out of
 * boosts (boost_forget()), so a new file mapped there gets a copy of its
 * own instruction; the entry itself stays its address's for good.
 */

/* A new entry for @s at @vaddr in this process, or 0. */
static unsigned long boost_slot_new(struct uprobe_site *s, unsigned long vaddr)
{
	struct mm_struct *mm = current->mm;
	unsigned long slot = 0;
	struct stub_set *set;

	if (mmap_write_lock_killable(mm))
		return 0;
	if (vma_has_site(vma_lookup(mm, vaddr), s, vaddr, true)) {
		slot = stub_get(mm, vaddr, &s->arch);
		set = stub_set_of(mm);
		/* No entry fits: do not try again on every hit. */
		if (set)
			xa_store(&set->boosts, vaddr,
				 xa_mk_value(slot ?: BOOST_NONE), GFP_KERNEL);
	}
	mmap_write_unlock(mm);
	return slot;
}

/*
 * After the handlers, when @s's instruction would be stepped: send the
 * thread to its boosted copy instead, if it has one or gets one now.
 */
static bool boost(struct uprobe_site *s, struct pt_regs *regs,
		  unsigned long vaddr)
{
	struct stub_set *set;
	unsigned long slot;
	void *entry;

	if (!READ_ONCE(uprobe_boost_enabled) ||
	    !arch_uprobe_boostable(&s->arch, regs))
		return false;
	set = stub_set_of(current->mm);
	entry = set ? xa_load(&set->boosts, vaddr) : NULL;
	slot = entry ? xa_to_value(entry) : boost_slot_new(s, vaddr);
	if (!slot || slot == BOOST_NONE)
		return false;
	instruction_pointer_set(regs, slot);
	return true;
}

/* A mapping of @mm went away from [@start, @end). */
static void boost_forget(struct mm_struct *mm, unsigned long start,
			 unsigned long end)
{
	struct stub_set *set = stub_set_of(mm);
	unsigned long index = start;
	void *entry;

	if (!set)
		return;
	xa_for_each_range(&set->boosts, index, entry, start, end - 1)
		xa_erase(&set->boosts, index);
}

/*
 * A signal or a debugger stop finds the thread in a boosted copy.  At the
 * jump back, the instruction ran: the thread is at the next one.  At the
 * copy itself it did not (an interrupt right on the way back from the hit,
 * or the copy's own fault): the thread goes back to the probed address,
 * and when it hits the probe there again with the same registers -- the
 * signal handler returned -- the handlers, which already ran for this
 * execution, do not run again (boost_resumed()).
 */
static void boost_rewind(struct pt_regs *regs, unsigned int off,
			 unsigned int len, unsigned long vaddr)
{
	struct uprobe_task *utask = current->utask;

	if (off == len) {
		instruction_pointer_set(regs, vaddr + len);
		return;
	}
	if (off)
		return;		/* the program's own jump into the copy */
	instruction_pointer_set(regs, vaddr);
	if (utask) {
		utask->boost_vaddr = vaddr;
		utask->boost_regs = arch_uprobe_regs_hash(regs);
	}
}

/* Is this hit the return of one boost_rewind() sent back? */
static bool boost_again(struct uprobe_task *utask, struct pt_regs *regs,
			unsigned long vaddr)
{
	return utask && utask->boost_vaddr == vaddr &&
	       utask->boost_regs == arch_uprobe_regs_hash(regs);
}

/*
 * The same, and then forget it.  Other hits meanwhile (the signal handler
 * may run probed code) leave it: only this address with these registers
 * matches, which a later, different execution practically never repeats.
 */
static bool boost_resumed(struct pt_regs *regs, unsigned long vaddr)
{
	struct uprobe_task *utask = current->utask;

	if (likely(utask->boost_vaddr != vaddr) ||
	    !boost_again(utask, regs, vaddr))
		return false;
	utask->boost_vaddr = 0;
	return true;
}

/* Run @s's instruction from a slot: the debug trap brings us back. */
static int prepare_step(struct uprobe_site *s, struct pt_regs *regs,
			unsigned long bp_vaddr)
{
	struct uprobe_task *utask = current->utask;
	struct xol_area *area = get_xol_area();
	u8 buf[MAX_UINSN_BYTES + UPROBE_SWBP_INSN_SIZE];
	unsigned long slot;
	int ret;

	if (!area)
		return -ENOMEM;
	slot = xol_take_slot(area);
	if (!slot)
		return -EINTR;
	/*
	 * int3 after the copy: should the step ever not trap, the thread
	 * stops there instead of running whatever follows.
	 */
	memset(buf, UPROBE_SWBP_INSN, sizeof(buf));
	memcpy(buf, s->arch.ixol, s->arch.len);
	arch_uprobe_copy_ixol(area->page, slot, buf, sizeof(buf));
	utask->xol_vaddr = slot;
	utask->bp_vaddr = bp_vaddr;
	utask->active = s;
	ret = arch_uprobe_pre_xol(&s->arch, regs);
	if (ret) {
		utask->active = NULL;
		utask->xol_vaddr = 0;
		xol_put_slot(area, slot);
		return ret;
	}
	utask->state = UTASK_SSTEP;
	return 0;
}

static void handle_swbp(struct pt_regs *regs)
{
	unsigned long bp_vaddr = uprobe_get_swbp_addr(regs);
	struct uprobe_site *s;
	bool is_bp;
	int idx;

	idx = srcu_read_lock(&uprobes_srcu);
	s = site_at(bp_vaddr, &is_bp);
	if (!s) {
		/* Not ours: a breakpoint the program or a debugger set. */
		if (is_bp)
			force_sig(SIGTRAP);
		else	/* ours, but removed meanwhile: run the original */
			instruction_pointer_set(regs, bp_vaddr);
		goto out;
	}
	instruction_pointer_set(regs, bp_vaddr);
	if (!get_utask())
		goto out;	/* try again */

	if (!boost_resumed(regs, bp_vaddr))
		handler_chain(s, regs, bp_vaddr);
	/* A handler sent the thread elsewhere: skip the instruction. */
	if (instruction_pointer(regs) != bp_vaddr)
		goto out;
	if (arch_uprobe_optimizable(&s->arch))
		optimize_site(s, bp_vaddr);
	if (arch_uprobe_skip_sstep(&s->arch, regs) || boost(s, regs, bp_vaddr))
		goto out;
	/*
	 * The step outlives this read section: it pins the site.  One that
	 * lost its last reference has no int3 left in any process: running
	 * the original instruction in place is then right.
	 */
	if (!refcount_inc_not_zero(&s->ref))
		goto out;
	if (prepare_step(s, regs, bp_vaddr))
		put_site(s);
out:
	srcu_read_unlock(&uprobes_srcu, idx);
}

static void handle_singlestep(struct uprobe_task *utask, struct pt_regs *regs)
{
	struct uprobe_site *s = utask->active;
	struct xol_area *area = current->mm->uprobes_state.xol_area;
	int err = 0;

	if (utask->state == UTASK_SSTEP_ACK) {
		err = arch_uprobe_post_xol(&s->arch, regs);
		if (err > 0) {
			/* Not finished (rep string): step it again. */
			utask->state = UTASK_SSTEP;
			return;
		}
	} else if (utask->state == UTASK_SSTEP_TRAPPED)
		arch_uprobe_abort_xol(&s->arch, regs);
	else
		WARN_ON_ONCE(1);

	utask->active = NULL;
	utask->state = UTASK_RUNNING;
	xol_put_slot(area, utask->xol_vaddr);
	utask->xol_vaddr = 0;
	put_site(s);

	/* uprobe_deny_signal() held signals back during the step. */
	spin_lock_irq(&current->sighand->siglock);
	recalc_sigpending();
	spin_unlock_irq(&current->sighand->siglock);

	if (unlikely(err)) {
		pr_warn_ratelimited("pid %d: cannot finish the step of %#lx\n",
				    current->pid, utask->bp_vaddr);
		force_sig(SIGILL);
	}
}

/* TIF_UPROBE on the way back to user space. */
void uprobe_notify_resume(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;

	clear_thread_flag(TIF_UPROBE);
	if (utask && utask->active)
		handle_singlestep(utask, regs);
	else
		handle_swbp(regs);
}

/*
 * get_signal() asks before delivering a signal.  During a step, hold
 * signals back: the handler must not see the slot's address.  A fault of
 * the copy itself, or a fatal signal, aborts the step instead; the signal
 * is then delivered at the probed instruction.
 */
bool uprobe_deny_signal(void)
{
	struct task_struct *t = current;
	struct uprobe_task *utask = t->utask;

	stub_rewind(current_pt_regs());
	if (likely(!utask || !utask->active))
		return false;
	if (utask->state == UTASK_SSTEP && task_sigpending(t)) {
		clear_tsk_thread_flag(t, TIF_SIGPENDING);
		if (__fatal_signal_pending(t) || arch_uprobe_xol_was_trapped(t)) {
			utask->state = UTASK_SSTEP_TRAPPED;
			set_tsk_thread_flag(t, TIF_UPROBE);
		}
	}
	return true;
}

/* ---- debugfs: uprobes/list ------------------------------------------------ */

static const char *arch_how(struct arch_uprobe *a)
{
	if (arch_uprobe_optimizable(a))
		return "jump";
	if (a->op != UPX_STEP)
		return "emulate";
	return READ_ONCE(uprobe_boost_enabled) &&
	       arch_uprobe_boostable(a, NULL) ? "boost" : "step";
}

static int list_show(struct seq_file *m, void *v)
{
	struct uprobe_site *s;
	struct rb_node *n;

	spin_lock(&sites_lock);
	for (n = rb_first(&sites); n; n = rb_next(n)) {
		struct uprobe_consumer *uc;
		int nc = 0, idx;

		s = rb_entry(n, struct uprobe_site, node);
		/* Writers hold reg_lock, not sites_lock: count under SRCU. */
		idx = srcu_read_lock(&uprobes_srcu);
		list_for_each_entry_srcu(uc, &s->consumers, cons_node,
					 srcu_read_lock_held(&uprobes_srcu))
			nc++;
		srcu_read_unlock(&uprobes_srcu, idx);
		seq_printf(m, "%lu:%#llx consumers=%d %s hits=%lu missed=%ld\n",
			   s->inode->i_ino, s->offset, nc, arch_how(&s->arch),
			   site_hits(s),
			   atomic_long_read(&s->missed));
	}
	spin_unlock(&sites_lock);

	spin_lock_irq(&seed_lock);
	{
		struct uprobe_seed *seed;

		list_for_each_entry(seed, &seeds, node)
			seq_printf(m, "pid %d %#lx %s%s hits=%ld\n",
				   seed->u->pid, seed->vaddr,
				   seed->in_irq ? "irq" : "task",
				   seed->u->ret_handler ? " ret" : "",
				   atomic_long_read(&seed->hits));
	}
	spin_unlock_irq(&seed_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(list);

static int __init uprobes_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("uprobes", NULL);

	debugfs_create_file("list", 0400, dir, NULL, &list_fops);
	debugfs_create_bool("optimize", 0600, dir, &uprobe_opt_enabled);
	debugfs_create_bool("boost", 0600, dir, &uprobe_boost_enabled);
	return 0;
}
late_initcall(uprobes_debugfs_init);

void __init uprobes_init(void)
{
	BUILD_BUG_ON(XOL_SLOTS < 2);
	WARN_ON(register_die_notifier(&uprobe_die_nb));
}
