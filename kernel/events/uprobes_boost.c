// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Boosted copies.  An instruction that would be single-stepped from an XOL
 * slot runs instead from an entry of a stub page (uprobes_opt.c) near the
 * text that holds a copy of it and a jump back (arch_uprobe_boost_code()):
 * the int3 is the only trap of the hit.  The entry is made on the first
 * hit in a process, under the mmap_lock, and found on later hits without
 * a lock in the process's boosts (probed address -> entry).  A mapping
 * that goes away takes its addresses out of boosts (uprobe_boost_forget()),
 * so a new file mapped there gets a copy of its own instruction; the entry
 * itself stays its address's for good.
 */
#define pr_fmt(fmt) "uprobes: " fmt

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/uprobes.h>
#include <linux/xarray.h>

#include "uprobes_internal.h"

#define BOOST_NONE	1UL	/* no copy for this address fits here */

bool uprobe_boost_enabled = true;	/* debugfs uprobes/boost */

/*
 * Can entry @i of @sp be the boosted copy of @a at @vaddr?  A @fresh entry
 * gets the copy written; one that served before must already hold exactly
 * that code: code once written is never changed, so a thread preempted
 * inside it (perhaps after the probe went away, or in a forked child
 * sharing the page) runs what it came for.
 */
bool uprobe_boost_fits(struct stub_page *sp, int i, struct arch_uprobe *a,
		       unsigned long vaddr, bool fresh)
{
	u8 code[UPROBE_STUB_BYTES];
	void *kaddr;
	bool ok = true;

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

/* A new entry for @s at @vaddr in this process, or 0. */
static unsigned long boost_slot_new(struct uprobe_site *s, unsigned long vaddr)
{
	struct mm_struct *mm = current->mm;
	unsigned long slot = 0;
	struct stub_set *set;

	if (mmap_write_lock_killable(mm))
		return 0;
	if (vma_has_site(vma_lookup(mm, vaddr), s, vaddr, true)) {
		slot = uprobe_stub_get(mm, vaddr, &s->arch);
		set = uprobe_stub_set_of(mm);
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
bool uprobe_boost(struct uprobe_site *s, struct pt_regs *regs,
		  unsigned long vaddr)
{
	struct stub_set *set;
	unsigned long slot;
	void *entry;

	if (!READ_ONCE(uprobe_boost_enabled) ||
	    !arch_uprobe_boostable(&s->arch, regs))
		return false;
	set = uprobe_stub_set_of(current->mm);
	entry = set ? xa_load(&set->boosts, vaddr) : NULL;
	slot = entry ? xa_to_value(entry) : boost_slot_new(s, vaddr);
	if (!slot || slot == BOOST_NONE)
		return false;
	arch_uprobe_boost_enter(&current->utask->autask);
	instruction_pointer_set(regs, slot);
	return true;
}

/* A mapping of @mm went away from [@start, @end). */
void uprobe_boost_forget(struct mm_struct *mm, unsigned long start,
			 unsigned long end)
{
	struct stub_set *set = uprobe_stub_set_of(mm);
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
 * copy itself it did not, and the thread goes back to the probed address.
 * The copy may have faulted: the signal is then the program's, and running
 * the instruction again is a new execution, whose hit runs the handlers
 * again as stock's does after a fault in a stepped copy (the handler may
 * as well longjmp away and never come back).  Or the thread is on its way
 * from the hit (a signal came meanwhile): stock holds signals back until
 * the instruction ran, so when the thread hits the probe there again
 * with the same registers -- the signal handler returned -- the handlers,
 * which already ran for this execution, do not run again
 * (uprobe_boost_resumed()).
 */
void uprobe_boost_rewind(struct pt_regs *regs, unsigned int off,
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
	if (utask && !arch_uprobe_boost_trapped(&utask->autask)) {
		utask->boost_vaddr = vaddr;
		utask->boost_regs = arch_uprobe_regs_hash(regs);
	}
}

/* Is this hit the return of one uprobe_boost_rewind() sent back? */
bool uprobe_boost_again(struct uprobe_task *utask, struct pt_regs *regs,
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
bool uprobe_boost_resumed(struct pt_regs *regs, unsigned long vaddr)
{
	struct uprobe_task *utask = current->utask;

	if (likely(utask->boost_vaddr != vaddr) ||
	    !uprobe_boost_again(utask, regs, vaddr))
		return false;
	utask->boost_vaddr = 0;
	return true;
}
