// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Real Intel PT recorded on a Skylake-SP server by others (DynamoRIO's
 * drpt2trace tests, ../shared/data/pt): whole buffers against their known
 * instruction counts, and windows cut out of them, as AUX samples are,
 * against the whole-buffer decode.
 */
#include <elf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <auxsample/auxsample.h>
#include <intel-pt.h>
#include "tests.h"

#define DRPT	"pt/dynamorio-drpt2trace"

struct segment {
	uint64_t	vaddr;
	uint64_t	size;
	uint64_t	offset;		/* in the ELF file */
	const uint8_t	*data;
};

struct program {
	uint8_t		*elf;
	size_t		elf_size;
	struct segment	segs[16];
	unsigned int	nr_segs;
};

static const char *data_dir(void)
{
	return getenv("AUXSAMPLE_DATA") ?: "../shared/data";
}

static uint8_t *read_file(const char *name, size_t *size)
{
	char path[4096];
	struct stat st;
	uint8_t *buf;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", data_dir(), name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	buf = fstat(fileno(f), &st) ? NULL : malloc(st.st_size ? st.st_size : 1);
	if (buf && fread(buf, 1, st.st_size, f) != (size_t)st.st_size) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf)
		*size = st.st_size;
	return buf;
}

static void program__add(struct program *p, uint64_t vaddr, uint64_t off, uint64_t size)
{
	if (p->nr_segs == ARRAY_SIZE(p->segs) || off + size > p->elf_size)
		return;
	p->segs[p->nr_segs++] = (struct segment){ vaddr, size, off, p->elf + off };
}

/* The PT_LOAD segments of a static ELF, as the loader maps them. */
static int program__load(struct program *p, const char *name)
{
	memset(p, 0, sizeof(*p));
	p->elf = read_file(name, &p->elf_size);
	if (!p->elf || p->elf_size < sizeof(Elf64_Ehdr) || memcmp(p->elf, ELFMAG, SELFMAG))
		return -1;
	if (p->elf[EI_CLASS] == ELFCLASS64) {
		const Elf64_Ehdr *eh = (const void *)p->elf;
		const Elf64_Phdr *ph = (const void *)(p->elf + eh->e_phoff);

		for (int i = 0; i < eh->e_phnum; i++) {
			if (ph[i].p_type == PT_LOAD)
				program__add(p, ph[i].p_vaddr, ph[i].p_offset, ph[i].p_filesz);
		}
	} else {
		const Elf32_Ehdr *eh = (const void *)p->elf;
		const Elf32_Phdr *ph = (const void *)(p->elf + eh->e_phoff);

		for (int i = 0; i < eh->e_phnum; i++) {
			if (ph[i].p_type == PT_LOAD)
				program__add(p, ph[i].p_vaddr, ph[i].p_offset, ph[i].p_filesz);
		}
	}
	return p->nr_segs ? 0 : -1;
}

static int program__read(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	struct program *p = context;

	for (unsigned int i = 0; i < p->nr_segs; i++) {
		const struct segment *s = &p->segs[i];

		if (addr < s->vaddr || addr >= s->vaddr + s->size)
			continue;
		if (size > s->vaddr + s->size - addr)
			size = s->vaddr + s->size - addr;
		memcpy(buf, s->data + (addr - s->vaddr), size);
		return size;
	}
	return -1;
}

/* The recording's parameters (DynamoRIO's CMakeLists). */
static struct auxsample_decoder *program__decoder(struct program *p)
{
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.pt = {
			.family = 6, .model = 85, .stepping = 4,
			.cpuid_0x15_eax = 2, .cpuid_0x15_ebx = 308,
			.mtc_freq = 3, .nom_freq = 37,
		},
		.read_memory = program__read,
		.context = p,
	};

	return auxsample_decoder__new(&config, NULL);
}

struct recording {
	struct program	prog;
	uint8_t		*pt;
	size_t		pt_size;
	struct auxsample_decoder *dec;
};

static int recording__load(struct recording *r, const char *dir)
{
	char name[256];

	memset(r, 0, sizeof(*r));
	snprintf(name, sizeof(name), DRPT "/%s/pt.bin", dir);
	r->pt = read_file(name, &r->pt_size);
	snprintf(name, sizeof(name), DRPT "/%s/hello", dir);
	if (!r->pt || program__load(&r->prog, name)) {
		test_skip_reason = "no ../shared/data/" DRPT " (set AUXSAMPLE_DATA)";
		return TEST_SKIP;
	}
	r->dec = program__decoder(&r->prog);
	return r->dec ? TEST_OK : TEST_FAIL;
}

static void recording__exit(struct recording *r)
{
	auxsample_decoder__delete(r->dec);
	free(r->pt);
	free(r->prog.elf);
}

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
	struct auxsample_decoder *whole = program__decoder(&r->prog);
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

static int no_memory(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	return -1;
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
		.read_memory = no_memory,
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
		.read_memory = no_memory,
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

	file = read_file(name, &size);
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
			.read_memory = program__read,
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
		.read_memory = program__read,
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
		if (!T_CHECK(c->branches <= ARRAY_SIZE(kept)) || !T_CHECK(n == (int)c->branches + 1) ||
		    !T_CHECK(auxsample_decoder__branches(dec, &whole) == n) ||
		    !T_CHECK(whole[0].kind == AUXSAMPLE_BR_GAP))
			goto out_dec;
		memcpy(kept, whole + 1, c->branches * sizeof(*whole));
	}
	n = auxsample_decoder__decode(dec, c->trace, c->end, 64);
	if (!T_CHECK(n == (int)c->branches) || !T_CHECK(auxsample_decoder__branches(dec, &alone) == n))
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
		.read_memory = program__read,
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
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.pt = {
			.family = 6, .model = 85, .stepping = 4,
			.cpuid_0x15_eax = 2, .cpuid_0x15_ebx = 308,
			.mtc_freq = 3, .nom_freq = 37,
		},
		.read_memory = program__read,
	};
	uint32_t seed = 4242;
	struct recording r;
	struct pair pr = { NULL };
	uint8_t *buf = NULL;
	int ret = recording__load(&r, dir);

	if (ret != TEST_OK) {
		recording__exit(&r);
		return ret;
	}
	config.context = &r.prog;
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
	{ "PT repro: a loop of direct jumps ends in a decode error", test_repro_jump_loop },
	{ "real PT stream: a stop that corrupt trace follows is its snippet's",
	  test_stream_stop_then_corrupt },
	{ "real PT: libipt's full event queue is corrupt trace, not out of memory",
	  test_evq_full },
	{ NULL, NULL },
};
