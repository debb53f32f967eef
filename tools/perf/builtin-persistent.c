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
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
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
#include "util/data-convert.h"
#include "util/debug.h"
#include "util/event.h"
#include "util/evlist.h"
#include "util/evsel.h"
#include "util/parse-events.h"
#include "util/persistent.h"
#include "util/persistent-rundir.h"
#include "util/pmu.h"
#include "util/record.h"
#include "util/target.h"
#include "util/util.h"
#include <internal/xyarray.h>

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

/* -e's event, one that is not persistent yet, configured as detach wants it. */
static int persistent_detach__parse(struct persistent_detach *d, struct evlist *evlist)
{
	struct parse_events_error perr;
	struct evsel *evsel;
	int err;

	parse_events_error__init(&perr);
	err = parse_events(evlist, d->event, &perr);
	if (err) {
		parse_events_error__print(&perr, d->event);
		pr_err("Error: invalid event '%s': see 'perf list'.\n", d->event);
	}
	parse_events_error__exit(&perr);
	if (err)
		return err;
	evsel = evlist__first(evlist);
	if (evlist->core.nr_entries != 1) {
		pr_err("Error: '%s' is %d events; detach one event at a time.\n", d->event,
		       evlist->core.nr_entries);
		return -EINVAL;
	}
	if (evsel__is_persistent(evsel)) {
		pr_err("Error: %s is already persistent.\n", d->event);
		return -EINVAL;
	}
	if (d->filter && evsel__set_filter(evsel, d->filter))
		return -EINVAL;
	return persistent_detach__config(d, evlist, evsel);
}

/* The event opened and handed to the kernel or to a holder. */
static int persistent_detach__run(struct persistent_detach *d)
{
	struct evlist *evlist;
	struct evsel *evsel;
	char msg[BUFSIZ];
	int err;

	if (!d->opts.target.cpu_list)
		d->opts.target.system_wide = true;

	evlist = evlist__new();
	if (!evlist)
		return -ENOMEM;
	err = persistent_detach__parse(d, evlist);
	if (err)
		goto out_delete;
	evsel = evlist__first(evlist);

	if (evsel__open(evsel, evsel->core.cpus, evsel->core.threads) < 0) {
		err = -errno;
		evsel__open_strerror(evsel, &d->opts.target, errno, msg, sizeof(msg));
		pr_err("Error: %s\n", msg);
		goto out_delete;
	}
	if (d->filter && evlist__apply_filters(evlist, &evsel, &d->opts.target)) {
		err = -errno;
		pr_err("Error: failed to set filter \"%s\" on event %s: %s\n", d->filter,
		       evsel__name(evsel), strerror(errno));
		goto out_close;
	}

	if (persistent__kernel_pmu())
		err = persistent_detach__kernel(evsel);
	else
		err = persistent_detach__holder(d, evsel);
out_close:
	/* The holder (or the kernel) has them now. */
	evsel__close(evsel);
out_delete:
	evlist__delete(evlist);
	return err;
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
		.pages = PERSISTENT_PAGES_DEFAULT,
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

	argc = parse_options(argc, argv, options, usage, 0);
	if (argc || !d.event)
		usage_with_options(usage, options);
	if (d.pages < 2) {
		pr_err("Error: -m %u: a persistent event needs at least 2 pages per CPU: one\n"
		       "holds no whole record once the buffer wraps.\n", d.pages);
		return 1;
	}
	return persistent_detach__run(&d) ? 1 : 0;
}

/* attach */
static int cmd_persistent_attach(int argc, const char **argv)
{
	const char * const usage[] = {
		"perf persistent attach <name|id> [-o <file>] [<options>]", NULL
	};
	struct persistent_attach_opts a = { .backlog = true, .done = &persistent_done };
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

	argc = parse_options(argc, argv, options, usage, 0);
	if (argc != 1)
		usage_with_options(usage, options);
	a.spec = argv[0];

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return persistent__attach(&a) ? 1 : 0;
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
