// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Intel PT inputs that hung or crashed a decoder, on the real
 * recordings' code (pt-recording.c): the repro files of
 * ../shared/data/repro, and trace crafted after what libipt did with
 * corrupt packets after a stop and with a full event queue.
 */
#include <stdlib.h>
#include <string.h>
#include <auxsample/auxsample.h>
#include <intel-pt.h>
#include "tests.h"
#include "test-data.h"
#include "pt-recording.h"

/*
 * Inputs that hung the decoder (../shared/data/repro): 4 header bytes,
 * then the snippet.  h[0] bit 4: a flow callback; bits 5-6: 0 decode,
 * 1 stream, 2 decode twice, 3 stream then decode; h[1] the branches
 * asked for (0: 64); h[2], h[3] where the stream is cut, in 256ths of
 * its length.  The code is the glibc static hello's.
 */
#define REPRO_TIMEOUT	30	/* seconds, under a sanitizer on a busy machine */

struct pt_repro {
	struct recording	r;
	const uint8_t		*buf;
	size_t			len;
	unsigned int		mode;
	unsigned int		max;
	uint8_t			cut[2];		/* stream cut points, in 256ths */
	uint64_t		flows;
};

static void pt_repro__flow(const struct auxsample_flow *flow, void *context)
{
	struct pt_repro *rp = context;

	rp->flows++;
}

/* What the decoder says of the repro: an error counted, or no sync. */
static int pt_repro__check(struct auxsample_decoder *dec, int n, const char *what)
{
	struct auxsample_stats stats;

	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	pr_test("%s: %d, %llu instructions, %llu errors\n", what, n,
		(unsigned long long)stats.insns, (unsigned long long)stats.errors);
	if (n < 0 && n != -AUXSAMPLE_ERR_NOSYNC && n != -AUXSAMPLE_ERR_UNSUPPORTED) {
		fprintf(stderr, "  %s: %s\n", what, auxsample_strerror(n));
		return TEST_FAIL;
	}
	return TEST_OK;
}

static int pt_repro__run(void *arg)
{
	struct pt_repro *rp = arg;
	struct auxsample_decoder *dec = rp->r.dec;
	struct auxsample_stats stats;
	int ret = TEST_OK, n;

	if (rp->mode & 1) {
		n = auxsample_decoder__stream_begin(dec, rp->buf, rp->len, rp->max);
		/* Stream to the cut points, then to the end. */
		for (int i = 0; !n && i < 3; i++) {
			uint64_t end = i < 2 ? rp->len * rp->cut[i] / 256 : rp->len;

			n = auxsample_decoder__stream_to(dec, 0, end);
			ret |= pt_repro__check(dec, n, "stream");
			n = 0;
		}
		ret |= pt_repro__check(dec, n, "stream");
	}
	if (rp->mode != 1) {
		n = auxsample_decoder__decode(dec, rp->buf, rp->len, rp->max);
		ret |= pt_repro__check(dec, n, "decode");
	}
	if (rp->mode == 2) {
		n = auxsample_decoder__decode(dec, rp->buf, rp->len, rp->max);
		ret |= pt_repro__check(dec, n, "decode again");
	}
	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	if (ret == TEST_OK && !stats.errors) {
		fprintf(stderr, "  the corrupt snippet decoded without an error\n");
		ret = TEST_FAIL;
	}
	return ret;
}

static int check_pt_repro(const char *name)
{
	struct auxsample_config config;
	struct pt_repro rp = {};
	uint8_t *file;
	size_t size;
	int ret;

	file = read_data(name, &size);
	if (!file) {
		test_skip_reason = "no ../shared/data/repro (set AUXSAMPLE_DATA)";
		return TEST_SKIP;
	}
	ret = recording__load(&rp.r, "v2022-06-glibc-static/test_simple.tracedir");
	if (ret != TEST_OK || size < 4)
		goto out;
	rp.buf = file + 4;
	rp.len = size - 4;
	rp.mode = (file[0] >> 5) & 3;
	rp.max = file[1] ?: 64;
	rp.cut[0] = file[2];
	rp.cut[1] = file[3];
	if (file[0] & 0x10) {
		/* The same decoder, with a flow callback. */
		auxsample_decoder__delete(rp.r.dec);
		config = (struct auxsample_config){
			.size = sizeof(config),
			.type = AUXSAMPLE_TRACE_INTEL_PT,
			.pt = { .family = 6, .model = 85, .stepping = 4 },
			.read_memory = elf_program__read,
			.context = &rp.r.prog,
			.flow = pt_repro__flow,
			.flow_context = &rp,
		};
		rp.r.dec = auxsample_decoder__new(&config, NULL);
		if (!rp.r.dec) {
			ret = TEST_FAIL;
			goto out;
		}
	}
	ret = test_run_bounded(pt_repro__run, &rp, REPRO_TIMEOUT);
out:
	recording__exit(&rp.r);
	free(file);
	return ret;
}

/* A loop of direct jumps, reached through corrupt trace: no end, once. */
static int test_repro_jump_loop(void)
{
	return check_pt_repro("repro/REPRO-pt-hang-direct-jump-loop.bin");
}

/*
 * The glibc static hello's trace from a PSB to a TIP.PGD that stops it,
 * then what fuzz-pt made of the next snippet's: MODE.Exec, a FUP with
 * tracing off and TNTs, which libipt's pt_blk_event() fails on while it
 * hands the stop's event over (fuzz/regress/pt/walker-stream-stop-then-bad-query.bin)...
 */
static const uint8_t stop_then_bad_query[] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x19, 0x10, 0x35, 0x32, 0x1b, 0xf3, 0xbb, 0x1e,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x73, 0x0a, 0x6e,
	0x00, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x0c, 0x00, 0x02, 0x23,
	0x00, 0x00, 0x4f, 0x04, 0x99, 0x01, 0x71, 0xa0, 0x16, 0x40, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x2f, 0x14, 0x59, 0x35, 0x87, 0x18, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x0c, 0xc3, 0xc8, 0x68, 0x00, 0x90,
	0x61, 0x00, 0x00, 0x00, 0x02, 0x23, 0x00, 0x00, 0xd7, 0x0e, 0x2f, 0x59,
	0xc2, 0x77, 0x18, 0x59, 0x59, 0xcf, 0x77, 0x18, 0x59, 0xd8, 0x87, 0x3d,
	0x59, 0xd9, 0x77, 0x18, 0x33, 0x77, 0x18, 0x59, 0x34, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x4f, 0x04, 0x99, 0x01, 0x3d, 0xa0, 0xbe, 0xbe,
	0xbe, 0xbe, 0xbe, 0xbe, 0xbe, 0x00, 0x00,
};

/*
 * ... and one whose next snippet is FUPs with tracing off, which fill
 * libipt's event queue while it reads on past the TIP.PGD, before it
 * hands the stop's event over: pt_blk_next() fails
 * (fuzz/regress/pt/walker-stream-stop-then-evq-full.bin).
 */
static const uint8_t stop_then_evq_full[] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x23, 0x99, 0x01, 0x71, 0xa0, 0x16, 0x40,
	0x00, 0x00, 0x00, 0xc8, 0x68, 0x90, 0x61, 0xff, 0x77, 0x59, 0xcf, 0x00,
	0x00, 0x3d, 0x3d, 0x3d, 0x3d, 0x3d, 0x3d, 0x3d, 0x00, 0x00, 0x00, 0x00,
	0x3d, 0x3d, 0x3d, 0x3d, 0x3d, 0x3d, 0x3d, 0x3d, 0x3d, 0x3d, 0x77, 0x3d,
	0x77, 0x0e, 0xc4, 0x0e,
};

static const struct stop_then_corrupt {
	const uint8_t	*trace;
	size_t		len;
	size_t		end;		/* the stopped snippet's */
	unsigned int	branches;	/* libipt's of it, decoded alone */
	/*
	 * libipt's stream keeps the stop, and libipt decoding the whole
	 * alone gives its branches after the gap of the error
	 */
	bool		ref_keeps;
} stops_then_corrupt[] = {
	{ stop_then_bad_query, sizeof(stop_then_bad_query), 91, 8, true },
	{ stop_then_evq_full, sizeof(stop_then_evq_full), 37, 8, false },
};

/*
 * A stream's snippet ends at a stop that corrupt trace follows.  libipt
 * decoding the snippet alone never reads that trace: the walker's stream
 * gives its branches, and so does libipt's where libipt hands the stop
 * over before it fails on what follows (pt_flow__next_event(): decoded
 * whole, the stop's branches come before the error's gap); where it
 * cannot, it says the snippet is not in the stream, to be decoded alone.
 */
static int check_stop_then_corrupt(struct recording *r, const struct stop_then_corrupt *c)
{
	const struct auxsample_branch *alone, *streamed;
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.pt_decoder = AUXSAMPLE_PT_DECODER_LIBIPT,
		.pt = { .family = 6, .model = 85, .stepping = 4 },
		.read_memory = elf_program__read,
		.context = &r->prog,
	};
	struct auxsample_decoder *dec = auxsample_decoder__new(&config, NULL);
	struct auxsample_branch kept[8];
	struct pair pr;
	int ret = TEST_FAIL;
	int n;

	if (!dec)
		return TEST_FAIL;
	if (c->ref_keeps) {
		const struct auxsample_branch *whole;

		n = auxsample_decoder__decode(dec, c->trace, c->len, 64);
		if (!T_CHECK(c->branches <= ARRAY_SIZE(kept)) ||
		    !T_CHECK(n == (int)c->branches + 1) ||
		    !T_CHECK(auxsample_decoder__branches(dec, &whole) == n) ||
		    !T_CHECK(whole[0].kind == AUXSAMPLE_BR_GAP))
			goto out_dec;
		memcpy(kept, whole + 1, c->branches * sizeof(*whole));
	}
	n = auxsample_decoder__decode(dec, c->trace, c->end, 64);
	if (!T_CHECK(n == (int)c->branches) ||
	    !T_CHECK(auxsample_decoder__branches(dec, &alone) == n))
		goto out_dec;
	if (c->ref_keeps && !T_CHECK(!memcmp(kept, alone, n * sizeof(*alone))))
		goto out_dec;
	if (pair__init(&pr, &config))
		goto out;
	/* Alike, or the walker as libipt on the trace up to the snippet's end */
	if (pair__stream_begin(&pr, c->trace, c->len, 64) ||
	    pair__stream_to(&pr, 0, c->end))
		goto out;
	if (!T_CHECK(auxsample_decoder__branches(pr.walker, &streamed) == n) ||
	    !T_CHECK(!memcmp(alone, streamed, n * sizeof(*alone))))
		goto out;
	if (c->ref_keeps ? !T_CHECK(pr.ref_stream == n) :
			     !T_CHECK(pr.ref_stream == -AUXSAMPLE_ERR_NOT_IN_STREAM))
		goto out;
	ret = TEST_OK;
out:
	pair__exit(&pr);
out_dec:
	auxsample_decoder__delete(dec);
	return ret;
}

static int test_stream_stop_then_corrupt(void)
{
	struct recording r;
	int ret = recording__load(&r, "v2022-06-glibc-static/test_simple.tracedir");

	for (size_t i = 0; ret == TEST_OK && i < ARRAY_SIZE(stops_then_corrupt); i++) {
		ret = check_stop_then_corrupt(&r, &stops_then_corrupt[i]);
		if (ret != TEST_OK)
			fprintf(stderr, "  the %zu-byte stream, stopped at %zu\n",
				stops_then_corrupt[i].len, stops_then_corrupt[i].end);
	}
	recording__exit(&r);
	return ret;
}

/*
 * The FUPs with tracing off fill libipt's event queue, which says
 * -pte_nomem: a decode error of corrupt trace, not out of memory, with
 * either decoder.
 */
static int check_evq_full(struct recording *r, enum auxsample_pt_decoder which)
{
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.pt_decoder = which,
		.pt = { .family = 6, .model = 85, .stepping = 4 },
		.read_memory = elf_program__read,
		.context = &r->prog,
	};
	struct auxsample_decoder *dec = auxsample_decoder__new(&config, NULL);
	const struct auxsample_decode_error *errs;
	int n, full = 0, ret = TEST_OK;

	if (!dec)
		return TEST_FAIL;
	auxsample_decoder__decode(dec, stop_then_evq_full, sizeof(stop_then_evq_full), 64);
	n = auxsample_decoder__errors(dec, &errs);
	for (int i = 0; i < n; i++) {
		if (errs[i].lib_error != -pte_nomem)
			continue;
		full++;
		if (!T_CHECK(errs[i].error == -AUXSAMPLE_ERR_DECODE))
			ret = TEST_FAIL;
	}
	if (!T_CHECK(full > 0))
		ret = TEST_FAIL;
	auxsample_decoder__delete(dec);
	return ret;
}

static int test_evq_full(void)
{
	struct recording r;
	int ret = recording__load(&r, "v2022-06-glibc-static/test_simple.tracedir");

	if (ret == TEST_OK)
		ret = check_evq_full(&r, AUXSAMPLE_PT_DECODER_LIBIPT);
	if (ret == TEST_OK)
		ret = check_evq_full(&r, AUXSAMPLE_PT_DECODER_WALKER);
	recording__exit(&r);
	return ret;
}

const struct test tests_pt_repro[] = {
	{ "PT repro: a loop of direct jumps ends in a decode error", test_repro_jump_loop },
	{ "real PT stream: a stop that corrupt trace follows is its snippet's",
	  test_stream_stop_then_corrupt },
	{ "real PT: libipt's full event queue is corrupt trace, not out of memory",
	  test_evq_full },
	{ NULL, NULL },
};
