/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_SIM_STOP_H
#define __PERF_AUXSAMPLE_SIM_STOP_H

#include <linux/types.h>
#include <signal.h>
#include <stddef.h>
#include <time.h>

/*
 * When perf auxsample simulate stops before its program ends: on SIGINT,
 * SIGTERM or SIGHUP (as perf record stops on SIGINT and SIGTERM), after
 * --duration, or at --max-instructions.
 *
 * The simulator waits for its tracees here rather than in a blocking
 * waitpid(): the stop signals and SIGCHLD are blocked while it runs and
 * taken with sigtimedwait(), so that no signal is lost between a check
 * and the wait, no handler and no global is needed, and no other system
 * call of the simulator is interrupted.
 */
enum auxsample_sim_stop_why {
	SIM_STOP_NONE,
	SIM_STOP_SIGNAL,
	SIM_STOP_DURATION,
	SIM_STOP_MAX_INSNS,
};

struct auxsample_sim_stop {
	sigset_t			waited;		/* blocked while simulating */
	sigset_t			old_mask;
	bool				blocked;
	enum auxsample_sim_stop_why	why;
	int				signal;		/* the first stop signal */
	unsigned int			nr_signals;
	u64				max_insns;	/* 0: no bound */
	unsigned long			duration;	/* seconds, 0: no bound */
	struct timespec			deadline;	/* of @duration */
};

/* Block the stop signals and SIGCHLD; start the clock of @duration. */
int auxsample_sim_stop__begin(struct auxsample_sim_stop *stop, u64 max_insns,
			      unsigned long duration);
/* Perf's own signal mask back; stop signals not taken yet count first. */
void auxsample_sim_stop__end(struct auxsample_sim_stop *stop);
/* In a child forked to run the program: the signal mask perf had. */
void auxsample_sim_stop__child(const struct auxsample_sim_stop *stop);

/*
 * Wait until a child may have changed state, a stop signal comes, or
 * @timeout_ms passes (-1: no limit but --duration).  0, or a negative
 * errno.
 */
int auxsample_sim_stop__wait(struct auxsample_sim_stop *stop, int timeout_ms);
/* @nr_insns simulated so far: stop at --max-instructions, or after --duration. */
void auxsample_sim_stop__check(struct auxsample_sim_stop *stop, u64 nr_insns);

static inline enum auxsample_sim_stop_why
auxsample_sim_stop__why(const struct auxsample_sim_stop *stop)
{
	return stop->why;
}

/* How it stopped, for the closing message: "by SIGINT", "at --duration 5s" ... */
const char *auxsample_sim_stop__describe(const struct auxsample_sim_stop *stop, char *buf,
					 size_t size);

#endif /* __PERF_AUXSAMPLE_SIM_STOP_H */
