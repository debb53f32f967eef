/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_RECORD_H
#define __PERF_AUXSAMPLE_RECORD_H

struct evlist;
struct option;
struct record_opts;

/*
 * perf record -A[<pmu>[/<terms>/[<modifiers>]]][,<size>]: put every
 * sampled event in one group led by an AUX area event (intel_pt ...), so
 * that each sample carries the last <size> bytes of its trace.
 *
 * The option callback wants .value = struct evlist ** and .data = struct
 * record_opts *; it adds the AUX event at the option's position, so that
 * a following --filter applies to it.  auxsample_record__setup() builds
 * the group once all options are parsed.
 */
int auxsample_record__parse_opt(const struct option *opt, const char *str,
				int unset);
int auxsample_record__setup(struct evlist *evlist, struct record_opts *opts);
void auxsample_record__exit(struct record_opts *opts);

#endif /* __PERF_AUXSAMPLE_RECORD_H */
