// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Intel PT walker's packet parser: one packet at a time, in place,
 * never copying the trace.  Sizes and layouts are the SDM's (Vol. 3C,
 * 33.4); every read is checked against the end of the buffer, and no
 * loop runs longer than a packet (CYC: at most 9 bytes).  What libipt's
 * packet decoder refuses (reserved bits set, ...) is refused here too.
 */
#include <string.h>
#include "pt-parse.h"

/* Payload bytes after a CYC's first: more would overflow 64 bits (libipt). */
#define PTW_CYC_EXT_MAX	8

static uint64_t ptw_le(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* The highest set bit is the stop bit: the TNT bits are below it. */
static int ptw_tnt(struct ptw_packet *p, uint64_t payload, unsigned int size)
{
	if (payload <= 1)
		return PTW_BAD;		/* no stop bit, or no bits */
	p->type = PTW_TNT;
	p->nr_bits = 63 - __builtin_clzll(payload);
	p->tnt = payload & ((1ULL << p->nr_bits) - 1);
	p->size = size;
	return size;
}

static int ptw_sized(struct ptw_packet *p, enum ptw_type type, unsigned int size,
		     size_t len)
{
	if (size > len)
		return PTW_EOS;
	p->type = type;
	p->size = size;
	return size;
}

static int ptw_parse_ip(const uint8_t *buf, size_t len, struct ptw_packet *p,
			enum ptw_type type)
{
	static const uint8_t bytes[8] = { 0, 2, 4, 6, 6, 0, 8, 0 };
	unsigned int ipc = buf[0] >> 5;

	if (ipc == 5 || ipc == 7)
		return PTW_BAD;
	if (1 + (size_t)bytes[ipc] > len)
		return PTW_EOS;
	p->type = type;
	p->size = 1 + bytes[ipc];
	p->ip_bytes = ipc;
	p->ip = ptw_le(buf + 1, bytes[ipc]);
	return p->size;
}

static int ptw_parse_cyc(const uint8_t *buf, size_t len, struct ptw_packet *p)
{
	unsigned int n = 1;

	if (buf[0] & 4) {
		do {
			if (n >= len)
				return PTW_EOS;
			if (n > PTW_CYC_EXT_MAX)
				return PTW_BAD;
		} while (buf[n++] & 1);
	}
	p->type = PTW_TIMING;
	p->size = n;
	return n;
}

static int ptw_parse_ext(const uint8_t *buf, size_t len, struct ptw_packet *p)
{
	static const uint8_t psb[16] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	};

	if (len < 2)
		return PTW_EOS;
	switch (buf[1]) {
	case 0x23:
		return ptw_sized(p, PTW_PSBEND, 2, len);
	case 0x82:
		if (len < sizeof(psb))
			return PTW_EOS;
		if (memcmp(buf, psb, sizeof(psb)))
			return PTW_BAD;
		return ptw_sized(p, PTW_PSB, sizeof(psb), len);
	case 0xa3:
		if (len < 8)
			return PTW_EOS;
		return ptw_tnt(p, ptw_le(buf + 2, 6), 8);
	case 0xf3:
		return ptw_sized(p, PTW_OVF, 2, len);
	case 0x03:	/* CBR: libipt's time keeping refuses a ratio of 0 */
		if (len < 4)
			return PTW_EOS;
		if (!buf[2])
			return PTW_BAD;
		return ptw_sized(p, PTW_TIMING, 4, len);
	case 0x73:	/* TMA: reserved bits are zero */
		if (len < 7)
			return PTW_EOS;
		if (buf[4] || buf[6] & 0xfe)
			return PTW_BAD;
		return ptw_sized(p, PTW_TIMING, 7, len);
	case 0x43:	/* PIP */
		return ptw_sized(p, PTW_OTHER, 8, len);
	case 0xc8:	/* VMCS */
		return ptw_sized(p, PTW_OTHER, 7, len);
	case 0x83:	/* TraceStop */
		return ptw_sized(p, PTW_OTHER, 2, len);
	default:
		/* PTWRITE, MWAIT, PWRE, PWRX, EXSTOP, MNT, BBP ...: libipt's */
		return PTW_BAD;
	}
}

int ptw_parse(const uint8_t *buf, size_t len, struct ptw_packet *p)
{
	uint8_t b;

	if (!len)
		return PTW_EOS;
	b = buf[0];
	if (!b)
		return ptw_sized(p, PTW_PAD, 1, len);
	if (b == 0x02)
		return ptw_parse_ext(buf, len, p);
	if ((b & 3) == 3)
		return ptw_parse_cyc(buf, len, p);
	if (!(b & 1))
		return ptw_tnt(p, b >> 1, 1);
	switch (b & 0x1f) {
	case 0x0d:
		return ptw_parse_ip(buf, len, p, PTW_TIP);
	case 0x11:
		return ptw_parse_ip(buf, len, p, PTW_TIP_PGE);
	case 0x01:
		return ptw_parse_ip(buf, len, p, PTW_TIP_PGD);
	case 0x1d:
		return ptw_parse_ip(buf, len, p, PTW_FUP);
	default:
		break;
	}
	switch (b) {
	case 0x19:	/* TSC */
		return ptw_sized(p, PTW_TIMING, 8, len);
	case 0x59:	/* MTC */
		return ptw_sized(p, PTW_TIMING, 2, len);
	case 0x99:
		if (len < 2)
			return PTW_EOS;
		p->mode = buf[1];
		switch (buf[1] >> 5) {
		case 0:
			return ptw_sized(p, PTW_MODE_EXEC, 2, len);
		case 1:
			return ptw_sized(p, PTW_MODE_TSX, 2, len);
		default:
			return PTW_BAD;
		}
	default:
		return PTW_BAD;
	}
}

int ptw_ip(const struct ptw_packet *p, uint64_t last_ip, uint64_t *ip)
{
	switch (p->ip_bytes) {
	case 1:
		*ip = (last_ip & ~0xffffULL) | p->ip;
		return 0;
	case 2:
		*ip = (last_ip & ~0xffffffffULL) | p->ip;
		return 0;
	case 3:
		*ip = (uint64_t)((int64_t)(p->ip << 16) >> 16);
		return 0;
	case 4:
		*ip = (last_ip & ~0xffffffffffffULL) | p->ip;
		return 0;
	case 6:
		*ip = p->ip;
		return 0;
	default:
		return -1;
	}
}
