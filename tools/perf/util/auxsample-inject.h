/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_INJECT_H
#define __PERF_AUXSAMPLE_INJECT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "data.h"
#include "header.h"
#include "tool.h"

struct auxsample_profile;
struct perf_session;
union perf_event;

/*
 * perf auxsample inject: the input's events, with the samples that carry
 * AUX area data rewritten to carry the virtual LBR that perf report shows
 * for them as a branch stack (and, with -g, the call chain their snippet
 * shows) instead of the trace.  The decoding is perf report's
 * (util/auxsample-report.c); the rewriting and the header are perf
 * inject's way: perf_event__synthesize_sample() for each sample, and the
 * attrs changed only when the header is written, after the last input
 * sample is parsed.
 */
struct auxsample_inject {
	struct perf_tool	tool;
	struct perf_session	*session;
	struct perf_data	output;
	struct feat_copier	fc;
	const char		*input;
	union perf_event	*event;		/* the sample being rewritten */
	unsigned int		depth;
	unsigned int		threads;	/* decoding threads, 0: per CPU */
	bool			callchain;
	bool			force;
	/* no AUX samples: the samples beside a full trace, with their windows */
	bool			windows;
	/* the input is a pipe: attrs and features come as events */
	bool			pipe;
	u64			data_offset;
	u64			bytes_written;
	u64			samples;	/* AUX samples rewritten */
	u64			decoded;	/* ... with a branch in their stack */
	/* The input's feature sections, copied into the output. */
	struct perf_file_section secs[HEADER_FEAT_BITS];
	/* A pipe's: the feature events' data. */
	void			*feat_data[HEADER_FEAT_BITS];
	size_t			feat_size[HEADER_FEAT_BITS];
	/*
	 * --bolt <binary>, --autofdo: the virtual LBRs summed up into a
	 * profile, written as text instead of a perf.data.
	 */
	const char		*bolt;
	bool			autofdo;
	struct auxsample_profile *profile;
	FILE			*profile_out;
};

/* What the virtual LBR is: every kind of taken branch, with its type. */

/*
 * Read @inject->input and write @inject->output (or, with a profile, the
 * profile as text there); @inject is zeroed but for the options above.
 * Errors have been reported; no partial output is left behind.
 */
int auxsample_inject__run(struct auxsample_inject *inject);

#endif /* __PERF_AUXSAMPLE_INJECT_H */
