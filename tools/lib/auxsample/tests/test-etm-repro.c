// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ETM/ETE inputs that crashed or hung OpenCSD through the decoder, found
 * by fuzz-etm and kept in ../shared/data/repro and fuzz/regress/etm, and
 * the crafted traces around them: each ends in decode errors, never in a
 * signal or a hang.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <auxsample/auxsample.h>
#include "tests.h"
#include "test-data.h"
#include "etm-snapshot.h"

/*
 * Inputs that crashed or hung OpenCSD through the decoder
 * (../shared/data/repro, REPRO-etm-*.bin): 8 header bytes, then the
 * trace.  h[0]: the snapshot whose sources configure the decoder, of
 * etm_snapshots[]; h[1] bit 0: all its sources, else source h[2];
 * bit 1: whole snippet; bit 2: a flow callback; bit 3: set_thread(h[3]);
 * bit 4: 'formatted' flipped; bit 5: no memory reader; bit 6: decode
 * twice; bit 7: register h[5] (TRCIDR0..13, TRCCONFIGR, TRCDEVARCH) xored
 * with h[6..7], as in fuzz-etm's inputs; h[4]: the branches asked for (0: 64).
 */
#define ETM_REPRO_TIMEOUT	60	/* seconds, under a sanitizer on a busy machine */

struct etm_repro {
	struct snapshot		*ss;
	const uint8_t		*h;
	const uint8_t		*trace;
	size_t			len;
	uint64_t		flows;
	int			errors;		/* each decode's, or -1: some */
};

static void etm_repro__flow(const struct auxsample_flow *flow, void *context)
{
	struct etm_repro *rp = context;

	rp->flows++;
}

/* The decoder the header asks for, or NULL where it refuses the configuration. */
static struct auxsample_decoder *etm_repro__decoder(struct etm_repro *rp, unsigned int first,
						    unsigned int nr)
{
	const uint8_t *h = rp->h;
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_ETM,
		.read_memory = h[1] & 0x20 ? read_nothing : snapshot__read,
		.context = rp->ss,
		.etm = {
			.sources = &rp->ss->src[first],
			.nr_sources = nr,
			.formatted = rp->ss->formatted,
		},
		.flow = h[1] & 4 ? etm_repro__flow : NULL,
		.flow_context = rp,
		.flags = h[1] & 2 ? AUXSAMPLE_CFG_WHOLE_SNIPPET : 0,
	};

	return auxsample_decoder__new(&config, NULL);
}

static void etm_repro__errors(struct auxsample_decoder *dec)
{
	const struct auxsample_decode_error *errs;
	int n = auxsample_decoder__errors(dec, &errs);

	for (int i = 0; i < n; i++)
		pr_test("  at %" PRIu64 ": %s (%d)\n", (uint64_t)errs[i].offset,
			auxsample_strerror(errs[i].error), errs[i].lib_error);
}

static int etm_repro__run(void *arg)
{
	struct etm_repro *rp = arg;
	struct snapshot *ss = rp->ss;
	const uint8_t *h = rp->h;
	unsigned int first = 0, nr = ss->nr_src;
	struct auxsample_decoder *dec;
	struct auxsample_stats stats;
	int n, ret = TEST_OK;

	if (!(h[1] & 1)) {
		first = h[2] % ss->nr_src;
		nr = 1;
	}
	if (h[1] & 0x10)
		ss->formatted = !ss->formatted;
	if (h[1] & 0x80)
		etm_repro__xor_register(&ss->src[first], h);
	dec = etm_repro__decoder(rp, first, nr);
	if (!dec) {
		/* A configuration the decoder refuses is a clear error too. */
		pr_test("decoder refused\n");
		return TEST_OK;
	}
	if (h[1] & 8)
		auxsample_decoder__set_thread(dec, h[3]);
	for (int i = 0; i < (h[1] & 0x40 ? 2 : 1); i++) {
		n = auxsample_decoder__decode(dec, rp->trace, rp->len, h[4] ?: 64);
		auxsample_decoder__stats(dec, &stats, sizeof(stats));
		pr_test("decode: %d, %" PRIu64 " instructions, %" PRIu64 " errors, %" PRIu64
			" flow records\n", n, (uint64_t)stats.insns, (uint64_t)stats.errors,
			rp->flows);
		etm_repro__errors(dec);
		if (n < 0 && n != -AUXSAMPLE_ERR_NOSYNC) {
			fprintf(stderr, "  %s\n", auxsample_strerror(n));
			ret = TEST_FAIL;
		} else if (rp->errors >= 0) {
			if (!T_CHECK(stats.errors == (uint64_t)rp->errors))
				ret = TEST_FAIL;
		} else if (n >= 0 && !stats.errors) {
			fprintf(stderr, "  the corrupt trace decoded without an error\n");
			ret = TEST_FAIL;
		}
	}
	auxsample_decoder__delete(dec);
	return ret;
}

/*
 * One input, header and trace, decoded in a child that may not crash or
 * hang, to @errors decode errors (-1: some, or no sync point).
 */
static int check_etm_input(const uint8_t *input, size_t size, int errors)
{
	struct etm_repro rp = { .errors = errors };
	int ret;

	if (size <= 8)
		return TEST_FAIL;
	rp.h = input;
	rp.trace = input + 8;
	rp.len = size - 8;
	rp.ss = snapshot__get(etm_snapshots[input[0] % ETM_SNAPSHOTS][0],
			      etm_snapshots[input[0] % ETM_SNAPSHOTS][1]);
	if (!rp.ss)
		return TEST_SKIP;
	ret = test_run_bounded(etm_repro__run, &rp, ETM_REPRO_TIMEOUT);
	snapshot__exit(rp.ss);
	return ret;
}

static int check_etm_repro(const char *name)
{
	char path[2048];
	uint8_t *file;
	size_t size;
	int ret;

	snprintf(path, sizeof(path), "%s/repro/%s", data_dir(), name);
	file = read_path(path, &size);
	if (!file) {
		test_skip_reason = "no ../shared/data/repro (set AUXSAMPLE_DATA)";
		return TEST_SKIP;
	}
	ret = check_etm_input(file, size, -1);
	free(file);
	return ret;
}

/* OpenCSD 1.3.3 used a stale iterator in TrcPktDecodeEtmV4I::mispredictAtom(). */
static int test_repro_mispredict(void)
{
	return check_etm_repro("REPRO-etm-opencsd-mispredictAtom-segv.bin");
}

/* OpenCSD 1.3.3 looped in TrcPktDecodeEtmV4I::cancelElements(). */
static int test_repro_cancel(void)
{
	return check_etm_repro("REPRO-etm-opencsd-cancelElements-hang.bin");
}

/*
 * OpenCSD 1.3.3 committed an exception before its address, and read the
 * address past the end of its P0 stack in processException() (SIGSEGV).
 * The first input is fuzz-etm's (fuzz/regress/etm), minimized: two TPIU
 * frames of juno_r1_1's sources; the second is one juno_r1_1 source's raw
 * trace, with a context between the exception and the commit.
 */
static int test_repro_exception_commit(void)
{
	static const uint8_t fuzzed[] = {
		0x00, 0x61, 0xaa, 0xdf, 0xde, 0xf8, 0xf7, 0x9a,
		0x2b, 0xee, 0xbe, 0xdb, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,
		0x80, 0x01, 0x58, 0x80, 0x58, 0x00, 0x06, 0x1d,
		0x2c, 0x59, 0x98, 0xff, 0xf6, 0x95, 0xb2, 0x74,
	};
	static const uint8_t context_between[] = {
		0x00, 0x30, 0, 0, 0, 0, 0, 0,	/* juno_r1_1, raw, no memory */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-sync */
		0x01, 0x00,			/* Trace Info */
		0x9d, 0, 0, 0, 0, 0, 0, 0, 0,	/* Address, 64-bit */
		0x06, 0x1d,			/* Exception: IRQ */
		0x80,				/* Context: same */
		0x2d, 0x05,			/* Commit 5 */
		0x01, 0x00,			/* Trace Info: skipped */
	};
	int ret = check_etm_input(fuzzed, sizeof(fuzzed), 1);

	return ret != TEST_OK ? ret : check_etm_input(context_between, sizeof(context_between), 1);
}

/* A Trace Info 5 elements deep, MAXSPEC 0: the exception after it is committed. */
static int test_repro_spec_depth(void)
{
	static const uint8_t input[] = {
		0x00, 0x30, 0, 0, 0, 0, 0, 0,	/* juno_r1_1, raw, no memory */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-sync */
		0x01, 0x04, 0x05,		/* Trace Info, speculation depth 5 */
		0x06, 0x1d,			/* Exception: IRQ */
		0x70, 0x70,			/* reserved here: not a Trace Info */
	};

	return check_etm_input(input, sizeof(input), 0);
}

/* A Q element without its address (Q packets: TRCIDR0 bit 15). */
static int test_repro_q_commit(void)
{
	static const uint8_t input[] = {
		0x00, 0xb0, 0, 0, 0, 0, 0x00, 0x80,	/* juno_r1_1, raw, no memory */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-sync */
		0x01, 0x00,				/* Trace Info */
		0x9d, 0, 0x10, 0, 0, 0, 0, 0, 0,	/* Address 0x2000 */
		0xaf,					/* Q, no address */
		0x2d, 0x01,				/* Commit 1 */
		0x01, 0x00,				/* Trace Info: skipped */
	};

	return check_etm_input(input, sizeof(input), 1);
}

/*
 * With speculation (TRCIDR8 2) a Commit after the
 * exception's address is real trace, and decodes.
 */
static int test_exception_addr_commit(void)
{
	static const uint8_t input[] = {
		0x00, 0xb0, 0, 0, 0, 8, 0x02, 0x00,	/* juno_r1_1, raw, no memory */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-sync */
		0x01, 0x00,				/* Trace Info */
		0x9d, 0, 0x10, 0, 0, 0, 0, 0, 0,	/* Address 0x2000 */
		0x06, 0x1d,				/* Exception: IRQ */
		0x9d, 0, 0x10, 0, 0, 0, 0, 0, 0,	/* Address 0x2000 */
		0x2d, 0x01,				/* Commit 1 */
		0x01, 0x00,				/* Trace Info: skipped */
	};

	return check_etm_input(input, sizeof(input), 0);
}

/*
 * OpenCSD 1.3.3's mispredictAtom() on a source with speculation:
 * fuzz-etm's input, minimized, with trace_file_cid_vmid's TRCIDR8 xored
 * with 0x76c4.
 */
static int test_repro_mispredict_speculative(void)
{
	static const uint8_t input[] = {
		0x07, 0x86, 0x00, 0x23, 0xf5, 0x38, 0xc4, 0x76,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-sync */
		0x01, 0x00,				/* Trace Info */
		0x9a, 0x49, 0x1e, 0x18, 0x0a,		/* Address 0xa183d24 */
		0xf6,					/* Atom N */
		0x34,					/* Cancel 1, mispredict */
		0x70,					/* Ignore */
	};

	return check_etm_input(input, sizeof(input), 1);
}

/*
 * After a bad packet the source syncs at the A-sync right after it: the
 * decoder halted at the packet's end, and nothing there is dropped.  Its
 * context then comes with the atom, where no memory is read: the bad
 * packet's error and the gap's.
 */
static int test_resync_after_bad_packet(void)
{
	static const uint8_t input[] = {
		0x00, 0x30, 0, 0, 0, 0, 0, 0,	/* juno_r1_1, raw, no memory */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-sync */
		0x01, 0x00,				/* Trace Info */
		0x30,					/* Mispredict */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-sync */
		0x01, 0x00,				/* Trace Info */
		0x85, 0x00, 0x08, 0x00, 0x00, 0x00,	/* Address 0x1000 */
		0x00, 0x00, 0x00, 0x31,			/* & Context */
		0xf7,					/* Atom E */
		0x01, 0x00,				/* Trace Info: skipped */
	};

	return check_etm_input(input, sizeof(input), 2);
}

/*
 * With a return stack (TRCCONFIGR.RS), OpenCSD 1.3.3 popped it empty
 * committing an exception, reset itself there and went on with the
 * exception it had deleted (fuzz-etm's input, minimized: tme_test's
 * sources).
 */
static int test_repro_return_stack(void)
{
	static const uint8_t input[] = {
		0x0b, 0x81, 0x00, 0x00, 0x00, 0x0e, 0x00, 0x10,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-sync */
		0x01, 0x00,				/* Trace Info */
		0x82, 0x02, 0x02, 0x00, 0x00, 0x11,	/* Address 0x408 & Context */
		0x9a, 0x4a, 0x0b, 0x01, 0x00,		/* Address 0x11728 */
		0xc0,					/* Atoms EEEE */
		0x06, 0x05,				/* Exception: call */
		0x91,					/* Address match 1 */
	};

	return check_etm_input(input, sizeof(input), 1);
}

/*
 * OpenCSD 1.3.3's memory cache took a read whose address plus size wraps
 * for a hit, and copied from outside its page: an ETE source address at
 * the last word (fuzz-etm's input, minimized: ts_marker's first source)...
 */
static int test_repro_top_address(void)
{
	static const uint8_t input[] = {
		0x06, 0x45, 0x54, 0x4d, 0x56, 0x33, 0x08, 0x00,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-sync */
		0x01, 0x00,				/* Trace Info */
		0x82, 0x61, 0x11, 0x0c, 0x00, 0x31,	/* Address 0xc2384 & Context */
		0xff,					/* Atoms EEE */
		0xb8, 0xff, 0xff, 0xff, 0xff, 0xff,	/* Source Address 0xff...fc */
		0xff, 0xff, 0xff,
		0x70,					/* Ignore */
	};

	return check_etm_input(input, sizeof(input), 1);
}

/*
 * A64 code at every address: "b ." in the low 4 GiB, but at 0x3000 a
 * branch back to the last word of the address space; 128 MiB below the
 * top a branch forward to it; NOPs elsewhere.
 */
#define ETM_TOP_BRANCH	0xfffffffff8000000ULL
#define ETM_WRAP_BRANCH	0x3000

static int code_everywhere(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	for (size_t i = 0; i < size; i++) {
		uint64_t at = addr + i;
		uint32_t insn = 0xd503201f;

		if (at - ETM_WRAP_BRANCH < 4)
			insn = 0x17fff3ff;	/* b .-0x3004 */
		else if (at < (1ULL << 32))
			insn = 0x14000000;
		else if (at - ETM_TOP_BRANCH < 4)
			insn = 0x15ffffff;	/* b .+0x7fffffc */
		buf[i] = insn >> (at % 4 * 8);
	}
	return size;
}

struct etm_code_input {
	struct snapshot		*ss;
	const uint8_t		*trace;
	size_t			len;
};

/* The flow stops where code is no longer read: a gap, not a crash. */
static int etm_code__run(void *arg)
{
	struct etm_code_input *in = arg;
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_ETM,
		.read_memory = code_everywhere,
		.etm = { .sources = &in->ss->src[0], .nr_sources = 1 },
	};
	struct auxsample_decoder *dec = auxsample_decoder__new(&config, NULL);
	const struct auxsample_decode_error *errs;
	int n, nomap = 0;

	if (!dec)
		return TEST_FAIL;
	auxsample_decoder__decode(dec, in->trace, in->len, 64);
	n = auxsample_decoder__errors(dec, &errs);
	for (int i = 0; i < n; i++)
		nomap += errs[i].error == -AUXSAMPLE_ERR_NOMAP;
	auxsample_decoder__delete(dec);
	return T_CHECK(nomap >= 1) ? TEST_OK : TEST_FAIL;
}

static int check_etm_code(const uint8_t *trace, size_t len)
{
	struct etm_code_input in = {
		.ss = snapshot__get("snapshots-ete", "ts_marker"),
		.trace = trace,
		.len = len,
	};
	int ret;

	if (!in.ss)
		return TEST_SKIP;
	ret = test_run_bounded(etm_code__run, &in, ETM_REPRO_TIMEOUT);
	snapshot__exit(in.ss);
	return ret;
}

/*
 * ... and a branch to the last word: the cache took the read there for a
 * hit in the page at 0x1000.  No code is read in the last 256 MiB: from
 * 128 MiB below the top, the decoder stops at the branch, not readable;
 * from 0x3000, at its target.
 */
static int test_top_of_memory(void)
{
	static const uint8_t backward[] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,		/* A-sync */
		0x01, 0x00,					/* Trace Info */
		0x85, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00,	/* Address 0x1000 */
		0x00, 0x00, 0x31,				/* & Context */
		0xf7,						/* Atom E */
		0x9d, 0x00, 0x18, 0x00, 0x00, 0x00, 0x00,	/* Address */
		0x00, 0x00,					/* ETM_WRAP_BRANCH */
		0xf7, 0xf7,					/* Atoms E, E */
		0x70, 0x70,					/* Ignore */
	};
	static const uint8_t trace[] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,		/* A-sync */
		0x01, 0x00,					/* Trace Info */
		0x85, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00,	/* Address 0x1000 */
		0x00, 0x00, 0x31,				/* & Context */
		0xf7,						/* Atom E */
		0x9d, 0x00, 0x00, 0x00, 0xf8, 0xff, 0xff,	/* Address */
		0xff, 0xff,					/* ETM_TOP_BRANCH */
		0xf7, 0xf7,					/* Atoms E, E */
		0x70, 0x70,					/* Ignore */
	};
	int ret = check_etm_code(trace, sizeof(trace));

	return ret != TEST_OK ? ret : check_etm_code(backward, sizeof(backward));
}

/*
 * OpenCSD walks code to the next branch, however far: from 4 GiB, NOPs
 * to the top, and again at each address.  The decode stops reading code
 * after 16 MiB and 1 KiB a byte of trace: 4000 walks, each of up to 16 MiB,
 * end within the test's bound.
 */
#define ETM_WALKS	4000

static int test_code_without_branches(void)
{
	static const uint8_t head[] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,		/* A-sync */
		0x01, 0x00,					/* Trace Info */
		0x85, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,	/* Address 4 GiB */
		0x00, 0x00, 0x31,				/* & Context */
		0xf7,						/* Atom E */
	};
	static const uint8_t walk[] = {
		0x9d, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,	/* Address 4 GiB */
		0x00, 0x00,
		0xf7,						/* Atom E */
	};
	size_t len = sizeof(head) + ETM_WALKS * sizeof(walk);
	uint8_t *trace = malloc(len);
	int ret;

	if (!trace)
		return TEST_FAIL;
	memcpy(trace, head, sizeof(head));
	for (int i = 0; i < ETM_WALKS; i++)
		memcpy(trace + sizeof(head) + i * sizeof(walk), walk, sizeof(walk));
	ret = check_etm_code(trace, len);
	free(trace);
	return ret;
}


const struct test tests_etm_repro[] = {
	{ "ETE repro: a mispredict that crashed OpenCSD ends in a decode error",
	  test_repro_mispredict },
	{ "ETE repro: a cancel that hung OpenCSD ends in a decode error", test_repro_cancel },
	{ "ETE repro: with speculation too, a mispredict is a bad packet",
	  test_repro_mispredict_speculative },
	{ "ETM repro: a Commit before an exception's address is a decode error",
	  test_repro_exception_commit },
	{ "ETM repro: a Trace Info deeper than MAXSPEC does not sync", test_repro_spec_depth },
	{ "ETM repro: a Commit before a Q element's address is a decode error",
	  test_repro_q_commit },
	{ "ETM: with speculation, a Commit after an exception's address decodes",
	  test_exception_addr_commit },
	{ "ETM: after a bad packet, the A-sync right after it syncs", test_resync_after_bad_packet },
	{ "ETE repro: an empty return stack popped at an exception is a decode error",
	  test_repro_return_stack },
	{ "ETE repro: a source address at the top of memory is a gap",
	  test_repro_top_address },
	{ "ETE: no code is read at the top of memory", test_top_of_memory },
	{ "ETE: walks of code without a branch end", test_code_without_branches },
	{ NULL, NULL },
};
