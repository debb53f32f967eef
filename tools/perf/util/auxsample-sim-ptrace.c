// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample simulate --engine=ptrace: the program runs under ptrace
 * single-stepping; each thread steps one instruction at a time, which
 * perf's x86 instruction decoder classifies, and where the step ended
 * says what it did.  Stopping before the program ends lets its threads
 * go, as perf record lets its workload go.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>

#include <auxsample/pt-writer.h>
#include "auxsample-sim.h"
#include "auxsample-sim-core.h"
#include "debug.h"
#include "intel-pt-decoder/intel-pt-insn-decoder.h"

static int sim_thread__regs(struct sim_thread *t, struct user_regs_struct *regs)
{
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, regs) < 0) {
		pr_err("cannot read the registers of thread %d: %s\n", t->tid, strerror(errno));
		return -errno;
	}
	return 0;
}

static int sim__start_thread(struct sim *sim, struct sim_thread *t, bool exec)
{
	struct user_regs_struct regs;
	int err = sim_thread__regs(t, &regs);

	return err ?: sim__process_begin(sim, t, exec, NULL) ?: sim__scan_maps(sim, t) ?:
		      sim__trace_from(sim, t, regs.rip);
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
	return err ?: sim__trace_start(sim, t, regs.rip);
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

/*
 * A ptrace event of @t's step: a new task (the step goes on into the
 * rest of the syscall) or an exec, which starts the new program's trace.
 */
static int sim_thread__event(struct sim *sim, struct sim_thread *t, int event)
{
	int err;

	if (event == PTRACE_EVENT_EXEC) {
		sim_thread__branch(t, t->ip, 0, SB_FAR);
		err = t->in_kernel ? 0 : auxsample_pt_writer__syscall(t->pt);
		t->in_kernel = false;
		return err ?: sim_thread__open_mem(sim, t) ?: sim__start_thread(sim, t, true);
	}
	err = event == PTRACE_EVENT_EXIT ? 0 : sim__new_task(sim, t, event);
	if (err)
		return err;
	/* Finish the syscall. */
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, NULL) < 0)
		return -errno;
	return SIM_STEP_RUNNING;
}

/* @t's step went from @t->ip to @regs: what it did, and the sample it ends. */
static int sim_thread__stepped(struct sim *sim, struct sim_thread *t,
			       const struct user_regs_struct *regs)
{
	u64 ip = t->ip;
	int err;

	if (t->injected) {
		/*
		 * The signal's handler starts, nothing executed: from the
		 * kernel after a syscall, else it interrupted the code at @ip.
		 */
		bool from_syscall = t->in_kernel;

		err = t->in_kernel ? 0 : auxsample_pt_writer__interrupt(t->pt, ip);
		t->in_kernel = false;
		return err ?: sim__to_user(sim, t, regs->rip, from_syscall);
	}
	if (t->in_kernel) {
		/* Back from the syscall where it was made. */
		t->in_kernel = false;
		err = sim__to_user(sim, t, ip, true);
		if (err)
			return err;
	}

	if (!t->insn.length && regs->rip != ip) {
		/* Unknown bytes: only the flow that follows is known. */
		err = auxsample_pt_writer__interrupt(t->pt, ip) ?:
		      auxsample_pt_writer__resume(t->pt, regs->rip);
	} else {
		err = sim__model(sim, t, ip, &t->insn, regs->rip);
	}
	if (err)
		return err;
	if (t->insn.op == INTEL_PT_OP_SYSCALL)
		t->blocked = sim__is_blocking_syscall(regs);
	if (t->insn.op == INTEL_PT_OP_SYSCALL && sim__is_mapping_syscall(regs)) {
		err = sim__scan_maps(sim, t);
		if (err)
			return err;
	}

	sim->nr_insns++;
	/* Tracepoint samples come from the kernel's code, not a period. */
	if (++t->insns >= sim->opts->period && !sim->opts->tracepoint)
		return sim__sample(sim, t, regs->rip);
	return 0;
}

/* What became of @t's step, as waitpid said in @status. */
static int sim_thread__step_end(struct sim *sim, struct sim_thread *t, int status)
{
	struct user_regs_struct regs;
	int sig, event, err, pending;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		sim__write_task(sim, t, PERF_RECORD_EXIT, t->pid, t->tid);
		return SIM_STEP_GONE;
	}
	sig = WSTOPSIG(status);
	event = status >> 16;
	if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK ||
	    event == PTRACE_EVENT_VFORK || event == PTRACE_EVENT_EXIT ||
	    event == PTRACE_EVENT_EXEC)
		return sim_thread__event(sim, t, event);
	/* A signal to deliver: it comes with the next step. */
	pending = sig == SIGTRAP ? 0 : sig;

	err = sim_thread__regs(t, &regs);
	if (err)
		return err;

	t->signal = pending;
	/* Not executed (a signal came first), or a REP iteration. */
	if (regs.rip == t->ip && t->insn.length && !t->injected)
		return 0;
	return sim_thread__stepped(sim, t, &regs);
}

/*
 * How long a stop waits for a step that does not end (a thread blocked
 * in a syscall) before it wakes the thread; then SIM_STOP_GRACE_MS for
 * the threads to stop before it kills them.
 */
#define SIM_STOP_WAKE_MS	100

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
	sim_thread__delete(sim, t);
	return err;
}

/* New tasks whose clone or fork was never seen: let them go as they are. */
static void sim__let_go_early(struct sim *sim)
{
	while (sim->nr_early)
		ptrace(PTRACE_DETACH, sim->early[--sim->nr_early], NULL, NULL);
}

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
			sim_thread__delete(sim, t);
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

/*
 * 0 when the program ran to its end or to a bound, the number of the
 * signal that stopped it (for the caller to die of, as perf record
 * does), or a negative errno.
 */
int sim__trace_ptrace(struct sim *sim, const char **argv)
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
