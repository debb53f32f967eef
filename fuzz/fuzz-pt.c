// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer harness: libauxsample's Intel PT decoder, through its public
 * API, on the code of the real programs in ../shared/data/pt.
 *
 * Input: 4 header bytes, then the PT snippet (the format of the
 * REPRO-pt-*.bin files in ../shared/data/repro):
 *   h[0] bits 0-1  the program whose code is read: 0 the glibc-static
 *                  hello of v2022-06-glibc-static/test_simple.tracedir,
 *                  1 current/test_simple.raw's, 2 v2022-06-i386's,
 *                  3 none (every read fails)
 *        bit 2     AUXSAMPLE_CFG_WHOLE_SNIPPET
 *        bit 3     code from a shared image (auxsample_image, one of a family,
 *                  its files by their path) instead of the read_memory callback;
 *                  a stream moves to a sibling of the same files after its first
 *                  cut and back after its second (auxsample_decoder__set_image())
 *        bit 4     a flow callback; with bit 7, CYC (config.pt.cyc) instead
 *        bits 5-6  0 decode, 1 stream, 2 decode twice, 3 stream then decode
 *        bit 7     decode with libauxsample's Intel PT walker and with
 *                  libipt too: any difference, cycles included, aborts
 *                  (never with a flow callback, which the walker leaves
 *                  to libipt: bit 4 asks for CYC instead); bits 5-6
 *                  then the late-sample rule's sample IP: 0 none, 1 the
 *                  program's code at h[2] h[3], 2 the kernel's; 3 a
 *                  stream instead, both compared at each cut
 *   h[1]           max branches (0: 64)
 *   h[2], h[3]     stream cut points, as fractions (/256) of the length
 *
 * The programs are loaded as the unit tests load them (the loaders of
 * tests/pt-recording.c are included, not copied).  AUXSAMPLE_DATA names
 * ../shared/data if it is not beside the current directory.
 */
#include "../tools/lib/auxsample/tests/test-data.c"
#include "../tools/lib/auxsample/tests/pt-recording.c"
#include "../tools/lib/auxsample/tests/pt-pair.c"
#include "unit-tests.h"

#define NR_PROGS	3

static const char * const prog_dirs[NR_PROGS] = {
	"v2022-06-glibc-static/test_simple.tracedir",
	"current/test_simple.raw",
	"v2022-06-i386/test_simple.raw",
};

static struct elf_program progs[NR_PROGS];
static bool prog_loaded[NR_PROGS];
static struct auxsample_image *images[NR_PROGS];
/* Siblings of the same files, for streams moved from one image to another */
static struct auxsample_image *moved[NR_PROGS];
/* The images' family: their files' blocks in its cache, as perf's processes' */
static struct auxsample_image *family;

static int no_code(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	return -1;
}

static void flow_seen(const struct auxsample_flow *flow, void *context)
{
	uint64_t *sum = context;

	/* Read every field, so that ASan sees a bad flow record. */
	*sum += flow->type + flow->kind + flow->from + flow->to + flow->flags +
		flow->insns + flow->pid + flow->trace_id;
}

/*
 * The file sections of a program, as the recording maps them, known to
 * the family by their path (each program's file is its own).
 */
static struct auxsample_image *elf_program__image(const struct elf_program *p, const char *dir)
{
	struct auxsample_image *image = family ? auxsample_image__new_sibling(family) : NULL;
	char path[4096];

	if (!image)
		return NULL;
	snprintf(path, sizeof(path), "%s/" DRPT "/%s/hello", data_dir(), dir);
	for (unsigned int i = 0; i < p->nr_segs; i++) {
		const struct segment *seg = &p->segs[i];

		if (auxsample_image__add_file_id(image, path, seg->offset, seg->size, seg->vaddr,
						 path)) {
			auxsample_image__put(image);
			return NULL;
		}
	}
	return image;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char name[256];

	family = auxsample_image__new();
	for (int i = 0; i < NR_PROGS; i++) {
		snprintf(name, sizeof(name), DRPT "/%s/hello", prog_dirs[i]);
		prog_loaded[i] = !elf_program__load(&progs[i], name);
		if (!prog_loaded[i]) {
			fprintf(stderr, "fuzz-pt: no ../shared/data/%s (set AUXSAMPLE_DATA)\n", name);
			continue;
		}
		images[i] = elf_program__image(&progs[i], prog_dirs[i]);
		moved[i] = elf_program__image(&progs[i], prog_dirs[i]);
	}
	return 0;
}

/* Touch every result, so that ASan checks the arrays' bounds. */
static uint64_t results(struct auxsample_decoder *dec)
{
	const struct auxsample_decode_error *errors;
	const struct auxsample_branch *br;
	struct auxsample_stats stats;
	const uint64_t *ips;
	uint64_t sum = 0;
	int n;

	n = auxsample_decoder__branches(dec, &br);
	for (int i = 0; i < n; i++)
		sum += br[i].from + br[i].to + br[i].kind + br[i].flags;
	n = auxsample_decoder__callchain(dec, &ips);
	for (int i = 0; i < n; i++)
		sum += ips[i];
	n = auxsample_decoder__errors(dec, &errors);
	for (int i = 0; i < n; i++) {
		sum += errors[i].offset + errors[i].error + errors[i].lib_error;
		sum += strlen(auxsample_strerror(errors[i].error));
	}
	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	return sum + stats.insns;
}

/* Three samples' [start, end): their snippets end at the cuts and at the end. */
static void stream_cuts(size_t len, const uint8_t *h, uint64_t cuts[3][2])
{
	uint64_t a = len * h[2] / 256, b = len * h[3] / 256;
	uint64_t cut1 = a < b ? a : b, cut2 = a < b ? b : a;

	cuts[0][0] = 0;
	cuts[0][1] = cut1;
	cuts[1][0] = cut1 / 2;
	cuts[1][1] = cut2;
	cuts[2][0] = cut2 / 2;
	cuts[2][1] = len;
}

/*
 * The image a stream decoding @config's goes on with after its @cut-th
 * cut, as perf's goes on after its process's maps changed; NULL: none.
 */
static struct auxsample_image *image_after(const struct auxsample_config *config, int cut)
{
	for (int p = 0; config->image && cut < 2 && p < NR_PROGS; p++) {
		if (images[p] == config->image)
			return cut ? images[p] : moved[p];
	}
	return NULL;
}

static void stream(struct auxsample_decoder *dec, const struct auxsample_config *config,
		   const uint8_t *trace, size_t len, unsigned int max, const uint8_t *h)
{
	uint64_t cuts[3][2];

	if (auxsample_decoder__stream_begin(dec, trace, len, max) < 0)
		return;
	stream_cuts(len, h, cuts);
	for (int i = 0; i < 3; i++) {
		struct auxsample_image *next = image_after(config, i);

		auxsample_decoder__stream_to(dec, cuts[i][0], cuts[i][1]);
		results(dec);
		if (next)
			auxsample_decoder__set_image(dec, next);
	}
}

/* The walker's stream as libipt's, at each cut; it hands over where it must. */
static void differ_stream(struct pair *pr, const struct auxsample_config *config,
			  const uint8_t *trace, size_t len, unsigned int max, const uint8_t *h)
{
	uint64_t cuts[3][2];

	if (pair__stream_begin(pr, trace, len, max))
		abort();
	if (pr->result < 0)
		return;
	stream_cuts(len, h, cuts);
	for (int i = 0; i < 3; i++) {
		struct auxsample_image *next = image_after(config, i);

		if (pair__stream_to(pr, cuts[i][0], cuts[i][1]))
			abort();
		/* The same files: the same results as the reference's, unmoved. */
		if (next && (auxsample_decoder__set_image(pr->ref, next) ||
			     auxsample_decoder__set_image(pr->walker, next)))
			abort();
	}
}

/* The walker decodes as libipt does, or hands the snippet to it. */
static void differ(struct auxsample_config *config, const uint8_t *trace, size_t len,
		   unsigned int max, const uint8_t *h)
{
	unsigned int mode = (h[0] >> 5) & 3;
	struct pair pr;

	if (mode)
		config->kernel_start = 0xffff800000000000ULL;
	if (pair__init(&pr, config)) {
		pair__exit(&pr);
		return;
	}
	if (mode == 3) {
		differ_stream(&pr, config, trace, len, max, h);
		pair__exit(&pr);
		return;
	}
	if (mode)
		pair__set_sample_ip(&pr, mode == 1 ? 0x401000 + (h[2] << 8 | h[3]) :
					    0xffffffff81000000ULL);
	/*
	 * The second half first: the walker chooses where to count a
	 * snippet's packets from what it learnt in the decode before
	 * (pt-walk-skim.c).
	 */
	if (pair__compare(&pr, trace + len / 2, len - len / 2, max) ||
	    pair__compare(&pr, trace, len, max))
		abort();
	pair__exit(&pr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct auxsample_config config = recording__config(NULL);
	struct auxsample_decoder *dec;
	unsigned int prog, max, mode;
	uint64_t flow_sum = 0;
	const uint8_t *trace;
	size_t len;

	if (size < 4)
		return 0;
	prog = data[0] & 3;
	max = data[1] ?: 64;
	mode = (data[0] >> 5) & 3;
	trace = data + 4;
	len = size - 4;

	config.read_memory = NULL;
	if (prog < NR_PROGS && prog_loaded[prog]) {
		if ((data[0] & 8) && images[prog]) {
			config.image = images[prog];
		} else {
			config.read_memory = elf_program__read;
			config.context = &progs[prog];
		}
	} else {
		config.read_memory = no_code;
	}
	if (data[0] & 4)
		config.flags |= AUXSAMPLE_CFG_WHOLE_SNIPPET;
	if (data[0] & 0x80) {
		config.pt.cyc = !!(data[0] & 0x10);
		differ(&config, trace, len, max, data);
		return 0;
	}
	if (data[0] & 0x10) {
		config.flow = flow_seen;
		config.flow_context = &flow_sum;
	}
	dec = auxsample_decoder__new(&config, NULL);
	if (!dec)
		return 0;
	switch (mode) {
	case 0:
		auxsample_decoder__decode(dec, trace, len, max);
		results(dec);
		break;
	case 1:
		stream(dec, &config, trace, len, max, data);
		break;
	case 2:
		/* A second decode must not see the first one's state. */
		auxsample_decoder__decode(dec, trace, len, max);
		results(dec);
		auxsample_decoder__decode(dec, trace + len / 2, len - len / 2, max);
		results(dec);
		break;
	default:
		stream(dec, &config, trace, len, max, data);
		auxsample_decoder__decode(dec, trace, len, max);
		results(dec);
		break;
	}
	auxsample_decoder__delete(dec);
	return 0;
}
