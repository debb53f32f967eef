// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libauxsample: what every backend produces, through the functions of
 * backend.h: the ring of the last taken branches (the virtual LBR), the
 * shadow call stack, statistics, errors and the flow records.
 */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

#define STACK_INITIAL	64
/*
 * Calls that never return (coroutines, a longjmp not seen) pile up in a
 * long stream: the oldest half goes beyond this, as no call chain shows
 * that many (perf's at most 127).
 */
#define STACK_MAX	1024

void auxsample__restart(struct auxsample_decoder *dec)
{
	uint64_t bytes = dec->stats.bytes;

	auxsample__skimmed(dec);
	dec->ring_next = 0;
	dec->ring_count = 0;
	dec->ring_pushed = 0;
	dec->depth = 0;
	dec->nr_errors = 0;
	auxsample_timing__reset(dec);
	memset(&dec->stats, 0, sizeof(dec->stats));
	dec->stats.size = sizeof(dec->stats);
	dec->stats.bytes = bytes;
	auxsample_late__reset(dec);
}

void auxsample__stretch(struct auxsample_decoder *dec, const struct auxsample_stats *stats)
{
	dec->nr_errors = 0;
	auxsample_timing__reset(dec);
	dec->stats = *stats;
}

/* One step of the flow, for a full-trace consumer. */
void auxsample__flow(struct auxsample_decoder *dec, struct auxsample_flow *flow)
{
	if (!dec->config.flow)
		return;
	flow->trace_id = dec->flow_trace_id;
	dec->config.flow(flow, dec->config.flow_context);
}

/* A branch that waited (late.c) keeps the cycles it was timed with meanwhile. */
void auxsample__ring_push(struct auxsample_decoder *dec, const struct auxsample_branch *br)
{
	struct auxsample_branch *slot = &dec->ring[dec->ring_next];

	auxsample__ring_put(dec, br->from, br->to, br->kind, br->flags);
	slot->cycles = br->cycles;
}

/* A taken branch with flow records to feed, or no ring. */
static noinline void
auxsample__add_branch_slow(struct auxsample_decoder *dec, uint64_t from, uint64_t to,
			   unsigned int kind, unsigned int flags)
{
	if (dec->config.flow && kind != AUXSAMPLE_BR_GAP) {
		struct auxsample_flow flow = {
			.type	= AUXSAMPLE_FLOW_BRANCH,
			.kind	= kind,
			.from	= from,
			.to	= to,
			.flags	= flags,
		};

		auxsample__flow(dec, &flow);
	}
	dec->stats.branches++;
	if (!dec->max)
		return;
	auxsample_timing__branch(dec);
	if (auxsample_late__active(dec))
		auxsample_late__add(dec, from, to, kind, flags);
	else
		auxsample__ring_put(dec, from, to, kind, flags);
}

void auxsample__add_branch(struct auxsample_decoder *dec, uint64_t from,
			   uint64_t to, unsigned int kind, unsigned int flags)
{
	/*
	 * Once per taken branch (the walker's hot path): the common cases
	 * need no stack frame, the others one call more.  Skimming (skim.c:
	 * no flow records) is the commonest.
	 */
	if (!dec->max && dec->skim.held) {
		dec->stats.branches++;
		auxsample__skim_branch(dec, from, to);
		return;
	}
	if (dec->config.flow || !dec->max) {
		auxsample__add_branch_slow(dec, from, to, kind, flags);
		return;
	}
	dec->stats.branches++;
	auxsample_timing__branch(dec);
	if (auxsample_late__active(dec))
		auxsample_late__add(dec, from, to, kind, flags);
	else
		auxsample__ring_put(dec, from, to, kind, flags);
}

/* What lies between @from and @to is unknown: no call stack survives. */
void auxsample__gap(struct auxsample_decoder *dec, uint64_t from, uint64_t to)
{
	struct auxsample_flow flow = {
		.type	= AUXSAMPLE_FLOW_GAP,
		.from	= from,
		.to	= to,
	};

	auxsample__flow(dec, &flow);
	dec->stats.gaps++;
	auxsample__skim_gap(dec);
	auxsample_late__stack_op(dec, false, 1);
	dec->depth = 0;
	/* The time across the gap is no branch's. */
	auxsample_timing__break(dec);
	if (!dec->max)
		return;
	/* One marker is enough between two stretches of known flow. */
	if (dec->ring_count) {
		unsigned int last = (dec->ring_next + dec->max - 1) % dec->max;

		if (dec->ring[last].kind == AUXSAMPLE_BR_GAP)
			return;
	} else if (!dec->stats.branches) {
		return;		/* nothing known before it: not a gap */
	}
	auxsample__add_branch(dec, from, to, AUXSAMPLE_BR_GAP,
			      to ? 0 : AUXSAMPLE_BRF_TO_UNKNOWN);
	dec->stats.branches--;
}

int auxsample__call(struct auxsample_decoder *dec, uint64_t ret_addr)
{
	if (dec->depth == STACK_MAX) {
		memmove(dec->stack, dec->stack + STACK_MAX / 2,
			STACK_MAX / 2 * sizeof(*dec->stack));
		dec->depth = STACK_MAX / 2;
		auxsample_late__stack_moved(dec);
		auxsample__skim_unsafe(dec);
	}
	if (dec->depth == dec->stack_cap) {
		unsigned int cap = dec->stack_cap ? dec->stack_cap * 2 : STACK_INITIAL;
		uint64_t *stack = realloc(dec->stack, cap * sizeof(*stack));
		uint64_t *chain;

		if (!stack)
			return -AUXSAMPLE_ERR_NOMEM;
		dec->stack = stack;
		chain = realloc(dec->chain, cap * sizeof(*chain));
		if (!chain)
			return -AUXSAMPLE_ERR_NOMEM;
		dec->chain = chain;
		dec->stack_cap = cap;
	}
	/* Nothing waits for the late-sample rule (late.c): no undo. */
	if (dec->late.seq > dec->late.committed)
		auxsample_late__stack_op(dec, true, 0);
	dec->stack[dec->depth++] = ret_addr;
	return 0;
}

/*
 * A return to @to unwinds to the frame that returns there.  A return to
 * none of them went into a frame entered before the snippet began: every
 * frame seen since was left without a return (longjmp ...).
 */
void auxsample__ret(struct auxsample_decoder *dec, uint64_t to)
{
	unsigned int i = dec->depth;

	if (dec->late.seq > dec->late.committed)
		auxsample_late__stack_op(dec, false, 0);
	while (i > 0) {
		if (dec->stack[--i] == to) {
			dec->depth = i;
			return;
		}
	}
	dec->stats.underflows++;
	dec->depth = 0;
}

void auxsample__error(struct auxsample_decoder *dec, uint64_t offset, int error,
		      int lib_error)
{
	struct auxsample_flow flow = {
		.type	= AUXSAMPLE_FLOW_ERROR,
		.kind	= -error,
		.from	= offset,
	};
	struct auxsample_decode_error *e;

	auxsample__flow(dec, &flow);
	dec->stats.errors++;
	if (dec->nr_errors == AUXSAMPLE_MAX_ERRORS)
		return;
	e = &dec->errors[dec->nr_errors++];
	e->offset = offset;
	e->error = error;
	e->lib_error = lib_error;
}

/*
 * The results of a decode: the ring newest first, and the call chain
 * innermost first, both at the sample point (the late branches waiting in
 * dec->late are left out).
 */
void auxsample__finish(struct auxsample_decoder *dec)
{
	unsigned int i, pos = dec->ring_next;

	/* Back round the ring without a division an entry (bench/README.md). */
	for (i = 0; i < dec->ring_count; i++) {
		pos = (pos ? pos : dec->max) - 1;
		dec->out[i] = dec->ring[pos];
	}
	dec->chain_depth = auxsample_late__chain(dec);
	dec->stats.late = dec->late.nr;
}

uint64_t auxsample__stack_top(const struct auxsample_decoder *dec)
{
	return dec->depth ? dec->stack[dec->depth - 1] : 0;
}

void auxsample__insns(struct auxsample_decoder *dec, uint64_t n)
{
	dec->stats.insns += n;
}

void auxsample__set_source(struct auxsample_decoder *dec, uint8_t trace_id)
{
	dec->flow_trace_id = trace_id;
}

struct auxsample_stats *auxsample__stats(struct auxsample_decoder *dec)
{
	return &dec->stats;
}

bool auxsample__enough(const struct auxsample_decoder *dec)
{
	return dec->max && dec->ring_count >= dec->max;
}

int64_t auxsample__thread(const struct auxsample_decoder *dec)
{
	return dec->tid;
}

int auxsample__read_memory(struct auxsample_decoder *dec, uint8_t *buf, size_t size,
			   uint64_t addr)
{
	return dec->config.read_memory(buf, size, addr, dec->config.context);
}
