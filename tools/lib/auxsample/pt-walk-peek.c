// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Intel PT walker's reading of the trace between the packets of the
 * flow (pt-walk.c walks those): a PSB+ and the sync at it, timing packets
 * in the order libipt takes them, MODE.Exec and MODE.TSX, and the next
 * packet of the flow, peeked and kept until the walk consumes it.
 */
#include <stddef.h>
#include <string.h>
#include "backend.h"
#include "pt-cyc.h"
#include "pt-parse.h"
#include "pt-walk.h"

/*
 * A timing packet at @at: libipt's time keeping refuses some orders
 * (fuzz-pt found a TMA without a TSC before it, a second TMA after one
 * TSC, and MTC and CYC in a PSB+ before either): only TSC, then one TMA,
 * then MTC and CYC are the walker's, as the hardware and the PT writer
 * send them.
 */
int ptw_timing__order(bool *tsc, bool *tma, const uint8_t *at)
{
	if (at[0] == 0x19) {
		*tsc = true;
	} else if (at[0] == 0x02 && at[1] == 0x73) {
		if (!*tsc)
			return PTW_FALLBACK;
		*tsc = false;
		*tma = true;
	} else if (at[0] == 0x59 || (at[0] & 3) == 3) {
		if (!*tma)
			return PTW_FALLBACK;
	}
	return 0;
}

int ptw_walk__timing(struct ptw_walk *w, const uint8_t *at)
{
	return ptw_timing__order(&w->tsc, &w->tma, at);
}

/* A MODE packet: only 64-bit code outside transactions is the walker's. */
static int ptw_walk__mode(struct ptw_walk *w, const struct ptw_packet *p)
{
	if (p->type == PTW_MODE_EXEC) {
		if ((p->mode & 3) != 1)
			return PTW_FALLBACK;
		w->mode = true;
	} else if (p->mode & 3) {
		return PTW_FALLBACK;
	}
	return 0;
}

/* The PSB+ after the PSB just read: whether it enables the flow, at *@ip. */
static int ptw_walk__psb_plus(struct ptw_walk *w, bool *fup, uint64_t *ip)
{
	struct ptw_packet p;

	w->last_ip = 0;
	w->nr_rets = 0;
	*fup = false;
	for (;;) {
		const uint8_t *at = w->buf + w->pos;
		int n = ptw_parse(at, w->len - w->pos, &p);

		if (n < 0)
			return PTW_FALLBACK;
		w->pos += n;
		switch (p.type) {
		case PTW_PAD:
			break;
		case PTW_TIMING:
			/* No MTC or CYC in a PSB+: libipt's timing may refuse them. */
			if (at[0] == 0x59 || (at[0] & 3) == 3 || ptw_walk__timing(w, at))
				return PTW_FALLBACK;
			break;
		case PTW_MODE_EXEC:
		case PTW_MODE_TSX:
			if (ptw_walk__mode(w, &p))
				return PTW_FALLBACK;
			break;
		case PTW_FUP:
			if (*fup || ptw_ip(&p, w->last_ip, ip))
				return PTW_FALLBACK;
			w->last_ip = *ip;
			*fup = true;
			break;
		case PTW_PSBEND:
			return w->mode || !*fup ? 0 : PTW_FALLBACK;
		default:
			return PTW_FALLBACK;
		}
	}
}

int ptw_walk__peek(struct ptw_walk *w)
{
	struct ptw_packet *p = &w->pkt;
	uint64_t ip;
	bool fup;

	while (!w->have) {
		const uint8_t *at = w->buf + w->pos;
		int n;

		if (w->pos == w->len) {
			/*
			 * A MODE whose packet never comes (the snippet cut
			 * between them): libipt's block decoder stops at the
			 * MODE, counting none of the instructions after the
			 * last packet before it; the walker would walk on to
			 * the next branch that needs trace.  fuzz-pt found
			 * one; a real snippet ends there about never.
			 */
			if (w->mode_binds)
				return PTW_FALLBACK;
			w->eos = true;
			return 0;
		}
		n = ptw_parse(at, w->len - w->pos, p);
		if (n < 0)
			return PTW_FALLBACK;
		w->pos += n;
		switch (p->type) {
		case PTW_PAD:
			break;
		case PTW_TIMING:
			if (ptw_walk__timing(w, at))
				return PTW_FALLBACK;
			break;
		case PTW_MODE_EXEC:
		case PTW_MODE_TSX:
			if (ptw_walk__mode(w, p) || w->mode_binds)
				return PTW_FALLBACK;
			/*
			 * libipt binds it to the next TIP (MODE.Exec) or FUP
			 * (MODE.TSX), and fails where another packet of the
			 * flow comes first (fuzz-pt found a TNT): the walker
			 * takes it only before its own.
			 */
			w->mode_binds = p->type == PTW_MODE_EXEC ?
					1U << PTW_TIP | 1U << PTW_TIP_PGE : 1U << PTW_FUP;
			break;
		case PTW_PSB:
			if (w->mode_binds || w->nr_bits || ptw_walk__psb_plus(w, &fup, &ip) ||
			    fup != w->enabled)
				return PTW_FALLBACK;
			break;
		case PTW_TNT:
		case PTW_OVF:
			if (w->mode_binds)
				return PTW_FALLBACK;
			w->have = true;
			break;
		case PTW_TIP:
		case PTW_TIP_PGE:
		case PTW_TIP_PGD:
		case PTW_FUP:
			if (w->mode_binds && !(w->mode_binds & 1U << p->type))
				return PTW_FALLBACK;
			w->mode_binds = 0;
			if (p->ip_bytes) {
				if (ptw_ip(p, w->last_ip, &w->pkt_ip))
					return PTW_FALLBACK;
				w->last_ip = w->pkt_ip;
			} else if (p->type != PTW_TIP_PGD) {
				return PTW_FALLBACK;
			}
			w->have = true;
			break;
		default:
			return PTW_FALLBACK;
		}
	}
	return 0;
}

int ptw_walk__sync(struct ptw_walk *w, uint64_t offset)
{
	struct auxsample_stats *stats = auxsample__stats(w->dec);
	uint64_t from = w->from;
	struct ptw_packet p;
	int err;

	memset(&w->pkt, 0, sizeof(*w) - offsetof(struct ptw_walk, pkt));
	/* The last block's branch stays, as pt.c's last_ip: an OVF's gap starts there. */
	w->from = from;
	w->pos = offset;
	if (ptw_parse(w->buf + w->pos, w->len - w->pos, &p) != 16 || p.type != PTW_PSB)
		return PTW_FALLBACK;
	w->pos += p.size;
	err = ptw_walk__psb_plus(w, &w->enabled, &w->ip);
	if (err)
		return err;
	if (!stats->syncs++)
		stats->decode_start = offset;
	auxsample_timing__break(w->dec);
	if (w->timed)
		pt_cyc__start(&w->cyc, w->buf, w->len, offset);
	return 0;
}
