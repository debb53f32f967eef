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

static struct auxsample_decoder *new_decoder_reading(uint64_t kernel_start,
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

static struct auxsample_decoder *new_decoder(uint64_t kernel_start)
{
	return new_decoder_reading(kernel_start, read_code);
}

static struct auxsample_pt_writer *new_writer(void)
{
	return auxsample_pt_writer__new(&(struct auxsample_pt_writer_config){
		.size = sizeof(struct auxsample_pt_writer_config),
		.psb_period = 4096,
	});
}

static int check(const struct auxsample_branch *br, uint64_t from, uint64_t to,
		 unsigned int kind)
{
	if (br->from == from && br->to == to && br->kind == kind)
		return 0;
	fprintf(stderr, "  branch %#llx -> %#llx %s, expected %#llx -> %#llx %s\n",
		(unsigned long long)br->from, (unsigned long long)br->to,
		auxsample_branch_kind__name(br->kind), (unsigned long long)from,
		(unsigned long long)to, auxsample_branch_kind__name(kind));
	return -1;
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

static int test_user_sample(void)
{
	struct auxsample_decoder *dec = new_decoder(KSTART), *all = new_decoder(0);
	struct auxsample_pt_writer *pt = new_writer();
	const struct auxsample_branch *br;
	struct auxsample_stats stats;
	const uint64_t *chain;
	const uint8_t *buf;
	size_t len;
	int n;

	T_ASSERT(dec && all && pt && !user_sample_stream(pt));
	buf = auxsample_pt_writer__data(pt, &len);

	/* The rule off: the snippet's end is the sample point. */
	T_ASSERT(auxsample_decoder__set_sample_ip(all, USER + 0x10) == 0);
	T_ASSERT(auxsample_decoder__decode(all, buf, len, 64) == 4);
	T_ASSERT(auxsample_decoder__callchain(all, &chain) == 2 && chain[0] == K + 0x25);

	/* Without a sample IP, too. */
	T_ASSERT(auxsample_decoder__decode(dec, buf, len, 64) == 4);

	T_ASSERT(auxsample_decoder__set_sample_ip(dec, USER + 0x10) == 0);
	n = auxsample_decoder__decode(dec, buf, len, 64);
	T_ASSERT(n == 2 && auxsample_decoder__branches(dec, &br) == 2);
	T_ASSERT(!check(&br[0], USER + 5, USER + 0x10, AUXSAMPLE_BR_CALL));
	T_ASSERT(!check(&br[1], USER, USER + 5, AUXSAMPLE_BR_COND));
	T_ASSERT(auxsample_decoder__callchain(dec, &chain) == 1 && chain[0] == USER + 0xa);
	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	T_ASSERT(stats.late == 2 && stats.branches == 4);

	/* Depth 1: the newest branch before the sample, not after it. */
	T_ASSERT(auxsample_decoder__decode(dec, buf, len, 1) == 1);
	auxsample_decoder__branches(dec, &br);
	T_ASSERT(!check(&br[0], USER + 5, USER + 0x10, AUXSAMPLE_BR_CALL));

	auxsample_pt_writer__delete(pt);
	auxsample_decoder__delete(dec);
	auxsample_decoder__delete(all);
	return TEST_OK;
}

/*
 * A PMI in the kernel, at K+0x10 in the callee of K+0x00: the NMI path
 * at K+0x20 calls that callee again.  The sample starts at the branch
 * whose target runs straight to the IP: the first call, not the second.
 */
static int test_kernel_sample(void)
{
	struct auxsample_decoder *dec = new_decoder(KSTART);
	struct auxsample_pt_writer *pt = new_writer();
	const struct auxsample_branch *br;
	struct auxsample_stats stats;
	const uint64_t *chain;
	const uint8_t *buf;
	size_t len;

	T_ASSERT(dec && pt);
	T_ASSERT(!auxsample_pt_writer__start(pt, K) &&
		 !auxsample_pt_writer__call(pt, K + 5, false, K + 0x10) &&
		 !auxsample_pt_writer__async(pt, K + 0x10, K + 0x20) &&
		 !auxsample_pt_writer__call(pt, K + 0x25, false, K + 0x10) &&
		 !auxsample_pt_writer__stop(pt));
	buf = auxsample_pt_writer__data(pt, &len);
	auxsample_decoder__set_sample_ip(dec, K + 0x10);
	T_ASSERT(auxsample_decoder__decode(dec, buf, len, 64) == 1);
	auxsample_decoder__branches(dec, &br);
	T_ASSERT(!check(&br[0], K, K + 0x10, AUXSAMPLE_BR_CALL));
	T_ASSERT(auxsample_decoder__callchain(dec, &chain) == 1 && chain[0] == K + 5);
	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	T_ASSERT(stats.late == 2);

	/* An IP no straight line passes: nothing is known to be before it. */
	auxsample_decoder__set_sample_ip(dec, K + 0x28);
	T_ASSERT(auxsample_decoder__decode(dec, buf, len, 64) == 0);
	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	T_ASSERT(stats.late == 3);

	auxsample_pt_writer__delete(pt);
	auxsample_decoder__delete(dec);
	return TEST_OK;
}

/*
 * A kernel sample in a syscall: its branches start at the syscall from
 * user space, whatever the kernel did after it.
 */
static int test_kernel_sample_from_user(void)
{
	struct auxsample_decoder *dec = new_decoder(KSTART);
	struct auxsample_pt_writer *pt = new_writer();
	const struct auxsample_branch *br;
	const uint8_t *buf;
	size_t len;

	/* "syscall" is the call at 0x1005 here: only its target matters. */
	user_code[5] = 0x0f;
	user_code[6] = 0x05;
	T_ASSERT(dec && pt);
	T_ASSERT(!auxsample_pt_writer__start(pt, USER) &&
		 !auxsample_pt_writer__cond(pt, true) &&
		 !auxsample_pt_writer__indirect(pt, K + 0x20) &&
		 !auxsample_pt_writer__call(pt, K + 0x25, false, K + 0x10) &&
		 !auxsample_pt_writer__stop(pt));
	buf = auxsample_pt_writer__data(pt, &len);
	auxsample_decoder__set_sample_ip(dec, 0xffffffff82000000ULL);
	T_ASSERT(auxsample_decoder__decode(dec, buf, len, 64) == 2);
	auxsample_decoder__branches(dec, &br);
	T_ASSERT(!check(&br[0], USER + 5, K + 0x20, AUXSAMPLE_BR_FAR));
	user_code[5] = 0xe8;
	user_code[6] = 0x06;
	auxsample_pt_writer__delete(pt);
	auxsample_decoder__delete(dec);
	return TEST_OK;
}

/*
 * User-only trace: a syscall (its target unknown), the trace begins again
 * at its return address, and the PMI comes there.  The trace begin is a
 * branch to user space for the rule, as upstream's trace begin entry is:
 * the syscall stays.
 */
static int test_user_sample_after_syscall(void)
{
	struct auxsample_decoder *dec = new_decoder(KSTART);
	struct auxsample_pt_writer *pt = new_writer();
	const struct auxsample_branch *br;
	const uint8_t *buf;
	size_t len;

	user_code[5] = 0x0f;
	user_code[6] = 0x05;
	T_ASSERT(dec && pt);
	T_ASSERT(!auxsample_pt_writer__start(pt, USER) &&
		 !auxsample_pt_writer__cond(pt, true) &&
		 !auxsample_pt_writer__syscall(pt) &&
		 !auxsample_pt_writer__resume(pt, USER + 7) &&
		 !auxsample_pt_writer__interrupt(pt, USER + 7));
	buf = auxsample_pt_writer__data(pt, &len);
	auxsample_decoder__set_sample_ip(dec, USER + 7);
	T_ASSERT(auxsample_decoder__decode(dec, buf, len, 64) == 2);
	auxsample_decoder__branches(dec, &br);
	T_ASSERT(!check(&br[0], USER + 5, 0, AUXSAMPLE_BR_FAR));
	T_ASSERT(br[0].flags & AUXSAMPLE_BRF_TO_UNKNOWN);
	T_ASSERT(!check(&br[1], USER, USER + 5, AUXSAMPLE_BR_COND));
	user_code[5] = 0xe8;
	user_code[6] = 0x06;
	auxsample_pt_writer__delete(pt);
	auxsample_decoder__delete(dec);
	return TEST_OK;
}

static int read_user_only(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	return addr >= K ? -1 : read_code(buf, size, addr, context);
}

/*
 * No kernel code to be had: the flow is lost at the interrupt.  If it is
 * the sample's (from its IP), the branches before it are the sample's;
 * if it is another's, the sample point may be anywhere after it, and the
 * gap stays the newest entry.
 */
static int test_no_kernel_code(void)
{
	struct auxsample_decoder *dec = new_decoder_reading(KSTART, read_user_only);
	struct auxsample_pt_writer *pt = new_writer();
	const struct auxsample_branch *br;
	const uint8_t *buf;
	size_t len;

	T_ASSERT(dec && pt && !user_sample_stream(pt));
	buf = auxsample_pt_writer__data(pt, &len);

	auxsample_decoder__set_sample_ip(dec, USER + 0x10);
	T_ASSERT(auxsample_decoder__decode(dec, buf, len, 64) == 2);
	auxsample_decoder__branches(dec, &br);
	T_ASSERT(!check(&br[0], USER + 5, USER + 0x10, AUXSAMPLE_BR_CALL));

	/* A later sample, at 0x1011, whose snippet ends in the lost stretch. */
	auxsample_decoder__set_sample_ip(dec, USER + 0x11);
	T_ASSERT(auxsample_decoder__decode(dec, buf, len, 64) == 4);
	auxsample_decoder__branches(dec, &br);
	T_ASSERT(br[0].kind == AUXSAMPLE_BR_GAP);
	T_ASSERT(!check(&br[1], USER + 0x10, K + 0x20, AUXSAMPLE_BR_INTR));

	/*
	 * One at 0x1005, the call: the gap is marked from the last code
	 * decoded, the call too, and no branch from the sample's IP for all
	 * that (perf auxsample simulate --kernel --psb-period 256 without
	 * the image: a sample lost the gap and showed an older one's flow).
	 */
	auxsample_decoder__set_sample_ip(dec, USER + 5);
	T_ASSERT(auxsample_decoder__decode(dec, buf, len, 64) == 4);
	auxsample_decoder__branches(dec, &br);
	T_ASSERT(br[0].kind == AUXSAMPLE_BR_GAP && br[0].from == USER + 5);
	T_ASSERT(!check(&br[1], USER + 0x10, K + 0x20, AUXSAMPLE_BR_INTR));
	auxsample_pt_writer__delete(pt);
	auxsample_decoder__delete(dec);
	return TEST_OK;
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

/*
 * Two PMIs at the same IP, 0x1010, with no PSB between: the first one's
 * NMI path returns to user code (its IRET a TIP) and the second is the
 * sample's.  Without kernel code the flow is lost at the first, and a
 * branch from the sample's IP before the loss is no sign that the sample
 * point came there: the return to user space the trace shows after it
 * says it came later, and the gap stays the newest entry (perf auxsample
 * simulate --kernel --psb-period 256 without the image: a sample showed
 * the branches of the one before it, at the same IP).
 */
static int test_no_kernel_code_same_ip(void)
{
	struct auxsample_decoder *dec = new_decoder_reading(KSTART, read_user_only);
	struct auxsample_pt_writer *pt = new_writer();
	const struct auxsample_branch *br;
	const uint8_t *buf;
	size_t len;

	T_ASSERT(dec && pt && !pmi_stream(pt, true));
	buf = auxsample_pt_writer__data(pt, &len);

	auxsample_decoder__set_sample_ip(dec, USER + 0x10);
	T_ASSERT(auxsample_decoder__decode(dec, buf, len, 64) == 4);
	auxsample_decoder__branches(dec, &br);
	T_ASSERT(br[0].kind == AUXSAMPLE_BR_GAP);
	T_ASSERT(!check(&br[1], USER + 0x10, K + 0x20, AUXSAMPLE_BR_INTR));
	T_ASSERT(!check(&br[2], USER + 5, USER + 0x10, AUXSAMPLE_BR_CALL));

	/* Cut at the first PMI's AUX copy, it is that sample's snippet. */
	auxsample_pt_writer__reset(pt);
	T_ASSERT(!pmi_stream(pt, false));
	buf = auxsample_pt_writer__data(pt, &len);
	T_ASSERT(auxsample_decoder__decode(dec, buf, len, 64) == 2);
	auxsample_decoder__branches(dec, &br);
	T_ASSERT(!check(&br[0], USER + 5, USER + 0x10, AUXSAMPLE_BR_CALL));
	auxsample_pt_writer__delete(pt);
	auxsample_decoder__delete(dec);
	return TEST_OK;
}

const struct test tests_late[] = {
	{ "late sample: without kernel code, a return to user space after a PMI at the IP",
	  test_no_kernel_code_same_ip },
	{ "late sample: without kernel code, a gap where the sample may be stays",
	  test_no_kernel_code },
	{ "late sample: the trace's begin after a syscall is a branch to user space",
	  test_user_sample_after_syscall },
	{ "late sample: a user sample ends at its last branch to user space", test_user_sample },
	{ "late sample: a kernel sample ends where the IP falls", test_kernel_sample },
	{ "late sample: a kernel sample in a syscall ends at the syscall",
	  test_kernel_sample_from_user },
	{ NULL, NULL },
};
