/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_H
#define __PERF_AUXSAMPLE_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct machine;
struct thread;

/*
 * perf's side of libauxsample (tools/lib/auxsample): the traced code as
 * perf knows it, through the thread's maps and their dsos (files, the
 * build-id cache, the vDSO, kcore or vmlinux for kernel addresses).
 */
struct auxsample_mem {
	struct machine	*machine;
	struct thread	*thread;
};

/* An auxsample_read_memory_fn: @context is a struct auxsample_mem. */
int auxsample_mem__read(u8 *buf, size_t size, u64 addr, void *context);

/*
 * The command @thread ran at @time, as perf script names a sample's: the
 * samples beside a full trace are decoded after the last event, when the
 * thread has the comm of its last exec.  NULL when it has none.
 */
const char *auxsample_thread__comm_str_at(struct thread *thread, u64 time);

/*
 * The glue passes -errno and libauxsample's negative codes (which start
 * above errno's range) around together: a message for either.
 */
const char *auxsample__strerror(int err, char *buf, size_t size);

/*
 * Per-kind error counters: AUXSAMPLE_ERR_END - AUXSAMPLE_ERR_BASE of them,
 * each libauxsample error's at this index, 0 for any other.
 */
unsigned int auxsample__error_index(int err);

struct auxsample_config;
struct auxsample_decoder;
struct perf_session;

/*
 * A file cut short (a full disk, a copy that did not finish): says so,
 * after @who ("perf auxsample script: " or ""), and returns -EIO, where
 * perf's reader would fail on the first missing event or fault on it.
 */
int auxsample_session__check_size(struct perf_session *session, const char *who);

struct auxsample_image;
union perf_event;

/*
 * A decoder for the process being decoded, with the files of its maps in
 * a libauxsample image (a shared section cache: much faster than reading
 * code through the maps for every block), made again when the process's
 * maps change what they map (maps__version() moves and the files differ,
 * or code outside files may have changed).  Code outside files comes through
 * auxsample_mem__read().  The last few processes' images and decoders
 * (one a configuration: ETM windows have their CPU's) are kept, for
 * system-wide files whose samples go from one process to another.
 */
#define AUXSAMPLE_PROC_CACHE	8

struct auxsample_proc_files;

struct auxsample_proc_entry {
	pid_t				pid;
	u64				maps_version;
	struct auxsample_image		*image;		/* NULL: a free entry */
	/* the files @image was made of; NULL in an entry that shares it */
	struct auxsample_proc_files	*files;
	const struct auxsample_config	*config;	/* dec's */
	struct auxsample_decoder	*dec;
	u64				used;		/* for the least recent */
};

struct auxsample_proc {
	struct auxsample_mem		mem;
	struct auxsample_proc_entry	entries[AUXSAMPLE_PROC_CACHE];
	u64				clock;
	/*
	 * Of no files, whose siblings the processes' images are: a file's
	 * code is decoded once for all of them (perf's dsos are the
	 * session's too, each file's code read by its name).
	 */
	struct auxsample_image		*family;
};

struct auxsample_decoder *auxsample_proc__decoder(struct auxsample_proc *proc,
						   const struct auxsample_config *config,
						   struct machine *machine, struct thread *thread);
/* The image alone, for decoders of other threads (auxsample_pool). */
struct auxsample_image *auxsample_proc__image(struct auxsample_proc *proc,
					      struct machine *machine, struct thread *thread);
/* The version of the maps of @thread's process: a new one, a look at their files. */
u64 auxsample_proc__maps_version(struct thread *thread);
void auxsample_proc__exit(struct auxsample_proc *proc);

struct auxsample_branch;
struct auxsample_decode_error;
struct auxsample_stats;
struct evsel;
struct perf_sample;

/*
 * What one decode of a snippet gave, as the consumers of decoded samples
 * see it: @nr is auxsample_decoder__decode()'s return (the number of
 * branches, or -AUXSAMPLE_ERR_*), the rest what the decoder's accessors
 * return after it.  Valid until the consumer returns.
 */
struct auxsample_result {
	int					nr;
	int					nr_branches;
	int					depth;		/* of the call chain */
	int					nr_errors;
	const struct auxsample_branch		*branches;	/* newest first */
	const u64				*callchain;
	const struct auxsample_decode_error	*errors;
	const struct auxsample_stats		*stats;
	/*
	 * The decode's time (rdclock(): monotonic, as a thread's CPU clock is a
	 * system call that costs more than a dense sample's decode in a VM)
	 */
	u64					decode_ns;
};

/* @dec's results after a decode that returned @nr; *@stats holds its stats. */
void auxsample_result__init(struct auxsample_result *res, const struct auxsample_decoder *dec,
			    int nr, struct auxsample_stats *stats);

/*
 * Overlapping snippets decoded once (auxsample-stream.c): a first look at
 * @session's file finds the runs of samples whose snippets overlap, one
 * stream each.  NULL when there are none, or the file cannot be looked
 * at first (a pipe, no CPU in the samples): every snippet is decoded
 * alone then.
 */
struct auxsample_streams;

struct auxsample_streams *auxsample_streams__new(struct perf_session *session);
void auxsample_streams__delete(struct auxsample_streams *ss);
/*
 * A sample's place in its stream: auxsample_streams__claim() finds it, in
 * file order; false when the sample is in none.  Claims are decoded in
 * the order they were made: auxsample_stream_job__decode() calls ctx->fn()
 * with the results while they are valid, and returns what it returned;
 * AUXSAMPLE_STREAM_ALONE when the stream cannot serve the sample (the
 * trace did not stop at its end, or decoding it failed): decode it
 * alone.  Where the process mapped more code since the stream's decoder
 * began, it begins again at the sample, with the new image.  A stream's
 * samples cost little each, less than a handover to a decoding thread
 * and back: they are decoded where the file is read, holding what guards
 * perf's machine (code outside the image is read through its maps).
 */
struct stream_run;

#define AUXSAMPLE_STREAM_ALONE	1	/* not a stream's: decode the sample alone */

/* A claimed sample: its run, and where its snippet lies in it. */
struct auxsample_stream_job {
	struct stream_run	*run;
	u32			start;
	u32			end;
	bool			last;		/* of its run */
};

struct auxsample_stream_ctx {
	struct machine		*machine;
	struct thread		*thread;	/* the sample's */
	/* its process's image, asked for only where a stream's decoder begins */
	struct auxsample_proc	*proc;
	unsigned int		depth;
	u64			sample_ip;	/* for the late-sample rule */
	int			(*fn)(void *arg, const struct auxsample_result *res);
	void			*arg;
};

bool auxsample_streams__claim(struct auxsample_streams *ss, struct perf_sample *sample,
			      struct auxsample_stream_job *job);
int auxsample_stream_job__decode(const struct auxsample_stream_job *job,
				 const struct auxsample_config *config,
				 struct auxsample_stream_ctx *ctx);

/*
 * Decoding in parallel, delivered in order: auxsample_pool__submit()
 * copies a sample and its snippet into a window of jobs, worker threads
 * decode them (a decoder each, sharing the processes' images), and
 * ->deliver() gets each, on the submitting thread, in submission order.
 * Decoders read code that no image covers through auxsample_mem__read()
 * under the pool's perf lock: hold it too, with auxsample_pool__lock(),
 * wherever the submitting thread touches perf's machine, threads, maps
 * or dsos while the pool lives (->deliver() is called with it held).
 * A failed decode fails its own job only.
 */
struct auxsample_pool;

/*
 * Samples in flight in a decoding pool: enough to keep a few threads busy
 * while samples are delivered in order; each holds its event (perf report)
 * and results, some 8 KiB with 4 KiB snippets.
 */
#define AUXSAMPLE_POOL_JOBS	64

/*
 * @sample is a copy: its scalar fields and aux_sample hold, its other
 * pointers are NULL; @event is a copy of the event, if it was submitted
 * with it, else NULL.  A non-zero return stops the delivery and is
 * returned by the pool call that made it.
 */
typedef int (*auxsample_pool_deliver_fn)(void *arg, struct thread *thread,
					 struct perf_sample *sample, struct evsel *evsel,
					 const struct auxsample_result *res,
					 union perf_event *event);

struct auxsample_pool *auxsample_pool__new(const struct auxsample_config *config,
					   unsigned int nr_workers, unsigned int window,
					   auxsample_pool_deliver_fn deliver, void *arg);
/* Undelivered jobs are dropped. */
void auxsample_pool__delete(struct auxsample_pool *pool);
/* @event: copied too when not NULL, for ->deliver() to deliver it again. */
int auxsample_pool__submit(struct auxsample_pool *pool, struct machine *machine,
			   struct thread *thread, struct auxsample_image *image,
			   union perf_event *event, struct perf_sample *sample,
			   struct evsel *evsel, unsigned int depth);
/* Deliver every job submitted. */
int auxsample_pool__flush(struct auxsample_pool *pool);
/*
 * Deliver every job of process @pid (every job if @pid is -1, the
 * kernel's), and those before them, so that they see the process as it
 * was at their sample: before a sideband event changes it.  A job's
 * process is its thread's, as perf's machine found it, not its sample's
 * pid field.
 */
int auxsample_pool__barrier(struct auxsample_pool *pool, pid_t pid);
/* The perf lock; no-ops without a pool. */
void auxsample_pool__lock(struct auxsample_pool *pool);
void auxsample_pool__unlock(struct auxsample_pool *pool);

#endif /* __PERF_AUXSAMPLE_H */
