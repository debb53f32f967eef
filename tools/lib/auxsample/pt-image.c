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
#include "pt-image.h"

#define IMAGE_CACHE_LIMIT	(256ULL << 20)	/* bytes of sections kept mapped */

struct pt_image_cache {
	struct pt_image_section_cache	*iscache;
	int				*isids;		/* of the image's files, in order */
	unsigned int			nr;
	unsigned int			cap;
	struct ptw_block_cache		*blocks;	/* the walker's, once asked for */
};

void *pt_image_cache__new(void)
{
	struct pt_image_cache *cache = calloc(1, sizeof(*cache));

	if (!cache)
		return NULL;
	cache->iscache = pt_iscache_alloc("auxsample");
	if (!cache->iscache) {
		free(cache);
		return NULL;
	}
	pt_iscache_set_limit(cache->iscache, IMAGE_CACHE_LIMIT);
	return cache;
}

void pt_image_cache__delete(void *c)
{
	struct pt_image_cache *cache = c;

	pt_iscache_free(cache->iscache);
	ptw_block_cache__put(cache->blocks);
	free(cache->isids);
	free(cache);
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
	cache->isids[cache->nr++] = isid;
	/* The file shadows what was mapped there before. */
	if (cache->blocks)
		ptw_block_cache__invalidate(cache->blocks, file->vaddr, file->size);
	return 0;
}

struct ptw_block_cache *pt_image_cache__blocks(struct pt_image_cache *cache)
{
	if (!cache->blocks)
		cache->blocks = ptw_block_cache__new();
	return ptw_block_cache__get(cache->blocks);
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

void pt_image_cache__invalidate(void *c, uint64_t vaddr, uint64_t size)
{
	struct pt_image_cache *cache = c;

	if (cache->blocks)
		ptw_block_cache__invalidate(cache->blocks, vaddr, size);
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
