// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: a perf.data file through perf's session code and our
 * AUX-sample glue, as 'perf auxsample script', 'stat' and 'report' run it
 * (their commands, builtin-auxsample-*.c, as the command line calls
 * them): header, features,
 * attrs, events, AUXTRACE_INFO to decoder configuration, AUX samples,
 * full-trace windows, decoding inline (one thread).
 *
 * Input: a whole perf.data file.  The input's length picks what runs
 * besides 'script' and 'stat': odd, script --json; a multiple of 4, the
 * hot-path report too.
 *
 * Built by scripts/fuzz-link-perf against perf's objects, with session.c,
 * header.c, util/auxsample*.c and builtin-auxsample-*.c instrumented.  Leak detection is off for
 * this harness (scripts/fuzz): perf's error paths keep what they parsed.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <internal/lib.h>
#include "debug.h"
#include "builtin-auxsample.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[] = "/tmp/perf-fuzz-data.XXXXXX";

static void cleanup(void)
{
	unlink(path);
}

int LLVMFuzzerInitialize(int *argc __maybe_unused, char ***argv __maybe_unused)
{
	int fd = mkstemp(path);

	if (fd < 0)
		abort();
	close(fd);
	atexit(cleanup);
	page_size = sysconf(_SC_PAGE_SIZE);
	verbose = -1;
	/* What the commands print is not under test; errors are. */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

/* perf auxsample @argv[0] -i <input> --depth 16 -j 1 @argv[1..] */
static void run(bool stat, const char *cmd, const char *opt)
{
	const char *argv[] = { cmd, "-i", path, "--depth", "16", "-j", "1", opt, NULL };
	int argc = opt ? 8 : 7;

	if (!strcmp(cmd, "report"))
		cmd_auxsample_report(argc, argv);
	else
		cmd_auxsample_script(argc, argv, stat);
}

/*
 * perf's reader leaves its windows of the file mapped when it has
 * processed a session's events (reader__mmap() unmaps one only to map
 * another), which costs a command line tool nothing: it exits.  This
 * harness runs thousands of commands in one process, each leaving a map
 * of the input or more: after some 40,000 inputs mmap() failed at
 * vm.max_map_count, and ASan stopped the fuzzer, out of memory.  The
 * commands are done with the input: its maps go.
 */
static void unmap_input(void)
{
	unsigned long start[64], end[64];
	unsigned int nr, gone;

	do {
		FILE *f = fopen("/proc/self/maps", "r");
		char line[4096];

		if (!f)
			abort();
		/* Gathered first: /proc/self/maps changes as they go. */
		for (nr = 0; nr < 64 && fgets(line, sizeof(line), f); ) {
			char *name = strchr(line, '/');

			if (!name)
				continue;
			name[strcspn(name, "\n")] = '\0';
			if (!strcmp(name, path) &&
			    sscanf(line, "%lx-%lx", &start[nr], &end[nr]) == 2)
				nr++;
		}
		fclose(f);
		gone = 0;
		for (unsigned int i = 0; i < nr; i++)
			gone += !munmap((void *)start[i], end[i] - start[i]);
		/* Again while a full round went: not forever where munmap() fails. */
	} while (nr == 64 && gone == nr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);

	run(false, "script", size & 1 ? "--json" : NULL);
	run(true, "stat", NULL);
	if (!(size & 3))
		run(false, "report", NULL);
	unmap_input();
	return 0;
}
