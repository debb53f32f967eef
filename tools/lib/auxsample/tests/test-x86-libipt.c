// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The walker's x86 decoder (x86-branch.c) against libipt's, instruction
 * by instruction: wherever ours takes an instruction, libipt takes it too,
 * with the same length and the same kind of branch.  Where ours refuses
 * one, the walker hands the snippet to libipt, so any answer of libipt's
 * will do there.  The instructions: random bytes, and random prefixes,
 * escapes, VEX and EVEX before random bytes, where lengths differ most,
 * a quarter of them cut short where their mapping ends;
 * X86_SEED=<n> in the environment draws others (12 million of them
 * agreed when this test was written).
 *
 * libipt's decoder is not public: its instruction flow decoder decodes
 * each, at the IP of a FUP in a PSB+, from an image whose code is the
 * instruction's bytes, and returns it whether or not the trace after it
 * (a TNT and a TIP, for branches of any kind) then fits.
 */
#include <stdlib.h>
#include <string.h>
#include <intel-pt.h>
#include "tests.h"
#include "../x86-branch.h"

#define INSN_IP		0x401000ULL
#define X86_INSNS	1000000

struct insn_bytes {
	uint8_t		raw[15];
	size_t		size;		/* where the mapping ends */
};

static int insn_bytes__read(uint8_t *buffer, size_t size, const struct pt_asid *asid,
			    uint64_t ip, void *context)
{
	const struct insn_bytes *ib = context;

	(void)asid;
	if (ip < INSN_IP || ip >= INSN_IP + ib->size)
		return -pte_nomap;
	if (size > INSN_IP + ib->size - ip)
		size = INSN_IP + ib->size - ip;
	memcpy(buffer, ib->raw + (ip - INSN_IP), size);
	return size;
}

/* PSB, MODE.Exec (64-bit), FUP to INSN_IP, PSBEND; a taken TNT, a TIP. */
static const uint8_t insn_trace[] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x99, 0x01,
	0x7d, 0x00, 0x10, 0x40, 0x00, 0x00, 0x00,
	0x02, 0x23,
	0x06,
	0x6d, 0x00, 0x20, 0x40, 0x00, 0x00, 0x00,
};

/* Our class of branch as libipt's (ptic_other: none). */
static enum pt_insn_class x86_class__libipt(int cls)
{
	switch (cls) {
	case X86_BR_COND:
		return ptic_cond_jump;
	case X86_BR_JUMP:
	case X86_BR_IND_JUMP:
		return ptic_jump;
	case X86_BR_CALL:
	case X86_BR_IND_CALL:
		return ptic_call;
	case X86_BR_RET:
		return ptic_return;
	default:
		return ptic_error;	/* far: any of libipt's far classes */
	}
}

static bool libipt_class__far(enum pt_insn_class iclass)
{
	return iclass == ptic_far_call || iclass == ptic_far_return || iclass == ptic_far_jump;
}

/* libipt's instruction at INSN_IP: its length and class, or a negative pt_error_code. */
static int libipt__insn(struct pt_insn_decoder *dec, enum pt_insn_class *iclass)
{
	struct pt_insn insn;
	int status = pt_insn_sync_set(dec, 0);

	while (status >= 0 && (status & pts_event_pending)) {
		struct pt_event ev;

		status = pt_insn_event(dec, &ev, sizeof(ev));
	}
	if (status < 0)
		return status;
	memset(&insn, 0, sizeof(insn));
	status = pt_insn_next(dec, &insn, sizeof(insn));
	/* Decoded, whatever the trace after it: a length and a class. */
	if (status < 0 && (status == -pte_bad_insn || !insn.size))
		return status;
	*iclass = insn.iclass;
	return insn.size;
}

/* The next instruction to try: random bytes, after random prefixes and escapes. */
static void insn_bytes__random(struct insn_bytes *ib, uint64_t *seed)
{
	static const uint8_t prefixes[] = {
		0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65, 0x66, 0x67, 0xf0, 0xf2, 0xf3,
		0x40, 0x41, 0x44, 0x48, 0x49, 0x4c, 0x4f,
	};
	unsigned int n = 0;
	uint64_t r;

	for (size_t i = 0; i < sizeof(ib->raw); i++) {
		*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
		ib->raw[i] = *seed >> 56;
	}
	/* A quarter end in a mapping's last bytes. */
	ib->size = (*seed >> 8) & 3 ? sizeof(ib->raw) : 1 + (*seed >> 10) % sizeof(ib->raw);
	r = *seed >> 20;
	if (r & 1)
		return;		/* all random */
	r >>= 1;
	for (unsigned int i = 0; i < (r & 3); i++, r >>= 5)
		ib->raw[n++] = prefixes[(r >> 2) % sizeof(prefixes)];
	r >>= 2;
	switch (r & 3) {
	case 0:		/* a one-byte opcode */
		break;
	case 1:
		ib->raw[n++] = 0x0f;
		if (r & 4)
			ib->raw[n++] = r & 8 ? 0x38 : 0x3a;
		break;
	case 2:		/* VEX, random payload and opcode */
		ib->raw[n] = r & 4 ? 0xc5 : 0xc4;
		if (ib->raw[n] == 0xc4)
			ib->raw[n + 1] = (ib->raw[n + 1] & 0xe0) | (1 + (r >> 3) % 3);
		break;
	case 3:		/* EVEX */
		ib->raw[n] = 0x62;
		ib->raw[n + 1] = (ib->raw[n + 1] & 0xf8) | (1 + (r >> 3) % 3);
		break;
	}
}

static int test_x86_libipt(void)
{
	struct pt_config config;
	struct pt_insn_decoder *dec = NULL;
	struct pt_image *image = pt_image_alloc(NULL);
	struct insn_bytes ib;
	uint64_t seed = getenv("X86_SEED") ? strtoull(getenv("X86_SEED"), NULL, 0) : 1;
	unsigned int ours = 0, differ = 0;
	int ret = TEST_FAIL;

	memset(&config, 0, sizeof(config));
	config.size = sizeof(config);
	config.begin = (uint8_t *)insn_trace;
	config.end = (uint8_t *)insn_trace + sizeof(insn_trace);
	if (!T_CHECK(image && !pt_image_set_callback(image, insn_bytes__read, &ib)))
		goto out;
	dec = pt_insn_alloc_decoder(&config);
	if (!T_CHECK(dec && !pt_insn_set_image(dec, image)))
		goto out;
	for (unsigned int i = 0; i < X86_INSNS; i++) {
		enum pt_insn_class iclass = ptic_error;
		struct x86_branch br;
		int len, cls = -1, ilen;

		insn_bytes__random(&ib, &seed);
		if (!x86_branch__decode(ib.raw, ib.size, X86_MODE_64, &br)) {
			len = br.length;
			cls = br.cls;
		} else {
			len = x86_insn__length(ib.raw, ib.size, X86_MODE_64);
		}
		if (len <= 0)
			continue;	/* libipt's */
		ours++;
		ilen = libipt__insn(dec, &iclass);
		if (ilen == len && (cls < 0 ? iclass == ptic_other || iclass == ptic_ptwrite :
				    x86_class__libipt(cls) == ptic_error ? libipt_class__far(iclass) :
				    x86_class__libipt(cls) == iclass))
			continue;
		if (differ++ < 20) {
			fprintf(stderr, "  ");
			for (size_t k = 0; k < ib.size; k++)
				fprintf(stderr, "%02x ", ib.raw[k]);
			fprintf(stderr, ": ours %d (class %d), libipt %d (class %d)\n",
				len, cls, ilen, iclass);
		}
	}
	pr_test("%u instructions, %u taken by ours, %u differ from libipt\n", X86_INSNS, ours,
		differ);
	if (T_CHECK(!differ))
		ret = TEST_OK;
out:
	pt_insn_free_decoder(dec);
	pt_image_free(image);
	return ret;
}

const struct test tests_x86_libipt[] = {
	{ "x86 instructions as libipt decodes them", test_x86_libipt },
	{ NULL, NULL },
};
