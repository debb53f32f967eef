/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_SYMCACHE_H
#define __PERF_AUXSAMPLE_SYMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

struct dso;
struct hashmap;
struct maps;
struct symbol;
struct thread;

/* A code address as perf report keys it: the dso and the offset in it. */
struct auxsample_addr {
	struct dso	*dso;	/* NULL: in no map (key); held by the cache */
	u64		off;	/* dso-relative, or the address without a dso (key) */
	u64		ip;	/* the address where first seen; 0: unknown */
	struct symbol	*sym;	/* lives as long as the dso */
	u64		symoff;
};

/*
 * Resolved addresses: loops show the same few branches in sample after
 * sample, and a lookup through the thread's maps costs more than the
 * decoding.  An entry holds while its process's maps do: sideband starts
 * a new generation (auxsample_symcache__flush()).
 */
struct auxsample_symcache_entry {
	/*
	 * With the process: perf may give a thread other maps when it learns
	 * its process, with no sideband, and the freed maps' address may
	 * come back.
	 */
	const struct maps	*maps;
	pid_t			pid;
	u32			text_len;
	u64			generation;	/* 0: empty */
	struct auxsample_addr	a;
	/* perf auxsample script's text of it, made on first use (auxsample-print.c) */
	char			*text;
	u32			name_len;	/* of a.sym's name, 0 without one */
	/* a return address: the call before it, decoded once (by its user) */
	bool			site_known;
	u64			site;
	u64			target;
};

#define AUXSAMPLE_SYMCACHE_SIZE	8192	/* entries, a power of two */

struct auxsample_symcache {
	struct auxsample_symcache_entry	*entries;
	/* the cache's own reference to each dso it names */
	struct hashmap			*held_dsos;
	u64				generation;
};

/* The entry @ip takes in @cache (which has them). */
static inline struct auxsample_symcache_entry *
auxsample_symcache__slot(struct auxsample_symcache *cache, u64 ip)
{
	return &cache->entries[(ip ^ (ip >> 12)) & (AUXSAMPLE_SYMCACHE_SIZE - 1)];
}

/*
 * @ip's entry in @cache, where it holds one for the process of @maps and
 * @pid (its thread's), or NULL: inline, for the lookups of each line of
 * perf auxsample script, most of which hit.  Valid until the next lookup.
 */
static inline struct auxsample_symcache_entry *
auxsample_symcache__hit(struct auxsample_symcache *cache, const struct maps *maps, pid_t pid,
			u64 ip)
{
	struct auxsample_symcache_entry *e;

	if (!cache->entries)
		return NULL;
	e = auxsample_symcache__slot(cache, ip);
	if (e->generation == cache->generation + 1 && e->maps == maps && e->pid == pid &&
	    e->a.ip == ip)
		return e;
	return NULL;
}

/*
 * @ip of @thread, resolved: its entry in @cache, or, without memory for
 * the cache, @tmp filled in.  Valid until the next lookup.
 */
struct auxsample_symcache_entry *auxsample_symcache__find(struct auxsample_symcache *cache,
							  struct thread *thread, u64 ip,
							  struct auxsample_symcache_entry *tmp);
/* auxsample_symcache__find()'s address, into @a. */
void auxsample_symcache__resolve(struct auxsample_symcache *cache, struct auxsample_addr *a,
				 struct thread *thread, u64 ip);

/* Sideband changed a process: nothing cached holds any more. */
static inline void auxsample_symcache__flush(struct auxsample_symcache *cache)
{
	cache->generation++;
}

/* The entries, and the references to the dsos they name. */
void auxsample_symcache__exit(struct auxsample_symcache *cache);

#endif /* __PERF_AUXSAMPLE_SYMCACHE_H */
