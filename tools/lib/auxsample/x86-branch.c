// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Length and class of the x86 instructions that can end a trace block:
 * only branches, so a full instruction length decoder is not needed.
 */
#include <stdbool.h>
#include "x86-branch.h"

#define X86_MAX_INSN	15

struct x86_prefixes {
	unsigned int	count;
	bool		opsize;		/* 0x66 */
	bool		addrsize;	/* 0x67 */
	uint8_t		rep;		/* the last of 0xf2 and 0xf3, or 0 */
};

static bool x86_is_legacy_prefix(uint8_t b)
{
	switch (b) {
	case 0x26: case 0x2e: case 0x36: case 0x3e:
	case 0x64: case 0x65: case 0x66: case 0x67:
	case 0xf0: case 0xf2: case 0xf3:
		return true;
	default:
		return false;
	}
}

static unsigned int x86_prefixes__scan(const uint8_t *buf, size_t size,
				       enum x86_mode mode, struct x86_prefixes *p)
{
	unsigned int i;

	/*
	 * In 64-bit mode a REX may come anywhere among the legacy prefixes,
	 * more than once: the CPU ignores all but one right before the
	 * opcode (the caller's rex_w test), but each is a byte of the
	 * instruction, as libipt's decoder counts it.
	 */
	for (i = 0; i < size && i < X86_MAX_INSN; i++) {
		if (mode == X86_MODE_64 && (buf[i] & 0xf0) == 0x40)
			continue;
		if (!x86_is_legacy_prefix(buf[i]))
			break;
		p->opsize |= buf[i] == 0x66;
		p->addrsize |= buf[i] == 0x67;
		if (buf[i] == 0xf2 || buf[i] == 0xf3)
			p->rep = buf[i];
	}
	p->count = i;
	return i;
}

/* Size of a relative branch's displacement of operand-size width. */
static unsigned int x86_rel_size(enum x86_mode mode, const struct x86_prefixes *p)
{
	/* In 64-bit mode Intel CPUs ignore 0x66 on near branches. */
	if (mode == X86_MODE_64)
		return 4;
	if (mode == X86_MODE_32)
		return p->opsize ? 2 : 4;
	return p->opsize ? 4 : 2;
}

/* Bytes of ModRM, SIB and displacement starting at @buf, 0 if cut short. */
static unsigned int x86_modrm_size(const uint8_t *buf, size_t size,
				   enum x86_mode mode, const struct x86_prefixes *p)
{
	bool addr16 = mode == X86_MODE_16 ? !p->addrsize :
		      mode == X86_MODE_32 ? p->addrsize : false;
	unsigned int mod, rm, len = 1;

	if (!size)
		return 0;
	mod = buf[0] >> 6;
	rm = buf[0] & 7;
	if (mod == 3)
		return 1;

	if (addr16) {
		if (mod == 0 && rm == 6)
			return 3;
		return 1 + mod;		/* disp8 or disp16 */
	}

	if (rm == 4) {			/* SIB */
		if (size < 2)
			return 0;
		len++;
		if (mod == 0 && (buf[1] & 7) == 5)
			return len + 4;
	} else if (mod == 0 && rm == 5) {
		return len + 4;		/* disp32, RIP-relative in 64-bit mode */
	}
	return len + (mod == 1 ? 1 : mod == 2 ? 4 : 0);
}

static int x86_branch__set(struct x86_branch *br, enum x86_branch_class cls,
			   unsigned int length, size_t size)
{
	if (length > size || length > X86_MAX_INSN)
		return -1;
	br->cls = cls;
	br->length = length;
	return 0;
}

static int x86_branch__decode_0f(const uint8_t *buf, size_t size, unsigned int n,
				 enum x86_mode mode, const struct x86_prefixes *p,
				 struct x86_branch *br)
{
	uint8_t op;

	if (n + 1 >= size)
		return -1;
	op = buf[n + 1];
	if (op >= 0x80 && op <= 0x8f)
		return x86_branch__set(br, X86_BR_COND, n + 2 + x86_rel_size(mode, p), size);
	switch (op) {
	case 0x05:	/* SYSCALL */
	case 0x07:	/* SYSRET */
	case 0x34:	/* SYSENTER */
	case 0x35:	/* SYSEXIT */
		return x86_branch__set(br, X86_BR_FAR, n + 2, size);
	default:
		return -1;
	}
}

static int x86_branch__decode_ff(const uint8_t *buf, size_t size, unsigned int n,
				 enum x86_mode mode, const struct x86_prefixes *p,
				 struct x86_branch *br)
{
	static const enum x86_branch_class reg_class[8] = {
		[2] = X86_BR_IND_CALL, [3] = X86_BR_FAR,
		[4] = X86_BR_IND_JUMP, [5] = X86_BR_FAR,
	};
	unsigned int modrm;
	enum x86_branch_class cls;

	if (n + 1 >= size)
		return -1;
	cls = reg_class[(buf[n + 1] >> 3) & 7];
	if (cls == X86_BR_NONE)
		return -1;
	modrm = x86_modrm_size(buf + n + 1, size - n - 1, mode, p);
	if (!modrm)
		return -1;
	return x86_branch__set(br, cls, n + 1 + modrm, size);
}

int x86_branch__decode(const uint8_t *buf, size_t size, enum x86_mode mode,
		       struct x86_branch *br)
{
	struct x86_prefixes p = { 0 };
	unsigned int n = x86_prefixes__scan(buf, size, mode, &p);
	unsigned int far_ptr = p.opsize ^ (mode == X86_MODE_16) ? 4 : 6;
	uint8_t op;

	if (n >= size)
		return -1;
	op = buf[n];
	if (op >= 0x70 && op <= 0x7f)
		return x86_branch__set(br, X86_BR_COND, n + 2, size);

	switch (op) {
	case 0xe0: case 0xe1: case 0xe2: case 0xe3:	/* LOOPcc, JrCXZ */
		return x86_branch__set(br, X86_BR_COND, n + 2, size);
	case 0xeb:
		return x86_branch__set(br, X86_BR_JUMP, n + 2, size);
	case 0xe9:
		return x86_branch__set(br, X86_BR_JUMP, n + 1 + x86_rel_size(mode, &p), size);
	case 0xe8:
		return x86_branch__set(br, X86_BR_CALL, n + 1 + x86_rel_size(mode, &p), size);
	case 0xc3:
		return x86_branch__set(br, X86_BR_RET, n + 1, size);
	case 0xc2:
		return x86_branch__set(br, X86_BR_RET, n + 3, size);
	case 0xca:					/* far RET imm16 */
		return x86_branch__set(br, X86_BR_FAR, n + 3, size);
	/* RET far, INT3, INTO, IRET, INT1 */
	case 0xcb: case 0xcc: case 0xce: case 0xcf: case 0xf1:
		return x86_branch__set(br, X86_BR_FAR, n + 1, size);
	case 0xcd:					/* INT imm8 */
		return x86_branch__set(br, X86_BR_FAR, n + 2, size);
	case 0x9a: case 0xea:				/* far CALL/JMP ptr16:16/32 */
		if (mode == X86_MODE_64)
			return -1;
		return x86_branch__set(br, X86_BR_FAR, n + 1 + far_ptr, size);
	case 0x0f:
		return x86_branch__decode_0f(buf, size, n, mode, &p, br);
	case 0xff:
		return x86_branch__decode_ff(buf, size, n, mode, &p, br);
	default:
		return -1;
	}
}

/*
 * Instruction lengths, for the Intel PT walker's blocks (pt-blocks.c):
 * what follows the opcode of each one-byte and 0F opcode.  X86_BAD: not
 * decoded here (invalid in 64-bit mode, 3DNow!, ...): the walker leaves
 * that trace to libipt.  Where the CPU raises #UD, the length is libipt's
 * (UD0 and UD1 without ModRM), as the walker must decode what libipt does:
 * tests/test-x86-libipt.c holds the two to each other.
 */
enum {
	X86_NONE	= 0,
	X86_MODRM	= 1 << 0,
	X86_IMM8	= 1 << 1,
	X86_IMM16	= 1 << 2,
	X86_IMMZ	= 1 << 3,	/* 16 or 32 bits: operand size */
	X86_IMMV	= 1 << 4,	/* MOV reg, imm: 64 bits with REX.W */
	X86_MOFFS	= 1 << 5,	/* address size */
	X86_GRP3	= 1 << 6,	/* F6/F7: an immediate for /0 and /1 */
	X86_BAD		= 1 << 7,
	/* C7: an immediate for /0, a displacement for /7 (XBEGIN) */
	X86_GRP11	= 1 << 8,
};

#define M	X86_MODRM
#define I8	X86_IMM8
#define IZ	X86_IMMZ
#define BAD	X86_BAD

static const uint16_t x86_map1[256] = {
	/* 00 */ M, M, M, M, I8, IZ, BAD, BAD, M, M, M, M, I8, IZ, BAD, BAD,
	/* 10 */ M, M, M, M, I8, IZ, BAD, BAD, M, M, M, M, I8, IZ, BAD, BAD,
	/* 20 */ M, M, M, M, I8, IZ, 0, BAD, M, M, M, M, I8, IZ, 0, BAD,
	/* 30 */ M, M, M, M, I8, IZ, 0, BAD, M, M, M, M, I8, IZ, 0, BAD,
	/* 40 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 50 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 60 */ BAD, BAD, BAD, M, 0, 0, 0, 0, IZ, M | IZ, I8, M | I8, 0, 0, 0, 0,
	/* 70 */ I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8,
	/* 80 */ M | I8, M | IZ, BAD, M | I8, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 90 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, BAD, 0, 0, 0, 0, 0,
	/* a0 */ X86_MOFFS, X86_MOFFS, X86_MOFFS, X86_MOFFS, 0, 0, 0, 0,
		 I8, IZ, 0, 0, 0, 0, 0, 0,
	/* b0 */ I8, I8, I8, I8, I8, I8, I8, I8,
		 X86_IMMV, X86_IMMV, X86_IMMV, X86_IMMV, X86_IMMV, X86_IMMV, X86_IMMV, X86_IMMV,
	/* c0 */ M | I8, M | I8, X86_IMM16, 0, BAD, BAD, M | I8, M | X86_GRP11,
		 X86_IMM16 | I8, 0, X86_IMM16, 0, 0, I8, BAD, 0,
	/* d0 */ M, M, M, M, BAD, BAD, BAD, 0, M, M, M, M, M, M, M, M,
	/* e0 */ I8, I8, I8, I8, I8, I8, I8, I8, IZ, IZ, BAD, I8, 0, 0, 0, 0,
	/* f0 */ 0, 0, 0, 0, 0, 0, M | X86_GRP3, M | X86_GRP3, 0, 0, 0, 0, 0, 0, M, M,
};

static const uint16_t x86_map2[256] = {
	/* 00 */ M, M, M, M, BAD, 0, 0, 0, 0, 0, BAD, 0, BAD, M, 0, BAD,
	/* 10 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 20 */ M, M, M, M, BAD, BAD, BAD, BAD, M, M, M, M, M, M, M, M,
	/* 30 */ 0, 0, 0, 0, 0, 0, BAD, 0, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD,
	/* 40 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 50 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 60 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 70 */ M | I8, M | I8, M | I8, M | I8, M, M, M, 0, M, M, M, M, M, M, M, M,
	/* 80 */ IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ,
	/* 90 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* a0 */ 0, 0, 0, M, M | I8, M, BAD, BAD, 0, 0, 0, M, M | I8, M, M, M,
	/* b0 */ M, M, M, M, M, M, M, M, M, 0, M | I8, M, M, M, M, M,
	/* c0 */ M, M, M | I8, M, M | I8, M | I8, M | I8, M, 0, 0, 0, 0, 0, 0, 0, 0,
	/* d0 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* e0 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* f0 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, 0,
};

#undef M
#undef I8
#undef IZ
#undef BAD

/*
 * VEX and EVEX map 1 opcodes the walker decodes: those of AVX to AVX-512
 * (and the mask registers'), ModRM always but for VZEROUPPER/ALL; not 78
 * and 79, whose length libipt takes from the prefixes of 0F 78.  libipt's
 * tables give the others lengths of their own, which would not matter
 * (the CPU raises #UD) but that the walker must decode as libipt does:
 * it leaves them to libipt.
 */
static bool x86_vex_map1__known(uint8_t op)
{
	return (op >= 0x10 && op <= 0x17) || (op >= 0x28 && op <= 0x2f) ||
	       (op >= 0x41 && op <= 0x4b) || (op >= 0x50 && op <= 0x77) ||
	       (op >= 0x7a && op <= 0x7f) ||
	       (op >= 0x90 && op <= 0x93) || op == 0xae || op == 0xc2 ||
	       (op >= 0xc4 && op <= 0xc6) || (op >= 0xd0 && op <= 0xfe);
}

/* VEX and EVEX: ModRM always (but VZEROUPPER/ALL), imm8 in map 3 and a few of map 1. */
static int x86_insn__vex(const uint8_t *buf, size_t size, unsigned int n,
			 unsigned int map, struct x86_prefixes *p)
{
	uint8_t op;
	unsigned int len, modrm;

	if (n >= size)
		return -1;
	op = buf[n];
	if (map == 1 && op == 0x77)
		return n + 1;
	if (map < 1 || map > 3 || (map == 1 && !x86_vex_map1__known(op)))
		return -1;
	modrm = x86_modrm_size(buf + n + 1, size - n - 1, X86_MODE_64, p);
	if (!modrm)
		return -1;
	len = n + 1 + modrm;
	if (map == 3 || (map == 1 && ((op >= 0x70 && op <= 0x73) || op == 0xc2 ||
				      (op >= 0xc4 && op <= 0xc6))))
		len++;
	return len <= size && len <= X86_MAX_INSN ? (int)len : -1;
}

/* The displacement's size of the ModRM (and SIB) at @modrm, of @size bytes in all. */
static unsigned int x86_modrm_disp(const uint8_t *modrm, unsigned int size)
{
	bool sib = modrm[0] >> 6 != 3 && (modrm[0] & 7) == 4;

	return size - 1 - sib;
}

/*
 * What the tables cannot say of a 0F opcode: -1 where the walker leaves it
 * to libipt, else the immediate's bytes.  The ModRM is @buf[n].
 */
static int x86_insn__0f(uint8_t op, const uint8_t *buf, unsigned int n,
			const struct x86_prefixes *p)
{
	/*
	 * Far transfers for libipt: VMCALL, VMLAUNCH, VMRESUME (VMX's), UIRET,
	 * and ERETS and ERETU (0xf2 and 0xf3 before CLAC's opcode).
	 */
	if (op == 0x01 && ((buf[n] >= 0xc1 && buf[n] <= 0xc3) || buf[n] == 0xec ||
			   (buf[n] == 0xca && p->rep)))
		return -1;
	/* EXTRQ and INSERTQ (AMD) take two, VMREAD none. */
	if (op == 0x78 && (p->opsize || p->rep == 0xf2))
		return 2;
	return 0;
}

int x86_insn__length(const uint8_t *buf, size_t size, enum x86_mode mode)
{
	struct x86_prefixes p = { 0 };
	unsigned int n = x86_prefixes__scan(buf, size, mode, &p);
	bool rex_w = n && mode == X86_MODE_64 && (buf[n - 1] & 0xf8) == 0x48;
	/* REX.W makes the operands 64 bits whatever 0x66 says: immediates of 32. */
	bool opsize16 = p.opsize && !rex_w, map0f = false;
	unsigned int len, imm = 0, modrm = 0;
	uint16_t attr;
	uint8_t op;

	/* Only 64-bit code: the walker hands other modes to libipt. */
	if (mode != X86_MODE_64 || n >= size)
		return -1;
	op = buf[n++];
	if (op == 0xc5)
		return x86_insn__vex(buf, size, n + 1, 1, &p);
	if (op == 0xc4)
		return n + 1 < size ? x86_insn__vex(buf, size, n + 2, buf[n] & 0x1f, &p) : -1;
	if (op == 0x62)
		return n + 2 < size ? x86_insn__vex(buf, size, n + 3, buf[n] & 0x7, &p) : -1;
	if (op == 0x0f) {
		if (n >= size)
			return -1;
		op = buf[n++];
		if (op == 0x38 || op == 0x3a) {
			attr = X86_MODRM | (op == 0x3a ? X86_IMM8 : 0);
			n++;	/* the third opcode byte */
		} else {
			attr = x86_map2[op];
			map0f = true;
		}
	} else {
		attr = x86_map1[op];
	}
	/*
	 * A branch x86_branch__decode() refused is one cut short: its rel32
	 * would be taken here for a rel16 after 0x66, which 64-bit mode
	 * ignores on near branches.
	 */
	if ((map0f && op >= 0x80 && op <= 0x8f) || (!map0f && (op == 0xe8 || op == 0xe9)))
		return -1;
	if (attr & X86_BAD || n > size)
		return -1;
	if (map0f && op >= 0x20 && op <= 0x23) {
		/* MOV to and from control and debug registers: registers only, whatever mod says. */
		modrm = n < size;
	} else if (attr & X86_MODRM) {
		modrm = x86_modrm_size(buf + n, size - n, mode, &p);
		if (modrm && attr & X86_GRP3 && ((buf[n] >> 3) & 7) < 2)
			imm += op == 0xf6 ? 1 : opsize16 ? 2 : 4;
		if (modrm && attr & X86_GRP11 && ((buf[n] >> 3) & 7) == 0)
			imm += opsize16 ? 2 : 4;
		if (modrm && attr & X86_GRP11 && ((buf[n] >> 3) & 7) == 7 &&
		    !x86_modrm_disp(buf + n, modrm))
			imm += opsize16 ? 2 : 4;
	}
	if (attr & X86_MODRM && !modrm)
		return -1;
	if (map0f && modrm) {
		int more = x86_insn__0f(op, buf, n, &p);

		if (more < 0)
			return -1;
		imm += more;
	}
	if (attr & X86_IMM8)
		imm += 1;
	if (attr & X86_IMM16)
		imm += 2;
	if (attr & X86_IMMZ)
		imm += opsize16 ? 2 : 4;
	if (attr & X86_IMMV)
		imm += rex_w ? 8 : p.opsize ? 2 : 4;
	if (attr & X86_MOFFS)
		imm += p.addrsize ? 4 : 8;
	len = n + modrm + imm;
	return len <= size && len <= X86_MAX_INSN ? (int)len : -1;
}
