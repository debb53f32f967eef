// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Code images from files, through one libipt section cache shared by
 * every decoder and thread.  libipt forbids sharing a pt_image between
 * decoders, so each decoder keeps its own, rebuilt from the shared
 * sections when the image has grown since (libipt's doc/howto_libipt.md:
 * "an image must not be shared between decoders"; pt_iscache is).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <intel-pt.h>
#include "internal.h"

#define IMAGE_CACHE_LIMIT	(256ULL << 20)	/* bytes of sections kept mapped */

/* A file section as added, for clones. */
struct image_file {
	char		*filename;
	uint64_t	offset;
	uint64_t	size;
	uint64_t	vaddr;
};

struct auxsample_image {
	pthread_mutex_t			lock;
	int				refcnt;
	struct pt_image_section_cache	*iscache;
	int				*isids;
	struct image_file		*files;		/* isids[i] is files[i] */
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
	for (unsigned int i = 0; i < image->nr; i++)
		free(image->files[i].filename);
	free(image->files);
	free(image->isids);
	free(image);
}

/* Room for one more section; under image->lock. */
static int auxsample_image__grow(struct auxsample_image *image)
{
	unsigned int cap = image->cap ? image->cap * 2 : 16;
	struct image_file *files;
	int *isids;

	if (image->nr < image->cap)
		return 0;
	isids = realloc(image->isids, cap * sizeof(*isids));
	if (!isids)
		return -AUXSAMPLE_ERR_NOMEM;
	image->isids = isids;
	files = realloc(image->files, cap * sizeof(*files));
	if (!files)
		return -AUXSAMPLE_ERR_NOMEM;
	image->files = files;
	image->cap = cap;
	return 0;
}

AUXSAMPLE_API int auxsample_image__add_file(struct auxsample_image *image,
					    const char *filename, uint64_t offset,
					    uint64_t size, uint64_t vaddr)
{
	struct image_file file = { NULL, offset, size, vaddr };
	int isid, ret;

	if (!image || !filename || !size)
		return -AUXSAMPLE_ERR_INVALID;
	isid = pt_iscache_add_file(image->iscache, filename, offset, size, vaddr);
	if (isid < 0)
		return pt_errcode(isid) == pte_nomem ? -AUXSAMPLE_ERR_NOMEM :
						       -AUXSAMPLE_ERR_INVALID;
	file.filename = strdup(filename);
	if (!file.filename)
		return -AUXSAMPLE_ERR_NOMEM;

	pthread_mutex_lock(&image->lock);
	ret = auxsample_image__grow(image);
	if (ret) {
		free(file.filename);
		goto out;
	}
	image->files[image->nr] = file;
	image->isids[image->nr++] = isid;
	__atomic_add_fetch(&image->generation, 1, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&image->lock);
	return ret;
}

/*
 * The sections as of now, in a section cache of the clone's own: a
 * section's block cache and locks are shared by every decoder that reads
 * it through one cache, and decoders in other threads contend for them.
 */
AUXSAMPLE_API struct auxsample_image *auxsample_image__clone(struct auxsample_image *image)
{
	struct auxsample_image *clone;
	unsigned int i;
	int err = 0;

	if (!image)
		return NULL;
	clone = auxsample_image__new();
	if (!clone)
		return NULL;
	pthread_mutex_lock(&image->lock);
	for (i = 0; i < image->nr && !err; i++) {
		const struct image_file *f = &image->files[i];

		err = auxsample_image__add_file(clone, f->filename, f->offset, f->size,
						f->vaddr);
	}
	pthread_mutex_unlock(&image->lock);
	if (err) {
		auxsample_image__put(clone);
		return NULL;
	}
	return clone;
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
