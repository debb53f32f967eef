// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Code images from files, shared by every decoder and thread.  The image
 * keeps the files in the order they were added; each backend that reads
 * code from files keeps a cache of them here (its ->image_new()), which
 * its decoders share: the Intel PT backend, libipt's section cache
 * (libipt forbids sharing a pt_image between decoders, not a pt_iscache:
 * each decoder rebuilds its own pt_image from the cache when the image
 * has grown; the Intel PT walker, its basic blocks, which the image's
 * clones share too: they do not contend).  Images made as siblings of
 * one another are a family: what a cache holds of a file, the same file
 * in every one of them holds (the walker's blocks of files' code).
 */
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

struct auxsample_image {
	pthread_mutex_t			lock;
	int				refcnt;
	struct auxsample_image_file	**files;
	unsigned int			nr;
	unsigned int			cap;
	unsigned int			generation;	/* bumped by every add */
	void				*caches[];	/* by auxsample_backends[] */
};

static unsigned int auxsample_image__nr_caches(void)
{
	/* Never a zero-length object, even with no backend at all. */
	return auxsample_nr_backends ? auxsample_nr_backends : 1;
}

static struct auxsample_image_file *auxsample_image_file__get(struct auxsample_image_file *file)
{
	__atomic_add_fetch(&file->refcnt, 1, __ATOMIC_RELAXED);
	return file;
}

static void auxsample_image_file__put(struct auxsample_image_file *file)
{
	if (!file || __atomic_sub_fetch(&file->refcnt, 1, __ATOMIC_ACQ_REL))
		return;
	free(file->filename);
	free(file->identity);
	free(file);
}

/* The caches first: they may point to the files. */
static void auxsample_image__delete(struct auxsample_image *image)
{
	for (unsigned int i = 0; i < auxsample_nr_backends; i++) {
		if (image->caches[i])
			auxsample_backends[i]->image_delete(image->caches[i]);
	}
	pthread_mutex_destroy(&image->lock);
	for (unsigned int i = 0; i < image->nr; i++)
		auxsample_image_file__put(image->files[i]);
	free(image->files);
	free(image);
}

/* A new image, its caches in @family's families where it is not NULL. */
static struct auxsample_image *auxsample_image__new_in(struct auxsample_image *family)
{
	struct auxsample_image *image;

	image = calloc(1, sizeof(*image) + auxsample_image__nr_caches() * sizeof(void *));
	if (!image)
		return NULL;
	pthread_mutex_init(&image->lock, NULL);
	image->refcnt = 1;
	if (family)
		pthread_mutex_lock(&family->lock);
	for (unsigned int i = 0; i < auxsample_nr_backends; i++) {
		const struct auxsample_backend *b = auxsample_backends[i];

		if (!b->image_new)
			continue;
		if (family && family->caches[i] && b->image_sibling)
			image->caches[i] = b->image_sibling(family->caches[i]);
		else
			image->caches[i] = b->image_new();
		if (!image->caches[i])
			break;
	}
	if (family)
		pthread_mutex_unlock(&family->lock);
	for (unsigned int i = 0; i < auxsample_nr_backends; i++) {
		if (auxsample_backends[i]->image_new && !image->caches[i]) {
			auxsample_image__delete(image);
			return NULL;
		}
	}
	return image;
}

AUXSAMPLE_API struct auxsample_image *auxsample_image__new(void)
{
	return auxsample_image__new_in(NULL);
}

AUXSAMPLE_API struct auxsample_image *auxsample_image__new_sibling(struct auxsample_image *image)
{
	return image ? auxsample_image__new_in(image) : NULL;
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
	auxsample_image__delete(image);
}

/* Room for @more files; under image->lock. */
static int auxsample_image__grow(struct auxsample_image *image, unsigned int more)
{
	unsigned int cap = image->cap ? image->cap : 16;
	struct auxsample_image_file **files;

	if (more <= image->cap - image->nr)
		return 0;
	while (more > cap - image->nr) {
		if (cap > UINT_MAX / 2)
			return -AUXSAMPLE_ERR_NOMEM;
		cap *= 2;
	}
	files = realloc(image->files, cap * sizeof(*files));
	if (!files)
		return -AUXSAMPLE_ERR_NOMEM;
	image->files = files;
	image->cap = cap;
	return 0;
}

/*
 * Into each backend's cache; under image->lock.  *@taken: a cache took
 * the file before another failed, and may point to it.
 */
static int auxsample_image__add_caches(struct auxsample_image *image,
				       const struct auxsample_image_file *file, bool *taken)
{
	*taken = false;
	for (unsigned int i = 0; i < auxsample_nr_backends; i++) {
		int err;

		if (!image->caches[i])
			continue;
		err = auxsample_backends[i]->image_add(image->caches[i], file);
		if (err)
			return err;
		*taken = true;
	}
	return 0;
}

AUXSAMPLE_API int auxsample_image__add_file_id(struct auxsample_image *image,
					       const char *filename, uint64_t offset,
					       uint64_t size, uint64_t vaddr, const char *identity)
{
	struct auxsample_image_file *file;
	bool taken = false;
	int ret;

	if (!image || !filename || !size)
		return -AUXSAMPLE_ERR_INVALID;
	file = calloc(1, sizeof(*file));
	if (!file)
		return -AUXSAMPLE_ERR_NOMEM;
	*file = (struct auxsample_image_file){
		.refcnt = 1, .offset = offset, .size = size, .vaddr = vaddr,
		.filename = strdup(filename),
	};
	if (identity && *identity)
		file->identity = strdup(identity);
	if (!file->filename || (identity && *identity && !file->identity)) {
		auxsample_image_file__put(file);
		return -AUXSAMPLE_ERR_NOMEM;
	}

	pthread_mutex_lock(&image->lock);
	ret = auxsample_image__grow(image, 1);
	if (!ret)
		ret = auxsample_image__add_caches(image, file, &taken);
	if (!ret) {
		image->files[image->nr++] = file;
		__atomic_add_fetch(&image->generation, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&image->lock);
	/*
	 * A cache that took it before another failed may point to it, and no
	 * backend gives a file back: it is left allocated then.
	 */
	if (ret && !taken)
		auxsample_image_file__put(file);
	return ret;
}

AUXSAMPLE_API int auxsample_image__add_file(struct auxsample_image *image,
					    const char *filename, uint64_t offset,
					    uint64_t size, uint64_t vaddr)
{
	return auxsample_image__add_file_id(image, filename, offset, size, vaddr, NULL);
}

/*
 * @copy's caches of @image's files that @keep says; under @image's lock.
 * A backend without ->image_copy(), or whose cache does not hold the
 * image's files one for one, adds them as they were added: one it
 * cannot add again (gone since) fails the copy.
 */
static int auxsample_image__copy_caches(struct auxsample_image *copy,
					struct auxsample_image *image, const bool *keep)
{
	for (unsigned int i = 0; i < auxsample_nr_backends; i++) {
		const struct auxsample_backend *b = auxsample_backends[i];
		int err = -AUXSAMPLE_ERR_INVALID;

		if (!copy->caches[i] || !image->caches[i])
			continue;
		if (b->image_copy)
			err = b->image_copy(copy->caches[i], image->caches[i], keep, image->nr);
		if (err == -AUXSAMPLE_ERR_INVALID) {
			err = 0;
			for (unsigned int k = 0; k < image->nr && !err; k++) {
				if (keep[k])
					err = b->image_add(copy->caches[i], image->files[k]);
			}
		}
		if (err)
			return err;
	}
	return 0;
}

/* @copy, new, of @image's files that @keep says; under @image's lock. */
static int auxsample_image__copy_files(struct auxsample_image *copy,
				       struct auxsample_image *image,
				       auxsample_image_keep_fn keep, void *arg)
{
	bool *kept = malloc((image->nr ?: 1) * sizeof(*kept));
	int err = -AUXSAMPLE_ERR_NOMEM;
	unsigned int n = 0;

	if (!kept)
		return err;
	for (unsigned int i = 0; i < image->nr; i++) {
		const struct auxsample_image_file *f = image->files[i];

		kept[i] = !keep || keep(f->filename, f->offset, f->size, f->vaddr, arg);
		n += kept[i];
	}
	if (!auxsample_image__grow(copy, n))
		err = auxsample_image__copy_caches(copy, image, kept);
	for (unsigned int i = 0; i < image->nr && !err; i++) {
		if (kept[i])
			copy->files[copy->nr++] = auxsample_image_file__get(image->files[i]);
	}
	free(kept);
	return err;
}

/*
 * A copy of @image's files that @keep keeps; with @clone, it shares what
 * does not contend with @image, as of the same files (->image_clone()).
 */
static struct auxsample_image *auxsample_image__copy_of(struct auxsample_image *image,
							auxsample_image_keep_fn keep,
							void *arg, bool clone)
{
	struct auxsample_image *copy;
	int err;

	if (!image)
		return NULL;
	copy = auxsample_image__new_sibling(image);
	if (!copy)
		return NULL;
	pthread_mutex_lock(&image->lock);
	err = auxsample_image__copy_files(copy, image, keep, arg);
	for (unsigned int i = 0; i < auxsample_nr_backends && clone && !err; i++) {
		if (image->caches[i] && copy->caches[i] && auxsample_backends[i]->image_clone)
			auxsample_backends[i]->image_clone(copy->caches[i], image->caches[i]);
	}
	pthread_mutex_unlock(&image->lock);
	if (err) {
		auxsample_image__put(copy);
		return NULL;
	}
	return copy;
}

AUXSAMPLE_API struct auxsample_image *auxsample_image__copy(struct auxsample_image *image,
							   auxsample_image_keep_fn keep,
							   void *arg)
{
	return auxsample_image__copy_of(image, keep, arg, false);
}

/*
 * The files as of now, in caches of the clone's own: a cache's locks
 * (libipt: a section's block cache) are shared by every decoder that
 * reads through it, and decoders in other threads contend for them.
 */
AUXSAMPLE_API struct auxsample_image *auxsample_image__clone(struct auxsample_image *image)
{
	return auxsample_image__copy_of(image, NULL, NULL, true);
}

AUXSAMPLE_API int auxsample_image__invalidate(struct auxsample_image *image,
					      uint64_t vaddr, uint64_t size)
{
	if (!image || !size)
		return -AUXSAMPLE_ERR_INVALID;
	pthread_mutex_lock(&image->lock);
	for (unsigned int i = 0; i < auxsample_nr_backends; i++) {
		if (image->caches[i] && auxsample_backends[i]->image_invalidate)
			auxsample_backends[i]->image_invalidate(image->caches[i], vaddr, size);
	}
	__atomic_add_fetch(&image->generation, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&image->lock);
	return 0;
}

unsigned int auxsample_image__generation(struct auxsample_image *image)
{
	return __atomic_load_n(&image->generation, __ATOMIC_ACQUIRE);
}

void *auxsample_image__lock_cache(struct auxsample_image *image,
				  const struct auxsample_backend *backend,
				  unsigned int *generation)
{
	unsigned int i = 0;

	while (i < auxsample_nr_backends && auxsample_backends[i] != backend)
		i++;
	pthread_mutex_lock(&image->lock);
	*generation = image->generation;
	return i < auxsample_nr_backends ? image->caches[i] : NULL;
}

void auxsample_image__unlock(struct auxsample_image *image)
{
	pthread_mutex_unlock(&image->lock);
}
