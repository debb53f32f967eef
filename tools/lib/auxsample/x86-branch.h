/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_X86_BRANCH_H
#define __AUXSAMPLE_X86_BRANCH_H

#include <stddef.h>
#include <stdint.h>

/*
 * The class and length of an x86 instruction that may end a trace block:
 * the block decoder does not give the length, which tells a taken Jcc
 * from a not-taken one and a call's return address.
 */
enum x86_branch_class {
	X86_BR_NONE = 0,	/* not a branch */
	X86_BR_COND,		/* Jcc, LOOPcc, JrCXZ */
	X86_BR_JUMP,		/* JMP rel */
	X86_BR_IND_JUMP,	/* JMP r/m */
	X86_BR_CALL,		/* CALL rel */
	X86_BR_IND_CALL,	/* CALL r/m */
	X86_BR_RET,		/* RET, RET imm16 */
	X86_BR_FAR,		/* far CALL/JMP/RET, IRET, INT, SYSCALL ... */
};

enum x86_mode {
	X86_MODE_16 = 16,
	X86_MODE_32 = 32,
	X86_MODE_64 = 64,
};

struct x86_branch {
	enum x86_branch_class	cls;
	unsigned int		length;
};

/*
 * Decode the branch at @buf (@size bytes available).  Returns 0 and fills
 * @br for a branch, -1 if the bytes are no branch or are cut short.
 */
int x86_branch__decode(const uint8_t *buf, size_t size, enum x86_mode mode,
		       struct x86_branch *br);

/*
 * The length of the 64-bit mode instruction at @buf (@size bytes
 * available), or -1 when it is cut short or not known here.
 */
int x86_insn__length(const uint8_t *buf, size_t size, enum x86_mode mode);

#endif /* __AUXSAMPLE_X86_BRANCH_H */
