/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_WALK_H
#define __PERF_AUXSAMPLE_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "auxsample.h"
#include "auxsample-symcache.h"
#include "tool.h"

struct auxsample_walk;
struct evsel;
struct machine;
struct perf_sample;
struct strlist;
struct thread;

/*
 * One AUX sample of the file, decoded: res->nr is what
 * auxsample_decoder__decode() returned, the number of branches or
 * -AUXSAMPLE_ERR_NOSYNC.  Called in file order, whether decoded inline or
 * by a pool (then @sample is a copy: its scalars and aux_sample hold).
 */
typedef int (*auxsample_walk__sample_fn)(struct auxsample_walk *w, struct thread *thread,
					  struct perf_sample *sample, struct evsel *evsel,
					  const struct auxsample_result *res);

/*
 * What decodes the samples of a session, for the walk and for perf
 * report's virtual LBR (auxsample-report.c) alike: the trace
 * configuration, the processes' decoders, the streams of overlapping
 * snippets and the pool of decoding threads.
 */
struct auxsample_decoding {
	struct auxsample_config		config;
	bool				have_config;
	unsigned int			depth;	/* branches per sample, 0: all */
	struct auxsample_proc		proc;
	struct auxsample_decoder	*dec;	/* proc's, for the sample at hand */
	struct auxsample_streams	*streams;	/* overlapping snippets */
	struct auxsample_pool		*pool;
};

/* A decoded sample's results, valid while it runs. */
typedef int (*auxsample_decoding_fn)(void *arg, const struct auxsample_result *res);

/*
 * @sample's snippet decoded here and handed to @fn: from its stream
 * (@claimed: its place there, found already; else looked for), or alone,
 * with @config (a window's ETM source, or d->config).  Returns what @fn
 * returned, or a negative errno.
 */
int auxsample_decoding__decode(struct auxsample_decoding *d, struct machine *machine,
			       struct thread *thread, struct perf_sample *sample,
			       const struct auxsample_config *config,
			       const struct auxsample_stream_job *claimed,
			       auxsample_decoding_fn fn, void *arg);

/*
 * A claim alone, for the sample at @sample_ip (the late-sample rule):
 * AUXSAMPLE_STREAM_ALONE when its stream cannot serve it.
 */
int auxsample_decoding__decode_claim(struct auxsample_decoding *d, struct machine *machine,
				     struct thread *thread, const struct auxsample_stream_job *job,
				     u64 sample_ip, auxsample_decoding_fn fn, void *arg);

/*
 * The decoding threads for @threads (0: one per online CPU); 1: decode
 * inline.  Intel PT only: OpenCSD keeps global state.
 */
unsigned int auxsample_decoding__nr_threads(const struct auxsample_decoding *d,
					    unsigned int threads);

/* The pool first: its jobs hold threads and images. */
void auxsample_decoding__exit(struct auxsample_decoding *d);

/*
 * The walk that perf auxsample script, stat and report share: every
 * sample of the file that carries AUX area data (or, beside a full trace,
 * the window of trace before it), decoded by the decoder of its process,
 * inline, from a stream of overlapping snippets, or by a pool of threads,
 * and handed to ->sample() in file order.  Sideband is a barrier: the
 * samples before it are delivered first, as their process was.
 */
struct auxsample_walk {
	struct perf_tool		tool;
	const char			*cmd;	/* "script", ...: for messages */
	const char			*input;
	struct strlist			*comms;	/* only samples of these, if set */
	auxsample_walk__sample_fn	sample;
	/* after the last event, while the session (its symbols) lives */
	int				(*done)(struct auxsample_walk *w);
	struct perf_session		*session;
	/* d.depth: branches per sample, 0: all */
	struct auxsample_decoding	d;
	/* decoding threads, 0: one per online CPU, 1: none (inline) */
	unsigned int			threads;
	/* the samples' code addresses, resolved; cleared by sideband */
	struct auxsample_symcache	symcache;
	size_t				window;	/* bytes before a sample, full trace */
	/* overlapping snippets decoded once (d.streams), unless ->no_reuse */
	bool				no_reuse;
	/*
	 * Full trace: the trace buffers (auxsample-fulltrace.c), decoded by
	 * ->fulltrace() when asked to (->full_trace), or when the file has
	 * them and no AUX samples: ETM, which no kernel samples yet.
	 */
	int				(*fulltrace)(struct auxsample_walk *w);
	struct auxsample_fulltrace	*ft;
	bool				full_trace;
	/*
	 * Samples beside a full trace (no AUX data of their own): each is
	 * decoded from the window of trace that leads up to it, unless
	 * ->full_trace asks for the whole trace instead.
	 */
	struct auxsample_windows	*windows;
	/* what decodes the window at hand, if not ->config: ETM's CPU's */
	const struct auxsample_config	*window_config;
	/* the samples are beside a full trace: windows, not AUX samples */
	bool				beside;
	/* samples without a CPU: where their threads ran */
	struct auxsample_place		*place;
	u64				placed;		/* by their thread */
	u64				unplaced;	/* not: they get no trace */
	u64				samples;	/* AUX samples, filtered ones too */
	u64				filtered;	/* left out by ->comms */
	u64				nosync;
	u64				errors;		/* decode errors */
	u64				error_samples;	/* samples with decode errors */
};

/*
 * Decode every AUX sample of w->input and hand it to w->sample(), then
 * call w->done().  Errors are negative errnos or -AUXSAMPLE_ERR_*, and
 * have been reported.
 */
int auxsample_walk__run(struct auxsample_walk *w);

/* What the decoded samples are, for the summaries. */
const char *auxsample_walk__what(const struct auxsample_walk *w);

#endif /* __PERF_AUXSAMPLE_WALK_H */
