/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Saving and restoring a struct pt_regs on the stack from assembly that is
 * reached by a RET instead of an exception: our kretprobe trampoline and
 * rethook's (arch/x86/kernel/rethook.c) both use these.
 *
 * The caller pushes the top of the frame itself (ss, sp, flags); SAVE
 * reserves cs, ip and orig_ax for the C code to fill in, then pushes the
 * general purpose registers down to the start of the frame.  RESTORE pops
 * them back and leaves the stack pointing at pt_regs::flags.
 */
#ifndef _X86_KERNEL_KPROBES_COMMON_H
#define _X86_KERNEL_KPROBES_COMMON_H

#include <asm/asm.h>
#include <asm/frame.h>
#include <asm/insn.h>

#ifdef CONFIG_X86_64

/* A machine word, for assembly strings: the size of each pt_regs slot. */
#define KP_WORD		"8"

/* pt_regs from ->di down to ->r15, as "%r" plus these suffixes. */
#define KP_GPRS_UP	"15, 14, 13, 12, bp, bx, 11, 10, 9, 8, ax, cx, dx, si, di"
#define KP_GPRS_DOWN	"di, si, dx, cx, ax, 8, 9, 10, 11, bx, bp, 12, 13, 14, 15"

/* The registers below orig_ax, pushed down to the start of pt_regs. */
#define KP_PUSH_REGS_STRING						\
	"	.irp kp_r, " KP_GPRS_DOWN "\n"				\
	"	push %r\\kp_r\n"					\
	"	.endr\n"

#define SAVE_REGS_STRING						\
	"	sub $(3 * 8), %rsp\n"	/* cs, ip, orig_ax */		\
	KP_PUSH_REGS_STRING						\
	ENCODE_FRAME_POINTER

#define RESTORE_REGS_STRING						\
	"	.irp kp_r, " KP_GPRS_UP "\n"				\
	"	pop %r\\kp_r\n"						\
	"	.endr\n"						\
	"	add $(3 * 8), %rsp\n"

#else /* CONFIG_X86_32 */

#define KP_WORD		"4"

/* pt_regs from ->fs down to ->bx, below gs. */
#define KP_PUSH_REGS_STRING						\
	"	.irp kp_r, fs, es, ds\n"				\
	"	push %\\kp_r\n"						\
	"	.endr\n"						\
	"	.irp kp_r, ax, bp, di, si, dx, cx, bx\n"		\
	"	push %e\\kp_r\n"					\
	"	.endr\n"

/* gs stays in the reserved part. */
#define SAVE_REGS_STRING						\
	"	sub $(4 * 4), %esp\n"	/* cs, ip, orig_ax, gs */	\
	KP_PUSH_REGS_STRING						\
	ENCODE_FRAME_POINTER

/* Segment registers are not reloaded: the trampolines do not change them. */
#define RESTORE_REGS_STRING						\
	"	.irp kp_r, bx, cx, dx, si, di, bp, ax\n"		\
	"	pop %e\\kp_r\n"						\
	"	.endr\n"						\
	"	add $(7 * 4), %esp\n"

#endif /* CONFIG_X86_64 */

#endif /* _X86_KERNEL_KPROBES_COMMON_H */
