// SPDX-License-Identifier: GPL-2.0
/*
 * The code addresses of decoded samples, resolved to dso, offset and
 * symbol once for each process generation: one cache for the symbols that
 * perf auxsample script prints and the addresses perf auxsample report
 * keys its tables by.
 */
#include <stdlib.h>
#include <string.h>
#include <linux/err.h>
#include <linux/zalloc.h>

#include "addr_location.h"
#include "auxsample-symcache.h"
#include "dso.h"
#include "event.h"
#include "hashmap.h"
#include "machine.h"
#include "map.h"
#include "maps.h"
#include "symbol.h"
#include "thread.h"

static size_t held_dso__hash(long key, void *ctx __maybe_unused)
{
	return key >> 4;
}

static bool held_dso__equal(long key1, long key2, void *ctx __maybe_unused)
{
	return key1 == key2;
}

/*
 * The cache's own reference to @dso, one for all its addresses, kept
 * until the cache goes: the map's reference goes with the map when its
 * thread exits, and with reference count checking each map holds a
 * wrapper of its own, freed with it.  Keyed by the dso itself, so that
 * addresses in one dso share one pointer and compare equal.  NULL
 * without memory.
 */
static struct dso *auxsample_symcache__hold_dso(struct auxsample_symcache *cache,
						struct dso *dso)
{
	long key = (long)RC_CHK_ACCESS(dso);
	struct dso *held;

	if (!cache->held_dsos) {
		cache->held_dsos = hashmap__new(held_dso__hash, held_dso__equal, NULL);
		if (IS_ERR(cache->held_dsos)) {
			cache->held_dsos = NULL;
			return NULL;
		}
	}
	if (hashmap__find(cache->held_dsos, key, &held))
		return held;
	held = dso__get(dso);
	if (hashmap__add(cache->held_dsos, key, held)) {
		dso__put(held);
		return NULL;
	}
	return held;
}

static void auxsample_symcache__resolve_uncached(struct auxsample_symcache *cache,
						 struct auxsample_addr *a,
						 struct thread *thread, u64 ip)
{
	struct machine *machine = maps__machine(thread__maps(thread));
	/* Kernel-traced snippets have kernel branches: the kernel's symbols. */
	u8 cpumode = machine__kernel_ip(machine, ip) ? PERF_RECORD_MISC_KERNEL :
						       PERF_RECORD_MISC_USER;
	struct addr_location al;

	memset(a, 0, sizeof(*a));
	a->ip = ip;
	a->off = ip;
	if (!ip)
		return;
	addr_location__init(&al);
	thread__find_symbol(thread, cpumode, ip, &al);
	if (al.map && map__dso(al.map))
		a->dso = auxsample_symcache__hold_dso(cache, map__dso(al.map));
	if (a->dso) {
		/* Its symbols live as long as it does. */
		a->off = map__map_ip(al.map, ip);
		if (al.sym) {
			a->sym = al.sym;
			a->symoff = a->off - al.sym->start;
		}
	}
	addr_location__exit(&al);
}

/*
 * @e, a slot of @cache or the caller's @tmp, resolved for @ip of @thread.
 * Out of line: the lookups that hit (most) need none of its stack.
 */
static noinline void auxsample_symcache__fill(struct auxsample_symcache *cache,
					      struct auxsample_symcache_entry *e,
					      const struct auxsample_symcache_entry *tmp,
					      struct thread *thread, u64 ip)
{
	auxsample_symcache__resolve_uncached(cache, &e->a, thread, ip);
	if (e != tmp)
		zfree(&e->text);
	e->text = NULL;
	e->maps = thread__maps(thread);
	e->pid = thread__pid(thread);
	e->generation = cache->generation + 1;
	e->name_len = e->a.sym ? strlen(e->a.sym->name) : 0;
	e->site_known = false;
}

struct auxsample_symcache_entry *auxsample_symcache__find(struct auxsample_symcache *cache,
							  struct thread *thread, u64 ip,
							  struct auxsample_symcache_entry *tmp)
{
	struct auxsample_symcache_entry *e;

	e = auxsample_symcache__hit(cache, thread__maps(thread), thread__pid(thread), ip);
	if (e)
		return e;
	if (!cache->entries)
		cache->entries = calloc(AUXSAMPLE_SYMCACHE_SIZE, sizeof(*cache->entries));
	e = tmp;
	if (cache->entries)
		e = auxsample_symcache__slot(cache, ip);
	auxsample_symcache__fill(cache, e, tmp, thread, ip);
	return e;
}

void auxsample_symcache__resolve(struct auxsample_symcache *cache, struct auxsample_addr *a,
				 struct thread *thread, u64 ip)
{
	struct auxsample_symcache_entry tmp;

	*a = auxsample_symcache__find(cache, thread, ip, &tmp)->a;
}

void auxsample_symcache__exit(struct auxsample_symcache *cache)
{
	struct hashmap_entry *cur;
	size_t bkt;

	for (int i = 0; cache->entries && i < AUXSAMPLE_SYMCACHE_SIZE; i++)
		free(cache->entries[i].text);
	zfree(&cache->entries);
	if (!cache->held_dsos)
		return;
	hashmap__for_each_entry(cache->held_dsos, cur, bkt)
		dso__put(cur->pvalue);
	hashmap__free(cache->held_dsos);
	cache->held_dsos = NULL;
}
