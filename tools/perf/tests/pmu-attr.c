// SPDX-License-Identifier: GPL-2.0
/*
 * attr<index>:<bits> PMU formats, on a PMU directory made up here as the
 * persistent events ABI lays it out: format/persistent = attr5:23 and
 * events/mce_record = persistent,config=106.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <sys/stat.h>

#include "debug.h"
#include "evlist.h"
#include "evsel.h"
#include "parse-events.h"
#include "pmu.h"
#include "pmu-attr.h"
#include "pmus.h"
#include "record.h"
#include "tests.h"

#define TEST_PMU	"perf-pmu-attr-test"
#define TEST_PMU_TYPE	9998

/* Bit 23 of word 5, as the persistent events ABI (2013) defined it. */
#define ATTR5_BIT23	(1ULL << 23)

/* Equal, or say both values: TEST_ASSERT_VAL() prints neither. */
static bool u64_eq(__u64 val, __u64 expected)
{
	if (val == expected)
		return true;
	pr_debug("%#llx != %#llx\n", val, expected);
	return false;
}

static const struct test_file {
	const char *path;
	const char *text;
} test_files[] = {
	{ "type",			"9998\n" },
	{ "format/persistent",		"attr5:23\n" },
	{ "format/inh",			"attr5:1\n" },
	{ "format/wakeup",		"attr6:0-31\n" },
	{ "format/smpl",		"attr3:0-3\n" },
	{ "format/brs",			"attr9:1,6-10,44\n" },
	{ "format/auxsz",		"attr14:0-31\n" },
	{ "format/cfg",			"attr1:0-7\n" },
	{ "format/cfg1",		"attr7:8-15\n" },
	{ "format/cfg3",		"attr16:0-3\n" },
	{ "format/ovl_a",		"attr6:0-15\n" },
	{ "format/ovl_b",		"attr6:8-23\n" },
	{ "format/cfg_a",		"config:0-15\n" },
	{ "format/cfg_b",		"config:8-23\n" },
	{ "format/bad0",		"attr0:0-7\n" },
	{ "format/bad17",		"attr17:0\n" },
	{ "format/badhuge",		"attr99999999999:0\n" },
	{ "events/mce_record",		"persistent,config=106\n" },
	{ "events/wake_early",		"wakeup=7,cfg=0x11\n" },
};

struct attr_test_pmu {
	char dir[PATH_MAX];
	struct perf_pmu *pmu;
};

static int write_test_file(int dirfd, const struct test_file *f)
{
	int fd = openat(dirfd, f->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t len = strlen(f->text);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, f->text, len) != len)
		ret = -EIO;
	close(fd);
	return ret;
}

static void attr_test_pmu__put(struct attr_test_pmu *tp)
{
	char cmd[PATH_MAX + 16];

	if (tp->pmu) {
		list_del(&tp->pmu->list);
		perf_pmu__delete(tp->pmu);
		tp->pmu = NULL;
	}
	if (tp->dir[0]) {
		scnprintf(cmd, sizeof(cmd), "rm -rf '%s'", tp->dir);
		if (system(cmd))
			pr_debug("failed to remove %s\n", tp->dir);
	}
}

static int attr_test_pmu__get(struct attr_test_pmu *tp)
{
	int dirfd = -1;

	memset(tp, 0, sizeof(*tp));
	scnprintf(tp->dir, sizeof(tp->dir), "/tmp/perf-pmu-attr-test-XXXXXX");
	if (!mkdtemp(tp->dir)) {
		tp->dir[0] = '\0';
		pr_debug("mkdtemp failed: %m\n");
		return -1;
	}
	dirfd = open(tp->dir, O_DIRECTORY);
	if (dirfd < 0 ||
	    mkdirat(dirfd, TEST_PMU, 0755) ||
	    mkdirat(dirfd, TEST_PMU "/format", 0755) ||
	    mkdirat(dirfd, TEST_PMU "/events", 0755)) {
		pr_debug("cannot make the PMU directory in %s: %m\n", tp->dir);
		goto out_err;
	}
	for (size_t i = 0; i < ARRAY_SIZE(test_files); i++) {
		char path[PATH_MAX];
		struct test_file f = { path, test_files[i].text };

		scnprintf(path, sizeof(path), TEST_PMU "/%s", test_files[i].path);
		if (write_test_file(dirfd, &f)) {
			pr_debug("cannot write %s/%s\n", tp->dir, path);
			goto out_err;
		}
	}
	tp->pmu = perf_pmus__add_test_pmu(dirfd, TEST_PMU);
	close(dirfd);
	if (!tp->pmu) {
		pr_debug("test PMU creation failed\n");
		attr_test_pmu__put(tp);
		return -1;
	}
	return 0;

out_err:
	if (dirfd >= 0)
		close(dirfd);
	attr_test_pmu__put(tp);
	return -1;
}

static __u64 attr_word(const struct perf_event_attr *attr, int index)
{
	return ((const __u64 *)attr)[index];
}

/* Apply @terms to a zeroed attr through the PMU's formats. */
static int config_terms(struct perf_pmu *pmu, const char *str,
			struct perf_event_attr *attr)
{
	struct parse_events_terms terms;
	int ret;

	memset(attr, 0, sizeof(*attr));
	parse_events_terms__init(&terms);
	ret = parse_events_terms(&terms, str, /*input=*/NULL);
	if (!ret)
		ret = perf_pmu__config_terms(pmu, attr, &terms, /*zero=*/false,
					     /*err=*/NULL);
	parse_events_terms__exit(&terms);
	return ret;
}

static int check_format_values(struct perf_pmu *pmu)
{
	/* Words that are config words keep the config format values. */
	TEST_ASSERT_EQUAL("attr1 is config", perf_pmu__format_type(pmu, "cfg"),
			  PERF_PMU_FORMAT_VALUE_CONFIG);
	TEST_ASSERT_EQUAL("attr7 is config1", perf_pmu__format_type(pmu, "cfg1"),
			  PERF_PMU_FORMAT_VALUE_CONFIG1);
	TEST_ASSERT_EQUAL("attr16 is config3", perf_pmu__format_type(pmu, "cfg3"),
			  PERF_PMU_FORMAT_VALUE_CONFIG3);
	TEST_ASSERT_EQUAL("attr5", perf_pmu__format_type(pmu, "persistent"),
			  PERF_PMU_FORMAT_VALUE_ATTR_BASE + 5);
	TEST_ASSERT_EQUAL("attr14", perf_pmu__format_type(pmu, "auxsz"),
			  PERF_PMU_FORMAT_VALUE_ATTR_BASE + 14);
	/* Invalid indexes are kept, so that using them reports them. */
	TEST_ASSERT_EQUAL("attr0 kept", perf_pmu__format_type(pmu, "bad0"),
			  PERF_PMU_FORMAT_VALUE_ATTR_BASE);
	TEST_ASSERT_EQUAL("attr17 kept", perf_pmu__format_type(pmu, "bad17"),
			  PERF_PMU_FORMAT_VALUE_ATTR_BASE + 17);
	TEST_ASSERT_EQUAL("huge index clamped", perf_pmu__format_type(pmu, "badhuge"),
			  PERF_PMU_FORMAT_VALUE_ATTR_MAX);

	TEST_ASSERT_VAL("attr5:23 bits",
			u64_eq(perf_pmu__format_bits(pmu, "persistent"), ATTR5_BIT23));
	TEST_ASSERT_VAL("attr9:1,6-10,44 bits",
			u64_eq(perf_pmu__format_bits(pmu, "brs"),
			       (1ULL << 1) | (0x1fULL << 6) | (1ULL << 44)));
	TEST_ASSERT_VAL("attr6:0-31 bits",
			u64_eq(perf_pmu__format_bits(pmu, "wakeup"), 0xffffffffULL));
	return TEST_OK;
}

static int test__pmu_attr_parse(struct test_suite *test __maybe_unused,
				int subtest __maybe_unused)
{
	struct attr_test_pmu tp;
	int ret;

	if (attr_test_pmu__get(&tp))
		return TEST_FAIL;
	ret = check_format_values(tp.pmu);
	attr_test_pmu__put(&tp);
	return ret;
}

static int test__pmu_attr_bits(struct test_suite *test __maybe_unused,
			       int subtest __maybe_unused)
{
	static const char *terms =
		"persistent,wakeup=0x12345,smpl=5,brs=0x3f,auxsz=4096,cfg=0xab,cfg1=0xcd,cfg3=7";
	struct perf_event_attr attr;
	struct attr_test_pmu tp;
	int err;

	if (attr_test_pmu__get(&tp))
		return TEST_FAIL;

	err = config_terms(tp.pmu, terms, &attr);
	attr_test_pmu__put(&tp);
	TEST_ASSERT_EQUAL("config terms", err, 0);

	TEST_ASSERT_VAL("word 5", u64_eq(attr_word(&attr, 5), ATTR5_BIT23));
	TEST_ASSERT_VAL("word 6", u64_eq(attr_word(&attr, 6), 0x12345ULL));
	TEST_ASSERT_VAL("word 3", u64_eq(attr_word(&attr, 3), 5ULL));
	TEST_ASSERT_VAL("word 9 scattered", u64_eq(attr_word(&attr, 9), 0x7c2ULL));
	TEST_ASSERT_VAL("word 14", u64_eq(attr_word(&attr, 14), 4096ULL));
	TEST_ASSERT_VAL("config", u64_eq(attr.config, 0xabULL));
	TEST_ASSERT_VAL("config1", u64_eq(attr.config1, 0xcd00ULL));
	TEST_ASSERT_VAL("config3", u64_eq(attr.config3, 7ULL));
	TEST_ASSERT_EQUAL("type untouched", (int)attr.type, 0);
#if __BYTE_ORDER == __LITTLE_ENDIAN
	/* Native-endian words: on little endian these are the fields. */
	TEST_ASSERT_VAL("mmap2 is bit 23 of word 5", u64_eq(attr.mmap2, 1ULL));
	TEST_ASSERT_VAL("wakeup_events", u64_eq(attr.wakeup_events, 0x12345));
	TEST_ASSERT_VAL("aux_sample_size", u64_eq(attr.aux_sample_size, 4096));
	TEST_ASSERT_VAL("sample_type",
			u64_eq(attr.sample_type, PERF_SAMPLE_IP | PERF_SAMPLE_TIME));
#endif
	return TEST_OK;
}

static int parse_one(const char *str, struct evlist **pevlist,
		     struct parse_events_error *err)
{
	struct evlist *evlist = evlist__new();

	*pevlist = evlist;
	if (!evlist)
		return -ENOMEM;
	return parse_events(evlist, str, err);
}

static int test__pmu_attr_alias(struct test_suite *test __maybe_unused,
				int subtest __maybe_unused)
{
	struct parse_events_error err;
	struct evlist *evlist = NULL;
	struct perf_event_attr *attr;
	struct attr_test_pmu tp;
	int ret = TEST_FAIL;

	if (attr_test_pmu__get(&tp))
		return TEST_FAIL;
	parse_events_error__init(&err);

	if (parse_one(TEST_PMU "/mce_record/", &evlist, &err)) {
		parse_events_error__print(&err, TEST_PMU "/mce_record/");
		goto out;
	}
	attr = &evlist__first(evlist)->core.attr;
	if (attr->type != TEST_PMU_TYPE || attr->config != 106 ||
	    !(attr_word(attr, 5) & ATTR5_BIT23)) {
		pr_debug("mce_record: type %u config %llu word5 %#llx\n", attr->type,
			 attr->config, attr_word(attr, 5));
		goto out;
	}
	evlist__delete(evlist);

	/* An alias made of attr<index> and config terms, with another term. */
	if (parse_one(TEST_PMU "/wake_early,smpl=1/", &evlist, &err)) {
		parse_events_error__print(&err, TEST_PMU "/wake_early,smpl=1/");
		goto out;
	}
	attr = &evlist__first(evlist)->core.attr;
	if (attr_word(attr, 6) != 7 || attr->config != 0x11 || attr_word(attr, 3) != 1) {
		pr_debug("wake_early: word6 %#llx config %#llx word3 %#llx\n",
			 attr_word(attr, 6), attr->config, attr_word(attr, 3));
		goto out;
	}
	ret = TEST_OK;
out:
	evlist__delete(evlist);
	parse_events_error__exit(&err);
	attr_test_pmu__put(&tp);
	return ret;
}

static int test__pmu_attr_errors(struct test_suite *test __maybe_unused,
				 int subtest __maybe_unused)
{
	static const struct {
		const char *event;
		const char *error;
	} checks[] = {
		{ TEST_PMU "/bad0=1/",	"attr0 holds the type and size" },
		{ TEST_PMU "/bad0=1/",	"format 'bad0' (" },
		{ TEST_PMU "/bad0=1/",	TEST_PMU "/format/bad0)" },
		{ TEST_PMU "/bad17=1/",	"attr17 is past the end of struct perf_event_attr" },
		{ TEST_PMU "/badhuge=1/", "is past the end of struct perf_event_attr" },
		{ TEST_PMU "/wakeup=0x100000000/",
		  "value too big for format (wakeup), maximum is 4294967295" },
		{ TEST_PMU "/persistent=2/",
		  "value too big for format (persistent), maximum is 1" },
		{ TEST_PMU "/wakeup/",	"no value assigned for term" },
	};
	struct attr_test_pmu tp;
	int ret = TEST_OK;

	if (attr_test_pmu__get(&tp))
		return TEST_FAIL;

	for (size_t i = 0; i < ARRAY_SIZE(checks); i++) {
		struct parse_events_error err;
		struct evlist *evlist = NULL;

		parse_events_error__init(&err);
		if (!parse_one(checks[i].event, &evlist, &err)) {
			pr_debug("'%s' was accepted\n", checks[i].event);
			ret = TEST_FAIL;
		} else if (!parse_events_error__contains(&err, checks[i].error)) {
			pr_debug("'%s': no error saying '%s'\n", checks[i].event,
				 checks[i].error);
			parse_events_error__print(&err, checks[i].event);
			ret = TEST_FAIL;
		}
		evlist__delete(evlist);
		parse_events_error__exit(&err);
	}
	attr_test_pmu__put(&tp);
	return ret;
}

static int test__pmu_attr_overlap(struct test_suite *test __maybe_unused,
				  int subtest __maybe_unused)
{
	struct perf_event_attr attr, cfg;
	struct attr_test_pmu tp;
	int err1, err2;

	if (attr_test_pmu__get(&tp))
		return TEST_FAIL;
	err1 = config_terms(tp.pmu, "ovl_a=0x1234,ovl_b=0x5600", &attr);
	err2 = config_terms(tp.pmu, "cfg_a=0x1234,cfg_b=0x5600", &cfg);
	attr_test_pmu__put(&tp);

	TEST_ASSERT_EQUAL("attr terms", err1, 0);
	TEST_ASSERT_EQUAL("config terms", err2, 0);
	TEST_ASSERT_VAL("as for config", u64_eq(attr_word(&attr, 6), cfg.config));
	TEST_ASSERT_VAL("overlapping bits OR-ed", u64_eq(cfg.config, 0x561234ULL));
	return TEST_OK;
}

static int test__pmu_attr_record_config(struct test_suite *test __maybe_unused,
					int subtest __maybe_unused)
{
	struct record_opts opts = {
		.target = { .uid = UINT_MAX, },
		.mmap_pages = 16,
		.user_interval = ULLONG_MAX,
		.user_freq = UINT_MAX,
		.default_interval = 1000,
	};
	const char *event = TEST_PMU "/persistent,inh=0/";
	struct parse_events_error err;
	struct evlist *evlist = NULL;
	struct perf_event_attr *attr;
	struct attr_test_pmu tp;
	int ret = TEST_FAIL;

	if (attr_test_pmu__get(&tp))
		return TEST_FAIL;
	parse_events_error__init(&err);
	if (parse_one(event, &evlist, &err)) {
		parse_events_error__print(&err, event);
		goto out;
	}
	attr = &evlist__first(evlist)->core.attr;

	/*
	 * perf record's setup makes every event inherit and sets mmap2 only
	 * on the tracking event (none here): the format terms must win.
	 */
	evsel__config(evlist__first(evlist), &opts, /*callchain=*/NULL);
	if (!(attr_word(attr, 5) & ATTR5_BIT23) || (attr_word(attr, 5) & 2)) {
		pr_debug("after evsel__config: word5 %#llx\n", attr_word(attr, 5));
		goto out;
	}
	/* What the formats did not name is still record's own setup. */
	if (attr->sample_period != 1000 || !(attr->sample_type & PERF_SAMPLE_TID)) {
		pr_debug("record setup lost: period %llu sample_type %#llx\n",
			 attr->sample_period, attr->sample_type);
		goto out;
	}
	ret = TEST_OK;
out:
	evlist__delete(evlist);
	parse_events_error__exit(&err);
	attr_test_pmu__put(&tp);
	return ret;
}

static struct test_case tests__pmu_attr[] = {
	TEST_CASE("Parse attr<index> format files", pmu_attr_parse),
	TEST_CASE("Place attr<index> bits in attr words", pmu_attr_bits),
	TEST_CASE("Expand sysfs aliases of attr<index> terms", pmu_attr_alias),
	TEST_CASE("Reject invalid attr<index> formats and values", pmu_attr_errors),
	TEST_CASE("Overlap attr<index> formats as config ones", pmu_attr_overlap),
	TEST_CASE("Keep attr<index> bits through record's setup", pmu_attr_record_config),
	{ .name = NULL, }
};

struct test_suite suite__pmu_attr = {
	.desc = "PMU attr<index> formats",
	.test_cases = tests__pmu_attr,
};
