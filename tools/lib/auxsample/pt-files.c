// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A family of images' shared blocks of files' code (pt-files.h): the
 * files' names, each given an id the first time an image of the family
 * maps it, and one block cache (pt-blocks.c) keyed by id and offset,
 * made when a walker first asks for it.
 * Images add files under their own locks, in any thread: the names are
 * under the family's.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "pt-blocks.h"
#include "pt-files.h"

#define PTW_FILES_BUCKETS	256		/* a power of two */

struct ptw_file_name {
	struct ptw_file_name	*next;
	uint32_t		id;
	char			name[];
};

struct ptw_files {
	int			refcnt;
	pthread_mutex_t		lock;
	struct ptw_block_cache	*blocks;
	uint32_t		nr_ids;
	struct ptw_file_name	*buckets[PTW_FILES_BUCKETS];
};

struct ptw_files *ptw_files__new(void)
{
	struct ptw_files *files = calloc(1, sizeof(*files));

	if (!files)
		return NULL;
	files->refcnt = 1;
	pthread_mutex_init(&files->lock, NULL);
	return files;
}

struct ptw_files *ptw_files__get(struct ptw_files *files)
{
	if (files)
		__atomic_add_fetch(&files->refcnt, 1, __ATOMIC_RELAXED);
	return files;
}

void ptw_files__put(struct ptw_files *files)
{
	if (!files || __atomic_sub_fetch(&files->refcnt, 1, __ATOMIC_ACQ_REL))
		return;
	for (unsigned int i = 0; i < PTW_FILES_BUCKETS; i++) {
		while (files->buckets[i]) {
			struct ptw_file_name *n = files->buckets[i];

			files->buckets[i] = n->next;
			free(n);
		}
	}
	ptw_block_cache__put(files->blocks);
	pthread_mutex_destroy(&files->lock);
	free(files);
}

struct ptw_block_cache *ptw_files__blocks(struct ptw_files *files)
{
	struct ptw_block_cache *blocks;

	pthread_mutex_lock(&files->lock);
	if (!files->blocks)
		files->blocks = ptw_block_cache__new(PTW_FILES_CACHE_SETS);
	blocks = files->blocks;
	pthread_mutex_unlock(&files->lock);
	return blocks;
}

/* FNV-1a */
static unsigned int ptw_files__hash(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 0x100000001b3ULL;
	return (h ^ h >> 32) & (PTW_FILES_BUCKETS - 1);
}

/* The id of @name, given one now if it has none: 0 where it cannot be. */
static uint32_t ptw_files__id(struct ptw_files *files, const char *name)
{
	struct ptw_file_name **head = &files->buckets[ptw_files__hash(name)], *n;
	size_t len = strlen(name);
	uint32_t id = 0;

	pthread_mutex_lock(&files->lock);
	for (n = *head; n; n = n->next) {
		if (!strcmp(n->name, name)) {
			id = n->id;
			goto out;
		}
	}
	/* Id 0 is none: no key of a file is ever 0, nor below 1 << PTW_FILE_ID_SHIFT. */
	if (files->nr_ids + 1 >= PTW_FILE_IDS)
		goto out;
	n = malloc(sizeof(*n) + len + 1);
	if (!n)
		goto out;
	memcpy(n->name, name, len + 1);
	n->id = ++files->nr_ids;
	n->next = *head;
	*head = n;
	id = n->id;
out:
	pthread_mutex_unlock(&files->lock);
	return id;
}

int ptw_files__range(struct ptw_files *files, const char *filename, uint64_t offset,
		     uint64_t size, uint64_t vaddr, struct ptw_file_range *r)
{
	const uint64_t limit = 1ULL << PTW_FILE_ID_SHIFT;
	uint32_t id;

	if (offset >= limit || size > limit - offset || vaddr + size < vaddr)
		return -1;
	id = ptw_files__id(files, filename);
	if (!id)
		return -1;
	r->vaddr = vaddr;
	r->end = vaddr + size;
	r->key = (uint64_t)id << PTW_FILE_ID_SHIFT | offset;
	return 0;
}
