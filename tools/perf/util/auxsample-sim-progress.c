// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample simulate: a status line while it steps (see
 * auxsample-sim-progress.h).  Single-stepping runs at some 20,000
 * instructions a second, so a program of a few million instructions
 * takes minutes: the line says that it is moving and how fast.
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <linux/time64.h>

#include "auxsample-sim-progress.h"
#include "debug.h"

#define SIM_PROGRESS_TTY_MS	1000	/* between lines on a terminal */
#define SIM_PROGRESS_LOG_MS	10000	/* between lines elsewhere */

static u64 timespec__ms(const struct timespec *ts)
{
	return (u64)ts->tv_sec * MSEC_PER_SEC + ts->tv_nsec / NSEC_PER_MSEC;
}

void auxsample_sim_progress__init(struct auxsample_sim_progress *p,
				  enum auxsample_sim_progress_mode mode)
{
	p->tty = isatty(STDERR_FILENO);
	p->enabled = mode == SIM_PROGRESS_ON ||
		     (mode == SIM_PROGRESS_AUTO && p->tty && !quiet && verbose <= 0);
	p->shown = false;
	p->last_insns = 0;
	clock_gettime(CLOCK_MONOTONIC, &p->last);
}

bool auxsample_sim_progress__due(struct auxsample_sim_progress *p)
{
	u64 interval = p->tty ? SIM_PROGRESS_TTY_MS : SIM_PROGRESS_LOG_MS;
	struct timespec now;

	if (!p->enabled)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return timespec__ms(&now) - timespec__ms(&p->last) >= interval;
}

void auxsample_sim_progress__show(struct auxsample_sim_progress *p, u64 insns, u64 samples,
				  u64 bytes)
{
	struct timespec now;
	u64 ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = timespec__ms(&now) - timespec__ms(&p->last) ?: 1;
	fprintf(stderr, "%s[ perf auxsample simulate: %" PRIu64 " instructions, %" PRIu64
		" samples, %" PRIu64 " instructions/s, %.3f MB written ]%s",
		p->tty ? "\r" : "", insns, samples, (insns - p->last_insns) * MSEC_PER_SEC / ms,
		bytes / 1024.0 / 1024.0, p->tty ? "\033[K" : "\n");
	p->shown = p->tty;
	p->last = now;
	p->last_insns = insns;
}

void auxsample_sim_progress__finish(struct auxsample_sim_progress *p)
{
	if (p->shown)
		fprintf(stderr, "\r\033[K");
	p->shown = false;
}
