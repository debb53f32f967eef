// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cycles of the virtual LBR, as LBR counts them: for each taken branch,
 * the core cycles since the taken branch before it.
 *
 * Intel PT's CYC packets count the core cycles between packets; they time
 * packets, not branches.  A packet goes out
 * at the last branch it tells of (the last bit of a TNT, the branch of a
 * TIP, the interrupted instruction of a FUP), and the decoder reads its
 * time when it resolves the first branch from it; so a packet's time is
 * known, with the instruction that sent it, when the decoder reads a
 * later time (or the trace stops).  Those (instruction, time) points are
 * the anchors; a branch between two anchors gets the time that lies
 * between them in the proportion of its instruction count, and its
 * cycles are its time less the time of the branch before it.  Where the
 * time per instruction is even between two packets that is exact.
 *
 * Each branch is timed once, when an anchor at or after it comes, and
 * written into the ring slot it still holds.  A sync point, a trace gap or
 * a trace start (TIP.PGE: the time in between was spent elsewhere)
 * breaks the chain: the branch after it gets 0, unknown, as perf reads it.
 */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/*
 * At most this many branches wait for an anchor; more: the oldest quarter
 * get 0, dropped at once, not one at each branch (which moved the whole
 * list each time: fuzz-pt's slow-untimed-list-full.bin, 7 s).
 */
#define TIMING_MAX_UNTIMED	4096
#define TIMING_DROP_UNTIMED	(TIMING_MAX_UNTIMED / 4)
#define TIMING_MAX_CYCLES	65535	/* LBR's cycle count saturates there */

void auxsample_timing__reset(struct auxsample_decoder *dec)
{
	struct auxsample_timing *tm = &dec->timing;

	tm->nr_untimed = 0;
	tm->pkt_timed = false;
	tm->have_anchor = false;
	tm->last_valid = false;
	tm->stretch_unknown = false;
	tm->converging = 0;
	tm->exact_from = 0;
}

void auxsample_timing__exit(struct auxsample_decoder *dec)
{
	free(dec->timing.untimed);
	memset(&dec->timing, 0, sizeof(dec->timing));
}

/* The backend's trace times its packets (Intel PT with CYC). */
void auxsample_timing__enable(struct auxsample_decoder *dec)
{
	dec->timing.enabled = true;
}

static bool auxsample_timing__on(const struct auxsample_decoder *dec)
{
	return dec->timing.enabled && dec->max;
}

/* The number auxsample__branch_nr() will give the next branch. */
static uint64_t auxsample_timing__next_nr(const struct auxsample_decoder *dec)
{
	return dec->ring_pushed + dec->late.nr + 1;
}

/*
 * After a skim: whole decodes from here on have the same state: from the
 * next branch on, all are timed alike.
 */
static void auxsample_timing__converged(struct auxsample_decoder *dec)
{
	struct auxsample_timing *tm = &dec->timing;

	tm->converging = 0;
	tm->exact_from = auxsample_timing__next_nr(dec);
}

/* Time is lost here: nothing waiting can be timed, nothing after relates. */
void auxsample_timing__break(struct auxsample_decoder *dec)
{
	struct auxsample_timing *tm = &dec->timing;

	tm->nr_untimed = 0;
	tm->pkt_timed = false;
	tm->have_anchor = false;
	tm->last_valid = false;
	if (tm->converging)
		auxsample_timing__converged(dec);
}

/*
 * The ring is back after a skim (skim.c), the timing as after a break; a
 * whole decode's has the anchors and packets from before.  Both anchor at
 * the same packets from here on (the whole decode perhaps at one more
 * first, the packet pending before), so from the first anchor on they
 * have the same anchor and wait for the same branches, and time them
 * alike once they time the branch before alike; or from a break, which
 * both take.  The stretch of the packets was not followed: the next
 * packet's is taken, not a break.
 */
void auxsample_timing__converge(struct auxsample_decoder *dec)
{
	struct auxsample_timing *tm = &dec->timing;

	tm->converging = 0;
	auxsample_timing__break(dec);
	tm->exact_from = 0;
	if (!auxsample_timing__on(dec))
		return;
	tm->stretch_unknown = true;
	tm->converging = 1;
	tm->exact_from = UINT64_MAX;
}

/* auxsample_timing__branch() with the list full: it grows, or drops its oldest. */
void auxsample_timing__branch_slow(struct auxsample_decoder *dec)
{
	struct auxsample_timing *tm = &dec->timing;

	if (!auxsample_timing__on(dec))
		return;
	if (tm->nr_untimed == TIMING_MAX_UNTIMED) {
		memmove(tm->untimed, tm->untimed + TIMING_DROP_UNTIMED,
			(tm->nr_untimed - TIMING_DROP_UNTIMED) * sizeof(*tm->untimed));
		tm->nr_untimed -= TIMING_DROP_UNTIMED;
		tm->last_valid = false;
	}
	if (tm->nr_untimed == tm->untimed_cap) {
		unsigned int cap = tm->untimed_cap ? tm->untimed_cap * 2 : 64;
		struct auxsample_untimed *u;

		/* Never past the most: the inline append sees a full list as full. */
		if (cap > TIMING_MAX_UNTIMED)
			cap = TIMING_MAX_UNTIMED;
		u = realloc(tm->untimed, cap * sizeof(*u));

		if (!u) {
			auxsample_timing__break(dec);
			return;
		}
		tm->untimed = u;
		tm->untimed_cap = cap;
	}
	tm->untimed[tm->nr_untimed++] = (struct auxsample_untimed){
		.idx = dec->stats.insns, .nr = dec->ring_pushed + dec->late.nr + 1,
	};
}

static uint32_t auxsample_timing__cycles(uint64_t cycles)
{
	return cycles > TIMING_MAX_CYCLES ? TIMING_MAX_CYCLES : cycles;
}

/*
 * A packet went out at instruction @idx at trace time @time: time what
 * waits.  The timing's fields in locals: a store to a ring slot may be
 * to them for the compiler, which read them again at every branch.
 */
static void auxsample_timing__anchor(struct auxsample_decoder *dec, uint64_t idx, uint64_t time)
{
	struct auxsample_timing *tm = &dec->timing;
	const struct auxsample_untimed *u;
	uint64_t anchor_idx, anchor_time, last_time;
	bool between, last_valid;
	unsigned int i, nr;

	/* Time went back (a TSC correcting the estimate): start afresh. */
	if (tm->have_anchor && (time < tm->anchor_time || idx < tm->anchor_idx)) {
		auxsample_timing__break(dec);
		tm->have_anchor = false;
	}
	u = tm->untimed;
	nr = tm->nr_untimed;
	anchor_idx = tm->anchor_idx;
	anchor_time = tm->anchor_time;
	between = tm->have_anchor && idx > anchor_idx;
	last_time = tm->last_time;
	last_valid = tm->last_valid;
	for (i = 0; i < nr && u[i].idx <= idx; i++) {
		struct auxsample_branch *br;
		uint64_t t;

		if (u[i].idx == idx) {
			t = time;
		} else if (between && u[i].idx >= anchor_idx) {
			t = anchor_time + (time - anchor_time) * (u[i].idx - anchor_idx) /
					  (idx - anchor_idx);
		} else {
			last_valid = false;
			continue;
		}
		br = auxsample__branch_nr(dec, u[i].nr);
		if (last_valid && t >= last_time && br)
			br->cycles = auxsample_timing__cycles(t - last_time);
		last_time = t;
		last_valid = true;
	}
	tm->last_time = last_time;
	tm->last_valid = last_valid;
	/* Nothing timed: the list may not even be there (no branch yet). */
	if (i)
		memmove(tm->untimed, tm->untimed + i, (nr - i) * sizeof(*tm->untimed));
	tm->nr_untimed = nr - i;
	tm->anchor_idx = idx;
	tm->anchor_time = time;
	tm->have_anchor = true;
	/*
	 * The branches waiting (a whole decode may have dropped them at a
	 * break here, the time going back from its anchor before) and the
	 * next one (the time of the branch before it may differ) may still
	 * differ.
	 */
	if (tm->converging) {
		tm->converging = 0;
		tm->exact_from = auxsample_timing__next_nr(dec) + 1;
	}
}

/*
 * The decoder read a packet for the instruction flow at the current
 * instruction, and the trace has counted @time cycles so far, in its
 * stretch @stretch (a new one after each PSB or lost packet: the count
 * may not go on across): a new time means the packets before were all
 * read.  @exact: the packet went out with the last branch it tells of
 * (a full TNT, a TIP), else its time is no anchor.  A call with the time
 * of the call before, in the same stretch, and neither exact, changes
 * nothing that counts (the instruction is read only with @exact):
 * pt-cyc.c calls once a TNT, not once a bit.
 */
void auxsample_timing__packet(struct auxsample_decoder *dec, uint64_t time, uint32_t stretch,
			      bool exact)
{
	struct auxsample_timing *tm = &dec->timing;

	if (!auxsample_timing__on(dec))
		return;
	if (tm->stretch_unknown) {
		tm->stretch_unknown = false;
		tm->stretch = stretch;
	}
	if (stretch != tm->stretch) {
		auxsample_timing__stop(dec);
		auxsample_timing__break(dec);
		tm->stretch = stretch;
	}
	if (tm->pkt_timed && time != tm->pkt_time && tm->pkt_exact)
		auxsample_timing__anchor(dec, tm->pkt_idx, tm->pkt_time);
	tm->pkt_time = time;
	tm->pkt_idx = dec->stats.insns;
	tm->pkt_exact = exact;
	tm->pkt_timed = true;
}

/* The trace stopped (TIP.PGD, the end): its last packet is the last. */
void auxsample_timing__stop(struct auxsample_decoder *dec)
{
	struct auxsample_timing *tm = &dec->timing;

	if (!auxsample_timing__on(dec) || !tm->pkt_timed)
		return;
	if (tm->pkt_exact)
		auxsample_timing__anchor(dec, tm->pkt_idx, tm->pkt_time);
	tm->pkt_timed = false;
}

/* The trace starts again (TIP.PGE): the time in between was not this flow's. */
void auxsample_timing__start(struct auxsample_decoder *dec)
{
	struct auxsample_timing *tm = &dec->timing;

	auxsample_timing__stop(dec);
	tm->nr_untimed = 0;
	tm->have_anchor = false;
	tm->last_valid = false;
	if (tm->converging)
		auxsample_timing__converged(dec);
}
