/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kps_short(x) = 2x + 10, with short instructions first, so that a jump at
 * its entry (or at +1) covers several instructions and a single step of
 * the first one would resume inside the jump's displacement:
 *
 *   +0 push %rbp (1)   +1 mov %rsp,%rbp (3)   +4 push %rbx (1)
 *   +5 mov %rdi,%rbx (3)   +8 lea 3(%rbx),%rax (4)   +12 add %rbx,%rax (3)
 *   +15 xor %ecx,%ecx (2)   +17 add $7,%rax (4)   +21 pop %rbx   +22 pop %rbp
 *
 * (all 4 bytes later with an endbr64 in front).
 */
#include <linux/linkage.h>

	.text
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
