// SPDX-License-Identifier: GPL-2.0
/*
 * perf persistent: events that run without a controlling process.
 *
 *   perf persistent list [--json]
 *   perf persistent detach -e <event> [-a | -C <cpus>] [--name <name>] ...
 *   perf persistent attach <name|id> [-o <file>] [--duration <secs>]
 *   perf persistent kill <name|id> | --all
 *   perf persistent daemon
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <api/fs/fs.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/zalloc.h>
#include <internal/lib.h>
#include <perf/cpumap.h>
#include <perf/evlist.h>
#include <perf/evsel.h>
#include <subcmd/parse-options.h>

#include "builtin.h"
#include "perf.h"
#include "util/callchain.h"
#include "util/config.h"
#include "util/cpumap.h"
#include "util/data.h"
#include "util/data-convert.h"
#include "util/debug.h"
#include "util/event.h"
#include "util/evlist.h"
#include "util/evsel.h"
#include "util/header.h"
#include "util/parse-events.h"
#include "util/persistent.h"
#include "util/record.h"
#include "util/session.h"
#include "util/synthetic-events.h"
#include "util/target.h"
#include "util/tool.h"
#include "util/util.h"
#include <internal/xyarray.h>

#define DETACH_PAGES_DEFAULT	32

static volatile sig_atomic_t persistent_done;

static void persistent__signal(int sig __maybe_unused)
{
	persistent_done = 1;
}

static const char *persistent__owner(s32 uid, char *buf, size_t size)
{
	struct passwd *pw;

	if (uid < 0)
		return "-";
	pw = getpwuid(uid);
	if (pw)
		return pw->pw_name;
	scnprintf(buf, size, "%d", uid);
	return buf;
}

static const char *persistent_reader_group;

static int persistent__config(const char *var, const char *value, void *cb __maybe_unused)
{
	if (!strcmp(var, "persistent.reader-group"))
		persistent_reader_group = strdup(value);
	return 0;
}

/* list */
static void persistent__print(struct persistent_info *v, int nr, bool json, bool kernel)
{
	char owner[32], size[32];
	int i;

	if (json) {
		printf("[");
		for (i = 0; i < nr; i++) {
			printf("%s\n  {\"name\": ", i ? "," : "");
			output_json_string(stdout, v[i].name);
			printf(", \"id\": %u, \"event\": ", v[i].id);
			output_json_string(stdout, v[i].event);
			printf(", \"cpus\": ");
			output_json_string(stdout, v[i].cpus);
			printf(", \"buffer_pages\": %u, \"owner\": ", v[i].pages);
			output_json_string(stdout, persistent__owner(v[i].uid, owner,
								     sizeof(owner)));
			printf(", \"uid\": %d, \"samples\": %" PRIu64 ", \"lost\": %" PRIu64
			       ", \"source\": \"%s\"}", v[i].uid, v[i].samples, v[i].lost,
			       kernel ? "kernel" : "holder");
		}
		printf("%s]\n", nr ? "\n" : "");
		return;
	}
	printf("%-20s %5s  %-24s %-8s %8s  %-10s %10s %8s\n", "NAME", "ID", "EVENT", "CPUS",
	       "BUFFER", "OWNER", "SAMPLES", "LOST");
	for (i = 0; i < nr; i++) {
		if (v[i].pages)
			scnprintf(size, sizeof(size), "%uKiB", v[i].pages * (u32)page_size / 1024);
		else
			scnprintf(size, sizeof(size), "-");
		if (kernel)
			printf("%-20s %5u  %-24s %-8s %8s  %-10s %10s %8s\n", v[i].name, v[i].id,
			       "-", v[i].cpus[0] ? v[i].cpus : "-", size, "-", "-", "-");
		else
			printf("%-20s %5u  %-24s %-8s %8s  %-10s %10" PRIu64 " %8" PRIu64 "\n",
			       v[i].name, v[i].id, v[i].event, v[i].cpus, size,
			       persistent__owner(v[i].uid, owner, sizeof(owner)),
			       v[i].samples, v[i].lost);
	}
}

/* The kernel's persistent PMU lists its events in sysfs. */
static int persistent__list_kernel(struct persistent_info **infos, int *nr)
{
	struct persistent_info *v = NULL, *tmp;
	char path[PATH_MAX];
	struct dirent *d;
	size_t len;
	DIR *dir;
	int n = 0;

	len = perf_pmu__event_source_devices_scnprintf(path, sizeof(path));
	if (!len)
		return -ENOENT;
	scnprintf(path + len, sizeof(path) - len, PERSISTENT_PMU_NAME "/events");
	dir = opendir(path);
	if (!dir) {
		*infos = NULL;
		*nr = 0;
		return 0;
	}
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		tmp = realloc(v, (n + 1) * sizeof(*v));
		if (!tmp)
			break;
		v = tmp;
		memset(&v[n], 0, sizeof(v[n]));
		strlcpy(v[n].name, d->d_name, sizeof(v[n].name));
		v[n].uid = -1;
		persistent__kernel_id(d->d_name, &v[n].id);
		n++;
	}
	closedir(dir);
	*infos = v;
	*nr = n;
	return 0;
}

static int cmd_persistent_list(int argc, const char **argv)
{
	const char * const usage[] = { "perf persistent list [<options>]", NULL };
	struct persistent_info *infos = NULL;
	bool json = false, kernel = persistent__kernel_pmu(), no_holder = false;
	const struct option options[] = {
		OPT_BOOLEAN(0, "json", &json, "print the events as JSON"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END()
	};
	int nr = 0, err;

	argc = parse_options(argc, argv, options, usage, 0);
	if (argc)
		usage_with_options(usage, options);

	if (kernel) {
		err = persistent__list_kernel(&infos, &nr);
	} else {
		err = persistent_holder__list(&infos, &nr);
		if (err == -ENOENT || err == -ECONNREFUSED) {
			/* It says what went with a dead holder. */
			persistent_holder__clean_stale();
			no_holder = true;
			err = 0;
		}
	}
	if (err) {
		pr_err("Error: cannot list persistent events: %s\n", strerror(-err));
		return 1;
	}
	if (!nr && !json) {
		printf("No persistent events (%s).\n",
		       kernel ? "the kernel's persistent PMU has none" :
		       no_holder ? "no holder runs; 'perf persistent detach' starts one" :
				   "the holder has none");
		return 0;
	}
	persistent__print(infos, nr, json, kernel);
	free(infos);
	return 0;
}

/* detach */
struct persistent_detach {
	struct record_opts	opts;
	const char		*event;
	const char		*name;
	const char		*filter;
	unsigned int		pages;
};

/* A name parse-events takes between persistent/ and /, from the event. */
static void persistent__default_name(const char *event, char *name, size_t size)
{
	size_t i, n = 0;

	for (i = 0; event[i] && n + 1 < size; i++) {
		char c = event[i];

		if (isalnum(c) || c == '_')
			name[n++] = c;
		else if (n && name[n - 1] != '_')
			name[n++] = '_';
	}
	while (n && name[n - 1] == '_')
		n--;
	name[n] = '\0';
	if (!n || isdigit(name[0]))
		scnprintf(name, size, "event");
}

static int persistent_detach__config(struct persistent_detach *d, struct evlist *evlist,
				     struct evsel *evsel)
{
	struct record_opts *opts = &d->opts;
	char errbuf[BUFSIZ];
	int err;

	err = target__validate(&opts->target);
	if (err) {
		target__strerror(&opts->target, err, errbuf, sizeof(errbuf));
		pr_warning("Warning: %s\n", errbuf);
	}
	if (evlist__create_maps(evlist, &opts->target) < 0) {
		pr_err("Error: invalid CPU list '%s'.\n", opts->target.cpu_list);
		return -EINVAL;
	}
	if (record_opts__config(opts))
		return -EINVAL;

	/* As 'perf record -a' would set it up, sideband included ... */
	evlist__config(evlist, opts, &callchain_param);
	/*
	 * ... for a buffer that is never consumed: written backward and read
	 * by any number of readers that each keep their place, records that
	 * say which event and CPU they came from, and counts perf stat reads.
	 */
	evsel->core.attr.write_backward = 1;
	evsel->core.attr.disabled = 1;
	evsel->core.attr.enable_on_exec = 0;
	evsel->core.attr.inherit = 0;
	evsel->core.attr.sample_id_all = 1;
	evsel__set_sample_id(evsel, /*use_sample_identifier=*/true);
	evsel->core.attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
				       PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
	return 0;
}

static int persistent_detach__kernel(struct evsel *evsel)
{
	struct perf_cpu cpu;
	int idx, id;

	if (evsel->core.attr.type == PERSISTENT_HOLDER_TYPE)
		return -EINVAL;
	perf_cpu_map__for_each_cpu(cpu, idx, evsel->core.cpus) {
		int fd = *(int *)xyarray__entry(evsel->core.fd, idx, 0);

		pr_debug2_peo("ioctl: fd %d  PERF_EVENT_IOC_DETACH (%#lx)", fd,
			      (unsigned long)PERF_EVENT_IOC_DETACH);
		id = ioctl(fd, PERF_EVENT_IOC_DETACH, 0);
		pr_debug2_peo(" = %d\n", id < 0 ? -errno : id);
		if (id < 0) {
			pr_err("Error: this kernel lacks persistent events: PERF_EVENT_IOC_DETACH of %s on CPU %d failed: %s.\n"
			       "Its sysfs (%s) shows a persistent PMU that the kernel does not implement.\n",
			       evsel__name(evsel), cpu.cpu, strerror(errno),
			       sysfs__mountpoint() ?: "/sys");
			return -errno;
		}
		printf("persistent event %d: %s on CPU %d\n", id, evsel__name(evsel), cpu.cpu);
	}
	return 0;
}

static int persistent_detach__holder(struct persistent_detach *d, struct evsel *evsel)
{
	struct persistent_info info = { .pages = d->pages };
	int nr = perf_cpu_map__nr(evsel->core.cpus), *fds, idx, err;

	fds = calloc(nr, sizeof(int));
	if (!fds)
		return -ENOMEM;
	for (idx = 0; idx < nr; idx++)
		fds[idx] = *(int *)xyarray__entry(evsel->core.fd, idx, 0);
	if (d->name)
		strlcpy(info.name, d->name, sizeof(info.name));
	else
		persistent__default_name(evsel__name(evsel), info.name, sizeof(info.name));
	strlcpy(info.event, d->event, sizeof(info.event));

	err = persistent_holder__detach(&info, &evsel->core.attr, evsel->core.cpus, fds,
					d->name ? 0 : PERSISTENT_NAME_DEFAULT);
	free(fds);
	if (err == -EEXIST)
		pr_err("Error: a persistent event called '%s' exists; choose another --name.\n",
		       info.name);
	else if (err == -EDQUOT)
		pr_err("Error: the holder keeps no more persistent events for you: kill one\n"
		       "('perf persistent list' shows yours).\n");
	else if (err == -ENOSPC)
		pr_err("Error: the holder's events would pin more memory than it allows in all;\n"
		       "use fewer pages (-m) or ask root to kill some.\n");
	else if (err == -ENOBUFS)
		pr_err("Error: the buffers of '%s' (%u pages per CPU) would take your persistent\n"
		       "events past the locked memory the kernel gives each user for perf buffers\n"
		       "(/proc/sys/kernel/perf_event_mlock_kb per CPU); use fewer pages (-m) or kill\n"
		       "one of yours.\n", info.name, d->pages);
	else if (err == -EACCES)
		pr_err("Error: the holder in %s is another user's: it keeps only its owner's events.\n",
		       persistent__dir());
	else if (err == -EINVAL)
		pr_err("Error: the holder refused the event: is '%s' a valid name (a letter or _,\n"
		       "then letters, digits, _ . -) and -m a power of two?\n", info.name);
	else if (err && err != -ENOTCONN)
		pr_err("Error: cannot hand the event to the persistent event holder in %s: %s\n",
		       persistent__dir(), strerror(-err));
	if (err)
		return err;

	printf("%s %u\n", info.name, info.id);
	pr_info("Persistent event '%s' (id %u): %s on CPUs %s, %u pages per CPU.\n"
		"Read it with 'perf persistent attach %s' or 'perf record -e persistent/%s/',\n"
		"end it with 'perf persistent kill %s'.\n", info.name, info.id, d->event,
		info.cpus, d->pages, info.name, info.name, info.name);
	return 0;
}

static int cmd_persistent_detach(int argc, const char **argv)
{
	const char * const usage[] = {
		"perf persistent detach -e <event> [-a | -C <cpus>] [<options>]", NULL
	};
	struct persistent_detach d = {
		.opts = {
			.mmap_pages	= UINT_MAX,
			.user_freq	= UINT_MAX,
			.user_interval	= ULLONG_MAX,
			.freq		= 4000,
			.target		= {
				.uses_mmap = true, .default_per_cpu = true,
				.uid = UINT_MAX,
			},
			.sample_time	= true,
		},
		.pages = DETACH_PAGES_DEFAULT,
	};
	const struct option options[] = {
		OPT_STRING('e', "event", &d.event, "event", "the event to make persistent"),
		OPT_BOOLEAN('a', "all-cpus", &d.opts.target.system_wide,
			    "on all CPUs (the default)"),
		OPT_STRING('C', "cpu", &d.opts.target.cpu_list, "cpu", "on these CPUs only"),
		OPT_STRING(0, "name", &d.name, "name",
			   "its name (default: from the event, e.g. sched_sched_switch)"),
		OPT_CALLBACK('m', "mmap-pages", &d.pages, "pages[,...]",
			     "buffer size per CPU, in pages (a power of two) or with a unit (e.g. 256K)",
			     evlist__parse_mmap_pages),
		OPT_STRING(0, "filter", &d.filter, "filter", "event filter (tracepoints)"),
		OPT_U64('c', "count", &d.opts.user_interval, "event period to sample"),
		OPT_UINTEGER('F', "freq", &d.opts.user_freq, "sampling frequency"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END()
	};
	struct parse_events_error perr;
	struct evlist *evlist;
	struct evsel *evsel;
	char msg[BUFSIZ];
	int err;

	argc = parse_options(argc, argv, options, usage, 0);
	if (argc || !d.event)
		usage_with_options(usage, options);
	if (d.pages < 2) {
		pr_err("Error: -m %u: a persistent event needs at least 2 pages per CPU: one\n"
		       "holds no whole record once the buffer wraps.\n", d.pages);
		return 1;
	}
	if (!d.opts.target.cpu_list)
		d.opts.target.system_wide = true;

	evlist = evlist__new();
	if (!evlist)
		return -ENOMEM;
	parse_events_error__init(&perr);
	err = parse_events(evlist, d.event, &perr);
	if (err) {
		parse_events_error__print(&perr, d.event);
		pr_err("Error: invalid event '%s': see 'perf list'.\n", d.event);
		goto out_delete;
	}
	err = -EINVAL;
	evsel = evlist__first(evlist);
	if (evlist->core.nr_entries != 1) {
		pr_err("Error: '%s' is %d events; detach one event at a time.\n", d.event,
		       evlist->core.nr_entries);
		goto out_delete;
	}
	if (evsel__is_persistent(evsel)) {
		pr_err("Error: %s is already persistent.\n", d.event);
		goto out_delete;
	}
	if (d.filter && evsel__set_filter(evsel, d.filter))
		goto out_delete;
	err = persistent_detach__config(&d, evlist, evsel);
	if (err)
		goto out_delete;

	if (evsel__open(evsel, evsel->core.cpus, evsel->core.threads) < 0) {
		err = -errno;
		evsel__open_strerror(evsel, &d.opts.target, errno, msg, sizeof(msg));
		pr_err("Error: %s\n", msg);
		goto out_delete;
	}
	if (d.filter && evlist__apply_filters(evlist, &evsel, &d.opts.target)) {
		err = -errno;
		pr_err("Error: failed to set filter \"%s\" on event %s: %s\n", d.filter,
		       evsel__name(evsel), strerror(errno));
		goto out_close;
	}

	if (persistent__kernel_pmu())
		err = persistent_detach__kernel(evsel);
	else
		err = persistent_detach__holder(&d, evsel);
out_close:
	/* The holder (or the kernel) has them now. */
	evsel__close(evsel);
out_delete:
	parse_events_error__exit(&perr);
	evlist__delete(evlist);
	return err ? 1 : 0;
}

/* attach */
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
	unsigned int		duration;	/* seconds, 0: until ^C */
	bool			backlog;
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
	while (!persistent_done && !a->conn.killed && !a->conn.holder_gone) {
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

static int cmd_persistent_attach(int argc, const char **argv)
{
	const char * const usage[] = {
		"perf persistent attach <name|id> [-o <file>] [<options>]", NULL
	};
	struct persistent_attach a = { .backlog = true };
	const struct option options[] = {
		OPT_STRING('o', "output", &a.output, "file",
			   "write a perf.data file ('-' for a pipe) instead of printing live"),
		OPT_UINTEGER(0, "duration", &a.duration, "stop after this many seconds"),
		OPT_BOOLEAN(0, "backlog", &a.backlog,
			    "start with what the buffers hold (default; --no-backlog: new ones)"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END()
	};
	struct sigaction sa = { .sa_handler = persistent__signal };
	int idx, err;

	argc = parse_options(argc, argv, options, usage, 0);
	if (argc != 1)
		usage_with_options(usage, options);
	a.spec = argv[0];

	err = persistent_conn__open(&a.conn, a.spec, a.backlog);
	if (err) {
		persistent_conn__close(&a.conn);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

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
					   a.conn.info.pages ?: DETACH_PAGES_DEFAULT, a.backlog);
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
	persistent_conn__close(&a.conn);
	evlist__delete(a.evlist);
	return err ? 1 : 0;
}

/* kill */
static int persistent_kill__kernel(const char *spec)
{
	struct persistent_conn conn;
	int idx, err;

	err = persistent_conn__open(&conn, spec, /*backlog=*/false);
	for (idx = 0; !err && idx < perf_cpu_map__nr(conn.cpus); idx++) {
		pr_debug2_peo("ioctl: fd %d  PERF_EVENT_IOC_ATTACH (%#lx)\n", conn.fds[idx],
			      (unsigned long)PERF_EVENT_IOC_ATTACH);
		if (ioctl(conn.fds[idx], PERF_EVENT_IOC_ATTACH, 0) < 0) {
			err = -errno;
			pr_err("Error: PERF_EVENT_IOC_ATTACH of persistent event '%s' failed: %s\n",
			       spec, strerror(errno));
		}
	}
	persistent_conn__close(&conn);
	if (!err)
		printf("Killed persistent event '%s'.\n", spec);
	return err;
}

static int cmd_persistent_kill(int argc, const char **argv)
{
	const char * const usage[] = { "perf persistent kill <name|id> | --all", NULL };
	bool all = false;
	const struct option options[] = {
		OPT_BOOLEAN('a', "all", &all, "kill every persistent event you may kill"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END()
	};
	int err, nr;

	argc = parse_options(argc, argv, options, usage, 0);
	if ((all && argc) || (!all && argc != 1))
		usage_with_options(usage, options);

	if (persistent__kernel_pmu()) {
		if (all) {
			pr_err("Error: --all needs the holder; name the kernel's persistent events one by one.\n");
			return 1;
		}
		return persistent_kill__kernel(argv[0]) ? 1 : 0;
	}

	err = persistent_holder__kill(all ? NULL : argv[0], all, &nr);
	if (err == -ENOENT && !all)
		pr_err("Error: unknown persistent event '%s': see 'perf persistent list'.\n",
		       argv[0]);
	else if (err == -EACCES)
		pr_err("Error: permission denied: persistent event '%s' is not yours.\n"
		       "Only its owner and root may kill it.\n", argv[0]);
	else if (err == -ENOENT || err == -ECONNREFUSED)
		pr_err("Error: no persistent events: no holder runs in %s.\n", persistent__dir());
	else if (err)
		pr_err("Error: cannot kill: %s\n", strerror(-err));
	if (err)
		return 1;
	if (all)
		printf("Killed %d persistent event%s.\n", nr, nr == 1 ? "" : "s");
	else
		printf("Killed persistent event '%s'.\n", argv[0]);
	return 0;
}

static int cmd_persistent_daemon(int argc, const char **argv)
{
	const char * const usage[] = { "perf persistent daemon [--reader-group <group>]", NULL };
	bool on_demand = false;
	const struct option options[] = {
		OPT_BOOLEAN(0, "on-demand", &on_demand,
			    "started by detach: exit with the last event"),
		OPT_STRING(0, "reader-group", &persistent_reader_group, "group",
			   "members of this group may read every event (persistent.reader-group)"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END()
	};

	argc = parse_options(argc, argv, options, usage, 0);
	if (argc)
		usage_with_options(usage, options);
	if (persistent__kernel_pmu())
		pr_warning("Warning: this kernel has a persistent PMU; 'perf persistent' uses it, not the holder.\n");
	return persistent_holder__run(on_demand, persistent_reader_group) ? 1 : 0;
}

int cmd_persistent(int argc, const char **argv)
{
	const char * const persistent_usage[] = {
		"perf persistent {list|detach|attach|kill|daemon} [<options>]", NULL
	};
	const struct option options[] = {
		OPT_END()
	};

	perf_config(persistent__config, NULL);
	argc = parse_options(argc, argv, options, persistent_usage,
			     PARSE_OPT_STOP_AT_NON_OPTION);
	if (argc < 1)
		usage_with_options(persistent_usage, options);

	if (!strcmp(argv[0], "list"))
		return cmd_persistent_list(argc, argv);
	if (!strcmp(argv[0], "detach"))
		return cmd_persistent_detach(argc, argv);
	if (!strcmp(argv[0], "attach"))
		return cmd_persistent_attach(argc, argv);
	if (!strcmp(argv[0], "kill"))
		return cmd_persistent_kill(argc, argv);
	if (!strcmp(argv[0], "daemon"))
		return cmd_persistent_daemon(argc, argv);
	pr_err("Error: unknown subcommand '%s'.\n", argv[0]);
	usage_with_options(persistent_usage, options);
	return 1;
}
