/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_PT_WALK_H
#define __AUXSAMPLE_PT_WALK_H

/*
 * The Intel PT walker's state (pt-walk.c), shared with its stream
 * decoding (pt-walk-stream.c).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pt-cyc.h"
#include "pt-parse.h"

struct auxsample_config;
struct auxsample_decoder;
struct auxsample_image;
struct ptw_blocks;
struct ptw_stream;

/* As pt.c's: the most blocks walked without reading the trace. */
#define PTW_MAX_LOOPS		100000
#define PTW_RETS		64	/* the CPU's return compression stack */
#define PTW_TNT8_BITS		6	/* in a full TNT packet */
#define PTW_TNT64_BITS		47

/* Results of a walk besides 0 (the trace ended) and -AUXSAMPLE_ERR_*. */
#define PTW_FALLBACK		1

/* Offsets a skim may end at (pt-walk-skim.c: at least PTW_SKIM_STEP bytes apart). */
#define PTW_SKIM_POINTS		128
#define PTW_SKIM_STEP		16
/* Packets between two of them, read again to choose among (pt-walk-skim.c). */
#define PTW_SKIM_FINE		64

struct ptw_skim_point {
	uint64_t	pos;
	uint64_t	taken;		/* branches the packets before it show */
	uint64_t	anchors;	/* before it */
	bool		exact;		/* the flow packet before it went with its branch */
};

/*
 * A stream's count of its packets for skims, kept by its scan for trace
 * stops (pt-walk-stream.c) from its first PSB on: the count at each
 * packet at least PTW_SKIM_STEP bytes after the one before, from where
 * the walk is on (at most PTW_SKIM_MARKS of them: none after that until
 * the walk has let some go), and at the scan's position.
 */
#ifndef PTW_SKIM_MARKS
#define PTW_SKIM_MARKS		(1 << 16)	/* 2 MiB; -DPTW_SKIM_MARKS=4 tests the limit */
#endif
struct ptw_skim_marks {
	struct ptw_skim_point	*marks;		/* [first, nr) kept */
	size_t			first;
	size_t			nr;
	size_t			cap;
	struct ptw_skim_point	now;
	uint64_t		next;		/* the next one at or after */
};

/*
 * A skim's points, kept: the walk, having counted the branches up to
 * the one chosen, may go further (ptw_walk__unskim()).
 */
struct ptw_skim_plan {
	struct ptw_skim_point	points[PTW_SKIM_POINTS];
	unsigned int		nr;
	unsigned int		at;		/* the point chosen */
	struct ptw_skim_point	point;		/* ... and the packet after it chosen */
	const uint8_t		*buf;		/* the packets counted */
	size_t			len;
	uint64_t		taken;		/* the branches all the packets show */
	uint64_t		need;		/* after the point */
	unsigned int		anchors;	/* between it and the last branches */
	uint64_t		branches;	/* the decode's, when the count began */
	bool			again;		/* chosen again, from the walk's count */
	bool			later;		/* counted when the walk gets to it */
};

/* ptw_decoder's skim_bytes: bytes a shown branch took, in 16ths. */
#define PTW_SKIM_BYTES_SHIFT	4

struct ptw_decoder {
	struct auxsample_decoder	*dec;
	const struct auxsample_config	*config;
	void				*libipt;	/* pt.c's state, for fallbacks */
	struct ptw_blocks		*blocks;	/* ->shared: the image's */
	unsigned int			image_generation;
	bool				attached;	/* to config->image */
	bool				moved;		/* to another config->image */
	struct ptw_stream		*stream;	/* pt-walk-stream.c's */
	struct ptw_skim_plan		skim_plan;	/* the walk's skim */
	uint64_t			skim_bytes;	/* in its last count */
};

struct ptw_walk {
	struct ptw_decoder		*wd;
	struct auxsample_decoder	*dec;
	struct auxsample_stats		*stats;		/* dec's, counted in place */
	struct ptw_blocks		*blocks;
	const uint8_t			*buf;
	size_t				len;
	size_t				pos;		/* of the next packet */
	bool				timed;		/* config.pt.cyc */
	struct pt_cyc			cyc;		/* for the whole decode */
	/* A stream's: the TIP.PGDs taken, and at how many to pause */
	uint64_t			stops;
	uint64_t			stop_at;
	/* ... whose stretch can be walked again (pt-walk-stream.c), skimmed short */
	bool				rewalk;
	/* A snippet's: the offset to stop skimming at (pt-walk-skim.c), or UINT64_MAX */
	uint64_t			skim_at;
	bool				skim_timed;	/* @timed after it */
	/* A stream's, counted already; before @pkt: ptw_walk__sync() keeps it */
	const struct ptw_skim_marks	*marks;
	struct ptw_packet		pkt;		/* peeked, if @have */
	uint64_t			pkt_ip;
	bool				have;
	bool				eos;		/* the trace ended cleanly */
	bool				ended;		/* ... where the flow needed it */
	bool				mode;		/* MODE.Exec: 64-bit seen */
	unsigned int			mode_binds;	/* a MODE's: the packets it may bind to */
	bool				nomem;		/* libipt's to report */
	bool				tsc;		/* a TSC since the last TMA */
	bool				tma;		/* a TMA seen */
	uint64_t			last_ip;
	uint64_t			ip;
	bool				enabled;
	uint64_t			tnt;
	unsigned int			nr_bits;
	bool				tnt_full;	/* the TNT had all the bits it can */
	/* the branch that ended the last block, as pt.c's pending */
	bool				pending;
	uint64_t			from;
	unsigned int			cls;
	unsigned int			length;
	uint64_t			rets[PTW_RETS];
	unsigned int			ret_top;
	unsigned int			nr_rets;
	unsigned int			no_progress;
};

/*
 * @n instructions walked: what auxsample__insns() does, without a call
 * (once a block of a whole walk, with CYC: the timing counts them).
 */
static inline void ptw_walk__insns(struct ptw_walk *w, uint64_t n)
{
	w->stats->insns += n;
}

/* Where the walk reads on: the packet it peeked and holds, or its position. */
static inline uint64_t ptw_walk__read_pos(const struct ptw_walk *w)
{
	return w->have ? w->pos - w->pkt.size : w->pos;
}

/*
 * The return compression stack, as libipt keeps it and the SDM describes
 * it: a near CALL's return address pushed (the oldest dropped when full),
 * popped by a compressed RET only.  An uncompressed RET (a TIP) leaves it
 * as it is: perf's intel-pt decoder pops there, libipt does not, and the
 * walker answers as libipt.
 */
static inline void ptw_walk__push(struct ptw_walk *w, uint64_t ret)
{
	w->rets[w->ret_top] = ret;
	w->ret_top = (w->ret_top + 1) % PTW_RETS;
	if (w->nr_rets < PTW_RETS)
		w->nr_rets++;
}

/* A direct CALL to the next instruction (PIC code's) has no RET: not pushed. */
static inline void ptw_walk__call(struct ptw_walk *w, uint64_t target, uint64_t next)
{
	if (target != next)
		ptw_walk__push(w, next);
}

/* The @k-th return address from the top of the return compression stack. */
static inline uint64_t ptw_walk__ret_at(const struct ptw_walk *w, unsigned int k)
{
	return w->rets[(w->ret_top + PTW_RETS - 1 - k) % PTW_RETS];
}

static inline bool ptw_walk__pop(struct ptw_walk *w, uint64_t *ret)
{
	if (!w->nr_rets)
		return false;
	w->ret_top = (w->ret_top + PTW_RETS - 1) % PTW_RETS;
	w->nr_rets--;
	*ret = w->rets[w->ret_top];
	return true;
}

/*
 * Start @w at the PSB at @offset, its PSB+ taken: 0, or PTW_FALLBACK if
 * the walker does not take it.  @w->stop_at is kept.
 */
int ptw_walk__sync(struct ptw_walk *w, uint64_t offset);
/*
 * Walk on until the trace ends (@w->eos), @w->stop_at TIP.PGDs are
 * behind, or the walker cannot go on: 0 or PTW_FALLBACK.
 */
int ptw_walk__run(struct ptw_walk *w);
/*
 * The next packet of the flow (TNT, TIP, TIP.PGE, TIP.PGD, FUP, OVF) in
 * @w->pkt, kept until consumed (@w->have); PSB+ and timing on the way are
 * taken in.  0, with @w->eos at the end of the trace, or PTW_FALLBACK.
 */
int ptw_walk__peek(struct ptw_walk *w);
/* A timing packet at @at, in the order the walker takes: 0 or PTW_FALLBACK. */
int ptw_walk__timing(struct ptw_walk *w, const uint8_t *at);
/* ... after a TSC since the last TMA (*@tsc) and a TMA (*@tma) or not, both updated. */
int ptw_timing__order(bool *tsc, bool *tma, const uint8_t *at);
/* An OVF peeked (pt-walk-ovf.c): 0, the flow on after it, or PTW_FALLBACK. */
int ptw_walk__overflow(struct ptw_walk *w);
/*
 * Skimming (skim.c, pt-walk-skim.c): skim from @from if it may before
 * @end; at the end, whether the walk gave what a whole one gives.
 */
bool ptw_walk__skim(struct ptw_walk *w, uint64_t from, uint64_t end);
/*
 * Skimming, the commonest blocks walked with only what a skim keeps
 * (pt-walk-skim-fast.c), up to the first that needs more: ptw_walk__run()
 * goes on from there.  Whether it stopped at the skim's point.
 */
bool ptw_walk__skim_fast(struct ptw_walk *w);
/*
 * The walk reached where ptw_walk__skim() left the packets to count: the
 * point to skim to, counted from @pos, @branches walked.
 */
uint64_t ptw_walk__replan(struct ptw_walk *w, uint64_t pos, uint64_t branches);
/* The walk reached the point (out of line: once a skim). */
void ptw_walk__unskim(struct ptw_walk *w);
bool ptw_walk__skimmed(struct ptw_walk *w);
/* The image's code may have changed since the last decode: take it in. */
void ptw_decoder__update(struct ptw_decoder *wd);
/* The blocks built and evicted since the last call, into the statistics. */
void ptw_decoder__count_blocks(struct ptw_decoder *wd);

/* The backend's stream functions, on the walker (pt-walk-stream.c). */
int ptw_stream__begin(void *priv, const uint8_t *buf, size_t len);
int ptw_stream__to(void *priv, uint64_t end);
void ptw_stream__end(void *priv);

#endif /* __AUXSAMPLE_PT_WALK_H */
