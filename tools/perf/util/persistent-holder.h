/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_PERSISTENT_HOLDER_H
#define __PERF_PERSISTENT_HOLDER_H
/*
 * The holder's own state, shared by its event loop (persistent-holder.c)
 * and its request handlers (persistent-serve.c).  Nothing here is for
 * clients.
 */
#include <linux/list.h>
#include <linux/types.h>
#include <stdbool.h>
#include <sys/types.h>

#include "persistent.h"

struct perf_cpu_map;

/* What a client may wait for, and what a user may hold. */
#define HOLDER_REQUEST_MS	2000	/* connect to request served */
#define HOLDER_USER_CONNS	16	/* open connections of a non-root uid */
#define HOLDER_USER_EVENTS	16	/* events of a non-root uid */
#define HOLDER_EVENTS		256	/* events in all */
#define HOLDER_ROOT_EVENTS	32	/* of them, for root only */

struct holder_event {
	struct list_head	list;
	struct persistent_info	info;
	struct perf_event_attr	attr;
	struct perf_cpu_map	*cpus;
	int			*fds;		/* nr_fds of them, -1 where none */
	u64			*ids;
	int			*cpu_list;	/* DETACH: the CPUs as they come */
	int			nr_fds;
	u32			flags;		/* of DETACH */
	u64			charged;	/* pages, counted in holder.pages */
	struct persistent_buf	*bufs;
	u64			record_bytes;	/* of the records counted */
};

/* A reply waiting for room in the client's socket. */
struct holder_out {
	struct persistent_msg	msg;
	int			fd;		/* ours, passed then closed */
};

enum holder_role {
	HOLDER_OTHER,		/* may list */
	HOLDER_READER,		/* the reader group: records, relayed */
	HOLDER_OWNER,		/* root, or the owner of the event */
};

struct holder_client {
	struct list_head	list;
	int			sock;
	uid_t			uid;
	bool			reader;		/* in the holder's reader group */
	u64			deadline;	/* ms; 0 while attached */
	/* DETACH in progress: the event, its fds as they come. */
	struct holder_event	*pending;
	u32			nr_expected;
	u32			nr_received;
	int			last_cpu;
	/* Replies not yet sent. */
	struct holder_out	*out;
	int			out_head, out_nr;
	/* Attached by GET. */
	u32			attached;	/* event id */
	struct persistent_buf	*relay;		/* per CPU; NULL: it has the fds */
	u64			relay_lost;	/* bytes dropped, not yet told */
	bool			done;		/* close once the replies are out */
	bool			dead;
};

/*
 * A process that closes what clients handed the holder and it will not
 * keep: closing a file can wait on whoever is at its other end (a TCP
 * socket lingering on a full peer, a FUSE file, a terminal), and the
 * holder waits on nobody.  Killed when it takes longer than
 * HOLDER_CLOSE_MS.
 */
#define HOLDER_CLOSERS		8
#define HOLDER_CLOSE_MS		1000

struct holder_closer {
	pid_t			pid;
	u64			start;		/* ms */
};

struct holder {
	struct list_head	events;
	struct list_head	clients;
	int			dirfd;
	int			pmufd;		/* persistent/ */
	int			eventsfd;	/* persistent/events/ */
	int			listen;
	int			lockfd;
	int			reserve_fd;	/* given up to refuse at EMFILE */
	int			max_conns;
	u32			next_id;
	u64			started;	/* ms */
	bool			root;		/* the holder runs as root */
	bool			have_reader_group;
	gid_t			reader_group;
	u64			max_pages;	/* pinned by all events */
	u64			pages;
	bool			on_demand;
	bool			unlisted;	/* socket unlinked, on the way out */
	struct holder_closer	closers[HOLDER_CLOSERS];
	int			*doomed;	/* fds for the next closer */
	int			nr_doomed, max_doomed;
};

u64 holder__now_ms(void);
bool holder__is_perf_event(int fd);
/* Close @fd, a client's, without waiting on whatever it is. */
void holder__drop_fd(struct holder *h, int fd);
/* Close a client's socket, and whatever files are still in it. */
void holder__close_sock(struct holder *h, int sock);
/* Receive one message of a client, every file that came with it dropped but @fd. */
int holder__recv(struct holder *h, int sock, struct persistent_msg *msg, int *fd);
/* Start, reap and time the closers; @all: kill them, the holder goes. */
void holder__closers(struct holder *h, bool all);
enum holder_role holder_client__role(struct holder_client *c, struct holder_event *ev);

/* persistent-serve.c */
void holder__serve(struct holder *h, struct holder_client *c);
int holder_client__flush(struct holder_client *c);
int holder_client__reply_msg(struct holder_client *c, const struct persistent_msg *msg);
void holder__relay(struct holder *h);
void holder__scan(struct holder *h);
void holder_event__delete(struct holder *h, struct holder_event *ev);
void holder_client__delete(struct holder *h, struct holder_client *c);

/* persistent-detach.c */
int holder__detach_begin(struct holder *h, struct holder_client *c,
			 struct persistent_msg *req);
int holder__detach_fd(struct holder *h, struct holder_client *c,
		      struct persistent_msg *msg, int fd);

#endif /* __PERF_PERSISTENT_HOLDER_H */
