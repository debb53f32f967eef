// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Intel PT walker on a stream: the overlapping snippets of a CPU's
 * samples, laid end to end, walked once from the first PSB
 * (auxsample_decoder__stream_begin() and _to()), as pt.c decodes them
 * with libipt, and with the same results.
 *
 * A snippet ends at a trace stop: its PMI's TIP.PGD, then at most timing
 * packets.  Its branches are those walked up to the n-th TIP.PGD, n the
 * number of them before its end; a scan of the packets finds them, as
 * pt.c's does.  The walk pauses there (ptw_walk.stop_at) and goes on at
 * the next call.
 *
 * Where the walker cannot go on, it hands the stream to libipt for good.
 * libipt cannot start where the walker stopped, in the middle of the flow
 * and with the walker's call stack, so pt.c decodes the stream again from
 * its start, pausing at each end asked for before, as the caller did:
 * the ring, the call stack and the cycles are then what they would have
 * been with libipt all along.  A walk that fails costs the stream twice;
 * the stretches decoded by libipt count in stats.pt_fallbacks.
 *
 * A stretch skimmed short is no such failure: the decoder's state and
 * the walk's, saved where the stretch began, are taken back, and the
 * stretch walked again whole (checkpoint.c), as a snippet is.  So a
 * stream's skims keep a snippet's margin (pt-walk-skim.c).
 */
#include <stdlib.h>
#include <string.h>
#include "backend.h"
#include "pt-blocks.h"
#include "pt-skim-count.h"
#include "pt-stops.h"
#include "pt-sync.h"
#include "pt-walk.h"

struct ptw_stream {
	struct ptw_walk		w;	/* .len: the bytes fetched so far */
	size_t			len;	/* the stream's */
	struct pt_stops		stops;
	size_t			scanned;	/* for stops, up to here */
	bool			scan_open;	/* a stop's timing goes on: pt_stops.h */
	bool			scan_failed;	/* a packet the walker does not know */
	struct ptw_skim_marks	marks;		/* the scan's count, for skims */
	/* the ends decoded to, for libipt to pause at them again */
	uint64_t		*ends;
	size_t			nr_ends;
	size_t			ends_cap;
	bool			libipt;		/* pt.c's stream from here on */
	/* where the stretch began, for a skim that turns out short */
	struct auxsample_checkpoint	*cp;
	struct ptw_walk		saved;
};

/*
 * A mark of the scan's count at @pos (ptw_skim_marks): 0 or
 * -AUXSAMPLE_ERR_NOMEM.  The scan runs ahead of the walk by a stretch;
 * where one is long (the samples before its end not asked for), the
 * marks stop at PTW_SKIM_MARKS, and a skim without them counts the
 * packets itself.
 */
static int ptw_stream__mark(struct ptw_skim_marks *m, struct ptw_skim_point now, size_t pos)
{
	if (m->nr - m->first >= PTW_SKIM_MARKS) {
		m->next = pos + PTW_SKIM_STEP;
		return 0;
	}
	if (m->nr == m->cap && m->first) {
		memmove(m->marks, m->marks + m->first, (m->nr - m->first) * sizeof(*m->marks));
		m->nr -= m->first;
		m->first = 0;
	}
	if (m->nr == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		struct ptw_skim_point *marks = realloc(m->marks, cap * sizeof(*marks));

		if (!marks)
			return -AUXSAMPLE_ERR_NOMEM;
		m->marks = marks;
		m->cap = cap;
	}
	now.pos = pos;
	m->marks[m->nr++] = now;
	m->next = pos + PTW_SKIM_STEP;
	return 0;
}

/* The marks before the one at or before @pos, the walk's: no skim counts from them. */
static void ptw_stream__unmark(struct ptw_skim_marks *m, size_t pos)
{
	while (m->first + 1 < m->nr && m->marks[m->first + 1].pos <= pos)
		m->first++;
}

/*
 * Where the trace stops, from the first PSB on, and until where nothing
 * but timing follows, in the bytes fetched and not yet scanned, up to
 * @to: a stretch's end and its slack, so that the marks are a stretch's,
 * not all that a first fetch brought.  0,
 * PTW_FALLBACK for a packet the walker does not know (libipt's scan syncs
 * on at the next PSB, which the walker would not know to do alike), or
 * -AUXSAMPLE_ERR_NOMEM.  A packet cut by the end of what was fetched
 * waits for the next fetch; one cut by the stream's end ends the scan,
 * where libipt's stops too.
 */
static int ptw_stream__scan(struct ptw_stream *s, uint64_t to)
{
	const uint8_t *buf = s->w.buf;
	size_t pos = s->scanned, len = to < s->w.len ? to : s->w.len;
	/* Counted as a skim counts, so that no skim reads them again. */
	struct ptw_skim_point now = s->marks.now;
	int err = 0;

	if (s->scan_failed)
		return PTW_FALLBACK;
	while (pos < len) {
		bool idle, pgd;
		int n;

		if (pos >= s->marks.next) {
			/* By value: the count stays in registers. */
			err = ptw_stream__mark(&s->marks, now, pos);
			if (err)
				break;
		}
		n = ptw_skim__packet(buf, len, pos, &now, &idle, &pgd);
		if (n == PTW_EOS)
			break;
		if (n < 0) {
			s->scan_failed = true;
			return PTW_FALLBACK;
		}
		/* Only a TIP.PGD, or the first packet of the flow after it, changes them. */
		if (pgd || (s->scan_open && !idle)) {
			/*
			 * A later call scans on from this packet: its stop
			 * once, its branches counted twice, which only moves
			 * a skim's point.
			 */
			err = pt_stops__packet(&s->stops, pos, n, idle, pgd);
			if (err)
				break;
			s->scan_open = pgd;
		}
		pos += n;
	}
	s->marks.now = now;
	s->scanned = pos;
	if (err)
		return -AUXSAMPLE_ERR_NOMEM;
	if (len == s->len)
		pt_stops__lost(&s->stops, pos);
	return 0;
}

/*
 * The bytes a packet starting before a stretch's end may take after it:
 * the scan must see a packet of the flow that begins there (the PSB is
 * the longest, 16 bytes).
 */
#define PTW_STREAM_SLACK	32
/* Fetched at the start: where the first PSB and what follows it lie. */
#ifndef PTW_STREAM_FIRST
#define PTW_STREAM_FIRST	(64 << 10)	/* -DPTW_STREAM_FIRST=64: fetches from the first */
#endif

/*
 * The stream's bytes up to @to fetched, those before the walk's position
 * let go: the walk sees no more than were fetched.  Its position is past
 * a packet it holds (ptw_walk__skim() counts from it), its CYC packets'
 * may be behind, and so may the scan's (the first stretch's scan begins
 * at the PSB the walk synced at).
 */
static int ptw_stream__fetch(struct ptw_decoder *wd, struct ptw_stream *s, uint64_t to)
{
	struct ptw_walk *w = &s->w;
	uint64_t keep = ptw_walk__read_pos(w);
	int err;

	to = to < s->len ? to : s->len;
	if (to <= w->len)
		return 0;
	if (w->timed && w->cyc.buf && w->cyc.pos < keep)
		keep = w->cyc.pos;
	if (s->scanned < keep)
		keep = s->scanned;
	err = auxsample__fetch(wd->dec, keep, to);
	if (err)
		return err;
	w->len = to;
	w->cyc.len = w->cyc.buf ? to : w->cyc.len;
	return 0;
}

/* The offset of the first PSB, or @len. */
static uint64_t ptw_stream__first_psb(const uint8_t *buf, size_t len)
{
	const uint8_t *p = pt_psb__find(buf, len);

	return p ? (uint64_t)(p - buf) : len;
}

void ptw_stream__end(void *priv)
{
	struct ptw_decoder *wd = priv;
	struct ptw_stream *s = wd->stream;

	auxsample_pt_backend.stream_end(wd->libipt);
	if (!s)
		return;
	pt_stops__exit(&s->stops);
	auxsample_checkpoint__delete(s->cp);
	free(s->marks.marks);
	free(s->ends);
	free(s);
	wd->stream = NULL;
}

/*
 * After the first TIP.PGE, at @pos: libipt's sync reads on to the next
 * packet of the flow, and fails where the trace ends, is corrupt or syncs
 * again first (fuzz-pt found a PSB+ there that libipt refused): where
 * one of those comes before a packet of the flow, libipt decides.  So it
 * does at a FUP: libipt reads on to the packet the FUP binds to, and its
 * sync fails on more than the walker would model (fuzz-pt found a FUP
 * whose IP was suppressed, then one followed by another FUP); an event
 * before the first branch after an enable is rare.  Its time keeping
 * fails there too where the timing packets come in an order the walker
 * does not take (fuzz-pt found a TMA with no TSC before it).
 */
static bool ptw_stream__flows_after(const struct ptw_walk *w, size_t pos)
{
	bool tsc = w->tsc, tma = w->tma;
	struct ptw_packet p;

	while (pos < w->len) {
		const uint8_t *at = w->buf + pos;
		int n = ptw_parse(at, w->len - pos, &p);

		if (n <= 0 || p.type == PTW_PSB || p.type == PTW_PSBEND || p.type == PTW_OTHER ||
		    p.type == PTW_FUP)
			return false;
		if (p.type == PTW_TIMING && ptw_timing__order(&tsc, &tma, at))
			return false;
		if (p.type != PTW_PAD && p.type != PTW_TIMING && p.type != PTW_MODE_EXEC &&
		    p.type != PTW_MODE_TSX)
			return true;
		pos += n;
	}
	return false;
}

/* The walk at the stream's first PSB: 0, PTW_FALLBACK or -AUXSAMPLE_ERR_*. */
static int ptw_stream__start(struct ptw_decoder *wd, struct ptw_stream *s)
{
	struct ptw_walk *w = &s->w;
	uint64_t first;
	int err;

	if (wd->config->flow)
		return PTW_FALLBACK;	/* flow records are libipt's */
	err = ptw_stream__fetch(wd, s, PTW_STREAM_FIRST);
	first = ptw_stream__first_psb(w->buf, w->len);
	if (!err && first == w->len && w->len < s->len) {
		err = ptw_stream__fetch(wd, s, s->len);
		first = ptw_stream__first_psb(w->buf, w->len);
	}
	if (err)
		return err;
	if (first == w->len)
		return -AUXSAMPLE_ERR_NOSYNC;
	/* What comes before is no packet to count, as for pt.c; the first stretch scans on. */
	s->scanned = first;
	err = ptw_walk__sync(w, first);
	if (!err)
		err = ptw_walk__peek(w);
	if (err)
		return err;
	/*
	 * libipt's sync takes the first event after the PSB+ too, and fails
	 * where it cannot (fuzz-pt found a TIP.PGD after a PSB+ that left
	 * tracing off, and a trace ending there): where the flow does not go
	 * on as the walker expects, libipt decides alone.
	 */
	if (w->eos || w->pkt.type == PTW_OVF ||
	    (!w->enabled && w->pkt.type != PTW_TIP_PGE) ||
	    (w->enabled && w->pkt.type == PTW_TIP_PGE))
		return PTW_FALLBACK;
	if (!w->enabled && !ptw_stream__flows_after(w, w->pos))
		return PTW_FALLBACK;
	return 0;
}

int ptw_stream__begin(void *priv, const uint8_t *buf, size_t len)
{
	struct ptw_decoder *wd = priv;
	struct ptw_stream *s;
	int err;

	ptw_stream__end(wd);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -AUXSAMPLE_ERR_NOMEM;
	s->w = (struct ptw_walk){
		.wd = wd, .dec = wd->dec, .stats = auxsample__stats(wd->dec),
		.blocks = wd->blocks, .buf = buf,
		.timed = wd->config->pt.cyc, .skim_at = UINT64_MAX, .marks = &s->marks,
	};
	s->len = len;
	s->stops.len = len;
	ptw_decoder__update(wd);
	err = ptw_stream__start(wd, s);
	ptw_decoder__count_blocks(wd);
	if (err == PTW_FALLBACK) {
		/* Nothing walked that counts: the first stretch resets the stats. */
		s->libipt = true;
		err = auxsample_pt_backend.stream_begin(wd->libipt, buf, len);
	}
	if (err < 0) {
		pt_stops__exit(&s->stops);
		free(s->marks.marks);
		free(s);
		return err;
	}
	wd->stream = s;
	return 0;
}

/*
 * The walk failed in the stretch to @end: libipt decodes the stream
 * again, to each end decoded to before, then to @end, as if it had
 * decoded it from the start.  With the image it has now: where the
 * decoder moved to another (auxsample_decoder__set_image()), the
 * stretches before are decoded with the new one's code, the same code
 * unless a file was mapped where another had been.
 */
static int ptw_stream__handover(struct ptw_decoder *wd, struct ptw_stream *s, uint64_t end)
{
	struct auxsample_decoder *dec = wd->dec;
	struct auxsample_stats stats = *auxsample__stats(dec);
	struct auxsample_stats stretch = { .size = sizeof(stretch) };
	int err;

	s->libipt = true;
	auxsample__restart(dec);
	err = auxsample_pt_backend.stream_begin(wd->libipt, s->w.buf, s->len);
	/* The last end is @end's, still to come. */
	for (size_t i = 0; !err && i + 1 < s->nr_ends; i++) {
		auxsample__stretch(dec, &stretch);
		/* It paused there before: it does again, or the stretch is as lost. */
		auxsample_pt_backend.stream_to(wd->libipt, s->ends[i]);
		stretch.end_ip = auxsample__stats(dec)->end_ip;
	}
	/* The stretch's own statistics, from the start. */
	stats = (struct auxsample_stats){
		.size = sizeof(stats), .bytes = stats.bytes, .end_ip = stretch.end_ip,
	};
	auxsample__stretch(dec, &stats);
	if (err)
		return err;
	return auxsample_pt_backend.stream_to(wd->libipt, end);
}

/* A stretch decoded, for a handover to pause at again. */
static int ptw_stream__decoded_to(struct ptw_stream *s, uint64_t end)
{
	if (s->nr_ends == s->ends_cap) {
		size_t cap = s->ends_cap ? s->ends_cap * 2 : 64;
		uint64_t *ends = realloc(s->ends, cap * sizeof(*ends));

		if (!ends)
			return -AUXSAMPLE_ERR_NOMEM;
		s->ends = ends;
		s->ends_cap = cap;
	}
	s->ends[s->nr_ends++] = end;
	return 0;
}

/* Where the stretch begins, saved: @s->w.rewalk, whether it can be walked again. */
static void ptw_stream__save(struct ptw_decoder *wd, struct ptw_stream *s)
{
	s->w.rewalk = false;
	if (!s->cp)
		s->cp = auxsample_checkpoint__new();
	if (!s->cp || auxsample__save(wd->dec, s->cp))
		return;
	s->w.rewalk = true;
	s->saved = s->w;
}

/* The walk on to the stop, or to where it cannot go on: 0 or PTW_FALLBACK. */
static int ptw_stream__run(struct ptw_stream *s)
{
	struct ptw_walk *w = &s->w;
	int err = ptw_walk__run(w);

	/*
	 * It read to the end of what was fetched, not the stream's: no
	 * stretch should, and the trace goes on there; libipt decides.
	 */
	if (!err && w->eos && w->len < s->len)
		err = PTW_FALLBACK;
	return err;
}

/*
 * The stretch skimmed short: walked again whole, from where it began
 * (ptw_stream__save()), or where it cannot be, PTW_FALLBACK for libipt.
 * Its skim counted lost, in the statistics as they were saved.
 */
static int ptw_stream__skim_lost(struct ptw_decoder *wd, struct ptw_stream *s)
{
	struct auxsample_stats *stats;

	if (!s->w.rewalk) {
		auxsample__stats(wd->dec)->pt_skims_lost++;
		return PTW_FALLBACK;
	}
	auxsample__restore(wd->dec, s->cp);
	s->w = s->saved;
	stats = auxsample__stats(wd->dec);
	stats->pt_skims++;
	stats->pt_skims_lost++;
	return ptw_stream__run(s);
}

static int ptw_stream__walk_to(struct ptw_decoder *wd, struct ptw_stream *s, uint64_t end)
{
	struct ptw_walk *w = &s->w;
	uint64_t target, to;
	bool skimmed;
	int err;

	/* ptw_stream__fetch() takes no more than the stream: only the sum may wrap. */
	to = end < s->len ? end + PTW_STREAM_SLACK : s->len;
	err = ptw_stream__fetch(wd, s, to);
	/* The marks behind the walk first: the scan's come after them. */
	ptw_stream__unmark(&s->marks, ptw_walk__read_pos(w));
	if (!err)
		err = ptw_stream__scan(s, to);
	if (err == PTW_FALLBACK) {
		/* As where the whole stream's scan found it first. */
		err = ptw_stream__decoded_to(s, end);
		return err ? err : ptw_stream__handover(wd, s, end);
	}
	if (err)
		return err;
	/*
	 * The snippet must end at a trace stop: the stop's branches are its.
	 * None before the walk's can be: those are let go of.
	 */
	pt_stops__let_go(&s->stops, w->stops);
	target = pt_stops__of(&s->stops, end);
	if (!target || w->stops > target)
		return -AUXSAMPLE_ERR_NOT_IN_STREAM;
	err = ptw_stream__decoded_to(s, end);
	if (err)
		return err;
	ptw_decoder__update(wd);
	w->stop_at = target;
	/*
	 * Skimmed up to the last branches before the stop where it can; where
	 * that did not give what a whole walk gives, walked again whole, or
	 * where it cannot be, libipt takes over, as where the walk fails.
	 */
	ptw_stream__save(wd, s);
	skimmed = ptw_walk__skim(w, w->pos, pt_stops__at(&s->stops, target)->end);
	err = ptw_stream__run(s);
	if (skimmed) {
		bool whole = ptw_walk__skimmed(w);

		auxsample__stats(wd->dec)->pt_skims++;
		if (!whole && !err)
			err = ptw_stream__skim_lost(wd, s);
	}
	if (err)
		return ptw_stream__handover(wd, s, end);
	/* The trace ended before the stop. */
	if (w->stops != target)
		return -AUXSAMPLE_ERR_NOT_IN_STREAM;
	return 0;
}

int ptw_stream__to(void *priv, uint64_t end)
{
	struct ptw_decoder *wd = priv;
	struct ptw_stream *s = wd->stream;
	int err;

	if (!s)
		return -AUXSAMPLE_ERR_INVALID;
	if (s->libipt)
		err = auxsample_pt_backend.stream_to(wd->libipt, end);
	else
		err = ptw_stream__walk_to(wd, s, end);
	if (s->libipt)
		auxsample__stats(wd->dec)->pt_fallbacks++;
	ptw_decoder__count_blocks(wd);
	return err;
}
