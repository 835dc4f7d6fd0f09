/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KP_TARGET_H
#define KP_TARGET_H

int kp_target_func(int x);
int kp_target_init_func(int x);

/*
 * Hand-written, so that its instruction layout is known whatever the
 * compiler does (kp_target_asm.S): x86 [endbr64 with IBT,] 8 x nop, movabs,
 * ret; arm64 [bti c,] 4 x nop, then PC-relative, load, ALU and branch
 * instructions; riscv64 4 x nop, auipc, load, branches; powerpc64 6 x nop,
 * five instructions that make the value, blr; 32-bit arm (ARM mode) 4 x
 * nop, adr, loads, ALU and a branch.
 */
unsigned long kp_target_asm(void);
#ifdef CONFIG_S390
/* 1, or 0 when a stepped ltgr loses its condition code (kp_target_asm.S). */
unsigned long kp_target_cc(void);
#endif

#endif /* KP_TARGET_H */
