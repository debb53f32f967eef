// SPDX-License-Identifier: GPL-2.0
/*
 * The persistent event holder against hostile local users: raw protocol
 * clients running as a uid nobody has (the holder only ever sees the
 * number), from a user namespace, across a setuid exec, with fds that
 * are not events, with too much to pin, and clients that connect and
 * say nothing.  Each case runs a holder of its own, as root, in a
 * directory of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/wait.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <linux/string.h>
#include <internal/lib.h>

#include "debug.h"
#include "perf-sys.h"
#include "persistent.h"
#include "persistent-rundir.h"
#include "tests.h"
#include "util.h"

#define HOSTILE_UID	54321	/* a user */
#define READER_GID	54322	/* the holder's reader group */
#define HOLDER_NOFILE	128	/* the holder's fd limit, to reach it */

struct hostile {
	char	tmp[PATH_MAX];
	char	dir[PATH_MAX];
	pid_t	holder;
};

static u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

static int run_perf(const char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		if (verbose <= 0)
			dup2(null, STDERR_FILENO);
		execv("/proc/self/exe", (char **)argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int raw_connect(struct hostile *t)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 10 };
	int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	scnprintf(sa.sun_path, sizeof(sa.sun_path), "%s/holder.sock", t->dir);
	if (sock >= 0 && connect(sock, (struct sockaddr *)&sa, sizeof(sa))) {
		close(sock);
		return -1;
	}
	/* A holder that stopped answering fails the test, never hangs it. */
	if (sock >= 0)
		setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return sock;
}

/* A holder of the test's own, as root, holding 'sw': cpu-clock on CPU 0. */
static int hostile__setup(struct hostile *t)
{
	const char *const detach[] = { "perf", "persistent", "detach", "-e", "cpu-clock",
				       "-C", "0", "--name", "sw", NULL };
	char group[16];
	int i, sock;

	if (geteuid() != 0) {
		pr_debug("needs root, to run the holder and switch users\n");
		return TEST_SKIP;
	}
	scnprintf(t->tmp, sizeof(t->tmp), "/tmp/perf-hostile.XXXXXX");
	if (!mkdtemp(t->tmp) || chmod(t->tmp, 0755))
		return TEST_FAIL;
	scnprintf(t->dir, sizeof(t->dir), "%s/run", t->tmp);
	setenv(PERSISTENT_DIR_ENV, t->dir, 1);
	scnprintf(group, sizeof(group), "%d", READER_GID);

	t->holder = fork();
	if (t->holder == 0) {
		struct rlimit rl = { HOLDER_NOFILE, HOLDER_NOFILE };
		const char *const argv[] = { "perf", "persistent", "daemon", "--reader-group",
					     group, verbose > 1 ? "-v" : NULL, NULL };
		int null = open("/dev/null", O_WRONLY);

		setrlimit(RLIMIT_NOFILE, &rl);
		dup2(null, STDOUT_FILENO);
		if (verbose <= 0)
			dup2(null, STDERR_FILENO);
		execv("/proc/self/exe", (char **)argv);
		_exit(127);
	}
	for (i = 0; i < 100; i++) {
		sock = raw_connect(t);
		if (sock >= 0) {
			close(sock);
			break;
		}
		usleep(20000);
	}
	if (sock < 0 || run_perf(detach)) {
		pr_debug("cannot start the holder and detach 'sw'\n");
		return TEST_FAIL;
	}
	return 0;
}

static void hostile__teardown(struct hostile *t)
{
	char cmd[PATH_MAX + 16];

	if (t->holder > 0) {
		kill(t->holder, SIGTERM);
		waitpid(t->holder, NULL, 0);
	}
	if (t->tmp[0]) {
		scnprintf(cmd, sizeof(cmd), "rm -rf %s", t->tmp);
		if (system(cmd))
			pr_debug("cannot remove %s\n", t->tmp);
	}
}

/* Run @fn in a child as the hostile user, with @gid as its only group. */
static int as_user(gid_t gid, int (*fn)(struct hostile *t), struct hostile *t)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (setgroups(1, &gid) || setresgid(HOSTILE_UID, HOSTILE_UID, HOSTILE_UID) ||
		    setresuid(HOSTILE_UID, HOSTILE_UID, HOSTILE_UID))
			_exit(99);
		/* Its own /proc files, for the user namespace's maps. */
		prctl(PR_SET_DUMPABLE, 1);
		_exit(fn(t));
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	if (!WIFEXITED(status)) {
		pr_debug("the hostile client died of signal %d\n", WTERMSIG(status));
		return -1;
	}
	return WEXITSTATUS(status);
}

/* One request, its first answer, and whether a file descriptor came. */
static int request(int sock, u32 op, const char *name, u32 flags, struct persistent_msg *reply,
		   int *fd)
{
	struct persistent_msg msg = { .op = op, .flags = flags };

	strlcpy(msg.info.name, name, sizeof(msg.info.name));
	if (persistent_msg__send(sock, &msg, -1))
		return -1;
	return persistent_msg__recv(sock, reply, fd);
}

/* GET and KILL of root's event are refused with -EACCES, LIST is not. */
static int refused(int sock_get, int sock_kill, int sock_list)
{
	struct persistent_msg reply;
	int fd = -1;

	if (request(sock_get, PERSISTENT_OP_GET, "sw", PERSISTENT_BACKLOG, &reply, &fd) ||
	    reply.err != -EACCES || fd >= 0 || reply.info.uid != 0) {
		pr_debug("GET of root's event: err %d, fd %d\n", reply.err, fd);
		return 31;
	}
	if (request(sock_kill, PERSISTENT_OP_KILL, "sw", 0, &reply, NULL) ||
	    reply.err != -EACCES) {
		pr_debug("KILL of root's event: err %d\n", reply.err);
		return 32;
	}
	if (request(sock_list, PERSISTENT_OP_LIST, "", 0, &reply, NULL) ||
	    reply.op != PERSISTENT_OP_INFO || strcmp(reply.info.name, "sw")) {
		pr_debug("LIST: op %u err %d\n", reply.op, reply.err);
		return 33;
	}
	return 0;
}

static int refused_kill(struct hostile *t)
{
	struct persistent_msg reply;
	int sock = raw_connect(t), err;

	err = request(sock, PERSISTENT_OP_KILL, "sw", 0, &reply, NULL);
	if (sock >= 0)
		close(sock);
	return err || reply.err != -EACCES ? 35 : 0;
}

static int refused_fresh(struct hostile *t)
{
	return refused(raw_connect(t), raw_connect(t), raw_connect(t));
}

static int other_user(struct hostile *t)
{
	return refused_fresh(t);
}

/* Root in a user namespace of its own is still the user to the holder. */
static int userns_root(struct hostile *t)
{
	char map[32];
	int fd;

	if (unshare(CLONE_NEWUSER))
		return errno == EPERM || errno == EINVAL ? 77 : 10;
	fd = open("/proc/self/uid_map", O_WRONLY);
	scnprintf(map, sizeof(map), "0 %d 1\n", HOSTILE_UID);
	if (fd < 0 || write(fd, map, strlen(map)) < 0)
		return 11;
	close(fd);
	if (geteuid() != 0)
		return 12;
	return refused_fresh(t);
}

/*
 * Connect, then become a setuid-root program while a child of ours asks:
 * the holder must judge the connection by who made it.
 */
static int setuid_exec(struct hostile *t)
{
	int get = raw_connect(t), kill_sock = raw_connect(t), list = raw_connect(t);
	int report[2], hold[2];
	pid_t child;
	char res = 1;

	if (get < 0 || kill_sock < 0 || list < 0 || pipe(report) || pipe(hold))
		return 20;
	child = fork();
	if (child == 0) {
		/* The parent is su by now, waiting for a password we hold. */
		usleep(300000);
		res = refused(get, kill_sock, list);
		if (write(report[1], &res, 1) != 1)
			_exit(34);
		_exit(0);
	}
	if (fork() == 0) {
		/* Reads the result and tells the test, whatever su does. */
		close(report[1]);
		close(hold[1]);
		if (read(report[0], &res, 1) != 1)
			res = 21;
		_exit(res);
	}
	close(hold[1]);
	dup2(hold[0], STDIN_FILENO);
	execl("/usr/bin/su", "su", "-c", "true", "root", NULL);
	return 22;
}

static int test__hostile_refused(struct test_suite *test __maybe_unused,
				 int subtest __maybe_unused)
{
	struct hostile t = { .holder = 0 };
	int ret = hostile__setup(&t), res;

	if (ret)
		goto out;
	res = as_user(HOSTILE_UID, other_user, &t);
	pr_debug("another user: %d\n", res);
	ret = res ? TEST_FAIL : TEST_OK;
	res = as_user(HOSTILE_UID, userns_root, &t);
	pr_debug("root of a user namespace: %d\n", res);
	if (res && res != 77)
		ret = TEST_FAIL;
out:
	hostile__teardown(&t);
	return ret;
}

/* The su exec: its reporter is a grandchild, found by its exit status. */
static int test__hostile_setuid(struct test_suite *test __maybe_unused,
				int subtest __maybe_unused)
{
	struct hostile t = { .holder = 0 };
	int ret = hostile__setup(&t), status;
	pid_t pid;

	if (ret)
		goto out;
	if (access("/usr/bin/su", X_OK)) {
		pr_debug("no /usr/bin/su to exec\n");
		ret = TEST_SKIP;
		goto out;
	}
	pid = fork();
	if (pid == 0) {
		/* A subreaper of our own, to wait for the reporter. */
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		if (fork() == 0)
			_exit(as_user(HOSTILE_UID, setuid_exec, &t));
		ret = 0;
		while ((pid = wait(&status)) > 0) {
			if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
				continue;
			/* su itself fails: it has no password; others must not. */
			if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
				continue;
			ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
		}
		_exit(ret);
	}
	waitpid(pid, &status, 0);
	pr_debug("setuid exec: status %d\n", status);
	ret = WIFEXITED(status) && !WEXITSTATUS(status) ? TEST_OK : TEST_FAIL;
out:
	hostile__teardown(&t);
	return ret;
}

/* Events that root opens and the hostile user hands over as its own. */
#define USER_FDS	(HOLDER_USER_EVENTS_TEST + 3)
#define HOLDER_USER_EVENTS_TEST	16

static struct perf_event_attr event_attr = {
	.type = PERF_TYPE_SOFTWARE,
	.config = PERF_COUNT_SW_CPU_CLOCK,
	.size = sizeof(struct perf_event_attr),
	.sample_period = 1000000,
	.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
	.disabled = 1,
	.write_backward = 1,
	.sample_id_all = 1,
};
static int user_fds[USER_FDS];

static int open_events(void)
{
	int i;

	for (i = 0; i < USER_FDS; i++) {
		user_fds[i] = sys_perf_event_open(&event_attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
		if (user_fds[i] < 0)
			return -1;
	}
	return 0;
}

static void close_events(void)
{
	int i;

	for (i = 0; i < USER_FDS; i++) {
		if (user_fds[i] >= 0)
			close(user_fds[i]);
	}
}

static int detach(struct hostile *t, const char *name, u32 pages, int fd,
		  const struct perf_event_attr *attr, struct persistent_msg *reply)
{
	struct persistent_msg msg = { .op = PERSISTENT_OP_DETACH, .attr = *attr };
	int sock = raw_connect(t), err;

	msg.info.nr_cpus = 1;
	msg.info.pages = pages;
	strlcpy(msg.info.name, name, sizeof(msg.info.name));
	err = sock < 0 || persistent_msg__send(sock, &msg, -1);
	/* The holder may answer a bad request at once and hang up. */
	msg.op = PERSISTENT_OP_FD;
	msg.cpu = 0;
	if (!err)
		persistent_msg__send(sock, &msg, fd);
	msg.op = PERSISTENT_OP_END;
	if (!err)
		persistent_msg__send(sock, &msg, -1);
	if (!err)
		err = persistent_msg__recv(sock, reply, NULL);
	if (sock >= 0)
		close(sock);
	if (err)
		pr_debug("DETACH of '%s': %d\n", name, err);
	return err ? -1 : reply->err;
}

/* Start a DETACH and leave it in flight: END comes later. */
static int detach_begin(struct hostile *t, const char *name, int fd)
{
	struct persistent_msg msg = { .op = PERSISTENT_OP_DETACH, .attr = event_attr };
	int sock = raw_connect(t);

	msg.info.nr_cpus = 1;
	msg.info.pages = 2;
	strlcpy(msg.info.name, name, sizeof(msg.info.name));
	if (sock < 0 || persistent_msg__send(sock, &msg, -1))
		return -1;
	msg.op = PERSISTENT_OP_FD;
	msg.cpu = 0;
	persistent_msg__send(sock, &msg, fd);
	return sock;
}

static int detach_end(int sock)
{
	struct persistent_msg msg = { .op = PERSISTENT_OP_END };
	int err = persistent_msg__send(sock, &msg, -1) || persistent_msg__recv(sock, &msg, NULL);

	close(sock);
	return err ? -1 : msg.err;
}

/* A DETACH of @fd with the description @text, or the name made unique. */
static int detach_text(struct hostile *t, const char *name, const char *text, int fd)
{
	struct persistent_msg msg = { .op = PERSISTENT_OP_DETACH, .attr = event_attr };
	int sock = raw_connect(t);

	msg.info.nr_cpus = 1;
	msg.info.pages = 2;
	strlcpy(msg.info.name, name, sizeof(msg.info.name));
	if (text)
		strlcpy(msg.info.event, text, sizeof(msg.info.event));
	else
		msg.flags = PERSISTENT_NAME_DEFAULT;
	if (sock < 0 || persistent_msg__send(sock, &msg, -1))
		return -1;
	msg.op = PERSISTENT_OP_FD;
	msg.cpu = 0;
	persistent_msg__send(sock, &msg, fd);
	return detach_end(sock);
}

/* Pinned pages as the kernel allows a user, events per user, names. */
static int user_limits(struct hostile *t)
{
	struct persistent_msg reply;
	int i, err, a, b;
	char name[16];

	err = detach(t, "big", 16384, user_fds[0], &event_attr, &reply);
	if (err != -ENOBUFS) {
		pr_debug("64 MiB for a user: %d, not -ENOBUFS\n", err);
		return 40;
	}
	err = detach(t, "sw", 2, user_fds[1], &event_attr, &reply);
	if (err != -EEXIST) {
		pr_debug("root's name 'sw' for a user: %d, not -EEXIST\n", err);
		return 41;
	}
	for (i = 1; i < HOLDER_USER_EVENTS_TEST; i++) {
		scnprintf(name, sizeof(name), i == 1 ? "mce" : "ev%d", i);
		err = detach(t, name, 2, user_fds[i], &event_attr, &reply);
		if (err || reply.info.uid != HOSTILE_UID) {
			pr_debug("event %d of a user: %d (uid %d)\n", i, err, reply.info.uid);
			return 42;
		}
	}
	/* Two in flight for the last place: one gets it. */
	a = detach_begin(t, "last1", user_fds[i]);
	b = detach_begin(t, "last2", user_fds[i + 1]);
	if (a < 0 || b < 0)
		return 43;
	err = detach_end(a);
	i = detach_end(b);
	if (err || i != -EDQUOT) {
		pr_debug("the last place, twice in flight: %d and %d\n", err, i);
		return 44;
	}
	return 0;
}

static int test__hostile_limits(struct test_suite *test __maybe_unused,
				int subtest __maybe_unused)
{
	struct hostile t = { .holder = 0 };
	struct persistent_msg reply;
	int ret = hostile__setup(&t), sock, res;

	if (ret)
		goto out;
	if (open_events()) {
		pr_debug("cannot open cpu-clock on CPU 0: %s\n", strerror(errno));
		ret = TEST_FAIL;
		goto out;
	}
	res = as_user(HOSTILE_UID, user_limits, &t);
	pr_debug("user limits: %d\n", res);
	ret = res ? TEST_FAIL : TEST_OK;

	/* Root asking for 'mce' learns whose it is. */
	sock = raw_connect(&t);
	if (request(sock, PERSISTENT_OP_GET, "mce", 0, &reply, NULL) || reply.err ||
	    reply.info.uid != HOSTILE_UID) {
		pr_debug("root's GET of the user's 'mce': err %d uid %d\n", reply.err,
			 reply.info.uid);
		ret = TEST_FAIL;
	}
	if (sock >= 0)
		close(sock);
	/* A name made up from the event is made unique, squatted or not. */
	if (detach_text(&t, "mce", NULL, user_fds[USER_FDS - 1])) {
		pr_debug("root's detach with a default name taken by a user failed\n");
		ret = TEST_FAIL;
	}
out:
	close_events();
	hostile__teardown(&t);
	return ret;
}

/* A reader gets ids and records, no fd; it may not kill. */
static int reader(struct hostile *t)
{
	static u64 buf[(PERSISTENT_DATA_MAX + 64) / sizeof(u64)];
	struct persistent_msg msg;
	int sock = raw_connect(t), fd = -1, nr_fd = 0;
	u64 id = 0, deadline = now_ms() + 3000;

	if (request(sock, PERSISTENT_OP_GET, "sw", PERSISTENT_BACKLOG, &msg, &fd) || msg.err ||
	    !(msg.flags & PERSISTENT_RELAY) || fd >= 0)
		return 50;
	while (!persistent_msg__recv(sock, &msg, &fd) && msg.op == PERSISTENT_OP_FD) {
		nr_fd += fd >= 0;
		id = msg.id;
	}
	if (msg.op != PERSISTENT_OP_END || nr_fd || !id)
		return 51;
	while (now_ms() < deadline) {
		struct pollfd pfd = { .fd = sock, .events = POLLIN };
		struct persistent_data *data = (void *)buf;
		struct perf_event_header *hdr = (void *)(data + 1);
		ssize_t n;

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = recv(sock, buf, sizeof(buf), 0);
		if (n < (ssize_t)(sizeof(*data) + sizeof(*hdr) + sizeof(u64)) ||
		    data->op != PERSISTENT_OP_DATA)
			return 52;
		/* PERF_SAMPLE_IDENTIFIER: the id right after the header. */
		if (hdr->type == PERF_RECORD_SAMPLE && *(u64 *)(hdr + 1) == id)
			return refused_kill(t);
	}
	return 53;
}

static int test__hostile_reader(struct test_suite *test __maybe_unused,
				int subtest __maybe_unused)
{
	struct hostile t = { .holder = 0 };
	int ret = hostile__setup(&t), res;

	if (ret)
		goto out;
	res = as_user(READER_GID, reader, &t);
	pr_debug("reader group: %d\n", res);
	ret = res ? TEST_FAIL : TEST_OK;
out:
	hostile__teardown(&t);
	return ret;
}

/* Fds that are not events, attrs no reader can parse, junk. */
static int junk(struct hostile *t)
{
	struct perf_event_attr attr = event_attr;
	struct persistent_msg reply;
	int sock = raw_connect(t), pipefd[2];
	char c = 0;

	if (sock < 0 || send(sock, "abc", 3, 0) != 3 || recv(sock, &c, 1, 0) > 0)
		return 60;
	close(sock);
	if (pipe(pipefd) || detach(t, "pipe", 2, pipefd[0], &event_attr, &reply) != -EINVAL)
		return 61;
	attr.write_backward = 0;
	if (detach(t, "fwd", 2, user_fds[0], &attr, &reply) != -EINVAL)
		return 62;
	attr = event_attr;
	attr.sample_type |= 1ULL << 62;
	if (detach(t, "odd", 2, user_fds[0], &attr, &reply) != -EINVAL)
		return 63;
	/* One page of data holds no whole record once the kernel wraps. */
	if (detach(t, "one", 1, user_fds[0], &event_attr, &reply) != -EINVAL)
		return 64;
	/* Terminal escapes for root's 'perf persistent list'. */
	if (detach_text(t, "esc", "\x1b[2K\x1b[1Afake\nrow", user_fds[0]) != -EINVAL)
		return 68;
	return refused_fresh(t);
}

/* One event handed over as the events of two CPUs. */
static int twice(struct hostile *t)
{
	struct persistent_msg msg = { .op = PERSISTENT_OP_DETACH, .attr = event_attr };
	int sock = raw_connect(t);

	if (sysconf(_SC_NPROCESSORS_CONF) < 2)
		return 0;
	msg.info.nr_cpus = 2;
	msg.info.pages = 2;
	strlcpy(msg.info.name, "twice", sizeof(msg.info.name));
	if (sock < 0 || persistent_msg__send(sock, &msg, -1))
		return 66;
	msg.op = PERSISTENT_OP_FD;
	msg.cpu = 0;
	persistent_msg__send(sock, &msg, user_fds[2]);
	msg.cpu = 1;
	persistent_msg__send(sock, &msg, user_fds[2]);
	return detach_end(sock) == -EINVAL ? 0 : 67;
}

static int test__hostile_junk(struct test_suite *test __maybe_unused,
			      int subtest __maybe_unused)
{
	struct hostile t = { .holder = 0 };
	int ret = hostile__setup(&t), res;

	if (ret)
		goto out;
	if (open_events()) {
		ret = TEST_FAIL;
		goto out;
	}
	res = as_user(HOSTILE_UID, junk, &t);
	pr_debug("junk: %d\n", res);
	ret = res ? TEST_FAIL : TEST_OK;
	res = as_user(HOSTILE_UID, twice, &t);
	pr_debug("one event as two CPUs': %d\n", res);
	if (res)
		ret = TEST_FAIL;
out:
	close_events();
	hostile__teardown(&t);
	return ret;
}

static u64 list_ms(struct hostile *t)
{
	struct persistent_msg reply;
	u64 start = now_ms();
	int sock = raw_connect(t), err;

	err = request(sock, PERSISTENT_OP_LIST, "", 0, &reply, NULL);
	if (sock >= 0)
		close(sock);
	return err || reply.op != PERSISTENT_OP_INFO ? ~0ULL : now_ms() - start;
}

/* The holder's CPU time so far, in clock ticks. */
static unsigned long holder_ticks(struct hostile *t)
{
	unsigned long utime = 0, stime = 0;
	char path[64];
	FILE *fp;

	scnprintf(path, sizeof(path), "/proc/%d/stat", t->holder);
	fp = fopen(path, "r");
	if (!fp)
		return 0;
	if (fscanf(fp, "%*d %*s %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
		   &utime, &stime) != 2)
		utime = stime = 0;
	fclose(fp);
	return utime + stime;
}

/*
 * A TCP socket whose close() waits: set to linger on a peer that never
 * reads and whose window is full.
 */
static int lingering_socket(int *listener)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct linger lg = { .l_onoff = 1, .l_linger = 3600 };
	socklen_t len = sizeof(sa);
	int small = 1024, fd, i;
	char buf[4096] = { 0 };

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*listener < 0 ||
	    setsockopt(*listener, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)) ||
	    bind(*listener, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(*listener, (struct sockaddr *)&sa, &len) || listen(*listener, 1))
		return -1;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (i = 0; i < 100000 && send(fd, buf, sizeof(buf), MSG_NOSIGNAL) > 0; i++)
		;
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	return fd;
}

/* Whether @fd has something to read within @ms milliseconds. */
static bool readable_within(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, ms) > 0;
}

struct lingering_close {
	int	fd;
	int	done;	/* written to once the close returned */
};

/*
 * The attacker's own close of its lingering socket.  Where the holder
 * let go of the copies it was sent first, this close is the last and
 * waits out the linger, an hour: in a thread of its own, so that it
 * never holds the test up (under load it did).  The holder's closes
 * are what is tested.
 */
static void *lingering_close(void *arg)
{
	struct lingering_close *lc = arg;
	char c = 1;

	close(lc->fd);
	if (write(lc->done, &c, 1) != 1)
		pr_debug("the lingering socket's close could not say so\n");
	return NULL;
}

/*
 * Files whose close() waits, sent with a message and left unread in a
 * socket the holder closes: root's LIST answers all the same.
 */
static int test__hostile_close(struct test_suite *test __maybe_unused,
			       int subtest __maybe_unused)
{
	struct hostile t = { .holder = 0 };
	struct persistent_msg msg = { .op = PERSISTENT_OP_LIST };
	int ret = hostile__setup(&t), listener, fd, a, b, ready[2], closed[2];
	struct lingering_close lc;
	pthread_t closer;
	pid_t pid;
	char c;
	u64 ms;

	if (ret)
		goto out;
	if (pipe(ready)) {
		ret = TEST_FAIL;
		goto out;
	}
	/* The attacker is a child that keeps the listener until it is killed. */
	pid = fork();
	if (pid == 0) {
		fd = lingering_socket(&listener);
		a = raw_connect(&t);
		b = raw_connect(&t);
		if (fd < 0 || a < 0 || b < 0)
			_exit(1);
		/* With a request; and unread, after junk that ends the connection. */
		persistent_msg__send(a, &msg, fd);
		if (send(b, "junk!", 5, 0) != 5)
			_exit(1);
		persistent_msg__send(b, &msg, fd);
		/*
		 * The holder has the last references: the listener never
		 * reads.  The close returns at once, unless the holder was
		 * quicker (see lingering_close()).
		 */
		lc = (struct lingering_close){ .fd = fd };
		if (pipe(closed))
			_exit(1);
		lc.done = closed[1];
		if (pthread_create(&closer, NULL, lingering_close, &lc))
			_exit(1);
		readable_within(closed[0], 1000);
		close(a);
		close(b);
		c = 1;
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	if (pid < 0 || !readable_within(ready[0], 30000) || read(ready[0], &c, 1) != 1) {
		pr_debug("the attacker could not set up its lingering socket\n");
		ret = TEST_FAIL;
	} else {
		usleep(200000);
		ms = list_ms(&t);
		pr_debug("LIST after lingering sockets were handed over: %llu ms\n",
			 (unsigned long long)ms);
		if (ms >= 1000)
			ret = TEST_FAIL;
	}
	close(ready[0]);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
out:
	hostile__teardown(&t);
	return ret;
}

/*
 * Twenty clients that say nothing and one that never reads its answer
 * cost root's LIST nothing; a flood past the holder's fd limit costs it
 * no CPU, and it answers again once the flood has gone.
 */
static int test__hostile_stall(struct test_suite *test __maybe_unused,
			       int subtest __maybe_unused)
{
	struct hostile t = { .holder = 0 };
	struct persistent_msg msg = { .op = PERSISTENT_OP_LIST };
	int ret = hostile__setup(&t), i, nr = 0, flood[400];
	unsigned long ticks;
	u64 ms;

	if (ret)
		goto out;
	for (i = 0; i < 21; i++) {
		flood[nr] = raw_connect(&t);
		if (flood[nr] >= 0)
			nr++;
	}
	persistent_msg__send(flood[nr - 1], &msg, -1);
	ms = list_ms(&t);
	pr_debug("LIST beside 20 silent clients: %llu ms\n", (unsigned long long)ms);
	ret = ms < 1000 ? TEST_OK : TEST_FAIL;

	ticks = holder_ticks(&t);
	for (; nr < (int)ARRAY_SIZE(flood); nr++) {
		flood[nr] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (flood[nr] >= 0) {
			struct sockaddr_un sa = { .sun_family = AF_UNIX };

			scnprintf(sa.sun_path, sizeof(sa.sun_path), "%s/holder.sock", t.dir);
			connect(flood[nr], (struct sockaddr *)&sa, sizeof(sa));
		}
	}
	sleep(2);
	ticks = holder_ticks(&t) - ticks;
	pr_debug("holder CPU during a flood of %d connections: %lu ticks in 2 s\n", nr, ticks);
	if (ticks * 100 / sysconf(_SC_CLK_TCK) > 10)	/* 5% of 2 s */
		ret = TEST_FAIL;
	for (i = 0; i < nr; i++) {
		if (flood[i] >= 0)
			close(flood[i]);
	}
	usleep(500000);
	ms = list_ms(&t);
	pr_debug("LIST after the flood: %llu ms\n", (unsigned long long)ms);
	if (ms >= 1000)
		ret = TEST_FAIL;
out:
	hostile__teardown(&t);
	return ret;
}

struct test_case tests__persistent_hostile[] = {
	TEST_CASE("Holder: refuse other users, user namespaces included", hostile_refused),
	TEST_CASE("Holder: judge a client as it connected, not after a setuid exec",
		  hostile_setuid),
	TEST_CASE("Holder: cap users' buffers and events, in flight too; unique names",
		  hostile_limits),
	TEST_CASE("Holder: relay records to the reader group, never fds", hostile_reader),
	TEST_CASE("Holder: refuse junk, non-event fds, unparsable attrs", hostile_junk),
	TEST_CASE("Holder: no client stalls it, no flood spins it", hostile_stall),
	TEST_CASE("Holder: no file a client sends waits it out", hostile_close),
	{ .name = NULL, }
};

struct test_suite suite__persistent_hostile = {
	.desc = "Persistent event holder against hostile clients",
	.test_cases = tests__persistent_hostile,
};
