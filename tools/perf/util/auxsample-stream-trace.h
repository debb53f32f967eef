/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_STREAM_TRACE_H
#define __PERF_AUXSAMPLE_STREAM_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct perf_session;

/* Bytes of a run, where they lie in the file. */
struct stream_piece {
	u64		offset;
	u64		len;
};

/* A run's trace: auxsample-stream-trace.c. */
struct stream_trace {
	u8			*buf;		/* mapped, or as copied */
	size_t			len;
	size_t			cap;		/* as copied */
	/* in the file: fetched into the mapping as the decoder asks */
	struct stream_piece	*pieces;
	size_t			nr_pieces;
	size_t			cap_pieces;
	bool			mapped;		/* @buf: mmap()ed, @len bytes */
	struct perf_session	*session;	/* of the file, to read it */
	u64			lo;		/* bytes before let go, page aligned */
	u64			hi;		/* ... from here on not read */
	size_t			next_piece;	/* the first not read */
	/* where the run's decoder began: the offsets it fetches are from here */
	u64			base;
};

int stream_trace__add_piece(struct stream_trace *t, u64 offset, size_t size);
int stream_trace__append(struct stream_trace *t, const u8 *data, size_t size);
void stream_trace__trim(struct stream_trace *t, size_t n);
int stream_trace__map(struct stream_trace *t, struct perf_session *session);
/* auxsample_decoder__set_stream_fetch()'s callback, @arg the trace. */
int stream_trace__fetch(u64 from, u64 to, void *arg);
void stream_trace__exit(struct stream_trace *t);

#endif /* __PERF_AUXSAMPLE_STREAM_TRACE_H */
