/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_PT_WALK_MEMO_H
#define __AUXSAMPLE_PT_WALK_MEMO_H

/*
 * The skim loop's walks of a TNT packet's bits, kept (pt-walk-memo.c):
 * from the block that took the packet, with the same bits, the loop
 * walks the same blocks each time, and a skim needs only what they add
 * up to.  libxdc keeps such a cache of decoded control flow per address
 * and TNT byte; this one is a decoder's, like its blocks.
 */
#include <stdbool.h>
#include <stdint.h>
#include "backend.h"

struct ptw_blocks;
struct ptw_walk;

/* What the skim loop's pending branch does when the next block is walked. */
enum ptw_skim_pending {
	PTW_SKIM_NONE,		/* a conditional branch not taken */
	PTW_SKIM_TAKEN,		/* a taken branch, counted */
	PTW_SKIM_CALL,		/* ... and a call for the call stack */
	PTW_SKIM_RET,		/* ... and a return */
};

/* The most blocks, returns to frames of before, and calls not returned from, in a walk. */
#define PTW_MEMO_BLOCKS		32
#define PTW_MEMO_POPS		4
#define PTW_MEMO_PUSHES		4
/*
 * Walks kept: PTW_MEMO_WAYS to a set, those of a key in the same set
 * (128 KiB).  A walk with returns to frames of before holds only where
 * the return compression stack has the frames it was built with, and
 * the same bits from the same block often return to two or three
 * places (recursion): callgrind on the sparse bench file, 916M
 * instructions decoding with one way, 881M with two, 851M with four;
 * two ways and four times the sets, 881M again: sets are seldom short.
 */
#define PTW_MEMO_SHIFT		10
#define PTW_MEMO_WAYS		4
/*
 * A decoder's table starts with a quarter of that (32 KiB) and grows to
 * it where, between decodes, walks pushed out of their sets as many as
 * it holds (ptw_memo__grow(), as a decoder's blocks grow): a quarter
 * gave the sparse bench file 5% more instructions decoding, and mix's
 * streams, a table each, took half a MiB more than perf script's peak.
 */
#define PTW_MEMO_SHIFT_MIN	8
/* A multiplicative hash's: the kernel's GOLDEN_RATIO_64, 2^64 (1 - 1/phi) */
#define PTW_MEMO_HASH		0x61c8864680b583ebULL

/* A walk's two cache lines (pt-walk-memo.c: ptw_memo__table()). */
#define PTW_MEMO_ALIGN		64

/*
 * The blocks walked from @ip with the TNT bits @tnt, the first block's
 * included, up to where the bits are used up or before a block that
 * needs more than they give (a TIP, a block not built, a return to a
 * frame deeper than PTW_MEMO_POPS): conditional branches, direct jumps
 * and calls, and compressed returns.  Its returns to frames of before
 * (@expect) hold where the return compression stack has them on top;
 * the calls in it not returned from (@push) are pushed there; those it
 * returns from are left out, where the stacks have room for them
 * (@depth) and so drop nothing.  The skim loop's call stack takes a
 * branch's operation when it is resolved, at the next block: the last
 * block's is still to come (@run_pops of @expect, @run_pushes of
 * @push).
 */
struct ptw_memo {
	/* What a lookup reads, in the first of its two cache lines */
	uint64_t	ip;		/* the key: the first block, and @tnt */
	uint8_t		tnt;		/* the bits, lowest first, under a stop bit; 0: empty */
	uint8_t		pops;
	bool		unbuilt;	/* it stopped at @to: no block there yet */
	bool		ret_short;	/* ... at a return: no frame there yet */
	uint8_t		left;		/* the bits left after it */
	uint8_t		blocks;
	uint8_t		read_at;	/* the first to take a bit; PTW_MEMO_BLOCKS: none */
	uint8_t		depth;		/* the most calls outstanding in it */
	uint64_t	expect[PTW_MEMO_POPS];	/* returned to, the first on top */
	uint64_t	to;		/* the block after the last */
	uint64_t	end;		/* the last block's branch */
	/* What taking it reads besides */
	uint64_t	last_from;	/* the last taken branch resolved in it */
	uint64_t	last_to;
	uint64_t	push[PTW_MEMO_PUSHES];	/* called, not returned from */
	uint32_t	insns;
	uint8_t		taken;		/* the branches resolved in it (not the first's) */
	uint8_t		pushes;
	uint8_t		run_pops;	/* the skim loop's call stack's */
	uint8_t		run_pushes;
	uint8_t		cls;		/* the last block's branch */
	uint8_t		length;
	uint8_t		pending;	/* enum ptw_skim_pending: its resolution */
} __aligned(PTW_MEMO_ALIGN);	/* padded on i386, whose fields take 124 bytes */

/* The set of @ip and @tnt's walks, the one built last first. */
static inline struct ptw_memo *ptw_memo__set(struct ptw_memo *memo, unsigned int shift,
					     uint64_t ip, unsigned int tnt)
{
	uint64_t hash = (ip ^ tnt) * PTW_MEMO_HASH;

	return &memo[hash >> (64 - shift) & ~(PTW_MEMO_WAYS - 1ULL)];
}

/*
 * The walk of @tnt's bits from @ip, built now from @w's blocks and its
 * return compression stack, in place of @old (one that no longer holds)
 * or first in its set (of no blocks where the first is one it cannot
 * take): NULL without memory for the table.
 */
struct ptw_memo *ptw_memo__build(const struct ptw_walk *w, uint64_t ip, unsigned int tnt,
				 struct ptw_memo *old);
/* Forget them all: the code may have changed (ptw_blocks__clear()). */
void ptw_memo__clear(struct ptw_blocks *blocks);
/* Between decodes: a larger table, empty, where the walks did not fit. */
void ptw_memo__grow(struct ptw_blocks *blocks);

#endif /* __AUXSAMPLE_PT_WALK_MEMO_H */
