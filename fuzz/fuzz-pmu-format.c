// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: perf's PMU format files (config<n>:<bits> and our
 * attr<index>:<bits>), read by perf's own code from a PMU directory laid
 * out as sysfs lays it out, then used: event terms configured through
 * them and the formats checked, as perf list/stat/record do.
 *
 * Input: 8 bytes, the value given to each format, then up to three format
 * files' contents separated by NUL bytes (formats f0, f1, f2).
 * The event string is "f0=<value>,f1=<value>,f2=1".
 *
 * Built by scripts/fuzz-link-perf against perf's objects, with pmu.c,
 * pmus.c, pmu-attr.c and the format lexer and parser instrumented.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/list.h>
#include <linux/perf_event.h>
#include "debug.h"
#include "evsel.h"
#include "parse-events.h"
#include "pmu.h"
#include "pmu-attr.h"
#include "pmus.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NR_FORMATS	3

static char sysfs[] = "/tmp/perf-fuzz-pmu.XXXXXX";
static int sysfs_fd = -1;

static void cleanup(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", sysfs);
	if (system(cmd))
		fprintf(stderr, "fuzz-pmu-format: cannot remove %s\n", sysfs);
}

static int write_at(const char *name, const void *buf, size_t len)
{
	int fd = openat(sysfs_fd, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, buf, len) != (ssize_t)len)
		ret = -EIO;
	close(fd);
	return ret;
}

int LLVMFuzzerInitialize(int *argc __maybe_unused, char ***argv __maybe_unused)
{
	verbose = -1;	/* perf's warnings about bad formats: not needed */
	if (!mkdtemp(sysfs))
		abort();
	atexit(cleanup);
	sysfs_fd = open(sysfs, O_DIRECTORY);
	if (sysfs_fd < 0 || mkdirat(sysfs_fd, "fz", 0755) ||
	    mkdirat(sysfs_fd, "fz/format", 0755) || write_at("fz/type", "9999\n", 5))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct parse_events_terms terms;
	struct parse_events_error err;
	struct perf_event_attr attr;
	struct perf_pmu *pmu;
	char name[32], event[128];
	const uint8_t *p, *end;
	LIST_HEAD(config_terms);
	__u64 value;

	if (size < 8)
		return 0;
	memcpy(&value, data, 8);
	p = data + 8;
	end = data + size;
	for (int i = 0; i < NR_FORMATS; i++) {
		const uint8_t *nul = p < end ? memchr(p, 0, end - p) : NULL;
		size_t len = nul ? (size_t)(nul - p) : (size_t)(end - p);

		snprintf(name, sizeof(name), "fz/format/f%d", i);
		if (p >= end) {
			unlinkat(sysfs_fd, name, 0);
			continue;
		}
		if (write_at(name, p, len))
			abort();
		p += len + 1;
	}

	pmu = perf_pmus__add_test_pmu(sysfs_fd, "fz");
	if (!pmu)
		return 0;

	perf_pmu__warn_invalid_formats(pmu);
	snprintf(event, sizeof(event), "f0=%#llx,f1=%#llx,f2=1", (unsigned long long)value,
		 (unsigned long long)(value >> 7));
	parse_events_terms__init(&terms);
	parse_events_error__init(&err);
	if (!parse_events_terms(&terms, event, NULL)) {
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		/* As parse-events does: attr bits only of a valid config. */
		if (!perf_pmu__config_terms(pmu, &attr, &terms, /*zero=*/false, &err))
			perf_pmu__attr_config_terms(pmu, &terms, &attr, &config_terms);
		for (int i = 0; i < NR_FORMATS; i++) {
			snprintf(name, sizeof(name), "f%d", i);
			perf_pmu__format_bits(pmu, name);
		}
	}
	parse_events_error__exit(&err);
	parse_events_terms__exit(&terms);
	free_config_terms(&config_terms);

	list_del(&pmu->list);
	perf_pmu__delete(pmu);
	return 0;
}
