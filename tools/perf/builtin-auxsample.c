// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample: the AUX-sample toolbox.
 *
 *   perf auxsample script [<options>]
 *   perf auxsample stat [<options>]
 *   perf auxsample inject [<options>] -o <file>
 *   perf auxsample simulate [<options>] -- <command> [<args>]
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <linux/string.h>
#include <linux/zalloc.h>
#include <internal/lib.h>
#include <subcmd/parse-options.h>

#include "builtin.h"
#include "util/auxsample-profile.h"
#include "util/auxsample-report.h"
#include "util/auxsample-script.h"
#include "util/auxsample-sim.h"
#include "util/auxsample-sim-progress.h"
#include "util/auxtrace.h"
#include "util/branch.h"
#include "util/data.h"
#include "util/debug.h"
#include "util/event.h"
#include "util/evlist.h"
#include "util/evsel.h"
#include "ui/progress.h"
#include "util/header.h"
#include "util/sample.h"
#include "util/session.h"
#include "util/symbol.h"
#include "util/synthetic-events.h"
#include "util/thread.h"
#include "util/tool.h"
#include "util/units.h"

#define SIM_DEFAULT_AUX_SAMPLE_SIZE	4096
#define SIM_DEFAULT_PSB_PERIOD		2048	/* sample mode's psb_period=0 */
#define SIM_DEFAULT_PERIOD		1000
#define SIM_MAX_AUX_SAMPLE_SIZE		(60 * 1024)	/* as perf record */

static const char * const auxsample_usage[] = {
	"perf auxsample script [<options>]",
	"perf auxsample stat [<options>]",
	"perf auxsample inject [<options>] -o <file>",
	"perf auxsample report [<options>]",
	"perf auxsample simulate [<options>] -- <command> [<args>]",
	"",
	"script     each sample's virtual LBR and call chain, as perf script shows them",
	"stat       samples, trace, sync points and decode errors: what decodes and why not",
	"inject     a copy with the virtual LBRs as branch stacks, for perf report -b, BOLT, AutoFDO",
	"report     hot branch edges, loops, basic blocks and calls of the virtual LBRs",
	"simulate   record a command's Intel PT AUX samples on a machine without Intel PT",
	"",
	"'perf help auxsample' or 'perf auxsample <command> -h' says more.",
	NULL
};

#define AUXSAMPLE_DEFAULT_DEPTH	64

static int parse_size(const struct option *opt, const char *str, int unset)
{
	static struct parse_tag tags[] = {
		{ .tag = 'B', .mult = 1 }, { .tag = 'K', .mult = 1 << 10 },
		{ .tag = 'M', .mult = 1 << 20 }, { .tag = 0 },
	};
	unsigned long val;
	char *end;

	if (unset)
		return -1;
	val = strtoul(str, &end, 0);
	if (*end)
		val = parse_tag_value(str, tags);
	if (val == (unsigned long)-1 || val > UINT_MAX) {
		pr_err("bad size: %s\n", str);
		return -1;
	}
	*(u64 *)opt->value = val;
	return 0;
}

/* Windows before samples: at most this much trace, as a snippet of that size. */
#define AUXSAMPLE_DEFAULT_WINDOW	(64 * 1024)
#define AUXSAMPLE_MAX_WINDOW		(16 * 1024 * 1024)

static int check_window(u64 size)
{
	if (size >= 256 && size <= AUXSAMPLE_MAX_WINDOW)
		return 0;
	pr_err("perf auxsample: --window-size must be from 256 bytes to 16M\n");
	return -1;
}

/* --depth 0 would decode every sample and show none of its branches. */
static int check_depth(const char *cmd, unsigned int depth)
{
	if (depth)
		return 0;
	pr_err("perf auxsample %s: --depth must be at least 1: it is the number of branches shown per sample\n",
	       cmd);
	return -1;
}

static int cmd_auxsample_script(int argc, const char **argv, bool stat)
{
	struct auxsample_script_opts opts = {
		.input = "perf.data",
		.depth = AUXSAMPLE_DEFAULT_DEPTH,
		.stat = stat,
		.reuse = true,
		.window = AUXSAMPLE_DEFAULT_WINDOW,
	};
	const char * const script_usage[] = { "perf auxsample script [<options>]", NULL };
	const char * const stat_usage[] = { "perf auxsample stat [<options>]", NULL };
	const char * const *usage = stat ? stat_usage : script_usage;
	const struct option options[] = {
		OPT_STRING('i', "input", &opts.input, "file", "input file name"),
		OPT_UINTEGER(0, "depth", &opts.depth, "branches per sample (default 64)"),
		OPT_BOOLEAN(0, "json", &opts.json, "one JSON object per sample (script)"),
		OPT_BOOLEAN(0, "reuse", &opts.reuse,
			    "decode the overlapping snippets of a CPU once (default: on)"),
		OPT_CALLBACK(0, "window-size", &opts.window, "size",
			     "trace before a sample beside a full trace (default 64K)", parse_size),
		OPT_UINTEGER('j', "threads", &opts.threads,
			     "decoding threads (default: one per online CPU; 1: decode inline)"),
		OPT_BOOLEAN(0, "full-trace", &opts.full_trace,
			    "decode the trace buffers, not AUX samples (default without AUX samples)"),
		OPT_BOOLEAN(0, "autofdo", &opts.autofdo,
			    "full trace as AutoFDO text: ranges and taken branches per binary (script)"),
		OPT_CALLBACK(0, "symfs", NULL, "directory",
			     "look for the traced binaries relative to this directory",
			     symbol__config_symfs),
		OPT_STRING('k', "vmlinux", &symbol_conf.vmlinux_name, "file",
			   "vmlinux with the kernel's code and symbols, for kernel-traced samples"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END()
	};

	argc = parse_options(argc, argv, options, usage, 0);
	if (argc)
		usage_with_options(usage, options);
	if (check_window(opts.window) || check_depth(stat ? "stat" : "script", opts.depth))
		return 1;
	if (opts.autofdo && (stat || opts.json)) {
		pr_err("perf auxsample: --autofdo is a perf auxsample script output of its own, without --json\n");
		return 1;
	}
	if (opts.autofdo)
		opts.full_trace = true;
#ifdef HAVE_AUXSAMPLE_SUPPORT
	return auxsample_script__run(&opts) ? 1 : 0;
#else
	pr_err("perf auxsample %s needs perf built with libipt and libopencsd (perf check feature auxsample)\n",
	       stat ? "stat" : "script");
	return 1;
#endif
}

/*
 * perf auxsample inject: the input's events, with the samples that carry
 * AUX area data rewritten to carry the virtual LBR that perf report shows
 * for them as a branch stack (and, with -g, the call chain their snippet
 * shows) instead of the trace.  The decoding is perf report's
 * (util/auxsample-report.c); the rewriting and the header are perf
 * inject's way: perf_event__synthesize_sample() for each sample, and the
 * attrs changed only when the header is written, after the last input
 * sample is parsed.
 */
struct auxsample_inject {
	struct perf_tool	tool;
	struct perf_session	*session;
	struct perf_data	output;
	struct feat_copier	fc;
	const char		*input;
	union perf_event	*event;		/* the sample being rewritten */
	unsigned int		depth;
	unsigned int		threads;	/* decoding threads, 0: per CPU */
	bool			callchain;
	bool			force;
	/* no AUX samples: the samples beside a full trace, with their windows */
	bool			windows;
	/* the input is a pipe: attrs and features come as events */
	bool			pipe;
	u64			data_offset;
	u64			bytes_written;
	u64			samples;	/* AUX samples rewritten */
	u64			decoded;	/* ... with a branch in their stack */
	/* The input's feature sections, copied into the output. */
	struct perf_file_section secs[HEADER_FEAT_BITS];
	/* A pipe's: the feature events' data. */
	void			*feat_data[HEADER_FEAT_BITS];
	size_t			feat_size[HEADER_FEAT_BITS];
	/*
	 * --bolt <binary>, --autofdo: the virtual LBRs summed up into a
	 * profile, written as text instead of a perf.data.
	 */
	const char		*bolt;
	bool			autofdo;
	struct auxsample_profile *profile;
	FILE			*profile_out;
};

/* What the virtual LBR is: every kind of taken branch, with its type. */
#define AUXSAMPLE_INJECT_BRANCH_TYPE	(PERF_SAMPLE_BRANCH_ANY |		\
					 PERF_SAMPLE_BRANCH_TYPE_SAVE |		\
					 PERF_SAMPLE_BRANCH_HW_INDEX)

static bool auxsample_inject__has_aux(const struct evsel *evsel)
{
	return (evsel->core.attr.sample_type & PERF_SAMPLE_AUX) &&
	       evsel->core.attr.aux_sample_size;
}

/*
 * Whose samples get the virtual LBR: those with AUX area data, or, beside
 * a full trace, every sampled event but the trace's own.
 */
static bool auxsample_inject__rewrites(const struct auxsample_inject *inject,
				       struct evsel *evsel)
{
	if (!inject->windows)
		return auxsample_inject__has_aux(evsel);
	return !auxtrace__evsel_is_auxtrace(inject->session, evsel) &&
	       !evsel__is_dummy_event(evsel);
}

/* The sample_type of @evsel's samples in the output. */
static u64 auxsample_inject__sample_type(const struct auxsample_inject *inject,
					 struct evsel *evsel)
{
	u64 type = evsel->core.attr.sample_type;

	if (!auxsample_inject__rewrites(inject, evsel))
		return type;
	type &= ~(u64)PERF_SAMPLE_AUX;
	type |= PERF_SAMPLE_BRANCH_STACK;
	if (inject->callchain)
		type |= PERF_SAMPLE_CALLCHAIN;
	return type;
}

/* What the rewritten samples are, for the summaries. */
static const char *auxsample_inject__what(const struct auxsample_inject *inject)
{
	return inject->windows ? "samples beside a full trace" : "AUX samples";
}

static int auxsample_inject__write(struct auxsample_inject *inject, const void *buf,
				   size_t size)
{
	ssize_t n;

	/* A profile is written at the end, and no event of the input. */
	if (inject->profile)
		return 0;
	n = perf_data__write(&inject->output, (void *)buf, size);
	if (n < 0)
		return -errno;
	inject->bytes_written += n;
	return 0;
}

static int auxsample_inject__repipe(const struct perf_tool *tool, union perf_event *event,
				    struct perf_sample *sample __maybe_unused,
				    struct machine *machine __maybe_unused)
{
	struct auxsample_inject *inject = container_of(tool, struct auxsample_inject, tool);

	return auxsample_inject__write(inject, event, event->header.size);
}

static int auxsample_inject__read(const struct perf_tool *tool, union perf_event *event,
				  struct perf_sample *sample, struct evsel *evsel __maybe_unused,
				  struct machine *machine)
{
	return auxsample_inject__repipe(tool, event, sample, machine);
}

static int auxsample_inject__repipe_op2(struct perf_session *session, union perf_event *event)
{
	return auxsample_inject__repipe(session->tool, event, NULL, NULL);
}

static int auxsample_inject__repipe_attr(const struct perf_tool *tool, union perf_event *event,
					 struct evlist **pevlist __maybe_unused)
{
	return auxsample_inject__repipe(tool, event, NULL, NULL);
}

/*
 * A pipe's attr: for the session, and, as the output is a file, in its
 * header, not among its events.
 */
static int auxsample_inject__attr(const struct perf_tool *tool, union perf_event *event,
				  struct evlist **pevlist)
{
	struct auxsample_inject *inject = container_of(tool, struct auxsample_inject, tool);
	int err = perf_event__process_attr(tool, event, pevlist);
	struct evsel *evsel;

	if (err)
		return err;
	evsel = evlist__last(*pevlist);
	if (auxsample_inject__has_aux(evsel) &&
	    (evsel->core.attr.sample_type & PERF_SAMPLE_BRANCH_STACK)) {
		pr_err("perf auxsample inject: the %s samples of %s have branch stacks already\n",
		       evsel__name(evsel), inject->input);
		return -EINVAL;
	}
	return 0;
}

static int auxsample_inject__event_update(const struct perf_tool *tool, union perf_event *event,
					  struct evlist **pevlist)
{
	return perf_event__process_event_update(tool, event, pevlist) ?:
	       auxsample_inject__repipe(tool, event, NULL, NULL);
}

/* A pipe's header feature: for the session, and kept for the output's header. */
static int auxsample_inject__feature(struct perf_session *session, union perf_event *event)
{
	struct auxsample_inject *inject = container_of(session->tool, struct auxsample_inject,
						       tool);
	u64 feat = event->feat.feat_id;
	size_t size = event->header.size - sizeof(event->feat);

	/* The last one only says that they have all come. */
	if (feat >= HEADER_LAST_FEATURE)
		return 0;
	if (perf_event__process_feature(session, event))
		return -EINVAL;
	free(inject->feat_data[feat]);
	inject->feat_data[feat] = memdup(event->feat.data, size);
	if (!inject->feat_data[feat])
		return -ENOMEM;
	inject->feat_size[feat] = size;
	perf_header__set_feat(&session->header, feat);
	return 0;
}

/* Read, so that the events after it are; the output has no tracepoint formats. */
static int auxsample_inject__tracing_data(struct perf_session *session, union perf_event *event)
{
	pr_warning("perf auxsample inject: the tracepoint formats of a pipe are not written to the output\n");
	return perf_event__process_tracing_data(session, event);
}

static int auxsample_inject__drop(const struct perf_tool *tool __maybe_unused,
				  union perf_event *event __maybe_unused,
				  struct perf_sample *sample __maybe_unused,
				  struct machine *machine __maybe_unused)
{
	return 0;
}

/*
 * Sideband that the decoder needs (threads, maps) and the output keeps:
 * processed as perf report does, then written.
 */
#define AUXSAMPLE_INJECT_PROCESS(name)						\
static int auxsample_inject__##name(const struct perf_tool *tool,		\
				    union perf_event *event,			\
				    struct perf_sample *sample,			\
				    struct machine *machine)			\
{										\
	int err = perf_event__process_##name(tool, event, sample, machine);	\
										\
	return err ?: auxsample_inject__repipe(tool, event, sample, machine);	\
}

AUXSAMPLE_INJECT_PROCESS(mmap)
AUXSAMPLE_INJECT_PROCESS(mmap2)
AUXSAMPLE_INJECT_PROCESS(comm)
AUXSAMPLE_INJECT_PROCESS(namespaces)
AUXSAMPLE_INJECT_PROCESS(cgroup)
AUXSAMPLE_INJECT_PROCESS(fork)
AUXSAMPLE_INJECT_PROCESS(exit)
AUXSAMPLE_INJECT_PROCESS(lost)
AUXSAMPLE_INJECT_PROCESS(lost_samples)
AUXSAMPLE_INJECT_PROCESS(switch)
AUXSAMPLE_INJECT_PROCESS(ksymbol)
AUXSAMPLE_INJECT_PROCESS(bpf)
AUXSAMPLE_INJECT_PROCESS(text_poke)

static int auxsample_inject__id_index(struct perf_session *session, union perf_event *event)
{
	int err = perf_event__process_id_index(session, event);

	return err ?: auxsample_inject__repipe_op2(session, event);
}

/* perf inject -b puts build-ids among the events: the decoder needs them too. */
static int auxsample_inject__build_id(struct perf_session *session, union perf_event *event)
{
	int err = perf_event__process_build_id(session, event);

	return err ?: auxsample_inject__repipe_op2(session, event);
}

/*
 * The events up to the round's end have been written, in time order, by
 * the flush: the output's rounds are the input's.
 */
static int auxsample_inject__finished_round(const struct perf_tool *tool,
					    union perf_event *event,
					    struct ordered_events *oe)
{
	struct auxsample_inject *inject = container_of(tool, struct auxsample_inject, tool);
	int err = perf_event__process_finished_round(tool, event, oe);

	/* And the samples still decoding in threads. */
	if (!err)
		err = auxsample_report__flush(inject->session);
	return err ?: auxsample_inject__repipe(tool, event, NULL, NULL);
}

/* --bolt, --autofdo: the sample's virtual LBR counts in the profile. */
static int auxsample_inject__profile_sample(struct auxsample_inject *inject,
					    struct perf_sample *sample, struct machine *machine)
{
	struct thread *thread;
	int err;

	if (!sample->branch_stack || !sample->branch_stack->nr)
		return 0;
	thread = machine__findnew_thread(machine, sample->pid, sample->tid);
	if (!thread)
		return -ENOMEM;
	err = auxsample_profile__add(inject->profile, thread, sample->branch_stack);
	thread__put(thread);
	return err;
}

static int auxsample_inject__sample(const struct perf_tool *tool, union perf_event *event,
				    struct perf_sample *sample, struct evsel *evsel,
				    struct machine *machine)
{
	struct auxsample_inject *inject = container_of(tool, struct auxsample_inject, tool);
	u64 type = auxsample_inject__sample_type(inject, evsel);
	u64 read_format = evsel->core.attr.read_format;
	struct branch_stack no_branches = { .nr = 0, .hw_idx = -1ULL };
	u64 ip_only[3];		/* a struct ip_callchain: the sample's IP */
	struct perf_sample out;
	size_t size;

	if (!auxsample_inject__rewrites(inject, evsel))
		return auxsample_inject__write(inject, event, event->header.size);

	/* perf report's decoder has set the branch stack, unless it failed. */
	out = *sample;
	inject->samples++;
	if (sample->branch_stack && sample->branch_stack->nr)
		inject->decoded++;
	else
		out.branch_stack = &no_branches;
	if (inject->profile)
		return auxsample_inject__profile_sample(inject, sample, machine);
	if ((type & PERF_SAMPLE_CALLCHAIN) && !out.callchain) {
		ip_only[0] = 2;
		ip_only[1] = sample->cpumode == PERF_RECORD_MISC_KERNEL ?
			     PERF_CONTEXT_KERNEL : PERF_CONTEXT_USER;
		ip_only[2] = sample->ip;
		out.callchain = (struct ip_callchain *)ip_only;
	}
	out.aux_sample.size = 0;
	out.aux_sample.data = NULL;

	size = perf_event__sample_event_size(&out, type, read_format);
	if (size >= PERF_SAMPLE_MAX_SIZE) {
		pr_err("perf auxsample inject: a sample with %" PRIu64 " branches does not fit in a perf event: use a smaller --depth\n",
		       (u64)out.branch_stack->nr);
		return -E2BIG;
	}
	inject->event->header = event->header;
	inject->event->header.size = size;
	perf_event__synthesize_sample(inject->event, type, read_format, &out);
	return auxsample_inject__write(inject, inject->event, size);
}

static void auxsample_inject__init_tool(struct auxsample_inject *inject)
{
	struct perf_tool *tool = &inject->tool;

	/* In time order, so that the decoder sees each sample's maps. */
	perf_tool__init(tool, /*ordered_events=*/true);
	tool->sample		= auxsample_inject__sample;
	tool->read		= auxsample_inject__read;
	tool->mmap		= auxsample_inject__mmap;
	tool->mmap2		= auxsample_inject__mmap2;
	tool->comm		= auxsample_inject__comm;
	tool->namespaces	= auxsample_inject__namespaces;
	tool->cgroup		= auxsample_inject__cgroup;
	tool->fork		= auxsample_inject__fork;
	tool->exit		= auxsample_inject__exit;
	tool->lost		= auxsample_inject__lost;
	tool->lost_samples	= auxsample_inject__lost_samples;
	tool->context_switch	= auxsample_inject__switch;
	tool->ksymbol		= auxsample_inject__ksymbol;
	tool->bpf		= auxsample_inject__bpf;
	tool->text_poke		= auxsample_inject__text_poke;
	tool->throttle		= auxsample_inject__repipe;
	tool->unthrottle	= auxsample_inject__repipe;
	tool->event_update	= auxsample_inject__repipe_attr;
	tool->finished_round	= auxsample_inject__finished_round;
	tool->id_index		= auxsample_inject__id_index;
	tool->build_id		= auxsample_inject__build_id;
	tool->time_conv		= auxsample_inject__repipe_op2;
	tool->thread_map	= auxsample_inject__repipe_op2;
	tool->cpu_map		= auxsample_inject__repipe_op2;
	tool->stat_config	= auxsample_inject__repipe_op2;
	tool->stat		= auxsample_inject__repipe_op2;
	tool->stat_round	= auxsample_inject__repipe_op2;
	tool->finished_init	= auxsample_inject__repipe_op2;
	/* The AUX area's events go with its data; auxtrace_info is the decoder's. */
	tool->aux		= auxsample_inject__drop;
	tool->itrace_start	= auxsample_inject__drop;
	tool->aux_output_hw_id	= auxsample_inject__drop;
	/* A group's sample is one event, written once. */
	tool->dont_split_sample_group = true;
	if (inject->pipe) {
		tool->attr		= auxsample_inject__attr;
		tool->event_update	= auxsample_inject__event_update;
		tool->feature		= auxsample_inject__feature;
		tool->tracing_data	= auxsample_inject__tracing_data;
	}
}

static int auxsample_inject__check_input(struct auxsample_inject *inject)
{
	struct perf_session *session = inject->session;
	struct perf_header *header = &session->header;
	struct evsel *evsel;
	bool aux = false;
	struct stat st;

	/* A pipe's attrs come as events: checked as they come. */
	if (inject->pipe)
		return 0;
	if (fstat(perf_data__fd(session->data), &st))
		return -errno;
	if (header->data_offset + header->data_size > (u64)st.st_size) {
		pr_err("perf auxsample inject: %s is truncated: it has %" PRIu64 " bytes, its header promises %" PRIu64 "\n",
		       inject->input, (u64)st.st_size, header->data_offset + header->data_size);
		return -EINVAL;
	}
	evlist__for_each_entry(session->evlist, evsel) {
		if (!auxsample_inject__has_aux(evsel))
			continue;
		if (evsel->core.attr.sample_type & PERF_SAMPLE_BRANCH_STACK) {
			pr_err("perf auxsample inject: the %s samples of %s have branch stacks already\n",
			       evsel__name(evsel), inject->input);
			return -EINVAL;
		}
		aux = true;
	}
	/* A full trace: its samples may get the windows before them. */
	if (!aux && perf_header__has_feat(header, HEADER_AUXTRACE)) {
		inject->windows = true;
		return 0;
	}
	if (!aux) {
		pr_err("perf auxsample inject: %s has no AUX area samples: record with perf record -A (see perf-record(1))\n",
		       inject->input);
		return -ENODATA;
	}
	return 0;
}

/* Beside a full trace: the events to rewrite are known once the decoder is. */
static int auxsample_inject__check_windows(struct auxsample_inject *inject)
{
	struct evsel *evsel;

	if (!inject->session->auxtrace) {
		pr_err("perf auxsample inject: %s has no AUX area samples, and no samples beside its trace that get the window before them: record with perf record -A (see perf-record(1))\n",
		       inject->input);
		return -ENODATA;
	}
	evlist__for_each_entry(inject->session->evlist, evsel) {
		if (auxsample_inject__rewrites(inject, evsel) &&
		    (evsel->core.attr.sample_type & PERF_SAMPLE_BRANCH_STACK)) {
			pr_err("perf auxsample inject: the %s samples of %s have branch stacks already\n",
			       evsel__name(evsel), inject->input);
			return -EINVAL;
		}
	}
	return 0;
}

static int auxsample_inject__save_section(struct perf_file_section *section,
					  struct perf_header *ph __maybe_unused,
					  int feat, int fd __maybe_unused, void *data)
{
	struct auxsample_inject *inject = data;

	inject->secs[feat] = *section;
	return 0;
}

/* The features that describe the events are written anew. */
static bool auxsample_inject__feat_rewritten(int feat)
{
	switch (feat) {
	case HEADER_CMDLINE:
	case HEADER_EVENT_DESC:
	case HEADER_BRANCH_STACK:
	case HEADER_GROUP_DESC:
		return true;
	default:
		return false;
	}
}

/* The others are the input's, describing the machine it was recorded on. */
static int auxsample_inject__copy_feat(struct feat_copier *fc, int feat, struct feat_writer *fw)
{
	struct auxsample_inject *inject = container_of(fc, struct auxsample_inject, fc);
	const struct perf_file_section *sec = &inject->secs[feat];
	void *buf;
	int err;

	if (auxsample_inject__feat_rewritten(feat))
		return 0;
	if (inject->pipe) {
		if (!inject->feat_data[feat])
			return 0;
		err = fw->write(fw, inject->feat_data[feat], inject->feat_size[feat]);
		return err < 0 ? err : 1;
	}
	if (!sec->size)
		return 0;
	buf = malloc(sec->size);
	if (!buf)
		return -ENOMEM;
	if (preadn(perf_data__fd(inject->session->data), buf, sec->size, sec->offset) !=
	    (ssize_t)sec->size) {
		err = -EIO;
		goto out_free;
	}
	err = fw->write(fw, buf, sec->size);
out_free:
	free(buf);
	return err < 0 ? err : 1;
}

/* The attrs of the rewritten samples, now that no input sample is left to parse. */
static int auxsample_inject__write_header(struct auxsample_inject *inject)
{
	struct perf_session *session = inject->session;
	struct perf_header *header = &session->header;
	struct evsel *evsel;

	evlist__for_each_entry(session->evlist, evsel) {
		struct perf_event_attr *attr = &evsel->core.attr;

		if (!auxsample_inject__rewrites(inject, evsel))
			continue;
		attr->sample_type = auxsample_inject__sample_type(inject, evsel);
		/* perf_event__synthesize_sample() writes hw_idx. */
		attr->branch_sample_type |= AUXSAMPLE_INJECT_BRANCH_TYPE;
		attr->aux_sample_size = 0;
	}
	perf_header__set_feat(header, HEADER_BRANCH_STACK);
	perf_header__clear_feat(header, HEADER_AUXTRACE);
	/* One file, events uncompressed. */
	perf_header__clear_feat(header, HEADER_DIR_FORMAT);
	perf_header__clear_feat(header, HEADER_COMPRESSED);
	header->data_offset = inject->data_offset;
	header->data_size = inject->bytes_written;
	/* For the stock tools, which run whichever perf is installed. */
	header->compact_attrs = true;
	inject->fc.copy = auxsample_inject__copy_feat;
	/* A pipe's attrs were not known when the data began: after it, as perf inject. */
	return perf_session__inject_header(session, session->evlist,
					   perf_data__fd(&inject->output), &inject->fc,
					   /*write_attrs_after_data=*/inject->pipe);
}

static int auxsample_inject__open_output(struct auxsample_inject *inject)
{
	const char *path = inject->output.path;
	char sbuf[STRERR_BUFSIZE];
	struct stat in, out;

	if (!strcmp(path, "-")) {
		pr_err("perf auxsample inject: cannot write a pipe: give the output file with -o\n");
		return -EINVAL;
	}
	if (!stat(path, &out)) {
		if (!fstat(perf_data__fd(inject->session->data), &in) &&
		    in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
			pr_err("perf auxsample inject: %s is the input: write to another file\n",
			       path);
			return -EINVAL;
		}
		if (!inject->force) {
			pr_err("perf auxsample inject: %s exists: use -f to overwrite it\n", path);
			return -EEXIST;
		}
		/* Overwritten, not kept as perf.data.old. */
		if (unlink(path)) {
			pr_err("perf auxsample inject: cannot remove %s: %s\n", path,
			       str_error_r(errno, sbuf, sizeof(sbuf)));
			return -errno;
		}
	}
	if (inject->profile) {
		inject->profile_out = fopen(path, "w");
		if (!inject->profile_out) {
			pr_err("perf auxsample inject: cannot create %s: %s\n", path,
			       str_error_r(errno, sbuf, sizeof(sbuf)));
			return -errno;
		}
		return 0;
	}
	if (perf_data__open(&inject->output)) {
		pr_err("perf auxsample inject: cannot create %s: %s\n", path,
		       str_error_r(errno, sbuf, sizeof(sbuf)));
		return -errno;
	}
	inject->data_offset = perf_session__data_offset(inject->session->evlist);
	if (lseek(perf_data__fd(&inject->output), inject->data_offset, SEEK_SET) < 0) {
		int err = -errno;

		perf_data__close(&inject->output);
		unlink(path);
		return err;
	}
	return 0;
}

/* perf report's virtual LBR, attached to each AUX sample before the tool sees it. */
static int auxsample_inject__setup_decoder(struct auxsample_inject *inject)
{
	struct itrace_synth_opts itrace = { .set = false };
	int err;

	if (inject->pipe)
		err = auxsample_report__setup_pipe(inject->session, &inject->tool, &itrace,
						   inject->depth);
	else
		err = auxsample_report__setup(inject->session, &inject->tool, &itrace,
					      inject->depth);
	if (err)
		return err;
	auxsample_report__set_threads(inject->session, inject->threads);
	if (inject->windows)
		return auxsample_inject__check_windows(inject);
	if (!inject->session->auxtrace) {
		pr_err("perf auxsample inject needs perf built with libipt and libopencsd (perf check feature auxsample)\n");
		return -EOPNOTSUPP;
	}
	return 0;
}

static int auxsample_inject__write_profile(struct auxsample_inject *inject)
{
	int err;

	if (inject->autofdo)
		return auxsample_profile__write_autofdo(inject->profile, inject->profile_out);
	err = auxsample_profile__write_bolt(inject->profile, inject->profile_out, inject->bolt);
	if (err == -ENOENT)
		pr_err("perf auxsample inject: no branch of %s has an end in %s: name the binary as perf report's Shared Object column does, or by its path\n",
		       inject->input, inject->bolt);
	return err;
}

static int auxsample_inject__process(struct auxsample_inject *inject)
{
	int err = perf_session__process_events(inject->session);

	if (err)
		return err;
	if (inject->pipe && !inject->samples) {
		pr_err("perf auxsample inject: %s has no AUX area samples: record with perf record -A (see perf-record(1))\n",
		       inject->input);
		return -ENODATA;
	}
	if (!inject->decoded) {
		pr_err("perf auxsample inject: none of the %" PRIu64 " %s of %s decoded into branches\n",
		       inject->samples, auxsample_inject__what(inject), inject->input);
		return -ENODATA;
	}
	if (inject->profile)
		return auxsample_inject__write_profile(inject);
	return auxsample_inject__write_header(inject);
}

static int auxsample_inject__run(struct auxsample_inject *inject)
{
	struct perf_data data = {
		.path	= inject->input,
		.mode	= PERF_DATA_MODE_READ,
		.force	= inject->force,
	};
	struct perf_session *session;
	int err;

	inject->pipe = !strcmp(inject->input, "-");
	auxsample_inject__init_tool(inject);
	session = perf_session__new(&data, &inject->tool);
	if (IS_ERR(session))
		return PTR_ERR(session);
	inject->session = session;

	err = auxsample_inject__check_input(inject);
	if (err)
		goto out_delete;
	err = symbol__init(&session->header.env);
	if (err)
		goto out_delete;
	err = auxsample_inject__setup_decoder(inject);
	if (err)
		goto out_delete;
	/* Where the input's features are, before the feature bits change. */
	if (!inject->pipe)
		err = perf_header__process_sections(&session->header, perf_data__fd(&data),
						    inject, auxsample_inject__save_section);
	if (err)
		goto out_delete;
	inject->event = zalloc(PERF_SAMPLE_MAX_SIZE);
	if (!inject->event) {
		err = -ENOMEM;
		goto out_delete;
	}
	err = auxsample_inject__open_output(inject);
	if (err)
		goto out_free_event;

	err = auxsample_inject__process(inject);
	if (inject->profile_out) {
		if (fclose(inject->profile_out) && !err)
			err = -errno;
		inject->profile_out = NULL;
	} else {
		perf_data__close(&inject->output);
	}
	if (err) {
		/* No partial output left behind. */
		unlink(inject->output.path);
		goto out_free_event;
	}
	if (inject->profile)
		fprintf(stderr, "[ perf auxsample inject: the virtual LBRs of %" PRIu64 " samples summed up in %s, %" PRIu64 " failed (empty branch stack) ]\n",
			inject->decoded, inject->output.path, inject->samples - inject->decoded);
	else
		fprintf(stderr, "[ perf auxsample inject: %" PRIu64 " samples written to %s, %" PRIu64 " decoded, %" PRIu64 " failed (empty branch stack) ]\n",
			inject->samples, inject->output.path, inject->decoded,
			inject->samples - inject->decoded);
out_free_event:
	zfree(&inject->event);
out_delete:
	perf_session__delete(session);
	for (int feat = 0; feat < HEADER_FEAT_BITS; feat++)
		zfree(&inject->feat_data[feat]);
	return err;
}

static int cmd_auxsample_inject(int argc, const char **argv)
{
	struct auxsample_inject inject = {
		.input	= "perf.data",
		.depth	= AUXSAMPLE_REPORT_DEPTH,
		.output	= {
			.mode	= PERF_DATA_MODE_WRITE,
		},
	};
	const char * const usage[] = {
		"perf auxsample inject [<options>] -o <file>",
		NULL
	};
	const struct option options[] = {
		OPT_STRING('i', "input", &inject.input, "file", "input file name"),
		OPT_STRING('o', "output", &inject.output.path, "file", "output file name"),
		OPT_UINTEGER(0, "depth", &inject.depth,
			     "branches of the virtual LBR per sample (default 64)"),
		OPT_BOOLEAN('g', "callchain", &inject.callchain,
			    "add the call chain each snippet shows to samples recorded without one"),
		OPT_BOOLEAN('f', "force", &inject.force,
			    "overwrite the output file; don't complain about the input's owner"),
		OPT_UINTEGER('j', "threads", &inject.threads,
			     "decoding threads (default: one per online CPU; 1: decode inline)"),
		OPT_STRING(0, "bolt", &inject.bolt, "binary",
			   "write BOLT's pre-aggregated profile of the binary (perf2bolt --pa)"),
		OPT_BOOLEAN(0, "autofdo", &inject.autofdo,
			    "write AutoFDO text (simpleperf's) of every binary"),
		OPT_CALLBACK(0, "symfs", NULL, "directory",
			     "look for the traced binaries relative to this directory",
			     symbol__config_symfs),
		OPT_STRING('k', "vmlinux", &symbol_conf.vmlinux_name, "file",
			   "vmlinux with the kernel's code and symbols, for kernel-traced samples"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END()
	};
	int err;

	argc = parse_options(argc, argv, options, usage, 0);
	if (argc)
		usage_with_options(usage, options);
	if (inject.bolt && inject.autofdo) {
		pr_err("perf auxsample inject: --bolt and --autofdo are two outputs: give one\n");
		return 1;
	}
	if ((inject.bolt || inject.autofdo) && inject.callchain) {
		pr_err("perf auxsample inject: -g adds call chains to a perf.data: not with --bolt or --autofdo\n");
		return 1;
	}
	if (!inject.output.path) {
		pr_err("perf auxsample inject: no output file: give it with -o\n");
		usage_with_options(usage, options);
	}
	if (check_depth("inject", inject.depth))
		return 1;
	if (inject.bolt || inject.autofdo) {
		inject.profile = auxsample_profile__new();
		if (!inject.profile)
			return 1;
	}
	err = auxsample_inject__run(&inject);
	auxsample_profile__delete(inject.profile);
	return err ? 1 : 0;
}

static int cmd_auxsample_report(int argc, const char **argv)
{
	struct auxsample_hot_opts opts = {
		.input = "perf.data",
		.depth = AUXSAMPLE_DEFAULT_DEPTH,
		.max_entries = 20,
		.reuse = true,
		.window = AUXSAMPLE_DEFAULT_WINDOW,
	};
	const char * const usage[] = { "perf auxsample report [<options>]", NULL };
	const struct option options[] = {
		OPT_STRING('i', "input", &opts.input, "file", "input file name"),
		OPT_UINTEGER(0, "depth", &opts.depth, "branches per sample (default 64)"),
		OPT_STRING(0, "show", &opts.show, "sections",
			   "sections to show: edges,loops,blocks,calls (default: all)"),
		OPT_STRING('c', "comms", &opts.comms, "comm[,comm...]",
			   "only samples of these commands"),
		OPT_STRING('d', "dsos", &opts.dsos, "dso[,dso...]",
			   "only what starts or ends in these dsos"),
		OPT_STRING('S', "symbols", &opts.symbols, "symbol[,symbol...]",
			   "only what starts or ends in these functions"),
		OPT_STRING(0, "percent-limit", &opts.percent_limit, "percent",
			   "hide entries under that percent of their section"),
		OPT_UINTEGER('n', "max-entries", &opts.max_entries,
			     "entries per section (default 20, 0: all)"),
		OPT_BOOLEAN(0, "json", &opts.json, "one JSON object with all sections"),
		OPT_BOOLEAN(0, "reuse", &opts.reuse,
			    "decode the overlapping snippets of a CPU once (default: on)"),
		OPT_CALLBACK(0, "window-size", &opts.window, "size",
			     "trace before a sample beside a full trace (default 64K)", parse_size),
		OPT_UINTEGER('j', "threads", &opts.threads,
			     "decoding threads (default: one per online CPU; 1: decode inline)"),
		OPT_CALLBACK(0, "symfs", NULL, "directory",
			     "look for the traced binaries relative to this directory",
			     symbol__config_symfs),
		OPT_STRING('k', "vmlinux", &symbol_conf.vmlinux_name, "file",
			   "vmlinux with the kernel's code and symbols, for kernel-traced samples"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END()
	};

	argc = parse_options(argc, argv, options, usage, 0);
	if (argc)
		usage_with_options(usage, options);
	if (check_window(opts.window) || check_depth("report", opts.depth))
		return 1;
#ifdef HAVE_AUXSAMPLE_SUPPORT
	return auxsample_hot__run(&opts) ? 1 : 0;
#else
	pr_err("perf auxsample report needs perf built with libipt and libopencsd (perf check feature auxsample)\n");
	return 1;
#endif
}


/* A count of instructions: digits only, so that -1 is no huge count. */
static int parse_insns(const struct option *opt, const char *str, int unset)
{
	u64 *val = opt->value;
	char *end;

	if (unset) {
		*val = 0;
		return 0;
	}
	errno = 0;
	if (isdigit(*str)) {
		*val = strtoull(str, &end, 10);
		if (!*end && !errno)
			return 0;
	}
	pr_err("--%s expects a number of instructions, not '%s'\n", opt->long_name, str);
	return -1;
}

/* Seconds, or a number with s, m, h or d, as perf record --switch-output=<time>. */
static int parse_duration(const struct option *opt, const char *str, int unset)
{
	static struct parse_tag tags[] = {
		{ .tag = 's', .mult = 1 }, { .tag = 'm', .mult = 60 },
		{ .tag = 'h', .mult = 60 * 60 }, { .tag = 'd', .mult = 60 * 60 * 24 },
		{ .tag = 0 },
	};
	unsigned long *val = opt->value;
	char *end;

	if (unset) {
		*val = 0;
		return 0;
	}
	*val = isdigit(*str) ? strtoul(str, &end, 10) : (unsigned long)-1;
	if (*val != (unsigned long)-1 && *end)
		*val = parse_tag_value(str, tags);
	if (*val == (unsigned long)-1 || !*val) {
		pr_err("--duration expects a time of at least 1s (30, 30s, 5m, 2h), not '%s'\n",
		       str);
		return -1;
	}
	return 0;
}

static int cmd_auxsample_simulate(int argc, const char **argv)
{
	u64 aux_size = SIM_DEFAULT_AUX_SAMPLE_SIZE, psb_period = SIM_DEFAULT_PSB_PERIOD;
	bool progress = false, progress_set = false;
	int ret __maybe_unused;
	/* perf record -Aintel_pt's intel_pt config: tsc, mtc, mtc_period=3. */
	struct sim_opts opts = {
		.output = "perf.data",
		.period = SIM_DEFAULT_PERIOD,
		.tsc = true,
		.mtc = true,
		.mtc_period = SIM_DEFAULT_MTC_PERIOD,
		.sample_cpu = true,
	};
	bool mtc_set = false;
	const char * const usage[] = {
		"perf auxsample simulate [<options>] -- <command> [<args>]",
		NULL
	};
	const struct option options[] = {
		OPT_STRING('o', "output", &opts.output, "file", "output file name"),
		OPT_CALLBACK('c', "count", &opts.period, "n", "user instructions between samples",
			     parse_insns),
		OPT_CALLBACK(0, "aux-sample-size", &aux_size, "size",
			     "bytes of trace per sample (default 4K)", parse_size),
		OPT_CALLBACK(0, "psb-period", &psb_period, "size",
			     "bytes between PSB packets (default 2K, as sample mode)", parse_size),
		OPT_BOOLEAN(0, "noretcomp", &opts.noretcomp, "no return compression"),
		OPT_BOOLEAN_SET(0, "mtc", &opts.mtc, &mtc_set,
				"MTC timing packets and TMA (default; --no-mtc: TSC only)"),
		OPT_UINTEGER(0, "mtc-period", &opts.mtc_period,
			     "an MTC every 2^n crystal clock ticks (default 3)"),
		OPT_BOOLEAN(0, "cyc", &opts.cyc, "CYC cycle-accurate packets"),
		OPT_BOOLEAN(0, "tsc", &opts.tsc,
			    "TSC packets (--no-tsc: timeless, each sample decoded on its own)"),
		OPT_BOOLEAN(0, "full-trace", &opts.full_trace,
			    "full trace: samples without AUX data, the whole trace in AUXTRACE buffers"),
		OPT_BOOLEAN(0, "kernel", &opts.kernel,
			    "trace the simulated kernel too, as perf record does without :u"),
		OPT_BOOLEAN(0, "tracepoint", &opts.tracepoint,
			    "sched:sched_switch samples, the kernel's tracepoint hits (implies --kernel)"),
		OPT_BOOLEAN(0, "kcore", &opts.kcore,
			    "the kernel's kcore in <output>/kcore_dir, as perf record --kcore (implies --kernel)"),
		OPT_BOOLEAN(0, "sample-cpu", &opts.sample_cpu,
			    "the CPU in samples (--no-sample-cpu: perf record without -a, -C)"),
		OPT_CALLBACK(0, "max-instructions", &opts.max_insns, "n",
			     "stop after that many user instructions", parse_insns),
		OPT_CALLBACK(0, "duration", &opts.duration, "time",
			     "stop after that long (seconds, or with s, m, h, d)", parse_duration),
		OPT_BOOLEAN_SET(0, "progress", &progress, &progress_set,
				"show progress (default: on a terminal)"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END()
	};

	argc = parse_options(argc, argv, options, usage, PARSE_OPT_STOP_AT_NON_OPTION);
	if (!argc)
		usage_with_options_msg(usage, options,
				       "no command: name the program to simulate after --");
	if (!opts.period)
		usage_with_options_msg(usage, options,
				       "-c must be at least 1: a sample every <n> user instructions");
	if (!aux_size || aux_size > SIM_MAX_AUX_SAMPLE_SIZE)
		usage_with_options_msg(usage, options,
				       "--aux-sample-size must be 1 to %d bytes, as perf record allows",
				       SIM_MAX_AUX_SAMPLE_SIZE);
	if (psb_period < 256)
		usage_with_options_msg(usage, options, "--psb-period must be at least 256 bytes");
	if (opts.tracepoint || opts.kcore)
		opts.kernel = true;
	/* As intel_pt/tsc=0/ would, --no-tsc leaves the MTCs out unless asked. */
	if (!opts.tsc && !mtc_set)
		opts.mtc = false;
	if (opts.mtc_period > 15 || !(SIM_MTC_PERIODS & (1U << opts.mtc_period)))
		usage_with_options_msg(usage, options,
				       "Invalid --mtc-period %u: the simulated CPU's valid values are 0,3,6,9",
				       opts.mtc_period);
	if (opts.mtc && !opts.tsc)
		usage_with_options_msg(usage, options,
				       "--mtc needs TSC packets (drop --no-tsc): MTC counts from the TSC in PSB+");
	if (opts.full_trace && !opts.tsc)
		usage_with_options_msg(usage, options,
				       "--full-trace needs TSC packets (drop --no-tsc): samples are placed in the trace by time");
	if (!strcmp(opts.output, "-"))
		usage_with_options_msg(usage, options,
				       "-o - : the simulator seeks in its output, which a pipe cannot do; write a file, then 'perf inject -i <file> -o -'");
	opts.aux_sample_size = aux_size;
	opts.psb_period = psb_period;
	opts.progress = !progress_set ? SIM_PROGRESS_AUTO : progress ? SIM_PROGRESS_ON :
		SIM_PROGRESS_OFF;
#ifdef HAVE_AUXSAMPLE_SIM
	ret = auxsample_sim__run(&opts, argc, argv);
	if (ret > 0) {
		/* Stopped by a signal: die of it once the files are whole, as perf record does. */
		fflush(NULL);
		signal(ret, SIG_DFL);
		raise(ret);
	}
	return ret ? -1 : 0;
#else
	pr_err("perf auxsample simulate needs x86-64 and perf built with libipt and libopencsd (perf check feature auxsample)\n");
	return -1;
#endif
}

/*
 * Decoding a large file takes a while: say how far it got on a terminal,
 * on stderr, as perf's TUI does for perf report.  perf session's reader
 * drives it ("Processing events...", by file offset).
 */
static int auxsample_progress__percent = -1;

static void auxsample_progress__update(struct ui_progress *p)
{
	int percent = p->total ? (int)(p->curr * 100 / p->total) : 0;

	if (percent == auxsample_progress__percent)
		return;
	auxsample_progress__percent = percent;
	fprintf(stderr, "\r[ perf auxsample: decoding, %3d%% of the file read ]", percent);
}

static void auxsample_progress__finish(void)
{
	if (auxsample_progress__percent >= 0)
		fprintf(stderr, "\r\033[K");
	auxsample_progress__percent = -1;
}

static struct ui_progress_ops auxsample_progress__ops = {
	.update	= auxsample_progress__update,
	.finish	= auxsample_progress__finish,
};

static void auxsample_progress__setup(bool output_to_stdout)
{
	if (quiet || verbose > 0 || !isatty(STDERR_FILENO) ||
	    (output_to_stdout && isatty(STDOUT_FILENO)))
		return;
	ui_progress__ops = &auxsample_progress__ops;
}

int cmd_auxsample(int argc, const char **argv)
{
	static const char * const subcommands[] = {
		"inject", "report", "script", "simulate", "stat", NULL
	};
	const struct option options[] = {
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END()
	};

	argc = parse_options_subcommand(argc, argv, options, subcommands,
					(const char **)auxsample_usage, PARSE_OPT_STOP_AT_NON_OPTION);
	if (!argc)
		usage_with_options(auxsample_usage, options);
	if (!strcmp(argv[0], "simulate"))
		return cmd_auxsample_simulate(argc, argv);
	auxsample_progress__setup(!strcmp(argv[0], "script"));
	if (!strcmp(argv[0], "script"))
		return cmd_auxsample_script(argc, argv, false);
	if (!strcmp(argv[0], "stat"))
		return cmd_auxsample_script(argc, argv, true);
	if (!strcmp(argv[0], "inject"))
		return cmd_auxsample_inject(argc, argv);
	if (!strcmp(argv[0], "report"))
		return cmd_auxsample_report(argc, argv);
	pr_err("unknown command: perf auxsample %s\n", argv[0]);
	usage_with_options(auxsample_usage, options);
	return -1;
}
