// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * x86 side of optimized sites (kernel/events/uprobes_opt.c): the stub,
 * the jump to it, and putting a thread that stopped inside a stub back at
 * the probed nop.
 */
#include <linux/sizes.h>
#include <linux/uaccess.h>
#include <linux/unaligned.h>
#include <linux/uprobes.h>
#include <asm/text-patching.h>
#include <asm/unistd.h>

/*
 * A 5-byte nop becomes "jmp stub", and the stub (one of a page of
 * identical ones near the text) enters the kernel without a trap.  It
 * first steps over the red zone, so nothing the function keeps below its
 * stack pointer is touched, then saves what syscall clobbers:
 */
enum {
	STUB_LEA	= 0,	/* lea -128(%rsp),%rsp */
	STUB_PUSH_AX	= 5,	/* push %rax */
	STUB_PUSH_CX	= 6,	/* push %rcx */
	STUB_PUSH_R11	= 7,	/* push %r11 */
	STUB_MOV	= 9,	/* mov $__NR_uretprobe,%eax */
	STUB_SYSCALL	= 14,	/* syscall */
	STUB_UD2	= 16,	/* never reached: sys_uretprobe() moves ip */
	STUB_LEN	= 18,
};
static_assert(STUB_UD2 == UPROBE_STUB_SYSCALL_END);
static_assert(STUB_LEN <= UPROBE_STUB_BYTES);
/* A boosted copy: an instruction and the jump back. */
static_assert(MAX_UINSN_BYTES - 1 + UPROBE_JMP_INSN_SIZE <= UPROBE_STUB_BYTES);

#define STUB_RED_ZONE	128
#define STUB_SAVED	3		/* struct uprobe_x86_saved */
static_assert(sizeof(struct uprobe_x86_saved) == STUB_SAVED * sizeof(long));

static const u8 stub_code[STUB_LEN] = {
	0x48, 0x8d, 0x64, 0x24, 0x80,
	0x50,
	0x51,
	0x41, 0x53,
	0xb8, 0, 0, 0, 0,
	0x0f, 0x05,
	0x0f, 0x0b,
};

/* The stub is 64-bit code: never for a 32-bit site. */
bool arch_uprobe_optimizable(struct arch_uprobe *a)
{
	/* Asked on every hit of an int3 site: the cheapest refusal first. */
	return a->op == UPX_NOP && a->len == UPROBE_JMP_INSN_SIZE && !a->ia32;
}

void arch_uprobe_stub_write(void *kaddr)
{
	memcpy(kaddr, stub_code, STUB_LEN);
	put_unaligned_le32(__NR_uretprobe, kaddr + STUB_MOV + 1);
	/* int3 fill: a jump into the middle of nothing stops there. */
	memset(kaddr + STUB_LEN, 0xcc, UPROBE_STUB_BYTES - STUB_LEN);
}

static long jmp_rel(unsigned long vaddr, unsigned long target)
{
	return (long)(target - (vaddr + UPROBE_JMP_INSN_SIZE));
}

bool arch_uprobe_stub_reaches(unsigned long vaddr, unsigned long target)
{
	long rel = jmp_rel(vaddr, target);

	return rel == (s32)rel;
}

/* Where a stub page for @vaddr may go: well inside a rel32's reach. */
void arch_uprobe_stub_window(unsigned long vaddr, unsigned long *lo,
			     unsigned long *hi)
{
	*lo = vaddr > SZ_1G ? vaddr - SZ_1G : 0;
	*hi = vaddr + SZ_1G;
}

void arch_uprobe_jmp_insn(u8 *buf, unsigned long vaddr, unsigned long target)
{
	buf[0] = JMP32_INSN_OPCODE;
	put_unaligned_le32((s32)jmp_rel(vaddr, target), buf + 1);
}

unsigned long arch_uprobe_jmp_target(const u8 *buf, unsigned long vaddr)
{
	if (buf[0] != JMP32_INSN_OPCODE)
		return 0;
	return vaddr + UPROBE_JMP_INSN_SIZE + (s32)get_unaligned_le32(buf + 1);
}

void arch_uprobe_text_sync(void)
{
	text_poke_sync();
}

/*
 * At the stub's system call: the registers as at the probed nop, ip there.
 * Not a call to restart (see sys_uretprobe()).
 */
bool arch_uprobe_stub_return(struct pt_regs *regs, unsigned long vaddr)
{
	/* Read before use: no stack zeroing on every hit. */
	struct uprobe_x86_saved saved __uninitialized;

	if (!uprobe_x86_read_saved(regs, &saved))
		return false;
	regs->r11 = saved.r11;
	regs->cx = saved.cx;
	regs->ax = saved.ax;
	regs->sp += sizeof(saved) + STUB_RED_ZONE;
	regs->orig_ax = -1;
	regs->ip = vaddr;
	return true;
}

/* Is the system call entering with @regs the one a stub makes? */
bool arch_uprobe_stub_syscall_nr(struct pt_regs *regs)
{
	return regs->orig_ax == __NR_uretprobe;
}

/*
 * Undo the part of the stub before @off and go back to the probed address.
 * Until the mov, the pushed registers still hold their values; the mov
 * overwrote %rax, the syscall (a tracer may have skipped it) %rcx and %r11.
 */
void arch_uprobe_stub_rewind(struct pt_regs *regs, unsigned int off,
			     unsigned long vaddr)
{
	struct uprobe_x86_saved saved;

	switch (off) {
	case STUB_LEA:
		break;
	case STUB_PUSH_AX:
	case STUB_PUSH_CX:
	case STUB_PUSH_R11:
	case STUB_MOV:
		/* 0, 1, 2 or 3 words pushed, below the red zone. */
		regs->sp += STUB_RED_ZONE + sizeof(long) *
			    (off == STUB_MOV ? STUB_SAVED : off - STUB_PUSH_AX);
		break;
	case STUB_SYSCALL:
	case STUB_UD2:
		if (!uprobe_x86_read_saved(regs, &saved))
			return;
		if (off == STUB_UD2) {
			regs->r11 = saved.r11;
			regs->cx = saved.cx;
		}
		regs->ax = saved.ax;
		regs->sp += sizeof(saved) + STUB_RED_ZONE;
		break;
	default:
		return;
	}
	regs->ip = vaddr;
}
