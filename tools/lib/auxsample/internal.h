/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_INTERNAL_H
#define __AUXSAMPLE_INTERNAL_H

/*
 * The core's own: the decoder object and what only the core's files
 * (auxsample.c, lbr.c, late.c, cycles.c, image.c) share.  Backends see
 * backend.h alone.
 */
#include <stdbool.h>
#include <auxsample/auxsample.h>
#include "backend.h"

#define AUXSAMPLE_MAX_ERRORS	16

/*
 * A taken branch waiting for its time (cycles.c): its flow index, and its
 * number in the decode (auxsample__branch_nr()): in the ring or still
 * waiting for the late-sample rule (late.c).
 */
struct auxsample_untimed {
	uint64_t	idx;
	uint64_t	nr;
};

/* Cycles of the branches from timed packets (cycles.c). */
/*
 * The timing indexes instructions by the decode's count (stats.insns):
 * only differences within a decode or a stream's stretch matter, and the
 * count starts again with the timing at each (auxsample__restart(),
 * auxsample__stretch()).  Backends add to it in their hot loops.
 */
struct auxsample_timing {
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
	bool				stretch_unknown; /* after a skim: take the next */
	bool				enabled;	/* the backend times packets */
	/* after a skim: anchors to wait for, and the first branch timed as a whole decode */
	unsigned int			converging;
	uint64_t			exact_from;
};

/* How to undo a change of the call stack (late.c). */
struct auxsample_late_op {
	uint64_t	seq;		/* after that many branches */
	uint64_t	slot;		/* a call: what stack[depth] held */
	unsigned int	depth;		/* before the change */
	bool		call;
};

/* The branches that may have come after the sample point (late.c). */
struct auxsample_late {
	struct auxsample_branch		*pending;	/* oldest first */
	unsigned int			nr;
	unsigned int			cap;
	struct auxsample_late_op	*ops;		/* oldest first */
	unsigned int			nr_ops;
	unsigned int			ops_cap;
	uint64_t			seq;		/* branches added */
	uint64_t			committed;	/* of them before the sample */
	uint64_t			prev_to;	/* the last one added: its target */
	bool				have_prev;
	bool				located;	/* a pending branch is from the IP */
	bool				chain_lost;	/* the stack moved under the ops */
};

/* What the late-sample rule would know of a skim (struct auxsample_skim.flags). */
#define AUXSAMPLE_SKIM_LAST		1U	/* a branch: last_from, last_to */
#define AUXSAMPLE_SKIM_GAP		2U	/* a gap since */
#define AUXSAMPLE_SKIM_BOUNDARY		4U	/* a boundary since: prev_to */
#define AUXSAMPLE_SKIM_COMMITTED	8U	/* ... that committed what waited */

/* A snippet's early part walked with the ring held (skim.c). */
struct auxsample_skim {
	unsigned int	held;		/* the ring's depth meanwhile, 0: not skimming */
	bool		done;		/* the ring came back */
	bool		unsafe;		/* a mark a whole decode keeps was left */
	unsigned int	flags;
	uint64_t	last_from;
	uint64_t	last_to;
	uint64_t	prev_to;
	uint64_t	pushed;		/* dec->ring_pushed when the ring came back */
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
	uint64_t			ring_pushed;	/* branches into the ring this decode */
	unsigned int			max;

	/* Return addresses of the calls seen, innermost last. */
	uint64_t			*stack;
	uint64_t			*chain;
	unsigned int			stack_cap;
	unsigned int			depth;
	unsigned int			chain_depth;	/* of @chain, at the sample point */

	struct auxsample_stats		stats;
	int64_t				tid;	/* whose trace to decode, -1: any */
	uint64_t			sample_ip;	/* of the next decodes, 0: none */
	struct auxsample_late		late;
	struct auxsample_decode_error	errors[AUXSAMPLE_MAX_ERRORS];
	unsigned int			nr_errors;

	struct auxsample_timing		timing;
	struct auxsample_skim		skim;

	/* The source whose elements are being decoded, for flow records. */
	uint8_t				flow_trace_id;

	const struct auxsample_backend	*backend;
	void				*priv;		/* the backend's state */
	bool				streaming;	/* from __stream_begin() to a __decode() */
	/* For the streams begun after: the trace brought in as needed; NULL, all there. */
	auxsample_fetch_fn		*fetch;
	void				*fetch_context;
	/* ... the stream's, set when it began */
	auxsample_fetch_fn		*stream_fetch;
	void				*stream_fetch_context;
};

/*
 * A branch into the ring, written in place (once per taken branch, the
 * walker's hot path): a copy of a struct just written would wait for the
 * stores to forward, and there is no division.
 */
static inline void auxsample__ring_put(struct auxsample_decoder *dec, uint64_t from,
				       uint64_t to, unsigned int kind, unsigned int flags)
{
	dec->ring[dec->ring_next] = (struct auxsample_branch){ from, to, kind, flags };
	if (++dec->ring_next == dec->max)
		dec->ring_next = 0;
	if (dec->ring_count < dec->max)
		dec->ring_count++;
	dec->ring_pushed++;
}

/* Whether the late-sample rule (late.c) holds the decode's branches back. */
static inline bool auxsample_late__active(const struct auxsample_decoder *dec)
{
	return dec->config.kernel_start && dec->sample_ip && dec->max && !dec->streaming;
}

void auxsample__finish(struct auxsample_decoder *dec);
void auxsample__ring_push(struct auxsample_decoder *dec, const struct auxsample_branch *br);
/*
 * The decode's @nr-th branch (from 1), where it is now: still waiting for
 * the late-sample rule, or in the ring; NULL once the ring overwrote it.
 * Every branch goes into the ring in order, through dec->late or not.
 * Inline: cycles.c looks up every branch it times.
 */
static inline struct auxsample_branch *
auxsample__branch_nr(struct auxsample_decoder *dec, uint64_t nr)
{
	uint64_t back;

	if (!nr)
		return NULL;
	if (nr > dec->ring_pushed) {
		nr -= dec->ring_pushed;
		return nr <= dec->late.nr ? &dec->late.pending[nr - 1] : NULL;
	}
	back = dec->ring_pushed - nr;
	if (back >= dec->ring_count)
		return NULL;
	/* back < ring_count <= max, ring_next < max: no division needed */
	back = dec->ring_next + dec->max - 1 - back;
	return &dec->ring[back >= dec->max ? back - dec->max : back];
}

void auxsample_late__reset(struct auxsample_decoder *dec);
void auxsample_late__exit(struct auxsample_decoder *dec);
void auxsample_late__add_slow(struct auxsample_decoder *dec, uint64_t from, uint64_t to,
			      unsigned int kind, unsigned int flags);
void auxsample_late__stack_op(struct auxsample_decoder *dec, bool call, uint64_t seq_after);
void auxsample_late__stack_moved(struct auxsample_decoder *dec);
unsigned int auxsample_late__chain(struct auxsample_decoder *dec);
static inline bool auxsample_late__user(const struct auxsample_decoder *dec, uint64_t addr)
{
	return addr && addr < dec->config.kernel_start;
}

/* Upstream's us_start() and the from/to half of ks_start(). */
static inline bool auxsample_late__starts_at(const struct auxsample_decoder *dec,
					     uint64_t from, uint64_t to)
{
	if (!auxsample_late__user(dec, dec->sample_ip))
		return from < dec->config.kernel_start || auxsample_late__user(dec, to);
	return auxsample_late__user(dec, to);
}

/*
 * A taken branch, the rule active.  Nothing waits, nothing is to undo,
 * and the rule starts at it: what the rest would leave (into the ring,
 * committed), without the copies.  Most branches of user-space samples
 * take this way, once per taken branch: inline, no struct built.
 */
static inline void auxsample_late__add(struct auxsample_decoder *dec, uint64_t from,
				       uint64_t to, unsigned int kind, unsigned int flags)
{
	struct auxsample_late *late = &dec->late;

	if (late->nr || late->nr_ops || !auxsample_late__starts_at(dec, from, to)) {
		auxsample_late__add_slow(dec, from, to, kind, flags);
		return;
	}
	auxsample__ring_put(dec, from, to, kind, flags);
	late->committed = ++late->seq;
	late->prev_to = to;
	late->have_prev = true;
	late->located = false;
}

/* What skim.c asks of the rule. */
bool auxsample_late__would_be_active(const struct auxsample_decoder *dec);
bool auxsample_late__keeps(const struct auxsample_decoder *dec);
bool auxsample_late__start_commits(const struct auxsample_decoder *dec, uint64_t from,
				   uint64_t to);
void auxsample_late__skim_boundary(struct auxsample_decoder *dec, uint64_t from, uint64_t to);
bool auxsample_late__skim_prev(const struct auxsample_decoder *dec, uint64_t *prev_to);

/* Skimming (skim.c): what the core's files tell it. */
void auxsample__skim_unsafe(struct auxsample_decoder *dec);

/* A branch while skimming: what the late-sample rule would keep of it. */
static inline void auxsample__skim_branch(struct auxsample_decoder *dec, uint64_t from,
					  uint64_t to)
{
	struct auxsample_skim *s = &dec->skim;

	s->flags = AUXSAMPLE_SKIM_LAST;
	s->last_from = from;
	s->last_to = to;
}

/* A gap while skimming: the ring would end with its marker until a branch. */
static inline void auxsample__skim_gap(struct auxsample_decoder *dec)
{
	if (dec->skim.held)
		dec->skim.flags |= AUXSAMPLE_SKIM_GAP;
}

void auxsample_timing__reset(struct auxsample_decoder *dec);
void auxsample_timing__converge(struct auxsample_decoder *dec);
void auxsample_timing__exit(struct auxsample_decoder *dec);
void auxsample_timing__branch_slow(struct auxsample_decoder *dec);

/*
 * The taken branch about to be added waits for its time, by its number
 * (the late-sample rule may keep it a while before the ring): once per
 * taken branch, inline while the list has room (it never grows past the
 * most that may wait: full, the slow path drops the oldest).
 */
static inline void auxsample_timing__branch(struct auxsample_decoder *dec)
{
	struct auxsample_timing *tm = &dec->timing;

	if (!tm->enabled || !dec->max)
		return;
	if (tm->nr_untimed == tm->untimed_cap) {
		auxsample_timing__branch_slow(dec);
		return;
	}
	tm->untimed[tm->nr_untimed++] = (struct auxsample_untimed){
		.idx = dec->stats.insns, .nr = dec->ring_pushed + dec->late.nr + 1,
	};
}

#endif /* __AUXSAMPLE_INTERNAL_H */
