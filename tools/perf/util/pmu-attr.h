/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_PMU_ATTR_H
#define __PERF_PMU_ATTR_H

#include <linux/types.h>
#include <stdbool.h>

struct evsel;
struct list_head;
struct parse_events_error;
struct parse_events_terms;
struct perf_event_attr;
struct perf_pmu;

/*
 * PMU format files may say 'attr<index>:<bits>': the bits of the u64 word
 * <index> of struct perf_event_attr.  Such formats get format values from
 * PERF_PMU_FORMAT_VALUE_ATTR_BASE on, above the config ones, except for
 * the words that are config, config1, config2 and config3: those keep the
 * PERF_PMU_FORMAT_VALUE_CONFIG* values, so that every config word is
 * handled alike however its format file spells it.
 */
#define PERF_PMU_FORMAT_VALUE_ATTR_BASE	0x100
#define PERF_PMU_FORMAT_VALUE_ATTR_MAX	0xffff

/* Number of u64 words in struct perf_event_attr as this perf knows it. */
#define PERF_ATTR_NR_WORDS (sizeof(struct perf_event_attr) / sizeof(__u64))

int perf_pmu_format__attr_value(unsigned long index);
bool perf_pmu_format__is_attr(int value);

__u64 *perf_pmu__attr_word(const struct perf_pmu *pmu, const char *format,
			   int value, struct perf_event_attr *attr,
			   struct parse_events_error *err, int err_idx);
void perf_pmu__warn_invalid_attr_format(const struct perf_pmu *pmu,
					const char *format, int value);

int perf_pmu__attr_config_terms(struct perf_pmu *pmu,
				struct parse_events_terms *terms,
				const struct perf_event_attr *attr,
				struct list_head *config_terms);
void evsel__apply_attr_formats(struct evsel *evsel);

#endif /* __PERF_PMU_ATTR_H */
