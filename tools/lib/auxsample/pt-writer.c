// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A model of an Intel PT stream for user-only tracing, written with
 * libipt's encoder: what the hardware emits for each kind of control flow
 * (PSB+, TNT, TIP, FUP, TIP.PGD/PGE, MODE.Exec, TSC), with its IP
 * compression and return compression rules (SDM Vol. 3C, "Intel Processor
 * Trace": IP compression, return compression).
 */
#include <stdlib.h>
#include <string.h>
#include <intel-pt.h>
#include <auxsample/pt-writer.h>

#define TNT8_MAX	6
#define RETSTACK	64	/* the hardware's return compression stack */

struct auxsample_pt_writer {
	struct auxsample_pt_writer_config opts;
	uint8_t			*buf;
	size_t			len;
	size_t			cap;
	size_t			next_psb;
	uint64_t		last_ip;	/* for IP compression; 0 after PSB */
	uint64_t		tnt;		/* pending TNT bits, oldest highest */
	unsigned int		nr_tnt;
	uint64_t		rets[RETSTACK];
	unsigned int		nr_rets;
	bool			enabled;	/* PacketEn: in traced (user) code */
	bool			traceen;	/* TraceEn: timing packets flow */
	bool			paused;		/* PacketEn was set at __stop_at() */
	bool			lost;		/* packets dropped: an overflow */
	uint64_t		tsc;
	uint64_t		mtc;		/* CTC >> mtc_period at the last MTC */
	uint64_t		cyc_tsc;	/* TSC at the last CYC-eligible packet */
	struct pt_encoder	*enc;
	uint8_t			scratch[32];
};

static int pt_writer__emit(struct auxsample_pt_writer *pt, const struct pt_packet *packet);

/* Packets that a CYC (cycles since the last one) goes before. */
static bool pt_writer__cyc_eligible(enum pt_packet_type type)
{
	switch (type) {
	case ppt_tnt_8:
	case ppt_tnt_64:
	case ppt_tip:
	case ppt_tip_pge:
	case ppt_tip_pgd:
	case ppt_fup:
	case ppt_mtc:
	case ppt_mode:
		return true;
	default:
		return false;
	}
}

static int pt_writer__put(struct auxsample_pt_writer *pt, const struct pt_packet *packet)
{
	struct pt_packet cyc = { .type = ppt_cyc };
	uint64_t cycles;
	int err;

	if (pt->opts.cyc && pt_writer__cyc_eligible(packet->type)) {
		cycles = (pt->tsc - pt->cyc_tsc) * pt->opts.cbr / pt->opts.nom_freq;
		if (cycles) {
			cyc.payload.cyc.value = cycles;
			err = pt_writer__emit(pt, &cyc);
			if (err)
				return err;
			pt->cyc_tsc = pt->tsc;
		}
	}
	return pt_writer__emit(pt, packet);
}

static int pt_writer__emit(struct auxsample_pt_writer *pt, const struct pt_packet *packet)
{
	int n;

	/* Lost in the CPU's internal buffers: auxsample_pt_writer__lose(). */
	if (pt->lost)
		return 0;
	if (pt_enc_sync_set(pt->enc, 0) < 0)
		return -AUXSAMPLE_ERR_INVALID;
	n = pt_enc_next(pt->enc, packet);
	if (n < 0)
		return -AUXSAMPLE_ERR_INVALID;
	if (pt->len + n > pt->cap) {
		size_t cap = pt->cap ? pt->cap * 2 : 1 << 20;
		uint8_t *buf = realloc(pt->buf, cap);

		if (!buf)
			return -AUXSAMPLE_ERR_NOMEM;
		pt->buf = buf;
		pt->cap = cap;
	}
	memcpy(pt->buf + pt->len, pt->scratch, n);
	pt->len += n;
	return 0;
}

static int pt_writer__put_simple(struct auxsample_pt_writer *pt, enum pt_packet_type type)
{
	struct pt_packet p = { .type = type };

	return pt_writer__put(pt, &p);
}

/* The compression the hardware picks against the last IP it sent. */
static enum pt_ip_compression pt_writer__ipc(const struct auxsample_pt_writer *pt,
					     uint64_t ip)
{
	if (!pt->last_ip)
		return pt_ipc_sext_48;
	if ((ip >> 16) == (pt->last_ip >> 16))
		return pt_ipc_update_16;
	if ((ip >> 32) == (pt->last_ip >> 32))
		return pt_ipc_update_32;
	return pt_ipc_sext_48;
}

static int pt_writer__put_ip(struct auxsample_pt_writer *pt, enum pt_packet_type type,
			     uint64_t ip, bool suppressed)
{
	struct pt_packet p = { .type = type };

	p.payload.ip.ipc = suppressed ? pt_ipc_suppressed : pt_writer__ipc(pt, ip);
	p.payload.ip.ip = ip;
	if (!suppressed)
		pt->last_ip = ip;
	return pt_writer__put(pt, &p);
}

/* Pending TNT bits go out before any other packet, as in hardware. */
static int pt_writer__flush_tnt(struct auxsample_pt_writer *pt)
{
	struct pt_packet p = { .type = ppt_tnt_8 };

	if (!pt->nr_tnt)
		return 0;
	if (pt->nr_tnt > TNT8_MAX)
		p.type = ppt_tnt_64;
	p.payload.tnt.bit_size = pt->nr_tnt;
	p.payload.tnt.payload = pt->tnt;
	pt->nr_tnt = 0;
	pt->tnt = 0;
	return pt_writer__put(pt, &p);
}

static int pt_writer__put_tnt(struct auxsample_pt_writer *pt, bool taken)
{
	pt->tnt = (pt->tnt << 1) | taken;
	pt->nr_tnt++;
	/* Hardware packs up to 6 bits in a TNT-8. */
	return pt->nr_tnt == TNT8_MAX ? pt_writer__flush_tnt(pt) : 0;
}

static int pt_writer__put_mode(struct auxsample_pt_writer *pt)
{
	struct pt_packet p = { .type = ppt_mode };

	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	return pt_writer__put(pt, &p);
}

static int pt_writer__put_tsc(struct auxsample_pt_writer *pt)
{
	struct pt_packet p = { .type = ppt_tsc };

	p.payload.tsc.tsc = pt->tsc;
	return pt_writer__put(pt, &p);
}

/* Without MTC the CTC is not needed: tsc_per_ctc may be 0. */
static uint64_t pt_writer__ctc(const struct auxsample_pt_writer *pt)
{
	return pt->opts.tsc_per_ctc ? pt->tsc / pt->opts.tsc_per_ctc : 0;
}

/* TMA: the CTC and the TSC ticks since its last tick, when the TSC was taken. */
static int pt_writer__put_tma(struct auxsample_pt_writer *pt)
{
	struct pt_packet p = { .type = ppt_tma };

	p.payload.tma.ctc = pt_writer__ctc(pt) & 0xffff;
	p.payload.tma.fc = pt->tsc % pt->opts.tsc_per_ctc;
	return pt_writer__put(pt, &p);
}

/*
 * CBR has no enable bit: every PSB+ and every TraceEn 0->1 carries the
 * core:bus ratio (SDM Vol. 3C, "CBR Packet"; real traces show it without
 * CYC too).  The CYC count starts again from it.
 */
static int pt_writer__put_cbr(struct auxsample_pt_writer *pt)
{
	struct pt_packet cbr = { .type = ppt_cbr };

	if (!pt->opts.cbr)
		return 0;
	cbr.payload.cbr.ratio = pt->opts.cbr;
	pt->cyc_tsc = pt->tsc;
	return pt_writer__emit(pt, &cbr);
}

/*
 * PSB+: PSB, TSC, TMA, CBR, MODE.Exec, FUP(current IP) while tracing is on, PSBEND.
 * The last IP and the return compression stack start again after it.
 */
static int pt_writer__psb(struct auxsample_pt_writer *pt, uint64_t ip)
{
	int err = pt_writer__flush_tnt(pt);

	if (!err)
		err = pt_writer__put_simple(pt, ppt_psb);
	pt->last_ip = 0;
	pt->nr_rets = 0;
	if (!err && pt->opts.tsc)
		err = pt_writer__put_tsc(pt);
	if (!err && pt->opts.tsc && pt->opts.mtc)
		err = pt_writer__put_tma(pt);
	if (!err)
		err = pt_writer__put_cbr(pt);
	if (!err)
		err = pt_writer__put_mode(pt);
	if (!err && pt->enabled)
		err = pt_writer__put_ip(pt, ppt_fup, ip, false);
	if (!err)
		err = pt_writer__put_simple(pt, ppt_psbend);
	pt->next_psb = pt->len + pt->opts.psb_period;
	return err;
}

struct auxsample_pt_writer *
auxsample_pt_writer__new(const struct auxsample_pt_writer_config *config)
{
	struct auxsample_pt_writer *pt;
	struct pt_config cfg;

	if (!config || config->size < sizeof(*config) || config->psb_period < 256)
		return NULL;
	if (config->mtc && (!config->tsc_per_ctc || config->mtc_period > 15))
		return NULL;
	if (config->cyc && (!config->cbr || !config->nom_freq))
		return NULL;
	pt = calloc(1, sizeof(*pt));
	if (!pt)
		return NULL;
	pt->opts = *config;
	pt_config_init(&cfg);
	cfg.begin = pt->scratch;
	cfg.end = pt->scratch + sizeof(pt->scratch);
	pt->enc = pt_alloc_encoder(&cfg);
	if (!pt->enc) {
		free(pt);
		return NULL;
	}
	return pt;
}

void auxsample_pt_writer__delete(struct auxsample_pt_writer *pt)
{
	if (!pt)
		return;
	pt_free_encoder(pt->enc);
	free(pt->buf);
	free(pt);
}

const uint8_t *auxsample_pt_writer__data(const struct auxsample_pt_writer *pt,
						       size_t *len)
{
	*len = pt->len;
	return pt->buf;
}

int auxsample_pt_writer__verify(const struct auxsample_pt_writer *pt,
					      uint64_t *bad_offset)
{
	struct pt_packet_decoder *dec;
	struct pt_packet packet;
	struct pt_config cfg;
	int ret;

	*bad_offset = 0;
	if (!pt->len)
		return 0;
	pt_config_init(&cfg);
	cfg.begin = pt->buf;
	cfg.end = pt->buf + pt->len;
	dec = pt_pkt_alloc_decoder(&cfg);
	if (!dec)
		return -AUXSAMPLE_ERR_NOMEM;
	/* The stream starts with a PSB: every byte from there must parse. */
	ret = pt_pkt_sync_set(dec, 0);
	while (ret >= 0)
		ret = pt_pkt_next(dec, &packet, sizeof(packet));
	if (ret == -pte_eos) {
		ret = 0;
	} else {
		pt_pkt_get_offset(dec, bad_offset);
		ret = -AUXSAMPLE_ERR_DECODE;
	}
	pt_pkt_free_decoder(dec);
	return ret;
}

void auxsample_pt_writer__reset(struct auxsample_pt_writer *pt)
{
	pt->len = 0;
	pt->nr_tnt = 0;
	pt->tnt = 0;
	pt->nr_rets = 0;
	pt->last_ip = 0;
	pt->enabled = false;
	pt->traceen = false;
}

int auxsample_pt_writer__tick(struct auxsample_pt_writer *pt, uint64_t tsc)
{
	struct pt_packet p = { .type = ppt_mtc };
	uint64_t mtc;

	pt->tsc = tsc;
	if (!pt->opts.mtc)
		return 0;
	/* An MTC when CTC bit mtc_period changes, while packets flow. */
	mtc = pt_writer__ctc(pt) >> pt->opts.mtc_period;
	if (mtc == pt->mtc)
		return 0;
	pt->mtc = mtc;
	/*
	 * MTC depends on TriggerEn, not PacketEn: user-only trace has them in
	 * the kernel too, between TIP.PGD and TIP.PGE (SDM Vol. 3C, "MTC
	 * Packet"; real user-only traces show runs of them there).
	 */
	if (!pt->traceen)
		return 0;
	p.payload.mtc.ctc = mtc & 0xff;
	return pt_writer__flush_tnt(pt) ?: pt_writer__put(pt, &p);
}

int auxsample_pt_writer__start(struct auxsample_pt_writer *pt, uint64_t ip)
{
	pt->enabled = true;
	pt->traceen = true;
	pt->mtc = pt_writer__ctc(pt) >> pt->opts.mtc_period;
	return pt_writer__psb(pt, ip);
}

int auxsample_pt_writer__enter(struct auxsample_pt_writer *pt, uint64_t ip)
{
	int err;

	pt->enabled = false;
	pt->traceen = true;
	pt->mtc = pt_writer__ctc(pt) >> pt->opts.mtc_period;
	err = pt_writer__psb(pt, ip);
	return err ?: auxsample_pt_writer__resume(pt, ip);
}

/*
 * TraceEn cleared, as the kernel does to copy an AUX sample
 * (pt_event_snapshot_aux()): buffered packets are flushed and nothing
 * more is written until auxsample_pt_writer__restart().
 */
int auxsample_pt_writer__stop(struct auxsample_pt_writer *pt)
{
	int err = pt_writer__flush_tnt(pt);

	pt->traceen = false;
	return err;
}

/*
 * TraceEn set again with PacketByteCnt not 0 (the kernel does not clear
 * IA32_RTIT_STATUS there): no PSB+ but the timing packets, TSC, TMA and
 * CBR (SDM Vol. 3C, "Enabling and Disabling Packet Generation with
 * TraceEn"; "TSC Packet": sent on every TraceEn 0->1).  PacketEn stays as
 * it was: in the kernel, the TIP.PGE comes on the way back to user code.
 */
int auxsample_pt_writer__restart(struct auxsample_pt_writer *pt)
{
	int err = 0;

	pt->traceen = true;
	pt->mtc = pt_writer__ctc(pt) >> pt->opts.mtc_period;
	if (pt->opts.tsc)
		err = pt_writer__put_tsc(pt);
	if (!err && pt->opts.tsc && pt->opts.mtc)
		err = pt_writer__put_tma(pt);
	return err ?: pt_writer__put_cbr(pt);
}

int auxsample_pt_writer__maybe_psb(struct auxsample_pt_writer *pt, uint64_t ip)
{
	if (pt->len < pt->next_psb)
		return 0;
	return pt_writer__psb(pt, ip);
}

int auxsample_pt_writer__cond(struct auxsample_pt_writer *pt, bool taken)
{
	return pt_writer__put_tnt(pt, taken);
}

/*
 * The hardware's return stack (SDM Vol. 3C, "Indirect Transfer Compression
 * for Returns") leaves out a direct CALL to the next instruction, which
 * position independent code uses to read its IP and never returns from:
 * a RET after one is still compressed.  libipt and perf's decoder do the same.
 */
int auxsample_pt_writer__call(struct auxsample_pt_writer *pt, uint64_t ret_addr,
					    bool indirect, uint64_t to)
{
	if (!indirect && to == ret_addr)
		return 0;
	if (pt->nr_rets == RETSTACK) {
		memmove(pt->rets, pt->rets + 1, (RETSTACK - 1) * sizeof(*pt->rets));
		pt->nr_rets--;
	}
	pt->rets[pt->nr_rets++] = ret_addr;
	if (!indirect)
		return 0;
	return pt_writer__flush_tnt(pt) ?: pt_writer__put_ip(pt, ppt_tip, to, false);
}

/*
 * A RET is a single taken TNT bit when its CALL came after the latest PSB
 * and it returns where that CALL would, else a TIP.
 *
 * A RET that returns elsewhere (a signal handler's to its restorer, a
 * longjmp-like stack switch) empties the stack: decoders disagree on
 * whether an uncompressed RET pops theirs (perf's intel-pt-decoder does,
 * libipt does not), so after one their stacks no longer line up, and a
 * later compressed RET into an older frame would decode differently in
 * each.  The SDM lets hardware leave any RET uncompressed; only RETs whose
 * CALL came after the mismatch are compressed here, which both read alike.
 */
int auxsample_pt_writer__ret(struct auxsample_pt_writer *pt, uint64_t to)
{
	bool compress = false;

	if (pt->nr_rets) {
		compress = !pt->opts.noretcomp && pt->rets[pt->nr_rets - 1] == to;
		pt->nr_rets = compress ? pt->nr_rets - 1 : 0;
	}
	if (compress)
		return pt_writer__put_tnt(pt, true);
	return pt_writer__flush_tnt(pt) ?: pt_writer__put_ip(pt, ppt_tip, to, false);
}

int auxsample_pt_writer__indirect(struct auxsample_pt_writer *pt, uint64_t to)
{
	return pt_writer__flush_tnt(pt) ?: pt_writer__put_ip(pt, ppt_tip, to, false);
}

int auxsample_pt_writer__async(struct auxsample_pt_writer *pt, uint64_t from,
			       uint64_t to)
{
	return pt_writer__flush_tnt(pt) ?: pt_writer__put_ip(pt, ppt_fup, from, false) ?:
	       pt_writer__put_ip(pt, ppt_tip, to, false);
}

/* User code left by a far transfer: TIP.PGD without an IP. */
int auxsample_pt_writer__syscall(struct auxsample_pt_writer *pt)
{
	int err = pt_writer__flush_tnt(pt);

	pt->enabled = false;
	return err ?: pt_writer__put_ip(pt, ppt_tip_pgd, 0, true);
}

int auxsample_pt_writer__interrupt(struct auxsample_pt_writer *pt, uint64_t ip)
{
	int err = pt_writer__flush_tnt(pt);

	if (!err)
		err = pt_writer__put_ip(pt, ppt_fup, ip, false);
	pt->enabled = false;
	return err ?: pt_writer__put_ip(pt, ppt_tip_pgd, 0, true);
}

int auxsample_pt_writer__stop_at(struct auxsample_pt_writer *pt, uint64_t ip)
{
	int err = pt_writer__flush_tnt(pt);

	pt->paused = pt->enabled;
	if (!err && pt->enabled)
		err = pt_writer__put_ip(pt, ppt_fup, ip, false) ?:
		      pt_writer__put_ip(pt, ppt_tip_pgd, 0, true);
	pt->enabled = false;
	pt->traceen = false;
	return err;
}

int auxsample_pt_writer__restart_at(struct auxsample_pt_writer *pt, uint64_t ip)
{
	int err = auxsample_pt_writer__restart(pt);

	if (err || !pt->paused)
		return err;
	pt->paused = false;
	return auxsample_pt_writer__resume(pt, ip);
}

/* Back in user code at @ip: TIP.PGE. */
int auxsample_pt_writer__resume(struct auxsample_pt_writer *pt, uint64_t ip)
{
	pt->enabled = true;
	return pt_writer__put_ip(pt, ppt_tip_pge, ip, false);
}

int auxsample_pt_writer__lose(struct auxsample_pt_writer *pt)
{
	int err = pt_writer__flush_tnt(pt);

	pt->lost = true;
	return err;
}

/*
 * An OVF, bound to a FUP at @ip where PacketEn is set (SDM Vol. 3C,
 * "Overflow Packet"), else to the TIP.PGE that follows.  The IP
 * compression starts again (the FUP's IP is sent in full), and only RETs
 * whose CALL comes after the OVF are compressed: the decoders' stacks
 * hold calls whose RETs may have gone in the lost packets.
 */
int auxsample_pt_writer__overflow(struct auxsample_pt_writer *pt, uint64_t ip)
{
	int err;

	pt->lost = false;
	pt->nr_tnt = 0;
	pt->tnt = 0;
	pt->nr_rets = 0;
	pt->last_ip = 0;
	err = pt_writer__put_simple(pt, ppt_ovf);
	if (!err && pt->enabled)
		err = pt_writer__put_ip(pt, ppt_fup, ip, false);
	return err;
}
