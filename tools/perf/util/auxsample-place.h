/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_PLACE_H
#define __PERF_AUXSAMPLE_PLACE_H

#include <linux/types.h>

struct evsel;
struct perf_sample;
union perf_event;

/*
 * Samples beside a full trace find their trace by their CPU.  Events
 * recorded without PERF_SAMPLE_CPU (perf record without -a, -C or
 * --sample-cpu: e.g. perf record -e cycles -e intel_pt// -- cmd) say none,
 * so their thread places them: the sideband, in time order, says on which
 * CPU each thread runs where it is certain:
 *
 * - context switches (PERF_RECORD_SWITCH, _CPU_WIDE) with the CPU in their
 *   sample id: a thread switched in on a CPU runs there until it is
 *   switched out;
 * - without them, ITRACE_START: the AUX area event of each CPU logs it the
 *   first time the thread runs on that CPU, so a thread that has one on a
 *   single CPU so far runs there; after one on a second CPU, it may have
 *   gone back to the first unseen, and its place is not known.
 */
struct auxsample_place;

struct auxsample_place *auxsample_place__new(void);
void auxsample_place__delete(struct auxsample_place *place);
/* A sideband event and its parsed sample id; others are ignored. */
int auxsample_place__event(struct auxsample_place *place, union perf_event *event,
			   struct perf_sample *sample);
/* Whether @evsel's samples say their CPU. */
bool auxsample_place__has_cpu(const struct evsel *evsel);
/*
 * The CPU @sample's thread runs on now (at the sample, the events before
 * it given), or -1 when the sideband does not say for certain.
 */
int auxsample_place__cpu(struct auxsample_place *place, const struct perf_sample *sample);
/*
 * Say that @nr samples carry no CPU and could not be placed, and what to
 * record instead; @who begins the message ("perf auxsample stat: ").
 */
void auxsample_place__warn_unplaced(const char *who, u64 nr);

#endif /* __PERF_AUXSAMPLE_PLACE_H */
