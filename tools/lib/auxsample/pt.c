// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Intel PT backend: libipt's block decoder, blocks ending at every branch
 * (end_on_call, end_on_jump), turned into taken branches.
 *
 * A block's last instruction is its branch; the next block's first IP is
 * where the branch went, unless an event comes between (libipt's
 * pt_blk_next(): events are reported before the block they precede).
 * Nothing before the first PSB+ is used: TNT bits and IPs without the
 * state a PSB+ gives cannot be placed, and a guess would be a made-up
 * branch.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <intel-pt.h>
#include "backend.h"
#include "pt-cyc.h"
#include "pt-image.h"
#include "pt-libipt.h"
#include "pt-sync.h"
#include "x86-branch.h"

/*
 * The class and length of the branch that ends a block, by its address:
 * loops end their blocks at the same few branches again and again, and
 * reading the bytes through the shared section cache (a lock or two per
 * read) and decoding them cost more than the rest of the block.  Only
 * code from the image's files is kept, and only for one generation of
 * the image: files do not change under a mapping.
 */
#define PT_INSN_CACHE_SIZE	4096	/* a power of two */

struct pt_insn_cache_entry {
	uint64_t	ip;
	int		isid;		/* 0: empty */
	uint8_t		cls;		/* enum x86_branch_class */
	uint8_t		length;
	uint8_t		mode;		/* enum pt_exec_mode */
};

static struct pt_insn_cache_entry *pt_insn_cache__slot(struct pt_decoder *pd, uint64_t ip)
{
	if (!pd->insn_cache) {
		pd->insn_cache = calloc(PT_INSN_CACHE_SIZE, sizeof(*pd->insn_cache));
		if (!pd->insn_cache)
			return NULL;
	}
	return &pd->insn_cache[(ip ^ (ip >> 13)) & (PT_INSN_CACHE_SIZE - 1)];
}

static void pt_insn_cache__clear(struct pt_decoder *pd)
{
	if (pd->insn_cache)
		memset(pd->insn_cache, 0, PT_INSN_CACHE_SIZE * sizeof(*pd->insn_cache));
}

static int pt_read_memory(uint8_t *buffer, size_t size,
			  const struct pt_asid *asid __maybe_unused,
			  uint64_t ip, void *context)
{
	struct pt_decoder *pd = context;
	int n = auxsample__read_memory(pd->dec, buffer, size, ip);

	return n > 0 ? n : -pte_nomap;
}

static struct pt_image *pt_image__new(struct pt_decoder *pd)
{
	struct pt_image *pti = pt_image_alloc("auxsample");

	if (pti && pt_image_set_callback(pti, pt_read_memory, pd) < 0) {
		pt_image_free(pti);
		pti = NULL;
	}
	return pti;
}

/* Take in the files added to the shared image since the last decode. */
int pt_image__update(struct pt_decoder *pd)
{
	struct auxsample_image *image = pd->config->image;
	struct pt_image_cache *cache = NULL;
	unsigned int generation = 0;
	struct pt_image *pti;
	int err = 0;

	if (!pd->moved &&
	    (!image || auxsample_image__generation(image) == pd->image_generation))
		return 0;
	pti = pt_image__new(pd);
	if (!pti)
		return -AUXSAMPLE_ERR_NOMEM;
	if (image) {
		cache = auxsample_image__lock_cache(image, &auxsample_pt_backend, &generation);
		err = cache ? pt_image_cache__sync(cache, pti) : 0;
		auxsample_image__unlock(image);
	}
	if (err) {
		pt_image_free(pti);
		return err;
	}
	pt_image_free(pd->image);
	pd->image = pti;
	pd->cache = cache;
	pd->image_generation = generation;
	pd->moved = false;
	pt_insn_cache__clear(pd);
	return 0;
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

int pt_error(int pt_err)
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

static void pt_flow__error_as(struct pt_flow *f, int err, int pt_err)
{
	uint64_t offset = 0;

	pt_blk_get_offset(f->blk, &offset);
	auxsample__error(f->dec, offset, err, pt_err);
}

/*
 * An error of libipt's decode, which lost the flow there.  Its -pte_nomem
 * there is its queue of pending events full: events that nothing binds
 * (a run of FUPs with tracing off), corrupt trace.  A failed allocation
 * within libipt's decode has the same code and cannot be told from it;
 * it is taken for corrupt trace too, rather than blame memory for every
 * such trace.
 */
void pt_flow__error(struct pt_flow *f, int pt_err)
{
	if (pt_errcode(pt_err) == pte_nomem)
		pt_flow__error_as(f, -AUXSAMPLE_ERR_DECODE, pt_err);
	else
		pt_flow__error_as(f, pt_error(pt_err), pt_err);
}

/* An event's packets, for the cycles of the branches (pt-cyc.c). */
static void pt_flow__event_time(struct pt_flow *f, enum pt_cyc_event ev)
{
	if (f->pd->config->pt.cyc)
		pt_cyc__event(&f->cyc, f->dec, ev);
}

/* Synced at a PSB: the cycles count from there. */
void pt_flow__synced(struct pt_flow *f)
{
	uint64_t sync;

	auxsample_timing__break(f->dec);
	if (f->pd->config->pt.cyc && !pt_blk_get_sync_offset(f->blk, &sync))
		pt_cyc__start(&f->cyc, f->buf, f->size, sync);
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
	/* Direct jumps and calls need no packet; the others read one. */
	if (f->pd->config->pt.cyc)
		pt_cyc__branch(&f->cyc, dec, f->cls);
	/* A conditional branch is taken when it does not go to the next insn. */
	if (f->cls == X86_BR_COND && (flags || to == next))
		return;

	auxsample__add_branch(dec, f->from, to, kinds[f->cls], flags);
	if (flags)
		return;
	if (f->cls == X86_BR_CALL || f->cls == X86_BR_IND_CALL) {
		/* "call next" (getting the IP) is not a call. */
		if (to != next && auxsample__call(dec, next))
			pt_flow__error_as(f, -AUXSAMPLE_ERR_NOMEM, -pte_nomem);
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
	struct pt_decoder *pd = f->pd;
	struct pt_insn_cache_entry *slot = NULL;
	uint8_t raw[pt_max_insn_size];
	int n;

	if (!b->truncated && b->isid > 0 && pd->cache) {
		slot = pt_insn_cache__slot(pd, b->end_ip);
		if (slot && slot->isid == b->isid && slot->ip == b->end_ip &&
		    slot->mode == b->mode) {
			br->cls = slot->cls;
			br->length = slot->length;
			return 0;
		}
	}
	if (b->truncated) {
		memcpy(raw, b->raw, b->size);
		n = b->size;
	} else if (b->isid > 0 && pd->cache) {
		n = pt_image_cache__read(pd->cache, raw, sizeof(raw), b->isid, b->end_ip);
	} else {
		n = auxsample__read_memory(pd->dec, raw, sizeof(raw), b->end_ip);
	}
	if (n <= 0)
		return -1;
	n = x86_branch__decode(raw, n, pt_x86_mode(b->mode), br);
	if (!n && slot) {
		slot->ip = b->end_ip;
		slot->mode = b->mode;
		slot->isid = b->isid;
		slot->cls = br->cls;
		slot->length = br->length;
	}
	return n;
}

/*
 * Whether the decoder moved on in the trace since the last block; if it
 * did not for PT_MAX_LOOPS blocks, libipt's "trace and instruction flow
 * are out of sync": the flow is lost until the next PSB.
 */
int pt_flow__progress(struct pt_flow *f)
{
	uint64_t offset = 0;

	pt_blk_get_offset(f->blk, &offset);
	if (offset != f->offset) {
		f->offset = offset;
		f->no_progress = 0;
		return 0;
	}
	if (++f->no_progress < PT_MAX_LOOPS)
		return 0;
	f->no_progress = 0;
	f->looped = true;
	return -pte_bad_query;
}

void pt_flow__block(struct pt_flow *f, const struct pt_block *b)
{
	enum x86_branch_class cls = pt_iclass(b->iclass);
	struct x86_branch br = { X86_BR_NONE, 0 };

	if (!b->ninsn)
		return;
	pt_flow__resolve(f, b->ip, 0);
	auxsample__insns(f->dec, b->ninsn);
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

void pt_flow__event(struct pt_flow *f, const struct pt_event *ev)
{
	struct auxsample_decoder *dec = f->dec;
	uint64_t from;

	switch (ev->type) {
	case ptev_enabled:
		auxsample__stats(dec)->end_ip = 0;
		auxsample_timing__start(dec);
		pt_flow__event_time(f, PT_CYC_ENABLED);
		auxsample__boundary(dec, 0, ev->variant.enabled.ip);
		break;
	case ptev_disabled:
		/* A branch out of the traced code, e.g. a syscall in //u trace. */
		from = f->pending ? f->from : f->last_ip;
		if (f->pending) {
			auxsample__stats(dec)->end_ip = f->from;
			if (ev->ip_suppressed)
				pt_flow__resolve(f, 0, AUXSAMPLE_BRF_TO_UNKNOWN);
			else
				pt_flow__resolve(f, ev->variant.disabled.ip, 0);
		}
		pt_flow__event_time(f, PT_CYC_DISABLED);
		auxsample_timing__stop(dec);
		auxsample__boundary(dec, from, 0);
		break;
	case ptev_async_disabled:
		/* Stopped at .at: an interrupt, in //u trace the sample's. */
		pt_flow__resolve(f, ev->variant.async_disabled.at, 0);
		auxsample__stats(dec)->end_ip = ev->variant.async_disabled.at;
		pt_flow__event_time(f, PT_CYC_ASYNC);
		auxsample_timing__stop(dec);
		auxsample__boundary(dec, ev->variant.async_disabled.at, 0);
		break;
	case ptev_async_branch:
		pt_flow__resolve(f, ev->variant.async_branch.from, 0);
		pt_flow__event_time(f, PT_CYC_ASYNC);
		auxsample__add_branch(dec, ev->variant.async_branch.from,
				      ev->variant.async_branch.to, AUXSAMPLE_BR_INTR, 0);
		break;
	case ptev_overflow:
		f->pending = false;
		auxsample_timing__break(dec);
		pt_flow__event_time(f, PT_CYC_OVERFLOW);
		auxsample__error(dec, 0, -AUXSAMPLE_ERR_OVERFLOW, -pte_overflow);
		auxsample__gap(dec, f->last_ip, ev->ip_suppressed ? 0 : ev->variant.overflow.ip);
		break;
	default:
		break;
	}
}

/*
 * The next event, taken into the flow; in @ev, type PT_EVENT_NONE where
 * there was none.  pt_blk_event() copies an event out and applies it
 * before it decodes the one after, whose error it returns (libipt 2.0,
 * and 2.1 where that error is not deferred): the event still happened,
 * before the error.  A TIP.PGD followed by a corrupt packet is then a
 * stop all the same, as where the packet is not in the snippet at all.
 */
int pt_flow__next_event(struct pt_flow *f, struct pt_event *ev)
{
	int status;

	ev->type = PT_EVENT_NONE;
	status = pt_blk_event(f->blk, ev, sizeof(*ev));
	if (ev->type != PT_EVENT_NONE)
		pt_flow__event(f, ev);
	return status;
}

/* Decode from a sync point until the trace ends or fails. */
static int pt_flow__run(struct pt_flow *f, int status)
{
	struct pt_block b;
	struct pt_event ev;

	for (;;) {
		while (status & pts_event_pending) {
			status = pt_flow__next_event(f, &ev);
			if (status < 0)
				return status;
		}
		status = pt_blk_next(f->blk, &b, sizeof(b));
		/* The block is valid even when its end is an error. */
		pt_flow__block(f, &b);
		if (status < 0)
			return status;
		if (pt_flow__progress(f))
			return -pte_bad_query;
	}
}

void pt_config__fill(struct pt_config *cfg, const struct auxsample_pt_config *pt,
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

/* An IP packet's IP, against the last one (SDM Vol. 3C, "IP Compression"). */
static uint64_t pt_packet__ip(const struct pt_packet_ip *p, uint64_t last_ip)
{
	switch (p->ipc) {
	case pt_ipc_update_16:
		return (last_ip & ~0xffffULL) | (p->ip & 0xffffULL);
	case pt_ipc_update_32:
		return (last_ip & ~0xffffffffULL) | (p->ip & 0xffffffffULL);
	case pt_ipc_update_48:
		return (last_ip & ~0xffffffffffffULL) | (p->ip & 0xffffffffffffULL);
	case pt_ipc_sext_48:
		return (uint64_t)((int64_t)(p->ip << 16) >> 16);
	case pt_ipc_full:
		return p->ip;
	case pt_ipc_suppressed:
	default:
		return last_ip;
	}
}

/*
 * The flow was lost at @lost and is found again at the PSB at @until (or
 * the end): the trace between still shows where indirect branches went.
 * One into user space (an IRET's TIP, back from a kernel that has no
 * code here) is a start for the late-sample rule: the sample point is
 * after it, not where a branch decoded before came from its IP (an
 * earlier sample's interrupt at the same IP).  The packets are read from
 * the PSB at @psb, for the IPs compressed against earlier ones.
 */
static void pt_flow__lost(struct pt_flow *f, uint64_t psb, uint64_t lost, uint64_t until)
{
	struct pt_packet_decoder *pkt;
	uint64_t offset, ip = 0;
	struct pt_packet p;

	if (!f->cfg || !auxsample__late_waiting(f->dec))
		return;
	pkt = pt_pkt_alloc_decoder(f->cfg);
	if (!pkt)
		return;
	if (pt_pkt_sync_set(pkt, psb) < 0)
		goto out;
	/* Each packet moves the decoder on: at most the snippet's bytes. */
	while (!pt_pkt_get_offset(pkt, &offset) && offset < until &&
	       pt_pkt_next(pkt, &p, sizeof(p)) >= 0) {
		switch (p.type) {
		case ppt_psb:
			ip = 0;
			break;
		case ppt_tip:
		case ppt_tip_pge:
			if (p.payload.ip.ipc == pt_ipc_suppressed)
				break;
			ip = pt_packet__ip(&p.payload.ip, ip);
			if (offset >= lost && auxsample__lost_branch(f->dec, ip)) {
				/*
				 * Back in user space at @ip, but the flow from
				 * there is not known before the next PSB: a gap,
				 * never an older branch, is the newest entry.
				 */
				auxsample__gap(f->dec, ip, 0);
				goto out;
			}
			break;
		case ppt_tip_pgd:
		case ppt_fup:
			ip = pt_packet__ip(&p.payload.ip, ip);
			break;
		default:
			break;
		}
	}
out:
	pt_pkt_free_decoder(pkt);
}

/* Decode from the sync point at @offset, or from the first if negative. */
static int pt_flow__decode_from(struct pt_flow *f, int64_t offset)
{
	struct auxsample_decoder *dec = f->dec;
	struct auxsample_stats *stats = auxsample__stats(dec);
	uint64_t sync, lost, until;
	int status;

	if (offset >= 0)
		status = pt_blk_sync_set(f->blk, offset);
	else
		status = pt_blk_sync_forward(f->blk);

	while (status >= 0) {
		sync = 0;
		pt_blk_get_sync_offset(f->blk, &sync);
		if (!stats->syncs++)
			stats->decode_start = sync;
		pt_flow__synced(f);

		status = pt_flow__run(f, status);
		if (status == -pte_eos)
			return 0;
		/* Lost until the next PSB: a gap in the flow. */
		pt_flow__error(f, status);
		f->pending = false;
		auxsample__gap(dec, f->last_ip, 0);
		until = f->cfg->end - f->cfg->begin;
		lost = until;
		pt_blk_get_offset(f->blk, &lost);
		status = pt_blk_sync_forward(f->blk);
		if (status >= 0)
			pt_blk_get_sync_offset(f->blk, &until);
		pt_flow__lost(f, sync, lost, until);
	}
	if (status != -pte_eos)
		pt_flow__error(f, status);
	return stats->syncs ? 0 : -AUXSAMPLE_ERR_NOSYNC;
}

/* From the PSB at @offset, or from the snippet's first if negative. */
static int pt_flow__decode_psb(void *ctx, int64_t offset, uint64_t first __maybe_unused)
{
	struct pt_flow *f = ctx;

	f->pending = false;
	return pt_flow__decode_from(f, offset);
}

static int pt_decoder__decode(void *priv, const uint8_t *buf, size_t len)
{
	struct pt_decoder *pd = priv;
	struct pt_config cfg;
	struct pt_flow f = { .pd = pd, .dec = pd->dec, .buf = buf, .size = len, .cfg = &cfg };
	int status;

	if (!len) {
		auxsample__stats(pd->dec)->bytes_before_sync = 0;
		return -AUXSAMPLE_ERR_NOSYNC;
	}
	status = pt_image__update(pd);
	if (status)
		return status;
	pt_config__fill(&cfg, &pd->config->pt, buf, len);
	f.blk = pt_blk_alloc_decoder(&cfg);
	if (!f.blk)
		return -AUXSAMPLE_ERR_NOMEM;
	status = pt_blk_set_image(f.blk, pd->image);
	if (status < 0)
		status = pt_error(status);
	else
		status = pt_sync__decode(pd->dec, pd->config, buf, len, pt_flow__decode_psb, &f);
	pt_blk_free_decoder(f.blk);
	return status;
}

static int pt_decoder__init(struct auxsample_decoder *dec, const struct auxsample_config *config,
			    void **priv)
{
	struct pt_decoder *pd = calloc(1, sizeof(*pd));

	if (!pd)
		return -AUXSAMPLE_ERR_NOMEM;
	pd->dec = dec;
	pd->config = config;
	pd->image = pt_image__new(pd);
	if (!pd->image) {
		free(pd);
		return -AUXSAMPLE_ERR_NOMEM;
	}
	/* Synced at the first decode, whatever the image's generation. */
	pd->moved = true;
	if (config->pt.cyc)
		auxsample_timing__enable(dec);
	*priv = pd;
	return 0;
}

/*
 * pd->image, libipt's, holds its sections: only the cache's pointer goes
 * now, and the next update makes pd->image again, of the new image.
 */
static void pt_decoder__image_moved(void *priv)
{
	struct pt_decoder *pd = priv;

	pd->cache = NULL;
	pd->moved = true;
}

static void pt_decoder__exit(void *priv)
{
	struct pt_decoder *pd = priv;

	pt_stream__end(pd);
	pt_image_free(pd->image);
	free(pd->insn_cache);
	free(pd);
}

const struct auxsample_backend auxsample_pt_backend = {
	.name		= "Intel PT (libipt)",
	.type		= AUXSAMPLE_TRACE_INTEL_PT,
	.init		= pt_decoder__init,
	.exit		= pt_decoder__exit,
	.decode		= pt_decoder__decode,
	.stream_begin	= pt_stream__begin,
	.stream_to	= pt_stream__to,
	.stream_end	= pt_stream__end,
	.image_new	= pt_image_cache__new,
	.image_sibling	= pt_image_cache__sibling,
	.image_delete	= pt_image_cache__delete,
	.image_add	= pt_image_cache__add,
	.image_clone	= pt_image_cache__clone,
	.image_copy	= pt_image_cache__copy,
	.image_moved	= pt_decoder__image_moved,
	.image_invalidate = pt_image_cache__invalidate,
};
