// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libauxsample unit tests: one line per test, 'PASS  name', 'FAIL  name'
 * or 'SKIP  name (reason)', and exit 1 if any failed.
 *
 * usage: auxsample-tests [-v] [name-substring]
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "tests.h"

const char *test_skip_reason;
int test_verbose;

bool test_check(bool ok, const char *file, int line, const char *what)
{
	if (!ok)
		fprintf(stderr, "  %s:%d: %s\n", file, line, what);
	return ok;
}

int test_run_bounded(int (*fn)(void *arg), void *arg, unsigned int seconds)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("  fork");
		return TEST_FAIL;
	}
	if (!pid) {
		alarm(seconds);
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid) {
		perror("  waitpid");
		return TEST_FAIL;
	}
	if (WIFSIGNALED(status)) {
		if (WTERMSIG(status) == SIGALRM)
			fprintf(stderr, "  still running after %u s\n", seconds);
		else
			fprintf(stderr, "  killed by signal %d (%s)\n", WTERMSIG(status),
				strsignal(WTERMSIG(status)));
		return TEST_FAIL;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : TEST_FAIL;
}

/* The suites of the backends this build has (the Makefile's AUXSAMPLE_*). */
static const struct test *suites[] = {
	tests_backends,
	tests_x86_branch,
#ifdef AUXSAMPLE_PT
	tests_x86_libipt,
	tests_decoder,
	tests_late,
	tests_pt_real,
	tests_pt_repro,
	tests_pt_walk,
	tests_pt_walk_kernel,
	tests_pt_stream,
	tests_pt_stops,
	tests_pt_blocks,
	tests_pt_image,
#endif
#ifdef AUXSAMPLE_ETM
	tests_etm_real,
	tests_etm_flow,
	tests_etm_repro,
#endif
};

int main(int argc, char **argv)
{
	const char *filter = NULL;
	int failed = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v"))
			test_verbose = 1;
		else
			filter = argv[i];
	}

	for (size_t s = 0; s < ARRAY_SIZE(suites); s++) {
		for (const struct test *t = suites[s]; t->name; t++) {
			int ret;

			if (filter && !strstr(t->name, filter))
				continue;
			test_skip_reason = NULL;
			ret = t->fn ? t->fn() : t->fn_arg(t->arg);
			if (ret == TEST_OK) {
				printf("PASS  libauxsample: %s\n", t->name);
			} else if (ret == TEST_SKIP) {
				printf("SKIP  libauxsample: %s (%s)\n", t->name,
				       test_skip_reason ?: "no reason given");
			} else {
				printf("FAIL  libauxsample: %s\n", t->name);
				failed++;
			}
			fflush(stdout);
		}
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
