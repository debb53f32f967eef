// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample simulate: Intel PT sample-mode recordings on machines
 * without Intel PT.
 *
 * The program runs under ptrace single-stepping; every executed user
 * instruction is classified with perf's x86 instruction decoder and its
 * real control flow is encoded as Intel PT (libauxsample's pt-writer), one
 * stream per thread, each thread on a CPU of its own.  Every @period user
 * instructions a PERF_RECORD_SAMPLE of instructions:u is written with the
 * last @aux_sample_size bytes of that stream, cut as the kernel cuts them,
 * when it stops the trace in the PMI (see sim__sample()).  The perf.data carries what
 * 'perf record -Aintel_pt -e instructions:u' writes: the attrs, Intel PT's
 * AUXTRACE_INFO, COMM, MMAP2 with build-ids, FORK, EXIT, ITRACE_START,
 * FINISHED_ROUND and the header features, with a PT-capable CPU's cpuid.
 *
 * With --full-trace the file is instead what 'perf record -e intel_pt//u
 * -e instructions:u' writes: the same samples without AUX payload and
 * each CPU's whole stream in PERF_RECORD_AUXTRACE buffers, written at
 * every FINISHED_ROUND as perf record writes what its AUX mmaps hold.
 *
 * This is a model for tests, demos and teaching, not a profiler: there is
 * no kernel trace, and time is a model (SIM_TSC_PER_INSN, the PMI's path
 * in sim__sample()) that keeps the order of events that timed decoders
 * rely on.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/perf_event.h>
#include <linux/string.h>
#include <linux/time64.h>
#include <linux/zalloc.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>

#include <auxsample/pt-writer.h>
#include "auxsample-sim.h"
#include "auxsample-sim-engine.h"
#include "auxsample-sim-progress.h"
#include "auxsample-sim-stop.h"
#include "auxsample-sim-truth.h"
#include "auxsample-sim-kernel.h"
#include "auxsample-sim-tracing.h"
#include "auxsample-sim-vg.h"
#include "auxsample-sim-vmlinux.h"
#include "auxtrace.h"
#include "build-id.h"
#include "data.h"
#include "debug.h"
#include "dso.h"
#include "dsos.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "header.h"
#include "intel-pt.h"
#include "intel-pt-decoder/intel-pt-insn-decoder.h"
#include "machine.h"
#include "map.h"
#include "sample.h"
#include "session.h"
#include "symbol.h"
#include "synthetic-events.h"
#include "tool.h"

/* A Skylake-SP: Intel PT with MTC, CYC and every PSB period. */
#define SIM_CPUID		"GenuineIntel,6,85,4"
#define SIM_PT_PMU_TYPE		8
#define SIM_TSC_CTC_N		308	/* CPUID.15H:EBX */
#define SIM_TSC_CTC_D		2	/* CPUID.15H:EAX */
#define SIM_MAX_NONTURBO	37
#define SIM_CPUDESC		"Intel(R) Xeon(R) Gold 6154 CPU @ 3.00GHz"
#define SIM_ROUND_EVENTS	256	/* events between FINISHED_ROUNDs */
/* Each thread runs on a CPU of its own: the machine has this many. */
#define SIM_MAX_CPUS		16
/* The TSC at the start: real TSCs are never 0, and perf relies on it. */
#define SIM_TSC_START		0x10000000ULL
/*
 * TSC ticks per instruction.  Without MTC/CYC, decoders estimate time as
 * the last TSC plus one tick per instruction; a real TSC runs faster than
 * that, so the estimate never passes the sample's time.
 */
#define SIM_TSC_PER_INSN	8
/*
 * No kernel is simulated, but a PMI can be taken in it: at the syscall
 * entry, where entry_SYSCALL_64 is on an x86-64 kernel without KASLR.
 */
#define SIM_KERNEL_START	0xffffffff80000000ULL
#define SIM_SYSCALL_ENTRY_IP	0xffffffff82000040ULL
/*
 * The PMI's path through the kernel, in TSC ticks: from the overflow to
 * the perf_clock() read of perf_prepare_sample() (NMI entry, the PMU's
 * handler, perf_event_overflow()), the AUX copy of
 * pt_event_snapshot_aux() (TraceEn clear to set), and from there back to
 * user code.  A few microseconds in all on hardware; what matters to
 * decoders is the order: the PMI's TIP.PGD, the sample's time, the TSC of
 * the restarted trace, the TIP.PGE.
 */
#define SIM_PMI_TO_SAMPLE_TIME	2000
#define SIM_AUX_COPY_TIME	1000
#define SIM_PMI_RETURN_TIME	1000

/* intel_pt format bits, as the kernel publishes them. */
#define PT_CFG_PT		(1ULL << 0)
#define PT_CFG_CYC		(1ULL << 1)
#define PT_CFG_MTC		(1ULL << 9)
#define PT_CFG_TSC		(1ULL << 10)
#define PT_CFG_NORETCOMP	(1ULL << 11)
#define PT_CFG_BRANCH		(1ULL << 13)
#define PT_CFG_MTC_PERIOD	(0xfULL << 14)
#define PT_CFG_PSB_PERIOD	(0xfULL << 24)

struct sim_thread {
	struct list_head	node;
	pid_t			pid;
	pid_t			tid;
	int			cpu;
	int			mem_fd;		/* /proc/<tid>/mem */
	int			signal;		/* to deliver with the next step */
	bool			in_kernel;	/* TIP.PGD sent, TIP.PGE not yet */
	bool			blocked;	/* in a syscall that blocked */
	bool			awaiting_stop;	/* new, its first stop not seen yet */
	bool			injected;	/* a signal goes with this step */
	u64			ip;		/* of the instruction being stepped */
	struct intel_pt_insn	insn;
	struct intel_pt_insn	overrun[8];	/* what a lost trap let run */
	u64			insns;		/* user instructions since the last sample */
	struct auxsample_pt_writer *pt;
	size_t			flushed;	/* stream bytes in AUXTRACE buffers */
	u64			aux_offset;	/* the CPU's AUX area offset */
	struct auxsample_sim_truth_thread truth;
};

/* A mapping already written as MMAP2. */
struct sim_map {
	pid_t	pid;
	u64	start;
	u64	end;
	u64	pgoff;
	u64	ino;
};

struct sim {
	const struct sim_opts	*opts;
	struct list_head	threads;
	int			next_cpu;
	u64			tsc;
	u64			nr_samples;
	u64			nr_insns;
	pid_t			early[64];	/* first stops of tasks not known yet */
	unsigned int		nr_early;
	struct sim_map		*maps;
	unsigned int		nr_maps;
	unsigned int		maps_cap;

	struct perf_tool	tool;
	struct perf_data	data;
	struct perf_session	*session;
	struct evlist		*evlist;
	struct evsel		*pt_evsel;
	struct evsel		*insn_evsel;
	struct evsel		*dummy_evsel;
	u64			bytes;
	u64			aux_reference;	/* of the next AUXTRACE buffer */
	unsigned int		round_events;
	union perf_event	*event;		/* room for the largest event */
	struct auxsample_sim_truth truth;

	pid_t			pid;		/* of the program run */
	struct auxsample_sim_stop stop;
	struct auxsample_sim_progress progress;
	/* Stopping before the program ends: its threads are let go. */
	enum { SIM_RUNNING, SIM_STOPPING, SIM_WOKEN, SIM_KILLED } phase;
	struct timespec		stopped_at;	/* or woken */
	unsigned int		stop_signals;	/* stop signals seen by then */
	struct sim_kernel	*kernel;	/* kernel-traced: its code */
};

#define SIM_EVENT_MAX	(sizeof(struct perf_record_mmap2) + 1024)

/* --- output --- */

static int sim__write(struct sim *sim, void *buf, size_t size)
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
static int sim__flush_trace(struct sim *sim, struct sim_thread *t)
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
	ev.offset = t->aux_offset;
	t->aux_offset += ev.size;
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
static int sim__write_sideband(struct sim *sim, union perf_event *ev,
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

/* The thread's name, as the kernel has it; "" if it cannot be read. */
static void sim_thread__comm(struct sim_thread *t, char comm[16])
{
	char path[64];
	FILE *f;

	comm[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", t->tid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(comm, 16, f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
}

/* @name: the thread's name, or NULL to read it from /proc. */
static int sim__write_comm(struct sim *sim, struct sim_thread *t, bool exec,
			   const char *name)
{
	union perf_event *ev = sim->event;
	char comm[16];

	if (name)
		strlcpy(comm, name, sizeof(comm));
	else
		sim_thread__comm(t, comm);
	memset(ev, 0, sizeof(ev->comm));
	ev->comm.header.type = PERF_RECORD_COMM;
	ev->comm.header.misc = exec ? PERF_RECORD_MISC_COMM_EXEC : 0;
	ev->comm.pid = t->pid;
	ev->comm.tid = t->tid;
	strlcpy(ev->comm.comm, comm, sizeof(ev->comm.comm));
	ev->comm.header.size = sizeof(ev->comm);
	return sim__write_sideband(sim, ev, sim->dummy_evsel, t);
}

static int sim__write_task(struct sim *sim, struct sim_thread *t, u32 type, pid_t ppid,
			   pid_t ptid)
{
	union perf_event *ev = sim->event;

	memset(ev, 0, sizeof(ev->fork));
	ev->fork.header.type = type;
	ev->fork.header.size = sizeof(ev->fork);
	ev->fork.pid = t->pid;
	ev->fork.tid = t->tid;
	ev->fork.ppid = ppid;
	ev->fork.ptid = ptid;
	ev->fork.time = sim->tsc;
	return sim__write_sideband(sim, ev, sim->dummy_evsel, t);
}

static int sim__write_itrace_start(struct sim *sim, struct sim_thread *t)
{
	union perf_event *ev = sim->event;

	memset(ev, 0, sizeof(ev->itrace_start));
	ev->itrace_start.header.type = PERF_RECORD_ITRACE_START;
	ev->itrace_start.header.size = sizeof(ev->itrace_start);
	ev->itrace_start.pid = t->pid;
	ev->itrace_start.tid = t->tid;
	return sim__write_sideband(sim, ev, sim->pt_evsel, t);
}

static bool sim__map_seen(struct sim *sim, const struct sim_map *m)
{
	for (unsigned int i = 0; i < sim->nr_maps; i++) {
		if (!memcmp(&sim->maps[i], m, sizeof(*m)))
			return true;
	}
	return false;
}

static int sim__remember_map(struct sim *sim, const struct sim_map *m)
{
	if (sim->nr_maps == sim->maps_cap) {
		unsigned int cap = sim->maps_cap ? sim->maps_cap * 2 : 64;
		struct sim_map *maps = realloc(sim->maps, cap * sizeof(*maps));

		if (!maps)
			return -ENOMEM;
		sim->maps = maps;
		sim->maps_cap = cap;
	}
	sim->maps[sim->nr_maps++] = *m;
	return 0;
}

static int sim__write_mmap(struct sim *sim, struct sim_thread *t, const struct sim_map *m,
			   const char *name)
{
	union perf_event *ev = sim->event;
	struct build_id bid;
	size_t len = strlen(name) + 1;

	memset(ev, 0, sizeof(ev->mmap2));
	ev->mmap2.header.type = PERF_RECORD_MMAP2;
	ev->mmap2.header.misc = PERF_RECORD_MISC_USER;
	ev->mmap2.pid = t->pid;
	ev->mmap2.tid = t->pid;
	ev->mmap2.start = m->start;
	ev->mmap2.len = m->end - m->start;
	ev->mmap2.pgoff = m->pgoff;
	ev->mmap2.prot = PROT_READ | PROT_EXEC;
	ev->mmap2.flags = MAP_PRIVATE;
	if (name[0] == '/' && filename__read_build_id(name, &bid) > 0) {
		ev->mmap2.header.misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
		ev->mmap2.build_id_size = bid.size;
		memcpy(ev->mmap2.build_id, bid.data, bid.size);
	} else {
		ev->mmap2.ino = m->ino;
	}
	memcpy(ev->mmap2.filename, name, len);
	ev->mmap2.header.size = offsetof(struct perf_record_mmap2, filename) +
				PERF_ALIGN(len, sizeof(u64));
	return sim__write_sideband(sim, ev, sim->dummy_evsel, t);
}

/* MMAP2 for the executable mappings of @t's process not written yet. */
static int sim__scan_maps(struct sim *sim, struct sim_thread *t)
{
	char path[64], line[PATH_MAX + 128], perms[8], name[PATH_MAX];
	unsigned int maj, min;
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", t->pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		struct sim_map m = { .pid = t->pid };

		name[0] = '\0';
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %s",
			   &m.start, &m.end, perms, &m.pgoff, &maj, &min, &m.ino, name) < 7)
			continue;
		if (perms[2] != 'x' || sim__map_seen(sim, &m))
			continue;
		if (!name[0])
			strlcpy(name, "//anon", sizeof(name));
		err = sim__remember_map(sim, &m) ?: sim__write_mmap(sim, t, &m, name);
	}
	fclose(f);
	return err;
}

/* The last @size bytes of @t's stream, zero-padded to 8 as the kernel does. */
static int sim__write_sample(struct sim *sim, struct sim_thread *t, u64 ip)
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

/* --- ground truth (auxsample-sim-truth.c) --- */

static void sim_thread__branch(struct sim_thread *t, u64 from, u64 to,
			       enum auxsample_sim_branch kind)
{
	auxsample_sim_truth_thread__branch(&t->truth, from, to, kind);
}

static int sim_thread__call(struct sim_thread *t, u64 ret_addr)
{
	return auxsample_sim_truth_thread__call(&t->truth, ret_addr);
}

static void sim_thread__ret(struct sim_thread *t, u64 to)
{
	auxsample_sim_truth_thread__ret(&t->truth, to);
}

static int sim__write_truth(struct sim *sim, struct sim_thread *t, u64 ip)
{
	return auxsample_sim_truth__sample(&sim->truth, &t->truth,
					   &(struct auxsample_sim_truth_sample){
						.nr = sim->nr_samples, .pid = t->pid,
						.cpu = t->cpu, .time = sim->tsc, .ip = ip,
					   });
}

/* --- threads --- */

/*
 * The code @t runs is read from its /proc/<tid>/mem, opened anew at an
 * exec: the file opened before reads nothing of the new program (its
 * memory is the old one's, gone).  Other engines hand over the code they
 * ran.
 */
static int sim_thread__open_mem(struct sim *sim, struct sim_thread *t)
{
	char path[64];
	int fd;

	if (sim->opts->engine != SIM_ENGINE_PTRACE)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/mem", t->tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_err("cannot read the memory of thread %d: %s\n", t->tid, strerror(errno));
		return -errno;
	}
	if (t->mem_fd >= 0)
		close(t->mem_fd);
	t->mem_fd = fd;
	return 0;
}

static struct sim_thread *sim__add_thread(struct sim *sim, pid_t pid, pid_t tid)
{
	struct sim_thread *t = zalloc(sizeof(*t));

	if (!t)
		return NULL;
	if (sim->next_cpu == SIM_MAX_CPUS) {
		pr_err("more than %d threads: perf auxsample simulate gives each a CPU of its own\n",
		       SIM_MAX_CPUS);
		free(t);
		return NULL;
	}
	t->pid = pid;
	t->tid = tid;
	t->cpu = sim->next_cpu++;
	auxsample_sim_truth_thread__init(&t->truth, tid);
	t->mem_fd = -1;
	if (sim_thread__open_mem(sim, t)) {
		free(t);
		return NULL;
	}
	t->pt = auxsample_pt_writer__new(&(struct auxsample_pt_writer_config){
		.size = sizeof(struct auxsample_pt_writer_config),
		.psb_period = sim->opts->psb_period,
		.noretcomp = sim->opts->noretcomp,
		.tsc = sim->opts->tsc,
		.mtc = sim->opts->mtc,
		.mtc_period = sim->opts->mtc_period,
		.tsc_per_ctc = SIM_TSC_CTC_N / SIM_TSC_CTC_D,
		.cyc = sim->opts->cyc,
		/* The core runs at its nominal ratio: a cycle is a TSC tick. */
		.cbr = SIM_MAX_NONTURBO,
		.nom_freq = SIM_MAX_NONTURBO,
	});
	if (!t->pt) {
		pr_err("perf auxsample simulate: no memory for thread %d's trace\n", tid);
		if (t->mem_fd >= 0)
			close(t->mem_fd);
		free(t);
		return NULL;
	}
	list_add_tail(&t->node, &sim->threads);
	return t;
}

/* The simulator never writes what libipt's packet decoder cannot parse. */
static int sim_thread__verify(struct sim_thread *t)
{
	u64 offset;

	if (!auxsample_pt_writer__verify(t->pt, &offset))
		return 0;
	pr_err("perf auxsample simulate: bad Intel PT packet at offset %#" PRIx64
	       " of thread %d's stream\n",
	       offset, t->tid);
	return -EPROTO;
}

static void sim_thread__delete(struct sim_thread *t)
{
	list_del(&t->node);
	auxsample_pt_writer__delete(t->pt);
	if (t->mem_fd >= 0)
		close(t->mem_fd);
	auxsample_sim_truth_thread__exit(&t->truth);
	free(t);
}

static int sim_thread__regs(struct sim_thread *t, struct user_regs_struct *regs)
{
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, regs) < 0) {
		pr_err("cannot read the registers of thread %d: %s\n", t->tid, strerror(errno));
		return -errno;
	}
	return 0;
}

/* The process starts, or exec replaced its program: a fresh stream. */
static int sim__process_begin(struct sim *sim, struct sim_thread *t, bool exec,
			      const char *comm)
{
	int err;

	if (exec) {
		err = sim_thread__verify(t) ?: sim__flush_trace(sim, t);
		if (err)
			return err;
		auxsample_pt_writer__reset(t->pt);
		t->flushed = 0;
		auxsample_sim_truth_thread__exec(&t->truth);
	}
	return sim__write_comm(sim, t, exec, comm);
}

/* The trace comes after the events that tell whose it is. */
static int sim__trace_from(struct sim *sim, struct sim_thread *t, u64 ip)
{
	int err = sim__write_itrace_start(sim, t);

	sim->tsc++;
	return err ?: auxsample_pt_writer__tick(t->pt, sim->tsc) ?:
		      auxsample_pt_writer__start(t->pt, ip);
}

static int sim__start_thread(struct sim *sim, struct sim_thread *t, bool exec)
{
	struct user_regs_struct regs;
	int err = sim_thread__regs(t, &regs);

	return err ?: sim__process_begin(sim, t, exec, NULL) ?: sim__scan_maps(sim, t) ?:
		      sim__trace_from(sim, t, regs.rip);
}

/* --- one step --- */

/* Time passes for @t: the MTCs of that time, in the kernel too. */
static int sim__pass_time(struct sim *sim, struct sim_thread *t, u64 ticks)
{
	sim->tsc += ticks;
	return auxsample_pt_writer__tick(t->pt, sim->tsc);
}

/* --- the simulated kernel, in kernel-traced mode (auxsample-sim-kernel.c) --- */

struct sim_kctx {
	struct sim		*sim;
	struct sim_thread	*t;
	u64			sample_ip;
	struct auxsample_sim_truth_mark mark;	/* the thread at the sample point */
};

/* The truth of a sample written after its point: what came before it. */
static int sim__write_truth_before(struct sim *sim, struct sim_kctx *c)
{
	struct sim_thread *t = c->t;

	return auxsample_sim_truth__sample_at(&sim->truth, &t->truth,
					      &(struct auxsample_sim_truth_sample){
						.nr = sim->nr_samples, .pid = t->pid,
						.cpu = t->cpu, .time = sim->tsc,
						.ip = c->sample_ip,
					      }, &c->mark);
}

/* One step of the kernel's code: its trace and its truth. */
static int sim__kstep(void *arg, const struct sim_kstep *s)
{
	struct sim_kctx *c = arg;
	struct sim_thread *t = c->t;
	struct auxsample_pt_writer *pt = t->pt;
	bool ind = s->type == SIM_KSTEP_IND_CALL;
	int err;

	switch (s->type) {
	case SIM_KSTEP_COND:
		if (s->taken)
			sim_thread__branch(t, s->from, s->to, SB_COND);
		return auxsample_pt_writer__cond(pt, s->taken);
	case SIM_KSTEP_JUMP:
		sim_thread__branch(t, s->from, s->to, SB_JUMP);
		return 0;
	case SIM_KSTEP_IND_JUMP:
		sim_thread__branch(t, s->from, s->to, SB_IND_JUMP);
		return auxsample_pt_writer__indirect(pt, s->to);
	case SIM_KSTEP_CALL:
	case SIM_KSTEP_IND_CALL:
		sim_thread__branch(t, s->from, s->to, ind ? SB_IND_CALL : SB_CALL);
		if (sim_thread__call(t, s->ret))
			return -ENOMEM;
		return auxsample_pt_writer__call(pt, s->ret, ind, s->to);
	case SIM_KSTEP_RET:
		sim_thread__branch(t, s->from, s->to, SB_RET);
		sim_thread__ret(t, s->to);
		return auxsample_pt_writer__ret(pt, s->to);
	case SIM_KSTEP_FAR:
		sim_thread__branch(t, s->from, s->to, SB_FAR);
		return auxsample_pt_writer__indirect(pt, s->to);
	case SIM_KSTEP_ASYNC:
		auxsample_sim_truth_thread__mark(&t->truth, &c->mark);
		sim_thread__branch(t, s->from, s->to, SB_INTR);
		return auxsample_pt_writer__async(pt, s->from, s->to);
	case SIM_KSTEP_TRACEPOINT:
		/* The tracepoint's sample: its point is the call site. */
		c->sample_ip = s->from;
		auxsample_sim_truth_thread__mark(&t->truth, &c->mark);
		return 0;
	case SIM_KSTEP_SAMPLE:
		return sim__pass_time(c->sim, t, SIM_PMI_TO_SAMPLE_TIME);
	case SIM_KSTEP_STOP:
		err = c->sim->opts->full_trace ? 0 : auxsample_pt_writer__stop_at(pt, s->from);
		if (!err)
			err = sim__write_sample(c->sim, t, c->sample_ip);
		if (!err)
			err = sim__write_truth_before(c->sim, c);
		t->insns = 0;
		return err;
	case SIM_KSTEP_RESTART:
		if (c->sim->opts->full_trace)
			return 0;
		return sim__pass_time(c->sim, t, SIM_AUX_COPY_TIME) ?:
		       auxsample_pt_writer__restart_at(pt, s->to);
	default:
		return -EINVAL;
	}
}

/*
 * Kernel-traced, the PMI is in the trace: an interrupt at the sample's IP
 * (the user IP, or the syscall entry where a syscall's PMI is taken),
 * the NMI path to perf's AUX copy, where the trace stops and starts again,
 * and IRET; the sample's truth is what came before the interrupt.
 */
static int sim__sample_kernel(struct sim *sim, struct sim_thread *t, u64 ip)
{
	struct sim_kctx c = {
		.sim = sim, .t = t,
		.sample_ip = t->in_kernel ? sim_kernel__syscall_entry(sim->kernel) : ip,
	};

	return sim_kernel__pmi(sim->kernel, c.sample_ip, sim__kstep, &c) ?:
	       sim__pass_time(sim, t, SIM_PMI_RETURN_TIME);
}

/*
 * Whether the syscall of @regs (after it: orig_rax and the arguments)
 * blocked, and so scheduled another task: sleeps, waits, futex waits,
 * sched_yield, pause, poll and select.  Its sched_switch is what perf
 * record -e sched:sched_switch samples.
 */
static bool sim__is_blocking_syscall(const struct user_regs_struct *regs)
{
	/* x86-64 syscall numbers: perf's own asm/unistd.h lists only a few. */
	switch (regs->orig_rax) {
	case 7:		/* poll */
	case 23:	/* select */
	case 24:	/* sched_yield */
	case 34:	/* pause */
	case 35:	/* nanosleep */
	case 61:	/* wait4 */
	case 230:	/* clock_nanosleep */
	case 232:	/* epoll_wait */
	case 247:	/* waitid */
	case 270:	/* pselect6 */
	case 271:	/* ppoll */
	case 281:	/* epoll_pwait */
		return true;
	case 202:	/* futex: FUTEX_WAIT, FUTEX_WAIT_BITSET */
		return (regs->rsi & 0x7f) == 0 || (regs->rsi & 0x7f) == 9;
	default:
		return false;
	}
}

/*
 * Back to user code at @ip: from a syscall, through the kernel's code,
 * and __schedule() where it blocked.
 */
static int sim__to_user(struct sim *sim, struct sim_thread *t, u64 ip, bool from_syscall)
{
	struct sim_kctx c = { .sim = sim, .t = t };

	if (!sim->kernel || !from_syscall)
		return auxsample_pt_writer__resume(t->pt, ip);
	return sim_kernel__syscall(sim->kernel, ip, t->blocked, sim__kstep, &c);
}

/*
 * The PMI of the period's last instruction, as the kernel handles it for
 * an AUX-sampling event:
 * - taken in user code, it disables packet generation there: FUP and
 *   TIP.PGD at the overflow (SDM Vol. 3C, "FUP Packet": asynchronous
 *   events);
 * - the sample's time is read later, in perf_prepare_sample(), after the
 *   NMI entry and the PMU handler: it is after all of the snippet's user
 *   code;
 * - pt_event_snapshot_aux() stops the trace (TraceEn 1 -> 0), copies the
 *   snippet and starts the trace again, which writes TSC, TMA and CBR
 *   (auxsample_pt_writer__restart()): everything after the sample comes
 *   after a TSC later than the sample's time, which is how timed decoders
 *   (perf's intel-pt.c) tell which branches are the sample's;
 * - the return to user code at @ip is a TIP.PGE; from a syscall it comes
 *   when the syscall returns.
 * A syscall that ends the period retires in user mode, but its PMI is taken
 * at the first instruction it can be, in the kernel: the sample's IP is
 * there and says so in header.misc (perf_instruction_pointer() and
 * perf_misc_flags() read the interrupted registers; exclude_kernel does not
 * move them), so decoders keep the syscall as its newest branch.
 * With --full-trace no AUX area is sampled and the trace runs on.
 */
static int sim__sample(struct sim *sim, struct sim_thread *t, u64 ip)
{
	bool snapshot = !sim->opts->full_trace;
	u64 sample_ip = t->in_kernel ? SIM_SYSCALL_ENTRY_IP : ip;
	int err = 0;

	if (sim->kernel)
		return sim__sample_kernel(sim, t, ip);

	if (!t->in_kernel)
		err = auxsample_pt_writer__interrupt(t->pt, ip);
	if (!err)
		err = sim__pass_time(sim, t, SIM_PMI_TO_SAMPLE_TIME);
	if (!err && snapshot)
		err = auxsample_pt_writer__stop(t->pt);
	if (!err)
		err = sim__write_sample(sim, t, sample_ip);
	if (!err)
		err = sim__write_truth(sim, t, sample_ip);
	t->insns = 0;
	if (!err && snapshot)
		err = sim__pass_time(sim, t, SIM_AUX_COPY_TIME) ?:
		      auxsample_pt_writer__restart(t->pt);
	if (!err)
		err = sim__pass_time(sim, t, SIM_PMI_RETURN_TIME);
	if (err || t->in_kernel)
		return err;
	return auxsample_pt_writer__resume(t->pt, ip);
}

static int sim__model(struct sim *sim, struct sim_thread *t, u64 ip,
		      const struct intel_pt_insn *insn, u64 next);

#define SIM_OVERRUN_MAX		8

/*
 * Some hypervisors emulate an instruction that exits to them (CPUID, seen
 * on Firecracker's KVM) without the single-step trap that should follow
 * it: the trap comes an instruction or more later, and where the step
 * ended tells what those did.  They are followed from @seq, falling
 * through conditional branches unless one goes to @next, along direct
 * jumps and calls, up to an indirect branch that went to @next; the path
 * is taken only if it gets there, and each of its instructions is
 * modelled and counted.  1 if it was, 0 if no such path is found.
 */
static int sim__overran(struct sim *sim, struct sim_thread *t, u64 seq, u64 next)
{
	unsigned char buf[INTEL_PT_INSN_BUF_SZ];
	struct intel_pt_insn *path = t->overrun;
	u64 at[SIM_OVERRUN_MAX], to[SIM_OVERRUN_MAX], p = seq;
	int n, i, err;

	for (n = 0; n < SIM_OVERRUN_MAX; n++) {
		struct intel_pt_insn *insn = &path[n];
		ssize_t len = pread(t->mem_fd, buf, sizeof(buf), p);
		u64 fall;

		memset(insn, 0, sizeof(*insn));
		if (len <= 0 || intel_pt_get_insn(buf, len, /*x86_64=*/1, insn) || !insn->length)
			return 0;
		fall = p + insn->length;
		at[n] = p;
		if (insn->op == INTEL_PT_OP_SYSCALL || insn->op == INTEL_PT_OP_INT)
			return 0;
		if (insn->branch == INTEL_PT_BR_CONDITIONAL)
			to[n] = fall + insn->rel == next ? next : fall;
		else if (insn->branch == INTEL_PT_BR_UNCONDITIONAL)
			to[n] = fall + insn->rel;
		else if (insn->branch == INTEL_PT_BR_INDIRECT)
			to[n] = next;
		else
			to[n] = fall;
		if (to[n] == next)
			break;
		if (insn->branch == INTEL_PT_BR_INDIRECT)
			return 0;
		p = to[n];
	}
	if (n == SIM_OVERRUN_MAX)
		return 0;
	for (i = 0; i <= n; i++) {
		err = sim__model(sim, t, at[i], &path[i], to[i]);
		if (err)
			return err;
		sim->nr_insns++;
		t->insns++;
	}
	return 1;
}

/* Encode what the instruction at @ip did, given where it went. */
static int sim__model(struct sim *sim, struct sim_thread *t, u64 ip,
		      const struct intel_pt_insn *insn, u64 next)
{
	u64 seq = ip + insn->length;
	bool indirect = insn->branch == INTEL_PT_BR_INDIRECT;
	int err;

	switch (insn->op) {
	case INTEL_PT_OP_JCC:
	case INTEL_PT_OP_LOOP:
		if (next != seq)
			sim_thread__branch(t, ip, next, SB_COND);
		return auxsample_pt_writer__cond(t->pt, next != seq);
	case INTEL_PT_OP_JMP:
		sim_thread__branch(t, ip, next, indirect ? SB_IND_JUMP : SB_JUMP);
		return indirect ? auxsample_pt_writer__indirect(t->pt, next) : 0;
	case INTEL_PT_OP_CALL:
		sim_thread__branch(t, ip, next, indirect ? SB_IND_CALL : SB_CALL);
		if (next != seq && sim_thread__call(t, seq))
			return -ENOMEM;
		return auxsample_pt_writer__call(t->pt, seq, indirect, next);
	case INTEL_PT_OP_RET:
		sim_thread__branch(t, ip, next, SB_RET);
		sim_thread__ret(t, next);
		return auxsample_pt_writer__ret(t->pt, next);
	case INTEL_PT_OP_SYSCALL:
	case INTEL_PT_OP_INT:
		/*
		 * Into the kernel: user-only trace shows no target.  The TIP.PGE
		 * waits for where user code goes on: @next, or a signal handler.
		 */
		sim->tsc += 1000;
		t->in_kernel = true;
		if (sim->kernel) {
			/* Kernel-traced: the entry is in the trace, a TIP. */
			u64 entry = sim_kernel__syscall_entry(sim->kernel);

			sim_thread__branch(t, ip, entry, SB_FAR);
			return auxsample_pt_writer__indirect(t->pt, entry);
		}
		sim_thread__branch(t, ip, 0, SB_FAR);
		return auxsample_pt_writer__syscall(t->pt);
	case INTEL_PT_OP_OTHER:
	case INTEL_PT_OP_IRET:
	case INTEL_PT_OP_SYSRET:
	case INTEL_PT_OP_VMENTRY:
	case INTEL_PT_OP_ERETS:
	case INTEL_PT_OP_ERETU:
	default:
		if (next == seq)
			return 0;
		err = sim__overran(sim, t, seq, next);
		if (err)
			return err < 0 ? err : 0;
		/* Elsewhere without a branch: a fault delivered as a signal. */
		return auxsample_pt_writer__interrupt(t->pt, ip) ?:
		       auxsample_pt_writer__resume(t->pt, next);
	}
}

static bool sim__is_mapping_syscall(const struct user_regs_struct *regs)
{
	/* x86-64 syscall numbers: perf's own asm/unistd.h lists only a few. */
	switch (regs->orig_rax) {
	case 9:		/* mmap */
	case 10:	/* mprotect */
	case 25:	/* mremap */
	case 216:	/* remap_file_pages */
		return true;
	default:
		return false;
	}
}

static int sim_thread__step_begin(struct sim *sim, struct sim_thread *t);
static int sim__let_go(struct sim *sim, struct sim_thread *t);

static struct sim_thread *sim__find_thread(struct sim *sim, pid_t tid)
{
	struct sim_thread *t;

	list_for_each_entry(t, &sim->threads, node) {
		if (t->tid == tid)
			return t;
	}
	return NULL;
}

/* A new thread has stopped for the first time: trace it from there. */
static int sim__first_stop(struct sim *sim, struct sim_thread *t)
{
	struct user_regs_struct regs;
	int err;

	t->awaiting_stop = false;
	/* A new process has an address space of its own to describe. */
	if (t->pid == t->tid)
		return sim__start_thread(sim, t, false);
	err = sim__write_itrace_start(sim, t) ?: sim_thread__regs(t, &regs);
	if (err)
		return err;
	sim->tsc++;
	return auxsample_pt_writer__tick(t->pt, sim->tsc) ?:
	       auxsample_pt_writer__start(t->pt, regs.rip);
}

static bool sim__take_early_stop(struct sim *sim, pid_t tid)
{
	for (unsigned int i = 0; i < sim->nr_early; i++) {
		if (sim->early[i] == tid) {
			sim->early[i] = sim->early[--sim->nr_early];
			return true;
		}
	}
	return false;
}

static int sim__add_early_stop(struct sim *sim, pid_t tid)
{
	if (sim->nr_early == ARRAY_SIZE(sim->early)) {
		pr_err("too many threads starting at once\n");
		return -E2BIG;
	}
	sim->early[sim->nr_early++] = tid;
	return 0;
}

/*
 * A clone or fork: the new task's first stop (a SIGSTOP) may come before
 * or after this event.
 */
static int sim__new_task(struct sim *sim, struct sim_thread *parent, int event)
{
	struct sim_thread *t;
	unsigned long msg;
	pid_t pid;
	int err;

	if (ptrace(PTRACE_GETEVENTMSG, parent->tid, NULL, &msg) < 0)
		return -errno;
	pid = event == PTRACE_EVENT_CLONE ? parent->pid : (pid_t)msg;
	t = sim__add_thread(sim, pid, msg);
	if (!t)
		return -ENOMEM;
	t->awaiting_stop = true;
	err = sim__write_task(sim, t, PERF_RECORD_FORK, parent->pid, parent->tid);
	if (err)
		return err;
	if (!sim__take_early_stop(sim, msg))
		return 0;
	if (sim->phase != SIM_RUNNING)
		return sim__let_go(sim, t);
	return sim__first_stop(sim, t) ?: sim_thread__step_begin(sim, t);
}

/* Set @t going for one instruction; the outcome comes through waitpid. */
static int sim_thread__step_begin(struct sim *sim, struct sim_thread *t)
{
	struct user_regs_struct regs;
	unsigned char buf[INTEL_PT_INSN_BUF_SZ];
	ssize_t n;
	int err;

	err = sim_thread__regs(t, &regs);
	if (err)
		return err;
	t->ip = regs.rip;
	memset(&t->insn, 0, sizeof(t->insn));
	n = pread(t->mem_fd, buf, sizeof(buf), t->ip);
	if (n <= 0 || intel_pt_get_insn(buf, n, /*x86_64=*/1, &t->insn))
		t->insn.length = 0;

	sim->tsc += SIM_TSC_PER_INSN;
	err = auxsample_pt_writer__tick(t->pt, sim->tsc);
	/* Kernel-traced, a syscall's kernel code is yet to come: no PSB+ at @ip. */
	if (!err && !(sim->kernel && t->in_kernel))
		err = auxsample_pt_writer__maybe_psb(t->pt, t->ip);
	if (err)
		return err;

	t->injected = t->signal != 0;
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, (void *)(long)t->signal) < 0)
		return -errno;
	t->signal = 0;
	return 0;
}

#define SIM_STEP_GONE		1	/* the thread exited */
#define SIM_STEP_RUNNING	2	/* the step goes on */

/* What became of @t's step, as waitpid said in @status. */
static int sim_thread__step_end(struct sim *sim, struct sim_thread *t, int status)
{
	struct user_regs_struct regs;
	u64 ip = t->ip;
	int sig, event, err, pending;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		sim__write_task(sim, t, PERF_RECORD_EXIT, t->pid, t->tid);
		return SIM_STEP_GONE;
	}
	sig = WSTOPSIG(status);
	event = status >> 16;
	if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK ||
	    event == PTRACE_EVENT_VFORK || event == PTRACE_EVENT_EXIT) {
		err = event == PTRACE_EVENT_EXIT ? 0 : sim__new_task(sim, t, event);
		if (err)
			return err;
		/* Finish the syscall. */
		if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, NULL) < 0)
			return -errno;
		return SIM_STEP_RUNNING;
	}
	if (event == PTRACE_EVENT_EXEC) {
		sim_thread__branch(t, ip, 0, SB_FAR);
		err = t->in_kernel ? 0 : auxsample_pt_writer__syscall(t->pt);
		t->in_kernel = false;
		return err ?: sim_thread__open_mem(sim, t) ?: sim__start_thread(sim, t, true);
	}
	/* A signal to deliver: it comes with the next step. */
	pending = sig == SIGTRAP ? 0 : sig;

	err = sim_thread__regs(t, &regs);
	if (err)
		return err;

	if (regs.rip == ip && t->insn.length && !t->injected) {
		/* Not executed (a signal came first), or a REP iteration. */
		t->signal = pending;
		return 0;
	}
	t->signal = pending;
	if (t->injected) {
		/*
		 * The signal's handler starts, nothing executed: from the
		 * kernel after a syscall, else it interrupted the code at @ip.
		 */
		bool from_syscall = t->in_kernel;

		err = t->in_kernel ? 0 : auxsample_pt_writer__interrupt(t->pt, ip);
		t->in_kernel = false;
		return err ?: sim__to_user(sim, t, regs.rip, from_syscall);
	}
	if (t->in_kernel) {
		/* Back from the syscall where it was made. */
		t->in_kernel = false;
		err = sim__to_user(sim, t, ip, true);
		if (err)
			return err;
	}

	if (!t->insn.length && regs.rip != ip) {
		/* Unknown bytes: only the flow that follows is known. */
		err = auxsample_pt_writer__interrupt(t->pt, ip) ?:
		      auxsample_pt_writer__resume(t->pt, regs.rip);
	} else {
		err = sim__model(sim, t, ip, &t->insn, regs.rip);
	}
	if (err)
		return err;
	if (t->insn.op == INTEL_PT_OP_SYSCALL)
		t->blocked = sim__is_blocking_syscall(&regs);
	if (t->insn.op == INTEL_PT_OP_SYSCALL && sim__is_mapping_syscall(&regs)) {
		err = sim__scan_maps(sim, t);
		if (err)
			return err;
	}

	sim->nr_insns++;
	/* Tracepoint samples come from the kernel's code, not a period. */
	if (++t->insns >= sim->opts->period && !sim->opts->tracepoint)
		return sim__sample(sim, t, regs.rip);
	return 0;
}

/* --- stopping before the program ends --- */

/*
 * How long a stop waits for a step that does not end (a thread blocked
 * in a syscall) before it wakes the thread, and then for the threads to
 * stop, or for the program to end on SIGTERM, before it kills them.
 */
#define SIM_STOP_WAKE_MS	100
#define SIM_STOP_GRACE_MS	5000

static long sim__ms_since(const struct timespec *then)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - then->tv_sec) * MSEC_PER_SEC +
	       (now.tv_nsec - then->tv_nsec) / NSEC_PER_MSEC;
}

/*
 * A stop (a signal, --duration or --max-instructions): no thread steps
 * again.  Each is let go when its step in flight ends; the files are
 * then finished as if the program had ended there.
 */
static void sim__stop_begin(struct sim *sim)
{
	sim->phase = SIM_STOPPING;
	clock_gettime(CLOCK_MONOTONIC, &sim->stopped_at);
	sim->stop_signals = sim->stop.nr_signals;
	/* What the stop has to say goes on lines of its own. */
	auxsample_sim_progress__finish(&sim->progress);
	pr_debug("perf auxsample simulate: stopping after %" PRIu64 " instructions\n",
		 sim->nr_insns);
}

/*
 * The steps that did not end are in syscalls that block: SIGCONT ends
 * them (the syscall restarts once the thread is let go) and is dropped
 * then.  Those that do not stop even so, and any after a second stop
 * signal, are killed.
 */
static void sim__stop_next(struct sim *sim)
{
	struct sim_thread *t;

	clock_gettime(CLOCK_MONOTONIC, &sim->stopped_at);
	if (sim->phase == SIM_STOPPING && sim->stop.nr_signals == sim->stop_signals) {
		sim->phase = SIM_WOKEN;
		list_for_each_entry(t, &sim->threads, node)
			tgkill(t->pid, t->tid, SIGCONT);
		return;
	}
	sim->phase = SIM_KILLED;
	list_for_each_entry(t, &sim->threads, node) {
		pr_warning("perf auxsample simulate: thread %d did not stop: killed\n", t->tid);
		kill(t->tid, SIGKILL);
	}
}

/* Nothing to do until a thread stops, a stop signal comes or a stop waits too long. */
static int sim__idle(struct sim *sim)
{
	long waited, limit;

	if (sim->phase == SIM_RUNNING || sim->phase == SIM_KILLED)
		return auxsample_sim_stop__wait(&sim->stop, -1);
	waited = sim__ms_since(&sim->stopped_at);
	limit = sim->phase == SIM_STOPPING ? SIM_STOP_WAKE_MS : SIM_STOP_GRACE_MS;
	if (waited >= limit || sim->stop.nr_signals > sim->stop_signals) {
		sim__stop_next(sim);
		return 0;
	}
	return auxsample_sim_stop__wait(&sim->stop, limit - waited);
}

/*
 * Stopping: @t is in a ptrace stop where its last step left it.  Its
 * trace ends there, as when perf record disables the event, and it runs
 * on untraced.  The program itself gets SIGTERM, as perf record sends
 * it, unless a signal is pending for it (a terminal's ^C reaches it too).
 */
static int sim__let_go(struct sim *sim, struct sim_thread *t)
{
	long sig = t->signal == SIGCONT && sim->phase >= SIM_WOKEN ? 0 : t->signal;
	struct user_regs_struct regs;
	int err = 0;

	if (!t->awaiting_stop) {
		if (!t->in_kernel)
			err = sim_thread__regs(t, &regs) ?:
			      auxsample_pt_writer__interrupt(t->pt, regs.rip);
		err = err ?: sim_thread__verify(t) ?: sim__flush_trace(sim, t);
	}
	if (t->tid == sim->pid && !sig)
		sig = SIGTERM;
	if (ptrace(PTRACE_DETACH, t->tid, NULL, (void *)sig) < 0 && errno != ESRCH && !err)
		err = -errno;
	sim_thread__delete(t);
	return err;
}

/* New tasks whose clone or fork was never seen: let them go as they are. */
static void sim__let_go_early(struct sim *sim)
{
	while (sim->nr_early)
		ptrace(PTRACE_DETACH, sim->early[--sim->nr_early], NULL, NULL);
}

/*
 * perf record waits for its workload after it sent SIGTERM: so does the
 * simulator, for SIM_STOP_GRACE_MS or until a further stop signal, and
 * then kills it.
 */
static void sim__wait_program(struct sim *sim, const char *name)
{
	unsigned int signals = sim->stop.nr_signals;
	struct timespec start;
	int status;
	long waited;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (waitpid(sim->pid, &status, WNOHANG | __WALL) == 0) {
		waited = sim__ms_since(&start);
		if (waited >= SIM_STOP_GRACE_MS || sim->stop.nr_signals > signals) {
			pr_warning("perf auxsample simulate: %s (pid %d) did not end on SIGTERM: killed\n",
				   name, sim->pid);
			kill(sim->pid, SIGKILL);
			waitpid(sim->pid, &status, __WALL);
			return;
		}
		auxsample_sim_stop__wait(&sim->stop, SIM_STOP_GRACE_MS - waited);
	}
}

/* After each step: is it time to stop, or to say how far it got? */
static void sim__check(struct sim *sim)
{
	u64 bytes;

	auxsample_sim_stop__check(&sim->stop, sim->nr_insns);
	if (sim->phase == SIM_RUNNING && auxsample_sim_stop__why(&sim->stop))
		sim__stop_begin(sim);
	if (sim->phase != SIM_RUNNING || !auxsample_sim_progress__due(&sim->progress))
		return;
	bytes = sim->session->header.data_offset + sim->bytes +
		auxsample_sim_truth__size(&sim->truth);
	auxsample_sim_progress__show(&sim->progress, sim->nr_insns, sim->nr_samples, bytes);
}

/* --- tracing --- */

/*
 * Every thread steps one instruction at a time, all at once: a thread
 * blocked in a syscall waits for the others as it would.
 */
static int sim__trace(struct sim *sim)
{
	struct sim_thread *t;
	int status, err = 0;
	pid_t tid;

	while (!err && !list_empty(&sim->threads)) {
		if (sim->phase == SIM_RUNNING && auxsample_sim_stop__why(&sim->stop))
			sim__stop_begin(sim);
		tid = waitpid(-1, &status, __WALL | WNOHANG);
		if (!tid) {
			err = sim__idle(sim);
			continue;
		}
		if (tid < 0)
			return errno == ECHILD ? 0 : -errno;
		t = sim__find_thread(sim, tid);
		if (!t && tid == sim->pid) {
			/* The program, let go, has ended. */
			continue;
		}
		if (!t) {
			/* A new task's first stop, before its clone event. */
			err = sim__add_early_stop(sim, tid);
			continue;
		}
		if (t->awaiting_stop) {
			if (sim->phase != SIM_RUNNING)
				err = sim__let_go(sim, t);
			else
				err = sim__first_stop(sim, t) ?: sim_thread__step_begin(sim, t);
			continue;
		}
		err = sim_thread__step_end(sim, t, status);
		if (err == SIM_STEP_GONE) {
			err = sim_thread__verify(t) ?: sim__flush_trace(sim, t);
			sim_thread__delete(t);
		} else if (err == SIM_STEP_RUNNING) {
			err = 0;
		} else if (!err) {
			sim__check(sim);
			if (sim->phase != SIM_RUNNING)
				err = sim__let_go(sim, t);
			else
				err = sim_thread__step_begin(sim, t);
		}
	}
	sim__let_go_early(sim);
	return err;
}

/* --- what other engines tell (auxsample-sim-engine.h) --- */

struct sim_thread *auxsample_sim__thread_new(struct sim *sim, pid_t pid, pid_t tid,
					     pid_t ppid, pid_t ptid)
{
	struct sim_thread *t = sim__add_thread(sim, pid, tid);

	if (t && ppid >= 0 && sim__write_task(sim, t, PERF_RECORD_FORK, ppid, ptid)) {
		sim_thread__delete(t);
		return NULL;
	}
	return t;
}

struct sim_thread *auxsample_sim__thread_find(struct sim *sim, pid_t tid)
{
	return sim__find_thread(sim, tid);
}

int auxsample_sim__comm(struct sim *sim, struct sim_thread *t, bool exec, const char *comm)
{
	if (exec)
		t->in_kernel = false;
	return sim__process_begin(sim, t, exec, comm);
}

int auxsample_sim__mmap(struct sim *sim, struct sim_thread *t, u64 start, u64 end, u64 pgoff,
			u64 ino, const char *name)
{
	struct sim_map m = {
		.pid = t->pid, .start = start, .end = end, .pgoff = pgoff, .ino = ino,
	};

	if (sim__map_seen(sim, &m))
		return 0;
	return sim__remember_map(sim, &m) ?: sim__write_mmap(sim, t, &m, name);
}

int auxsample_sim__trace_from(struct sim *sim, struct sim_thread *t, u64 ip)
{
	return sim__trace_from(sim, t, ip);
}

/* What sim_thread__step_begin() and sim_thread__step_end() do around a step. */
int auxsample_sim__retire(struct sim *sim, struct sim_thread *t, u64 ip,
			  const struct intel_pt_insn *insn, u64 next)
{
	int err;

	sim->tsc += SIM_TSC_PER_INSN;
	err = auxsample_pt_writer__tick(t->pt, sim->tsc) ?:
	      auxsample_pt_writer__maybe_psb(t->pt, ip);
	/* Back from the kernel: the TIP.PGE after this time, as for a step. */
	if (!err && t->in_kernel) {
		t->in_kernel = false;
		err = auxsample_pt_writer__resume(t->pt, ip);
	}
	if (!err && insn)
		err = sim__model(sim, t, ip, insn, next);
	if (err)
		return err;
	sim->nr_insns++;
	if (++t->insns >= sim->opts->period)
		return sim__sample(sim, t, next);
	return 0;
}

/* A stop signal after the one that stopped it: no more waiting. */
bool auxsample_sim__stop_again(struct sim *sim)
{
	return sim->stop.nr_signals > sim->stop_signals;
}

bool auxsample_sim__in_kernel(const struct sim_thread *t)
{
	return t->in_kernel;
}

int auxsample_sim__signal(struct sim *sim __maybe_unused, struct sim_thread *t, u64 ip)
{
	if (t->in_kernel)
		return 0;
	t->in_kernel = true;
	return auxsample_pt_writer__interrupt(t->pt, ip);
}

int auxsample_sim__thread_exit(struct sim *sim, struct sim_thread *t)
{
	int err = sim__write_task(sim, t, PERF_RECORD_EXIT, t->pid, t->tid) ?:
		  sim_thread__verify(t) ?: sim__flush_trace(sim, t);

	sim_thread__delete(t);
	return err;
}

int auxsample_sim__thread_stop(struct sim *sim, struct sim_thread *t, u64 ip)
{
	int err = t->in_kernel || !ip ? 0 : auxsample_pt_writer__interrupt(t->pt, ip);

	err = err ?: sim_thread__verify(t) ?: sim__flush_trace(sim, t);
	sim_thread__delete(t);
	return err;
}

void auxsample_sim__child(struct sim *sim)
{
	auxsample_sim_stop__child(&sim->stop);
}

bool auxsample_sim__check(struct sim *sim)
{
	sim__check(sim);
	return sim->phase != SIM_RUNNING;
}

int auxsample_sim__wait(struct sim *sim, int timeout_ms)
{
	return auxsample_sim_stop__wait(&sim->stop, timeout_ms);
}

/* --- the recording --- */

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
static int sim__write_id_index(struct sim *sim)
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

/* The evlist perf record -Aintel_pt -e instructions:u builds. */
static int sim__setup_evlist(struct sim *sim)
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
	sim->pt_evsel->name = strdup(sim->opts->kernel ? "intel_pt//" : "intel_pt//u");
	sim->insn_evsel->name = strdup(sim->opts->tracepoint ? "sched:sched_switch" :
				       sim->opts->kernel ? "instructions" : "instructions:u");
	sim->dummy_evsel->name = strdup("dummy:u");
	if (!full_trace) {
		evsel__set_leader(sim->insn_evsel, sim->pt_evsel);
		sim->pt_evsel->core.nr_members = 2;
	}
	evlist__set_id_pos(sim->evlist);
	return 0;
}

static int sim__write_auxtrace_info(struct sim *sim)
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

/*
 * Kernel-traced: the simulated kernel published as perf record publishes
 * a real one, the [kernel.kallsyms]_text MMAP and its build-id in the
 * header; its image, <output>.vmlinux, is in the build-id cache as
 * 'perf buildid-cache --add' puts a vmlinux there, or with --kcore its
 * kallsyms and kcore are in <output>/kcore_dir instead.
 */
static int sim__write_kernel(struct sim *sim)
{
	struct sim_thread kt = { .pid = -1, .tid = -1, .cpu = 0 };
	union perf_event *ev = sim->event;
	u8 id[SIM_VMLINUX_BUILD_ID_SIZE];
	char path[PATH_MAX], sbuild_id[SBUILD_ID_SIZE];
	struct build_id bid;
	struct dso *dso;
	struct map *map;
	size_t size;
	int err;

	if (!sim->opts->kernel)
		return 0;
	sim->kernel = sim_kernel__new();
	if (!sim->kernel)
		return -ENOMEM;
	if (sim->opts->tracepoint)
		sim_kernel__enable_tracepoint(sim->kernel);
	snprintf(path, sizeof(path), "%s.vmlinux", sim->opts->output);
	err = sim_kernel__write_vmlinux(sim->kernel, path, id);
	if (err) {
		pr_err("cannot write %s: %s\n", path, strerror(-err));
		return err;
	}
	sim_kernel__text(sim->kernel, &size);
	memset(ev, 0, sizeof(ev->mmap));
	ev->mmap.header.type = PERF_RECORD_MMAP;
	ev->mmap.header.misc = PERF_RECORD_MISC_KERNEL;
	ev->mmap.pid = -1;
	ev->mmap.start = SIM_KERNEL_BASE;
	ev->mmap.len = PERF_ALIGN(size, 4096);
	ev->mmap.pgoff = SIM_KERNEL_BASE;	/* _text, the ref_reloc_sym */
	strlcpy(ev->mmap.filename, "[kernel.kallsyms]_text", sizeof(ev->mmap.filename));
	ev->mmap.header.size = offsetof(struct perf_record_mmap, filename) +
			       PERF_ALIGN(strlen(ev->mmap.filename) + 1, sizeof(u64));
	err = sim__write_sideband(sim, ev, sim->dummy_evsel, &kt);
	if (err)
		return err;
	map = machine__kernel_map(&sim->session->machines.host);
	dso = map ? map__dso(map) : NULL;
	if (!dso)
		return -ENOMEM;
	build_id__init(&bid, id, sizeof(id));
	dso__set_build_id(dso, &bid);
	if (sim->opts->kcore) {
		/* As perf record --kcore: perf reads kcore_dir before any vmlinux. */
		if (perf_data__make_kcore_dir(&sim->data, path, sizeof(path)) ||
		    sim_kernel__write_kcore_dir(sim->kernel, path)) {
			pr_err("cannot write %s/kcore_dir\n", sim->opts->output);
			return -EIO;
		}
		return 0;
	}
	build_id__sprintf(&bid, sbuild_id);
	if (build_id_cache__add_s(sbuild_id, path, NULL, false, false) < 0)
		pr_warning("cannot add %s to the build-id cache\n", path);
	return 0;
}

static int sim__open_output(struct sim *sim)
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

static int sim__close_output(struct sim *sim)
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

static void sim__cleanup(struct sim *sim, bool failed)
{
	bool created = sim->session != NULL;
	struct sim_thread *t, *tmp;

	list_for_each_entry_safe(t, tmp, &sim->threads, node) {
		kill(t->tid, SIGKILL);
		sim_thread__delete(t);
	}
	if (sim->session) {
		sim->session->evlist = NULL;
		perf_session__delete(sim->session);
	}
	evlist__delete(sim->evlist);
	/* A partial perf.data is worse than none; one perf did not create is not ours. */
	if (failed && created)
		unlink(sim->opts->output);
	auxsample_sim_truth__exit(&sim->truth, failed);
	free(sim->event);
	sim_kernel__delete(sim->kernel);
	free(sim->maps);
}

/* Fork @argv stopped under ptrace and run it up to its exec. */
static pid_t sim__spawn(struct sim *sim, const char **argv)
{
	int status, pipefd[2];
	pid_t pid;
	int err = 0;

	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return err;
	}
	if (!pid) {
		close(pipefd[0]);
		auxsample_sim_stop__child(&sim->stop);
		/* Untraced, SIGSTOP would stop it where waitpid() does not look. */
		if (!ptrace(PTRACE_TRACEME, 0, NULL, NULL)) {
			raise(SIGSTOP);
			execvp(argv[0], (char * const *)argv);
		}
		err = errno;
		if (write(pipefd[1], &err, sizeof(err)) < 0)
			_exit(126);
		_exit(127);
	}
	close(pipefd[1]);
	if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status)) {
		if (read(pipefd[0], &err, sizeof(err)) == sizeof(err))
			pr_err("cannot trace %s: %s: perf auxsample simulate single-steps it with ptrace (see kernel.yama.ptrace_scope)\n",
			       argv[0], strerror(err));
		goto out_fail;
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   (void *)(PTRACE_O_TRACEEXEC | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
			    PTRACE_O_TRACEVFORK | PTRACE_O_EXITKILL)) < 0) {
		pr_err("cannot trace %s: %s\n", argv[0], strerror(errno));
		goto out_kill;
	}
	if (ptrace(PTRACE_CONT, pid, NULL, NULL) < 0 || waitpid(pid, &status, 0) < 0)
		goto out_kill;
	if (!WIFSTOPPED(status) || (status >> 16) != PTRACE_EVENT_EXEC) {
		if (read(pipefd[0], &err, sizeof(err)) == sizeof(err))
			pr_err("cannot run %s: %s\n", argv[0], strerror(err));
		else
			pr_err("cannot run %s\n", argv[0]);
		goto out_kill;
	}
	close(pipefd[0]);
	return pid;

out_kill:
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
out_fail:
	close(pipefd[0]);
	return -ECHILD;
}

/* What was written, as perf record says it. */
static void sim__summary(struct sim *sim)
{
	char why[64], stopped[96] = "";
	struct stat st;

	if (fstat(perf_data__fd(&sim->data), &st))
		st.st_size = 0;
	if (auxsample_sim_stop__why(&sim->stop))
		snprintf(stopped, sizeof(stopped), "stopped %s after ",
			 auxsample_sim_stop__describe(&sim->stop, why, sizeof(why)));
	fprintf(stderr, "[ perf auxsample simulate: %s%" PRIu64 " instructions; wrote %.3f MB %s (%"
		PRIu64 " samples) and %.3f MB %s.truth ]\n", stopped, sim->nr_insns,
		st.st_size / 1024.0 / 1024.0, sim->opts->output, sim->nr_samples,
		auxsample_sim_truth__size(&sim->truth) / 1024.0 / 1024.0, sim->opts->output);
}

/*
 * 0 when the program ran to its end or to a bound, the number of the
 * signal that stopped it (for the caller to die of, as perf record
 * does), or a negative errno.
 */
static int sim__trace_ptrace(struct sim *sim, const char **argv)
{
	struct sim_thread *t;
	pid_t pid = sim__spawn(sim, argv);
	int err;

	if (pid < 0)
		return pid;
	sim->pid = pid;
	t = sim__add_thread(sim, pid, pid);
	if (!t) {
		kill(pid, SIGKILL);
		return -ENOMEM;
	}
	err = sim__start_thread(sim, t, true) ?: sim_thread__step_begin(sim, t);
	return err ?: sim__trace(sim);
}

/* The engine asked for, or the fast one where it can run. */
static int sim__pick_engine(struct sim_opts *opts)
{
	const char *why = NULL;
	bool vg = auxsample_sim_vg__available(&why);

	if (opts->engine == SIM_ENGINE_DEFAULT) {
		opts->engine = vg ? SIM_ENGINE_VALGRIND : SIM_ENGINE_PTRACE;
		if (!vg)
			pr_debug("perf auxsample simulate: ptrace engine: %s\n", why);
	} else if (opts->engine == SIM_ENGINE_VALGRIND && !vg) {
		pr_err("perf auxsample simulate: --engine=valgrind: %s\n", why);
		return -ECHILD;
	}
	return 0;
}

int auxsample_sim__run(const struct sim_opts *user_opts, int argc __maybe_unused,
		       const char **argv)
{
	struct sim_opts opts_buf = *user_opts, *opts = &opts_buf;
	struct sim sim = { .opts = opts };
	int err;

	INIT_LIST_HEAD(&sim.threads);
	sim.tsc = SIM_TSC_START;
	/* From here a stop signal is waited for, not taken. */
	err = sim__pick_engine(opts) ?:
	      auxsample_sim_stop__begin(&sim.stop, opts->max_insns, opts->duration);
	if (err)
		goto out;
	err = sim__open_output(&sim);
	if (err)
		goto out;
	auxsample_sim_progress__init(&sim.progress, opts->progress);

	if (opts->engine == SIM_ENGINE_VALGRIND)
		err = auxsample_sim_vg__trace(&sim, argv, &sim.pid);
	else
		err = sim__trace_ptrace(&sim, argv);
	auxsample_sim_progress__finish(&sim.progress);
	if (!err)
		err = sim__close_output(&sim);
	if (!err && sim.phase != SIM_RUNNING)
		sim__wait_program(&sim, argv[0]);
out:
	auxsample_sim_stop__end(&sim.stop);
	if (!err)
		sim__summary(&sim);
	else if (err != -ECHILD)	/* -ECHILD: reported where it happened */
		pr_err("perf auxsample simulate: %s\n", strerror(-err));
	sim__cleanup(&sim, err != 0);
	if (err)
		return err;
	return auxsample_sim_stop__why(&sim.stop) == SIM_STOP_SIGNAL ? sim.stop.signal : 0;
}
