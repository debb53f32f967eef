/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_SCRIPT_H
#define __PERF_AUXSAMPLE_SCRIPT_H

#include <stdbool.h>

/*
 * perf auxsample script: each AUX sample with its virtual LBR and call
 * chain; perf auxsample stat: what the AUX samples of a file hold.
 */
struct auxsample_script_opts {
	const char	*input;
	unsigned int	depth;		/* branches per sample */
	bool		json;
	bool		stat;		/* statistics instead of samples */
	/* decode the trace buffers, not AUX samples (auxsample-etm.h) */
	bool		full_trace;
	bool		autofdo;	/* full trace as AutoFDO text */
};

int auxsample_script__run(const struct auxsample_script_opts *opts);

#endif /* __PERF_AUXSAMPLE_SCRIPT_H */
