// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Optimized sites.  An instruction the architecture can overwrite with a
 * jump (x86: a 5-byte nop, as USDT and -fpatchable-function-entry emit)
 * is, on its first int3 hit in a process, turned into a jump to a stub
 * near it that enters the kernel by a system call: no trap, and nothing
 * written below the stack pointer's red zone (arch/x86/kernel/uprobes_opt.c
 * has the stub).
 *
 * The stubs of a page are all the same code; which probed address a stub
 * serves is in site[] of its page, set once and never changed while a
 * process maps the page.  So a thread still inside a stub after its site
 * went away, or was unregistered, still knows where to resume.  Stub pages
 * are mapped without VM_DONTCOPY: a forked child's text has the parent's
 * jumps, so it shares the parent's stub pages (refcounted, each at the same
 * address in both); a child of a process with nothing armed has no jump
 * and gets none (uprobe_stub_fork()).  A process's set of stub pages is found by its mm in
 * stub_sets; the mm itself has no room for it that fork would clear.
 *
 * A process may unmap a stub page, or keep it from its children with
 * MADV_DONTFORK.  Its jumps there are then made int3s again, and the
 * process gets no stubs or boosted copies any more (retired): its sites
 * stay int3 sites, and no later stub page can land where the lost one was
 * and serve some other address there.
 */
#define pr_fmt(fmt) "uprobes: " fmt

#include <linux/hashtable.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/rcupdate.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/uprobes.h>

#include "uprobes_internal.h"

static DEFINE_HASHTABLE(stub_sets, 6);
static DEFINE_SPINLOCK(stub_sets_lock);
bool uprobe_opt_enabled = true;		/* debugfs uprobes/optimize */

/*
 * The stub pages of @mm, or NULL.  The set stays while the caller holds
 * @mm's mmap_lock, runs in @mm, or is in an RCU read section: it goes only
 * with the mm (uprobe_stub_clear()).  An mm that never had a set says so
 * (see stub_set_publish()): munmap() of a process whose probes are gone,
 * or that never had one, is then not slower than without uprobes.
 */
struct stub_set *uprobe_stub_set_of(struct mm_struct *mm)
{
	struct stub_set *set;

	if (!READ_ONCE(mm->uprobes_state.stubs))
		return NULL;
	rcu_read_lock();
	hash_for_each_possible_rcu(stub_sets, set, node, (unsigned long)mm)
		if (set->mm == mm)
			break;
	rcu_read_unlock();
	return set;
}

/*
 * Make @set the stub pages of @set->mm: under its mmap_lock for writing,
 * or before the mm runs (fork).  The hint goes first: any stub, jump or
 * copy a thread of the mm can be in is made after this, so a thread that
 * looks for the set from there sees the hint set.
 */
static void stub_set_publish(struct stub_set *set)
{
	WRITE_ONCE(set->mm->uprobes_state.stubs, true);
	spin_lock(&stub_sets_lock);
	hash_add_rcu(stub_sets, &set->node, (unsigned long)set->mm);
	spin_unlock(&stub_sets_lock);
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
	set = uprobe_stub_set_of(vma->vm_mm);
	for (i = 0; set && !vmf->pgoff && i < STUB_PAGES; i++) {
		struct stub_page *sp = READ_ONCE(set->pages[i]);

		if (sp && sp->vaddr == vma->vm_start &&
		    !test_bit(i, &set->unmapped)) {
			vmf->page = sp->page;
			get_page(vmf->page);
			ret = 0;
			break;
		}
	}
	rcu_read_unlock();
	return ret;
}

static void stub_close(const struct vm_special_mapping *sm,
		       struct vm_area_struct *vma);

static const struct vm_special_mapping stub_mapping = {
	.name	= "[uprobes]",
	.fault	= stub_fault,
	.mremap	= uprobe_xol_mremap,		/* the jumps to it are relative */
	.close	= stub_close,
};

/*
 * The probed address the stub at @vaddr serves, or 0; @off is set to
 * @vaddr's offset in its stub, @blen to the length of its boosted copy (0
 * for a system call stub).  Under RCU or the mmap_lock, or in @mm.
 */
unsigned long uprobe_stub_site(struct mm_struct *mm, unsigned long vaddr,
			       unsigned int *off, unsigned int *blen)
{
	struct stub_set *set = uprobe_stub_set_of(mm);
	int i;

	for (i = 0; set && i < STUB_PAGES; i++) {
		struct stub_page *sp = READ_ONCE(set->pages[i]);
		unsigned long o;

		if (!sp)
			break;
		o = vaddr - sp->vaddr;
		if (o >= PAGE_SIZE || test_bit(i, &set->unmapped))
			continue;
		*off = o % UPROBE_STUB_BYTES;
		*blen = READ_ONCE(sp->boost_len[o / UPROBE_STUB_BYTES]);
		return READ_ONCE(sp->site[o / UPROBE_STUB_BYTES]);
	}
	return 0;
}

/*
 * Can entry @i of @sp serve @vaddr as a system call stub (@a NULL), or as
 * the boosted copy of @a (uprobe_boost_fits())?
 */
static bool stub_fits(struct stub_page *sp, int i, struct arch_uprobe *a,
		      unsigned long vaddr, bool fresh)
{
	if (!a)
		return !sp->boost_len[i];
	return uprobe_boost_fits(sp, i, a, vaddr, fresh);
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

/* The stub pages of @mm, made if it has none yet; mmap_lock held for writing. */
static struct stub_set *stub_set_get(struct mm_struct *mm)
{
	struct stub_set *set = uprobe_stub_set_of(mm);

	if (set)
		return set;
	set = kzalloc(sizeof(*set), GFP_KERNEL);
	if (!set)
		return NULL;
	set->mm = mm;
	xa_init(&set->boosts);
	xa_init(&set->no_opt);
	stub_set_publish(set);
	return set;
}

/*
 * The stub for @vaddr in @mm (@a: see stub_fits()), mapping a stub page if
 * needed; 0 when none is free within reach, or the process is retired.
 * mmap_lock held for writing: it orders the pages[] slots, which only this
 * fills (fork copies them under the same lock).
 */
unsigned long uprobe_stub_get(struct mm_struct *mm, unsigned long vaddr,
			      struct arch_uprobe *a)
{
	struct stub_set *set = stub_set_get(mm);
	struct stub_page *sp;
	int i, n;

	if (!set || set->retired)
		return 0;
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
 * cross-modifying rule kernel text follows too (text_poke_bp()): the int3
 * first, then every CPU serializes; the tail, then every CPU serializes;
 * the first byte, then every CPU serializes.  The first sync is what makes
 * the tail safe to write: a CPU may have fetched the old first byte (the
 * opcode of the jump being taken out) just before the int3 went in, and
 * could then decode the old one with bytes of the new tail.  The sync
 * interrupts every CPU, and an interrupt comes between two instructions,
 * so when it returns each CPU has either run that jump whole or not begun
 * it, and fetches the int3 from then on: while the tail changes, no CPU
 * runs past the first byte, and a thread that meets the int3 takes an
 * ordinary hit.  The second sync orders the tail before the new first
 * byte the same way.  When the int3 was there already (optimizing), the
 * first sync costs one IPI round, once per site and process.
 */
static int patch_site(struct mm_struct *mm, unsigned long vaddr,
		      const u8 *insn, int len)
{
	u8 bp = UPROBE_SWBP_INSN;
	int ret;

	ret = uprobe_access_mm(mm, vaddr, &bp, 1, true);
	arch_uprobe_text_sync();
	if (!ret)
		ret = uprobe_access_mm(mm, vaddr + 1, (void *)insn + 1, len - 1, true);
	arch_uprobe_text_sync();
	if (!ret)
		ret = uprobe_access_mm(mm, vaddr, (void *)insn, 1, true);
	arch_uprobe_text_sync();
	return ret;
}

/* Does the text at @vaddr of @mm jump to a stub that serves @vaddr? */
bool uprobe_site_optimized(struct uprobe_site *s, struct mm_struct *mm,
			   unsigned long vaddr)
{
	u8 cur[UPROBE_JMP_INSN_SIZE];
	unsigned long target;
	unsigned int off, blen;

	if (!arch_uprobe_optimizable(&s->arch) ||
	    uprobe_access_mm(mm, vaddr, cur, sizeof(cur), false))
		return false;
	target = arch_uprobe_jmp_target(cur, vaddr);
	return target && uprobe_stub_site(mm, target, &off, &blen) == vaddr &&
	       !off && !blen;
}

/* Back from the jump to the int3; mmap_lock held for writing. */
int uprobe_unoptimize_site(struct uprobe_site *s, struct mm_struct *mm,
			   unsigned long vaddr)
{
	u8 insn[UPROBE_JMP_INSN_SIZE];

	memcpy(insn, s->arch.insn, sizeof(insn));
	insn[0] = UPROBE_SWBP_INSN;
	return patch_site(mm, vaddr, insn, sizeof(insn));
}

/*
 * May @vaddr of @mm still get a jump?  Not in a retired process, nor where
 * uprobe_optimize_site() found that the mapping cannot take one.  In @mm,
 * without a lock: its set stays (see uprobe_stub_set_of()).
 */
static bool stub_may_optimize(struct mm_struct *mm, unsigned long vaddr)
{
	struct stub_set *set = uprobe_stub_set_of(mm);

	return !set || (!READ_ONCE(set->retired) &&
			!xa_load(&set->no_opt, vaddr));
}

/*
 * The first int3 hit of an optimizable site in this process: replace the
 * int3 by the jump.  Only while the int3 is there and the mapping is the
 * site's, under the mmap_lock that disarming takes too, so the jump is
 * never left behind by a disarm.  When this mapping cannot take the jump
 * (writable, its copy of the text differs, no stub within reach), that is
 * remembered for the address until the mapping changes
 * (uprobe_stub_moved()), so later hits do not take the lock again; the
 * same site in other mappings and processes is tried on its own.
 */
void uprobe_optimize_site(struct uprobe_site *s, unsigned long vaddr)
{
	struct mm_struct *mm = current->mm;
	u8 cur[UPROBE_JMP_INSN_SIZE], insn[UPROBE_JMP_INSN_SIZE];
	struct vm_area_struct *vma;
	struct stub_set *set;
	unsigned long stub = 0;

	if (!READ_ONCE(uprobe_opt_enabled) ||
	    offset_in_page(vaddr) > PAGE_SIZE - sizeof(insn) ||
	    !stub_may_optimize(mm, vaddr))
		return;
	if (mmap_write_lock_killable(mm))
		return;
	vma = vma_lookup(mm, vaddr);
	/* Gone or disarmed meanwhile: nothing to say about the mapping. */
	if (!vma_has_site(vma, s, vaddr, false) ||
	    uprobe_access_mm(mm, vaddr, cur, sizeof(cur), false) ||
	    !is_swbp_insn(&cur[0]))
		goto out;
	if (vma_has_site(vma, s, vaddr, true) &&
	    !memcmp(cur + 1, s->arch.insn + 1, sizeof(cur) - 1))
		stub = uprobe_stub_get(mm, vaddr, NULL);
	if (stub) {
		arch_uprobe_jmp_insn(insn, vaddr, stub);
		if (!patch_site(mm, vaddr, insn, sizeof(insn)))
			goto out;
	}
	set = stub_set_get(mm);
	if (set)
		xa_store(&set->no_opt, vaddr, xa_mk_value(1), GFP_KERNEL);
out:
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

	if (!uprobe_seeds_none()) {
		/* Their trap-context handlers run with interrupts off. */
		local_irq_disable();
		uprobe_seed_irq_handlers(regs, vaddr);
		local_irq_enable();
		if (instruction_pointer(regs) != vaddr)
			return;
	}
	idx = uprobe_read_lock();
	s = uprobe_site_at(vaddr, &is_bp);
	if (s && uprobe_get_utask())
		uprobe_handler_chain(s, regs, vaddr);
	uprobe_read_unlock(idx);
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
	unsigned long ip = instruction_pointer(regs);
	unsigned long vaddr = uprobe_stub_remembered(ip);
	unsigned int off, blen;

	if (!vaddr) {
		if (!current->mm)
			return false;
		/* In the mm: its stub pages stay (see uprobe_stub_set_of()). */
		vaddr = uprobe_stub_site(current->mm, ip, &off, &blen);
		if (!vaddr || off != UPROBE_STUB_SYSCALL_END || blen)
			return false;
	}
	if (!arch_uprobe_stub_return(regs, vaddr))
		return false;
	stub_hit(regs, vaddr);
	uprobe_stub_remember(ip, vaddr);
	return true;
}

/**
 * uprobe_stub_syscall_enter() - a system call the entry work would see
 * @regs: the registers at the system call
 *
 * Called first by the system call entry work (ptrace, Syscall User
 * Dispatch, seccomp, tracepoints, audit), when a thread has some.  A
 * stub's system call is no call of the program but a probe hit, which
 * stock would take by an int3 that none of those see: a PTRACE_SYSCALL
 * tracer would stop twice at every hit, and Syscall User Dispatch would
 * send SIGSYS for a call the program never made.  So the hit is carried
 * out here and the call and all the work are skipped, its exit work too
 * (uprobe_stub_syscall_exit()).  A bad stub call (its saved registers
 * unreadable) goes on as any call and gets its SIGILL.
 *
 * Return: true when the hit is done and @regs are what the thread
 * resumes with.
 */
bool uprobe_stub_syscall_enter(struct pt_regs *regs)
{
	bool hidden = arch_uprobe_stub_syscall_nr(regs) &&
		      uprobe_stub_syscall(regs);

	/* Every call with entry work sets it, so none is left over. */
	if (current->utask)
		current->utask->stub_syscall = hidden;
	return hidden;
}

/* Called first by the exit work: was the call a stub's hidden hit? */
bool uprobe_stub_syscall_exit(void)
{
	struct uprobe_task *utask = current->utask;

	if (!utask || !utask->stub_syscall)
		return false;
	utask->stub_syscall = false;
	return true;
}

/*
 * A thread stopped inside a stub, for a signal or a debugger: undo what the
 * stub did so far and put it back at the probed address, which it runs
 * again afterwards (one hit, as if it never got into the stub); from a
 * boosted copy, see uprobe_boost_rewind().  Nobody outside sees a stub's address
 * in a signal frame, a core or a ptrace stop.
 */
void uprobe_stub_rewind(struct pt_regs *regs)
{
	struct mm_struct *mm = current->mm;
	unsigned long vaddr;
	unsigned int off, blen;

	/* Not by MMF_HAS_UPROBES: the stubs outlive what is armed. */
	if (!mm || !READ_ONCE(mm->uprobes_state.stubs))
		return;
	vaddr = uprobe_stub_site(mm, instruction_pointer(regs), &off, &blen);
	if (vaddr && blen)
		uprobe_boost_rewind(regs, off, blen, vaddr);
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
bool uprobe_stub_step(struct pt_regs *regs)
{
	struct mm_struct *mm = current->mm;
	unsigned long vaddr;
	unsigned int off, blen;

	if (!mm || !READ_ONCE(mm->uprobes_state.stubs))
		return false;
	vaddr = uprobe_stub_site(mm, instruction_pointer(regs), &off, &blen);
	if (!vaddr || off || blen)
		return false;
	instruction_pointer_set(regs, vaddr + UPROBE_SWBP_INSN_SIZE);
	set_thread_flag(TIF_UPROBE);
	return true;
}

/* If @vaddr of @mm jumps to @stub, make it its site's int3 again. */
static void stub_unjump(struct mm_struct *mm, unsigned long vaddr,
			unsigned long stub)
{
	struct vm_area_struct *vma = vma_lookup(mm, vaddr);
	u8 cur[UPROBE_JMP_INSN_SIZE], want[UPROBE_JMP_INSN_SIZE];
	struct uprobe_site *s;

	if (!vma || !vma->vm_file)
		return;
	arch_uprobe_jmp_insn(want, vaddr, stub);
	if (uprobe_access_mm(mm, vaddr, cur, sizeof(cur), false) ||
	    memcmp(cur, want, sizeof(cur)))
		return;
	s = uprobe_site_find(file_inode(vma->vm_file), vma_offset(vma, vaddr));
	if (s) {
		uprobe_unoptimize_site(s, mm, vaddr);
		uprobe_site_put(s);
	}
}

/*
 * Page @i of @mm's @set is going away (@gone: munmap) or will not be in a
 * child (MADV_DONTFORK, whose child gets copies of this text): retire the
 * process, turn its jumps to the page back into int3s and, when the page
 * is gone, forget its boosted copies and stop taking addresses in it for
 * stubs.  A page the process keeps serves threads still inside it.
 *
 * mmap_lock is held, perhaps only for reading (munmap() downgrades it):
 * every other writer of the text (arming, disarming, optimizing, another
 * page's jumps) holds it for writing, or for reading on this same path
 * for other addresses (each jump leads to one stub).  A thread that ran a
 * jump to the page after munmap() took it out and before it gets here
 * faults, as on any code the process unmaps under itself.
 */
static void stub_page_lost(struct mm_struct *mm, struct stub_set *set, int i,
			   bool gone)
{
	struct stub_page *sp = set->pages[i];
	unsigned long index = 0;
	void *entry;
	int n;

	WRITE_ONCE(set->retired, true);
	for (n = 0; n < UPROBE_STUBS_PER_PAGE; n++) {
		unsigned long vaddr = READ_ONCE(sp->site[n]);

		if (vaddr && !READ_ONCE(sp->boost_len[n]))
			stub_unjump(mm, vaddr, stub_vaddr(sp, n));
	}
	if (!gone)
		return;
	xa_for_each(&set->boosts, index, entry)
		if (xa_to_value(entry) - sp->vaddr < PAGE_SIZE)
			xa_erase(&set->boosts, index);
	set_bit(i, &set->unmapped);
}

/*
 * A stub page's mapping goes: munmap(), mmap(MAP_FIXED) over it, or the
 * mm's end (nothing to do then: its set goes with it).  A mapping that a
 * failed mremap() made is not at the page's address.
 */
static void stub_close(const struct vm_special_mapping *sm,
		       struct vm_area_struct *vma)
{
	struct mm_struct *mm = vma->vm_mm;
	struct stub_set *set;
	int i;

	if (!atomic_read(&mm->mm_users))
		return;
	set = uprobe_stub_set_of(mm);
	for (i = 0; set && i < STUB_PAGES && set->pages[i]; i++)
		if (set->pages[i]->vaddr == vma->vm_start &&
		    !test_bit(i, &set->unmapped))
			stub_page_lost(mm, set, i, true);
}

/* Is stub page @sp of @mm marked MADV_DONTFORK?  mmap_lock held. */
static bool stub_page_dontcopy(struct mm_struct *mm, struct stub_page *sp)
{
	struct vm_area_struct *vma = vma_lookup(mm, sp->vaddr);

	return vma && vma_is_special_mapping(vma, &stub_mapping) &&
	       (vma->vm_flags & VM_DONTCOPY);
}

/*
 * fork: the child's text has the parent's jumps, and their stub pages;
 * @oldmm's mmap_lock held for writing, before its mappings are copied.
 */
void uprobe_stub_dup(struct mm_struct *oldmm, struct mm_struct *newmm)
{
	struct stub_set *set = uprobe_stub_set_of(oldmm), *nset;
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
	xa_init(&nset->no_opt);
	nset->unmapped = set->unmapped;
	for (i = 0; i < STUB_PAGES && set->pages[i]; i++) {
		if (!test_bit(i, &set->unmapped) &&
		    stub_page_dontcopy(oldmm, set->pages[i])) {
			/* Before the text is copied: the child gets int3s. */
			stub_page_lost(oldmm, set, i, false);
			set_bit(i, &nset->unmapped);
		}
		refcount_inc(&set->pages[i]->ref);
		nset->pages[i] = set->pages[i];
	}
	nset->retired = set->retired;
	stub_set_publish(nset);
}

/*
 * fork, before @oldmm's mappings are copied, its mmap_lock held for
 * writing.  With nothing armed in @oldmm (!@armed) no jump leads to its
 * stub pages, and the child gets neither a set (uprobe_dup_mmap()) nor
 * their mappings: they are made VM_DONTCOPY, as MADV_DONTFORK would, so
 * that fork does not copy them nor the child's exit tear them down.  The
 * first fork with something armed again takes that off (before
 * uprobe_stub_dup(), which then sees only the program's MADV_DONTFORK);
 * one the program asked for while ours was on is taken off with it, and
 * the child then has the page, which is as good.  The program cannot
 * take ours off itself: MADV_DOFORK refuses VM_IO mappings.
 */
void uprobe_stub_fork(struct mm_struct *oldmm, bool armed)
{
	struct stub_set *set = uprobe_stub_set_of(oldmm);
	int i;

	if (!set || set->hiding == !armed)
		return;
	set->hiding = !armed;
	for (i = 0; i < STUB_PAGES && set->pages[i]; i++) {
		struct vm_area_struct *vma;

		if (test_bit(i, &set->unmapped))
			continue;
		vma = vma_lookup(oldmm, set->pages[i]->vaddr);
		if (!vma || !vma_is_special_mapping(vma, &stub_mapping))
			continue;
		if (!armed && !(vma->vm_flags & VM_DONTCOPY)) {
			vm_flags_set(vma, VM_DONTCOPY);
			__set_bit(i, &set->hidden);
		} else if (armed && __test_and_clear_bit(i, &set->hidden)) {
			vm_flags_clear(vma, VM_DONTCOPY);
		}
	}
}

void uprobe_stub_clear(struct mm_struct *mm)
{
	struct stub_set *set;

	/* The mm is gone: nobody makes it a set now. */
	if (!READ_ONCE(mm->uprobes_state.stubs))
		return;
	spin_lock(&stub_sets_lock);
	set = uprobe_stub_set_of(mm);
	if (set)
		hash_del_rcu(&set->node);
	spin_unlock(&stub_sets_lock);
	if (set) {
		xa_destroy(&set->boosts);
		xa_destroy(&set->no_opt);
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
	struct uprobe_site *s = uprobe_site_find(inode, offset);
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
		    uprobe_access_mm(mm, y, cur, sizeof(cur), false) ||
		    memcmp(cur, want, sizeof(cur)) || uprobe_site_optimized(s, mm, y))
			continue;
		uprobe_unoptimize_site(s, mm, y);
	}
	uprobe_site_put(s);
}

/*
 * A mapping of @old's range [@start, @end) goes or changes: what was found
 * about it (uprobe_optimize_site()) is forgotten.  And mremap() may have
 * moved text with a jump in it: the old range is being unmapped (or, with
 * MREMAP_DONTUNMAP, left without its pages) and its jumps are now in
 * another range, still relative to where they were, so they point at no
 * stub.  Turn each back into the int3 there (the breakpoint moved with its
 * page, as an unoptimized one does), before mremap() returns the new
 * address; nobody can know that address sooner.  mmap_lock is held for
 * writing on that path (munmap() may hold it only for reading, but then
 * its pages are gone, not moved, and nothing matches).
 */
void uprobe_stub_moved(struct vm_area_struct *old, unsigned long start,
		       unsigned long end)
{
	struct mm_struct *mm = old->vm_mm;
	struct stub_set *set = uprobe_stub_set_of(mm);
	unsigned long index = start;
	void *entry;
	int i, n;

	if (!set)
		return;
	/* What the old mapping could not take, a new one there may. */
	xa_for_each_range(&set->no_opt, index, entry, start, end - 1)
		xa_erase(&set->no_opt, index);
	if (!old->vm_file || !(old->vm_flags & VM_EXEC))
		return;
	for (i = 0; i < STUB_PAGES && set->pages[i]; i++) {
		struct stub_page *sp = set->pages[i];

		for (n = 0; n < UPROBE_STUBS_PER_PAGE; n++) {
			unsigned long vaddr = READ_ONCE(sp->site[n]);

			if (vaddr >= start && vaddr < end && !sp->boost_len[n])
				stub_find_moved(mm, old, vaddr,
						stub_vaddr(sp, n));
		}
	}
}
