// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Intel PT walker's caches of basic blocks.  A decoder's own is
 * direct mapped by start address, so bounded (PTW_BLOCKS entries) and
 * without eviction lists, and read without locks; a block that loses
 * its slot is taken again from the image's shared cache, or decoded
 * again.  The shared cache (one per image, and its clones: see
 * pt-image.c) is set associative, PTW_CACHE_WAYS blocks a set, its sets
 * growing with what it evicts, with a lock for every PTW_CACHE_LOCKS-th
 * set: decoders take it only where their own cache misses, so threads
 * do not queue on it.
 * Code is read through the decoder's read_memory callback, a chunk at a
 * time, only when a block is built or an instruction counted in it.
 *
 * Blocks hold the code as it was read when they were built.  They are
 * dropped when a file is mapped over their range (the image's add) or
 * the code there is said to have changed (auxsample_image__invalidate():
 * the rule for JIT and self-modifying code, whose changes no trace
 * shows); a decode already under way keeps the blocks it started with.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "backend.h"
#include "pt-blocks.h"
#include "pt-files.h"
#include "pt-walk-memo.h"
#include "x86-branch.h"

#define PTW_BLOCK_MAX_INSNS	4096		/* longer: libipt's */
#define PTW_INSN_MAX		15

struct ptw_blocks *ptw_blocks__new(void)
{
	struct ptw_blocks *blocks = calloc(1, sizeof(*blocks));

	if (!blocks)
		return NULL;
	blocks->slots = calloc(PTW_BLOCKS_MIN, sizeof(*blocks->slots));
	if (!blocks->slots) {
		free(blocks);
		return NULL;
	}
	blocks->mask = PTW_BLOCKS_MIN - 1;
	blocks->memo_shift = PTW_MEMO_SHIFT_MIN;
	return blocks;
}

void ptw_blocks__delete(struct ptw_blocks *blocks)
{
	if (!blocks)
		return;
	ptw_block_cache__put(blocks->shared);
	ptw_block_cache__put(blocks->files);
	free(blocks->extents);
	free(blocks->memo);
	free(blocks->slots);
	free(blocks);
}

void ptw_blocks__clear(struct ptw_blocks *blocks)
{
	memset(blocks->slots, 0, (blocks->mask + 1) * sizeof(*blocks->slots));
	ptw_memo__clear(blocks);
	blocks->code.have = 0;
}

void ptw_blocks__grow(struct ptw_blocks *blocks)
{
	uint64_t nr = blocks->mask + 1, mask = 2 * nr - 1;
	struct ptw_block *slots;

	if (++blocks->decodes % PTW_BLOCKS_DECAY == 0) {
		blocks->conflicts /= 2;
		blocks->memo_evicted /= 2;
	}
	ptw_memo__grow(blocks);
	if (blocks->conflicts < nr || nr >= PTW_BLOCKS)
		return;
	slots = calloc(2 * nr, sizeof(*slots));
	if (!slots)
		return;
	/* The blocks held keep their place: each has one in the larger table. */
	for (uint64_t i = 0; i < nr; i++) {
		if (blocks->slots[i].valid)
			slots[ptw_blocks__index(mask, blocks->slots[i].start)] = blocks->slots[i];
	}
	free(blocks->slots);
	blocks->slots = slots;
	blocks->mask = mask;
	blocks->conflicts = 0;
}

/*
 * The bytes of the instruction at @at into *@raw: as many as one read of
 * PTW_INSN_MAX bytes there gives (fewer at the end of a mapping), or 0
 * or less where nothing is read.  Read again only where the chunk may
 * end inside the instruction.
 */
static int ptw_code__at(struct ptw_code *code, struct auxsample_decoder *dec, uint64_t at,
			const uint8_t **raw)
{
	uint64_t off = at - code->base;

	if (at < code->base || code->have <= 0 || off + PTW_INSN_MAX > (uint64_t)code->have) {
		code->have = auxsample__read_memory(dec, code->raw, sizeof(code->raw), at);
		code->base = at;
		off = 0;
		if (code->have <= 0)
			return code->have;
	}
	*raw = code->raw + off;
	return code->have - off < PTW_INSN_MAX ? code->have - off : PTW_INSN_MAX;
}

static bool ptw_is_prefix(uint8_t b)
{
	return b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x64 ||
	       b == 0x65 || b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3;
}

/*
 * The displacement of the relative branch of @len bytes at @raw: rel8
 * for the short forms, else rel32 (64-bit mode ignores 0x66 on them).
 */
static int64_t ptw_rel(const uint8_t *raw, unsigned int len)
{
	unsigned int i = 0;
	uint8_t op;

	while (i < len && (ptw_is_prefix(raw[i]) || (raw[i] & 0xf0) == 0x40))
		i++;
	op = i < len ? raw[i] : 0;
	if ((op & 0xf0) == 0x70 || (op & 0xfc) == 0xe0 || op == 0xeb)
		return (int8_t)raw[len - 1];
	return (int32_t)((uint32_t)raw[len - 4] | (uint32_t)raw[len - 3] << 8 |
			 (uint32_t)raw[len - 2] << 16 | (uint32_t)raw[len - 1] << 24);
}

/*
 * Decode the block at @ip into @b, its code read through @code: 0, or -1
 * where the code cannot be read or decoded here.
 */
static int ptw_block__build(struct ptw_block *b, struct ptw_code *code,
			    struct auxsample_decoder *dec, uint64_t ip)
{
	struct x86_branch br;
	const uint8_t *raw;
	uint64_t at = ip;

	for (uint32_t n = 1; n <= PTW_BLOCK_MAX_INSNS; n++) {
		int size = ptw_code__at(code, dec, at, &raw), len;

		if (size <= 0)
			return -1;
		if (!x86_branch__decode(raw, size, X86_MODE_64, &br)) {
			b->start = ip;
			b->end = at;
			b->ninsn = n;
			b->cls = br.cls;
			b->length = br.length;
			b->target = 0;
			if (br.cls == X86_BR_COND || br.cls == X86_BR_JUMP ||
			    br.cls == X86_BR_CALL)
				b->target = at + br.length + ptw_rel(raw, br.length);
			b->valid = 1;
			return 0;
		}
		len = x86_insn__length(raw, size, X86_MODE_64);
		if (len <= 0)
			return -1;
		at += len;
	}
	return -1;
}

int ptw_blocks__count_to(struct ptw_blocks *blocks, struct auxsample_decoder *dec,
			 const struct ptw_block *b, uint64_t ip, uint64_t *last)
{
	uint64_t at = b->start;
	const uint8_t *raw;

	for (uint32_t n = 0; n < b->ninsn; n++) {
		int size, len;

		if (at == ip)
			return n;
		*last = at;
		if (at >= b->end)
			return -1;
		size = ptw_code__at(&blocks->code, dec, at, &raw);
		if (size <= 0)
			return -1;
		len = x86_insn__length(raw, size, X86_MODE_64);
		if (len <= 0)
			return -1;
		at += len;
	}
	return -1;
}

int ptw_blocks__set_files(struct ptw_blocks *blocks, struct ptw_block_cache *files,
			  const struct ptw_extent *extents, unsigned int nr)
{
	struct ptw_extent *copy = NULL;

	if (nr) {
		copy = malloc(nr * sizeof(*copy));
		if (!copy)
			files = NULL;
	}
	ptw_block_cache__put(blocks->files);
	free(blocks->extents);
	blocks->files = ptw_block_cache__get(files);
	blocks->extents = files ? copy : NULL;
	blocks->nr_extents = files ? nr : 0;
	if (blocks->extents)
		memcpy(blocks->extents, extents, nr * sizeof(*extents));
	else
		free(copy);
	return nr && !files ? -1 : 0;
}

/*
 * @b moved by @delta: its addresses, and its branch's target where it
 * has one (a file's block is kept at its key, see ptw_blocks__fill()).
 */
static void ptw_block__move(struct ptw_block *b, uint64_t delta)
{
	b->start += delta;
	b->end += delta;
	if (b->cls == X86_BR_COND || b->cls == X86_BR_JUMP || b->cls == X86_BR_CALL)
		b->target += delta;
}

/* Whether @b, its branch included, lies in @e: its code is all of @e's file. */
static bool ptw_block__within(const struct ptw_block *b, const struct ptw_extent *e)
{
	uint64_t end = b->end + b->length;

	return end >= b->end && end <= e->end;
}

/*
 * The block at @ip, in the file of @e: from the family's cache, kept
 * there at its key (its file's id and offset), its addresses as far from
 * it as @ip is.  A block that runs past the extent read code of what is
 * mapped after: it is the image's own, and a block of the family's that
 * would (another image maps more of the file) is none of this image's.
 */
static int ptw_blocks__fill_file(struct ptw_blocks *blocks, struct ptw_block *b,
				 struct auxsample_decoder *dec, uint64_t ip,
				 const struct ptw_extent *e)
{
	uint64_t key = e->key + (ip - e->vaddr), bias = ip - key;
	unsigned int generation = ptw_block_cache__generation(blocks->files), own = 0;
	struct ptw_block kept;

	if (ptw_block_cache__lookup(blocks->files, key, b)) {
		ptw_block__move(b, bias);
		if (ptw_block__within(b, e))
			return 0;
	}
	if (blocks->shared) {
		if (ptw_block_cache__lookup(blocks->shared, ip, b))
			return 0;
		own = ptw_block_cache__generation(blocks->shared);
	}
	if (ptw_block__build(b, &blocks->code, dec, ip))
		return -1;
	blocks->built++;
	/* The image's code changed since the extents were taken: nothing to share. */
	if (blocks->shared && ptw_block_cache__generation(blocks->shared) != blocks->shared_seen)
		return 0;
	if (!ptw_block__within(b, e)) {
		if (blocks->shared && ptw_block_cache__insert(blocks->shared, b, own))
			blocks->evicted++;
		return 0;
	}
	kept = *b;
	ptw_block__move(&kept, -bias);
	if (ptw_block_cache__insert(blocks->files, &kept, generation))
		blocks->evicted++;
	return 0;
}

int ptw_blocks__fill(struct ptw_blocks *blocks, struct ptw_block *b,
		     struct auxsample_decoder *dec, uint64_t ip)
{
	struct ptw_block_cache *cache = blocks->shared;
	const struct ptw_extent *e;
	unsigned int generation = 0;

	e = ptw_extents__find(blocks->extents, blocks->nr_extents, ip);
	if (e && e->key)
		return ptw_blocks__fill_file(blocks, b, dec, ip, e);
	if (cache) {
		if (ptw_block_cache__lookup(cache, ip, b))
			return 0;
		generation = ptw_block_cache__generation(cache);
	}
	if (ptw_block__build(b, &blocks->code, dec, ip))
		return -1;
	blocks->built++;
	if (cache && ptw_block_cache__insert(cache, b, generation))
		blocks->evicted++;
	return 0;
}

struct ptw_block_set {
	struct ptw_block	ways[PTW_CACHE_WAYS];
	unsigned int		victim;		/* the next to evict, round robin */
};

/*
 * A set is read and written under its lock, one for every
 * PTW_CACHE_LOCKS-th set.  There are never fewer sets than locks, so a
 * set's lock does not change when the sets double: growing them (and
 * counting them) takes all the locks, in order, and a user of one set
 * reads where the sets are under its own.
 */
struct ptw_block_cache {
	int			refcnt;
	unsigned int		generation;
	struct ptw_block_set	*sets;
	unsigned int		nr_sets;
	unsigned int		max_sets;
	unsigned int		evicted;	/* since the sets last grew */
	pthread_mutex_t		locks[PTW_CACHE_LOCKS];
};

struct ptw_block_cache *ptw_block_cache__new(unsigned int max_sets)
{
	struct ptw_block_cache *cache = calloc(1, sizeof(*cache));

	if (!cache)
		return NULL;
	cache->sets = calloc(PTW_CACHE_SETS_MIN, sizeof(*cache->sets));
	if (!cache->sets) {
		free(cache);
		return NULL;
	}
	cache->nr_sets = PTW_CACHE_SETS_MIN;
	cache->max_sets = max_sets;
	cache->refcnt = 1;
	for (unsigned int i = 0; i < PTW_CACHE_LOCKS; i++)
		pthread_mutex_init(&cache->locks[i], NULL);
	return cache;
}

struct ptw_block_cache *ptw_block_cache__get(struct ptw_block_cache *cache)
{
	if (cache)
		__atomic_add_fetch(&cache->refcnt, 1, __ATOMIC_RELAXED);
	return cache;
}

void ptw_block_cache__put(struct ptw_block_cache *cache)
{
	if (!cache || __atomic_sub_fetch(&cache->refcnt, 1, __ATOMIC_ACQ_REL))
		return;
	for (unsigned int i = 0; i < PTW_CACHE_LOCKS; i++)
		pthread_mutex_destroy(&cache->locks[i]);
	free(cache->sets);
	free(cache);
}

unsigned int ptw_block_cache__generation(struct ptw_block_cache *cache)
{
	return __atomic_load_n(&cache->generation, __ATOMIC_ACQUIRE);
}

/*
 * Neighbouring code in neighbouring sets, 8 bytes a set: a program's
 * blocks then touch as many pages of the cache as its code spans, not
 * most of them (an index from the low bits put blocks a few bytes apart
 * 136 bytes apart).  Peak RSS of perf auxsample script on the mix bench
 * file -1.3 MiB, decode time no worse.  A block's set is as many of its
 * hash's low bits as the sets take; its lock, the PTW_CACHE_LOCKS's.
 * The bits from PTW_FILE_ID_SHIFT up, a file's id in a family's cache,
 * spread over them all: the files' code at the same offsets apart.
 */
static unsigned int ptw_block_cache__hash(uint64_t ip)
{
	return (ip >> 3) ^ (ip >> 16) ^ (ip >> 29) ^ (ip >> PTW_FILE_ID_SHIFT) * 0x9e3779b1U;
}

/* The set of @ip, its lock taken. */
static struct ptw_block_set *ptw_block_cache__lock(struct ptw_block_cache *cache, uint64_t ip,
						   pthread_mutex_t **lock)
{
	unsigned int hash = ptw_block_cache__hash(ip);

	*lock = &cache->locks[hash & (PTW_CACHE_LOCKS - 1)];
	pthread_mutex_lock(*lock);
	return &cache->sets[hash & (cache->nr_sets - 1)];
}

static void ptw_block_cache__lock_all(struct ptw_block_cache *cache)
{
	for (unsigned int l = 0; l < PTW_CACHE_LOCKS; l++)
		pthread_mutex_lock(&cache->locks[l]);
}

static void ptw_block_cache__unlock_all(struct ptw_block_cache *cache)
{
	for (unsigned int l = 0; l < PTW_CACHE_LOCKS; l++)
		pthread_mutex_unlock(&cache->locks[l]);
}

bool ptw_block_cache__lookup(struct ptw_block_cache *cache, uint64_t ip, struct ptw_block *b)
{
	pthread_mutex_t *lock;
	struct ptw_block_set *s = ptw_block_cache__lock(cache, ip, &lock);
	bool found = false;

	for (unsigned int i = 0; i < PTW_CACHE_WAYS && !found; i++) {
		if (s->ways[i].valid && s->ways[i].start == ip) {
			*b = s->ways[i];
			found = true;
		}
	}
	pthread_mutex_unlock(lock);
	return found;
}

/* @b into @s, a set with room for it. */
static void ptw_block_set__add(struct ptw_block_set *s, const struct ptw_block *b)
{
	for (unsigned int i = 0; i < PTW_CACHE_WAYS; i++) {
		if (!s->ways[i].valid) {
			s->ways[i] = *b;
			return;
		}
	}
}

/*
 * Twice the sets, if none has grown them since @nr_sets: each set's
 * blocks go to one of the two that take its index, so all stay.  Without
 * memory, tried again after as many evictions more.
 */
static void ptw_block_cache__grow(struct ptw_block_cache *cache, unsigned int nr_sets)
{
	struct ptw_block_set *sets = NULL;

	ptw_block_cache__lock_all(cache);
	if (cache->nr_sets == nr_sets)
		sets = calloc(2 * nr_sets, sizeof(*sets));
	if (sets) {
		for (unsigned int set = 0; set < nr_sets; set++) {
			for (unsigned int i = 0; i < PTW_CACHE_WAYS; i++) {
				const struct ptw_block *b = &cache->sets[set].ways[i];
				unsigned int hash = ptw_block_cache__hash(b->start);

				if (b->valid)
					ptw_block_set__add(&sets[hash & (2 * nr_sets - 1)], b);
			}
		}
		free(cache->sets);
		cache->sets = sets;
		cache->nr_sets = 2 * nr_sets;
	}
	__atomic_store_n(&cache->evicted, 0, __ATOMIC_RELAXED);
	ptw_block_cache__unlock_all(cache);
}

bool ptw_block_cache__insert(struct ptw_block_cache *cache, const struct ptw_block *b,
			     unsigned int generation)
{
	unsigned int way = PTW_CACHE_WAYS, nr_sets = 0;
	pthread_mutex_t *lock;
	struct ptw_block_set *s = ptw_block_cache__lock(cache, b->start, &lock);
	bool evicted = false;

	/*
	 * Blocks dropped since @b was built: its code may be the old one.
	 * Read under the set's lock, which the dropping takes after the
	 * bump: a block put in before that is dropped with the rest.
	 */
	if (ptw_block_cache__generation(cache) != generation)
		goto out;
	for (unsigned int i = 0; i < PTW_CACHE_WAYS; i++) {
		/* Built by another decoder meanwhile: the same block. */
		if (s->ways[i].valid && s->ways[i].start == b->start)
			goto out;
		if (!s->ways[i].valid && way == PTW_CACHE_WAYS)
			way = i;
	}
	if (way == PTW_CACHE_WAYS) {
		way = s->victim++ % PTW_CACHE_WAYS;
		evicted = true;
		nr_sets = cache->nr_sets;
		if (__atomic_add_fetch(&cache->evicted, 1, __ATOMIC_RELAXED) < nr_sets ||
		    nr_sets >= cache->max_sets)
			nr_sets = 0;
	}
	s->ways[way] = *b;
out:
	pthread_mutex_unlock(lock);
	if (nr_sets)
		ptw_block_cache__grow(cache, nr_sets);
	return evicted;
}

void ptw_block_cache__invalidate(struct ptw_block_cache *cache, uint64_t vaddr, uint64_t size)
{
	uint64_t end = vaddr + size < vaddr ? UINT64_MAX : vaddr + size;

	__atomic_add_fetch(&cache->generation, 1, __ATOMIC_ACQ_REL);
	/* A lock's sets stay its own if the sets grow between two locks. */
	for (unsigned int l = 0; l < PTW_CACHE_LOCKS; l++) {
		pthread_mutex_lock(&cache->locks[l]);
		for (unsigned int set = l; set < cache->nr_sets; set += PTW_CACHE_LOCKS) {
			for (unsigned int i = 0; i < PTW_CACHE_WAYS; i++) {
				struct ptw_block *b = &cache->sets[set].ways[i];

				/* The block's code, its branch included. */
				if (b->valid && b->start < end && b->end + b->length > vaddr)
					b->valid = 0;
			}
		}
		pthread_mutex_unlock(&cache->locks[l]);
	}
}

unsigned int ptw_block_cache__count(struct ptw_block_cache *cache)
{
	unsigned int n = 0;

	ptw_block_cache__lock_all(cache);
	for (unsigned int set = 0; set < cache->nr_sets; set++) {
		for (unsigned int i = 0; i < PTW_CACHE_WAYS; i++)
			n += cache->sets[set].ways[i].valid;
	}
	ptw_block_cache__unlock_all(cache);
	return n;
}

unsigned int ptw_block_cache__capacity(struct ptw_block_cache *cache)
{
	unsigned int n;

	/* The sets grow under all the locks: any one of them keeps their count. */
	pthread_mutex_lock(&cache->locks[0]);
	n = cache->nr_sets * PTW_CACHE_WAYS;
	pthread_mutex_unlock(&cache->locks[0]);
	return n;
}
