// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CoreSight ETMv4/ETE backend on OpenCSD's C API (opencsd_c_api.h).
 *
 * OpenCSD turns trace into generic elements per trace ID: instruction
 * ranges, exceptions, gaps.  A range whose last instruction is a branch
 * that was executed ends in a taken branch; where it went is the start of
 * what comes next for the same trace ID: the next range, or the address
 * whose memory could not be read (ADDR_NACC: the branch is known, what
 * follows is not), or the preferred return address of an exception taken
 * right at the branch target; where none is, an indirect branch's target
 * is the address packet after its atom (etm_packet_targets).  Nothing is
 * used before a source's first sync point (A-sync + TraceInfo): OpenCSD
 * emits nothing for it before.
 *
 * One decode tree per decoder, created in __init() and reset between
 * snippets: trees are expensive to build, and OpenCSD's global tree list
 * is not thread safe, so creating and destroying them is serialized.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <opencsd/c_api/opencsd_c_api.h>
#include <opencsd/etmv4/trc_pkt_types_etmv4.h>
#include <opencsd/ete/trc_pkt_types_ete.h>
#include "backend.h"
#include "etm.h"

#define ETM_FRAME		OCSD_DFRMTR_FRAME_SIZE
#define ETM_MAX_FLUSHES		1024	/* of a tree that says WAIT */

/*
 * OpenCSD 1.3.3's memory cache takes a read for a hit when its address
 * plus size wraps past the top of the address space, and copies from far
 * outside the page it hit (TrcMemAccCache::blockInCache()).  A trace
 * address, a branch (a backward one from low code wraps) or a return
 * gets there.  The cache is asked only where a memory accessor is: ours
 * ends below the last 256 MiB, where no code runs (on arm64: the fixmap
 * and I/O), and OpenCSD finds nothing to read there.
 */
#define ETM_CODE_END		(~0ULL - (256ULL << 20) + 1)

/*
 * OpenCSD walks the code from an atom's address to the next branch with
 * no bound: a corrupt address in a large run of code without a branch,
 * or in data, is walked to its end, each time one comes.  A decode reads
 * no more code than 16 MiB and 1 KiB a byte of the snippet: then the
 * reads fail, each an ADDR_NACC.  A program's trace reads a fraction of
 * that (OpenCSD keeps what it read in its cache).
 */
#define ETM_CODE_BUDGET		(16ULL << 20)
#define ETM_CODE_PER_BYTE	1024

/* TRCCONFIGR: VMID traced, and VMID being CONTEXTIDR_EL2 (the PID under VHE) */
#define ETM_CONFIGR_VMID	(1U << 7)
#define ETM_CONFIGR_VMIDOPT	(1U << 15)

/* OpenCSD's list of trees and its default error logger are global. */
static pthread_mutex_t etm_lock = PTHREAD_MUTEX_INITIALIZER;
static bool etm_logger_silenced;

static struct etm_source_state *etm_source(struct etm_state *etm, uint8_t chan_id)
{
	/* A single-source tree has no IDs: all it sees is its one source. */
	if (!etm->config->etm.formatted)
		return &etm->src[0];
	if (chan_id >= ETM_NR_IDS || etm->slot[chan_id] < 0)
		return NULL;
	return &etm->src[etm->slot[chan_id]];
}

/*
 * The target of an A64 direct branch, from its opcode: for a taken branch
 * whose successor is not in the snippet.  0 where it cannot be known.
 */
static uint64_t etm_a64_direct_target(struct auxsample_decoder *dec, uint64_t pc)
{
	uint8_t raw[4];
	uint32_t insn;
	int64_t off;

	if (auxsample__read_memory(dec, raw, sizeof(raw), pc) < 4)
		return 0;
	insn = raw[0] | raw[1] << 8 | raw[2] << 16 | (uint32_t)raw[3] << 24;
	if ((insn & 0x7c000000) == 0x14000000)		/* B, BL: imm26 */
		off = (int64_t)((uint64_t)insn << 38) >> 36;
	else if ((insn & 0xff000010) == 0x54000000 ||	/* B.cond: imm19 */
		 (insn & 0x7e000000) == 0x34000000)	/* CBZ, CBNZ */
		off = (int64_t)((uint64_t)(insn >> 5) << 45) >> 43;
	else if ((insn & 0x7e000000) == 0x36000000)	/* TBZ, TBNZ: imm14 */
		off = (int64_t)((uint64_t)(insn >> 5) << 50) >> 48;
	else
		return 0;
	return pc + off;
}

/* The pending branch or exception of @s went to @to, 0 if unknown. */
static void etm_source__resolve(struct etm_state *etm, struct etm_source_state *s,
				uint64_t to)
{
	struct auxsample_decoder *dec = etm->dec;
	enum etm_pending pending = s->pending;

	if (pending == ETM_PENDING_NONE)
		return;
	s->pending = ETM_PENDING_NONE;
	if (!to && pending == ETM_PENDING_BRANCH && s->isa == ocsd_isa_aarch64 &&
	    (s->kind == AUXSAMPLE_BR_COND || s->kind == AUXSAMPLE_BR_JUMP ||
	     s->kind == AUXSAMPLE_BR_CALL))
		to = etm_a64_direct_target(dec, s->from);

	auxsample__add_branch(dec, s->from, to, s->kind, to ? 0 : AUXSAMPLE_BRF_TO_UNKNOWN);
	if (to) {
		s->end_ip = to;
		auxsample__stats(dec)->end_ip = to;
	}
	if (!s->stack || pending != ETM_PENDING_BRANCH)
		return;
	if (s->kind == AUXSAMPLE_BR_CALL || s->kind == AUXSAMPLE_BR_IND_CALL) {
		if (auxsample__call(dec, s->ret_addr))
			auxsample__error(dec, 0, -AUXSAMPLE_ERR_NOMEM, 0);
	} else if (s->kind == AUXSAMPLE_BR_RET) {
		/* Of an unknown return, all that is known is which frame it left. */
		if (!to)
			to = auxsample__stack_top(dec);
		auxsample__ret(dec, to);
	}
}

/*
 * The flow of @s stops (an exception, trace off, an overflow, the end of
 * the trace) with no element naming the target of what was open.
 */
static void etm_source__resolve_stop(struct etm_state *etm, struct etm_source_state *s)
{
	etm_source__resolve(etm, s, etm_source__packet_target(s));
}

/* Taken branches only: the kinds perf gives them (util/cs-etm.c). */
static unsigned int etm_branch_kind(const ocsd_generic_trace_elem *el)
{
	if (el->last_i_type == OCSD_INSTR_BR) {
		if (el->last_i_subtype == OCSD_S_INSTR_BR_LINK)
			return AUXSAMPLE_BR_CALL;
		return el->last_instr_cond ? AUXSAMPLE_BR_COND : AUXSAMPLE_BR_JUMP;
	}
	switch (el->last_i_subtype) {
	case OCSD_S_INSTR_BR_LINK:
		return AUXSAMPLE_BR_IND_CALL;
	case OCSD_S_INSTR_V8_RET:
	case OCSD_S_INSTR_V7_IMPLIED_RET:
		return AUXSAMPLE_BR_RET;
	case OCSD_S_INSTR_V8_ERET:
		return AUXSAMPLE_BR_FAR;
	default:
		/* A BR: a jump table or a tail call as often as a return. */
		return AUXSAMPLE_BR_IND_JUMP;
	}
}

static void etm_source__range(struct etm_state *etm, struct etm_source_state *s,
			      const ocsd_generic_trace_elem *el, ocsd_trc_index_t index)
{
	struct auxsample_decoder *dec = etm->dec;
	uint64_t last = el->en_addr - el->last_instr_sz;

	struct auxsample_flow flow = {
		.type	= AUXSAMPLE_FLOW_RANGE,
		.from	= el->st_addr,
		.to	= last,
		.insns	= el->num_instr_range,
	};

	etm_source__resolve(etm, s, el->st_addr);
	auxsample__flow(dec, &flow);
	auxsample__insns(dec, el->num_instr_range);
	s->end_ip = el->en_addr;
	auxsample__stats(dec)->end_ip = el->en_addr;

	if (!el->last_instr_exec ||
	    (el->last_i_type != OCSD_INSTR_BR && el->last_i_type != OCSD_INSTR_BR_INDIRECT))
		return;
	s->pending = ETM_PENDING_BRANCH;
	s->kind = etm_branch_kind(el);
	s->from = last;
	s->ret_addr = el->en_addr;
	s->isa = el->isa;
	s->indirect = el->last_i_type == OCSD_INSTR_BR_INDIRECT;
	s->atom = index;
	s->end_ip = last;
	auxsample__stats(dec)->end_ip = last;
}

/* The flow of @s is lost: what was open goes where its packets say. */
static void etm_source__lost(struct etm_state *etm, struct etm_source_state *s)
{
	etm_source__resolve_stop(etm, s);
	if (s->synced)
		auxsample__gap(etm->dec, s->end_ip, 0);
	s->synced = false;
}

/*
 * Where the A-sync is that a sync point decoded at snippet offset @index
 * began with: the last one the packet monitor saw, or in raw data the
 * last A-sync pattern before @index; else @index itself.
 */
static uint64_t etm_async_offset(struct etm_state *etm, struct etm_source_state *s,
				 uint64_t index)
{
	static const uint8_t async[12] = { [11] = 0x80 };
	uint64_t i = index;

	if (s->async_seen && s->async <= index)
		return s->async;
	if (etm->config->etm.formatted)
		return index;
	while (i >= sizeof(async) - 1) {
		if (!memcmp(etm->buf + i + 1 - sizeof(async), async, sizeof(async)))
			return i + 1 - sizeof(async);
		i--;
	}
	return index;
}

/* The first element after a sync point: decoding starts here. */
static void etm_source__synced(struct etm_state *etm, struct etm_source_state *s,
			       ocsd_trc_index_t index)
{
	struct auxsample_stats *stats = auxsample__stats(etm->dec);

	if (s->synced)
		return;
	s->synced = true;
	stats->syncs++;
	if (etm->synced_once)
		return;
	etm->synced_once = true;
	stats->bytes_before_sync = etm_async_offset(etm, s, index);
}

static void etm_source__exception(struct etm_state *etm, struct etm_source_state *s,
				  const ocsd_generic_trace_elem *el)
{
	uint64_t at = el->excep_ret_addr ? el->en_addr : s->end_ip;

	/* Taken right at a branch's target, which it or the packets name. */
	if (el->excep_ret_addr_br_tgt)
		etm_source__resolve(etm, s, el->en_addr);
	else
		etm_source__resolve_stop(etm, s);
	s->pending = ETM_PENDING_EXCEPTION;
	s->kind = AUXSAMPLE_BR_INTR;
	s->from = at;
	s->end_ip = at;
	auxsample__stats(etm->dec)->end_ip = at;
}

/*
 * Whose code runs now, as the OS writes it into CONTEXTIDR (perf's pid_fmt:
 * Linux writes the thread's ID).  Another thread's than the one decoded
 * for: its trace is left out, and its code never read through the maps
 * of the decoded one, where it would decode to branches that never were.
 */
static void etm_source__context(struct etm_state *etm, struct etm_source_state *s,
				const ocsd_generic_trace_elem *el)
{
	struct auxsample_flow flow = { .type = AUXSAMPLE_FLOW_CONTEXT, .pid = -1, };
	struct auxsample_decoder *dec = etm->dec;
	bool foreign;

	if (s->pid_in_vmid && el->context.vmid_valid)
		flow.pid = el->context.vmid;
	else if (!s->pid_in_vmid && el->context.ctxt_id_valid)
		flow.pid = el->context.context_id;
	if (flow.pid == s->pid)
		return;
	s->pid = flow.pid;
	auxsample__flow(dec, &flow);
	foreign = auxsample__thread(dec) >= 0 && flow.pid >= 0 &&
		  flow.pid != auxsample__thread(dec);
	if (foreign && !etm->foreign) {
		/* Never a branch into another thread's code. */
		etm_source__resolve(etm, s, 0);
		etm_source__lost(etm, s);
		auxsample__stats(dec)->foreign++;
	}
	etm->foreign = foreign;
}

/*
 * The trace's timestamp, where the packet that carried it is: TIMESTAMP
 * elements, and any other element that carries one (has_ts: software
 * trace's timestamped payloads).
 */
static void etm_timestamp(struct etm_state *etm, const ocsd_generic_trace_elem *el,
			  ocsd_trc_index_t index)
{
	struct auxsample_flow flow = {
		.type	= AUXSAMPLE_FLOW_TIMESTAMP,
		.from	= index,
		.to	= el->timestamp,
	};

	auxsample__flow(etm->dec, &flow);
}

/*
 * The elements that say where the source's trace is not: lost sync, its
 * end, or nothing known.  True when @el was one of them.
 */
static bool etm_source__unsynced(struct etm_state *etm, struct etm_source_state *s,
				 const ocsd_generic_trace_elem *el, ocsd_trc_index_t index)
{
	struct auxsample_decoder *dec = etm->dec;

	switch (el->elem_type) {
	case OCSD_GEN_TRC_ELEM_NO_SYNC:
		/* Why, where the decoder says: the C API logs nothing for us. */
		if (el->unsync_eot_info == UNSYNC_OVERFLOW) {
			auxsample__error(dec, index, -AUXSAMPLE_ERR_OVERFLOW, 0);
			s->overflowed = true;
		} else if (el->unsync_eot_info == UNSYNC_BAD_PACKET) {
			auxsample__error(dec, index, -AUXSAMPLE_ERR_DECODE,
					 OCSD_ERR_BAD_PACKET_SEQ);
		}
		etm_source__lost(etm, s);
		/* The decoder was reset: its P0 stack is empty. */
		s->wants_addr = false;
		return true;
	case OCSD_GEN_TRC_ELEM_EO_TRACE:
		etm_source__resolve_stop(etm, s);
		return true;
	case OCSD_GEN_TRC_ELEM_UNKNOWN:
		return true;
	default:
		return false;
	}
}

/* The elements of the decoded thread's flow, in sync. */
static void etm_source__flow(struct etm_state *etm, struct etm_source_state *s,
			     const ocsd_generic_trace_elem *el, ocsd_trc_index_t index)
{
	struct auxsample_decoder *dec = etm->dec;

	switch (el->elem_type) {
	case OCSD_GEN_TRC_ELEM_TRACE_ON:
		/* Trace was off: a branch before went out of the traced code. */
		etm_source__resolve_stop(etm, s);
		/* One overflow, one gap: OpenCSD says it twice. */
		if (el->trace_on_reason == TRACE_ON_OVERFLOW && !s->overflowed)
			auxsample__gap(dec, s->end_ip, 0);
		s->overflowed = false;
		break;
	case OCSD_GEN_TRC_ELEM_INSTR_RANGE:
		etm_source__range(etm, s, el, index);
		break;
	case OCSD_GEN_TRC_ELEM_ADDR_NACC:
		/* The flow got here, and is lost until the next address. */
		etm_source__resolve(etm, s, el->st_addr);
		s->end_ip = el->st_addr;
		auxsample__stats(dec)->end_ip = el->st_addr;
		auxsample__error(dec, index, -AUXSAMPLE_ERR_NOMAP, OCSD_ERR_MEM_NACC);
		auxsample__gap(dec, el->st_addr, 0);
		break;
	case OCSD_GEN_TRC_ELEM_ADDR_UNKNOWN:
	case OCSD_GEN_TRC_ELEM_I_RANGE_NOPATH:
		etm_source__resolve_stop(etm, s);
		auxsample__gap(dec, s->end_ip, 0);
		break;
	case OCSD_GEN_TRC_ELEM_EXCEPTION:
		etm_source__exception(etm, s, el);
		break;
	default:
		/* Exception returns come as ERET ranges; the rest is no flow. */
		break;
	}
}

static ocsd_datapath_resp_t etm_elem_in(const void *context, const ocsd_trc_index_t index,
					const uint8_t chan_id,
					const ocsd_generic_trace_elem *el)
{
	struct etm_state *etm = (struct etm_state *)context;
	struct etm_source_state *s = etm_source(etm, chan_id);

	if (!s)
		return OCSD_RESP_CONT;
	auxsample__set_source(etm->dec, chan_id);
	if (el->elem_type == OCSD_GEN_TRC_ELEM_TIMESTAMP || el->has_ts)
		etm_timestamp(etm, el, index);
	if (etm_source__unsynced(etm, s, el, index))
		return OCSD_RESP_CONT;

	etm_source__synced(etm, s, index);
	if (el->elem_type == OCSD_GEN_TRC_ELEM_PE_CONTEXT) {
		etm_source__context(etm, s, el);
		return OCSD_RESP_CONT;
	}
	if (etm->foreign)
		return OCSD_RESP_CONT;		/* until the decoded thread's again */
	etm_source__flow(etm, s, el, index);
	return OCSD_RESP_CONT;
}

static uint32_t etm_read_memory(const void *context, const ocsd_vaddr_t addr,
				const ocsd_mem_space_acc_t space, const uint32_t size,
				uint8_t *buf)
{
	struct etm_state *etm = (struct etm_state *)context;
	uint32_t len = size;
	int n;

	/* 0 is OpenCSD's "not accessible": an ADDR_NACC element, a gap. */
	if (etm->foreign || !etm->code_left)
		return 0;
	if (len > etm->code_left)
		len = etm->code_left;
	n = auxsample__read_memory(etm->dec, buf, len, addr);
	if (n <= 0)
		return 0;
	if ((uint32_t)n < len)
		len = n;
	etm->code_left -= len;
	return len;
}

/* The architecture OpenCSD's instruction decoder follows, as perf picks it. */
static ocsd_arch_version_t etm_arch(const struct auxsample_etm_source *src)
{
	if (src->ete || ((src->trcidr[1] >> 4) & 0xf) >= 4)
		return ARCH_AA64;
	return ARCH_V8;
}

/*
 * An ETE source as the ETMv4 configuration OpenCSD makes of it (ETEConfig:
 * the same registers, the version from TRCDEVARCH): its ETE decoder is
 * the ETMv4 packet processor and decoder with that configuration, but the
 * C API attaches packet monitors to ETMv4 decoders only.
 */
static void etm_ete_as_v4(const struct auxsample_etm_source *src, ocsd_etmv4_cfg *v4)
{
	uint32_t major = (src->trcdevarch >> 12) & 0xf;
	uint32_t minor = (src->trcdevarch >> 16) & 0xf;

	v4->reg_idr1 = (src->trcidr[1] & ~0xff0U) | major << 8 | minor << 4;
	v4->reg_idr9 = 0;
	v4->reg_idr10 = 0;
	v4->reg_idr11 = 0;
	v4->reg_idr12 = 0;
	v4->reg_idr13 = 0;
	v4->arch_ver = ARCH_AA64;
}

static int etm_add_source(struct etm_state *etm, unsigned int i)
{
	const struct auxsample_etm_source *src = &etm->sources[i];
	struct etm_source_state *s = &etm->src[i];
	unsigned char csid;
	ocsd_etmv4_cfg v4 = {
		.reg_idr0	= src->trcidr[0],
		.reg_idr1	= src->trcidr[1],
		.reg_idr2	= src->trcidr[2],
		.reg_idr8	= src->trcidr[8],
		.reg_idr9	= src->trcidr[9],
		.reg_idr10	= src->trcidr[10],
		.reg_idr11	= src->trcidr[11],
		.reg_idr12	= src->trcidr[12],
		.reg_idr13	= src->trcidr[13],
		.reg_configr	= src->trcconfigr,
		.reg_traceidr	= src->trace_id,
		.arch_ver	= etm_arch(src),
		.core_prof	= profile_CortexA,
	};

	if (src->trace_id >= ETM_NR_IDS || etm->slot[src->trace_id] >= 0)
		return -AUXSAMPLE_ERR_INVALID;
	if (src->ete)
		etm_ete_as_v4(src, &v4);
	/*
	 * The decoder halts on a bad packet or sequence, and etm_feed()
	 * resets it there: left to reset itself, OpenCSD 1.3.3 does so in the
	 * middle of committing elements (an empty return stack popped, with
	 * TRCCONFIGR.RS) and goes on with the elements it deleted.
	 */
	if (ocsd_dt_create_decoder(etm->tree, OCSD_BUILTIN_DCD_ETMV4I,
				   OCSD_CREATE_FLG_FULL_DECODER | OCSD_OPFLG_PKTDEC_HALT_BAD_PKTS,
				   &v4, &csid))
		return -AUXSAMPLE_ERR_UNSUPPORTED;
	s->etm = etm;
	/* Only one source's calls and returns can make one call stack. */
	s->stack = !i;
	etm->slot[src->trace_id] = i;
	s->maxspec = src->trcidr[8];
	s->pid_in_vmid = (src->trcconfigr & ETM_CONFIGR_VMID) &&
			 (src->trcconfigr & ETM_CONFIGR_VMIDOPT);
	s->pid = -1;
	if (ocsd_dt_attach_packet_callback(etm->tree, csid, OCSD_C_API_CB_PKT_MON,
					   (void *)etm_pkt_mon, s))
		return -AUXSAMPLE_ERR_INVALID;
	return 0;
}

static int etm_tree_create(struct etm_state *etm)
{
	bool formatted = etm->config->etm.formatted;
	int err = 0;

	/*
	 * perf's flags for frames in memory (cs-etm-decoder.c); the 4x FSYNC
	 * reset handles the barrier packets the drivers insert.
	 */
	etm->tree = ocsd_create_dcd_tree(formatted ? OCSD_TRC_SRC_FRAME_FORMATTED :
					 OCSD_TRC_SRC_SINGLE, formatted ?
					 OCSD_DFRMTR_FRAME_MEM_ALIGN |
					 OCSD_DFRMTR_RESET_ON_4X_FSYNC : 0);
	if (!etm->tree)
		return -AUXSAMPLE_ERR_NOMEM;
	for (unsigned int i = 0; !err && i < etm->nr_src; i++)
		err = etm_add_source(etm, i);
	/* OpenCSD 1.3.3 never frees the 32-byte wrapper this allocates. */
	if (!err && ocsd_dt_set_gen_elem_outfn(etm->tree, etm_elem_in, etm))
		err = -AUXSAMPLE_ERR_INVALID;
	if (!err && ocsd_dt_add_callback_mem_acc(etm->tree, 0, ETM_CODE_END - 1,
						 OCSD_MEM_SPACE_ANY, etm_read_memory, etm))
		err = -AUXSAMPLE_ERR_INVALID;
	return err;
}

static void etm_decoder__exit(void *priv)
{
	struct etm_state *etm = priv;

	if (etm->tree) {
		pthread_mutex_lock(&etm_lock);
		ocsd_destroy_dcd_tree(etm->tree);
		pthread_mutex_unlock(&etm_lock);
	}
	free(etm->sources);
	free(etm);
}

static int etm_decoder__init(struct auxsample_decoder *dec, const struct auxsample_config *config,
			     void **priv)
{
	const struct auxsample_etm_config *cfg = &config->etm;
	unsigned int nr = cfg->nr_sources;
	struct etm_state *etm;
	int err;

	if (!nr || !cfg->sources)
		return -AUXSAMPLE_ERR_INVALID;
	/* A raw (unformatted) buffer is one source's, as TRBE writes it. */
	if (!cfg->formatted && nr != 1)
		return -AUXSAMPLE_ERR_INVALID;
	if (nr > ETM_NR_IDS)
		return -AUXSAMPLE_ERR_INVALID;
	etm = calloc(1, sizeof(*etm) + nr * sizeof(etm->src[0]));
	if (!etm)
		return -AUXSAMPLE_ERR_NOMEM;
	etm->dec = dec;
	etm->config = config;
	etm->nr_src = nr;
	memset(etm->slot, -1, sizeof(etm->slot));
	etm->sources = malloc(nr * sizeof(*etm->sources));
	if (!etm->sources) {
		free(etm);
		return -AUXSAMPLE_ERR_NOMEM;
	}
	memcpy(etm->sources, cfg->sources, nr * sizeof(*etm->sources));

	pthread_mutex_lock(&etm_lock);
	if (!etm_logger_silenced) {
		/* Decode errors are counted here, not printed by OpenCSD. */
		ocsd_def_errlog_init(OCSD_ERR_SEV_NONE, 0);
		etm_logger_silenced = true;
	}
	err = etm_tree_create(etm);
	pthread_mutex_unlock(&etm_lock);
	if (err) {
		etm_decoder__exit(etm);
		return err;
	}
	*priv = etm;
	return 0;
}

static void etm_state__reset(struct etm_state *etm)
{
	etm->synced_once = false;
	etm->foreign = false;
	for (unsigned int i = 0; i < etm->nr_src; i++) {
		struct etm_source_state *s = &etm->src[i];

		s->pending = ETM_PENDING_NONE;
		s->targets.nr = 0;
		s->targets.open = false;
		s->synced = false;
		s->overflowed = false;
		s->end_ip = 0;
		s->async = 0;
		s->async_seen = false;
		s->wants_addr = false;
		s->pid = -1;
	}
	ocsd_dt_process_data(etm->tree, OCSD_OP_RESET, 0, 0, NULL, NULL);
}

/*
 * Feed @len bytes at snippet offset @offset.  A fatal response leaves the
 * tree unusable until reset: record it, and go on after what failed with
 * every source unsynced.
 */
static void etm_feed(struct etm_state *etm, const uint8_t *buf, size_t offset, size_t len,
		     size_t unit)
{
	struct auxsample_decoder *dec = etm->dec;
	size_t done = offset, failed = SIZE_MAX;

	while (done < len) {
		/* Block sizes are 32 bits; keep whole frames in each. */
		uint32_t chunk = len - done > (1U << 30) ? 1U << 30 : len - done;
		uint32_t n = 0;
		ocsd_datapath_resp_t resp;

		resp = ocsd_dt_process_data(etm->tree, OCSD_OP_DATA, done, chunk, buf + done, &n);
		/*
		 * Paused by a callback: let it drain, then go on after @n.
		 * Ours never pause; a tree that keeps saying so is broken.
		 */
		for (int flushes = 0; OCSD_DATA_RESP_IS_WAIT(resp); flushes++) {
			if (flushes == ETM_MAX_FLUSHES) {
				resp = OCSD_RESP_FATAL_SYS_ERR;
				break;
			}
			resp = ocsd_dt_process_data(etm->tree, OCSD_OP_FLUSH, 0, 0, NULL, NULL);
		}
		if (OCSD_DATA_RESP_IS_FATAL(resp)) {
			/*
			 * The tree took what failed: @n is the bad packet's end
			 * (raw data) or its frame's.  Where it took nothing (a
			 * frame the deframer refused, tried again), skip a unit.
			 */
			if (done + n != failed)
				auxsample__error(dec, done + n, -AUXSAMPLE_ERR_DECODE, resp);
			failed = done + n;
			n = n ? (n + unit - 1) / unit * unit : unit;
			for (unsigned int i = 0; i < etm->nr_src; i++) {
				etm_source__lost(etm, &etm->src[i]);
				etm->src[i].wants_addr = false;
			}
			ocsd_dt_process_data(etm->tree, OCSD_OP_RESET, 0, 0, NULL, NULL);
		}
		done += n ? n : chunk;
	}
}

static int etm_decoder__decode(void *priv, const uint8_t *buf, size_t len)
{
	struct etm_state *etm = priv;
	struct auxsample_stats *stats = auxsample__stats(etm->dec);
	size_t skip = 0, unit = 1;

	etm_state__reset(etm);
	etm->buf = buf;
	etm->code_left = ETM_CODE_BUDGET + (uint64_t)len * ETM_CODE_PER_BYTE;
	/*
	 * Frames must be whole and aligned.  A snippet ends at the sink's
	 * write pointer, which is frame aligned (16-byte TPIU frames): a partial
	 * frame can only be at its start.  It is not decoded.
	 */
	if (etm->config->etm.formatted) {
		unit = ETM_FRAME;
		skip = len % ETM_FRAME;
	}
	etm_feed(etm, buf, skip, len, unit);
	ocsd_dt_process_data(etm->tree, OCSD_OP_EOT, 0, 0, NULL, NULL);
	for (unsigned int i = 0; i < etm->nr_src; i++)
		etm_source__resolve_stop(etm, &etm->src[i]);

	if (!stats->syncs) {
		stats->bytes_before_sync = len;
		return -AUXSAMPLE_ERR_NOSYNC;
	}
	return 0;
}

const struct auxsample_backend auxsample_etm_backend = {
	.name		= "CoreSight ETM (OpenCSD)",
	.type		= AUXSAMPLE_TRACE_ETM,
	.init		= etm_decoder__init,
	.exit		= etm_decoder__exit,
	.decode		= etm_decoder__decode,
};
