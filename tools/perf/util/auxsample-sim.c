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
 * when it stops the trace in the PMI (see sim__sample() in
 * auxsample-sim-model.c).  The perf.data carries what
 * 'perf record -Aintel_pt -e instructions:u' writes: the attrs, Intel PT's
 * AUXTRACE_INFO, COMM, MMAP2 with build-ids, FORK, EXIT, ITRACE_START,
 * FINISHED_ROUND and the header features, with a PT-capable CPU's cpuid.
 *
 * With --full-trace the file is instead what 'perf record -e intel_pt//u
 * -e instructions:u' writes: the same samples without AUX payload and
 * each CPU's whole stream in PERF_RECORD_AUXTRACE buffers, written at
 * every FINISHED_ROUND as perf record writes what its AUX mmaps hold.
 *
 * This is a model for tests, demos and teaching, not a profiler: the
 * kernel traced with --kernel is a simulated one of its own
 * (auxsample-sim-kernel.c), not the machine's, and time is a model
 * (SIM_TSC_PER_INSN, the PMI's path in sim__sample()) that keeps the
 * order of events that timed decoders rely on.
 *
 * This file runs it; auxsample-sim-core.h says which file does what.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/list.h>
#include <linux/time64.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "auxsample-sim.h"
#include "auxsample-sim-core.h"
#include "auxsample-sim-kernel.h"
#include "auxsample-sim-vg.h"
#include "debug.h"
#include "evlist.h"
#include "session.h"

/* The TSC at the start: real TSCs are never 0, and perf relies on it. */
#define SIM_TSC_START		0x10000000ULL

/* --- stopping before the program ends --- */

long sim__ms_since(const struct timespec *then)
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
void sim__stop_begin(struct sim *sim)
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
void sim__check(struct sim *sim)
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

static void sim__cleanup(struct sim *sim, bool failed)
{
	bool created = sim->session != NULL;
	struct sim_thread *t, *tmp;

	list_for_each_entry_safe(t, tmp, &sim->threads, node) {
		kill(t->tid, SIGKILL);
		sim_thread__delete(sim, t);
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
