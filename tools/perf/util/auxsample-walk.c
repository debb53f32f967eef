// SPDX-License-Identifier: GPL-2.0
/*
 * The walk of a file's AUX samples that perf auxsample script, stat and
 * report share: the session and its tool, each sample to its decoder
 * (inline, a stream of overlapping snippets, or a pool of threads), the
 * sideband barriers, and the samples beside a full trace, decoded from
 * their windows.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>
#include <auxsample/auxsample.h>

#include "auxsample.h"
#include "auxsample-config.h"
#include "auxsample-fulltrace.h"
#include "auxsample-place.h"
#include "auxsample-walk.h"
#include "auxsample-window.h"
#include "data.h"
#include "debug.h"
#include "event.h"
#include "evsel.h"
#include "header.h"
#include "machine.h"
#include "session.h"
#include "strlist.h"
#include "symbol.h"
#include "thread.h"
#include "time-utils.h"
#include "tool.h"

const char *auxsample_walk__what(const struct auxsample_walk *w)
{
	return w->beside ? "samples beside a full trace" : "AUX samples";
}

/* A pipe's header features; the last one only says that they are all there. */
static int auxsample_walk__feature(struct perf_session *session, union perf_event *event)
{
	if (event->feat.feat_id >= HEADER_LAST_FEATURE)
		return 0;
	return perf_event__process_feature(session, event);
}

/* Intel PT's trace configuration, from AUXTRACE_INFO and the cpuid. */
static int auxsample_walk__auxtrace_info(struct perf_session *session,
					 union perf_event *event)
{
	struct auxsample_walk *w = container_of(session->tool, struct auxsample_walk, tool);
	u64 pmu_type;
	int err = auxsample_config__from_auxtrace_info(&w->d.config, session, event, &pmu_type);

	if (err == -EOPNOTSUPP)
		pr_err("perf auxsample %s: AUX area data of type %u: only Intel PT and CoreSight ETMv4/ETE are decoded so far\n",
		       w->cmd, event->auxtrace_info.type);
	/* perf's session prints what it gets back: an errno it knows. */
	if (err == -AUXSAMPLE_ERR_NOT_BUILT) {
		pr_err("perf auxsample %s: %s\n", w->cmd, auxsample__not_built(&w->d.config));
		err = -EOPNOTSUPP;
	}
	if (err)
		return err;
	w->d.have_config = true;
	if (w->windows)
		auxsample_windows__time_conv(w->windows, event);
	return 0;
}

static bool auxsample_walk__wanted(struct auxsample_walk *w, struct thread *thread,
				   const struct perf_sample *sample)
{
	const char *comm;

	if (!w->comms)
		return true;
	comm = auxsample_thread__comm_str_at(thread, sample->time);
	return comm && strlist__has_entry(w->comms, comm);
}

/* A decoded sample, in file order: counted, then handed to w->sample(). */
static int auxsample_walk__deliver(void *arg, struct thread *thread, struct perf_sample *sample,
				   struct evsel *evsel, const struct auxsample_result *res,
				   union perf_event *event __maybe_unused)
{
	struct auxsample_walk *w = arg;

	if (res->nr == -AUXSAMPLE_ERR_NOSYNC) {
		w->nosync++;
	} else if (res->nr < 0) {
		char buf[STRERR_BUFSIZE];

		pr_err("perf auxsample %s: %s\n", w->cmd,
		       auxsample__strerror(res->nr, buf, sizeof(buf)));
		/* perf's session takes -errno only. */
		return auxsample__error_index(res->nr) ? -EINVAL : res->nr;
	}
	w->errors += res->stats->errors;
	if (res->stats->errors)
		w->error_samples++;
	return w->sample(w, thread, sample, evsel, res);
}

/* A sample's results from its stream, delivered at once. */
struct walk_stream_sample {
	struct auxsample_walk	*w;
	struct thread		*thread;
	struct perf_sample	*sample;
	struct evsel		*evsel;
};

static int auxsample_walk__stream_deliver(void *arg, const struct auxsample_result *res)
{
	struct walk_stream_sample *ws = arg;

	return auxsample_walk__deliver(ws->w, ws->thread, ws->sample, ws->evsel, res, NULL);
}

int auxsample_decoding__decode_claim(struct auxsample_decoding *d,
				    struct machine *machine, struct thread *thread,
				    const struct auxsample_stream_job *job, u64 sample_ip,
				    auxsample_decoding_fn fn, void *arg)
{
	struct auxsample_stream_ctx ctx = {
		.machine	= machine,
		.thread		= thread,
		.proc		= &d->proc,
		.depth		= d->depth,
		.sample_ip	= sample_ip,
		.fn		= fn,
		.arg		= arg,
	};

	return auxsample_stream_job__decode(job, &d->config, &ctx);
}

int auxsample_decoding__decode(struct auxsample_decoding *d, struct machine *machine,
			       struct thread *thread, struct perf_sample *sample,
			       const struct auxsample_config *config,
			       const struct auxsample_stream_job *claimed,
			       auxsample_decoding_fn fn, void *arg)
{
	struct auxsample_stream_job job;
	struct auxsample_result res;
	struct auxsample_stats stats;
	int nr = AUXSAMPLE_STREAM_ALONE;
	u64 start;

	if (!claimed && d->streams && auxsample_streams__claim(d->streams, sample, &job))
		claimed = &job;
	if (claimed)
		nr = auxsample_decoding__decode_claim(d, machine, thread, claimed, sample->ip,
							   fn, arg);
	if (nr != AUXSAMPLE_STREAM_ALONE)
		return nr;
	d->dec = auxsample_proc__decoder(&d->proc, config, machine, thread);
	if (!d->dec)
		return -ENOMEM;
	/* ETM: the trace of the sample's thread only. */
	auxsample_decoder__set_thread(d->dec, sample->tid);
	auxsample_decoder__set_sample_ip(d->dec, sample->ip);
	start = rdclock();
	nr = auxsample_decoder__decode(d->dec, sample->aux_sample.data, sample->aux_sample.size,
				       d->depth);
	auxsample_result__init(&res, d->dec, nr, &stats);
	res.decode_ns = rdclock() - start;
	return fn(arg, &res);
}

unsigned int auxsample_decoding__nr_threads(const struct auxsample_decoding *d,
					    unsigned int threads)
{
	long cpus;

	if (d->config.type != AUXSAMPLE_TRACE_INTEL_PT)
		return 1;
	if (threads)
		return min_t(unsigned int, threads, AUXSAMPLE_POOL_JOBS);
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return cpus > 1 ? min_t(long, cpus, AUXSAMPLE_POOL_JOBS) : 1;
}

void auxsample_decoding__exit(struct auxsample_decoding *d)
{
	auxsample_pool__delete(d->pool);
	d->pool = NULL;
	auxsample_streams__delete(d->streams);
	d->streams = NULL;
	auxsample_proc__exit(&d->proc);
	auxsample_config__exit(&d->config);
}

static int auxsample_walk__decode(struct auxsample_walk *w, struct perf_sample *sample,
				  struct evsel *evsel, struct machine *machine,
				  struct thread *thread)
{
	struct walk_stream_sample ws = { w, thread, sample, evsel };

	return auxsample_decoding__decode(&w->d, machine, thread, sample,
					  w->window_config ?: &w->d.config, NULL,
					  auxsample_walk__stream_deliver, &ws);
}

/*
 * At the first AUX sample, when the trace configuration is known; without
 * the threads, the samples are decoded inline, as with -j 1.
 */
static void auxsample_walk__start_pool(struct auxsample_walk *w)
{
	unsigned int nr = auxsample_decoding__nr_threads(&w->d, w->threads);

	if (nr <= 1)
		return;
	w->d.pool = auxsample_pool__new(&w->d.config, nr, AUXSAMPLE_POOL_JOBS,
				      auxsample_walk__deliver, w);
	if (!w->d.pool)
		pr_warning("perf auxsample %s: decoding without threads\n", w->cmd);
}

/* The sample's snippet to the pool, which hands it to w->sample() in order. */
static int auxsample_walk__submit(struct auxsample_walk *w, struct perf_sample *sample,
				  struct evsel *evsel, struct machine *machine)
{
	struct auxsample_stream_job stream;
	struct auxsample_image *image = NULL;
	struct thread *thread;
	bool wanted, in_stream = false;
	int err;

	auxsample_pool__lock(w->d.pool);
	thread = machine__findnew_thread(machine, sample->pid, sample->tid);
	wanted = thread && auxsample_walk__wanted(w, thread, sample);
	if (wanted)
		image = auxsample_proc__image(&w->d.proc, machine, thread);
	auxsample_pool__unlock(w->d.pool);
	if (image && w->d.streams)
		in_stream = auxsample_streams__claim(w->d.streams, sample, &stream);
	if (!thread)
		return -ENOMEM;
	w->samples++;
	if (!wanted) {
		w->filtered++;
		err = 0;
	} else if (!image) {
		err = -ENOMEM;
	} else if (in_stream) {
		/*
		 * A stream's samples cost little each, less than the two
		 * thread switches of a job: decoded and delivered here, after
		 * the jobs before them.
		 */
		err = auxsample_pool__flush(w->d.pool);
		auxsample_pool__lock(w->d.pool);
		if (!err) {
			struct walk_stream_sample ws = { w, thread, sample, evsel };

			err = auxsample_decoding__decode_claim(&w->d, machine, thread, &stream,
							       sample->ip,
							       auxsample_walk__stream_deliver,
							       &ws);
		}
		auxsample_pool__unlock(w->d.pool);
		if (err == AUXSAMPLE_STREAM_ALONE)
			err = auxsample_pool__submit(w->d.pool, machine, thread, image, NULL,
						     sample, evsel, w->d.depth);
	} else {
		err = auxsample_pool__submit(w->d.pool, machine, thread, image, NULL, sample,
					     evsel, w->d.depth);
	}
	auxsample_pool__lock(w->d.pool);
	thread__put(thread);
	auxsample_pool__unlock(w->d.pool);
	return err;
}

/*
 * A sample beside a full trace, kept for its window, in its CPU's trace:
 * a sample without a CPU goes where the sideband says its thread ran.
 */
static int auxsample_walk__add_window(struct auxsample_walk *w, struct perf_sample *sample,
				      struct evsel *evsel, struct machine *machine)
{
	struct perf_sample placed = *sample;
	struct thread *thread;
	int err, cpu;

	if (!auxsample_place__has_cpu(evsel)) {
		cpu = auxsample_place__cpu(w->place, sample);
		if (cpu >= 0) {
			placed.cpu = cpu;
			w->placed++;
		} else {
			w->unplaced++;
		}
	}
	thread = machine__findnew_thread(machine, sample->pid, sample->tid);
	if (!thread)
		return -ENOMEM;
	err = auxsample_windows__add(w->windows, &placed, evsel, thread);
	thread__put(thread);
	return err;
}

static int auxsample_walk__process_sample(const struct perf_tool *tool,
					  union perf_event *event __maybe_unused,
					  struct perf_sample *sample, struct evsel *evsel,
					  struct machine *machine)
{
	struct auxsample_walk *w = container_of(tool, struct auxsample_walk, tool);
	struct thread *thread;
	int err = 0;

	/* Kept for windows. */
	if (!sample->aux_sample.size && w->windows && !w->full_trace && w->d.have_config)
		return auxsample_walk__add_window(w, sample, evsel, machine);
	if (!sample->aux_sample.size || w->full_trace)
		return 0;
	if (!w->d.have_config) {
		pr_err("perf auxsample %s: AUX samples without AUXTRACE_INFO: a broken perf.data?\n",
		       w->cmd);
		return -EINVAL;
	}
	if (!w->samples) {
		auxsample_walk__start_pool(w);
		if (!w->no_reuse && w->d.config.type == AUXSAMPLE_TRACE_INTEL_PT)
			w->d.streams = auxsample_streams__new(w->session);
	}
	if (w->d.pool)
		return auxsample_walk__submit(w, sample, evsel, machine);
	thread = machine__findnew_thread(machine, sample->pid, sample->tid);
	if (!thread)
		return -ENOMEM;
	w->samples++;
	if (auxsample_walk__wanted(w, thread, sample))
		err = auxsample_walk__decode(w, sample, evsel, machine, thread);
	else
		w->filtered++;
	thread__put(thread);
	return err;
}

/*
 * The process an event of @pid and @tid changes: perf's machine applies
 * it to the thread of @tid, which stays in the process it was first seen
 * in, whatever @pid says (a corrupt or crafted file).  Where that is not
 * @pid, every process's jobs wait, not only @pid's.  Looked up with pid
 * -1, which changes nothing in the machine; under the perf lock, as the
 * jobs' threads are.
 */
static pid_t auxsample_walk__event_pid(struct auxsample_walk *w, struct machine *machine,
				       pid_t pid, pid_t tid)
{
	struct thread *thread;
	pid_t owner;

	if (!machine || tid == -1)
		return pid;
	auxsample_pool__lock(w->d.pool);
	thread = machine__find_thread(machine, -1, tid);
	owner = thread ? thread__pid(thread) : -1;
	thread__put(thread);
	auxsample_pool__unlock(w->d.pool);
	return owner == -1 || owner == pid ? pid : -1;
}

/* The jobs an event of @pid and @tid changes the process of, delivered first. */
static int auxsample_walk__wait(struct auxsample_walk *w, struct machine *machine,
				pid_t pid, pid_t tid)
{
	if (!w->d.pool)
		return 0;
	return auxsample_pool__barrier(w->d.pool, auxsample_walk__event_pid(w, machine, pid, tid));
}

/*
 * Sideband changes a process's maps, its threads or their comm: decoding
 * and w->sample() must see them as they were at each sample, so the
 * samples of the process still in the pool are delivered before it.
 */
static int auxsample_walk__sideband(const struct perf_tool *tool, union perf_event *event,
				    struct perf_sample *sample, struct machine *machine,
				    pid_t pid, pid_t tid, event_op process)
{
	struct auxsample_walk *w = container_of(tool, struct auxsample_walk, tool);
	int err = auxsample_walk__wait(w, machine, pid, tid);

	if (err)
		return err;
	auxsample_pool__lock(w->d.pool);
	err = process(tool, event, sample, machine);
	auxsample_symcache__flush(&w->symcache);
	auxsample_pool__unlock(w->d.pool);
	return err;
}

static int auxsample_walk__mmap(const struct perf_tool *tool, union perf_event *event,
				struct perf_sample *sample, struct machine *machine)
{
	return auxsample_walk__sideband(tool, event, sample, machine, event->mmap.pid,
					event->mmap.tid, perf_event__process_mmap);
}

static int auxsample_walk__mmap2(const struct perf_tool *tool, union perf_event *event,
				 struct perf_sample *sample, struct machine *machine)
{
	return auxsample_walk__sideband(tool, event, sample, machine, event->mmap2.pid,
					event->mmap2.tid, perf_event__process_mmap2);
}

static int auxsample_walk__comm(const struct perf_tool *tool, union perf_event *event,
				struct perf_sample *sample, struct machine *machine)
{
	return auxsample_walk__sideband(tool, event, sample, machine, event->comm.pid,
					event->comm.tid, perf_event__process_comm);
}

/*
 * Fork and exit: of the parent's process too, a thread of it.  A fork
 * into another process changes the child's process too: perf copies the
 * parent's maps into the child's, which a crafted file may give a
 * process with jobs (thread__clone_maps()).
 */
static int auxsample_walk__fork(const struct perf_tool *tool, union perf_event *event,
				struct perf_sample *sample, struct machine *machine)
{
	struct auxsample_walk *w = container_of(tool, struct auxsample_walk, tool);
	int err = 0;

	if (event->fork.pid != event->fork.ppid)
		err = auxsample_walk__wait(w, machine, event->fork.pid, event->fork.tid);
	return err ?: auxsample_walk__sideband(tool, event, sample, machine, event->fork.ppid,
					       event->fork.ptid, perf_event__process_fork);
}

static int auxsample_walk__exit(const struct perf_tool *tool, union perf_event *event,
				struct perf_sample *sample, struct machine *machine)
{
	return auxsample_walk__sideband(tool, event, sample, machine, event->fork.pid,
					event->fork.tid, perf_event__process_exit);
}

/* Where threads run, for samples without a CPU beside a full trace. */
static int auxsample_walk__itrace_start(const struct perf_tool *tool, union perf_event *event,
					struct perf_sample *sample, struct machine *machine)
{
	struct auxsample_walk *w = container_of(tool, struct auxsample_walk, tool);

	return auxsample_place__event(w->place, event, sample) ?:
	       perf_event__process_itrace_start(tool, event, sample, machine);
}

static int auxsample_walk__switch(const struct perf_tool *tool, union perf_event *event,
				  struct perf_sample *sample, struct machine *machine)
{
	struct auxsample_walk *w = container_of(tool, struct auxsample_walk, tool);

	return auxsample_place__event(w->place, event, sample) ?:
	       perf_event__process_switch(tool, event, sample, machine);
}

/* Full trace (auxsample-fulltrace.c): the buffers, their format, trace IDs. */
static s64 auxsample_walk__auxtrace(struct perf_session *session, union perf_event *event)
{
	struct auxsample_walk *w = container_of(session->tool, struct auxsample_walk, tool);

	return auxsample_fulltrace__queue(w->ft, session, event);
}

static int auxsample_walk__aux(const struct perf_tool *tool, union perf_event *event,
			       struct perf_sample *sample, struct machine *machine)
{
	struct auxsample_walk *w = container_of(tool, struct auxsample_walk, tool);

	auxsample_fulltrace__aux(w->ft, event, sample);
	return perf_event__process_aux(tool, event, sample, machine);
}

static int auxsample_walk__aux_output_hw_id(const struct perf_tool *tool,
					    union perf_event *event,
					    struct perf_sample *sample,
					    struct machine *machine __maybe_unused)
{
	struct auxsample_walk *w = container_of(tool, struct auxsample_walk, tool);

	return auxsample_fulltrace__hw_id(w->ft, event, sample);
}

static int auxsample_walk__init_fulltrace(struct auxsample_walk *w)
{
	w->ft = auxsample_fulltrace__new();
	w->windows = auxsample_windows__new(w->window);
	w->place = auxsample_place__new();
	if (!w->ft || !w->windows || !w->place)
		return -ENOMEM;
	w->tool.auxtrace = auxsample_walk__auxtrace;
	w->tool.aux = auxsample_walk__aux;
	w->tool.aux_output_hw_id = auxsample_walk__aux_output_hw_id;
	w->tool.itrace_start = auxsample_walk__itrace_start;
	w->tool.context_switch = auxsample_walk__switch;
	return 0;
}

static void auxsample_walk__exit_fulltrace(struct auxsample_walk *w)
{
	auxsample_fulltrace__delete(w->ft);
	w->ft = NULL;
	auxsample_windows__delete(w->windows);
	w->windows = NULL;
	auxsample_place__delete(w->place);
	w->place = NULL;
}

/* A sample beside the trace, with its window as its AUX data. */
static int auxsample_walk__window(struct perf_sample *sample, struct evsel *evsel,
				  struct thread *thread, const struct auxsample_config *config,
				  void *context)
{
	struct auxsample_walk *w = context;

	w->samples++;
	if (!auxsample_walk__wanted(w, thread, sample)) {
		w->filtered++;
		return 0;
	}
	w->window_config = config;
	return auxsample_walk__decode(w, sample, evsel, &w->session->machines.host, thread);
}

/*
 * Full trace (Intel PT, CoreSight ETM) with samples beside it and no AUX
 * samples: each sample with its window.  1: there are none.
 */
static int auxsample_walk__windows(struct auxsample_walk *w)
{
	const struct auxsample_window_stats *st;
	int err;

	if (w->full_trace || w->samples || !w->d.have_config ||
	    !auxsample_windows__nr_samples(w->windows) ||
	    !auxsample_fulltrace__has_trace(w->ft))
		return 1;
	w->beside = true;
	err = auxsample_windows__run(w->windows, w->ft, w->session, auxsample_walk__window, w);
	w->window_config = NULL;
	st = auxsample_windows__stats(w->windows);
	pr_debug("windows: %" PRIu64 " at the sample's stop, %" PRIu64 " by time, %" PRIu64
		 " bad packets\n",
		 st->at_stop, st->by_time, st->bad_packets);
	if (!err) {
		char who[32];

		snprintf(who, sizeof(who), "perf auxsample %s: ", w->cmd);
		auxsample_place__warn_unplaced(who, w->unplaced);
	}
	return err;
}

/*
 * The trace buffers, when asked to decode them, or when there are no AUX
 * samples to decode but trace.  1: not a full-trace decode.
 */
static int auxsample_walk__fulltrace(struct auxsample_walk *w)
{
	int err = auxsample_walk__windows(w);

	if (err <= 0)
		return err ?: 1;
	if (!w->fulltrace ||
	    (!w->full_trace && (w->samples || !auxsample_fulltrace__has_trace(w->ft))))
		return 1;
	if (!w->d.have_config) {
		pr_err("perf auxsample %s: %s has no AUXTRACE_INFO: no trace to decode\n",
		       w->cmd, w->input);
		return -ENODATA;
	}
	return w->fulltrace(w);
}

/* What the walk made; the pool first: its jobs hold threads and images. */
static void auxsample_walk__release(struct auxsample_walk *w)
{
	auxsample_decoding__exit(&w->d);
	perf_session__delete(w->session);
	w->session = NULL;
	auxsample_symcache__exit(&w->symcache);
	/* After the session: it points to the itrace options the queues use. */
	auxsample_walk__exit_fulltrace(w);
}

/* The events the walk takes: samples, sideband, and what describes them. */
static void auxsample_walk__init_tool(struct auxsample_walk *w)
{
	perf_tool__init(&w->tool, /*ordered_events=*/true);
	w->tool.sample = auxsample_walk__process_sample;
	w->tool.mmap = auxsample_walk__mmap;
	w->tool.mmap2 = auxsample_walk__mmap2;
	w->tool.comm = auxsample_walk__comm;
	w->tool.fork = auxsample_walk__fork;
	w->tool.exit = auxsample_walk__exit;
	w->tool.id_index = perf_event__process_id_index;
	/* A pipe: the events' attrs and the header's features come as events. */
	w->tool.attr = perf_event__process_attr;
	w->tool.event_update = perf_event__process_event_update;
	w->tool.feature = auxsample_walk__feature;
	w->tool.tracing_data = perf_event__process_tracing_data;
	w->tool.build_id = perf_event__process_build_id;
	w->tool.auxtrace_info = auxsample_walk__auxtrace_info;
}

/*
 * Decode every AUX sample of w->input and hand it to w->sample(), then
 * call w->done().  Errors are negative errnos or -AUXSAMPLE_ERR_*, and
 * have been reported.
 */
int auxsample_walk__run(struct auxsample_walk *w)
{
	struct perf_data data = {
		.path = w->input,
		.mode = PERF_DATA_MODE_READ,
	};
	char who[32];
	int err;

	auxsample_walk__init_tool(w);
	/* Trace buffers: for samples beside them, or decoded whole. */
	err = auxsample_walk__init_fulltrace(w);
	if (err) {
		auxsample_walk__exit_fulltrace(w);
		return err;
	}

	w->session = perf_session__new(&data, &w->tool);
	if (IS_ERR(w->session)) {
		auxsample_walk__exit_fulltrace(w);
		return PTR_ERR(w->session);
	}
	snprintf(who, sizeof(who), "perf auxsample %s: ", w->cmd);
	err = auxsample_session__check_size(w->session, who);
	if (!err)
		err = symbol__init(&w->session->header.env);
	if (!err)
		err = perf_session__process_events(w->session);
	if (!err)
		err = auxsample_pool__flush(w->d.pool);
	if (!err) {
		err = auxsample_walk__fulltrace(w);
		if (err <= 0)
			goto out_delete;
		err = 0;
	}
	/* Stopped by the user: no message that there were no samples. */
	if (!err && !w->samples && !session_done()) {
		pr_err("perf auxsample %s: %s has no samples with AUX area data; record them with perf record -A\n",
		       w->cmd, w->input);
		err = -ENODATA;
	}
	if (!err && w->done)
		err = w->done(w);
out_delete:
	auxsample_walk__release(w);
	return err;
}
