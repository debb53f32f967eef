/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_SIM_PROGRESS_H
#define __PERF_AUXSAMPLE_SIM_PROGRESS_H

#include <linux/types.h>
#include <stdbool.h>
#include <time.h>

/*
 * perf auxsample simulate's progress while it steps: instructions,
 * samples, instructions per second and bytes written, on one line of
 * stderr.  perf's ui_progress draws a bar towards a known total; a
 * simulation has none, so this is the status line that perf auxsample
 * shows while decoding, in the same place: on a terminal by default,
 * rewritten every second and cleared at the end; elsewhere only when
 * asked for, a line every ten seconds, so that logs stay readable.
 */
enum auxsample_sim_progress_mode {
	SIM_PROGRESS_AUTO,	/* on a terminal */
	SIM_PROGRESS_ON,
	SIM_PROGRESS_OFF,
};

struct auxsample_sim_progress {
	bool		enabled;
	bool		tty;
	bool		shown;		/* a line on the terminal to clear */
	struct timespec	last;
	u64		last_insns;
};

void auxsample_sim_progress__init(struct auxsample_sim_progress *p,
				  enum auxsample_sim_progress_mode mode);
/* Whether a line is due: cheap enough to ask at every step. */
bool auxsample_sim_progress__due(struct auxsample_sim_progress *p);
void auxsample_sim_progress__show(struct auxsample_sim_progress *p, u64 insns, u64 samples,
				  u64 bytes);
/* Clear the terminal's line before the closing message. */
void auxsample_sim_progress__finish(struct auxsample_sim_progress *p);

#endif /* __PERF_AUXSAMPLE_SIM_PROGRESS_H */
