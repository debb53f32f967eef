// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The skim loop's walks of a TNT packet's bits (pt-walk-memo.h), built
 * the way the loop (pt-walk-skim-fast.c) walks them, block by block, and
 * kept in a table of the decoder's, forgotten with its blocks.  A walk
 * holds addresses, not blocks: it stays true while the code is as it
 * was, whichever blocks keep their slots.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "backend.h"
#include "pt-blocks.h"
#include "pt-walk.h"
#include "pt-walk-memo.h"
#include "x86-branch.h"

void ptw_memo__clear(struct ptw_blocks *blocks)
{
	if (blocks->memo)
		memset(blocks->memo, 0, sizeof(*blocks->memo) << blocks->memo_shift);
}

void ptw_memo__grow(struct ptw_blocks *blocks)
{
	if (!blocks->memo || blocks->memo_shift >= PTW_MEMO_SHIFT ||
	    blocks->memo_evicted < 1ULL << blocks->memo_shift)
		return;
	/* Allocated again when first used: walks are only a cache. */
	free(blocks->memo);
	blocks->memo = NULL;
	blocks->memo_shift++;
	blocks->memo_evicted = 0;
}

/*
 * The block @b walked in @m: false, @m as it was (but for
 * @m->ret_short), where the skim loop would do more with it than @m can
 * keep.  @m->to is where it goes; the loop's tests of the trace and the
 * blocks are the caller's.
 */
static bool ptw_memo__walk(struct ptw_memo *m, const struct ptw_walk *w,
			   const struct ptw_block *b, unsigned int *tnt)
{
	uint64_t next = b->end + b->length;

	switch (b->cls) {
	case X86_BR_COND:
		m->to = *tnt & 1 ? b->target : next;
		*tnt >>= 1;
		m->pending = m->to == next ? PTW_SKIM_NONE : PTW_SKIM_TAKEN;
		return true;
	case X86_BR_RET:
		if (!(*tnt & 1))
			return false;		/* not compressed: the loop stops */
		if (m->pushes) {
			m->to = m->push[--m->pushes];
		} else {
			/* Refused for the stack as it is now: ptw_memo.ret_short. */
			m->ret_short = m->pops >= w->nr_rets;
			if (m->pops == PTW_MEMO_POPS || m->ret_short)
				return false;
			m->to = ptw_walk__ret_at(w, m->pops);
			m->expect[m->pops++] = m->to;
		}
		*tnt >>= 1;
		m->pending = PTW_SKIM_RET;
		return true;
	case X86_BR_JUMP:
	case X86_BR_CALL:
		if (b->cls == X86_BR_CALL && b->target != next) {
			if (m->pushes == PTW_MEMO_PUSHES)
				return false;
			m->push[m->pushes++] = next;
			if (m->pushes > m->depth)
				m->depth = m->pushes;
			m->pending = PTW_SKIM_CALL;
		} else {
			m->pending = PTW_SKIM_TAKEN;
		}
		m->to = b->target;
		return true;
	default:
		return false;			/* a TIP's */
	}
}

/*
 * The walk of @tnt's bits from @ip, the first block's included: up to
 * where they are used up, before a block it cannot take, or
 * PTW_MEMO_BLOCKS blocks (a loop of direct jumps uses no bits).
 */
static void ptw_memo__fill(struct ptw_memo *m, const struct ptw_walk *w, uint64_t ip,
			   unsigned int tnt)
{
	const struct ptw_blocks *blocks = w->blocks;
	const struct ptw_block *pb = NULL;
	/* the returns to frames of before, before the last block */
	unsigned int pops = 0;

	*m = (struct ptw_memo){ .ip = ip, .tnt = tnt, .to = ip, .read_at = PTW_MEMO_BLOCKS };
	for (unsigned int i = 0; i < PTW_MEMO_BLOCKS && tnt != 1; i++) {
		const struct ptw_block *b = &blocks->slots[ptw_blocks__index(blocks->mask, m->to)];
		enum ptw_skim_pending pending = m->pending;
		unsigned int was = m->pops;
		uint64_t at = m->to;

		if (b->start != at || !b->valid) {
			m->unbuilt = true;
			break;
		}
		/* It changes nothing where it cannot take the block. */
		if (!ptw_memo__walk(m, w, b, &tnt))
			break;
		pops = was;
		/* The last block's branch resolved, as the loop does at this one. */
		if (pb && pending != PTW_SKIM_NONE) {
			m->taken++;
			m->last_from = pb->end;
			m->last_to = at;
		}
		if (tnt != m->tnt && m->read_at == PTW_MEMO_BLOCKS)
			m->read_at = m->blocks;
		pb = b;
		m->blocks++;
		m->insns += b->ninsn;
	}
	if (!pb)
		return;
	m->end = pb->end;
	m->cls = pb->cls;
	m->length = pb->length;
	m->left = tnt;
	/*
	 * The loop's call stack has the last branch's operation still to
	 * come, when it is resolved: the call's frame pushed, the return's
	 * popped, the frame of before or the one the walk pushed (still in
	 * @push, above the others).
	 */
	m->run_pops = m->pops;
	m->run_pushes = m->pushes;
	if (m->pending == PTW_SKIM_CALL)
		m->run_pushes--;
	else if (m->pending == PTW_SKIM_RET && m->pops > pops)
		m->run_pops--;
	else if (m->pending == PTW_SKIM_RET)
		m->run_pushes++;
}

/*
 * A walk takes two cache lines, the key and the checks of a lookup in
 * the first: a set's ways that do not hold cost a line each, not two.
 * Lookups missed L1 twice each where the key spanned both (callgrind's
 * cache model on the medium bench file: 1.7M misses, two thirds of the
 * decode's).
 */
_Static_assert(sizeof(struct ptw_memo) == 2 * PTW_MEMO_ALIGN, "a walk is two cache lines");
_Static_assert(offsetof(struct ptw_memo, end) < PTW_MEMO_ALIGN, "a lookup reads one");

static struct ptw_memo *ptw_memo__table(struct ptw_blocks *blocks)
{
	size_t size = sizeof(*blocks->memo) << blocks->memo_shift;
	void *memo;

	if (!blocks->memo && !posix_memalign(&memo, PTW_MEMO_ALIGN, size)) {
		memset(memo, 0, size);
		blocks->memo = memo;
	}
	return blocks->memo;
}

struct ptw_memo *ptw_memo__build(const struct ptw_walk *w, uint64_t ip, unsigned int tnt,
				 struct ptw_memo *old)
{
	struct ptw_memo *memo = ptw_memo__table(w->blocks), *m;

	/* No bits (a TNT-8 holds one at least), or more than a key holds. */
	if (!memo || tnt < 2 || tnt > UINT8_MAX)
		return NULL;
	if (old) {
		m = old;
	} else {
		m = ptw_memo__set(memo, w->blocks->memo_shift, ip, tnt);
		if (m[PTW_MEMO_WAYS - 1].tnt)
			w->blocks->memo_evicted++;
		for (unsigned int i = PTW_MEMO_WAYS - 1; i; i--)
			m[i] = m[i - 1];
	}
	ptw_memo__fill(m, w, ip, tnt);
	return m;
}
