/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A function whose instruction boundaries the shell tests can rely on.
 *
 *   without IBT:  0..7 nop (1 byte each), 8..17 movabs, 18 ret
 *   with IBT:     0..3 endbr64, 4..11 nop, 12..21 movabs, 22 ret
 *
 * So offsets 5, 6 and 7 are instruction boundaries inside the function (not
 * its entry, which is 0, or 4 after an endbr64) in both builds, and offsets
 * 14 to 17 are inside the 10-byte movabs in both builds.
 */
#include <linux/linkage.h>

	.text
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
