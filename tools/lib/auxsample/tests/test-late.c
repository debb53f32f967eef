// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The late-sample rule: with kernel tracing the snippet goes on past the
 * sample point into perf's interrupt path, and decoding leaves that out
 * (upstream's thread_stack__br_sample_late()).  Streams written with the
 * library's PT writer over hand-assembled user and kernel code.
 */
#include <stdlib.h>
#include <string.h>
#include <auxsample/auxsample.h>
#include <auxsample/pt-writer.h>
#include "tests.h"

/*
 * User code:
 * 0x1000: 75 03              jne  0x1005
 * 0x1002: 90 90 90           nop x3
 * 0x1005: e8 06 00 00 00     call 0x1010        (returns to 0x100a)
 * 0x100a: 90 ...
 * 0x1010: 90                 nop
 * 0x1011: c3                 ret
 */
#define USER		0x1000ULL
static uint8_t user_code[] = {
	0x75, 0x03, 0x90, 0x90, 0x90, 0xe8, 0x06, 0x00, 0x00, 0x00,
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3,
};

/*
 * Kernel code:
 * K+0x00: e8 0b 00 00 00     call K+0x10        (returns to K+0x05)
 * K+0x05: 90 ...
 * K+0x10: 90                 nop
 * K+0x11: c3                 ret
 * K+0x20: e8 eb ff ff ff     call K+0x10        (the "NMI handler")
 * K+0x25: 90 ...
 */
#define KSTART		0xffffffff80000000ULL
#define K		0xffffffff81000000ULL
static uint8_t kernel_code[0x30];

static int read_code(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	const uint8_t *code = user_code;
	uint64_t base = USER, len = sizeof(user_code);

	(void)context;
	if (addr >= K) {
		code = kernel_code;
		base = K;
		len = sizeof(kernel_code);
	}
	if (addr < base || addr >= base + len)
		return -1;
	if (size > base + len - addr)
		size = base + len - addr;
	memcpy(buf, code + (addr - base), size);
	return size;
}

static void kernel_code__init(void)
{
	static const uint8_t call1[] = { 0xe8, 0x0b, 0x00, 0x00, 0x00 };
	static const uint8_t call2[] = { 0xe8, 0xeb, 0xff, 0xff, 0xff };

	memset(kernel_code, 0x90, sizeof(kernel_code));
	memcpy(kernel_code, call1, sizeof(call1));
	kernel_code[0x11] = 0xc3;
	memcpy(kernel_code + 0x20, call2, sizeof(call2));
}

static struct auxsample_decoder *new_decoder(uint64_t kernel_start,
					     auxsample_read_memory_fn *read)
{
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.read_memory = read,
		.kernel_start = kernel_start,
	};

	kernel_code__init();
	return auxsample_decoder__new(&config, NULL);
}

static int read_user_only(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	return addr >= K ? -1 : read_code(buf, size, addr, context);
}

static struct auxsample_pt_writer *new_writer(void)
{
	return auxsample_pt_writer__new(&(struct auxsample_pt_writer_config){
		.size = sizeof(struct auxsample_pt_writer_config),
		.psb_period = 4096,
	});
}

/*
 * A PMI in user code, in the callee at 0x1010: into the kernel's NMI
 * path, which calls K+0x10 and is still there when the snippet is cut.
 */
static int user_sample_stream(struct auxsample_pt_writer *pt)
{
	return auxsample_pt_writer__start(pt, USER) ?:
	       auxsample_pt_writer__cond(pt, true) ?:
	       auxsample_pt_writer__call(pt, USER + 0xa, false, USER + 0x10) ?:
	       auxsample_pt_writer__async(pt, USER + 0x10, K + 0x20) ?:
	       auxsample_pt_writer__call(pt, K + 0x25, false, K + 0x10) ?:
	       auxsample_pt_writer__stop(pt);
}

/*
 * A PMI in the kernel, at K+0x10 in the callee of K+0x00: the NMI path
 * at K+0x20 calls that callee again.
 */
static int kernel_sample_stream(struct auxsample_pt_writer *pt)
{
	return auxsample_pt_writer__start(pt, K) ?:
	       auxsample_pt_writer__call(pt, K + 5, false, K + 0x10) ?:
	       auxsample_pt_writer__async(pt, K + 0x10, K + 0x20) ?:
	       auxsample_pt_writer__call(pt, K + 0x25, false, K + 0x10) ?:
	       auxsample_pt_writer__stop(pt);
}

/* A syscall at 0x1005 into the kernel, which goes on after it. */
static int syscall_stream(struct auxsample_pt_writer *pt)
{
	return auxsample_pt_writer__start(pt, USER) ?:
	       auxsample_pt_writer__cond(pt, true) ?:
	       auxsample_pt_writer__indirect(pt, K + 0x20) ?:
	       auxsample_pt_writer__call(pt, K + 0x25, false, K + 0x10) ?:
	       auxsample_pt_writer__stop(pt);
}

/*
 * User-only trace: a syscall (its target unknown), the trace begins again
 * at its return address, and the PMI comes there.
 */
static int user_only_syscall_stream(struct auxsample_pt_writer *pt)
{
	return auxsample_pt_writer__start(pt, USER) ?:
	       auxsample_pt_writer__cond(pt, true) ?:
	       auxsample_pt_writer__syscall(pt) ?:
	       auxsample_pt_writer__resume(pt, USER + 7) ?:
	       auxsample_pt_writer__interrupt(pt, USER + 7);
}

/*
 * PMIs at 0x1010 into the NMI path, each cut at its AUX copy (TIP.PGD at
 * K+0x10); after the first, the trace goes on in the kernel and IRET
 * returns to 0x1000 (a TIP), for the second.
 */
static int pmi_stream(struct auxsample_pt_writer *pt, bool twice)
{
	int err = 0;

	for (int i = 0; i < 1 + twice && !err; i++) {
		if (i)
			err = auxsample_pt_writer__restart_at(pt, K + 0x10) ?:
			      auxsample_pt_writer__indirect(pt, USER);
		else
			err = auxsample_pt_writer__start(pt, USER);
		err = err ?:
		      auxsample_pt_writer__cond(pt, true) ?:
		      auxsample_pt_writer__call(pt, USER + 0xa, false, USER + 0x10) ?:
		      auxsample_pt_writer__async(pt, USER + 0x10, K + 0x20) ?:
		      auxsample_pt_writer__call(pt, K + 0x25, false, K + 0x10) ?:
		      auxsample_pt_writer__stop_at(pt, K + 0x10);
	}
	return err;
}

static int pmi_stream_once(struct auxsample_pt_writer *pt)
{
	return pmi_stream(pt, false);
}

static int pmi_stream_twice(struct auxsample_pt_writer *pt)
{
	return pmi_stream(pt, true);
}

#define ANY	UINT64_MAX

/* A branch the decoder must give; ANY takes any address. */
struct late_branch {
	uint64_t	from, to;
	unsigned int	kind;
	unsigned int	flags;		/* that must be set */
};

/* A decode of the case's stream, and what it must give. */
struct late_step {
	/* The stream from this step on; the first step's is the case's. */
	int			(*stream)(struct auxsample_pt_writer *pt);
	bool			rule_off;	/* decoded without the rule */
	uint64_t		ip;		/* the sample IP; 0: the one before */
	unsigned int		depth;		/* 0 ends the steps */
	int			n;		/* branches */
	struct late_branch	br[3];		/* the newest first; kind 0 ends */
	int			chain_nr;	/* 0: the call chain is not checked */
	uint64_t		chain0;
	uint64_t		late;		/* 0: not checked */
	uint64_t		branches;	/* 0: not checked */
};

struct late_case {
	auxsample_read_memory_fn	*read;
	bool				syscall;	/* the call at 0x1005 a syscall */
	struct late_step		steps[5];
};

static int check(const struct auxsample_branch *br, const struct late_branch *want)
{
	if ((want->from == ANY || br->from == want->from) &&
	    (want->to == ANY || br->to == want->to) && br->kind == want->kind &&
	    (br->flags & want->flags) == want->flags)
		return 0;
	fprintf(stderr, "  branch %#llx -> %#llx %s (flags %#x), expected %#llx -> %#llx %s",
		(unsigned long long)br->from, (unsigned long long)br->to,
		auxsample_branch_kind__name(br->kind), br->flags,
		(unsigned long long)want->from, (unsigned long long)want->to,
		auxsample_branch_kind__name(want->kind));
	fprintf(stderr, " (flags %#x)\n", want->flags);
	return -1;
}

static int late_step__run(const struct late_step *step, struct auxsample_decoder *dec,
			  struct auxsample_pt_writer *pt)
{
	const struct auxsample_branch *br;
	struct auxsample_stats stats;
	const uint64_t *chain;
	const uint8_t *buf;
	size_t len;

	if (step->stream) {
		auxsample_pt_writer__reset(pt);
		if (!T_CHECK(!step->stream(pt)))
			return TEST_FAIL;
	}
	buf = auxsample_pt_writer__data(pt, &len);
	if (step->ip &&
	    !T_CHECK(auxsample_decoder__set_sample_ip(dec, step->ip) == 0))
		return TEST_FAIL;
	if (!T_CHECK(auxsample_decoder__decode(dec, buf, len, step->depth) == step->n))
		return TEST_FAIL;
	if (!T_CHECK(auxsample_decoder__branches(dec, &br) == step->n))
		return TEST_FAIL;
	for (size_t i = 0; i < ARRAY_SIZE(step->br) && step->br[i].kind; i++) {
		if (!T_CHECK(!check(&br[i], &step->br[i])))
			return TEST_FAIL;
	}
	if (step->chain_nr &&
	    !T_CHECK(auxsample_decoder__callchain(dec, &chain) == step->chain_nr &&
		     chain[0] == step->chain0))
		return TEST_FAIL;
	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	if (!T_CHECK(!step->late || stats.late == step->late))
		return TEST_FAIL;
	if (!T_CHECK(!step->branches || stats.branches == step->branches))
		return TEST_FAIL;
	return TEST_OK;
}

/* The steps in order, on one decoder (and one without the rule). */
static int late_case__run(const void *arg)
{
	const struct late_case *c = arg;
	struct auxsample_decoder *dec = new_decoder(KSTART, c->read);
	struct auxsample_decoder *all = new_decoder(0, c->read);
	struct auxsample_pt_writer *pt = new_writer();
	int ret = dec && all && pt ? TEST_OK : TEST_FAIL;

	/* A "syscall" at 0x1005, where the call is: only its target matters. */
	if (c->syscall) {
		user_code[5] = 0x0f;
		user_code[6] = 0x05;
	}
	for (size_t i = 0; ret == TEST_OK && i < ARRAY_SIZE(c->steps) && c->steps[i].depth; i++) {
		const struct late_step *step = &c->steps[i];

		ret = late_step__run(step, step->rule_off ? all : dec, pt);
		if (ret != TEST_OK)
			fprintf(stderr, "  at step %zu\n", i + 1);
	}
	user_code[5] = 0xe8;
	user_code[6] = 0x06;
	auxsample_pt_writer__delete(pt);
	auxsample_decoder__delete(dec);
	auxsample_decoder__delete(all);
	return ret;
}

#define BR(f, t, k)	{ .from = (f), .to = (t), .kind = AUXSAMPLE_BR_##k }

/*
 * Two PMIs at the same IP, 0x1010, with no PSB between: the first one's
 * NMI path returns to user code (its IRET a TIP) and the second is the
 * sample's.  Without kernel code the flow is lost at the first, and a
 * branch from the sample's IP before the loss is no sign that the sample
 * point came there: the return to user space the trace shows after it
 * says it came later, and the gap stays the newest entry (perf auxsample
 * simulate --kernel --psb-period 256 without the image: a sample showed
 * the branches of the one before it, at the same IP).  Cut at the first
 * PMI's AUX copy, it is that sample's snippet.
 */
static const struct late_case no_kernel_code_same_ip = {
	.read = read_user_only,
	.steps = {
		{ .stream = pmi_stream_twice, .ip = USER + 0x10, .depth = 64, .n = 4,
		  .br = { BR(ANY, ANY, GAP), BR(USER + 0x10, K + 0x20, INTR),
			  BR(USER + 5, USER + 0x10, CALL) } },
		{ .stream = pmi_stream_once, .depth = 64, .n = 2,
		  .br = { BR(USER + 5, USER + 0x10, CALL) } },
	},
};

/*
 * No kernel code to be had: the flow is lost at the interrupt.  If it is
 * the sample's (from its IP), the branches before it are the sample's;
 * if it is another's, the sample point may be anywhere after it, and the
 * gap stays the newest entry: for a later sample, at 0x1011, whose
 * snippet ends in the lost stretch; and for one at 0x1005, the call,
 * where the gap is marked from the last code decoded, the call too, and
 * no branch from the sample's IP for all that (perf auxsample simulate
 * --kernel --psb-period 256 without the image: a sample lost the gap and
 * showed an older one's flow).
 */
static const struct late_case no_kernel_code = {
	.read = read_user_only,
	.steps = {
		{ .stream = user_sample_stream, .ip = USER + 0x10, .depth = 64, .n = 2,
		  .br = { BR(USER + 5, USER + 0x10, CALL) } },
		{ .ip = USER + 0x11, .depth = 64, .n = 4,
		  .br = { BR(ANY, ANY, GAP), BR(USER + 0x10, K + 0x20, INTR) } },
		{ .ip = USER + 5, .depth = 64, .n = 4,
		  .br = { BR(USER + 5, ANY, GAP), BR(USER + 0x10, K + 0x20, INTR) } },
	},
};

/*
 * The user-only trace of a syscall: the trace begin is a branch to user
 * space for the rule, as upstream's trace begin entry is: the syscall
 * stays.
 */
static const struct late_case user_sample_after_syscall = {
	.read = read_code,
	.syscall = true,
	.steps = {
		{ .stream = user_only_syscall_stream, .ip = USER + 7, .depth = 64, .n = 2,
		  .br = { { .from = USER + 5, .to = 0, .kind = AUXSAMPLE_BR_FAR,
			    .flags = AUXSAMPLE_BRF_TO_UNKNOWN },
			  BR(USER, USER + 5, COND) } },
	},
};

/*
 * Without the rule, or without a sample IP, the snippet's end is the
 * sample point; with both, the branches end at the last one to user
 * space; at depth 1, the newest branch before the sample, not after it.
 */
static const struct late_case user_sample = {
	.read = read_code,
	.steps = {
		{ .stream = user_sample_stream, .rule_off = true, .ip = USER + 0x10,
		  .depth = 64, .n = 4, .chain_nr = 2, .chain0 = K + 0x25 },
		{ .depth = 64, .n = 4 },
		{ .ip = USER + 0x10, .depth = 64, .n = 2,
		  .br = { BR(USER + 5, USER + 0x10, CALL), BR(USER, USER + 5, COND) },
		  .chain_nr = 1, .chain0 = USER + 0xa, .late = 2, .branches = 4 },
		{ .depth = 1, .n = 1, .br = { BR(USER + 5, USER + 0x10, CALL) } },
	},
};

/*
 * The sample starts at the branch whose target runs straight to the IP:
 * the first call, not the second.  At an IP no straight line passes,
 * nothing is known to be before it.
 */
static const struct late_case kernel_sample = {
	.read = read_code,
	.steps = {
		{ .stream = kernel_sample_stream, .ip = K + 0x10, .depth = 64, .n = 1,
		  .br = { BR(K, K + 0x10, CALL) }, .chain_nr = 1, .chain0 = K + 5,
		  .late = 2 },
		{ .ip = K + 0x28, .depth = 64, .n = 0, .late = 3 },
	},
};

/*
 * A kernel sample in a syscall: its branches start at the syscall from
 * user space, whatever the kernel did after it.
 */
static const struct late_case kernel_sample_from_user = {
	.read = read_code,
	.syscall = true,
	.steps = {
		{ .stream = syscall_stream, .ip = 0xffffffff82000000ULL, .depth = 64, .n = 2,
		  .br = { BR(USER + 5, K + 0x20, FAR) } },
	},
};

const struct test tests_late[] = {
	{ "late sample: without kernel code, a return to user space after a PMI at the IP",
	  .fn_arg = late_case__run, .arg = &no_kernel_code_same_ip },
	{ "late sample: without kernel code, a gap where the sample may be stays",
	  .fn_arg = late_case__run, .arg = &no_kernel_code },
	{ "late sample: the trace's begin after a syscall is a branch to user space",
	  .fn_arg = late_case__run, .arg = &user_sample_after_syscall },
	{ "late sample: a user sample ends at its last branch to user space",
	  .fn_arg = late_case__run, .arg = &user_sample },
	{ "late sample: a kernel sample ends where the IP falls",
	  .fn_arg = late_case__run, .arg = &kernel_sample },
	{ "late sample: a kernel sample in a syscall ends at the syscall",
	  .fn_arg = late_case__run, .arg = &kernel_sample_from_user },
	{ NULL, NULL },
};
