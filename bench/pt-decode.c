// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Intel PT decoding alone, without perf: libauxsample's two PT decoders
 * (libipt's block decoder, pt.c; the walker, pt-walk.c) on the snippets
 * of the walker's differential test (random functions run through the
 * PT writer, the 4 KiB before each interrupt), each decoded for a
 * virtual LBR of the given depth, as perf decodes a sparse sample.  The
 * program generator and executor are the test's (included, not copied).
 *
 * usage: pt-decode [libipt|walker] [DEPTH] [ROUNDS] [late] [cyc]
 *   late: with the late-sample rule, as perf decodes (the kernel's start
 *   and each interrupt's IP as the sample's)
 *   cyc: with CYC packets (perf record's cyc, the simulator's --cyc),
 *   and the cycles of the virtual LBR
 *
 * Prints CPU time per snippet, per taken branch decoded (all branches
 * since the PSB the decode starts at, not only the DEPTH kept) and per
 * instruction.  Build: see bench/README.md.
 */
#include <time.h>
#include "../tools/lib/auxsample/tests/pt-program.c"
#include "../tools/lib/auxsample/tests/test-pt-walk.c"
#include "../tools/lib/auxsample/tests/pt-pair.c"
#include "../fuzz/unit-tests.h"

#define SNIPPET		4096
#define INSNS		2000000

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	bool walker = argc < 2 || strcmp(argv[1], "libipt");
	unsigned int depth = argc > 2 ? atoi(argv[2]) : 64;
	unsigned int rounds = argc > 3 ? atoi(argv[3]) : 10;
	bool late = false, cyc = false;
	struct auxsample_pt_writer_config wcfg = {
		.size = sizeof(wcfg), .psb_period = 2048,
		.tsc = 1, .mtc = 1, .mtc_period = 3, .tsc_per_ctc = 2, .cbr = 20, .nom_freq = 20,
	};
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.pt = { .family = 6, .model = 85, .stepping = 4 },
		.read_memory = read_program,
		.pt_decoder = walker ? AUXSAMPLE_PT_DECODER_WALKER : AUXSAMPLE_PT_DECODER_LIBIPT,
	};
	static size_t ends[4096];
	static uint64_t ips[4096];
	uint64_t branches = 0, insns = 0, fallbacks = 0, decodes = 0;
	struct auxsample_pt_writer *w;
	struct program *prog = malloc(sizeof(*prog));
	struct auxsample_decoder *dec;
	unsigned int nr_ends = 0;
	const uint8_t *buf;
	double start, t;
	size_t len;

	for (int i = 4; i < argc; i++) {
		late |= !strcmp(argv[i], "late");
		cyc |= !strcmp(argv[i], "cyc");
	}
	config.kernel_start = late ? KERNEL_START : 0;
	config.pt.cyc = cyc;
	wcfg.cyc = cyc;
	w = auxsample_pt_writer__new(&wcfg);
	if (!w || !prog)
		return 1;
	program__generate(prog, 1);
	if (program__run(prog, w, INSNS, cyc, ends, ips, &nr_ends, ARRAY_SIZE(ends)))
		return 1;
	buf = auxsample_pt_writer__data(w, &len);
	config.context = prog;
	dec = auxsample_decoder__new(&config, NULL);
	if (!dec)
		return 1;
	start = cpu_seconds();
	for (unsigned int r = 0; r < rounds; r++) {
		for (unsigned int i = 0; i < nr_ends; i++) {
			size_t s = ends[i] > SNIPPET ? ends[i] - SNIPPET : 0;
			struct auxsample_stats st;

			if (late)
				auxsample_decoder__set_sample_ip(dec, ips[i]);
			auxsample_decoder__decode(dec, buf + s, ends[i] - s, depth);
			auxsample_decoder__stats(dec, &st, sizeof(st));
			branches += st.branches;
			insns += st.insns;
			fallbacks += st.pt_fallbacks;
			decodes++;
		}
	}
	t = cpu_seconds() - start;
	printf("%s depth %u%s%s: %llu snippets, %.0f branches each, %llu to libipt; "
	       "%.2f us per snippet, %.2f ns per branch, %.2f ns per instruction\n",
	       walker ? "walker" : "libipt", depth, late ? " late" : "", cyc ? " cyc" : "",
	       (unsigned long long)decodes, (double)branches / decodes,
	       (unsigned long long)fallbacks, t * 1e6 / decodes, t * 1e9 / branches,
	       t * 1e9 / insns);
	auxsample_decoder__delete(dec);
	auxsample_pt_writer__delete(w);
	free(prog);
	return 0;
}
