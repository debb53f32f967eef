/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A random program's trace (pt-program.h) and libipt's decodes of its
 * samples, which the walker's decodes of them must equal: what the
 * tests of the walker's blocks (test-pt-blocks.c) and of images
 * (test-pt-image.c) decode.
 */
#ifndef __AUXSAMPLE_TESTS_PT_TRACED_H
#define __AUXSAMPLE_TESTS_PT_TRACED_H

#include <stddef.h>
#include <stdint.h>
#include <auxsample/auxsample.h>

struct auxsample_pt_writer;
struct program;

/* Where another process maps the program's file, as a shared library is. */
#define MOVED_BASE	0x7f0012340000ULL

/*
 * A program's trace and the 64-deep decode of each of its samples by
 * libipt, the reference.
 */
struct traced {
	struct program			*prog;
	struct auxsample_pt_writer	*w;
	const uint8_t			*buf;
	size_t				ends[4096];
	uint64_t			ips[4096];
	unsigned int			nr_ends;
	struct auxsample_branch		(*ref)[64];
	int				*nr_ref;
};

struct auxsample_config traced__config(struct program *code, struct auxsample_image *image,
				       enum auxsample_pt_decoder which);
/* Where sample @i's snippet starts: 4 KiB before its end. */
size_t traced__start(const struct traced *t, unsigned int i);
/* The program of @seed at @base, run and traced: 0, or -1. */
int traced__init_at(struct traced *t, uint32_t seed, uint64_t base);
int traced__init(struct traced *t, uint32_t seed);
void traced__exit(struct traced *t);
/*
 * Every sample of @t, @step 1 or -1, by @dec (the walker) as libipt
 * decodes it, walked: 0, or -1.  The blocks it built, into *@built.
 */
int traced__walk(const struct traced *t, struct auxsample_decoder *dec, int step,
		 uint64_t *built);

#endif /* __AUXSAMPLE_TESTS_PT_TRACED_H */
