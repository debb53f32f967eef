/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_ETM_H
#define __PERF_AUXSAMPLE_ETM_H

#include <stdbool.h>
#include <linux/types.h>

struct auxsample_config;
struct auxsample_script_opts;
struct machine;
struct perf_sample;
struct perf_session;
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

#endif /* __PERF_AUXSAMPLE_ETM_H */
