// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libauxsample: skimming, the early part of a snippet walked for its flow
 * only.
 *
 * A 64-deep virtual LBR of a 4 KiB Intel PT snippet is its last 64 taken
 * branches, but the snippet is decoded from its PSB, some thousands of
 * branches before: each goes into the ring, the late-sample rule and the
 * timing, only to be pushed out.  A backend that knows a point from which
 * enough branches are left (pt-walk-skim.c counts them in the packets)
 * walks up to it with the ring held: the branches are counted and the
 * call stack kept, nothing else.  From that point on, the decode gives
 * what a whole decode gives, but for its first branches:
 * - the late-sample rule: none of the skimmed branches may still wait,
 *   so the ring comes back only after a branch the rule starts at (a
 *   whole decode commits everything there, late.c), and the rule goes on
 *   from what it would know of the last branch and trace boundary; a
 *   kernel sample's rule keeps kernel branches waiting, so its decodes
 *   are not skimmed;
 * - the timing: the anchors before the point are not there, so the
 *   cycles of the branches up to the second anchor after it may differ
 *   (cycles.c: auxsample_timing__converge());
 * - the ring holds no branch from before the point.
 * - a gap's marker would be the ring's newest entry (and the late-sample
 *   rule's undo record of the call stack would wait) until a branch, so
 *   the ring comes back only after one.
 * So the result is the whole decode's if the ring then fills with
 * branches timed alike, and the stack was not trimmed on the way (the
 * rule's undo records would be lost for good).
 * auxsample__skimmed() says whether it was so; if not the backend decodes
 * again, whole.
 */
#include "internal.h"

/* The ring held: 0 if the decode cannot skim, else its depth. */
unsigned int auxsample__skim(struct auxsample_decoder *dec)
{
	if (dec->skim.held || !dec->max || dec->config.flow || auxsample_late__keeps(dec))
		return 0;
	dec->skim = (struct auxsample_skim){ .held = dec->max };
	dec->max = 0;
	return dec->skim.held;
}

/* The ring back, unless a skimmed branch would still wait (then false). */
bool auxsample__unskim(struct auxsample_decoder *dec)
{
	struct auxsample_skim *s = &dec->skim;
	struct auxsample_late *late = &dec->late;

	if (!s->held || (s->flags & AUXSAMPLE_SKIM_GAP))
		return false;
	if (auxsample_late__would_be_active(dec) && (s->flags & AUXSAMPLE_SKIM_LAST) &&
	    !(s->flags & AUXSAMPLE_SKIM_COMMITTED) &&
	    !auxsample_late__start_commits(dec, s->last_from, s->last_to))
		return false;
	dec->max = s->held;
	s->held = 0;
	s->done = true;
	s->pushed = dec->ring_pushed;
	auxsample_late__reset(dec);
	late->have_prev = auxsample_late__skim_prev(dec, &late->prev_to);
	auxsample_timing__converge(dec);
	return true;
}

/* auxsample__add_branch() while skimming, @n times over. */
void auxsample__skim_taken(struct auxsample_decoder *dec, uint64_t n, uint64_t from,
			   uint64_t to)
{
	dec->stats.branches += n;
	auxsample__skim_branch(dec, from, to);
}

/* A trimmed stack while skimming: the late-sample rule's undo is lost for good. */
void auxsample__skim_unsafe(struct auxsample_decoder *dec)
{
	if (dec->skim.held)
		dec->skim.unsafe = true;
}

/*
 * The decode (or a stream's stretch) ended: the ring back in any case,
 * and whether what it gives is what a whole decode would have given: the
 * ring full of branches from after the skim, timed as in a whole decode.
 */
bool auxsample__skimmed(struct auxsample_decoder *dec)
{
	struct auxsample_skim *s = &dec->skim;
	bool ok = s->done && !s->unsafe && dec->ring_pushed - s->pushed >= dec->max &&
		  dec->ring_pushed - dec->max + 1 >= dec->timing.exact_from;

	if (s->held)
		dec->max = s->held;
	s->held = 0;
	s->done = false;
	return ok;
}
