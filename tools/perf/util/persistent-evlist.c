// SPDX-License-Identifier: GPL-2.0
/*
 * Persistent events in perf record and perf stat: read beside perf's own
 * events, through the connections of util/persistent.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/zalloc.h>
#include <perf/cpumap.h>
#include <perf/evsel.h>
#include <perf/threadmap.h>

#include "counts.h"
#include "cpumap.h"
#include "debug.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "header.h"
#include "persistent.h"
#include "trace-event.h"

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
	struct persistent_conn *conn;
};

static int persistent_evlist__write(union perf_event *event, int cpu __maybe_unused,
				    void *arg)
{
	struct persistent_write *w = arg;

	if (!persistent_conn__plausible(w->conn, event))
		return 0;
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
	w->conn = conn;
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
		pr_warning("Warning: %" PRIu64
			   " bytes of persistent event %s were overwritten before they could be read.\n",
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
