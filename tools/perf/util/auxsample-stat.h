/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_STAT_H
#define __PERF_AUXSAMPLE_STAT_H

#include <stddef.h>
#include <linux/types.h>
#include <auxsample/auxsample.h>

struct auxsample_result;
struct perf_sample;

/* perf auxsample stat: what the decoded AUX samples of a file hold. */
struct auxsample_stat {
	u64	bytes;
	u64	bytes_before_sync;
	u64	syncs;
	u64	overlap;	/* with the CPU's previous snippet */
	u64	gaps;
	u64	late;		/* branches after the sample point, left out */
	u64	branches;
	u64	pt_fallbacks;	/* snippets the Intel PT walker left to libipt */
	u64	pt_blocks_built;	/* basic blocks it decoded from the code */
	u64	pt_blocks_evicted;	/* from the image's full block cache */
	u64	errors_by_kind[AUXSAMPLE_ERR_END - AUXSAMPLE_ERR_BASE];
	/* the previous snippet of each CPU, to measure how much they overlap */
	struct auxsample_stat_prev	*prev;
};

/* @sample's snippet and what its decode gave. */
int auxsample_stat__add(struct auxsample_stat *st, const struct perf_sample *sample,
			const struct auxsample_result *res);
void auxsample_stat__exit(struct auxsample_stat *st);

/* How many bytes @cur's snippet shares with the end of @prev's, of its start. */
size_t auxsample__overlap(const void *prev, size_t prev_size, const void *cur, size_t size);

#endif /* __PERF_AUXSAMPLE_STAT_H */
