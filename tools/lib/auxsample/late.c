// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libauxsample: the branches decoded after the sample point are left out.
 *
 * A sample is written some time after its event: with kernel tracing the
 * snippet goes on through the PMI entry, perf's NMI handler and the AUX
 * copy (or, for a tracepoint, the call into perf), and its newest
 * branches are perf's own.  The rule is upstream perf's
 * thread_stack__br_sample_late(), applied as the branches come, newest
 * first:
 * - a user-space sample starts at the newest branch to user space;
 * - a kernel sample starts at the newest branch whose straight line to
 *   the next one passes the sample IP (to <= ip <= next's from), or that
 *   comes from or goes to user space (where the start must have been
 *   missed).
 * The branches after that start wait in @late->pending; a later start
 * commits them to the ring, and what waits when the decode ends is the
 * late part: counted, not shown.  The call stack is journalled as well,
 * so that the call chain is the one at the sample point.
 */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/*
 * Branches kept waiting at most: upstream decodes 1024 after a sample
 * (measured at about 200); half of them are committed when they are more,
 * as upstream's ring would lose them.
 */
#define LATE_MAX	16384
#define LATE_OPS_MAX	(2 * LATE_MAX)

void auxsample_late__reset(struct auxsample_decoder *dec)
{
	struct auxsample_late *late = &dec->late;

	late->nr = 0;
	late->nr_ops = 0;
	late->seq = 0;
	late->committed = 0;
	late->have_prev = false;
	late->chain_lost = false;
	late->located = false;
}

void auxsample_late__exit(struct auxsample_decoder *dec)
{
	free(dec->late.pending);
	free(dec->late.ops);
	memset(&dec->late, 0, sizeof(dec->late));
}

/* Ops of branches now committed are history. */
static void auxsample_late__drop_ops(struct auxsample_late *late)
{
	unsigned int i = 0;

	if (!late->nr_ops)
		return;
	while (i < late->nr_ops && late->ops[i].seq <= late->committed)
		i++;
	memmove(late->ops, late->ops + i, (late->nr_ops - i) * sizeof(*late->ops));
	late->nr_ops -= i;
}

/*
 * A branch from the sample's IP: the sample point is where it was taken.
 * A gap's source is only the last code decoded before the flow was lost.
 */
static bool auxsample_late__from_ip(const struct auxsample_decoder *dec,
				    const struct auxsample_branch *br)
{
	return br->kind != AUXSAMPLE_BR_GAP && br->from == dec->sample_ip;
}

/* The oldest @n waiting branches came before the sample: into the ring. */
static void auxsample_late__commit(struct auxsample_decoder *dec, unsigned int n)
{
	struct auxsample_late *late = &dec->late;

	for (unsigned int i = 0; i < n; i++)
		auxsample__ring_push(dec, &late->pending[i]);
	/* None may wait yet, before the list is allocated: no NULL to memmove(). */
	if (n < late->nr)
		memmove(late->pending, late->pending + n,
			(late->nr - n) * sizeof(*late->pending));
	late->nr -= n;
	late->located = false;
	for (unsigned int i = 0; i < late->nr; i++)
		late->located |= auxsample_late__from_ip(dec, &late->pending[i]);
	late->committed = late->seq - late->nr;
	auxsample_late__drop_ops(late);
}

/* Whether the rule holds branches back once the ring is there (skim.c). */
bool auxsample_late__would_be_active(const struct auxsample_decoder *dec)
{
	return dec->config.kernel_start && dec->sample_ip && !dec->streaming;
}

/*
 * Whether branches wait for the rule at most points of a decode: a kernel
 * sample's, in the kernel's flow (skim.c cannot skim those).
 */
bool auxsample_late__keeps(const struct auxsample_decoder *dec)
{
	return auxsample_late__would_be_active(dec) && !auxsample_late__user(dec, dec->sample_ip);
}

/* Whether the rule commits all that waits at the branch from @from to @to. */
bool auxsample_late__start_commits(const struct auxsample_decoder *dec, uint64_t from,
				   uint64_t to)
{
	return auxsample_late__starts_at(dec, from, to);
}

/* The target of the last branch or boundary the rule would have seen skimming. */
bool auxsample_late__skim_prev(const struct auxsample_decoder *dec, uint64_t *prev_to)
{
	const struct auxsample_skim *s = &dec->skim;

	*prev_to = s->flags & AUXSAMPLE_SKIM_BOUNDARY ? s->prev_to : s->last_to;
	return s->flags & (AUXSAMPLE_SKIM_BOUNDARY | AUXSAMPLE_SKIM_LAST);
}

/* auxsample__boundary() while skimming: whether it would commit, in dec->skim. */
void auxsample_late__skim_boundary(struct auxsample_decoder *dec, uint64_t from, uint64_t to)
{
	struct auxsample_skim *s = &dec->skim;
	uint64_t ip = dec->sample_ip, prev_to;
	bool have_prev = auxsample_late__skim_prev(dec, &prev_to);

	if (!auxsample_late__would_be_active(dec))
		return;
	if (auxsample_late__starts_at(dec, from, to) ||
	    (have_prev && !auxsample_late__user(dec, ip) && ip >= prev_to && ip <= from))
		s->flags |= AUXSAMPLE_SKIM_COMMITTED;
	s->prev_to = to;
	s->flags |= AUXSAMPLE_SKIM_BOUNDARY;
}

static bool auxsample_late__starts(const struct auxsample_decoder *dec,
				   const struct auxsample_branch *br)
{
	return auxsample_late__starts_at(dec, br->from, br->to);
}

static void auxsample_late__wait(struct auxsample_decoder *dec,
				 const struct auxsample_branch *br);

/* auxsample_late__add() of a branch that waits, or with something to undo. */
void auxsample_late__add_slow(struct auxsample_decoder *dec, uint64_t from, uint64_t to,
			      unsigned int kind, unsigned int flags)
{
	struct auxsample_late *late = &dec->late;

	/* Nothing waits, and the rule starts at it: the ops before are history. */
	if (!late->nr && auxsample_late__starts_at(dec, from, to)) {
		auxsample__ring_put(dec, from, to, kind, flags);
		late->committed = ++late->seq;
		late->prev_to = to;
		late->have_prev = true;
		late->located = false;
		auxsample_late__drop_ops(late);
		return;
	}
	auxsample_late__wait(dec, &(struct auxsample_branch){ from, to, kind, flags });
}

/* @br may come after the sample point: it waits, unless the rule starts at it. */
static void auxsample_late__wait(struct auxsample_decoder *dec, const struct auxsample_branch *br)
{
	struct auxsample_late *late = &dec->late;
	uint64_t ip = dec->sample_ip;
	bool window;

	if (late->nr == late->cap) {
		unsigned int cap = late->cap ? late->cap * 2 : 64;
		struct auxsample_branch *pending;

		if (late->cap == LATE_MAX) {
			auxsample_late__commit(dec, LATE_MAX / 2);
		} else {
			pending = realloc(late->pending, cap * sizeof(*pending));
			if (!pending) {
				/* No room to wait: as if it came before the sample. */
				auxsample_late__commit(dec, late->nr);
				auxsample__ring_push(dec, br);
				late->committed = ++late->seq;
				return;
			}
			late->pending = pending;
			late->cap = cap;
		}
	}
	/* The straight line from the last branch's target to this one passes ip. */
	window = late->have_prev && !auxsample_late__user(dec, ip) &&
		 ip >= late->prev_to && ip <= br->from;
	late->pending[late->nr++] = *br;
	late->seq++;
	late->prev_to = br->to;
	late->have_prev = true;
	late->located |= auxsample_late__from_ip(dec, br);

	/*
	 * The flow is lost (the kernel's code is not to be had, say) before
	 * the sample's interrupt was seen: the sample point may be anywhere
	 * after it.  What came before is not the newest before the sample:
	 * the gap stays, the newest entry.
	 */
	if (auxsample_late__starts(dec, br) || (br->kind == AUXSAMPLE_BR_GAP && !late->located))
		auxsample_late__commit(dec, late->nr);
	else if (window)
		auxsample_late__commit(dec, late->nr - 1);
}

/*
 * The trace ended after @from (@to 0) or began at @to (@from 0): upstream
 * records these as branch entries (trace end, trace begin) that its rule
 * sees, and shows; here they only move the start.
 */
void auxsample__boundary(struct auxsample_decoder *dec, uint64_t from, uint64_t to)
{
	struct auxsample_late *late = &dec->late;
	struct auxsample_branch br = { .from = from, .to = to };
	uint64_t ip = dec->sample_ip;

	if (!auxsample_late__active(dec)) {
		if (dec->skim.held)
			auxsample_late__skim_boundary(dec, from, to);
		return;
	}
	if (auxsample_late__starts(dec, &br) ||
	    (late->have_prev && !auxsample_late__user(dec, ip) &&
	     ip >= late->prev_to && ip <= from))
		auxsample_late__commit(dec, late->nr);
	late->prev_to = br.to;
	late->have_prev = true;
}

/*
 * The flow was lost, and the trace shows a branch to @to that no block
 * decoded (the TIP of an IRET back to user space, say): to user space,
 * it is one the rule starts at, so the sample point is not among the
 * branches waiting (a branch from the sample's IP among them was an
 * earlier visit, an earlier sample's interrupt).  True when it started.
 */
bool auxsample__lost_branch(struct auxsample_decoder *dec, uint64_t to)
{
	if (!auxsample_late__active(dec) || !auxsample_late__user(dec, to))
		return false;
	auxsample_late__commit(dec, dec->late.nr);
	return true;
}

/* Whether branches wait for the rule: only then does a lost one matter. */
bool auxsample__late_waiting(const struct auxsample_decoder *dec)
{
	return auxsample_late__active(dec) && dec->late.nr;
}

/* The call stack is about to change: how to undo it, if it may be late. */
void auxsample_late__stack_op(struct auxsample_decoder *dec, bool call, uint64_t seq_after)
{
	struct auxsample_late *late = &dec->late;
	struct auxsample_late_op *op;

	if (!auxsample_late__active(dec) || late->chain_lost ||
	    late->seq + seq_after <= late->committed)
		return;
	if (late->nr_ops == late->ops_cap) {
		unsigned int cap = late->ops_cap ? late->ops_cap * 2 : 64;
		struct auxsample_late_op *ops = NULL;

		if (cap <= LATE_OPS_MAX)
			ops = realloc(late->ops, cap * sizeof(*ops));
		if (!ops) {
			late->chain_lost = true;
			return;
		}
		late->ops = ops;
		late->ops_cap = cap;
	}
	op = &late->ops[late->nr_ops++];
	op->seq = late->seq + seq_after;
	op->depth = dec->depth;
	op->call = call;
	op->slot = call && dec->depth < dec->stack_cap ? dec->stack[dec->depth] : 0;
}

/* The stack was moved (auxsample__call()'s trim): no undo is possible. */
void auxsample_late__stack_moved(struct auxsample_decoder *dec)
{
	if (dec->late.nr_ops)
		dec->late.chain_lost = true;
}

/*
 * The call chain at the sample point, innermost first, into dec->chain:
 * the stack with the late branches' calls and returns undone.
 */
unsigned int auxsample_late__chain(struct auxsample_decoder *dec)
{
	struct auxsample_late *late = &dec->late;
	unsigned int depth = dec->depth, i;

	if (!late->nr_ops || !dec->stack_cap) {
		for (i = 0; i < depth; i++)
			dec->chain[i] = dec->stack[depth - 1 - i];
		return depth;
	}
	if (late->chain_lost)
		return 0;
	memcpy(dec->chain, dec->stack, dec->stack_cap * sizeof(*dec->chain));
	for (i = late->nr_ops; i > 0; i--) {
		const struct auxsample_late_op *op = &late->ops[i - 1];

		if (op->seq <= late->committed)
			break;
		if (op->call && op->depth < dec->stack_cap)
			dec->chain[op->depth] = op->slot;
		depth = op->depth;
	}
	for (i = 0; i < depth / 2; i++) {
		uint64_t ip = dec->chain[i];

		dec->chain[i] = dec->chain[depth - 1 - i];
		dec->chain[depth - 1 - i] = ip;
	}
	return depth;
}
