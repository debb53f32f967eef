// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Intel PT walker as a backend (pt-walk.c walks, pt-walk-stream.c
 * walks streams): a snippet is walked from the PSB pt-sync.c picks, and
 * handed whole to libipt's backend (pt.c) where the walker stops short
 * (PTW_FALLBACK); the walker's blocks follow the image's.
 */
#include <stdlib.h>
#include "backend.h"
#include "pt-blocks.h"
#include "pt-image.h"
#include "pt-sync.h"
#include "pt-walk.h"

/*
 * A snippet's walk from the PSB at @offset.  libipt's sync reads on past
 * a PSB+ that leaves tracing off: where the trace ends first, whether it
 * synced there depends on what it read on the way (fuzz-pt found a PSB+
 * and padding at a snippet's end that it refused; ptt's cbr-cyc cut after
 * its CBR it takes): libipt decides.
 */
static int ptw_walk__from(struct ptw_walk *w, uint64_t offset)
{
	int err = ptw_walk__sync(w, offset);

	if (!err)
		err = ptw_walk__peek(w);
	if (err)
		return err;
	if (w->eos && !w->enabled)
		return PTW_FALLBACK;
	return ptw_walk__run(w);
}

/*
 * pt_sync__decode()'s: 0, -AUXSAMPLE_ERR_NOSYNC or PTW_FALLBACK.  The
 * snippet is skimmed up to the latest point that leaves enough branches
 * (skim.c, pt-walk-skim.c); walked again whole where that did not give
 * what a whole walk gives.
 */
static int ptw_walk__psb(void *ctx, int64_t offset, uint64_t first)
{
	struct ptw_walk *w = ctx, whole = *w;
	uint64_t at = offset >= 0 ? (uint64_t)offset : first;
	int err;

	if (offset < 0 && first == w->len)
		return -AUXSAMPLE_ERR_NOSYNC;
	if (!ptw_walk__skim(w, at, w->len))
		return ptw_walk__from(w, at);
	err = ptw_walk__from(w, at);
	if (ptw_walk__skimmed(w) || err) {
		auxsample__stats(w->dec)->pt_skims++;
		return err;
	}
	auxsample__restart(w->dec);
	*w = whole;
	err = ptw_walk__from(w, at);
	auxsample__stats(w->dec)->pt_skims++;
	auxsample__stats(w->dec)->pt_skims_lost++;
	return err;
}

/* pt.c's decode, walking: 0, -AUXSAMPLE_ERR_NOSYNC or PTW_FALLBACK. */
static int ptw_decoder__walk(struct ptw_decoder *wd, const uint8_t *buf, size_t len)
{
	struct ptw_walk w = {
		.wd = wd, .dec = wd->dec, .stats = auxsample__stats(wd->dec),
		.blocks = wd->blocks, .buf = buf, .len = len,
		.timed = wd->config->pt.cyc, .stop_at = UINT64_MAX, .skim_at = UINT64_MAX,
	};

	return pt_sync__decode(wd->dec, wd->config, buf, len, ptw_walk__psb, &w);
}

/*
 * The image's shared blocks, once and whenever the image has changed
 * (pt-image.c may have made them since): a reference; and the extents of
 * its files' code, less the ranges said to have changed in it or a
 * clone of it.  The blocks' generation is read first: a change through a
 * clone (under the clone's lock) records its ranges before it moves the
 * generation (pt_image_cache__invalidate()), so one that the extents
 * miss is seen at the next decode.
 */
static void ptw_decoder__attach(struct ptw_decoder *wd, struct auxsample_image *image)
{
	struct ptw_blocks *blocks = wd->blocks;
	struct ptw_block_cache *shared = NULL;
	unsigned int generation;
	void *cache;

	cache = auxsample_image__lock_cache(image, &auxsample_pt_backend, &generation);
	if (cache)
		shared = pt_image_cache__blocks(cache);
	ptw_block_cache__put(blocks->shared);
	blocks->shared = shared;
	blocks->shared_seen = shared ? ptw_block_cache__generation(shared) : 0;
	/* Without memory for the extents, the image's cache holds files' blocks too. */
	if (!cache || pt_image_cache__files(cache, blocks))
		ptw_blocks__set_files(blocks, NULL, NULL, 0);
	auxsample_image__unlock(image);
	wd->image_generation = generation;
	wd->attached = true;
}

/* No image (auxsample_decoder__set_image(NULL)): all code is the decoder's own. */
static void ptw_decoder__detach(struct ptw_decoder *wd)
{
	ptw_block_cache__put(wd->blocks->shared);
	wd->blocks->shared = NULL;
	wd->blocks->shared_seen = 0;
	ptw_blocks__set_files(wd->blocks, NULL, NULL, 0);
	wd->attached = false;
}

/*
 * Before a decode: the decoder's own blocks grow if they are too few for
 * the code in use.  The code may have changed with the image's files, or
 * blocks of the image's cache were dropped (the code changed in it or a
 * clone of it, which the extents must say), or the decoder moved to
 * another image: it takes them again, and forgets its copies.
 */
void ptw_decoder__update(struct ptw_decoder *wd)
{
	struct auxsample_image *image = wd->config->image;
	struct ptw_block_cache *shared = wd->blocks->shared;
	bool moved = wd->moved;
	/* Before the first decode, nothing to forget (a new decoder a process, many). */
	bool first = !wd->attached && !moved;

	wd->moved = false;
	ptw_blocks__grow(wd->blocks);
	/* Moved to no image: detached already (ptw_decoder__image_moved()). */
	if (!image) {
		if (moved)
			ptw_blocks__clear(wd->blocks);
		return;
	}
	if (first || moved || auxsample_image__generation(image) != wd->image_generation ||
	    (shared && ptw_block_cache__generation(shared) != wd->blocks->shared_seen)) {
		ptw_decoder__attach(wd, image);
		if (!first)
			ptw_blocks__clear(wd->blocks);
	}
}

/* Counted at the end: a decode restarts (an earlier PSB, libipt) with its stats. */
void ptw_decoder__count_blocks(struct ptw_decoder *wd)
{
	auxsample__stats(wd->dec)->pt_blocks_built += wd->blocks->built;
	auxsample__stats(wd->dec)->pt_blocks_evicted += wd->blocks->evicted;
	wd->blocks->built = 0;
	wd->blocks->evicted = 0;
}

static int ptw_decoder__decode(void *priv, const uint8_t *buf, size_t len)
{
	struct ptw_decoder *wd = priv;
	int err = PTW_FALLBACK;

	/*
	 * Flow records are libipt's only.  The late-sample rule is the
	 * walker's too: it tells the core the trace's boundaries as pt.c
	 * does, and pt.c's look past a lost stretch follows an error, which
	 * the walker hands to libipt.
	 */
	if (len && !wd->config->flow) {
		ptw_decoder__update(wd);
		err = ptw_decoder__walk(wd, buf, len);
	}
	if (err <= 0)
		goto out;
	auxsample__restart(wd->dec);
	err = auxsample_pt_backend.decode(wd->libipt, buf, len);
	if (len)
		auxsample__stats(wd->dec)->pt_fallbacks++;
out:
	ptw_decoder__count_blocks(wd);
	return err;
}

static int ptw_decoder__init(struct auxsample_decoder *dec,
			     const struct auxsample_config *config, void **priv)
{
	struct ptw_decoder *wd = calloc(1, sizeof(*wd));
	int err = -AUXSAMPLE_ERR_NOMEM;

	if (!wd)
		return err;
	wd->dec = dec;
	wd->config = config;
	wd->blocks = ptw_blocks__new();
	if (!wd->blocks)
		goto out_free;
	err = auxsample_pt_backend.init(dec, config, &wd->libipt);
	if (err)
		goto out_free;
	*priv = wd;
	return 0;

out_free:
	ptw_blocks__delete(wd->blocks);
	free(wd);
	return err;
}

static void ptw_decoder__exit(void *priv)
{
	struct ptw_decoder *wd = priv;

	ptw_stream__end(wd);
	auxsample_pt_backend.exit(wd->libipt);
	ptw_blocks__delete(wd->blocks);
	free(wd);
}

/*
 * The old image's blocks and extents go now; the next update forgets the
 * decoder's own copies and takes the new image's (ptw_decoder__update()).
 */
static void ptw_decoder__image_moved(void *priv)
{
	struct ptw_decoder *wd = priv;

	wd->moved = true;
	ptw_decoder__detach(wd);
	auxsample_pt_backend.image_moved(wd->libipt);
}

/* Not in auxsample_backends[]: chosen by config.pt_decoder, using pt.c's image cache. */
const struct auxsample_backend auxsample_pt_walk_backend = {
	.name		= "Intel PT (walker)",
	.type		= AUXSAMPLE_TRACE_INTEL_PT,
	.init		= ptw_decoder__init,
	.exit		= ptw_decoder__exit,
	.decode		= ptw_decoder__decode,
	.stream_begin	= ptw_stream__begin,
	.stream_to	= ptw_stream__to,
	.stream_end	= ptw_stream__end,
	.image_moved	= ptw_decoder__image_moved,
};
