// SPDX-License-Identifier: GPL-2.0
/*
 * The persistent event holder's answers: LIST, GET, KILL and, for the
 * members of its reader group, the records of the events they read.
 *
 * Nothing here waits for a client.  Replies go into a small queue per
 * client that is sent as its socket takes it; relayed records that find
 * no room are dropped and counted, as a full ring buffer would.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/zalloc.h>
#include <perf/cpumap.h>

#include "debug.h"
#include "event.h"
#include "persistent.h"
#include "persistent-holder.h"

/* Replies a client may have waiting: LIST of every event at most. */
#define HOLDER_OUT_MAX		(HOLDER_EVENTS + 8)
#define HOLDER_RELAY_SNDBUF	(4 * PERSISTENT_DATA_MAX)

/* Events. */
static void holder_client__unrelay(struct holder_client *c)
{
	zfree(&c->relay);
}

void holder_event__delete(struct holder *h, struct holder_event *ev)
{
	int i, nr = ev->cpus ? perf_cpu_map__nr(ev->cpus) : 0;

	if (!list_empty(&ev->list)) {
		list_del_init(&ev->list);
		unlinkat(h->eventsfd, ev->info.name, 0);
	}
	h->pages -= ev->charged;
	for (i = 0; ev->bufs && i < nr; i++)
		persistent_buf__munmap(&ev->bufs[i]);
	for (i = 0; ev->fds && i < ev->nr_fds; i++) {
		if (ev->fds[i] >= 0)
			close(ev->fds[i]);
	}
	free(ev->bufs);
	free(ev->fds);
	free(ev->ids);
	free(ev->cpu_list);
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

static struct holder_event *holder__find_id(struct holder *h, u32 id)
{
	struct holder_event *ev;

	list_for_each_entry(ev, &h->events, list) {
		if (ev->info.id == id)
			return ev;
	}
	return NULL;
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
void holder__scan(struct holder *h)
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
		if (lost_bytes && nr_records && ev->record_bytes)
			ev->info.lost += max_t(u64, 1, lost_bytes * nr_records / ev->record_bytes);
		else if (lost_bytes)
			ev->info.lost++;
	}
}

/* Clients. */
void holder_client__delete(struct holder *h, struct holder_client *c)
{
	int i;

	list_del(&c->list);
	holder__close_sock(h, c->sock);
	for (i = c->out_head; i < c->out_nr; i++) {
		if (c->out[i].fd >= 0)
			close(c->out[i].fd);
	}
	free(c->out);
	holder_client__unrelay(c);
	if (c->pending)
		holder_event__delete(h, c->pending);
	free(c);
}

int holder_client__flush(struct holder_client *c)
{
	while (c->out_head < c->out_nr) {
		struct holder_out *o = &c->out[c->out_head];
		int err = persistent_msg__send(c->sock, &o->msg, o->fd);

		if (err == -EAGAIN)
			return 0;
		if (err)
			return err;
		if (o->fd >= 0)
			close(o->fd);
		c->out_head++;
	}
	c->out_head = c->out_nr = 0;
	return 0;
}

/* Queue @msg (with a dup of @fd) and send what the socket takes. */
static int holder_client__reply(struct holder_client *c, const struct persistent_msg *msg,
				int fd)
{
	struct holder_out *o;

	if (c->out_nr >= HOLDER_OUT_MAX)
		return -ENOBUFS;
	if (!c->out) {
		c->out = calloc(HOLDER_OUT_MAX, sizeof(*c->out));
		if (!c->out)
			return -ENOMEM;
	}
	o = &c->out[c->out_nr];
	o->msg = *msg;
	o->fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (fd >= 0 && o->fd < 0)
		return -errno;
	c->out_nr++;
	return holder_client__flush(c);
}

int holder_client__reply_msg(struct holder_client *c, const struct persistent_msg *msg)
{
	return holder_client__reply(c, msg, -1);
}

static int holder_client__error(struct holder_client *c, int err, s32 uid)
{
	struct persistent_msg msg = { .op = PERSISTENT_OP_INFO, .err = err };

	msg.info.uid = uid;
	c->done = true;
	return holder_client__reply(c, &msg, -1);
}

/* Requests. */
static int holder__list(struct holder *h, struct holder_client *c)
{
	struct persistent_msg msg = { .op = PERSISTENT_OP_INFO };
	struct holder_event *ev;
	int err = 0;

	holder__scan(h);
	c->done = true;
	list_for_each_entry(ev, &h->events, list) {
		msg.info = ev->info;
		err = holder_client__reply(c, &msg, -1);
		if (err)
			return err;
	}
	msg.op = PERSISTENT_OP_END;
	return holder_client__reply(c, &msg, -1);
}

/* A reader's own place in each of the event's buffers. */
static int holder_client__relay(struct holder_client *c, struct holder_event *ev,
				bool backlog)
{
	int i, nr = perf_cpu_map__nr(ev->cpus), size = HOLDER_RELAY_SNDBUF;

	c->relay = calloc(nr, sizeof(*c->relay));
	if (!c->relay)
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		persistent_buf__clone(&c->relay[i], &ev->bufs[i], backlog);
	/* Room for a few batches; past that they are dropped and counted. */
	if (setsockopt(c->sock, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)))
		setsockopt(c->sock, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	return 0;
}

static int holder__get(struct holder *h, struct holder_client *c, struct persistent_msg *req)
{
	struct persistent_msg msg = { .op = PERSISTENT_OP_INFO };
	struct holder_event *ev = holder__find(h, req->info.name);
	enum holder_role role;
	struct perf_cpu cpu;
	int err, idx;

	if (!ev)
		return holder_client__error(c, -ENOENT, -1);
	role = holder_client__role(c, ev);
	if (role == HOLDER_OTHER)
		return holder_client__error(c, -EACCES, ev->info.uid);

	holder__scan(h);
	if (role == HOLDER_READER) {
		err = holder_client__relay(c, ev, req->flags & PERSISTENT_BACKLOG);
		if (err)
			return holder_client__error(c, err, ev->info.uid);
		msg.flags = PERSISTENT_RELAY;
	}
	msg.info = ev->info;
	msg.attr = ev->attr;
	err = holder_client__reply(c, &msg, -1);
	perf_cpu_map__for_each_cpu(cpu, idx, ev->cpus) {
		if (err)
			return err;
		msg.op = PERSISTENT_OP_FD;
		msg.cpu = cpu.cpu;
		msg.id = ev->ids[idx];
		err = holder_client__reply(c, &msg, role == HOLDER_OWNER ? ev->fds[idx] : -1);
	}
	if (err)
		return err;
	msg.op = PERSISTENT_OP_END;
	msg.id = 0;
	/* It stays connected while it reads the event, for as long as it likes. */
	c->attached = ev->info.id;
	c->deadline = 0;
	pr_debug("holder: uid %u reads %s%s\n", (unsigned int)c->uid, ev->info.name,
		 c->relay ? ", relayed" : "");
	return holder_client__reply(c, &msg, -1);
}

static void holder__kill_event(struct holder *h, struct holder_event *ev)
{
	struct persistent_msg msg = { .op = PERSISTENT_OP_KILLED };
	struct holder_client *c;

	/* Readers still attached: tell them it's gone, then let them go. */
	msg.info = ev->info;
	list_for_each_entry(c, &h->clients, list) {
		if (c->attached != ev->info.id)
			continue;
		holder_client__unrelay(c);
		c->attached = 0;
		c->done = true;
		c->deadline = holder__now_ms() + HOLDER_REQUEST_MS;
		if (holder_client__reply(c, &msg, -1))
			c->dead = true;
	}
	pr_debug("holder: %s (id %u) killed\n", ev->info.name, ev->info.id);
	holder_event__delete(h, ev);
}

static int holder__kill(struct holder *h, struct holder_client *c, struct persistent_msg *req)
{
	struct persistent_msg msg = { .op = PERSISTENT_OP_END };
	struct holder_event *ev, *tmp;
	int nr = 0;

	c->done = true;
	if (!(req->flags & PERSISTENT_KILL_ALL)) {
		ev = holder__find(h, req->info.name);
		if (!ev)
			return holder_client__error(c, -ENOENT, -1);
		/* Readers read; only root and the owner end an event. */
		if (holder_client__role(c, ev) != HOLDER_OWNER)
			return holder_client__error(c, -EACCES, ev->info.uid);
		holder__kill_event(h, ev);
		nr = 1;
	} else {
		list_for_each_entry_safe(ev, tmp, &h->events, list) {
			if (holder_client__role(c, ev) != HOLDER_OWNER)
				continue;
			holder__kill_event(h, ev);
			nr++;
		}
	}
	msg.info.id = nr;
	return holder_client__reply(c, &msg, -1);
}

static int holder__request(struct holder *h, struct holder_client *c,
			   struct persistent_msg *req)
{
	switch (req->op) {
	case PERSISTENT_OP_LIST:
		return holder__list(h, c);
	case PERSISTENT_OP_GET:
		return holder__get(h, c, req);
	case PERSISTENT_OP_DETACH:
		return holder__detach_begin(h, c, req);
	case PERSISTENT_OP_KILL:
		return holder__kill(h, c, req);
	default:
		return -EPROTO;
	}
}

/*
 * What the client sent.  One request per connection, closed when the
 * client hangs up or misses its deadline; a reader that is attached sends
 * nothing more, so anything from it, or its hang-up, ends the connection.
 * A few messages per round at most, so that one client cannot keep the
 * holder to itself.
 */
void holder__serve(struct holder *h, struct holder_client *c)
{
	struct persistent_msg req;
	int n, err, fd;

	/* Files to close pile up: read no more until the closers catch up. */
	if (h->nr_doomed > 512)
		return;
	for (n = 0; n < 8 && !c->dead; n++) {
		err = holder__recv(h, c->sock, &req, &fd);
		if (err == -EAGAIN)
			return;
		if (!err && c->pending) {
			if (holder__detach_fd(h, c, &req, fd))
				c->dead = true;
			continue;
		}
		holder__drop_fd(h, fd);
		/*
		 * Answered: the rest of a refused request is dropped until the
		 * client hangs up, since closing on unread messages would
		 * reset the connection before it read the answer.
		 */
		if (!err && c->done)
			continue;
		if (!err && c->attached)
			err = -EPROTO;
		if (!err)
			err = holder__request(h, c, &req);
		if (err)
			c->dead = true;
	}
}

/* Relay. */
struct holder_batch {
	struct holder_client	*c;
	int			cpu;
	size_t			len;
	union {
		struct persistent_data	hdr;
		u64			buf[(sizeof(struct persistent_data) +
					     PERSISTENT_DATA_MAX) / sizeof(u64)];
	};
};

static void holder_batch__send(struct holder_batch *b)
{
	struct holder_client *c = b->c;
	size_t data = b->len - sizeof(b->hdr);

	if (!data)
		return;
	b->hdr.op = PERSISTENT_OP_DATA;
	b->hdr.cpu = b->cpu;
	b->hdr.lost = c->relay_lost;
	if (send(c->sock, b->buf, b->len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)b->len)
		c->relay_lost = 0;
	else if (errno == EAGAIN || errno == ENOBUFS)
		c->relay_lost += data;	/* it reads too slowly: as a full buffer */
	else
		c->dead = true;
	b->len = sizeof(b->hdr);
}

static int holder_batch__add(union perf_event *event, int cpu __maybe_unused, void *arg)
{
	struct holder_batch *b = arg;

	if (b->len + event->header.size > sizeof(b->buf))
		holder_batch__send(b);
	memcpy((void *)b->buf + b->len, event, event->header.size);
	b->len += event->header.size;
	return 0;
}

void holder__relay(struct holder *h)
{
	static struct holder_batch b;
	struct holder_client *c;
	struct holder_event *ev;
	int i;

	list_for_each_entry(c, &h->clients, list) {
		/* Its GET's reply first. */
		if (!c->relay || c->out_nr || c->dead)
			continue;
		ev = holder__find_id(h, c->attached);
		if (!ev)
			continue;
		b.c = c;
		for (i = 0; i < perf_cpu_map__nr(ev->cpus) && !c->dead; i++) {
			u64 lost = c->relay[i].lost_bytes;

			b.cpu = perf_cpu_map__cpu(ev->cpus, i).cpu;
			b.len = sizeof(b.hdr);
			persistent_buf__read(&c->relay[i], holder_batch__add, &b);
			c->relay_lost += c->relay[i].lost_bytes - lost;
			holder_batch__send(&b);
		}
	}
}
