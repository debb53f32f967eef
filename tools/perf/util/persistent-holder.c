// SPDX-License-Identifier: GPL-2.0
/*
 * 'perf persistent daemon': the holder of persistent events on kernels
 * without the persistent PMU.  It keeps the file descriptors and
 * read-only ring buffers of detached events, publishes them in a
 * directory laid out like the kernel's sysfs persistent PMU and serves
 * the clients allowed to read them.
 *
 * It usually runs as root and serves every local user, so it decides
 * from kernel-verified facts only (SO_PEERCRED, SO_PEERGROUPS), reaches
 * its files only through its checked directory (persistent-rundir.c),
 * and never blocks on a client: sockets are non-blocking, each request
 * has a deadline, each user a cap on connections and events.  This file
 * is its life cycle and event loop; persistent-serve.c answers requests.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/zalloc.h>
#include <perf/cpumap.h>

#include "cpumap.h"
#include "debug.h"
#include "persistent.h"
#include "persistent-holder.h"
#include "persistent-rundir.h"
#include "strbuf.h"
#include "util.h"

#define HOLDER_SCAN_MS		250
#define HOLDER_MAX_GROUPS	256

static volatile sig_atomic_t holder_done;

static void holder__signal(int sig __maybe_unused)
{
	holder_done = 1;
}

u64 holder__now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

static void holder__close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Setup. */
static int holder__publish_pmu(struct holder *h)
{
	struct perf_cpu_map *online = perf_cpu_map__new_online_cpus();
	char cpus[PERSISTENT_EVENT_MAX];
	int err, fmt;

	if (!online)
		return -ENOMEM;
	cpu_map__snprint(online, cpus, sizeof(cpus));
	perf_cpu_map__put(online);

	h->pmufd = persistent_rundir__subdir(h->dirfd, PERSISTENT_PMU_NAME, true);
	if (h->pmufd < 0)
		return h->pmufd;
	h->eventsfd = persistent_rundir__subdir(h->pmufd, "events", true);
	if (h->eventsfd < 0)
		return h->eventsfd;
	fmt = persistent_rundir__subdir(h->pmufd, "format", true);
	if (fmt < 0)
		return fmt;
	err = persistent_rundir__write(fmt, "persistent", "%s\n", PERSISTENT_HOLDER_FORMAT);
	close(fmt);
	if (!err)
		err = persistent_rundir__write(h->pmufd, "cpumask", "%s\n", cpus);
	/* Last: perf takes a directory with a type file for a PMU. */
	if (!err)
		err = persistent_rundir__write(h->pmufd, "type", "%u\n", PERSISTENT_HOLDER_TYPE);
	return err;
}

/* A holder runs while it holds the lock on holder.pid. */
static int holder__lock(struct holder *h)
{
	char pid[32];
	int len;

	h->lockfd = openat(h->dirfd, PERSISTENT_PID_NAME,
			   O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (h->lockfd < 0)
		return -errno;
	if (flock(h->lockfd, LOCK_EX | LOCK_NB))
		return errno == EWOULDBLOCK ? -EEXIST : -errno;
	len = scnprintf(pid, sizeof(pid), "%d\n", getpid());
	if (ftruncate(h->lockfd, 0) || pwrite(h->lockfd, pid, len, 0) != len)
		return -errno;
	return 0;
}

/* What a holder that died left behind, named, since its events are gone. */
static bool holder__remove_stale(int dirfd)
{
	struct strbuf lost = STRBUF_INIT;
	bool had_pmu = faccessat(dirfd, PERSISTENT_PMU_NAME, F_OK, AT_SYMLINK_NOFOLLOW) == 0;

	persistent_rundir__remove(dirfd, &lost);
	if (had_pmu)
		pr_warning("The persistent event holder in %s had died; its events are gone%s%s.\n"
			   "Cleaned up its directory.\n", persistent__dir(),
			   lost.len ? ": " : "", lost.len ? lost.buf : "");
	strbuf_release(&lost);
	return had_pmu;
}

int persistent_holder__clean_stale(void)
{
	uid_t owner;
	int dirfd, fd, ret = 0;

	dirfd = persistent_rundir__open_client(&owner);
	if (dirfd < 0)
		return 0;
	/* Only its owner may clean up, and only after its holder is gone. */
	fd = owner == geteuid() ? openat(dirfd, PERSISTENT_PID_NAME,
					 O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
		ret = holder__remove_stale(dirfd);
		unlinkat(dirfd, PERSISTENT_PID_NAME, 0);
		rmdir(persistent__dir());
	}
	if (fd >= 0)
		close(fd);
	close(dirfd);
	return ret;
}

static int holder__listen(struct holder *h)
{
	int err;

	h->listen = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (h->listen < 0)
		return -errno;
	err = persistent_rundir__bind(h->dirfd, h->listen);
	if (!err && listen(h->listen, 64))
		err = -errno;
	return err;
}

/*
 * Every fd a client holds open costs one of ours: take what the hard
 * limit allows, keep one in reserve to turn clients away at EMFILE, and
 * leave room for the events' own.
 */
static void holder__fd_limits(struct holder *h)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl))
		rl.rlim_cur = 1024;
	h->max_conns = max_t(long, 8, min_t(u64, rl.rlim_cur, 1 << 20) / 4);
	h->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* All events together may pin an eighth of memory, unless told otherwise. */
static void holder__mem_limits(struct holder *h)
{
	long pages = sysconf(_SC_PHYS_PAGES);

	h->max_pages = pages > 0 ? pages / 8 : 1 << 16;
}

static int holder__setup(struct holder *h)
{
	const char *dir = persistent__dir();
	int err;

	h->dirfd = persistent_rundir__open_holder();
	if (h->dirfd < 0)
		return h->dirfd;
	err = holder__lock(h);
	if (err == -EEXIST)
		return err;
	if (err) {
		pr_err("Error: cannot lock %s/%s: %s\n", dir, PERSISTENT_PID_NAME, strerror(-err));
		return err;
	}
	holder__remove_stale(h->dirfd);
	holder__fd_limits(h);
	holder__mem_limits(h);
	err = holder__publish_pmu(h);
	if (!err)
		err = holder__listen(h);
	if (err)
		pr_err("Error: cannot set up the persistent event holder in %s: %s\n",
		       dir, strerror(-err));
	return err;
}

static void holder__teardown(struct holder *h)
{
	holder__close_fd(&h->listen);
	holder__close_fd(&h->eventsfd);
	holder__close_fd(&h->pmufd);
	holder__close_fd(&h->reserve_fd);
	if (h->dirfd >= 0 && h->lockfd >= 0) {
		persistent_rundir__remove(h->dirfd, NULL);
		unlinkat(h->dirfd, PERSISTENT_PID_NAME, 0);
		rmdir(persistent__dir());
	}
	holder__close_fd(&h->lockfd);
	holder__close_fd(&h->dirfd);
}

/* Clients. */
static bool holder__in_group(struct holder *h, int sock, gid_t gid)
{
	gid_t groups[HOLDER_MAX_GROUPS];
	socklen_t len = sizeof(groups);
	unsigned int i;

	if (!h->have_reader_group)
		return false;
	if (gid == h->reader_group)
		return true;
	/* The peer's supplementary groups as they were at connect(). */
	if (getsockopt(sock, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		return false;
	for (i = 0; i < len / sizeof(gid_t); i++) {
		if (groups[i] == h->reader_group)
			return true;
	}
	return false;
}

enum holder_role holder_client__role(struct holder_client *c, struct holder_event *ev)
{
	if (c->uid == 0 || (s32)c->uid == ev->info.uid)
		return HOLDER_OWNER;
	return c->reader ? HOLDER_READER : HOLDER_OTHER;
}

static int holder__conns_of(struct holder *h, uid_t uid)
{
	struct holder_client *c;
	int nr = 0;

	list_for_each_entry(c, &h->clients, list)
		nr += c->uid == uid;
	return nr;
}

/* At EMFILE, give up the reserve to take the connection and close it. */
static void holder__refuse_one(struct holder *h)
{
	int sock;

	if (h->reserve_fd < 0)
		return;
	close(h->reserve_fd);
	sock = accept4(h->listen, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (sock >= 0)
		holder__close_sock(h, sock);
	h->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	pr_debug("holder: out of file descriptors, a connection turned away\n");
}

static bool holder__accept(struct holder *h)
{
	struct holder_client *c;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int sock, nr = 0;

	sock = accept4(h->listen, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (sock < 0) {
		if (errno == EMFILE || errno == ENFILE)
			holder__refuse_one(h);
		return false;
	}
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		goto out_close;
	list_for_each_entry(c, &h->clients, list)
		nr++;
	if (nr >= h->max_conns ||
	    (cred.uid && holder__conns_of(h, cred.uid) >= HOLDER_USER_CONNS)) {
		pr_debug("holder: uid %u has too many connections\n", (unsigned int)cred.uid);
		goto out_close;
	}
	c = zalloc(sizeof(*c));
	if (!c)
		goto out_close;
	c->sock = sock;
	c->uid = cred.uid;
	c->reader = holder__in_group(h, sock, cred.gid);
	c->deadline = holder__now_ms() + HOLDER_REQUEST_MS;
	c->last_cpu = -1;
	list_add_tail(&c->list, &h->clients);
	return true;
out_close:
	holder__close_sock(h, sock);
	return true;
}

static int holder__poll_timeout(struct holder *h)
{
	struct holder_client *c;
	u64 now = holder__now_ms(), next = now + HOLDER_SCAN_MS;

	list_for_each_entry(c, &h->clients, list) {
		if (c->deadline && c->deadline < next)
			next = c->deadline;
	}
	return next > now ? next - now : 0;
}

static void holder__poll(struct holder *h)
{
	struct holder_client *c, *tmp, **clients;
	struct pollfd *fds;
	int nr = 1, i;

	list_for_each_entry(c, &h->clients, list)
		nr++;
	fds = calloc(nr, sizeof(*fds));
	clients = calloc(nr, sizeof(*clients));
	if (!fds || !clients)
		goto out_free;
	fds[0].fd = h->listen;
	fds[0].events = POLLIN;
	i = 1;
	list_for_each_entry(c, &h->clients, list) {
		clients[i] = c;
		fds[i].fd = c->sock;
		fds[i++].events = POLLIN | (c->out_nr ? POLLOUT : 0);
	}
	if (poll(fds, nr, holder__poll_timeout(h)) > 0) {
		for (i = 1; i < nr; i++) {
			c = clients[i];
			if ((fds[i].revents & POLLOUT) && holder_client__flush(c))
				c->dead = true;
			/* A kill may have ended the one it was reading. */
			if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) && !c->dead)
				holder__serve(h, c);
		}
		/* Bounded: the backlog is read over the next rounds. */
		for (i = 0; i < 16 && (fds[0].revents & POLLIN) && holder__accept(h); i++)
			;
	}
out_free:
	free(clients);
	free(fds);

	list_for_each_entry_safe(c, tmp, &h->clients, list) {
		if (c->deadline && c->deadline <= holder__now_ms()) {
			pr_debug("holder: uid %u missed its deadline\n", (unsigned int)c->uid);
			c->dead = true;
		}
		if (c->dead)
			holder_client__delete(h, c);
	}
}

static void holder__report_ready(int status)
{
	const char *env = getenv("PERF_PERSISTENT_READY_FD");
	int fd, null;

	if (!env)
		return;
	fd = atoi(env);
	unsetenv("PERF_PERSISTENT_READY_FD");
	if (write(fd, &status, sizeof(status)) != sizeof(status))
		pr_debug("holder: cannot report to the starter\n");
	close(fd);
	if (status)
		return;
	/* Started on demand: a daemon from here on. */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		close(null);
	}
}

/*
 * An on-demand holder goes with its last event, but not while anyone is
 * still talking to it: first its socket goes, so that nobody new comes,
 * then those already queued are served.  Whoever came too late starts a
 * holder of its own once this one is gone.
 */
static bool holder__may_exit(struct holder *h)
{
	/* Its starter's DETACH may have been refused: it waits no longer. */
	if (!h->on_demand || (h->next_id == 1 &&
			      holder__now_ms() < h->started + 2 * HOLDER_REQUEST_MS))
		return false;
	if (!list_empty(&h->events)) {
		/* One came in while it was going: open again. */
		if (h->unlisted) {
			holder__close_fd(&h->listen);
			h->unlisted = holder__listen(h) != 0;
		}
		return false;
	}
	if (!h->unlisted) {
		unlinkat(h->dirfd, PERSISTENT_SOCK_NAME, 0);
		h->unlisted = true;
		/*
		 * Whoever connected before the unlink is in the backlog; then
		 * nobody more, not even through a bind mount of the socket.
		 */
		while (holder__accept(h))
			;
		holder__close_fd(&h->listen);
	}
	return list_empty(&h->clients);
}

static int holder__set_reader_group(struct holder *h, const char *name)
{
	struct group *gr;
	char *end;

	if (!name || !*name)
		return 0;
	gr = getgrnam(name);
	if (gr) {
		h->reader_group = gr->gr_gid;
	} else {
		h->reader_group = strtoul(name, &end, 10);
		if (*end) {
			pr_err("Error: no group '%s' for the persistent events' readers.\n", name);
			return -EINVAL;
		}
	}
	h->have_reader_group = true;
	return 0;
}

static void holder__run_loop(struct holder *h)
{
	while (!holder_done) {
		holder__poll(h);
		holder__scan(h);
		holder__relay(h);
		holder__closers(h, false);
		if (holder__may_exit(h))
			break;
	}
}

int persistent_holder__run(bool on_demand, const char *reader_group)
{
	struct holder h = {
		.listen = -1, .lockfd = -1, .dirfd = -1, .pmufd = -1, .eventsfd = -1,
		.reserve_fd = -1, .next_id = 1, .on_demand = on_demand,
		.root = geteuid() == 0,
	};
	struct sigaction sa = { .sa_handler = holder__signal };
	struct holder_event *ev, *etmp;
	sigset_t mask;
	struct holder_client *c, *ctmp;
	int err;

	INIT_LIST_HEAD(&h.events);
	INIT_LIST_HEAD(&h.clients);
	/* Nothing of the starter's: its umask, its blocked signals. */
	umask(022);
	sigemptyset(&mask);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (chdir("/"))
		pr_debug("holder: cannot chdir to /\n");

	err = holder__set_reader_group(&h, reader_group);
	if (!err)
		err = holder__setup(&h);
	if (err == -EEXIST) {
		/* Someone else holds: nothing to do for an on-demand start. */
		holder__report_ready(0);
		if (!on_demand)
			pr_err("Error: a persistent event holder already runs in %s.\n",
			       persistent__dir());
		holder__close_fd(&h.lockfd);
		holder__close_fd(&h.dirfd);
		return on_demand ? 0 : err;
	}
	holder__report_ready(err);
	if (err) {
		holder__teardown(&h);
		return err;
	}
	if (!on_demand)
		pr_info("perf persistent daemon: holding persistent events in %s (pid %d)\n",
			persistent__dir(), getpid());
	h.started = holder__now_ms();

	holder__run_loop(&h);

	list_for_each_entry_safe(c, ctmp, &h.clients, list)
		holder_client__delete(&h, c);
	list_for_each_entry_safe(ev, etmp, &h.events, list)
		holder_event__delete(&h, ev);
	holder__closers(&h, true);
	holder__teardown(&h);
	return 0;
}
