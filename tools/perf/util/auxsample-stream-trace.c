// SPDX-License-Identifier: GPL-2.0
/*
 * A stream's trace (auxsample-stream.c): where a run's new bytes lie in
 * perf.data, and the mapping its decoder fetches them into as it goes
 * (auxsample_decoder__set_stream_fetch()), letting go of what is behind.
 * A run's trace is some STREAM_FETCH_AHEAD and STREAM_LET_GO bytes in
 * memory at a time, not the whole run, as upstream's decoder holds the
 * buffer it decodes; only libipt (--decoder=libipt, or where the walker
 * hands a stream over to it) fetches it whole.  A file that perf record
 * -z compressed, whose events have no place in the file, has its runs
 * copied in the first look instead (stream_trace__append()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/kernel.h>
#include <internal/lib.h>

#include "auxsample-stream-trace.h"
#include "data.h"
#include "debug.h"
#include "session.h"

/*
 * Read ahead of what a run's decoder asks for at least this much at a
 * time, and let go of behind it this much: a copy or read and an
 * madvise() every so many bytes, not every sample.  Letting go flushes
 * the TLB, and the decoder misses its tables again after it: letting go
 * of more at a time pays (656cfbc), reading ahead more did not.  An open
 * run (every CPU of a system-wide file has one) holds about the sum of
 * the two.
 */
#define STREAM_FETCH_AHEAD	(64 << 10)
#define STREAM_LET_GO		(256 << 10)

/* @size bytes at @offset in the file onto the trace, to be read later. */
int stream_trace__add_piece(struct stream_trace *t, u64 offset, size_t size)
{
	if (t->nr_pieces == t->cap_pieces) {
		size_t cap = t->cap_pieces ? t->cap_pieces * 2 : 64;
		struct stream_piece *pieces = realloc(t->pieces, cap * sizeof(*pieces));

		if (!pieces)
			return -ENOMEM;
		t->pieces = pieces;
		t->cap_pieces = cap;
	}
	t->pieces[t->nr_pieces++] = (struct stream_piece){ .offset = offset, .len = size };
	t->len += size;
	return 0;
}

/* The last @n bytes are padding, not trace. */
void stream_trace__trim(struct stream_trace *t, size_t n)
{
	t->len -= n;
	while (n && t->nr_pieces) {
		struct stream_piece *piece = &t->pieces[t->nr_pieces - 1];
		size_t k = min_t(size_t, n, piece->len);

		piece->len -= k;
		n -= k;
		if (!piece->len)
			t->nr_pieces--;
	}
}

/*
 * Pieces read at once when they lie at most this far apart: a dense
 * file's run has a piece of a few dozen bytes in each 4 KiB sample, and a
 * read each cost more than the run's decode (one system call a sample).
 */
#define STREAM_READ_SPAN	(1 << 20)

/* How many of the pieces from @i on, up to @j, one read of at most STREAM_READ_SPAN holds. */
static size_t stream_trace__span(const struct stream_trace *t, size_t i, size_t j, u64 *len)
{
	u64 start = t->pieces[i].offset;
	size_t k = i + 1;

	while (k < j && t->pieces[k].offset >= start &&
	       t->pieces[k].offset + t->pieces[k].len - start <= STREAM_READ_SPAN)
		k++;
	*len = t->pieces[k - 1].offset + t->pieces[k - 1].len - start;
	return k - i;
}

/*
 * @n of the run's pieces from @i on into its trace at *@pos, from @src,
 * which holds the file's bytes from offset @base.
 */
static void stream_trace__copy(struct stream_trace *t, size_t i, size_t n, const u8 *src,
			     u64 base, u64 *pos)
{
	for (; n--; i++) {
		const struct stream_piece *piece = &t->pieces[i];

		memcpy(t->buf + *pos, src + (piece->offset - base), piece->len);
		*pos += piece->len;
	}
}

/* The run's pieces [@i, @j) from @fd into its trace at @pos, neighbours by one read. */
static int stream_trace__pread(struct stream_trace *t, int fd, size_t i, size_t j, u64 pos)
{
	u8 *buf = NULL;
	int err = 0;

	while (i < j) {
		const struct stream_piece *first = &t->pieces[i];
		u64 len;
		size_t n = stream_trace__span(t, i, j, &len);

		if (n == 1) {
			if (preadn(fd, t->buf + pos, first->len, first->offset) !=
			    (ssize_t)first->len)
				goto out_eio;
			pos += first->len;
			i++;
			continue;
		}
		if (!buf) {
			buf = malloc(STREAM_READ_SPAN);
			if (!buf) {
				err = -ENOMEM;
				goto out;
			}
		}
		if (preadn(fd, buf, len, first->offset) != (ssize_t)len)
			goto out_eio;
		stream_trace__copy(t, i, n, buf, first->offset, &pos);
		i += n;
	}
out:
	free(buf);
	return err;
out_eio:
	err = -EIO;
	goto out;
}

/*
 * The run's pieces [@i, @j) into its trace at @pos: from perf's reader's
 * mapping of the whole file while it has one, as
 * auxtrace_queues__add_buffer() takes an AUXTRACE buffer's (the first
 * look read every piece's page through it), else read from the file.
 */
static int stream_trace__read(struct stream_trace *t, size_t i, size_t j, u64 pos)
{
	struct perf_session *session = t->session;

	if (!session->one_mmap)
		return stream_trace__pread(t, perf_data__fd(session->data), i, j, pos);
	stream_trace__copy(t, i, j - i, session->one_mmap_addr, session->one_mmap_offset, &pos);
	return 0;
}

/*
 * The mapping's pages for the run's bytes [@from, @to), about to be
 * written, made at once: the copy would fault each page in, one
 * exception a page where this is one system call, and exceptions are
 * costly in a VM (cbb697f).  Only a hint: a kernel before 5.14 (no
 * MADV_POPULATE_WRITE) faults them in as before.
 */
static void stream_trace__populate(struct stream_trace *t, u64 from, u64 to)
{
#ifdef MADV_POPULATE_WRITE
	u64 start = round_down(from, page_size), end = round_up(to, page_size);

	if (start < end)
		madvise(t->buf + start, end - start, MADV_POPULATE_WRITE);
#endif
}

/* The piece that holds the run's byte @at, and where it begins in the run. */
static size_t stream_trace__piece_at(const struct stream_trace *t, u64 at, u64 *pos)
{
	size_t i = 0;

	for (*pos = 0; i < t->nr_pieces && *pos + t->pieces[i].len <= at; i++)
		*pos += t->pieces[i].len;
	return i;
}

/*
 * auxsample_decoder__set_stream_fetch()'s callback: the run's bytes
 * [@from, @to) after its decoder's base into its mapping, and those
 * before @from let go.  A forward walk asks for a little more each
 * sample: it reads STREAM_FETCH_AHEAD bytes at a time, and lets go of
 * STREAM_LET_GO.
 */
int stream_trace__fetch(u64 from, u64 to, void *arg)
{
	struct stream_trace *t = arg;
	u64 pos, last, want, keep;
	size_t i, j;
	int err;

	if (from > to || to > t->len - t->base)
		return -EINVAL;
	from += t->base;
	to += t->base;
	keep = round_down(from, page_size);
	/* Let go before: libipt, taking the stream over, reads it again whole. */
	if (keep < t->lo) {
		i = stream_trace__piece_at(t, keep, &pos);
		j = stream_trace__piece_at(t, t->lo - 1, &last) + 1;
		err = stream_trace__read(t, i, j, pos);
		if (err)
			goto out_err;
		t->lo = keep;
	}
	if (to > t->hi) {
		pos = t->hi;
		want = min_t(u64, t->len, max_t(u64, to, pos + STREAM_FETCH_AHEAD));
		for (j = t->next_piece; j < t->nr_pieces && t->hi < want; j++)
			t->hi += t->pieces[j].len;
		stream_trace__populate(t, pos, t->hi);
		err = stream_trace__read(t, t->next_piece, j, pos);
		if (err) {
			t->hi = pos;
			goto out_err;
		}
		t->next_piece = j;
	}
	if (keep >= t->lo + STREAM_LET_GO) {
		/* Its pages are the mapping's: they cost nothing until written again. */
		madvise(t->buf + t->lo, keep - t->lo, MADV_DONTNEED);
		t->lo = keep;
	}
	return 0;
out_err:
	pr_debug("auxsample streams: a stream's trace: %s\n", strerror(-err));
	return err;
}

/*
 * Before the run's first sample is decoded: for a trace in the file, a
 * mapping of its size, where the decoder fetches its bytes; its pages
 * cost memory only once written.
 */
int stream_trace__map(struct stream_trace *t, struct perf_session *session)
{
	void *trace = mmap(NULL, t->len ?: 1, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (trace == MAP_FAILED)
		return -errno;
	t->buf = trace;
	t->mapped = true;
	t->session = session;
	t->lo = t->hi = 0;
	t->next_piece = 0;
	return 0;
}

void stream_trace__exit(struct stream_trace *t)
{
	if (t->mapped)
		munmap(t->buf, t->len ?: 1);
	else
		free(t->buf);
	free(t->pieces);
	memset(t, 0, sizeof(*t));
}

int stream_trace__append(struct stream_trace *t, const u8 *data, size_t size)
{
	if (t->len + size > t->cap) {
		size_t cap = max(t->cap * 2, t->len + size);
		u8 *trace = realloc(t->buf, cap);

		if (!trace)
			return -ENOMEM;
		t->buf = trace;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, data, size);
	t->len += size;
	return 0;
}
