// SPDX-License-Identifier: GPL-2.0
/*
 * perf record -A: the AUX sampling group it builds from the command line's
 * events, on an intel_pt PMU (the machine's, or one made up here).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <sys/stat.h>
#include <subcmd/parse-options.h>

#include "auxsample-record.h"
#include "auxtrace.h"
#include "debug.h"
#include "evlist.h"
#include "evsel.h"
#include "parse-events.h"
#include "pmu.h"
#include "pmus.h"
#include "record.h"
#include "tests.h"

/* What a Skylake-era kernel publishes for intel_pt, as far as -A reads it. */
static const struct {
	const char *path;
	const char *text;
} intel_pt_files[] = {
	{ "type",			"4244\n" },
	{ "format/pt",			"config:0\n" },
	{ "format/cyc",			"config:1\n" },
	{ "format/tsc",			"config:10\n" },
	{ "format/mtc",			"config:9\n" },
	{ "format/branch",		"config:13\n" },
	{ "format/psb_period",		"config:24-27\n" },
	{ "caps/topa_multiple_entries",	"1\n" },
	{ "caps/psb_cyc",		"1\n" },
	{ "caps/psb_periods",		"3f\n" },
};

struct pt_test {
	char dir[PATH_MAX];
	struct perf_pmu *made;		/* made up here, else the machine's */
	struct evlist *evlist;
	struct record_opts opts;
	struct option opt;
};

static int write_file(int dirfd, const char *path, const char *text)
{
	int fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t len = strlen(text);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != len)
		ret = -EIO;
	close(fd);
	return ret;
}

static struct perf_pmu *make_intel_pt(struct pt_test *t)
{
	struct perf_pmu *pmu = NULL;
	int dirfd;

	scnprintf(t->dir, sizeof(t->dir), "/tmp/perf-auxsample-test-XXXXXX");
	if (!mkdtemp(t->dir)) {
		t->dir[0] = '\0';
		return NULL;
	}
	dirfd = open(t->dir, O_DIRECTORY);
	if (dirfd < 0)
		return NULL;
	if (mkdirat(dirfd, "intel_pt", 0755) || mkdirat(dirfd, "intel_pt/format", 0755) ||
	    mkdirat(dirfd, "intel_pt/caps", 0755))
		goto out;
	for (size_t i = 0; i < ARRAY_SIZE(intel_pt_files); i++) {
		char path[PATH_MAX];

		scnprintf(path, sizeof(path), "intel_pt/%s", intel_pt_files[i].path);
		if (write_file(dirfd, path, intel_pt_files[i].text))
			goto out;
	}
	pmu = perf_pmus__add_test_pmu(dirfd, "intel_pt");
out:
	close(dirfd);
	return pmu;
}

static void pt_test__exit(struct pt_test *t)
{
	char cmd[PATH_MAX + 16];

	evlist__delete(t->evlist);
	t->evlist = NULL;
	auxsample_record__exit(&t->opts);
	if (t->made) {
		list_del(&t->made->list);
		perf_pmu__delete(t->made);
		t->made = NULL;
	}
	if (t->dir[0]) {
		scnprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
		if (system(cmd))
			pr_debug("cannot remove %s\n", t->dir);
		t->dir[0] = '\0';
	}
}

/* TEST_OK, or TEST_SKIP when no intel_pt can serve as an AUX area PMU. */
static int pt_test__init(struct pt_test *t)
{
	struct perf_pmu *pmu = perf_pmus__find("intel_pt");

	memset(t, 0, sizeof(*t));
	if (!pmu)
		pmu = t->made = make_intel_pt(t);
	if (!pmu) {
		pr_debug("cannot make an intel_pt test PMU\n");
		pt_test__exit(t);
		return TEST_FAIL;
	}
	if (!pmu->auxtrace) {
		/* Only x86 perf knows intel_pt as an AUX area PMU. */
		pt_test__exit(t);
		return TEST_SKIP;
	}
	t->evlist = evlist__new();
	if (!t->evlist) {
		pt_test__exit(t);
		return TEST_FAIL;
	}
	t->opt.value = &t->evlist;
	t->opt.data = &t->opts;
	return TEST_OK;
}

static int add_events(struct pt_test *t, const char *str)
{
	struct parse_events_error err;
	int ret;

	parse_events_error__init(&err);
	ret = parse_events(t->evlist, str, &err);
	if (ret)
		parse_events_error__print(&err, str);
	parse_events_error__exit(&err);
	return ret;
}

/* Run perf record's option parsing and setup for '-A<a> -e <e1> -e <e2>'. */
static int record_args(struct pt_test *t, const char *e1, const char *a,
		       const char *e2)
{
	if (e1 && add_events(t, e1))
		return -EINVAL;
	if (auxsample_record__parse_opt(&t->opt, a, 0))
		return -EINVAL;
	if (e2 && add_events(t, e2))
		return -EINVAL;
	return auxsample_record__setup(t->evlist, &t->opts);
}

/* One group: the AUX event first, then @names in order. */
static int check_group(struct evlist *evlist, const char * const *names, int nr)
{
	struct evsel *leader = evlist__first(evlist), *evsel;
	int i = 0;

	TEST_ASSERT_VAL("AUX event leads", evsel__is_aux_event(leader));
	TEST_ASSERT_EQUAL("group size", leader->core.nr_members, nr + 1);
	TEST_ASSERT_EQUAL("one group", evlist__nr_groups(evlist), 1);
	evlist__for_each_entry(evlist, evsel) {
		TEST_ASSERT_VAL("led by the AUX event", evsel__leader(evsel) == leader);
		TEST_ASSERT_EQUAL("index", evsel->core.idx, i);
		if (evsel == leader) {
			i++;
			continue;
		}
		if (i > nr || strcmp(evsel__name(evsel), names[i - 1])) {
			pr_debug("member %d is %s\n", i, evsel__name(evsel));
			return TEST_FAIL;
		}
		i++;
	}
	TEST_ASSERT_EQUAL("members", i, nr + 1);
	return TEST_OK;
}

static int test__auxsample_record_seed(struct test_suite *test __maybe_unused,
				       int subtest __maybe_unused)
{
	static const char * const names[] = { "cycles", "instructions", "branch-misses" };
	struct pt_test t;
	int ret = pt_test__init(&t);

	if (ret)
		return ret;
	/* perf record -Aintel_pt -e 'cycles,instructions,branch-misses' ls */
	ret = record_args(&t, NULL, "intel_pt", "cycles,instructions,branch-misses");
	if (!ret)
		ret = check_group(t.evlist, names, ARRAY_SIZE(names));
	if (!ret && (!t.opts.auxtrace_sample_opts || *t.opts.auxtrace_sample_opts)) {
		pr_debug("the PMU's default sample size was not asked for\n");
		ret = TEST_FAIL;
	}
	pt_test__exit(&t);
	return ret ? TEST_FAIL : TEST_OK;
}

static int test__auxsample_record_order(struct test_suite *test __maybe_unused,
					int subtest __maybe_unused)
{
	static const char * const names[] = { "cpu-clock", "task-clock", "page-faults",
					      "instructions" };
	struct pt_test t;
	int ret = pt_test__init(&t);

	if (ret)
		return ret;
	/* -e cpu-clock -A -e '{task-clock,page-faults}' -e instructions */
	ret = record_args(&t, "cpu-clock", NULL, "{task-clock,page-faults},instructions");
	if (!ret)
		ret = check_group(t.evlist, names, ARRAY_SIZE(names));
	pt_test__exit(&t);
	return ret ? TEST_FAIL : TEST_OK;
}

static int test__auxsample_record_default(struct test_suite *test __maybe_unused,
					  int subtest __maybe_unused)
{
	struct pt_test t;
	int ret = pt_test__init(&t);

	if (ret)
		return ret;
	ret = record_args(&t, NULL, "", NULL);
	if (!ret && (t.evlist->core.nr_entries != 2 ||
		     !strstarts(evsel__name(evlist__last(t.evlist)), "cycles"))) {
		pr_debug("no default event: %d events, last %s\n", t.evlist->core.nr_entries,
			 evsel__name(evlist__last(t.evlist)));
		ret = TEST_FAIL;
	}
	pt_test__exit(&t);
	return ret ? TEST_FAIL : TEST_OK;
}

/* The exclude bits of the AUX event for -A@spec -e @events. */
static int leader_excludes(const char *spec, const char *events, bool *user,
			   bool *kernel)
{
	struct perf_event_attr *attr;
	struct pt_test t;
	int ret = pt_test__init(&t);

	if (ret)
		return ret;
	ret = record_args(&t, NULL, spec, events);
	if (!ret) {
		attr = &evlist__first(t.evlist)->core.attr;
		*user = attr->exclude_user;
		*kernel = attr->exclude_kernel;
	}
	pt_test__exit(&t);
	return ret ? TEST_FAIL : TEST_OK;
}

static int test__auxsample_record_filter(struct test_suite *test __maybe_unused,
					 int subtest __maybe_unused)
{
	static const struct {
		const char *spec, *events;
		bool exclude_user, exclude_kernel;
	} checks[] = {
		{ "intel_pt",		"cycles:u,instructions:u",	false, true },
		{ "intel_pt",		"cycles:k,instructions:k",	true, false },
		{ "intel_pt",		"cycles:u,instructions:k",	false, false },
		{ "intel_pt//k",	"cycles:u",			true, false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(checks); i++) {
		bool user = false, kernel = false;
		int ret = leader_excludes(checks[i].spec, checks[i].events, &user, &kernel);

		if (ret)
			return ret;
		if (user != checks[i].exclude_user || kernel != checks[i].exclude_kernel) {
			pr_debug("-A%s -e %s: exclude_user %d exclude_kernel %d\n",
				 checks[i].spec, checks[i].events, user, kernel);
			return TEST_FAIL;
		}
	}
	return TEST_OK;
}

/*
 * Sizes against the PSB period need the PMU's caps files, which only a
 * sysfs tree has: the shell test checks those.
 */
static int test__auxsample_record_sizes(struct test_suite *test __maybe_unused,
					int subtest __maybe_unused)
{
	static const struct {
		const char *spec, *aux_sample;
		bool ok;
	} checks[] = {
		{ "intel_pt,8192",		NULL,	 true },
		{ "intel_pt//u,8192",		NULL,	 true },
		{ "intel_pt,8192",		"8192",	 true },
		{ "intel_pt,8192",		"4096",	 false },	/* two sizes */
		{ "intel_pt,",			"8192",	 true },
	};

	for (size_t i = 0; i < ARRAY_SIZE(checks); i++) {
		struct pt_test t;
		int ret = pt_test__init(&t);

		if (ret)
			return ret;
		t.opts.auxtrace_sample_opts = checks[i].aux_sample;
		ret = record_args(&t, NULL, checks[i].spec, "cycles");
		if (!ret && strcmp(t.opts.auxtrace_sample_opts, "8192"))
			ret = -EINVAL;
		pt_test__exit(&t);
		if ((ret == 0) != checks[i].ok) {
			pr_debug("-A%s --aux-sample=%s: %s\n", checks[i].spec,
				 checks[i].aux_sample ? checks[i].aux_sample : "",
				 ret ? "failed" : "accepted");
			return TEST_FAIL;
		}
	}
	return TEST_OK;
}

static int test__auxsample_record_errors(struct test_suite *test __maybe_unused,
					 int subtest __maybe_unused)
{
	static const struct {
		const char *e1, *spec, *e2;
	} checks[] = {
		{ NULL,		"cs_etm",		"cycles" },	/* no snapshot_aux */
		{ NULL,		"no_such_pmu",		"cycles" },
		{ NULL,		"intel_pt/cyc",		"cycles" },	/* unterminated */
		{ "intel_pt//",	"intel_pt",		"cycles" },	/* two AUX events */
		{ NULL,		"intel_pt",		"{cycles,instructions}:S,branches" },
	};
	struct pt_test t;
	int ret;

	for (size_t i = 0; i < ARRAY_SIZE(checks); i++) {
		ret = pt_test__init(&t);
		if (ret)
			return ret;
		ret = record_args(&t, checks[i].e1, checks[i].spec, checks[i].e2);
		pt_test__exit(&t);
		if (!ret) {
			pr_debug("-A%s was accepted\n", checks[i].spec);
			return TEST_FAIL;
		}
	}

	/* -A twice */
	ret = pt_test__init(&t);
	if (ret)
		return ret;
	ret = auxsample_record__parse_opt(&t.opt, "intel_pt", 0);
	if (!ret && !auxsample_record__parse_opt(&t.opt, "intel_pt", 0)) {
		pr_debug("-A was accepted twice\n");
		ret = TEST_FAIL;
	}
	auxsample_record__setup(t.evlist, &t.opts);
	pt_test__exit(&t);
	return ret ? TEST_FAIL : TEST_OK;
}

/* Upstream's --aux-sample machinery takes the group from there. */
static int test__auxsample_record_sample_mode(struct test_suite *test __maybe_unused,
					      int subtest __maybe_unused)
{
	struct auxtrace_record *itr = NULL;
	struct evsel *evsel;
	struct pt_test t;
	int err = 0, ret = pt_test__init(&t);

	if (ret)
		return ret;
	ret = record_args(&t, NULL, "intel_pt,8192", "cycles,instructions");
	if (!ret)
		itr = auxtrace_record__init(t.evlist, &err);
	if (!ret && !itr) {
		pr_debug("no Intel PT recording (err %d)\n", err);
		ret = TEST_FAIL;
	}
	if (!ret)
		ret = auxtrace_parse_sample_options(itr, t.evlist, &t.opts,
						    t.opts.auxtrace_sample_opts);
	if (!ret && !t.opts.auxtrace_sample_mode)
		ret = TEST_FAIL;
	if (!ret) {
		evlist__for_each_entry(t.evlist, evsel) {
			bool leader = evsel__is_group_leader(evsel);
			u32 sz = evsel->core.attr.aux_sample_size;
			bool aux = evsel->core.attr.sample_type & PERF_SAMPLE_AUX;

			if (leader ? (sz || aux) : (sz != 8192 || !aux)) {
				pr_debug("%s: aux_sample_size %u, AUX %d\n",
					 evsel__name(evsel), sz, aux);
				ret = TEST_FAIL;
			}
		}
	}
	auxtrace_record__free(itr);
	pt_test__exit(&t);
	return ret ? TEST_FAIL : TEST_OK;
}

#define NO_PT "needs intel_pt, known to x86 perf"

static struct test_case tests__auxsample_record[] = {
	TEST_CASE_REASON("Group the seed's command line under intel_pt",
			 auxsample_record_seed, NO_PT),
	TEST_CASE_REASON("Put the AUX event first, flatten user groups",
			 auxsample_record_order, NO_PT),
	TEST_CASE_REASON("Sample the default event with -A alone",
			 auxsample_record_default, NO_PT),
	TEST_CASE_REASON("Make the AUX event filter as its members",
			 auxsample_record_filter, NO_PT),
	TEST_CASE_REASON("Choose and check AUX sample sizes",
			 auxsample_record_sizes, NO_PT),
	TEST_CASE_REASON("Reject what cannot be an AUX sampling group",
			 auxsample_record_errors, NO_PT),
	TEST_CASE_REASON("Hand the group to the --aux-sample machinery",
			 auxsample_record_sample_mode, NO_PT),
	{ .name = NULL, }
};

struct test_suite suite__auxsample_record = {
	.desc = "perf record -A AUX sampling groups",
	.test_cases = tests__auxsample_record,
};
