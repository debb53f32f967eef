/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_TESTS_H
#define __AUXSAMPLE_TESTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum { TEST_OK = 0, TEST_FAIL = 1, TEST_SKIP = 2 };

/* Why the running test skipped, or NULL. */
extern const char *test_skip_reason;
extern int test_verbose;

#define pr_test(fmt, ...)						\
	do {								\
		if (test_verbose)					\
			fprintf(stderr, "  " fmt, ##__VA_ARGS__);	\
	} while (0)

/*
 * @cond, or false after saying which check failed; the test then returns
 * TEST_FAIL itself (a macro that returned would hide the test's flow).
 */
#define T_CHECK(cond)	test_check(!!(cond), __FILE__, __LINE__, #cond)

bool test_check(bool ok, const char *file, int line, const char *what);

/*
 * Run @fn(@arg) in a child process that may take @seconds: a test of an
 * input that once crashed or hung the decoder fails, with the reason, if
 * it does so again, instead of taking the test run down with it.
 * Returns what @fn returned, or TEST_FAIL.
 */
int test_run_bounded(int (*fn)(void *arg), void *arg, unsigned int seconds);

/* A test runs fn(), or, for the cases of a table-driven test, fn_arg(arg). */
struct test {
	const char	*name;
	int		(*fn)(void);
	int		(*fn_arg)(const void *arg);
	const void	*arg;
};

extern const struct test tests_backends[];
extern const struct test tests_x86_branch[];
extern const struct test tests_x86_libipt[];
extern const struct test tests_decoder[];
extern const struct test tests_late[];
extern const struct test tests_pt_real[];
extern const struct test tests_pt_repro[];
extern const struct test tests_pt_walk[];
extern const struct test tests_pt_walk_kernel[];
extern const struct test tests_pt_stream[];
extern const struct test tests_pt_stops[];
extern const struct test tests_pt_blocks[];
extern const struct test tests_pt_image[];
extern const struct test tests_etm_real[];
extern const struct test tests_etm_flow[];
extern const struct test tests_etm_repro[];

/* The Intel PT walker and libipt on the same snippets (pt-pair.c). */
struct auxsample_config;
struct auxsample_decoder;

/*
 * A stream's trace as a decoder sees it through its fetch callback: the
 * bytes fetched and not let go are the trace's, all others poison.
 */
struct pair_view {
	const uint8_t			*trace;
	uint8_t				*buf;
	size_t				len;
	size_t				lo, hi;		/* the bytes there */
};

struct pair {
	struct auxsample_decoder	*ref;		/* libipt */
	struct auxsample_decoder	*walker;
	struct pair_view		views[2];	/* ref's, walker's streams */
	unsigned int			decodes;
	unsigned int			walked;		/* without falling back */
	unsigned int			timed;		/* branches with cycles */
	unsigned int			skims;		/* the walker's (skim.c) */
	unsigned int			skims_lost;	/* ... walked again whole */
	int				result;		/* libipt's, last compared */
	int				ref_stream;	/* libipt's stream's, last stretch */
	/* libipt's stream lost a stop the walker kept: no reference for the rest */
	bool				ref_lost;
	uint64_t			ref_short;	/* bytes the reference's stretch lacks */
	/* The stream's cuts so far, for libipt on its bytes up to the last one's end */
	struct auxsample_config		*ref_config;
	uint64_t			(*cuts)[2];
	size_t				nr_cuts, cap_cuts;
	unsigned int			max;
	uint64_t			sample_ip;
};

int pair__init(struct pair *pr, struct auxsample_config *config);
void pair__exit(struct pair *pr);
/* The sample's IP, for the late-sample rule (config.kernel_start): both. */
void pair__set_sample_ip(struct pair *pr, uint64_t ip);
/* 0 when both decode the @len bytes at @buf alike, in everything public. */
int pair__compare(struct pair *pr, const uint8_t *buf, size_t len, unsigned int max);
/*
 * The same for a stream (auxsample_decoder__stream_begin(), _to()), each
 * decoder reading it through a pair_view.
 */
int pair__stream_begin(struct pair *pr, const uint8_t *buf, size_t len, unsigned int max);
int pair__stream_to(struct pair *pr, uint64_t start, uint64_t end);
/* Snippets cut and flipped at random out of @trace: 0 when all agree (pt-pair.c). */
int pair__cut_flipped(struct pair *pr, const uint8_t *trace, size_t len, uint32_t seed,
		      int rounds, uint64_t (*sample_ip)(void *arg, int round), void *arg);

#endif /* __AUXSAMPLE_TESTS_H */
