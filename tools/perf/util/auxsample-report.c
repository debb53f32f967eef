// SPDX-License-Identifier: GPL-2.0
/*
 * Virtual LBR in perf report: libauxsample decodes each sample's AUX
 * snippet into its last taken branches, attached to the sample as the
 * branch stack that real LBR hardware would have given.
 *
 * It plugs in as the session's struct auxtrace, whose process_event sees
 * every sample before the tool does, and in place of upstream's Intel PT
 * decoder, which --itrace selects instead.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>
#include <auxsample/auxsample.h>

#include "auxsample.h"
#include "auxsample-config.h"
#include "auxsample-fulltrace.h"
#include "auxsample-place.h"
#include "auxsample-print.h"
#include "auxsample-report.h"
#include "auxsample-walk.h"
#include "auxsample-window.h"
#include "auxtrace.h"
#include "branch.h"
#include "callchain.h"
#include "data.h"
#include "debug.h"
#include "evlist.h"
#include "evsel.h"
#include "header.h"
#include "machine.h"
#include "sample.h"
#include "session.h"
#include "sort.h"
#include "thread.h"
#include "tool.h"

/* A sample beside a full trace and the trace window before it. */
struct report_window {
	const void	*data;
	size_t		size;
	u64		time;
	u64		ip;
	u32		cpu;		/* where it was placed, if it had none */
	u32		tid;
	bool		unplaced;	/* no CPU, and none known: no trace */
	/* what decodes it, if not the file's configuration: ETM's CPU's */
	const struct auxsample_config *config;
};

/*
 * What a sample's virtual LBR came to: branches, or why none, as the
 * header of perf report says it for each event.
 */
enum report_outcome {
	REPORT_VLBR,
	REPORT_NO_CPU,		/* beside a full trace, no CPU, not placed */
	REPORT_NO_TRACE,	/* no AUX data, an empty window */
	REPORT_NO_SYNC,		/* no sync point in the trace */
	REPORT_NO_CODE,		/* the code the trace ran was not found */
	REPORT_NO_BRANCH,	/* decoded, no taken branch in it */
	REPORT_DECODE_ERROR,
	REPORT_NR_OUTCOMES,
};

static const char * const report_outcome_names[REPORT_NR_OUTCOMES] = {
	[REPORT_VLBR]		= "virtual LBR",
	[REPORT_NO_CPU]		= "no CPU",
	[REPORT_NO_TRACE]	= "no trace",
	[REPORT_NO_SYNC]	= "no sync point",
	[REPORT_NO_CODE]	= "no code",
	[REPORT_NO_BRANCH]	= "no taken branch",
	[REPORT_DECODE_ERROR]	= "decode error",
};

struct report_counts {
	u64	outcomes[REPORT_NR_OUTCOMES];
};

struct auxsample_report {
	struct auxtrace			auxtrace;
	/*
	 * The walk's decoding (auxsample-walk.h): samples decoded alone go
	 * to its decoding threads and are delivered again when decoded, in
	 * order; the events between them wait.
	 */
	struct auxsample_decoding	d;
	struct perf_session		*session;
	unsigned int			threads;	/* 0: one per online CPU */
	bool				pool_tried;
	struct branch_stack		*bs;
	struct ip_callchain		*chain;		/* context, ip, callers */
	unsigned int			chain_max;
	u64				pmu_type;	/* of the AUX area events */
	bool				warned;
	/* Full trace: the windows of the samples beside it, in sample order. */
	struct auxsample_windows	*windows;	/* holds the trace they point into */
	struct report_window		*wins;
	size_t				nr_wins;
	size_t				cap_wins;
	size_t				next_win;
	/* the outcomes of each event's samples, by evsel index */
	struct report_counts		*counts;
	int				nr_counts;
};

static struct auxsample_report *to_report(struct perf_session *session)
{
	return container_of(session->auxtrace, struct auxsample_report, auxtrace);
}

static int auxsample_report__auxtrace_info(struct perf_session *session,
					   union perf_event *event)
{
	struct auxsample_report *r = to_report(session);
	int err = auxsample_config__from_auxtrace_info(&r->d.config, session, event,
							&r->pmu_type);

	if (err == -EOPNOTSUPP) {
		pr_warning("virtual LBR: AUX area data of type %u is not decoded yet: use --itrace\n",
			   event->auxtrace_info.type);
		return 0;
	}
	if (err == -AUXSAMPLE_ERR_NOT_BUILT) {
		pr_warning("virtual LBR: %s\n", auxsample__not_built(&r->d.config));
		return 0;
	}
	if (err)
		return err;
	r->d.have_config = true;
	/* Report the sampled events on their own, not under intel_pt//. */
	unleader_auxtrace(session);
	return 0;
}

/*
 * The call chain the snippet shows: the sample's IP, then the return
 * addresses of the calls still open, innermost first.
 */
static void auxsample_report__callchain(struct auxsample_report *r, struct perf_sample *sample,
				       const struct auxsample_result *res)
{
	int depth = min_t(int, res->depth, r->chain_max - 2);

	if (depth < 0)
		depth = 0;
	r->chain->ips[0] = PERF_CONTEXT_USER;
	r->chain->ips[1] = sample->ip;
	/* A snippet with no call open has no array: memcpy() must not see NULL. */
	if (depth)
		memcpy(&r->chain->ips[2], res->callchain, depth * sizeof(*res->callchain));
	r->chain->nr = depth + 2;
}

/* A sample's results, from its stream or alone, into r->bs and r->chain. */
struct report_sample {
	struct auxsample_report	*r;
	struct perf_sample	*sample;
	struct evsel		*evsel;
};

/* @evsel's sample came to @outcome. */
static int auxsample_report__count(struct auxsample_report *r, struct evsel *evsel,
				   enum report_outcome outcome)
{
	int idx = evsel->core.idx;

	if (idx < 0)
		return 0;
	if (idx >= r->nr_counts) {
		struct report_counts *counts = realloc(r->counts, (idx + 1) * sizeof(*counts));

		if (!counts)
			return -ENOMEM;
		memset(counts + r->nr_counts, 0, (idx + 1 - r->nr_counts) * sizeof(*counts));
		r->counts = counts;
		r->nr_counts = idx + 1;
	}
	r->counts[idx].outcomes[outcome]++;
	return 0;
}

/* Why a decode that gave no branch gave none. */
static enum report_outcome auxsample_report__outcome(const struct auxsample_result *res)
{
	bool nocode = false;

	if (res->nr == -AUXSAMPLE_ERR_NOSYNC)
		return REPORT_NO_SYNC;
	if (res->nr > 0)
		return REPORT_VLBR;
	if (res->nr < 0)
		return REPORT_DECODE_ERROR;
	for (int i = 0; i < res->nr_errors; i++) {
		if (res->errors[i].error == -AUXSAMPLE_ERR_NOMAP)
			nocode = true;
		else
			return REPORT_DECODE_ERROR;
	}
	return nocode ? REPORT_NO_CODE : REPORT_NO_BRANCH;
}

static int auxsample_report__fill(void *arg, const struct auxsample_result *res)
{
	struct report_sample *rs = arg;
	struct auxsample_report *r = rs->r;
	const struct auxsample_branch *br = res->branches;
	int nr = res->nr, err;

	err = auxsample_report__count(r, rs->evsel, auxsample_report__outcome(res));
	if (err)
		return err;
	if (nr == -AUXSAMPLE_ERR_NOSYNC) {
		r->bs->nr = 0;
		r->chain->nr = 0;
		return 0;
	}
	if (nr < 0)
		return nr;

	auxsample_report__callchain(r, rs->sample, res);
	r->bs->nr = nr;
	r->bs->hw_idx = -1ULL;
	for (int i = 0; i < nr; i++) {
		struct branch_entry *e = &r->bs->entries[i];

		memset(e, 0, sizeof(*e));
		e->from = br[i].from;
		e->to = br[i].flags & AUXSAMPLE_BRF_TO_UNKNOWN ? 0 : br[i].to;
		e->flags.type = auxsample_branch__perf_type(&br[i], r->d.config.type);
		/* Where the trace has CYC packets: LBR's cycles, else 0 (unknown). */
		e->flags.cycles = br[i].cycles;
	}
	return 0;
}

/* Decode @sample's snippet, with @config, into r->bs and r->chain. */
static int auxsample_report__decode(struct auxsample_report *r, struct perf_session *session,
				    struct perf_sample *sample, struct evsel *evsel,
				    const struct auxsample_config *config,
				    const struct auxsample_stream_job *claimed)
{
	struct machine *machine = &session->machines.host;
	struct report_sample rs = { r, sample, evsel };
	struct thread *thread;
	int err;

	thread = machine__findnew_thread(machine, sample->pid, sample->tid);
	if (!thread)
		return -ENOMEM;
	err = auxsample_decoding__decode(&r->d, machine, thread, sample, config, claimed,
					 auxsample_report__fill, &rs);
	thread__put(thread);
	return err;
}

/* The window of @sample, found in the same order on the first pass. */
static const struct report_window *auxsample_report__window(struct auxsample_report *r,
							     const struct perf_sample *sample)
{
	for (size_t i = r->next_win; i < r->nr_wins; i++) {
		const struct report_window *w = &r->wins[i];

		/* A sample without a CPU was placed on the first pass. */
		if (w->time == sample->time && w->tid == sample->tid && w->ip == sample->ip &&
		    (w->cpu == sample->cpu || sample->cpu == (u32)-1)) {
			r->next_win = i + 1;
			return w;
		}
		if (w->time > sample->time)
			break;
	}
	return NULL;
}

/*
 * @sample's decode has set r->bs and r->chain, unless it failed: onto the
 * sample.  Without a branch it gets no branch stack: perf report shows it
 * as a sample without one (auxsample_report__keep_unbranched()).
 */
static void auxsample_report__attach(struct auxsample_report *r, struct perf_sample *sample,
				     int err)
{
	if (err) {
		/* One sample's trouble never costs the others theirs. */
		char buf[STRERR_BUFSIZE];

		if (!r->warned)
			pr_warning("virtual LBR: %s\n", auxsample__strerror(err, buf, sizeof(buf)));
		r->warned = true;
		return;
	}
	if (!r->bs->nr)
		return;
	sample->branch_stack = r->bs;
	sample->no_hw_idx = false;
	if (!sample->callchain && r->chain->nr)
		sample->callchain = r->chain;
}

/*
 * A decoded sample, in its turn: delivered again, parsed from the copy of
 * its event, with its virtual LBR.  perf counted the event when it read it.
 */
static int auxsample_report__deliver(void *arg, struct thread *thread __maybe_unused,
				     struct perf_sample *copy __maybe_unused,
				     struct evsel *evsel,
				     const struct auxsample_result *res, union perf_event *event)
{
	struct auxsample_report *r = arg;
	struct perf_session *session = r->session;
	struct perf_sample sample;
	struct report_sample rs = { r, &sample, evsel };
	int err = evlist__parse_sample(session->evlist, event, &sample);

	if (err)
		return err;
	auxsample_report__attach(r, &sample, auxsample_report__fill(&rs, res));
	/* The trace has been decoded: tools see the sample as without threads. */
	sample.aux_sample.data = NULL;
	sample.aux_sample.size = 0;
	/* Counted again, with the total, by perf_session__deliver_synth_event(). */
	session->evlist->stats.nr_events[event->header.type]--;
	session->evlist->stats.nr_events[0]--;
	return perf_session__deliver_synth_event(session, event, &sample);
}

/*
 * At the first sample to decode, when the trace configuration is known:
 * streams and threads, for Intel PT only (OpenCSD keeps global state).
 * Threads need more than one CPU, and a file: the user events of a pipe
 * (build-ids) change the dsos, unseen by the virtual LBR's hook.
 */
static void auxsample_report__start_pool(struct auxsample_report *r)
{
	unsigned int nr = auxsample_decoding__nr_threads(&r->d, r->threads);

	r->pool_tried = true;
	if (r->d.config.type != AUXSAMPLE_TRACE_INTEL_PT)
		return;
	/* Windows of a full trace are cut apart already: no snippets overlap. */
	if (!r->windows)
		r->d.streams = auxsample_streams__new(r->session);
	if (nr <= 1 || perf_data__is_pipe(r->session->data))
		return;
	r->d.pool = auxsample_pool__new(&r->d.config, nr, AUXSAMPLE_POOL_JOBS,
					auxsample_report__deliver, r);
	if (!r->d.pool)
		pr_warning("virtual LBR: decoding without threads\n");
}

static bool evsel__has_aux_samples(const struct evsel *evsel)
{
	return (evsel->core.attr.sample_type & PERF_SAMPLE_AUX) &&
	       evsel->core.attr.aux_sample_size;
}

/*
 * Whether @evsel's samples get a virtual LBR: those that carry AUX data,
 * or, beside a full trace, those of every sampled event but the trace's.
 */
static bool auxsample_report__serves(const struct auxsample_report *r, struct evsel *evsel)
{
	if (!evsel || !r->d.have_config || evsel->core.attr.type == r->pmu_type ||
	    evsel__is_dummy_event(evsel))
		return false;
	return r->windows || evsel__has_aux_samples(evsel);
}

/* To a decoding thread: 1 when it took the sample, 0 to decode it here. */
static int auxsample_report__submit(struct auxsample_report *r, union perf_event *event,
				    struct perf_sample *sample)
{
	struct machine *machine = &r->session->machines.host;
	struct evsel *evsel = evlist__id2evsel(r->session->evlist, sample->id);
	struct auxsample_image *image;
	struct thread *thread;
	int err;

	/* The threads read code through perf's maps meanwhile. */
	auxsample_pool__lock(r->d.pool);
	thread = machine__findnew_thread(machine, sample->pid, sample->tid);
	image = thread ? auxsample_proc__image(&r->d.proc, machine, thread) : NULL;
	auxsample_pool__unlock(r->d.pool);
	err = image ? auxsample_pool__submit(r->d.pool, machine, thread, image, event, sample,
					     evsel, r->d.depth) : -ENOMEM;
	auxsample_pool__lock(r->d.pool);
	thread__put(thread);
	auxsample_pool__unlock(r->d.pool);
	return err ?: 1;
}

static int auxsample_report__process_event(struct perf_session *session,
					   union perf_event *event,
					   struct perf_sample *sample,
					   const struct perf_tool *tool __maybe_unused)
{
	struct auxsample_report *r = to_report(session);
	const struct report_window *w = NULL;
	struct auxsample_stream_job job;
	bool claimed = false;
	struct evsel *evsel;
	int err;

	if (event->header.type != PERF_RECORD_SAMPLE || sample->branch_stack)
		goto out_in_order;
	evsel = evlist__id2evsel(session->evlist, sample->id);
	if (!auxsample_report__serves(r, evsel))
		goto out_in_order;
	if (!sample->aux_sample.size) {
		w = auxsample_report__window(r, sample);
		if (!w || !w->size) {
			/* Counted, and shown in its turn without branches. */
			err = auxsample_report__count(r, evsel, w && w->unplaced ?
						      REPORT_NO_CPU : REPORT_NO_TRACE);
			if (err)
				return err;
			goto out_in_order;
		}
		/* The window stands for the AUX data the sample lacks. */
		sample->aux_sample.data = (void *)w->data;
		sample->aux_sample.size = w->size;
	}
	if (!r->pool_tried)
		auxsample_report__start_pool(r);
	/* A stream's samples cost little each: here, after the ones before them. */
	if (r->d.pool && !(w && w->config))
		claimed = auxsample_streams__claim(r->d.streams, sample, &job);
	if (r->d.pool && !(w && w->config) && !claimed) {
		err = auxsample_report__submit(r, event, sample);
		if (w) {
			sample->aux_sample.data = NULL;
			sample->aux_sample.size = 0;
		}
		return err;
	}
	err = auxsample_pool__flush(r->d.pool);
	if (err)
		return err;
	err = auxsample_report__decode(r, session, sample, evsel,
				       w && w->config ? w->config : &r->d.config,
				       claimed ? &job : NULL);
	if (w) {
		sample->aux_sample.data = NULL;
		sample->aux_sample.size = 0;
	}
	auxsample_report__attach(r, sample, err);
	return 0;

out_in_order:
	/* The samples still decoding come first. */
	return auxsample_pool__flush(r->d.pool);
}

/* Full trace: the windows were found on the first pass. */
static int auxsample_report__process_auxtrace_event(struct perf_session *session __maybe_unused,
						    union perf_event *event __maybe_unused,
						    const struct perf_tool *tool __maybe_unused)
{
	return 0;
}

static int auxsample_report__flush_events(struct perf_session *session,
					  const struct perf_tool *tool __maybe_unused)
{
	return auxsample_pool__flush(to_report(session)->d.pool);
}

int auxsample_report__flush(struct perf_session *session)
{
	if (!session->auxtrace || session->auxtrace->flush_events != auxsample_report__flush_events)
		return 0;
	return auxsample_pool__flush(to_report(session)->d.pool);
}

static struct auxsample_report *auxsample_report__of(struct perf_session *session)
{
	if (!session->auxtrace || session->auxtrace->flush_events != auxsample_report__flush_events)
		return NULL;
	return to_report(session);
}

bool auxsample_report__keep_unbranched(struct perf_session *session, struct evsel *evsel,
				       struct perf_sample *sample)
{
	struct auxsample_report *r = auxsample_report__of(session);

	if (!r || sample->branch_stack || !auxsample_report__serves(r, evsel))
		return false;
	/* One entry, as one branch is one: not the event's period. */
	sample->period = 1;
	return true;
}

size_t auxsample_report__fprintf_header(struct perf_session *session, struct evsel *evsel,
					FILE *fp)
{
	struct auxsample_report *r = auxsample_report__of(session);
	const struct report_counts *c;
	const char *sep = "; without one: ";
	u64 total = 0;
	size_t ret;

	if (!r || evsel->core.idx < 0 || evsel->core.idx >= r->nr_counts)
		return 0;
	c = &r->counts[evsel->core.idx];
	for (int i = 0; i < REPORT_NR_OUTCOMES; i++)
		total += c->outcomes[i];
	ret = fprintf(fp, "# Virtual LBR: %" PRIu64 " of %" PRIu64 " samples",
		      c->outcomes[REPORT_VLBR], total);
	for (int i = REPORT_VLBR + 1; i < REPORT_NR_OUTCOMES; i++) {
		if (!c->outcomes[i])
			continue;
		ret += fprintf(fp, "%s%" PRIu64 " %s", sep, c->outcomes[i],
			       report_outcome_names[i]);
		sep = ", ";
	}
	if (total != c->outcomes[REPORT_VLBR] && sort__mode == SORT_MODE__BRANCH)
		ret += fprintf(fp,
			       "\n# (each counted as one N/A branch; --no-virtual-lbr shows them by symbol)");
	return ret + fprintf(fp, "\n#\n");
}

void auxsample_report__set_threads(struct perf_session *session, unsigned int threads)
{
	if (session->auxtrace && session->auxtrace->flush_events == auxsample_report__flush_events)
		to_report(session)->threads = threads;
}

static void auxsample_report__free_events(struct perf_session *session __maybe_unused)
{
}

static void auxsample_report__free(struct perf_session *session)
{
	struct auxsample_report *r = to_report(session);

	session->auxtrace = NULL;
	auxsample_decoding__exit(&r->d);
	auxsample_windows__delete(r->windows);
	free(r->wins);
	free(r->counts);
	free(r->bs);
	free(r->chain);
	free(r);
}

static bool auxsample_report__evsel_is_auxtrace(struct perf_session *session,
						struct evsel *evsel)
{
	struct auxsample_report *r = to_report(session);

	return r->d.have_config && evsel->core.attr.type == r->pmu_type;
}

static bool auxsample_report__has_aux_samples(struct evlist *evlist)
{
	struct evsel *evsel;

	evlist__for_each_entry(evlist, evsel) {
		if (evsel__has_aux_samples(evsel))
			return true;
	}
	return false;
}

static int prepass__window(struct perf_sample *sample, struct evsel *evsel __maybe_unused,
			   struct thread *thread __maybe_unused,
			   const struct auxsample_config *config, void *context)
{
	struct auxsample_report *r = context;

	if (r->nr_wins == r->cap_wins) {
		size_t cap = r->cap_wins ? r->cap_wins * 2 : 1024;
		struct report_window *wins = realloc(r->wins, cap * sizeof(*wins));

		if (!wins)
			return -ENOMEM;
		r->wins = wins;
		r->cap_wins = cap;
	}
	r->wins[r->nr_wins++] = (struct report_window){
		.data = sample->aux_sample.data, .size = sample->aux_sample.size,
		.time = sample->time, .ip = sample->ip, .cpu = sample->cpu,
		.tid = sample->tid, .unplaced = sample->cpu == (u32)-1,
		.config = config,
	};
	return 0;
}

/* Full trace (Intel PT, CoreSight ETM) with samples beside it: every sample's window. */
static int auxsample_report__windows(struct auxsample_report *r, struct perf_session *session)
{
	struct auxsample_windows *ws = NULL;
	u64 unplaced = 0;
	int err = auxsample_windows__first_pass(session, AUXSAMPLE_REPORT_WINDOW_BYTES,
						 prepass__window, r, &ws, &unplaced);

	if (!err && r->nr_wins) {
		r->windows = ws;
		ws = NULL;
		auxsample_place__warn_unplaced("virtual LBR: ", unplaced);
	}
	auxsample_windows__delete(ws);
	return err;
}

/* A full trace, indexed, with sampled events beside it: windows may apply. */
static bool auxsample_report__may_have_windows(struct perf_session *session)
{
	return !perf_data__is_pipe(session->data) &&
	       perf_header__has_feat(&session->header, HEADER_AUXTRACE) &&
	       (evlist__combined_sample_type(session->evlist) & PERF_SAMPLE_CPU);
}

static struct auxsample_report *auxsample_report__new(struct perf_session *session,
						      unsigned int depth)
{
	struct auxsample_report *r = zalloc(sizeof(*r));

	if (!r)
		return NULL;
	r->chain_max = PERF_MAX_STACK_DEPTH;
	r->bs = zalloc(sizeof(*r->bs) + depth * sizeof(r->bs->entries[0]));
	r->chain = zalloc(sizeof(*r->chain) + r->chain_max * sizeof(r->chain->ips[0]));
	if (!r->bs || !r->chain) {
		free(r->bs);
		free(r->chain);
		free(r);
		return NULL;
	}
	r->d.depth = depth;
	r->session = session;
	return r;
}

/* Before it is installed. */
static void auxsample_report__delete(struct auxsample_report *r)
{
	free(r->wins);
	free(r->bs);
	free(r->chain);
	free(r);
}

/* @r as the session's decoder, and what the samples carry then. */
static void auxsample_report__install(struct auxsample_report *r, struct perf_session *session,
				      struct perf_tool *tool, struct itrace_synth_opts *itrace)
{
	struct evsel *evsel;

	r->auxtrace.process_event = auxsample_report__process_event;
	r->auxtrace.process_auxtrace_event = auxsample_report__process_auxtrace_event;
	r->auxtrace.flush_events = auxsample_report__flush_events;
	r->auxtrace.free_events = auxsample_report__free_events;
	r->auxtrace.free = auxsample_report__free;
	r->auxtrace.evsel_is_auxtrace = auxsample_report__evsel_is_auxtrace;
	session->auxtrace = &r->auxtrace;
	tool->auxtrace_info = auxsample_report__auxtrace_info;

	/* The samples have branch stacks and call chains now, as with --itrace=LG. */
	itrace->set = true;
	itrace->add_last_branch = true;
	itrace->last_branch_sz = r->d.depth;
	itrace->add_callchain = true;
	itrace->callchain_sz = r->chain_max;
	evlist__for_each_entry(session->evlist, evsel)
		evsel->synth_sample_type |= PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_CALLCHAIN;
}

int auxsample_report__setup(struct perf_session *session, struct perf_tool *tool,
			    struct itrace_synth_opts *itrace, unsigned int depth)
{
	struct auxsample_report *r;
	bool windows;
	int err;

	/* -D dumps the trace with perf's own packet decoder. */
	if (!depth || dump_trace || itrace->set || session->auxtrace)
		return 0;
	windows = !auxsample_report__has_aux_samples(session->evlist);
	if (windows && !auxsample_report__may_have_windows(session))
		return 0;
	/* perf's reader would fault on the missing bytes, with nothing said. */
	err = auxsample_session__check_size(session, "");
	if (err)
		return err;

	r = auxsample_report__new(session, depth);
	if (!r)
		return -ENOMEM;
	if (windows) {
		err = auxsample_report__windows(r, session);
		if (err || !r->nr_wins) {
			/* No trace we decode, or no samples: perf's own decoding. */
			auxsample_report__delete(r);
			return err;
		}
	}
	auxsample_report__install(r, session, tool, itrace);
	return 0;
}

int auxsample_report__setup_pipe(struct perf_session *session, struct perf_tool *tool,
				 struct itrace_synth_opts *itrace, unsigned int depth)
{
	struct auxsample_report *r;

	if (!depth || itrace->set || session->auxtrace)
		return 0;
	r = auxsample_report__new(session, depth);
	if (!r)
		return -ENOMEM;
	auxsample_report__install(r, session, tool, itrace);
	return 0;
}
