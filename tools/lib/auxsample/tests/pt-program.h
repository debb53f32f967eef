/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Random x86-64 programs and a small executor that writes their Intel PT
 * trace with the PT writer: what the walker's tests (test-pt-walk.c,
 * test-pt-blocks.c) and bench/pt-decode.c decode.
 */
#ifndef __AUXSAMPLE_TESTS_PT_PROGRAM_H
#define __AUXSAMPLE_TESTS_PT_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct auxsample_pt_writer;

#define CODE_BASE	0x400000ULL
#define KCODE_BASE	0xffffffff81000000ULL	/* a kernel's, see program__run() */
#define CODE_SIZE	(64 * 1024)
#define NR_FUNCS	48

enum unit_type {
	U_PLAIN = 1, U_JCC, U_JMP, U_CALL, U_ICALL, U_IJMP, U_RET, U_SYSCALL,
	U_FARRET,	/* SYSRET or IRET: the kernel's, back to the user */
};

struct unit {
	uint8_t		type;
	uint8_t		len;
	uint16_t	fn;
	uint32_t	target;		/* JCC, JMP, CALL: offset */
};

struct program {
	uint8_t		code[CODE_SIZE];
	struct unit	units[CODE_SIZE];	/* by offset of the instruction */
	uint32_t	fn_start[NR_FUNCS];
	uint32_t	fn_end[NR_FUNCS];
	uint32_t	seed;
	uint64_t	base;		/* its address: CODE_BASE, KCODE_BASE for a kernel's */
	unsigned int	cpi;		/* TSC ticks per instruction, 0: random */
	bool		kernel;		/* a kernel's code (program__generate_kernel()) */
	/* The user's: its kernel, traced too where set; an OVF every ~@ovf insns */
	struct program	*kern;
	unsigned int	ovf;
};


/* An auxsample_read_memory_fn: the program's code, @context. */
int read_program(uint8_t *buf, size_t size, uint64_t addr, void *context);
/* @prog's code in a file of its own, for an image: its name in @name (mkstemp()). */
int program__to_file(const struct program *prog, char *name);
void program__generate(struct program *p, uint32_t seed);
/*
 * A kernel at KCODE_BASE: function 0 a syscall's entry, ending in SYSRET,
 * function 1 an interrupt's, ending in IRET; no syscalls, and calls at
 * most a few deep, so that each entry returns soon.
 */
void program__generate_kernel(struct program *p, uint32_t seed);
int program__run(struct program *p, struct auxsample_pt_writer *w, unsigned int insns,
		 bool cyc, size_t *ends, uint64_t *ips, unsigned int *nr_ends,
		 unsigned int max_ends);
unsigned int program__insns(const struct program *p, uint64_t to, uint64_t from);

#endif /* __AUXSAMPLE_TESTS_PT_PROGRAM_H */
