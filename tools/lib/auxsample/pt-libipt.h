/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_PT_LIBIPT_H
#define __AUXSAMPLE_PT_LIBIPT_H

/*
 * The Intel PT backend on libipt (pt.c): its state and the flow of its
 * decodes, shared with its stream decoding (pt-stream.c).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <intel-pt.h>
#include "pt-cyc.h"
#include "x86-branch.h"

struct auxsample_decoder;
struct auxsample_config;
struct auxsample_pt_config;
struct pt_image_cache;

/*
 * The most blocks decoded in a row without the decoder reading further
 * into the trace.  Only direct jumps and calls consume no trace, and a
 * loop of them (a wrong IP, or corrupt trace) would be walked forever:
 * upstream's decoder bounds the same walk with INTEL_PT_MAX_LOOPS.
 */
#define PT_MAX_LOOPS		100000

struct pt_insn_cache_entry;
struct pt_stream;

/* A decoder's state (struct auxsample_backend's priv). */
struct pt_decoder {
	struct auxsample_decoder	*dec;
	const struct auxsample_config	*config;
	struct pt_image			*image;		/* the decoder's own */
	unsigned int			image_generation;	/* of config->image */
	bool				moved;		/* pd->image to be made again */
	struct pt_image_cache		*cache;		/* config->image's */
	struct pt_insn_cache_entry	*insn_cache;
	struct pt_stream		*stream;	/* between stream calls */
};

/* One decode of one snippet. */
struct pt_flow {
	struct pt_decoder		*pd;
	struct auxsample_decoder	*dec;
	struct pt_block_decoder		*blk;
	bool				pending;	/* a branch awaits its target */
	uint64_t			from;
	enum x86_branch_class		cls;
	unsigned int			len;
	uint64_t			last_ip;
	uint64_t			offset;		/* in the trace, at the last block */
	unsigned int			no_progress;	/* blocks decoded at @offset */
	bool				looped;		/* PT_MAX_LOOPS was hit */
	struct pt_cyc			cyc;		/* when config.pt.cyc */
	const uint8_t			*buf;		/* the trace, for cyc */
	size_t				size;
	const struct pt_config		*cfg;		/* while decoding begins */
};

/* The decoder's image as config->image is now: 0 or -AUXSAMPLE_ERR_*. */
int pt_image__update(struct pt_decoder *pd);
/* libipt's error as the library's. */
int pt_error(int pt_err);
void pt_flow__error(struct pt_flow *f, int pt_err);
/* Synced at a PSB. */
void pt_flow__synced(struct pt_flow *f);
/* What libipt's block decoder gave: a block, an event. */
void pt_flow__block(struct pt_flow *f, const struct pt_block *b);
void pt_flow__event(struct pt_flow *f, const struct pt_event *ev);
/* pt_blk_event() into the flow: libipt's status. */
#define PT_EVENT_NONE	((enum pt_event_type)-1)
int pt_flow__next_event(struct pt_flow *f, struct pt_event *ev);
/* Nonzero where PT_MAX_LOOPS blocks came without the trace read on. */
int pt_flow__progress(struct pt_flow *f);
void pt_config__fill(struct pt_config *cfg, const struct auxsample_pt_config *pt,
		     const uint8_t *buf, size_t len);

/* The backend's stream functions (pt-stream.c). */
int pt_stream__begin(void *priv, const uint8_t *buf, size_t len);
int pt_stream__to(void *priv, uint64_t end);
void pt_stream__end(void *priv);

#endif /* __AUXSAMPLE_PT_LIBIPT_H */
