/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_HOT_H
#define __PERF_AUXSAMPLE_HOT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "auxsample-symcache.h"
#include "hashmap.h"

struct auxsample_config;
struct auxsample_result;
struct strlist;
struct thread;

/*
 * perf auxsample report: hot paths in the virtual LBRs of all AUX samples:
 * branch edges, loops with their trip counts, basic blocks and calls, in
 * four sections.
 */
enum auxsample_hot_section_id {
	AUXSAMPLE_HOT_EDGES,
	AUXSAMPLE_HOT_LOOPS,
	AUXSAMPLE_HOT_BLOCKS,
	AUXSAMPLE_HOT_CALLS,
	AUXSAMPLE_HOT_NR_SECTIONS,
};

/* What --show calls the sections. */
extern const char * const auxsample_hot_section_names[AUXSAMPLE_HOT_NR_SECTIONS];

struct auxsample_hot_item {
	struct auxsample_addr	a;	/* edge: from, loop: head, block: start, call: caller */
	struct auxsample_addr	b;	/* edge: to, loop: tail, block: end, call: callee */
	u32			kind;	/* edge: enum auxsample_branch_kind */
	u64			count;	/* times taken, samples with the loop, times run, calls */
	u64			seen;	/* the last sample that counted it */
	union {
		struct {
			u64	back_edges;	/* in the samples that count */
			u64	runs;		/* runs seen from entry to exit */
			u64	trips;		/* back edges taken in those runs */
			u64	trips_max;
			u64	partial_max;	/* of runs cut by the ends of the LBR */
		} loop;
		struct {
			u32	insns;		/* 0: unknown */
			u32	bytes;		/* 0: unknown */
		} block;
		struct {
			u64	samples;	/* whose call chain holds the call */
		} call;
	};
};

struct auxsample_hot_section {
	struct hashmap	items;		/* struct auxsample_hot_item, by its key */
	u64		total;		/* what percentages are of */
};

struct auxsample_hot_br;
struct auxsample_hot_run;

struct auxsample_hot {
	/* the walk's: addresses are resolved once for all four sections */
	struct auxsample_symcache		*symcache;
	const struct auxsample_config		*config;	/* the trace's */
	struct auxsample_hot_section		sections[AUXSAMPLE_HOT_NR_SECTIONS];
	struct auxsample_hot_br			*brs;
	struct auxsample_hot_run		*runs;	/* one per branch at most */
	unsigned int				brs_max;
	u64					decoded;
	u64					branches;
};

void auxsample_hot__init(struct auxsample_hot *h, struct auxsample_symcache *symcache,
			 const struct auxsample_config *config);
void auxsample_hot__exit(struct auxsample_hot *h);

/* A decoded sample, whose IP is @ip, into the four sections. */
int auxsample_hot__add(struct auxsample_hot *h, struct thread *thread, u64 ip,
		       const struct auxsample_result *res);

/* What to show of each section: --dsos, --symbols, --percent-limit, -n. */
struct auxsample_hot_filter {
	struct strlist	*dsos;		/* items with an end in these */
	struct strlist	*symbols;	/* items with an end in these */
	double		percent_limit;
	unsigned int	max_entries;	/* 0: all */
};

/* @item's share of its section. */
double auxsample_hot__percent(const struct auxsample_hot *h, enum auxsample_hot_section_id id,
			      const struct auxsample_hot_item *item);
/*
 * The items of section @id to show, hottest first, after @f: *nr of them,
 * in an array to free; NULL without memory.
 */
struct auxsample_hot_item **auxsample_hot__items(struct auxsample_hot *h,
						 enum auxsample_hot_section_id id,
						 const struct auxsample_hot_filter *f, size_t *nr);

#endif /* __PERF_AUXSAMPLE_HOT_H */
