/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The CoreSight ETMv4/ETE backend's state (etm.c), and what its packet
 * monitor (etm-packets.c) keeps of the packets OpenCSD's decoder gets.
 */
#ifndef __AUXSAMPLE_ETM_H
#define __AUXSAMPLE_ETM_H

#include <stdbool.h>
#include <stdint.h>
#include <opencsd/c_api/opencsd_c_api.h>

#define ETM_NR_IDS		128	/* CoreSight trace IDs are 7 bits */

/*
 * The address that the packets give a taken indirect branch.  ETMv4 and
 * ETE follow the atom packet holding an indirect branch's E with its
 * target's address, or with an exception packet that names it (E1:E0
 * 0b10, OpenCSD's excep_ret_addr_br_tgt).  OpenCSD 1.3.3 reads an address
 * packet only when a later P0 element commits it, and then never tells
 * the branch where it went when that element is an exception taken at the
 * target (E1:E0 0b01, the address before it), a TRACE_ON (trace filtered
 * out after the branch, often behind a periodic A-sync and TraceInfo), an
 * overflow, or the end of the trace.  The first address packet after the
 * atom packet, before any packet that is another P0 element or a break in
 * the trace, is the target; an address after such a packet is not (after
 * a TRACE_ON: where the trace resumed, whatever ran meanwhile).
 *
 * The decoder hands out an element after the packets that follow its own
 * (a TRACE_ON waits for the next atom), more of them with speculation:
 * the addresses after the last few atom packets are kept.
 */
#define ETM_PKT_TARGETS		16

struct etm_packet_target {
	ocsd_trc_index_t	atom;	/* an atom packet */
	uint64_t		addr;	/* the first address packet after it */
};

struct etm_packet_targets {
	struct etm_packet_target t[ETM_PKT_TARGETS];	/* a ring */
	unsigned int		next;
	unsigned int		nr;
	ocsd_trc_index_t	atom;	/* the last atom packet */
	bool			open;	/* no address, nothing else, since it */
};

/* What the last element of a source left open, waiting for its target. */
enum etm_pending {
	ETM_PENDING_NONE,
	ETM_PENDING_BRANCH,	/* a taken branch */
	ETM_PENDING_EXCEPTION,	/* an exception, to its vector */
};

struct etm_state;

struct etm_source_state {
	struct etm_state	*etm;
	enum etm_pending	pending;
	unsigned int		kind;		/* AUXSAMPLE_BR_* */
	uint64_t		from;
	uint64_t		ret_addr;	/* of a call */
	ocsd_isa		isa;		/* of the pending branch */
	bool			indirect;	/* the pending branch is */
	ocsd_trc_index_t	atom;		/* its atom packet */
	struct etm_packet_targets targets;
	uint64_t		end_ip;		/* where this source's flow is */
	uint64_t		async;		/* snippet offset of the last A-sync */
	bool			async_seen;
	bool			synced;
	bool			overflowed;	/* its NO_SYNC made the gap */
	uint32_t		maxspec;	/* TRCIDR8.MAXSPEC: the deepest speculation */
	bool			wants_addr;	/* an exception's or Q's address is to come */
	bool			stack;		/* feeds the call stack */
	bool			pid_in_vmid;	/* the OS's PID is in the VMID */
	int64_t			pid;		/* of the last context, -1 unknown */
};

/* A decoder's state (struct auxsample_backend's priv). */
struct etm_state {
	dcd_tree_handle_t	tree;
	struct auxsample_decoder *dec;
	const struct auxsample_config *config;
	struct auxsample_etm_source *sources;	/* a copy of config->etm's */
	const uint8_t		*buf;		/* the snippet being decoded */
	bool			synced_once;
	/* the trace is another thread's than the decoder's (set_thread) */
	bool			foreign;
	uint64_t		code_left;	/* bytes the decode may still read */
	int8_t			slot[ETM_NR_IDS];	/* trace ID -> src[], or -1 */
	unsigned int		nr_src;
	struct etm_source_state	src[];
};

/* Where the packets say the pending indirect branch of @s went, or 0. */
uint64_t etm_source__packet_target(const struct etm_source_state *s);
/*
 * OpenCSD's packet monitor callback of a source, @context its struct
 * etm_source_state: packets, seen before the decoder gets them.
 */
void etm_pkt_mon(const void *context, const ocsd_datapath_op_t op,
		 const ocsd_trc_index_t index, const void *pkt, const uint32_t size,
		 const uint8_t *data);

#endif /* __AUXSAMPLE_ETM_H */
