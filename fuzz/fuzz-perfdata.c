// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: a perf.data file through perf's session code and our
 * AUX-sample glue, as 'perf auxsample script', 'stat' and 'report' run it
 * (auxsample_script__run(), auxsample_hot__run()): header, features,
 * attrs, events, AUXTRACE_INFO to decoder configuration, AUX samples,
 * full-trace windows, decoding inline (one thread).
 *
 * Input: a whole perf.data file.  The input's length picks what runs
 * besides 'script' and 'stat': odd, script --json; a multiple of 4, the
 * hot-path report too.
 *
 * Built by scripts/fuzz-link-perf against perf's objects, with session.c,
 * header.c and util/auxsample*.c instrumented.  Leak detection is off for
 * this harness (scripts/fuzz): perf's error paths keep what they parsed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <internal/lib.h>
#include "debug.h"
#include "auxsample-script.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct auxsample_script_opts script = {
		.input = path,
		.depth = 16,
		.threads = 1,
		.reuse = true,
		.window = 64 * 1024,
		.json = size & 1,
	};
	struct auxsample_hot_opts hot = {
		.input = path,
		.depth = 16,
		.threads = 1,
		.reuse = true,
		.window = 64 * 1024,
	};
	int fd = open(path, O_WRONLY | O_TRUNC);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);

	auxsample_script__run(&script);
	script.stat = true;
	script.json = false;
	auxsample_script__run(&script);
	if (!(size & 3))
		auxsample_hot__run(&hot);
	return 0;
}
