// SPDX-License-Identifier: GPL-2.0
/*
 * Persistent events: the kernel's persistent PMU where it exists, the
 * holder ('perf persistent daemon') elsewhere, read by any number of
 * read-only consumers.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <api/fs/fs.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/ring_buffer.h>
#include <linux/string.h>
#include <linux/zalloc.h>
#include <internal/lib.h>
#include <perf/cpumap.h>
#include <perf/evsel.h>
#include <perf/threadmap.h>

#include "perf-sys.h"
#include "asm/bug.h"
#include "counts.h"
#include "cpumap.h"
#include "debug.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "evsel_fprintf.h"
#include "header.h"
#include "persistent.h"
#include "persistent-rundir.h"
#include "pmu.h"
#include "pmus.h"
#include "trace-event.h"
#include "string2.h"
#include "util.h"

/* Below this size a record is not one; all records are 8-byte aligned. */
#define PERSISTENT_RECORD_MIN	sizeof(struct perf_event_header)

const char *persistent__dir(void)
{
	const char *dir = getenv(PERSISTENT_DIR_ENV);

	return dir && *dir ? dir : PERSISTENT_DIR_DEFAULT;
}

static int persistent__kernel_path(char *buf, size_t size, const char *name)
{
	int n = perf_pmu__event_source_devices_scnprintf(buf, size);

	if (!n)
		return -ENOENT;
	n = scnprintf(buf + n, size - n, PERSISTENT_PMU_NAME "%s%s", name ? "/" : "",
		      name ?: "");
	return 0;
}

bool persistent__kernel_pmu(void)
{
	char path[PATH_MAX];

	if (persistent__kernel_path(path, sizeof(path), "type"))
		return false;
	return access(path, F_OK) == 0;
}

struct perf_pmu *perf_pmus__find_persistent(const char *name)
{
	struct perf_pmu *pmu;
	char path[PATH_MAX];
	int dirfd;

	if (strcmp(name, PERSISTENT_PMU_NAME) || persistent__kernel_pmu())
		return NULL;

	/*
	 * Only a holder's directory, owned by root or by us (its files say
	 * how attrs are made): it has the PMU's type file.
	 */
	scnprintf(path, sizeof(path), "%s/type", PERSISTENT_PMU_NAME);
	dirfd = persistent_rundir__open_client(NULL);
	if (dirfd < 0 || faccessat(dirfd, path, F_OK, AT_SYMLINK_NOFOLLOW)) {
		if (dirfd >= 0)
			close(dirfd);
		pr_warning_once("No persistent events: this kernel has no persistent PMU and no holder runs in %s.\n"
				"'perf persistent detach -e <event>' makes one.\n", persistent__dir());
		return NULL;
	}
	pmu = perf_pmus__add_test_pmu(dirfd, PERSISTENT_PMU_NAME);
	close(dirfd);
	return pmu;
}

bool evsel__is_persistent(struct evsel *evsel)
{
	struct perf_pmu *pmu;

	if (evsel->core.attr.type == PERSISTENT_HOLDER_TYPE)
		return true;
	if (evsel->core.attr.type < PERF_TYPE_MAX)
		return false;
	pmu = evsel__find_pmu(evsel);
	return pmu && !strcmp(pmu->name, PERSISTENT_PMU_NAME);
}

/*
 * Ring buffers.  The kernel writes a backward buffer from the top down:
 * data_head goes down from 0 and the newest record starts at it, the
 * older ones follow.  A reader that last saw head 'prev' finds the new
 * records in [head, prev).  While it copies them the kernel may go on
 * writing below head and, once it has wrapped, over the oldest bytes;
 * the head read again afterwards says how far, and records it reached
 * are dropped as lost.  One record may be half written below the
 * published head, so a page more is kept clear of it.
 */
static void persistent_buf__start(struct persistent_buf *buf, bool backlog)
{
	u64 head = ring_buffer_read_head(buf->base), written = -head;

	buf->prev = head;
	if (backlog) {
		buf->prev += min(written, buf->size);
		buf->backlog = written >= buf->size;
	}
}

int persistent_buf__mmap(struct persistent_buf *buf, int fd, int cpu, u32 pages,
			 bool backlog)
{
	memset(buf, 0, sizeof(*buf));
	buf->cpu = cpu;
	buf->size = (u64)pages * page_size;
	buf->len = buf->size + page_size;
	if (!pages || (pages & (pages - 1)))
		return -EINVAL;

	buf->base = mmap(NULL, buf->len, PROT_READ, MAP_SHARED, fd, 0);
	if (buf->base == MAP_FAILED) {
		buf->base = NULL;
		return -errno;
	}
	buf->copy = malloc(buf->size);
	buf->offs = malloc(buf->size / PERSISTENT_RECORD_MIN * sizeof(*buf->offs));
	if (!buf->copy || !buf->offs) {
		persistent_buf__munmap(buf);
		return -ENOMEM;
	}
	persistent_buf__start(buf, backlog);
	return 0;
}

void persistent_buf__clone(struct persistent_buf *buf, const struct persistent_buf *from,
			   bool backlog)
{
	*buf = *from;
	buf->clone = true;
	buf->lost_bytes = buf->records = 0;
	buf->backlog = false;
	persistent_buf__start(buf, backlog);
}

void persistent_buf__munmap(struct persistent_buf *buf)
{
	if (buf->clone) {
		memset(buf, 0, sizeof(*buf));
		return;
	}
	if (buf->base)
		munmap(buf->base, buf->len);
	buf->base = NULL;
	zfree(&buf->copy);
	zfree(&buf->offs);
}

static void persistent_buf__copy(struct persistent_buf *buf, void *to, u64 pos, u64 len)
{
	const u8 *data = (const u8 *)buf->base + page_size;
	u64 mask = buf->size - 1, off = pos & mask;
	u64 first = min(len, buf->size - off);

	memcpy(to, data + off, first);
	if (first < len)
		memcpy((u8 *)to + first, data, len - first);
}

int persistent_buf__read(struct persistent_buf *buf, persistent_record_fn fn, void *arg)
{
	struct perf_event_mmap_page *pc = buf->base;
	u64 head, head2, avail, off = 0, valid, moved, lost_before;
	unsigned int nr = 0;
	int err = 0;

	head = ring_buffer_read_head(pc);
	avail = buf->prev - head;
	if (!avail)
		return 0;
	if (avail > buf->size) {
		buf->lost_bytes += avail - buf->size;
		avail = buf->size;
	}
	lost_before = buf->lost_bytes;

	while (off + PERSISTENT_RECORD_MIN <= avail) {
		struct perf_event_header *hdr = buf->copy + off;

		persistent_buf__copy(buf, hdr, head + off, sizeof(*hdr));
		if (hdr->size < PERSISTENT_RECORD_MIN || (hdr->size & 7) ||
		    off + hdr->size > avail)
			break;
		persistent_buf__copy(buf, hdr, head + off, hdr->size);
		buf->offs[nr++] = off;
		off += hdr->size;
	}

	/* What the kernel wrote meanwhile may have reached the oldest ones. */
	smp_rmb();
	head2 = READ_ONCE(pc->data_head);
	moved = head - head2;
	valid = moved + page_size >= buf->size ? 0 : buf->size - moved - page_size;
	while (nr) {
		struct perf_event_header *hdr = buf->copy + buf->offs[nr - 1];

		if (buf->offs[nr - 1] + hdr->size <= valid)
			break;
		nr--;
	}
	off = nr ? buf->offs[nr - 1] + ((struct perf_event_header *)(buf->copy +
					 buf->offs[nr - 1]))->size : 0;
	buf->lost_bytes += avail - off;
	/* A full backlog's oldest, half-overwritten end is history, not loss. */
	if (buf->backlog)
		buf->lost_bytes = lost_before;
	buf->backlog = false;
	buf->prev = head;

	/* Oldest first. */
	while (nr-- && !err) {
		err = fn(buf->copy + buf->offs[nr], buf->cpu, arg);
		buf->records++;
	}
	return err;
}

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
	msg->info.name[sizeof(msg->info.name) - 1] = '\0';
	msg->info.event[sizeof(msg->info.event) - 1] = '\0';
	msg->info.cpus[sizeof(msg->info.cpus) - 1] = '\0';
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
	char *argv[] = { (char *)"perf", (char *)"persistent", (char *)"daemon",
			 (char *)"--on-demand", NULL };
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
	execv("/proc/self/exe", argv);
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
	 * connections: start another once it has gone.
	 */
	for (i = 0; i < 100; i++) {
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
	if (sock < 0)
		return sock;

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

static int persistent_conn__alloc(struct persistent_conn *conn, struct perf_cpu_map *cpus)
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

static int persistent_conn__open_holder(struct persistent_conn *conn, const char *spec,
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
			   conn->info.name, persistent__owner_name(conn->info.uid, owner, sizeof(owner)));
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

static int persistent__attr_fprintf(FILE *fp, const char *name, const char *val,
				    void *priv __maybe_unused)
{
	return fprintf(fp, "  %-32s %s\n", name, val);
}

static void persistent__display_attr(struct perf_event_attr *attr)
{
	if (!debug_peo_args && verbose < 2)
		return;
	fprintf(stderr, "%.60s\n", graph_dotted_line);
	fprintf(stderr, "perf_event_attr:\n");
	perf_event_attr__fprintf(stderr, attr, persistent__attr_fprintf, NULL);
	fprintf(stderr, "%.60s\n", graph_dotted_line);
}

/* The kernel's persistent PMU: what its sysfs directory says. */
static int persistent__kernel_read(const char *file, char *buf, size_t size)
{
	char path[PATH_MAX];
	size_t len;
	int err;

	err = persistent__kernel_path(path, sizeof(path), file);
	if (err)
		return err;
	err = filename__read_str(path, (char **)&file, &len);
	if (err)
		return err;
	strlcpy(buf, file, size);
	free((char *)file);
	strim(buf);
	return 0;
}

int persistent__kernel_id(const char *spec, u32 *id)
{
	char file[PATH_MAX], buf[256], *cfg, *end;
	unsigned long v;

	v = strtoul(spec, &end, 0);
	if (*spec && !*end && v <= UINT_MAX) {
		*id = v;
		return 0;
	}
	scnprintf(file, sizeof(file), "events/%s", spec);
	if (persistent__kernel_read(file, buf, sizeof(buf)))
		return -ENOENT;
	cfg = strstr(buf, "config=");
	if (!cfg)
		return -EINVAL;
	v = strtoul(cfg + 7, &end, 0);
	if (end == cfg + 7 || v > UINT_MAX)
		return -EINVAL;
	*id = v;
	return 0;
}

/* The attr of PERF_TYPE_PERSISTENT: the type, the id and the flag bit. */
static int persistent__kernel_attr(struct perf_event_attr *attr, u32 id)
{
	char buf[64];
	unsigned int word, bit;
	u64 *words = (u64 *)attr;

	if (persistent__kernel_read("type", buf, sizeof(buf)) ||
	    sscanf(buf, "%u", &attr->type) != 1)
		return -ENOENT;
	attr->size = sizeof(*attr);
	attr->config = id;
	if (persistent__kernel_read("format/persistent", buf, sizeof(buf)) ||
	    sscanf(buf, "attr%u:%u", &word, &bit) != 2 || !word ||
	    word >= sizeof(*attr) / sizeof(u64) || bit > 63) {
		pr_err("Error: the kernel's persistent PMU has no valid format/persistent ('%s').\n",
		       buf);
		return -EINVAL;
	}
	words[word] |= 1ULL << bit;
	return 0;
}

static int persistent_conn__open_kernel(struct persistent_conn *conn, const char *spec,
					u32 id, const struct perf_event_attr *tmpl)
{
	char buf[PERSISTENT_EVENT_MAX];
	struct perf_cpu_map *cpus;
	struct perf_cpu cpu;
	int err, idx;

	conn->kernel = true;
	conn->sock = -1;
	if (tmpl) {
		conn->attr = *tmpl;
	} else {
		err = persistent__kernel_attr(&conn->attr, id);
		if (err)
			return err;
	}
	cpus = persistent__kernel_read("cpumask", buf, sizeof(buf)) ?
		perf_cpu_map__new_online_cpus() : perf_cpu_map__new(buf);
	if (!cpus || persistent_conn__alloc(conn, cpus))
		return -ENOMEM;
	conn->info.id = id;
	conn->info.uid = -1;
	strlcpy(conn->info.name, spec, sizeof(conn->info.name));
	cpu_map__snprint(cpus, conn->info.cpus, sizeof(conn->info.cpus));
	conn->info.nr_cpus = perf_cpu_map__nr(cpus);

	perf_cpu_map__for_each_cpu(cpu, idx, cpus) {
		persistent__display_attr(&conn->attr);
		pr_debug2_peo("sys_perf_event_open: pid -1  cpu %d  group_fd -1  flags %#lx",
			      cpu.cpu, (unsigned long)PERF_FLAG_FD_CLOEXEC);
		conn->fds[idx] = sys_perf_event_open(&conn->attr, -1, cpu.cpu, -1,
						     PERF_FLAG_FD_CLOEXEC);
		if (conn->fds[idx] < 0) {
			err = -errno;
			pr_debug2_peo(" = %d\n", err);
			pr_err("Error: this kernel lacks persistent events: opening persistent event '%s'\n"
			       "(PMU type %u, config %#llx) on CPU %d failed: %s.\n"
			       "Its sysfs (%s) shows a persistent PMU that the kernel does not\n"
			       "implement; without one, 'perf persistent' uses its holder.\n",
			       spec, conn->attr.type, (unsigned long long)conn->attr.config,
			       cpu.cpu, strerror(-err), sysfs__mountpoint() ?: "/sys");
			return err;
		}
		pr_debug2_peo(" = %d\n", conn->fds[idx]);
		if (ioctl(conn->fds[idx], PERF_EVENT_IOC_ID, &conn->ids[idx]) < 0)
			return -errno;
	}
	return 0;
}

int persistent_conn__open(struct persistent_conn *conn, const char *spec, bool backlog)
{
	u32 id;
	int err;

	memset(conn, 0, sizeof(*conn));
	conn->sock = -1;
	if (!persistent__kernel_pmu())
		return persistent_conn__open_holder(conn, spec, backlog);

	err = persistent__kernel_id(spec, &id);
	if (err) {
		pr_err("Error: unknown persistent event '%s': see 'perf persistent list'.\n", spec);
		return err;
	}
	return persistent_conn__open_kernel(conn, spec, id, NULL);
}

int persistent_conn__add_ids(struct persistent_conn *conn, struct evlist *evlist,
			     struct evsel *evsel)
{
	int idx, nr = perf_cpu_map__nr(conn->cpus);

	if (perf_evsel__alloc_id(&evsel->core, nr, 1))
		return -ENOMEM;
	for (idx = 0; idx < nr; idx++)
		perf_evlist__id_add(&evlist->core, &evsel->core, idx, 0, conn->ids[idx]);
	return 0;
}

void persistent_conn__close(struct persistent_conn *conn)
{
	int i;

	for (i = 0; conn->fds && i < perf_cpu_map__nr(conn->cpus); i++) {
		if (conn->fds[i] >= 0)
			close(conn->fds[i]);
	}
	zfree(&conn->fds);
	zfree(&conn->ids);
	perf_cpu_map__put(conn->cpus);
	conn->cpus = NULL;
	if (conn->sock >= 0)
		close(conn->sock);
	conn->sock = -1;
}

/*
 * perf record: persistent events leave the evlist before it is opened,
 * come back with the ids of the shared events before the header is
 * written, and are read beside perf's own buffers whenever a timer fires.
 */
struct persistent_evsel {
	struct evsel		*evsel;
	struct persistent_conn	conn;
	struct persistent_buf	*bufs;
};

struct persistent_evlist {
	int			nr;
	int			timerfd;
	struct persistent_evsel	*entries;
};

#define PERSISTENT_READ_INTERVAL_MS	100

static void evlist__renumber(struct evlist *evlist)
{
	struct evsel *evsel;
	int idx = 0;

	evlist__for_each_entry(evlist, evsel)
		evsel->core.idx = idx++;
}

/*
 * The kernel's wakeups go to one reader of a shared buffer only: the
 * others read on a timer, which the tool polls with its own fds.
 */
static int persistent_evlist__add_timer(struct persistent_evlist *pe, struct evlist *evlist)
{
	struct itimerspec its = {
		.it_interval.tv_nsec = PERSISTENT_READ_INTERVAL_MS * 1000000L,
		.it_value.tv_nsec = PERSISTENT_READ_INTERVAL_MS * 1000000L,
	};
	int err;

	pe->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (pe->timerfd < 0 || timerfd_settime(pe->timerfd, 0, &its, NULL))
		return -errno;
	err = perf_evlist__add_pollfd(&evlist->core, pe->timerfd, NULL, POLLIN,
				      fdarray_flag__nonfilterable | fdarray_flag__non_perf_event);
	return err < 0 ? -ENOMEM : 0;
}

int persistent_evlist__split(struct evlist *evlist, struct persistent_evlist **pevlist)
{
	struct persistent_evlist *pe;
	struct evsel *evsel, *tmp;
	int nr = 0;

	*pevlist = NULL;
	evlist__for_each_entry(evlist, evsel)
		nr += evsel__is_persistent(evsel);
	if (!nr)
		return 0;

	pe = zalloc(sizeof(*pe));
	if (!pe)
		return -ENOMEM;
	pe->timerfd = -1;
	pe->entries = calloc(nr, sizeof(*pe->entries));
	if (!pe->entries) {
		free(pe);
		return -ENOMEM;
	}
	evlist__for_each_entry_safe(evlist, tmp, evsel) {
		if (!evsel__is_persistent(evsel))
			continue;
		if (!evsel__is_group_leader(evsel) || evsel->core.nr_members > 1) {
			pr_err("Error: persistent event %s cannot be in a group.\n",
			       evsel__name(evsel));
			persistent_evlist__delete(pe);
			return -EINVAL;
		}
		evlist__remove(evlist, evsel);
		pe->entries[pe->nr].conn.sock = -1;
		pe->entries[pe->nr++].evsel = evsel;
	}
	evlist__renumber(evlist);
	*pevlist = pe;

	/* Something to run the workload with and to track it. */
	if (!evlist->core.nr_entries && evlist__add_dummy(evlist))
		goto out_delete;
	return persistent_evlist__add_timer(pe, evlist);
out_delete:
	persistent_evlist__delete(pe);
	*pevlist = NULL;
	return -ENOMEM;
}

static int persistent_evsel__open(struct persistent_evsel *pevsel, struct evlist *evlist)
{
	struct evsel *evsel = pevsel->evsel;
	struct persistent_conn *conn = &pevsel->conn;
	bool propagate = evlist->core.needs_map_propagation;
	u32 id = evsel->core.attr.config;
	int err, idx, nr;
	char spec[16];

	scnprintf(spec, sizeof(spec), "%u", id);
	if (evsel->core.attr.type == PERSISTENT_HOLDER_TYPE) {
		memset(conn, 0, sizeof(*conn));
		err = persistent_conn__open_holder(conn, spec, /*backlog=*/false);
	} else {
		err = persistent_conn__open_kernel(conn, evsel__name(evsel), id,
						   &evsel->core.attr);
	}
	if (err)
		return err;

	if (!conn->kernel) {
		evsel->core.attr = conn->attr;
		evsel__calc_id_pos(evsel);
	}
	nr = perf_cpu_map__nr(conn->cpus);
	pevsel->bufs = calloc(nr, sizeof(*pevsel->bufs));
	if (!pevsel->bufs)
		return -ENOMEM;
	for (idx = 0; !conn->relay && idx < nr; idx++) {
		int cpu = perf_cpu_map__cpu(conn->cpus, idx).cpu;

		err = persistent_buf__mmap(&pevsel->bufs[idx], conn->fds[idx], cpu,
					   conn->info.pages ?: 16, /*backlog=*/false);
		if (err) {
			pr_err("Error: cannot map the buffer of persistent event %s on CPU %d: %s\n",
			       evsel__name(evsel), cpu, strerror(-err));
			return err;
		}
	}

	perf_cpu_map__put(evsel->core.cpus);
	evsel->core.cpus = perf_cpu_map__get(conn->cpus);
	perf_cpu_map__put(evsel->core.own_cpus);
	evsel->core.own_cpus = perf_cpu_map__get(conn->cpus);
	perf_thread_map__put(evsel->core.threads);
	evsel->core.threads = perf_thread_map__new_dummy();
	if (!evsel->core.threads)
		return -ENOMEM;

	evlist->core.needs_map_propagation = false;
	evlist__add(evlist, evsel);
	evlist->core.needs_map_propagation = propagate;

	return persistent_conn__add_ids(conn, evlist, evsel);
}

int persistent_evlist__open(struct persistent_evlist *pevlist, struct evlist *evlist,
			    struct perf_header *header)
{
	int i, err;

	for (i = 0; i < pevlist->nr; i++) {
		err = persistent_evsel__open(&pevlist->entries[i], evlist);
		if (err)
			return err;
	}
#ifdef HAVE_LIBTRACEEVENT
	/* The header was set up without them: now they are tracepoints. */
	if (have_tracepoints(&evlist->core.entries))
		perf_header__set_feat(header, HEADER_TRACING_DATA);
#endif
	return 0;
}

struct persistent_write {
	int	(*write)(void *arg, void *buf, size_t size);
	void	*arg;
};

static int persistent_evlist__write(union perf_event *event, int cpu __maybe_unused,
				    void *arg)
{
	struct persistent_write *w = arg;

	return w->write(w->arg, event, event->header.size);
}

/*
 * Once the event is killed or its holder is gone, what its buffers still
 * hold is read one last time, and the event is read no more.
 */
static int persistent_evsel__read(struct persistent_evsel *pevsel, struct persistent_write *w)
{
	struct persistent_conn *conn = &pevsel->conn;
	int idx, err;

	if (conn->sock < 0 && !conn->kernel)
		return 0;
	err = persistent_conn__poll(conn, persistent_evlist__write, w);
	for (idx = 0; !err && idx < perf_cpu_map__nr(conn->cpus); idx++) {
		struct persistent_buf *buf = &pevsel->bufs[idx];

		if (buf->base)
			err = persistent_buf__read(buf, persistent_evlist__write, w);
	}
	if (conn->killed)
		pr_warning("Warning: persistent event %s was killed; it is read no more.\n",
			   evsel__name(pevsel->evsel));
	else if (conn->holder_gone)
		pr_warning("Warning: the persistent event holder exited; %s is read no more.\n",
			   evsel__name(pevsel->evsel));
	return err;
}

int persistent_evlist__read(struct persistent_evlist *pevlist,
			    int (*write)(void *arg, void *buf, size_t size), void *arg)
{
	struct persistent_write w = { .write = write, .arg = arg };
	u64 ticks;
	int i, err;

	if (!pevlist)
		return 0;
	if (pevlist->timerfd >= 0 && read(pevlist->timerfd, &ticks, sizeof(ticks)) < 0 &&
	    errno != EAGAIN)
		return -errno;

	for (i = 0; i < pevlist->nr; i++) {
		err = persistent_evsel__read(&pevlist->entries[i], &w);
		if (err)
			return err;
	}
	return 0;
}

static void persistent_evlist__report(struct persistent_evsel *pevsel)
{
	u64 lost = 0;
	int idx;

	for (idx = 0; pevsel->bufs && idx < perf_cpu_map__nr(pevsel->conn.cpus); idx++)
		lost += pevsel->bufs[idx].lost_bytes;
	lost += pevsel->conn.relay_lost;
	if (lost)
		pr_warning("Warning: %" PRIu64 " bytes of persistent event %s were overwritten before they could be read.\n",
			   lost, evsel__name(pevsel->evsel));
}

void persistent_evlist__delete(struct persistent_evlist *pevlist)
{
	int i, idx;

	if (!pevlist)
		return;
	for (i = 0; i < pevlist->nr; i++) {
		struct persistent_evsel *pevsel = &pevlist->entries[i];

		persistent_evlist__report(pevsel);
		for (idx = 0; pevsel->bufs && idx < perf_cpu_map__nr(pevsel->conn.cpus); idx++)
			persistent_buf__munmap(&pevsel->bufs[idx]);
		zfree(&pevsel->bufs);
		persistent_conn__close(&pevsel->conn);
		/* Not in the evlist: it failed before being put back. */
		if (!pevsel->evsel->evlist)
			evsel__delete(pevsel->evsel);
	}
	if (pevlist->timerfd >= 0)
		close(pevlist->timerfd);
	free(pevlist->entries);
	free(pevlist);
}

/*
 * perf stat on the holder's events: the evsel gets a dup() of the shared
 * file descriptor and counts from the value it had then.
 */
struct persistent_counter {
	struct list_head	list;
	struct evsel		*evsel;
	struct persistent_conn	conn;
	struct perf_counts_values *base;	/* per index of the evsel's cpus */
	int			nr;
};

static LIST_HEAD(persistent_counters);

static struct persistent_counter *persistent_counter__get(struct evsel *evsel)
{
	struct persistent_counter *pc;
	char spec[16];

	list_for_each_entry(pc, &persistent_counters, list) {
		if (pc->evsel == evsel)
			return pc;
	}
	pc = zalloc(sizeof(*pc));
	if (!pc)
		return NULL;
	pc->evsel = evsel;
	pc->nr = perf_cpu_map__nr(evsel->core.cpus);
	pc->base = calloc(pc->nr ?: 1, sizeof(*pc->base));
	scnprintf(spec, sizeof(spec), "%u", (u32)evsel->core.attr.config);
	if (!pc->base || persistent_conn__open_holder(&pc->conn, spec, /*backlog=*/false)) {
		persistent_conn__close(&pc->conn);
		free(pc->base);
		free(pc);
		return NULL;
	}
	list_add_tail(&pc->list, &persistent_counters);
	return pc;
}

int evsel__persistent_open_cpu(struct evsel *evsel, int cpu_map_idx, int cpu)
{
	struct persistent_counter *pc;
	struct perf_counts_values v = { .val = 0 };
	u64 buf[4];
	int idx, fd;

	if (evsel->core.attr.freq || evsel->core.attr.sample_period) {
		pr_err("Error: persistent event %s is read with 'perf record', 'perf stat' or\n"
		       "'perf persistent attach'; this tool cannot sample it.\n",
		       evsel__name(evsel));
		errno = EOPNOTSUPP;
		return -1;
	}
	pc = persistent_counter__get(evsel);
	if (!pc) {
		errno = ENOENT;
		return -1;
	}
	if (pc->conn.relay) {
		/* A reader gets records, never the counter itself. */
		pr_err("Error: perf stat counts only the persistent events you own; %s is\n"
		       "another user's, read it with 'perf persistent attach' or 'perf record'.\n",
		       evsel__name(evsel));
		errno = EACCES;
		return -1;
	}
	idx = perf_cpu_map__idx(pc->conn.cpus, (struct perf_cpu){ .cpu = cpu });
	if (idx < 0 || pc->conn.fds[idx] < 0) {
		pr_err("Error: persistent event %s does not count on CPU %d (it counts on %s).\n",
		       evsel__name(evsel), cpu, pc->conn.info.cpus);
		errno = ENODEV;
		return -1;
	}
	fd = fcntl(pc->conn.fds[idx], F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -1;

	/* Read as the shared event was made to be read. */
	evsel->core.attr.read_format = pc->conn.attr.read_format;
	if (pc->conn.attr.read_format == (PERF_FORMAT_TOTAL_TIME_ENABLED |
					  PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID) &&
	    read(fd, buf, sizeof(buf)) == sizeof(buf)) {
		v.val = buf[0];
		v.ena = buf[1];
		v.run = buf[2];
	}
	if (cpu_map_idx >= 0 && cpu_map_idx < pc->nr)
		pc->base[cpu_map_idx] = v;
	return fd;
}

void evsel__persistent_count(struct evsel *evsel, int cpu_map_idx,
			     struct perf_counts_values *count)
{
	struct persistent_counter *pc;

	list_for_each_entry(pc, &persistent_counters, list) {
		struct perf_counts_values *base;

		if (pc->evsel != evsel || cpu_map_idx < 0 || cpu_map_idx >= pc->nr)
			continue;
		base = &pc->base[cpu_map_idx];
		count->val -= min(base->val, count->val);
		count->ena -= min(base->ena, count->ena);
		count->run -= min(base->run, count->run);
		return;
	}
}
