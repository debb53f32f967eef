// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Intel PT walker (pt-walk.c) against libipt's block decoder on the
 * trace of random programs with their kernel traced too (syscalls and
 * interrupts as far branches, the sample's PMI stopping the trace in the
 * kernel), and with overflows (packets lost, then an OVF bound to a FUP
 * or to a TIP.PGE): both backends must give the same branches, call
 * chain, errors and statistics, and the walker must walk them itself.
 */
#include <stdlib.h>
#include <string.h>
#include <auxsample/auxsample.h>
#include <auxsample/pt-writer.h>
#include "tests.h"
#include "pt-program.h"

struct krun {
	struct program			*prog;
	struct program			*kern;
	struct auxsample_pt_writer	*w;
	struct pair			pair;
	size_t				ends[4096];
	uint64_t			ips[4096];
	unsigned int			nr_ends;
	unsigned int			ovfs;	/* OVF packets in the trace */
	/* in libipt's results: kernel branches, interrupts, overflow errors */
	unsigned int			kernel;
	unsigned int			intr;
	unsigned int			overflows;
};

#define KERNEL_START	0xffff800000000000ULL

/* The OVFs in the trace, as the walker's parser sees the packets. */
static unsigned int count_ovfs(const uint8_t *buf, size_t len)
{
	unsigned int n = 0;

	for (size_t i = 0; i + 1 < len; i++)
		n += buf[i] == 0x02 && buf[i + 1] == 0xf3;
	return n;
}

/* @kernel: its kernel traced too; @ovf: an overflow every ~@ovf instructions. */
static int krun__init(struct krun *r, uint32_t seed, bool kernel, unsigned int ovf,
		      bool noretcomp, bool cyc)
{
	struct auxsample_pt_writer_config wcfg = {
		.size = sizeof(wcfg), .psb_period = 2048, .noretcomp = noretcomp,
		.tsc = 1, .mtc = 1, .mtc_period = 3, .tsc_per_ctc = 2, .cbr = 20, .nom_freq = 20,
		.cyc = cyc,
	};
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.pt = { .family = 6, .model = 85, .stepping = 4, .cyc = cyc },
		.read_memory = read_program,
		.kernel_start = KERNEL_START,
	};
	const uint8_t *buf;
	size_t len;

	memset(r, 0, sizeof(*r));
	r->prog = malloc(sizeof(*r->prog));
	r->kern = malloc(sizeof(*r->kern));
	r->w = auxsample_pt_writer__new(&wcfg);
	if (!r->prog || !r->kern || !r->w)
		return -1;
	program__generate(r->prog, seed);
	program__generate_kernel(r->kern, seed + 1000);
	r->prog->kern = kernel ? r->kern : NULL;
	r->prog->ovf = ovf;
	config.context = r->prog;
	if (pair__init(&r->pair, &config))
		return -1;
	if (program__run(r->prog, r->w, 200000, cyc, r->ends, r->ips, &r->nr_ends,
			 ARRAY_SIZE(r->ends)))
		return -1;
	buf = auxsample_pt_writer__data(r->w, &len);
	r->ovfs = count_ovfs(buf, len);
	return 0;
}

/* What libipt found in the snippet just compared: the tests' ground covered. */
static void krun__count(struct krun *r)
{
	const struct auxsample_decode_error *err;
	const struct auxsample_branch *br;
	int n = auxsample_decoder__branches(r->pair.ref, &br);

	for (int i = 0; i < n; i++) {
		r->kernel += br[i].from >= KCODE_BASE;
		r->intr += br[i].kind == AUXSAMPLE_BR_INTR;
	}
	n = auxsample_decoder__errors(r->pair.ref, &err);
	for (int i = 0; i < n; i++)
		r->overflows += err[i].error == -AUXSAMPLE_ERR_OVERFLOW;
}

static void krun__exit(struct krun *r)
{
	pair__exit(&r->pair);
	auxsample_pt_writer__delete(r->w);
	free(r->kern);
	free(r->prog);
}

/*
 * Snippets as AUX samples take them, the 4 KiB before each sample's
 * end, at several depths, with and without the sample's IP.
 */
static int check_kernel_samples(uint32_t seed, bool kernel, unsigned int ovf, bool noretcomp,
				bool cyc)
{
	struct krun r;
	const uint8_t *buf;
	size_t len;
	int ret = TEST_FAIL;

	if (krun__init(&r, seed, kernel, ovf, noretcomp, cyc)) {
		fprintf(stderr, "  seed %u: the program did not run\n", seed);
		goto out;
	}
	buf = auxsample_pt_writer__data(r.w, &len);
	for (unsigned int i = 0; i < r.nr_ends; i++) {
		size_t end = r.ends[i], start = end > 4096 ? end - 4096 : 0;

		for (unsigned int n = 0, max = 16; max <= 256; n++, max *= 4) {
			pair__set_sample_ip(&r.pair, (i + n) % 2 ? r.ips[i] : 0);
			if (pair__compare(&r.pair, buf + start, end - start, max)) {
				fprintf(stderr, "  seed %u, snippet [%zu, %zu), %u branches\n",
					seed, start, end, max);
				goto out;
			}
			krun__count(&r);
		}
	}
	/* kernel branches, interrupts, overflows decoded; OVF packets */
	pr_test("seed %u%s%s%s: %u of %u walked, %u samples; kernel %u, intr %u, OVF %u/%u\n",
		seed, kernel ? " kernel" : "", ovf ? " OVF" : "", cyc ? " CYC" : "",
		r.pair.walked, r.pair.decodes, r.nr_ends, r.kernel, r.intr, r.overflows, r.ovfs);
	/* The walker's own: it must not have handed any to libipt. */
	if (!T_CHECK(r.nr_ends > 10 && r.pair.walked == r.pair.decodes))
		goto out;
	/* The kernel's code and its interrupts, and the overflows, were there. */
	if (!T_CHECK(!kernel || (r.kernel > 100 && r.intr > 10)))
		goto out;
	if (!T_CHECK(!ovf || (r.ovfs > 5 && r.overflows > 5)))
		goto out;
	ret = TEST_OK;
out:
	krun__exit(&r);
	return ret;
}

static int test_kernel(void)
{
	for (uint32_t seed = 1; seed <= 4; seed++) {
		if (check_kernel_samples(seed + 500, true, 0, false, false) ||
		    check_kernel_samples(seed + 600, true, 0, true, false))
			return TEST_FAIL;
	}
	return TEST_OK;
}

static int test_kernel_cyc(void)
{
	for (uint32_t seed = 1; seed <= 3; seed++) {
		if (check_kernel_samples(seed + 700, true, 0, false, true))
			return TEST_FAIL;
	}
	return TEST_OK;
}

/* Overflows in user-only trace (OVF with a FUP, or a TIP.PGE) and kernel trace. */
static int test_overflow(void)
{
	for (uint32_t seed = 1; seed <= 3; seed++) {
		if (check_kernel_samples(seed + 800, false, 3000, false, false) ||
		    check_kernel_samples(seed + 850, true, 3000, false, false) ||
		    check_kernel_samples(seed + 900, seed & 1, 3000, false, true))
			return TEST_FAIL;
	}
	return TEST_OK;
}

/* The sample's IP every other round. */
static uint64_t kernel_cut_flipped__ip(void *arg, int round)
{
	struct krun *r = arg;

	return round % 2 ? r->ips[round % r->nr_ends] : 0;
}

/* Cut anywhere, bytes flipped, kernel and OVFs in the trace: the same, errors included. */
static int test_kernel_cut_flipped(void)
{
	struct krun r;
	const uint8_t *trace;
	size_t len;
	int ret = TEST_FAIL;

	if (krun__init(&r, 17, true, 2000, false, false))
		goto out;
	trace = auxsample_pt_writer__data(r.w, &len);
	if (pair__cut_flipped(&r.pair, trace, len, 91, 3000, kernel_cut_flipped__ip, &r))
		goto out;
	pr_test("%u of %u decodes walked\n", r.pair.walked, r.pair.decodes);
	/* Cut packets and bad ones (errors) are libipt's: the rest are walked. */
	if (!T_CHECK(r.pair.walked > r.pair.decodes / 8))
		goto out;
	ret = TEST_OK;
out:
	krun__exit(&r);
	return ret;
}

/*
 * The whole trace as one stream (perf report's and inject's decoding of
 * overlapping snippets), each sample's stretch asked for in turn: the
 * same, and the walker's own too, across the kernel and the overflows.
 */
static int check_kernel_stream(uint32_t seed, bool kernel, unsigned int ovf, bool cyc)
{
	const uint8_t *buf;
	size_t len, start = 0;
	struct krun r;
	int ret = TEST_FAIL;

	if (krun__init(&r, seed, kernel, ovf, false, cyc))
		goto out;
	buf = auxsample_pt_writer__data(r.w, &len);
	if (pair__stream_begin(&r.pair, buf, len, 64))
		goto out;
	for (unsigned int i = 0; i < r.nr_ends; i++) {
		pair__set_sample_ip(&r.pair, i % 2 ? r.ips[i] : 0);
		if (pair__stream_to(&r.pair, start, r.ends[i])) {
			fprintf(stderr, "  seed %u, stretch [%zu, %zu)\n", seed, start, r.ends[i]);
			goto out;
		}
		krun__count(&r);
		start = r.ends[i];
	}
	pr_test("seed %u%s%s%s stream: %u of %u walked; kernel %u, intr %u, OVF %u/%u\n",
		seed, kernel ? " kernel" : "", ovf ? " OVF" : "", cyc ? " CYC" : "",
		r.pair.walked, r.nr_ends, r.kernel, r.intr, r.overflows, r.ovfs);
	if (!T_CHECK(r.nr_ends > 10 && r.pair.walked == r.pair.decodes))
		goto out;
	if (!T_CHECK((!kernel || r.kernel > 100) && (!ovf || r.overflows > 5)))
		goto out;
	ret = TEST_OK;
out:
	krun__exit(&r);
	return ret;
}

static int test_kernel_stream(void)
{
	for (uint32_t seed = 1; seed <= 2; seed++) {
		if (check_kernel_stream(seed + 500, true, 0, false) ||
		    check_kernel_stream(seed + 800, false, 3000, seed & 1) ||
		    check_kernel_stream(seed + 850, true, 3000, false))
			return TEST_FAIL;
	}
	return TEST_OK;
}

const struct test tests_pt_walk_kernel[] = {
	{ "walker and libipt agree on kernel-traced sample snippets", test_kernel },
	{ "walker and libipt agree on kernel-traced snippets with CYC", test_kernel_cyc },
	{ "walker and libipt agree on snippets with overflows", test_overflow },
	{ "walker and libipt agree on cut and flipped kernel snippets", test_kernel_cut_flipped },
	{ "walker and libipt agree on kernel-traced streams with overflows", test_kernel_stream },
	{ NULL, NULL },
};

