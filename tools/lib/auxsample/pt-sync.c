// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Intel PT: the sync point a snippet's decode starts at, the same for
 * libipt's backend (pt.c) and the walker (pt-walk.c), so that both give
 * the same branches from the same PSB: the latest that still gives the
 * depth asked for (a 64-deep virtual LBR needs only the trace since the
 * last PSB before its 64 branches), else one PSB earlier, and so on.
 */
#include <string.h>
#include "backend.h"
#include "pt-sync.h"

/* PSBs tried before the snippet's first: a bound on the decodes. */
#define PT_PSB_CANDIDATES	32

static const uint8_t pt_psb[16] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
};

/*
 * A PSB's first 0x82 is the first after any byte before it: each 0x82
 * memchr() finds is tried as the second byte of one.  memmem() cost a
 * twentieth of the sparse bench file's decoding (callgrind), memchr()
 * scans a vector of bytes at a time.
 */
const uint8_t *pt_psb__find(const uint8_t *buf, size_t len)
{
	const uint8_t *end = buf + len, *p = buf;

	while (end - p >= (ptrdiff_t)sizeof(pt_psb)) {
		const uint8_t *q = memchr(p + 1, 0x82, end - p - 1);

		if (!q || end - (q - 1) < (ptrdiff_t)sizeof(pt_psb))
			return NULL;
		if (q[-1] == 0x02 && !memcmp(q - 1, pt_psb, sizeof(pt_psb)))
			return q - 1;
		p = q;
	}
	return NULL;
}

/* The offsets of the last PSBs in the snippet, oldest first. */
static unsigned int pt_sync__find(const uint8_t *buf, size_t len, uint64_t *first,
				  uint64_t *psbs)
{
	unsigned int nr = 0;
	const uint8_t *p = buf;

	*first = len;
	while ((p = pt_psb__find(p, len - (p - buf))) != NULL) {
		if (*first == len)
			*first = p - buf;
		if (nr == PT_PSB_CANDIDATES) {
			memmove(psbs, psbs + 1, (nr - 1) * sizeof(*psbs));
			nr--;
		}
		psbs[nr++] = p - buf;
		p += sizeof(pt_psb);
	}
	return nr;
}

int pt_sync__decode(struct auxsample_decoder *dec, const struct auxsample_config *config,
		    const uint8_t *buf, size_t len, pt_sync_decode_fn decode, void *ctx)
{
	uint64_t psbs[PT_PSB_CANDIDATES], first;
	unsigned int nr = pt_sync__find(buf, len, &first, psbs);
	int err = -AUXSAMPLE_ERR_NOSYNC;

	if (config->flags & AUXSAMPLE_CFG_WHOLE_SNIPPET)
		nr = 0;
	for (int k = nr - 1; k >= -1; k--) {
		auxsample__restart(dec);
		err = decode(ctx, k >= 0 ? (int64_t)psbs[k] : -1, first);
		if (err > 0)
			return err;
		if (!err && auxsample__enough(dec))
			break;
		if (k == 0 && psbs[0] == first)
			break;		/* the start has nothing more */
	}
	auxsample__stats(dec)->bytes_before_sync = first;
	return err;
}
