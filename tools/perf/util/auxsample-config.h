/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_CONFIG_H
#define __PERF_AUXSAMPLE_CONFIG_H

#include <stdbool.h>
#include <linux/types.h>

struct auxsample_config;
struct perf_session;
union perf_event;

/*
 * The trace configuration from an AUXTRACE_INFO event (Intel PT: and the
 * header's cpuid; CoreSight ETM/ETE: the per-CPU ID registers), and the
 * PMU type of its events.  -EOPNOTSUPP for other AUX area data, -EINVAL
 * for a short or malformed event, -AUXSAMPLE_ERR_NOT_BUILT when this perf's
 * libauxsample lacks the trace's decoder (auxsample__not_built() says
 * which library it needs).  auxsample_config__exit() frees what it
 * allocated.
 */
int auxsample_config__from_auxtrace_info(struct auxsample_config *config,
					 struct perf_session *session,
					 union perf_event *event, u64 *pmu_type);
void auxsample_config__exit(struct auxsample_config *config);
const char *auxsample__not_built(const struct auxsample_config *config);

/*
 * The Intel PT decoder of every config made from now on: an enum
 * auxsample_pt_decoder, from --decoder (auxsample__parse_decoder() is its
 * OPT_CALLBACK: "libipt" or "walker") or else the config variable
 * auxsample.decoder.
 */
struct option;
int auxsample__parse_decoder(const struct option *opt, const char *str, int unset);
unsigned int auxsample__pt_decoder(void);

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
 * Whether every ETM of a cs_etm AUXTRACE_INFO stamps its trace with the
 * kernel's time, which PERF_RECORD_TIME_CONV converts to perf's.
 */
bool auxsample_cs_etm__virtual_ts(union perf_event *event);

#endif /* __PERF_AUXSAMPLE_CONFIG_H */
