// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample simulate --engine=valgrind: the program runs under
 * Valgrind with the auxsample tool (tools/perf/auxsample-vg/), which
 * reports its control flow through a FIFO; this file runs it, and
 * auxsample-sim-vg-flow.c turns what it reports into the simulator's
 * events (auxsample-sim-engine.h), so the Intel PT streams,
 * samples, sideband and truth come from the same code as with the ptrace
 * engine.
 *
 * DESIGN: why Valgrind.  The ptrace engine single-steps: two context
 * switches and a few system calls per instruction, 15 to 25 thousand
 * instructions a second.  A dynamic binary translator runs the program's
 * code translated, with only the instrumentation we add.  On this
 * project's 2-core VM, 'python3 -c pass' (about 12M user instructions)
 * took 2.4 s under 'valgrind --tool=none --vex-guest-chase=no' against
 * 1.2 s natively.  Debian packages Valgrind's whole tool interface
 * (pub_tool_*.h, libvex_ir.h, libcoregrind and libvex static libraries):
 * a tool builds against the installed package alone.  QEMU's TCG plugins
 * were the other candidate: Debian 12's qemu-user binary has the plugin
 * API, but no package ships qemu-plugin.h, and qemu-user pulls in
 * libraries (capstone, glib) this machine lacks; Valgrind was installed
 * already and measured first.
 *
 * The tool reports, per thread: every superblock (a straight run of
 * instructions ending at the first branch, --vex-guest-chase=no) when it
 * is translated, with its code; which exit each execution left by, and
 * the target of a non-constant one.  The simulator classifies the ending
 * instruction with perf's own x86 decoder, as the ptrace engine does, so
 * both engines encode the same branches the same way.  What differs from
 * the hardware's view is said in the man page (Engines).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <subcmd/exec-cmd.h>

#include "auxsample-sim-engine.h"
#include "auxsample-sim-vg.h"
#include "auxsample-sim-vg-flow.h"
#include "debug.h"

#define VG_TOOL			"auxsample-amd64-linux"

/* --- where the tool is --- */

/* A directory for VALGRIND_LIB: the tool, and links to Valgrind's files. */
static bool vg__tool_dir(char *dir, size_t size)
{
	const char *env = getenv("PERF_AUXSAMPLE_VALGRIND_LIB");
	char exe[PATH_MAX], path[PATH_MAX + 64], *exec_path;
	ssize_t n;

	if (env) {
		snprintf(dir, size, "%.*s", PATH_MAX - 64, env);
		snprintf(path, sizeof(path), "%s/" VG_TOOL, dir);
		return !access(path, X_OK);
	}
	/* Beside the perf binary of a build, then where perf is installed. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0';
		snprintf(dir, size, "%.*s/auxsample-vg", PATH_MAX - 64, exe);
		snprintf(path, sizeof(path), "%s/" VG_TOOL, dir);
		if (!access(path, X_OK))
			return true;
	}
	exec_path = get_argv_exec_path();
	if (!exec_path)
		return false;
	snprintf(dir, size, "%s/auxsample-vg", exec_path);
	free(exec_path);
	snprintf(path, sizeof(path), "%s/" VG_TOOL, dir);
	return !access(path, X_OK);
}

static bool vg__on_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	while (path && *path) {
		size_t len = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, path, prog);
		if (!access(buf, X_OK))
			return true;
		path += len + !!path[len];
	}
	return false;
}

/* 0 if execvp() would find @prog and may run it, else its errno. */
static int vg__findable(const char *prog)
{
	const char *path = getenv("PATH") ?: "/usr/bin:/bin";
	char buf[PATH_MAX];
	int err = ENOENT;

	if (strchr(prog, '/'))
		return access(prog, X_OK) ? errno : 0;
	while (*path) {
		size_t len = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, path, prog);
		if (!access(buf, X_OK))
			return 0;
		if (errno == EACCES)
			err = EACCES;
		path += len + !!path[len];
	}
	return err;
}

static const char vg__not_built[] =
	"perf was built without its Valgrind tool (install valgrind, then make: see README)";

bool auxsample_sim_vg__available(const char **why)
{
	char dir[PATH_MAX];

	if (!vg__tool_dir(dir, sizeof(dir))) {
		*why = vg__not_built;
		return false;
	}
	if (!vg__on_path("valgrind")) {
		*why = "valgrind is not installed (scripts/install-deps installs it)";
		return false;
	}
	return true;
}

/* --- running it --- */

#define VG_MAX_ARGS		(16 + 256)

/* valgrind's command line for @argv, into @args (VG_MAX_ARGS): 0 or -ECHILD. */
static int vg__args(const char **args, const char *fifo_opt, const char **argv)
{
	int nargs = 0;

	args[nargs++] = "valgrind";
	args[nargs++] = "--tool=auxsample";
	args[nargs++] = "-q";
	/* A superblock ends at its first branch. */
	args[nargs++] = "--vex-guest-chase=no";
	/*
	 * Nor does it unroll a loop into copies of its body: each copy's
	 * branch but the last would be none of the superblock's exits.
	 */
	args[nargs++] = "--vex-iropt-unroll-thresh=0";
	args[nargs++] = "--trace-children=yes";
	args[nargs++] = "--vgdb=no";
	args[nargs++] = fifo_opt;
	for (int i = 0; argv[i]; i++) {
		if (nargs == VG_MAX_ARGS - 1) {
			pr_err("perf auxsample simulate: too many arguments\n");
			return -ECHILD;
		}
		args[nargs++] = argv[i];
	}
	args[nargs] = NULL;
	return 0;
}

/* Run @args with the tool in @tool_dir; perf's own signal mask in the child. */
static int vg__exec(struct vg *vg, const char **args, const char *tool_dir)
{
	int pipefd[2], err = 0;
	pid_t pid;

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
		auxsample_sim__child(vg->sim);
		setenv("VALGRIND_LIB", tool_dir, 1);
		execvp(args[0], (char * const *)args);
		err = errno;
		if (write(pipefd[1], &err, sizeof(err)) < 0)
			_exit(126);
		_exit(127);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &err, sizeof(err)) == sizeof(err)) {
		pr_err("perf auxsample simulate: cannot run valgrind: %s (--engine=ptrace needs no Valgrind)\n",
		       strerror(err));
		close(pipefd[0]);
		waitpid(pid, NULL, 0);
		return -ECHILD;
	}
	close(pipefd[0]);
	vg->pid = pid;
	return 0;
}

static int vg__spawn(struct vg *vg, const char **argv)
{
	char tool_dir[PATH_MAX], fifo_opt[128];
	const char *args[VG_MAX_ARGS];
	int err;

	if (!vg__tool_dir(tool_dir, sizeof(tool_dir)))
		return -ENOENT;
	/* What execvp() would say, before Valgrind says it in its own words. */
	err = vg__findable(argv[0]);
	if (err) {
		pr_err("cannot run %s: %s\n", argv[0], strerror(err));
		return -ECHILD;
	}
	snprintf(vg->dir, sizeof(vg->dir), "/tmp/perf-auxsample-vg-XXXXXX");
	if (!mkdtemp(vg->dir)) {
		pr_err("perf auxsample simulate: cannot make a directory in /tmp: %s\n",
		       strerror(errno));
		return -ECHILD;
	}
	snprintf(vg->fifo, sizeof(vg->fifo), "%s/flow", vg->dir);
	if (mkfifo(vg->fifo, 0600)) {
		pr_err("perf auxsample simulate: cannot make a FIFO: %s\n", strerror(errno));
		return -ECHILD;
	}
	vg->fd = open(vg->fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (vg->fd < 0)
		return -errno;
	snprintf(fifo_opt, sizeof(fifo_opt), "--auxsample-fifo=%s", vg->fifo);
	return vg__args(args, fifo_opt, argv) ?: vg__exec(vg, args, tool_dir);
}

/*
 * After a stop: the program, sent SIGTERM, runs on untraced until it ends,
 * as perf record's workload does; what the tool still writes is read and
 * dropped (a closed FIFO would kill it with SIGPIPE before its SIGTERM
 * handler runs).  After 5 s (perf record's wait, as the ptrace engine's)
 * or at a further stop signal it is killed.
 */
static void vg__drain(struct vg *vg, const char *name)
{
	struct pollfd pfd = { .fd = vg->fd, .events = POLLIN };
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!vg->reaped) {
		while (read(vg->fd, vg->buf, VG_READ_SIZE) > 0)
			;
		if (waitpid(vg->pid, &vg->status, WNOHANG) == vg->pid) {
			vg->reaped = true;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= 5 || auxsample_sim__stop_again(vg->sim)) {
			pr_warning("perf auxsample simulate: %s (pid %d) did not end on SIGTERM: killed\n",
				   name, vg->pid);
			kill(vg->pid, SIGKILL);
			waitpid(vg->pid, &vg->status, 0);
			vg->reaped = true;
			break;
		}
		if (poll(&pfd, 1, 10) < 0 && errno != EINTR)
			break;
		auxsample_sim__wait(vg->sim, 0);
	}
}

/* A stop: every thread's trace ends where it is; the program gets SIGTERM. */
static int vg__stop(struct vg *vg, const char *name)
{
	int err = 0;

	for (int i = 0; i < VG_MAX_THREADS; i++) {
		struct vg_thr *thr = &vg->thrs[i];

		if (!thr->t)
			continue;
		err = auxsample_sim__thread_stop(vg->sim, thr->t,
						 thr->started ? thr->pos : 0) ?: err;
		thr->t = NULL;
	}
	if (!vg->reaped)
		kill(vg->pid, SIGTERM);
	vg__drain(vg, name);
	return err;
}

static int vg__read(struct vg *vg)
{
	struct pollfd pfd = { .fd = vg->fd, .events = POLLIN };
	ssize_t n = read(vg->fd, vg->buf + vg->have, VG_READ_SIZE - vg->have);

	if (n > 0) {
		vg->have += n;
		return vg__consume(vg);
	}
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		return -errno;
	if (!vg->reaped && waitpid(vg->pid, &vg->status, WNOHANG) == vg->pid)
		vg->reaped = true;
	if (n == 0 && vg->reaped)
		return 1;	/* no writer left, the program is gone */
	if (n == 0) {
		/* No writer for now: an exec()ing instance reopens the FIFO. */
		return auxsample_sim__wait(vg->sim, 5);
	}
	if (poll(&pfd, 1, 50) < 0 && errno != EINTR)
		return -errno;
	/* The stop signals are blocked; this takes them. */
	return auxsample_sim__wait(vg->sim, 0);
}

int auxsample_sim_vg__trace(struct sim *sim, const char **argv, pid_t *pid)
{
	struct vg *vg = zalloc(sizeof(*vg));
	int err;

	if (!vg)
		return -ENOMEM;
	vg->sim = sim;
	vg->fd = -1;
	vg->buf = malloc(VG_READ_SIZE);
	err = vg->buf ? vg__spawn(vg, argv) : -ENOMEM;
	if (!err)
		*pid = vg->pid;
	while (!err) {
		err = vg__read(vg);
		if (!err && (vg->stopping || auxsample_sim__check(sim))) {
			err = vg__stop(vg, argv[0]);
			break;
		}
	}
	if (err == 1)
		err = 0;
	if (!err && !vg->started) {
		pr_err("cannot run %s under valgrind (see its message above)\n", argv[0]);
		err = -ECHILD;
	}
	/* Threads whose end was never said (killed): they end here. */
	for (int i = 0; i < VG_MAX_THREADS; i++) {
		if (vg->thrs[i].t) {
			int ret = vg__thr_exit(vg, &vg->thrs[i]);

			err = err ?: ret;
		}
	}
	if (vg->fd >= 0)
		close(vg->fd);
	if (vg->fifo[0])
		unlink(vg->fifo);
	if (vg->dir[0])
		rmdir(vg->dir);
	for (int i = 0; i < VG_MAX_PROCS; i++)
		vg__proc_forget_sbs(&vg->procs[i]);
	while (vg->all_sbs) {
		struct vg_sb *sb = vg->all_sbs;

		vg->all_sbs = sb->next;
		free(sb->addr);
		free(sb->exits);
		free(sb);
	}
	free(vg->buf);
	free(vg);
	return err;
}
