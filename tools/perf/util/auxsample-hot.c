// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample report's hot paths.  Every decoded virtual LBR adds its
 * branch edges, the loops it shows, the straight-line blocks between its
 * branches and its calls to four tables, keyed like perf report keys
 * code (dso and offset), to be shown sorted by count.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>
#include <auxsample/auxsample.h>

#include "auxsample.h"
#include "auxsample-hot.h"
#include "auxsample-symcache.h"
#include "dso.h"
#include "dump-insn.h"
#include "hashmap.h"
#include "intel-pt-decoder/intel-pt-insn-decoder.h"
#include "machine.h"
#include "map.h"
#include "maps.h"
#include "strlist.h"
#include "symbol.h"
#include "thread.h"

#define HOT_BLOCK_MAX	4096	/* longer straight-line runs are not counted */

const char * const auxsample_hot_section_names[AUXSAMPLE_HOT_NR_SECTIONS] = {
	[AUXSAMPLE_HOT_EDGES]	= "edges",
	[AUXSAMPLE_HOT_LOOPS]	= "loops",
	[AUXSAMPLE_HOT_BLOCKS]	= "blocks",
	[AUXSAMPLE_HOT_CALLS]	= "calls",
};

/* A branch of the sample at hand, in execution order, resolved. */
struct auxsample_hot_br {
	const struct auxsample_branch	*br;
	struct auxsample_addr		from;
	struct auxsample_addr		to;
	int				depth;	/* calls open before it, relative */
	bool				seen;	/* loops: back edge looked at */
	bool				in_run;	/* loops: counted in a run */
};

/* A run of a loop: its back edge taken in a row in one frame. */
struct auxsample_hot_run {
	u64	trips;
	bool	whole;		/* the LBR shows its entry and its exit */
};

static void hot_addr__func(struct auxsample_addr *a)
{
	a->off -= a->symoff;
	a->ip -= a->symoff;
	a->symoff = 0;
}

/* The dso itself, as RC_CHK_EQUAL() compares it. */
static uintptr_t hot_dso__key(const struct dso *dso)
{
	return dso ? (uintptr_t)RC_CHK_ACCESS(dso) : 0;
}

static size_t hot_item__hash(long key, void *ctx __maybe_unused)
{
	const struct auxsample_hot_item *item = (const struct auxsample_hot_item *)key;
	u64 h = hot_dso__key(item->a.dso) ^ (hot_dso__key(item->b.dso) << 1);

	h = h * 31 + item->a.off;
	h = h * 31 + item->b.off;
	return h * 31 + item->kind;
}

static bool hot_item__equal(long key1, long key2, void *ctx __maybe_unused)
{
	const struct auxsample_hot_item *x = (const struct auxsample_hot_item *)key1;
	const struct auxsample_hot_item *y = (const struct auxsample_hot_item *)key2;

	return RC_CHK_EQUAL(x->a.dso, y->a.dso) && x->a.off == y->a.off &&
	       RC_CHK_EQUAL(x->b.dso, y->b.dso) && x->b.off == y->b.off &&
	       x->kind == y->kind;
}

/* The item of @key's key in @sec, made with @key's addresses if new. */
static struct auxsample_hot_item *hot_section__findnew(struct auxsample_hot_section *sec,
					     const struct auxsample_hot_item *key)
{
	struct auxsample_hot_item *item;

	if (hashmap__find(&sec->items, key, &item))
		return item;
	item = zalloc(sizeof(*item));
	if (!item)
		return NULL;
	item->a = key->a;
	item->b = key->b;
	item->kind = key->kind;
	if (hashmap__add(&sec->items, item, item)) {
		free(item);
		return NULL;
	}
	return item;
}

static void hot_section__exit(struct auxsample_hot_section *sec)
{
	struct hashmap *items = &sec->items;
	struct hashmap_entry *cur;
	size_t bkt;

	hashmap__for_each_entry(items, cur, bkt)
		free(cur->pvalue);
	hashmap__clear(&sec->items);
}

static int auxsample_hot__add_edges(struct auxsample_hot *h, int n)
{
	struct auxsample_hot_section *sec = &h->sections[AUXSAMPLE_HOT_EDGES];

	for (int i = 0; i < n; i++) {
		const struct auxsample_hot_br *e = &h->brs[i];
		struct auxsample_hot_item key = { .a = e->from, .b = e->to, .kind = e->br->kind };
		struct auxsample_hot_item *edge;

		if (e->br->kind == AUXSAMPLE_BR_GAP)
			continue;
		edge = hot_section__findnew(sec, &key);
		if (!edge)
			return -ENOMEM;
		edge->count++;
		sec->total++;
		h->branches++;
	}
	return 0;
}

/*
 * The x86 instructions in @len bytes at @buf up to the one at @last, and
 * in *bytes their size; 0 where they do not decode to exactly that one.
 */
static u32 hot_insns__count(struct perf_insn *x, u64 ip, u8 *buf, int len, u64 last,
			    u32 *bytes)
{
	u64 off = 0;
	u32 insns = 0;
	int ilen;

	while (off < (u64)len) {
		ilen = 0;
		dump_insn(x, ip + off, buf + off, len - off, &ilen);
		if (ilen <= 0)
			return 0;
		insns++;
		if (off == last) {
			*bytes = last + ilen;
			return insns;
		}
		off += ilen;
		if (off > last)
			return 0;
	}
	return 0;
}

/*
 * Intel PT: the instructions of a new block, with perf's x86 instruction
 * decoder (where perf has it); they stay unknown (0) where the code cannot
 * be read or does not decode to the block's last instruction.
 */
static void auxsample_hot__block_size(struct auxsample_hot *h, struct auxsample_hot_item *block,
				      struct thread *thread)
{
	struct auxsample_mem mem = {
		.machine = maps__machine(thread__maps(thread)),
		.thread = thread,
	};
	struct perf_insn x = {
		.thread = thread,
		.machine = mem.machine,
		.is64bit = dso__is_64_bit(block->a.dso),
	};
	u64 last = block->b.ip - block->a.ip;
	u8 buf[HOT_BLOCK_MAX + MAXINSN];
	int len;

	if (h->config->type != AUXSAMPLE_TRACE_INTEL_PT)
		return;
	len = auxsample_mem__read(buf, last + MAXINSN, block->a.ip, &mem);
	if (len > 0)
		block->block.insns = hot_insns__count(&x, block->a.ip, buf, len, last,
						      &block->block.bytes);
}

/* The code run between two taken branches: from one's target to the next. */
static int auxsample_hot__add_blocks(struct auxsample_hot *h, int n, struct thread *thread)
{
	struct auxsample_hot_section *sec = &h->sections[AUXSAMPLE_HOT_BLOCKS];

	for (int i = 1; i < n; i++) {
		const struct auxsample_hot_br *prev = &h->brs[i - 1], *cur = &h->brs[i];
		struct auxsample_hot_item key = { .a = prev->to, .b = cur->from };
		struct auxsample_hot_item *block;

		if (prev->br->kind == AUXSAMPLE_BR_GAP || cur->br->kind == AUXSAMPLE_BR_GAP ||
		    (prev->br->flags & AUXSAMPLE_BRF_TO_UNKNOWN) ||
		    cur->br->from < prev->br->to ||
		    cur->br->from - prev->br->to >= HOT_BLOCK_MAX ||
		    !RC_CHK_EQUAL(prev->to.dso, cur->from.dso))
			continue;
		block = hot_section__findnew(sec, &key);
		if (!block)
			return -ENOMEM;
		if (!block->count && block->a.dso)
			auxsample_hot__block_size(h, block, thread);
		block->count++;
		sec->total++;
	}
	return 0;
}

static bool hot_br__is_back_edge(const struct auxsample_hot_br *e)
{
	const struct auxsample_branch *br = e->br;

	if (br->kind != AUXSAMPLE_BR_COND && br->kind != AUXSAMPLE_BR_JUMP &&
	    br->kind != AUXSAMPLE_BR_IND_JUMP)
		return false;
	if ((br->flags & AUXSAMPLE_BRF_TO_UNKNOWN) || br->to > br->from)
		return false;
	/* Within one function. */
	return RC_CHK_EQUAL(e->from.dso, e->to.dso) && e->from.sym == e->to.sym;
}

static bool hot_br__same(const struct auxsample_hot_br *x, const struct auxsample_hot_br *y)
{
	return x->br->from == y->br->from && x->br->to == y->br->to &&
	       x->br->kind == y->br->kind;
}

/* Whether @e, run in the loop's own frame, leaves the loop @head .. @tail. */
static bool hot_br__leaves(const struct auxsample_hot_br *e, u64 head, u64 tail)
{
	const struct auxsample_branch *br = e->br;

	if (br->from < head || br->from > tail)
		return true;	/* code outside the loop ran before it */
	switch (br->kind) {
	case AUXSAMPLE_BR_CALL:
	case AUXSAMPLE_BR_IND_CALL:
	case AUXSAMPLE_BR_FAR:		/* calls and syscalls come back */
		return false;
	case AUXSAMPLE_BR_RET:
	case AUXSAMPLE_BR_INTR:
	case AUXSAMPLE_BR_GAP:
		return true;
	default:
		return br->to < head || br->to > tail;
	}
}

enum hot_bound {
	HOT_CUT,	/* a gap or the end of the LBR */
	HOT_LEFT,	/* the loop left, or its frame not made yet */
	HOT_AGAIN,	/* the back edge taken again */
};

/*
 * What the LBR shows of the loop of back edge brs[i], going backwards
 * (@dir -1) or forwards (@dir 1) from it in the loop's frame; *next is
 * where the back edge is taken again.
 */
static enum hot_bound auxsample_hot__loop_bound(struct auxsample_hot *h, int n, int i,
						int dir, int *next)
{
	const struct auxsample_hot_br *be = &h->brs[i];

	for (int j = i + dir; j >= 0 && j < n; j += dir) {
		const struct auxsample_hot_br *e = &h->brs[j];

		if (e->br->kind == AUXSAMPLE_BR_GAP)
			return HOT_CUT;
		if (e->depth > be->depth)	/* in a callee */
			continue;
		if (e->depth < be->depth)
			return HOT_LEFT;
		if (hot_br__same(e, be)) {
			*next = j;
			return HOT_AGAIN;
		}
		if (hot_br__leaves(e, be->br->to, be->br->from))
			return HOT_LEFT;
	}
	return HOT_CUT;
}

/*
 * The run of the loop whose back edge is brs[i]: how often that back edge
 * is taken in a row in the loop's frame, its occurrences marked in_run.
 */
static struct auxsample_hot_run auxsample_hot__loop_run(struct auxsample_hot *h, int n, int i)
{
	struct auxsample_hot_run run = { .trips = 1 };
	enum hot_bound end;
	bool entered;
	int next;

	entered = auxsample_hot__loop_bound(h, n, i, -1, &next) == HOT_LEFT;
	h->brs[i].in_run = true;
	while ((end = auxsample_hot__loop_bound(h, n, i, 1, &next)) == HOT_AGAIN) {
		i = next;
		h->brs[i].in_run = true;
		run.trips++;
	}
	run.whole = entered && end == HOT_LEFT;
	return run;
}

static void hot_loop__add_run(struct auxsample_hot_item *loop, const struct auxsample_hot_run *run)
{
	loop->loop.back_edges += run->trips;
	if (run->whole) {
		loop->loop.runs++;
		loop->loop.trips += run->trips;
		loop->loop.trips_max = max(loop->loop.trips_max, run->trips);
	} else {
		loop->loop.partial_max = max(loop->loop.partial_max, run->trips);
	}
}

/*
 * The loop of back edge brs[first], if the sample takes it twice in a row
 * in one frame: a back edge taken once in each of several frames is
 * recursion, not a loop.
 */
static int auxsample_hot__add_loop(struct auxsample_hot *h, int n, int first)
{
	struct auxsample_hot_br *be = &h->brs[first];
	struct auxsample_hot_item key = { .a = be->to, .b = be->from };
	struct auxsample_hot_run *runs = h->runs;
	struct auxsample_hot_item *loop;
	u64 nr = 0, most = 0;

	for (int j = first; j < n; j++) {
		if (!hot_br__same(&h->brs[j], be))
			continue;
		h->brs[j].seen = true;
		if (h->brs[j].in_run)
			continue;
		runs[nr] = auxsample_hot__loop_run(h, n, j);
		most = max(most, runs[nr].trips);
		nr++;
	}
	if (most < 2)
		return 0;
	loop = hot_section__findnew(&h->sections[AUXSAMPLE_HOT_LOOPS], &key);
	if (!loop)
		return -ENOMEM;
	if (loop->seen != h->decoded) {
		loop->seen = h->decoded;
		loop->count++;
	}
	for (u64 r = 0; r < nr; r++)
		hot_loop__add_run(loop, &runs[r]);
	return 0;
}

static int auxsample_hot__add_loops(struct auxsample_hot *h, int n)
{
	int err;

	for (int i = 0; i < n; i++) {
		if (h->brs[i].seen || !hot_br__is_back_edge(&h->brs[i]))
			continue;
		err = auxsample_hot__add_loop(h, n, i);
		if (err)
			return err;
	}
	return 0;
}

static int auxsample_hot__add_calls(struct auxsample_hot *h, int n)
{
	struct auxsample_hot_section *sec = &h->sections[AUXSAMPLE_HOT_CALLS];

	for (int i = 0; i < n; i++) {
		const struct auxsample_hot_br *e = &h->brs[i];
		struct auxsample_hot_item key = { .a = e->from, .b = e->to };
		struct auxsample_hot_item *call;

		if ((e->br->kind != AUXSAMPLE_BR_CALL && e->br->kind != AUXSAMPLE_BR_IND_CALL) ||
		    (e->br->flags & AUXSAMPLE_BRF_TO_UNKNOWN))
			continue;
		hot_addr__func(&key.a);
		hot_addr__func(&key.b);
		call = hot_section__findnew(sec, &key);
		if (!call)
			return -ENOMEM;
		call->count++;
		sec->total++;
	}
	return 0;
}

/* x86 call instructions are 2 to 8 bytes long; E8 rel32, the commonest, first. */
static const int hot_x86_call_lens[] = { 5, 6, 2, 3, 7, 4, 8 };

/*
 * The call that returns to @ret, found by decoding the code before it: its
 * first byte, and in *target where it goes if that is in the instruction
 * (0 if not).  0 where no call ends at @ret: the code cannot be read, or
 * is not Intel PT's x86-64 or ETM's arm64.
 */
static u64 auxsample_hot__decode_call_site(struct auxsample_hot *h, struct thread *thread,
					   const struct auxsample_addr *ret, u64 *target)
{
	struct auxsample_mem mem = {
		.machine = maps__machine(thread__maps(thread)),
		.thread = thread,
	};
	struct intel_pt_insn insn;
	u8 buf[8];

	*target = 0;
	if (!ret->dso || !dso__is_64_bit(ret->dso))
		return 0;
	if (h->config->type != AUXSAMPLE_TRACE_INTEL_PT) {
		u32 a64;

		/* arm64: BL imm26 or BLR, 4 bytes. */
		if (auxsample_mem__read(buf, 4, ret->ip - 4, &mem) != 4)
			return 0;
		memcpy(&a64, buf, 4);
		a64 = le32_to_cpu(a64);
		if ((a64 & 0xfc000000) == 0x94000000)
			*target = ret->ip - 4 + ((s64)((u64)a64 << 38) >> 36);
		else if ((a64 & 0xfffffc1f) != 0xd63f0000)
			return 0;
		return ret->ip - 4;
	}
	for (size_t i = 0; i < ARRAY_SIZE(hot_x86_call_lens); i++) {
		int len = hot_x86_call_lens[i];

		if (auxsample_mem__read(buf, len, ret->ip - len, &mem) != len ||
		    intel_pt_get_insn(buf, len, /*x86_64=*/1, &insn) ||
		    insn.op != INTEL_PT_OP_CALL || insn.length != len)
			continue;
		if (insn.branch == INTEL_PT_BR_UNCONDITIONAL)
			*target = ret->ip + insn.rel;
		return ret->ip - len;
	}
	return 0;
}

/* auxsample_hot__decode_call_site(), once for each return address. */
static u64 auxsample_hot__call_site(struct auxsample_hot *h, struct thread *thread,
				    const struct auxsample_addr *ret, u64 *target)
{
	struct auxsample_symcache_entry tmp;
	struct auxsample_symcache_entry *e = auxsample_symcache__find(h->symcache, thread,
								      ret->ip, &tmp);

	if (!e->site_known) {
		e->site = auxsample_hot__decode_call_site(h, thread, ret, &e->target);
		e->site_known = true;
	}
	*target = e->target;
	return e->site;
}

/*
 * The calls still open at the sample, from its call chain: once a sample,
 * keyed as the call branches are (auxsample_hot__add_calls()).  The chain
 * holds return addresses; in code without symbols the call sites and the
 * callees' entries are found by decoding the calls.
 */
static int auxsample_hot__add_chain(struct auxsample_hot *h, struct thread *thread,
				    u64 ip, const struct auxsample_result *res)
{
	const u64 *chain = res->callchain;
	struct auxsample_hot_item key = {};
	struct auxsample_addr inner;
	int depth = res->depth;

	/* The code running in the innermost frame, then each caller's call. */
	auxsample_symcache__resolve(h->symcache, &inner, thread, ip);
	for (int i = 0; i < depth; i++) {
		struct auxsample_hot_item *call;
		struct auxsample_addr ret;
		u64 site = 0, target = 0;

		auxsample_symcache__resolve(h->symcache, &ret, thread, chain[i]);
		if (!ret.sym || !inner.sym)
			site = auxsample_hot__call_site(h, thread, &ret, &target);
		/* A return address may be the first byte of the next function. */
		auxsample_symcache__resolve(h->symcache, &key.a, thread, site ?: chain[i] - 1);
		if (inner.sym) {
			key.b = inner;
			hot_addr__func(&key.b);
		} else if (target) {
			auxsample_symcache__resolve(h->symcache, &key.b, thread, target);
		} else {
			key.b.ip = 0;	/* callee unknown: no row to count in */
		}
		inner = key.a;
		hot_addr__func(&key.a);
		if (!key.b.ip || (!key.a.sym && !site))
			continue;
		call = hot_section__findnew(&h->sections[AUXSAMPLE_HOT_CALLS], &key);
		if (!call)
			return -ENOMEM;
		if (call->seen != h->decoded) {
			call->seen = h->decoded;
			call->call.samples++;
		}
	}
	return 0;
}

/* The sample's branches into h->brs, oldest first, with their call depth. */
static int auxsample_hot__resolve(struct auxsample_hot *h, struct thread *thread,
				  const struct auxsample_branch *br, int n)
{
	int depth = 0;

	if ((unsigned int)n > h->brs_max) {
		struct auxsample_hot_br *brs = realloc(h->brs, n * sizeof(*brs));
		struct auxsample_hot_run *runs;

		if (!brs)
			return -ENOMEM;
		h->brs = brs;
		runs = realloc(h->runs, n * sizeof(*runs));
		if (!runs)
			return -ENOMEM;
		h->runs = runs;
		h->brs_max = n;
	}
	for (int i = 0; i < n; i++) {
		struct auxsample_hot_br *e = &h->brs[i];

		memset(e, 0, sizeof(*e));
		e->br = &br[n - 1 - i];
		e->depth = depth;
		auxsample_symcache__resolve(h->symcache, &e->from, thread, e->br->from);
		auxsample_symcache__resolve(h->symcache, &e->to, thread,
					    e->br->flags & AUXSAMPLE_BRF_TO_UNKNOWN ? 0 :
					    e->br->to);
		if (e->br->kind == AUXSAMPLE_BR_CALL || e->br->kind == AUXSAMPLE_BR_IND_CALL)
			depth++;
		else if (e->br->kind == AUXSAMPLE_BR_RET)
			depth--;
	}
	return 0;
}

int auxsample_hot__add(struct auxsample_hot *h, struct thread *thread, u64 ip,
		      const struct auxsample_result *res)
{
	int nr = res->nr_branches;
	int err;

	if (res->nr < 0)	/* no sync point: counted by the walk */
		return 0;
	h->decoded++;
	err = auxsample_hot__resolve(h, thread, res->branches, nr);
	if (!err)
		err = auxsample_hot__add_edges(h, nr);
	if (!err)
		err = auxsample_hot__add_loops(h, nr);
	if (!err)
		err = auxsample_hot__add_blocks(h, nr, thread);
	if (!err)
		err = auxsample_hot__add_calls(h, nr);
	if (!err)
		err = auxsample_hot__add_chain(h, thread, ip, res);
	return err;
}

static bool hot_addr__in_dsos(const struct auxsample_addr *a, struct strlist *dsos)
{
	return a->dso && (strlist__has_entry(dsos, dso__short_name(a->dso)) ||
			  strlist__has_entry(dsos, dso__long_name(a->dso)));
}

static bool hot_addr__in_symbols(const struct auxsample_addr *a, struct strlist *symbols)
{
	return a->sym && strlist__has_entry(symbols, a->sym->name);
}

/* --dsos, --symbols: items with an end in them. */
static bool hot_filter__wanted(const struct auxsample_hot_filter *f,
			       const struct auxsample_hot_item *item)
{
	if (f->dsos && !hot_addr__in_dsos(&item->a, f->dsos) &&
	    !hot_addr__in_dsos(&item->b, f->dsos))
		return false;
	if (f->symbols && !hot_addr__in_symbols(&item->a, f->symbols) &&
	    !hot_addr__in_symbols(&item->b, f->symbols))
		return false;
	return true;
}

#define HOT_CMP_ASC(x, y) ((x) < (y) ? -1 : (x) > (y))

/*
 * Two dsos that print the same (one name, another inode: a file mapped
 * again after it changed) by what tells them apart, not by where the
 * hash table put them: the same file gives the same report every run.
 * Each field of the ids in turn, not dso_id__cmp(), which takes an empty
 * id as equal to any: no order for qsort().
 */
static int hot_dso__cmp(const struct dso *a, const struct dso *b)
{
	const struct dso_id *x = dso__id_const(a), *y = dso__id_const(b);
	const struct build_id *bx = dso__bid_const(a), *by = dso__bid_const(b);

	return strcmp(dso__long_name(a), dso__long_name(b)) ?:
	       HOT_CMP_ASC(x->maj, y->maj) ?: HOT_CMP_ASC(x->min, y->min) ?:
	       HOT_CMP_ASC(x->ino, y->ino) ?: HOT_CMP_ASC(x->ino_generation, y->ino_generation) ?:
	       HOT_CMP_ASC(bx->size, by->size) ?: memcmp(bx->data, by->data, bx->size);
}

static int hot_addr__cmp_dso(const struct auxsample_addr *x, const struct auxsample_addr *y)
{
	int cmp;

	if (x->dso != y->dso) {
		if (!x->dso || !y->dso)
			return x->dso ? 1 : -1;
		cmp = hot_dso__cmp(x->dso, y->dso);
		if (cmp)
			return cmp;
	}
	return HOT_CMP_ASC(x->off, y->off);
}

static int hot_item__cmp_addr(const struct auxsample_hot_item *x,
			      const struct auxsample_hot_item *y)
{
	if (x->a.ip != y->a.ip)
		return x->a.ip < y->a.ip ? -1 : 1;
	if (x->b.ip != y->b.ip)
		return x->b.ip < y->b.ip ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return hot_addr__cmp_dso(&x->a, &y->a) ?: hot_addr__cmp_dso(&x->b, &y->b);
}

#define HOT_CMP_DESC(x, y) ((x) > (y) ? -1 : (x) < (y))

static int hot_item__cmp(const void *p1, const void *p2)
{
	const struct auxsample_hot_item *x = *(const struct auxsample_hot_item **)p1;
	const struct auxsample_hot_item *y = *(const struct auxsample_hot_item **)p2;

	return HOT_CMP_DESC(x->count, y->count) ?: hot_item__cmp_addr(x, y);
}

static int hot_loop__cmp(const void *p1, const void *p2)
{
	const struct auxsample_hot_item *x = *(const struct auxsample_hot_item **)p1;
	const struct auxsample_hot_item *y = *(const struct auxsample_hot_item **)p2;

	return HOT_CMP_DESC(x->count, y->count) ?:
	       HOT_CMP_DESC(x->loop.back_edges, y->loop.back_edges) ?:
	       hot_item__cmp_addr(x, y);
}

static int hot_call__cmp(const void *p1, const void *p2)
{
	const struct auxsample_hot_item *x = *(const struct auxsample_hot_item **)p1;
	const struct auxsample_hot_item *y = *(const struct auxsample_hot_item **)p2;

	return HOT_CMP_DESC(x->count, y->count) ?:
	       HOT_CMP_DESC(x->call.samples, y->call.samples) ?:
	       hot_item__cmp_addr(x, y);
}

double auxsample_hot__percent(const struct auxsample_hot *h, enum auxsample_hot_section_id id,
				     const struct auxsample_hot_item *item)
{
	u64 total = id == AUXSAMPLE_HOT_LOOPS ? h->decoded : h->sections[id].total;

	return total ? 100.0 * item->count / total : 0.0;
}

/*
 * The items of section @id to show, hottest first, after --dsos,
 * --symbols, --percent-limit and -n: *nr of them, in an array to free.
 */
struct auxsample_hot_item **auxsample_hot__items(struct auxsample_hot *h,
						 enum auxsample_hot_section_id id,
						 const struct auxsample_hot_filter *f, size_t *nr)
{
	static int (* const cmp[AUXSAMPLE_HOT_NR_SECTIONS])(const void *, const void *) = {
		[AUXSAMPLE_HOT_EDGES] = hot_item__cmp, [AUXSAMPLE_HOT_LOOPS] = hot_loop__cmp,
		[AUXSAMPLE_HOT_BLOCKS] = hot_item__cmp, [AUXSAMPLE_HOT_CALLS] = hot_call__cmp,
	};
	struct hashmap *items = &h->sections[id].items;
	struct auxsample_hot_item **array = calloc(hashmap__size(items) ?: 1, sizeof(*array));
	struct hashmap_entry *cur;
	size_t bkt, n = 0;

	if (!array)
		return NULL;
	hashmap__for_each_entry(items, cur, bkt) {
		struct auxsample_hot_item *item = cur->pvalue;

		if (hot_filter__wanted(f, item) &&
		    auxsample_hot__percent(h, id, item) >= f->percent_limit)
			array[n++] = item;
	}
	qsort(array, n, sizeof(*array), cmp[id]);
	if (f->max_entries && n > f->max_entries)
		n = f->max_entries;
	*nr = n;
	return array;
}

void auxsample_hot__init(struct auxsample_hot *h, struct auxsample_symcache *symcache,
			 const struct auxsample_config *config)
{
	memset(h, 0, sizeof(*h));
	h->symcache = symcache;
	h->config = config;
	for (int id = 0; id < AUXSAMPLE_HOT_NR_SECTIONS; id++)
		hashmap__init(&h->sections[id].items, hot_item__hash, hot_item__equal, NULL);
}

void auxsample_hot__exit(struct auxsample_hot *h)
{
	for (int id = 0; id < AUXSAMPLE_HOT_NR_SECTIONS; id++)
		hot_section__exit(&h->sections[id]);
	zfree(&h->brs);
	zfree(&h->runs);
}
