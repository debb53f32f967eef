// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Intel PT walker's skim loop: skimming (pt-walk-skim.c), most of a
 * snippet's blocks are walked for the call stack, the return compression
 * stack and the counts alone, and this loop walks them with only that to
 * do.  It takes what ptw_walk__fast() (pt-walk.c) takes, the same way,
 * and stops before anything else: ptw_walk__fast() goes on from there.
 * What it saves (callgrind, perf auxsample script on the sparse bench
 * file, bench/README.md): a skimmed block took some 120 instructions in
 * ptw_walk__fast(), a fifth of them the call stack's calls into the core;
 * here about 90, the call stack's operations mostly kept in the loop.
 */
#include "backend.h"
#include "pt-blocks.h"
#include "pt-parse.h"
#include "pt-walk.h"
#include "pt-walk-memo.h"
#include "x86-branch.h"

/*
 * What a skimmed run of blocks gives the core (ptw_walk__skim_fast()):
 * the taken branches counted, the last of them, the instructions, and the
 * call stack's operations, kept apart from the core's stack (a call of
 * auxsample__call() or auxsample__ret() for each cost the loop its
 * registers): the return addresses of the calls made and not yet returned
 * from, and the returns to frames of before, given to the core at once.
 * A return to a frame not on top (a longjmp ...) goes to the core as it
 * is.  In memory, on purpose: the loop keeps its registers for the walk.
 */
#ifndef PTW_SKIM_FRAMES
#define PTW_SKIM_FRAMES		64	/* -DPTW_SKIM_FRAMES=2 tests the flushes */
#endif

struct ptw_skim_branch {
	uint64_t			from;
	uint64_t			to;
};

struct ptw_skim_run {
	uint64_t			n;
	/*
	 * [1]: the last branch counted, from and to; [0]
	 * the last not taken, written so as not to branch on the bit.
	 */
	struct ptw_skim_branch		last[2];
	uint64_t			insns;
	unsigned int			nr_frames;
	unsigned int			nr_rets;
	uint64_t			frames[PTW_SKIM_FRAMES];
	uint64_t			rets[PTW_SKIM_FRAMES];
};

/*
 * The call stack's operations to the core: a return to an earlier frame
 * comes only when no frame of the run is left, so all of them come before
 * all the frames.
 */
static noinline void ptw_skim_run__flush(struct ptw_skim_run *run, struct ptw_walk *w)
{
	for (unsigned int i = 0; i < run->nr_rets; i++)
		auxsample__ret(w->dec, run->rets[i]);
	for (unsigned int i = 0; i < run->nr_frames; i++) {
		if (auxsample__call(w->dec, run->frames[i]))
			w->nomem = true;
	}
	run->nr_rets = 0;
	run->nr_frames = 0;
}

static inline void ptw_skim_run__call(struct ptw_skim_run *run, struct ptw_walk *w,
				      uint64_t ret)
{
	if (run->nr_frames == PTW_SKIM_FRAMES)
		ptw_skim_run__flush(run, w);
	run->frames[run->nr_frames++] = ret;
}

static inline void ptw_skim_run__ret(struct ptw_skim_run *run, struct ptw_walk *w,
				     uint64_t to)
{
	if (run->nr_frames && run->frames[run->nr_frames - 1] == to) {
		run->nr_frames--;
	} else if (run->nr_frames) {
		ptw_skim_run__flush(run, w);
		auxsample__ret(w->dec, to);
	} else {
		if (run->nr_rets == PTW_SKIM_FRAMES)
			ptw_skim_run__flush(run, w);
		run->rets[run->nr_rets++] = to;
	}
}

/*
 * A TNT-8's payload (the byte shifted right once: a stop bit, then the
 * bits, the first branch's highest) with the bits in the order the
 * branches take them, lowest first, under the stop bit: the skim loop
 * takes a bit with a mask and a shift, and has none left at 1.
 */
static const uint8_t ptw_tnt8_lsb[128] = {
	0x00, 0x00, 0x02, 0x03, 0x04, 0x06, 0x05, 0x07,
	0x08, 0x0c, 0x0a, 0x0e, 0x09, 0x0d, 0x0b, 0x0f,
	0x10, 0x18, 0x14, 0x1c, 0x12, 0x1a, 0x16, 0x1e,
	0x11, 0x19, 0x15, 0x1d, 0x13, 0x1b, 0x17, 0x1f,
	0x20, 0x30, 0x28, 0x38, 0x24, 0x34, 0x2c, 0x3c,
	0x22, 0x32, 0x2a, 0x3a, 0x26, 0x36, 0x2e, 0x3e,
	0x21, 0x31, 0x29, 0x39, 0x25, 0x35, 0x2d, 0x3d,
	0x23, 0x33, 0x2b, 0x3b, 0x27, 0x37, 0x2f, 0x3f,
	0x40, 0x60, 0x50, 0x70, 0x48, 0x68, 0x58, 0x78,
	0x44, 0x64, 0x54, 0x74, 0x4c, 0x6c, 0x5c, 0x7c,
	0x42, 0x62, 0x52, 0x72, 0x4a, 0x6a, 0x5a, 0x7a,
	0x46, 0x66, 0x56, 0x76, 0x4e, 0x6e, 0x5e, 0x7e,
	0x41, 0x61, 0x51, 0x71, 0x49, 0x69, 0x59, 0x79,
	0x45, 0x65, 0x55, 0x75, 0x4d, 0x6d, 0x5d, 0x7d,
	0x43, 0x63, 0x53, 0x73, 0x4b, 0x6b, 0x5b, 0x7b,
	0x47, 0x67, 0x57, 0x77, 0x4f, 0x6f, 0x5f, 0x7f,
};

/* The walk's @nr_bits bits of @tnt (the next the highest) the other way round. */
static uint64_t ptw_tnt__reverse(uint64_t tnt, unsigned int nr_bits)
{
	uint64_t r = 0;

	for (unsigned int i = 0; i < nr_bits; i++)
		r |= ((tnt >> i) & 1) << (nr_bits - 1 - i);
	return r;
}

/* What a branch of class @cls, ending at @next, to @to, does when resolved. */
static enum ptw_skim_pending ptw_skim__pending(unsigned int cls, uint64_t next, uint64_t to)
{
	if (cls == X86_BR_COND && to == next)
		return PTW_SKIM_NONE;
	if ((cls == X86_BR_CALL || cls == X86_BR_IND_CALL) && to != next)
		return PTW_SKIM_CALL;
	return cls == X86_BR_RET ? PTW_SKIM_RET : PTW_SKIM_TAKEN;
}

/* The branch of @pb, @pending, resolved: it went to @to, the block walked now. */
static inline void ptw_skim_run__resolve(struct ptw_skim_run *run, struct ptw_walk *w,
					 enum ptw_skim_pending pending,
					 const struct ptw_block *pb, uint64_t to)
{
	struct ptw_skim_branch *last = &run->last[pending != PTW_SKIM_NONE];

	run->n += pending != PTW_SKIM_NONE;
	last->from = pb->end;
	last->to = to;
	if (pending == PTW_SKIM_CALL)
		ptw_skim_run__call(run, w, pb->end + pb->length);
	else if (pending == PTW_SKIM_RET)
		ptw_skim_run__ret(run, w, to);
}

/*
 * No TNT bit held: whether a TNT-8 is next at *@p, the CYC and MTC
 * before it skipped after a TMA (as ptw_walk__fast() skips them, even
 * where it then stops).  With CYC, most TNTs come after one CYC of two
 * bytes: taken first, it takes some 40% off what skipping costs
 * (callgrind on the sparse bench file).
 */
static inline bool ptw_skim__at_tnt8(struct ptw_walk *w, const uint8_t **p,
				     const uint8_t *end)
{
	const uint8_t *at = *p;

	if (ptw_is_tnt8(at, end - at))
		return true;
	if (!w->tma)
		return false;
	/* A byte after the CYC tested first: ptw_is_tnt8()'s own test cost more (callgrind). */
	if (end - at > 2 && ptw_is_cyc2(at, end - at) && ptw_is_tnt8(at + 2, 1)) {
		*p = at + 2;
		return true;
	}
	*p = at + ptw_timing_run(at, end - at);
	return ptw_is_tnt8(*p, end - *p);
}

/* Whether @m is the walk of @tnt's bits from @ip, with @w's return compression stack. */
static inline bool ptw_memo__holds(const struct ptw_memo *m, const struct ptw_walk *w,
				   uint64_t ip, unsigned int tnt)
{
	if (m->ip != ip || m->tnt != tnt || m->pops > w->nr_rets)
		return false;
	/* Its returns go where the return compression stack says now. */
	for (unsigned int i = 0; i < m->pops; i++) {
		if (ptw_walk__ret_at(w, i) != m->expect[i])
			return false;
	}
	return true;
}

/*
 * The walk of the TNT bits @tnt held, from @ip (pt-walk-memo.h): kept,
 * or built now, where it holds for @w's stacks and @run's.  NULL where
 * the loop is to walk the blocks itself.
 */
static inline const struct ptw_memo *ptw_skim__memo(struct ptw_walk *w,
						    const struct ptw_skim_run *run,
						    uint64_t ip, unsigned int tnt)
{
	struct ptw_memo *memo = w->blocks->memo;
	struct ptw_memo *m = memo ? ptw_memo__set(memo, w->blocks->memo_shift, ip, tnt) : NULL;
	struct ptw_memo *old = NULL;
	unsigned int i;

	if (likely(m && ptw_memo__holds(m, w, ip, tnt)))
		goto found;
	for (i = 1; m && i < PTW_MEMO_WAYS; i++) {
		if (ptw_memo__holds(m + i, w, ip, tnt)) {
			m += i;
			goto found;
		}
	}
	goto build;
found:
	/*
	 * It stopped where no block was built yet, or at a return with no
	 * frame yet: now there is one, it goes further, built again in place.
	 */
	if (unlikely(m->unbuilt)) {
		const struct ptw_block *b = ptw_blocks__slot(w->blocks, m->to);

		if (b->valid && b->start == m->to)
			old = m;
	} else if (unlikely(m->ret_short) && w->nr_rets > m->pops) {
		old = m;
	}
	if (!old)
		goto fits;
build:
	m = ptw_memo__build(w, ip, tnt, old);
	if (!m)
		return NULL;
fits:
	/*
	 * The calls it returns from must drop nothing from either stack
	 * and flush nothing (one more frame: the pending branch's, resolved
	 * before it), or the stacks would not end as the loop leaves them.
	 */
	if (!m->blocks || w->nr_rets + m->depth > PTW_RETS ||
	    run->nr_frames + m->depth >= PTW_SKIM_FRAMES)
		return NULL;
	return m;
}

/*
 * @m's walk taken into @w and @run, as the loop would have walked it.
 * Their stacks have room for its calls (ptw_skim__memo()): pushed
 * without the tests of ptw_walk__push() and ptw_skim_run__call().
 */
static inline void ptw_skim_run__memo(struct ptw_skim_run *run, struct ptw_walk *w,
				      const struct ptw_memo *m)
{
	unsigned int top = (w->ret_top + PTW_RETS - m->pops) % PTW_RETS;

	for (unsigned int i = 0; i < m->pushes; i++)
		w->rets[(top + i) % PTW_RETS] = m->push[i];
	w->ret_top = (top + m->pushes) % PTW_RETS;
	w->nr_rets += m->pushes - m->pops;
	for (unsigned int i = 0; i < m->run_pops; i++)
		ptw_skim_run__ret(run, w, m->expect[i]);
	for (unsigned int i = 0; i < m->run_pushes; i++)
		run->frames[run->nr_frames++] = m->push[i];
	if (m->taken) {
		run->n += m->taken;
		run->last[1].from = m->last_from;
		run->last[1].to = m->last_to;
	}
	run->insns += m->insns;
}

/*
 * ptw_walk__fast() stops before a block walked PTW_MAX_LOOPS blocks
 * after the trace was last read, and so must this loop, but it tests only
 * before direct jumps and calls, the only blocks that neither read the
 * trace nor take a TNT bit held: the others read it or take one of at
 * most PTW_TNT64_BITS, so that (with one more for the block after the
 * jump) it never walks a block ptw_walk__fast() would not.  It stops
 * sooner where it may: ptw_walk__fast() takes over.
 */
static inline bool ptw_skim__stuck(unsigned int no_progress)
{
	return no_progress + PTW_TNT64_BITS + 2 >= PTW_MAX_LOOPS;
}

/*
 * ptw_walk__fast()'s blocks again, skimming: what it does with them
 * there, and no more (no timing, no ring, no TIP.PGD and TIP.PGE, no
 * packet peeked before), with its state in fewer registers: the TNT bits
 * lowest first under a stop bit, the position a pointer, the pending
 * branch a block and what its resolution is to do, decided when its
 * target is known, the counts in memory (struct ptw_skim_run).  One case
 * a class of branch, each doing only its own: with the tests shared by
 * all, a skimmed block took 90 instructions, now 77 (callgrind on the
 * sparse bench file, bench/README.md).  It stops where ptw_walk__fast()
 * would do more than this, having changed nothing for that block but the
 * timing packets skipped: ptw_walk__fast() takes it, as it would have.
 */
bool ptw_walk__skim_fast(struct ptw_walk *w)
{
	struct ptw_block *slots = w->blocks->slots;
	uint64_t mask = w->blocks->mask;
	const uint8_t *p = w->buf + w->pos, *end = w->buf + w->len;
	/* ptw_walk__fast() goes on past the end with the bits it holds */
	const uint8_t *stop = w->buf + (w->skim_at < w->len ? w->skim_at : w->len);
	uint64_t ip = w->ip;
	uint64_t tnt = ptw_tnt__reverse(w->tnt, w->nr_bits) | 1ULL << w->nr_bits;
	unsigned int no_progress = w->no_progress;
	/* w's pending branch, as a block: the first block walked resolves it */
	struct ptw_block own = {
		.end = w->from, .length = w->length, .cls = w->cls,
	};
	const struct ptw_block *pb = &own;
	/* the last block of a memo walk taken, the pending branch's */
	struct ptw_block tail;
	bool memo = true;
	enum ptw_skim_pending pending = PTW_SKIM_NONE;
	struct ptw_skim_run run;
	bool at_point = false;

	run.n = 0;
	run.insns = 0;
	run.nr_frames = 0;
	run.nr_rets = 0;
	if (w->pending)
		pending = ptw_skim__pending(w->cls, w->from + w->length, ip);
	if (ptw_skim__stuck(no_progress))
		goto out;
	for (;;) {
		const struct ptw_block *b = &slots[ptw_blocks__index(mask, ip)];
		const struct ptw_memo *m;
		uint64_t next, to, t;
		unsigned int tip, since;
		bool read = false;

		if (unlikely(b->start != ip || !b->valid))
			break;
		if (unlikely(p >= stop)) {
			at_point = true;
			break;
		}
		next = b->end + b->length;
		/* A conditional branch's bits read first: a kept walk may take them. */
		if (tnt == 1 && b->cls == X86_BR_COND) {
			if (!ptw_skim__at_tnt8(w, &p, end))
				goto out;
			tnt = ptw_tnt8_lsb[*p++ >> 1];
			w->tnt_full = tnt >= 1 << PTW_TNT8_BITS;
			read = true;
		} else if (tnt == 1 && b->cls == X86_BR_RET && ptw_skim__at_tnt8(w, &p, end)) {
			t = ptw_tnt8_lsb[*p >> 1];
			/* A RET not taken, or not compressed: not here. */
			if (!(t & 1) || !w->nr_rets)
				goto out;
			p++;
			w->tnt_full = t >= 1 << PTW_TNT8_BITS;
			tnt = t;
			read = true;
		} else if (tnt == 1 && (b->cls == X86_BR_JUMP || b->cls == X86_BR_CALL) &&
			   ptw_skim__at_tnt8(w, &p, end) && p + 1 < stop) {
			/*
			 * A direct jump or call before the TNT a later block
			 * reads (the timing before it skipped, as the case
			 * below skips it): a kept walk from here that takes
			 * its bits reads it where the loop would.
			 */
			unsigned int bits = ptw_tnt8_lsb[*p >> 1];

			m = ptw_skim__memo(w, &run, ip, bits);
			if (m && m->read_at < m->blocks && !ptw_skim__stuck(no_progress + m->blocks)) {
				p++;
				w->tnt_full = bits >= 1 << PTW_TNT8_BITS;
				since = m->blocks - 1u - m->read_at;
				goto take;
			}
		}
		/*
		 * The walk of the bits held, kept: where the loop would walk
		 * all its blocks, having read nothing more (before the next
		 * packet), and gone on to the point.  Not again right after
		 * one that stopped with bits left: the block there is one it
		 * could not take.
		 */
		if (memo && tnt != 1 && tnt <= UINT8_MAX && p < stop) {
			m = ptw_skim__memo(w, &run, ip, tnt);
			if (m && !ptw_skim__stuck(no_progress + m->blocks)) {
				since = read ? m->blocks - 1u : no_progress + m->blocks;
				goto take;
			}
		}
		memo = true;
		/* The packet of the branch, as ptw_walk__fast() takes it. */
		switch (b->cls) {
		case X86_BR_COND:
			ptw_skim_run__resolve(&run, w, pending, pb, ip);
			/*
			 * Without a branch: the bit is the traced program's,
			 * which this loop's branches predict badly.
			 */
			ip = tnt & 1 ? b->target : next;
			tnt >>= 1;
			pending = ip == next ? PTW_SKIM_NONE : PTW_SKIM_TAKEN;
			break;
		case X86_BR_RET:
			/* No TNT read above: not compressed. */
			if (tnt == 1)
				goto tip;
			/* A RET not taken, or not compressed: not here. */
			if (!(tnt & 1) || !w->nr_rets)
				goto out;
			tnt >>= 1;
			ptw_skim_run__resolve(&run, w, pending, pb, ip);
			ptw_walk__pop(w, &ip);
			pending = PTW_SKIM_RET;
			break;
		case X86_BR_JUMP:
		case X86_BR_CALL:
			/* Nothing to read; where the trace is read next, a flow packet. */
			if (tnt == 1 && !ptw_skim__at_tnt8(w, &p, end) &&
			    !ptw_is_tip_or_pgd(p, end - p))
				goto out;
			if (unlikely(ptw_skim__stuck(no_progress)))
				goto out;
			ptw_skim_run__resolve(&run, w, pending, pb, ip);
			ip = b->target;
			pending = PTW_SKIM_TAKEN;
			if (b->cls == X86_BR_CALL && ip != next) {
				ptw_walk__push(w, next);
				pending = PTW_SKIM_CALL;
			}
			break;
		default:
			/* Indirect and far branches: a TIP, TNT bits there an error. */
			if (tnt != 1 || ptw_skim__at_tnt8(w, &p, end))
				goto out;
tip:
			if (p == end || (*p & 0x1f) != 0x0d)
				goto out;
			tip = ptw_tip_ip(p, end - p, w->last_ip, &to);
			if (!tip)
				goto out;
			ptw_skim_run__resolve(&run, w, pending, pb, ip);
			p += tip;
			w->last_ip = to;
			read = true;
			if (b->cls == X86_BR_IND_CALL)
				ptw_walk__push(w, next);
			ip = to;
			pending = ptw_skim__pending(b->cls, next, to);
			break;
		}
		/* The block is walked. */
		pb = b;
		run.insns += b->ninsn;
		/* Reading the trace is progress (ptw_walk__expect()). */
		no_progress = read ? 0 : no_progress + 1;
		continue;
take:
		/* The kept walk @m, its blocks walked since the trace was read @since. */
		ptw_skim_run__resolve(&run, w, pending, pb, ip);
		ptw_skim_run__memo(&run, w, m);
		tail.end = m->end;
		tail.length = m->length;
		tail.cls = m->cls;
		pb = &tail;
		ip = m->to;
		tnt = m->left;
		pending = m->pending;
		no_progress = since;
		memo = tnt == 1;
	}
out:
	if (pb != &own) {
		w->pending = true;
		w->from = pb->end;
		w->cls = pb->cls;
		w->length = pb->length;
	}
	w->pos = p - w->buf;
	w->ip = ip;
	w->nr_bits = 63 - __builtin_clzll(tnt);
	w->tnt = ptw_tnt__reverse(tnt, w->nr_bits);
	w->no_progress = no_progress;
	if (run.nr_frames || run.nr_rets)
		ptw_skim_run__flush(&run, w);
	ptw_walk__insns(w, run.insns);
	if (run.n)
		auxsample__skim_taken(w->dec, run.n, run.last[1].from, run.last[1].to);
	return at_point;
}
