// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Intel PT's CYC packets, for the cycles of the virtual LBR: the packet
 * that resolves each branch, and the cycles the trace counted before it.
 *
 * A CYC gives the core cycles since the CYC before; one goes before every
 * packet that the trace times, so the sum of the CYCs before a packet is
 * its time.  A packet goes out at the last branch it tells of: a TIP or
 * TIP.PGD at its branch, a FUP at the interrupted instruction, a TNT when
 * its last bit is taken if it is full (else something else flushed it, at
 * an instruction nobody knows).  Each branch that reads the trace is
 * given the time of its own packet here, as the decoder resolves it
 * (pt.c after libipt's block decoder, pt-walk.c after its own walk),
 * walking the packets in order: conditional branches and compressed
 * returns take the next TNT bit, other returns, indirect and far
 * branches the next TIP (or TIP.PGD); the events their TIP.PGE, TIP.PGD
 * or FUP.  cycles.c turns those times into cycles per branch.
 *
 * libipt's block decoder's offset cannot tell which packet resolved a
 * branch: it reads ahead, by a block's branch and by events, so packets
 * after the branch's own (a TIP.PGE after an interrupt's TIP.PGD: the
 * time spent elsewhere) would time it.
 *
 * The count may not go on across a PSB (the writer of the trace may
 * count CYC afresh from it, as the simulator's does) nor a CBR outside
 * one: each starts a new stretch.  If the flow asks for a packet that is
 * not next (a corrupt trace), the rest of the snippet is not timed.
 */
#include "backend.h"
#include "pt-cyc.h"
#include "pt-parse.h"
#include "x86-branch.h"

/* TNT bits that fill a packet: it went out with its last branch. */
#define PT_CYC_TNT8_BITS	6
#define PT_CYC_TNT64_BITS	47

/* What a branch or event looks for. */
#define PT_CYC_WANT_TNT		(1U << PTW_TNT)
#define PT_CYC_WANT_TIP		((1U << PTW_TIP) | (1U << PTW_TIP_PGD))
#define PT_CYC_FLOW		((1U << PTW_TNT) | (1U << PTW_TIP) | (1U << PTW_TIP_PGE) | \
				 (1U << PTW_TIP_PGD) | (1U << PTW_FUP))

static uint64_t pt_cyc__value(const uint8_t *at, unsigned int size)
{
	uint64_t value = at[0] >> 3;
	unsigned int shift = 5;

	for (unsigned int i = 1; i < size; i++, shift += 7)
		value |= (uint64_t)(at[i] >> 1) << shift;
	return value;
}

/* Synced at the PSB at @sync: a new stretch, from its PSB+. */
void pt_cyc__start(struct pt_cyc *c, const uint8_t *buf, size_t len, uint64_t sync)
{
	c->buf = buf;
	c->len = len;
	c->pos = sync;
	c->stretch++;
	c->lost = false;
	c->nr_bits = 0;
	c->told = false;
	c->last_pgd = false;
}

/*
 * The decoder skimmed the trace up to @pos (pt-walk.c): every packet
 * before it that tells of the flow was taken, but for @nr_bits bits of
 * the last, a TNT (@full: with all the bits it can have).  A new stretch
 * from there: the cycles counted before do not matter, times are only
 * compared within a stretch (cycles.c).
 */
void pt_cyc__resync(struct pt_cyc *c, const uint8_t *buf, size_t len, uint64_t pos,
		    unsigned int nr_bits, bool full)
{
	pt_cyc__start(c, buf, len, pos);
	c->nr_bits = nr_bits;
	c->full = full;
	c->time = c->cycles;
}

/* A PSB+ header at @c->pos, after its PSB: passed, its FUP is no flow. */
static int pt_cyc__psb(struct pt_cyc *c)
{
	struct ptw_packet p;
	int n;

	while (c->pos < c->len) {
		n = ptw_parse(c->buf + c->pos, c->len - c->pos, &p);
		if (n < 0 || p.type == PTW_PSB)
			return -1;
		c->pos += n;
		if (p.type == PTW_PSBEND)
			return 0;
	}
	return -1;
}

/*
 * A packet with an IP (TIP, TIP.PGE, TIP.PGD, FUP) or an MTC at @at,
 * whole in the @left bytes: its type and size, without ptw_parse() (the
 * flow has read its IP; its time is all this needs).  0 for anything
 * else, which ptw_parse() reads, errors included.
 */
static inline int pt_cyc__quick(const uint8_t *at, size_t left, struct ptw_packet *p)
{
	static const uint8_t bytes[8] = { 0, 2, 4, 6, 6, 0, 8, 0 };
	unsigned int ipc = at[0] >> 5, size;

	switch (at[0] & 0x1f) {
	case 0x0d:
		p->type = PTW_TIP;
		break;
	case 0x11:
		p->type = PTW_TIP_PGE;
		break;
	case 0x01:
		p->type = PTW_TIP_PGD;
		break;
	case 0x1d:
		p->type = PTW_FUP;
		break;
	case 0x19:
		if (at[0] != 0x59 || left < 2)
			return 0;
		p->type = PTW_TIMING;	/* MTC */
		return p->size = 2;
	default:
		return 0;
	}
	size = 1 + bytes[ipc];
	/* Reserved IP compressions, or cut short: ptw_parse()'s errors. */
	if (ipc == 5 || ipc == 7 || size > left)
		return 0;
	p->ip_bytes = ipc;
	return p->size = size;
}

/*
 * The next flow packet, into *@p, taken if it is one of @want; -1 if it
 * is not, or the trace ends first.
 */
static int pt_cyc__next(struct pt_cyc *c, unsigned int want, struct ptw_packet *p)
{
	/* Once or twice per taken branch: the position and count in registers. */
	uint64_t pos = c->pos, len = c->len, cycles = c->cycles;
	const uint8_t *buf = c->buf;
	int ret = -1;

	if (c->lost)
		return -1;
	while (pos < len) {
		const uint8_t *at = buf + pos;
		int n;

		/* The common cases without ptw_parse(): a CYC of one or two bytes, a TNT-8 */
		if ((at[0] & 7) == 3) {
			cycles += at[0] >> 3;
			pos++;
			continue;
		}
		if (ptw_is_cyc2(at, len - pos)) {
			cycles += pt_cyc__value(at, 2);
			pos += 2;
			continue;
		}
		if (!(at[0] & 1) && at[0] >= 4 && (want & PT_CYC_WANT_TNT)) {
			p->type = PTW_TNT;
			p->size = 1;
			p->nr_bits = 31 - __builtin_clz(at[0] >> 1);
			pos++;
			c->last_pgd = false;
			ret = 0;
			goto out;
		}
		n = pt_cyc__quick(at, len - pos, p);
		if (!n)
			n = ptw_parse(at, len - pos, p);

		if (n < 0 || p->type == PTW_OVF)
			break;
		if (p->type < 32 && ((1U << p->type) & PT_CYC_FLOW)) {
			if (!((1U << p->type) & want))
				break;
			pos += n;
			c->last_pgd = p->type == PTW_TIP_PGD;
			ret = 0;
			goto out;
		}
		pos += n;
		if (p->type == PTW_TIMING && (at[0] & 3) == 3) {
			cycles += pt_cyc__value(at, n);
		} else if (p->type == PTW_TIMING && at[0] == 0x02 && at[1] == 0x03) {
			c->stretch++;		/* CBR: the CYC count starts again */
		} else if (p->type == PTW_PSB) {
			c->stretch++;
			c->pos = pos;
			n = pt_cyc__psb(c);
			pos = c->pos;
			if (n)
				break;
		}
	}
	c->lost = true;
out:
	c->pos = pos;
	c->cycles = cycles;
	if (!ret)
		c->time = cycles;
	return ret;
}

/*
 * A TNT bit resolves a branch (a conditional one, a compressed return).
 * The timing hears of the packet at its first bit used, and of a full
 * one at its last (an anchor): at the others it would learn nothing, the
 * time being the packet's and no anchor (cycles.c), and the calls were
 * a sixth of the timing's cost (callgrind, the dense bench file).
 */
static void pt_cyc__bit(struct pt_cyc *c, struct auxsample_decoder *dec)
{
	struct ptw_packet p;

	if (c->lost)
		return;
	if (!c->nr_bits) {
		if (pt_cyc__next(c, PT_CYC_WANT_TNT, &p))
			return;
		c->nr_bits = p.nr_bits;
		c->full = p.nr_bits == (p.size == 1 ? PT_CYC_TNT8_BITS : PT_CYC_TNT64_BITS);
		c->told = false;
	}
	c->nr_bits--;
	if (c->told && (c->nr_bits || !c->full))
		return;
	c->told = true;
	auxsample_timing__packet(dec, c->time, c->stretch, c->full && !c->nr_bits);
}

/* A packet with an IP, of @want, resolves a branch or an event. */
static void pt_cyc__ip(struct pt_cyc *c, struct auxsample_decoder *dec, unsigned int want)
{
	struct ptw_packet p;

	c->nr_bits = 0;
	if (!pt_cyc__next(c, want, &p))
		auxsample_timing__packet(dec, c->time, c->stretch, true);
}

/*
 * A compressed return is a TNT bit: libipt looks for one first.  The
 * commonest packets looked at in place (pt-parse.h's sizes: CYC and MTC
 * skipped, a TNT-8 or a whole TIP next), anything else as pt_cyc__next()
 * would, on a copy.
 */
static bool pt_cyc__tnt_next(struct pt_cyc *c)
{
	uint64_t pos = c->pos;
	struct pt_cyc ahead;
	struct ptw_packet p;
	unsigned int n;

	if (c->nr_bits)
		return true;
	if (c->lost)
		return false;
	while (pos < c->len && (n = ptw_timing_size(c->buf + pos, c->len - pos)))
		pos += n;
	if (ptw_is_tnt8(c->buf + pos, c->len - pos))
		return true;
	if (pos < c->len && (c->buf[pos] & 0x1f) == 0x0d &&
	    ptw_ip_packet_size(c->buf + pos, c->len - pos))
		return false;
	ahead = *c;
	return !pt_cyc__next(&ahead, PT_CYC_WANT_TNT, &p);
}

/* The decoder resolves a branch of class @cls (enum x86_branch_class). */
void pt_cyc__branch(struct pt_cyc *c, struct auxsample_decoder *dec, unsigned int cls)
{
	switch (cls) {
	case X86_BR_JUMP:
	case X86_BR_CALL:
		return;
	case X86_BR_COND:
		pt_cyc__bit(c, dec);
		return;
	case X86_BR_RET:
		if (pt_cyc__tnt_next(c)) {
			pt_cyc__bit(c, dec);
			return;
		}
		pt_cyc__ip(c, dec, PT_CYC_WANT_TIP);
		return;
	default:
		pt_cyc__ip(c, dec, PT_CYC_WANT_TIP);
	}
}

/*
 * Packets were lost (OVF): the decoder goes on after the OVF, at its FUP
 * if tracing went on, with no time across it.  Whatever the flow took
 * before does not count: the packets are found from the OVF.
 */
static void pt_cyc__overflow(struct pt_cyc *c)
{
	struct ptw_packet p;
	int n;

	while (c->pos < c->len) {
		n = ptw_parse(c->buf + c->pos, c->len - c->pos, &p);
		if (n < 0)
			break;
		c->pos += n;
		if (p.type != PTW_OVF)
			continue;
		c->lost = false;
		c->nr_bits = 0;
		c->last_pgd = false;
		c->stretch++;
		/* Tracing went on: the FUP is the overflow's, no branch's. */
		n = ptw_parse(c->buf + c->pos, c->len - c->pos, &p);
		while (n > 0 && (p.type == PTW_PAD || p.type == PTW_TIMING)) {
			if ((c->buf[c->pos] & 3) == 3)
				c->cycles += pt_cyc__value(c->buf + c->pos, n);
			c->pos += n;
			n = ptw_parse(c->buf + c->pos, c->len - c->pos, &p);
		}
		if (n > 0 && p.type == PTW_FUP)
			c->pos += n;
		return;
	}
	c->lost = true;
}

/* The decoder takes an event: its packets, at the current instruction. */
void pt_cyc__event(struct pt_cyc *c, struct auxsample_decoder *dec, enum pt_cyc_event ev)
{
	switch (ev) {
	case PT_CYC_ENABLED:
		pt_cyc__ip(c, dec, 1U << PTW_TIP_PGE);
		break;
	case PT_CYC_DISABLED:
		/* Its branch took it already, or there was none. */
		if (!c->last_pgd) {
			pt_cyc__ip(c, dec, 1U << PTW_TIP_PGD);
		} else if (!c->lost) {
			c->nr_bits = 0;
			auxsample_timing__packet(dec, c->time, c->stretch, true);
		}
		c->last_pgd = false;
		break;
	case PT_CYC_OVERFLOW:
		pt_cyc__overflow(c);
		break;
	case PT_CYC_ASYNC:
		pt_cyc__ip(c, dec, 1U << PTW_FUP);
		/* The TIP or TIP.PGD after it went out with it. */
		if (!c->lost)
			pt_cyc__next(c, PT_CYC_WANT_TIP, &(struct ptw_packet){});
		c->last_pgd = false;
		break;
	}
}
