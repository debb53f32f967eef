/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_WINDOW_H
#define __PERF_AUXSAMPLE_WINDOW_H

#include <stddef.h>
#include <linux/types.h>

struct auxsample_config;
struct auxsample_fulltrace;
struct evsel;
struct perf_sample;
struct perf_session;
struct thread;
union perf_event;

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

/*
 * A first pass over @session's file, on a session of its own: the trace
 * buffers, the samples beside them (not the trace's own), each sample's
 * window (at most @max_bytes) to @fn, in sample order.  On success
 * *@wsp holds the windows, which hold the trace that they point into,
 * and *@unplaced counts the samples that had no CPU and could not be
 * placed (auxsample-prepass.c).
 */
int auxsample_windows__first_pass(struct perf_session *session, size_t max_bytes,
				  auxsample_window_fn fn, void *context,
				  struct auxsample_windows **wsp, u64 *unplaced);

#endif /* __PERF_AUXSAMPLE_WINDOW_H */
