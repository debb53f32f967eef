// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample stat's accounting: the bytes, sync points, gaps, errors
 * and branches of each decoded snippet, and how much of it the CPU's
 * previous snippet held already.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/zalloc.h>

#include "auxsample.h"
#include "auxsample-stat.h"
#include "sample.h"

#define STAT_MAX_CPUS	4096
#define OVERLAP_PROBE	32	/* bytes of a snippet looked for in the previous one */

struct auxsample_stat_prev {
	void	*data;
	size_t	size;
};

/*
 * How many bytes at the start of @cur the previous snippet of the same CPU
 * ended with: consecutive snippets of an overwrite-mode buffer share most
 * of their bytes at high sample rates.  The kernel pads snippets with
 * zeros to 8 bytes, so the end of the previous one may not match: the
 * overlap is what @cur has in common with @prev from where @prev first
 * holds @cur's first OVERLAP_PROBE bytes.  One memmem() and one compare:
 * linear in the sizes, whatever the bytes.
 *
 * Not upstream's intel_pt_find_overlap(): that one is Intel PT's only
 * (it cuts at PSBs and may compare TSCs), answers where the new data of
 * the second buffer starts rather than how much the two share, and stat
 * counts the overlap of ETM snippets too.
 */
size_t auxsample__overlap(const void *prev, size_t prev_size, const void *cur, size_t size)
{
	const u8 *p, *c = cur;
	size_t n, i;

	if (!prev || !cur || size < OVERLAP_PROBE || prev_size < OVERLAP_PROBE)
		return 0;
	p = memmem(prev, prev_size, cur, OVERLAP_PROBE);
	if (!p)
		return 0;
	n = min_t(size_t, prev_size - (size_t)(p - (const u8 *)prev), size);
	for (i = OVERLAP_PROBE; i < n && p[i] == c[i]; i++)
		;
	return i;
}

int auxsample_stat__add(struct auxsample_stat *st, const struct perf_sample *sample,
			const struct auxsample_result *res)
{
	struct auxsample_stat_prev *prev;

	st->branches += res->stats->branches;
	st->bytes += sample->aux_sample.size;
	st->bytes_before_sync += res->stats->bytes_before_sync;
	st->syncs += res->stats->syncs;
	st->gaps += res->stats->gaps;
	st->late += res->stats->late;
	st->pt_fallbacks += res->stats->pt_fallbacks;
	st->pt_blocks_built += res->stats->pt_blocks_built;
	st->pt_blocks_evicted += res->stats->pt_blocks_evicted;
	for (int i = 0; i < res->nr_errors; i++)
		st->errors_by_kind[auxsample__error_index(res->errors[i].error)]++;
	if (sample->cpu >= STAT_MAX_CPUS)
		return 0;
	if (!st->prev) {
		st->prev = calloc(STAT_MAX_CPUS, sizeof(*st->prev));
		if (!st->prev)
			return -ENOMEM;
	}
	prev = &st->prev[sample->cpu];
	st->overlap += auxsample__overlap(prev->data, prev->size, sample->aux_sample.data,
					  sample->aux_sample.size);
	free(prev->data);
	prev->data = memdup(sample->aux_sample.data, sample->aux_sample.size);
	prev->size = prev->data ? sample->aux_sample.size : 0;
	return 0;
}

void auxsample_stat__exit(struct auxsample_stat *st)
{
	if (!st->prev)
		return;
	for (int i = 0; i < STAT_MAX_CPUS; i++)
		free(st->prev[i].data);
	zfree(&st->prev);
}
