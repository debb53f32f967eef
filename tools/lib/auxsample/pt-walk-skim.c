// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where the walker may stop skimming a snippet (skim.c): the latest
 * offset after which the packets alone show enough taken branches to
 * fill the ring, with room to spare.  Counted from the packets without
 * walking: each TNT bit set is a taken conditional branch or a compressed
 * return, each TIP an indirect branch, a return or an interrupt.  Direct
 * jumps and calls leave no packet, so there are at least as many; a taken
 * branch to the next instruction, the late branches of a sample and the
 * first branches after the skim, whose cycles may differ (cycles.c), may
 * be fewer, which the margin covers and auxsample__skimmed() checks.
 * Points 16 bytes apart or more are kept in one pass, and the packets
 * between the two around the one chosen read again to choose among.
 * A snippet's packets are counted only from near its end, as far back
 * as the decoder's last count says twice the branches asked for take
 * (ptw_walk__skim_from()), when the walk gets there.
 */
#include <string.h>
#include "backend.h"
#include "pt-parse.h"
#include "pt-skim-count.h"
#include "pt-walk.h"
#include "x86-branch.h"

/*
 * With CYC, the anchors of cycles.c (a packet sent with its branch, a TIP
 * or a full TNT, whose time a later packet tells: a CYC after it) that a
 * skim must leave before the last branches, for their cycles: a branch's
 * may differ from a whole decode's up to the second after the point
 * (auxsample_timing__converge()).  With one, 165 of the sparse bench
 * file's 5720 decodes were walked again whole.
 */
#define PTW_SKIM_ANCHORS	2
/* The branches the packets before the point must show to tell how many they stand for. */
#define PTW_SKIM_MIN_SHOWN	64

/* Every other point dropped: room for more, twice as far apart. */
static unsigned int ptw_skim__thin(struct ptw_skim_point *points, unsigned int nr)
{
	for (unsigned int i = 0; i < nr / 2; i++)
		points[i] = points[2 * i + 1];
	return nr / 2;
}

/*
 * The point to skim to, of @plan's: the latest whose packets after it
 * show @need branches, and a little before it, so that the plan's anchors
 * come between: the cycles of the branches after the skim are a whole
 * decode's from the first (cycles.c).  Its index; 0 for none, the first
 * point being the sync point.
 */
static unsigned int ptw_skim__choose(const struct ptw_skim_plan *plan, uint64_t need)
{
	const struct ptw_skim_point *points = plan->points;
	unsigned int i = plan->nr;

	while (i > 1 && plan->taken - points[i - 1].taken < need)
		i--;
	if (i <= 1)
		return 0;
	for (unsigned int q = i - 1; i > 1; i--) {
		if (points[q].anchors - points[i - 1].anchors >= plan->anchors)
			return i - 1;
	}
	return 0;
}

/*
 * The point chosen between @plan's points, packet by packet: from the
 * one chosen (@at) up to the next after the latest with @need branches
 * after it, the latest packet with @need after it, and before it the
 * latest with the plan's anchors between (as ptw_skim__choose()).  The
 * points are 16 to 32 bytes apart, some 10 to 20 branches the packets
 * show: the walk after the point is that much shorter.  The packets
 * between the points are read again, not recorded in the first look,
 * which would cost more for every packet than this for a few.
 */
static void ptw_skim__refine(struct ptw_skim_plan *plan, unsigned int at, uint64_t need)
{
	struct ptw_skim_point fine[PTW_SKIM_FINE];
	struct ptw_skim_point c = plan->points[at];
	size_t pos = c.pos, end = plan->len;
	unsigned int nr = 0, i, q;

	plan->point = c;
	for (i = at + 1; i < plan->nr; i++) {
		if (plan->taken - plan->points[i].taken < need) {
			end = plan->points[i].pos;
			break;
		}
	}
	while (pos < end && nr < PTW_SKIM_FINE) {
		int n;

		c.pos = pos;
		fine[nr++] = c;
		n = ptw_skim__packet(plan->buf, plan->len, pos, &c, NULL, NULL);
		if (n <= 0)
			return;
		pos += n;
	}
	if (pos < end)
		return;		/* more packets than room: the point as it was */
	for (q = nr; q > 0 && plan->taken - fine[q - 1].taken < need; q--)
		;
	if (!q)
		return;
	for (i = q; i > 0; i--) {
		if (fine[q - 1].anchors - fine[i - 1].anchors >= plan->anchors) {
			plan->point = fine[i - 1];
			return;
		}
	}
}

/*
 * A plan to count the @len bytes at @buf for @need branches after the
 * point (@timed: with cycles), now or when the walk gets there.
 */
static void ptw_skim__plan(struct ptw_skim_plan *plan, const uint8_t *buf, size_t len,
			   uint64_t need, bool timed)
{
	plan->buf = buf;
	plan->len = len;
	plan->need = need;
	plan->anchors = timed ? PTW_SKIM_ANCHORS : 0;
	plan->later = false;
}

/* The first of @m's marks after @pos; @m->nr for none. */
static size_t ptw_skim__mark_after(const struct ptw_skim_marks *m, size_t pos)
{
	size_t lo = m->first, hi = m->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->marks[mid].pos <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* @c counted on to @pos, a packet's offset, in @plan's packets: whether it gets there. */
static bool ptw_skim__count_to(const struct ptw_skim_plan *plan, struct ptw_skim_point *c,
			       size_t pos)
{
	while (c->pos < pos) {
		int n = ptw_skim__packet(plan->buf, plan->len, c->pos, c, NULL, NULL);

		if (n <= 0)
			return false;
		c->pos += n;
	}
	return c->pos == pos;
}

/*
 * @plan's points from @m, a stream's marks, for its packets from @from
 * on: what ptw_skim__count() would count, the packets read only up to
 * the first mark and from the last (those before @from may be let go
 * already).  The counts after the first mark are the scan's, which
 * began before @from: whether the flow packet before the mark went with
 * its branch may differ from a count begun at @from where none came
 * between them, an anchor more or less, which only moves the point.
 * false where no mark comes between @from and the end, or the packets
 * do not lead to them.
 */
static bool ptw_skim__marked(struct ptw_skim_plan *plan, const struct ptw_skim_marks *m,
			     size_t from)
{
	struct ptw_skim_point c = { .pos = from }, first, end;
	size_t i, past, stride;
	unsigned int nr = 0;

	i = ptw_skim__mark_after(m, from);
	past = ptw_skim__mark_after(m, plan->len);
	/* None at the end itself: nothing would come after it. */
	if (past > i && m->marks[past - 1].pos == plan->len)
		past--;
	if (past <= i || !ptw_skim__count_to(plan, &c, m->marks[i].pos))
		return false;
	first = m->marks[i];
	end = m->marks[past - 1];
	if (!ptw_skim__count_to(plan, &end, plan->len))
		return false;
	/* As many as fit after the first, evenly apart, as ptw_skim__thin() keeps them. */
	stride = (past - i + PTW_SKIM_POINTS - 2) / (PTW_SKIM_POINTS - 1);
	plan->points[nr++] = (struct ptw_skim_point){ .pos = from };
	for (; i < past; i += stride) {
		struct ptw_skim_point p = m->marks[i];

		p.taken = p.taken - first.taken + c.taken;
		p.anchors = p.anchors - first.anchors + c.anchors;
		plan->points[nr++] = p;
	}
	/* The first one as counted from @from. */
	plan->points[1].exact = c.exact;
	plan->nr = nr;
	plan->taken = end.taken - first.taken + c.taken;
	return true;
}

/* @plan's points, its packets counted from @from on. */
static void ptw_skim__count(struct ptw_skim_plan *plan, size_t from)
{
	const uint8_t *buf = plan->buf;
	size_t len = plan->len;
	/* Here, not in @plan: stores to it might be to @buf, for the compiler. */
	struct ptw_skim_point points[PTW_SKIM_POINTS];
	/* exact: the last flow packet went with its branch */
	struct ptw_skim_point c = { .exact = false };
	uint64_t step = PTW_SKIM_STEP, next = from;
	unsigned int nr = 0;
	size_t pos = from;

	while (pos < len) {
		int n;

		if (pos >= next) {
			if (nr == PTW_SKIM_POINTS) {
				nr = ptw_skim__thin(points, nr);
				step *= 2;
			}
			c.pos = pos;
			points[nr++] = c;
			next = pos + step;
		}
		n = ptw_skim__packet(buf, len, pos, &c, NULL, NULL);
		if (n <= 0)
			break;		/* the walk stops there too */
		pos += n;
	}
	memcpy(plan->points, points, nr * sizeof(*points));
	plan->nr = nr;
	plan->taken = c.taken;
}

/*
 * The offset at which to stop skimming, @plan's packets counted from
 * @from on (or a stream's, @marks, as its scan counted them); 0 for none:
 * too few branches after @from to skim any.
 */
static uint64_t ptw_skim__point(struct ptw_skim_plan *plan, size_t from,
				const struct ptw_skim_marks *marks)
{
	if (!marks || !ptw_skim__marked(plan, marks, from))
		ptw_skim__count(plan, from);
	plan->again = false;
	plan->at = ptw_skim__choose(plan, plan->need);
	if (!plan->at)
		return 0;
	ptw_skim__refine(plan, plan->at, plan->need);
	return plan->point.pos;
}

/*
 * Whether a skim that turns out short hands the rest of the stream to
 * libipt: a stream's stretch that cannot be walked again (the decoder's
 * state not saved, for want of memory or while the late-sample rule
 * holds undo records: pt-walk-stream.c).  A snippet is decoded again
 * whole, and so is any other stretch.
 */
static bool ptw_walk__skim_once(const struct ptw_walk *w)
{
	return w->stop_at != UINT64_MAX && !w->rewalk;
}

/*
 * The branches the packets after the point must show for a ring of
 * @depth.  They show fewer than were taken (direct jumps and calls send
 * none), so @depth alone mostly does, but not always: without CYC 1.3%
 * of the sparse bench file's decodes were walked again whole.  An eighth
 * more lost none on the bench files, and one stretch of the medium
 * file's 5951.  Where a skim lost would hand the rest of the stream to
 * libipt: a quarter and 16 more.
 */
#ifndef PTW_SKIM_SHORT
#define PTW_SKIM_SHORT		0	/* -DPTW_SKIM_SHORT=48: most skims short, walked again */
#endif

static uint64_t ptw_walk__skim_need(const struct ptw_walk *w, unsigned int depth)
{
	uint64_t need = depth + (ptw_walk__skim_once(w) ? depth / 4 + 16 : depth / 8);

	return need > PTW_SKIM_SHORT ? need - PTW_SKIM_SHORT : 1;
}

/*
 * Where a snippet's packets are first counted: most of them are skimmed
 * past, and counting them all cost a tenth of a decode (sparse bench
 * file, 1 KiB from the PSB).  From the bytes a branch took in the
 * decoder's last count, the snippet's last bytes that should show twice
 * @need branches; the walk counts from there when it gets there
 * (ptw_walk__replan()).  @from where the trace is too short for that,
 * or nothing is known yet.  A stream's stretch is counted whole: a skim
 * lost there hands the rest of the stream to libipt.
 */
static uint64_t ptw_walk__skim_from(const struct ptw_walk *w, uint64_t from, uint64_t end,
				    uint64_t need)
{
	uint64_t bytes = w->wd->skim_bytes;
	uint64_t tail = (2 * need * bytes >> PTW_SKIM_BYTES_SHIFT) + PTW_SKIM_STEP;

	if (!bytes || w->stop_at != UINT64_MAX || end - from <= 2 * tail)
		return from;
	return end - tail;
}

/* The bytes a shown branch took in @plan's count, for the next decode's. */
static void ptw_walk__skim_learn(struct ptw_walk *w, uint64_t from)
{
	const struct ptw_skim_plan *plan = &w->wd->skim_plan;

	if (plan->taken >= PTW_SKIM_MIN_SHOWN)
		w->wd->skim_bytes = ((plan->len - from) << PTW_SKIM_BYTES_SHIFT) / plan->taken;
}

/*
 * Skim the walk from @from, up to a point before @end (the snippet's end,
 * a stream's stop): whether it does.  CYC timing (pt-cyc.c) is off until
 * the point: ptw_walk__unskim() starts it again.
 */
bool ptw_walk__skim(struct ptw_walk *w, uint64_t from, uint64_t end)
{
	struct ptw_skim_plan *plan = &w->wd->skim_plan;
	unsigned int depth;
	uint64_t need;

	/* A packet read already (a stream's last stretch peeked it): from it. */
	if (w->have)
		from = w->pos - w->pkt.size;
	depth = auxsample__skim(w->dec);
	if (!depth)
		goto out;
	need = ptw_walk__skim_need(w, depth);
	ptw_skim__plan(plan, w->buf, end, need, w->timed);
	w->skim_at = ptw_walk__skim_from(w, from, end, need);
	if (w->skim_at > from) {
		plan->later = true;	/* counted when the walk gets there */
	} else {
		w->skim_at = ptw_skim__point(plan, from, w->marks);
		ptw_walk__skim_learn(w, from);
	}
out:
	if (!depth || !w->skim_at) {
		auxsample__skimmed(w->dec);
		w->skim_at = UINT64_MAX;
		return false;
	}
	plan->branches = auxsample__stats(w->dec)->branches;
	w->skim_timed = w->timed;
	w->timed = false;
	return true;
}

/*
 * The walk reached where ptw_walk__skim() left the packets to count, at
 * @pos, @branches walked: counted from there, the point to skim to, @pos
 * itself if none is further.  Out of line: once a decode.
 */
noinline uint64_t ptw_walk__replan(struct ptw_walk *w, uint64_t pos, uint64_t branches)
{
	struct ptw_skim_plan *plan = &w->wd->skim_plan;
	uint64_t at;

	plan->later = false;
	at = ptw_skim__point(plan, pos, w->marks);
	ptw_walk__skim_learn(w, pos);
	plan->branches = branches;
	w->skim_at = at > pos ? at : pos;
	return w->skim_at;
}

/*
 * At the point chosen, the walk knows how many branches the packets
 * before it stood for: direct jumps and calls leave none, so mostly
 * more.  The rest of the snippet is taken to be alike, and the point
 * chosen again for as many branches after it (the margin of
 * ptw_walk__skim_need(), in proportion): whether it is further, where the
 * skim goes on.  Once a skim, and only from enough branches to tell.
 * Where the rest has fewer than expected the core's check walks a
 * snippet, or a stream's stretch, again; where a stretch cannot be, it
 * would go to libipt for the rest of the stream, so its margin is a
 * quarter more (medium file: 285.3k instructions a sample, 276.9k
 * without, 304.7k not chosen again).
 */
static bool ptw_walk__skim_further(struct ptw_walk *w)
{
	struct ptw_skim_plan *plan = &w->wd->skim_plan;
	struct ptw_skim_point was = plan->point;
	uint64_t shown = was.taken, walked, need;
	unsigned int at;

	if (plan->again)
		return false;
	plan->again = true;
	walked = auxsample__stats(w->dec)->branches - plan->branches;
	if (shown < PTW_SKIM_MIN_SHOWN || walked <= shown)
		return false;
	need = plan->need;
	if (ptw_walk__skim_once(w))
		need += need / 4;
	need = (need * shown + walked - 1) / walked;
	at = ptw_skim__choose(plan, need);
	if (at < plan->at)
		return false;
	ptw_skim__refine(plan, at, need);
	if (plan->point.pos <= was.pos) {
		plan->point = was;
		return false;
	}
	plan->at = at;
	w->skim_at = plan->point.pos;
	return true;
}

/*
 * Skimming, the walk has read the trace up to the point
 * chosen: the ring back, and CYC timing from here.  pt-cyc.c did not
 * follow the skim: it starts after the last packet the walk read, with
 * the TNT bits the walk has still to use, and the pending branch's if it
 * took one; a pending branch that took a TIP is not told apart from one
 * that took a bit (a compressed RET), so the skim goes on to the next
 * block, as it does until the core takes the ring back
 * (auxsample__unskim()).
 */
void ptw_walk__unskim(struct ptw_walk *w)
{
	struct ptw_skim_plan *plan = &w->wd->skim_plan;
	unsigned int bits = w->nr_bits;

	/* Where the packets are counted: on to the point, if any is further. */
	if (plan->later &&
	    ptw_walk__replan(w, ptw_walk__read_pos(w),
			     auxsample__stats(w->dec)->branches) > w->pos)
		return;
	if (ptw_walk__skim_further(w))
		return;

	/* The pending branch's packet: its TNT bit, still pt-cyc.c's to take. */
	if (w->pending && w->cls == X86_BR_COND)
		bits++;
	else if (w->pending && w->cls != X86_BR_JUMP && w->cls != X86_BR_CALL)
		return;
	if (w->have || !auxsample__unskim(w->dec))
		return;
	w->skim_at = UINT64_MAX;
	if (w->skim_timed) {
		pt_cyc__resync(&w->cyc, w->buf, w->len, w->pos, bits, w->tnt_full);
		w->timed = true;
	}
}

/* The skimmed walk stopped: whether it gave what a whole walk gives. */
bool ptw_walk__skimmed(struct ptw_walk *w)
{
	/* The point was never reached: the timing as it was. */
	w->wd->skim_plan.later = false;
	if (w->skim_at != UINT64_MAX) {
		w->timed = w->skim_timed;
		w->skim_at = UINT64_MAX;
	}
	return auxsample__skimmed(w->dec);
}
