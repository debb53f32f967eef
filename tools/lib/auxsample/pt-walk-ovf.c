// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Intel PT walker's overflows.  An OVF says that the CPU lost
 * packets: the flow goes on where the overflow resolved, at the FUP that
 * follows it when tracing was on, else at the TIP.PGE that turns it on
 * again (SDM Vol. 3C, "Overflow (OVF) Packet"); only timing packets come
 * between.  libipt delivers the OVF before the block after the last
 * packet the flow took (the walker peeks it there, ptw_walk__run()), and
 * pt.c reports its ptev_overflow: the branch awaiting its target is
 * dropped, an overflow error and a gap from the last block's branch to
 * where the flow goes on; the cycles start again after the OVF
 * (pt-cyc.c).  Anything else after an OVF is libipt's.
 */
#include <intel-pt.h>
#include "backend.h"
#include "pt-cyc.h"
#include "pt-parse.h"
#include "pt-walk.h"

/*
 * The packet the OVF just read binds to, past the timing packets before
 * it: a FUP or TIP.PGE with an IP, its type; else PTW_TIMING.  With a FUP,
 * its IP in *@ip and the walk past it.  Each packet moves the scan on:
 * bounded by the trace.
 */
static enum ptw_type ptw_walk__ovf_binding(struct ptw_walk *w, uint64_t *ip)
{
	uint64_t pos = w->pos;
	struct ptw_packet p;

	while (pos < w->len) {
		const uint8_t *at = w->buf + pos;
		int n = ptw_parse(at, w->len - pos, &p);

		if (n <= 0)
			return PTW_TIMING;
		pos += n;
		switch (p.type) {
		case PTW_PAD:
			break;
		case PTW_TIMING:
			if (ptw_walk__timing(w, at))
				return PTW_TIMING;
			break;
		case PTW_TIP_PGE:
			return p.ip_bytes ? PTW_TIP_PGE : PTW_TIMING;
		case PTW_FUP:
			/* IP compression starts again at the OVF (libipt's reset). */
			if (!p.ip_bytes || ptw_ip(&p, 0, ip))
				return PTW_TIMING;
			w->pos = pos;
			w->last_ip = *ip;
			return PTW_FUP;
		default:
			return PTW_TIMING;
		}
	}
	return PTW_TIMING;
}

int ptw_walk__overflow(struct ptw_walk *w)
{
	struct auxsample_decoder *dec = w->dec;
	enum ptw_type type;
	uint64_t ip = 0;

	/* libipt takes an event only once the TNT bits are used up. */
	if (w->nr_bits || !w->mode)
		return PTW_FALLBACK;
	w->have = false;
	w->last_ip = 0;
	type = ptw_walk__ovf_binding(w, &ip);
	if (type == PTW_TIMING)
		return PTW_FALLBACK;
	w->no_progress = 0;
	/* pt.c's ptev_overflow */
	w->pending = false;
	auxsample_timing__break(dec);
	if (w->timed)
		pt_cyc__event(&w->cyc, dec, PT_CYC_OVERFLOW);
	auxsample__error(dec, 0, -AUXSAMPLE_ERR_OVERFLOW, -pte_overflow);
	auxsample__gap(dec, w->from, ip);
	/*
	 * The RETs of calls made before the OVF may have gone in the lost
	 * packets, so the stack may no longer be the CPU's: the calls
	 * before are forgotten, so that a compressed RET into one of them
	 * finds the stack empty and the snippet is libipt's to decode,
	 * with its own stack.
	 */
	w->nr_rets = 0;
	/* Tracing was off: on at the TIP.PGE, as ever (ptw_walk__enable()). */
	w->enabled = type == PTW_FUP;
	w->ip = ip;
	return 0;
}
