// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Intel PT backend on libipt (pt.c), decoding streams: the snippets
 * of a CPU's samples that overlap, laid end to end, decoded once
 * (auxsample_decoder__stream_begin() and _to()).
 *
 * A sample's snippet ends where its PMI stopped the trace: a TIP.PGD,
 * then at most timing packets.  The branches before the end of a snippet
 * are therefore those decoded before the decoder's n-th disable event, n
 * the number of TIP.PGDs before that end; a scan of the packets finds
 * them.  libipt's offsets cannot tell it: its decoders read ahead.
 */
#include <stdlib.h>
#include <intel-pt.h>
#include "backend.h"
#include "pt-libipt.h"
#include "pt-stops.h"

struct pt_stream {
	struct pt_flow		f;
	const uint8_t		*buf;
	size_t			len;
	struct pt_stops		stops;
	uint64_t		seen;		/* stops behind: decoded or lost */
	uint64_t		decoded;	/* seen, at the last stop decoded */
	int			status;		/* libipt's, where decoding paused */
	bool			ended;
};

/* Packets that may follow a snippet's last TIP.PGD. */
static bool pt_packet__is_idle(enum pt_packet_type type)
{
	switch (type) {
	case ppt_pad:
	case ppt_psb:
	case ppt_psbend:
	case ppt_tsc:
	case ppt_tma:
	case ppt_mtc:
	case ppt_cyc:
	case ppt_cbr:
	case ppt_mnt:
		return true;
	default:
		return false;
	}
}

/* Where the trace stops, and until where nothing but timing follows. */
static int pt_stream__scan(struct pt_stream *s, const struct pt_config *cfg)
{
	struct pt_packet_decoder *pkt = pt_pkt_alloc_decoder(cfg);
	struct pt_packet p;
	uint64_t offset;
	int status, err = 0;

	if (!pkt)
		return -AUXSAMPLE_ERR_NOMEM;
	for (status = pt_pkt_sync_forward(pkt); status >= 0 && !err;
	     status = pt_pkt_sync_forward(pkt)) {
		while (!err) {
			pt_pkt_get_offset(pkt, &offset);
			status = pt_pkt_next(pkt, &p, sizeof(p));
			if (status < 0)
				break;
			err = pt_stops__packet(&s->stops, offset, p.size,
					       pt_packet__is_idle(p.type), p.type == ppt_tip_pgd);
		}
		/* A corrupt packet: the flow goes on at the next PSB. */
		pt_stops__lost(&s->stops, offset);
	}
	pt_pkt_free_decoder(pkt);
	return err;
}

static void pt_stream__free(struct pt_stream *s)
{
	if (!s)
		return;
	pt_blk_free_decoder(s->f.blk);
	pt_stops__exit(&s->stops);
	free(s);
}

void pt_stream__end(void *priv)
{
	struct pt_decoder *pd = priv;

	pt_stream__free(pd->stream);
	pd->stream = NULL;
}

/* Synced at a PSB: the stops before it are behind, decoded or lost. */
static void pt_stream__synced(struct pt_stream *s, int status)
{
	uint64_t sync = 0;

	pt_blk_get_sync_offset(s->f.blk, &sync);
	auxsample__stats(s->f.dec)->syncs++;
	pt_flow__synced(&s->f);
	s->seen = pt_stops__before(&s->stops, sync);
	s->status = status;
}

int pt_stream__begin(void *priv, const uint8_t *buf, size_t len)
{
	struct pt_decoder *pd = priv;
	struct pt_stream *s;
	struct pt_config cfg;
	int status;

	pt_stream__end(pd);
	/* libipt reads its buffer anywhere: the whole, from the start. */
	status = auxsample__fetch(pd->dec, 0, len);
	if (status)
		return status;
	status = pt_image__update(pd);
	if (status)
		return status;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -AUXSAMPLE_ERR_NOMEM;
	s->f.pd = pd;
	s->f.dec = pd->dec;
	s->f.buf = buf;
	s->f.size = len;
	s->buf = buf;
	s->len = len;
	s->stops.len = len;
	pt_config__fill(&cfg, &pd->config->pt, buf, len);
	status = pt_stream__scan(s, &cfg);
	if (status)
		goto out_free;
	status = -AUXSAMPLE_ERR_NOMEM;
	s->f.blk = pt_blk_alloc_decoder(&cfg);
	if (!s->f.blk)
		goto out_free;
	status = pt_blk_set_image(s->f.blk, pd->image);
	if (status < 0) {
		status = pt_error(status);
		goto out_free;
	}
	status = pt_blk_sync_forward(s->f.blk);
	if (status < 0) {
		status = -AUXSAMPLE_ERR_NOSYNC;
		goto out_free;
	}
	s->f.cfg = &cfg;
	pt_stream__synced(s, status);
	s->f.cfg = NULL;
	pd->stream = s;
	return 0;

out_free:
	pt_stream__free(s);
	return status;
}

/* Decode on until @target disable events are behind, or the trace ends or fails. */
static int pt_stream__run(struct pt_stream *s, uint64_t target)
{
	struct pt_flow *f = &s->f;
	int status = s->status;
	struct pt_block b;
	struct pt_event ev;

	/* The packets after the last stop were corrupt: lost from here. */
	if (status < 0)
		return status;
	for (;;) {
		while (status & pts_event_pending) {
			status = pt_flow__next_event(f, &ev);
			if (ev.type == ptev_disabled || ev.type == ptev_async_disabled) {
				s->decoded = ++s->seen;
				/* An error after it is the next snippet's. */
				if (s->seen >= target) {
					s->status = status;
					return 0;
				}
			}
			if (status < 0)
				return status;
		}
		status = pt_blk_next(f->blk, &b, sizeof(b));
		pt_flow__block(f, &b);
		if (status < 0)
			return status;
		if (pt_flow__progress(f))
			return -pte_bad_query;
	}
}

int pt_stream__to(void *priv, uint64_t end)
{
	struct pt_decoder *pd = priv;
	struct auxsample_decoder *dec = pd->dec;
	struct pt_stream *s = pd->stream;
	uint64_t target;
	int status;

	if (!s)
		return -AUXSAMPLE_ERR_INVALID;
	/* The snippet must end at a trace stop: the stop's branches are its. */
	target = pt_stops__of(&s->stops, end);
	if (!target || s->seen > target)
		return -AUXSAMPLE_ERR_NOT_IN_STREAM;
	status = pt_image__update(pd);
	if (status)
		return status;
	pt_blk_set_image(s->f.blk, pd->image);

	while (s->seen < target && !s->ended) {
		status = pt_stream__run(s, target);
		if (!status)
			break;
		if (status != -pte_eos) {
			/* Lost until the next PSB: a gap in the flow. */
			pt_flow__error(&s->f, status);
			s->f.pending = false;
			auxsample__gap(dec, s->f.last_ip, 0);
			status = pt_blk_sync_forward(s->f.blk);
		}
		if (status < 0) {
			if (status != -pte_eos)
				pt_flow__error(&s->f, status);
			s->ended = true;
			break;
		}
		pt_stream__synced(s, status);
	}
	/*
	 * Lost before its stop (a decode error, then a PSB after the stop or
	 * none at all): what the ring holds is an earlier snippet's.
	 */
	if (s->decoded != target)
		return -AUXSAMPLE_ERR_NOT_IN_STREAM;
	return 0;
}
