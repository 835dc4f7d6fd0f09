/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kps_short(x) = 2x + 10.
 *
 * x86_64: short instructions first, so that a jump at its entry (or at +1)
 * covers several instructions and a single step of the first one would
 * resume inside the jump's displacement:
 *
 *   +0 push %rbp (1)   +1 mov %rsp,%rbp (3)   +4 push %rbx (1)
 *   +5 mov %rdi,%rbx (3)   +8 lea 3(%rbx),%rax (4)   +12 add %rbx,%rax (3)
 *   +15 xor %ecx,%ecx (2)   +17 add $7,%rax (4)   +21 pop %rbx   +22 pop %rbp
 *
 * (all 4 bytes later with an endbr64 in front).
 *
 * i386, the same kind of code, the post-handler probe's +5 a mov again:
 *
 *   +0 push %ebp (1)   +1 mov %esp,%ebp (2)   +3 push %ebx (1)
 *   +4 push %esi (1)   +5 mov %eax,%ebx (2)   +7 lea 3(%ebx),%eax (3)
 *   +10 add %ebx,%eax (2)   +12 xor %ecx,%ecx (2)   +14 add $7,%eax (3)
 *   +17 pop %esi   +18 pop %ebx   +19 pop %ebp
 *
 * arm64: the instruction classes upstream's arm64 kprobes treat apart, a
 * probe on each 4 bytes, those that are simulated (PC-relative, branches)
 * between those stepped in a slot, each simulated one checked by the
 * result ("bti c" first: arm64's SYM_FUNC_START always puts one there):
 *
 *   +0 bti c (stepped)   +4 stp (stepped)   +8 mov x29, sp (stepped)
 *   +12 adr (simulated)   +16 ldr [x1] (stepped)
 *   +20 cbz, never taken (simulated)   +24 add (stepped)
 *   +28 b (simulated)   +32 mov x0, xzr (skipped)
 *   +36 ldr literal (simulated)   +40 add   +44 ldp   +48 ret (simulated)
 *
 * riscv64: compressed (2-byte) and full instructions mixed, as the compiler
 * emits them, the simulated ones (auipc, branches, jumps) among stepped ones:
 *
 *   +0 c.addi16sp   +2 c.sdsp   +4 auipc (simulated)   +8 ld (stepped)
 *   +12 beqz, never taken (simulated)   +16 c.add   +18 c.j (simulated)
 *   +20 c.li a0, 0 (skipped)   +22 c.add   +24 c.ldsp   +26 c.addi16sp
 *   +28 c.jr ra (simulated)
 *
 * powerpc64: a frame as the compiler makes one, a compare and a branch
 * not taken, a branch taken, all of them emulated by upstream's powerpc
 * kprobes (analyse_instr()); no TOC set-up, no ftrace call site:
 *
 *   +0 mflr   +4 std r0   +8 stdu r1   +12 li r4, 10   +16 cmpdi
 *   +20 beq, never taken   +24 add   +28 b   +32 li r3, 0 (skipped)
 *   +36 add   +40 addi r1   +44 ld r0   +48 mtlr   +52 blr
 *
 * 32-bit arm (ARM mode, 4 bytes each): a push that stores below sp (which
 * the detour buffer must leave room for), PC-relative and branch
 * instructions (simulated) between emulated ones:
 *
 *   +0 push {r4, lr}   +4 adr (simulated)   +8 ldr [r1]   +12 cmp
 *   +16 beq, never taken (simulated)   +20 add   +24 b (simulated)
 *   +28 mov r0, #0 (skipped)   +32 ldr literal (simulated)   +36 add
 *   +40 pop {r4, pc} (simulated)
 *
 * mips64 (4 bytes each, delay slots filled by hand): a branch never
 * taken and the returns, each with its delay slot (no probe there):
 *
 *   +0 daddu   +4 li $3, 10   +8 beqz, never taken   +12 nop (slot)
 *   +16 daddu   +20 jr $31   +24 nop (slot)   +28 jr $31 (skipped)
 *
 * s390x: 2-, 4- and 6-byte instructions, everything stepped from a slot,
 * the PC-relative ones (larl, branches) fixed up after the step, larl's
 * displacement rewritten for the slot:
 *
 *   +0 lgr (4)   +4 nopr (2)   +6 agr (4)   +10 larl (6)   +16 lg (6)
 *   +22 ltgr (4)   +26 jz, never taken (4)   +30 agr (4)   +34 j (4)
 *   +38 lghi %r2, 0 (skipped)   +42 br %r14 (2)
 */
#include <linux/linkage.h>
#ifdef CONFIG_PPC64
#include <asm/ppc_asm.h>	/* r0..r31 */
#endif

	.text
#if defined(CONFIG_X86_32)
/* regparm(3): x in %eax, the result in %eax. */
SYM_FUNC_START(kps_short)
	push	%ebp
	mov	%esp, %ebp
	push	%ebx
	push	%esi
	mov	%eax, %ebx
	lea	3(%ebx), %eax
	add	%ebx, %eax
	xor	%ecx, %ecx
	add	$7, %eax
	pop	%esi
	pop	%ebx
	pop	%ebp
	RET
SYM_FUNC_END(kps_short)
#elif defined(CONFIG_X86)
SYM_FUNC_START(kps_short)
	push	%rbp
	mov	%rsp, %rbp
	push	%rbx
	mov	%rdi, %rbx
	lea	3(%rbx), %rax
	add	%rbx, %rax
	xor	%ecx, %ecx
	add	$7, %rax
	pop	%rbx
	pop	%rbp
	RET
SYM_FUNC_END(kps_short)
#elif defined(CONFIG_ARM64)
SYM_FUNC_START(kps_short)
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	adr	x1, .Lkps_ten
	ldr	x2, [x1]
	cbz	x2, 1f			/* x2 is 10: a taken branch zeroes x0 */
	add	x0, x0, x0
	b	2f
1:	mov	x0, xzr			/* only reached by a wrong branch */
2:	ldr	x3, .Lkps_ten
	add	x0, x0, x3
	ldp	x29, x30, [sp], #16
	ret
SYM_FUNC_END(kps_short)

	.balign	8
.Lkps_ten:
	.quad	10
#elif defined(CONFIG_RISCV)
	.option	push
	.option	rvc
SYM_FUNC_START(kps_short)
	addi	sp, sp, -16
	sd	ra, 8(sp)
1:	auipc	t0, %pcrel_hi(.Lkps_ten)
	ld	t1, %pcrel_lo(1b)(t0)
	beqz	t1, 2f			/* t1 is 10: a taken branch zeroes a0 */
	add	a0, a0, a0
	j	3f
2:	li	a0, 0			/* only reached by a wrong branch */
3:	add	a0, a0, t1
	ld	ra, 8(sp)
	addi	sp, sp, 16
	ret
SYM_FUNC_END(kps_short)
	.option	pop

	.section .rodata
	.balign	8
.Lkps_ten:
	.quad	10
#elif defined(CONFIG_PPC64)
SYM_FUNC_START(kps_short)
	mflr	r0
	std	r0, 16(r1)
	stdu	r1, -32(r1)
	li	r4, 10
	cmpdi	r4, 0
	beq	1f			/* r4 is 10: a taken branch zeroes r3 */
	add	r3, r3, r3
	b	2f
1:	li	r3, 0			/* only reached by a wrong branch */
2:	add	r3, r3, r4
	addi	r1, r1, 32
	ld	r0, 16(r1)
	mtlr	r0
	blr
SYM_FUNC_END(kps_short)
#elif defined(CONFIG_ARM)
	.arm
SYM_FUNC_START(kps_short)
	push	{r4, lr}
	adr	r1, .Lkps_ten
	ldr	r2, [r1]
	cmp	r2, #0
	beq	1f			/* r2 is 10: a taken branch zeroes r0 */
	add	r0, r0, r0
	b	2f
1:	mov	r0, #0			/* only reached by a wrong branch */
2:	ldr	r3, .Lkps_ten
	add	r0, r0, r3
	pop	{r4, pc}
SYM_FUNC_END(kps_short)

	.balign	4
.Lkps_ten:
	.word	10
#elif defined(CONFIG_S390)
SYM_FUNC_START(kps_short)
	lgr	%r1, %r2
	nopr
	agr	%r2, %r1
	larl	%r3, .Lkps_ten
	lg	%r3, 0(%r3)
	ltgr	%r3, %r3		/* %r3 is 10: a taken branch zeroes %r2 */
	jz	1f
	agr	%r2, %r3
	j	2f
1:	lghi	%r2, 0			/* only reached by a wrong branch */
2:	br	%r14
SYM_FUNC_END(kps_short)

	.section .rodata
	.balign	8
.Lkps_ten:
	.quad	10
#elif defined(CONFIG_MIPS) && defined(CONFIG_64BIT)
	.set	push
	.set	noreorder
SYM_FUNC_START(kps_short)
	daddu	$2, $4, $4
	li	$3, 10
	beqz	$3, 1f			/* never taken */
	nop
	daddu	$2, $2, $3
	jr	$31
	nop
1:	jr	$31
	move	$2, $0			/* only reached by a wrong branch */
SYM_FUNC_END(kps_short)
	.set	pop
#else
#error "kps_short: no version for this architecture"
#endif
