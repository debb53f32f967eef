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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <api/fs/fs.h>
#include <linux/kernel.h>
#include <linux/ring_buffer.h>
#include <linux/string.h>
#include <linux/zalloc.h>
#include <internal/lib.h>
#include <perf/cpumap.h>
#include <perf/evsel.h>

#include "perf-sys.h"
#include "asm/bug.h"
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

int persistent_conn__open_kernel(struct persistent_conn *conn, const char *spec, u32 id,
				 const struct perf_event_attr *tmpl)
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
