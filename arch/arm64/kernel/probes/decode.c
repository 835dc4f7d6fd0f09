// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which A64 instructions kprobes and uprobes may put a breakpoint on, and
 * how each is carried out once its probe has fired.
 *
 * An instruction that neither reads nor writes the pc behaves the same at
 * any address, so a copy of it can run from an out-of-line slot with the
 * probed context's registers (A64P_STEPPED).  Everything that does read
 * or write the pc - branches, adr/adrp, literal loads - is simulated on
 * the saved registers instead (simulate.c), as are a few position
 * independent instructions that are cheap to simulate and common where
 * probes go (nop and bti at a function's entry, frame set-up moves).
 *
 * Refused: anything that changes the exception or PSTATE state the trap
 * works with (exception-generating instructions, eret, msr), pointer
 * authenticating branches (they cannot be simulated without the keys),
 * hints other than the ones that are safe to run anywhere, exclusive
 * loads and stores (a trap between the pair clears the monitor, so the
 * store would fail forever; the window between them is refused by the
 * kprobes side, which can see the code before the probe), the FEAT_MOPS
 * sequences (their three parts must run back to back) and literal loads
 * into SIMD registers.
 */
#include <linux/bits.h>
#include <linux/kernel.h>
#include <asm/daifflags.h>
#include <asm/insn.h>
#include <asm/probes.h>
#include <asm/ptrace.h>

#define A64P_RD(insn)		((insn) & 0x1f)
#define A64P_RN(insn)		(((insn) >> 5) & 0x1f)
#define A64P_RM(insn)		(((insn) >> 16) & 0x1f)
#define A64P_SF(insn)		(((insn) >> 31) & 1)

/* ldr (literal) into a SIMD register: opc, 011, V=1, 00. */
#define A64P_SIMD_LIT_MASK	0x3F000000
#define A64P_SIMD_LIT_VAL	0x1C000000

/* addg/subg (FEAT_MTE) share add/sub immediate's opcode with bit 23 set. */
#define A64P_ADDSUB_TAG		BIT(23)

static s64 a64p_sext(u32 val, unsigned int bits)
{
	return sign_extend64(val, bits - 1);
}

/* b, bl, b.cond, cbz/cbnz, tbz/tbnz, br, blr, ret; false for the rest. */
static bool a64p_decode_branch(u32 insn, struct a64_probe_insn *d)
{
	if (aarch64_insn_is_b(insn) || aarch64_insn_is_bl(insn)) {
		d->op = A64P_B;
		d->link = aarch64_insn_is_bl(insn);
		d->imm = a64p_sext(insn & 0x3ffffff, 26) * 4;
	} else if (aarch64_insn_is_bcond(insn)) {
		d->op = A64P_BCOND;
		d->cond = insn & 0xf;
		d->imm = a64p_sext((insn >> 5) & 0x7ffff, 19) * 4;
	} else if (aarch64_insn_is_cbz(insn) || aarch64_insn_is_cbnz(insn)) {
		d->op = A64P_CBZ;
		d->neg = aarch64_insn_is_cbnz(insn);
		d->wide = A64P_SF(insn);
		d->rd = A64P_RD(insn);
		d->imm = a64p_sext((insn >> 5) & 0x7ffff, 19) * 4;
	} else if (aarch64_insn_is_tbz(insn) || aarch64_insn_is_tbnz(insn)) {
		d->op = A64P_TBZ;
		d->neg = aarch64_insn_is_tbnz(insn);
		d->bit = (A64P_SF(insn) << 5) | ((insn >> 19) & 0x1f);
		d->rd = A64P_RD(insn);
		d->imm = a64p_sext((insn >> 5) & 0x3fff, 14) * 4;
	} else if (aarch64_insn_is_br(insn) || aarch64_insn_is_blr(insn) ||
		   aarch64_insn_is_ret(insn)) {
		d->op = A64P_BR;
		d->link = aarch64_insn_is_blr(insn);
		d->rn = A64P_RN(insn);
	} else {
		return false;
	}
	return true;
}

/* adr/adrp and the literal loads; false for the rest. */
static bool a64p_decode_pcrel(u32 insn, struct a64_probe_insn *d)
{
	if (aarch64_insn_is_adr_adrp(insn)) {
		u32 imm = ((insn >> 3) & 0x1ffffc) | ((insn >> 29) & 3);

		d->op = A64P_ADR;
		d->page = aarch64_insn_is_adrp(insn);
		d->rd = A64P_RD(insn);
		d->imm = a64p_sext(imm, 21) << (d->page ? 12 : 0);
		return true;
	}
	if (aarch64_insn_is_prfm_lit(insn)) {
		d->op = A64P_NOP;	/* a prefetch is only a hint */
		return true;
	}
	if (aarch64_insn_is_ldr_lit(insn) || aarch64_insn_is_ldrsw_lit(insn)) {
		d->op = A64P_LDR_LIT;
		d->sign = aarch64_insn_is_ldrsw_lit(insn);
		d->wide = d->sign || (insn & BIT(30));
		d->rd = A64P_RD(insn);
		d->imm = a64p_sext((insn >> 5) & 0x7ffff, 19) * 4;
		return true;
	}
	return false;
}

/*
 * The branch, exception and system class: branches are simulated, reads
 * of PSTATE bits too (the trap changes DAIF while a copy runs); the safe
 * hints, barriers and other system register reads run as copies.
 */
static enum a64_probe_decoded a64p_decode_system(u32 insn,
						 struct a64_probe_insn *d)
{
	if (a64p_decode_branch(insn, d))
		return A64P_SIMULATED;
	if (aarch64_insn_is_branch(insn) ||	/* the authenticating ones */
	    aarch64_insn_is_exception(insn) || aarch64_insn_is_eret(insn) ||
	    aarch64_insn_is_eret_auth(insn) || aarch64_insn_is_msr_imm(insn) ||
	    aarch64_insn_is_msr_reg(insn))
		return A64P_REFUSED;
	if (aarch64_insn_is_hint(insn)) {
		if (!aarch64_insn_is_steppable_hint(insn))
			return A64P_REFUSED;
		if (insn == aarch64_insn_gen_nop() ||
		    aarch64_insn_is_bti(insn)) {
			d->op = A64P_NOP;
			return A64P_SIMULATED;
		}
		return A64P_STEPPED;	/* the pointer authentication hints */
	}
	if (aarch64_insn_is_mrs(insn)) {
		switch (aarch64_insn_extract_system_reg(insn)) {
		case AARCH64_INSN_SPCLREG_DAIF:
			d->mask = DAIF_MASK;
			break;
		case AARCH64_INSN_SPCLREG_NZCV:
			d->mask = PSR_N_BIT | PSR_Z_BIT | PSR_C_BIT | PSR_V_BIT;
			break;
		default:
			return A64P_STEPPED;
		}
		d->op = A64P_MRS_PSTATE;
		d->rd = A64P_RD(insn);
		return A64P_SIMULATED;
	}
	return A64P_STEPPED;
}

/*
 * add/sub (immediate) without flags, and mov between general registers.
 * A write to sp is left to a copy: the kernel's exception return does not
 * take sp from pt_regs.
 */
static bool a64p_decode_simple(u32 insn, struct a64_probe_insn *d)
{
	if ((aarch64_insn_is_add_imm(insn) || aarch64_insn_is_sub_imm(insn)) &&
	    !(insn & A64P_ADDSUB_TAG) && A64P_RD(insn) != 31) {
		d->op = A64P_ADDSUB_IMM;
		d->neg = aarch64_insn_is_sub_imm(insn);
		d->wide = A64P_SF(insn);
		d->rd = A64P_RD(insn);
		d->rn = A64P_RN(insn);
		d->imm = ((insn >> 10) & 0xfff) << ((insn & BIT(22)) ? 12 : 0);
		return true;
	}
	if (aarch64_insn_is_mov_reg(insn)) {
		d->op = A64P_MOV_REG;
		d->wide = A64P_SF(insn);
		d->rd = A64P_RD(insn);
		d->rn = A64P_RM(insn);
		return true;
	}
	return false;
}

/**
 * a64_probe_decode() - how a probe on @insn carries it out
 * @insn: the instruction
 * @d: filled in when the result is A64P_SIMULATED
 *
 * Return: A64P_REFUSED, A64P_SIMULATED or A64P_STEPPED.
 */
enum a64_probe_decoded a64_probe_decode(u32 insn, struct a64_probe_insn *d)
{
	memset(d, 0, sizeof(*d));
	d->op = A64P_STEP;

	if (aarch64_insn_is_class_branch_sys(insn))
		return a64p_decode_system(insn, d);
	if (a64p_decode_pcrel(insn, d))
		return A64P_SIMULATED;
	if ((insn & A64P_SIMD_LIT_MASK) == A64P_SIMD_LIT_VAL ||
	    aarch64_insn_is_exclusive(insn) || aarch64_insn_is_mops(insn))
		return A64P_REFUSED;
	if (a64p_decode_simple(insn, d))
		return A64P_SIMULATED;
	return A64P_STEPPED;
}
