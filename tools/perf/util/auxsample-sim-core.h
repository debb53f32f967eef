/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_SIM_CORE_H
#define __PERF_AUXSAMPLE_SIM_CORE_H

/*
 * The state of perf auxsample simulate that its files share: the run
 * (auxsample-sim.c), its threads (auxsample-sim-thread.c), what each
 * instruction and sample puts in the trace (auxsample-sim-model.c), the
 * perf.data writer (auxsample-sim-output.c), its sideband records
 * (auxsample-sim-sideband.c) and events (auxsample-sim-evlist.c), the
 * ptrace engine (auxsample-sim-ptrace.c) and what other engines call
 * (auxsample-sim-engine.c).  Not for use outside the simulator.
 */
#include <linux/list.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "auxsample-sim-progress.h"
#include "auxsample-sim-stop.h"
#include "auxsample-sim-truth.h"
#include "data.h"
#include "event.h"
#include "intel-pt-decoder/intel-pt-insn-decoder.h"
#include "tool.h"

struct evlist;
struct evsel;
struct perf_session;
struct sim_kernel;
struct sim_opts;
struct auxsample_pt_writer;

/* A Skylake-SP: Intel PT with MTC, CYC and every PSB period. */
#define SIM_PT_PMU_TYPE		8
#define SIM_TSC_CTC_N		308	/* CPUID.15H:EBX */
#define SIM_TSC_CTC_D		2	/* CPUID.15H:EAX */
#define SIM_MAX_NONTURBO	37
/*
 * Each thread runs on a CPU of its own, the lowest one free: the machine
 * has this many, and a CPU a thread leaves at its exit is taken by the
 * next one (a shell's commands, one after the other).
 */
#define SIM_MAX_CPUS		16
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
 * How long a stop waits for the threads to stop, or for the program to
 * end on SIGTERM, before it kills them.
 */
#define SIM_STOP_GRACE_MS	5000

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
	unsigned int		cpus_busy;	/* a bit a CPU, taken by a thread */
	u64			aux_offset[SIM_MAX_CPUS];	/* each CPU's AUX area's */
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

/* The run (auxsample-sim.c): stopping before the program ends. */
long sim__ms_since(const struct timespec *then);
void sim__stop_begin(struct sim *sim);
void sim__check(struct sim *sim);

/* Threads (auxsample-sim-thread.c). */
struct sim_thread *sim__add_thread(struct sim *sim, pid_t pid, pid_t tid);
struct sim_thread *sim__find_thread(struct sim *sim, pid_t tid);
int sim_thread__open_mem(struct sim *sim, struct sim_thread *t);
int sim_thread__verify(struct sim_thread *t);
void sim_thread__delete(struct sim *sim, struct sim_thread *t);
int sim__process_begin(struct sim *sim, struct sim_thread *t, bool exec, const char *comm);
int sim__trace_start(struct sim *sim, struct sim_thread *t, u64 ip);
int sim__trace_from(struct sim *sim, struct sim_thread *t, u64 ip);

/* Ground truth (auxsample-sim-truth.c). */
static inline void sim_thread__branch(struct sim_thread *t, u64 from, u64 to,
				      enum auxsample_sim_branch kind)
{
	auxsample_sim_truth_thread__branch(&t->truth, from, to, kind);
}

static inline int sim_thread__call(struct sim_thread *t, u64 ret_addr)
{
	return auxsample_sim_truth_thread__call(&t->truth, ret_addr);
}

static inline void sim_thread__ret(struct sim_thread *t, u64 to)
{
	auxsample_sim_truth_thread__ret(&t->truth, to);
}

/* The trace and truth of instructions and samples (auxsample-sim-model.c). */
int sim__model(struct sim *sim, struct sim_thread *t, u64 ip,
	       const struct intel_pt_insn *insn, u64 next);
int sim__sample(struct sim *sim, struct sim_thread *t, u64 ip);
int sim__to_user(struct sim *sim, struct sim_thread *t, u64 ip, bool from_syscall);

/* perf.data (auxsample-sim-output.c). */
int sim__open_output(struct sim *sim);
int sim__close_output(struct sim *sim);
int sim__write(struct sim *sim, void *buf, size_t size);
int sim__write_sideband(struct sim *sim, union perf_event *ev, struct evsel *evsel,
			struct sim_thread *t);
int sim__write_sample(struct sim *sim, struct sim_thread *t, u64 ip);
int sim__flush_trace(struct sim *sim, struct sim_thread *t);

/* Sideband records (auxsample-sim-sideband.c). */
void sim_thread__comm(struct sim_thread *t, char comm[16]);
int sim__write_comm(struct sim *sim, struct sim_thread *t, bool exec, const char *name);
int sim__write_task(struct sim *sim, struct sim_thread *t, u32 type, pid_t ppid, pid_t ptid);
int sim__write_itrace_start(struct sim *sim, struct sim_thread *t);
int sim__add_map(struct sim *sim, struct sim_thread *t, const struct sim_map *m,
		 const char *name);
int sim__scan_maps(struct sim *sim, struct sim_thread *t);
void sim__forget_process_maps(struct sim *sim, pid_t pid);
int sim__write_kernel(struct sim *sim);

/* The events and what describes them (auxsample-sim-evlist.c). */
int sim__setup_evlist(struct sim *sim);
int sim__write_id_index(struct sim *sim);
int sim__write_auxtrace_info(struct sim *sim);

/* The ptrace engine (auxsample-sim-ptrace.c). */
int sim__trace_ptrace(struct sim *sim, const char **argv);

#endif /* __PERF_AUXSAMPLE_SIM_CORE_H */
