// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample simulate: the perf.data writer.  The records go out as
 * perf record writes them, FINISHED_ROUND every SIM_ROUND_EVENTS; the
 * header describes the simulated machine, not this one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/perf_event.h>
#include <linux/string.h>
#include <linux/zalloc.h>

#include <auxsample/pt-writer.h>
#include "auxsample-sim.h"
#include "auxsample-sim-core.h"
#include "auxsample-sim-tracing.h"
#include "auxtrace.h"
#include "build-id.h"
#include "debug.h"
#include "dsos.h"
#include "evlist.h"
#include "evsel.h"
#include "header.h"
#include "machine.h"
#include "sample.h"
#include "session.h"
#include "symbol.h"
#include "synthetic-events.h"

#define SIM_CPUID		"GenuineIntel,6,85,4"
#define SIM_CPUDESC		"Intel(R) Xeon(R) Gold 6154 CPU @ 3.00GHz"
#define SIM_ROUND_EVENTS	256	/* events between FINISHED_ROUNDs */

int sim__write(struct sim *sim, void *buf, size_t size)
{
	ssize_t ret = perf_data__write(&sim->data, buf, size);

	if (ret < 0 || (size_t)ret != size) {
		pr_err("cannot write %s: %s\n", sim->opts->output,
		       ret < 0 ? strerror(errno) : "short write (disk full?)");
		return -EIO;
	}
	sim->bytes += size;
	return 0;
}

/*
 * Full trace: @t's stream since the last buffer as a PERF_RECORD_AUXTRACE
 * of its CPU, zero-padded (PAD packets) to 8 bytes as perf record pads.
 */
int sim__flush_trace(struct sim *sim, struct sim_thread *t)
{
	static const u8 pad[PERF_AUXTRACE_RECORD_ALIGNMENT];
	struct perf_record_auxtrace ev = {
		.header = { .type = PERF_RECORD_AUXTRACE, .size = sizeof(ev) },
		.reference = ++sim->aux_reference,
		.idx = t->cpu,
		.tid = -1,	/* per-CPU AUX areas, as for inherited events */
		.cpu = t->cpu,
	};
	size_t len, size, padding;
	const u8 *stream;

	if (!sim->opts->full_trace)
		return 0;
	stream = auxsample_pt_writer__data(t->pt, &len);
	if (len <= t->flushed)
		return 0;
	size = len - t->flushed;
	padding = PERF_ALIGN(size, PERF_AUXTRACE_RECORD_ALIGNMENT) - size;
	ev.size = size + padding;
	/* Where the CPU's last thread left its AUX area. */
	ev.offset = sim->aux_offset[t->cpu];
	sim->aux_offset[t->cpu] += ev.size;
	t->flushed = len;
	/* The index of HEADER_AUXTRACE, as perf record keeps it. */
	if (auxtrace_index__auxtrace_event(&sim->session->auxtrace_index, (void *)&ev,
					   sim->session->header.data_offset + sim->bytes))
		return -ENOMEM;
	return sim__write(sim, &ev, sizeof(ev)) ?:
	       sim__write(sim, (void *)(stream + len - size), size) ?:
	       (padding ? sim__write(sim, (void *)pad, padding) : 0);
}

static int sim__finished_round(struct sim *sim)
{
	struct perf_event_header ev = {
		.type = PERF_RECORD_FINISHED_ROUND,
		.size = sizeof(ev),
	};
	struct sim_thread *t;
	int err;

	/* The trace of the round's samples comes before the round ends. */
	list_for_each_entry(t, &sim->threads, node) {
		err = sim__flush_trace(sim, t);
		if (err)
			return err;
	}
	sim->round_events = 0;
	return sim__write(sim, &ev, sizeof(ev));
}

/* Write @ev with the id sample of @evsel appended (sample_id_all). */
int sim__write_sideband(struct sim *sim, union perf_event *ev,
			       struct evsel *evsel, struct sim_thread *t)
{
	struct perf_sample sample = {
		.pid = t->pid, .tid = t->tid, .time = sim->tsc, .cpu = t->cpu,
		.id = evsel->core.id[t->cpu],
	};
	__u64 *array = (void *)ev + ev->header.size;
	int n = perf_event__synthesize_id_sample(array, evsel->core.attr.sample_type, &sample);

	ev->header.size += n;
	if (sim__write(sim, ev, ev->header.size))
		return -EIO;
	/* perf's own view of the process, for the build-id table. */
	if (ev->header.type == PERF_RECORD_MMAP2) {
		sample.cpumode = PERF_RECORD_MISC_USER;
		machine__process_mmap2_event(&sim->session->machines.host, ev, &sample);
	} else if (ev->header.type == PERF_RECORD_MMAP) {
		sample.cpumode = PERF_RECORD_MISC_KERNEL;
		machine__process_mmap_event(&sim->session->machines.host, ev, &sample);
	}
	if (++sim->round_events == SIM_ROUND_EVENTS)
		return sim__finished_round(sim);
	return 0;
}

/* The last @size bytes of @t's stream, zero-padded to 8 as the kernel does. */
int sim__write_sample(struct sim *sim, struct sim_thread *t, u64 ip)
{
	u64 type = sim->insn_evsel->core.attr.sample_type;
	u64 read_format = sim->insn_evsel->core.attr.read_format;
	size_t len;
	const u8 *stream = auxsample_pt_writer__data(t->pt, &len);
	size_t take = min_t(size_t, len, sim->opts->aux_sample_size);
	size_t padded = PERF_ALIGN(take, sizeof(u64));
	void *aux = NULL;
	struct perf_sample sample = {
		.ip = ip, .pid = t->pid, .tid = t->tid, .time = sim->tsc,
		.cpu = t->cpu, .period = sim->opts->period,
		.id = sim->insn_evsel->core.id[t->cpu],
	};
	struct sim_sched_switch raw = {
		.common_type = SIM_TP_SCHED_SWITCH_ID, .common_pid = t->tid,
		.prev_pid = t->tid, .prev_prio = 120, .prev_state = 1 /* TASK_INTERRUPTIBLE */,
		.next_pid = 0, .next_prio = 120,
	};
	union perf_event *ev;
	int err;

	if (type & PERF_SAMPLE_RAW) {
		/* The thread blocks: the CPU's idle task comes next. */
		sim_thread__comm(t, raw.prev_comm);
		snprintf(raw.next_comm, sizeof(raw.next_comm), "swapper/%d", t->cpu);
		sample.raw_data = &raw;
		sample.raw_size = sizeof(raw);
	}
	/* Full trace: the sample carries no trace, its CPU's buffers do. */
	if (type & PERF_SAMPLE_AUX) {
		aux = zalloc(padded);
		if (!aux)
			return -ENOMEM;
		memcpy(aux, stream + len - take, take);
		sample.aux_sample.size = padded;
		sample.aux_sample.data = aux;
	}

	ev = zalloc(perf_event__sample_event_size(&sample, type, read_format));
	if (!ev) {
		free(aux);
		return -ENOMEM;
	}
	ev->header.type = PERF_RECORD_SAMPLE;
	ev->header.misc = ip >= SIM_KERNEL_START ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
	ev->header.size = perf_event__sample_event_size(&sample, type, read_format);
	err = perf_event__synthesize_sample(ev, type, read_format, &sample);
	if (!err)
		err = sim__write(sim, ev, ev->header.size);
	free(ev);
	free(aux);
	sim->nr_samples++;
	if (!err && ++sim->round_events >= SIM_ROUND_EVENTS)
		err = sim__finished_round(sim);
	return err;
}

static int sim__write_string(struct feat_writer *fw, const char *str)
{
	char buf[128] = "";
	u32 len = PERF_ALIGN(strlen(str) + 1, NAME_ALIGN);

	strlcpy(buf, str, sizeof(buf));
	return fw->write(fw, &len, sizeof(len)) ?: fw->write(fw, buf, len);
}

/* perf time is the TSC itself: shift 0, mult 1, zero 0. */
static int sim__write_time_conv(struct sim *sim)
{
	struct perf_record_time_conv ev = {
		.header = { .type = PERF_RECORD_TIME_CONV, .size = sizeof(ev) },
		.time_shift = 0,
		.time_mult = 1,
		.time_zero = 0,
		.cap_user_time_zero = 1,
	};

	return sim__write(sim, &ev, sizeof(ev));
}

/* The header describes the simulated machine, not this one. */
static int sim__feat_copy(struct feat_copier *fc __maybe_unused, int feat,
			  struct feat_writer *fw)
{
	u32 nr_cpus[2] = { SIM_MAX_CPUS, SIM_MAX_CPUS };	/* available, online */
	int err;

	switch (feat) {
	case HEADER_CPUID:
		err = sim__write_string(fw, SIM_CPUID);
		break;
	case HEADER_CPUDESC:
		err = sim__write_string(fw, SIM_CPUDESC);
		break;
	case HEADER_NRCPUS:
		err = fw->write(fw, nr_cpus, sizeof(nr_cpus));
		break;
	case HEADER_TRACING_DATA:	/* set for --tracepoint only */
		err = auxsample_sim_tracing__write(fw);
		break;
	default:
		return 0;
	}
	return err ? err : 1;
}

/* The header features perf record writes for such a recording. */
static void sim__set_features(struct sim *sim)
{
	perf_header__set_feat(&sim->session->header, HEADER_BUILD_ID);
	for (int feat = HEADER_FIRST_FEATURE; feat < HEADER_LAST_FEATURE; feat++)
		perf_header__set_feat(&sim->session->header, feat);
	if (!sim->opts->tracepoint)
		perf_header__clear_feat(&sim->session->header, HEADER_TRACING_DATA);
	perf_header__clear_feat(&sim->session->header, HEADER_BRANCH_STACK);
	/* Full trace: the index of the trace buffers, as perf record writes. */
	if (!sim->opts->full_trace)
		perf_header__clear_feat(&sim->session->header, HEADER_AUXTRACE);
	perf_header__clear_feat(&sim->session->header, HEADER_STAT);
	perf_header__clear_feat(&sim->session->header, HEADER_CLOCKID);
	perf_header__clear_feat(&sim->session->header, HEADER_CLOCK_DATA);
	perf_header__clear_feat(&sim->session->header, HEADER_DIR_FORMAT);
	perf_header__clear_feat(&sim->session->header, HEADER_COMPRESSED);
	perf_header__clear_feat(&sim->session->header, HEADER_BPF_PROG_INFO);
	perf_header__clear_feat(&sim->session->header, HEADER_BPF_BTF);
	/* This machine's CPUs and PMUs are not the simulated ones. */
	perf_header__clear_feat(&sim->session->header, HEADER_CPU_TOPOLOGY);
	perf_header__clear_feat(&sim->session->header, HEADER_NUMA_TOPOLOGY);
	perf_header__clear_feat(&sim->session->header, HEADER_CACHE);
	perf_header__clear_feat(&sim->session->header, HEADER_MEM_TOPOLOGY);
	perf_header__clear_feat(&sim->session->header, HEADER_HYBRID_TOPOLOGY);
	perf_header__clear_feat(&sim->session->header, HEADER_PMU_MAPPINGS);
	perf_header__clear_feat(&sim->session->header, HEADER_CPU_PMU_CAPS);
	perf_header__clear_feat(&sim->session->header, HEADER_PMU_CAPS);
}

int sim__open_output(struct sim *sim)
{
	sim->data.path = sim->opts->output;
	sim->data.mode = PERF_DATA_MODE_WRITE;
	/* perf record --kcore writes a directory: <output>/data and kcore_dir. */
	sim->data.is_dir = sim->opts->kcore;
	perf_tool__init(&sim->tool, /*ordered_events=*/false);
	/* perf.data goes to perf.data.old: its truth goes along. */
	if (auxsample_sim_truth__rotate(sim->opts->output))
		return -ECHILD;		/* reported */
	sim->session = perf_session__new(&sim->data, &sim->tool);
	if (IS_ERR(sim->session)) {
		/* perf_data said why. */
		pr_err("perf auxsample simulate: cannot write %s: name a file in a writable directory with -o\n",
		       sim->opts->output);
		sim->session = NULL;
		return -ECHILD;
	}
	if (sim__setup_evlist(sim))
		return -ENOMEM;
	sim->session->evlist = sim->evlist;
	/*
	 * The build-ids of the MMAP2 records and of the header are read
	 * with libelf, which reads nothing before elf_version() (done by
	 * symbol__init(), which the simulator has no other use for).
	 * BOLT's perf2bolt matches its binary by them.  Copies of the
	 * traced programs stay out of the build-id cache (~/.debug), as with
	 * perf record -N: they are test programs, made and removed by the
	 * hundred; perf buildid-cache -a adds one.
	 */
	symbol__elf_init();
	disable_buildid_cache();
	sim__set_features(sim);
	sim->session->header.data_offset = perf_session__data_offset(sim->evlist);
	if (lseek(perf_data__fd(&sim->data), sim->session->header.data_offset, SEEK_SET) < 0)
		return -errno;

	if (auxsample_sim_truth__open(&sim->truth, sim->opts->output))
		return -ECHILD;		/* reported */
	sim->event = zalloc(SIM_EVENT_MAX);
	if (!sim->event)
		return -ENOMEM;
	/* As perf record: time conversion, then id index before auxtrace info. */
	return sim__write_time_conv(sim) ?: sim__write_id_index(sim) ?:
	       sim__write_auxtrace_info(sim) ?: sim__write_kernel(sim);
}

int sim__close_output(struct sim *sim)
{
	struct feat_copier fc = { .copy = sim__feat_copy };
	int err = sim__finished_round(sim) ?: auxsample_sim_truth__close(&sim->truth);

	if (err)
		return err;
	dsos__hit_all(&sim->session->machines.host.dsos);
	sim->session->header.data_size = sim->bytes;
	/* Readable by older perf too, as a recording on such a machine is. */
	sim->session->header.compact_attrs = true;
	err = perf_session__inject_header(sim->session, sim->evlist, perf_data__fd(&sim->data),
					  &fc, /*write_attrs_after_data=*/false);
	return err < 0 ? -EIO : 0;
}
