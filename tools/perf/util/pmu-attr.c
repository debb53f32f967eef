// SPDX-License-Identifier: GPL-2.0
/*
 * attr<index>:<bits> PMU formats: formats that set bits of any u64 word of
 * struct perf_event_attr, not only of config, config1, config2 or config3.
 *
 * The persistent events ABI publishes its flag as <pmu>/format/persistent
 * = "attr5:23", and an alias events/<name> = "persistent,config=<id>".
 * The tools take bit positions from sysfs and never hard-code them: bit
 * 23 of word 5 was free in 2013 and is 'mmap2' today.
 *
 * Endianness: <bits> are bits of the native-endian u64 word, as the
 * kernel sees the attr in the syscall.  For the bitfield word 5 this
 * means the bit that a field occupies differs between little and big
 * endian ABIs (on big endian 'disabled' is bit 63); the kernel publishing
 * the format knows its own layout.  perf_pmu__attr_word() is the one
 * place that maps an index to memory.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/compiler.h>
#include <linux/list.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>

#include "debug.h"
#include "evsel.h"
#include "evsel_config.h"
#include "parse-events.h"
#include "pmu.h"
#include "pmu-attr.h"

static_assert(sizeof(struct perf_event_attr) % sizeof(__u64) == 0,
	      "struct perf_event_attr is not a whole number of u64 words");

/* The words of struct perf_event_attr that have config formats. */
enum {
	PERF_ATTR_WORD_CONFIG	= offsetof(struct perf_event_attr, config) / sizeof(__u64),
	PERF_ATTR_WORD_CONFIG1	= offsetof(struct perf_event_attr, config1) / sizeof(__u64),
	PERF_ATTR_WORD_CONFIG2	= offsetof(struct perf_event_attr, config2) / sizeof(__u64),
	PERF_ATTR_WORD_CONFIG3	= offsetof(struct perf_event_attr, config3) / sizeof(__u64),
};

/* Called by the format grammar for 'attr<index>:<bits>'. */
int perf_pmu_format__attr_value(unsigned long index)
{
	switch (index) {
	case PERF_ATTR_WORD_CONFIG:
		return PERF_PMU_FORMAT_VALUE_CONFIG;
	case PERF_ATTR_WORD_CONFIG1:
		return PERF_PMU_FORMAT_VALUE_CONFIG1;
	case PERF_ATTR_WORD_CONFIG2:
		return PERF_PMU_FORMAT_VALUE_CONFIG2;
	case PERF_ATTR_WORD_CONFIG3:
		return PERF_PMU_FORMAT_VALUE_CONFIG3;
	default:
		break;
	}
	/* Keep absurd indexes, clamped, so that their use reports them. */
	if (index > PERF_PMU_FORMAT_VALUE_ATTR_MAX - PERF_PMU_FORMAT_VALUE_ATTR_BASE)
		return PERF_PMU_FORMAT_VALUE_ATTR_MAX;
	return PERF_PMU_FORMAT_VALUE_ATTR_BASE + index;
}

bool perf_pmu_format__is_attr(int value)
{
	return value >= PERF_PMU_FORMAT_VALUE_ATTR_BASE;
}

/* Why a format value cannot be used, or NULL when it can. */
static char *perf_pmu_format__invalid_reason(int value)
{
	unsigned int index = value - PERF_PMU_FORMAT_VALUE_ATTR_BASE;
	char *reason;
	int ret;

	if (!perf_pmu_format__is_attr(value))
		ret = asprintf(&reason, "config%d is not supported by this version of perf",
			       value);
	else if (index == 0)
		ret = asprintf(&reason,
			       "attr0 holds the type and size of struct perf_event_attr, which a format may not set");
	else if (value == PERF_PMU_FORMAT_VALUE_ATTR_MAX)
		ret = asprintf(&reason,
			       "its attr index is past the end of struct perf_event_attr (attr0 to attr%zu in this version of perf)",
			       PERF_ATTR_NR_WORDS - 1);
	else if (index >= PERF_ATTR_NR_WORDS)
		ret = asprintf(&reason,
			       "attr%u is past the end of struct perf_event_attr (attr0 to attr%zu in this version of perf)",
			       index, PERF_ATTR_NR_WORDS - 1);
	else
		return NULL;

	return ret < 0 ? NULL : reason;
}

static char *perf_pmu__attr_format_error(const struct perf_pmu *pmu,
					 const char *format, int value)
{
	char path[PATH_MAX] = "format";
	char *reason = perf_pmu_format__invalid_reason(value);
	char *msg;

	perf_pmu__pathname_scnprintf(path, sizeof(path), pmu->name, "format");
	if (asprintf(&msg, "PMU '%s' format '%s' (%s/%s) is invalid: %s",
		     pmu->name, format, path, format, reason ?: "unknown word") < 0)
		msg = NULL;
	free(reason);
	return msg;
}

/*
 * The u64 word of @attr that the format @format of @pmu, with format value
 * @value, sets: config* or another attr word.  An invalid format is
 * reported through @err (at @err_idx of the event string) and gives NULL.
 */
__u64 *perf_pmu__attr_word(const struct perf_pmu *pmu, const char *format,
			   int value, struct perf_event_attr *attr,
			   struct parse_events_error *err, int err_idx)
{
	char *reason = perf_pmu_format__invalid_reason(value);
	char *msg;

	if (!reason)
		return (__u64 *)attr + (value - PERF_PMU_FORMAT_VALUE_ATTR_BASE);
	free(reason);

	msg = perf_pmu__attr_format_error(pmu, format, value);
	if (err) {
		parse_events_error__handle(err, err_idx, msg, NULL);
	} else {
		pr_debug("%s\n", msg ?: "invalid PMU format");
		free(msg);
	}
	return NULL;
}

/* perf_pmu__warn_invalid_formats() hook: say so when a PMU is first used. */
void perf_pmu__warn_invalid_attr_format(const struct perf_pmu *pmu,
					const char *format, int value)
{
	char *reason = perf_pmu_format__invalid_reason(value);
	char *msg;

	if (!reason)
		return;
	free(reason);

	msg = perf_pmu__attr_format_error(pmu, format, value);
	pr_warning("WARNING: %s\n", msg ?: "invalid PMU format");
	free(msg);
}

static int add_attr_bits_term(struct list_head *config_terms, unsigned int index,
			      __u64 mask, __u64 bits)
{
	struct evsel_config_term *term = zalloc(sizeof(*term));

	if (!term)
		return -ENOMEM;

	term->type = EVSEL__CONFIG_TERM_ATTR_BITS;
	term->val.attr_bits.index = index;
	term->val.attr_bits.mask = mask;
	term->val.attr_bits.bits = bits;
	list_add_tail(&term->list, config_terms);
	return 0;
}

/*
 * Remember the attr words bits that @terms set through attr<index> formats
 * (@attr has them applied) as EVSEL__CONFIG_TERM_ATTR_BITS, so that
 * evsel__apply_attr_formats() can set them again after perf record or
 * perf stat did their own attr setup, which rewrites the flags of word 5
 * among others.
 */
int perf_pmu__attr_config_terms(struct perf_pmu *pmu,
				struct parse_events_terms *terms,
				const struct perf_event_attr *attr,
				struct list_head *config_terms)
{
	const __u64 *words = (const __u64 *)attr;
	__u64 mask[PERF_ATTR_NR_WORDS] = { 0 };
	struct parse_events_term *term;
	unsigned int index;
	int value;

	list_for_each_entry(term, &terms->terms, list) {
		if (term->type_term != PARSE_EVENTS__TERM_TYPE_USER)
			continue;
		value = perf_pmu__format_type(pmu, term->config);
		if (!perf_pmu_format__is_attr(value))
			continue;
		index = value - PERF_PMU_FORMAT_VALUE_ATTR_BASE;
		/* perf_pmu__config() rejected invalid ones already. */
		if (index == 0 || index >= PERF_ATTR_NR_WORDS)
			continue;
		mask[index] |= perf_pmu__format_bits(pmu, term->config);
	}

	for (index = 1; index < PERF_ATTR_NR_WORDS; index++) {
		if (!mask[index])
			continue;
		if (add_attr_bits_term(config_terms, index, mask[index],
				       words[index] & mask[index]))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Set the bits that attr<index> formats asked for again: what the event
 * string says for one event overrides what a tool sets up for all events.
 */
void evsel__apply_attr_formats(struct evsel *evsel)
{
	__u64 *words = (__u64 *)&evsel->core.attr;
	struct evsel_config_term *term;

	list_for_each_entry(term, &evsel->config_terms, list) {
		__u64 *word;

		if (term->type != EVSEL__CONFIG_TERM_ATTR_BITS)
			continue;
		word = &words[term->val.attr_bits.index];
		*word = (*word & ~term->val.attr_bits.mask) | term->val.attr_bits.bits;
	}
}
