// SPDX-License-Identifier: GPL-2.0
/*
 * The persistent event holder's protocol, client side: finding and
 * checking the holder, starting one, and the requests of 'perf
 * persistent' and of the tools that read its events.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/zalloc.h>
#include <internal/cpumap.h>
#include <internal/lib.h>
#include <perf/cpumap.h>

#include "cpumap.h"
#include "debug.h"
#include "event.h"
#include "persistent.h"
#include "persistent-rundir.h"

/* Holder protocol. */
int persistent_msg__send(int sock, const struct persistent_msg *msg, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = sizeof(*msg) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cmsg;

	if (fd >= 0) {
		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cmsg = CMSG_FIRSTHDR(&mh);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	}
	if (sendmsg(sock, &mh, MSG_NOSIGNAL) != (ssize_t)sizeof(*msg))
		return errno ? -errno : -EIO;
	return 0;
}

/* The strings of a message from the other side end where they must. */
void persistent_msg__terminate(struct persistent_msg *msg)
{
	msg->info.name[sizeof(msg->info.name) - 1] = '\0';
	msg->info.event[sizeof(msg->info.event) - 1] = '\0';
	msg->info.cpus[sizeof(msg->info.cpus) - 1] = '\0';
}

int persistent_msg__recv(int sock, struct persistent_msg *msg, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = msg, .iov_len = sizeof(*msg) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cmsg;
	ssize_t n;

	if (fd)
		*fd = -1;
	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	for (cmsg = CMSG_FIRSTHDR(&mh); cmsg; cmsg = CMSG_NXTHDR(&mh, cmsg)) {
		int passed;

		if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS)
			continue;
		memcpy(&passed, CMSG_DATA(cmsg), sizeof(int));
		if (fd && *fd < 0)
			*fd = passed;
		else
			close(passed);
	}
	if (n == 0)
		return -ECONNRESET;
	if (n != (ssize_t)sizeof(*msg) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		if (fd && *fd >= 0) {
			close(*fd);
			*fd = -1;
		}
		return -EPROTO;
	}
	persistent_msg__terminate(msg);
	return 0;
}

/*
 * Only a holder that runs as root or as us, in a directory of the same
 * owner, is told anything: root's new events must never go to a holder
 * that a user set up in a directory root was pointed at.
 */
static int persistent_holder__try_connect(void)
{
	uid_t owner;
	int dirfd, sock;

	dirfd = persistent_rundir__open_client(&owner);
	if (dirfd < 0)
		return dirfd;
	sock = persistent_rundir__connect(dirfd, owner);
	close(dirfd);
	return sock;
}

static void persistent__close_from(int first)
{
	long fd, max = sysconf(_SC_OPEN_MAX);

#ifdef __NR_close_range
	if (!syscall(__NR_close_range, first, ~0U, 0))
		return;
#endif
	for (fd = first; fd < min(max, 65536L); fd++)
		close(fd);
}

/*
 * Start 'perf persistent daemon' detached from us: it tells over a pipe
 * whether it could set up its directory (and says why not on our
 * stderr, which it keeps until then).  It gets none of our other open
 * files.
 */
static void persistent_holder__exec(int ready)
{
	static const char * const argv[] = { "perf", "persistent", "daemon", "--on-demand",
					     NULL };
	char fdenv[16];

	setsid();
	if (fork() != 0)
		_exit(0);
	if (ready != 3) {
		if (dup2(ready, 3) < 0)
			_exit(127);
		close(ready);
	}
	persistent__close_from(4);
	scnprintf(fdenv, sizeof(fdenv), "%d", 3);
	setenv("PERF_PERSISTENT_READY_FD", fdenv, 1);
	execv("/proc/self/exe", (char * const *)argv);
	_exit(127);
}

static int persistent_holder__start(void)
{
	int pipefd[2], status = 0, err = 0;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto out_close;
	}
	if (pid == 0) {
		close(pipefd[0]);
		/* Kept across exec: the daemon reports on it. */
		fcntl(pipefd[1], F_SETFD, 0);
		persistent_holder__exec(pipefd[1]);
	}
	close(pipefd[1]);
	pipefd[1] = -1;
	waitpid(pid, NULL, 0);
	/* The daemon writes its setup status, or nothing if exec failed. */
	if (readn(pipefd[0], &status, sizeof(status)) != sizeof(status))
		err = -ESRCH;
	else
		err = status;
out_close:
	close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	return err;
}

static bool persistent_holder__retry(int err)
{
	return err == -ENOENT || err == -ECONNREFUSED;
}

int persistent_holder__connect(bool start)
{
	int sock = persistent_holder__try_connect(), err, i;

	if (!start || !persistent_holder__retry(sock))
		return sock;

	/*
	 * An on-demand holder that is on its way out refuses new
	 * connections: start another once it has gone, which takes it up
	 * to a request's deadline.
	 */
	for (i = 0; i < 250; i++) {
		if (i % 25 == 0) {
			err = persistent_holder__start();
			if (err < 0)
				return err;
		}
		sock = persistent_holder__try_connect();
		if (!persistent_holder__retry(sock))
			return sock;
		usleep(20000);
	}
	return sock;
}

static int persistent_holder__request(int sock, struct persistent_msg *req)
{
	int err = persistent_msg__send(sock, req, -1);

	if (err)
		pr_err("persistent event holder: request failed: %s\n", strerror(-err));
	return err;
}

int persistent_holder__list(struct persistent_info **infos, int *nr)
{
	struct persistent_msg msg = { .op = PERSISTENT_OP_LIST };
	int sock, err, n = 0;
	struct persistent_info *v = NULL;

	*infos = NULL;
	*nr = 0;
	sock = persistent_holder__connect(false);
	if (sock < 0)
		return sock;

	err = persistent_holder__request(sock, &msg);
	while (!err) {
		struct persistent_info *tmp;

		err = persistent_msg__recv(sock, &msg, NULL);
		if (err || msg.op == PERSISTENT_OP_END) {
			err = err ?: msg.err;
			break;
		}
		tmp = realloc(v, (n + 1) * sizeof(*v));
		if (!tmp) {
			err = -ENOMEM;
			break;
		}
		v = tmp;
		v[n++] = msg.info;
	}
	close(sock);
	if (err) {
		free(v);
		return err;
	}
	*infos = v;
	*nr = n;
	return 0;
}

int persistent_holder__detach(struct persistent_info *info,
			      const struct perf_event_attr *attr,
			      struct perf_cpu_map *cpus, int *fds, u32 flags)
{
	struct persistent_msg msg = {
		.op = PERSISTENT_OP_DETACH, .flags = flags, .info = *info, .attr = *attr,
	};
	struct perf_cpu cpu;
	int sock, err, idx;

	sock = persistent_holder__connect(true);
	if (sock < 0) {
		/* A directory or holder refused has been said why already. */
		if (sock != -EPERM && sock != -EINVAL && sock != -ELOOP && sock != -ENOTDIR)
			pr_err("Error: cannot reach the persistent event holder in %s: %s\n",
			       persistent__dir(), strerror(-sock));
		return -ENOTCONN;
	}

	msg.info.nr_cpus = perf_cpu_map__nr(cpus);
	err = persistent_msg__send(sock, &msg, -1);
	perf_cpu_map__for_each_cpu(cpu, idx, cpus) {
		if (err)
			break;
		msg.op = PERSISTENT_OP_FD;
		msg.cpu = cpu.cpu;
		err = persistent_msg__send(sock, &msg, fds[idx]);
	}
	if (!err) {
		msg.op = PERSISTENT_OP_END;
		err = persistent_msg__send(sock, &msg, -1);
	}
	if (!err)
		err = persistent_msg__recv(sock, &msg, NULL);
	if (!err)
		err = msg.err;
	if (!err)
		*info = msg.info;
	close(sock);
	return err;
}

int persistent_holder__kill(const char *spec, bool all, int *nr_killed)
{
	struct persistent_msg msg = { .op = PERSISTENT_OP_KILL };
	int sock, err;

	*nr_killed = 0;
	sock = persistent_holder__connect(false);
	if (sock < 0)
		return sock;
	if (all)
		msg.flags = PERSISTENT_KILL_ALL;
	else
		strlcpy(msg.info.name, spec, sizeof(msg.info.name));
	err = persistent_holder__request(sock, &msg);
	if (!err)
		err = persistent_msg__recv(sock, &msg, NULL);
	if (!err) {
		err = msg.err;
		*nr_killed = msg.info.id;
	}
	close(sock);
	return err;
}

/* Connections to one event. */
const char *persistent__owner_name(s32 uid, char *buf, size_t size)
{
	struct passwd *pw;

	if (uid < 0)
		return "-";
	pw = getpwuid(uid);
	if (pw)
		scnprintf(buf, size, "%s (uid %d)", pw->pw_name, uid);
	else
		scnprintf(buf, size, "uid %d", uid);
	return buf;
}

static void persistent__no_event(const char *spec)
{
	pr_err("Error: no persistent event '%s': this kernel has no persistent PMU and no\n"
	       "holder runs in %s.\n"
	       "Create one with 'perf persistent detach -e <event> --name %s'.\n",
	       spec, persistent__dir(), spec);
}

int persistent_conn__alloc(struct persistent_conn *conn, struct perf_cpu_map *cpus)
{
	int i, nr = perf_cpu_map__nr(cpus);

	conn->cpus = cpus;
	conn->fds = malloc(nr * sizeof(int));
	conn->ids = calloc(nr, sizeof(u64));
	if (!conn->fds || !conn->ids)
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		conn->fds[i] = -1;
	return 0;
}

static void persistent_conn__refused(const char *spec, struct persistent_msg *msg)
{
	char owner[64];

	pr_err("Error: permission denied: persistent event '%s' belongs to %s.\n"
	       "Only its owner and root may read it, and the members of the holder's\n"
	       "reader group (see 'perf help persistent', SECURITY).\n",
	       spec, persistent__owner_name(msg->info.uid, owner, sizeof(owner)));
}

/* The FD messages that follow GET's INFO, and its END. */
static int persistent_conn__recv_fds(struct persistent_conn *conn)
{
	struct persistent_msg msg;
	int err, fd, idx;

	for (;;) {
		err = persistent_msg__recv(conn->sock, &msg, &fd);
		if (err || msg.op != PERSISTENT_OP_FD)
			break;
		idx = perf_cpu_map__idx(conn->cpus, (struct perf_cpu){ .cpu = msg.cpu });
		if (idx < 0 || (fd < 0) != conn->relay || conn->fds[idx] >= 0 ||
		    conn->ids[idx]) {
			if (fd >= 0)
				close(fd);
			return -EPROTO;
		}
		conn->fds[idx] = fd;
		conn->ids[idx] = msg.id;
	}
	if (!err && msg.op != PERSISTENT_OP_END)
		err = -EPROTO;
	return err;
}

int persistent_conn__open_holder(struct persistent_conn *conn, const char *spec,
					bool backlog)
{
	struct persistent_msg msg = { .op = PERSISTENT_OP_GET };
	struct perf_cpu_map *cpus;
	char owner[64];
	int err;

	conn->sock = persistent_holder__connect(false);
	if (conn->sock < 0) {
		if (persistent_holder__retry(conn->sock))
			persistent__no_event(spec);
		return conn->sock;
	}
	strlcpy(msg.info.name, spec, sizeof(msg.info.name));
	if (backlog)
		msg.flags = PERSISTENT_BACKLOG;
	err = persistent_holder__request(conn->sock, &msg);
	if (!err)
		err = persistent_msg__recv(conn->sock, &msg, NULL);
	if (!err)
		err = msg.err;
	if (err == -ENOENT) {
		pr_err("Error: unknown persistent event '%s': see 'perf persistent list'.\n", spec);
		return err;
	}
	if (err == -EACCES || err == -EPERM) {
		persistent_conn__refused(spec, &msg);
		return err;
	}
	if (err) {
		pr_err("Error: persistent event '%s': %s\n", spec, strerror(-err));
		return err;
	}
	conn->info = msg.info;
	conn->attr = msg.attr;
	conn->relay = msg.flags & PERSISTENT_RELAY;
	if (conn->info.uid != (s32)geteuid())
		pr_warning("Warning: persistent event '%s' belongs to %s, not to you.\n",
			   conn->info.name,
			   persistent__owner_name(conn->info.uid, owner, sizeof(owner)));
	cpus = perf_cpu_map__new(conn->info.cpus);
	if (!cpus || persistent_conn__alloc(conn, cpus))
		return -ENOMEM;

	err = persistent_conn__recv_fds(conn);
	if (err)
		pr_err("Error: the persistent event holder went away while handing out '%s': %s\n",
		       spec, strerror(-err));
	else if (fcntl(conn->sock, F_SETFL, O_NONBLOCK))
		err = -errno;
	return err;
}

/* One DATA message: whole records, each checked before it is passed on. */
static int persistent_conn__data(struct persistent_conn *conn, void *buf, size_t len,
				 persistent_record_fn fn, void *arg)
{
	struct persistent_data *data = buf;
	size_t off = sizeof(*data);
	int err = 0;

	conn->relay_lost += data->lost;
	while (!err && off + sizeof(struct perf_event_header) <= len) {
		union perf_event *event = buf + off;

		if (event->header.size < sizeof(event->header) || event->header.size > len - off)
			return -EPROTO;
		err = fn(event, data->cpu, arg);
		off += event->header.size;
	}
	return err;
}

int persistent_conn__poll(struct persistent_conn *conn, persistent_record_fn fn, void *arg)
{
	static u64 buf[(PERSISTENT_DATA_MAX + sizeof(struct persistent_msg)) / sizeof(u64)];
	int err = 0;

	while (!err && conn->sock >= 0) {
		ssize_t n = recv(conn->sock, buf, sizeof(buf), MSG_DONTWAIT);
		u32 op = 0;

		if (n >= (ssize_t)sizeof(op))
			memcpy(&op, buf, sizeof(op));

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (op == PERSISTENT_OP_DATA && n >= (ssize_t)sizeof(struct persistent_data) &&
		    conn->relay) {
			err = persistent_conn__data(conn, buf, n, fn, arg);
			continue;
		}
		if (op == PERSISTENT_OP_KILLED && n == sizeof(struct persistent_msg))
			conn->killed = true;
		else
			conn->holder_gone = true;
		close(conn->sock);
		conn->sock = -1;
	}
	return err;
}


/* The event's id a record carries, where the holder's attrs put it. */
static bool persistent__record_id(const union perf_event *event, u64 *id)
{
	size_t size = event->header.size;

	if (size < sizeof(event->header) + sizeof(u64))
		return false;
	/* PERF_SAMPLE_IDENTIFIER: first in a sample, last in the others. */
	if (event->header.type == PERF_RECORD_SAMPLE)
		memcpy(id, (const void *)event + sizeof(event->header), sizeof(*id));
	else
		memcpy(id, (const void *)event + size - sizeof(*id), sizeof(*id));
	return true;
}

static bool persistent_conn__may_write(const struct persistent_conn *conn, u32 type)
{
	const struct perf_event_attr *attr = &conn->attr;

	switch (type) {
	case PERF_RECORD_SAMPLE:
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		return true;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return attr->mmap || attr->mmap2 || attr->mmap_data;
	case PERF_RECORD_COMM:
		return attr->comm;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return attr->task;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return attr->context_switch;
	default:
		return false;
	}
}

/*
 * Another user's event: its owner keeps the event's fd and can write into
 * its buffer, so the records are the owner's word.  Those that no event
 * with this attr writes, or that carry none of its ids, are left out.
 */
bool persistent_conn__plausible(const struct persistent_conn *conn,
				const union perf_event *event)
{
	int i, nr = perf_cpu_map__nr(conn->cpus);
	u64 id;

	if (conn->kernel || conn->info.uid == (s32)geteuid())
		return true;
	if (!persistent_conn__may_write(conn, event->header.type) ||
	    !persistent__record_id(event, &id))
		return false;
	for (i = 0; i < nr; i++) {
		if (conn->ids[i] == id)
			return true;
	}
	return false;
}
