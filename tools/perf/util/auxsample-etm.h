/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_ETM_H
#define __PERF_AUXSAMPLE_ETM_H

#include <stdbool.h>
#include <linux/types.h>

struct auxsample_config;
struct auxsample_script_opts;
struct evsel;
struct machine;
struct perf_sample;
struct perf_session;
struct thread;
union perf_event;

/*
 * CoreSight ETMv4/ETE trace configuration from perf's cs_etm AUXTRACE_INFO
 * (the per-CPU ID and configuration registers, cs-etm.h): one source per
 * CPU, in the record's order, formatted (the default: ETR/ETF sinks) until
 * the CPU's PERF_RECORD_AUX says otherwise.  The sources are allocated:
 * auxsample_config__exit() frees them.
 */
int auxsample_config__from_cs_etm(struct auxsample_config *config,
				  union perf_event *event, u64 *pmu_type);

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

/*
 * Decode every buffer and, per @opts: list the taken branches (script),
 * count them (stat), or write AutoFDO text (--autofdo).
 */
int auxsample_fulltrace__run(struct auxsample_fulltrace *ft, struct perf_session *session,
			     const struct auxsample_config *config,
			     const struct auxsample_script_opts *opts);

/*
 * Windows: the samples recorded beside a full trace (perf record -e
 * intel_pt//u -e <events>, or -Acs_etm where the kernel has no AUX
 * snapshots), each handed the trace that leads up to it, at most
 * @max_bytes, ending where a real AUX snippet would (Intel PT), or at
 * the trace's last timestamp not later than the sample (Intel PT without
 * a stop at the sample, CoreSight ETM): the decoder then takes it for the
 * sample's PERF_SAMPLE_AUX data.  Each CPU's trace is read and scanned
 * once.
 */
struct auxsample_windows;

struct auxsample_window_stats {
	u64	at_stop;	/* windows that end where the sample stopped the trace */
	u64	by_time;	/* windows that end at the last TSC before the sample */
	u64	bad_packets;	/* bytes that were no packet: skipped to the next PSB */
};

/*
 * @config: what decodes the window, the sample's CPU's ETM source alone
 * (formatted or raw, its trace ID), valid while the windows are; NULL
 * for Intel PT: the file's own configuration.
 */
typedef int (*auxsample_window_fn)(struct perf_sample *sample, struct evsel *evsel,
				   struct thread *thread,
				   const struct auxsample_config *config, void *context);

struct auxsample_windows *auxsample_windows__new(size_t max_bytes);
void auxsample_windows__delete(struct auxsample_windows *ws);
/*
 * AUXTRACE_INFO: Intel PT's, how its TSC converts to perf time; cs_etm's,
 * the ETM sources and whether their timestamps are the kernel's time (then
 * they convert through the session's PERF_RECORD_TIME_CONV).
 */
void auxsample_windows__time_conv(struct auxsample_windows *ws, union perf_event *event);
/* A sample without AUX data, in the session's (time) order, and its thread. */
int auxsample_windows__add(struct auxsample_windows *ws, struct perf_sample *sample,
			   struct evsel *evsel, struct thread *thread);
size_t auxsample_windows__nr_samples(const struct auxsample_windows *ws);
/* After the last event: every sample, its window in sample->aux_sample, to @fn. */
int auxsample_windows__run(struct auxsample_windows *ws, struct auxsample_fulltrace *ft,
			   struct perf_session *session, auxsample_window_fn fn, void *context);
const struct auxsample_window_stats *
auxsample_windows__stats(const struct auxsample_windows *ws);

#endif /* __PERF_AUXSAMPLE_ETM_H */
