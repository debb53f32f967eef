/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_SCRIPT_H
#define __PERF_AUXSAMPLE_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/*
 * perf auxsample script: each AUX sample with its virtual LBR and call
 * chain; perf auxsample stat: what the AUX samples of a file hold.
 */
struct auxsample_script_opts {
	const char	*input;
	unsigned int	depth;		/* branches per sample */
	unsigned int	threads;	/* decoding threads, 0: per CPU, 1: inline */
	bool		json;
	bool		stat;		/* statistics instead of samples */
	bool		reuse;		/* decode overlapping snippets once */
	u64		window;		/* bytes before a sample beside a full trace */
	/* decode the trace buffers, not AUX samples (auxsample-etm.h) */
	bool		full_trace;
	bool		autofdo;	/* full trace as AutoFDO text */
};

int auxsample_script__run(const struct auxsample_script_opts *opts);

/*
 * perf auxsample report: hot paths in the virtual LBRs of all AUX samples:
 * branch edges, loops with their trip counts, basic blocks and calls.
 */
struct auxsample_hot_opts {
	const char	*input;
	unsigned int	depth;		/* branches per sample */
	unsigned int	max_entries;	/* per section, 0: all */
	unsigned int	threads;	/* decoding threads, 0: per CPU, 1: inline */
	const char	*percent_limit;	/* hide items under it (a number) */
	const char	*show;		/* sections: edges,loops,blocks,calls */
	const char	*comms;		/* only samples of these commands */
	const char	*dsos;		/* only items in these dsos */
	const char	*symbols;	/* only items in these functions */
	bool		json;
	bool		reuse;		/* decode overlapping snippets once */
	u64		window;		/* bytes before a sample beside a full trace */
};

int auxsample_hot__run(const struct auxsample_hot_opts *opts);

/* How many bytes @cur's snippet shares with the end of @prev's, of its start. */
size_t auxsample__overlap(const void *prev, size_t prev_size, const void *cur, size_t size);

#endif /* __PERF_AUXSAMPLE_SCRIPT_H */
