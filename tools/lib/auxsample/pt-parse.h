/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_PT_PARSE_H
#define __AUXSAMPLE_PT_PARSE_H

/*
 * Intel PT packets, as the SDM (Vol. 3C, 33.4 "Trace Packets") lays
 * them out, read in place: the walker's parser (pt-parse.c).  Only what
 * the walker uses is decoded; the rest is sized and skipped.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum ptw_type {
	PTW_PAD = 1,
	PTW_TIMING,		/* TSC, TMA, MTC, CYC, CBR: not flow */
	PTW_TNT,
	PTW_TIP,
	PTW_TIP_PGE,
	PTW_TIP_PGD,
	PTW_FUP,
	PTW_MODE_EXEC,
	PTW_MODE_TSX,
	PTW_PSB,
	PTW_PSBEND,
	PTW_OVF,
	PTW_OTHER,		/* PIP, VMCS, PTWRITE, power, ...: left to libipt */
};

/* Errors of ptw_parse(). */
#define PTW_EOS		(-1)	/* the packet does not end in the buffer */
#define PTW_BAD		(-2)	/* no packet the walker knows */

struct ptw_packet {
	enum ptw_type	type;
	unsigned int	size;
	/* TNT: the bits, first branch in the highest of @nr_bits */
	uint64_t	tnt;
	unsigned int	nr_bits;
	/* TIP, FUP: the IP bytes (0: suppressed) and the raw payload */
	unsigned int	ip_bytes;
	uint64_t	ip;
	/* MODE.Exec: CS.L, CS.D; MODE.TSX: the payload */
	uint8_t		mode;
};

/* The packet at @buf[0] of @len bytes: its size, or PTW_EOS / PTW_BAD. */
int ptw_parse(const uint8_t *buf, size_t len, struct ptw_packet *p);

/*
 * The size of the CYC or MTC at @at, whole in the @left bytes (at least
 * one), as ptw_parse() reads it: the commonest packets with CYC, sized
 * without it (the walker's fast loop, its skim's pre-scan); 0 for
 * anything else, which ptw_parse() reads, errors included.
 */
static inline unsigned int ptw_timing_size(const uint8_t *at, size_t left)
{
	unsigned int n = 1;

	if (at[0] == 0x59)
		return left >= 2 ? 2 : 0;	/* MTC */
	if ((at[0] & 3) != 3)
		return 0;
	/* CYC: more bytes while bit 0 is set, at most 9 */
	if (at[0] & 4) {
		do {
			if (n >= left || n > 8)
				return 0;
		} while (at[n++] & 1);
	}
	return n;
}

/*
 * A CYC of two bytes at @at, of @left (at least one): Exp set in the
 * first, not in the second.
 */
static inline bool ptw_is_cyc2(const uint8_t *at, size_t left)
{
	return (at[0] & 7) == 7 && left >= 2 && !(at[1] & 1);
}

/*
 * The commonest packets sized without ptw_parse(), for the scans that
 * only count them (a skim's pre-scan, a stream's stops), 0 for anything
 * else (ptw_parse() reads it, errors included): a CYC, PAD or MTC,
 */
static inline unsigned int ptw_timing_pad_size(const uint8_t *at, size_t left)
{
	return at[0] ? ptw_timing_size(at, left) : 1;
}

/* ... and a TIP, TIP.PGE, TIP.PGD or FUP, whole in @left bytes. */
static inline unsigned int ptw_ip_packet_size(const uint8_t *at, size_t left)
{
	static const uint8_t bytes[8] = { 0, 2, 4, 6, 6, 0, 8, 0 };
	unsigned int ipc = at[0] >> 5, size = 1 + bytes[ipc];

	switch (at[0] & 0x1f) {
	case 0x0d:
	case 0x11:
	case 0x01:
	case 0x1d:
		/* Reserved IP compressions, or cut short: ptw_parse()'s errors. */
		return ipc == 5 || ipc == 7 || size > left ? 0 : size;
	default:
		return 0;
	}
}

/* A one-byte TNT at @at, of @left bytes: even, not PAD (0x00), not an extended opcode (0x02). */
static inline bool ptw_is_tnt8(const uint8_t *at, size_t left)
{
	return left && !(at[0] & 1) && at[0] >= 4;
}

/* A TIP or TIP.PGD at @at, of @left bytes. */
static inline bool ptw_is_tip_or_pgd(const uint8_t *at, size_t left)
{
	return left && ((at[0] & 0x1f) == 0x0d || (at[0] & 0x1f) == 0x01);
}

/*
 * The bytes of the CYC and MTC packets at @at, of @left, skipped as
 * ptw_walk__peek() skips them after a TMA: with CYC nearly every packet
 * has one before it.
 */
static inline size_t ptw_timing_run(const uint8_t *at, size_t left)
{
	size_t run = 0;

	while (run < left) {
		unsigned int n = ptw_timing_size(at + run, left - run);

		if (!n)
			break;
		run += n;
	}
	return run;
}

/*
 * The IP of a TIP/FUP after IP compression against @last_ip (the last
 * IP sent, 0 after a PSB), or -1 for a reserved IPBytes.
 */
int ptw_ip(const struct ptw_packet *p, uint64_t last_ip, uint64_t *ip);

/*
 * ptw_parse() and ptw_ip() in one, for the walker's fast loop: the IP of
 * the TIP, TIP.PGE, TIP.PGD or FUP at @buf (of @len bytes) in *@ip, and
 * the packet's size; 0 where its IP is suppressed, its IPBytes reserved
 * or the packet not all in the buffer (ptw_parse() then says which).
 */
static inline unsigned int ptw_tip_ip(const uint8_t *buf, size_t len, uint64_t last_ip,
				      uint64_t *ip)
{
	static const uint8_t bytes[8] = { 0, 2, 4, 6, 6, 0, 8, 0 };
	unsigned int ipc = buf[0] >> 5, n = bytes[ipc];
	uint64_t v = 0;

	if (!n || n >= len)
		return 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (len > 8) {
		memcpy(&v, buf + 1, 8);
		if (n < 8)
			v &= (1ULL << (8 * n)) - 1;
	} else
#endif
	{
		for (unsigned int i = n; i > 0; i--)
			v = v << 8 | buf[i];
	}
	switch (ipc) {
	case 1:
		*ip = (last_ip & ~0xffffULL) | v;
		break;
	case 2:
		*ip = (last_ip & ~0xffffffffULL) | v;
		break;
	case 3:
		*ip = (uint64_t)((int64_t)(v << 16) >> 16);
		break;
	case 4:
		*ip = (last_ip & ~0xffffffffffffULL) | v;
		break;
	default:
		*ip = v;
		break;
	}
	return n + 1;
}

#endif /* __AUXSAMPLE_PT_PARSE_H */
