// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The packets of each CoreSight ETMv4/ETE source, as OpenCSD's packet
 * processor hands them to its decoder: what the backend (etm.c) learns
 * from them that OpenCSD's elements do not say (where the A-syncs are,
 * the address after each atom packet), and the packets that OpenCSD's
 * decoder crashes or hangs on, made corrupt data before it sees them.
 */
#include <opencsd/c_api/opencsd_c_api.h>
#include <opencsd/etmv4/trc_pkt_types_etmv4.h>
#include "etm.h"

/*
 * Packets that OpenCSD 1.3.3 mishandles, fixed in 1.4.1
 * (github.com/Linaro/OpenCSD issues 53 and 58): a mispredict erases
 * address elements from the P0 stack while it walks it with a deque
 * iterator that the erase made stale (SIGSEGV in mispredictAtom()), and
 * a cancel that finds a timestamp, cycle count or event at the front of
 * the stack puts it back at the front on every turn of its loop, never
 * to end (cancelElements()).
 */
static bool etm_packet__is_speculative(ocsd_etmv4_i_pkt_type type)
{
	switch (type) {
	case ETM4_PKT_I_CANCEL_F1:
	case ETM4_PKT_I_CANCEL_F1_MISPRED:
	case ETM4_PKT_I_MISPREDICT:
	case ETM4_PKT_I_CANCEL_F2:
	case ETM4_PKT_I_CANCEL_F3:
		return true;
	default:
		return false;
	}
}

/* What a packet means to the address after an atom (etm_packet_targets). */
enum etm_packet_class {
	ETM_PKT_OTHER,		/* another P0 element, a break: closes */
	ETM_PKT_ATOM,
	ETM_PKT_ADDR,
	ETM_PKT_ASIDE,		/* says nothing of where the flow went */
};

static enum etm_packet_class etm_packet__class(ocsd_etmv4_i_pkt_type type)
{
	switch (type) {
	case ETM4_PKT_I_ATOM_F1:
	case ETM4_PKT_I_ATOM_F2:
	case ETM4_PKT_I_ATOM_F3:
	case ETM4_PKT_I_ATOM_F4:
	case ETM4_PKT_I_ATOM_F5:
	case ETM4_PKT_I_ATOM_F6:
		return ETM_PKT_ATOM;
	case ETM4_PKT_I_ADDR_CTXT_L_32IS0:
	case ETM4_PKT_I_ADDR_CTXT_L_32IS1:
	case ETM4_PKT_I_ADDR_CTXT_L_64IS0:
	case ETM4_PKT_I_ADDR_CTXT_L_64IS1:
	case ETM4_PKT_I_ADDR_MATCH:
	case ETM4_PKT_I_ADDR_S_IS0:
	case ETM4_PKT_I_ADDR_S_IS1:
	case ETM4_PKT_I_ADDR_L_32IS0:
	case ETM4_PKT_I_ADDR_L_32IS1:
	case ETM4_PKT_I_ADDR_L_64IS0:
	case ETM4_PKT_I_ADDR_L_64IS1:
		return ETM_PKT_ADDR;
	case ETM4_PKT_I_TIMESTAMP:
	case ETM4_PKT_I_CCNT_F1:
	case ETM4_PKT_I_CCNT_F2:
	case ETM4_PKT_I_CCNT_F3:
	case ETM4_PKT_I_CTXT:
	case ETM4_PKT_I_COMMIT:
	case ETM4_PKT_I_EVENT:
	case ETM4_PKT_I_IGNORE:
	/* A-profile: after the ERET's target address, no P0 element */
	case ETM4_PKT_I_EXCEPT_RTN:
		return ETM_PKT_ASIDE;
	default:
		return ETM_PKT_OTHER;
	}
}

static void etm_source__packet(struct etm_source_state *s, const ocsd_etmv4_i_pkt *p,
			       ocsd_trc_index_t index)
{
	struct etm_packet_targets *pt = &s->targets;

	switch (etm_packet__class(p->type)) {
	case ETM_PKT_ATOM:
		pt->atom = index;
		pt->open = true;
		break;
	case ETM_PKT_ADDR:
		if (pt->open) {
			pt->t[pt->next].atom = pt->atom;
			pt->t[pt->next].addr = p->v_addr.val;
			pt->next = (pt->next + 1) % ETM_PKT_TARGETS;
			if (pt->nr < ETM_PKT_TARGETS)
				pt->nr++;
		}
		pt->open = false;
		break;
	case ETM_PKT_ASIDE:
		break;
	default:
		/* A cancel or mispredict may take back atoms. */
		if (etm_packet__is_speculative(p->type))
			pt->nr = 0;
		pt->open = false;
		break;
	}
}

/*
 * Packets that OpenCSD 1.3.3's ETMv4 decoder crashes or hangs on:
 *  - a cancel or mispredict (see etm_packet__is_speculative()).  Without
 *    speculation (TRCIDR8.MAXSPEC 0, every core known) it is corrupt
 *    data.  With it, 1.4.1 decodes them, but its mispredictAtom() still
 *    erases an address that an exception waited for (the crash below),
 *    which wants_addr does not follow: such trace resyncs at each;
 *  - a Commit while an exception or Q element waits for its address:
 *    where the commit reaches the element, processException() or
 *    processQElement() reads the address past the end of the P0 stack
 *    (SIGSEGV).  Without speculation every older element is committed
 *    already, so it always does.  With it, a Commit there that stops
 *    short would decode; taking it for corrupt data costs a resync, in
 *    trace that no core we know of writes;
 *  - a Trace Info whose speculation depth is more than MAXSPEC allows:
 *    the next packet commits the excess, an exception that waits for its
 *    address among them, with the same crash.
 */
static bool etm_source__crashes_decoder(const struct etm_source_state *s,
					const ocsd_etmv4_i_pkt *p)
{
	if (etm_packet__is_speculative(p->type))
		return true;
	if (p->type == ETM4_PKT_I_COMMIT)
		return s->wants_addr;
	if (p->type == ETM4_PKT_I_TRACE_INFO)
		return p->curr_spec_depth > s->maxspec;
	return false;
}

/* Whether the decoder's last exception or Q element waits for an address. */
static void etm_source__await_addr(struct etm_source_state *s, const ocsd_etmv4_i_pkt *p)
{
	switch (p->type) {
	case ETM4_PKT_I_EXCEPT:
		s->wants_addr = true;
		break;
	case ETM4_PKT_I_Q:
		if (!p->Q_pkt.addr_present)
			s->wants_addr = true;
		break;
	/* Each halts the decoder (etm_feed() resets it), or discards its P0 stack. */
	case ETM4_PKT_I_BAD_SEQUENCE:
	case ETM4_PKT_I_BAD_TRACEMODE:
	case ETM4_PKT_I_RESERVED:
	case ETM4_PKT_I_OVERFLOW:
	case ETM4_PKT_I_DISCARD:
		s->wants_addr = false;
		break;
	default:
		if (etm_packet__class(p->type) == ETM_PKT_ADDR)
			s->wants_addr = false;
		break;
	}
}

/*
 * Packets, seen before the decoder gets them: where the A-syncs are, the
 * address after each atom packet, and work-arounds.  ETE sources are
 * decoded as ETMv4 of version 5 (see etm_ete_as_v4()) so that the C API
 * gives their packets too.
 */
void etm_pkt_mon(const void *context, const ocsd_datapath_op_t op,
		 const ocsd_trc_index_t index, const void *pkt, const uint32_t size,
		 const uint8_t *data)
{
	struct etm_source_state *s = (struct etm_source_state *)context;
	ocsd_etmv4_i_pkt *p = (ocsd_etmv4_i_pkt *)pkt;

	if (op != OCSD_OP_DATA || !p)
		return;
	if (p->type == ETM4_PKT_I_ASYNC) {
		s->async = index;
		s->async_seen = true;
	} else if (etm_source__crashes_decoder(s, p)) {
		/* Corrupt data: the decoder halts at a bad packet, etm_feed() resets it. */
		p->type = ETM4_PKT_I_BAD_SEQUENCE;
	}
	etm_source__await_addr(s, p);
	etm_source__packet(s, p, index);
}

uint64_t etm_source__packet_target(const struct etm_source_state *s)
{
	const struct etm_packet_targets *pt = &s->targets;

	if (s->pending != ETM_PENDING_BRANCH || !s->indirect)
		return 0;
	for (unsigned int i = 0; i < pt->nr; i++) {
		const struct etm_packet_target *t;

		t = &pt->t[(pt->next + ETM_PKT_TARGETS - 1 - i) % ETM_PKT_TARGETS];
		if (t->atom == s->atom)
			return t->addr;
	}
	return 0;
}
