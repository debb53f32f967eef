// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Intel PT backend: libipt's block decoder, blocks ending at every branch
 * (end_on_call, end_on_jump), turned into taken branches.
 *
 * A block's last instruction is its branch; the next block's first IP is
 * where the branch went, unless an event comes between (DECODERS.md A.5).
 * Nothing before the first PSB+ is used: TNT bits and IPs without the
 * state a PSB+ gives cannot be placed, and a guess would be a made-up
 * branch.
 */
#include <stdbool.h>
#include <string.h>
#include <intel-pt.h>
#include "internal.h"
#include "x86-branch.h"

/* One decode of one snippet. */
struct pt_flow {
	struct auxsample_decoder	*dec;
	struct pt_block_decoder		*blk;
	bool				pending;	/* a branch awaits its target */
	uint64_t			from;
	enum x86_branch_class		cls;
	unsigned int			len;
	uint64_t			last_ip;
};

static int pt_read_memory(uint8_t *buffer, size_t size,
			  const struct pt_asid *asid __maybe_unused,
			  uint64_t ip, void *context)
{
	struct auxsample_decoder *dec = context;
	int n = dec->config.read_memory(buffer, size, ip, dec->config.context);

	return n > 0 ? n : -pte_nomap;
}

int auxsample_pt__init(struct auxsample_decoder *dec)
{
	dec->image = pt_image_alloc("auxsample");
	if (!dec->image)
		return -AUXSAMPLE_ERR_NOMEM;
	if (pt_image_set_callback(dec->image, pt_read_memory, dec) < 0) {
		pt_image_free(dec->image);
		dec->image = NULL;
		return -AUXSAMPLE_ERR_INVALID;
	}
	return 0;
}

void auxsample_pt__exit(struct auxsample_decoder *dec)
{
	pt_image_free(dec->image);
	dec->image = NULL;
}

static enum x86_mode pt_x86_mode(enum pt_exec_mode mode)
{
	switch (mode) {
	case ptem_16bit:
		return X86_MODE_16;
	case ptem_32bit:
		return X86_MODE_32;
	case ptem_64bit:
	case ptem_unknown:
	default:
		return X86_MODE_64;
	}
}

static int pt_error(int pt_err)
{
	switch (pt_errcode(pt_err)) {
	case pte_nomap:
		return -AUXSAMPLE_ERR_NOMAP;
	case pte_nosync:
	case pte_eos:
		return -AUXSAMPLE_ERR_NOSYNC;
	case pte_nomem:
		return -AUXSAMPLE_ERR_NOMEM;
	default:
		return -AUXSAMPLE_ERR_DECODE;
	}
}

static void pt_flow__error(struct pt_flow *f, int pt_err)
{
	uint64_t offset = 0;

	pt_blk_get_offset(f->blk, &offset);
	auxsample__error(f->dec, offset, pt_error(pt_err), pt_err);
}

/* The branch that ended the last block went to @to. */
static void pt_flow__resolve(struct pt_flow *f, uint64_t to, unsigned int flags)
{
	struct auxsample_decoder *dec = f->dec;
	static const unsigned int kinds[] = {
		[X86_BR_COND]		= AUXSAMPLE_BR_COND,
		[X86_BR_JUMP]		= AUXSAMPLE_BR_JUMP,
		[X86_BR_IND_JUMP]	= AUXSAMPLE_BR_IND_JUMP,
		[X86_BR_CALL]		= AUXSAMPLE_BR_CALL,
		[X86_BR_IND_CALL]	= AUXSAMPLE_BR_IND_CALL,
		[X86_BR_RET]		= AUXSAMPLE_BR_RET,
		[X86_BR_FAR]		= AUXSAMPLE_BR_FAR,
	};
	uint64_t next = f->from + f->len;

	if (!f->pending)
		return;
	f->pending = false;
	/* A conditional branch is taken when it does not fall through. */
	if (f->cls == X86_BR_COND && (flags || to == next))
		return;

	auxsample__add_branch(dec, f->from, to, kinds[f->cls], flags);
	if (flags)
		return;
	if (f->cls == X86_BR_CALL || f->cls == X86_BR_IND_CALL) {
		/* "call next" (getting the IP) is not a call. */
		if (to != next && auxsample__call(dec, next))
			pt_flow__error(f, -pte_nomem);
	} else if (f->cls == X86_BR_RET) {
		auxsample__ret(dec, to);
	}
}

static enum x86_branch_class pt_iclass(enum pt_insn_class iclass)
{
	switch (iclass) {
	case ptic_cond_jump:
		return X86_BR_COND;
	case ptic_return:
		return X86_BR_RET;
	case ptic_far_call:
	case ptic_far_return:
	case ptic_far_jump:
		return X86_BR_FAR;
	case ptic_jump:
	case ptic_call:
	case ptic_error:
		return X86_BR_IND_JUMP;	/* to be told apart by decoding */
	case ptic_other:
	case ptic_ptwrite:
	default:
		return X86_BR_NONE;
	}
}

/* Class and length of the block's last instruction, from its bytes. */
static int pt_flow__last_insn(struct pt_flow *f, const struct pt_block *b,
			      struct x86_branch *br)
{
	struct auxsample_decoder *dec = f->dec;
	uint8_t raw[pt_max_insn_size];
	int n;

	if (b->truncated) {
		memcpy(raw, b->raw, b->size);
		n = b->size;
	} else {
		n = dec->config.read_memory(raw, sizeof(raw), b->end_ip, dec->config.context);
	}
	if (n <= 0)
		return -1;
	return x86_branch__decode(raw, n, pt_x86_mode(b->mode), br);
}

static void pt_flow__block(struct pt_flow *f, const struct pt_block *b)
{
	enum x86_branch_class cls = pt_iclass(b->iclass);
	struct x86_branch br = { X86_BR_NONE, 0 };

	if (!b->ninsn)
		return;
	f->dec->stats.insns += b->ninsn;
	pt_flow__resolve(f, b->ip, 0);
	f->last_ip = b->end_ip;

	if (cls == X86_BR_NONE)
		return;
	/*
	 * Returns and far transfers need no length; jumps, calls and Jcc do,
	 * and the cached path may not even say which (ptic_error).
	 */
	if (cls != X86_BR_RET && cls != X86_BR_FAR) {
		if (pt_flow__last_insn(f, b, &br) || br.cls == X86_BR_NONE) {
			pt_flow__error(f, -pte_bad_insn);
			return;
		}
		cls = br.cls;
	}
	f->pending = true;
	f->from = b->end_ip;
	f->cls = cls;
	f->len = br.length;
}

static void pt_flow__event(struct pt_flow *f, const struct pt_event *ev)
{
	struct auxsample_decoder *dec = f->dec;

	switch (ev->type) {
	case ptev_enabled:
		dec->stats.end_ip = 0;
		break;
	case ptev_disabled:
		/* A branch out of the traced code, e.g. a syscall in //u trace. */
		if (f->pending) {
			dec->stats.end_ip = f->from;
			if (ev->ip_suppressed)
				pt_flow__resolve(f, 0, AUXSAMPLE_BRF_TO_UNKNOWN);
			else
				pt_flow__resolve(f, ev->variant.disabled.ip, 0);
		}
		break;
	case ptev_async_disabled:
		/* Stopped at .at: an interrupt, in //u trace the sample's. */
		pt_flow__resolve(f, ev->variant.async_disabled.at, 0);
		dec->stats.end_ip = ev->variant.async_disabled.at;
		break;
	case ptev_async_branch:
		pt_flow__resolve(f, ev->variant.async_branch.from, 0);
		auxsample__add_branch(dec, ev->variant.async_branch.from,
				      ev->variant.async_branch.to, AUXSAMPLE_BR_INTR, 0);
		break;
	case ptev_overflow:
		f->pending = false;
		auxsample__error(dec, 0, -AUXSAMPLE_ERR_OVERFLOW, -pte_overflow);
		auxsample__gap(dec, f->last_ip, ev->ip_suppressed ? 0 : ev->variant.overflow.ip);
		break;
	default:
		break;
	}
}

/* Decode from a sync point until the trace ends or fails. */
static int pt_flow__run(struct pt_flow *f, int status)
{
	struct pt_block b;
	struct pt_event ev;

	for (;;) {
		while (status & pts_event_pending) {
			status = pt_blk_event(f->blk, &ev, sizeof(ev));
			if (status < 0)
				return status;
			pt_flow__event(f, &ev);
		}
		status = pt_blk_next(f->blk, &b, sizeof(b));
		/* The block is valid even when its end is an error. */
		pt_flow__block(f, &b);
		if (status < 0)
			return status;
	}
}

static void pt_config__fill(struct pt_config *cfg, const struct auxsample_pt_config *pt,
			    const uint8_t *buf, size_t len)
{
	pt_config_init(cfg);
	cfg->begin = (uint8_t *)buf;
	cfg->end = (uint8_t *)buf + len;
	if (pt->family) {
		cfg->cpu.vendor = pcv_intel;
		cfg->cpu.family = pt->family;
		cfg->cpu.model = pt->model;
		cfg->cpu.stepping = pt->stepping;
		/* Unknown models only get no workarounds. */
		pt_cpu_errata(&cfg->errata, &cfg->cpu);
	}
	cfg->cpuid_0x15_eax = pt->cpuid_0x15_eax;
	cfg->cpuid_0x15_ebx = pt->cpuid_0x15_ebx;
	cfg->mtc_freq = pt->mtc_freq;
	cfg->nom_freq = pt->nom_freq;
	cfg->flags.variant.block.end_on_call = 1;
	cfg->flags.variant.block.end_on_jump = 1;
}

int auxsample_pt__decode(struct auxsample_decoder *dec, const uint8_t *buf, size_t len)
{
	struct pt_flow f = { .dec = dec };
	struct pt_config cfg;
	uint64_t offset;
	int status;

	if (!len) {
		dec->stats.bytes_before_sync = 0;
		return -AUXSAMPLE_ERR_NOSYNC;
	}
	pt_config__fill(&cfg, &dec->config.pt, buf, len);
	f.blk = pt_blk_alloc_decoder(&cfg);
	if (!f.blk)
		return -AUXSAMPLE_ERR_NOMEM;
	status = pt_blk_set_image(f.blk, dec->image);
	if (status < 0) {
		status = pt_error(status);
		goto out;
	}

	for (;;) {
		status = pt_blk_sync_forward(f.blk);
		if (status < 0) {
			if (status != -pte_eos)
				pt_flow__error(&f, status);
			break;
		}
		if (!dec->stats.syncs++ && !pt_blk_get_sync_offset(f.blk, &offset))
			dec->stats.bytes_before_sync = offset;

		status = pt_flow__run(&f, status);
		if (status == -pte_eos)
			break;
		/* Lost until the next PSB: a gap in the flow. */
		pt_flow__error(&f, status);
		f.pending = false;
		auxsample__gap(dec, f.last_ip, 0);
	}
	status = 0;
	if (!dec->stats.syncs) {
		dec->stats.bytes_before_sync = len;
		status = -AUXSAMPLE_ERR_NOSYNC;
	}
out:
	pt_blk_free_decoder(f.blk);
	return status;
}
