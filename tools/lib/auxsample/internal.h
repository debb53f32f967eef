/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_INTERNAL_H
#define __AUXSAMPLE_INTERNAL_H

/*
 * The core's own: the decoder object and what only the core's files
 * (auxsample.c, lbr.c, cycles.c, image.c) share.  Backends see
 * backend.h alone.
 */
#include <stdbool.h>
#include <auxsample/auxsample.h>
#include "backend.h"

#define AUXSAMPLE_MAX_ERRORS	16

/* A taken branch waiting for its time (cycles.c): its flow index and ring slot. */
struct auxsample_untimed {
	uint64_t	idx;
	unsigned int	slot;
};

/* Cycles of the branches from timed packets (cycles.c). */
struct auxsample_timing {
	uint64_t			insns;		/* instructions of the flow so far */
	uint64_t			*ring_idx;	/* the flow index of each ring slot */
	struct auxsample_untimed	*untimed;	/* oldest first */
	unsigned int			nr_untimed;
	unsigned int			untimed_cap;
	/* the packets being read: their time, the last instruction they told of */
	uint64_t			pkt_time;
	uint64_t			pkt_idx;
	bool				pkt_timed;
	bool				pkt_exact;	/* sent with its last branch */
	/* the latest packet whose time and instruction are both known */
	uint64_t			anchor_time;
	uint64_t			anchor_idx;
	bool				have_anchor;
	uint64_t			last_time;	/* of the last branch timed */
	bool				last_valid;
	uint32_t			stretch;	/* of the cycle count (pt.c) */
	bool				enabled;	/* the backend times packets */
};

/* A decoder: its configuration, its backend, and what a decode produces. */
struct auxsample_decoder {
	struct auxsample_config		config;

	/* The last @max taken branches, a ring; @out newest first. */
	struct auxsample_branch		*ring;
	struct auxsample_branch		*out;
	unsigned int			ring_cap;
	unsigned int			ring_next;
	unsigned int			ring_count;
	unsigned int			max;

	/* Return addresses of the calls seen, innermost last. */
	uint64_t			*stack;
	uint64_t			*chain;
	unsigned int			stack_cap;
	unsigned int			depth;

	struct auxsample_stats		stats;
	int64_t				tid;	/* whose trace to decode, -1: any */
	struct auxsample_decode_error	errors[AUXSAMPLE_MAX_ERRORS];
	unsigned int			nr_errors;

	struct auxsample_timing		timing;

	/* The source whose elements are being decoded, for flow records. */
	uint8_t				flow_trace_id;

	const struct auxsample_backend	*backend;
	void				*priv;		/* the backend's state */
	bool				streaming;	/* between __stream_begin() and a __decode() */
};

void auxsample__finish(struct auxsample_decoder *dec);

void auxsample_timing__reset(struct auxsample_decoder *dec);
void auxsample_timing__exit(struct auxsample_decoder *dec);
int auxsample_timing__ring(struct auxsample_decoder *dec, unsigned int cap);
void auxsample_timing__insns(struct auxsample_decoder *dec, uint64_t n);
void auxsample_timing__branch(struct auxsample_decoder *dec, unsigned int slot);

#endif /* __AUXSAMPLE_INTERNAL_H */
