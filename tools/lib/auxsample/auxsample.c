// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libauxsample: the decoder object, and what every backend produces:
 * a ring of the last taken branches, the shadow call stack, statistics.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

#define STACK_INITIAL	64
/*
 * Calls that never return (coroutines, a longjmp not seen) pile up in a
 * long stream: the oldest half goes beyond this, as no call chain shows
 * that many (perf's at most 127).
 */
#define STACK_MAX	1024

static int auxsample_decoder__init_backend(struct auxsample_decoder *dec)
{
	const struct auxsample_etm_config *etm = &dec->config.etm;
	size_t size;

	if (dec->config.type == AUXSAMPLE_TRACE_INTEL_PT)
		return auxsample_pt__init(dec);

	if (!etm->nr_sources || !etm->sources)
		return -AUXSAMPLE_ERR_INVALID;
	size = etm->nr_sources * sizeof(*etm->sources);
	dec->etm_sources = malloc(size);
	if (!dec->etm_sources)
		return -AUXSAMPLE_ERR_NOMEM;
	memcpy(dec->etm_sources, etm->sources, size);
	dec->config.etm.sources = dec->etm_sources;
	return auxsample_etm__init(dec);
}

AUXSAMPLE_API struct auxsample_decoder *
auxsample_decoder__new(const struct auxsample_config *config)
{
	struct auxsample_decoder *dec;
	size_t size;

	if (!config || config->size < offsetof(struct auxsample_config, context) +
				       sizeof(config->context) || !config->read_memory)
		return NULL;
	if (config->type != AUXSAMPLE_TRACE_INTEL_PT && config->type != AUXSAMPLE_TRACE_ETM)
		return NULL;

	dec = calloc(1, sizeof(*dec));
	if (!dec)
		return NULL;
	/* Take what the caller's version of the struct has, zero the rest. */
	size = config->size < sizeof(dec->config) ? config->size : sizeof(dec->config);
	memcpy(&dec->config, config, size);
	dec->config.size = sizeof(dec->config);
	dec->tid = -1;
	auxsample_image__get(dec->config.image);

	if (auxsample_decoder__init_backend(dec)) {
		auxsample_image__put(dec->config.image);
		free(dec->etm_sources);
		free(dec);
		return NULL;
	}
	return dec;
}

AUXSAMPLE_API void auxsample_decoder__delete(struct auxsample_decoder *dec)
{
	if (!dec)
		return;
	if (dec->config.type == AUXSAMPLE_TRACE_ETM) {
		auxsample_etm__exit(dec);
	} else {
		auxsample_pt__stream_end(dec);
		auxsample_pt__exit(dec);
	}
	auxsample_image__put(dec->config.image);
	free(dec->etm_sources);
	auxsample_timing__exit(dec);
	free(dec->ring);
	free(dec->out);
	free(dec->stack);
	free(dec->chain);
	auxsample_late__exit(dec);
	free(dec);
}

static int auxsample_decoder__reset(struct auxsample_decoder *dec, size_t len,
				    unsigned int max)
{
	if (max > dec->ring_cap) {
		struct auxsample_branch *ring = realloc(dec->ring, max * sizeof(*ring));
		struct auxsample_branch *out;

		if (!ring)
			return -AUXSAMPLE_ERR_NOMEM;
		dec->ring = ring;
		out = realloc(dec->out, max * sizeof(*out));
		if (!out)
			return -AUXSAMPLE_ERR_NOMEM;
		dec->out = out;
		dec->ring_cap = max;
	}
	dec->max = max;
	dec->stats.bytes = len;
	auxsample__restart(dec);
	return 0;
}

/* Forget what was decoded, to decode the snippet again from elsewhere. */
void auxsample__restart(struct auxsample_decoder *dec)
{
	uint64_t bytes = dec->stats.bytes;

	dec->ring_next = 0;
	dec->ring_count = 0;
	dec->ring_pushed = 0;
	dec->depth = 0;
	dec->nr_errors = 0;
	auxsample_timing__reset(dec);
	memset(&dec->stats, 0, sizeof(dec->stats));
	dec->stats.size = sizeof(dec->stats);
	dec->stats.bytes = bytes;
	auxsample_late__reset(dec);
}

/* One step of the flow, for a full-trace consumer. */
void auxsample__flow(struct auxsample_decoder *dec, struct auxsample_flow *flow)
{
	if (!dec->config.flow)
		return;
	flow->trace_id = dec->flow_trace_id;
	dec->config.flow(flow, dec->config.flow_context);
}

void auxsample__ring_push(struct auxsample_decoder *dec, const struct auxsample_branch *br)
{
	dec->ring[dec->ring_next] = *br;
	dec->ring_next = (dec->ring_next + 1) % dec->max;
	if (dec->ring_count < dec->max)
		dec->ring_count++;
	dec->ring_pushed++;
}

/*
 * The decode's @nr-th branch (from 1), where it is now: still waiting for
 * the late-sample rule, or in the ring; NULL once the ring overwrote it.
 * Every branch goes into the ring in order, through dec->late or not.
 */
struct auxsample_branch *auxsample__branch_nr(struct auxsample_decoder *dec, uint64_t nr)
{
	uint64_t back;

	if (!nr)
		return NULL;
	if (nr > dec->ring_pushed) {
		nr -= dec->ring_pushed;
		return nr <= dec->late.nr ? &dec->late.pending[nr - 1] : NULL;
	}
	back = dec->ring_pushed - nr;
	if (back >= dec->ring_count)
		return NULL;
	return &dec->ring[(dec->ring_next + dec->max - 1 - back) % dec->max];
}

void auxsample__add_branch(struct auxsample_decoder *dec, uint64_t from,
			   uint64_t to, unsigned int kind, unsigned int flags)
{
	struct auxsample_branch br = { from, to, kind, flags };

	if (kind != AUXSAMPLE_BR_GAP) {
		struct auxsample_flow flow = {
			.type	= AUXSAMPLE_FLOW_BRANCH,
			.kind	= kind,
			.from	= from,
			.to	= to,
			.flags	= flags,
		};

		auxsample__flow(dec, &flow);
	}
	dec->stats.branches++;
	if (!dec->max)
		return;
	auxsample_timing__branch(dec);
	if (auxsample_late__active(dec))
		auxsample_late__add(dec, &br);
	else
		auxsample__ring_push(dec, &br);
}

/* What lies between @from and @to is unknown: no call stack survives. */
void auxsample__gap(struct auxsample_decoder *dec, uint64_t from, uint64_t to)
{
	struct auxsample_flow flow = {
		.type	= AUXSAMPLE_FLOW_GAP,
		.from	= from,
		.to	= to,
	};

	auxsample__flow(dec, &flow);
	dec->stats.gaps++;
	auxsample_late__stack_op(dec, false, 1);
	dec->depth = 0;
	/* The time across the gap is no branch's. */
	auxsample_timing__break(dec);
	if (!dec->max)
		return;
	/* One marker is enough between two stretches of known flow. */
	if (dec->ring_count) {
		unsigned int last = (dec->ring_next + dec->max - 1) % dec->max;

		if (dec->ring[last].kind == AUXSAMPLE_BR_GAP)
			return;
	} else if (!dec->stats.branches) {
		return;		/* nothing known before it: not a gap */
	}
	auxsample__add_branch(dec, from, to, AUXSAMPLE_BR_GAP,
			      to ? 0 : AUXSAMPLE_BRF_TO_UNKNOWN);
	dec->stats.branches--;
}

int auxsample__call(struct auxsample_decoder *dec, uint64_t ret_addr)
{
	if (dec->depth == STACK_MAX) {
		memmove(dec->stack, dec->stack + STACK_MAX / 2,
			STACK_MAX / 2 * sizeof(*dec->stack));
		dec->depth = STACK_MAX / 2;
		auxsample_late__stack_moved(dec);
	}
	if (dec->depth == dec->stack_cap) {
		unsigned int cap = dec->stack_cap ? dec->stack_cap * 2 : STACK_INITIAL;
		uint64_t *stack = realloc(dec->stack, cap * sizeof(*stack));
		uint64_t *chain;

		if (!stack)
			return -AUXSAMPLE_ERR_NOMEM;
		dec->stack = stack;
		chain = realloc(dec->chain, cap * sizeof(*chain));
		if (!chain)
			return -AUXSAMPLE_ERR_NOMEM;
		dec->chain = chain;
		dec->stack_cap = cap;
	}
	auxsample_late__stack_op(dec, true, 0);
	dec->stack[dec->depth++] = ret_addr;
	return 0;
}

/*
 * A return to @to unwinds to the frame that returns there.  A return to
 * none of them went into a frame entered before the snippet began: every
 * frame seen since was left without a return (longjmp ...).
 */
void auxsample__ret(struct auxsample_decoder *dec, uint64_t to)
{
	unsigned int i = dec->depth;

	auxsample_late__stack_op(dec, false, 0);
	while (i > 0) {
		if (dec->stack[--i] == to) {
			dec->depth = i;
			return;
		}
	}
	dec->stats.underflows++;
	dec->depth = 0;
}

void auxsample__error(struct auxsample_decoder *dec, uint64_t offset, int error,
		      int lib_error)
{
	struct auxsample_flow flow = {
		.type	= AUXSAMPLE_FLOW_ERROR,
		.kind	= -error,
		.from	= offset,
	};
	struct auxsample_decode_error *e;

	auxsample__flow(dec, &flow);
	dec->stats.errors++;
	if (dec->nr_errors == AUXSAMPLE_MAX_ERRORS)
		return;
	e = &dec->errors[dec->nr_errors++];
	e->offset = offset;
	e->error = error;
	e->lib_error = lib_error;
}

/*
 * The results: the ring newest first, and the call chain, both at the
 * sample point (the late branches waiting in dec->late are left out).
 */
static void auxsample_decoder__finish(struct auxsample_decoder *dec)
{
	unsigned int i, pos = dec->ring_next;

	for (i = 0; i < dec->ring_count; i++) {
		pos = (pos + dec->max - 1) % dec->max;
		dec->out[i] = dec->ring[pos];
	}
	dec->chain_depth = auxsample_late__chain(dec);
	dec->stats.late = dec->late.nr;
}

AUXSAMPLE_API int auxsample_decoder__decode(struct auxsample_decoder *dec,
					    const void *snippet, size_t len,
					    unsigned int max_branches)
{
	int err;

	if (!dec || (!snippet && len))
		return -AUXSAMPLE_ERR_INVALID;
	err = auxsample_decoder__reset(dec, len, max_branches);
	if (err)
		return err;

	if (dec->config.type == AUXSAMPLE_TRACE_ETM) {
		err = auxsample_etm__decode(dec, snippet, len);
	} else {
		auxsample_pt__stream_end(dec);
		err = auxsample_pt__decode(dec, snippet, len);
	}
	auxsample_decoder__finish(dec);
	return err < 0 ? err : (int)dec->ring_count;
}

AUXSAMPLE_API int auxsample_decoder__stream_begin(struct auxsample_decoder *dec,
						  const void *trace, size_t len,
						  unsigned int max_branches)
{
	int err;

	if (!dec || !trace || !len)
		return -AUXSAMPLE_ERR_INVALID;
	if (dec->config.type != AUXSAMPLE_TRACE_INTEL_PT)
		return -AUXSAMPLE_ERR_UNSUPPORTED;
	err = auxsample_decoder__reset(dec, len, max_branches);
	if (err)
		return err;
	return auxsample_pt__stream_begin(dec, trace, len);
}

/*
 * Whether the newest branch is one the late-sample rule keeps: a stream
 * has no room for the rule's branches after the sample point.
 */
static bool auxsample_decoder__ends_at_sample(const struct auxsample_decoder *dec)
{
	const struct auxsample_branch *br = &dec->out[0];
	uint64_t ks = dec->config.kernel_start;

	if (!ks || !dec->sample_ip)
		return true;
	if (br->to && br->to < ks)
		return true;
	return dec->sample_ip >= ks && br->from < ks;
}

/*
 * The ring and the call stack go on from one end to the next; the
 * statistics and errors are the stretch's since the last, at offsets
 * into the snippet.
 */
AUXSAMPLE_API int auxsample_decoder__stream_to(struct auxsample_decoder *dec,
					       uint64_t start, uint64_t end)
{
	uint64_t end_ip;
	int err;

	if (!dec || !dec->stream || start > end)
		return -AUXSAMPLE_ERR_INVALID;
	/* Two samples may end at one stop. */
	end_ip = dec->stats.end_ip;
	dec->nr_errors = 0;
	auxsample_timing__reset(dec);
	memset(&dec->stats, 0, sizeof(dec->stats));
	dec->stats.size = sizeof(dec->stats);
	dec->stats.bytes = end - start;
	dec->stats.end_ip = end_ip;
	err = auxsample_pt__stream_to(dec, end);
	if (err)
		return err;
	for (unsigned int i = 0; i < dec->nr_errors; i++)
		dec->errors[i].offset = dec->errors[i].offset > start ?
					dec->errors[i].offset - start : 0;
	auxsample_decoder__finish(dec);
	if (dec->ring_count && !auxsample_decoder__ends_at_sample(dec))
		return -AUXSAMPLE_ERR_UNSUPPORTED;
	return dec->ring_count;
}

AUXSAMPLE_API int auxsample_decoder__set_sample_ip(struct auxsample_decoder *dec, uint64_t ip)
{
	if (!dec)
		return -AUXSAMPLE_ERR_INVALID;
	dec->sample_ip = ip;
	return 0;
}

AUXSAMPLE_API int auxsample_decoder__set_thread(struct auxsample_decoder *dec, int64_t tid)
{
	if (!dec)
		return -AUXSAMPLE_ERR_INVALID;
	dec->tid = tid < 0 ? -1 : tid;
	return 0;
}

AUXSAMPLE_API int auxsample_decoder__branches(const struct auxsample_decoder *dec,
					      const struct auxsample_branch **branches)
{
	if (!dec || !branches)
		return -AUXSAMPLE_ERR_INVALID;
	*branches = dec->out;
	return dec->ring_count;
}

AUXSAMPLE_API int auxsample_decoder__callchain(const struct auxsample_decoder *dec,
					       const uint64_t **ips)
{
	if (!dec || !ips)
		return -AUXSAMPLE_ERR_INVALID;
	*ips = dec->chain;
	return dec->chain_depth;
}

AUXSAMPLE_API int auxsample_decoder__errors(const struct auxsample_decoder *dec,
					    const struct auxsample_decode_error **errors)
{
	if (!dec || !errors)
		return -AUXSAMPLE_ERR_INVALID;
	*errors = dec->errors;
	return dec->nr_errors;
}

AUXSAMPLE_API int auxsample_decoder__stats(const struct auxsample_decoder *dec,
					   struct auxsample_stats *stats, size_t size)
{
	if (!dec || !stats || size < sizeof(stats->size))
		return -AUXSAMPLE_ERR_INVALID;
	if (size > sizeof(*stats)) {
		memset((char *)stats + sizeof(*stats), 0, size - sizeof(*stats));
		size = sizeof(*stats);
	}
	memcpy(stats, &dec->stats, size);
	stats->size = size;
	return 0;
}

AUXSAMPLE_API const char *auxsample_strerror(int error)
{
	static const char * const msgs[] = {
		"success",
		"invalid argument",			/* AUXSAMPLE_ERR_INVALID */
		"out of memory",			/* AUXSAMPLE_ERR_NOMEM */
		"no sync point in the trace",		/* AUXSAMPLE_ERR_NOSYNC */
		"trace does not match the code",	/* AUXSAMPLE_ERR_DECODE */
		"no memory image at a traced address",	/* AUXSAMPLE_ERR_NOMAP */
		"not supported",			/* AUXSAMPLE_ERR_UNSUPPORTED */
		"the hardware lost trace (overflow)",	/* AUXSAMPLE_ERR_OVERFLOW */
	};
	_Static_assert(ARRAY_SIZE(msgs) == AUXSAMPLE_ERR_END - AUXSAMPLE_ERR_BASE,
		       "a message for each error, in enum order");
	unsigned int e = error < 0 ? -error : error;

	if (!e)
		return msgs[0];
	if (e <= AUXSAMPLE_ERR_BASE || e >= AUXSAMPLE_ERR_END)
		return "unknown error";
	return msgs[e - AUXSAMPLE_ERR_BASE];
}

AUXSAMPLE_API const char *auxsample_branch_kind__name(unsigned int kind)
{
	static const char * const names[] = {
		[AUXSAMPLE_BR_COND]	= "cond",
		[AUXSAMPLE_BR_JUMP]	= "jump",
		[AUXSAMPLE_BR_IND_JUMP]	= "ind_jump",
		[AUXSAMPLE_BR_CALL]	= "call",
		[AUXSAMPLE_BR_IND_CALL]	= "ind_call",
		[AUXSAMPLE_BR_RET]	= "ret",
		[AUXSAMPLE_BR_FAR]	= "far",
		[AUXSAMPLE_BR_INTR]	= "intr",
		[AUXSAMPLE_BR_GAP]	= "gap",
	};

	if (kind >= ARRAY_SIZE(names) || !names[kind])
		return "unknown";
	return names[kind];
}
