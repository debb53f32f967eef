// SPDX-License-Identifier: GPL-2.0
/*
 * DETACH in the persistent event holder: a client hands over the events
 * it made, one file descriptor per CPU, and the holder keeps them.
 *
 * What the client says is checked, and what the events cost is charged
 * to it: a user may hold HOLDER_USER_EVENTS events, all users together
 * HOLDER_EVENTS, and the buffers of a user's events are mapped with that
 * user's credentials, so that the kernel charges and limits the pinned
 * pages exactly as it would for the user's own perf mmap
 * (perf_event_mlock_kb per CPU; what the kernel would take beyond that
 * from RLIMIT_MEMLOCK would be the holder's, which is set to what the
 * holder has pinned already for the call, so none).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/zalloc.h>
#include <internal/cpumap.h>
#include <perf/cpumap.h>

#include "cpumap.h"
#include "debug.h"
#include "perf-sys.h"
#include "persistent.h"
#include "persistent-holder.h"
#include "persistent-rundir.h"
#include "strbuf.h"

#define HOLDER_MAX_PAGES	(1U << 20)	/* per CPU buffer */

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

static bool holder__name_taken(struct holder *h, const char *name)
{
	struct holder_event *ev;

	list_for_each_entry(ev, &h->events, list) {
		if (!strcmp(ev->info.name, name))
			return true;
	}
	return false;
}

/* A sample layout every reader can parse: the id in a fixed place. */
static bool holder__valid_attr(const struct perf_event_attr *attr)
{
	return attr->size == sizeof(*attr) && attr->write_backward && attr->sample_id_all &&
	       (attr->sample_type & PERF_SAMPLE_IDENTIFIER) &&
	       !(attr->sample_type & ~(PERF_SAMPLE_MAX - 1));
}

/*
 * Whether the event the attr claims exists: a reader parses the records
 * by the attr, and a tracepoint id that is none would leave it a file
 * it cannot read.  A counter of the same type and config, opened and
 * closed at once, on this task or else on CPU 0 (uncore PMUs).
 */
static bool holder__attr_exists(const struct perf_event_attr *attr)
{
	struct perf_event_attr probe = {
		.type = attr->type, .size = sizeof(probe), .config = attr->config,
		.config1 = attr->config1, .config2 = attr->config2, .disabled = 1,
		.exclude_kernel = attr->exclude_kernel, .exclude_user = attr->exclude_user,
		.exclude_hv = attr->exclude_hv,
	};
	int fd = sys_perf_event_open(&probe, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0 && errno != ENOENT)
		fd = sys_perf_event_open(&probe, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	/* Only what says there is no such event refuses: not permissions. */
	return errno != ENOENT && errno != EINVAL && errno != ENODEV;
}

static int holder__user_events(struct holder *h, uid_t uid)
{
	struct holder_event *ev;
	int nr = 0;

	list_for_each_entry(ev, &h->events, list)
		nr += ev->info.uid == (s32)uid;
	return nr;
}

/* What the client may not ask for at all, before any fd comes. */
static int holder__detach_check(struct holder *h, struct holder_client *c,
				struct persistent_msg *req)
{
	long nr_cpus = sysconf(_SC_NPROCESSORS_CONF);
	u32 pages = req->info.pages;
	int nr = 0;
	struct holder_event *ev;

	/* A user's own holder keeps that user's events only. */
	if (!h->root && c->uid != geteuid())
		return -EACCES;
	list_for_each_entry(ev, &h->events, list)
		nr++;
	if (nr >= HOLDER_EVENTS || (c->uid && holder__user_events(h, c->uid) >= HOLDER_USER_EVENTS))
		return -EDQUOT;
	if (!req->info.nr_cpus || req->info.nr_cpus > (u32)max(nr_cpus, 1L) ||
	    !pages || (pages & (pages - 1)) || pages > HOLDER_MAX_PAGES ||
	    !holder__valid_attr(&req->attr) || !holder__attr_exists(&req->attr))
		return -EINVAL;
	if (h->pages + (u64)(pages + 1) * req->info.nr_cpus > h->max_pages)
		return -ENOSPC;
	return 0;
}

int holder__detach_begin(struct holder *h, struct holder_client *c, struct persistent_msg *req)
{
	struct persistent_msg reply = { .op = PERSISTENT_OP_INFO };
	struct holder_event *ev;
	u32 i;

	reply.err = holder__detach_check(h, c, req);
	if (reply.err) {
		c->done = true;
		return holder_client__reply_msg(c, &reply);
	}
	ev = zalloc(sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	INIT_LIST_HEAD(&ev->list);
	ev->info = req->info;
	ev->attr = req->attr;
	ev->info.uid = c->uid;
	ev->info.samples = ev->info.lost = 0;
	ev->info.cpus[0] = '\0';
	ev->flags = req->flags;
	ev->fds = malloc(req->info.nr_cpus * sizeof(int));
	ev->ids = calloc(req->info.nr_cpus, sizeof(u64));
	ev->cpu_list = calloc(req->info.nr_cpus, sizeof(int));
	c->pending = ev;
	if (!ev->fds || !ev->ids || !ev->cpu_list)
		return -ENOMEM;	/* the connection goes, and the event with it */
	for (i = 0; i < req->info.nr_cpus; i++)
		ev->fds[i] = -1;
	ev->nr_fds = req->info.nr_cpus;
	c->nr_expected = req->info.nr_cpus;
	c->nr_received = 0;
	c->last_cpu = -1;
	return 0;
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

static int holder_event__cpus(struct holder_event *ev, u32 nr)
{
	struct perf_cpu_map *online = perf_cpu_map__new_online_cpus();
	struct strbuf sb = STRBUF_INIT;
	int err = 0;
	u32 i;

	for (i = 0; i < nr && !err; i++)
		err = strbuf_addf(&sb, "%s%d", i ? "," : "", ev->cpu_list[i]);
	if (!err) {
		ev->cpus = perf_cpu_map__new(sb.buf);
		if (!ev->cpus || perf_cpu_map__nr(ev->cpus) != (int)nr)
			err = -EINVAL;
	}
	if (!err && (!online || !perf_cpu_map__is_subset(online, ev->cpus)))
		err = -EINVAL;
	perf_cpu_map__put(online);
	strbuf_release(&sb);
	return err;
}

static int holder_event__map(struct holder_event *ev)
{
	int i, err, nr = perf_cpu_map__nr(ev->cpus);

	ev->bufs = calloc(nr, sizeof(*ev->bufs));
	if (!ev->bufs)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		err = persistent_buf__mmap(&ev->bufs[i], ev->fds[i],
					   perf_cpu_map__cpu(ev->cpus, i).cpu,
					   ev->info.pages, /*backlog=*/true);
		if (err)
			return err;
	}
	return 0;
}

/* The bytes this process has pinned (root's buffers beyond its allowance). */
static int holder__pinned(rlim_t *bytes)
{
	char line[128];
	unsigned long kb;
	FILE *fp = fopen("/proc/self/status", "re");
	int err = -ENOENT;

	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "VmPin: %lu kB", &kb) == 1) {
			*bytes = (rlim_t)kb * 1024;
			err = 0;
			break;
		}
	}
	fclose(fp);
	return err;
}

/*
 * Map as the user who detached: the kernel charges the pages to that
 * user's perf_event_mlock_kb allowance and refuses what it would refuse
 * the user.  Root and a user's own holder map as themselves.
 */
static int holder_event__map_as(struct holder *h, struct holder_event *ev, uid_t uid)
{
	struct rlimit old, none;
	int err;

	if (!h->root || uid == 0)
		return holder_event__map(ev);
	if (getrlimit(RLIMIT_MEMLOCK, &old))
		return -errno;
	/* Nothing beyond the user's allowance may come from the holder's. */
	none = old;
	err = holder__pinned(&none.rlim_cur);
	if (err)
		return err;
	none.rlim_max = max(none.rlim_max, none.rlim_cur);
	if (setrlimit(RLIMIT_MEMLOCK, &none))
		return -errno;
	if (setresuid(uid, uid, 0)) {
		err = -errno;
		setrlimit(RLIMIT_MEMLOCK, &old);
		return err;
	}
	err = holder_event__map(ev);
	pr_debug("holder: mapped as uid %u: %d\n", (unsigned int)uid, err);
	if (setresuid(0, 0, 0)) {
		pr_err("holder: cannot become root again: %s\n", strerror(errno));
		abort();
	}
	setrlimit(RLIMIT_MEMLOCK, &old);
	return err;
}

static int holder_event__enable(struct holder_event *ev)
{
	int i;

	for (i = 0; i < perf_cpu_map__nr(ev->cpus); i++) {
		if (ioctl(ev->fds[i], PERF_EVENT_IOC_ID, &ev->ids[i]) ||
		    ioctl(ev->fds[i], PERF_EVENT_IOC_ENABLE, 0))
			return -errno;
	}
	ev->attr.disabled = 0;
	return 0;
}

static int holder__name(struct holder *h, struct holder_event *ev)
{
	if (!ev->info.name[0])
		scnprintf(ev->info.name, sizeof(ev->info.name), "event%u", h->next_id);
	if (!holder__valid_name(ev->info.name))
		return -EINVAL;
	if (!holder__name_taken(h, ev->info.name))
		return 0;
	if (!(ev->flags & PERSISTENT_NAME_DEFAULT))
		return -EEXIST;
	scnprintf(ev->info.name + min(strlen(ev->info.name), (size_t)PERSISTENT_NAME_MAX - 12),
		  12, "_%u", h->next_id);
	return holder__name_taken(h, ev->info.name) ? -EEXIST : 0;
}

/* END of DETACH: the event is the holder's. */
static int holder__detach_end(struct holder *h, struct holder_client *c)
{
	struct persistent_msg reply = { .op = PERSISTENT_OP_INFO };
	struct holder_event *ev = c->pending;
	int err;

	ev->info.id = h->next_id;
	err = c->nr_received == c->nr_expected ? 0 : -EINVAL;
	if (!err)
		err = holder_event__cpus(ev, c->nr_received);
	if (!err)
		err = holder__name(h, ev);
	if (!err)
		err = holder_event__map_as(h, ev, c->uid);
	if (!err)
		err = holder_event__enable(ev);
	if (!err)
		err = persistent_rundir__write(h->eventsfd, ev->info.name,
					       "persistent,config=%u\n", ev->info.id);
	c->pending = NULL;
	c->done = true;
	if (err) {
		pr_debug("holder: '%s' of uid %u refused: %s\n", ev->info.name,
			 (unsigned int)c->uid, strerror(-err));
		holder_event__delete(h, ev);
		reply.err = err;
		return holder_client__reply_msg(c, &reply);
	}
	cpu_map__snprint(ev->cpus, ev->info.cpus, sizeof(ev->info.cpus));
	h->next_id++;
	h->pages += (u64)(ev->info.pages + 1) * perf_cpu_map__nr(ev->cpus);
	list_add_tail(&ev->list, &h->events);
	reply.info = ev->info;
	reply.attr = ev->attr;
	pr_debug("holder: %s (id %u) detached by uid %u\n", ev->info.name, ev->info.id,
		 (unsigned int)c->uid);
	return holder_client__reply_msg(c, &reply);
}

/* The FD messages of DETACH, one per CPU in ascending order, then END. */
int holder__detach_fd(struct holder *h, struct holder_client *c, struct persistent_msg *msg,
		      int fd)
{
	struct holder_event *ev = c->pending;
	struct persistent_msg reply = { .op = PERSISTENT_OP_INFO, .err = -EINVAL };

	if (msg->op == PERSISTENT_OP_END) {
		if (fd >= 0)
			close(fd);
		return holder__detach_end(h, c);
	}
	if (msg->op != PERSISTENT_OP_FD || fd < 0 || c->nr_received >= c->nr_expected ||
	    msg->cpu <= c->last_cpu || !holder__is_perf_event(fd)) {
		if (fd >= 0)
			close(fd);
		c->pending = NULL;
		c->done = true;
		holder_event__delete(h, ev);
		return holder_client__reply_msg(c, &reply);
	}
	ev->cpu_list[c->nr_received] = msg->cpu;
	ev->fds[c->nr_received++] = fd;
	c->last_cpu = msg->cpu;
	return 0;
}
