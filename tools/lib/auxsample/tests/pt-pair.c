// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Intel PT walker and libipt's block decoder on the same snippets:
 * whether they agree in everything public (branches, call chain, errors,
 * statistics), for the unit tests and the fuzz harness (fuzz/fuzz-pt.c
 * includes this file).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <intel-pt.h>
#include <auxsample/auxsample.h>
#include "tests.h"

/*
 * Under ASan the bytes of a view not fetched are poisoned too, so that a
 * read of them fails the test even where the 0xff it reads changes
 * nothing (the walker's skim counting from a packet it let go of).
 */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define pair_view__poison(p, n)		ASAN_POISON_MEMORY_REGION(p, n)
#define pair_view__unpoison(p, n)	ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define pair_view__poison(p, n)		((void)(p), (void)(n))
#define pair_view__unpoison(p, n)	((void)(p), (void)(n))
#endif

#define ERRORS_SHOWN	4

int pair__init(struct pair *pr, struct auxsample_config *config)
{
	memset(pr, 0, sizeof(*pr));
	config->pt_decoder = AUXSAMPLE_PT_DECODER_LIBIPT;
	pr->ref = auxsample_decoder__new(config, NULL);
	pr->ref_config = malloc(sizeof(*config));
	if (pr->ref_config)
		*pr->ref_config = *config;
	config->pt_decoder = AUXSAMPLE_PT_DECODER_WALKER;
	pr->walker = auxsample_decoder__new(config, NULL);
	return pr->ref && pr->walker && pr->ref_config ? 0 : -1;
}

void pair__exit(struct pair *pr)
{
	auxsample_decoder__delete(pr->ref);
	auxsample_decoder__delete(pr->walker);
	free(pr->ref_config);
	free(pr->cuts);
	for (int i = 0; i < 2; i++) {
		pair_view__unpoison(pr->views[i].buf, pr->views[i].len);
		free(pr->views[i].buf);
	}
}

/* Not a packet: a decoder that reads it decodes other than from the trace. */
#define PAIR_POISON	0xff

/*
 * auxsample_decoder__set_stream_fetch()'s callback: [@from, @to) become
 * the trace's bytes, those before @from poison.  Fetches outside the
 * stream break the contract: a test fails by the abort.
 */
static int pair_view__fetch(uint64_t from, uint64_t to, void *arg)
{
	struct pair_view *v = arg;
	size_t hi = to > v->hi ? to : v->hi, at = from > v->hi ? from : v->hi;

	if (from >= to || to > v->len) {
		fprintf(stderr, "  fetch [%llu, %llu) of a %zu-byte stream\n",
			(unsigned long long)from, (unsigned long long)to, v->len);
		abort();
	}
	pair_view__unpoison(v->buf, v->len);
	if (from > v->lo)
		memset(v->buf + v->lo, PAIR_POISON, (from < v->hi ? from : v->hi) - v->lo);
	if (from < v->lo)
		memcpy(v->buf + from, v->trace + from, v->lo - from);
	memcpy(v->buf + at, v->trace + at, hi - at);
	v->lo = from;
	v->hi = hi;
	pair_view__poison(v->buf, from);
	pair_view__poison(v->buf + hi, v->len - hi);
	return 0;
}

/* @dec's stream of the @len bytes at @trace, through @v. */
static int pair_view__begin(struct pair_view *v, struct auxsample_decoder *dec,
			    const uint8_t *trace, size_t len, unsigned int max)
{
	uint8_t *buf;

	pair_view__unpoison(v->buf, v->len);
	buf = realloc(v->buf, len ?: 1);
	if (!buf)
		return -AUXSAMPLE_ERR_NOMEM;
	memset(buf, PAIR_POISON, len);
	pair_view__poison(buf, len);
	*v = (struct pair_view){ .trace = trace, .buf = buf, .len = len };
	auxsample_decoder__set_stream_fetch(dec, pair_view__fetch, v);
	return auxsample_decoder__stream_begin(dec, buf, len, max);
}

void pair__set_sample_ip(struct pair *pr, uint64_t ip)
{
	pr->sample_ip = ip;
	auxsample_decoder__set_sample_ip(pr->ref, ip);
	auxsample_decoder__set_sample_ip(pr->walker, ip);
}

static void print_branch(const char *who, const struct auxsample_branch *br)
{
	fprintf(stderr, "    %s: %#llx -> %#llx %s %#x\n", who, (unsigned long long)br->from,
		(unsigned long long)br->to, auxsample_branch_kind__name(br->kind), br->flags);
}

/*
 * What both backends gave (@ref libipt's, @rn and @wn returned, @buf of
 * @len decoded, NULL for a stream's stretch): 0 when they agree in
 * everything public.  Unless @final, only that: nothing counted or said.
 */
static int pair__results(struct pair *pr, struct auxsample_decoder *ref, int rn, int wn,
			 const uint8_t *buf, size_t len, bool final)
{
	const struct auxsample_branch *rb, *wb;
	const struct auxsample_decode_error *re, *we;
	const uint64_t *rc, *wc;
	struct auxsample_stats rs, ws;
	int rd, wdp, rne, wne;
	bool fell_back, dump;

	auxsample_decoder__branches(ref, &rb);
	auxsample_decoder__branches(pr->walker, &wb);
	rd = auxsample_decoder__callchain(ref, &rc);
	wdp = auxsample_decoder__callchain(pr->walker, &wc);
	rne = auxsample_decoder__errors(ref, &re);
	wne = auxsample_decoder__errors(pr->walker, &we);
	auxsample_decoder__stats(ref, &rs, sizeof(rs));
	auxsample_decoder__stats(pr->walker, &ws, sizeof(ws));
	rs.bytes += pr->ref_short;
	fell_back = ws.pt_fallbacks;
	if (final) {
		pr->decodes++;
		pr->result = rn;
		pr->walked += !fell_back;
		pr->skims += ws.pt_skims;
		pr->skims_lost += ws.pt_skims_lost;
		for (int i = 0; i < rn; i++)
			pr->timed += rb[i].cycles != 0;
	}
	ws.pt_fallbacks = 0;
	ws.pt_blocks_built = 0;
	ws.pt_blocks_evicted = 0;
	ws.pt_skims = 0;
	ws.pt_skims_lost = 0;
	if (rn == wn && rd == wdp && rne == wne &&
	    (rn <= 0 || !memcmp(rb, wb, rn * sizeof(*rb))) &&
	    (rd <= 0 || !memcmp(rc, wc, rd * sizeof(*rc))) &&
	    (rne <= 0 || !memcmp(re, we, rne * sizeof(*re))) &&
	    !memcmp(&rs, &ws, sizeof(rs)))
		return 0;
	if (!final)
		return -1;

	dump = getenv("PTW_DUMP");
	fprintf(stderr, "  %zu bytes, the walker %s\n", len, fell_back ? "fell back" : "walked");
	fprintf(stderr, "  libipt: %d branches, %d deep, %d errors, %llu insns\n",
		rn, rd, rne, (unsigned long long)rs.insns);
	fprintf(stderr, "  walker: %d branches, %d deep, %d errors, %llu insns\n",
		wn, wdp, wne, (unsigned long long)ws.insns);
	for (int i = 0; i < rn && i < wn; i++) {
		if (memcmp(&rb[i], &wb[i], sizeof(*rb))) {
			fprintf(stderr, "  branch %d:\n", i);
			print_branch("libipt", &rb[i]);
			print_branch("walker", &wb[i]);
			fprintf(stderr, "    cycles: libipt %u, walker %u\n", rb[i].cycles,
				wb[i].cycles);
			break;
		}
	}
	for (int i = 0; dump && i < (rn > wn ? rn : wn); i++) {
		fprintf(stderr, "  %d:\n", i);
		if (i < rn)
			print_branch("libipt", &rb[i]);
		if (i < wn)
			print_branch("walker", &wb[i]);
	}
	for (int i = 0; i < rne && i < ERRORS_SHOWN; i++)
		fprintf(stderr, "  libipt error at %llu: %s (%d)\n",
			(unsigned long long)re[i].offset, auxsample_strerror(re[i].error),
			re[i].lib_error);
	if (buf && dump) {
		for (size_t i = ws.decode_start; i < len; i++)
			fprintf(stderr, "%02x%s", buf[i],
				(i - ws.decode_start) % 32 == 31 ? "\n" : " ");
		fprintf(stderr, "\n");
	}
	fprintf(stderr, "  end_ip %#llx/%#llx syncs %llu/%llu\n",
		(unsigned long long)rs.end_ip, (unsigned long long)ws.end_ip,
		(unsigned long long)rs.syncs, (unsigned long long)ws.syncs);
	fprintf(stderr, "  start %llu/%llu underflows %llu/%llu\n",
		(unsigned long long)rs.decode_start, (unsigned long long)ws.decode_start,
		(unsigned long long)rs.underflows, (unsigned long long)ws.underflows);
	return -1;
}

/* Both backends on one snippet: 0 when they agree in everything public. */
int pair__compare(struct pair *pr, const uint8_t *buf, size_t len, unsigned int max)
{
	int rn = auxsample_decoder__decode(pr->ref, buf, len, max);
	int wn = auxsample_decoder__decode(pr->walker, buf, len, max);

	return pair__results(pr, pr->ref, rn, wn, buf, len, true);
}

/* Both backends begin the stream of @len bytes at @buf: 0 when alike. */
int pair__stream_begin(struct pair *pr, const uint8_t *buf, size_t len, unsigned int max)
{
	int rn = pair_view__begin(&pr->views[0], pr->ref, buf, len, max);
	int wn = pair_view__begin(&pr->views[1], pr->walker, buf, len, max);

	pr->nr_cuts = 0;
	pr->max = max;
	pr->ref_lost = false;

	pr->result = rn;
	if (rn == wn)
		return 0;
	fprintf(stderr, "  stream of %zu bytes: libipt %d, walker %d\n", len, rn, wn);
	return -1;
}

/* What the packets up to a snippet's end say (pair__scan_to()). */
struct pair_end {
	uint64_t	stop;			/* the end of its last TIP.PGD, 0 if none */
	uint64_t	cut_from, cut_to;	/* the packet the end cuts; both the end if none */
};

/*
 * The packets of @trace up to @end, by libipt's packet decoder.  A
 * snippet's end may cut the timing packet after its TIP.PGD: the streams
 * on the whole trace scan it as timing, and the stop stays the snippet's.
 */
static void pair__scan_to(const uint8_t *trace, size_t len, uint64_t end, struct pair_end *pe)
{
	struct pt_packet_decoder *pkt;
	struct pt_packet packet;
	struct pt_config cfg;
	uint64_t offset;

	*pe = (struct pair_end){ .cut_from = end, .cut_to = end };
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)trace;
	cfg.end = (uint8_t *)trace + len;
	pkt = pt_pkt_alloc_decoder(&cfg);
	if (!pkt)
		return;
	for (int status = pt_pkt_sync_forward(pkt); status >= 0;
	     status = pt_pkt_sync_forward(pkt)) {
		while (!pt_pkt_get_offset(pkt, &offset) && offset < end &&
		       pt_pkt_next(pkt, &packet, sizeof(packet)) > 0) {
			if (offset + packet.size > end) {
				pe->cut_from = offset;
				pe->cut_to = offset + packet.size;
				goto out;
			}
			if (packet.type == ppt_tip_pgd)
				pe->stop = offset + packet.size;
		}
		if (offset >= end)
			break;
	}
out:
	pt_pkt_free_decoder(pkt);
}

/*
 * libipt's stream of the trace cut at @cut, the stream's cuts made: 0
 * when the walker's results are alike (nothing said).
 */
static int pair__stream_cut(struct pair *pr, uint64_t cut, int wn)
{
	struct auxsample_decoder *ref = auxsample_decoder__new(pr->ref_config, NULL);
	uint64_t start = pr->cuts[pr->nr_cuts - 1][0], end = pr->cuts[pr->nr_cuts - 1][1];
	int rn = -1, err = -1;

	if (!ref)
		return -1;
	auxsample_decoder__set_sample_ip(ref, pr->sample_ip);
	if (auxsample_decoder__stream_begin(ref, pr->views[0].trace, cut, pr->max) >= 0) {
		for (size_t i = 0; i < pr->nr_cuts; i++) {
			uint64_t to = pr->cuts[i][1] < cut ? pr->cuts[i][1] : cut;

			rn = auxsample_decoder__stream_to(ref, pr->cuts[i][0] < to ?
							  pr->cuts[i][0] : to, to);
		}
		/* The packet left out is the snippet's bytes all the same. */
		pr->ref_short = cut < end ? end - cut : 0;
		err = pair__results(pr, ref, rn, wn, NULL, end - start, false);
		pr->ref_short = 0;
	}
	auxsample_decoder__delete(ref);
	return err;
}

/*
 * Whether libipt's stream lost the snippet's stop only to what follows
 * its TIP.PGD within the snippet: its errors are all after the stop
 * (a TMA without its TSC among the timing packets there, which libipt
 * looks at before it hands the stop over, and the walker has no need
 * to).  libipt has no answer for that snippet then.
 */
static bool pair__lost_after_stop(struct pair *pr, uint64_t stop)
{
	const struct auxsample_decode_error *errors;
	int n = auxsample_decoder__errors(pr->ref, &errors);

	if (!stop || n <= 0)
		return false;
	for (int i = 0; i < n; i++) {
		if (errors[i].offset < stop)
			return false;
	}
	return true;
}

/*
 * libipt's stream reads on past a snippet's stop, and an error there can
 * cost it the stop (its event queue overflowing on FUPs with tracing
 * off: pt_blk_next() fails before the TIP.PGD's event is handed over),
 * where libipt on the bytes up to the snippet's end decodes its
 * branches.  A snippet's results must not depend on what follows it: the
 * walker's are held against that stream's, the same cuts made, with the
 * packet the end cuts whole (a CYC, whose cycles count) or, where that
 * fails, left out (a TMA without its TSC, which libipt's look past the
 * stop fails on); or, where libipt's errors all follow the stop's
 * TIP.PGD, taken as they are (pair__lost_after_stop()).
 * From there on libipt's stream has another history than the walker's,
 * and libipt none that could be the walker's: the rest of the stream is
 * not compared.
 */
static int pair__stream_truncated(struct pair *pr, int rn, int wn)
{
	uint64_t end = pr->cuts[pr->nr_cuts - 1][1];
	struct pair_end pe;
	int err;

	pair__scan_to(pr->views[0].trace, pr->views[0].len, end, &pe);
	err = pair__stream_cut(pr, pe.cut_to, wn);
	if (err && pe.cut_from != pe.cut_to)
		err = pair__stream_cut(pr, pe.cut_from, wn);
	if (err && pair__lost_after_stop(pr, pe.stop))
		err = 0;
	if (err)
		return pair__results(pr, pr->ref, rn, wn, NULL, end - pr->cuts[pr->nr_cuts - 1][0],
				     true);
	pr->ref_lost = true;
	return 0;
}

/* Both backends on the stream's stretch [@start, @end): 0 when alike. */
int pair__stream_to(struct pair *pr, uint64_t start, uint64_t end)
{
	int rn = auxsample_decoder__stream_to(pr->ref, start, end);
	int wn = auxsample_decoder__stream_to(pr->walker, start, end);

	if (pr->nr_cuts == pr->cap_cuts) {
		size_t cap = pr->cap_cuts ? 2 * pr->cap_cuts : 16;
		uint64_t (*cuts)[2] = realloc(pr->cuts, cap * sizeof(*cuts));

		if (!cuts)
			return -1;
		pr->cuts = cuts;
		pr->cap_cuts = cap;
	}
	pr->cuts[pr->nr_cuts][0] = start;
	pr->cuts[pr->nr_cuts++][1] = end;
	pr->ref_stream = rn;
	if (pr->ref_lost)
		return 0;
	if (rn == -AUXSAMPLE_ERR_NOT_IN_STREAM && wn >= 0 &&
	    pair__results(pr, pr->ref, rn, wn, NULL, end - start, false))
		return pair__stream_truncated(pr, rn, wn);
	return pair__results(pr, pr->ref, rn, wn, NULL, end - start, true);
}

/*
 * @rounds snippets cut out of @trace (@len bytes) at random, up to 8 KiB,
 * with up to three bits flipped, at 64 and 1024 branches in turn, each
 * round's sample IP from @sample_ip(): 0 when both backends agree on all.
 */
int pair__cut_flipped(struct pair *pr, const uint8_t *trace, size_t len, uint32_t seed,
		      int rounds, uint64_t (*sample_ip)(void *arg, int round), void *arg)
{
	uint8_t *buf = malloc(8192);
	int ret = -1;

	for (int round = 0; buf && round < rounds; round++) {
		size_t size, start;

		seed = seed * 1103515245 + 12345;
		size = 1 + (seed >> 8) % 8192;
		if (size > len)
			size = len;
		seed = seed * 1103515245 + 12345;
		start = (seed >> 8) % (len - size + 1);
		memcpy(buf, trace + start, size);
		for (int k = 0; k < round % 4; k++) {
			seed = seed * 1103515245 + 12345;
			buf[(seed >> 8) % size] ^= 1 << (seed % 8);
		}
		pair__set_sample_ip(pr, sample_ip(arg, round));
		if (pair__compare(pr, buf, size, round % 2 ? 64 : 1024)) {
			fprintf(stderr, "  round %d: [%zu, +%zu)\n", round, start, size);
			for (size_t i = 0; i < size; i++) {
				if (buf[i] != trace[start + i])
					fprintf(stderr, "  flipped at %zu: %02x, was %02x\n", i,
						buf[i], trace[start + i]);
			}
			goto out;
		}
	}
	ret = buf ? 0 : -1;
out:
	free(buf);
	return ret;
}
