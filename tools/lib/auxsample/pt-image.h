/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_PT_IMAGE_H
#define __AUXSAMPLE_PT_IMAGE_H

/*
 * The Intel PT backend's cache of an image's files (pt-image.c): libipt's
 * section cache, shared by the decoders of the image, and the walker's
 * blocks of its code, shared by the decoders of the image and its clones,
 * those of its files' code by its whole family (pt-files.h).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct auxsample_image_file;
struct pt_image;
struct pt_image_cache;
struct ptw_blocks;

void *pt_image_cache__new(void);
/* A new cache, of no files, in @cache's family (pt-files.h). */
void *pt_image_cache__sibling(void *cache);
void pt_image_cache__delete(void *cache);
int pt_image_cache__add(void *cache, const struct auxsample_image_file *file);
/* Add the cache's sections to the empty @pti; under the image's lock. */
int pt_image_cache__sync(struct pt_image_cache *cache, struct pt_image *pti);
/*
 * The image's shared cache of the walker's blocks (pt-blocks.h), made on
 * first use; a reference; NULL when out of memory.  Under the image's lock.
 */
struct ptw_block_cache *pt_image_cache__blocks(struct pt_image_cache *cache);
/*
 * The family's blocks of files' code and where the image maps them, for
 * the walker's @blocks (ptw_blocks__set_files()): 0, or -1 without
 * memory.  Under the image's lock.
 */
int pt_image_cache__files(struct pt_image_cache *cache, struct ptw_blocks *blocks);
void pt_image_cache__clone(void *dst, void *src);
int pt_image_cache__copy(void *dst, void *src, const bool *keep, unsigned int nr);
void pt_image_cache__invalidate(void *cache, uint64_t vaddr, uint64_t size);
/* Code bytes of section @isid at @vaddr, as libipt reads them. */
int pt_image_cache__read(struct pt_image_cache *cache, uint8_t *buf, size_t size,
			 int isid, uint64_t vaddr);

#endif /* __AUXSAMPLE_PT_IMAGE_H */
