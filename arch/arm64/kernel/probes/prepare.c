// SPDX-License-Identifier: GPL-2.0-only
/*
 * Setting up an arm64 probe site: is the address one a probe may go on,
 * how is its instruction carried out on a hit (decode.c), and, for an
 * instruction that runs out of line, the slot with its copies.
 */
#include <linux/extable.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/execmem.h>
#include <asm/debug-monitors.h>
#include <asm/insn.h>
#include <asm/patching.h>

#include "internal.h"

/* How far back a probe looks for the load-exclusive of a window. */
#define KP_EXCL_SCAN	32

/*
 * Is @addr between a load-exclusive and its store-exclusive?  A BRK there
 * would clear the exclusive monitor on every pass, and the store would
 * fail for ever.  The search goes back to the start of the function, at
 * most KP_EXCL_SCAN instructions: a window is a few instructions long.
 */
static bool kp_in_exclusive_window(unsigned long addr)
{
	unsigned long size, offset, n;
	u32 insn;

	if (!kallsyms_lookup_size_offset(addr, &size, &offset))
		offset = 0;	/* nothing known in front of it */
	n = min_t(unsigned long, offset / AARCH64_INSN_SIZE, KP_EXCL_SCAN);
	while (n--) {
		addr -= AARCH64_INSN_SIZE;
		if (aarch64_insn_read((void *)addr, &insn))
			return false;
		/*
		 * load_ex and store_ex also match the load-acquires and
		 * store-releases (ldar, stlr) and the LSE atomics of the same
		 * class, which open and close no window: look only at the
		 * exclusives.
		 */
		if (!aarch64_insn_is_exclusive(insn))
			continue;
		return aarch64_insn_is_load_ex(insn);
	}
	return false;
}

/* A "b" from @from to @to, or 0 when it does not reach. */
static u32 kp_b(kprobe_opcode_t *from, unsigned long to)
{
	u32 b = aarch64_insn_gen_branch_imm((unsigned long)from, to,
					    AARCH64_INSN_BRANCH_NOLINK);

	return b == AARCH64_BREAK_FAULT ? 0 : b;
}

/*
 * The branch back behind a boosted copy, or 0 when there can be none: the
 * slot is out of a branch's reach, or the instruction has an exception
 * table entry (a fault in the boosted copy would be looked up at the
 * slot's address and not found; the stepped copy is moved back to the
 * probe address before the lookup, by kprobe_fault_handler()).
 */
static u32 kp_boost_branch(struct kprobe_site *s, kprobe_opcode_t *slot)
{
	unsigned long back = (unsigned long)s->addr + AARCH64_INSN_SIZE;

	if (search_exception_tables((unsigned long)s->addr))
		return 0;
	return kp_b(slot + KPROBE_SLOT_BOOST_B, back);
}

/*
 * Fill a slot for @s: the copy and the BRK that ends a step, then, when
 * each can have one, the boosted copy and its branch back, and the copy
 * that ends in the tail (step_tail.S).  Slots are filled with BRKs, so a
 * part left out traps.  No CPU runs the slot before the site is armed,
 * which is a stop_machine() after this.
 */
static int kp_slot_prepare(struct kprobe_site *s)
{
	kprobe_opcode_t *slot = get_insn_slot();
	u32 insns[KPROBE_SLOT_INSNS];
	int i;

	if (!slot)
		return -ENOMEM;
	for (i = 0; i < KPROBE_SLOT_INSNS; i++)
		insns[i] = AARCH64_BREAK_FAULT;
	insns[KPROBE_SLOT_STEP] = s->arch.opcode;
	insns[KPROBE_SLOT_STEP_BRK] = BRK64_OPCODE_KPROBES_SS;
	insns[KPROBE_SLOT_BOOST_B] = kp_boost_branch(s, slot);
	if (insns[KPROBE_SLOT_BOOST_B])
		insns[KPROBE_SLOT_BOOST] = s->arch.opcode;
	insns[KPROBE_SLOT_TAIL_B] = kp_b(slot + KPROBE_SLOT_TAIL_B,
					 (unsigned long)kp_a64_step_tail);
	if (insns[KPROBE_SLOT_TAIL_B])
		insns[KPROBE_SLOT_TAIL] = s->arch.opcode;
	for (i = 0; i < KPROBE_SLOT_INSNS; i++)
		insns[i] = cpu_to_le32(insns[i]);
	aarch64_insn_copy(slot, insns, sizeof(insns));

	s->arch.slot = slot;
	s->arch.boost = insns[KPROBE_SLOT_BOOST_B] ? slot + KPROBE_SLOT_BOOST :
						     NULL;
	s->arch.tail = insns[KPROBE_SLOT_TAIL_B] != 0;
	return 0;
}

int arch_prepare_kprobe_site(struct kprobe_site *s)
{
	unsigned long addr = (unsigned long)s->addr;
	u32 insn;

	/* Stock arm64 says -EINVAL here too; tools look for it. */
	if (!IS_ALIGNED(addr, AARCH64_INSN_SIZE))
		return -EINVAL;
	if (aarch64_insn_read(s->addr, &insn))
		return -EFAULT;
	s->arch.opcode = insn;
	s->arch.slot = NULL;
	s->arch.boost = NULL;
	s->arch.tail = false;
	s->opt_len = 0;

	switch (a64_probe_decode(insn, &s->arch.insn)) {
	case A64P_REFUSED:
		pr_warn("kprobes: cannot probe %pS: instruction %08x is not probeable\n",
			s->addr, insn);
		return -EINVAL;
	case A64P_SIMULATED:
		s->arch.simulate = true;
		break;
	case A64P_STEPPED:
		s->arch.simulate = false;
		break;
	}
	if (kp_in_exclusive_window(addr)) {
		pr_warn("kprobes: cannot probe %pS: inside an exclusive load/store sequence\n",
			s->addr);
		return -EINVAL;
	}
	if (!s->arch.simulate) {
		int ret = kp_slot_prepare(s);

		if (ret)
			return ret;
	}
	kp_opt_prepare(s);
	return 0;
}

void arch_release_kprobe_site(struct kprobe_site *s)
{
	kp_opt_release(s);
	if (!s->arch.slot)
		return;
	/* A task may be preempted in a boosted copy: wait for it. */
	free_insn_slot(s->arch.slot, s->arch.boost != NULL);
	s->arch.slot = NULL;
}

/*
 * Slot pages from the module area's first choice, the 128 MiB window that
 * a branch from anywhere in the kernel text reaches: boosted copies branch
 * back from there.  A page that ends up out of reach (the window is full;
 * module text far away) only has no boosted copies.
 */
void *arch_kprobe_alloc_slot_page(void)
{
	return execmem_alloc(EXECMEM_MODULE_TEXT, PAGE_SIZE);
}

/* BRK throughout: anything that runs into an unused slot traps. */
void arch_kprobe_fill_slot_page(void *page)
{
	u32 *p = page;
	int i;

	for (i = 0; i < PAGE_SIZE / sizeof(*p); i++)
		p[i] = cpu_to_le32(AARCH64_BREAK_FAULT);
}
