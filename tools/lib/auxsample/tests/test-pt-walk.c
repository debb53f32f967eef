// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Intel PT walker (pt-walk.c) against libipt's block decoder, the
 * reference: random programs run by a small executor that writes their
 * trace with the PT writer, decoded in sample-sized snippets, cut and
 * flipped; both backends must give the same branches, call chain,
 * errors and statistics.  A bounded run: the walk is deterministic, so
 * a fixed seed covers the same ground each time.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <auxsample/auxsample.h>
#include <auxsample/pt-writer.h>
#include <intel-pt.h>
#include "tests.h"
#include "../pt-blocks.h"
#include "../pt-parse.h"
#include "../x86-branch.h"

#define CODE_BASE	0x400000ULL
#define CODE_SIZE	(64 * 1024)
#define NR_FUNCS	48

enum unit_type {
	U_PLAIN = 1, U_JCC, U_JMP, U_CALL, U_ICALL, U_IJMP, U_RET, U_SYSCALL,
};

struct unit {
	uint8_t		type;
	uint8_t		len;
	uint16_t	fn;
	uint32_t	target;		/* JCC, JMP, CALL: offset */
};

struct program {
	uint8_t		code[CODE_SIZE];
	struct unit	units[CODE_SIZE];	/* by offset of the instruction */
	uint32_t	fn_start[NR_FUNCS];
	uint32_t	fn_end[NR_FUNCS];
	uint32_t	seed;
	unsigned int	cpi;		/* TSC ticks per instruction, 0: random */
};

static uint32_t rnd(struct program *p)
{
	p->seed = p->seed * 1103515245 + 12345;
	return p->seed >> 8;
}

static int read_program(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	struct program *p = context;

	if (addr < CODE_BASE || addr >= CODE_BASE + CODE_SIZE)
		return -1;
	if (size > CODE_BASE + CODE_SIZE - addr)
		size = CODE_BASE + CODE_SIZE - addr;
	memcpy(buf, p->code + (addr - CODE_BASE), size);
	return size;
}

/* Instructions that are no branches, of many lengths and maps. */
static const struct { uint8_t len; uint8_t bytes[11]; } plain[] = {
	{ 1, { 0x90 } },				/* nop */
	{ 3, { 0x48, 0x89, 0xc3 } },			/* mov %rax,%rbx */
	{ 4, { 0x48, 0x83, 0xc0, 0x01 } },		/* add $1,%rax */
	{ 5, { 0x0f, 0x1f, 0x44, 0x00, 0x00 } },	/* nopl 0(%rax,%rax) */
	{ 5, { 0x48, 0x8d, 0x44, 0x24, 0x08 } },	/* lea 8(%rsp),%rax */
	{ 4, { 0x66, 0x0f, 0xef, 0xc0 } },		/* pxor %xmm0,%xmm0 */
	{ 4, { 0xc5, 0xf9, 0xef, 0xc0 } },		/* vpxor */
	{ 10, { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 } },	/* movabs */
	{ 7, { 0x48, 0x8b, 0x05, 0x10, 0, 0, 0 } },	/* mov 0x10(%rip),%rax */
	{ 6, { 0x81, 0xfb, 0x00, 0x01, 0x00, 0x00 } },	/* cmp $0x100,%ebx */
	{ 3, { 0xf6, 0xc1, 0x01 } },			/* test $1,%cl */
	{ 6, { 0xc4, 0xe3, 0x79, 0x0f, 0xc1, 0x08 } },	/* vpalignr */
	{ 6, { 0x66, 0x0f, 0x3a, 0x0f, 0xc1, 0x08 } },	/* palignr $8 */
	{ 2, { 0x31, 0xc0 } },				/* xor %eax,%eax */
	{ 9, { 0x48, 0xc7, 0x44, 0x24, 0x08, 1, 0, 0, 0 } }, /* movq $1,8(%rsp) */
};

static unsigned int emit(struct program *p, uint32_t at, const uint8_t *bytes, unsigned int len,
			 enum unit_type type, unsigned int fn)
{
	memcpy(p->code + at, bytes, len);
	p->units[at] = (struct unit){ .type = type, .len = len, .fn = fn };
	return len;
}

static void put_rel32(struct program *p, uint32_t at, unsigned int len, uint32_t target)
{
	int32_t rel = (int32_t)(target - (at + len));

	memcpy(p->code + at + len - 4, &rel, 4);
	p->units[at].target = target;
}

/*
 * Functions one after another; function i calls only later ones, so
 * every call returns.  Function 0 loops forever: a JMP back to its start.
 */
static void program__generate(struct program *p, uint32_t seed)
{
	uint32_t at = 0;
	uint32_t fixups[256];

	memset(p, 0, sizeof(*p));
	p->seed = seed;
	for (unsigned int fn = 0; fn < NR_FUNCS; fn++) {
		unsigned int n = 3 + rnd(p) % 24, nr_fix = 0;
		uint32_t starts[32];

		at = (at + 15) & ~15U;
		p->fn_start[fn] = at;
		for (unsigned int k = 0; k < n; k++) {
			unsigned int r = rnd(p) % 16;
			static const uint8_t jcc[] = { 0x0f, 0x84, 0, 0, 0, 0 };
			static const uint8_t jcc8[] = { 0x75, 0 };
			static const uint8_t call[] = { 0xe8, 0, 0, 0, 0 };
			static const uint8_t icall[] = { 0xff, 0xd0 };
			static const uint8_t ijmp[] = { 0x41, 0xff, 0xe3 };
			static const uint8_t sysc[] = { 0x0f, 0x05 };

			starts[k] = at;
			if (r < 8 || k + 2 >= n) {
				unsigned int i = rnd(p) % ARRAY_SIZE(plain);

				at += emit(p, at, plain[i].bytes, plain[i].len, U_PLAIN, fn);
			} else if (r < 11) {
				fixups[nr_fix++] = at;
				at += emit(p, at, jcc, sizeof(jcc), U_JCC, fn);
			} else if (r == 11) {
				/* a short loop back: taken at random, so it ends */
				uint32_t t = starts[rnd(p) % (k + 1)];

				if (at + 2 - t > 120)
					t = at;
				at += emit(p, at, jcc8, sizeof(jcc8), U_JCC, fn);
				p->code[at - 1] = (uint8_t)(int8_t)(t - at);
				p->units[at - 2].target = t;
			} else if (r == 12 && fn + 1 < NR_FUNCS) {
				at += emit(p, at, call, sizeof(call), U_CALL, fn);
				p->units[at - 5].target = fn + 1 + rnd(p) % (NR_FUNCS - fn - 1);
			} else if (r == 13 && fn + 1 < NR_FUNCS) {
				at += emit(p, at, icall, sizeof(icall), U_ICALL, fn);
			} else if (r == 14) {
				fixups[nr_fix++] = at;
				at += emit(p, at, ijmp, sizeof(ijmp), U_IJMP, fn);
			} else {
				at += emit(p, at, sysc, sizeof(sysc), U_SYSCALL, fn);
			}
		}
		/* The last unit: RET, or function 0's JMP to its start. */
		starts[n] = at;
		if (fn) {
			static const uint8_t ret = 0xc3;

			at += emit(p, at, &ret, 1, U_RET, fn);
		} else {
			static const uint8_t jmp[] = { 0xe9, 0, 0, 0, 0 };

			emit(p, at, jmp, sizeof(jmp), U_JMP, fn);
			put_rel32(p, at, sizeof(jmp), p->fn_start[0]);
			at += sizeof(jmp);
		}
		p->fn_end[fn] = at;
		/* Forward branches: to a later unit of the function. */
		for (unsigned int i = 0; i < nr_fix; i++) {
			uint32_t from = fixups[i], t = 0;

			for (unsigned int k = 0; k <= n; k++) {
				if (starts[k] > from) {
					t = starts[k + rnd(p) % (n + 1 - k)];
					break;
				}
			}
			if (p->units[from].type == U_JCC)
				put_rel32(p, from, 6, t);
			else
				p->units[from].target = t;
		}
	}
	/* Direct calls: to the functions chosen above. */
	for (uint32_t a = 0; a < at; a++) {
		if (p->units[a].type == U_CALL && p->units[a].len)
			put_rel32(p, a, 5, p->fn_start[p->units[a].target]);
	}
}

/*
 * Run the program for @insns instructions, writing its trace; the trace's
 * length at each interrupt (where an AUX sample's snippet ends) in @ends.
 */
static int program__run(struct program *p, struct auxsample_pt_writer *w, unsigned int insns,
			bool cyc, size_t *ends, uint64_t *ips, unsigned int *nr_ends,
			unsigned int max_ends)
{
	uint32_t stack[1024], ip = p->fn_start[0];
	unsigned int depth = 0;
	uint64_t tsc = 1000;

	auxsample_pt_writer__tick(w, tsc);
	if (auxsample_pt_writer__start(w, CODE_BASE + ip))
		return -1;
	for (unsigned int i = 0; i < insns; i++) {
		const struct unit *u = &p->units[ip];
		uint64_t next = CODE_BASE + ip + u->len;
		int err = 0;

		if (!u->len || auxsample_pt_writer__maybe_psb(w, CODE_BASE + ip)) {
			pr_test("step %u: no instruction at %#x, or no PSB\n", i, ip);
			return -1;
		}
		if (rnd(p) % 400 == 0) {
			size_t len;

			/* The kernel's time: after the interrupt's packets */
			if (auxsample_pt_writer__interrupt(w, CODE_BASE + ip))
				return -1;
			auxsample_pt_writer__tick(w, tsc += 5000);
			auxsample_pt_writer__data(w, &len);
			if (*nr_ends < max_ends) {
				ips[*nr_ends] = CODE_BASE + ip;
				ends[(*nr_ends)++] = len;
			}
			if (auxsample_pt_writer__resume(w, CODE_BASE + ip))
				return -1;
			continue;
		}
		/*
		 * With CYC, time per instruction run: 1 to 4 ticks, for CYCs
		 * that differ; or always p->cpi, for cycles that can be checked.
		 */
		if (cyc)
			auxsample_pt_writer__tick(w, tsc += p->cpi ?: 1 + rnd(p) % 4);
		switch (u->type) {
		case U_PLAIN:
			ip += u->len;
			break;
		case U_JCC: {
			bool taken = rnd(p) % 2;

			err = auxsample_pt_writer__cond(w, taken);
			ip = taken ? u->target : ip + u->len;
			break;
		}
		case U_JMP:
			ip = u->target;
			break;
		case U_CALL:
		case U_ICALL: {
			/* a direct call's target is set; an indirect one's, chosen now */
			uint32_t to = u->type == U_CALL ? u->target :
				      p->fn_start[u->fn + 1 + rnd(p) % (NR_FUNCS - u->fn - 1)];

			if (depth == ARRAY_SIZE(stack)) {
				pr_test("stack overflow at %#x\n", ip);
				return -1;
			}
			stack[depth++] = ip + u->len;
			err = auxsample_pt_writer__call(w, next, u->type == U_ICALL,
							CODE_BASE + to);
			ip = to;
			break;
		}
		case U_IJMP:
			err = auxsample_pt_writer__indirect(w, CODE_BASE + u->target);
			ip = u->target;
			break;
		case U_RET:
			if (!depth) {
				pr_test("RET at %#x with no call\n", ip);
				return -1;
			}
			ip = stack[--depth];
			err = auxsample_pt_writer__ret(w, CODE_BASE + ip);
			break;
		case U_SYSCALL:
			err = auxsample_pt_writer__syscall(w) ||
			      auxsample_pt_writer__resume(w, next);
			ip += u->len;
			break;
		default:
			return -1;
		}
		if (err) {
			pr_test("step %u: unit %u at %#x: writer error\n", i, u->type, ip);
			return -1;
		}
	}
	return 0;
}

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
 * The instructions from @to (a branch's target) straight to the branch at
 * @from, both counted; 0 if the code does not get there without a branch.
 */
static unsigned int program__insns(const struct program *p, uint64_t to, uint64_t from)
{
	unsigned int n = 0;

	while (to >= CODE_BASE && to <= from && from < CODE_BASE + CODE_SIZE) {
		const struct unit *u = &p->units[to - CODE_BASE];

		if (!u->len)
			return 0;
		n++;
		if (to == from)
			return n;
		if (u->type != U_PLAIN && !(u->type == U_JCC))
			return 0;
		to += u->len;
	}
	return 0;
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
	pr_test("seed %u%s: %u of %u decodes walked, %u samples, %u branches timed\n", seed,
		cyc ? " (CYC)" : "", r.pair.walked, r.pair.decodes, r.nr_ends, r.pair.timed);
	/* Clean user-only trace is the walker's: it must not hand it on. */
	if (!T_CHECK(r.nr_ends > 10 && r.pair.walked == r.pair.decodes))
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

/* Cut anywhere, bytes flipped: the same, errors included. */
static int check_cut_flipped(bool cyc)
{
	struct run r;
	const uint8_t *trace;
	uint8_t *buf = NULL;
	size_t len;
	uint32_t seed = 77;
	int ret = TEST_FAIL;

	if (run__init(&r, 7, false, cyc, 100000))
		goto out;
	trace = auxsample_pt_writer__data(r.w, &len);
	buf = malloc(8192);
	if (!buf)
		goto out;
	for (int round = 0; round < 3000; round++) {
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
		/* With the late-sample rule two times in three (see above). */
		pair__set_sample_ip(&r.pair, round % 3 == 0 ? 0 : round % 3 == 1 ?
				    r.ips[round % r.nr_ends] : KERNEL_IP);
		if (pair__compare(&r.pair, buf, size, round % 2 ? 64 : 1024)) {
			fprintf(stderr, "  round %d: [%zu, +%zu)\n", round, start, size);
			for (size_t i = 0; i < size; i++) {
				if (buf[i] != trace[start + i])
					fprintf(stderr, "  flipped at %zu: %02x, was %02x\n", i,
						buf[i], trace[start + i]);
			}
			goto out;
		}
	}
	pr_test("%s%u of %u decodes walked, %u branches timed\n", cyc ? "CYC: " : "",
		r.pair.walked, r.pair.decodes, r.pair.timed);
	if (!T_CHECK(r.pair.walked > 0 && (!cyc || r.pair.timed > 0)))
		goto out;
	ret = TEST_OK;
out:
	free(buf);
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

/*
 * The image's shared block cache (pt-blocks.c).  A program's trace and
 * the 64-deep decode of each of its samples by libipt, the reference.
 */
struct traced {
	struct program			*prog;
	struct auxsample_pt_writer	*w;
	const uint8_t			*buf;
	size_t				ends[4096];
	uint64_t			ips[4096];
	unsigned int			nr_ends;
	struct auxsample_branch		(*ref)[64];
	int				*nr_ref;
};

static struct auxsample_config traced__config(struct program *code, struct auxsample_image *image,
					       enum auxsample_pt_decoder which)
{
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.pt = { .family = 6, .model = 85, .stepping = 4 },
		.read_memory = read_program,
		.context = code,
		.image = image,
		.pt_decoder = which,
	};

	return config;
}

static size_t traced__start(const struct traced *t, unsigned int i)
{
	return t->ends[i] > 4096 ? t->ends[i] - 4096 : 0;
}

static int traced__init(struct traced *t, uint32_t seed)
{
	struct auxsample_pt_writer_config wcfg = { .size = sizeof(wcfg), .psb_period = 2048 };
	struct auxsample_config config;
	struct auxsample_decoder *dec;
	size_t len;

	memset(t, 0, sizeof(*t));
	t->prog = malloc(sizeof(*t->prog));
	t->w = auxsample_pt_writer__new(&wcfg);
	t->ref = calloc(ARRAY_SIZE(t->ends), sizeof(*t->ref));
	t->nr_ref = calloc(ARRAY_SIZE(t->ends), sizeof(*t->nr_ref));
	if (!t->prog || !t->w || !t->ref || !t->nr_ref)
		return -1;
	program__generate(t->prog, seed);
	if (program__run(t->prog, t->w, 100000, false, t->ends, t->ips, &t->nr_ends,
			 ARRAY_SIZE(t->ends)))
		return -1;
	t->buf = auxsample_pt_writer__data(t->w, &len);
	config = traced__config(t->prog, NULL, AUXSAMPLE_PT_DECODER_LIBIPT);
	dec = auxsample_decoder__new(&config, NULL);
	if (!dec)
		return -1;
	for (unsigned int i = 0; i < t->nr_ends; i++) {
		const struct auxsample_branch *br;
		size_t start = traced__start(t, i);

		t->nr_ref[i] = auxsample_decoder__decode(dec, t->buf + start, t->ends[i] - start,
							 64);
		auxsample_decoder__branches(dec, &br);
		if (t->nr_ref[i] > 0)
			memcpy(t->ref[i], br, t->nr_ref[i] * sizeof(*br));
	}
	auxsample_decoder__delete(dec);
	return t->nr_ends > 10 ? 0 : -1;
}

static void traced__exit(struct traced *t)
{
	auxsample_pt_writer__delete(t->w);
	free(t->prog);
	free(t->ref);
	free(t->nr_ref);
}

/*
 * Every sample of @t, @step 1 or -1, by @dec (the walker) as libipt
 * decodes it, walked: 0, or -1.  The blocks it built, into *@built.
 */
static int traced__walk(const struct traced *t, struct auxsample_decoder *dec, int step,
			uint64_t *built)
{
	*built = 0;
	for (unsigned int k = 0; k < t->nr_ends; k++) {
		unsigned int i = step > 0 ? k : t->nr_ends - 1 - k;
		size_t start = traced__start(t, i);
		const struct auxsample_branch *br;
		struct auxsample_stats st;
		int n;

		n = auxsample_decoder__decode(dec, t->buf + start, t->ends[i] - start, 64);
		auxsample_decoder__branches(dec, &br);
		auxsample_decoder__stats(dec, &st, sizeof(st));
		*built += st.pt_blocks_built;
		if (n != t->nr_ref[i] || st.pt_fallbacks ||
		    (n > 0 && memcmp(br, t->ref[i], n * sizeof(*br)))) {
			pr_test("sample %u: %d branches, libipt %d, %llu fallbacks\n", i, n,
				t->nr_ref[i], (unsigned long long)st.pt_fallbacks);
			return -1;
		}
	}
	return 0;
}

struct walker_thread {
	const struct traced		*t;
	struct auxsample_image		*image;
	int				step;
	int				err;
	uint64_t			built;
};

static void *walker_thread__run(void *arg)
{
	struct walker_thread *wt = arg;
	struct auxsample_config config = traced__config(wt->t->prog, wt->image,
						       AUXSAMPLE_PT_DECODER_WALKER);
	struct auxsample_decoder *dec = auxsample_decoder__new(&config, NULL);

	wt->err = -1;
	/* Thrice: the decodes after the first overlap the other thread's more. */
	for (int round = 0; dec && round < 3; round++) {
		uint64_t built;

		wt->err = traced__walk(wt->t, dec, wt->step, &built);
		wt->built += built;
		if (wt->err)
			break;
	}
	auxsample_decoder__delete(dec);
	return NULL;
}

/*
 * A block is decoded once an image: a second decoder, and one of a
 * clone, build none; two threads decoding at once (under the sanitizers
 * in `make check`) give libipt's branches.
 */
static int test_blocks_shared(void)
{
	struct auxsample_image *image = NULL, *clone = NULL, *both = NULL;
	struct walker_thread wt[2] = {};
	struct auxsample_decoder *dec[3] = {};
	struct auxsample_config config;
	pthread_t tid[2];
	uint64_t built[3];
	struct traced t;
	int ret = TEST_FAIL;

	if (traced__init(&t, 11))
		goto out;
	image = auxsample_image__new();
	both = auxsample_image__new();
	if (!image || !both)
		goto out;
	config = traced__config(t.prog, image, AUXSAMPLE_PT_DECODER_WALKER);
	dec[0] = auxsample_decoder__new(&config, NULL);
	dec[1] = auxsample_decoder__new(&config, NULL);
	if (!T_CHECK(dec[0] && dec[1]))
		goto out;
	if (!T_CHECK(!traced__walk(&t, dec[0], 1, &built[0])))
		goto out;
	if (!T_CHECK(!traced__walk(&t, dec[1], -1, &built[1])))
		goto out;
	clone = auxsample_image__clone(image);
	if (!T_CHECK(clone))
		goto out;
	config.image = clone;
	dec[2] = auxsample_decoder__new(&config, NULL);
	if (!T_CHECK(dec[2] && !traced__walk(&t, dec[2], 1, &built[2])))
		goto out;
	pr_test("blocks built: %llu, then %llu, on a clone %llu\n", (unsigned long long)built[0],
		(unsigned long long)built[1], (unsigned long long)built[2]);
	if (!T_CHECK(built[0] > 0 && built[1] == 0 && built[2] == 0))
		goto out;

	/* One thread on @both, the other on its clone, as perf's pool. */
	wt[0] = (struct walker_thread){ .t = &t, .image = both, .step = 1 };
	wt[1] = (struct walker_thread){ .t = &t, .image = auxsample_image__clone(both),
					 .step = -1 };
	if (!T_CHECK(wt[1].image))
		goto out;
	for (int i = 0; i < 2; i++) {
		if (!T_CHECK(!pthread_create(&tid[i], NULL, walker_thread__run, &wt[i])))
			goto out;
	}
	for (int i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	pr_test("two threads built %llu and %llu blocks\n", (unsigned long long)wt[0].built,
		(unsigned long long)wt[1].built);
	if (!T_CHECK(!wt[0].err && !wt[1].err))
		goto out;
	/* Each block once, but for those both built at the same time. */
	if (!T_CHECK(wt[0].built + wt[1].built <= 2 * built[0]))
		goto out;
	ret = TEST_OK;
out:
	for (int i = 0; i < 3; i++)
		auxsample_decoder__delete(dec[i]);
	auxsample_image__put(wt[1].image);
	auxsample_image__put(clone);
	auxsample_image__put(both);
	auxsample_image__put(image);
	traced__exit(&t);
	return ret;
}

/* @prog's code in a file of its own, for an image: its name in @name. */
static int program__to_file(const struct program *prog, char *name)
{
	int fd = mkstemp(name);
	bool ok;

	if (fd < 0)
		return -1;
	ok = write(fd, prog->code, CODE_SIZE) == CODE_SIZE;
	close(fd);
	return ok ? 0 : -1;
}

/*
 * New code where the blocks were: a file mapped over the range (the
 * image's add), or code changed in place and said so (JIT,
 * auxsample_image__invalidate()).  The same decoder then walks the new
 * program as libipt decodes it, its blocks built again.
 */
static int test_blocks_remapped(void)
{
	char name[] = "/tmp/auxsample-blocks-XXXXXX";
	struct auxsample_image *image[2] = {};
	struct auxsample_decoder *dec[2] = {};
	struct program *code = malloc(sizeof(*code));
	struct traced t[2] = {};
	int ret = TEST_FAIL;
	bool named = false;

	if (!code || traced__init(&t[0], 21) || traced__init(&t[1], 22))
		goto out;
	for (int k = 0; k < 2; k++) {
		struct auxsample_config config = traced__config(code, NULL,
							       AUXSAMPLE_PT_DECODER_WALKER);
		uint64_t built;

		image[k] = auxsample_image__new();
		if (!T_CHECK(image[k]))
			goto out;
		config.image = image[k];
		dec[k] = auxsample_decoder__new(&config, NULL);
		if (!T_CHECK(dec[k]))
			goto out;
		*code = *t[0].prog;
		if (!T_CHECK(!traced__walk(&t[0], dec[k], 1, &built)))
			goto out;
		if (!T_CHECK(built > 0))
			goto out;
		*code = *t[1].prog;
		if (k == 0) {
			/* libipt reads the file's code, the walker read_program()'s */
			if (!T_CHECK(!program__to_file(t[1].prog, name)))
				goto out;
			named = true;
			if (!T_CHECK(!auxsample_image__add_file(image[k], name, 0, CODE_SIZE,
				     CODE_BASE)))
				goto out;
		} else {
			if (!T_CHECK(!auxsample_image__invalidate(image[k], CODE_BASE, CODE_SIZE)))
				goto out;
		}
		if (!T_CHECK(!traced__walk(&t[1], dec[k], 1, &built)))
			goto out;
		pr_test("%s: %llu blocks built for the new code\n", k ? "invalidated" : "remapped",
			(unsigned long long)built);
		if (!T_CHECK(built > 0))
			goto out;
	}
	ret = TEST_OK;
out:
	if (named)
		unlink(name);
	for (int k = 0; k < 2; k++) {
		auxsample_decoder__delete(dec[k]);
		auxsample_image__put(image[k]);
		traced__exit(&t[k]);
	}
	free(code);
	return ret;
}

struct cache_thread {
	struct ptw_block_cache	*cache;
	unsigned int		seed;
	unsigned int		torn;
};

/*
 * One of two threads on one cache, each putting in and looking up
 * blocks of the same addresses, one dropping ranges too: every block
 * found is whole (its fields all of one block).
 */
static void *cache_thread__run(void *arg)
{
	struct cache_thread *ct = arg;
	uint32_t seed = ct->seed;

	for (unsigned int i = 0; i < 200000; i++) {
		uint64_t ip;
		struct ptw_block b;

		seed = seed * 1103515245 + 12345;
		ip = CODE_BASE + (seed >> 8) % 65536;
		if (i % 3 == 0) {
			b = (struct ptw_block){ .start = ip, .end = ip + 7, .target = ~ip,
						.ninsn = (uint32_t)ip, .cls = X86_BR_COND,
						.length = 2, .valid = 1 };
			ptw_block_cache__insert(ct->cache, &b,
						ptw_block_cache__generation(ct->cache));
		} else if (ct->seed == 2 && i % 1000 == 1) {
			ptw_block_cache__invalidate(ct->cache, ip, 4096);
		} else if (ptw_block_cache__lookup(ct->cache, ip, &b)) {
			ct->torn += b.end != ip + 7 || b.target != ~ip || b.ninsn != (uint32_t)ip;
		}
	}
	return NULL;
}

/*
 * The shared cache holds PTW_CACHE_SETS * PTW_CACHE_WAYS blocks at most,
 * counting what it evicts for more; blocks built before a range was
 * dropped do not come back.
 */
static int test_blocks_cap(void)
{
	const unsigned int cap = PTW_CACHE_SETS * PTW_CACHE_WAYS, n = 3 * cap;
	struct ptw_block_cache *cache = ptw_block_cache__new();
	unsigned int evicted = 0, generation;
	struct ptw_block b = {}, found;
	int ret = TEST_FAIL;

	if (!T_CHECK(cache))
		goto out;
	generation = ptw_block_cache__generation(cache);
	for (unsigned int i = 0; i < n; i++) {
		b = (struct ptw_block){
			.start = CODE_BASE + 3 * i, .end = CODE_BASE + 3 * i + 1,
			.ninsn = 2, .cls = X86_BR_RET, .length = 1, .valid = 1,
		};
		evicted += ptw_block_cache__insert(cache, &b, generation);
	}
	pr_test("%u blocks put in, %u held, %u evicted\n", n, ptw_block_cache__count(cache),
		evicted);
	if (!T_CHECK(ptw_block_cache__count(cache) <= cap))
		goto out;
	if (!T_CHECK(ptw_block_cache__count(cache) + evicted == n))
		goto out;
	/* The newest stays: the oldest of its set went. */
	if (!T_CHECK(ptw_block_cache__lookup(cache, b.start, &found) && found.end == b.end))
		goto out;
	if (!T_CHECK(!ptw_block_cache__lookup(cache, CODE_BASE, &found)))
		goto out;

	ptw_block_cache__invalidate(cache, b.end, 1);		/* its RET */
	if (!T_CHECK(!ptw_block_cache__lookup(cache, b.start, &found)))
		goto out;
	/* Built from the code before: refused. */
	if (!T_CHECK(!ptw_block_cache__insert(cache, &b, generation)))
		goto out;
	if (!T_CHECK(!ptw_block_cache__lookup(cache, b.start, &found)))
		goto out;
	ptw_block_cache__invalidate(cache, 0, UINT64_MAX);
	if (!T_CHECK(ptw_block_cache__count(cache) == 0))
		goto out;

	/* Two threads at once (under the sanitizers in `make check`). */
	{
		struct cache_thread ct[2] = { { cache, 1, 0 }, { cache, 2, 0 } };
		pthread_t tid[2];

		for (int i = 0; i < 2; i++) {
			if (!T_CHECK(!pthread_create(&tid[i], NULL, cache_thread__run, &ct[i])))
				goto out;
		}
		for (int i = 0; i < 2; i++)
			pthread_join(tid[i], NULL);
		pr_test("two threads: %u and %u torn blocks, %u held\n", ct[0].torn, ct[1].torn,
			ptw_block_cache__count(cache));
		if (!T_CHECK(!ct[0].torn && !ct[1].torn && ptw_block_cache__count(cache) <= cap))
			goto out;
	}
	ret = TEST_OK;
out:
	ptw_block_cache__put(cache);
	return ret;
}

const struct test tests_pt_walk[] = {
	{ "walker's packets are libipt's, whole, cut and random", test_parse },
	{ "walker and libipt agree on sample snippets", test_samples },
	{ "walker and libipt agree on cut and flipped snippets", test_cut_flipped },
	{ "walker's blocks are decoded once an image, shared by threads", test_blocks_shared },
	{ "walker's blocks of a range mapped again are the new code's", test_blocks_remapped },
	{ "walker's block cache keeps to its cap, whole under threads", test_blocks_cap },
	{ "walker and libipt agree on sample snippets with CYC", test_samples_cyc },
	{ "walker and libipt agree on cut and flipped snippets with CYC", test_cut_flipped_cyc },
	{ "cycles of the virtual LBR are the instructions' with even CPI", test_cycles_truth },
	{ "cycles of the virtual LBR go on after an OVF", test_cycles_overflow },
	{ NULL, NULL },
};
