// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Intel PT walker (pt-walk.c) against libipt's block decoder, the
 * reference: random programs run by a small executor that writes their
 * trace with the PT writer, decoded in sample-sized snippets, cut and
 * flipped; both backends must give the same branches, call chain,
 * errors and statistics.  A bounded run: the walk is deterministic, so
 * a fixed seed covers the same ground each time.
 */
#define _GNU_SOURCE	/* memmem */
#include <stdlib.h>
#include <string.h>
#include <auxsample/auxsample.h>
#include <auxsample/pt-writer.h>
#include <intel-pt.h>
#include "tests.h"
#include "pt-program.h"
#include "../pt-parse.h"
#include "../pt-sync.h"

struct run {
	struct program			*prog;
	struct auxsample_pt_writer	*w;
	struct pair			pair;
	size_t				ends[4096];
	uint64_t			ips[4096];	/* where the interrupts came */
	unsigned int			nr_ends;
};

/* A kernel above the program, for the late-sample rule: where perf's begins. */
#define KERNEL_START	0xffff800000000000ULL
#define KERNEL_IP	0xffffffff81000000ULL

/* @cyc: CYC packets, and 1: random time per instruction, else that many ticks. */
static int run__init(struct run *r, uint32_t seed, bool noretcomp, unsigned int cyc,
		     unsigned int insns)
{
	struct auxsample_pt_writer_config wcfg = {
		.size = sizeof(wcfg), .psb_period = 2048, .noretcomp = noretcomp,
		.tsc = 1, .mtc = 1, .mtc_period = 3, .tsc_per_ctc = 2, .cbr = 20, .nom_freq = 20,
		.cyc = !!cyc,
	};
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.pt = { .family = 6, .model = 85, .stepping = 4, .cyc = !!cyc },
		.read_memory = read_program,
		.kernel_start = KERNEL_START,
	};

	memset(r, 0, sizeof(*r));
	r->prog = malloc(sizeof(*r->prog));
	r->w = auxsample_pt_writer__new(&wcfg);
	if (!r->prog || !r->w)
		return -1;
	program__generate(r->prog, seed);
	r->prog->cpi = cyc > 1 ? cyc : 0;
	config.context = r->prog;
	if (pair__init(&r->pair, &config))
		return -1;
	return program__run(r->prog, r->w, insns, cyc, r->ends, r->ips, &r->nr_ends,
			    ARRAY_SIZE(r->ends));
}

static void run__exit(struct run *r)
{
	pair__exit(&r->pair);
	auxsample_pt_writer__delete(r->w);
	free(r->prog);
}


/*
 * With CYC and the same cycles for every instruction, each entry's cycles
 * are exactly its instructions' (cbr = nom_freq: a TSC tick is a cycle):
 * interpolation between packets is exact then.  Both backends, since
 * they agree (test_samples_cyc()); libipt's decoder is the one asked.
 */
static int test_cycles_truth(void)
{
	unsigned int right = 0, wrong = 0, unknown = 0;
	struct run r;
	const uint8_t *buf;
	size_t len;
	int ret = TEST_FAIL;

	if (run__init(&r, 401, false, 2, 200000))
		goto out;
	buf = auxsample_pt_writer__data(r.w, &len);
	for (unsigned int i = 0; i < r.nr_ends; i++) {
		size_t end = r.ends[i], start = end > 4096 ? end - 4096 : 0;
		const struct auxsample_branch *br;
		int n;

		pair__set_sample_ip(&r.pair, r.ips[i]);
		if (pair__compare(&r.pair, buf + start, end - start, 64))
			goto out;
		n = auxsample_decoder__branches(r.pair.ref, &br);
		for (int k = 0; k + 1 < n; k++) {
			unsigned int insns = program__insns(r.prog, br[k + 1].to, br[k].from);

			if (!insns)
				continue;
			if (!br[k].cycles)
				unknown++;
			else if (br[k].cycles == 2 * insns)
				right++;
			else if (wrong++ < 5)
				fprintf(stderr, "  %#llx -> %#llx: %u cycles for %u instructions\n",
					(unsigned long long)br[k].from,
					(unsigned long long)br[k].to, br[k].cycles, insns);
		}
	}
	pr_test("%u entries with the right cycles, %u wrong, %u unknown\n", right, wrong,
		unknown);
	if (!T_CHECK(right > 1000 && wrong == 0 && unknown < right / 20))
		goto out;
	ret = TEST_OK;
out:
	run__exit(&r);
	return ret;
}

/*
 * An OVF where a PSB+ was, bound to that PSB+'s FUP: libipt goes on
 * after it without a sync point, and so do the cycles (pt-cyc.c looks
 * for the packets from the OVF on), right as before.
 */
static int test_cycles_overflow(void)
{
	static const uint8_t psb[2] = { 0x02, 0x82 }, ovf[2] = { 0x02, 0xf3 };
	const struct auxsample_decode_error *err;
	const struct auxsample_branch *br;
	unsigned int right = 0, wrong = 0, after = 0;
	size_t len, n = 0, at[3], fup = 0, fup_size = 0, end;
	struct ptw_packet p;
	const uint8_t *trace;
	uint8_t *buf = NULL;
	struct run r;
	int nr, ret = TEST_FAIL;

	if (run__init(&r, 403, false, 2, 100000))
		goto out;
	trace = auxsample_pt_writer__data(r.w, &len);
	/* Three PSBs after the first few KiB: [0]-[1] before the OVF, [1]-[2] after. */
	for (size_t i = 8192; i + 16 <= len && n < 3; i++) {
		if (!memcmp(trace + i, psb, 2) && !memcmp(trace + i + 2, psb, 2) &&
		    !memcmp(trace + i + 14, psb, 2))
			at[n++] = i, i += 15;
	}
	if (!T_CHECK(n == 3))
		return TEST_FAIL;
	/* The second PSB+: its FUP, and where it ends. */
	for (end = at[1]; end < at[2]; end += p.size) {
		if (!T_CHECK(ptw_parse(trace + end, at[2] - end, &p) > 0))
			return TEST_FAIL;
		if (p.type == PTW_FUP)
			fup = end, fup_size = p.size;
		if (p.type == PTW_PSBEND) {
			end += p.size;
			break;
		}
	}
	if (!T_CHECK(fup_size))
		return TEST_FAIL;
	/* First PSB's stretch, OVF, FUP, the second PSB's stretch without its PSB+ */
	buf = malloc(at[2] - at[0]);
	if (!buf)
		goto out;
	len = at[1] - at[0];
	memcpy(buf, trace + at[0], len);
	memcpy(buf + len, ovf, sizeof(ovf));
	len += sizeof(ovf);
	memcpy(buf + len, trace + fup, fup_size);
	len += fup_size;
	memcpy(buf + len, trace + end, at[2] - end);
	len += at[2] - end;
	nr = auxsample_decoder__decode(r.pair.ref, buf, len, 4096);
	if (!T_CHECK(nr > 0 && auxsample_decoder__errors(r.pair.ref, &err) == 1 &&
		     err->error == -AUXSAMPLE_ERR_OVERFLOW))
		return TEST_FAIL;
	auxsample_decoder__branches(r.pair.ref, &br);
	/* Newest first: the branches after the OVF, up to its gap. */
	for (int k = 0; k + 1 < nr && br[k + 1].kind != AUXSAMPLE_BR_GAP; k++) {
		unsigned int insns = program__insns(r.prog, br[k + 1].to, br[k].from);

		after++;
		if (!insns || !br[k].cycles)
			continue;
		if (br[k].cycles == 2 * insns)
			right++;
		else
			wrong++;
	}
	pr_test("after the OVF: %u branches, %u with the right cycles, %u wrong\n", after, right,
		wrong);
	if (!T_CHECK(after > 20 && right > after / 4 && wrong == 0))
		return TEST_FAIL;
	ret = TEST_OK;
out:
	free(buf);
	run__exit(&r);
	return ret;
}

/* Snippets as AUX samples take them: the 4 KiB before each interrupt. */
static int check_samples(uint32_t seed, bool noretcomp, bool cyc)
{
	struct run r;
	const uint8_t *buf;
	size_t len;
	int ret = TEST_FAIL;

	if (run__init(&r, seed, noretcomp, cyc, 200000)) {
		fprintf(stderr, "  seed %u: the program did not run\n", seed);
		goto out;
	}
	buf = auxsample_pt_writer__data(r.w, &len);
	for (unsigned int i = 0; i < r.nr_ends; i++) {
		size_t end = r.ends[i], start = end > 4096 ? end - 4096 : 0;

		/*
		 * No sample IP, the interrupt's (the late-sample rule keeps
		 * the branches up to it), and one in the kernel, as perf's
		 * samples of user-only trace have when the PMI came there.
		 */
		static const char * const how[] = { "none", "the interrupt's", "the kernel's" };
		const uint64_t ips[] = { 0, r.ips[i], KERNEL_IP };

		for (unsigned int n = 0, max = 16; max <= 256; n++, max *= 4) {
			unsigned int k = (i + n) % ARRAY_SIZE(ips);

			pair__set_sample_ip(&r.pair, ips[k]);
			if (pair__compare(&r.pair, buf + start, end - start, max)) {
				fprintf(stderr, "  seed %u, snippet [%zu, %zu), %u branches, ",
					seed, start, end, max);
				fprintf(stderr, "sample IP %s\n", how[k]);
				goto out;
			}
		}
	}
	pr_test("seed %u%s: %u of %u decodes walked, %u samples, %u timed, %u skimmed (%u again)\n",
		seed, cyc ? " (CYC)" : "", r.pair.walked, r.pair.decodes, r.nr_ends, r.pair.timed,
		r.pair.skims, r.pair.skims_lost);
	/* Clean user-only trace is the walker's: it must not hand it on. */
	if (!T_CHECK(r.nr_ends > 10 && r.pair.walked == r.pair.decodes))
		goto out;
	/*
	 * The samples without a kernel IP skim their 4 KiB to the last
	 * branches (skim.c), and rarely need a whole walk after.
	 */
	if (!T_CHECK(r.pair.skims > r.pair.decodes / 8 && r.pair.skims_lost * 10 < r.pair.skims))
		goto out;
	/* With CYC the cycles were compared: there were some. */
	if (!T_CHECK(!cyc || r.pair.timed > 0))
		goto out;
	ret = TEST_OK;
out:
	run__exit(&r);
	return ret;
}

static int test_samples(void)
{
	for (uint32_t seed = 1; seed <= 4; seed++) {
		if (check_samples(seed, false, false) || check_samples(seed + 100, true, false))
			return TEST_FAIL;
	}
	return TEST_OK;
}

/* With CYC: the same cycles too (pt-cyc.c: both decoders time alike). */
static int test_samples_cyc(void)
{
	for (uint32_t seed = 1; seed <= 4; seed++) {
		if (check_samples(seed + 200, false, true) || check_samples(seed + 300, true, true))
			return TEST_FAIL;
	}
	return TEST_OK;
}

/* With the late-sample rule two times in three (see above). */
static uint64_t cut_flipped__ip(void *arg, int round)
{
	struct run *r = arg;

	return round % 3 == 0 ? 0 : round % 3 == 1 ? r->ips[round % r->nr_ends] : KERNEL_IP;
}

/* Cut anywhere, bytes flipped: the same, errors included. */
static int check_cut_flipped(bool cyc)
{
	struct run r;
	const uint8_t *trace;
	size_t len;
	int ret = TEST_FAIL;

	if (run__init(&r, 7, false, cyc, 100000))
		goto out;
	trace = auxsample_pt_writer__data(r.w, &len);
	if (pair__cut_flipped(&r.pair, trace, len, 77, 3000, cut_flipped__ip, &r))
		goto out;
	pr_test("%s%u of %u decodes walked, %u branches timed\n", cyc ? "CYC: " : "",
		r.pair.walked, r.pair.decodes, r.pair.timed);
	if (!T_CHECK(r.pair.walked > 0 && (!cyc || r.pair.timed > 0)))
		goto out;
	ret = TEST_OK;
out:
	run__exit(&r);
	return ret;
}

static int test_cut_flipped(void)
{
	return check_cut_flipped(false);
}

static int test_cut_flipped_cyc(void)
{
	return check_cut_flipped(true);
}

/*
 * Position independent code's CALL to the next instruction, as i386 PIC
 * reads its IP:
 *   0x400000  call 0x400010     0x400010  call 0x400015 (to the next)
 *   0x400005  jne 0x400000      0x400015  pop %rax
 *                               0x400016  ret
 * The hardware, libipt and the PT writer leave that CALL off the return
 * stack, so the RET at 0x400016 is compressed and returns to 0x400005.
 */
#define PIC_BASE	0x400000ULL

static const uint8_t pic_code[] = {
	[0x00] = 0xe8, 0x0b, 0x00, 0x00, 0x00,
	[0x05] = 0x75, 0xf9,
	[0x10] = 0xe8, 0x00, 0x00, 0x00, 0x00,
	[0x15] = 0x58,
	[0x16] = 0xc3,
};

/* Code written by hand, at PIC_BASE: a read_memory callback's context. */
struct hand_code {
	const uint8_t	*bytes;
	size_t		size;
};

static int read_hand_code(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	const struct hand_code *code = context;

	if (addr < PIC_BASE || addr >= PIC_BASE + code->size)
		return -1;
	addr -= PIC_BASE;
	if (size > code->size - addr)
		size = code->size - addr;
	memcpy(buf, code->bytes + addr, size);
	return size;
}

/* The TSC when a hand_code__start() trace starts. */
#define HAND_TSC	0x1234567

/*
 * Decoders of @code, both, into @pr, and a writer of its trace into @w,
 * started at PIC_BASE (@cyc: with CYC packets, a TSC tick a cycle, and
 * TMA as CYC comes with: an MTC only every 2^16 ticks, none in a test's
 * trace): 0, else pair__exit() and auxsample_pt_writer__delete() are
 * still the caller's to call.
 */
static int hand_code__start(struct hand_code *code, struct pair *pr,
			    struct auxsample_pt_writer **w, bool cyc)
{
	struct auxsample_pt_writer_config wcfg = {
		.size = sizeof(wcfg), .psb_period = 2048, .tsc = 1,
		.cyc = cyc, .cbr = cyc ? 20 : 0, .nom_freq = cyc ? 20 : 0,
		.mtc = cyc, .mtc_period = 15, .tsc_per_ctc = 2,
	};
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.pt = { .family = 6, .model = 85, .stepping = 4, .cyc = cyc },
		.read_memory = read_hand_code,
		.context = code,
	};

	*w = auxsample_pt_writer__new(&wcfg);
	if (pair__init(pr, &config) || !*w)
		return -1;
	auxsample_pt_writer__tick(*w, HAND_TSC);
	return auxsample_pt_writer__start(*w, PIC_BASE);
}

/*
 * @w's trace decoded 64 deep by both of @pr's decoders, alike, the
 * walker walking it once: the walker's branches into *@br, newest first,
 * and how many; -1 where the decoders differ.
 */
static int hand_code__branches(struct pair *pr, struct auxsample_pt_writer *w,
			       const struct auxsample_branch **br)
{
	size_t len;
	const uint8_t *buf = auxsample_pt_writer__data(w, &len);

	if (!T_CHECK(!pair__compare(pr, buf, len, 64) && pr->walked == 1))
		return -1;
	return auxsample_decoder__branches(pr->walker, br);
}

static int test_call_next(void)
{
	struct hand_code code = { pic_code, sizeof(pic_code) };
	struct auxsample_pt_writer *w;
	const struct auxsample_branch *br;
	struct pair pr;
	int err, n, ret = TEST_FAIL;

	err = hand_code__start(&code, &pr, &w, false);
	for (int i = 0; i < 20 && !err; i++) {
		err = auxsample_pt_writer__call(w, PIC_BASE + 5, false, PIC_BASE + 0x10) ?:
		      auxsample_pt_writer__call(w, PIC_BASE + 0x15, false, PIC_BASE + 0x15) ?:
		      auxsample_pt_writer__ret(w, PIC_BASE + 5) ?:
		      auxsample_pt_writer__cond(w, true);
	}
	if (err || auxsample_pt_writer__interrupt(w, PIC_BASE + 0x10))
		goto out;
	/* Newest first: the CALL the interrupt came after, JNE, RET, CALL to the next. */
	n = hand_code__branches(&pr, w, &br);
	if (!T_CHECK(n == 64 && br[1].kind == AUXSAMPLE_BR_COND &&
		     br[2].from == PIC_BASE + 0x16 && br[2].to == PIC_BASE + 5 &&
		     br[2].kind == AUXSAMPLE_BR_RET && br[3].from == PIC_BASE + 0x10 &&
		     br[3].to == PIC_BASE + 0x15))
		goto out;
	ret = TEST_OK;
out:
	pair__exit(&pr);
	auxsample_pt_writer__delete(w);
	return ret;
}

/*
 * Recursion to random depths, up to past the return compression stack's
 * 64 frames, so that the skim loop's kept walks (pt-walk-memo.c) return
 * to frames of before, to two places from the same bits, and meet full
 * stacks:
 *   0x400000  call 0x400010     0x400010  jne 0x400020     0x400020  call 0x400010
 *   0x400005  jne 0x400000      0x400012  ret              0x400025  ret
 */
static const uint8_t rec_code[] = {
	[0x00] = 0xe8, 0x0b, 0x00, 0x00, 0x00,
	[0x05] = 0x75, 0xf9,
	[0x10] = 0x75, 0x0e,
	[0x12] = 0xc3,
	[0x20] = 0xe8, 0xeb, 0xff, 0xff, 0xff,
	[0x25] = 0xc3,
};

/* One call of 0x400010 from 0x400000, @depth deep, and the loop's branch back. */
static int rec__call(struct auxsample_pt_writer *w, unsigned int depth)
{
	int err = auxsample_pt_writer__call(w, PIC_BASE + 5, false, PIC_BASE + 0x10);

	for (unsigned int i = 0; i < depth && !err; i++) {
		err = auxsample_pt_writer__cond(w, true) ?:
		      auxsample_pt_writer__call(w, PIC_BASE + 0x25, false, PIC_BASE + 0x10);
	}
	if (!err)
		err = auxsample_pt_writer__cond(w, false);
	for (unsigned int i = 0; i <= depth && !err; i++)
		err = auxsample_pt_writer__ret(w, PIC_BASE + (i < depth ? 0x25 : 5));
	return err ?: auxsample_pt_writer__cond(w, true);
}

static int check_recursion(uint32_t seed, unsigned int *skims)
{
	struct hand_code code = { rec_code, sizeof(rec_code) };
	struct auxsample_pt_writer *w;
	const uint8_t *buf;
	struct pair pr;
	int err, ret = TEST_FAIL;
	size_t len = 0;

	err = hand_code__start(&code, &pr, &w, false);
	while (!err && len < 12288) {
		seed = seed * 1103515245 + 12345;
		/* Mostly shallow, as programs recurse; one in eight past the stack. */
		err = rec__call(w, (seed >> 16) % 8 ? (seed >> 8) % 12 : 60 + (seed >> 8) % 40);
		auxsample_pt_writer__data(w, &len);
	}
	if (err || auxsample_pt_writer__interrupt(w, PIC_BASE))
		goto out;
	buf = auxsample_pt_writer__data(w, &len);
	for (unsigned int max = 16; max <= 256; max *= 4) {
		if (!T_CHECK(!pair__compare(&pr, buf, len, max)))
			goto out;
	}
	if (!T_CHECK(pr.walked == pr.decodes))
		goto out;
	*skims += pr.skims;
	ret = TEST_OK;
out:
	pair__exit(&pr);
	auxsample_pt_writer__delete(w);
	return ret;
}

static int test_recursion(void)
{
	unsigned int skims = 0;

	for (uint32_t seed = 1; seed <= 8; seed++) {
		if (check_recursion(seed, &skims)) {
			fprintf(stderr, "  seed %u\n", seed);
			return TEST_FAIL;
		}
	}
	pr_test("%u decodes skimmed\n", skims);
	/* The walks are kept only skimming: there must have been some. */
	return T_CHECK(skims > 0) ? TEST_OK : TEST_FAIL;
}

/*
 * Cycles where the time a branch takes changes from one full TNT to the
 * next: each went out with its last branch, an anchor (cycles.c), so
 * the branches between two get the cycles of their own packet's time,
 * not the run's average.  With the same time for every instruction
 * (test_cycles_truth()) a decoder that missed those anchors could not
 * be told apart.  A loop of two instructions:
 *   0x400000  nop
 *   0x400001  jne 0x400000
 */
static const uint8_t nop_loop_code[] = { 0x90, 0x75, 0xfd };

/* The TSC ticks each branch of the @i-th TNT took: from 1 to 19, not in order. */
static unsigned int tnt_ticks(unsigned int i)
{
	return 1 + i * 7 % 10 * 2;
}

static int test_cycles_tnt_anchors(void)
{
	struct hand_code code = { nop_loop_code, sizeof(nop_loop_code) };
	const unsigned int nr_tnts = 40;	/* of 6 bits: a ring of 64 and more */
	struct auxsample_pt_writer *w;
	const struct auxsample_branch *br;
	uint64_t tsc = HAND_TSC;
	unsigned int wrong = 0;
	struct pair pr;
	int err, n, ret = TEST_FAIL;

	err = hand_code__start(&code, &pr, &w, true);
	for (unsigned int i = 0; i < nr_tnts * 6 && !err; i++) {
		tsc += tnt_ticks(i / 6);
		err = auxsample_pt_writer__tick(w, tsc) ?: auxsample_pt_writer__cond(w, true);
	}
	/* After the NOP again. */
	if (err || auxsample_pt_writer__tick(w, tsc + 1) ||
	    auxsample_pt_writer__interrupt(w, PIC_BASE + 1))
		goto out;
	/* Newest first: the last TNT's last branch. */
	n = hand_code__branches(&pr, w, &br);
	if (!T_CHECK(n == 64))
		goto out;
	for (int k = 0; k < n; k++) {
		unsigned int want = tnt_ticks(nr_tnts - 1 - k / 6);

		if (br[k].cycles != want && wrong++ < 5)
			fprintf(stderr, "  entry %d: %u cycles, not %u\n", k, br[k].cycles, want);
	}
	if (!T_CHECK(!wrong))
		goto out;
	ret = TEST_OK;
out:
	pair__exit(&pr);
	auxsample_pt_writer__delete(w);
	return ret;
}

/*
 * pt_psb__find() against memmem(): PSBs planted in random bytes rich in
 * 0x02 and 0x82, whole, cut short, overlapping and at both ends.
 */
static int test_psb_find(void)
{
	static const uint8_t psb[16] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	};
	uint8_t buf[256];
	uint32_t seed = 1;

	for (int round = 0; round < 20000; round++) {
		size_t len = 1 + round % sizeof(buf);

		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245 + 12345;
			buf[i] = (seed >> 16) % 4 ? ((seed >> 20) % 2 ? 0x82 : 0x02) : seed >> 24;
		}
		for (int k = 0; k < 3; k++) {
			size_t at, n;

			seed = seed * 1103515245 + 12345;
			at = (seed >> 8) % len;
			n = len - at < sizeof(psb) ? len - at : sizeof(psb);
			/* one in four cut a byte short */
			memcpy(buf + at, psb, (seed >> 4) % 4 || n < 2 ? n : n - 1);
		}
		for (size_t from = 0; from < len; from += 1 + from / 4) {
			const uint8_t *want = memmem(buf + from, len - from, psb, sizeof(psb));

			if (!T_CHECK(pt_psb__find(buf + from, len - from) == want)) {
				fprintf(stderr, "  round %d, from %zu of %zu\n", round, from, len);
				return TEST_FAIL;
			}
		}
	}
	return TEST_OK;
}

/*
 * The parser against libipt's packet decoder on packets libipt's encoder
 * wrote and on random bytes: the same sizes, the same refusals (libipt:
 * bad opcode or packet; here PTW_BAD, also for the packets the walker
 * leaves to libipt), the same cut packets.
 */
static int check_parse(const uint8_t *buf, size_t len, struct pt_packet_decoder *pkt)
{
	/* PSBEND, PSB, TNT-64, OVF, CBR, TMA, PIP, VMCS, TraceStop */
	static const uint8_t known_ext[] = {
		0x23, 0x82, 0xa3, 0xf3, 0x03, 0x73, 0x43, 0xc8, 0x83,
	};
	struct ptw_packet p;
	struct pt_packet ref;
	int n = ptw_parse(buf, len, &p), rn;

	if (pt_pkt_sync_set(pkt, 0) < 0)
		return -1;
	rn = pt_pkt_next(pkt, &ref, sizeof(ref));
	/* A cut packet the walker leaves to libipt: refused as unknown. */
	if (rn == -pte_eos && n == PTW_BAD && len >= 2 && buf[0] == 0x02 &&
	    !memchr(known_ext, buf[1], sizeof(known_ext)))
		return 0;
	/* A CBR of ratio 0: its packet is libipt's, its time keeping refuses it. */
	if (rn >= 0 && ref.type == ppt_cbr && !ref.payload.cbr.ratio && n == PTW_BAD)
		return 0;
	if (rn == -pte_eos ? n == PTW_EOS :
	    rn < 0 ? n == PTW_BAD :
	    n == rn || (n == PTW_BAD && ref.type != ppt_tnt_8 && ref.type != ppt_tnt_64 &&
			ref.type != ppt_tip && ref.type != ppt_fup && ref.type != ppt_psb &&
			ref.type != ppt_psbend && ref.type != ppt_pad && ref.type != ppt_tsc &&
			ref.type != ppt_mtc && ref.type != ppt_tma && ref.type != ppt_cyc &&
			ref.type != ppt_cbr && ref.type != ppt_mode && ref.type != ppt_ovf))
		return 0;
	fprintf(stderr, "  %02x %02x %02x: libipt %d (type %d), walker %d\n", buf[0],
		len > 1 ? buf[1] : 0, len > 2 ? buf[2] : 0, rn, rn < 0 ? -1 : (int)ref.type, n);
	return -1;
}

static int test_parse(void)
{
	static const struct pt_packet packets[] = {
		{ .type = ppt_pad },
		{ .type = ppt_psb },
		{ .type = ppt_psbend },
		{ .type = ppt_ovf },
		{ .type = ppt_tnt_8, .payload.tnt = { .bit_size = 5, .payload = 0x15 } },
		{ .type = ppt_tnt_64, .payload.tnt = { 40, 0x123456789aULL } },
		{ .type = ppt_tip, .payload.ip = { pt_ipc_update_16, 0x1234 } },
		{ .type = ppt_tip_pge, .payload.ip = { pt_ipc_sext_48, 0x7fff12345678ULL } },
		{ .type = ppt_tip_pgd, .payload.ip = { pt_ipc_suppressed, 0 } },
		{ .type = ppt_fup, .payload.ip = { pt_ipc_full, 0xffffffff81000000ULL } },
		{ .type = ppt_fup, .payload.ip = { pt_ipc_update_48, 0x123456789abcULL } },
		{ .type = ppt_tip, .payload.ip = { pt_ipc_update_32, 0x12345678 } },
		{ .type = ppt_mode, .payload.mode = { pt_mol_exec, .bits.exec = { .csl = 1 } } },
		{ .type = ppt_mode, .payload.mode = { pt_mol_tsx, .bits.tsx = { .intx = 1 } } },
		{ .type = ppt_tsc, .payload.tsc = { .tsc = 0x123456789abcdeULL } },
		{ .type = ppt_cbr, .payload.cbr = { .ratio = 37 } },
		{ .type = ppt_tma, .payload.tma = { .ctc = 0x1234, .fc = 0x1ff } },
		{ .type = ppt_mtc, .payload.mtc = { .ctc = 0x42 } },
		{ .type = ppt_cyc, .payload.cyc = { .value = 0x123456789ULL } },
		{ .type = ppt_pip, .payload.pip = { .cr3 = 0x12345000, .nr = 1 } },
		{ .type = ppt_vmcs, .payload.vmcs = { .base = 0x12345000 } },
		{ .type = ppt_stop },
		{ .type = ppt_ptw, .payload.ptw = { .plc = 1, .payload = 42 } },
		{ .type = ppt_exstop },
		{ .type = ppt_mwait },
		{ .type = ppt_pwre },
		{ .type = ppt_pwrx },
		{ .type = ppt_mnt, .payload.mnt = { .payload = 7 } },
	};
	uint8_t buf[64];
	struct pt_config cfg;
	struct pt_encoder *enc;
	struct pt_packet_decoder *pkt;
	uint32_t seed = 99;
	int ret = TEST_FAIL;

	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + sizeof(buf);
	enc = pt_alloc_encoder(&cfg);
	if (!enc)
		return TEST_FAIL;
	for (size_t i = 0; i < ARRAY_SIZE(packets); i++) {
		struct ptw_packet p;
		int n;

		memset(buf, 0, sizeof(buf));
		if (pt_enc_sync_set(enc, 0) < 0)
			goto out;
		n = pt_enc_next(enc, &packets[i]);
		if (n < 0)
			goto out;
		/* Whole, then cut short by every byte. */
		for (int len = n; len > 0; len--) {
			cfg.end = buf + len;
			pkt = pt_pkt_alloc_decoder(&cfg);
			if (!pkt || check_parse(buf, len, pkt)) {
				fprintf(stderr, "  packet %zu, %d of %d bytes\n", i, len, n);
				pt_pkt_free_decoder(pkt);
				goto out;
			}
			pt_pkt_free_decoder(pkt);
		}
		/* What the walker reads of them. */
		ptw_parse(buf, n, &p);
		if (packets[i].type == ppt_tnt_64 &&
		    !T_CHECK(p.nr_bits == 40 && p.tnt == 0x123456789aULL))
			return TEST_FAIL;
		if (i == 7) {
			uint64_t ip;

			if (!T_CHECK(!ptw_ip(&p, 0xffff800000000000ULL, &ip) &&
				     ip == 0x7fff12345678ULL))
				goto out;
		}
		if (i == 6) {
			uint64_t ip;

			if (!T_CHECK(!ptw_ip(&p, 0x7fff00000000ULL, &ip) &&
				     ip == 0x7fff00001234ULL))
				goto out;
		}
	}
	cfg.end = buf + sizeof(buf);
	pkt = pt_pkt_alloc_decoder(&cfg);
	if (!pkt)
		goto out;
	for (int round = 0; round < 200000; round++) {
		size_t len;

		for (size_t i = 0; i < 16; i++) {
			seed = seed * 1103515245 + 12345;
			buf[i] = seed >> 16;
		}
		/* Often an extended opcode, which holds most packet kinds. */
		if (round % 2)
			buf[0] = 0x02;
		len = 1 + (seed >> 8) % 16;
		pt_pkt_free_decoder(pkt);
		cfg.end = buf + len;
		pkt = pt_pkt_alloc_decoder(&cfg);
		if (!pkt || check_parse(buf, len, pkt))
			goto out;
	}
	pt_pkt_free_decoder(pkt);
	ret = TEST_OK;
out:
	pt_free_encoder(enc);
	return ret;
}

const struct test tests_pt_walk[] = {
	{ "walker's packets are libipt's, whole, cut and random", test_parse },
	{ "walker and libipt agree on sample snippets", test_samples },
	{ "walker and libipt agree on cut and flipped snippets", test_cut_flipped },
	{ "walker and libipt agree on sample snippets with CYC", test_samples_cyc },
	{ "walker and libipt agree on cut and flipped snippets with CYC", test_cut_flipped_cyc },
	{ "walker and libipt agree on PIC code's CALL to the next instruction", test_call_next },
	{ "walker and libipt agree on recursion past the return stack, skimming", test_recursion },
	{ "PSBs are found where memmem() finds them", test_psb_find },
	{ "cycles of the virtual LBR are the instructions' with even CPI", test_cycles_truth },
	{ "cycles of the virtual LBR go on after an OVF", test_cycles_overflow },
	{ "cycles of the virtual LBR change at each full TNT's last branch",
	  test_cycles_tnt_anchors },
	{ NULL, NULL },
};
