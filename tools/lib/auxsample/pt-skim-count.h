/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_PT_SKIM_COUNT_H
#define __AUXSAMPLE_PT_SKIM_COUNT_H

/*
 * The skim's count of packets (pt-walk-skim.c): the branches and timing
 * anchors the packets show, packet by packet, without walking.  A
 * stream's scan for trace stops (pt-walk-stream.c) counts as it goes, so
 * that a stretch's packets are not read once more to choose its point.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pt-parse.h"
#include "pt-walk.h"

static inline unsigned int ptw_skim__bits(uint64_t tnt, unsigned int nr_bits)
{
	return __builtin_popcountll(tnt & ((1ULL << nr_bits) - 1));
}

/*
 * Bits set in each 7-bit value, a TNT-8's payload and its stop bit: a
 * table, as x86-64's baseline has no POPCNT (GCC calls a function).
 */
static const uint8_t ptw_skim_bits7[128] = {
	0, 1, 1, 2, 1, 2, 2, 3,
	1, 2, 2, 3, 2, 3, 3, 4,
	1, 2, 2, 3, 2, 3, 3, 4,
	2, 3, 3, 4, 3, 4, 4, 5,
	1, 2, 2, 3, 2, 3, 3, 4,
	2, 3, 3, 4, 3, 4, 4, 5,
	2, 3, 3, 4, 3, 4, 4, 5,
	3, 4, 4, 5, 4, 5, 5, 6,
	1, 2, 2, 3, 2, 3, 3, 4,
	2, 3, 3, 4, 3, 4, 4, 5,
	2, 3, 3, 4, 3, 4, 4, 5,
	3, 4, 4, 5, 4, 5, 5, 6,
	2, 3, 3, 4, 3, 4, 4, 5,
	3, 4, 4, 5, 4, 5, 5, 6,
	3, 4, 4, 5, 4, 5, 5, 6,
	4, 5, 5, 6, 5, 6, 6, 7,
};

/*
 * The packet at @pos of the @len bytes at @buf, counted into @c (its
 * branches, anchors and whether the last flow packet went with its
 * branch): its size, 0 or less where the walk stops too.  @idle and @pgd,
 * both NULL or neither, say what a stream's scan wants to know of it:
 * whether only timing or a PSB+ (pt.c's pt_packet__is_idle()), whether
 * a TIP.PGD.
 */
static __always_inline int ptw_skim__packet(const uint8_t *buf, size_t len, size_t pos,
					    struct ptw_skim_point *c, bool *idle, bool *pgd)
{
	uint8_t b = buf[pos];
	struct ptw_packet p;
	int n;

	if (idle) {
		*idle = false;
		*pgd = false;
	}
	/*
	 * The common packets without ptw_parse(), the commonest first
	 * (sparse bench file: CYC of two bytes 37%, TNT-8 36%, TIP 16%,
	 * MTC 8%): a CYC of one or two bytes,
	 */
	if ((b & 3) == 3) {
		n = !(b & 4) ? 1 : len - pos >= 2 && !(buf[pos + 1] & 1) ? 2 : 0;
		if (n) {
			c->anchors += c->exact;
			c->exact = false;
			if (idle)
				*idle = true;
			return n;
		}
	}
	/* TNT-8 (full: 6 bits), */
	if (!(b & 1) && b >= 4) {
		c->taken += ptw_skim_bits7[b >> 1] - 1;	/* not the stop bit */
		c->exact = b >= 0x80;
		return 1;
	}
	/* CYC, PAD, MTC, */
	n = ptw_timing_pad_size(buf + pos, len - pos);
	if (n) {
		c->anchors += c->exact && b;
		c->exact &= !b;
		if (idle)
			*idle = true;
		return n;
	}
	/* TIP (a taken branch), TIP.PGE, TIP.PGD, FUP. */
	n = ptw_ip_packet_size(buf + pos, len - pos);
	if (n) {
		c->taken += (b & 0x1f) == 0x0d;
		c->exact = true;
		if (pgd)
			*pgd = (b & 0x1f) == 0x01;
		return n;
	}
	n = ptw_parse(buf + pos, len - pos, &p);
	if (n <= 0)
		return n;
	if (idle) {
		*idle = p.type == PTW_PAD || p.type == PTW_TIMING || p.type == PTW_PSB ||
			p.type == PTW_PSBEND;
		*pgd = p.type == PTW_TIP_PGD;
	}
	if (p.type == PTW_TNT) {
		c->taken += ptw_skim__bits(p.tnt, p.nr_bits);
		c->exact = p.nr_bits == PTW_TNT64_BITS;
	} else if (p.type == PTW_TIMING && (b & 3) == 3) {
		c->anchors += c->exact;	/* a CYC cut short, as ptw_parse() reads it */
		c->exact = false;
	} else if (p.type != PTW_TIMING && p.type != PTW_PAD) {
		c->exact = false;
	}
	return n;
}

#endif /* __AUXSAMPLE_PT_SKIM_COUNT_H */
