// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample inject's engine: the input's events written again, each
 * AUX sample with the virtual LBR that perf report's decoder
 * (auxsample-report.c) attached to it as its branch stack, and the header
 * rewritten for the samples' new sample_type; or, with --bolt/--autofdo,
 * the virtual LBRs summed up in a profile.
 */
#include <errno.h>
#include <inttypes.h>
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

#include "auxsample-inject.h"
#include "auxsample-profile.h"
#include "auxsample-report.h"
#include "auxtrace.h"
#include "branch.h"
#include "debug.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "header.h"
#include "sample.h"
#include "session.h"
#include "symbol.h"
#include "synthetic-events.h"
#include "thread.h"
#include "tool.h"

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

/*
 * Writing the input's events again: perf inject's repipe callbacks
 * (builtin-inject.c) are static and write through its struct perf_inject,
 * so these are their few lines for struct auxsample_inject.
 */
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
		pr_err("perf auxsample inject: a sample with %" PRIu64
		       " branches does not fit in a perf event: use a smaller --depth\n",
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
	/*
	 * Its aux, itrace_start and aux_output_hw_id handlers stay: they
	 * write nothing, as the AUX area's events go with its data.
	 * auxtrace_info is the decoder's.
	 */
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
		pr_err("perf auxsample inject: %s is truncated: it has %" PRIu64
		       " bytes, its header promises %" PRIu64 "\n",
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

/*
 * The features that describe the events are written anew.  perf inject's
 * keep_feat() does the opposite, keeping a list of features and writing
 * the others from what it saw; here the samples are the input's with
 * other branch data, so what else the input says (its build-ids, sample
 * times, ...) still holds.
 */
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

/*
 * The others are the input's, describing the machine it was recorded on.
 * A pipe's are the feature events kept as they came: perf inject writes
 * those with perf's feature writers, which describe the machine perf runs
 * on (hostname, osrelease, ...).
 */
static int auxsample_inject__copy_feat(struct feat_copier *fc, int feat, struct feat_writer *fw)
{
	struct auxsample_inject *inject = container_of(fc, struct auxsample_inject, fc);
	int err;

	if (auxsample_inject__feat_rewritten(feat))
		return 0;
	if (inject->pipe) {
		if (!inject->feat_data[feat])
			return 0;
		err = fw->write(fw, inject->feat_data[feat], inject->feat_size[feat]);
		return err < 0 ? err : 1;
	}
	/* An empty section is left to perf's writer of the feature. */
	if (!inject->secs[feat].size)
		return 0;
	err = perf_header__copy_section(perf_data__fd(inject->session->data),
					&inject->secs[feat], fw);
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
		pr_err("perf auxsample inject needs perf built with libipt or libopencsd (perf check feature auxsample)\n");
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
		pr_err("perf auxsample inject: none of the %" PRIu64
		       " %s of %s decoded into branches\n",
		       inject->samples, auxsample_inject__what(inject), inject->input);
		return -ENODATA;
	}
	if (inject->profile)
		return auxsample_inject__write_profile(inject);
	return auxsample_inject__write_header(inject);
}

/* What was written, on stderr, as perf inject's and perf record's summaries. */
static void auxsample_inject__summary(struct auxsample_inject *inject)
{
	if (inject->profile)
		fprintf(stderr, "[ perf auxsample inject: the virtual LBRs of %" PRIu64
			" samples summed up in %s, %" PRIu64 " failed (empty branch stack) ]\n",
			inject->decoded, inject->output.path, inject->samples - inject->decoded);
	else
		fprintf(stderr, "[ perf auxsample inject: %" PRIu64 " samples written to %s, %"
			PRIu64 " decoded, %" PRIu64 " failed (empty branch stack) ]\n",
			inject->samples, inject->output.path, inject->decoded,
			inject->samples - inject->decoded);
}

/* The output opened, written and closed; removed again if that failed. */
static int auxsample_inject__output(struct auxsample_inject *inject)
{
	int err;

	inject->event = zalloc(PERF_SAMPLE_MAX_SIZE);
	if (!inject->event)
		return -ENOMEM;
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
	auxsample_inject__summary(inject);
out_free_event:
	zfree(&inject->event);
	return err;
}

int auxsample_inject__run(struct auxsample_inject *inject)
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
		err = perf_header__save_sections(&session->header, perf_data__fd(&data),
						 inject->secs);
	if (!err)
		err = auxsample_inject__output(inject);
out_delete:
	perf_session__delete(session);
	for (int feat = 0; feat < HEADER_FEAT_BITS; feat++)
		zfree(&inject->feat_data[feat]);
	return err;
}
