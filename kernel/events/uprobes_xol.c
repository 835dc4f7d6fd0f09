// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The XOL area: one page per process, mapped as "[uprobes]" on first use,
 * whose slot 0 holds the return-probe trampoline and whose other slots
 * each hold the copy of an instruction that a thread single-steps.  A
 * thread that finds every slot taken waits for one.  Also where a trap in
 * such a copy (or in a stub) is reported to be.
 */
#define pr_fmt(fmt) "uprobes: " fmt

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/uprobes.h>

#include "uprobes_internal.h"

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
int uprobe_xol_mremap(const struct vm_special_mapping *sm,
		      struct vm_area_struct *new_vma)
{
	return -EPERM;
}

static const struct vm_special_mapping xol_mapping = {
	.name	= "[uprobes]",
	.fault	= xol_fault,
	.mremap	= uprobe_xol_mremap,
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

void uprobe_xol_free(struct xol_area *area)
{
	put_page(area->page);
	kfree(area);
}

/*
 * The highest free page of the current process.  Not get_unmapped_area():
 * outside a system call it would search a 32-bit process's address space
 * from the 64-bit mmap base, above what 32-bit code can reach, whenever
 * the top page is taken (the stack is there without ASLR).
 */
static unsigned long xol_place(void)
{
	struct vm_unmapped_area_info info = {
		.flags		= VM_UNMAPPED_AREA_TOPDOWN,
		.length		= PAGE_SIZE,
		.low_limit	= max(PAGE_SIZE, mmap_min_addr),
		.high_limit	= TASK_SIZE,
	};

	return vm_unmapped_area(&info);
}

/* Map @area into the current process at @vaddr, or anywhere if 0. */
static int xol_map(struct mm_struct *mm, struct xol_area *area,
		   unsigned long vaddr)
{
	struct vm_area_struct *vma;

	if (!vaddr) {
		vaddr = xol_place();
		if (IS_ERR_VALUE(vaddr))
			return vaddr;
	} else if (find_vma_intersection(mm, vaddr, vaddr + PAGE_SIZE)) {
		return -ENOMEM;
	}
	/*
	 * The architecture's word on the address, as for mmap(MAP_FIXED):
	 * s390 grows the process's page tables there (check_asce_limit())
	 * when the page is above what they cover yet, which the top page
	 * of TASK_SIZE always is; elsewhere the address comes back as is.
	 */
	vaddr = get_unmapped_area(NULL, vaddr, PAGE_SIZE, 0, MAP_FIXED);
	if (IS_ERR_VALUE(vaddr))
		return vaddr;
	vma = _install_special_mapping(mm, vaddr, PAGE_SIZE,
				       VM_EXEC | VM_MAYEXEC | VM_DONTCOPY |
				       VM_IO, &xol_mapping);
	if (IS_ERR(vma))
		return PTR_ERR(vma);
	area->vaddr = vaddr;
	return 0;
}

/* The current process's XOL area, mapped on first use (at @vaddr if set). */
struct xol_area *uprobe_xol_area_at(unsigned long vaddr)
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
		uprobe_xol_free(area);
	return READ_ONCE(mm->uprobes_state.xol_area);
}

/* A free slot, waiting for one if every slot has a stepping thread. */
unsigned long uprobe_xol_take_slot(struct xol_area *area)
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

void uprobe_xol_put_slot(struct xol_area *area, unsigned long vaddr)
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

/*
 * Defaults for architectures with one breakpoint and nothing more to say:
 * upstream's architecture code relies on them.
 */
bool __weak is_swbp_insn(uprobe_opcode_t *insn)
{
	return *insn == UPROBE_SWBP_INSN;
}

bool __weak is_trap_insn(uprobe_opcode_t *insn)
{
	return is_swbp_insn(insn);
}

/* Upstream's architectures do not say: their list shows "step". */
bool __weak arch_uprobe_emulated(struct arch_uprobe *aup)
{
	return false;
}

/* Nothing but the step's own trap ends a step. */
bool __weak arch_uprobe_step_skipped(struct arch_uprobe *aup,
				     struct pt_regs *regs)
{
	return false;
}

/* Every process can run every site's code. */
bool __weak arch_uprobe_mm_supported(struct arch_uprobe *aup,
				     struct mm_struct *mm)
{
	return true;
}

/*
 * Without a way to tell a frame that is gone from one still live (the
 * stack pointer's direction and the return address's slot are the
 * architecture's), every pending return is taken as live.
 */
bool __weak arch_uretprobe_is_alive(struct return_instance *ret,
				    enum rp_check ctx, struct pt_regs *regs)
{
	return true;
}

/*
 * The breakpoint of a site: called once, after the analysis, with no mm;
 * an architecture whose breakpoint depends on the instruction (32-bit
 * arm's carries its condition) answers through uprobe_write_opcode().
 */
int __weak set_swbp(struct arch_uprobe *aup, struct mm_struct *mm,
		    unsigned long vaddr)
{
	return uprobe_write_opcode(aup, mm, vaddr, UPROBE_SWBP_INSN);
}

/*
 * What the site's set_swbp() wants written: the core writes it itself, in
 * the pages it arms (uprobe_arm_in_page()), so here it only notes it.
 */
int uprobe_write_opcode(struct arch_uprobe *aup, struct mm_struct *mm,
			unsigned long vaddr, uprobe_opcode_t opcode)
{
	container_of(aup, struct uprobe_site, arch)->bp = opcode;
	return 0;
}

/* A return lands on a breakpoint, which the trap hands to the core. */
void * __weak arch_uprobe_trampoline(unsigned long *psize)
{
	static uprobe_opcode_t insn = UPROBE_SWBP_INSN;

	*psize = UPROBE_SWBP_INSN_SIZE;
	return &insn;
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
	/* A thread may be in a stub after its site was disarmed. */
	if (mm && READ_ONCE(mm->uprobes_state.stubs)) {
		rcu_read_lock();
		vaddr = uprobe_stub_site(mm, instruction_pointer(regs), &off, &blen);
		rcu_read_unlock();
	}
	return vaddr ?: instruction_pointer(regs);
}
