/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_PT_BLOCKS_H
#define __AUXSAMPLE_PT_BLOCKS_H

/*
 * The Intel PT walker's basic blocks (pt-blocks.c): from an address to
 * the first branch, as libipt's block decoder ends its blocks with
 * end_on_call and end_on_jump, built from the code bytes once and kept.
 */
#include <stdbool.h>
#include <stdint.h>

struct auxsample_decoder;
struct ptw_extent;
struct ptw_memo;

struct ptw_block {
	uint64_t	start;
	uint64_t	end;		/* the branch's address */
	uint64_t	target;		/* direct jumps, calls and Jcc */
	uint32_t	ninsn;		/* the branch included */
	uint8_t		cls;		/* enum x86_branch_class */
	uint8_t		length;		/* of the branch */
	uint8_t		valid;
};

/*
 * A decoder's own blocks, a power of two: from PTW_BLOCKS_MIN (32 KiB),
 * doubled at the start of a decode while blocks keep taking each other's
 * slots, up to PTW_BLOCKS (256 KiB); the image's shared cache holds four
 * times as many.  A stream has a decoder of its own: most programs'
 * code in use fits the smallest, and the pages of a larger one are all
 * touched by code spread wider than its span (the index is the address's
 * low bits).
 */
#define PTW_BLOCKS_MIN		1024
#define PTW_BLOCKS		8192

/*
 * An image's blocks, shared by all the walkers that decode it, in every
 * thread (pt-blocks.c): a block is decoded from the code once per image.
 */
struct ptw_block_cache;

/*
 * Code read a chunk at a time: a call of read_memory goes through the
 * program's maps (perf's thread__find_map()), and one an instruction was
 * most of ptw_blocks__count_to()'s cost (its async FUP, once a sample).
 * The chunk read last is kept with the blocks, and forgotten with them
 * when the code may have changed: a stream's samples interrupt code near
 * the last one's (dense bench file: reads were 3.9% of decoding).
 */
#define PTW_CODE_CHUNK		256

struct ptw_code {
	uint8_t		raw[PTW_CODE_CHUNK];
	uint64_t	base;		/* the address of raw[0] */
	int		have;		/* bytes read there, 0 before the first read */
};

/*
 * A decoder's own blocks: a direct-mapped front of the image's shared
 * cache (@shared, if any), read without locks by the walk.
 */
struct ptw_blocks {
	struct ptw_block	*slots;
	uint64_t		mask;		/* the slots less one */
	struct ptw_block_cache	*shared;
	/* The family's blocks of files' code, and the image's extents (pt-files.h) */
	struct ptw_block_cache	*files;
	struct ptw_extent	*extents;
	unsigned int		nr_extents;
	/*
	 * @shared's generation when the extents were taken: where it moved
	 * during a decode, code may have changed that the extents still
	 * give to the family, and no block goes there (the decode may still
	 * take the family's, the old code, until the next takes the extents
	 * again: decodes under way keep the code they started with).
	 */
	unsigned int		shared_seen;
	struct ptw_memo		*memo;		/* pt-walk-memo.h's, allocated when first used */
	unsigned int		memo_shift;	/* its walks: 1 << memo_shift */
	uint64_t		memo_evicted;	/* walks pushed out since it last grew, decaying */
	/* since the walker last took them for its stats */
	uint64_t		built;
	uint64_t		evicted;
	/*
	 * Blocks that took a slot another held, since the slots last grew,
	 * halved every PTW_BLOCKS_DECAY decodes: the slots grow where many
	 * blocks of a decode take each other's, not where a long run's few
	 * add up.
	 */
	uint64_t		conflicts;
	unsigned int		decodes;
	struct ptw_code		code;		/* read last, for blocks built and counted */
};

#define PTW_BLOCKS_DECAY	64

struct ptw_blocks *ptw_blocks__new(void);
void ptw_blocks__delete(struct ptw_blocks *blocks);
/* Forget every block: the code may have changed. */
void ptw_blocks__clear(struct ptw_blocks *blocks);
/*
 * Between decodes, where no walk holds a slot: twice the slots where as
 * many blocks as there are slots took one another held.  Without memory
 * it stays as it is.
 */
void ptw_blocks__grow(struct ptw_blocks *blocks);
/*
 * The family's blocks of files' code (a reference) and the image's
 * extents (a copy of @nr), in place of those before: 0, or -1 without
 * memory, and then none (every block the image's own).
 */
int ptw_blocks__set_files(struct ptw_blocks *blocks, struct ptw_block_cache *files,
			  const struct ptw_extent *extents, unsigned int nr);
/*
 * The block at @ip into @b, a slot of @blocks: from the family's cache
 * where a file holds it, else the image's, or built from the code there.
 * 0, or -1 where the code cannot be read or decoded.
 */
int ptw_blocks__fill(struct ptw_blocks *blocks, struct ptw_block *b,
		     struct auxsample_decoder *dec, uint64_t ip);

/*
 * An image's shared cache holds at most PTW_CACHE_SETS * PTW_CACHE_WAYS
 * blocks (32 bytes each: 1.1 MiB an image with the sets' counters); a
 * full set evicts its oldest block, counted in the stats of the decode
 * that evicted it (pt_blocks_evicted).  It starts with PTW_CACHE_SETS_MIN
 * sets (34 KiB) and doubles them each time it has evicted as many blocks
 * as it has sets: a process has one (its image), and any program's code
 * spread over more than the sets' span touches every page of them.  The
 * blocks of files' code are a family of images' (pt-files.h), the code
 * of every process of a recording: four times as many at most (4.3 MiB).
 */
#define PTW_CACHE_SETS_MIN	256		/* a power of two, at least the locks */
#define PTW_CACHE_SETS		8192		/* a power of two */
#define PTW_FILES_CACHE_SETS	(4 * PTW_CACHE_SETS)
#define PTW_CACHE_WAYS		4
#define PTW_CACHE_LOCKS		256		/* a power of two */

/* A cache of at most @max_sets sets (a power of two, at least PTW_CACHE_SETS_MIN). */
struct ptw_block_cache *ptw_block_cache__new(unsigned int max_sets);
struct ptw_block_cache *ptw_block_cache__get(struct ptw_block_cache *cache);
void ptw_block_cache__put(struct ptw_block_cache *cache);
/* Bumped whenever blocks are dropped: decoders forget their own copies. */
unsigned int ptw_block_cache__generation(struct ptw_block_cache *cache);
/* The block at @ip into *@b: whether there is one. */
bool ptw_block_cache__lookup(struct ptw_block_cache *cache, uint64_t ip, struct ptw_block *b);
/*
 * @b, built from the code as it was at @generation, into the cache
 * (unless blocks were dropped since): whether another block was evicted.
 */
bool ptw_block_cache__insert(struct ptw_block_cache *cache, const struct ptw_block *b,
			     unsigned int generation);
/* The code at [@vaddr, @vaddr + @size) changed: its blocks are dropped. */
void ptw_block_cache__invalidate(struct ptw_block_cache *cache, uint64_t vaddr, uint64_t size);
/* The blocks held, and how many it can hold now (for tests). */
unsigned int ptw_block_cache__count(struct ptw_block_cache *cache);
unsigned int ptw_block_cache__capacity(struct ptw_block_cache *cache);

/*
 * Direct-mapped by the address's low bits, as a CPU's caches are: code
 * near in address never shares a slot.  Each block's slot is on the
 * chain a walk waits on (its IP, its slot, its target, the next IP):
 * hashing the higher bits in too made the sparse bench file's decode 2%
 * slower, for no fewer misses there or on bench/pt-decode's programs.
 */
static inline uint64_t ptw_blocks__index(uint64_t mask, uint64_t ip)
{
	return ip & mask;
}

static inline struct ptw_block *ptw_blocks__slot(struct ptw_blocks *blocks, uint64_t ip)
{
	return &blocks->slots[ptw_blocks__index(blocks->mask, ip)];
}

/* The block at @ip, NULL where the code cannot be read or decoded here. */
static inline const struct ptw_block *ptw_blocks__get(struct ptw_blocks *blocks,
						      struct auxsample_decoder *dec,
						      uint64_t ip)
{
	struct ptw_block *b = ptw_blocks__slot(blocks, ip);

	if (b->valid) {
		if (b->start == ip)
			return b;
		blocks->conflicts++;
		b->valid = 0;
	}
	return ptw_blocks__fill(blocks, b, dec, ip) ? NULL : b;
}
/*
 * The instructions of @b before @ip, an instruction of it, the last of
 * them at *@last (kept if none), its code read through @blocks: -1 when
 * @ip is none of its instructions' addresses.
 */
int ptw_blocks__count_to(struct ptw_blocks *blocks, struct auxsample_decoder *dec,
			 const struct ptw_block *b, uint64_t ip, uint64_t *last);

#endif /* __AUXSAMPLE_PT_BLOCKS_H */
