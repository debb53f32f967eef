// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Intel PT walker on streams (pt-walk-stream.c) against libipt's
 * block decoder, the reference: a random program's whole trace, decoded
 * to each of its interrupts' ends in turn as perf auxsample's stream
 * decoding asks (auxsample_decoder__stream_to()), and to ends that are
 * no stop; then with bytes flipped, where the walker hands the stream to
 * libipt in the middle.  Both must give the same branches, call chain,
 * errors and statistics at every end.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <auxsample/auxsample.h>
#include <auxsample/pt-writer.h>
#include "tests.h"
#include "test-data.h"
#include "pt-program.h"

#define MAX_ENDS	4096

struct stream_run {
	struct program			*prog;
	struct auxsample_pt_writer	*w;
	struct pair			pair;
	size_t				ends[MAX_ENDS];
	uint64_t			ips[MAX_ENDS];
	unsigned int			nr_ends;
	uint32_t			seed;		/* of the ends chosen */
};

static uint32_t stream_run__rnd(struct stream_run *r)
{
	r->seed = r->seed * 1103515245 + 12345;
	return r->seed >> 8;
}

/* @seed's program run, its trace written with a PSB every @psb_period bytes. */
static int stream_run__init(struct stream_run *r, uint32_t seed, bool cyc,
			    unsigned int psb_period)
{
	struct auxsample_pt_writer_config wcfg = {
		.size = sizeof(wcfg), .psb_period = psb_period, .noretcomp = seed & 1,
		.tsc = 1, .mtc = 1, .mtc_period = 3, .tsc_per_ctc = 2, .cbr = 20, .nom_freq = 20,
		.cyc = cyc,
	};
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.pt = { .family = 6, .model = 85, .stepping = 4, .cyc = cyc },
		.read_memory = read_program,
	};

	memset(r, 0, sizeof(*r));
	r->seed = seed;
	r->prog = malloc(sizeof(*r->prog));
	r->w = auxsample_pt_writer__new(&wcfg);
	if (!r->prog || !r->w)
		return -1;
	program__generate(r->prog, seed);
	config.context = r->prog;
	if (pair__init(&r->pair, &config))
		return -1;
	return program__run(r->prog, r->w, 150000, cyc, r->ends, r->ips, &r->nr_ends,
			    MAX_ENDS);
}

static void stream_run__exit(struct stream_run *r)
{
	pair__exit(&r->pair);
	auxsample_pt_writer__delete(r->w);
	free(r->prog);
}

/*
 * The end of the @i-th decode of the stream: mostly an interrupt's, as
 * perf's samples end, sometimes the same twice (two samples at one stop),
 * a few bytes later (timing packets may follow a stop), or a byte early
 * (no stop there: not in the stream).
 */
static size_t stream_run__end(struct stream_run *r, unsigned int i, size_t len)
{
	size_t end = r->ends[i];

	switch (stream_run__rnd(r) % 8) {
	case 0:
		end += stream_run__rnd(r) % 16;
		break;
	case 1:
		end -= 1;
		break;
	default:
		break;
	}
	return end < len ? end : len;
}

/*
 * The stream of @buf's @len bytes, trace offset @base, decoded to the
 * interrupts' ends after @base: 0 when both backends agree at each.
 */
static int stream_run__compare(struct stream_run *r, const uint8_t *buf, size_t len,
			       size_t base, unsigned int max, unsigned int *decoded)
{
	if (pair__stream_begin(&r->pair, buf, len, max))
		return -1;
	for (unsigned int i = 0; i < r->nr_ends; i++) {
		size_t end, start;

		if (r->ends[i] <= base || r->ends[i] - base > len)
			continue;
		end = stream_run__end(r, i, len + base) - base;
		start = end > 4096 ? end - 4096 : 0;
		for (int twice = stream_run__rnd(r) % 4 == 0; twice >= 0; twice--) {
			if (pair__stream_to(&r->pair, start, end)) {
				fprintf(stderr, "  stream [%zu, +%zu), %u branches: to %zu\n",
					base, len, max, end);
				return -1;
			}
			*decoded += r->pair.result > 0;
		}
	}
	return 0;
}

/* Clean user-only trace: the walker must agree, and walk every stretch. */
static int check_stream(uint32_t seed, bool cyc, unsigned int *again)
{
	unsigned int decoded = 0;
	struct stream_run r;
	const uint8_t *buf;
	size_t len, base;
	int ret = TEST_FAIL;

	if (stream_run__init(&r, seed, cyc, seed & 2 ? 2048 : 8192))
		goto out;
	buf = auxsample_pt_writer__data(r.w, &len);
	/* From the start, and from the middle of a packet: its first PSB later. */
	base = r.nr_ends > 2 ? r.ends[1] - 3 : 0;
	if (stream_run__compare(&r, buf, len, 0, 64, &decoded) ||
	    stream_run__compare(&r, buf + base, len - base, base, seed % 3 ? 32 : 256, &decoded))
		goto out;
	pr_test("seed %u%s: %u of %u stretches walked, %u with branches, %u timed\n",
		seed, cyc ? " (CYC)" : "", r.pair.walked, r.pair.decodes, decoded, r.pair.timed);
	pr_test("  %u skimmed, %u of them walked again whole\n", r.pair.skims, r.pair.skims_lost);
	if (!T_CHECK(r.nr_ends > 10 && decoded > r.nr_ends))
		goto out;
	/* A skim that gave other than a whole walk is walked again, not libipt's. */
	if (!T_CHECK(r.pair.walked == r.pair.decodes && (!cyc || r.pair.timed > 0)))
		goto out;
	/* Stretches with more branches than asked for skim to the last ones. */
	if (!T_CHECK(r.pair.skims > 0))
		goto out;
	*again += r.pair.skims_lost;
	ret = TEST_OK;
out:
	stream_run__exit(&r);
	return ret;
}

static int test_stream(void)
{
	unsigned int again = 0;

	for (uint32_t seed = 1; seed <= 6; seed++) {
		if (check_stream(seed, false, &again) || check_stream(seed + 100, true, &again))
			return TEST_FAIL;
	}
	/* Some stretches were walked again (checkpoint.c), and compared too. */
	return T_CHECK(again > 0) ? TEST_OK : TEST_FAIL;
}

/*
 * Bytes flipped in the middle: the walker hands the rest of the stream to
 * libipt, which decodes it again from the start; the same at every end.
 */
static int check_stream_flipped(uint32_t seed, bool cyc)
{
	unsigned int decoded = 0;
	struct stream_run r;
	const uint8_t *trace;
	uint8_t *buf = NULL;
	size_t len;
	int ret = TEST_FAIL;

	if (stream_run__init(&r, seed, cyc, 2048))
		goto out;
	trace = auxsample_pt_writer__data(r.w, &len);
	buf = malloc(len);
	if (!buf)
		goto out;
	for (int round = 0; round < 8; round++) {
		memcpy(buf, trace, len);
		/* Most rounds in the second half, so the walk has gone some way. */
		for (int k = 0; k <= round % 3; k++) {
			size_t at = round % 4 ? len / 2 + stream_run__rnd(&r) % (len / 2) :
						stream_run__rnd(&r) % len;

			buf[at] ^= 1 << (stream_run__rnd(&r) % 8);
		}
		if (stream_run__compare(&r, buf, len, 0, round % 2 ? 16 : 64, &decoded)) {
			fprintf(stderr, "  round %d\n", round);
			goto out;
		}
	}
	pr_test("seed %u%s: %u of %u stretches walked, %u with branches\n", seed,
		cyc ? " (CYC)" : "", r.pair.walked, r.pair.decodes, decoded);
	/* Some rounds walked, some handed over. */
	if (!T_CHECK(r.pair.walked > 0 && r.pair.walked < r.pair.decodes))
		goto out;
	ret = TEST_OK;
out:
	free(buf);
	stream_run__exit(&r);
	return ret;
}

static int test_stream_flipped(void)
{
	for (uint32_t seed = 11; seed <= 14; seed++) {
		if (check_stream_flipped(seed, false) || check_stream_flipped(seed + 100, true))
			return TEST_FAIL;
	}
	return TEST_OK;
}

/* Of an image of one file, @name at CODE_BASE, in @family's family (NULL: its own). */
static struct auxsample_image *image_of(struct auxsample_image *family, const char *name,
					const char *identity)
{
	struct auxsample_image *image = family ? auxsample_image__new_sibling(family) :
						 auxsample_image__new();

	if (image && auxsample_image__add_file_id(image, name, 0, CODE_SIZE, CODE_BASE,
						  identity)) {
		auxsample_image__put(image);
		image = NULL;
	}
	return image;
}

/* 0 when @a's last decode gave what @b's did: branches and call chain. */
static int same_results(struct auxsample_decoder *a, int na, struct auxsample_decoder *b, int nb)
{
	const struct auxsample_branch *ba, *bb;
	const uint64_t *ca, *cb;
	int da, db;

	if (na != nb)
		return -1;
	if (na <= 0)
		return 0;
	auxsample_decoder__branches(a, &ba);
	auxsample_decoder__branches(b, &bb);
	da = auxsample_decoder__callchain(a, &ca);
	db = auxsample_decoder__callchain(b, &cb);
	if (memcmp(ba, bb, na * sizeof(*ba)) || da != db ||
	    (da > 0 && memcmp(ca, cb, da * sizeof(*ca))))
		return -1;
	return 0;
}

struct moved_stream {
	struct stream_run		r;
	struct program			*other;
	struct program			*code;		/* the moved decoder's process's */
	char				names[2][32];
	/* 0 the first, 1 a sibling with the same file, 2 another file, 3 a check */
	struct auxsample_image		*image[4];
	struct auxsample_image		*ref_image;	/* of another family */
	struct auxsample_decoder	*dec, *ref;
	bool				to_none;	/* the second move: to no image */
	unsigned int			equal, chained, differ;
	unsigned int			decoded;	/* stretches with branches, after it */
};

/*
 * The moved decoder reads the process's code as its backend does:
 * libipt from the image's files (through read_memory only what they
 * lack: nothing here), the walker through read_memory.
 */
static int moved_stream__init(struct moved_stream *m, enum auxsample_pt_decoder which,
			      bool to_none)
{
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.pt = { .family = 6, .model = 85, .stepping = 4 },
		.read_memory = read_program,
		.pt_decoder = which,
	};

	m->other = malloc(sizeof(*m->other));
	m->code = malloc(sizeof(*m->code));
	if (!m->other || !m->code || stream_run__init(&m->r, 41, false, 2048))
		return -1;
	program__generate(m->other, 42);
	*m->code = *m->r.prog;
	for (int k = 0; k < 2; k++) {
		snprintf(m->names[k], sizeof(m->names[k]), "/tmp/auxsample-moved-XXXXXX");
		if (program__to_file(k ? m->other : m->r.prog, m->names[k]))
			return -1;
	}
	m->ref_image = image_of(NULL, m->names[0], "prog");
	m->image[0] = image_of(NULL, m->names[0], "prog");
	for (int k = 1; m->image[0] && k < 4; k++)
		m->image[k] = image_of(m->image[0], m->names[k == 2], k == 2 ? "other" : "prog");
	if (!m->ref_image || !m->image[0] || !m->image[1] || !m->image[2] || !m->image[3])
		return -1;
	config.image = m->ref_image;
	config.context = m->r.prog;
	m->ref = auxsample_decoder__new(&config, NULL);
	config.image = m->image[0];
	config.context = m->code;
	if (which == AUXSAMPLE_PT_DECODER_LIBIPT)
		config.read_memory = read_nothing;
	m->to_none = to_none;
	m->dec = auxsample_decoder__new(&config, NULL);
	/* The decoder's is the first image's last reference. */
	auxsample_image__put(m->image[0]);
	m->image[0] = NULL;
	return m->ref && m->dec ? 0 : -1;
}

static void moved_stream__exit(struct moved_stream *m)
{
	auxsample_decoder__delete(m->dec);
	auxsample_decoder__delete(m->ref);
	for (int k = 0; k < 4; k++)
		auxsample_image__put(m->image[k]);
	auxsample_image__put(m->ref_image);
	for (int k = 0; k < 2; k++) {
		if (m->names[k][0])
			unlink(m->names[k]);
	}
	free(m->other);
	free(m->code);
	stream_run__exit(&m->r);
}

/*
 * The stream to each of the program's stops, the decoder moved to the
 * sibling at an eighth, to the other program's image at a quarter: the
 * program's code the stream walked before is less than the check walks.
 */
static int moved_stream__run(struct moved_stream *m)
{
	const uint8_t *buf;
	size_t len;

	buf = auxsample_pt_writer__data(m->r.w, &len);
	if (auxsample_decoder__stream_begin(m->dec, buf, len, 64) ||
	    auxsample_decoder__stream_begin(m->ref, buf, len, 64))
		return -1;
	for (unsigned int i = 0; i < m->r.nr_ends; i++) {
		size_t end = m->r.ends[i], start = end > 4096 ? end - 4096 : 0;
		unsigned int moved = m->r.nr_ends / 8, other_at = m->r.nr_ends / 4;
		bool other = i >= other_at;
		int n, nref;

		if (i == other_at)
			*m->code = *m->other;
		if ((i == moved || i == other_at) &&
		    auxsample_decoder__set_image(m->dec, !other ? m->image[1] :
						 m->to_none ? NULL : m->image[2]))
			return -1;
		n = auxsample_decoder__stream_to(m->dec, start, end);
		nref = auxsample_decoder__stream_to(m->ref, start, end);
		if (other) {
			m->differ += !!same_results(m->dec, n, m->ref, nref);
			m->decoded += n > 0;
			continue;
		}
		if (same_results(m->dec, n, m->ref, nref)) {
			pr_test("stop %u of %u: %d branches, %d unmoved\n", i, m->r.nr_ends, n,
				nref);
			return -1;
		}
		m->equal++;
		if (i >= moved && n > 0) {
			const uint64_t *chain;

			m->chained += auxsample_decoder__callchain(m->dec, &chain) > 0;
		}
	}
	return 0;
}

/*
 * A stream whose process's maps changed (auxsample_decoder__set_image()):
 * the decoder goes on with the calls it saw, and reads the new image's
 * code, none of the old's (libipt reads the files; the walker reads
 * read_memory, and keys the blocks by the image's files).  A random
 * program's file in one image; an eighth into its stream the decoder
 * moves to a sibling with the same file, and the first image goes: every
 * stretch is as a decoder that never moved gives it, call chain and all.
 * At a quarter the process maps another program's file where the
 * program was, and the decoder moves to an image of it, or to none: the
 * stretches are not the program's any more.  A sibling with the
 * program's file then walks the program as libipt does: the other
 * program's code did not reach the family as the program's.  Both
 * backends.
 */
static int test_stream_set_image(void)
{
	for (int round = 0; round < 4; round++) {
		enum auxsample_pt_decoder d = round & 1 ? AUXSAMPLE_PT_DECODER_WALKER :
							  AUXSAMPLE_PT_DECODER_LIBIPT;
		bool to_none = round & 2;
		struct moved_stream m = {};
		struct pair check;
		struct auxsample_config config = {
			.size = sizeof(config),
			.type = AUXSAMPLE_TRACE_INTEL_PT,
			.pt = { .family = 6, .model = 85, .stepping = 4 },
			.read_memory = read_program,
		};
		const uint8_t *buf;
		size_t len;
		int err = -1;

		if (!T_CHECK(!moved_stream__init(&m, d, to_none) && !moved_stream__run(&m)))
			goto next;
		pr_test("%s: %u stretches as unmoved, %u of them with callers after the move; "
			"%u differ with the other program%s, %u with branches\n",
			round & 1 ? "walker" : "libipt", m.equal, m.chained, m.differ,
			to_none ? ", no image" : "", m.decoded);
		if (!T_CHECK(m.chained > 0 && m.differ > 0))
			goto next;
		/* libipt reads no memory: without an image, no code at all. */
		if (!T_CHECK(round != 2 || !m.decoded))
			goto next;
		/* The pair's walker decodes the image the stream's walker fed. */
		config.image = m.image[3];
		config.context = m.r.prog;
		err = pair__init(&check, &config);
		buf = auxsample_pt_writer__data(m.r.w, &len);
		for (unsigned int i = 0; !err && i < m.r.nr_ends; i++) {
			size_t start = m.r.ends[i] > 4096 ? m.r.ends[i] - 4096 : 0;

			err = pair__compare(&check, buf + start, m.r.ends[i] - start, 64);
		}
		pr_test("a sibling walked %u of %u snippets as libipt decodes them\n", check.walked,
			check.decodes);
		if (!T_CHECK(!err && check.walked == check.decodes))
			err = -1;
		pair__exit(&check);
next:
		moved_stream__exit(&m);
		if (err)
			return TEST_FAIL;
	}
	return TEST_OK;
}

const struct test tests_pt_stream[] = {
	{ "walker and libipt agree on streams", test_stream },
	{ "walker and libipt agree on streams with bytes flipped", test_stream_flipped },
	{ "a stream moves to its process's new image", test_stream_set_image },
	{ NULL, NULL },
};
