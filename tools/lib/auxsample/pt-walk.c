// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Intel PT walker: a decoder of our own, beside libipt's (pt.c), that
 * walks cached basic blocks (pt-blocks.c) with TNT bits and TIP targets
 * read in place (pt-parse.c), and gives what pt.c gives: the same taken
 * branches, call stack, end IP and statistics.
 *
 * It does only what it is sure to do as libipt does: 64-bit flow, user
 * and kernel alike (SYSCALL, SYSRET and IRET are far branches with a
 * TIP, the kernel's code is read as the user's), PSB+ (pt-walk-peek.c,
 * with the packets between those of the flow), TNT, TIP with IP
 * compression, return compression, TIP.PGD and TIP.PGE, FUP-bound
 * interrupts, OVF (pt-walk-ovf.c); CYC for cycles, timed as pt.c times
 * them (pt-cyc.c, called where pt.c calls it).  Anything else (errors,
 * TSX, PTWRITE, power and VMX packets, other modes, truncated packets,
 * flow records) makes it hand the whole snippet to libipt, which then
 * decodes it as pt.c always does, errors included: counted in
 * stats.pt_fallbacks (pt-walk-decoder.c, the backend's functions).
 * Streams are walked too (pt-walk-stream.c).
 * For the late-sample rule it tells the core where the trace starts and
 * stops (auxsample__boundary()) where pt.c does.
 *
 * Return compression follows the SDM and libipt: a 64-entry stack of
 * the near calls' return addresses (a direct call to the next
 * instruction left out), popped by a compressed RET only, and emptied
 * at a PSB (pt-walk.h).
 */
#include "backend.h"
#include "pt-blocks.h"
#include "pt-cyc.h"
#include "pt-parse.h"
#include "pt-walk.h"
#include "x86-branch.h"

/* The call stack after a taken branch of class @cls, ending at @next, to @to. */
static inline void ptw_walk__stack(struct ptw_walk *w, unsigned int cls, uint64_t next,
				   uint64_t to)
{
	if (cls == X86_BR_CALL || cls == X86_BR_IND_CALL) {
		if (to != next && auxsample__call(w->dec, next))
			w->nomem = true;
	} else if (cls == X86_BR_RET) {
		auxsample__ret(w->dec, to);
	}
}

/*
 * The branch at @from, of class @cls, ending at @next, went to @to:
 * pt.c's pt_flow__resolve(), with the branch and @w->timed given
 * (ptw_walk__fast() keeps @timed in a register).
 */
static inline void ptw_walk__taken(struct ptw_walk *w, bool timed, uint64_t from,
				   unsigned int cls, uint64_t next, uint64_t to, unsigned int flags)
{
	static const unsigned int kinds[] = {
		[X86_BR_COND]		= AUXSAMPLE_BR_COND,
		[X86_BR_JUMP]		= AUXSAMPLE_BR_JUMP,
		[X86_BR_IND_JUMP]	= AUXSAMPLE_BR_IND_JUMP,
		[X86_BR_CALL]		= AUXSAMPLE_BR_CALL,
		[X86_BR_IND_CALL]	= AUXSAMPLE_BR_IND_CALL,
		[X86_BR_RET]		= AUXSAMPLE_BR_RET,
		[X86_BR_FAR]		= AUXSAMPLE_BR_FAR,
	};

	if (timed)
		pt_cyc__branch(&w->cyc, w->dec, cls);
	if (cls == X86_BR_COND && (flags || to == next))
		return;
	auxsample__add_branch(w->dec, from, to, kinds[cls], flags);
	if (!flags)
		ptw_walk__stack(w, cls, next, to);
}

/*
 * Skimming, the taken branches of ptw_walk__fast() are counted there and
 * given to the core at once, before anything else may look at them: the
 * call of auxsample__add_branch() for each was a tenth of a skim.
 */
struct ptw_skimmed {
	uint64_t	n;
	uint64_t	from;	/* the last one */
	uint64_t	to;
};

/* ptw_walk__taken() of the pending branch, skimming: no timing, no ring. */
static inline void ptw_walk__skim_taken(struct ptw_walk *w, struct ptw_skimmed *sk, uint64_t to)
{
	uint64_t from = w->from, next = from + w->length;
	unsigned int cls = w->cls;

	if (cls == X86_BR_COND && to == next)
		return;
	sk->n++;
	sk->from = from;
	sk->to = to;
	ptw_walk__stack(w, cls, next, to);
}

static inline void ptw_walk__skim_flush(struct ptw_walk *w, struct ptw_skimmed *sk)
{
	if (sk->n)
		auxsample__skim_taken(w->dec, sk->n, sk->from, sk->to);
	sk->n = 0;
}

/* The branch that ended the last block went to @to: pt.c's pt_flow__resolve(). */
static inline void ptw_walk__resolve(struct ptw_walk *w, uint64_t to, unsigned int flags)
{
	if (!w->pending)
		return;
	w->pending = false;
	ptw_walk__taken(w, w->timed, w->from, w->cls, w->from + w->length, to, flags);
}

/* An event's packets, for the cycles (pt.c's pt_flow__event_time()). */
static void ptw_walk__event_time(struct ptw_walk *w, enum pt_cyc_event ev)
{
	if (w->timed)
		pt_cyc__event(&w->cyc, w->dec, ev);
}

/* The next packet of the flow is to be of @type: 0 if it is. */
static int ptw_walk__expect(struct ptw_walk *w, enum ptw_type type)
{
	int err = ptw_walk__peek(w);

	if (err || w->eos)
		return err;
	if (w->pkt.type != type)
		return PTW_FALLBACK;
	w->have = false;
	w->no_progress = 0;
	return 0;
}

/*
 * A one-byte TNT next, not peeked yet: the common case, taken here
 * without ptw_parse() (what ptw_walk__expect() would do with it).
 */
static inline bool ptw_walk__at_tnt8(const struct ptw_walk *w)
{
	return !w->have && ptw_is_tnt8(w->buf + w->pos, w->len - w->pos);
}

static inline bool ptw_walk__tnt8(struct ptw_walk *w)
{
	uint8_t b;

	if (!ptw_walk__at_tnt8(w))
		return false;
	b = w->buf[w->pos++];
	w->nr_bits = 31 - __builtin_clz(b >> 1);
	w->tnt = (b >> 1) & ((1U << w->nr_bits) - 1);
	w->tnt_full = w->nr_bits == PTW_TNT8_BITS;
	w->no_progress = 0;
	return true;
}

/* The next TNT bit, in *@taken. */
static inline int ptw_walk__tnt(struct ptw_walk *w, bool *taken)
{
	if (!w->nr_bits && !ptw_walk__tnt8(w)) {
		int err = ptw_walk__expect(w, PTW_TNT);

		if (err || w->eos)
			return err;
		w->tnt = w->pkt.tnt;
		w->nr_bits = w->pkt.nr_bits;
		if (!w->nr_bits)
			return PTW_FALLBACK;
		w->tnt_full = w->nr_bits == (w->pkt.size == 1 ? PTW_TNT8_BITS : PTW_TNT64_BITS);
	}
	w->nr_bits--;
	*taken = (w->tnt >> w->nr_bits) & 1;
	return 0;
}

/* Tracing stopped after the pending branch (TIP.PGD): pt.c's ptev_disabled. */
static void ptw_walk__disabled(struct ptw_walk *w)
{
	/* Reached from a block's branch only: it is pending. */
	uint64_t from = w->from;

	w->have = false;
	w->no_progress = 0;
	if (w->pending) {
		auxsample__stats(w->dec)->end_ip = w->from;
		if (w->pkt.ip_bytes)
			ptw_walk__resolve(w, w->pkt_ip, 0);
		else
			ptw_walk__resolve(w, 0, AUXSAMPLE_BRF_TO_UNKNOWN);
	}
	ptw_walk__event_time(w, PT_CYC_DISABLED);
	auxsample_timing__stop(w->dec);
	auxsample__boundary(w->dec, from, 0);
	w->enabled = false;
	w->stops++;
}

/*
 * An indirect branch, far transfer or uncompressed RET: TIP or TIP.PGD.
 * An uncompressed RET leaves the return stack as it is (ptw_walk__pop()).
 */
static int ptw_walk__tip(struct ptw_walk *w)
{
	int err;

	if (w->nr_bits)
		return PTW_FALLBACK;
	err = ptw_walk__peek(w);
	if (err || w->eos)
		return err;
	if (w->pkt.type == PTW_TIP_PGD) {
		ptw_walk__disabled(w);
		return 0;
	}
	if (w->pkt.type != PTW_TIP)
		return PTW_FALLBACK;
	w->have = false;
	w->no_progress = 0;
	w->ip = w->pkt_ip;
	return 0;
}

/* Where the branch ending @b went, from the trace. */
static inline int ptw_walk__branch(struct ptw_walk *w, const struct ptw_block *b)
{
	uint64_t next = b->end + b->length;
	bool taken;
	int err;

	switch (b->cls) {
	case X86_BR_COND:
		err = ptw_walk__tnt(w, &taken);
		if (!err && !w->eos)
			w->ip = taken ? b->target : next;
		return err;
	case X86_BR_CALL:
	case X86_BR_JUMP:
		if (b->cls == X86_BR_CALL)
			ptw_walk__call(w, b->target, next);
		w->ip = b->target;
		return 0;
	case X86_BR_IND_CALL:
	case X86_BR_IND_JUMP:
	case X86_BR_FAR:
		if (b->cls == X86_BR_IND_CALL)
			ptw_walk__push(w, next);
		return ptw_walk__tip(w);
	case X86_BR_RET:
		/* A TNT next: a compressed RET, taken without a peek. */
		if (!w->nr_bits && !ptw_walk__at_tnt8(w)) {
			err = ptw_walk__peek(w);
			if (err || w->eos)
				return err;
			if (w->pkt.type != PTW_TNT)
				return ptw_walk__tip(w);
		}
		err = ptw_walk__tnt(w, &taken);
		if (err || w->eos)
			return err;
		/* A compressed RET; not taken would be a corrupt trace. */
		if (!taken || !ptw_walk__pop(w, &w->ip))
			return PTW_FALLBACK;
		return 0;
	default:
		return PTW_FALLBACK;
	}
}

/* The block at the walk's IP, as pt.c takes a block of libipt's. */
static int ptw_walk__block(struct ptw_walk *w)
{
	const struct ptw_block *b = ptw_blocks__get(w->blocks, w->dec, w->ip);
	int err;

	if (!b)
		return PTW_FALLBACK;
	if (++w->no_progress >= PTW_MAX_LOOPS)
		return PTW_FALLBACK;
	ptw_walk__resolve(w, w->ip, 0);
	ptw_walk__insns(w, b->ninsn);
	w->pending = true;
	w->from = b->end;
	w->cls = b->cls;
	w->length = b->length;
	err = ptw_walk__branch(w, b);
	/* The trace ended where the branch needed it. */
	if (!err && w->eos && b->cls != X86_BR_JUMP && b->cls != X86_BR_CALL)
		w->ended = true;
	return err;
}

/*
 * A TIP with an IP next, not peeked yet: its size, and its IP in *@to;
 * 0 for anything else, which ptw_walk__peek() then reads.
 */
static inline int ptw_walk__at_tip(const struct ptw_walk *w, uint64_t *to)
{
	if (w->have || w->pos == w->len || (w->buf[w->pos] & 0x1f) != 0x0d)
		return 0;
	return ptw_tip_ip(w->buf + w->pos, w->len - w->pos, w->last_ip, to);
}

/* A TIP or TIP.PGD next, not peeked yet. */
static inline bool ptw_walk__at_tip_or_pgd(const struct ptw_walk *w)
{
	return ptw_is_tip_or_pgd(w->buf + w->pos, w->len - w->pos);
}

/* The same at the walk's position; most often there is none. */
static inline void ptw_walk__skip_timing(struct ptw_walk *w)
{
	uint8_t b;

	if (w->pos == w->len)
		return;
	b = w->buf[w->pos];
	if ((b & 3) == 3 || b == 0x59)
		w->pos += ptw_timing_run(w->buf + w->pos, w->len - w->pos);
}

/*
 * The branch ending @b, the block at @ip, needs a TIP, and the trace
 * has a TIP.PGD and at once a TIP.PGE (a system call or interrupt in
 * user-only trace): what ptw_walk__block() with ptw_walk__tip(), then
 * ptw_walk__enable() would do, without parsing either packet twice.  0
 * with the walk at the TIP.PGE's IP; -1, nothing changed, for anything
 * else (a packet between them other than CYC and MTC, no IP to enable
 * at ...), which they take.  With CYC, pt-cyc.c is told of each event as
 * they tell it: it finds the packets itself.
 */
static noinline int ptw_walk__pgd_pge(struct ptw_walk *w, const struct ptw_block *b,
				      uint64_t ip)
{
	const uint8_t *at = w->buf + w->pos;
	size_t left = w->len - w->pos;
	uint64_t last_ip = w->last_ip, pgd_ip = 0, pge_ip;
	unsigned int pgd = 1, pge, gap = 0;

	/* A stream's stop is the slow path's: the walk pauses between the two. */
	if (w->have || !w->mode || !left || (at[0] & 0x1f) != 0x01 ||
	    w->stops + 1 >= w->stop_at)
		return -1;
	if (at[0] >> 5) {
		pgd = ptw_tip_ip(at, left, last_ip, &pgd_ip);
		if (!pgd)
			return -1;
		last_ip = pgd_ip;
	}
	/* Timing packets between: as ptw_walk__peek() would skip them. */
	if (w->tma && pgd < left && (at[pgd] & 0x1f) != 0x11)
		gap = ptw_timing_run(at + pgd, left - pgd);
	if (pgd + gap >= left || (at[pgd + gap] & 0x1f) != 0x11)
		return -1;
	pge = ptw_tip_ip(at + pgd + gap, left - pgd - gap, last_ip, &pge_ip);
	if (!pge)
		return -1;

	ptw_walk__resolve(w, ip, 0);
	ptw_walk__insns(w, b->ninsn);
	w->pending = true;
	w->from = b->end;
	w->cls = b->cls;
	w->length = b->length;
	if (b->cls == X86_BR_IND_CALL)
		ptw_walk__push(w, b->end + b->length);
	w->pos += pgd;
	w->last_ip = last_ip;
	w->pkt.ip_bytes = at[0] >> 5;
	w->pkt_ip = pgd_ip;
	ptw_walk__disabled(w);

	w->pos += gap + pge;
	w->last_ip = pge_ip;
	auxsample__stats(w->dec)->end_ip = 0;
	if (w->timed) {
		/* ptw_walk__enable()'s, which only CYC needs */
		auxsample_timing__start(w->dec);
		ptw_walk__event_time(w, PT_CYC_ENABLED);
	}
	auxsample__boundary(w->dec, 0, pge_ip);
	w->ip = pge_ip;
	w->enabled = true;
	return 0;
}

/*
 * Skimming, ptw_walk__fast()'s walk handed to the skim loop from the
 * block at *@ip, with the TNT bits it holds, and taken back: whether the
 * loop stopped at the skim's point.  Where it stopped before a block for
 * another reason, it may have skipped the timing packets before that
 * block, and ptw_walk__fast() tests the point before skipping them.
 */
static inline bool ptw_walk__skim_on(struct ptw_walk *w, uint64_t *ip, uint64_t *tnt,
				     unsigned int *nr_bits, unsigned int *no_progress)
{
	bool at_point;

	w->ip = *ip;
	w->tnt = *tnt;
	w->nr_bits = *nr_bits;
	w->no_progress = *no_progress;
	at_point = ptw_walk__skim_fast(w);
	*ip = w->ip;
	*tnt = w->tnt;
	*nr_bits = w->nr_bits;
	*no_progress = w->no_progress;
	return at_point;
}

/*
 * The walk's common case, with its state in registers: blocks whose
 * branch needs a TNT bit (conditional branches, compressed returns), a
 * TIP next in the trace (indirect branches, far transfers, returns not
 * compressed) or nothing (direct jumps and calls), each as
 * ptw_walk__block() takes it.  It stops before the first block that
 * needs more, having changed nothing for it: ptw_walk__block() takes
 * that one.  Without CYC the instructions are counted at the end:
 * nothing walked reads them before (flow records are libipt's; the
 * late-sample rule reads no instruction counts).  One function of about
 * a hundred lines, on purpose: split, its IP, TNT bits and counters would
 * go through memory at every block.
 */
static void ptw_walk__fast(struct ptw_walk *w)
{
	/* The slots stay where they are for the decode (ptw_blocks__grow()). */
	const struct ptw_block *slots = w->blocks->slots;
	uint64_t mask = w->blocks->mask;
	unsigned int nr_bits = w->nr_bits, no_progress = w->no_progress;
	uint64_t ip = w->ip, tnt = w->tnt, insns = 0;
	bool timed = w->timed;	/* not read again after each call */
	bool skimming = w->skim_at != UINT64_MAX;
	/* The skim loop stopped before this block, the point still ahead. */
	bool short_of_point = false;
	struct ptw_skimmed sk = { 0 };

	for (;;) {
		const struct ptw_block *b = &slots[ptw_blocks__index(mask, ip)];
		uint64_t next = b->end + b->length, to = 0;
		bool taken = false, read = false;
		int tip = 0;

		if (!b->valid || b->start != ip || no_progress + 1 >= PTW_MAX_LOOPS)
			break;
		if (w->pos >= w->skim_at && !short_of_point) {
			ptw_walk__insns(w, insns);
			insns = 0;
			ptw_walk__skim_flush(w, &sk);
			w->nr_bits = nr_bits;
			ptw_walk__unskim(w);
			timed = w->timed;
			skimming = w->skim_at != UINT64_MAX;
			/*
			 * A point further on (ptw_walk__unskim()): on to it in
			 * the skim loop, not here (a quarter of a stream's
			 * skimmed blocks were walked here: bench/README.md).
			 */
			if (skimming && w->pos < w->skim_at && !w->have) {
				/*
				 * Where it stopped short of it, the next block is
				 * not tested against the point: walked on here
				 * block by block, it was tested short of it, and
				 * the ring came back after that block's packets
				 * (an async FUP's branches skimmed), which the
				 * statistics of lost skims show.
				 */
				short_of_point = !ptw_walk__skim_on(w, &ip, &tnt, &nr_bits,
								    &no_progress);
				continue;
			}
		}
		short_of_point = false;
		/* CYC and MTC are never before a TNT: skipped only if none is next. */
		if (!nr_bits && !ptw_walk__at_tnt8(w) && w->tma)
			ptw_walk__skip_timing(w);
		if (!nr_bits && !ptw_walk__at_tnt8(w)) {
			/*
			 * No bit: a TIP for the branches that take one; direct
			 * jumps and calls go on where the next packet is a TIP
			 * or TIP.PGD, which a later block takes as the peek
			 * before ptw_walk__block() would have; the others, and
			 * a FUP, PSB or timing packet next, are ptw_walk__run()'s.
			 */
			if (b->cls == X86_BR_COND)
				break;
			if (b->cls == X86_BR_JUMP || b->cls == X86_BR_CALL) {
				if (w->have || !ptw_walk__at_tip_or_pgd(w))
					break;
			} else {
				tip = ptw_walk__at_tip(w, &to);
				if (!tip) {
					/* As ptw_walk__block() counts them: before. */
					ptw_walk__insns(w, insns);
					insns = 0;
					ptw_walk__skim_flush(w, &sk);
					if (ptw_walk__pgd_pge(w, b, ip))
						break;
					no_progress = 0;
					ip = w->ip;
					/* Skimming, on in the skim loop: no TNT bits held here. */
					if (skimming)
						ptw_walk__skim_on(w, &ip, &tnt, &nr_bits, &no_progress);
					continue;
				}
			}
		} else if (b->cls == X86_BR_COND || b->cls == X86_BR_RET) {
			if (!nr_bits) {
				uint8_t byte = w->buf[w->pos];

				nr_bits = 31 - __builtin_clz(byte >> 1);
				taken = (byte >> nr_bits) & 1;
				/* A RET not taken, or not compressed: not here. */
				if (b->cls == X86_BR_RET && (!taken || !w->nr_rets)) {
					nr_bits = 0;
					break;
				}
				w->pos++;
				tnt = (byte >> 1) & ((1U << nr_bits) - 1);
				w->tnt_full = nr_bits == PTW_TNT8_BITS;
				read = true;
			} else {
				taken = (tnt >> (nr_bits - 1)) & 1;
				if (b->cls == X86_BR_RET && (!taken || !w->nr_rets))
					break;
			}
			nr_bits--;
		} else if (b->cls != X86_BR_JUMP && b->cls != X86_BR_CALL) {
			break;		/* a TIP wanted, TNT bits there: an error */
		}
		/*
		 * The branch before resolved here, as ptw_walk__block() does:
		 * an OVF after the last block drops it and starts its gap at
		 * w->from (pt-walk-ovf.c), as after that function.  Kept in
		 * registers, it cost more (spilled around the calls).
		 */
		if (w->pending) {
			w->pending = false;
			if (skimming)
				ptw_walk__skim_taken(w, &sk, ip);
			else
				ptw_walk__taken(w, timed, w->from, w->cls, w->from + w->length,
						ip, 0);
		}
		w->pending = true;
		w->from = b->end;
		w->cls = b->cls;
		w->length = b->length;
		/* Cycles count instructions at each branch (cycles.c). */
		if (timed)
			ptw_walk__insns(w, b->ninsn);
		else
			insns += b->ninsn;
		if (tip) {
			if (b->cls == X86_BR_IND_CALL)
				ptw_walk__push(w, next);
			w->pos += tip;
			w->last_ip = to;
			ip = to;
			read = true;
		} else if (b->cls == X86_BR_COND) {
			ip = taken ? b->target : next;
		} else if (b->cls == X86_BR_RET) {
			ptw_walk__pop(w, &ip);
		} else {
			if (b->cls == X86_BR_CALL)
				ptw_walk__call(w, b->target, next);
			ip = b->target;
		}
		/* Reading the trace is progress (ptw_walk__expect()). */
		no_progress = read ? 0 : no_progress + 1;
	}
	w->ip = ip;
	w->tnt = tnt;
	w->nr_bits = nr_bits;
	w->no_progress = no_progress;
	ptw_walk__insns(w, insns);
	ptw_walk__skim_flush(w, &sk);
}

/*
 * An asynchronous event at the FUP's IP (the instruction there did not
 * run): walk there through direct branches, then a TIP.PGD (an
 * interrupt, in user-only trace the sample's PMI) or a TIP (an
 * interrupt that stays in traced code).
 */
static int ptw_walk__async(struct ptw_walk *w)
{
	uint64_t at = w->pkt_ip, last;
	int err;

	w->have = false;
	while (w->ip != at) {
		const struct ptw_block *b = ptw_blocks__get(w->blocks, w->dec, w->ip);
		int n;

		if (!b || ++w->no_progress >= PTW_MAX_LOOPS)
			return PTW_FALLBACK;
		if (at > w->ip && at <= b->end) {
			n = ptw_blocks__count_to(w->blocks, w->dec, b, at, &last);
			if (n <= 0)
				return PTW_FALLBACK;
			ptw_walk__resolve(w, w->ip, 0);
			/* libipt's block ends there: an OVF's gap would start there. */
			w->from = last;
			ptw_walk__insns(w, n);
			w->ip = at;
			break;
		}
		if (b->cls != X86_BR_JUMP && b->cls != X86_BR_CALL)
			return PTW_FALLBACK;
		err = ptw_walk__block(w);
		if (err)
			return err;
	}
	err = ptw_walk__peek(w);
	if (err || w->eos)
		return err ? err : PTW_FALLBACK;
	w->have = false;
	w->no_progress = 0;
	if (w->pkt.type == PTW_TIP_PGD) {
		ptw_walk__resolve(w, at, 0);
		auxsample__stats(w->dec)->end_ip = at;
		ptw_walk__event_time(w, PT_CYC_ASYNC);
		auxsample_timing__stop(w->dec);
		auxsample__boundary(w->dec, at, 0);
		w->enabled = false;
		w->stops++;
		return 0;
	}
	if (w->pkt.type != PTW_TIP)
		return PTW_FALLBACK;
	ptw_walk__resolve(w, at, 0);
	ptw_walk__event_time(w, PT_CYC_ASYNC);
	auxsample__add_branch(w->dec, at, w->pkt_ip, AUXSAMPLE_BR_INTR, 0);
	w->ip = w->pkt_ip;
	return 0;
}

/* Tracing is off: on again at a TIP.PGE, pt.c's ptev_enabled. */
static int ptw_walk__enable(struct ptw_walk *w)
{
	int err = ptw_walk__peek(w);

	if (err || w->eos)
		return err;
	if (w->pkt.type == PTW_OVF)
		return ptw_walk__overflow(w);
	err = ptw_walk__expect(w, PTW_TIP_PGE);
	if (err)
		return err;
	if (!w->pkt.ip_bytes || !w->mode)
		return PTW_FALLBACK;
	auxsample__stats(w->dec)->end_ip = 0;
	auxsample_timing__start(w->dec);
	ptw_walk__event_time(w, PT_CYC_ENABLED);
	auxsample__boundary(w->dec, 0, w->pkt_ip);
	w->ip = w->pkt_ip;
	w->enabled = true;
	return 0;
}

int ptw_walk__run(struct ptw_walk *w)
{
	int err = 0;

	while (!err && !w->ended && w->stops < w->stop_at) {
		if (!w->enabled) {
			err = ptw_walk__enable(w);
			if (w->eos)
				break;
			continue;
		}
		/* Skimming, most blocks are the skim loop's (pt-walk-skim-fast.c). */
		if (w->skim_at != UINT64_MAX && !w->timed && !w->have) {
			ptw_walk__skim_fast(w);
			/* Where the packets are counted (pt-walk-skim.c): on to the point. */
			if (w->wd->skim_plan.later && w->pos >= w->skim_at && !w->have &&
			    ptw_walk__replan(w, w->pos, auxsample__stats(w->dec)->branches) > w->pos)
				ptw_walk__skim_fast(w);
		}
		ptw_walk__fast(w);
		/* A TNT next is no FUP: no need to parse it twice. */
		if (!w->nr_bits && !ptw_walk__at_tnt8(w)) {
			err = ptw_walk__peek(w);
			if (err)
				break;
			if (w->have && w->pkt.type == PTW_FUP) {
				err = ptw_walk__async(w);
				continue;
			}
			/* As libipt, before the next block: its trace was lost. */
			if (w->have && w->pkt.type == PTW_OVF) {
				err = ptw_walk__overflow(w);
				continue;
			}
		}
		/*
		 * Not in ptw_walk__async()'s blocks: its FUP is read, pt-cyc.c
		 * has yet to take it.
		 */
		if (w->pos >= w->skim_at)
			ptw_walk__unskim(w);
		/* At the end, libipt walks on to the next branch that reads the trace. */
		err = ptw_walk__block(w);
	}
	return err || w->nomem ? PTW_FALLBACK : 0;
}
