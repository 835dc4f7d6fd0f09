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
 * This file has the sites, arming, consumers, the memory map hooks, the
 * per-task state and the hit path.  uprobes_xol.c has the XOL area,
 * uprobes_process.c the per-process interface, uprobes_opt.c and
 * uprobes_boost.c the two ways a hit avoids the trap or the step
 * (optimized sites, boosted copies), uprobes_debugfs.c the debugfs files.
 *
 * Locking, outermost first:
 *   uprobe_site.reg_lock		(un)registration of one site
 *   uprobe_dup_mmap_sem (write)	keeps fork out while sites are (dis)armed
 *   mmap_lock (write)			per process, while arming or disarming
 *   i_mmap_rwsem, uprobe_sites_lock, delayed_lock, seed_lock	leaves
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

#include <linux/highmem.h>
#include <linux/kdebug.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/pagemap.h>
#include <linux/pagewalk.h>
#include <linux/percpu-rwsem.h>
#include <linux/ptrace.h>
#include <linux/rbtree.h>
#include <linux/rcu_sync.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/srcu.h>
#include <linux/task_work.h>
#include <linux/uprobes.h>

#include "uprobes_internal.h"

/* A USDT semaphore whose mapping had not appeared when the site armed. */
struct delayed_ref {
	struct list_head	node;
	struct mm_struct	*mm;
	struct uprobe_site	*site;		/* holds a reference */
};

struct rb_root uprobe_sites = RB_ROOT;
DEFINE_SPINLOCK(uprobe_sites_lock);
/* Tells a lockless lookup that the tree changed under it. */
static seqcount_spinlock_t sites_seq =
	SEQCNT_SPINLOCK_ZERO(sites_seq, &uprobe_sites_lock);
DEFINE_SRCU(uprobes_srcu);
DEFINE_PERCPU_RWSEM(uprobe_dup_mmap_sem);

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

/* The first site at or after (inode, offset); under uprobe_sites_lock. */
static struct uprobe_site *site_ceil(struct inode *inode, loff_t offset)
{
	struct rb_node *n = uprobe_sites.rb_node;
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

/*
 * The first site of @inode in [@off, @end), with a reference, or NULL: the
 * walk over a mapping's sites takes them one at a time, so that the lock
 * is not held across what it does with each.
 */
static struct uprobe_site *site_next_in(struct inode *inode, loff_t off,
					loff_t end)
{
	struct uprobe_site *s;

	spin_lock(&uprobe_sites_lock);
	s = site_ceil(inode, off);
	if (s && (s->inode != inode || s->offset >= end))
		s = NULL;
	if (s)
		get_site(s);
	spin_unlock(&uprobe_sites_lock);
	return s;
}

struct uprobe_site *uprobe_site_find(struct inode *inode, loff_t offset)
{
	struct uprobe_site *s;

	spin_lock(&uprobe_sites_lock);
	s = site_ceil(inode, offset);
	if (s && site_cmp(inode, offset, s))
		s = NULL;
	/* Every site in the tree has a reference: see uprobe_site_put(). */
	if (s)
		get_site(s);
	spin_unlock(&uprobe_sites_lock);
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
 * The site of (inode, offset), without uprobe_sites_lock: for the hit path,
 * under uprobes_srcu, which keeps the site's memory until the reader is
 * done.  A lookup that raced with a rotation of the tree may miss:
 * sites_seq tells, and it looks again.  A site whose last reference is gone may still be
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
		n = rb_find_rcu(&key, &uprobe_sites, site_key_cmp);
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
 * uprobe_multi link).  A site takes a slot of a block, marked in the
 * block's bitmap; the blocks are never freed (one word per CPU for each
 * site alive at the peak), so a slot is given back with an atomic bit
 * operation from any context, an SRCU callback included.
 */
#define HITS_PER_BLOCK	512

struct hits_block {
	unsigned long __percpu	*counts;
	unsigned long		used[BITS_TO_LONGS(HITS_PER_BLOCK)];
};

static DEFINE_XARRAY(hits_blocks);	/* block number -> hits_block */
static DEFINE_MUTEX(hits_lock);		/* taking slots, adding blocks */
static unsigned long hits_nr_blocks;	/* under hits_lock */
static unsigned long hits_next;		/* the block to look in first */

static struct hits_block *hits_block_add(void)
{
	struct hits_block *b = kzalloc(sizeof(*b), GFP_KERNEL);
	int ret = -ENOMEM;

	if (b)
		b->counts = __alloc_percpu(HITS_PER_BLOCK * sizeof(*b->counts),
					   sizeof(*b->counts));
	if (b && b->counts)
		ret = xa_err(xa_store(&hits_blocks, hits_nr_blocks, b,
				      GFP_KERNEL));
	if (ret) {
		if (b)
			free_percpu(b->counts);
		kfree(b);
		return ERR_PTR(ret);
	}
	hits_nr_blocks++;
	return b;
}

/*
 * A free slot: from the block that had one last time on; the earlier
 * blocks only when the later ones are full (slots freed there meanwhile),
 * so that registering many probes in a row does not rescan full blocks.
 */
static int hits_get(struct uprobe_site *s)
{
	struct hits_block *b;
	unsigned long i, n;
	int slot, cpu;

	mutex_lock(&hits_lock);
	for (n = 0; n < hits_nr_blocks; n++) {
		i = (hits_next + n) % hits_nr_blocks;
		b = xa_load(&hits_blocks, i);
		slot = find_first_zero_bit(b->used, HITS_PER_BLOCK);
		if (slot < HITS_PER_BLOCK)
			goto found;
	}
	i = hits_nr_blocks;
	b = hits_block_add();
	if (IS_ERR(b)) {
		mutex_unlock(&hits_lock);
		return PTR_ERR(b);
	}
	slot = 0;
found:
	set_bit(slot, b->used);
	hits_next = i;
	mutex_unlock(&hits_lock);
	s->hits = b->counts + slot;
	s->hits_id = i * HITS_PER_BLOCK + slot;
	for_each_possible_cpu(cpu)
		*per_cpu_ptr(s->hits, cpu) = 0;
	return 0;
}

static void hits_put(struct uprobe_site *s)
{
	struct hits_block *b = xa_load(&hits_blocks,
				       s->hits_id / HITS_PER_BLOCK);

	clear_bit(s->hits_id % HITS_PER_BLOCK, b->used);
}

/*
 * Arming and disarming take uprobe_dup_mmap_sem for writing, whose first
 * step (rcu_sync_enter()) waits for an RCU grace period unless a writer
 * is already there: perf would wait for one per event closed, and one per
 * event opened.  So each site holds the semaphore as if a writer were
 * coming, from its creation to its freeing: while any site exists, fork
 * takes the semaphore for reading on its slower path (one barrier more,
 * see percpu_down_read()) and writers do not wait for a grace period.
 */
static void site_hold_dup_sem(void)
{
	rcu_sync_enter(&uprobe_dup_mmap_sem.rss);
}

static void free_site(struct uprobe_site *s)
{
	/* From an SRCU callback too: see hits_put(). */
	if (s->hits)
		hits_put(s);
	/* Only a site that got its inode got this far in alloc_site(). */
	if (s->inode)
		rcu_sync_exit(&uprobe_dup_mmap_sem.rss);
	kfree(s);
}

static void free_site_rcu(struct rcu_head *rcu)
{
	free_site(container_of(rcu, struct uprobe_site, rcu));
}

unsigned long uprobe_site_hits(struct uprobe_site *s)
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
atomic_long_t uprobe_site_gen;

static void site_gen_next(void)
{
	/* Whatever the caller changed is seen by who sees the new value. */
	smp_mb__before_atomic();
	atomic_long_inc(&uprobe_site_gen);
}

void uprobe_site_put(struct uprobe_site *s)
{
	if (!refcount_dec_and_lock(&s->ref, &uprobe_sites_lock))
		return;
	write_seqcount_begin(&sites_seq);
	rb_erase(&s->node, &uprobe_sites);
	write_seqcount_end(&sites_seq);
	spin_unlock(&uprobe_sites_lock);
	site_gen_next();
	iput(s->inode);
	/* A hit may have found it just before: see find_site_srcu(). */
	call_srcu(&uprobes_srcu, &s->rcu, free_site_rcu);
}

/*
 * Link @new into the tree, or return the site already there for its key
 * (one walk for both); under uprobe_sites_lock.
 */
static struct uprobe_site *insert_site(struct uprobe_site *new)
{
	struct rb_node **p = &uprobe_sites.rb_node, *parent = NULL;

	while (*p) {
		struct uprobe_site *s = rb_entry(*p, struct uprobe_site, node);
		int c = site_cmp(new->inode, new->offset, s);

		if (!c)
			return s;
		parent = *p;
		p = c < 0 ? &(*p)->rb_left : &(*p)->rb_right;
	}
	write_seqcount_begin(&sites_seq);
	rb_link_node_rcu(&new->node, parent, p);
	rb_insert_color(&new->node, &uprobe_sites);
	write_seqcount_end(&sites_seq);
	return new;
}

/*
 * The page cache folio of @inode holding @offset, through @cur when it
 * holds it already (a batch reads many instructions of one page), with
 * a reference of its own.
 */
static struct folio *text_folio(struct inode *inode, loff_t offset,
				struct uprobe_text_cursor *cur)
{
	struct address_space *mapping = inode->i_mapping;
	pgoff_t index = offset >> PAGE_SHIFT;
	struct folio *folio;

	if (cur && cur->folio && cur->folio->mapping == mapping &&
	    index - cur->folio->index < folio_nr_pages(cur->folio)) {
		folio_get(cur->folio);
		return cur->folio;
	}
	if (shmem_mapping(mapping))
		folio = shmem_read_folio(mapping, index);
	else
		folio = read_mapping_folio(mapping, index, NULL);
	if (cur && !IS_ERR(folio)) {
		uprobe_text_cursor_done(cur);
		cur->folio = folio;
		folio_get(folio);
	}
	return folio;
}

void uprobe_text_cursor_done(struct uprobe_text_cursor *cur)
{
	if (cur->folio)
		folio_put(cur->folio);
	cur->folio = NULL;
}

/* Up to @len bytes of the file at @offset, zeroes past its end. */
static int read_file_bytes(struct inode *inode, loff_t offset, u8 *buf,
			   int len, struct uprobe_text_cursor *cur)
{
	loff_t size = i_size_read(inode);

	memset(buf, 0, len);
	while (len > 0 && offset < size) {
		unsigned int off = offset_in_page(offset);
		int n = min_t(loff_t, min_t(int, len, PAGE_SIZE - off),
			      size - offset);
		struct folio *folio = text_folio(inode, offset, cur);

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

/*
 * The instruction's bytes; first, on architectures with more than one
 * kind of user code (x86: i386), what the file's header says it holds
 * (read without the cursor: that stays on the text).
 */
static int site_read_insn(struct uprobe_site *s, struct inode *inode,
			  loff_t offset, struct uprobe_text_cursor *cur)
{
#ifdef UPROBE_FILE_HDR_BYTES
	u8 buf[UPROBE_FILE_HDR_BYTES], *hdr = buf;
	int ret;

	if (cur && cur->hdr_inode == inode) {
		hdr = cur->hdr;		/* a batch: read for its first site */
	} else {
		ret = read_file_bytes(inode, 0, buf, sizeof(buf), NULL);
		if (ret)
			return ret;
		if (cur) {
			memcpy(cur->hdr, buf, sizeof(buf));
			cur->hdr_inode = inode;
		}
	}
	arch_uprobe_file_mode(&s->arch, hdr);
#endif
	return read_file_bytes(inode, offset, (u8 *)&s->arch.insn,
			       sizeof(s->arch.insn), cur);
}

static struct uprobe_site *alloc_site(struct inode *inode, loff_t offset,
				      loff_t ref_ctr_offset,
				      struct uprobe_text_cursor *cur)
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
	ret = site_read_insn(s, inode, offset, cur);
	/*
	 * No process yet: analysed as for the kernel's own kind of process
	 * (init_mm), with the file offset standing for the address, which it
	 * equals modulo the page size (architectures check alignment).
	 */
	if (!ret)
		ret = arch_uprobe_analyze_insn(&s->arch, &init_mm,
					       (unsigned long)offset);
	if (!ret)
		ret = set_swbp(&s->arch, NULL, 0);
	if (ret) {
		free_site(s);
		return ERR_PTR(ret);
	}
	s->inode = igrab(inode);
	if (!s->inode) {
		free_site(s);
		return ERR_PTR(-ENOENT);
	}
	site_hold_dup_sem();
	return s;
}

/*
 * The site for (inode, offset), created on first use; holds a reference.
 * @cur, when not NULL, keeps the page cache folio it read from for the
 * next call (uprobe_text_cursor_done() releases it).
 */
struct uprobe_site *uprobe_site_get_or_create(struct inode *inode,
					      loff_t offset,
					      loff_t ref_ctr_offset,
					      struct uprobe_text_cursor *cur)
{
	struct uprobe_site *s, *new;

	s = uprobe_site_find(inode, offset);
	if (!s) {
		new = alloc_site(inode, offset, ref_ctr_offset, cur);
		if (IS_ERR(new))
			return new;
		spin_lock(&uprobe_sites_lock);
		s = insert_site(new);
		if (s != new)
			get_site(s);
		spin_unlock(&uprobe_sites_lock);
		if (s != new) {
			iput(new->inode);
			free_site(new);
		}
	}
	/* One semaphore per site: a second one cannot be counted. */
	if (s->ref_ctr_offset != ref_ctr_offset) {
		pr_warn("ref_ctr_offset mismatch: inode %lu offset %#llx has %#llx, not %#llx\n",
			inode->i_ino, offset, s->ref_ctr_offset, ref_ctr_offset);
		uprobe_site_put(s);
		return ERR_PTR(-EINVAL);
	}
	return s;
}

/* ---- VMAs and breakpoint writes ------------------------------------------ */

/*
 * Read or write process memory the way a debugger does (FOLL_FORCE): a
 * write to a private file page breaks copy-on-write first, so it stays in
 * this process.  The caller holds the mmap_lock.
 */
int uprobe_access_mm(struct mm_struct *mm, unsigned long vaddr, void *buf,
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

	ret = uprobe_access_mm(mm, vaddr, &val, sizeof(val), false);
	if (ret)
		return ret;
	/* Never below zero, whatever the program did to it meanwhile. */
	if (val + d < 0)
		return 0;
	val += d;
	return uprobe_access_mm(mm, vaddr, &val, sizeof(val), true);
}

static void drop_delayed(struct mm_struct *mm, struct uprobe_site *s)
{
	struct delayed_ref *d, *tmp;

	mutex_lock(&delayed_lock);
	list_for_each_entry_safe(d, tmp, &delayed_refs, node) {
		if (d->mm != mm || (s && d->site != s))
			continue;
		list_del(&d->node);
		uprobe_site_put(d->site);
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
		uprobe_site_put(d->site);
		kfree(d);
	}
	mutex_unlock(&delayed_lock);
}

/* ---- what is armed in an mm ---------------------------------------------- */

/*
 * A site is armed at an address of @mm: an int3 is about to be written
 * there (@count), or one is there already.  That one was counted when it
 * was written (a second consumer, a mapping split or moved), or is a
 * debugger's, counted nowhere, which a disarm of the site takes out all
 * the same: uprobe_mm_recheck() finds such a miss.  mmap_lock held for
 * writing.  The flag goes first: the int3 may be hit the moment it is
 * written.
 */
static void mm_arm_note(struct mm_struct *mm, bool count)
{
	if (!test_bit(MMF_HAS_UPROBES, &mm->flags)) {
		/*
		 * Armed again after uprobe_mm_recheck() cleared the flag:
		 * the munmaps since did not move the generation, so what a
		 * thread remembers of a site here from before may be of a
		 * mapping that is gone.  Moving it now, before any int3 is
		 * written, makes all of that stale.
		 */
		if (mm->uprobes_state.probed)
			site_gen_next();
		mm->uprobes_state.probed = true;
		set_bit(MMF_HAS_UPROBES, &mm->flags);
		/* Both before the int3: the die notifier reads them. */
		smp_mb__after_atomic();
	}
	if (count)
		mm->uprobes_state.armed++;
}

/* An int3 went from @mm (disarmed); mmap_lock held for writing. */
static void mm_disarm_note(struct mm_struct *mm)
{
	if (mm->uprobes_state.armed)
		mm->uprobes_state.armed--;
}

/*
 * Arm @s at @vaddr, an address in @page (mapped at @kpage) of @vma, taken
 * for writing; mmap_lock held for writing.  Arming twice is harmless.
 */
int uprobe_arm_in_page(struct uprobe_site *s, struct vm_area_struct *vma,
		       struct page *page, void *kpage, unsigned long vaddr)
{
	struct mm_struct *mm = vma->vm_mm;
	void *kaddr = kpage + offset_in_page(vaddr);
	int ret;

	if (is_swbp_insn(kaddr) || uprobe_site_optimized(s, mm, vaddr)) {
		mm_arm_note(mm, false);
		return 0;
	}
	ret = ref_ctr_update(s, mm, 1);
	if (ret)
		return ret;
	mm_arm_note(mm, true);
	copy_to_user_page(vma, page, vaddr, kaddr, &s->bp, UPROBE_SWBP_INSN_SIZE);
	return 0;
}

/*
 * Arm @s at @vaddr of @mm.  The page is taken for writing at once, and the
 * byte there read from it: a breakpoint goes into the process's own copy
 * anyway, and one page walk instead of two is a sixth of registering a
 * probe in a running process.  (The copy is then made even when the byte
 * turns out to be an int3 already: ours, or a debugger's, whose page is a
 * copy already.)
 */
static int arm_site(struct uprobe_site *s, struct mm_struct *mm,
		    unsigned long vaddr)
{
	struct vm_area_struct *vma;
	struct page *page;
	void *kpage;
	int ret;

	page = get_user_page_vma_remote(mm, vaddr, FOLL_FORCE | FOLL_WRITE,
					&vma);
	if (IS_ERR(page))
		return PTR_ERR(page);
	kpage = kmap_local_page(page);
	ret = uprobe_arm_in_page(s, vma, page, kpage, vaddr);
	kunmap_local(kpage);
	set_page_dirty_lock(page);
	put_page(page);
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
 * page is dropped when it equals the file's page again, and the page
 * cache page mapped in its place, so a probed library does not keep
 * costing every process that mapped it a page.  Only in a mapping that
 * cannot be written: nobody can change the copy there without mmap_lock
 * (FOLL_FORCE writers take it; we hold it for writing), so what we
 * compared is what we drop.  Threads faulting the page back in meanwhile
 * are fine: the zap and the fault are ordered by the page table lock, as
 * for MADV_DONTNEED.
 */
void uprobe_restore_file_page(struct mm_struct *mm, unsigned long vaddr)
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
	if (!drop)
		return;
	zap_page_range_single(vma, vaddr, PAGE_SIZE, NULL);
	/*
	 * The file's page mapped there again at once, as the next access
	 * would: a child forked later gets it with the page tables (the copy
	 * gave the mapping an anon_vma, so fork copies them) instead of each
	 * child faulting it in on its first call into the page.
	 */
	page = get_user_page_vma_remote(mm, vaddr, FOLL_FORCE, &vma);
	if (!IS_ERR(page))
		put_page(page);
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

	spin_lock(&uprobe_sites_lock);
	for (n = site_ceil(s->inode, start); n && !shared;
	     n = node ? rb_entry(node, struct uprobe_site, node) : NULL) {
		if (n->inode != s->inode || n->offset >= start + PAGE_SIZE)
			break;
		shared = n != s;
		node = rb_next(&n->node);
	}
	spin_unlock(&uprobe_sites_lock);
	return shared;
}

/*
 * Put @s's first byte back at @vaddr, an address in @page (mapped at
 * @kpage) of @vma, taken for writing, if an int3 is there; mmap_lock held
 * for writing.
 */
void uprobe_disarm_in_page(struct uprobe_site *s, struct vm_area_struct *vma,
			   struct page *page, void *kpage, unsigned long vaddr)
{
	void *kaddr = kpage + offset_in_page(vaddr);

	if (!is_swbp_insn(kaddr))
		return;
	copy_to_user_page(vma, page, vaddr, kaddr, &s->arch.insn,
			  UPROBE_SWBP_INSN_SIZE);
	mm_disarm_note(vma->vm_mm);
	ref_ctr_update(s, vma->vm_mm, -1);
}

/*
 * Is the breakpoint at @vaddr of @vma now?  A look at the page mapped
 * there (folio_walk_start(): no fault, no reference) instead of a GUP, a
 * thousand instructions each: the question is asked in every process
 * where a site is disarmed, most of which have no int3 there.  1 or 0, or
 * -EAGAIN when no page is mapped there: it may be swapped out, with the
 * breakpoint in it, and only GUP brings it back.
 */
static int swbp_mapped(struct vm_area_struct *vma, unsigned long vaddr)
{
	struct folio_walk fw;
	void *kaddr;
	int ret;

	if (!folio_walk_start(&fw, vma, vaddr, 0))
		return -EAGAIN;
	kaddr = kmap_local_page(fw.page);
	ret = is_swbp_insn(kaddr + offset_in_page(vaddr));
	kunmap_local(kaddr);
	folio_walk_end(&fw, vma);
	return ret;
}

/*
 * Is @s armed at @vaddr of @vma: an int3 there, or a jump to its stub?
 * What cannot be read is taken for armed.
 */
static bool site_armed_at(struct uprobe_site *s, struct vm_area_struct *vma,
			  unsigned long vaddr)
{
	struct mm_struct *mm = vma->vm_mm;
	uprobe_opcode_t cur;
	int ret = swbp_mapped(vma, vaddr);

	if (ret < 0)
		ret = uprobe_access_mm(mm, vaddr, &cur, UPROBE_SWBP_INSN_SIZE,
				       false) || is_swbp_insn(&cur);
	if (!ret && READ_ONCE(mm->uprobes_state.stubs))
		ret = uprobe_site_optimized(s, mm, vaddr);
	return ret;
}

/*
 * How many sites are armed in @mm: every site of the tree in each of its
 * file mappings, looked at where it is mapped.  mmap_lock held for
 * writing, as in uprobe_mmap(): the sites are taken one at a time, the
 * VMAs stay.
 */
static unsigned long mm_count_armed(struct mm_struct *mm)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct vm_area_struct *vma;
	unsigned long n = 0;

	for_each_vma(vmi, vma) {
		struct inode *inode;
		loff_t off, end;

		if (!valid_vma(vma, false))
			continue;
		inode = file_inode(vma->vm_file);
		off = (loff_t)vma->vm_pgoff << PAGE_SHIFT;
		end = off + (vma->vm_end - vma->vm_start);
		for (;;) {
			struct uprobe_site *s;
			unsigned long vaddr;

			s = site_next_in(inode, off, end);
			if (!s)
				break;
			vaddr = offset_vaddr(vma, s->offset);
			if (vma_has_site(vma, s, vaddr, false) &&
			    site_armed_at(s, vma, vaddr))
				n++;
			off = s->offset + 1;
			uprobe_site_put(s);
		}
	}
	return n;
}

/*
 * After disarming in @mm, mmap_lock held for writing: once nothing is
 * counted armed there, clear MMF_HAS_UPROBES, so that the process stops
 * paying for uprobes (fork's copy of its stub pages, the map hooks, the
 * generation moved at exit).  The count may have missed an int3 (see
 * mm_arm_note()), so the flag goes only when no site of the tree has an
 * int3 or a jump at its address in @mm; else the count becomes what was
 * found.  Every path that arms holds the same lock, and sets the flag
 * again before its int3 is written; fork holds it too (uprobe_dup_mmap()).
 *
 * A thread of @mm may have run into one of the int3s just before it was
 * taken out, and meet the flag only now, in the die notifier: it goes by
 * ->probed then (uprobe_pre_sstep_notifier()), and its hit finds no int3
 * and runs the instruction, as after any disarm.
 */
void uprobe_mm_recheck(struct mm_struct *mm)
{
	unsigned long n;

	mmap_assert_write_locked(mm);
	if (mm->uprobes_state.armed || !test_bit(MMF_HAS_UPROBES, &mm->flags))
		return;
	n = mm_count_armed(mm);
	if (n)
		mm->uprobes_state.armed = n;
	else
		clear_bit(MMF_HAS_UPROBES, &mm->flags);
}

/*
 * Put the original byte back at @vaddr of @vma, the mapping of @s there;
 * mmap_lock held for writing.
 */
static int disarm_site(struct uprobe_site *s, struct vm_area_struct *vma,
		       unsigned long vaddr)
{
	struct mm_struct *mm = vma->vm_mm;
	uprobe_opcode_t cur;
	int ret;

	mmap_assert_write_locked(mm);
	if (uprobe_site_optimized(s, mm, vaddr)) {
		ret = uprobe_unoptimize_site(s, mm, vaddr);
		if (ret)
			return ret;
	}
	ret = swbp_mapped(vma, vaddr);
	if (!ret)
		return 0;
	if (ret < 0) {
		ret = uprobe_access_mm(mm, vaddr, &cur, UPROBE_SWBP_INSN_SIZE,
				       false);
		if (ret || !is_swbp_insn(&cur))
			return ret;
	}
	ret = uprobe_access_mm(mm, vaddr, &s->arch.insn, UPROBE_SWBP_INSN_SIZE,
			       true);
	if (ret)
		return ret;
	mm_disarm_note(mm);
	ref_ctr_update(s, mm, -1);
	if (!site_page_shared(s))
		uprobe_restore_file_page(mm, vaddr);
	return 0;
}

/* ---- consumers ------------------------------------------------------------ */

/* Does any consumer of @s want it armed in @mm? */
bool uprobe_site_wanted(struct uprobe_site *s, struct mm_struct *mm)
{
	struct uprobe_consumer *uc;
	bool want = false;
	int idx;

	idx = uprobe_read_lock();
	list_for_each_entry_srcu(uc, &s->consumers, cons_node,
				 srcu_read_lock_held(&uprobes_srcu)) {
		if (uprobe_consumer_wants(uc, mm)) {
			want = true;
			break;
		}
	}
	uprobe_read_unlock(idx);
	return want;
}

/*
 * Every process mapping a page from @first to @last of @inode, pinned
 * (mmget()), possibly more than once: in @few (room for FEW_TARGETS) when
 * they fit, the common case, else in an array the caller kvfree()s when it
 * is not @few.  Nothing may sleep under i_mmap_rwsem for memory, so one
 * walk fills @few and counts; only when the count did not fit, the array is
 * allocated and the walk made again (and again if the count grew).
 */
struct mm_struct **uprobe_collect_mms(struct inode *inode, pgoff_t first,
				      pgoff_t last, int *nr,
				      struct mm_struct **few)
{
	struct address_space *mapping = inode->i_mapping;
	struct vm_area_struct *vma;
	struct mm_struct **t = few;
	int n, cap = FEW_TARGETS, want, i;

	for (;;) {
		n = 0;
		want = 0;
		i_mmap_lock_read(mapping);
		vma_interval_tree_foreach(vma, &mapping->i_mmap, first, last) {
			if (!valid_vma(vma, false))
				continue;
			want++;
			if (n < cap && mmget_not_zero(vma->vm_mm))
				t[n++] = vma->vm_mm;
		}
		i_mmap_unlock_read(mapping);
		if (want <= cap)
			break;
		/* Did not fit: mmput() may sleep, so only now. */
		for (i = 0; i < n; i++)
			mmput(t[i]);
		if (t != few)
			kvfree(t);
		cap = want + 4;
		t = kvmalloc_array(cap, sizeof(*t), GFP_KERNEL);
		if (!t)
			return ERR_PTR(-ENOMEM);
	}
	*nr = n;
	return t;
}

#define SITE_MAPS_MAX	8

/*
 * The mappings of @s's page in @mm, from the file's i_mmap tree rather than
 * a walk over all of @mm's VMAs (a tenth of each registration with
 * thousands of probes on one file).  The caller holds @mm's mmap_lock for
 * writing, which keeps them as they are until it is done (arming and
 * disarming change pages, never VMAs); they are not armed under
 * i_mmap_rwsem: arming may allocate, and reclaim takes it.  Return: how
 * many, or -1 when more than SITE_MAPS_MAX (the caller walks the VMAs
 * then).
 */
static int site_vmas(struct uprobe_site *s, struct mm_struct *mm,
		     struct vm_area_struct **vmas)
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
		vmas[n++] = vma;
	}
	i_mmap_unlock_read(mapping);
	return n;
}

static int apply_site_at(struct uprobe_site *s, struct vm_area_struct *vma,
			 bool arm)
{
	unsigned long vaddr = offset_vaddr(vma, s->offset);

	if (!vma_has_site(vma, s, vaddr, arm))
		return 0;
	return arm ? arm_site(s, vma->vm_mm, vaddr) : disarm_site(s, vma, vaddr);
}

/*
 * Arm @s in every mapping of it in @mm if @uc wants it there (@arm), or
 * disarm it there if no consumer does; mmap_lock held for writing.  The
 * mappings are looked up here, not remembered from uprobe_collect_mms():
 * the process may have moved one (mremap) in between, and a breakpoint
 * moves with its page.  A mapping is in the file's i_mmap tree at every
 * instant of a move (the new one is linked before the old one goes), so
 * uprobe_collect_mms() cannot miss a process.
 * Arming stops at the first error; disarming tries them all.
 */
static int apply_site_mm(struct uprobe_site *s, struct uprobe_consumer *uc,
			 struct mm_struct *mm, bool arm)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct vm_area_struct *vmas[SITE_MAPS_MAX], *vma;
	int n, i, ret, err = 0;

	if (arm ? !uprobe_consumer_wants(uc, mm) :
		  !test_bit(MMF_HAS_UPROBES, &mm->flags) || uprobe_site_wanted(s, mm))
		return 0;
	n = site_vmas(s, mm, vmas);
	for (i = 0; i < n && !(arm && err); i++) {
		ret = apply_site_at(s, vmas[i], arm);
		err = err ?: ret;
	}
	for_each_vma(vmi, vma) {
		if (n >= 0 || (arm && err))
			break;
		if (!vma_covers(vma, s))
			continue;
		ret = apply_site_at(s, vma, arm);
		err = err ?: ret;
	}
	if (!arm)
		uprobe_mm_recheck(mm);
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
	pgoff_t pgoff = s->offset >> PAGE_SHIFT;
	struct mm_struct *few[FEW_TARGETS], **t;
	int n, i, err = 0;

	percpu_down_write(&uprobe_dup_mmap_sem);
	t = uprobe_collect_mms(s->inode, pgoff, pgoff, &n, few);
	if (IS_ERR(t)) {
		percpu_up_write(&uprobe_dup_mmap_sem);
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
	if (t != few)
		kvfree(t);
	percpu_up_write(&uprobe_dup_mmap_sem);
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

	/*
	 * Where the site is still armed, a consumer wants it.  With one
	 * consumer left that is its filter's yes: hits need not ask it.
	 */
	if (!ret && (list_empty(&s->consumers) ||
		     list_is_singular(&s->consumers)))
		WRITE_ONCE(s->filters_changed, false);
	if (ret) {
		get_site(s);
		pr_warn("inode %lu offset 0x%llx: breakpoint not removed everywhere (%d); keeping the site\n",
			s->inode->i_ino, s->offset, ret);
	}
}

/*
 * Consumers are numbered as they are added, and each site's list is
 * newest first: the hit whose walk meets consumers up to number N has
 * met every consumer numbered N or less that is still on the list at its
 * return (one taken off and added again gets a new number).  So a return
 * instance keeps N, and its return runs no consumer added since its entry.
 */
static atomic64_t uprobe_consumer_ids = ATOMIC64_INIT(0);

/* reg_lock held. */
void uprobe_consumer_add(struct uprobe_site *s, struct uprobe_consumer *uc)
{
	lockdep_assert_held(&s->reg_lock);
	uc->id = atomic64_inc_return(&uprobe_consumer_ids);
	/* Published after its number (rcu_assign_pointer()). */
	list_add_rcu(&uc->cons_node, &s->consumers);
}

bool uprobe_is_consumer(struct uprobe_site *s, struct uprobe_consumer *uc)
{
	struct uprobe_consumer *c;

	list_for_each_entry(c, &s->consumers, cons_node)
		if (c == uc)
			return true;
	return false;
}

/* What uprobe_register() refuses before looking at the instruction. */
int uprobe_check_probe(struct inode *inode, loff_t offset,
		       loff_t ref_ctr_offset, struct uprobe_consumer *uc)
{
	if (!uc->handler && !uc->ret_handler)
		return -EINVAL;
	if (!inode->i_mapping->a_ops->read_folio &&
	    !shmem_mapping(inode->i_mapping))
		return -EIO;
	if (offset < 0 || offset > i_size_read(inode))
		return -EINVAL;
	if (ref_ctr_offset < 0 || !IS_ALIGNED(ref_ctr_offset, sizeof(short)))
		return -EINVAL;
	return 0;
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
	ret = uprobe_check_probe(inode, offset, ref_ctr_offset, uc);
	if (ret)
		return ERR_PTR(ret);
	s = uprobe_site_get_or_create(inode, offset, ref_ctr_offset, NULL);
	if (IS_ERR(s))
		return ERR_CAST(s);

	mutex_lock(&s->reg_lock);
	uprobe_consumer_add(s, uc);
	ret = apply_site(s, uc, true);
	if (ret) {
		list_del_rcu(&uc->cons_node);
		disarm_or_keep(s);
	}
	mutex_unlock(&s->reg_lock);
	if (ret) {
		/* A hit may be running @uc's handler; the caller frees it. */
		if (!in_uprobe_handler())
			uprobe_sync_consumers();
		uprobe_site_put(s);
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
 * @add: arm where @uc's filter now wants the probe; else @uc's filter now
 *	refuses some processes
 *
 * After a removal (!@add) returns, @uc's handlers no longer run in a
 * process its filter refuses.  The breakpoints are not taken out here but
 * where they are hit next (the hit asks the filters and disarms where no
 * consumer wants the site), or by the disarm of uprobe_unregister_nosync():
 * perf calls this for each event it closes, mostly just before that
 * unregister, and a disarm costs the close a walk over the processes and
 * their page tables, twice over.
 *
 * Return: 0, -ENOENT when @uc is not a consumer of @uprobe, or an error
 * from arming.
 */
int uprobe_apply(struct uprobe *uprobe, struct uprobe_consumer *uc, bool add)
{
	struct uprobe_site *s = uprobe->site;
	int ret = -ENOENT;

	mutex_lock(&s->reg_lock);
	if (uprobe_is_consumer(s, uc)) {
		ret = 0;
		if (add) {
			ret = apply_site(s, uc, true);
		} else {
			WRITE_ONCE(s->filters_changed, true);
			/*
			 * Seen by every hit whose read section begins after
			 * we return: pairs with uprobe_read_lock()'s barrier.
			 */
			smp_mb();
		}
	}
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
	found = uprobe_is_consumer(s, uc);
	if (found) {
		list_del_rcu(&uc->cons_node);
		disarm_or_keep(s);
	}
	mutex_unlock(&s->reg_lock);
	if (WARN_ON_ONCE(!found))
		return;
	uprobe_site_put(s);
}
EXPORT_SYMBOL_GPL(uprobe_unregister_nosync);

DEFINE_PER_CPU(struct uprobe_readers, uprobe_readers);

/*
 * Wait until no uprobes_srcu read section that began before the call (and
 * so may have found a consumer unlinked before it) is running.  Perf closes
 * its events one at a time, each close waiting here: with no hit running,
 * the per-CPU counts answer at once, where a grace period would cost the
 * close most of its time.
 *
 * A section counted in on a CPU we sum after its exit was counted comes
 * out even, and one running when we sum leaves its entry unmatched.  One
 * that began too late to be counted at all began after the caller's
 * unlinking was visible (the barrier below pairs with the one in
 * uprobe_read_lock()): it cannot see what was unlinked.  Exits are summed
 * first, so that every exit counted has its entry counted too.
 */
void uprobe_sync_consumers(void)
{
	unsigned long entered = 0, left = 0;
	int cpu;

	/* The caller's unlinking, before the counts are read. */
	smp_mb();
	for_each_possible_cpu(cpu)
		left += READ_ONCE(per_cpu_ptr(&uprobe_readers, cpu)->left);
	/* An exit summed above had its entry before it: seen below. */
	smp_mb();
	for_each_possible_cpu(cpu)
		entered += READ_ONCE(per_cpu_ptr(&uprobe_readers, cpu)->entered);
	if (entered != left)
		synchronize_srcu(&uprobes_srcu);
}

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
	uprobe_sync_consumers();
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
	if (RB_EMPTY_ROOT(&uprobe_sites) || !valid_vma(vma, true))
		return 0;

	inode = file_inode(vma->vm_file);
	off = (loff_t)vma->vm_pgoff << PAGE_SHIFT;
	end = off + (vma->vm_end - vma->vm_start);
	while (!fatal_signal_pending(current)) {
		struct uprobe_site *s;

		s = site_next_in(inode, off, end);
		if (!s)
			break;
		if (arch_uprobe_mm_supported(&s->arch, mm) &&
		    uprobe_site_wanted(s, mm))
			arm_site(s, mm, offset_vaddr(vma, s->offset));
		off = s->offset + 1;
		uprobe_site_put(s);
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
	struct mm_struct *mm = vma->vm_mm;

	/* Not at exit: nothing moves then, and the mm is being torn down. */
	if (!atomic_read(&mm->mm_users))
		return;
	/*
	 * With nothing armed no thread can be finding a site here; arming
	 * again moves the generation (mm_arm_note()).
	 */
	if (test_bit(MMF_HAS_UPROBES, &mm->flags))
		site_gen_next();
	/*
	 * Stubs and boosted copies stay when nothing is armed, and a hit
	 * that was under way may have added one since: forgotten whenever
	 * the process has them.
	 */
	if (READ_ONCE(mm->uprobes_state.stubs)) {
		uprobe_stub_moved(vma, start, end);
		uprobe_boost_forget(mm, start, end);
	}
}

/* fork: arming and fork exclude each other, see apply_site(). */
void uprobe_start_dup_mmap(void)
{
	percpu_down_read(&uprobe_dup_mmap_sem);
}

void uprobe_end_dup_mmap(void)
{
	percpu_up_read(&uprobe_dup_mmap_sem);
}

/*
 * The child gets copies of the parent's pages, breakpoints included, and
 * no XOL area (VM_DONTCOPY).  A breakpoint no consumer wants in the child
 * is taken out on its first hit there.  @oldmm's mmap_lock is held for
 * writing and arming is kept out (uprobe_start_dup_mmap()), so what is
 * armed in it does not change until its pages are copied: a parent with
 * nothing armed has a child with nothing armed, which pays for uprobes no
 * more than a child of a process never probed (nor does it get the stub
 * pages: uprobe_stub_fork()).
 */
void uprobe_dup_mmap(struct mm_struct *oldmm, struct mm_struct *newmm)
{
	struct uprobes_state *st = &newmm->uprobes_state;

	/* Copied from the parent with its mm; the child's are made below. */
	st->stubs = false;
	st->armed = 0;
	st->probed = false;
	if (test_bit(MMF_HAS_UPROBES, &oldmm->flags)) {
		st->armed = oldmm->uprobes_state.armed;
		st->probed = true;
		set_bit(MMF_HAS_UPROBES, &newmm->flags);
		uprobe_stub_fork(oldmm, true);
		uprobe_stub_dup(oldmm, newmm);
	} else {
		uprobe_stub_fork(oldmm, false);
	}
}

/* The process is gone (exit, or exec replaced its mm). */
void uprobe_clear_state(struct mm_struct *mm)
{
	struct xol_area *area = mm->uprobes_state.xol_area;

	/* Threads that exec'ed from it may remember sites in it. */
	if (mm->uprobes_state.probed)
		site_gen_next();

	/* A seed of @mm holds the mm itself, and was added while it had users. */
	if (!uprobe_seeds_none())
		uprobe_seeds_exit(mm);

	if (!list_empty(&delayed_refs))
		drop_delayed(mm, NULL);
	if (area) {
		mm->uprobes_state.xol_area = NULL;
		uprobe_xol_free(area);
	}
	uprobe_stub_clear(mm);
}

/* ---- per-task state ---------------------------------------------------- */

struct uprobe_task *uprobe_alloc_utask(void)
{
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

/* Take the newest pending return off the thread's list. */
static struct return_instance *pop_ri(struct uprobe_task *utask)
{
	struct return_instance *ri = utask->return_instances;

	utask->return_instances = ri->next;
	utask->depth--;
	return ri;
}

/* Done with @ri, popped before. */
static void release_ri(struct uprobe_task *utask, struct return_instance *ri)
{
	uprobe_site_put(ri->site);
	cache_ri(utask, ri);
}

static void free_ri(struct uprobe_task *utask)
{
	release_ri(utask, pop_ri(utask));
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
			uprobe_xol_put_slot(area, utask->xol_vaddr);
		uprobe_site_put(utask->active);
	}
	while (utask->return_instances)
		free_ri(utask);
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
	if (!uprobe_xol_area_at(utask->dup_xol_addr))
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

/* ---- hits ---------------------------------------------------------------- */

int uprobe_pre_sstep_notifier(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	struct mm_struct *mm = current->mm;

	if (unlikely(utask && utask->active) && utask->state == UTASK_SSTEP &&
	    arch_uprobe_step_skipped(&utask->active->arch, regs))
		return uprobe_post_sstep_notifier(regs);
	/* ->probed: an int3 hit just before it was disarmed, see mm_arm_note(). */
	if (!mm || (!test_bit(MMF_HAS_UPROBES, &mm->flags) &&
		    !READ_ONCE(mm->uprobes_state.probed) &&
		    !(utask && utask->return_instances)))
		return 0;
	if (uprobe_seeds_none() || !uprobe_seed_trap_handlers(regs))
		set_thread_flag(TIF_UPROBE);
	return 1;
}

/* DIE_DEBUG from user mode: the step of a slot copy finished. */
int uprobe_post_sstep_notifier(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;

	if (!current->mm || !utask || !utask->active ||
	    utask->state != UTASK_SSTEP)
		return uprobe_stub_step(regs);
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

/* Is there an int3 at @vaddr?  Read outside the VMA lock: it may fault. */
static bool uprobe_int3_there(unsigned long vaddr)
{
	uprobe_opcode_t bp;

	return !copy_from_user(&bp, (void __user *)vaddr,
			       UPROBE_SWBP_INSN_SIZE) && is_swbp_insn(&bp);
}

/*
 * The site at @vaddr, by the VMA there.  The VMA is held by its own lock,
 * so threads hitting probes do not queue behind each other or behind
 * mmap() on mmap_lock; that is taken only when a writer holds the VMA.
 */
static struct uprobe_site *site_by_vma(struct mm_struct *mm,
				       unsigned long vaddr)
{
	struct vm_area_struct *vma = lock_vma_under_rcu(mm, vaddr);
	struct uprobe_site *s;

	if (vma) {
		s = site_in_vma(vma, vaddr);
		vma_end_read(vma);
	} else {
		mmap_read_lock(mm);
		s = site_in_vma(vma_lookup(mm, vaddr), vaddr);
		mmap_read_unlock(mm);
	}
	return s;
}

/*
 * uprobe_site_at() without the thread's memory: find the site at @bp_vaddr
 * and remember it with @gen, the generation read before.
 */
struct uprobe_site *uprobe_site_lookup(unsigned long bp_vaddr,
				       unsigned long gen, bool *is_bp)
{
	struct uprobe_task *utask = current->utask;
	struct mm_struct *mm = current->mm;
	struct uprobe_site *s;

	s = site_by_vma(mm, bp_vaddr);
	if (!s && uprobe_int3_there(bp_vaddr)) {
		/*
		 * The int3 this thread hit may have been a site's that went
		 * away before the lookup, and the one read now that of a new
		 * site armed at the same address since: a site is in the
		 * tree before its first breakpoint is written, so a second
		 * lookup after the read finds it.  Only an int3 that is not
		 * ours is left without one (SIGTRAP).
		 */
		smp_rmb();
		s = site_by_vma(mm, bp_vaddr);
		*is_bp = !s;
	} else {
		*is_bp = false;
	}
	if (s && utask) {
		utask->last_mm = mm;
		utask->last_vaddr = bp_vaddr;
		utask->last_site = s;
		utask->last_gen = gen;
		utask->last_stub = 0;
	}
	return s;
}

/* Make @s's next return instance: hijack the return address. */
static void prepare_uretprobe(struct uprobe_site *s, struct pt_regs *regs,
			      unsigned long bp_vaddr, u64 seen, bool ask)
{
	struct uprobe_task *utask = current->utask;
	struct return_instance *ri;
	struct xol_area *area;
	unsigned long orig, tramp;
	bool chained;

	area = uprobe_xol_area();
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
		uprobe_site_put(s);
		cache_ri(utask, ri);
		goto miss;
	}
	chained = orig == tramp;
	/* Frames longjmp() skipped never return through the trampoline. */
	while (utask->return_instances &&
	       !arch_uretprobe_is_alive(utask->return_instances,
					chained ? RP_CHECK_CHAIN_CALL :
						  RP_CHECK_CALL, regs))
		free_ri(utask);
	if (chained) {
		/*
		 * A tail call from a probed function: same frame, same return.
		 * With nothing pending, the program jumped here with the
		 * trampoline as its return address itself: no instance, and
		 * the return then finds nothing either (SIGILL, as upstream).
		 */
		if (!utask->return_instances) {
			pr_warn_ratelimited("pid %d: return address is the trampoline but nothing is pending\n",
					    current->pid);
			uprobe_site_put(s);
			cache_ri(utask, ri);
			return;
		}
		orig = utask->return_instances->orig_ret_vaddr;
	}
	ri->site = s;
	ri->func = bp_vaddr;
	ri->stack = user_stack_pointer(regs);
	ri->orig_ret_vaddr = orig;
	ri->cons_id = seen;
	ri->ask = ask;
	ri->chained = chained;
	ri->next = utask->return_instances;
	utask->return_instances = ri;
	utask->depth++;
	return;
miss:
	atomic_long_inc(&s->missed);
}

void uprobe_handler_chain(struct uprobe_site *s, struct pt_regs *regs,
			  unsigned long bp_vaddr)
{
	struct uprobe_task *utask = current->utask;
	bool ask = READ_ONCE(s->filters_changed);
	struct uprobe_consumer *uc;
	bool remove = true, need_ret = false;
	u64 seen = 0;

	this_cpu_inc(*s->hits);
	/* No step is in progress: bp_vaddr tells consumers where the hit is. */
	utask->bp_vaddr = bp_vaddr;
	utask->auprobe = &s->arch;
	utask->in_handler = true;
	/* The caller's uprobes_srcu read section covers the consumers too. */
	list_for_each_entry_srcu(uc, &s->consumers, cons_node,
				 srcu_read_lock_held(&uprobes_srcu)) {
		int rc = 0;

		/* The return calls none added after the walk began. */
		seen = max(seen, uc->id);
		/* Refused since the site was armed here: as if it left. */
		if (unlikely(ask) && !uprobe_consumer_wants(uc, current->mm))
			continue;
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
		prepare_uretprobe(s, regs, bp_vaddr, seen, ask);

	/*
	 * Every consumer asked to leave this process or is refused by its
	 * filter, or none is left (a site kept after a failed disarm): disarm
	 * if the filters agree.  Not for
	 * a site that lost its last reference: it has given up its inode
	 * and its int3s, and one at this address now is a new site's.
	 */
	if (remove && refcount_inc_not_zero(&s->ref)) {
		struct mm_struct *mm = current->mm;
		struct vm_area_struct *vma;

		mutex_lock(&s->reg_lock);
		mmap_write_lock(mm);
		vma = vma_lookup(mm, bp_vaddr);
		if (vma_has_site(vma, s, bp_vaddr, false) && !uprobe_site_wanted(s, mm)) {
			disarm_site(s, vma, bp_vaddr);
			uprobe_mm_recheck(mm);
		}
		mmap_write_unlock(mm);
		mutex_unlock(&s->reg_lock);
		uprobe_site_put(s);
	}
}

/*
 * @ri is off the thread's list already and @regs->ip is its real return
 * address: a stack trace taken by a handler (perf's, bpf_get_stack())
 * then replaces the trampoline addresses left on the stack with the return
 * addresses of the instances still pending, in order.  No auprobe either:
 * that says "at the probed instruction" to perf's unwinder, which would
 * then take the word at sp for the caller's return address.
 */
static void ret_handler_chain(struct return_instance *ri, struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	struct uprobe_consumer *uc;
	bool ask;
	int idx;

	utask->in_handler = true;
	idx = uprobe_read_lock();
	/* A consumer the entry's filters refused is asked again. */
	ask = ri->ask || READ_ONCE(ri->site->filters_changed);
	list_for_each_entry_srcu(uc, &ri->site->consumers, cons_node,
				 srcu_read_lock_held(&uprobes_srcu))
		/* Not one whose handler could not run for this entry. */
		if (uc->ret_handler && uc->id <= ri->cons_id &&
		    (likely(!ask) || uprobe_consumer_wants(uc, current->mm)))
			uc->ret_handler(uc, ri->func, regs);
	uprobe_read_unlock(idx);
	utask->in_handler = false;
}

/* The first instance after @ri's chain of tail calls, or NULL. */
static struct return_instance *next_chain(struct return_instance *ri)
{
	while (ri->chained)
		ri = ri->next;
	return ri->next;
}

/*
 * A probed function returned to the trampoline; @regs are as right after
 * its ret, with ip at the trampoline.  The newest chain of instances (an
 * instance and those its tail calls chained to it) is the returning one
 * unless longjmp() skipped it: that is judged by the next chain, which
 * must still be ahead on the stack.  The returning frame itself cannot be
 * judged by its stack pointer: "ret $n" leaves sp anywhere above it.
 * Skipped chains are dropped without their handlers.
 */
void uprobe_handle_trampoline(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	struct return_instance *ri, *next;
	bool valid;

	if (!utask || !utask->return_instances)
		goto bad;
	do {
		ri = utask->return_instances;
		next = next_chain(ri);
		valid = !next || arch_uretprobe_is_alive(next, RP_CHECK_RET,
							 regs);
		instruction_pointer_set(regs, ri->orig_ret_vaddr);
		do {
			ri = pop_ri(utask);
			/* A handler may redirect ip: the last one set wins. */
			if (valid)
				ret_handler_chain(ri, regs);
			release_ri(utask, ri);
		} while (utask->return_instances != next);
	} while (!valid);
	return;
bad:
	pr_warn_ratelimited("pid %d: return through the trampoline with no return probe pending\n",
			    current->pid);
	force_sig(SIGILL);
}

/* Run @s's instruction from a slot: the debug trap brings us back. */
static int prepare_step(struct uprobe_site *s, struct pt_regs *regs,
			unsigned long bp_vaddr)
{
	struct uprobe_task *utask = current->utask;
	struct xol_area *area = uprobe_xol_area();
	unsigned long slot;
	int ret;

	if (!area)
		return -ENOMEM;
	slot = uprobe_xol_take_slot(area);
	if (!slot)
		return -EINTR;
	/* What the architecture's analysis made of the instruction. */
	BUILD_BUG_ON(sizeof(s->arch.ixol) > UPROBE_XOL_SLOT_BYTES);
	arch_uprobe_copy_ixol(area->page, slot, &s->arch.ixol,
			      sizeof(s->arch.ixol));
	utask->xol_vaddr = slot;
	utask->bp_vaddr = bp_vaddr;
	/* Where upstream's architecture code looks for the probed address. */
	utask->vaddr = bp_vaddr;
	utask->active = s;
	ret = arch_uprobe_pre_xol(&s->arch, regs);
	if (ret) {
		utask->active = NULL;
		utask->xol_vaddr = 0;
		uprobe_xol_put_slot(area, slot);
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

	idx = uprobe_read_lock();
	/*
	 * A return to a trampoline that is a breakpoint
	 * (arch_uprobe_trampoline()), first: the XOL page has no sites, and
	 * looking for one there (the per-thread cache, the VMA, the text read
	 * back) costs more than the rest of the return.
	 */
	if (bp_vaddr == uprobe_get_trampoline_vaddr()) {
		instruction_pointer_set(regs, bp_vaddr);
		uprobe_handle_trampoline(regs);
		goto out;
	}
	s = uprobe_site_at(bp_vaddr, &is_bp);
	if (!s) {
		/* Not ours: a breakpoint the program or a debugger set. */
		if (is_bp)
			force_sig(SIGTRAP);
		else	/* ours, but removed meanwhile: run the original */
			instruction_pointer_set(regs, bp_vaddr);
		goto out;
	}
	instruction_pointer_set(regs, bp_vaddr);
	if (!uprobe_get_utask())
		goto out;	/* try again */
	/* The architecture carried the hit out itself (arm: condition false). */
	if (IS_ENABLED(CONFIG_HAVE_UPROBE_IGNORE) &&
	    arch_uprobe_ignore(&s->arch, regs))
		goto out;

	if (!uprobe_boost_resumed(regs, bp_vaddr))
		uprobe_handler_chain(s, regs, bp_vaddr);
	/* A handler sent the thread elsewhere: skip the instruction. */
	if (instruction_pointer(regs) != bp_vaddr)
		goto out;
	uprobe_try_optimize(s, bp_vaddr);
	if (arch_uprobe_skip_sstep(&s->arch, regs) || uprobe_boost(s, regs, bp_vaddr))
		goto out;
	/*
	 * The step outlives this read section: it pins the site.  One that
	 * lost its last reference has no int3 left in any process: running
	 * the original instruction in place is then right.
	 */
	if (!refcount_inc_not_zero(&s->ref))
		goto out;
	if (prepare_step(s, regs, bp_vaddr))
		uprobe_site_put(s);
out:
	uprobe_read_unlock(idx);
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
	uprobe_xol_put_slot(area, utask->xol_vaddr);
	utask->xol_vaddr = 0;
	uprobe_site_put(s);

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

	uprobe_stub_rewind(current_pt_regs());
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


void __init uprobes_init(void)
{
	BUILD_BUG_ON(XOL_SLOTS < 2);
	WARN_ON(register_die_notifier(&uprobe_die_nb));
}
