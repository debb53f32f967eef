// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample simulate: when to stop before the program ends (see
 * auxsample-sim-stop.h).  A signal that kills perf mid-write leaves a
 * perf.data that nothing can read; one that is waited for here lets the
 * simulator finish its files first, as perf record finishes its own.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <linux/kernel.h>
#include <linux/time64.h>

#include "auxsample-sim-stop.h"

static const struct {
	int		sig;
	const char	*name;
} stop_signals[] = {
	{ SIGINT, "SIGINT" }, { SIGTERM, "SIGTERM" }, { SIGHUP, "SIGHUP" },
};

static void timespec__add_ms(struct timespec *ts, long ms)
{
	ts->tv_sec += ms / MSEC_PER_SEC;
	ts->tv_nsec += (ms % MSEC_PER_SEC) * NSEC_PER_MSEC;
	if (ts->tv_nsec >= NSEC_PER_SEC) {
		ts->tv_sec++;
		ts->tv_nsec -= NSEC_PER_SEC;
	}
}

/* @a - @b in ms, rounded up; 0 if @a is not later than @b. */
static long timespec__ms_until(const struct timespec *a, const struct timespec *b)
{
	long long ns = (a->tv_sec - b->tv_sec) * NSEC_PER_SEC + (a->tv_nsec - b->tv_nsec);

	return ns > 0 ? (ns + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC : 0;
}

int auxsample_sim_stop__begin(struct auxsample_sim_stop *stop, u64 max_insns,
			      unsigned long duration)
{
	memset(stop, 0, sizeof(*stop));
	stop->max_insns = max_insns;
	stop->duration = duration;
	sigemptyset(&stop->waited);
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++)
		sigaddset(&stop->waited, stop_signals[i].sig);
	sigaddset(&stop->waited, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &stop->waited, &stop->old_mask))
		return -errno;
	stop->blocked = true;
	if (duration) {
		clock_gettime(CLOCK_MONOTONIC, &stop->deadline);
		stop->deadline.tv_sec += duration;
	}
	return 0;
}

static void auxsample_sim_stop__signal(struct auxsample_sim_stop *stop, int sig)
{
	if (sig <= 0 || sig == SIGCHLD)
		return;
	if (!stop->nr_signals++)
		stop->signal = sig;
	/* A signal stops a run that a bound has stopped already, too. */
	stop->why = SIM_STOP_SIGNAL;
}

void auxsample_sim_stop__end(struct auxsample_sim_stop *stop)
{
	const struct timespec now = { 0, 0 };
	sigset_t late = stop->waited;
	int sig;

	if (!stop->blocked)
		return;
	/* Stop signals that came too late to be waited for still count. */
	sigdelset(&late, SIGCHLD);
	while ((sig = sigtimedwait(&late, NULL, &now)) > 0)
		auxsample_sim_stop__signal(stop, sig);
	sigprocmask(SIG_SETMASK, &stop->old_mask, NULL);
	stop->blocked = false;
}

void auxsample_sim_stop__child(const struct auxsample_sim_stop *stop)
{
	if (stop->blocked)
		sigprocmask(SIG_SETMASK, &stop->old_mask, NULL);
}

/* --duration: the milliseconds left, -1 without one; the stop when none are. */
static long auxsample_sim_stop__time_left(struct auxsample_sim_stop *stop)
{
	struct timespec now;
	long left;

	if (!stop->duration || stop->why != SIM_STOP_NONE)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	left = timespec__ms_until(&stop->deadline, &now);
	if (!left)
		stop->why = SIM_STOP_DURATION;
	return left;
}

int auxsample_sim_stop__wait(struct auxsample_sim_stop *stop, int timeout_ms)
{
	struct timespec timeout = { 0, 0 };
	long ms = timeout_ms, left = auxsample_sim_stop__time_left(stop);
	int sig;

	if (!left)
		return 0;
	if (left > 0 && (ms < 0 || left < ms))
		ms = left;
	if (ms >= 0)
		timespec__add_ms(&timeout, ms);
	sig = sigtimedwait(&stop->waited, NULL, ms < 0 ? NULL : &timeout);
	if (sig < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	auxsample_sim_stop__signal(stop, sig);
	return 0;
}

void auxsample_sim_stop__check(struct auxsample_sim_stop *stop, u64 nr_insns)
{
	if (stop->max_insns && nr_insns >= stop->max_insns && stop->why == SIM_STOP_NONE)
		stop->why = SIM_STOP_MAX_INSNS;
	auxsample_sim_stop__time_left(stop);
}

const char *auxsample_sim_stop__describe(const struct auxsample_sim_stop *stop, char *buf,
					 size_t size)
{
	switch (stop->why) {
	case SIM_STOP_SIGNAL:
		snprintf(buf, size, "by signal %d", stop->signal);
		for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++) {
			if (stop_signals[i].sig == stop->signal)
				snprintf(buf, size, "by %s", stop_signals[i].name);
		}
		break;
	case SIM_STOP_DURATION:
		snprintf(buf, size, "at --duration %lus", stop->duration);
		break;
	case SIM_STOP_MAX_INSNS:
		snprintf(buf, size, "at --max-instructions %llu",
			 (unsigned long long)stop->max_insns);
		break;
	case SIM_STOP_NONE:
	default:
		snprintf(buf, size, "at the end");
		break;
	}
	return buf;
}
