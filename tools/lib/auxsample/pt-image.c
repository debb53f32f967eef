// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Intel PT backend's cache of an image's files: one libipt section
 * cache, shared by every decoder of the image and every thread.  Each
 * decoder builds a pt_image of its own from it (libipt's
 * doc/howto_libipt.md: "an image must not be shared between decoders";
 * pt_iscache is thread safe).
 */
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <intel-pt.h>
#include "backend.h"
#include "pt-blocks.h"
#include "pt-files.h"
#include "pt-image.h"

#define IMAGE_CACHE_LIMIT	(256ULL << 20)	/* bytes of sections kept mapped */

/*
 * A file of the image (the image's, which outlives the cache), added to
 * libipt's section cache when libipt first decodes: then @isid (0:
 * libipt could not add it).  @key: where the family keeps its blocks.
 */
struct pt_image_section {
	const struct auxsample_image_file	*file;
	uint64_t				key;
	int					isid;
};

struct pt_image_cache {
	struct pt_image_section_cache	*iscache;
	struct pt_image_section		*sections;	/* the image's files, in order */
	unsigned int			added;		/* ... to @iscache */
	unsigned int			nr;
	unsigned int			cap;
	bool				overlaps;	/* a file mapped over another */
	struct ptw_block_cache		*blocks;	/* the walker's, once asked for */
	/* The family's blocks of files' code, and where the image's come from */
	struct ptw_files		*files;
	struct ptw_extents		extents;
	struct pt_image_own		*own;
};

/*
 * The ranges whose code changed in an image (auxsample_image__invalidate())
 * and is its own from then on, shared with its clones, made before or
 * after: they are the same process's code.  @all: every range, where
 * there was no memory to keep one.
 */
struct pt_image_own {
	int			refcnt;
	pthread_mutex_t		lock;
	struct ptw_extents	ranges;
	bool			all;
};

static struct pt_image_own *pt_image_own__new(void)
{
	struct pt_image_own *own = calloc(1, sizeof(*own));

	if (!own)
		return NULL;
	own->refcnt = 1;
	pthread_mutex_init(&own->lock, NULL);
	return own;
}

static struct pt_image_own *pt_image_own__get(struct pt_image_own *own)
{
	__atomic_add_fetch(&own->refcnt, 1, __ATOMIC_RELAXED);
	return own;
}

static void pt_image_own__put(struct pt_image_own *own)
{
	if (!own || __atomic_sub_fetch(&own->refcnt, 1, __ATOMIC_ACQ_REL))
		return;
	ptw_extents__exit(&own->ranges);
	pthread_mutex_destroy(&own->lock);
	free(own);
}

static void pt_image_own__add(struct pt_image_own *own, uint64_t vaddr, uint64_t size)
{
	pthread_mutex_lock(&own->lock);
	if (!own->all && ptw_extents__set(&own->ranges, vaddr, size, 0)) {
		own->all = true;
		ptw_extents__exit(&own->ranges);
	}
	pthread_mutex_unlock(&own->lock);
}

/*
 * @x, the image's extents, less the ranges of @own: 0, or -1 without
 * memory (then none: all the image's code is its own).
 */
static int pt_image_own__carve(struct pt_image_own *own, struct ptw_extents *x)
{
	int err = 0;

	pthread_mutex_lock(&own->lock);
	if (own->all)
		err = -1;
	for (unsigned int i = 0; i < own->ranges.nr && !err; i++) {
		const struct ptw_extent *r = &own->ranges.e[i];

		err = ptw_extents__set(x, r->vaddr, r->end - r->vaddr, 0);
	}
	pthread_mutex_unlock(&own->lock);
	return err;
}

/* @src's ranges into the new @dst: all of them, without the memory. */
static void pt_image_own__copy(struct pt_image_own *dst, struct pt_image_own *src)
{
	if (pt_image_own__carve(src, &dst->ranges)) {
		dst->all = true;
		ptw_extents__exit(&dst->ranges);
	}
}

/* A cache in @files's family, or one of its own. */
static void *pt_image_cache__new_in(struct ptw_files *files)
{
	struct pt_image_cache *cache = calloc(1, sizeof(*cache));

	if (!cache)
		return NULL;
	cache->files = files ? ptw_files__get(files) : ptw_files__new();
	cache->own = pt_image_own__new();
	cache->iscache = pt_iscache_alloc("auxsample");
	if (!cache->iscache || !cache->files || !cache->own) {
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
	pt_image_own__put(cache->own);
	ptw_extents__exit(&cache->extents);
	free(cache->sections);
	free(cache);
}

/*
 * Where @sec's code is in the family's cache, over what was mapped
 * there before: a file it does not share (no identity) keeps its blocks
 * in the image's cache.
 */
static int pt_image_cache__add_extent(struct pt_image_cache *cache,
				      const struct pt_image_section *sec)
{
	const struct auxsample_image_file *file = sec->file;

	if (ptw_extents__overlaps(&cache->extents, file->vaddr, file->size))
		cache->overlaps = true;
	return ptw_extents__set(&cache->extents, file->vaddr, file->size, sec->key);
}

/* Room for @more sections. */
static int pt_image_cache__grow(struct pt_image_cache *cache, unsigned int more)
{
	unsigned int cap = cache->cap ? cache->cap : 16;
	struct pt_image_section *sec;

	if (more <= cache->cap - cache->nr)
		return 0;
	while (more > cap - cache->nr) {
		if (cap > UINT_MAX / 2)
			return -AUXSAMPLE_ERR_NOMEM;
		cap *= 2;
	}
	sec = realloc(cache->sections, cap * sizeof(*sec));
	if (!sec)
		return -AUXSAMPLE_ERR_NOMEM;
	cache->sections = sec;
	cache->cap = cap;
	return 0;
}

/*
 * What libipt checks of a file as it adds it (pt_mk_section()): that it
 * is there, and that @offset lies inside it.
 */
static int pt_image_cache__check(const struct auxsample_image_file *file)
{
	struct stat st;

	if (stat(file->filename, &st) || st.st_size < 0 || file->offset >= (uint64_t)st.st_size)
		return -AUXSAMPLE_ERR_INVALID;
	return 0;
}

/*
 * A file of the image: checked now, in libipt's section cache when
 * libipt first decodes with the image (pt_image_cache__sync()).  Adding
 * it there costs a search of all the sections in it, and a process
 * whose maps change makes an image of all its files again: with
 * thousands of files and a change between samples, that search was most
 * of decoding, though the walker, which decodes most snippets, never
 * reads the section cache.
 */
int pt_image_cache__add(void *c, const struct auxsample_image_file *file)
{
	struct pt_image_cache *cache = c;
	struct pt_image_section *sec;
	int err = pt_image_cache__check(file);

	if (!err)
		err = pt_image_cache__grow(cache, 1);
	if (err)
		return err;
	sec = &cache->sections[cache->nr];
	*sec = (struct pt_image_section){
		.file = file,
		.key = ptw_files__key(cache->files, file->identity, file->offset, file->size),
	};
	if (pt_image_cache__add_extent(cache, sec))
		return -AUXSAMPLE_ERR_NOMEM;
	cache->nr++;
	/* The file shadows what was mapped there before. */
	if (cache->blocks)
		ptw_block_cache__invalidate(cache->blocks, file->vaddr, file->size);
	return 0;
}

/*
 * The files not yet in libipt's section cache, added: 0, or
 * -AUXSAMPLE_ERR_NOMEM.  A file that libipt cannot add now (gone since)
 * is left out of the images, as it would have been.  Under the image's
 * lock, as pt_image_cache__add().
 */
static int pt_image_cache__flush(struct pt_image_cache *cache)
{
	for (; cache->added < cache->nr; cache->added++) {
		struct pt_image_section *sec = &cache->sections[cache->added];
		const struct auxsample_image_file *f = sec->file;
		int isid = pt_iscache_add_file(cache->iscache, f->filename, f->offset, f->size,
					       f->vaddr);

		if (isid < 0 && pt_errcode(isid) == pte_nomem)
			return -AUXSAMPLE_ERR_NOMEM;
		sec->isid = isid > 0 ? isid : 0;
	}
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
	struct ptw_extents x = { .nr = cache->extents.nr, .cap = cache->extents.nr };
	int err = -1;

	if (x.nr)
		x.e = malloc(x.nr * sizeof(*x.e));
	if (files && (!x.nr || x.e)) {
		if (x.nr)
			memcpy(x.e, cache->extents.e, x.nr * sizeof(*x.e));
		err = pt_image_own__carve(cache->own, &x);
	}
	if (!err)
		err = ptw_blocks__set_files(blocks, files, x.e, x.nr);
	ptw_extents__exit(&x);
	return err;
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

	/* Its code changed where the image's did, and will where it will. */
	pt_image_own__put(dst->own);
	dst->own = pt_image_own__get(src->own);
	if (!blocks)
		return;		/* out of memory: the clone's own, later */
	ptw_block_cache__put(dst->blocks);
	dst->blocks = blocks;
}

static int pt_image_cache__cmp_vaddr(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * @dst's extents: @src's, less those of the sections @keep drops.  Where
 * no file of @src was mapped over another, each section is one extent,
 * at its own address, which goes with it; else each kept file is mapped
 * again, in order.
 */
static int pt_image_cache__copy_extents(struct pt_image_cache *dst,
					const struct pt_image_cache *src, const bool *keep)
{
	const struct ptw_extents *x = &src->extents;
	unsigned int nr_drop = 0, k = 0;
	uint64_t *drop;

	if (src->overlaps) {
		for (unsigned int i = 0; i < dst->nr; i++) {
			if (pt_image_cache__add_extent(dst, &dst->sections[i]))
				return -AUXSAMPLE_ERR_NOMEM;
		}
		return 0;
	}
	drop = malloc((src->nr - dst->nr ?: 1) * sizeof(*drop));
	dst->extents.e = malloc((x->nr ?: 1) * sizeof(*x->e));
	if (!drop || !dst->extents.e) {
		free(drop);
		return -AUXSAMPLE_ERR_NOMEM;
	}
	dst->extents.cap = x->nr;
	for (unsigned int i = 0; i < src->nr; i++) {
		if (!keep[i])
			drop[nr_drop++] = src->sections[i].file->vaddr;
	}
	qsort(drop, nr_drop, sizeof(*drop), pt_image_cache__cmp_vaddr);
	for (unsigned int i = 0; i < x->nr; i++) {
		while (k < nr_drop && drop[k] < x->e[i].vaddr)
			k++;
		if (k == nr_drop || drop[k] != x->e[i].vaddr)
			dst->extents.e[dst->extents.nr++] = x->e[i];
	}
	free(drop);
	return 0;
}

/*
 * A cache of the kept files of @s, whose decoders' libipt images are
 * made again from them (libipt's section cache is the new image's own):
 * the files are not looked at again, their keys in the family stay.
 */
int pt_image_cache__copy(void *d, void *s, const bool *keep, unsigned int nr)
{
	struct pt_image_cache *dst = d, *src = s;
	int err;

	/* Its code changed where the image's did, whatever files it maps. */
	pt_image_own__copy(dst->own, src->own);
	if (src->nr != nr || dst->nr)
		return -AUXSAMPLE_ERR_INVALID;
	err = pt_image_cache__grow(dst, nr);
	for (unsigned int i = 0; i < nr && !err; i++) {
		if (keep[i])
			dst->sections[dst->nr++] = (struct pt_image_section){
				.file = src->sections[i].file, .key = src->sections[i].key,
			};
	}
	if (!err)
		err = pt_image_cache__copy_extents(dst, src, keep);
	return err;
}

/*
 * The family's blocks of the files mapped there stay: only this image's
 * copy of the code changed (a uprobe, a breakpoint, relocations in
 * place), and other processes map the file as it was.  The range is the
 * image's own from now on, and its clones': their decoders take their
 * extents again as the blocks' generation changes, and one under way
 * puts no more blocks in the family's cache (ptw_blocks__fill()).
 */
void pt_image_cache__invalidate(void *c, uint64_t vaddr, uint64_t size)
{
	struct pt_image_cache *cache = c;

	/* The range first: decoders of clones take it when the generation moves. */
	pt_image_own__add(cache->own, vaddr, size);
	if (cache->blocks)
		ptw_block_cache__invalidate(cache->blocks, vaddr, size);
}

/* Later sections shadow earlier ones where they overlap, as newer mappings do. */
int pt_image_cache__sync(struct pt_image_cache *cache, struct pt_image *pti)
{
	int err = pt_image_cache__flush(cache);

	for (unsigned int i = 0; i < cache->nr && !err; i++) {
		int isid = cache->sections[i].isid;

		if (isid && pt_image_add_cached(pti, cache->iscache, isid, NULL) < 0)
			err = -AUXSAMPLE_ERR_NOMEM;
	}
	return err;
}

int pt_image_cache__read(struct pt_image_cache *cache, uint8_t *buf, size_t size,
			 int isid, uint64_t vaddr)
{
	return pt_iscache_read(cache->iscache, buf, size, isid, vaddr);
}
