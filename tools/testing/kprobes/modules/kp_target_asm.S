/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A function whose instruction boundaries the shell tests can rely on.
 *
 * x86_64:
 *   without IBT:  0..7 nop (1 byte each), 8..17 movabs, 18 ret
 *   with IBT:     0..3 endbr64, 4..11 nop, 12..21 movabs, 22 ret
 *
 *   So offsets 5, 6 and 7 are instruction boundaries inside the function
 *   (not its entry, which is 0, or 4 after an endbr64) in both builds, and
 *   offsets 14 to 17 are inside the 10-byte movabs in both builds.
 *
 * i386 (no IBT): 0..7 nop, 8..12 movl $imm32,%eax, 13 ret; offsets 5 to 7
 *   are nops again, offsets 9 to 12 inside the movl.
 *
 * arm64 (every instruction 4 bytes; arm64's SYM_FUNC_START puts a "bti c"
 * first, BTI or not):
 *   0     bti c       a hint, simulated (a nop)
 *   4..16 nop x 4     simulated
 *   20    adr         PC-relative, simulated
 *   24    ldr [x1]    a load, stepped (boosted; optimizable)
 *   28    ldr literal PC-relative, simulated
 *   32    eor, 36 orr ALU, stepped
 *   40    b           a branch, simulated (a fall-through zeroes x0)
 *   48    ret         simulated
 *
 *   So offsets 4 to 16 are nops inside the function, and any offset that
 *   is not a multiple of 4 is inside an instruction.
 *
 * riscv64 (assembled without compressed instructions: 4 bytes each):
 *   0..12 nop x 4     stepped
 *   16    auipc       PC-relative, simulated
 *   20    ld          a load, stepped
 *   24    beqz        a branch, not taken, simulated
 *   28    j           simulated (a fall-through zeroes a0)
 *   36    ret         (jalr) simulated
 *
 *   So offsets 4 to 12 are nops inside the function, and offsets 2 mod 4
 *   are inside an instruction.
 *
 * powerpc64 (4 bytes each; no TOC set-up, so the global and local entries
 * are one, and no ftrace call site):
 *   0..20 nop x 6     emulated
 *   24    lis, 28 ori, 32 sldi, 36 oris, 40 ori   the value, emulated
 *   44    blr         emulated
 *
 *   So offsets 4 to 20 are nops inside the function (up to 16 powerpc
 *   counts as the function's entry, where a kretprobe may go: 20 is the
 *   first that is not), and any offset that is not a multiple of 4 is
 *   inside an instruction.
 *
 * 32-bit arm (ARM mode, as the kernel: 4 bytes each):
 *   0..12 nop x 4     hints, emulated
 *   16    adr         PC-relative (add r1, pc, #imm), simulated
 *   20    ldr [r1]    a load, emulated (optimizable: run in the detour
 *                     buffer, it needs no single step)
 *   24    ldr literal PC-relative, simulated
 *   28    eor, 32 orr ALU, emulated
 *   36    b           a branch, simulated (a fall-through zeroes r0)
 *   44    bx lr       simulated
 *
 *   So offsets 4 to 12 are nops inside the function, and any offset that
 *   is not a multiple of 4 is inside an instruction.
 *
 * s390x (instructions of 2, 4 or 6 bytes):
 *   0..6  nopr x 4    (bcr 0,0) stepped
 *   8     lgrl        a PC-relative (relative-long) load, stepped from a
 *                     slot with its displacement rewritten
 *   14    ltgr        stepped
 *   18    jnz         a branch, taken, stepped (a fall-through zeroes %r2)
 *   22    lghi
 *   26    br %r14     stepped
 *
 *   So offsets 2 to 6 are nops inside the function, offsets 10 and 12
 *   are inside the lgrl, and every odd offset is inside an instruction.
 *
 * mips64 (4 bytes each, the assembler's reordering off):
 *   0..12 nop x 4
 *   16    lui, 20 ori, 24 dsll, 28 ori, 32 dsll   the value
 *   36    jr $31      40 ori, in its delay slot (no probe there)
 *
 * Either way it returns 0x6b705f7461726765 (on 32-bit arm, whose long has
 * 32 bits, 0x6b705f74).
 */
#include <linux/linkage.h>
#ifdef CONFIG_PPC64
#include <asm/ppc_asm.h>	/* r0..r31 */
#endif

	.text
#if defined(CONFIG_X86_32)
SYM_FUNC_START(kp_target_asm)
	nop
	nop
	nop
	nop
	nop
	nop
	nop
	nop
	movl	$0x74726765, %eax
	RET
SYM_FUNC_END(kp_target_asm)
#elif defined(CONFIG_X86)
SYM_FUNC_START(kp_target_asm)
	nop
	nop
	nop
	nop
	nop
	nop
	nop
	nop
	movabsq	$0x6b705f7461726765, %rax
	RET
SYM_FUNC_END(kp_target_asm)
#elif defined(CONFIG_ARM64)
SYM_FUNC_START(kp_target_asm)
	nop
	nop
	nop
	nop
	adr	x1, .Lkpt_word
	ldr	x0, [x1]
	ldr	x2, .Lkpt_word
	eor	x2, x2, x0		/* 0 when both loads agree */
	orr	x0, x0, x2
	b	1f
	mov	x0, xzr
1:	ret
SYM_FUNC_END(kp_target_asm)

	.balign	8
.Lkpt_word:
	.quad	0x6b705f7461726765
#elif defined(CONFIG_RISCV)
	.option	push
	.option	norvc
SYM_FUNC_START(kp_target_asm)
	nop
	nop
	nop
	nop
1:	auipc	a1, %pcrel_hi(.Lkpt_word)
	ld	a0, %pcrel_lo(1b)(a1)
	beqz	a0, 2f
	j	3f
2:	li	a0, 0
3:	ret
SYM_FUNC_END(kp_target_asm)
	.option	pop

	.section .rodata
	.balign	8
.Lkpt_word:
	.quad	0x6b705f7461726765
#elif defined(CONFIG_PPC64)
SYM_FUNC_START(kp_target_asm)
	nop
	nop
	nop
	nop
	nop
	nop
	lis	r3, 0x6b70
	ori	r3, r3, 0x5f74
	sldi	r3, r3, 32
	oris	r3, r3, 0x6172
	ori	r3, r3, 0x6765
	blr
SYM_FUNC_END(kp_target_asm)
#elif defined(CONFIG_ARM)
	.arm
SYM_FUNC_START(kp_target_asm)
	nop
	nop
	nop
	nop
	adr	r1, .Lkpt_word
	ldr	r0, [r1]
	ldr	r2, .Lkpt_word
	eor	r2, r2, r0		/* 0 when both loads agree */
	orr	r0, r0, r2
	b	1f
	mov	r0, #0
1:	bx	lr
SYM_FUNC_END(kp_target_asm)

	.balign	4
.Lkpt_word:
	.word	0x6b705f74
#elif defined(CONFIG_S390)
SYM_FUNC_START(kp_target_asm)
	nopr
	nopr
	nopr
	nopr
	lgrl	%r2, .Lkpt_word
	ltgr	%r2, %r2
	jnz	1f
	lghi	%r2, 0
1:	br	%r14
SYM_FUNC_END(kp_target_asm)

/*
 * kp_target_cc: returns 1, or 0 when the condition code that the ltgr at
 * +6 sets (2: %r2 is positive) does not reach the jnz after it.  The cr at
 * +0 leaves condition code 0 before it, so a step of the ltgr that loses
 * its condition code (QEMU 7.2's TCG under a PER instruction-fetch event)
 * shows as 0.
 *   0   cr %r0,%r0   condition code 0
 *   2   lghi %r2,1
 *   6   ltgr %r2,%r2 condition code 2: the probe goes here
 *   10  jnz          taken
 *   14  lghi %r2,0
 *   18  br %r14
 */
SYM_FUNC_START(kp_target_cc)
	cr	%r0, %r0
	lghi	%r2, 1
	ltgr	%r2, %r2
	jnz	1f
	lghi	%r2, 0
1:	br	%r14
SYM_FUNC_END(kp_target_cc)

	.section .rodata
	.balign	8
.Lkpt_word:
	.quad	0x6b705f7461726765
#elif defined(CONFIG_MIPS) && defined(CONFIG_64BIT)
	.set	push
	.set	noreorder
SYM_FUNC_START(kp_target_asm)
	nop
	nop
	nop
	nop
	lui	$2, 0x6b70
	ori	$2, $2, 0x5f74
	dsll	$2, $2, 16
	ori	$2, $2, 0x6172
	dsll	$2, $2, 16
	jr	$31
	ori	$2, $2, 0x6765		/* the delay slot */
SYM_FUNC_END(kp_target_asm)
	.set	pop
#else
#error "kp_target_asm: no version for this architecture"
#endif
