// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The branch length decoder, on encodings checked against objdump. */
#include <string.h>
#include "tests.h"
#include "../x86-branch.h"

struct enc {
	const char		*what;
	enum x86_mode		mode;
	unsigned int		size;
	uint8_t			bytes[15];
	enum x86_branch_class	cls;
	unsigned int		length;
};

static const struct enc encodings[] = {
	{ "jne rel8",		X86_MODE_64, 2, { 0x75, 0x10 }, X86_BR_COND, 2 },
	{ "je rel32",		X86_MODE_64, 6, { 0x0f, 0x84, 1, 2, 3, 4 }, X86_BR_COND, 6 },
	{ "bnd/66 je rel32 (64-bit ignores 66)", X86_MODE_64, 7,
	  { 0x66, 0x0f, 0x84, 1, 2, 3, 4 }, X86_BR_COND, 7 },
	{ "66 je rel16 (32-bit)", X86_MODE_32, 5, { 0x66, 0x0f, 0x84, 1, 2 }, X86_BR_COND, 5 },
	{ "ds je rel8 (hint)",	X86_MODE_64, 3, { 0x3e, 0x74, 0x05 }, X86_BR_COND, 3 },
	{ "loop",		X86_MODE_64, 2, { 0xe2, 0xfe }, X86_BR_COND, 2 },
	{ "jrcxz",		X86_MODE_64, 2, { 0xe3, 0x02 }, X86_BR_COND, 2 },
	{ "jmp rel8",		X86_MODE_64, 2, { 0xeb, 0x00 }, X86_BR_JUMP, 2 },
	{ "jmp rel32",		X86_MODE_64, 5, { 0xe9, 1, 2, 3, 4 }, X86_BR_JUMP, 5 },
	{ "jmp rel16 (16-bit)",	X86_MODE_16, 3, { 0xe9, 1, 2 }, X86_BR_JUMP, 3 },
	{ "call rel32",		X86_MODE_64, 5, { 0xe8, 0, 0, 0, 0 }, X86_BR_CALL, 5 },
	{ "call *%rax",		X86_MODE_64, 2, { 0xff, 0xd0 }, X86_BR_IND_CALL, 2 },
	{ "call *0x8(%rax)",	X86_MODE_64, 3, { 0xff, 0x50, 0x08 }, X86_BR_IND_CALL, 3 },
	{ "call *0x200(%rip)",	X86_MODE_64, 6, { 0xff, 0x15, 0, 2, 0, 0 }, X86_BR_IND_CALL, 6 },
	{ "call *(%rax,%rbx,8)", X86_MODE_64, 3, { 0xff, 0x14, 0xd8 }, X86_BR_IND_CALL, 3 },
	{ "call *0x10(,%rbx,8)", X86_MODE_64, 7, { 0xff, 0x14, 0xdd, 0x10, 0, 0, 0 },
	  X86_BR_IND_CALL, 7 },
	{ "call *0x1000(%rsp)",	X86_MODE_64, 7, { 0xff, 0x94, 0x24, 0, 0x10, 0, 0 },
	  X86_BR_IND_CALL, 7 },
	{ "rex call *%r11",	X86_MODE_64, 3, { 0x41, 0xff, 0xd3 }, X86_BR_IND_CALL, 3 },
	{ "rex.w rex jmp *%r11 (the first REX ignored)", X86_MODE_64, 4,
	  { 0x48, 0x41, 0xff, 0xe3 }, X86_BR_IND_JUMP, 4 },
	{ "notrack jmp *%rax",	X86_MODE_64, 3, { 0x3e, 0xff, 0xe0 }, X86_BR_IND_JUMP, 3 },
	{ "jmp *0x8(%rax,%rcx,8)", X86_MODE_64, 4, { 0xff, 0x64, 0xc8, 0x08 },
	  X86_BR_IND_JUMP, 4 },
	{ "call *0x12(%bx) (16-bit)", X86_MODE_16, 3, { 0xff, 0x57, 0x12 }, X86_BR_IND_CALL, 3 },
	{ "call *0x1234 (16-bit disp16)", X86_MODE_16, 4, { 0xff, 0x16, 0x34, 0x12 },
	  X86_BR_IND_CALL, 4 },
	{ "ret",		X86_MODE_64, 1, { 0xc3 }, X86_BR_RET, 1 },
	{ "bnd ret",		X86_MODE_64, 2, { 0xf2, 0xc3 }, X86_BR_RET, 2 },
	{ "ret $8",		X86_MODE_64, 3, { 0xc2, 8, 0 }, X86_BR_RET, 3 },
	{ "syscall",		X86_MODE_64, 2, { 0x0f, 0x05 }, X86_BR_FAR, 2 },
	{ "int $0x80",		X86_MODE_32, 2, { 0xcd, 0x80 }, X86_BR_FAR, 2 },
	{ "iret",		X86_MODE_64, 1, { 0xcf }, X86_BR_FAR, 1 },
	{ "lcall $0x10,$0x1000 (32-bit)", X86_MODE_32, 7, { 0x9a, 0, 0x10, 0, 0, 0x10, 0 },
	  X86_BR_FAR, 7 },
	{ "ljmp *(%rax)",	X86_MODE_64, 2, { 0xff, 0x28 }, X86_BR_FAR, 2 },
};

static const struct enc not_branches[] = {
	{ "nop",		X86_MODE_64, 1, { 0x90 } },
	{ "mov %eax,%ebx",	X86_MODE_64, 2, { 0x89, 0xc3 } },
	{ "inc (%rax) (ff /0)",	X86_MODE_64, 2, { 0xff, 0x00 } },
	{ "push (%rax) (ff /6)", X86_MODE_64, 2, { 0xff, 0x30 } },
	{ "lcall ptr in 64-bit", X86_MODE_64, 7, { 0x9a, 0, 0, 0, 0, 0, 0 } },
	{ "jne cut short",	X86_MODE_64, 1, { 0x75 } },
	{ "call rel32 cut short", X86_MODE_64, 3, { 0xe8, 0, 0 } },
	{ "prefixes only",	X86_MODE_64, 3, { 0x66, 0x66, 0x66 } },
	{ "ud2 (raises #UD: not a branch to libipt)", X86_MODE_64, 2, { 0x0f, 0x0b } },
};

/*
 * A REX anywhere among the prefixes is a byte of the instruction, and only
 * one right before the opcode has effect: so the CPU and libipt's decoder
 * (pt_ild.c) take them.  objdump prints an ignored REX on a line of its
 * own; these lengths are objdump's two lines together.
 */
struct len_enc {
	const char	*what;
	unsigned int	size;
	uint8_t		bytes[15];
	int		length;		/* -1: refused */
};

/* 64-bit mode: the walker hands other modes to libipt. */
static const struct len_enc lengths[] = {
	{ "rex.wb rex sub %eax,%r8d", 4, { 0x49, 0x41, 0x29, 0xc0 }, 4 },
	{ "rex.w 66 mov $imm16,%ax (REX ignored)", 5, { 0x48, 0x66, 0xb8, 0x34, 0x12 }, 5 },
	{ "66 rex.w movabs $imm64,%rax", 11, { 0x66, 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 }, 11 },
	{ "rex.w 66 rex mov %eax,%ebx", 5, { 0x48, 0x66, 0x40, 0x89, 0xc3 }, 5 },
	{ "rex.w 66 mov $imm16,%ax cut short", 4, { 0x48, 0x66, 0xb8, 0x34 }, -1 },
	{ "66 jmp rel32 cut short (no rel16 in 64-bit mode)", 5, { 0x66, 0xe9, 1, 2, 3 }, -1 },
};

static int test_lengths(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(lengths); i++) {
		const struct len_enc *e = &lengths[i];
		int len = x86_insn__length(e->bytes, e->size, X86_MODE_64);

		if (len != e->length) {
			fprintf(stderr, "  %s: length %d, want %d\n", e->what, len, e->length);
			return TEST_FAIL;
		}
	}
	return TEST_OK;
}

static int test_branches(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(encodings); i++) {
		const struct enc *e = &encodings[i];
		struct x86_branch br;

		if (x86_branch__decode(e->bytes, e->size, e->mode, &br) ||
		    br.cls != e->cls || br.length != e->length) {
			fprintf(stderr, "  %s: class %d length %u\n", e->what, br.cls, br.length);
			return TEST_FAIL;
		}
	}
	return TEST_OK;
}

static int test_not_branches(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(not_branches); i++) {
		const struct enc *e = &not_branches[i];
		struct x86_branch br;

		if (!x86_branch__decode(e->bytes, e->size, e->mode, &br)) {
			fprintf(stderr, "  %s: taken for a branch\n", e->what);
			return TEST_FAIL;
		}
	}
	return TEST_OK;
}

const struct test tests_x86_branch[] = {
	{ "x86 branch lengths and classes", test_branches },
	{ "x86 non-branches and short input refused", test_not_branches },
	{ "x86 lengths with REX among the prefixes", test_lengths },
	{ NULL, NULL },
};
