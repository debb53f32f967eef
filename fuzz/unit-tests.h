/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The harnesses include libauxsample's unit tests for their loaders of
 * the shared data; this is what the tests' main.c gives them.  The
 * harnesses run none of the tests themselves.
 */
#ifndef __FUZZ_UNIT_TESTS_H
#define __FUZZ_UNIT_TESTS_H

const char *test_skip_reason;
int test_verbose;

int test_run_bounded(int (*fn)(void *arg), void *arg, unsigned int seconds);
int test_run_bounded(int (*fn)(void *arg), void *arg, unsigned int seconds)
{
	return fn(arg);
}

bool test_check(bool ok, const char *file, int line, const char *what)
{
	if (!ok)
		fprintf(stderr, "  %s:%d: %s\n", file, line, what);
	return ok;
}

#endif /* __FUZZ_UNIT_TESTS_H */
