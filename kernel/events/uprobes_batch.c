// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Many probes on one file at once: uprobe_register_batch() and
 * uprobe_unregister_batch(), for callers that attach thousands of probes
 * together (a BPF uprobe_multi link).
 *
 * One by one, each probe costs a walk of the file's mappings, an
 * mmap_lock for writing in every process that maps it and a page table
 * walk to its page.  A batch creates every site first and adds the
 * consumers, then visits each process once, under one mmap_lock, and each
 * page there once: one page walk arms every probe of the page.  Detaching
 * walks the same way and compares each page it changed with the page
 * cache once, to give the process the file's page back.
 *
 * Unlike uprobe_register(), a batch does not hold the sites' reg_locks
 * while it arms or disarms, and needs not: whether a site is armed in a
 * process is decided, by every path, under that process's mmap_lock held
 * for writing and from the site's consumer list as it is then.  Our
 * consumers are on their lists before the first process is visited and
 * off them before the first is disarmed, so a concurrent registration or
 * removal on the same site either sees ours (and keeps the breakpoint) or
 * does its part in a process before we do ours there (and we arm after
 * it).  A mapping that appears after the processes were collected is
 * armed by uprobe_mmap(), which sees our consumers too, and fork waits
 * on uprobe_dup_mmap_sem from the collection to the end.
 */
#define pr_fmt(fmt) "uprobes: " fmt

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/percpu-rwsem.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uprobes.h>

#include "uprobes_internal.h"

struct batch_entry {
	struct uprobe_site	*s;		/* the consumer's reference */
	struct uprobe_consumer	*uc;
	struct uprobe		**handle;
	bool			drop;		/* unwanted in this mm */
	bool			kept;		/* an int3 may be left */
};

static int entry_cmp(const void *a, const void *b)
{
	const struct uprobe_site *x = ((const struct batch_entry *)a)->s;
	const struct uprobe_site *y = ((const struct batch_entry *)b)->s;

	if (x->inode != y->inode)
		return x->inode < y->inode ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return 0;
}

/*
 * By file and offset.  Callers often give the offsets in order already,
 * and sort() costs about a thousand instructions a probe even then: look
 * first.
 */
static void sort_entries(struct batch_entry *e, unsigned int n)
{
	unsigned int i;

	for (i = 1; i < n; i++)
		if (entry_cmp(&e[i - 1], &e[i]) > 0)
			break;
	if (i < n)
		sort(e, n, sizeof(*e), entry_cmp, NULL);
}

static int mm_cmp(const void *a, const void *b)
{
	const struct mm_struct *x = *(struct mm_struct * const *)a;
	const struct mm_struct *y = *(struct mm_struct * const *)b;

	return x == y ? 0 : x < y ? -1 : 1;
}

static pgoff_t entry_pgoff(const struct batch_entry *e)
{
	return e->s->offset >> PAGE_SHIFT;
}

static unsigned long entry_vaddr(const struct batch_entry *e,
				 unsigned long page_vaddr)
{
	return page_vaddr + offset_in_page(e->s->offset);
}

/*
 * Arm the @n entries at @e, all in the page @vma maps at @vaddr, where
 * their consumers want them: one page walk for all of them.
 */
static int arm_page(struct batch_entry *e, unsigned int n,
		    struct vm_area_struct *vma, unsigned long vaddr)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned int i = 0;
	struct page *page;
	void *kpage;
	int ret = 0;

	while (i < n && !uprobe_consumer_wants(e[i].uc, mm))
		i++;
	if (i == n)
		return 0;
	page = get_user_page_vma_remote(mm, vaddr, FOLL_FORCE | FOLL_WRITE,
					&vma);
	if (IS_ERR(page))
		return PTR_ERR(page);
	kpage = kmap_local_page(page);
	for (; i < n && !ret; i++)
		if (uprobe_consumer_wants(e[i].uc, mm))
			ret = uprobe_arm_in_page(e[i].s, vma, page, kpage,
						 entry_vaddr(&e[i], vaddr));
	kunmap_local(kpage);
	set_page_dirty_lock(page);
	put_page(page);
	return ret;
}

/*
 * Look at (or, @write, put back) the first bytes of the entries to drop in
 * the page of @mm at @vaddr.  Looked at first, with the page taken for
 * reading: a page without such an int3 may still be the file's, and
 * taking it for writing would copy it for nothing.  Return: whether one
 * holds an int3 (looking), 0 (writing), or an error.
 */
static int drops_in_page(struct batch_entry *e, unsigned int n,
			 struct mm_struct *mm, unsigned long vaddr, bool write)
{
	unsigned int flags = FOLL_FORCE | (write ? FOLL_WRITE : 0);
	struct vm_area_struct *vma;
	struct page *page;
	unsigned int i;
	void *kpage;
	int found = 0;

	page = get_user_page_vma_remote(mm, vaddr, flags, &vma);
	if (IS_ERR(page))
		return PTR_ERR(page);
	kpage = kmap_local_page(page);
	for (i = 0; i < n && !found; i++) {
		unsigned long at = entry_vaddr(&e[i], vaddr);

		if (!e[i].drop)
			continue;
		if (write)
			uprobe_disarm_in_page(e[i].s, vma, page, kpage, at);
		else
			found = is_swbp_insn(kpage + offset_in_page(at));
	}
	kunmap_local(kpage);
	if (write)
		set_page_dirty_lock(page);
	put_page(page);
	return found;
}

/*
 * Disarm the @n entries at @e, all in the page @vma maps at @vaddr, that
 * no consumer wants there any more.  When that fails, those may keep
 * their int3 here: marked kept.
 */
static int disarm_page(struct batch_entry *e, unsigned int n,
		       struct vm_area_struct *vma, unsigned long vaddr)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned int i, drops = 0;
	int ret = 0;

	for (i = 0; i < n; i++) {
		unsigned long at = entry_vaddr(&e[i], vaddr);

		e[i].drop = !uprobe_site_wanted(e[i].s, mm);
		if (!e[i].drop)
			continue;
		drops++;
		if (!ret && uprobe_site_optimized(e[i].s, mm, at))
			ret = uprobe_unoptimize_site(e[i].s, mm, at);
	}
	if (!drops)
		return 0;
	if (!ret)
		ret = drops_in_page(e, n, mm, vaddr, false);
	if (ret > 0) {
		ret = drops_in_page(e, n, mm, vaddr, true);
		if (!ret)
			uprobe_restore_file_page(mm, vaddr);
	}
	if (!ret)
		return 0;
	for (i = 0; i < n; i++)
		e[i].kept |= e[i].drop;
	return ret;
}

/* The first of the @n entries at @e (sorted) in page @pgoff or after it. */
static unsigned int first_from(struct batch_entry *e, unsigned int n,
			       pgoff_t pgoff)
{
	unsigned int lo = 0, hi = n;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (entry_pgoff(&e[mid]) < pgoff)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * (Dis)arm the @n entries at @e that @vma maps, page by page.  Arming
 * stops at the first error; disarming goes on.
 */
static int batch_vma(struct batch_entry *e, unsigned int n,
		     struct vm_area_struct *vma, bool arm)
{
	pgoff_t end = vma->vm_pgoff + vma_pages(vma);
	unsigned int i, j;
	int ret, err = 0;

	for (i = first_from(e, n, vma->vm_pgoff);
	     i < n && entry_pgoff(&e[i]) < end; i = j) {
		pgoff_t pgoff = entry_pgoff(&e[i]);
		unsigned long vaddr = vma->vm_start +
				      ((pgoff - vma->vm_pgoff) << PAGE_SHIFT);

		for (j = i + 1; j < n && entry_pgoff(&e[j]) == pgoff; j++)
			;
		if (arm)
			ret = arm_page(e + i, j - i, vma, vaddr);
		else
			ret = disarm_page(e + i, j - i, vma, vaddr);
		err = err ?: ret;
		if (arm && err)
			break;
		cond_resched();
	}
	return err;
}

/* (Dis)arm the @n entries at @e, sorted, all of one file, in @mm. */
static int batch_mm(struct batch_entry *e, unsigned int n,
		    struct mm_struct *mm, bool arm)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct inode *inode = e[0].s->inode;
	struct vm_area_struct *vma;
	int ret, err = 0;

	/* One file, one kind of code: see vma_has_site(). */
	if (!arch_uprobe_mm_supported(&e[0].s->arch, mm))
		return 0;
	mmap_write_lock(mm);
	for_each_vma(vmi, vma) {
		if (!vma->vm_file || file_inode(vma->vm_file) != inode ||
		    !valid_vma(vma, arm))
			continue;
		/* The VMAs do not change: we hold the lock for writing. */
		ret = batch_vma(e, n, vma, arm);
		err = err ?: ret;
		if (arm && err)
			break;
	}
	if (!arm)
		uprobe_mm_recheck(mm);
	mmap_write_unlock(mm);
	return err;
}

static void mark_kept(struct batch_entry *e, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		e[i].kept = true;
}

/*
 * Arm the @n entries at @e (sorted, one file) where their consumers want
 * them (@arm), or disarm them where no consumer does, in every process
 * that maps the file there, each process once.
 */
static int batch_apply(struct batch_entry *e, unsigned int n, bool arm)
{
	struct mm_struct *few[FEW_TARGETS], **t;
	int nr, i, ret, err = 0;

	percpu_down_write(&uprobe_dup_mmap_sem);
	t = uprobe_collect_mms(e[0].s->inode, entry_pgoff(e),
			       entry_pgoff(e + n - 1), &nr, few);
	if (IS_ERR(t)) {
		percpu_up_write(&uprobe_dup_mmap_sem);
		if (!arm)
			mark_kept(e, n);
		return PTR_ERR(t);
	}
	/* A process with several mappings of the file is listed for each. */
	sort(t, nr, sizeof(*t), mm_cmp, NULL);
	for (i = 0; i < nr; i++) {
		if (!(i && t[i] == t[i - 1]) && !(arm && err) &&
		    (arm || test_bit(MMF_HAS_UPROBES, &t[i]->flags))) {
			ret = batch_mm(e, n, t[i], arm);
			err = err ?: ret;
		}
		mmput(t[i]);
	}
	if (t != few)
		kvfree(t);
	percpu_up_write(&uprobe_dup_mmap_sem);
	return err;
}

static void add_consumers(struct batch_entry *e, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		mutex_lock(&e[i].s->reg_lock);
		uprobe_consumer_add(e[i].s, e[i].uc);
		mutex_unlock(&e[i].s->reg_lock);
	}
}

/*
 * Take each entry's consumer off its site; an entry whose consumer was
 * not there (a caller's bug) is dropped.  Return: the entries left.
 */
static unsigned int del_consumers(struct batch_entry *e, unsigned int n)
{
	unsigned int i, left = 0;
	bool found;

	for (i = 0; i < n; i++) {
		mutex_lock(&e[i].s->reg_lock);
		found = uprobe_is_consumer(e[i].s, e[i].uc);
		if (found)
			list_del_rcu(&e[i].uc->cons_node);
		mutex_unlock(&e[i].s->reg_lock);
		if (!WARN_ON_ONCE(!found))
			e[left++] = e[i];
	}
	return left;
}

/*
 * Disarm the @n entries at @e (sorted), whose consumers are gone, where
 * no consumer wants them any more, and drop the consumers' references.
 * A site whose int3 may be left somewhere keeps a reference for good, so
 * that a hit there still finds it (see disarm_or_keep()).
 */
static void disarm_and_put(struct batch_entry *e, unsigned int n)
{
	unsigned int i, j, kept = 0;
	int ret, err = 0;

	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && e[j].s->inode == e[i].s->inode; j++)
			;
		ret = batch_apply(e + i, j - i, false);
		err = err ?: ret;
	}
	for (i = 0; i < n; i++) {
		if (e[i].kept && !(i && e[i - 1].s == e[i].s)) {
			get_site(e[i].s);
			kept++;
		}
		uprobe_site_put(e[i].s);
	}
	if (kept)
		pr_warn("%u probes: breakpoint not removed everywhere (%d); keeping their sites\n",
			kept, err);
}

/**
 * uprobe_register_batch() - probe many instructions of a file at once
 * @inode: the file
 * @cnt: how many probes
 * @get: fills in probe i (0 <= i < @cnt) for us: offset, USDT semaphore
 *	offset, consumer and where to store the handle
 * @ctx: passed to @get
 *
 * The same as uprobe_register() for each probe, all or nothing, with each
 * process that maps the file visited once.  May sleep; from a handler of
 * another probe, the consumers must live until uprobe_unregister_sync() on
 * failure, as for uprobe_register().
 *
 * Return: 0 with every handle stored, or the first error of
 * uprobe_register()'s, with none of the probes left registered.
 */
int uprobe_register_batch(struct inode *inode, unsigned int cnt,
			  uprobe_batch_fn get, void *ctx)
{
	struct uprobe_text_cursor cur = {};
	struct uprobe_batch_probe p;
	struct batch_entry *e;
	unsigned int i, n = 0;
	int ret = 0;

	might_sleep();
	if (!cnt)
		return 0;
	e = kvcalloc(cnt, sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	for (i = 0; i < cnt && !ret; i++) {
		struct uprobe_site *s;

		get(ctx, i, &p);
		ret = uprobe_check_probe(inode, p.offset, p.ref_ctr_offset,
					 p.uc);
		if (ret)
			break;
		s = uprobe_site_get_or_create(inode, p.offset,
					      p.ref_ctr_offset, &cur);
		if (IS_ERR(s)) {
			ret = PTR_ERR(s);
			break;
		}
		e[n++] = (struct batch_entry){ .s = s, .uc = p.uc,
					       .handle = p.handle };
		cond_resched();
	}
	uprobe_text_cursor_done(&cur);
	if (ret) {
		for (i = 0; i < n; i++)
			uprobe_site_put(e[i].s);
		goto out;
	}

	sort_entries(e, n);
	add_consumers(e, n);
	ret = batch_apply(e, n, true);
	if (ret) {
		n = del_consumers(e, n);
		disarm_and_put(e, n);
		/* A hit may be running a handler; the caller frees them. */
		if (!in_uprobe_handler())
			uprobe_sync_consumers();
		goto out;
	}
	for (i = 0; i < n; i++)
		*e[i].handle = &e[i].s->handle;
out:
	kvfree(e);
	return ret;
}
EXPORT_SYMBOL_GPL(uprobe_register_batch);

/**
 * uprobe_unregister_batch() - remove many consumers at once
 * @cnt: how many
 * @get: fills in consumer i (0 <= i < @cnt) and where its handle is, as
 *	for uprobe_register_batch() (the offsets are not used)
 * @ctx: passed to @get
 *
 * The same as uprobe_unregister_nosync() for each: the handlers may still
 * be running until uprobe_unregister_sync() returns.
 */
void uprobe_unregister_batch(unsigned int cnt, uprobe_batch_fn get, void *ctx)
{
	struct uprobe_batch_probe p;
	struct batch_entry *e;
	unsigned int i, n = 0;

	if (!cnt)
		return;
	e = kvcalloc(cnt, sizeof(*e), GFP_KERNEL);
	for (i = 0; i < cnt; i++) {
		get(ctx, i, &p);
		if (WARN_ON_ONCE(IS_ERR_OR_NULL(*p.handle)))
			continue;
		if (!e) {
			/* One by one, then: slower, but it cannot fail. */
			uprobe_unregister_nosync(*p.handle, p.uc);
			continue;
		}
		e[n++] = (struct batch_entry){ .s = (*p.handle)->site,
					       .uc = p.uc };
	}
	if (!e)
		return;
	sort_entries(e, n);
	n = del_consumers(e, n);
	disarm_and_put(e, n);
	kvfree(e);
}
EXPORT_SYMBOL_GPL(uprobe_unregister_batch);
