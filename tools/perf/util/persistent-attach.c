// SPDX-License-Identifier: GPL-2.0
/*
 * perf persistent attach: the records of a held event, read from its
 * buffers (or relayed by the holder), written to a perf.data file or a
 * pipe into perf script, with the sideband that names the tasks the event
 * saw before we came.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <perf/cpumap.h>

#include "data.h"
#include "debug.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "header.h"
#include "persistent.h"
#include "session.h"
#include "synthetic-events.h"
#include "tool.h"
#include "trace-event.h"

struct persistent_attach {
	struct perf_tool	tool;
	struct perf_data	data;
	struct persistent_conn	conn;
	struct persistent_buf	*bufs;
	struct perf_session	*session;
	struct evlist		*evlist;
	const char		*output;
	const char		*spec;
	u64			bytes;
	u64			samples;
	unsigned int		duration;	/* seconds, 0: until *done */
	volatile sig_atomic_t	*done;
	pid_t			script;
};

static int persistent_attach__write(struct persistent_attach *a, void *buf, size_t size)
{
	int err;

	if (perf_data__write(&a->data, buf, size) < 0) {
		err = errno ? -errno : -EIO;
		pr_err("Error: cannot write %s: %s\n", a->data.path, strerror(-err));
		return err;
	}
	a->bytes += size;
	return 0;
}

static int persistent_attach__synthesized(const struct perf_tool *tool, union perf_event *event,
					  struct perf_sample *sample __maybe_unused,
					  struct machine *machine __maybe_unused)
{
	struct persistent_attach *a = container_of(tool, struct persistent_attach, tool);

	return persistent_attach__write(a, event, event->header.size);
}

static int persistent_attach__record(union perf_event *event, int cpu __maybe_unused,
				     void *arg)
{
	struct persistent_attach *a = arg;
	int err;

	if (!persistent_conn__plausible(&a->conn, event))
		return 0;
	err = persistent_attach__write(a, event, event->header.size);

	if (!err && event->header.type == PERF_RECORD_SAMPLE)
		a->samples++;
	return err;
}

/* The evlist of the file: the event as it was made, with its ids. */
static int persistent_attach__evlist(struct persistent_attach *a)
{
	struct persistent_conn *conn = &a->conn;
	struct evsel *evsel;

	a->evlist = evlist__new();
	if (!a->evlist)
		return -ENOMEM;
	conn->attr.disabled = 0;
	evsel = evsel__new(&conn->attr);
	if (!evsel)
		return -ENOMEM;
	if (conn->info.event[0])
		evsel->name = strdup(conn->info.event);
	evlist__add(a->evlist, evsel);
	perf_cpu_map__put(evsel->core.cpus);
	evsel->core.cpus = perf_cpu_map__get(conn->cpus);
	return persistent_conn__add_ids(conn, a->evlist, evsel);
}

static void persistent_attach__features(struct persistent_attach *a)
{
	struct perf_header *header = &a->session->header;
	int feat;

	for (feat = HEADER_FIRST_FEATURE; feat < HEADER_LAST_FEATURE; feat++)
		perf_header__set_feat(header, feat);
	/* The files are read as they are now, as with perf record -B. */
	perf_header__clear_feat(header, HEADER_BUILD_ID);
#ifdef HAVE_LIBTRACEEVENT
	if (!have_tracepoints(&a->evlist->core.entries))
		perf_header__clear_feat(header, HEADER_TRACING_DATA);
#endif
	perf_header__clear_feat(header, HEADER_BRANCH_STACK);
	perf_header__clear_feat(header, HEADER_AUXTRACE);
	perf_header__clear_feat(header, HEADER_CLOCKID);
	perf_header__clear_feat(header, HEADER_CLOCK_DATA);
	perf_header__clear_feat(header, HEADER_DIR_FORMAT);
	perf_header__clear_feat(header, HEADER_COMPRESSED);
	perf_header__clear_feat(header, HEADER_STAT);
}

/* Live output: perf script reads what we write. */
static int persistent_attach__start_script(struct persistent_attach *a)
{
	int pipefd[2];

	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	a->script = fork();
	if (a->script < 0)
		return -errno;
	if (a->script == 0) {
		static const char * const argv[] = { "perf", "script", "-i", "-", NULL };

		dup2(pipefd[0], STDIN_FILENO);
		execv("/proc/self/exe", (char * const *)argv);
		_exit(127);
	}
	close(pipefd[0]);
	dup2(pipefd[1], STDOUT_FILENO);
	close(pipefd[1]);
	return 0;
}

static int persistent_attach__open(struct persistent_attach *a)
{
	struct machine *machine;
	int err, fd;

	err = persistent_attach__evlist(a);
	if (err)
		return err;
	if (!a->output) {
		err = persistent_attach__start_script(a);
		if (err)
			return err;
	}
	a->data.path = a->output ?: "-";
	a->data.mode = PERF_DATA_MODE_WRITE;
	perf_tool__init(&a->tool, /*ordered_events=*/true);
	a->session = perf_session__new(&a->data, &a->tool);
	if (IS_ERR(a->session)) {
		err = PTR_ERR(a->session);
		a->session = NULL;
		pr_err("Error: cannot create %s\n", a->data.path);
		return err;
	}
	a->session->evlist = a->evlist;
	perf_session__set_id_hdr_size(a->session);
	persistent_attach__features(a);
	fd = perf_data__fd(&a->data);
	machine = &a->session->machines.host;

	errno = 0;
	if (perf_data__is_pipe(&a->data)) {
		err = perf_header__write_pipe(fd);
		if (err >= 0)
			err = perf_event__synthesize_for_pipe(&a->tool, a->session, &a->data,
							      persistent_attach__synthesized);
	} else {
		err = perf_session__write_header(a->session, a->evlist, fd, false);
	}
	/* perf's header writers say -1: the write's errno says why. */
	if (err < 0)
		return errno ? -errno : -EIO;

	if (!a->conn.attr.exclude_kernel) {
		perf_event__synthesize_kernel_mmap(&a->tool, persistent_attach__synthesized,
						   machine);
		perf_event__synthesize_modules(&a->tool, persistent_attach__synthesized, machine);
	}
	/* The event ran before us: name every task it may have seen. */
	err = perf_event__synthesize_threads(&a->tool, persistent_attach__synthesized, machine,
					     /*needs_mmap=*/true, /*mmap_data=*/false,
					     /*nr_threads_synthesize=*/1);
	return err < 0 ? err : 0;
}

static int persistent_attach__read(struct persistent_attach *a)
{
	struct perf_event_header finished = {
		.type = PERF_RECORD_FINISHED_ROUND, .size = sizeof(finished),
	};
	u64 before = a->bytes;
	int idx, err;

	/* Relayed records, or word that the event or the holder is gone. */
	err = persistent_conn__poll(&a->conn, persistent_attach__record, a);
	for (idx = 0; !err && a->bufs && idx < perf_cpu_map__nr(a->conn.cpus); idx++)
		err = persistent_buf__read(&a->bufs[idx], persistent_attach__record, a);
	if (!err && a->bytes != before)
		err = persistent_attach__write(a, &finished, sizeof(finished));
	return err;
}

static int persistent_attach__loop(struct persistent_attach *a)
{
	struct timespec start, now;
	int err = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!*a->done && !a->conn.killed && !a->conn.holder_gone) {
		struct pollfd pfd = { .fd = a->conn.sock, .events = POLLIN };

		poll(&pfd, a->conn.sock >= 0, 100);
		err = persistent_attach__read(a);
		if (err)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (a->duration && (now.tv_sec - start.tv_sec) * 1000 +
		    (now.tv_nsec - start.tv_nsec) / 1000000 >= a->duration * 1000L)
			break;
	}
	return err ?: persistent_attach__read(a);
}

/*
 * The header says how much data the file holds: only what was written
 * whole.  A file whose header cannot be written (a full disk) would say
 * it holds nothing after all: it goes.
 */
static int persistent_attach__close_file(struct persistent_attach *a)
{
	int err;

	if (!a->session || perf_data__is_pipe(&a->data))
		return 0;
	a->session->header.data_size += a->bytes;
	err = perf_session__write_header(a->session, a->evlist, perf_data__fd(&a->data), true);
	if (err >= 0)
		return 0;
	err = errno ? -errno : -EIO;
	pr_err("Error: cannot finish %s: %s; removed it, it would hold no samples.\n",
	       a->output, strerror(-err));
	unlink(a->output);
	return err;
}

static int persistent_attach__finish(struct persistent_attach *a, int err)
{
	u64 lost = a->conn.relay_lost;
	int idx, status, ret = 0;

	for (idx = 0; a->bufs && idx < perf_cpu_map__nr(a->conn.cpus); idx++)
		lost += a->bufs[idx].lost_bytes;
	if (persistent_attach__close_file(a))
		ret = -EIO;
	if (a->session)
		perf_session__delete(a->session);
	if (a->script > 0) {
		fflush(stdout);
		close(STDOUT_FILENO);
		waitpid(a->script, &status, 0);
	}
	if (a->output && !ret)
		fprintf(stderr, "[ perf persistent attach: %" PRIu64 " samples of '%s' (%" PRIu64
			" bytes) in %s%s ]\n", a->samples, a->conn.info.name, a->bytes, a->output,
			err ? ", up to the error" : "");
	if (lost)
		pr_warning("Warning: %" PRIu64
			   " bytes of '%s' were overwritten before they could be read:\n"
			   "the event writes faster than it is read; give it more pages (detach -m).\n",
			   lost, a->conn.info.name);
	if (a->conn.killed)
		pr_info("Persistent event '%s' was killed.\n", a->conn.info.name);
	if (a->conn.holder_gone) {
		pr_err("Error: the persistent event holder exited while '%s' was read; what was read is kept.\n",
		       a->conn.info.name);
		return -ESRCH;
	}
	return ret;
}

int persistent__attach(const struct persistent_attach_opts *opts)
{
	struct persistent_attach a = {
		.output = opts->output, .spec = opts->spec,
		.duration = opts->duration, .done = opts->done,
	};
	int idx, err;

	err = persistent_conn__open(&a.conn, a.spec, opts->backlog);
	if (err)
		goto out;

	/* Name the system's tasks first: the buffers go on meanwhile. */
	err = persistent_attach__open(&a);
	if (err)
		pr_err("Error: cannot write the output of '%s': %s\n", a.spec, strerror(-err));
	if (!err && !a.conn.relay) {
		a.bufs = calloc(perf_cpu_map__nr(a.conn.cpus), sizeof(*a.bufs));
		err = a.bufs ? 0 : -ENOMEM;
	}
	for (idx = 0; !err && a.bufs && idx < perf_cpu_map__nr(a.conn.cpus); idx++) {
		err = persistent_buf__mmap(&a.bufs[idx], a.conn.fds[idx],
					   perf_cpu_map__cpu(a.conn.cpus, idx).cpu,
					   a.conn.info.pages ?: PERSISTENT_PAGES_DEFAULT,
					   opts->backlog);
		if (err)
			pr_err("Error: cannot map the buffer of '%s' on CPU %d: %s\n", a.spec,
			       perf_cpu_map__cpu(a.conn.cpus, idx).cpu, strerror(-err));
	}
	if (!err)
		err = persistent_attach__loop(&a);
	err = persistent_attach__finish(&a, err) ?: err;

	for (idx = 0; a.bufs && idx < perf_cpu_map__nr(a.conn.cpus); idx++)
		persistent_buf__munmap(&a.bufs[idx]);
	free(a.bufs);
out:
	persistent_conn__close(&a.conn);
	evlist__delete(a.evlist);
	return err;
}
