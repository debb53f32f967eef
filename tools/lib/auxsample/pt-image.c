// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Intel PT backend's cache of an image's files: one libipt section
 * cache, shared by every decoder of the image and every thread.  Each
 * decoder builds a pt_image of its own from it (libipt's
 * doc/howto_libipt.md: "an image must not be shared between decoders";
 * pt_iscache is thread safe).
 */
#include <stdlib.h>
#include <intel-pt.h>
#include "backend.h"
#include "pt-blocks.h"
#include "pt-files.h"
#include "pt-image.h"

#define IMAGE_CACHE_LIMIT	(256ULL << 20)	/* bytes of sections kept mapped */

struct pt_image_cache {
	struct pt_image_section_cache	*iscache;
	int				*isids;		/* of the image's files, in order */
	unsigned int			nr;
	unsigned int			cap;
	struct ptw_block_cache		*blocks;	/* the walker's, once asked for */
	/* The family's blocks of files' code, and where the files are mapped */
	struct ptw_files		*files;
	struct ptw_file_range		*ranges;
	unsigned int			nr_ranges;
	unsigned int			cap_ranges;
};

/* A cache in @files's family, or one of its own. */
static void *pt_image_cache__new_in(struct ptw_files *files)
{
	struct pt_image_cache *cache = calloc(1, sizeof(*cache));

	if (!cache)
		return NULL;
	cache->files = files ? ptw_files__get(files) : ptw_files__new();
	cache->iscache = pt_iscache_alloc("auxsample");
	if (!cache->iscache || !cache->files) {
		pt_image_cache__delete(cache);
		return NULL;
	}
	pt_iscache_set_limit(cache->iscache, IMAGE_CACHE_LIMIT);
	return cache;
}

void *pt_image_cache__new(void)
{
	return pt_image_cache__new_in(NULL);
}

void *pt_image_cache__sibling(void *c)
{
	struct pt_image_cache *cache = c;

	return pt_image_cache__new_in(cache->files);
}

void pt_image_cache__delete(void *c)
{
	struct pt_image_cache *cache = c;

	pt_iscache_free(cache->iscache);
	ptw_block_cache__put(cache->blocks);
	ptw_files__put(cache->files);
	free(cache->ranges);
	free(cache->isids);
	free(cache);
}

/*
 * Where @file's code is in the family's cache: a file it cannot share
 * (see ptw_files__range()) keeps its blocks in the image's cache.
 */
static int pt_image_cache__add_range(struct pt_image_cache *cache,
				     const struct auxsample_image_file *file)
{
	struct ptw_file_range r;

	if (ptw_files__range(cache->files, file->filename, file->offset, file->size,
			     file->vaddr, &r))
		return 0;
	if (cache->nr_ranges == cache->cap_ranges) {
		unsigned int cap = cache->cap_ranges ? cache->cap_ranges * 2 : 16;
		struct ptw_file_range *ranges = realloc(cache->ranges, cap * sizeof(*ranges));

		if (!ranges)
			return -AUXSAMPLE_ERR_NOMEM;
		cache->ranges = ranges;
		cache->cap_ranges = cap;
	}
	cache->ranges[cache->nr_ranges++] = r;
	return 0;
}

int pt_image_cache__add(void *c, const struct auxsample_image_file *file)
{
	struct pt_image_cache *cache = c;
	int isid;

	if (cache->nr == cache->cap) {
		unsigned int cap = cache->cap ? cache->cap * 2 : 16;
		int *isids = realloc(cache->isids, cap * sizeof(*isids));

		if (!isids)
			return -AUXSAMPLE_ERR_NOMEM;
		cache->isids = isids;
		cache->cap = cap;
	}
	isid = pt_iscache_add_file(cache->iscache, file->filename, file->offset, file->size,
				   file->vaddr);
	if (isid < 0)
		return pt_errcode(isid) == pte_nomem ? -AUXSAMPLE_ERR_NOMEM :
						       -AUXSAMPLE_ERR_INVALID;
	if (pt_image_cache__add_range(cache, file))
		return -AUXSAMPLE_ERR_NOMEM;
	cache->isids[cache->nr++] = isid;
	/* The file shadows what was mapped there before. */
	if (cache->blocks)
		ptw_block_cache__invalidate(cache->blocks, file->vaddr, file->size);
	return 0;
}

struct ptw_block_cache *pt_image_cache__blocks(struct pt_image_cache *cache)
{
	if (!cache->blocks)
		cache->blocks = ptw_block_cache__new(PTW_CACHE_SETS);
	return ptw_block_cache__get(cache->blocks);
}

int pt_image_cache__files(struct pt_image_cache *cache, struct ptw_blocks *blocks)
{
	struct ptw_block_cache *files = ptw_files__blocks(cache->files);

	return ptw_blocks__set_files(blocks, files, cache->ranges, files ? cache->nr_ranges : 0);
}

/*
 * A clone is for decoders in another thread: libipt's sections would
 * contend, the walker's blocks (locked only where a decoder's own cache
 * misses) do not, and are decoded once for all.
 */
void pt_image_cache__clone(void *d, void *s)
{
	struct pt_image_cache *dst = d, *src = s;
	struct ptw_block_cache *blocks = pt_image_cache__blocks(src);

	if (!blocks)
		return;		/* out of memory: the clone's own, later */
	ptw_block_cache__put(dst->blocks);
	dst->blocks = blocks;
}

/*
 * The family's blocks of the files mapped there are dropped too, for
 * every image of the family: the code of a file at an offset is one,
 * whichever process maps it (and so a change of one process's copy, the
 * family's to make known).
 */
void pt_image_cache__invalidate(void *c, uint64_t vaddr, uint64_t size)
{
	struct pt_image_cache *cache = c;
	uint64_t end = vaddr + size < vaddr ? UINT64_MAX : vaddr + size;
	struct ptw_block_cache *files;

	if (cache->blocks)
		ptw_block_cache__invalidate(cache->blocks, vaddr, size);
	files = cache->nr_ranges ? ptw_files__blocks(cache->files) : NULL;
	for (unsigned int i = 0; files && i < cache->nr_ranges; i++) {
		const struct ptw_file_range *r = &cache->ranges[i];
		uint64_t lo = vaddr > r->vaddr ? vaddr : r->vaddr;
		uint64_t hi = end < r->end ? end : r->end;

		if (lo < hi)
			ptw_block_cache__invalidate(files, r->key + (lo - r->vaddr), hi - lo);
	}
}

/* Later sections shadow earlier ones where they overlap, as newer mappings do. */
int pt_image_cache__sync(struct pt_image_cache *cache, struct pt_image *pti)
{
	for (unsigned int i = 0; i < cache->nr; i++) {
		if (pt_image_add_cached(pti, cache->iscache, cache->isids[i], NULL) < 0)
			return -AUXSAMPLE_ERR_NOMEM;
	}
	return 0;
}

int pt_image_cache__read(struct pt_image_cache *cache, uint8_t *buf, size_t size,
			 int isid, uint64_t vaddr)
{
	return pt_iscache_read(cache->iscache, buf, size, isid, vaddr);
}
