// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libauxsample: a decoder's state saved, for a backend to go back to.
 * The Intel PT walker skims a stream's stretch with a snippet's margin
 * (pt-walk-skim.c); where that turns out short, it walks the stretch
 * again, whole, from the state it began with, as a snippet is decoded
 * again from its start.  Everything a walk changes is saved: the ring,
 * the call stack, the timing's branches waiting for a time, the
 * late-sample rule's (but for its undo records: none may wait), the
 * errors and the statistics.  The arrays are copied into buffers kept
 * from one save to the next; the decoder's own only grow, so they hold
 * what is copied back.
 */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

struct auxsample_checkpoint {
	struct auxsample_decoder	dec;	/* its arrays: those below */
	struct auxsample_branch		*ring;
	size_t				ring_cap;
	uint64_t			*stack;
	size_t				stack_cap;
	struct auxsample_untimed	*untimed;
	size_t				untimed_cap;
	struct auxsample_branch		*pending;
	size_t				pending_cap;
};

struct auxsample_checkpoint *auxsample_checkpoint__new(void)
{
	return calloc(1, sizeof(struct auxsample_checkpoint));
}

void auxsample_checkpoint__delete(struct auxsample_checkpoint *cp)
{
	if (!cp)
		return;
	free(cp->ring);
	free(cp->stack);
	free(cp->untimed);
	free(cp->pending);
	free(cp);
}

/* @n items of @size from @from to @to (either NULL where there are none). */
static void checkpoint__put(void *to, const void *from, size_t n, size_t size)
{
	if (n)
		memcpy(to, from, n * size);
}

/* @n items of @size from @from into *@to, grown to hold them: whether it could. */
static bool checkpoint__copy(void **to, size_t *cap, const void *from, size_t n, size_t size)
{
	if (n > *cap) {
		void *p = realloc(*to, n * size);

		if (!p)
			return false;
		*to = p;
		*cap = n;
	}
	checkpoint__put(*to, from, n, size);
	return true;
}

/* The entries of the ring in use: a skim holds its depth apart. */
static size_t checkpoint__ring(const struct auxsample_decoder *dec)
{
	return dec->max > dec->skim.held ? dec->max : dec->skim.held;
}

int auxsample__save(struct auxsample_decoder *dec, struct auxsample_checkpoint *cp)
{
	/*
	 * The late-sample rule's undo records read the stack above its
	 * depth (late.c), which is not saved: it holds none in a stream.
	 */
	if (dec->late.nr_ops)
		return -AUXSAMPLE_ERR_UNSUPPORTED;
	if (!checkpoint__copy((void **)&cp->ring, &cp->ring_cap, dec->ring,
			      checkpoint__ring(dec), sizeof(*dec->ring)) ||
	    !checkpoint__copy((void **)&cp->stack, &cp->stack_cap, dec->stack, dec->depth,
			      sizeof(*dec->stack)) ||
	    !checkpoint__copy((void **)&cp->untimed, &cp->untimed_cap, dec->timing.untimed,
			      dec->timing.nr_untimed, sizeof(*dec->timing.untimed)) ||
	    !checkpoint__copy((void **)&cp->pending, &cp->pending_cap, dec->late.pending,
			      dec->late.nr, sizeof(*dec->late.pending)))
		return -AUXSAMPLE_ERR_NOMEM;
	cp->dec = *dec;
	return 0;
}

void auxsample__restore(struct auxsample_decoder *dec, const struct auxsample_checkpoint *cp)
{
	struct auxsample_decoder now = *dec;

	*dec = cp->dec;
	/* The decoder's arrays, as they are now: at least as large. */
	dec->ring = now.ring;
	dec->out = now.out;
	dec->ring_cap = now.ring_cap;
	dec->stack = now.stack;
	dec->chain = now.chain;
	dec->stack_cap = now.stack_cap;
	dec->timing.untimed = now.timing.untimed;
	dec->timing.untimed_cap = now.timing.untimed_cap;
	dec->late.pending = now.late.pending;
	dec->late.cap = now.late.cap;
	dec->late.ops = now.late.ops;
	dec->late.ops_cap = now.late.ops_cap;
	checkpoint__put(dec->ring, cp->ring, checkpoint__ring(dec), sizeof(*dec->ring));
	checkpoint__put(dec->stack, cp->stack, dec->depth, sizeof(*dec->stack));
	checkpoint__put(dec->timing.untimed, cp->untimed, dec->timing.nr_untimed,
			sizeof(*dec->timing.untimed));
	checkpoint__put(dec->late.pending, cp->pending, dec->late.nr, sizeof(*dec->late.pending));
}
