// SPDX-License-Identifier: GPL-2.0
/*
 * Where the samples that carry no CPU were taken: the CPU their thread
 * ran on, from the sideband, where it is certain (auxsample-place.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <linux/err.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>

#include "auxsample-place.h"
#include "debug.h"
#include "event.h"
#include "evsel.h"
#include "hashmap.h"
#include "sample.h"

/* A thread, as the sideband has shown it so far. */
struct place_thread {
	int	cpu;		/* where it runs now; -1: not known */
	int	itrace_cpu;	/* of its first ITRACE_START; -1: none yet */
	bool	switches;	/* context switches say where it runs */
	bool	moved;		/* ITRACE_STARTs on two CPUs, no switches */
};

struct auxsample_place {
	struct hashmap	*threads;	/* tid -> struct place_thread */
};

static size_t place__hash(long key, void *ctx __maybe_unused)
{
	return key;
}

static bool place__equal(long key1, long key2, void *ctx __maybe_unused)
{
	return key1 == key2;
}

struct auxsample_place *auxsample_place__new(void)
{
	struct auxsample_place *place = zalloc(sizeof(*place));

	if (!place)
		return NULL;
	place->threads = hashmap__new(place__hash, place__equal, NULL);
	if (IS_ERR(place->threads)) {
		free(place);
		return NULL;
	}
	return place;
}

void auxsample_place__delete(struct auxsample_place *place)
{
	struct hashmap_entry *cur;
	size_t bkt;

	if (!place)
		return;
	hashmap__for_each_entry(place->threads, cur, bkt)
		free(cur->pvalue);
	hashmap__free(place->threads);
	free(place);
}

static struct place_thread *place__thread(struct auxsample_place *place, u32 tid)
{
	struct place_thread *t;

	if (hashmap__find(place->threads, tid, &t))
		return t;
	t = malloc(sizeof(*t));
	if (!t)
		return NULL;
	*t = (struct place_thread){ .cpu = -1, .itrace_cpu = -1 };
	if (hashmap__add(place->threads, tid, t)) {
		free(t);
		return NULL;
	}
	return t;
}

/* @tid switched in on, or out of, @cpu. */
static int place__switch(struct auxsample_place *place, u32 tid, int cpu, bool in)
{
	struct place_thread *t = place__thread(place, tid);

	if (!t)
		return -ENOMEM;
	t->switches = true;
	if (in)
		t->cpu = cpu;
	/* Clocks of CPUs differ a little: it may be in elsewhere already. */
	else if (t->cpu == cpu)
		t->cpu = -1;
	return 0;
}

/* @tid runs on @cpu for the first time. */
static int place__itrace_start(struct auxsample_place *place, u32 tid, int cpu)
{
	struct place_thread *t = place__thread(place, tid);

	if (!t)
		return -ENOMEM;
	if (t->itrace_cpu < 0)
		t->itrace_cpu = cpu;
	else if (t->itrace_cpu != cpu)
		t->moved = true;
	if (t->switches || !t->moved)
		t->cpu = cpu;
	else
		t->cpu = -1;
	return 0;
}

int auxsample_place__event(struct auxsample_place *place, union perf_event *event,
			   struct perf_sample *sample)
{
	bool out = event->header.misc & PERF_RECORD_MISC_SWITCH_OUT;
	int cpu = sample->cpu, err;

	/* A sample id without the CPU (per-thread recording) places nothing. */
	if (sample->cpu == (u32)-1 || sample->tid == (u32)-1)
		return 0;
	switch (event->header.type) {
	case PERF_RECORD_ITRACE_START:
		return place__itrace_start(place, event->itrace_start.tid, cpu);
	case PERF_RECORD_SWITCH:
		return place__switch(place, sample->tid, cpu, !out);
	case PERF_RECORD_SWITCH_CPU_WIDE:
		/* The task it is about, and the one that takes its place or left it. */
		err = place__switch(place, sample->tid, cpu, !out);
		if (!err && event->context_switch.next_prev_tid)
			err = place__switch(place, event->context_switch.next_prev_tid, cpu, out);
		return err;
	default:
		return 0;
	}
}

bool auxsample_place__has_cpu(const struct evsel *evsel)
{
	return evsel->core.attr.sample_type & PERF_SAMPLE_CPU;
}

int auxsample_place__cpu(struct auxsample_place *place, const struct perf_sample *sample)
{
	struct place_thread *t;

	if (!place || !hashmap__find(place->threads, sample->tid, &t))
		return -1;
	return t->cpu;
}

void auxsample_place__warn_unplaced(const char *who, u64 nr)
{
	if (!nr)
		return;
	pr_warning("%s%" PRIu64
		   " samples carry no CPU (their events were recorded without PERF_SAMPLE_CPU) and the sideband does not say for certain where their threads ran: they get no trace.\n"
		   "Record with perf record --sample-cpu (or -a, -C) to place every sample in its CPU's trace.\n",
		   who, nr);
}
