/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_PT_STOPS_H
#define __AUXSAMPLE_PT_STOPS_H

/*
 * Where a stream's trace stops (pt-stops.c), for both Intel PT backends'
 * stream decoding (pt-stream.c, pt-walk-stream.c): a sample's snippet
 * ends at a TIP.PGD, then at most timing packets, so its branches are
 * those before the n-th TIP.PGD, n the number of them before its end.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pt_stop {
	uint64_t	end;		/* just past the TIP.PGD */
	uint64_t	until;		/* the next packet of the flow, or the end */
};

/*
 * The stops, counted from 1 from the stream's first, as pt_stops__of()
 * counts them: the n-th at stops[n - 1 - @base].  The first @gone are
 * let go of (pt_stops__let_go()); the array keeps them until it would
 * grow, then moves the others down (@base catches up with @gone).
 */
struct pt_stops {
	struct pt_stop	*stops;
	size_t		nr;		/* in the array */
	size_t		cap;
	uint64_t	base;		/* stops no longer in the array */
	uint64_t	gone;		/* stops let go of, @base or more */
	uint64_t	len;		/* of the stream */
};

/*
 * The packet at @offset, as a scan of the stream reads them in order:
 * the end of the last stop's timing unless @idle, a new stop after it if
 * @pgd (a TIP.PGD of @size bytes).  0 or -AUXSAMPLE_ERR_NOMEM.
 */
int pt_stops__packet(struct pt_stops *s, uint64_t offset, unsigned int size, bool idle,
		     bool pgd);
/* The scan lost the packets at @offset (cut or corrupt): the last stop's timing ends. */
void pt_stops__lost(struct pt_stops *s, uint64_t offset);
/* The number of stops before @offset, those let go of counted as before it. */
uint64_t pt_stops__before(const struct pt_stops *s, uint64_t offset);
/*
 * The stop a snippet ending at @end ends at, counted from 1: 0 where it
 * ends at none (before the first, or past the timing after its stop) or
 * at one let go of.
 */
uint64_t pt_stops__of(const struct pt_stops *s, uint64_t end);
/* The @n-th stop, counted from 1 (pt_stops__of()'s): one kept. */
static inline const struct pt_stop *pt_stops__at(const struct pt_stops *s, uint64_t n)
{
	return &s->stops[n - 1 - s->base];
}
/*
 * The stops before the @n-th, counted from 1, let go of: no snippet is
 * asked for that ends there any more.  The @n-th is kept, and so are
 * all where fewer than @n were found (a later scan finds the rest).  A
 * stream's stops then take what those ahead of its decoder take, at
 * their most, not all its samples'.
 */
void pt_stops__let_go(struct pt_stops *s, uint64_t n);
void pt_stops__exit(struct pt_stops *s);

#endif /* __AUXSAMPLE_PT_STOPS_H */
