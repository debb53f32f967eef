// SPDX-License-Identifier: GPL-2.0
/*
 * DETACH in the persistent event holder: a client hands over the events
 * it made, one file descriptor per CPU, and the holder keeps them.
 *
 * What the client says is checked, and what the events cost is charged
 * to it, when DETACH begins, so that requests in flight cannot add up
 * past a limit: a user may hold HOLDER_USER_EVENTS events, all users
 * together HOLDER_EVENTS, and a user's buffers may pin in the holder
 * what the kernel lets any user pin for perf buffers without
 * CAP_IPC_LOCK (perf_event_mlock_kb per online CPU).  The holder counts
 * that itself: the kernel charges the mappings to root, who maps them,
 * and the holder never runs with a user's credentials, which would let
 * the user signal it.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/zalloc.h>
#include <api/fs/fs.h>
#include <internal/lib.h>
#include <internal/cpumap.h>
#include <perf/cpumap.h>

#include "cpumap.h"
#include "debug.h"
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

/* What 'perf persistent list' prints: no escapes for another's terminal. */
static bool holder__valid_text(const char *text)
{
	for (; *text; text++) {
		if (!isprint((unsigned char)*text) || !isascii(*text))
			return false;
	}
	return true;
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

/* The events and pages of @uid, those being detached included. */
static void holder__user_usage(struct holder *h, uid_t uid, int *nr, u64 *pages)
{
	struct holder_client *c;
	struct holder_event *ev;

	*nr = 0;
	*pages = 0;
	list_for_each_entry(ev, &h->events, list) {
		if (ev->info.uid != (s32)uid)
			continue;
		(*nr)++;
		*pages += ev->charged;
	}
	list_for_each_entry(c, &h->clients, list) {
		if (c->pending && c->uid == uid) {
			(*nr)++;
			*pages += c->pending->charged;
		}
	}
}

/* What the kernel lets a user pin for perf buffers, in pages. */
static u64 holder__user_pages_max(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int kb;

	if (sysctl__read_int("kernel/perf_event_mlock_kb", &kb) || kb < 0)
		kb = 516;
	return (u64)kb * 1024 / page_size * max(cpus, 1L);
}

static int holder__nr_events(struct holder *h)
{
	struct holder_client *c;
	struct holder_event *ev;
	int nr = 0;

	list_for_each_entry(ev, &h->events, list)
		nr++;
	list_for_each_entry(c, &h->clients, list)
		nr += c->pending != NULL;
	return nr;
}

/* What the client may not ask for at all, before any fd comes. */
static int holder__detach_check(struct holder *h, struct holder_client *c,
				struct persistent_msg *req, u64 cost)
{
	long nr_cpus = sysconf(_SC_NPROCESSORS_CONF);
	u32 pages = req->info.pages;
	u64 user_pages;
	int user_events, nr_events;

	/* A user's own holder keeps that user's events only. */
	if (!h->root && c->uid != geteuid())
		return -EACCES;
	/* One page of data would hold nothing whole: see persistent_buf__read(). */
	if (!req->info.nr_cpus || req->info.nr_cpus > (u32)max(nr_cpus, 1L) ||
	    pages < 2 || (pages & (pages - 1)) || pages > HOLDER_MAX_PAGES ||
	    !holder__valid_attr(&req->attr) || !holder__valid_text(req->info.event))
		return -EINVAL;
	holder__user_usage(h, c->uid, &user_events, &user_pages);
	nr_events = holder__nr_events(h);
	/* The last places are root's: users together cannot lock it out. */
	if (nr_events >= HOLDER_EVENTS ||
	    (c->uid && (user_events >= HOLDER_USER_EVENTS ||
			nr_events >= HOLDER_EVENTS - HOLDER_ROOT_EVENTS)))
		return -EDQUOT;
	if (c->uid && user_pages + cost > holder__user_pages_max())
		return -ENOBUFS;
	if (h->pages + cost > h->max_pages)
		return -ENOSPC;
	return 0;
}

int holder__detach_begin(struct holder *h, struct holder_client *c, struct persistent_msg *req)
{
	struct persistent_msg reply = { .op = PERSISTENT_OP_INFO };
	u64 cost = (u64)(req->info.pages + 1) * req->info.nr_cpus;
	struct holder_event *ev;
	u32 i;

	reply.err = holder__detach_check(h, c, req, cost);
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
	/* Charged now, so that DETACHes in flight cannot add up past a limit. */
	ev->charged = cost;
	h->pages += cost;
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

static int holder_event__enable(struct holder_event *ev)
{
	int i, j;

	for (i = 0; i < perf_cpu_map__nr(ev->cpus); i++) {
		if (ioctl(ev->fds[i], PERF_EVENT_IOC_ID, &ev->ids[i]))
			return -errno;
		/* One event handed over as two CPUs'. */
		for (j = 0; j < i; j++) {
			if (ev->ids[j] == ev->ids[i])
				return -EINVAL;
		}
	}
	for (i = 0; i < perf_cpu_map__nr(ev->cpus); i++) {
		if (ioctl(ev->fds[i], PERF_EVENT_IOC_ENABLE, 0))
			return -errno;
	}
	ev->attr.disabled = 0;
	return 0;
}

static int holder__name(struct holder *h, struct holder_event *ev)
{
	size_t len;
	u32 i;

	if (!ev->info.name[0])
		scnprintf(ev->info.name, sizeof(ev->info.name), "event%u", h->next_id);
	if (!holder__valid_name(ev->info.name))
		return -EINVAL;
	if (!holder__name_taken(h, ev->info.name))
		return 0;
	if (!(ev->flags & PERSISTENT_NAME_DEFAULT))
		return -EEXIST;
	/* A made-up name: the first free one of name_<id>, name_<id>_1 ... */
	len = min(strlen(ev->info.name), (size_t)PERSISTENT_NAME_MAX - 24);
	for (i = 0; i <= HOLDER_EVENTS; i++) {
		if (i)
			scnprintf(ev->info.name + len, 24, "_%u_%u", h->next_id, i);
		else
			scnprintf(ev->info.name + len, 24, "_%u", h->next_id);
		if (!holder__name_taken(h, ev->info.name))
			return 0;
	}
	return -EEXIST;
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
		err = holder_event__map(ev);
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
	long nr_cpus = sysconf(_SC_NPROCESSORS_CONF);

	if (msg->op == PERSISTENT_OP_END) {
		holder__drop_fd(h, fd);
		return holder__detach_end(h, c);
	}
	if (msg->op != PERSISTENT_OP_FD || fd < 0 || c->nr_received >= c->nr_expected ||
	    msg->cpu <= c->last_cpu || msg->cpu >= nr_cpus || !holder__is_perf_event(fd)) {
		holder__drop_fd(h, fd);
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
