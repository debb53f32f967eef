// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where a stream's trace stops (pt-stops.c), with the stops behind a
 * walk let go of: random scans of packets, against a plain list of all
 * of them.  A snippet ending at a stop kept gets the stop the list says;
 * one ending at a stop let go of, or at none, gets 0.
 */
#include <stdlib.h>
#include <string.h>
#include "tests.h"
#include "../pt-stops.h"

#define NR_PACKETS	20000

struct stops_model {
	struct pt_stop	stops[NR_PACKETS];
	uint64_t	nr;
	uint32_t	seed;
};

static uint32_t stops_model__rnd(struct stops_model *m)
{
	m->seed = m->seed * 1103515245 + 12345;
	return m->seed >> 8;
}

/* As pt_stops__of() without letting go: the list's answer. */
static uint64_t stops_model__of(const struct stops_model *m, uint64_t end)
{
	uint64_t lo = 0, hi = m->nr;

	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;

		if (m->stops[mid].end <= end)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && end <= m->stops[lo - 1].until ? lo : 0;
}

/* A snippet's end near the last stops: at one, in its timing, or past it. */
static uint64_t stops_model__end(struct stops_model *m, uint64_t offset)
{
	uint64_t back = m->nr < 8 ? m->nr : 8;
	const struct pt_stop *stop;

	if (!back || stops_model__rnd(m) % 4 == 0)
		return stops_model__rnd(m) % (offset + 1);
	stop = &m->stops[m->nr - 1 - stops_model__rnd(m) % back];
	return stop->end + stops_model__rnd(m) % 8;
}

static int check_stops(uint32_t seed)
{
	struct stops_model *m = calloc(1, sizeof(*m));
	struct pt_stops s = { .len = UINT64_MAX };
	uint64_t offset = 0, walked = 0;
	bool open = false;
	int ret = TEST_FAIL;

	if (!T_CHECK(m))
		return TEST_FAIL;
	m->seed = seed;
	for (unsigned int i = 0; i < NR_PACKETS; i++) {
		uint32_t r = stops_model__rnd(m);
		bool pgd = r % 5 == 0, idle = !pgd && r % 3 == 0;
		unsigned int size = 1 + r % 7;

		if (open && !idle)
			m->stops[m->nr - 1].until = offset;
		if (pgd)
			m->stops[m->nr++] = (struct pt_stop){ .end = offset + size, .until = s.len };
		if (pgd || (open && !idle)) {
			if (!T_CHECK(!pt_stops__packet(&s, offset, size, idle, pgd)))
				goto out;
			open = pgd;
		}
		offset += size;
		/* A walk on to the last stop but a few, now and then. */
		if (r % 64 == 0 && m->nr > walked + 4) {
			walked = m->nr - stops_model__rnd(m) % 4;
			pt_stops__let_go(&s, walked);
		}
		for (unsigned int k = 0; k < 2; k++) {
			uint64_t end = stops_model__end(m, offset);
			uint64_t want = stops_model__of(m, end), got = pt_stops__of(&s, end);

			if (want && want < walked)
				want = 0;
			if (!T_CHECK(got == want) ||
			    !T_CHECK(!got || pt_stops__at(&s, got)->end == m->stops[got - 1].end))
				goto out;
		}
	}
	/* The array kept what lies ahead of the walk, not every stop. */
	if (!T_CHECK(m->nr > 1000 && s.base > 0 && s.nr < m->nr / 2))
		goto out;
	pr_test("seed %u: %lu stops, %zu in the array at the end\n", seed,
		(unsigned long)m->nr, s.nr);
	ret = TEST_OK;
out:
	pt_stops__exit(&s);
	free(m);
	return ret;
}

static int test_stops(void)
{
	for (uint32_t seed = 1; seed <= 8; seed++) {
		if (check_stops(seed))
			return TEST_FAIL;
	}
	return TEST_OK;
}

const struct test tests_pt_stops[] = {
	{ "a stream's stops, those behind the walk let go of", test_stops },
	{ NULL, NULL },
};
