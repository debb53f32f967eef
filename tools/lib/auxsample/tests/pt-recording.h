/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The real Intel PT recordings of ../shared/data/pt (pt-recording.c).
 */
#ifndef __AUXSAMPLE_TESTS_PT_RECORDING_H
#define __AUXSAMPLE_TESTS_PT_RECORDING_H

#include <stddef.h>
#include <stdint.h>
#include <auxsample/auxsample.h>

/* Under data_dir() */
#define DRPT	"pt/dynamorio-drpt2trace"

struct segment {
	uint64_t	vaddr;
	uint64_t	size;
	uint64_t	offset;		/* in the ELF file */
	const uint8_t	*data;
};

struct elf_program {
	uint8_t		*elf;
	size_t		elf_size;
	struct segment	segs[16];
	unsigned int	nr_segs;
};

/* The PT_LOAD segments of the static ELF @name under data_dir(), as the loader maps them. */
int elf_program__load(struct elf_program *p, const char *name);
/* An auxsample_read_memory_fn: the segments of @context, a struct elf_program. */
int elf_program__read(uint8_t *buf, size_t size, uint64_t addr, void *context);
/* The configuration of a decoder of the recordings' trace, reading @p's code. */
struct auxsample_config recording__config(struct elf_program *p);
/* A decoder of that configuration. */
struct auxsample_decoder *elf_program__decoder(struct elf_program *p);

struct recording {
	struct elf_program		prog;
	uint8_t				*pt;
	size_t				pt_size;
	struct auxsample_decoder	*dec;
};

/* DRPT/@dir's pt.bin and hello: TEST_OK, TEST_SKIP (saying why) or TEST_FAIL. */
int recording__load(struct recording *r, const char *dir);
void recording__exit(struct recording *r);

#endif /* __AUXSAMPLE_TESTS_PT_RECORDING_H */
