// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where a stream's trace stops: see pt-stops.h.
 */
#include <stdlib.h>
#include <string.h>
#include "backend.h"
#include "pt-stops.h"

static struct pt_stop *pt_stops__last_open(struct pt_stops *s)
{
	if (!s->nr || s->stops[s->nr - 1].until != s->len)
		return NULL;
	return &s->stops[s->nr - 1];
}

int pt_stops__packet(struct pt_stops *s, uint64_t offset, unsigned int size, bool idle,
		     bool pgd)
{
	struct pt_stop *last = pt_stops__last_open(s);

	if (last && !idle)
		last->until = offset;
	if (!pgd)
		return 0;
	if (s->nr == s->cap && s->gone > s->base) {
		size_t n = s->gone - s->base;

		memmove(s->stops, s->stops + n, (s->nr - n) * sizeof(*s->stops));
		s->nr -= n;
		s->base = s->gone;
	}
	if (s->nr == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct pt_stop *stops = realloc(s->stops, cap * sizeof(*stops));

		if (!stops)
			return -AUXSAMPLE_ERR_NOMEM;
		s->stops = stops;
		s->cap = cap;
	}
	s->stops[s->nr++] = (struct pt_stop){ .end = offset + size, .until = s->len };
	return 0;
}

void pt_stops__lost(struct pt_stops *s, uint64_t offset)
{
	struct pt_stop *last = pt_stops__last_open(s);

	if (last)
		last->until = offset;
}

uint64_t pt_stops__before(const struct pt_stops *s, uint64_t offset)
{
	size_t lo = s->gone - s->base, hi = s->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->stops[mid].end <= offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo + s->base;
}

uint64_t pt_stops__of(const struct pt_stops *s, uint64_t end)
{
	uint64_t n = pt_stops__before(s, end);

	return n > s->gone && end <= pt_stops__at(s, n)->until ? n : 0;
}

void pt_stops__let_go(struct pt_stops *s, uint64_t n)
{
	/* Only forward, and only stops found. */
	if (n > s->gone + 1 && n <= s->base + s->nr)
		s->gone = n - 1;
}

void pt_stops__exit(struct pt_stops *s)
{
	free(s->stops);
	s->stops = NULL;
	s->nr = s->cap = 0;
	s->base = s->gone = 0;
}
