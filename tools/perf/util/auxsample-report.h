/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_REPORT_H
#define __PERF_AUXSAMPLE_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/compiler.h>

struct evsel;
struct itrace_synth_opts;
struct perf_sample;
struct perf_session;
struct perf_tool;

/*
 * The virtual LBR for tools that read samples (perf report): when the
 * file's samples carry AUX area data and no --itrace was asked for, every
 * such sample gets the branch stack that libauxsample decodes from its
 * snippet, @depth branches deep, as real LBR data would be.  Returns 0 also
 * when it does not apply (depth 0, --itrace given, no AUX samples).
 *
 * A pipe's attrs come as events, after the setup: __setup_pipe() installs
 * the decoder for whatever AUX samples come (a pipe holds no index of a
 * full trace: no windows).
 *
 * A full trace (indexed: HEADER_AUXTRACE) with samples beside it and no
 * AUX samples is read twice: a first pass finds each sample's window of
 * Intel PT trace (auxsample-window.h), which then stands for its AUX data.
 */
#define AUXSAMPLE_REPORT_DEPTH	64
#define AUXSAMPLE_REPORT_WINDOW_BYTES	(64 * 1024)

/*
 * Samples decoded alone go to decoding threads, one per online CPU or
 * __set_threads() of them (1: none), and are delivered again, with their
 * virtual LBR, in their turn: before any other event.  __flush() delivers
 * them all, for tools that must write what came before a point (the end
 * of a round).
 */
/*
 * A sample that got no virtual LBR (no trace, no sync point, no code ...)
 * has no branch stack, where perf report in branch mode wants one: it
 * still counts, as one entry, as one branch does, with N/A for the
 * branch.  __keep_unbranched() says whether @sample is one, and then sets
 * its period to 1.  __fprintf_header() says in perf report's header how
 * many of @evsel's samples got a virtual LBR, and why the others did not.
 */
#ifdef HAVE_AUXSAMPLE_SUPPORT
int auxsample_report__setup(struct perf_session *session, struct perf_tool *tool,
			    struct itrace_synth_opts *itrace, unsigned int depth);
int auxsample_report__setup_pipe(struct perf_session *session, struct perf_tool *tool,
				 struct itrace_synth_opts *itrace, unsigned int depth);
void auxsample_report__set_threads(struct perf_session *session, unsigned int threads);
int auxsample_report__flush(struct perf_session *session);
bool auxsample_report__keep_unbranched(struct perf_session *session, struct evsel *evsel,
				       struct perf_sample *sample);
size_t auxsample_report__fprintf_header(struct perf_session *session, struct evsel *evsel,
					FILE *fp);
#else
static inline int auxsample_report__setup(struct perf_session *session __maybe_unused,
					  struct perf_tool *tool __maybe_unused,
					  struct itrace_synth_opts *itrace __maybe_unused,
					  unsigned int depth __maybe_unused)
{
	return 0;
}

static inline int auxsample_report__setup_pipe(struct perf_session *session __maybe_unused,
					       struct perf_tool *tool __maybe_unused,
					       struct itrace_synth_opts *itrace __maybe_unused,
					       unsigned int depth __maybe_unused)
{
	return 0;
}

static inline void auxsample_report__set_threads(struct perf_session *session __maybe_unused,
						 unsigned int threads __maybe_unused)
{
}

static inline int auxsample_report__flush(struct perf_session *session __maybe_unused)
{
	return 0;
}

static inline bool auxsample_report__keep_unbranched(struct perf_session *session __maybe_unused,
						     struct evsel *evsel __maybe_unused,
						     struct perf_sample *sample __maybe_unused)
{
	return false;
}

static inline size_t auxsample_report__fprintf_header(struct perf_session *session __maybe_unused,
						      struct evsel *evsel __maybe_unused,
						      FILE *fp __maybe_unused)
{
	return 0;
}
#endif

#endif /* __PERF_AUXSAMPLE_REPORT_H */
