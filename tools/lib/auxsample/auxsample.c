// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libauxsample: the decoder object and its API.  The decoding itself is
 * a backend's (backend.h), chosen by the trace type; what it produces
 * goes into the ring and the call stack of lbr.c.
 */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* The stream, if any, is done with: its trace may go. */
static void auxsample_decoder__stream_end(struct auxsample_decoder *dec)
{
	if (dec->streaming)
		dec->backend->stream_end(dec->priv);
	dec->streaming = false;
}

AUXSAMPLE_API struct auxsample_decoder *
auxsample_decoder__new(const struct auxsample_config *config, int *errp)
{
	const struct auxsample_backend *backend;
	struct auxsample_decoder *dec;
	size_t size;
	int err;

	err = -AUXSAMPLE_ERR_INVALID;
	if (!config || config->size < offsetof(struct auxsample_config, context) +
				       sizeof(config->context) || !config->read_memory)
		goto out_err;
	if (config->type != AUXSAMPLE_TRACE_INTEL_PT && config->type != AUXSAMPLE_TRACE_ETM)
		goto out_err;
	err = -AUXSAMPLE_ERR_NOT_BUILT;
	if (!auxsample_backend__find(config->type))
		goto out_err;

	err = -AUXSAMPLE_ERR_NOMEM;
	dec = calloc(1, sizeof(*dec));
	if (!dec)
		goto out_err;
	/* Take what the caller's version of the struct has, zero the rest. */
	size = config->size < sizeof(dec->config) ? config->size : sizeof(dec->config);
	memcpy(&dec->config, config, size);
	dec->config.size = sizeof(dec->config);
	err = -AUXSAMPLE_ERR_INVALID;
	if (dec->config.pt_decoder > AUXSAMPLE_PT_DECODER_WALKER)
		goto out_free_dec;
	backend = auxsample_backend__select(&dec->config);
	dec->tid = -1;
	dec->backend = backend;
	auxsample_image__get(dec->config.image);

	err = backend->init(dec, &dec->config, &dec->priv);
	if (err)
		goto out_free;
	/* The caller's, not to be kept: the backend has what it needs of them. */
	dec->config.etm.sources = NULL;
	if (errp)
		*errp = 0;
	return dec;

out_free:
	auxsample_image__put(dec->config.image);
out_free_dec:
	free(dec);
out_err:
	if (errp)
		*errp = err;
	return NULL;
}

AUXSAMPLE_API void auxsample_decoder__delete(struct auxsample_decoder *dec)
{
	if (!dec)
		return;
	auxsample_decoder__stream_end(dec);
	dec->backend->exit(dec->priv);
	auxsample_image__put(dec->config.image);
	auxsample_timing__exit(dec);
	free(dec->ring);
	free(dec->out);
	free(dec->stack);
	free(dec->chain);
	auxsample_late__exit(dec);
	free(dec);
}

AUXSAMPLE_API int auxsample_supports(enum auxsample_trace_type type)
{
	return auxsample_backend__find(type) != NULL;
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

	auxsample_decoder__stream_end(dec);
	err = dec->backend->decode(dec->priv, snippet, len);
	auxsample__finish(dec);
	return err < 0 ? err : (int)dec->ring_count;
}

AUXSAMPLE_API int auxsample_decoder__stream_begin(struct auxsample_decoder *dec,
						  const void *trace, size_t len,
						  unsigned int max_branches)
{
	int err;

	if (!dec || !trace || !len)
		return -AUXSAMPLE_ERR_INVALID;
	if (!dec->backend->stream_begin)
		return -AUXSAMPLE_ERR_UNSUPPORTED;
	auxsample_decoder__stream_end(dec);
	err = auxsample_decoder__reset(dec, len, max_branches);
	if (err)
		return err;
	dec->stream_fetch = dec->fetch;
	dec->stream_fetch_context = dec->fetch_context;
	err = dec->backend->stream_begin(dec->priv, trace, len);
	dec->streaming = !err;
	return err;
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
	struct auxsample_stats stats;
	int err;

	if (!dec || !dec->streaming || start > end)
		return -AUXSAMPLE_ERR_INVALID;
	/* Two samples may end at one stop. */
	stats = (struct auxsample_stats){
		.size = sizeof(stats), .bytes = end - start, .end_ip = dec->stats.end_ip,
	};
	auxsample__stretch(dec, &stats);
	err = dec->backend->stream_to(dec->priv, end);
	if (err)
		return err;
	for (unsigned int i = 0; i < dec->nr_errors; i++)
		dec->errors[i].offset = dec->errors[i].offset > start ?
					dec->errors[i].offset - start : 0;
	auxsample__finish(dec);
	if (dec->ring_count && !auxsample_decoder__ends_at_sample(dec))
		return -AUXSAMPLE_ERR_NOT_IN_STREAM;
	return dec->ring_count;
}

/*
 * The old image may go with its reference: the backend drops what points
 * into it first, and takes the new image's code at the next decode or
 * __stream_to(), as after a change of the image.
 */
AUXSAMPLE_API int auxsample_decoder__set_image(struct auxsample_decoder *dec,
					       struct auxsample_image *image)
{
	struct auxsample_image *old;

	if (!dec)
		return -AUXSAMPLE_ERR_INVALID;
	old = dec->config.image;
	if (image == old)
		return 0;
	dec->config.image = auxsample_image__get(image);
	if (dec->backend->image_moved)
		dec->backend->image_moved(dec->priv);
	auxsample_image__put(old);
	return 0;
}

AUXSAMPLE_API int auxsample_decoder__set_sample_ip(struct auxsample_decoder *dec, uint64_t ip)
{
	if (!dec)
		return -AUXSAMPLE_ERR_INVALID;
	dec->sample_ip = ip;
	return 0;
}

AUXSAMPLE_API int auxsample_decoder__set_stream_fetch(struct auxsample_decoder *dec,
						      auxsample_fetch_fn *fetch, void *context)
{
	if (!dec)
		return -AUXSAMPLE_ERR_INVALID;
	dec->fetch = fetch;
	dec->fetch_context = context;
	return 0;
}

int auxsample__fetch(struct auxsample_decoder *dec, uint64_t from, uint64_t to)
{
	if (!dec->stream_fetch || from >= to)
		return 0;
	return dec->stream_fetch(from, to, dec->stream_fetch_context) ? -AUXSAMPLE_ERR_FETCH : 0;
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
		"decoder not built in",			/* AUXSAMPLE_ERR_NOT_BUILT */
		"not in the stream: decode alone",	/* AUXSAMPLE_ERR_NOT_IN_STREAM */
		"the stream's fetch callback failed",	/* AUXSAMPLE_ERR_FETCH */
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
