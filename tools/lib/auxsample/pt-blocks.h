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
 * A decoder's own blocks, a power of two: 256 KiB, of which only the pages
 * the code in use maps to are touched; the image's shared cache holds
 * four times as many.
 */
#define PTW_BLOCKS		8192

/*
 * An image's blocks, shared by all the walkers that decode it, in every
 * thread (pt-blocks.c): a block is decoded from the code once per image.
 */
struct ptw_block_cache;

/*
 * A decoder's own blocks: a direct-mapped front of the image's shared
 * cache (@shared, if any), read without locks by the walk.
 */
struct ptw_blocks {
	struct ptw_block	slots[PTW_BLOCKS];
	struct ptw_block_cache	*shared;
	/* since the walker last took them for its stats */
	uint64_t		built;
	uint64_t		evicted;
};

struct ptw_blocks *ptw_blocks__new(void);
void ptw_blocks__delete(struct ptw_blocks *blocks);
/* Forget every block: the code may have changed. */
void ptw_blocks__clear(struct ptw_blocks *blocks);
/* Decode the block at @ip into @b: 0, or -1 where the code cannot be read or decoded here. */
int ptw_block__build(struct ptw_block *b, struct auxsample_decoder *dec, uint64_t ip);
/*
 * The block at @ip into @b, a slot of @blocks: from the shared cache, or
 * built and put there.  0, or -1 as ptw_block__build().
 */
int ptw_blocks__fill(struct ptw_blocks *blocks, struct ptw_block *b,
		     struct auxsample_decoder *dec, uint64_t ip);

/*
 * The shared cache holds at most PTW_CACHE_SETS * PTW_CACHE_WAYS blocks
 * (32 bytes each: 1.1 MiB an image with the sets' counters, allocated
 * when a walker first asks for it); a full set evicts its oldest block, counted in the stats of
 * the decode that evicted it (pt_blocks_evicted).
 */
#define PTW_CACHE_SETS		8192		/* a power of two */
#define PTW_CACHE_WAYS		4
#define PTW_CACHE_LOCKS		256		/* a power of two, at most the sets */

struct ptw_block_cache *ptw_block_cache__new(void);
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
/* The blocks held (for tests). */
unsigned int ptw_block_cache__count(struct ptw_block_cache *cache);

/*
 * Direct-mapped by the address's low bits, as a CPU's caches are: code
 * near in address never shares a slot.  Each block's slot is on the
 * chain a walk waits on (its IP, its slot, its target, the next IP):
 * hashing the higher bits in too made the sparse bench file's decode 2%
 * slower, for no fewer misses there or on bench/pt-decode's programs.
 */
static inline unsigned int ptw_blocks__index(uint64_t ip)
{
	return ip & (PTW_BLOCKS - 1);
}

static inline struct ptw_block *ptw_blocks__slot(struct ptw_blocks *blocks, uint64_t ip)
{
	return &blocks->slots[ptw_blocks__index(ip)];
}

/* The block at @ip, NULL where the code cannot be read or decoded here. */
static inline const struct ptw_block *ptw_blocks__get(struct ptw_blocks *blocks,
						      struct auxsample_decoder *dec,
						      uint64_t ip)
{
	struct ptw_block *b = ptw_blocks__slot(blocks, ip);

	if (b->valid && b->start == ip)
		return b;
	b->valid = 0;
	return ptw_blocks__fill(blocks, b, dec, ip) ? NULL : b;
}
/*
 * The instructions of @b before @ip, an instruction of it, the last of
 * them at *@last (kept if none): -1 when @ip is none of its instructions'
 * addresses.
 */
int ptw_blocks__count_to(struct auxsample_decoder *dec, const struct ptw_block *b,
			 uint64_t ip, uint64_t *last);

#endif /* __AUXSAMPLE_PT_BLOCKS_H */
