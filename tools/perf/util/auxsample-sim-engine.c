// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample simulate: what an engine other than ptrace (the
 * Valgrind one) tells the simulator, auxsample-sim-engine.h, turned into
 * the same streams, samples, sideband and truth as the ptrace engine's.
 */
#include <stdbool.h>
#include <linux/compiler.h>
#include <linux/perf_event.h>

#include <auxsample/pt-writer.h>
#include "auxsample-sim.h"
#include "auxsample-sim-core.h"
#include "auxsample-sim-engine.h"

struct sim_thread *auxsample_sim__thread_new(struct sim *sim, pid_t pid, pid_t tid,
					     pid_t ppid, pid_t ptid)
{
	struct sim_thread *t = sim__add_thread(sim, pid, tid);

	if (t && ppid >= 0 && sim__write_task(sim, t, PERF_RECORD_FORK, ppid, ptid)) {
		sim_thread__delete(sim, t);
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

	return sim__add_map(sim, t, &m, name);
}

int auxsample_sim__trace_from(struct sim *sim, struct sim_thread *t, u64 ip)
{
	return sim__trace_from(sim, t, ip);
}

/*
 * What sim_thread__step_begin() and sim_thread__step_end() of the
 * ptrace engine (auxsample-sim-ptrace.c) do around a step.
 */
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

	sim_thread__delete(sim, t);
	return err;
}

int auxsample_sim__thread_stop(struct sim *sim, struct sim_thread *t, u64 ip)
{
	int err = t->in_kernel || !ip ? 0 : auxsample_pt_writer__interrupt(t->pt, ip);

	err = err ?: sim_thread__verify(t) ?: sim__flush_trace(sim, t);
	sim_thread__delete(sim, t);
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
