/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_PT_SYNC_H
#define __AUXSAMPLE_PT_SYNC_H

/*
 * Where an Intel PT snippet's decode starts (pt-sync.c), for both PT
 * backends: libipt's (pt.c) and the walker (pt-walk.c).
 */
#include <stddef.h>
#include <stdint.h>

struct auxsample_config;
struct auxsample_decoder;

/*
 * Decode from the PSB at @offset, or with @offset -1 from the snippet's
 * first one, at @first (the snippet's length: none): 0, -AUXSAMPLE_ERR_*,
 * or above 0 to stop at once (the walker's hand-over to libipt).
 */
typedef int (*pt_sync_decode_fn)(void *ctx, int64_t offset, uint64_t first);

/*
 * Decode the snippet of @len bytes at @buf from the latest PSB that
 * still gives the branches asked for, going back one PSB at a time; the
 * oldest candidate is the snippet's start (the only one with
 * AUXSAMPLE_CFG_WHOLE_SNIPPET in @config's flags).  What @decode
 * returned last.
 */
int pt_sync__decode(struct auxsample_decoder *dec, const struct auxsample_config *config,
		    const uint8_t *buf, size_t len, pt_sync_decode_fn decode, void *ctx);
/* The first PSB in the @len bytes at @buf, NULL for none. */
const uint8_t *pt_psb__find(const uint8_t *buf, size_t len);

#endif /* __AUXSAMPLE_PT_SYNC_H */
