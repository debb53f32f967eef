// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A family of images' shared blocks of files' code (pt-files.h): the
 * files' identities, each given an id the first time an image of the
 * family maps it, and one block cache (pt-blocks.c) keyed by id and
 * offset, made when a walker first asks for it; and an image's extents,
 * where each part of its address space takes its blocks from.  Images
 * add files under their own locks, in any thread: the identities are
 * under the family's.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "pt-blocks.h"
#include "pt-files.h"

#define PTW_FILES_BUCKETS_MIN	64		/* a power of two */

struct ptw_file_id {
	struct ptw_file_id	*next;
	uint64_t		hash;
	uint32_t		id;
	char			identity[];
};

struct ptw_files {
	int			refcnt;
	pthread_mutex_t		lock;
	struct ptw_block_cache	*blocks;
	uint32_t		nr_ids;
	struct ptw_file_id	**buckets;
	uint32_t		nr_buckets;	/* a power of two, twice the ids at most */
};

struct ptw_files *ptw_files__new(void)
{
	struct ptw_files *files = calloc(1, sizeof(*files));

	if (!files)
		return NULL;
	files->buckets = calloc(PTW_FILES_BUCKETS_MIN, sizeof(*files->buckets));
	if (!files->buckets) {
		free(files);
		return NULL;
	}
	files->nr_buckets = PTW_FILES_BUCKETS_MIN;
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
	for (uint32_t i = 0; i < files->nr_buckets; i++) {
		while (files->buckets[i]) {
			struct ptw_file_id *n = files->buckets[i];

			files->buckets[i] = n->next;
			free(n);
		}
	}
	free(files->buckets);
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
static uint64_t ptw_files__hash(const char *identity)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *identity; identity++)
		h = (h ^ (uint8_t)*identity) * 0x100000001b3ULL;
	return h ^ h >> 32;
}

/* Twice the buckets, under the lock; as they are, without memory. */
static void ptw_files__grow(struct ptw_files *files)
{
	uint32_t nr = 2 * files->nr_buckets;
	struct ptw_file_id **buckets = calloc(nr, sizeof(*buckets));

	if (!buckets)
		return;
	for (uint32_t i = 0; i < files->nr_buckets; i++) {
		while (files->buckets[i]) {
			struct ptw_file_id *n = files->buckets[i];

			files->buckets[i] = n->next;
			n->next = buckets[n->hash & (nr - 1)];
			buckets[n->hash & (nr - 1)] = n;
		}
	}
	free(files->buckets);
	files->buckets = buckets;
	files->nr_buckets = nr;
}

/* The id of @identity, given one now if it has none: 0 where it cannot be. */
static uint32_t ptw_files__id(struct ptw_files *files, const char *identity)
{
	uint64_t hash = ptw_files__hash(identity);
	size_t len = strlen(identity);
	struct ptw_file_id *n;
	uint32_t id = 0;

	pthread_mutex_lock(&files->lock);
	for (n = files->buckets[hash & (files->nr_buckets - 1)]; n; n = n->next) {
		if (n->hash == hash && !strcmp(n->identity, identity)) {
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
	memcpy(n->identity, identity, len + 1);
	n->hash = hash;
	n->id = ++files->nr_ids;
	n->next = files->buckets[hash & (files->nr_buckets - 1)];
	files->buckets[hash & (files->nr_buckets - 1)] = n;
	id = n->id;
	if (files->nr_ids > 2 * files->nr_buckets)
		ptw_files__grow(files);
out:
	pthread_mutex_unlock(&files->lock);
	return id;
}

uint64_t ptw_files__key(struct ptw_files *files, const char *identity, uint64_t offset,
			uint64_t size)
{
	const uint64_t limit = 1ULL << PTW_FILE_ID_SHIFT;
	uint32_t id;

	if (!identity || !*identity || offset >= limit || size > limit - offset)
		return 0;
	id = ptw_files__id(files, identity);
	return id ? (uint64_t)id << PTW_FILE_ID_SHIFT | offset : 0;
}

int ptw_extents__set(struct ptw_extents *x, uint64_t vaddr, uint64_t size, uint64_t key)
{
	uint64_t end = vaddr + size < vaddr ? UINT64_MAX : vaddr + size;
	struct ptw_extent *e;
	unsigned int n = 0, cap;
	bool placed = false;

	if (!size)
		return 0;
	/* After all the others, as perf adds a process's maps: at the end. */
	if (!x->nr || vaddr >= x->e[x->nr - 1].end) {
		if (x->nr == x->cap) {
			cap = x->cap ? 2 * x->cap : 16;
			e = realloc(x->e, cap * sizeof(*e));
			if (!e)
				return -1;
			x->e = e;
			x->cap = cap;
		}
		x->e[x->nr++] = (struct ptw_extent){ vaddr, end, key };
		return 0;
	}
	/* One split in two, and the new one */
	cap = x->nr + 2;
	e = malloc(cap * sizeof(*e));
	if (!e)
		return -1;
	for (unsigned int i = 0; i < x->nr; i++) {
		const struct ptw_extent *old = &x->e[i];

		if (!placed && old->vaddr >= vaddr) {
			e[n++] = (struct ptw_extent){ vaddr, end, key };
			placed = true;
		}
		if (old->end <= vaddr || old->vaddr >= end) {
			e[n++] = *old;
			continue;
		}
		/* What is left of it on either side: the left before the new one. */
		if (old->vaddr < vaddr) {
			e[n++] = (struct ptw_extent){ old->vaddr, vaddr, old->key };
			e[n++] = (struct ptw_extent){ vaddr, end, key };
			placed = true;
		}
		if (old->end > end)
			e[n++] = (struct ptw_extent){ end, old->end,
						      old->key ? old->key + (end - old->vaddr) : 0 };
	}
	if (!placed)
		e[n++] = (struct ptw_extent){ vaddr, end, key };
	free(x->e);
	x->e = e;
	x->nr = n;
	x->cap = cap;
	return 0;
}

void ptw_extents__exit(struct ptw_extents *x)
{
	free(x->e);
	x->e = NULL;
	x->nr = 0;
	x->cap = 0;
}

bool ptw_extents__overlaps(const struct ptw_extents *x, uint64_t vaddr, uint64_t size)
{
	uint64_t end = vaddr + size < vaddr ? UINT64_MAX : vaddr + size;
	unsigned int lo = 0, hi = x->nr;

	/* The first that ends above @vaddr: sorted, they end in order too. */
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (x->e[mid].end <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return size && lo < x->nr && x->e[lo].vaddr < end;
}

const struct ptw_extent *ptw_extents__find(const struct ptw_extent *e, unsigned int nr,
					   uint64_t ip)
{
	unsigned int lo = 0, hi = nr;

	/* The first whose start is above @ip, then the one before it. */
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (e[mid].vaddr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && ip < e[lo - 1].end ? &e[lo - 1] : NULL;
}
