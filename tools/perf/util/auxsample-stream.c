// SPDX-License-Identifier: GPL-2.0
/*
 * Overlapping snippets, decoded once.
 *
 * At high sample rates consecutive samples of a CPU carry mostly the same
 * trace: the kernel copies the newest bytes of a buffer that the hardware
 * writes on, so each snippet is the previous one's tail plus what came
 * since.  Decoding each on its own decodes the shared bytes again and
 * again; upstream's decoder trims the overlap and decodes each byte once.
 * So does this: a first look at the file lays the snippets of a CPU's
 * samples of one process end to end, a snippet that begins inside the
 * previous one adding only the bytes after it, and each run of two or
 * more becomes one stream that libauxsample decodes once, stopping at
 * each sample's end (auxsample_decoder__stream_to()).  Every other
 * sample, and any the stream cannot serve, is decoded on its own.
 *
 * The first look keeps where each run's bytes lie in the file, not the
 * bytes: its decoder fetches them as it goes and lets go of those behind
 * (auxsample-stream-trace.c), so memory holds a little of each run being
 * decoded, not the runs (up to STREAM_MAX_RUN bytes each).
 *
 * An overlap is taken only when the bytes say so without doubt: the
 * snippet's first bytes must occur once in the previous snippet such
 * that all that follows them there is the snippet's beginning, over at
 * least STREAM_MIN_OVERLAP bytes.  And only when it is at least half the
 * snippet: a stream decodes every byte once, but a snippet decoded alone
 * only from its latest sync point that gives the branches asked for,
 * which costs less when most of the snippet is new.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>
#include <auxsample/auxsample.h>
#include <internal/lib.h>

#include "auxsample.h"
#include "auxsample-stream-trace.h"
#include "comm.h"
#include "compress.h"
#include "data.h"
#include "debug.h"
#include "evlist.h"
#include "evsel.h"
#include "sample.h"
#include "session.h"
#include "thread.h"
#include "time-utils.h"

#define STREAM_KEY		32	/* the snippet's first bytes, searched for */
#define STREAM_MIN_OVERLAP	512
#define STREAM_MAX_CANDIDATES	16	/* more: periodic trace, not told apart */
/* A longer run ends, and the next sample begins another: bounded memory. */
#define STREAM_MAX_RUN		(16 << 20)

/* Where a snippet's bytes are not in the file (perf record -z). */
#define STREAM_NOT_IN_FILE	((u64)-1)

/* One run of overlapping snippets. */
struct stream_run {
	struct stream_trace		t;
	size_t				last;		/* the last snippet's size */
	bool				in_file;
	bool				done;		/* decoded, or unreadable */
	u32				cpu;
	u32				pid;
	unsigned int			nr_samples;
	unsigned int			served;		/* decoded from the stream */
	bool				failed;		/* decode the rest alone */
	struct auxsample_decoder	*dec;
	struct auxsample_image		*image;		/* the decoder's */
	u64				maps_version;	/* the process's maps then */
	u64				exec_time;	/* stream_ctx__exec_time() then */
	struct auxsample_mem		mem;
};

/* Where one sample's snippet lies in its run, its padding left out. */
struct stream_cut {
	u64		time;
	u64		file;		/* its offset in the file, or STREAM_NOT_IN_FILE */
	u32		start;		/* in the run: at most STREAM_MAX_RUN and a snippet */
	u32		end;
	u32		size;		/* the sample's, padding included */
	unsigned int	run;
	bool		last;		/* of its run */
};

struct stream_cpu {
	u32			cpu;
	struct stream_cut	*cuts;		/* in file order */
	size_t			nr_cuts;
	size_t			cap_cuts;
	size_t			next;		/* the first not yet matched */
	int			open;		/* the run being built, or -1 */
	u8			*prev;		/* the open run's last snippet */
	size_t			cap_prev;
};

struct auxsample_streams {
	struct perf_session	*session;	/* of the file, to read runs */
	struct stream_run	*runs;
	size_t			nr_runs;
	size_t			cap_runs;
	struct stream_cpu	*cpus;
	size_t			nr_cpus;
	u64			samples;	/* in streams */
	u64			end;		/* of the events in the file */
};

static struct stream_cpu *streams__cpu(struct auxsample_streams *ss, u32 cpu)
{
	struct stream_cpu *c;

	for (size_t i = 0; i < ss->nr_cpus; i++) {
		if (ss->cpus[i].cpu == cpu)
			return &ss->cpus[i];
	}
	c = realloc(ss->cpus, (ss->nr_cpus + 1) * sizeof(*c));
	if (!c)
		return NULL;
	ss->cpus = c;
	c = &ss->cpus[ss->nr_cpus++];
	memset(c, 0, sizeof(*c));
	c->cpu = cpu;
	c->open = -1;
	return c;
}

/*
 * How many of @snip's first bytes end @prev: the overlap of a snippet
 * that ends at or after @prev's end, or -1 when none or not certain.
 */
static ssize_t snippet__overlap(const u8 *prev, size_t plen, const u8 *snip, size_t slen)
{
	/* The shortest overlap taken: searched for only where it could be. */
	size_t least = max_t(size_t, STREAM_MIN_OVERLAP, slen / 2);
	const u8 *p = prev, *end = prev + plen, *last;
	unsigned int candidates = 0;
	ssize_t found = -1;

	if (slen < STREAM_MIN_OVERLAP || plen < least)
		return -1;
	last = end - least;
	while ((p = memmem(p, last + STREAM_KEY - p, snip, STREAM_KEY)) != NULL) {
		size_t o = end - p;

		if (++candidates > STREAM_MAX_CANDIDATES)
			return -1;
		if (o <= slen && !memcmp(p, snip, o)) {
			if (found >= 0)
				return -1;
			found = o;
		}
		p++;
	}
	return found;
}

/* A run with one snippet is no stream: that sample is decoded alone. */
static void stream_cpu__close(struct auxsample_streams *ss, struct stream_cpu *c)
{
	struct stream_run *run;

	if (c->open < 0)
		return;
	run = &ss->runs[c->open];
	if (run->nr_samples == 1) {
		/* Its cut is its CPU's last; the run, maybe not the last made, stays empty. */
		stream_trace__exit(&run->t);
		run->nr_samples = 0;
		c->nr_cuts--;
	} else {
		ss->samples += run->nr_samples;
		c->cuts[c->nr_cuts - 1].last = true;
	}
	c->open = -1;
}

static struct stream_run *streams__new_run(struct auxsample_streams *ss, struct stream_cpu *c,
					   const struct perf_sample *sample)
{
	struct stream_run *run;

	if (ss->nr_runs == ss->cap_runs) {
		size_t cap = ss->cap_runs ? ss->cap_runs * 2 : 64;

		run = realloc(ss->runs, cap * sizeof(*run));
		if (!run)
			return NULL;
		ss->runs = run;
		ss->cap_runs = cap;
	}
	c->open = ss->nr_runs;
	run = &ss->runs[ss->nr_runs++];
	memset(run, 0, sizeof(*run));
	run->cpu = sample->cpu;
	run->pid = sample->pid;
	return run;
}

/*
 * How @snip overlaps the open run's last snippet.  The kernel pads a
 * snippet with zeros to 8 bytes, where the next one has the trace that
 * came after: when it takes trailing zeros of the last snippet away for
 * the two to overlap, *@pad says how many were padding.
 */
static ssize_t stream_run__overlap(const struct stream_run *run, const u8 *prev,
				   const u8 *snip, size_t slen, size_t *pad)
{
	ssize_t overlap = -1;

	for (*pad = 0; *pad < 8 && *pad < run->last; (*pad)++) {
		if (*pad && prev[run->last - *pad])
			break;
		overlap = snippet__overlap(prev, run->last - *pad, snip, slen);
		if (overlap >= 0)
			return overlap;
	}
	return -1;
}

/* A copy of the open run's last snippet, for the next one's overlap. */
static int stream_cpu__keep(struct stream_cpu *c, const u8 *snip, size_t slen)
{
	if (slen > c->cap_prev) {
		u8 *prev = realloc(c->prev, slen);

		if (!prev)
			return -ENOMEM;
		c->prev = prev;
		c->cap_prev = slen;
	}
	memcpy(c->prev, snip, slen);
	return 0;
}

/*
 * One AUX sample of the first look, its snippet at @offset in the file
 * (STREAM_NOT_IN_FILE: unknown): onto its CPU's open run, or a new one.
 */
static int streams__add(struct auxsample_streams *ss, const struct perf_sample *sample,
			u64 offset)
{
	const u8 *snip = sample->aux_sample.data;
	size_t slen = sample->aux_sample.size;
	struct stream_cpu *c = streams__cpu(ss, sample->cpu);
	bool in_file = offset != STREAM_NOT_IN_FILE;
	struct stream_run *run = NULL;
	ssize_t overlap = -1;
	size_t pad = 0;
	int err;

	if (!c)
		return -ENOMEM;
	if (c->open >= 0) {
		run = &ss->runs[c->open];
		if (run->pid == sample->pid && run->in_file == in_file)
			overlap = stream_run__overlap(run, c->prev, snip, slen, &pad);
		if (overlap >= 0 && run->t.len - pad + slen - overlap > STREAM_MAX_RUN)
			overlap = -1;
		if (overlap < 0) {
			stream_cpu__close(ss, c);
			run = NULL;
		} else if (pad) {
			/* The last snippet's padding: not trace, and its cut ends before. */
			stream_trace__trim(&run->t, pad);
			c->cuts[c->nr_cuts - 1].end -= pad;
		}
	}
	if (!run) {
		run = streams__new_run(ss, c, sample);
		if (!run)
			return -ENOMEM;
		run->in_file = in_file;
		overlap = 0;
	}
	if (in_file)
		err = stream_trace__add_piece(&run->t, offset + overlap, slen - overlap);
	else
		err = stream_trace__append(&run->t, snip + overlap, slen - overlap);
	if (!err)
		err = stream_cpu__keep(c, snip, slen);
	if (err)
		return err;
	run->last = slen;
	run->nr_samples++;
	if (c->nr_cuts == c->cap_cuts) {
		size_t cap = c->cap_cuts ? c->cap_cuts * 2 : 256;
		struct stream_cut *cuts = realloc(c->cuts, cap * sizeof(*cuts));

		if (!cuts)
			return -ENOMEM;
		c->cuts = cuts;
		c->cap_cuts = cap;
	}
	c->cuts[c->nr_cuts++] = (struct stream_cut){
		.time = sample->time, .file = offset, .start = run->t.len - slen,
		.end = run->t.len,
		.size = sample->aux_sample.size, .run = c->open,
	};
	return 0;
}

/*
 * One AUX sample of the first look, or another event, which does not
 * matter; @offset: the event's in the file, or STREAM_NOT_IN_FILE.
 */
static int streams__add_event(struct auxsample_streams *ss, struct perf_session *session,
			      union perf_event *event, u64 offset)
{
	struct perf_sample sample;

	/*
	 * perf_session__peek_events() gives the event that crosses the end of
	 * the data (a corrupt file): its bytes may not be in perf's mapping of it.
	 */
	if (offset != STREAM_NOT_IN_FILE && offset + event->header.size > ss->end)
		return 0;
	if (event->header.type != PERF_RECORD_SAMPLE ||
	    evlist__parse_sample(session->evlist, event, &sample) ||
	    !sample.aux_sample.size)
		return 0;
	if (offset != STREAM_NOT_IN_FILE)
		offset += (const u8 *)sample.aux_sample.data - (const u8 *)event;
	return streams__add(ss, &sample, offset);
}

/*
 * The first look: every event of the file, also those that perf record
 * -z packs into PERF_RECORD_COMPRESSED, which perf's reader decompresses
 * into its own buffers only as it delivers them, for the tool.
 */
struct streams_scan {
	struct auxsample_streams	*ss;
	struct zstd_data		zstd;
	u8				*buf;	/* decompressed events */
	size_t				len;	/* the last one maybe cut: more comes */
	size_t				cap;
	int				err;	/* of the streams, not of the file */
};

/* The events of a PERF_RECORD_COMPRESSED, after what the last one left cut. */
static int streams_scan__compressed(struct streams_scan *scan, struct perf_session *session,
				    union perf_event *event)
{
	size_t room = session->header.env.comp_mmap_len, pos = 0, n;

	/* At most what perf record's buffers held: perf's reader takes no more. */
	if (!room || event->header.size < sizeof(event->pack))
		return -EINVAL;
	if (scan->len + room > scan->cap) {
		u8 *buf = realloc(scan->buf, scan->len + room);

		if (!buf)
			return scan->err = -ENOMEM;
		scan->buf = buf;
		scan->cap = scan->len + room;
	}
	n = zstd_decompress_stream(&scan->zstd, event->pack.data,
				   event->header.size - sizeof(event->pack),
				   scan->buf + scan->len, room);
	scan->len += n;
	while (scan->len - pos >= sizeof(struct perf_event_header)) {
		union perf_event *ev = (union perf_event *)(scan->buf + pos);

		if (ev->header.size < sizeof(ev->header))
			return -EINVAL;		/* corrupt: the main pass says so */
		if (ev->header.size > scan->len - pos)
			break;			/* in the next record */
		scan->err = streams__add_event(scan->ss, session, ev, STREAM_NOT_IN_FILE);
		if (scan->err)
			return scan->err;
		pos += ev->header.size;
	}
	memmove(scan->buf, scan->buf + pos, scan->len - pos);
	scan->len -= pos;
	return 0;
}

static int streams__peek(struct perf_session *session, union perf_event *event,
			 u64 offset, void *data)
{
	struct streams_scan *scan = data;

	/* ^C (perf auxsample script): the main pass stops at once too. */
	if (session_done())
		return 1;
	if (event->header.type == PERF_RECORD_COMPRESSED)
		return streams_scan__compressed(scan, session, event);
	scan->err = streams__add_event(scan->ss, session, event, offset);
	return scan->err;
}

/*
 * Through perf_session__peek_events(), which reads each event where it
 * lies and steps over the trace after an AUXTRACE event.  A corrupt or
 * truncated file ends the look where it goes wrong: the main pass says so.
 */
static int streams__scan(struct auxsample_streams *ss, struct perf_session *session)
{
	u64 pos = session->header.data_offset, end = pos + session->header.data_size;
	struct streams_scan scan = { .ss = ss };
	struct stat st;

	/* A file cut short: nothing read past its end. */
	if (fstat(perf_data__fd(session->data), &st))
		return -errno;
	end = min_t(u64, end, st.st_size);
	ss->end = end;
	if (zstd_init(&scan.zstd, 0))
		return -ENOMEM;
	if (pos + sizeof(struct perf_event_header) <= end &&
	    perf_session__peek_events(session, pos, end - pos, streams__peek, &scan) &&
	    !scan.err && !session_done())
		pr_debug("auxsample streams: the first look stopped at a bad event\n");
	zstd_fini(&scan.zstd);
	free(scan.buf);
	for (size_t i = 0; i < ss->nr_cpus; i++)
		stream_cpu__close(ss, &ss->cpus[i]);
	return scan.err;
}

/* The run's decoder gone: it begins again at the next sample claimed, if any. */
static void stream_run__stop(struct stream_run *run)
{
	auxsample_decoder__delete(run->dec);
	run->dec = NULL;
	auxsample_image__put(run->image);
	run->image = NULL;
}

/* Done decoding: its trace too, so no sample is matched to it any more. */
static void stream_run__end(struct stream_run *run)
{
	run->done = true;
	stream_run__stop(run);
	thread__zput(run->mem.thread);
	stream_trace__exit(&run->t);
}

void auxsample_streams__delete(struct auxsample_streams *ss)
{
	u64 served = 0;

	if (!ss)
		return;
	for (size_t i = 0; i < ss->nr_runs; i++)
		served += ss->runs[i].served;
	if (ss->samples)
		pr_debug("auxsample streams: %" PRIu64 " samples decoded from them\n", served);
	for (size_t i = 0; i < ss->nr_runs; i++)
		stream_run__end(&ss->runs[i]);
	for (size_t i = 0; i < ss->nr_cpus; i++) {
		free(ss->cpus[i].cuts);
		free(ss->cpus[i].prev);
	}
	free(ss->cpus);
	free(ss->runs);
	free(ss);
}

struct auxsample_streams *auxsample_streams__new(struct perf_session *session)
{
	struct auxsample_streams *ss;
	size_t runs = 0;
	int err;

	/* Samples in time order per CPU are in file order: one file, CPUs known. */
	if (perf_data__is_pipe(session->data) || perf_data__is_dir(session->data) ||
	    session->header.needs_swap ||
	    !(evlist__combined_sample_type(session->evlist) & PERF_SAMPLE_CPU))
		return NULL;
	ss = zalloc(sizeof(*ss));
	if (!ss)
		return NULL;
	ss->session = session;
	err = streams__scan(ss, session);
	if (err || !ss->samples) {
		if (err)
			pr_debug("auxsample streams: %s\n", strerror(-err));
		ss->samples = 0;
		auxsample_streams__delete(ss);
		return NULL;
	}
	for (size_t i = 0; i < ss->nr_runs; i++)
		runs += ss->runs[i].nr_samples > 0;
	pr_debug("auxsample streams: %" PRIu64 " samples in %zu streams\n", ss->samples, runs);
	return ss;
}

/*
 * The newest bytes of a snippet that must match its cut's: with its CPU,
 * time, process and size, enough to tell samples apart.
 */
#define STREAM_CHECK_BYTES	256

/* The run's trace, mapped at its first sample: 0, or -1 when it cannot serve. */
static int stream_run__load(struct auxsample_streams *ss, struct stream_run *run)
{
	int err;

	if (run->t.buf)
		return 0;
	err = run->in_file ? stream_trace__map(&run->t, ss->session) : -EINVAL;
	if (err) {
		pr_debug("auxsample streams: a stream's trace: %s\n", strerror(-err));
		stream_run__end(run);
		return -1;
	}
	return 0;
}

/*
 * Whether @cut's newest bytes are @sample's: where the snippet lies in
 * the file, or in its run's copy.
 */
static bool stream_cut__matches(struct auxsample_streams *ss, const struct stream_run *run,
				const struct stream_cut *cut, const struct perf_sample *sample)
{
	struct perf_session *session = ss->session;
	size_t len = cut->end - cut->start;
	size_t check = min_t(size_t, len, STREAM_CHECK_BYTES);
	const u8 *want = (const u8 *)sample->aux_sample.data + len - check;
	u8 buf[STREAM_CHECK_BYTES];
	u64 at;

	if (cut->file == STREAM_NOT_IN_FILE)
		return !memcmp(run->t.buf + cut->end - check, want, check);
	at = cut->file + len - check;
	if (session->one_mmap)
		return !memcmp((const u8 *)session->one_mmap_addr + (at - session->one_mmap_offset),
			       want, check);
	return preadn(perf_data__fd(session->data), buf, check, at) == (ssize_t)check &&
	       !memcmp(buf, want, check);
}

/* Matched cuts let go of at once, at least: the rest are moved each time. */
#define STREAM_CUTS_LET_GO	512

/*
 * The cuts before the next one to match let go of, once they are most
 * of the CPU's: the first look made all of them, and what perf report
 * builds as it goes would otherwise come on top of all of them (peak RSS
 * on the mix bench file).  A claim copies what it needs of its cut.
 */
static void stream_cpu__let_go(struct stream_cpu *c)
{
	size_t left = c->nr_cuts - c->next;
	struct stream_cut *cuts;

	if (c->next < STREAM_CUTS_LET_GO || c->next < left)
		return;
	if (!left) {
		zfree(&c->cuts);
		c->nr_cuts = c->cap_cuts = c->next = 0;
		return;
	}
	memmove(c->cuts, c->cuts + c->next, left * sizeof(*c->cuts));
	c->nr_cuts = left;
	c->next = 0;
	/* Smaller: it only shrinks from here, and a failure keeps it as it was. */
	cuts = realloc(c->cuts, left * sizeof(*cuts));
	if (cuts) {
		c->cuts = cuts;
		c->cap_cuts = left;
	}
}

/* @sample's cut, the next of its CPU with its time and its bytes. */
static struct stream_cut *streams__find(struct auxsample_streams *ss,
					const struct perf_sample *sample)
{
	struct stream_cpu *c = NULL;

	for (size_t i = 0; i < ss->nr_cpus; i++) {
		if (ss->cpus[i].cpu == sample->cpu) {
			c = &ss->cpus[i];
			break;
		}
	}
	if (!c)
		return NULL;
	stream_cpu__let_go(c);
	for (size_t i = c->next; i < c->nr_cuts && c->cuts[i].time <= sample->time; i++) {
		struct stream_cut *cut = &c->cuts[i];
		struct stream_run *run = &ss->runs[cut->run];

		if (run->done || cut->time != sample->time ||
		    cut->size != sample->aux_sample.size || run->pid != sample->pid ||
		    stream_run__load(ss, run) || !stream_cut__matches(ss, run, cut, sample))
			continue;
		/* The runs whose last samples never came (filtered) are done. */
		for (size_t j = c->next; j < i; j++) {
			if (c->cuts[j].last)
				stream_run__end(&ss->runs[c->cuts[j].run]);
		}
		c->next = i + 1;
		return cut;
	}
	return NULL;
}

/*
 * When the process last exec()ed, as its main thread's comm says (0:
 * never seen): the calls a stream saw before are not the new program's.
 */
static u64 stream_ctx__exec_time(const struct auxsample_stream_ctx *ctx)
{
	struct thread *leader = thread__main_thread(ctx->machine, ctx->thread);
	struct comm *comm = leader ? thread__exec_comm(leader) : NULL;
	u64 time = comm && comm->exec ? comm->start : 0;

	thread__put(leader);
	return time;
}

/*
 * The run's decoder, started on its first sample (@base 0), or again at a
 * later one's (@base, where its snippet begins in the run), for the
 * process's image.  The image is asked for only here: auxsample_proc
 * keeps the last few processes' and makes one again for the others.
 */
static int stream_run__start(struct stream_run *run, const struct auxsample_config *config,
			     const struct auxsample_stream_ctx *ctx, u64 maps_version,
			     u32 base)
{
	struct auxsample_image *image = auxsample_proc__image(ctx->proc, ctx->machine, ctx->thread);
	struct auxsample_config cfg = *config;
	int err;

	if (!image)
		return -ENOMEM;
	cfg.image = image;
	cfg.read_memory = auxsample_mem__read;
	cfg.context = &run->mem;
	cfg.flow = NULL;
	run->dec = auxsample_decoder__new(&cfg, &err);
	if (!run->dec)
		return err;
	run->image = auxsample_image__get(image);
	run->maps_version = maps_version;
	run->exec_time = stream_ctx__exec_time(ctx);
	run->t.base = base;
	if (run->t.mapped)
		auxsample_decoder__set_stream_fetch(run->dec, stream_trace__fetch, &run->t);
	err = auxsample_decoder__stream_begin(run->dec, run->t.buf + base, run->t.len - base,
					      ctx->depth);
	return err < 0 ? err : 0;
}

/* Whether the run's decoder goes on with the image of the process's maps now. */
static bool stream_run__move(struct stream_run *run, const struct auxsample_stream_ctx *ctx,
			     u64 maps_version)
{
	struct auxsample_image *image = auxsample_proc__image(ctx->proc, ctx->machine, ctx->thread);

	if (!image || auxsample_decoder__set_image(run->dec, image))
		return false;
	auxsample_image__put(run->image);
	run->image = auxsample_image__get(image);
	run->maps_version = maps_version;
	return true;
}

bool auxsample_streams__claim(struct auxsample_streams *ss, struct perf_sample *sample,
			      struct auxsample_stream_job *job)
{
	struct stream_cut *cut = ss ? streams__find(ss, sample) : NULL;

	if (!cut)
		return false;
	*job = (struct auxsample_stream_job){
		.run = &ss->runs[cut->run], .start = cut->start, .end = cut->end, .last = cut->last,
	};
	return true;
}

/* The claim's results from the stream. */
static int stream_run__decode(struct stream_run *run, const struct auxsample_stream_job *job,
			      const struct auxsample_config *config,
			      struct auxsample_stream_ctx *ctx)
{
	struct auxsample_result res;
	struct auxsample_stats stats;
	bool restart = false;
	u64 maps_version;
	u32 base = 0;
	u64 start;
	int nr;

	if (run->failed)
		return AUXSAMPLE_STREAM_ALONE;
	/* The first stretch's decode begins the stream. */
	start = rdclock();
	/*
	 * The process's maps changed since (ld.so, dlopen(), a JIT): the
	 * decoder's image is not its code any more.  The stream goes on with
	 * the process's image, and the calls it knew, unless the process
	 * exec()ed: the new program's callers are none of those.  The same
	 * maps' version: the decoder's image still, whether or not
	 * auxsample_proc kept it.
	 */
	maps_version = auxsample_proc__maps_version(ctx->thread);
	if (run->dec && run->maps_version != maps_version)
		restart = stream_ctx__exec_time(ctx) != run->exec_time ||
			  !stream_run__move(run, ctx, maps_version);
	/*
	 * Cuts come in the run's order, so none begins before the base:
	 * tested all the same, as the offsets are unsigned.  A decoder that
	 * could not move begins again at this snippet, as at a run's first.
	 */
	if (run->dec && (restart || job->start < run->t.base)) {
		stream_run__stop(run);
		base = job->start;
	}
	if (!run->dec && stream_run__start(run, config, ctx, maps_version, base)) {
		run->failed = true;
		return AUXSAMPLE_STREAM_ALONE;
	}
	run->mem.machine = ctx->machine;
	thread__put(run->mem.thread);
	run->mem.thread = thread__get(ctx->thread);
	auxsample_decoder__set_sample_ip(run->dec, ctx->sample_ip);
	nr = auxsample_decoder__stream_to(run->dec, job->start - run->t.base,
					  job->end - run->t.base);
	if (nr == -AUXSAMPLE_ERR_NOT_IN_STREAM)
		return AUXSAMPLE_STREAM_ALONE;
	if (nr < 0) {
		run->failed = true;
		return AUXSAMPLE_STREAM_ALONE;
	}
	auxsample_result__init(&res, run->dec, nr, &stats);
	res.decode_ns = rdclock() - start;
	run->served++;
	return ctx->fn(ctx->arg, &res);
}

int auxsample_stream_job__decode(const struct auxsample_stream_job *job,
				 const struct auxsample_config *config,
				 struct auxsample_stream_ctx *ctx)
{
	struct stream_run *run = job->run;
	int err = stream_run__decode(run, job, config, ctx);

	if (job->last)
		stream_run__end(run);
	return err;
}
