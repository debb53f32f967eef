// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample simulate: the events of the recording, as perf record
 * -Aintel_pt -e instructions:u (or its --full-trace, --kernel and
 * --tracepoint variants) opens them, and the records that describe them:
 * the ID_INDEX and Intel PT's AUXTRACE_INFO.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>

#include "auxsample-sim.h"
#include "auxsample-sim-core.h"
#include "auxsample-sim-tracing.h"
#include "auxtrace.h"
#include "evlist.h"
#include "evsel.h"
#include "intel-pt.h"

/* intel_pt format bits, as the kernel publishes them. */
#define PT_CFG_PT		(1ULL << 0)
#define PT_CFG_CYC		(1ULL << 1)
#define PT_CFG_MTC		(1ULL << 9)
#define PT_CFG_TSC		(1ULL << 10)
#define PT_CFG_NORETCOMP	(1ULL << 11)
#define PT_CFG_BRANCH		(1ULL << 13)
#define PT_CFG_MTC_PERIOD	(0xfULL << 14)
#define PT_CFG_PSB_PERIOD	(0xfULL << 24)

/* One sample id per CPU, ids from @base on, as a per-CPU recording has. */
static struct evsel *sim__add_evsel(struct sim *sim, struct perf_event_attr *attr, u64 base)
{
	struct evsel *evsel = evsel__new(attr);

	if (!evsel)
		return NULL;
	evlist__add(sim->evlist, evsel);
	if (perf_evsel__alloc_id(&evsel->core, SIM_MAX_CPUS, 1))
		return NULL;
	for (int cpu = 0; cpu < SIM_MAX_CPUS; cpu++)
		perf_evlist__id_add(&sim->evlist->core, &evsel->core, cpu, 0, base + cpu);
	return evsel;
}

/* Which CPU each sample id stands for: AUX samples are queued by it. */
int sim__write_id_index(struct sim *sim)
{
	size_t nr = SIM_MAX_CPUS * sim->evlist->core.nr_entries;
	size_t size = sizeof(struct perf_record_id_index) + nr * sizeof(struct id_index_entry);
	struct perf_record_id_index *ev = zalloc(size);
	struct evsel *evsel;
	size_t i = 0;
	int err;

	if (!ev)
		return -ENOMEM;
	ev->header.type = PERF_RECORD_ID_INDEX;
	ev->header.size = size;
	ev->nr = nr;
	evlist__for_each_entry(sim->evlist, evsel) {
		for (int cpu = 0; cpu < SIM_MAX_CPUS; cpu++, i++) {
			ev->entries[i].id = evsel->core.id[cpu];
			ev->entries[i].idx = cpu;
			ev->entries[i].cpu = cpu;
			ev->entries[i].tid = -1;
		}
	}
	err = sim__write(sim, ev, size);
	free(ev);
	return err;
}

static u64 sim__pt_config(const struct sim_opts *opts)
{
	u64 config = PT_CFG_PT | PT_CFG_BRANCH;
	unsigned int psb = 0;

	if (opts->tsc)
		config |= PT_CFG_TSC;

	/* psb_period encodes 2^(n + 11) bytes. */
	while ((2048UL << psb) < opts->psb_period && psb < 15)
		psb++;
	config |= (u64)psb << 24;
	if (opts->noretcomp)
		config |= PT_CFG_NORETCOMP;
	if (opts->mtc)
		config |= PT_CFG_MTC | ((u64)opts->mtc_period << 14);
	if (opts->cyc)
		config |= PT_CFG_CYC;
	return config;
}

/* Their names as perf record gives them, and the AUX sampling group. */
static void sim__name_evsels(struct sim *sim)
{
	sim->pt_evsel->name = strdup(sim->opts->kernel ? "intel_pt//" : "intel_pt//u");
	sim->insn_evsel->name = strdup(sim->opts->tracepoint ? "sched:sched_switch" :
				       sim->opts->kernel ? "instructions" : "instructions:u");
	sim->dummy_evsel->name = strdup("dummy:u");
	if (!sim->opts->full_trace) {
		evsel__set_leader(sim->insn_evsel, sim->pt_evsel);
		sim->pt_evsel->core.nr_members = 2;
	}
	evlist__set_id_pos(sim->evlist);
}

/* The evlist perf record -Aintel_pt -e instructions:u builds. */
int sim__setup_evlist(struct sim *sim)
{
	const u64 id_types = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			     PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	struct perf_event_attr pt = {
		.type = SIM_PT_PMU_TYPE, .size = sizeof(pt),
		.config = sim__pt_config(sim->opts), .sample_period = 1,
		.sample_type = id_types, .read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST,
		.disabled = 1, .inherit = 1, .exclude_kernel = 1, .exclude_hv = 1,
		.enable_on_exec = 1, .sample_id_all = 1, .exclude_guest = 1,
	};
	struct perf_event_attr insn = {
		.type = PERF_TYPE_HARDWARE, .size = sizeof(insn),
		.config = PERF_COUNT_HW_INSTRUCTIONS, .sample_period = sim->opts->period,
		.sample_type = id_types | PERF_SAMPLE_PERIOD | PERF_SAMPLE_AUX,
		.read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST, .inherit = 1,
		.exclude_kernel = 1, .exclude_hv = 1, .sample_id_all = 1,
		.exclude_guest = 1, .aux_sample_size = sim->opts->aux_sample_size,
	};
	bool full_trace = sim->opts->full_trace;
	struct perf_event_attr dummy = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(dummy),
		.config = PERF_COUNT_SW_DUMMY, .sample_period = 1,
		.sample_type = id_types, .read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST,
		.inherit = 1, .exclude_kernel = 1, .exclude_hv = 1, .mmap = 1, .comm = 1,
		.task = 1, .sample_id_all = 1, .exclude_guest = 1, .mmap2 = 1,
		.comm_exec = 1, .enable_on_exec = 1, .disabled = 1,
	};

	if (full_trace) {
		/* perf record -e intel_pt//u -e instructions:u: no group. */
		insn.sample_type &= ~PERF_SAMPLE_AUX;
		insn.aux_sample_size = 0;
	}
	if (!sim->opts->sample_cpu)
		insn.sample_type &= ~PERF_SAMPLE_CPU;
	if (sim->opts->kernel)
		pt.exclude_kernel = insn.exclude_kernel = 0;
	if (sim->opts->tracepoint) {
		/* -e sched:sched_switch: each hit a sample, with its record. */
		insn.type = PERF_TYPE_TRACEPOINT;
		insn.config = SIM_TP_SCHED_SWITCH_ID;
		insn.sample_period = 1;
		insn.sample_type |= PERF_SAMPLE_RAW;
	}
	sim->evlist = evlist__new();
	if (!sim->evlist)
		return -ENOMEM;
	sim->pt_evsel = sim__add_evsel(sim, &pt, 1);
	sim->insn_evsel = sim__add_evsel(sim, &insn, 1 + SIM_MAX_CPUS);
	sim->dummy_evsel = sim__add_evsel(sim, &dummy, 1 + 2 * SIM_MAX_CPUS);
	if (!sim->pt_evsel || !sim->insn_evsel || !sim->dummy_evsel)
		return -ENOMEM;
	sim__name_evsels(sim);
	return 0;
}

int sim__write_auxtrace_info(struct sim *sim)
{
	size_t size = sizeof(struct perf_record_auxtrace_info) +
		      INTEL_PT_AUXTRACE_PRIV_MAX * sizeof(u64);
	struct perf_record_auxtrace_info *info = zalloc(size);
	int err;

	if (!info)
		return -ENOMEM;
	info->header.type = PERF_RECORD_AUXTRACE_INFO;
	info->header.size = size;
	info->type = PERF_AUXTRACE_INTEL_PT;
	info->priv[INTEL_PT_PMU_TYPE] = SIM_PT_PMU_TYPE;
	/* perf time is the TSC: shift 0, mult 1, zero 0. */
	info->priv[INTEL_PT_TIME_SHIFT] = 0;
	info->priv[INTEL_PT_TIME_MULT] = 1;
	info->priv[INTEL_PT_TIME_ZERO] = 0;
	info->priv[INTEL_PT_CAP_USER_TIME_ZERO] = 1;
	info->priv[INTEL_PT_TSC_BIT] = PT_CFG_TSC;
	info->priv[INTEL_PT_NORETCOMP_BIT] = PT_CFG_NORETCOMP;
	info->priv[INTEL_PT_HAVE_SCHED_SWITCH] = 0;
	info->priv[INTEL_PT_SNAPSHOT_MODE] = 0;
	info->priv[INTEL_PT_PER_CPU_MMAPS] = 1;
	info->priv[INTEL_PT_MTC_BIT] = PT_CFG_MTC;
	info->priv[INTEL_PT_MTC_FREQ_BITS] = PT_CFG_MTC_PERIOD;
	info->priv[INTEL_PT_TSC_CTC_N] = SIM_TSC_CTC_N;
	info->priv[INTEL_PT_TSC_CTC_D] = SIM_TSC_CTC_D;
	info->priv[INTEL_PT_CYC_BIT] = PT_CFG_CYC;
	info->priv[INTEL_PT_MAX_NONTURBO_RATIO] = SIM_MAX_NONTURBO;
	info->priv[INTEL_PT_FILTER_STR_LEN] = 0;
	err = sim__write(sim, info, size);
	free(info);
	return err;
}
