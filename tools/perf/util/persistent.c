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
				"'perf persistent detach -e <event>' makes one.\n",
				persistent__dir());
		return NULL;
	}
	pmu = perf_pmus__add_pmu_at(dirfd, PERSISTENT_PMU_NAME);
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
