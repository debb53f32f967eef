// SPDX-License-Identifier: GPL-2.0
/*
 * Branch stacks summed up for the profile-guided optimisers, the way they
 * sum up LBR samples themselves: perf2bolt's DataAggregator (branches,
 * and the straight-line runs from one branch's target to the next
 * branch's source, 'internal' when the older branch came from the
 * function that the run is in) and simpleperf inject's AutoFDO output
 * (ranges and branches per binary, a target in another binary as 0).
 *
 * Writing the sums directly spares perf2bolt its perf script pass, which
 * is what makes it slow on large files.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/err.h>
#include <linux/list.h>
#include <linux/string.h>
#include <linux/zalloc.h>

#include "auxsample-profile.h"
#include "addr_location.h"
#include "branch.h"
#include "build-id.h"
#include "dso.h"
#include "event.h"
#include "hashmap.h"
#include "map.h"
#include "symbol.h"
#include "thread.h"

/* How often a branch was taken, or a straight-line run ran, in a binary. */
struct profile_count {
	u64	a;		/* branch: from, run: first address */
	u64	b;		/* branch: to, run: last address (the next branch's) */
	u64	count;
	/* runs: entered by a branch from another function (BOLT's 'f') */
	u64	extern_count;
};

struct profile_dso {
	struct list_head	node;
	struct dso		*dso;
	struct hashmap		*branches;
	struct hashmap		*runs;
};

struct auxsample_profile {
	struct list_head	dsos;		/* struct profile_dso */
};

/* Where a branch address is: its binary, the address there, its function. */
struct profile_where {
	struct dso	*dso;		/* NULL: no binary known */
	u64		addr;		/* as objdump shows it */
	struct symbol	*sym;
};

static size_t profile_count__hash(long key, void *ctx __maybe_unused)
{
	const struct profile_count *c = (const void *)key;

	return c->a * 31 + c->b;
}

static bool profile_count__equal(long key1, long key2, void *ctx __maybe_unused)
{
	const struct profile_count *c1 = (const void *)key1, *c2 = (const void *)key2;

	return c1->a == c2->a && c1->b == c2->b;
}

static void profile_counts__free(struct hashmap *map)
{
	struct hashmap_entry *cur;
	size_t bkt;

	if (IS_ERR_OR_NULL(map))
		return;
	hashmap__for_each_entry(map, cur, bkt)
		free(cur->pvalue);
	hashmap__free(map);
}

struct auxsample_profile *auxsample_profile__new(void)
{
	struct auxsample_profile *p = zalloc(sizeof(*p));

	if (p)
		INIT_LIST_HEAD(&p->dsos);
	return p;
}

void auxsample_profile__delete(struct auxsample_profile *p)
{
	struct profile_dso *pd, *tmp;

	if (!p)
		return;
	list_for_each_entry_safe(pd, tmp, &p->dsos, node) {
		list_del(&pd->node);
		profile_counts__free(pd->branches);
		profile_counts__free(pd->runs);
		dso__put(pd->dso);
		free(pd);
	}
	free(p);
}

static struct profile_dso *auxsample_profile__dso(struct auxsample_profile *p, struct dso *dso)
{
	struct profile_dso *pd;

	list_for_each_entry(pd, &p->dsos, node) {
		if (RC_CHK_EQUAL(pd->dso, dso))
			return pd;
	}
	pd = zalloc(sizeof(*pd));
	if (!pd)
		return NULL;
	pd->branches = hashmap__new(profile_count__hash, profile_count__equal, NULL);
	pd->runs = hashmap__new(profile_count__hash, profile_count__equal, NULL);
	if (IS_ERR(pd->branches) || IS_ERR(pd->runs)) {
		profile_counts__free(pd->branches);
		profile_counts__free(pd->runs);
		free(pd);
		return NULL;
	}
	pd->dso = dso__get(dso);
	list_add_tail(&pd->node, &p->dsos);
	return pd;
}

static int profile_counts__add(struct hashmap *map, u64 a, u64 b, bool external)
{
	struct profile_count key = { .a = a, .b = b }, *c;

	if (!hashmap__find(map, &key, &c)) {
		c = memdup(&key, sizeof(key));
		if (!c)
			return -ENOMEM;
		if (hashmap__add(map, c, c)) {
			free(c);
			return -ENOMEM;
		}
	}
	c->count++;
	if (external)
		c->extern_count++;
	return 0;
}

static void profile_where__find(struct profile_where *w, struct thread *thread, u64 ip)
{
	struct addr_location al;

	memset(w, 0, sizeof(*w));
	if (!ip)
		return;
	addr_location__init(&al);
	thread__find_symbol(thread, PERF_RECORD_MISC_USER, ip, &al);
	if (al.map && map__dso(al.map)) {
		/* The thread's maps hold the dso and its symbols. */
		w->dso = map__dso(al.map);
		w->addr = map__rip_2objdump(al.map, al.addr);
		w->sym = al.sym;
	}
	addr_location__exit(&al);
}

/* A taken branch counts in each binary it touches, the other end 0 there. */
static int auxsample_profile__add_branch(struct auxsample_profile *p,
					 const struct profile_where *from,
					 const struct profile_where *to)
{
	const struct profile_where *ends[2] = { from, to };

	for (int i = 0; i < 2; i++) {
		struct dso *dso = ends[i]->dso;
		struct profile_dso *pd;
		int err;

		if (!dso || (i == 1 && RC_CHK_EQUAL(dso, from->dso)))
			continue;
		pd = auxsample_profile__dso(p, dso);
		if (!pd)
			return -ENOMEM;
		err = profile_counts__add(pd->branches,
					  RC_CHK_EQUAL(from->dso, dso) ? from->addr : 0,
					  RC_CHK_EQUAL(to->dso, dso) ? to->addr : 0, false);
		if (err)
			return err;
	}
	return 0;
}

/* A gap in the trace: what lies between its ends is unknown. */
static bool branch_entry__is_gap(const struct branch_entry *e)
{
	return e->flags.type == PERF_BR_UNKNOWN;
}

int auxsample_profile__add(struct auxsample_profile *p, struct thread *thread,
			   const struct branch_stack *bs)
{
	/* The older branch's ends: a run starts at its target. */
	struct profile_where older_from = {}, older_to = {}, from, to;
	int err = 0;

	for (int i = (int)bs->nr - 1; i >= 0 && !err; i--) {
		const struct branch_entry *e = &bs->entries[i];
		bool run = i < (int)bs->nr - 1 && !branch_entry__is_gap(&e[1]);

		if (branch_entry__is_gap(e))
			continue;
		profile_where__find(&from, thread, e->from);
		profile_where__find(&to, thread, e->to);
		/* From the older branch's target to this branch, in one binary. */
		if (run && older_to.dso && RC_CHK_EQUAL(older_to.dso, from.dso)) {
			struct profile_dso *pd = auxsample_profile__dso(p, from.dso);
			bool external = !older_to.sym || older_from.sym != older_to.sym;

			err = pd ? profile_counts__add(pd->runs, older_to.addr, from.addr, external)
				 : -ENOMEM;
		}
		if (!err)
			err = auxsample_profile__add_branch(p, &from, &to);
		older_from = from;
		older_to = to;
	}
	return err;
}

int auxsample_profile__add_range(struct auxsample_profile *p, struct dso *dso, u64 first,
				 u64 last)
{
	struct profile_dso *pd = auxsample_profile__dso(p, dso);

	return pd ? profile_counts__add(pd->runs, first, last, false) : -ENOMEM;
}

int auxsample_profile__add_taken(struct auxsample_profile *p, struct dso *dso, u64 from, u64 to)
{
	struct profile_dso *pd = auxsample_profile__dso(p, dso);

	return pd ? profile_counts__add(pd->branches, from, to, false) : -ENOMEM;
}

static int profile_count__cmp(const void *p1, const void *p2)
{
	const struct profile_count *c1 = *(const struct profile_count * const *)p1;
	const struct profile_count *c2 = *(const struct profile_count * const *)p2;

	if (c1->a != c2->a)
		return c1->a < c2->a ? -1 : 1;
	if (c1->b != c2->b)
		return c1->b < c2->b ? -1 : 1;
	return 0;
}

/* The counts of @map sorted by address, for output that diffs well; NULL: no memory. */
static struct profile_count **profile_counts__sorted(struct hashmap *map, size_t *nr)
{
	struct profile_count **sorted;
	struct hashmap_entry *cur;
	size_t bkt, i = 0;

	*nr = hashmap__size(map);
	sorted = calloc(*nr ?: 1, sizeof(*sorted));
	if (!sorted)
		return NULL;
	hashmap__for_each_entry(map, cur, bkt)
		sorted[i++] = cur->pvalue;
	qsort(sorted, *nr, sizeof(*sorted), profile_count__cmp);
	return sorted;
}

/* @binary: the dso's path, the path of the same file (./prog), or its name. */
static bool profile_dso__is(const struct profile_dso *pd, const char *binary,
			    const char *real)
{
	const char *name = dso__long_name(pd->dso);

	if (!strcmp(name, binary) || (real && !strcmp(name, real)))
		return true;
	return !strchr(binary, '/') && !strcmp(dso__short_name(pd->dso), binary);
}

int auxsample_profile__write_bolt(struct auxsample_profile *p, FILE *f, const char *binary)
{
	struct profile_dso *pd = NULL, *pos;
	char *real = realpath(binary, NULL);
	struct profile_count **sorted;
	size_t nr;

	list_for_each_entry(pos, &p->dsos, node) {
		if (profile_dso__is(pos, binary, real)) {
			pd = pos;
			break;
		}
	}
	free(real);
	if (!pd)
		return -ENOENT;

	sorted = profile_counts__sorted(pd->branches, &nr);
	if (!sorted)
		return -ENOMEM;
	/* PT and ETM say nothing of mispredictions: 0. */
	for (size_t i = 0; i < nr; i++)
		fprintf(f, "B %" PRIx64 " %" PRIx64 " %" PRIu64 " 0\n",
			sorted[i]->a, sorted[i]->b, sorted[i]->count);
	free(sorted);

	sorted = profile_counts__sorted(pd->runs, &nr);
	if (!sorted)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		const struct profile_count *c = sorted[i];

		if (c->count > c->extern_count)
			fprintf(f, "F %" PRIx64 " %" PRIx64 " %" PRIu64 "\n",
				c->a, c->b, c->count - c->extern_count);
		if (c->extern_count)
			fprintf(f, "f %" PRIx64 " %" PRIx64 " %" PRIu64 "\n",
				c->a, c->b, c->extern_count);
	}
	free(sorted);
	return ferror(f) ? -EIO : 0;
}

/*
 * "<n>" then "<a><sep><b>:<count>" lines.  Runs backwards are lost trace,
 * left out; a range whose end is in no binary (0) stays, as simpleperf's.
 */
static int profile_counts__write_autofdo(struct hashmap *map, FILE *f, const char *sep,
					 bool ranges)
{
	struct profile_count **sorted;
	size_t nr, n = 0;

	sorted = profile_counts__sorted(map, &nr);
	if (!sorted)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		/* Branches count in their source's binary, as simpleperf's. */
		if (ranges ? sorted[i]->a <= sorted[i]->b || !sorted[i]->b : sorted[i]->a != 0)
			sorted[n++] = sorted[i];
	}
	fprintf(f, "%zu\n", n);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%" PRIx64 "%s%" PRIx64 ":%" PRIu64 "\n", sorted[i]->a, sep,
			sorted[i]->b, sorted[i]->count);
	free(sorted);
	return 0;
}

/* simpleperf's build-id comment: 20 bytes, zero-padded. */
#define PROFILE_BUILD_ID_SIZE	20

int auxsample_profile__write_autofdo(struct auxsample_profile *p, FILE *f)
{
	char bid[PROFILE_BUILD_ID_SIZE * 2 + 1];
	struct profile_dso *pd;
	int err;

	list_for_each_entry(pd, &p->dsos, node) {
		const struct build_id *id = dso__bid(pd->dso);

		err = profile_counts__write_autofdo(pd->runs, f, "-", true);
		if (err)
			return err;
		fprintf(f, "0\n");
		err = profile_counts__write_autofdo(pd->branches, f, "->", false);
		if (err)
			return err;
		if (dso__has_build_id(pd->dso)) {
			for (size_t i = 0; i < PROFILE_BUILD_ID_SIZE; i++)
				sprintf(bid + 2 * i, "%02x", i < id->size ? id->data[i] : 0);
			fprintf(f, "// build_id: 0x%s\n", bid);
		}
		fprintf(f, "// %s\n\n", dso__long_name(pd->dso));
	}
	return ferror(f) ? -EIO : 0;
}
