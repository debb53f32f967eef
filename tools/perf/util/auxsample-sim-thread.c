// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample simulate: the threads of the program, each on a CPU of
 * its own with its Intel PT stream (libauxsample's pt-writer), the
 * memory its code is read from and its ground truth.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/list.h>
#include <linux/zalloc.h>

#include <auxsample/pt-writer.h>
#include "auxsample-sim.h"
#include "auxsample-sim-core.h"
#include "debug.h"

/*
 * The code @t runs is read from its /proc/<tid>/mem, opened anew at an
 * exec: the file opened before reads nothing of the new program (its
 * memory is the old one's, gone).  Other engines hand over the code they
 * ran.
 */
int sim_thread__open_mem(struct sim *sim, struct sim_thread *t)
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

/* The lowest CPU no thread runs on, taken; -1 where all are. */
static int sim__take_cpu(struct sim *sim)
{
	BUILD_BUG_ON(sizeof(sim->cpus_busy) * 8 < SIM_MAX_CPUS);
	for (int cpu = 0; cpu < SIM_MAX_CPUS; cpu++) {
		if (!(sim->cpus_busy & (1U << cpu))) {
			sim->cpus_busy |= 1U << cpu;
			return cpu;
		}
	}
	return -1;
}

struct sim_thread *sim__add_thread(struct sim *sim, pid_t pid, pid_t tid)
{
	struct sim_thread *t = zalloc(sizeof(*t));

	if (!t)
		return NULL;
	t->cpu = sim__take_cpu(sim);
	if (t->cpu < 0) {
		pr_err("more than %d threads at once: perf auxsample simulate gives each a CPU of its own\n",
		       SIM_MAX_CPUS);
		free(t);
		return NULL;
	}
	t->pid = pid;
	t->tid = tid;
	auxsample_sim_truth_thread__init(&t->truth, tid);
	t->mem_fd = -1;
	if (sim_thread__open_mem(sim, t))
		goto out_free;
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
		goto out_free;
	}
	list_add_tail(&t->node, &sim->threads);
	return t;

out_free:
	sim->cpus_busy &= ~(1U << t->cpu);
	free(t);
	return NULL;
}

/* The simulator never writes what libipt's packet decoder cannot parse. */
int sim_thread__verify(struct sim_thread *t)
{
	u64 offset;

	if (!auxsample_pt_writer__verify(t->pt, &offset))
		return 0;
	pr_err("perf auxsample simulate: bad Intel PT packet at offset %#" PRIx64
	       " of thread %d's stream\n",
	       offset, t->tid);
	return -EPROTO;
}

void sim_thread__delete(struct sim *sim, struct sim_thread *t)
{
	list_del(&t->node);
	sim->cpus_busy &= ~(1U << t->cpu);
	auxsample_pt_writer__delete(t->pt);
	if (t->mem_fd >= 0)
		close(t->mem_fd);
	auxsample_sim_truth_thread__exit(&t->truth);
	free(t);
}

struct sim_thread *sim__find_thread(struct sim *sim, pid_t tid)
{
	struct sim_thread *t;

	list_for_each_entry(t, &sim->threads, node) {
		if (t->tid == tid)
			return t;
	}
	return NULL;
}

/* The process starts, or exec replaced its program: a fresh stream. */
int sim__process_begin(struct sim *sim, struct sim_thread *t, bool exec,
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
		sim__forget_process_maps(sim, t->pid);
	}
	return sim__write_comm(sim, t, exec, comm);
}

/*
 * The thread's tracing starts in the kernel, which the user-only trace
 * leaves out: PSB+ and a TIP.PGE into its first instruction.  With the
 * kernel traced, the kernel's way there is not simulated: the PSB+ comes
 * at that instruction, as it did before.
 */
int sim__trace_start(struct sim *sim, struct sim_thread *t, u64 ip)
{
	sim->tsc++;
	return auxsample_pt_writer__tick(t->pt, sim->tsc) ?:
	       (sim->opts->kernel ? auxsample_pt_writer__start(t->pt, ip) :
				    auxsample_pt_writer__enter(t->pt, ip));
}

/* The trace comes after the events that tell whose it is. */
int sim__trace_from(struct sim *sim, struct sim_thread *t, u64 ip)
{
	return sim__write_itrace_start(sim, t) ?: sim__trace_start(sim, t, ip);
}
