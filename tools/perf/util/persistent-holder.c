// SPDX-License-Identifier: GPL-2.0
/*
 * 'perf persistent daemon': the holder of persistent events on kernels
 * without the persistent PMU.  It keeps the file descriptors and
 * read-only ring buffers of detached events, publishes them in a
 * directory laid out like the kernel's sysfs persistent PMU and hands
 * them to the clients allowed to read them.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/string.h>
#include <linux/zalloc.h>
#include <internal/lib.h>
#include <perf/cpumap.h>

#include "cpumap.h"
#include "debug.h"
#include "event.h"
#include "persistent.h"
#include "util.h"

#define HOLDER_SCAN_MS		250
#define HOLDER_RECV_TIMEOUT_S	5
#define CAP_SYS_ADMIN_BIT	21
#define CAP_PERFMON_BIT		38

struct holder_event {
	struct list_head	list;
	struct persistent_info	info;
	struct perf_event_attr	attr;
	struct perf_cpu_map	*cpus;
	int			*fds;
	struct persistent_buf	*bufs;
	u64			record_bytes;	/* of the records counted */
};

struct holder_client {
	struct list_head	list;
	int			sock;
	uid_t			uid;
	pid_t			pid;
	u32			attached;	/* event id handed out by GET */
	bool			dead;
};

struct holder {
	struct list_head	events;
	struct list_head	clients;
	int			listen;
	int			lockfd;
	u32			next_id;
	bool			on_demand;
};

static volatile sig_atomic_t holder_done;

static void holder__signal(int sig __maybe_unused)
{
	holder_done = 1;
}

static int holder__write_file(const char *name, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	FILE *fp;
	int err;

	err = persistent__path(path, sizeof(path), name);
	if (err)
		return err;
	fp = fopen(path, "we");
	if (!fp)
		return -errno;
	va_start(ap, fmt);
	vfprintf(fp, fmt, ap);
	va_end(ap);
	return fclose(fp) ? -errno : 0;
}

static void holder__unlink(const char *name)
{
	char path[PATH_MAX];

	if (!persistent__path(path, sizeof(path), name))
		unlink(path);
}

static void holder__rmdir(const char *name)
{
	char path[PATH_MAX];

	if (!persistent__path(path, sizeof(path), name))
		rmdir(path);
}

/* Everything a holder publishes, as a crashed one may have left it. */
static void holder__remove_files(void)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dir;

	if (!persistent__path(path, sizeof(path), PERSISTENT_PMU_NAME "/events")) {
		dir = opendir(path);
		while (dir && (d = readdir(dir))) {
			if (d->d_name[0] != '.')
				unlinkat(dirfd(dir), d->d_name, 0);
		}
		if (dir)
			closedir(dir);
	}
	holder__rmdir(PERSISTENT_PMU_NAME "/events");
	holder__unlink(PERSISTENT_PMU_NAME "/format/persistent");
	holder__rmdir(PERSISTENT_PMU_NAME "/format");
	holder__unlink(PERSISTENT_PMU_NAME "/type");
	holder__unlink(PERSISTENT_PMU_NAME "/cpumask");
	holder__rmdir(PERSISTENT_PMU_NAME);
	holder__unlink("holder.sock");
}

static int holder__mkdir(const char *name)
{
	char path[PATH_MAX];
	int err = persistent__path(path, sizeof(path), name);

	if (!err && mkdir(path, 0755) && errno != EEXIST)
		err = -errno;
	return err;
}

static int holder__publish_pmu(void)
{
	struct perf_cpu_map *online = perf_cpu_map__new_online_cpus();
	char cpus[PERSISTENT_EVENT_MAX];
	int err;

	if (!online)
		return -ENOMEM;
	cpu_map__snprint(online, cpus, sizeof(cpus));
	perf_cpu_map__put(online);

	err = holder__mkdir(PERSISTENT_PMU_NAME);
	if (!err)
		err = holder__mkdir(PERSISTENT_PMU_NAME "/format");
	if (!err)
		err = holder__mkdir(PERSISTENT_PMU_NAME "/events");
	if (!err)
		err = holder__write_file(PERSISTENT_PMU_NAME "/format/persistent", "%s\n",
					 PERSISTENT_HOLDER_FORMAT);
	if (!err)
		err = holder__write_file(PERSISTENT_PMU_NAME "/cpumask", "%s\n", cpus);
	/* Last: perf takes a directory with a type file for a PMU. */
	if (!err)
		err = holder__write_file(PERSISTENT_PMU_NAME "/type", "%u\n",
					 PERSISTENT_HOLDER_TYPE);
	return err;
}

/* A holder runs while it holds the lock on holder.pid. */
static int holder__lock(struct holder *h)
{
	char path[PATH_MAX], pid[32];
	int err;

	err = persistent__path(path, sizeof(path), "holder.pid");
	if (err)
		return err;
	h->lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (h->lockfd < 0)
		return -errno;
	if (flock(h->lockfd, LOCK_EX | LOCK_NB))
		return errno == EWOULDBLOCK ? -EEXIST : -errno;
	scnprintf(pid, sizeof(pid), "%d\n", getpid());
	if (ftruncate(h->lockfd, 0) || pwrite(h->lockfd, pid, strlen(pid), 0) < 0)
		return -errno;
	return 0;
}

int persistent_holder__clean_stale(void)
{
	char path[PATH_MAX];
	int fd, err = 0;

	if (persistent__path(path, sizeof(path), "holder.pid"))
		return 0;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		holder__remove_files();
		unlink(path);
		holder__rmdir("");
		err = 1;
	}
	close(fd);
	return err;
}

static int holder__listen(struct holder *h)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int err;

	err = persistent__path(sa.sun_path, sizeof(sa.sun_path), "holder.sock");
	if (err)
		return err;
	h->listen = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (h->listen < 0)
		return -errno;
	unlink(sa.sun_path);
	if (bind(h->listen, (struct sockaddr *)&sa, sizeof(sa)))
		return -errno;
	/* Anyone may ask; what they get depends on who they are. */
	if (chmod(sa.sun_path, 0666) || listen(h->listen, 16))
		return -errno;
	return 0;
}

static int holder__setup(struct holder *h)
{
	const char *dir = persistent__dir();
	int err;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		err = -errno;
		pr_err("Error: cannot create the persistent event holder's directory %s: %s\n"
		       "Run the holder as root ('perf persistent daemon'), or point %s at a\n"
		       "directory you may write.\n", dir, strerror(-err), PERSISTENT_DIR_ENV);
		return err;
	}
	err = holder__lock(h);
	if (err == -EEXIST)
		return err;
	if (err) {
		pr_err("Error: cannot lock %s/holder.pid: %s\n", dir, strerror(-err));
		return err;
	}
	/* A holder that died without cleaning up left these. */
	holder__remove_files();
	err = holder__publish_pmu();
	if (!err)
		err = holder__listen(h);
	if (err)
		pr_err("Error: cannot set up the persistent event holder in %s: %s\n",
		       dir, strerror(-err));
	return err;
}

static void holder__teardown(struct holder *h)
{
	char path[PATH_MAX];

	if (h->listen >= 0)
		close(h->listen);
	holder__remove_files();
	if (h->lockfd >= 0) {
		if (!persistent__path(path, sizeof(path), "holder.pid"))
			unlink(path);
		close(h->lockfd);
	}
	rmdir(persistent__dir());
}

/* Events. */
static void holder_event__delete(struct holder_event *ev)
{
	char name[PATH_MAX];
	int i, nr = ev->cpus ? perf_cpu_map__nr(ev->cpus) : 0;

	scnprintf(name, sizeof(name), PERSISTENT_PMU_NAME "/events/%s", ev->info.name);
	holder__unlink(name);
	for (i = 0; i < nr; i++) {
		if (ev->bufs)
			persistent_buf__munmap(&ev->bufs[i]);
		if (ev->fds && ev->fds[i] >= 0)
			close(ev->fds[i]);
	}
	free(ev->bufs);
	free(ev->fds);
	perf_cpu_map__put(ev->cpus);
	free(ev);
}

static struct holder_event *holder__find(struct holder *h, const char *spec)
{
	struct holder_event *ev;
	char *end;
	unsigned long id = strtoul(spec, &end, 10);

	list_for_each_entry(ev, &h->events, list) {
		if (!strcmp(ev->info.name, spec) || (*spec && !*end && ev->info.id == id))
			return ev;
	}
	return NULL;
}

/* Names are what parse-events takes between persistent/ and /. */
static bool holder__valid_name(const char *name)
{
	const char *p = name;

	if (!isalpha(*p) && *p != '_')
		return false;
	for (; *p; p++) {
		if (!isalnum(*p) && !strchr("_.-", *p))
			return false;
	}
	return p - name < PERSISTENT_NAME_MAX;
}

static int holder__count_record(union perf_event *event, int cpu __maybe_unused, void *arg)
{
	struct holder_event *ev = arg;

	ev->record_bytes += event->header.size;
	if (event->header.type == PERF_RECORD_SAMPLE)
		ev->info.samples++;
	else if (event->header.type == PERF_RECORD_LOST)
		ev->info.lost += event->lost.lost;
	else if (event->header.type == PERF_RECORD_LOST_SAMPLES)
		ev->info.lost += event->lost_samples.lost;
	return 0;
}

/*
 * Count what the events wrote.  Records overwritten before the holder got
 * to them are counted as lost, in records of the average size seen.
 */
static void holder__scan(struct holder *h)
{
	struct holder_event *ev;
	int i;

	list_for_each_entry(ev, &h->events, list) {
		u64 lost_bytes = 0, nr_records = 0;

		for (i = 0; i < perf_cpu_map__nr(ev->cpus); i++) {
			u64 before = ev->bufs[i].lost_bytes;

			persistent_buf__read(&ev->bufs[i], holder__count_record, ev);
			lost_bytes += ev->bufs[i].lost_bytes - before;
			nr_records += ev->bufs[i].records;
		}
		if (lost_bytes && nr_records)
			ev->info.lost += max_t(u64, 1, lost_bytes * nr_records / ev->record_bytes);
		else if (lost_bytes)
			ev->info.lost++;
	}
}

static bool holder__is_perf_event(int fd)
{
	char link[64], target[64];
	ssize_t n;

	scnprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return !strcmp(target, "anon_inode:[perf_event]");
}

static int holder_event__map(struct holder_event *ev)
{
	int i, err, nr = perf_cpu_map__nr(ev->cpus);

	ev->bufs = calloc(nr, sizeof(*ev->bufs));
	if (!ev->bufs)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		if (ev->fds[i] < 0)
			return -EINVAL;
		err = persistent_buf__mmap(&ev->bufs[i], ev->fds[i],
					   perf_cpu_map__cpu(ev->cpus, i).cpu,
					   ev->info.pages, /*backlog=*/true);
		if (err)
			return err;
	}
	for (i = 0; i < nr; i++) {
		if (ioctl(ev->fds[i], PERF_EVENT_IOC_ENABLE, 0))
			return -errno;
	}
	ev->attr.disabled = 0;
	return 0;
}

/*
 * DETACH: the client made the events; their fds follow, one message per
 * CPU in ascending order.
 */
static int holder__receive_fds(struct holder_client *c, struct holder_event *ev, u32 nr)
{
	struct persistent_msg msg;
	char cpus[PERSISTENT_EVENT_MAX * 4];
	int err, fd, last = -1;
	size_t len = 0;
	u32 n = 0;

	if (!nr || nr > 4096)
		return -EINVAL;
	ev->fds = malloc(nr * sizeof(int));
	if (!ev->fds)
		return -ENOMEM;
	for (;;) {
		err = persistent_msg__recv(c->sock, &msg, &fd);
		if (err || msg.op == PERSISTENT_OP_END)
			break;
		if (msg.op != PERSISTENT_OP_FD || fd < 0 || n >= nr || msg.cpu <= last ||
		    !holder__is_perf_event(fd)) {
			if (fd >= 0)
				close(fd);
			err = -EINVAL;
			break;
		}
		len += scnprintf(cpus + len, sizeof(cpus) - len, "%s%d", n ? "," : "", msg.cpu);
		last = msg.cpu;
		ev->fds[n++] = fd;
	}
	/* The fds received so far are closed with the event. */
	ev->cpus = perf_cpu_map__new(len ? cpus : "");
	if (!ev->cpus || perf_cpu_map__nr(ev->cpus) != (int)n) {
		while (n--)
			close(ev->fds[n]);
		zfree(&ev->fds);
		perf_cpu_map__put(ev->cpus);
		ev->cpus = NULL;
		return err ?: -EINVAL;
	}
	if (!err && n != nr)
		err = -EINVAL;
	return err;
}

static int holder__detach(struct holder *h, struct holder_client *c,
			  struct persistent_msg *req)
{
	struct persistent_msg reply = { .op = PERSISTENT_OP_INFO };
	struct holder_event *ev;
	char file[PATH_MAX];
	int err;

	ev = zalloc(sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	ev->info = req->info;
	ev->attr = req->attr;
	ev->info.id = h->next_id;
	ev->info.uid = c->uid;
	ev->info.samples = ev->info.lost = 0;
	err = holder__receive_fds(c, ev, req->info.nr_cpus);
	if (!err && (!req->info.pages || (req->info.pages & (req->info.pages - 1)) ||
		     !req->attr.write_backward || !req->attr.sample_id_all))
		err = -EINVAL;
	if (!err && !ev->info.name[0])
		scnprintf(ev->info.name, sizeof(ev->info.name), "event%u", ev->info.id);
	if (!err && !holder__valid_name(ev->info.name))
		err = -EINVAL;
	if (!err && holder__find(h, ev->info.name)) {
		if (req->flags & PERSISTENT_NAME_DEFAULT) {
			size_t len = strlen(ev->info.name);

			scnprintf(ev->info.name + min(len, (size_t)PERSISTENT_NAME_MAX - 12),
				  12, "_%u", ev->info.id);
		} else {
			err = -EEXIST;
		}
	}
	if (!err) {
		cpu_map__snprint(ev->cpus, ev->info.cpus, sizeof(ev->info.cpus));
		err = holder_event__map(ev);
	}
	if (!err) {
		scnprintf(file, sizeof(file), PERSISTENT_PMU_NAME "/events/%s", ev->info.name);
		err = holder__write_file(file, "persistent,config=%u\n", ev->info.id);
	}
	if (err) {
		holder_event__delete(ev);
		reply.err = err;
		return persistent_msg__send(c->sock, &reply, -1);
	}

	h->next_id++;
	list_add_tail(&ev->list, &h->events);
	reply.info = ev->info;
	reply.attr = ev->attr;
	pr_debug("holder: %s (id %u) detached by uid %d\n", ev->info.name, ev->info.id, c->uid);
	return persistent_msg__send(c->sock, &reply, -1);
}

static bool holder__has_cap(pid_t pid, int bit)
{
	char path[64], line[256];
	unsigned long long caps;
	bool ret = false;
	FILE *fp;

	scnprintf(path, sizeof(path), "/proc/%d/status", pid);
	fp = fopen(path, "re");
	if (!fp)
		return false;
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "CapEff: %llx", &caps) == 1) {
			ret = caps & (1ULL << bit);
			break;
		}
	}
	fclose(fp);
	return ret;
}

/* Root, CAP_PERFMON (or CAP_SYS_ADMIN before it) or the event's owner. */
static bool holder_client__may(struct holder_client *c, struct holder_event *ev)
{
	return c->uid == 0 || (s32)c->uid == ev->info.uid ||
	       holder__has_cap(c->pid, CAP_PERFMON_BIT) ||
	       holder__has_cap(c->pid, CAP_SYS_ADMIN_BIT);
}

static int holder__list(struct holder *h, struct holder_client *c)
{
	struct persistent_msg msg = { .op = PERSISTENT_OP_INFO };
	struct holder_event *ev;
	int err = 0;

	holder__scan(h);
	list_for_each_entry(ev, &h->events, list) {
		msg.info = ev->info;
		err = persistent_msg__send(c->sock, &msg, -1);
		if (err)
			return err;
	}
	msg.op = PERSISTENT_OP_END;
	return persistent_msg__send(c->sock, &msg, -1);
}

static int holder__get(struct holder *h, struct holder_client *c, struct persistent_msg *req)
{
	struct persistent_msg msg = { .op = PERSISTENT_OP_INFO };
	struct holder_event *ev = holder__find(h, req->info.name);
	struct perf_cpu cpu;
	int err, idx;

	if (!ev) {
		msg.err = -ENOENT;
	} else if (!holder_client__may(c, ev)) {
		msg.err = -EACCES;
		msg.info.uid = ev->info.uid;
	}
	if (msg.err)
		return persistent_msg__send(c->sock, &msg, -1);

	holder__scan(h);
	msg.info = ev->info;
	msg.attr = ev->attr;
	err = persistent_msg__send(c->sock, &msg, -1);
	perf_cpu_map__for_each_cpu(cpu, idx, ev->cpus) {
		if (err)
			return err;
		msg.op = PERSISTENT_OP_FD;
		msg.cpu = cpu.cpu;
		err = persistent_msg__send(c->sock, &msg, ev->fds[idx]);
	}
	if (err)
		return err;
	msg.op = PERSISTENT_OP_END;
	c->attached = ev->info.id;
	return persistent_msg__send(c->sock, &msg, -1);
}

static void holder_client__delete(struct holder_client *c)
{
	list_del(&c->list);
	close(c->sock);
	free(c);
}

static void holder__kill_event(struct holder *h, struct holder_event *ev)
{
	struct persistent_msg msg = { .op = PERSISTENT_OP_KILLED };
	struct holder_client *c;

	/* Readers still attached keep the event alive: tell them it's gone. */
	msg.info = ev->info;
	list_for_each_entry(c, &h->clients, list) {
		if (c->attached != ev->info.id)
			continue;
		persistent_msg__send(c->sock, &msg, -1);
		c->dead = true;
	}
	pr_debug("holder: %s (id %u) killed\n", ev->info.name, ev->info.id);
	list_del(&ev->list);
	holder_event__delete(ev);
}

static int holder__kill(struct holder *h, struct holder_client *c, struct persistent_msg *req)
{
	struct persistent_msg msg = { .op = PERSISTENT_OP_END };
	struct holder_event *ev, *tmp;
	int sock = c->sock, nr = 0;

	if (!(req->flags & PERSISTENT_KILL_ALL)) {
		ev = holder__find(h, req->info.name);
		if (!ev) {
			msg.err = -ENOENT;
		} else if (!holder_client__may(c, ev)) {
			msg.err = -EACCES;
			msg.info.uid = ev->info.uid;
		} else {
			holder__kill_event(h, ev);
			nr = 1;
		}
	} else {
		/* Everything the client may kill. */
		list_for_each_entry_safe(ev, tmp, &h->events, list) {
			if (!holder_client__may(c, ev))
				continue;
			holder__kill_event(h, ev);
			nr++;
		}
	}
	msg.info.id = nr;
	return persistent_msg__send(sock, &msg, -1);
}

static void holder__accept(struct holder *h)
{
	struct holder_client *c;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct timeval tv = { .tv_sec = HOLDER_RECV_TIMEOUT_S };
	int sock;

	sock = accept4(h->listen, NULL, NULL, SOCK_CLOEXEC);
	if (sock < 0)
		return;
	c = zalloc(sizeof(*c));
	if (!c || getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		free(c);
		close(sock);
		return;
	}
	/* A client that stops mid-request must not stall the holder. */
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	c->sock = sock;
	c->uid = cred.uid;
	c->pid = cred.pid;
	list_add_tail(&c->list, &h->clients);
}

/* One request; false when the client is done with. */
static bool holder__serve(struct holder *h, struct holder_client *c)
{
	struct persistent_msg req;
	int err;

	err = persistent_msg__recv(c->sock, &req, NULL);
	if (err || c->attached)
		return false;

	switch (req.op) {
	case PERSISTENT_OP_LIST:
		err = holder__list(h, c);
		break;
	case PERSISTENT_OP_GET:
		err = holder__get(h, c, &req);
		/* Stays connected while it reads the event. */
		return !err && c->attached;
	case PERSISTENT_OP_DETACH:
		err = holder__detach(h, c, &req);
		break;
	case PERSISTENT_OP_KILL:
		err = holder__kill(h, c, &req);
		break;
	default:
		err = -EPROTO;
		break;
	}
	return false;
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
	if (!fds || !clients) {
		free(fds);
		free(clients);
		usleep(HOLDER_SCAN_MS * 1000);
		return;
	}
	fds[0].fd = h->listen;
	fds[0].events = POLLIN;
	i = 1;
	list_for_each_entry(c, &h->clients, list) {
		clients[i] = c;
		fds[i].fd = c->sock;
		fds[i++].events = POLLIN;
	}
	if (poll(fds, nr, HOLDER_SCAN_MS) > 0) {
		for (i = 1; i < nr; i++) {
			/* A kill may have ended the one it was reading. */
			if (fds[i].revents && !clients[i]->dead && !holder__serve(h, clients[i]))
				clients[i]->dead = true;
		}
		if (fds[0].revents & POLLIN)
			holder__accept(h);
	}
	list_for_each_entry_safe(c, tmp, &h->clients, list) {
		if (c->dead)
			holder_client__delete(c);
	}
	free(clients);
	free(fds);
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

int persistent_holder__run(bool on_demand)
{
	struct holder h = { .listen = -1, .lockfd = -1, .next_id = 1, .on_demand = on_demand };
	struct sigaction sa = { .sa_handler = holder__signal };
	struct holder_event *ev, *etmp;
	struct holder_client *c, *ctmp;
	int err;

	INIT_LIST_HEAD(&h.events);
	INIT_LIST_HEAD(&h.clients);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (chdir("/"))
		pr_debug("holder: cannot chdir to /\n");

	err = holder__setup(&h);
	if (err == -EEXIST) {
		/* Someone else holds: nothing to do for an on-demand start. */
		holder__report_ready(0);
		if (!on_demand)
			pr_err("Error: a persistent event holder already runs in %s.\n",
			       persistent__dir());
		close(h.lockfd);
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

	while (!holder_done) {
		holder__poll(&h);
		holder__scan(&h);
		if (h.on_demand && list_empty(&h.events) && h.next_id > 1)
			break;
	}

	list_for_each_entry_safe(c, ctmp, &h.clients, list)
		holder_client__delete(c);
	list_for_each_entry_safe(ev, etmp, &h.events, list) {
		list_del(&ev->list);
		holder_event__delete(ev);
	}
	holder__teardown(&h);
	return 0;
}
