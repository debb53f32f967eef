/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_FULLTRACE_H
#define __PERF_AUXSAMPLE_FULLTRACE_H

#include <stdbool.h>
#include <linux/types.h>

struct auxsample_config;
struct auxtrace_queues;
struct perf_sample;
struct perf_session;
union perf_event;

/*
 * Full-trace decoding: the PERF_RECORD_AUXTRACE buffers of a recording
 * (not AUX samples), decoded whole, CPU by CPU, reading code through the
 * traced threads' maps as they are at the end of the file.  This is how
 * CoreSight ETM is recorded on every kernel so far: none implements AUX
 * snapshots (and so PERF_SAMPLE_AUX) for cs_etm.
 */
struct auxsample_fulltrace;

struct auxsample_fulltrace *auxsample_fulltrace__new(void);
void auxsample_fulltrace__delete(struct auxsample_fulltrace *ft);

/* Session events: the trace buffers, AUX records (format, sizes), trace IDs. */
s64 auxsample_fulltrace__queue(struct auxsample_fulltrace *ft, struct perf_session *session,
			       union perf_event *event);
void auxsample_fulltrace__aux(struct auxsample_fulltrace *ft, union perf_event *event,
			      struct perf_sample *sample);
int auxsample_fulltrace__hw_id(struct auxsample_fulltrace *ft, union perf_event *event,
			       struct perf_sample *sample);

/* The file has trace buffers, or AUX records that announce some. */
bool auxsample_fulltrace__has_trace(const struct auxsample_fulltrace *ft);

/* What auxsample_fulltrace__run() makes of the trace. */
struct auxsample_fulltrace_opts {
	const char	*input;		/* the file, for messages */
	bool		stat;		/* count the branches, errors ... */
	bool		autofdo;	/* write AutoFDO text */
	/* the caller lists samples as JSON: no full trace, and why */
	bool		json;
};

/*
 * Decode every buffer and, per @opts: list the taken branches (script),
 * count them (stat), or write AutoFDO text (--autofdo).
 */
int auxsample_fulltrace__run(struct auxsample_fulltrace *ft, struct perf_session *session,
			     const struct auxsample_config *config,
			     const struct auxsample_fulltrace_opts *opts);

/* The trace buffers that auxsample_fulltrace__queue() queued. */
struct auxtrace_queues *auxsample_fulltrace__queues(struct auxsample_fulltrace *ft);
/*
 * What @cpu's PERF_RECORD_AUX and AUX_OUTPUT_HW_ID records said: its
 * trace ID (-1: none known), and whether its trace is raw (TRBE) rather
 * than in CoreSight frames.
 */
void auxsample_fulltrace__cpu_format(struct auxsample_fulltrace *ft, int cpu, int *trace_id,
				     bool *raw);

#endif /* __PERF_AUXSAMPLE_FULLTRACE_H */
