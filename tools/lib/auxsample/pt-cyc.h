/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_PT_CYC_H
#define __AUXSAMPLE_PT_CYC_H

/*
 * Intel PT's CYC packets, for the cycles of the virtual LBR (cycles.c):
 * which packet resolves each branch, and its time (pt-cyc.c).  Shared by
 * libipt's backend (pt.c) and the walker (pt-walk.c), which call it at
 * the same points of the flow.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct auxsample_decoder;

struct pt_cyc {
	const uint8_t	*buf;
	size_t		len;
	uint64_t	pos;		/* the next packet not taken */
	uint64_t	cycles;		/* CYC payloads before @pos */
	uint32_t	stretch;	/* a new one after each sync, PSB and CBR */
	bool		lost;		/* the flow and the packets went apart */
	/* the TNT being used */
	unsigned int	nr_bits;	/* bits left */
	bool		full;		/* it went out with its last bit */
	bool		told;		/* the timing has its time (pt_cyc__bit()) */
	uint64_t	time;		/* of the packet taken last */
	bool		last_pgd;	/* ... a TIP.PGD */
};

/* Kinds of pt_cyc__event(). */
enum pt_cyc_event {
	PT_CYC_ENABLED,		/* TIP.PGE */
	PT_CYC_DISABLED,	/* TIP.PGD */
	PT_CYC_ASYNC,		/* FUP, and the TIP or TIP.PGD it binds to */
	PT_CYC_OVERFLOW,	/* OVF, and the FUP it binds to if one follows */
};

void pt_cyc__start(struct pt_cyc *c, const uint8_t *buf, size_t len, uint64_t sync);
void pt_cyc__resync(struct pt_cyc *c, const uint8_t *buf, size_t len, uint64_t pos,
		    unsigned int nr_bits, bool full);
void pt_cyc__branch(struct pt_cyc *c, struct auxsample_decoder *dec, unsigned int cls);
void pt_cyc__event(struct pt_cyc *c, struct auxsample_decoder *dec, enum pt_cyc_event ev);

#endif /* __AUXSAMPLE_PT_CYC_H */
