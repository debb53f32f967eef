// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The decoder on Intel PT streams written here with libipt's encoder over
 * a few hand-assembled instructions, so that every branch is known.
 */
#include <stdlib.h>
#include <string.h>
#include <intel-pt.h>
#include <auxsample/auxsample.h>
#include <auxsample/pt-writer.h>
#include "tests.h"
#include "test-data.h"

/*
 * 0x1000: 75 03              jne  0x1005
 * 0x1002: 90 90 90           nop x3
 * 0x1005: e8 06 00 00 00     call 0x1010        (returns to 0x100a)
 * 0x100a: 74 02              je   0x100e
 * 0x100c: ff e0              jmp  *%rax
 * 0x100e: 90                 nop
 * 0x1010: c3                 ret
 * 0x2000: 90                 nop
 */
#define CODE_BASE	0x1000
static const uint8_t code[] = {
	0x75, 0x03, 0x90, 0x90, 0x90, 0xe8, 0x06, 0x00, 0x00, 0x00,
	0x74, 0x02, 0xff, 0xe0, 0x90, 0x90, 0xc3,
};
#define NOP_AT		0x2000

static int read_code(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	static const uint8_t nop = 0x90;

	(void)context;
	if (addr == NOP_AT) {
		buf[0] = nop;
		return 1;
	}
	if (addr < CODE_BASE || addr >= CODE_BASE + sizeof(code))
		return -1;
	if (size > CODE_BASE + sizeof(code) - addr)
		size = CODE_BASE + sizeof(code) - addr;
	memcpy(buf, code + (addr - CODE_BASE), size);
	return size;
}

static struct auxsample_decoder *new_decoder(void)
{
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.pt = { .family = 6, .model = 85, .stepping = 4 },
		.read_memory = read_code,
	};

	return auxsample_decoder__new(&config, NULL);
}

/* A stream under construction. */
struct stream {
	uint8_t			buf[256];
	struct pt_encoder	*enc;
	size_t			len;
};

static int stream__init(struct stream *s)
{
	struct pt_config cfg;

	memset(s, 0, sizeof(*s));
	pt_config_init(&cfg);
	cfg.begin = s->buf;
	cfg.end = s->buf + sizeof(s->buf);
	s->enc = pt_alloc_encoder(&cfg);
	return s->enc ? 0 : -1;
}

static int stream__put(struct stream *s, enum pt_packet_type type, uint64_t arg,
		       unsigned int bits)
{
	struct pt_packet p = { .type = type };
	int ret;

	switch (type) {
	case ppt_fup:
	case ppt_tip:
	case ppt_tip_pge:
	case ppt_tip_pgd:
		p.payload.ip.ipc = bits ? pt_ipc_sext_48 : pt_ipc_suppressed;
		p.payload.ip.ip = arg;
		break;
	case ppt_tnt_8:
		p.payload.tnt.bit_size = bits;
		p.payload.tnt.payload = arg;
		break;
	case ppt_mode:
		p.payload.mode.leaf = pt_mol_exec;
		p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
		break;
	default:
		break;
	}
	ret = pt_enc_next(s->enc, &p);
	if (ret < 0)
		return ret;
	s->len += ret;
	return 0;
}

#define IP	1	/* with an IP */
#define NOIP	0	/* IP suppressed */

/* PSB+ at @ip, 64-bit code. */
static int stream__psb(struct stream *s, uint64_t ip)
{
	return stream__put(s, ppt_psb, 0, 0) || stream__put(s, ppt_mode, 0, 0) ||
	       stream__put(s, ppt_fup, ip, IP) || stream__put(s, ppt_psbend, 0, 0);
}

/*
 * jne taken, call, compressed ret, je not taken, jmp *%rax to 0x2000,
 * then an interrupt there (FUP + TIP.PGD, as user-only trace ends).
 */
static int stream__whole_flow(struct stream *s)
{
	return stream__psb(s, 0x1000) ||
	       stream__put(s, ppt_tnt_8, 0x6, 3) ||	/* 1 1 0, oldest first */
	       stream__put(s, ppt_tip, NOP_AT, IP) ||
	       stream__put(s, ppt_fup, NOP_AT, IP) ||
	       stream__put(s, ppt_tip_pgd, 0, NOIP);
}

static int check_branch(const struct auxsample_branch *br, uint64_t from, uint64_t to,
			unsigned int kind)
{
	if (br->from == from && br->to == to && br->kind == kind)
		return 0;
	fprintf(stderr, "  branch %#llx -> %#llx %s, expected %#llx -> %#llx %s\n",
		(unsigned long long)br->from, (unsigned long long)br->to,
		auxsample_branch_kind__name(br->kind), (unsigned long long)from,
		(unsigned long long)to, auxsample_branch_kind__name(kind));
	return -1;
}

static int test_flow(void)
{
	struct auxsample_decoder *dec = new_decoder();
	const struct auxsample_branch *br;
	struct auxsample_stats stats;
	const uint64_t *chain;
	struct stream s = { .enc = NULL };
	int n, ret = TEST_FAIL;

	if (!dec || stream__init(&s) || stream__whole_flow(&s))
		goto out;
	n = auxsample_decoder__decode(dec, s.buf, s.len, 64);
	if (n != 4 || auxsample_decoder__branches(dec, &br) != 4) {
		fprintf(stderr, "  %d branches, expected 4\n", n);
		goto out;
	}
	if (check_branch(&br[0], 0x100c, NOP_AT, AUXSAMPLE_BR_IND_JUMP) ||
	    check_branch(&br[1], 0x1010, 0x100a, AUXSAMPLE_BR_RET) ||
	    check_branch(&br[2], 0x1005, 0x1010, AUXSAMPLE_BR_CALL) ||
	    check_branch(&br[3], 0x1000, 0x1005, AUXSAMPLE_BR_COND))
		goto out;
	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	if (!T_CHECK(stats.insns == 5))
		return TEST_FAIL;
	if (!T_CHECK(stats.end_ip == NOP_AT))
		return TEST_FAIL;
	if (!T_CHECK(stats.syncs == 1 && stats.bytes_before_sync == 0 && !stats.errors))
		return TEST_FAIL;
	if (!T_CHECK(auxsample_decoder__callchain(dec, &chain) == 0))
		return TEST_FAIL;

	/* Only the newest two when asked for two. */
	if (!T_CHECK(auxsample_decoder__decode(dec, s.buf, s.len, 2) == 2))
		return TEST_FAIL;
	auxsample_decoder__branches(dec, &br);
	if (!T_CHECK(!check_branch(&br[1], 0x1010, 0x100a, AUXSAMPLE_BR_RET)))
		return TEST_FAIL;
	ret = TEST_OK;
out:
	if (s.enc)
		pt_free_encoder(s.enc);
	auxsample_decoder__delete(dec);
	return ret;
}

/* Stopped inside the callee: the call chain holds its return address. */
static int test_callchain(void)
{
	struct auxsample_decoder *dec = new_decoder();
	const uint64_t *chain;
	struct auxsample_stats stats;
	struct stream s = { .enc = NULL };
	int ret = TEST_FAIL;

	if (!dec || stream__init(&s) || stream__psb(&s, 0x1000) ||
	    stream__put(&s, ppt_tnt_8, 0x1, 1) ||
	    stream__put(&s, ppt_fup, 0x1010, IP) || stream__put(&s, ppt_tip_pgd, 0, NOIP))
		goto out;
	if (auxsample_decoder__decode(dec, s.buf, s.len, 64) != 2)
		goto out;
	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	if (auxsample_decoder__callchain(dec, &chain) != 1 || chain[0] != 0x100a ||
	    stats.end_ip != 0x1010)
		goto out;
	ret = TEST_OK;
out:
	if (s.enc)
		pt_free_encoder(s.enc);
	auxsample_decoder__delete(dec);
	return ret;
}

/* Bytes before the first PSB are counted, never decoded. */
static int test_leading_bytes(void)
{
	struct auxsample_decoder *dec = new_decoder();
	struct auxsample_stats stats;
	struct stream s = { .enc = NULL };
	uint8_t buf[512];
	int ret = TEST_FAIL;

	if (!dec || stream__init(&s) || stream__whole_flow(&s))
		goto out;
	/* TNT-8 packets and a TIP that nothing can place. */
	memset(buf, 0x0e, 100);
	memcpy(buf + 100, s.buf, s.len);
	if (auxsample_decoder__decode(dec, buf, 100 + s.len, 64) != 4)
		goto out;
	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	if (!T_CHECK(stats.bytes_before_sync == 100 && stats.bytes == 100 + s.len))
		goto out;

	/* Cut into the PSB: no sync point at all. */
	if (!T_CHECK(auxsample_decoder__decode(dec, s.buf + 1, s.len - 1, 64) ==
		     -AUXSAMPLE_ERR_NOSYNC))
		goto out;
	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	if (!T_CHECK(stats.bytes_before_sync == s.len - 1 && stats.syncs == 0))
		goto out;
	if (!T_CHECK(auxsample_decoder__decode(dec, NULL, 0, 64) == -AUXSAMPLE_ERR_NOSYNC))
		goto out;
	ret = TEST_OK;
out:
	if (s.enc)
		pt_free_encoder(s.enc);
	auxsample_decoder__delete(dec);
	return ret;
}

/* Trace that disagrees with the code: an error and a gap, then a resync. */
static int test_bad_trace(void)
{
	struct auxsample_decoder *dec = new_decoder();
	const struct auxsample_decode_error *errs;
	const struct auxsample_branch *br;
	struct auxsample_stats stats;
	struct stream s = { .enc = NULL };
	int n, ret = TEST_FAIL;

	/* A TIP where the code has a conditional branch, then a good PSB+. */
	if (!dec || stream__init(&s) || stream__psb(&s, 0x1000) ||
	    stream__put(&s, ppt_tip, 0x1005, IP) || stream__whole_flow(&s))
		goto out;
	n = auxsample_decoder__decode(dec, s.buf, s.len, 64);
	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	if (!T_CHECK(n == 4))
		return TEST_FAIL;
	if (!T_CHECK(stats.errors >= 1 && stats.syncs == 2))
		return TEST_FAIL;
	if (!T_CHECK(auxsample_decoder__errors(dec, &errs) >= 1 &&
		     errs[0].error == -AUXSAMPLE_ERR_DECODE && errs[0].lib_error < 0))
		return TEST_FAIL;
	auxsample_decoder__branches(dec, &br);
	if (!T_CHECK(!check_branch(&br[3], 0x1000, 0x1005, AUXSAMPLE_BR_COND)))
		return TEST_FAIL;
	ret = TEST_OK;
out:
	if (s.enc)
		pt_free_encoder(s.enc);
	auxsample_decoder__delete(dec);
	return ret;
}

/*
 * Three loops of jne, call, ret, je, jmp *%rax back to 0x1000, each after
 * its own PSB+, then an interrupt at 0x1000: 12 branches, newest first
 * jmp, ret, call, jne, jmp ...
 */
static int stream__loops(struct stream *s, size_t *psb_at)
{
	for (int i = 0; i < 3; i++) {
		psb_at[i] = s->len;
		if (stream__psb(s, 0x1000) || stream__put(s, ppt_tnt_8, 0x6, 3) ||
		    stream__put(s, ppt_tip, 0x1000, IP))
			return -1;
	}
	return stream__put(s, ppt_fup, 0x1000, IP) || stream__put(s, ppt_tip_pgd, 0, NOIP);
}

/* Only as much trace as the branches asked for is decoded. */
static int test_latest_psb(void)
{
	struct auxsample_branch all[12];
	const struct auxsample_branch *br;
	struct auxsample_decoder *dec = new_decoder();
	struct auxsample_stats stats;
	size_t psb_at[3];
	struct stream s = { .enc = NULL };
	int ret = TEST_FAIL;

	if (!dec || stream__init(&s) || stream__loops(&s, psb_at))
		goto out;
	if (!T_CHECK(auxsample_decoder__decode(dec, s.buf, s.len, 64) == 12))
		goto out;
	auxsample_decoder__branches(dec, &br);
	memcpy(all, br, sizeof(all));
	if (!T_CHECK(!check_branch(&all[0], 0x100c, 0x1000, AUXSAMPLE_BR_IND_JUMP)))
		goto out;
	if (!T_CHECK(!check_branch(&all[11], 0x1000, 0x1005, AUXSAMPLE_BR_COND)))
		goto out;
	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	if (!T_CHECK(stats.decode_start == psb_at[0] && stats.end_ip == 0x1000))
		goto out;

	/* Two branches: the last PSB holds four. */
	if (!T_CHECK(auxsample_decoder__decode(dec, s.buf, s.len, 2) == 2))
		goto out;
	auxsample_decoder__branches(dec, &br);
	if (!T_CHECK(!memcmp(br, all, 2 * sizeof(*br))))
		goto out;
	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	if (!T_CHECK(stats.decode_start == psb_at[2] && stats.bytes_before_sync == psb_at[0]))
		goto out;
	if (!T_CHECK(stats.insns == 5))
		goto out;

	/* Six: back one PSB, and the same six as the whole decode. */
	if (!T_CHECK(auxsample_decoder__decode(dec, s.buf, s.len, 6) == 6))
		goto out;
	auxsample_decoder__branches(dec, &br);
	if (!T_CHECK(!memcmp(br, all, 6 * sizeof(*br))))
		goto out;
	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	if (!T_CHECK(stats.decode_start == psb_at[1]))
		goto out;
	ret = TEST_OK;
out:
	if (s.enc)
		pt_free_encoder(s.enc);
	auxsample_decoder__delete(dec);
	return ret;
}

static int test_whole_snippet(void)
{
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.read_memory = read_code,
		.flags = AUXSAMPLE_CFG_WHOLE_SNIPPET,
	};
	struct auxsample_decoder *dec = auxsample_decoder__new(&config, NULL);
	struct auxsample_stats stats;
	size_t psb_at[3];
	struct stream s = { .enc = NULL };
	int ret = TEST_FAIL;

	if (!dec || stream__init(&s) || stream__loops(&s, psb_at))
		goto out;
	if (!T_CHECK(auxsample_decoder__decode(dec, s.buf, s.len, 2) == 2))
		goto out;
	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	if (!T_CHECK(stats.decode_start == psb_at[0] && stats.insns == 15))
		goto out;
	ret = TEST_OK;
out:
	if (s.enc)
		pt_free_encoder(s.enc);
	auxsample_decoder__delete(dec);
	return ret;
}

/*
 * A PSB+, then four times the loop of stream__loops() and an interrupt at
 * 0x1000 (a sample's PMI: FUP, TIP.PGD, then timing), trace resuming there
 * (TIP.PGE) but the last time: the end of each snippet in @ends.
 */
static int stream__samples(struct stream *s, size_t *ends)
{
	if (stream__psb(s, 0x1000))
		return -1;
	for (int i = 0; i < 4; i++) {
		if ((i && stream__put(s, ppt_tip_pge, 0x1000, IP)) ||
		    stream__put(s, ppt_tnt_8, 0x6, 3) || stream__put(s, ppt_tip, 0x1000, IP) ||
		    stream__put(s, ppt_fup, 0x1000, IP) || stream__put(s, ppt_tip_pgd, 0, NOIP) ||
		    stream__put(s, ppt_pad, 0, 0))
			return -1;
		ends[i] = s->len;
	}
	return 0;
}

/* Each stop of a stream decoded once gives what its snippet alone gives. */
static int test_stream(void)
{
	struct auxsample_branch stream_br[16];
	struct auxsample_decoder *dec = new_decoder(), *alone = new_decoder();
	const struct auxsample_branch *br;
	struct auxsample_stats stats;
	size_t ends[4];
	struct stream s = { .enc = NULL };
	int ret = TEST_FAIL, n;

	if (!dec || !alone || stream__init(&s) || stream__samples(&s, ends))
		goto out;
	if (!T_CHECK(auxsample_decoder__stream_to(dec, 0, ends[0]) == -AUXSAMPLE_ERR_INVALID))
		return TEST_FAIL;
	if (!T_CHECK(auxsample_decoder__stream_begin(dec, s.buf, s.len, 16) == 0))
		return TEST_FAIL;
	for (int i = 0; i < 4; i++) {
		n = auxsample_decoder__stream_to(dec, 0, ends[i]);
		if (!T_CHECK(n == 4 * (i + 1)))
			return TEST_FAIL;
		auxsample_decoder__branches(dec, &br);
		memcpy(stream_br, br, n * sizeof(*br));
		auxsample_decoder__stats(dec, &stats, sizeof(stats));
		if (!T_CHECK(stats.branches == 4 && stats.end_ip == 0x1000))
			return TEST_FAIL;
		/* The pad after the stop is no flow: the same stop. */
		if (!T_CHECK(auxsample_decoder__stream_to(dec, 0, ends[i] - 1) == n))
			return TEST_FAIL;

		if (!T_CHECK(auxsample_decoder__decode(alone, s.buf, ends[i], 16) == n))
			return TEST_FAIL;
		auxsample_decoder__branches(alone, &br);
		if (!T_CHECK(!memcmp(br, stream_br, n * sizeof(*br))))
			return TEST_FAIL;
		if (!T_CHECK(!check_branch(&br[0], 0x100c, 0x1000, AUXSAMPLE_BR_IND_JUMP)))
			return TEST_FAIL;
	}
	/* Behind the stream, or where the trace did not stop: not served. */
	if (!T_CHECK(auxsample_decoder__stream_to(dec, 0, ends[1]) == -AUXSAMPLE_ERR_NOT_IN_STREAM))
		return TEST_FAIL;
	auxsample_decoder__stream_begin(dec, s.buf, s.len, 16);
	if (!T_CHECK(auxsample_decoder__stream_to(dec, 0, ends[0] + 3) ==
		     -AUXSAMPLE_ERR_NOT_IN_STREAM))
		return TEST_FAIL;
	if (!T_CHECK(auxsample_decoder__stream_to(dec, 0, ends[2]) == 12))
		return TEST_FAIL;
	/* A decode of a snippet ends the stream. */
	auxsample_decoder__decode(dec, s.buf, ends[0], 16);
	if (!T_CHECK(auxsample_decoder__stream_to(dec, 0, ends[3]) == -AUXSAMPLE_ERR_INVALID))
		return TEST_FAIL;
	ret = TEST_OK;
out:
	if (s.enc)
		pt_free_encoder(s.enc);
	auxsample_decoder__delete(alone);
	auxsample_decoder__delete(dec);
	return ret;
}

/*
 * stream__samples() with the second stretch lost (a jump to code that
 * cannot be read, then more trace) and, if @psb, a PSB+ before the last.
 */
static int stream__lost(struct stream *s, size_t *ends, bool psb)
{
	if (stream__psb(s, 0x1000))
		return -1;
	for (int i = 0; i < 4; i++) {
		uint64_t to = i == 1 ? 0x7000 : 0x1000;

		if ((psb && i == 3 && stream__psb(s, 0x1000)) ||
		    (i && !(psb && i == 3) && stream__put(s, ppt_tip_pge, 0x1000, IP)) ||
		    stream__put(s, ppt_tnt_8, 0x6, 3) || stream__put(s, ppt_tip, to, IP) ||
		    (i == 1 && stream__put(s, ppt_tnt_8, 0x2, 2)) ||
		    stream__put(s, ppt_fup, to, IP) || stream__put(s, ppt_tip_pgd, 0, NOIP) ||
		    stream__put(s, ppt_pad, 0, 0))
			return -1;
		ends[i] = s->len;
	}
	return 0;
}

/* A stop that the stream lost is not served, with an earlier one's branches. */
static int test_stream_lost(void)
{
	struct auxsample_decoder *dec = new_decoder();
	struct stream s = { .enc = NULL };
	size_t ends[4];
	int ret = TEST_FAIL;

	for (int psb = 0; psb < 2; psb++) {
		const struct auxsample_decode_error *errs;

		if (!dec || stream__init(&s) || stream__lost(&s, ends, psb))
			goto out;
		if (!T_CHECK(auxsample_decoder__stream_begin(dec, s.buf, s.len, 16) == 0))
			goto out;
		if (!T_CHECK(auxsample_decoder__stream_to(dec, 0, ends[0]) == 4))
			goto out;
		/* Lost at the error, their stops never seen: decode them alone. */
		if (!T_CHECK(auxsample_decoder__stream_to(dec, 0, ends[1]) ==
			     -AUXSAMPLE_ERR_NOT_IN_STREAM))
			goto out;
		if (!T_CHECK(auxsample_decoder__errors(dec, &errs) == 1))
			goto out;
		if (!T_CHECK(auxsample_decoder__stream_to(dec, 0, ends[2]) ==
			     -AUXSAMPLE_ERR_NOT_IN_STREAM))
			goto out;
		if (psb) {
			/* Found again at the PSB+. */
			if (!T_CHECK(auxsample_decoder__stream_to(dec, 0, ends[3]) > 0))
				goto out;
		} else {
			if (!T_CHECK(auxsample_decoder__stream_to(dec, 0, ends[3]) ==
				     -AUXSAMPLE_ERR_NOT_IN_STREAM))
				goto out;
		}
		pt_free_encoder(s.enc);
		s.enc = NULL;
	}
	ret = TEST_OK;
out:
	if (s.enc)
		pt_free_encoder(s.enc);
	auxsample_decoder__delete(dec);
	return ret;
}

/* The PT writer's stream of the same flow decodes to the same branches. */
static int check_writer(bool noretcomp)
{
	struct auxsample_pt_writer_config wcfg = {
		.size = sizeof(wcfg), .psb_period = 2048, .noretcomp = noretcomp, .tsc = 1,
	};
	struct auxsample_pt_writer *w = auxsample_pt_writer__new(&wcfg);
	struct auxsample_decoder *dec = new_decoder();
	const struct auxsample_branch *br;
	const uint8_t *buf;
	uint64_t bad;
	size_t len;
	int ret = TEST_FAIL;

	if (!w || !dec)
		goto out;
	auxsample_pt_writer__tick(w, 0x1234567);
	if (auxsample_pt_writer__start(w, 0x1000) ||
	    auxsample_pt_writer__cond(w, true) ||
	    auxsample_pt_writer__call(w, 0x100a, false, 0x1010) ||
	    auxsample_pt_writer__ret(w, 0x100a) ||
	    auxsample_pt_writer__cond(w, false) ||
	    auxsample_pt_writer__indirect(w, NOP_AT) ||
	    auxsample_pt_writer__interrupt(w, NOP_AT))
		goto out;
	if (!T_CHECK(auxsample_pt_writer__verify(w, &bad) == 0))
		goto out;
	buf = auxsample_pt_writer__data(w, &len);
	if (!T_CHECK(auxsample_decoder__decode(dec, buf, len, 64) == 4))
		goto out;
	auxsample_decoder__branches(dec, &br);
	if (check_branch(&br[0], 0x100c, NOP_AT, AUXSAMPLE_BR_IND_JUMP) ||
	    check_branch(&br[1], 0x1010, 0x100a, AUXSAMPLE_BR_RET) ||
	    check_branch(&br[2], 0x1005, 0x1010, AUXSAMPLE_BR_CALL) ||
	    check_branch(&br[3], 0x1000, 0x1005, AUXSAMPLE_BR_COND))
		goto out;
	ret = TEST_OK;
out:
	auxsample_pt_writer__delete(w);
	auxsample_decoder__delete(dec);
	return ret;
}

static int test_writer(void)
{
	return check_writer(false) ?: check_writer(true);
}

/* How many packets of @type the writer's stream holds. */
static int count_packets(const uint8_t *buf, size_t len, enum pt_packet_type type)
{
	struct pt_packet_decoder *pkt;
	struct pt_packet packet;
	struct pt_config cfg;
	int n = 0;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	pkt = pt_pkt_alloc_decoder(&cfg);
	if (!pkt || pt_pkt_sync_set(pkt, 0) < 0) {
		pt_pkt_free_decoder(pkt);
		return -1;
	}
	while (pt_pkt_next(pkt, &packet, sizeof(packet)) > 0)
		n += packet.type == type;
	pt_pkt_free_decoder(pkt);
	return n;
}

/*
 * Two nested calls, the inner one left by a RET elsewhere: the outer RET
 * is a TIP too, as libipt (which keeps the inner entry) and perf (which
 * popped it) would read a compressed one differently.
 */
static int test_writer_ret_elsewhere(void)
{
	struct auxsample_pt_writer_config wcfg = {
		.size = sizeof(wcfg), .psb_period = 2048, .tsc = 1,
	};
	struct auxsample_pt_writer *w = auxsample_pt_writer__new(&wcfg);
	const uint8_t *buf;
	size_t len;
	int ret = TEST_FAIL;

	if (!w)
		goto out;
	auxsample_pt_writer__tick(w, 0x1234567);
	if (auxsample_pt_writer__start(w, 0x1005) ||
	    auxsample_pt_writer__call(w, 0x100a, false, 0x1010) ||
	    auxsample_pt_writer__call(w, 0x100a, false, 0x1010) ||
	    auxsample_pt_writer__ret(w, NOP_AT) ||
	    auxsample_pt_writer__ret(w, 0x100a) ||
	    auxsample_pt_writer__interrupt(w, 0x100a))
		goto out;
	buf = auxsample_pt_writer__data(w, &len);
	if (!T_CHECK(count_packets(buf, len, ppt_tip) == 2))
		goto out;
	if (!T_CHECK(count_packets(buf, len, ppt_tnt_8) == 0))
		goto out;
	ret = TEST_OK;
out:
	auxsample_pt_writer__delete(w);
	return ret;
}

/* Memory the callback cannot supply (read_nothing()): an error, no made-up branches. */
static int test_no_memory(void)
{
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.read_memory = read_nothing,
	};
	struct auxsample_decoder *dec = auxsample_decoder__new(&config, NULL);
	const struct auxsample_decode_error *errs;
	struct stream s = { .enc = NULL };
	int ret = TEST_FAIL;

	if (!dec || stream__init(&s) || stream__whole_flow(&s))
		goto out;
	if (!T_CHECK(auxsample_decoder__decode(dec, s.buf, s.len, 64) == 0))
		goto out;
	if (!T_CHECK(auxsample_decoder__errors(dec, &errs) >= 1 &&
		     errs[0].error == -AUXSAMPLE_ERR_NOMAP))
		goto out;
	ret = TEST_OK;
out:
	if (s.enc)
		pt_free_encoder(s.enc);
	auxsample_decoder__delete(dec);
	return ret;
}

static int test_api_errors(void)
{
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.read_memory = read_code,
	};
	struct auxsample_stats stats;
	int err = 0;

	if (!T_CHECK(!auxsample_decoder__new(NULL, &err)))
		return TEST_FAIL;
	if (!T_CHECK(err == -AUXSAMPLE_ERR_INVALID))
		return TEST_FAIL;
	config.read_memory = NULL;
	err = 0;
	if (!T_CHECK(!auxsample_decoder__new(&config, &err)))
		return TEST_FAIL;
	if (!T_CHECK(err == -AUXSAMPLE_ERR_INVALID))
		return TEST_FAIL;
	config.read_memory = read_code;
	config.type = 99;
	err = 0;
	if (!T_CHECK(!auxsample_decoder__new(&config, &err)))
		return TEST_FAIL;
	if (!T_CHECK(err == -AUXSAMPLE_ERR_INVALID))
		return TEST_FAIL;
	config.type = AUXSAMPLE_TRACE_INTEL_PT;
	config.size = 8;
	if (!T_CHECK(!auxsample_decoder__new(&config, NULL)))
		return TEST_FAIL;
	if (!T_CHECK(auxsample_decoder__decode(NULL, NULL, 0, 1) == -AUXSAMPLE_ERR_INVALID))
		return TEST_FAIL;
	if (!T_CHECK(auxsample_decoder__stats(NULL, &stats, sizeof(stats)) ==
		     -AUXSAMPLE_ERR_INVALID))
		return TEST_FAIL;
	if (!T_CHECK(!strcmp(auxsample_strerror(-AUXSAMPLE_ERR_NOSYNC),
			     "no sync point in the trace")))
		return TEST_FAIL;
	if (!T_CHECK(!strcmp(auxsample_strerror(-1000), "unknown error")))
		return TEST_FAIL;
	if (!T_CHECK(!strcmp(auxsample_branch_kind__name(AUXSAMPLE_BR_IND_CALL), "ind_call")))
		return TEST_FAIL;
	auxsample_decoder__delete(NULL);
	return TEST_OK;
}

const struct test tests_decoder[] = {
	{ "branches of a synthesized stream", test_flow },
	{ "call chain of a stream stopped in a callee", test_callchain },
	{ "bytes before the first PSB are not decoded", test_leading_bytes },
	{ "trace that disagrees with the code is a gap", test_bad_trace },
	{ "unreadable code gives an error, no branches", test_no_memory },
	{ "decoding starts at the latest PSB that is enough", test_latest_psb },
	{ "whole-snippet decoding when asked", test_whole_snippet },
	{ "a stream decoded once stops where each snippet ends", test_stream },
	{ "a stream does not serve the stops it lost", test_stream_lost },
	{ "the PT writer's streams parse and decode as written", test_writer },
	{ "the PT writer compresses no RET into frames a RET skipped", test_writer_ret_elsewhere },
	{ "bad arguments are refused", test_api_errors },
	{ NULL, NULL },
};
