/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_PERSISTENT_H
#define __PERF_PERSISTENT_H

#include <linux/types.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct evlist;
struct evsel;
struct perf_cpu_map;
struct perf_header;
struct perf_pmu;
union perf_event;

/*
 * Persistent events run without a controlling process; any tool may read
 * them.  Kernels with the persistent-events patches publish them under the
 * sysfs PMU 'persistent' (events/<name> = "persistent,config=<id>",
 * format/persistent = "attr<index>:<bit>") and hand out their file
 * descriptors through perf_event_open(PERF_TYPE_PERSISTENT-typed attr,
 * config = id).  No merged kernel has them, so 'perf persistent daemon', a
 * holder process, owns the events' file descriptors instead and publishes
 * them in a directory laid out like that PMU: both are used through the
 * same code.  The PMU's name and where the holder's directory is are in
 * persistent-rundir.h.
 */
/* The seed ABI's ioctls. */
#ifndef PERF_EVENT_IOC_DETACH
#define PERF_EVENT_IOC_DETACH		_IO('$', 8)
#define PERF_EVENT_IOC_ATTACH		_IO('$', 9)
#endif

/*
 * The holder's PMU type and flag bit: values no kernel hands out or
 * accepts, so an attr meant for the holder can never open a kernel event.
 */
#define PERSISTENT_HOLDER_TYPE		0x7ffff006U
#define PERSISTENT_HOLDER_FORMAT	"attr5:63"

#define PERSISTENT_NAME_MAX		64
#define PERSISTENT_EVENT_MAX		256

/* One persistent event as 'perf persistent list' shows it. */
struct persistent_info {
	u32	id;
	u32	nr_cpus;
	u32	pages;			/* data pages per CPU buffer, 0: unknown */
	s32	uid;			/* owner, -1: unknown */
	u64	samples;
	u64	lost;
	char	name[PERSISTENT_NAME_MAX];
	char	event[PERSISTENT_EVENT_MAX];
	char	cpus[PERSISTENT_EVENT_MAX];	/* "0-3" */
};

/* "name (uid N)" of @uid, in @buf. */
const char *persistent__owner_name(s32 uid, char *buf, size_t size);
/* Whether the running kernel's sysfs has the persistent PMU. */
bool persistent__kernel_pmu(void);
/* The id of the kernel's persistent event @spec (a name or an id). */
int persistent__kernel_id(const char *spec, u32 *id);

/* Hook for perf_pmus__find(): the holder's PMU when sysfs has none. */
struct perf_pmu *perf_pmus__find_persistent(const char *name);
bool evsel__is_persistent(struct evsel *evsel);

/*
 * A read-only, overwritable ring buffer of a persistent event on one CPU,
 * written backward by the kernel (attr.write_backward), so that any number
 * of readers can follow it without a shared tail: each keeps its own
 * position, and one that falls behind loses the oldest records, counted in
 * lost_bytes, but never gets a torn one.
 */
struct persistent_buf {
	void	*base;
	size_t	len;			/* mapping: user page plus data */
	u64	size;			/* data */
	u64	prev;			/* head at the last read */
	u64	lost_bytes;
	u64	records;
	bool	backlog;		/* the first read is of a full buffer */
	void	*copy;			/* scratch: records as copied out */
	u32	*offs;
	int	cpu;
	bool	clone;			/* base and scratch are another's */
};

typedef int (*persistent_record_fn)(union perf_event *event, int cpu, void *arg);

int persistent_buf__mmap(struct persistent_buf *buf, int fd, int cpu, u32 pages,
			 bool backlog);
void persistent_buf__munmap(struct persistent_buf *buf);
/*
 * Another reader of @from's mapping, with a place of its own: the
 * holder's relay for each reader.  It shares @from's scratch, so the two
 * are read one at a time, and must go before @from.
 */
void persistent_buf__clone(struct persistent_buf *buf, const struct persistent_buf *from,
			   bool backlog);
/* Pass the records written since the last read, oldest first, to @fn. */
int persistent_buf__read(struct persistent_buf *buf, persistent_record_fn fn, void *arg);

/*
 * A connection to a persistent event: its attr and one file descriptor per
 * CPU, from the kernel or from the holder.
 */
struct persistent_conn {
	struct persistent_info	info;
	struct perf_event_attr	attr;
	struct perf_cpu_map	*cpus;
	int			*fds;		/* per index of cpus; -1 relayed */
	u64			*ids;		/* per index of cpus */
	int			sock;		/* holder: open while attached */
	u64			relay_lost;	/* bytes the holder could not relay */
	bool			kernel;
	bool			relay;		/* records come over sock */
	bool			killed;
	bool			holder_gone;
};

/*
 * Connect to the event called @spec (a name or an id), kernel first.
 * Errors are reported with pr_err(), in words a user can act on.
 */
int persistent_conn__open(struct persistent_conn *conn, const char *spec, bool backlog);
/*
 * What the holder sent since the last call: relayed records go to @fn;
 * sets killed or holder_gone when the event or the holder went away.
 */
int persistent_conn__poll(struct persistent_conn *conn, persistent_record_fn fn, void *arg);
/* Whether @event, read from @conn, may be what its event wrote. */
bool persistent_conn__plausible(const struct persistent_conn *conn,
				const union perf_event *event);
/* @evsel, in @evlist, gets the ids of the connection's events. */
int persistent_conn__add_ids(struct persistent_conn *conn, struct evlist *evlist,
			     struct evsel *evsel);
void persistent_conn__close(struct persistent_conn *conn);
/* The holder's part of persistent_conn__open(), and the arrays of @cpus. */
int persistent_conn__open_holder(struct persistent_conn *conn, const char *spec, bool backlog);
/* The kernel's part, for event @id opened with @tmpl (NULL: its sysfs attr). */
int persistent_conn__open_kernel(struct persistent_conn *conn, const char *spec, u32 id,
				 const struct perf_event_attr *tmpl);
int persistent_conn__alloc(struct persistent_conn *conn, struct perf_cpu_map *cpus);

/* Holder protocol, client side. */
int persistent_holder__connect(bool start);
int persistent_holder__list(struct persistent_info **infos, int *nr);
/*
 * Hand the events on @cpus (@fds, one per CPU, opened disabled) to the
 * holder, starting it if needed.  @info gives the name, event and pages
 * and gets the id, the name (made unique with PERSISTENT_NAME_DEFAULT)
 * and the CPUs.
 */
int persistent_holder__detach(struct persistent_info *info,
			      const struct perf_event_attr *attr,
			      struct perf_cpu_map *cpus, int *fds, u32 flags);
int persistent_holder__kill(const char *spec, bool all, int *nr_killed);
/*
 * The holder daemon; started @on_demand (by detach) it returns when its
 * last event is gone, else on SIGTERM, SIGINT or SIGHUP.
 */
int persistent_holder__run(bool on_demand, const char *reader_group);
/*
 * Clean up after a holder that died, saying which events went with it;
 * 1 if there was one.
 */
int persistent_holder__clean_stale(void);

/*
 * perf record and perf stat: persistent events in their evlist are read
 * through the holder or the kernel, never opened or enabled themselves.
 */
struct persistent_evlist;

int persistent_evlist__split(struct evlist *evlist, struct persistent_evlist **pevlist);
int persistent_evlist__open(struct persistent_evlist *pevlist, struct evlist *evlist,
			    struct perf_header *header);
int persistent_evlist__read(struct persistent_evlist *pevlist,
			    int (*write)(void *arg, void *buf, size_t size), void *arg);
void persistent_evlist__delete(struct persistent_evlist *pevlist);

/*
 * perf stat: a holder event's file descriptor for one CPU, dup()ed from
 * the holder's; its count so far is the baseline that
 * evsel__persistent_count() subtracts, so that perf stat counts what
 * happened while it ran.
 */
struct perf_counts_values;

int evsel__persistent_open_cpu(struct evsel *evsel, int cpu_map_idx, int cpu);
void evsel__persistent_count(struct evsel *evsel, int cpu_map_idx,
			     struct perf_counts_values *count);

/*
 * The holder's protocol: SOCK_SEQPACKET messages on <dir>/holder.sock,
 * file descriptors passed with SCM_RIGHTS, one per PERSISTENT_OP_FD
 * message.  Requests: LIST (answered by INFO messages and END), GET
 * (INFO with the attr, FD messages with the ids, END; the connection then
 * stays open and gets KILLED if the event goes away), DETACH (INFO with
 * the attr, FD messages, END; answered by INFO with the id) and KILL (END
 * with the number killed in info.id).  Errors come back as -errno in err.
 *
 * GET hands the event's file descriptors to root and to the event's
 * owner only.  Members of the holder's reader group get none (a perf
 * event fd lets its holder disable, re-filter or write the event): their
 * FD messages carry only the ids, INFO says PERSISTENT_RELAY, and the
 * holder copies the records to them in DATA messages.
 */
enum persistent_op {
	PERSISTENT_OP_LIST = 1,
	PERSISTENT_OP_GET,
	PERSISTENT_OP_DETACH,
	PERSISTENT_OP_KILL,
	PERSISTENT_OP_INFO,
	PERSISTENT_OP_FD,
	PERSISTENT_OP_END,
	PERSISTENT_OP_KILLED,
	PERSISTENT_OP_DATA,
};

#define PERSISTENT_KILL_ALL	1U	/* KILL: every event the client may kill */
#define PERSISTENT_NAME_DEFAULT	2U	/* DETACH: a made-up name, make it unique */
#define PERSISTENT_BACKLOG	4U	/* GET: start with what the buffers hold */
#define PERSISTENT_RELAY	8U	/* INFO of GET: records come as DATA */

struct persistent_msg {
	u32			op;
	s32			err;
	s32			cpu;
	u32			flags;
	u64			id;		/* FD: the event's id on that CPU */
	struct persistent_info	info;
	struct perf_event_attr	attr;
};

/* DATA: whole records of one CPU, oldest first, after this header. */
struct persistent_data {
	u32			op;
	s32			cpu;
	u64			lost;		/* bytes dropped before these */
};

#define PERSISTENT_DATA_MAX	(64 * 1024)

int persistent_msg__send(int sock, const struct persistent_msg *msg, int fd);
int persistent_msg__recv(int sock, struct persistent_msg *msg, int *fd);
void persistent_msg__terminate(struct persistent_msg *msg);

/* Data pages per CPU of a detached event, unless -m says otherwise. */
#define PERSISTENT_PAGES_DEFAULT	32

/*
 * perf persistent attach: the records of the event called @spec go to
 * @output, a perf.data file ('-': a pipe), or when NULL are printed live
 * by perf script; until *@done, @duration seconds or the event's end.
 * Errors are reported with pr_err(); returns 0 or a negative errno.
 */
struct persistent_attach_opts {
	const char		*spec;
	const char		*output;
	unsigned int		duration;
	bool			backlog;	/* start with what the buffers hold */
	volatile sig_atomic_t	*done;
};

int persistent__attach(const struct persistent_attach_opts *opts);

#endif /* __PERF_PERSISTENT_H */
