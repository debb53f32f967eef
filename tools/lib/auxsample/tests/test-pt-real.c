// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Real Intel PT recorded on a Skylake-SP server by others (DynamoRIO's
 * drpt2trace tests, ../shared/data/pt): whole buffers against their known
 * instruction counts, and windows cut out of them, as AUX samples are,
 * against the whole-buffer decode.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <auxsample/auxsample.h>
#include "tests.h"
#include "test-data.h"
#include "pt-recording.h"

static int check_insns(const char *dir, uint64_t expected)
{
	struct auxsample_stats stats;
	struct recording r;
	int ret = recording__load(&r, dir);

	if (ret == TEST_OK) {
		auxsample_decoder__decode(r.dec, r.pt, r.pt_size, 1024);
		auxsample_decoder__stats(r.dec, &stats, sizeof(stats));
		if (stats.insns != expected || stats.errors) {
			fprintf(stderr, "  %s: %llu instructions, %llu errors; expected %llu\n",
				dir, (unsigned long long)stats.insns,
				(unsigned long long)stats.errors,
				(unsigned long long)expected);
			ret = TEST_FAIL;
		}
	}
	recording__exit(&r);
	return ret;
}

static int test_hello64(void)
{
	return check_insns("current/test_simple.raw", 8);
}

static int test_hello32(void)
{
	return check_insns("v2022-06-i386/test_simple.raw", 6);
}

static int test_glibc_static(void)
{
	return check_insns("v2022-06-glibc-static/test_simple.tracedir", 59234);
}

static int same_branches(const struct auxsample_branch *a, const struct auxsample_branch *b,
			 int n)
{
	return !memcmp(a, b, n * sizeof(*a));
}

static bool has_psb(const uint8_t *buf, size_t len)
{
	static const uint8_t psb[16] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	};

	/* A PSB with room for the rest of its PSB+ after it. */
	for (size_t i = 0; i + sizeof(psb) + 64 <= len; i++) {
		if (!memcmp(buf + i, psb, sizeof(psb)))
			return true;
	}
	return false;
}

/*
 * A window that holds a PSB decodes, after it, to exactly the newest
 * branches of the decode of everything up to the window's end; one that
 * holds none decodes to nothing and says so.
 */
static int check_windows(struct recording *r, size_t size, unsigned int *synced,
			 unsigned int *windows)
{
	struct auxsample_decoder *whole = elf_program__decoder(&r->prog);
	const struct auxsample_branch *wb, *pb;
	struct auxsample_stats ws, ps;
	int ret = TEST_FAIL;

	if (!whole)
		return TEST_FAIL;
	for (size_t end = size / 2; end <= r->pt_size; end += 97) {
		size_t start = end > size ? end - size : 0;
		int nw, np;

		nw = auxsample_decoder__decode(r->dec, r->pt + start, end - start, 8192);
		auxsample_decoder__stats(r->dec, &ws, sizeof(ws));
		(*windows)++;
		if (!has_psb(r->pt + start, end - start)) {
			if (nw != -AUXSAMPLE_ERR_NOSYNC || ws.bytes_before_sync != end - start ||
			    ws.insns) {
				fprintf(stderr, "  window [%zu, %zu) has no PSB, yet decoded %d\n",
					start, end, nw);
				goto out;
			}
			continue;
		}
		(*synced)++;
		np = auxsample_decoder__decode(whole, r->pt, end, 8192);
		auxsample_decoder__branches(whole, &pb);
		auxsample_decoder__branches(r->dec, &wb);
		auxsample_decoder__stats(whole, &ps, sizeof(ps));
		if (nw < 0 || np < nw || !same_branches(wb, pb, nw) || ws.end_ip != ps.end_ip ||
		    ws.errors) {
			fprintf(stderr,
				"  window [%zu, %zu): %d branches, whole decode %d, %llu errors\n",
				start, end, nw, np, (unsigned long long)ws.errors);
			goto out;
		}
	}
	ret = TEST_OK;
out:
	auxsample_decoder__delete(whole);
	return ret;
}

/*
 * This recording was made in full-trace mode and holds a single PSB, so
 * most windows hold none: they check that nothing is guessed.  Windows
 * with many PSBs come from simulated sample-mode recordings.
 */
static int test_windows(void)
{
	static const size_t sizes[] = { 1024, 2048, 4096, 8192 };
	unsigned int synced = 0, windows = 0;
	struct recording r;
	int ret = recording__load(&r, "v2022-06-glibc-static/test_simple.tracedir");

	for (size_t i = 0; ret == TEST_OK && i < ARRAY_SIZE(sizes); i++)
		ret = check_windows(&r, sizes[i], &synced, &windows);
	recording__exit(&r);
	pr_test("%u of %u windows held a PSB\n", synced, windows);
	if (ret == TEST_OK && !synced) {
		fprintf(stderr, "  no window held a PSB\n");
		ret = TEST_FAIL;
	}
	return ret;
}

/* Corrupt and truncated snippets: errors are counted, nothing crashes. */
static int test_corrupt(void)
{
	struct auxsample_stats stats;
	uint64_t errors = 0, decoded = 0;
	uint32_t seed = 12345;
	struct recording r;
	uint8_t *buf;
	int ret = recording__load(&r, "v2022-06-glibc-static/test_simple.tracedir");

	if (ret != TEST_OK) {
		recording__exit(&r);
		return ret;
	}
	buf = malloc(r.pt_size);
	if (!buf) {
		recording__exit(&r);
		return TEST_FAIL;
	}
	for (int round = 0; round < 300; round++) {
		size_t len = r.pt_size;

		memcpy(buf, r.pt, r.pt_size);
		for (int k = 0; k < 1 + round % 8; k++) {
			seed = seed * 1103515245 + 12345;
			buf[(seed >> 8) % len] ^= 1 << (seed % 8);
		}
		if (round % 3 == 0)
			len = (seed >> 4) % r.pt_size;
		ret = auxsample_decoder__decode(r.dec, buf, len, 64);
		if (ret < 0 && ret != -AUXSAMPLE_ERR_NOSYNC) {
			fprintf(stderr, "  round %d: %s\n", round, auxsample_strerror(ret));
			ret = TEST_FAIL;
			break;
		}
		auxsample_decoder__stats(r.dec, &stats, sizeof(stats));
		errors += stats.errors;
		decoded += stats.insns;
		ret = TEST_OK;
	}
	pr_test("%llu errors, %llu instructions over 300 corrupt snippets\n",
		(unsigned long long)errors, (unsigned long long)decoded);
	if (ret == TEST_OK && !errors) {
		fprintf(stderr, "  no corruption was noticed\n");
		ret = TEST_FAIL;
	}
	free(buf);
	recording__exit(&r);
	return ret;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The glibc static hello's file sections, as the recording maps them. */
static struct auxsample_image *hello_image(const struct recording *r)
{
	const char *hello = DRPT "/v2022-06-glibc-static/test_simple.tracedir/hello";
	struct auxsample_image *image = auxsample_image__new();
	char path[4096];

	if (!image)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", data_dir(), hello);
	for (unsigned int i = 0; i < r->prog.nr_segs; i++) {
		const struct segment *seg = &r->prog.segs[i];

		if (auxsample_image__add_file(image, path, seg->offset, seg->size,
					      seg->vaddr)) {
			auxsample_image__put(image);
			return NULL;
		}
	}
	return image;
}

/* Code from files through the shared section cache, not the callback. */
static int test_image(void)
{
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.pt = { .family = 6, .model = 85, .stepping = 4 },
		.read_memory = read_nothing,
	};
	struct auxsample_decoder *dec = NULL;
	struct auxsample_stats stats;
	double t_image, t_callback;
	struct recording r;
	int ret = recording__load(&r, "v2022-06-glibc-static/test_simple.tracedir");

	if (ret != TEST_OK)
		goto out;
	ret = TEST_FAIL;
	config.image = hello_image(&r);
	if (!config.image)
		goto out;
	dec = auxsample_decoder__new(&config, NULL);
	if (!dec)
		goto out;

	t_image = now();
	for (int i = 0; i < 10; i++)
		auxsample_decoder__decode(dec, r.pt, r.pt_size, 64);
	t_image = now() - t_image;
	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	if (stats.insns != 59234 || stats.errors) {
		fprintf(stderr, "  %llu instructions, %llu errors\n",
			(unsigned long long)stats.insns, (unsigned long long)stats.errors);
		goto out;
	}
	t_callback = now();
	for (int i = 0; i < 10; i++)
		auxsample_decoder__decode(r.dec, r.pt, r.pt_size, 64);
	t_callback = now() - t_callback;
	pr_test("section cache %.2f ms, memory callback %.2f ms per decode\n",
		t_image * 100, t_callback * 100);
	ret = TEST_OK;
out:
	auxsample_decoder__delete(dec);
	/* The decoder held its own reference. */
	auxsample_image__put(config.image);
	recording__exit(&r);
	return ret;
}

#define CLONE_THREADS	2
#define CLONE_DECODES	20

struct clone_run {
	struct auxsample_config		config;		/* with a clone */
	const struct recording		*r;
	const struct auxsample_branch	*want;
	int				nr_want;
	pthread_t			tid;
	int				ret;
};

/* Decode again and again from the thread's clone: what the original gives. */
static void *clone_run__thread(void *arg)
{
	struct clone_run *run = arg;
	struct auxsample_decoder *dec = auxsample_decoder__new(&run->config, NULL);
	const struct auxsample_branch *br;

	run->ret = TEST_FAIL;
	for (int i = 0; dec && i < CLONE_DECODES; i++) {
		int nr = auxsample_decoder__decode(dec, run->r->pt, run->r->pt_size, 64);

		if (nr != run->nr_want || auxsample_decoder__branches(dec, &br) != nr ||
		    memcmp(br, run->want, nr * sizeof(*br)))
			goto out;
	}
	run->ret = dec ? TEST_OK : TEST_FAIL;
out:
	auxsample_decoder__delete(dec);
	return NULL;
}

/* Clones of an image, one per thread, decode as the image does. */
static int test_image_clone(void)
{
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.pt = { .family = 6, .model = 85, .stepping = 4 },
		.read_memory = read_nothing,
	};
	struct clone_run runs[CLONE_THREADS] = {};
	const struct auxsample_branch *want;
	struct auxsample_decoder *dec = NULL;
	struct recording r;
	int nr, started = 0;
	int ret = recording__load(&r, "v2022-06-glibc-static/test_simple.tracedir");

	if (ret != TEST_OK)
		goto out;
	ret = TEST_FAIL;
	config.image = hello_image(&r);
	dec = config.image ? auxsample_decoder__new(&config, NULL) : NULL;
	if (!dec)
		goto out;
	nr = auxsample_decoder__decode(dec, r.pt, r.pt_size, 64);
	if (nr <= 0 || auxsample_decoder__branches(dec, &want) != nr)
		goto out;
	for (; started < CLONE_THREADS; started++) {
		struct clone_run *run = &runs[started];

		run->config = config;
		run->config.image = auxsample_image__clone(config.image);
		run->r = &r;
		run->want = want;
		run->nr_want = nr;
		if (!run->config.image ||
		    pthread_create(&run->tid, NULL, clone_run__thread, run))
			break;
	}
	ret = started == CLONE_THREADS ? TEST_OK : TEST_FAIL;
	for (int i = 0; i < started; i++) {
		pthread_join(runs[i].tid, NULL);
		if (runs[i].ret != TEST_OK)
			ret = TEST_FAIL;
	}
	pr_test("%d threads x %d decodes of %d branches, each from a clone\n", started,
		CLONE_DECODES, nr);
out:
	for (int i = 0; i < CLONE_THREADS; i++)
		auxsample_image__put(runs[i].config.image);
	auxsample_decoder__delete(dec);
	auxsample_image__put(config.image);
	recording__exit(&r);
	return ret;
}

/*
 * The recording as a stream, whole and with a byte flipped, decoded to
 * ends every 61 bytes (most no stop: not in the stream) and to its end.
 */
static int check_walker_streams(struct pair *pr, const struct recording *r, uint8_t *buf,
				const char *dir)
{
	for (size_t flip = 0; flip <= r->pt_size; flip += r->pt_size / 4 + 1) {
		memcpy(buf, r->pt, r->pt_size);
		if (flip)
			buf[flip - 1] ^= 0x10;
		if (pair__stream_begin(pr, buf, r->pt_size, 64))
			return TEST_FAIL;
		for (size_t end = 61; end < r->pt_size + 61; end += 61) {
			if (end > r->pt_size)
				end = r->pt_size;
			if (pair__stream_to(pr, end > 4096 ? end - 4096 : 0, end)) {
				fprintf(stderr, "  %s: stream to %zu, flipped at %zu\n", dir, end,
					flip);
				return TEST_FAIL;
			}
		}
	}
	return TEST_OK;
}

/*
 * The Intel PT walker (--decoder=walker) against libipt on every window
 * of the recordings, whole and with bytes flipped, and on the recordings
 * as streams: the same branches,
 * call chains, errors and statistics.  Real trace has what the walker
 * leaves to libipt (32-bit code, ...): it must hand that on, not guess.
 */
static int check_walker(const char *dir, uint64_t *walked, uint64_t *decodes)
{
	struct auxsample_config config;
	uint32_t seed = 4242;
	struct recording r;
	struct pair pr = { NULL };
	uint8_t *buf = NULL;
	int ret = recording__load(&r, dir);

	if (ret != TEST_OK) {
		recording__exit(&r);
		return ret;
	}
	config = recording__config(&r.prog);
	ret = TEST_FAIL;
	buf = malloc(r.pt_size);
	if (!buf || pair__init(&pr, &config))
		goto out;
	for (size_t size = 512; size <= 8192; size *= 4) {
		for (size_t end = 1; end <= r.pt_size; end += 61) {
			size_t start = end > size ? end - size : 0;

			memcpy(buf, r.pt + start, end - start);
			if (end % 3 == 0) {
				seed = seed * 1103515245 + 12345;
				buf[(seed >> 8) % (end - start)] ^= 1 << (seed % 8);
			}
			if (pair__compare(&pr, buf, end - start, end % 2 ? 64 : 1024)) {
				fprintf(stderr, "  %s: window [%zu, %zu)\n", dir, start, end);
				goto out;
			}
		}
	}
	ret = check_walker_streams(&pr, &r, buf, dir);
out:
	*walked += pr.walked;
	*decodes += pr.decodes;
	pair__exit(&pr);
	free(buf);
	recording__exit(&r);
	return ret;
}

static int test_walker(void)
{
	static const char * const dirs[] = {
		"current/test_simple.raw",
		"v2022-06-i386/test_simple.raw",
		"v2022-06-glibc-static/test_simple.tracedir",
	};
	uint64_t walked = 0, decodes = 0;

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		int ret = check_walker(dirs[i], &walked, &decodes);

		if (ret != TEST_OK)
			return ret;
	}
	pr_test("%llu of %llu windows walked, the rest handed to libipt\n",
		(unsigned long long)walked, (unsigned long long)decodes);
	return TEST_OK;
}

const struct test tests_pt_real[] = {
	{ "real PT: the walker decodes every window as libipt", test_walker },
	{ "real PT, 64-bit hello: 8 instructions", test_hello64 },
	{ "real PT, 32-bit hello: 6 instructions", test_hello32 },
	{ "real PT, glibc static hello: 59234 instructions", test_glibc_static },
	{ "real PT windows decode as the whole buffer, or not at all", test_windows },
	{ "real PT, corrupt and truncated snippets", test_corrupt },
	{ "real PT through a shared section cache", test_image },
	{ "real PT through clones of an image, in threads", test_image_clone },
	{ NULL, NULL },
};
