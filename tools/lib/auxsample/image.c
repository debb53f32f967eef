// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Code images from files, through one libipt section cache shared by
 * every decoder and thread.  libipt forbids sharing a pt_image between
 * decoders, so each decoder keeps its own, rebuilt from the shared
 * sections when the image has grown since (DECODERS.md A.7, A.8).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <intel-pt.h>
#include "internal.h"

#define IMAGE_CACHE_LIMIT	(256ULL << 20)	/* bytes of sections kept mapped */

struct auxsample_image {
	pthread_mutex_t			lock;
	int				refcnt;
	struct pt_image_section_cache	*iscache;
	int				*isids;
	unsigned int			nr;
	unsigned int			cap;
	unsigned int			generation;	/* bumped by every add */
};

AUXSAMPLE_API struct auxsample_image *auxsample_image__new(void)
{
	struct auxsample_image *image = calloc(1, sizeof(*image));

	if (!image)
		return NULL;
	image->iscache = pt_iscache_alloc("auxsample");
	if (!image->iscache) {
		free(image);
		return NULL;
	}
	pt_iscache_set_limit(image->iscache, IMAGE_CACHE_LIMIT);
	pthread_mutex_init(&image->lock, NULL);
	image->refcnt = 1;
	return image;
}

AUXSAMPLE_API struct auxsample_image *auxsample_image__get(struct auxsample_image *image)
{
	if (image)
		__atomic_add_fetch(&image->refcnt, 1, __ATOMIC_RELAXED);
	return image;
}

AUXSAMPLE_API void auxsample_image__put(struct auxsample_image *image)
{
	if (!image || __atomic_sub_fetch(&image->refcnt, 1, __ATOMIC_ACQ_REL))
		return;
	pt_iscache_free(image->iscache);
	pthread_mutex_destroy(&image->lock);
	free(image->isids);
	free(image);
}

AUXSAMPLE_API int auxsample_image__add_file(struct auxsample_image *image,
					    const char *filename, uint64_t offset,
					    uint64_t size, uint64_t vaddr)
{
	int isid, ret = 0;

	if (!image || !filename || !size)
		return -AUXSAMPLE_ERR_INVALID;
	isid = pt_iscache_add_file(image->iscache, filename, offset, size, vaddr);
	if (isid < 0)
		return pt_errcode(isid) == pte_nomem ? -AUXSAMPLE_ERR_NOMEM :
						       -AUXSAMPLE_ERR_INVALID;

	pthread_mutex_lock(&image->lock);
	if (image->nr == image->cap) {
		unsigned int cap = image->cap ? image->cap * 2 : 16;
		int *isids = realloc(image->isids, cap * sizeof(*isids));

		if (!isids) {
			ret = -AUXSAMPLE_ERR_NOMEM;
			goto out;
		}
		image->isids = isids;
		image->cap = cap;
	}
	image->isids[image->nr++] = isid;
	__atomic_add_fetch(&image->generation, 1, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&image->lock);
	return ret;
}

unsigned int auxsample_image__generation(struct auxsample_image *image)
{
	return __atomic_load_n(&image->generation, __ATOMIC_ACQUIRE);
}

/*
 * Add the image's sections as of now to the empty @pti; *@generation says
 * which they are.  Later sections shadow earlier ones where they overlap,
 * as newer mappings do.
 */
int auxsample_image__sync(struct auxsample_image *image, struct pt_image *pti,
			  unsigned int *generation)
{
	int ret = 0;

	pthread_mutex_lock(&image->lock);
	for (unsigned int i = 0; i < image->nr; i++) {
		ret = pt_image_add_cached(pti, image->iscache, image->isids[i], NULL);
		if (ret < 0) {
			ret = -AUXSAMPLE_ERR_NOMEM;
			goto out;
		}
	}
	*generation = image->generation;
	ret = 0;
out:
	pthread_mutex_unlock(&image->lock);
	return ret;
}

/* Code bytes of section @isid at @vaddr, as libipt reads them. */
int auxsample_image__read(struct auxsample_image *image, uint8_t *buf, size_t size,
			  int isid, uint64_t vaddr)
{
	return pt_iscache_read(image->iscache, buf, size, isid, vaddr);
}
