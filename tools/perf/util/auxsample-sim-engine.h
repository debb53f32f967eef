/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_SIM_ENGINE_H
#define __PERF_AUXSAMPLE_SIM_ENGINE_H

#include <linux/types.h>
#include <stdbool.h>
#include <sys/types.h>

/*
 * What a recording engine other than ptrace single-stepping (the Valgrind
 * one, auxsample-sim-vg.c) tells the simulator, which turns it into the
 * same Intel PT streams, samples, sideband and truth as for the ptrace
 * engine (auxsample-sim.c).  Events come per thread, in the order the
 * thread did them.  Each returns 0 or a negative errno.
 */
struct sim;
struct sim_thread;
struct intel_pt_insn;

/* A thread of @pid; @ppid/@ptid >= 0: a FORK record says who made it. */
struct sim_thread *auxsample_sim__thread_new(struct sim *sim, pid_t pid, pid_t tid,
					     pid_t ppid, pid_t ptid);
struct sim_thread *auxsample_sim__thread_find(struct sim *sim, pid_t tid);

/*
 * A process starts (@exec: a program replaces the one @t ran, and its
 * stream starts afresh) or was forked: its COMM.  Its executable
 * mappings come next, then auxsample_sim__trace_from().
 */
int auxsample_sim__comm(struct sim *sim, struct sim_thread *t, bool exec, const char *comm);
/* An executable mapping of @t's process (MMAP2 with its build-id). */
int auxsample_sim__mmap(struct sim *sim, struct sim_thread *t, u64 start, u64 end, u64 pgoff,
			u64 ino, const char *name);
/* @t's trace starts at @ip: ITRACE_START, then TIP.PGE. */
int auxsample_sim__trace_from(struct sim *sim, struct sim_thread *t, u64 ip);

/*
 * @t executed the instruction at @ip and went to @next: @insn (perf's
 * decoding of it) for the one that ends a run of straight-line code, NULL
 * for the others, which cannot branch.  Back from the kernel (a syscall,
 * a signal), @ip is where user code goes on: a TIP.PGE, after the time
 * of the instruction as for a step.  Counts it for the sample period and
 * takes the sample where it ends.
 */
int auxsample_sim__retire(struct sim *sim, struct sim_thread *t, u64 ip,
			  const struct intel_pt_insn *insn, u64 next);
/* Whether @t is in the kernel: its next instruction comes with a TIP.PGE. */
bool auxsample_sim__in_kernel(const struct sim_thread *t);
/* A signal interrupts @t at @ip: FUP, TIP.PGD; its handler comes next. */
int auxsample_sim__signal(struct sim *sim, struct sim_thread *t, u64 ip);
/* @t ended: EXIT, its trace written; @t is freed. */
int auxsample_sim__thread_exit(struct sim *sim, struct sim_thread *t);
/* A stop: @t's trace ends where it was (at @ip when in user code). */
int auxsample_sim__thread_stop(struct sim *sim, struct sim_thread *t, u64 ip);

/* In the child forked to run the program: perf's own signal mask. */
void auxsample_sim__child(struct sim *sim);
/* After some work: stop now (signal, bounds)?  Shows progress. */
bool auxsample_sim__check(struct sim *sim);
/* Stopping: whether a further stop signal came, which ends the waiting. */
bool auxsample_sim__stop_again(struct sim *sim);
/* How long the stop module lets a stop wait: 0 or a negative errno. */
int auxsample_sim__wait(struct sim *sim, int timeout_ms);

#endif /* __PERF_AUXSAMPLE_SIM_ENGINE_H */
