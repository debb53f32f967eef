// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample report: the hot paths of the virtual LBRs of all AUX
 * samples (util/auxsample-hot.c), printed as tables like perf report's,
 * or as one JSON object.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kernel.h>
#include <subcmd/parse-options.h>

#include "builtin-auxsample.h"
#include "util/auxsample-config.h"
#include "util/debug.h"
#include "util/symbol.h"

#ifdef HAVE_AUXSAMPLE_SUPPORT
#include <auxsample/auxsample.h>

#include "util/auxsample-hot.h"
#include "util/auxsample-print.h"
#include "util/auxsample-walk.h"
#include "util/sample.h"
#include "util/dso.h"
#include "util/string2.h"
#include "util/strlist.h"
#endif

struct report_opts {
	const char	*input;
	unsigned int	depth;		/* branches per sample */
	unsigned int	max_entries;	/* per section, 0: all */
	unsigned int	threads;	/* decoding threads, 0: per CPU, 1: inline */
	const char	*percent_limit;	/* hide items under it (a number) */
	const char	*show;		/* sections: edges,loops,blocks,calls */
	const char	*comms;		/* only samples of these commands */
	const char	*dsos;		/* only items in these dsos */
	const char	*symbols;	/* only items in these functions */
	bool		json;
	bool		reuse;		/* decode overlapping snippets once */
	u64		window;		/* bytes before a sample beside a full trace */
};

#ifdef HAVE_AUXSAMPLE_SUPPORT
#define HOT_NAME_MAX	256
#define HOT_COLUMN_MAX	40	/* widest symbol column */

struct report {
	struct auxsample_walk		walk;
	struct auxsample_hot		hot;
	struct auxsample_hot_filter	filter;
	unsigned int			show;	/* 1 << AUXSAMPLE_HOT_* */
	bool				json;
};

#define HOT_NAME_MAX	256
#define HOT_COLUMN_MAX	40	/* widest symbol column */

static const char *hot_addr__dso_name(const struct auxsample_addr *a)
{
	return a->dso ? dso__short_name(a->dso) : "[unknown]";
}

/*
 * As perf report names code: symbol(+offset), or without a symbol the
 * offset in the dso, which stays the same from run to run (PIE, ASLR).
 * @other: the address it is shown beside; where that is in another dso,
 * the dso is named too.
 */
static void hot_addr__name(const struct auxsample_addr *a, bool offset,
			   const struct auxsample_addr *other, char *buf, size_t size)
{
	int n;

	if (!a->ip)
		n = scnprintf(buf, size, "?");
	else if (a->sym && offset)
		n = scnprintf(buf, size, "%s+0x%" PRIx64, a->sym->name, a->symoff);
	else if (a->sym)
		n = scnprintf(buf, size, "%s", a->sym->name);
	else
		n = scnprintf(buf, size, "%#" PRIx64, a->off);
	if (other && a->ip && !RC_CHK_EQUAL(a->dso, other->dso))
		scnprintf(buf + n, size - n, " (%s)", hot_addr__dso_name(a));
}

/* The width of the widest of the items' first addresses, for a column. */
static int hot_items__width(struct auxsample_hot_item **items, size_t nr, bool offset,
			    int min)
{
	char name[HOT_NAME_MAX];
	int width = min;

	for (size_t i = 0; i < nr; i++) {
		hot_addr__name(&items[i]->a, offset, NULL, name, sizeof(name));
		width = max_t(int, width, strlen(name));
	}
	return min(width, HOT_COLUMN_MAX);
}

/* The Dso column: the dso of each item's first address. */
static int hot_items__dso_width(struct auxsample_hot_item **items, size_t nr)
{
	int width = strlen("Dso");

	for (size_t i = 0; i < nr; i++)
		width = max_t(int, width, strlen(hot_addr__dso_name(&items[i]->a)));
	return min(width, HOT_COLUMN_MAX);
}

static void report__print_edges(struct auxsample_hot *h, struct auxsample_hot_item **items,
				size_t nr)
{
	char from[HOT_NAME_MAX], to[HOT_NAME_MAX];
	int width = hot_items__width(items, nr, true, strlen("Source"));
	int dso_width = hot_items__dso_width(items, nr);

	printf("# Branch edges: %" PRIu64 " taken branches\n#\n",
	       h->sections[AUXSAMPLE_HOT_EDGES].total);
	printf("# %8s  %7s  %-8s  %-*s  %-*s  %s\n", "Count", "Percent", "Kind",
	       dso_width, "Dso", width, "Source", "Target");
	printf("# %.8s  %.7s  %.8s  %.*s  %.*s  %.6s\n", dots, dots, dots,
	       dso_width, dots, width, dots, dots);
	for (size_t i = 0; i < nr; i++) {
		hot_addr__name(&items[i]->a, true, NULL, from, sizeof(from));
		hot_addr__name(&items[i]->b, true, &items[i]->a, to, sizeof(to));
		printf("  %8" PRIu64 "  %6.2f%%  %-8s  %-*s  %-*s  %s\n", items[i]->count,
		       auxsample_hot__percent(h, AUXSAMPLE_HOT_EDGES, items[i]),
		       auxsample_branch_kind__name(items[i]->kind), dso_width,
		       hot_addr__dso_name(&items[i]->a), width, from, to);
	}
}

static void report__print_loops(struct auxsample_hot *h, struct auxsample_hot_item **items,
				size_t nr)
{
	char head[HOT_NAME_MAX], tail[HOT_NAME_MAX], avg[32], most[32];
	int dso_width = hot_items__dso_width(items, nr);

	printf("# Loops: back edges taken more than once in a row in one frame, %" PRIu64
	       " LBRs decoded\n", h->decoded);
	printf("# Trips: back edges taken in a row, in runs whose entry and exit the LBR shows;\n");
	printf("# N+: at least N, in runs longer than the LBR\n#\n");
	printf("# %8s  %7s  %10s  %6s  %9s  %9s  %-*s  %s\n", "Samples", "Percent", "Back edges",
	       "Runs", "Trips avg", "Trips max", dso_width, "Dso", "Loop (head .. tail)");
	printf("# %.8s  %.7s  %.10s  %.6s  %.9s  %.9s  %.*s  %.19s\n", dots,
	       dots, dots, dots, dots, dots, dso_width, dots, dots);
	for (size_t i = 0; i < nr; i++) {
		const struct auxsample_hot_item *loop = items[i];

		hot_addr__name(&loop->a, true, NULL, head, sizeof(head));
		hot_addr__name(&loop->b, true, &loop->a, tail, sizeof(tail));
		if (loop->loop.runs)
			scnprintf(avg, sizeof(avg), "%.2f",
				  (double)loop->loop.trips / loop->loop.runs);
		else
			scnprintf(avg, sizeof(avg), "-");
		if (loop->loop.partial_max > loop->loop.trips_max)
			scnprintf(most, sizeof(most), "%" PRIu64 "+", loop->loop.partial_max);
		else
			scnprintf(most, sizeof(most), "%" PRIu64, loop->loop.trips_max);
		printf("  %8" PRIu64 "  %6.2f%%  %10" PRIu64 "  %6" PRIu64
		       "  %9s  %9s  %-*s  %s .. %s\n",
		       loop->count, auxsample_hot__percent(h, AUXSAMPLE_HOT_LOOPS, loop),
		       loop->loop.back_edges, loop->loop.runs, avg, most, dso_width,
		       hot_addr__dso_name(&loop->a), head, tail);
	}
}

static void report__print_blocks(struct auxsample_hot *h, struct auxsample_hot_item **items,
				 size_t nr)
{
	char start[HOT_NAME_MAX], end[HOT_NAME_MAX];
	int dso_width = hot_items__dso_width(items, nr);

	printf("# Hot basic blocks: the code between two taken branches, %" PRIu64 " run\n#\n",
	       h->sections[AUXSAMPLE_HOT_BLOCKS].total);
	printf("# %8s  %7s  %5s  %5s  %-*s  %s\n", "Count", "Percent", "Insns", "Bytes",
	       dso_width, "Dso", "Block (first .. last instruction)");
	printf("# %.8s  %.7s  %.5s  %.5s  %.*s  %.33s\n", dots, dots,
	       dots, dots, dso_width, dots, dots);
	for (size_t i = 0; i < nr; i++) {
		const struct auxsample_hot_item *block = items[i];

		hot_addr__name(&block->a, true, NULL, start, sizeof(start));
		hot_addr__name(&block->b, true, &block->a, end, sizeof(end));
		printf("  %8" PRIu64 "  %6.2f%%  ", block->count,
		       auxsample_hot__percent(h, AUXSAMPLE_HOT_BLOCKS, block));
		if (block->block.insns)
			printf("%5u  %5u", block->block.insns, block->block.bytes);
		else
			printf("%5s  %5s", "-", "-");
		printf("  %-*s  %s .. %s\n", dso_width, hot_addr__dso_name(&block->a), start, end);
	}
}

static void report__print_calls(struct auxsample_hot *h, struct auxsample_hot_item **items,
				size_t nr)
{
	char caller[HOT_NAME_MAX], callee[HOT_NAME_MAX];
	int width = hot_items__width(items, nr, false, strlen("Caller"));
	int dso_width = hot_items__dso_width(items, nr);

	printf("# Calls: %" PRIu64 " call branches; Samples: call chains with the call open\n",
	       h->sections[AUXSAMPLE_HOT_CALLS].total);
	printf("# Caller, callee: functions; [<offset>]: the call site, in code without symbols\n"
	       "#\n");
	printf("# %8s  %7s  %8s  %-*s  %-*s  %s\n", "Calls", "Percent", "Samples",
	       dso_width, "Dso", width, "Caller", "Callee");
	printf("# %.8s  %.7s  %.8s  %.*s  %.*s  %.6s\n", dots, dots, dots,
	       dso_width, dots, width, dots, dots);
	for (size_t i = 0; i < nr; i++) {
		if (!items[i]->a.sym && items[i]->a.dso)	/* a call site */
			scnprintf(caller, sizeof(caller), "[%#" PRIx64 "]", items[i]->a.off);
		else
			hot_addr__name(&items[i]->a, false, NULL, caller, sizeof(caller));
		hot_addr__name(&items[i]->b, false, &items[i]->a, callee, sizeof(callee));
		printf("  %8" PRIu64 "  %6.2f%%  %8" PRIu64 "  %-*s  %-*s  %s\n", items[i]->count,
		       auxsample_hot__percent(h, AUXSAMPLE_HOT_CALLS, items[i]),
		       items[i]->call.samples,
		       dso_width, hot_addr__dso_name(&items[i]->a), width, caller, callee);
	}
}

static void report__json_item(struct auxsample_hot *h, enum auxsample_hot_section_id id,
			      const struct auxsample_hot_item *item)
{
	static const char * const keys[AUXSAMPLE_HOT_NR_SECTIONS][2] = {
		[AUXSAMPLE_HOT_EDGES] = { "from", "to" },
		[AUXSAMPLE_HOT_LOOPS] = { "head", "tail" },
		[AUXSAMPLE_HOT_BLOCKS] = { "start", "end" },
		[AUXSAMPLE_HOT_CALLS] = { "caller", "callee" },
	};

	putchar('{');
	auxsample_print__json_addr(stdout, keys[id][0], &item->a, id != AUXSAMPLE_HOT_CALLS);
	putchar(',');
	auxsample_print__json_addr(stdout, keys[id][1], &item->b, id != AUXSAMPLE_HOT_CALLS);
	printf(",\"%s\":%" PRIu64 ",\"percent\":%.2f", id == AUXSAMPLE_HOT_LOOPS ? "samples" :
	       id == AUXSAMPLE_HOT_CALLS ? "calls" : "count", item->count,
	       auxsample_hot__percent(h, id, item));
	switch (id) {
	case AUXSAMPLE_HOT_EDGES:
		printf(",\"kind\":\"%s\"", auxsample_branch_kind__name(item->kind));
		break;
	case AUXSAMPLE_HOT_LOOPS:
		printf(",\"back_edges\":%" PRIu64 ",\"runs\":%" PRIu64 ",\"trips_avg\":",
		       item->loop.back_edges, item->loop.runs);
		if (item->loop.runs)
			printf("%.2f", (double)item->loop.trips / item->loop.runs);
		else
			printf("null");
		printf(",\"trips_max\":%" PRIu64 ",\"partial_max\":%" PRIu64,
		       item->loop.trips_max, item->loop.partial_max);
		break;
	case AUXSAMPLE_HOT_BLOCKS:
		if (item->block.insns)
			printf(",\"insns\":%u,\"bytes\":%u", item->block.insns, item->block.bytes);
		else
			printf(",\"insns\":null,\"bytes\":null");
		break;
	case AUXSAMPLE_HOT_CALLS:
		printf(",\"samples\":%" PRIu64, item->call.samples);
		break;
	case AUXSAMPLE_HOT_NR_SECTIONS:
	default:
		break;
	}
	putchar('}');
}

static void report__print_header(struct report *r)
{
	struct auxsample_walk *w = &r->walk;
	struct auxsample_hot *h = &r->hot;

	if (r->json) {
		printf("{\"samples\":%" PRIu64 ",\"filtered\":%" PRIu64 ",\"decoded\":%" PRIu64
		       ",\"failed\":%" PRIu64 ",\"error_samples\":%" PRIu64
		       ",\"branches\":%" PRIu64 ",\"depth\":%u", w->samples, w->filtered,
		       h->decoded, w->nosync, w->error_samples, h->branches, w->d.depth);
		return;
	}
	printf("# perf auxsample report: %" PRIu64 " %s, ", w->samples, auxsample_walk__what(w));
	if (w->filtered)
		printf("%" PRIu64 " left out by --comms, ", w->filtered);
	printf("%" PRIu64 " decoded, %" PRIu64 " failed (no sync point), %" PRIu64
	       " with decode errors, %" PRIu64 " branches (depth %u)\n",
	       h->decoded, w->nosync, w->error_samples, h->branches, w->d.depth);
}

static void report__print_json(struct auxsample_hot *h, enum auxsample_hot_section_id id,
			       struct auxsample_hot_item **items, size_t nr)
{
	printf(",\"%s\":[", auxsample_hot_section_names[id]);
	for (size_t i = 0; i < nr; i++) {
		printf(i ? ",\n" : "\n");
		report__json_item(h, id, items[i]);
	}
	printf("]");
}

static int report__print(struct auxsample_walk *w)
{
	static void (* const print[AUXSAMPLE_HOT_NR_SECTIONS])(struct auxsample_hot *h,
							       struct auxsample_hot_item **items,
							       size_t nr) = {
		[AUXSAMPLE_HOT_EDGES] = report__print_edges,
		[AUXSAMPLE_HOT_LOOPS] = report__print_loops,
		[AUXSAMPLE_HOT_BLOCKS] = report__print_blocks,
		[AUXSAMPLE_HOT_CALLS] = report__print_calls,
	};
	struct report *r = container_of(w, struct report, walk);

	report__print_header(r);
	for (int id = 0; id < AUXSAMPLE_HOT_NR_SECTIONS; id++) {
		struct auxsample_hot_item **items;
		size_t nr;

		if (!(r->show & (1U << id)))
			continue;
		items = auxsample_hot__items(&r->hot, id, &r->filter, &nr);
		if (!items)
			return -ENOMEM;
		if (r->json) {
			report__print_json(&r->hot, id, items, nr);
		} else {
			printf("#\n");
			print[id](&r->hot, items, nr);
		}
		free(items);
	}
	if (r->json)
		printf("}\n");
	return 0;
}

static int report__sample(struct auxsample_walk *w, struct thread *thread,
			  struct perf_sample *sample, struct evsel *evsel __maybe_unused,
			  const struct auxsample_result *res)
{
	struct report *r = container_of(w, struct report, walk);

	return auxsample_hot__add(&r->hot, thread, sample->ip, res);
}

/* --show: the sections to print, all by default. */
static int report__parse_show(struct report *r, const char *show)
{
	struct str_node *pos;
	struct strlist *list;
	int err = 0;

	if (!show) {
		r->show = (1U << AUXSAMPLE_HOT_NR_SECTIONS) - 1;
		return 0;
	}
	list = strlist__new(show, NULL);
	if (!list)
		return -ENOMEM;
	strlist__for_each_entry(pos, list) {
		int id;

		for (id = 0; id < AUXSAMPLE_HOT_NR_SECTIONS; id++) {
			if (!strcmp(pos->s, auxsample_hot_section_names[id]))
				break;
		}
		if (id == AUXSAMPLE_HOT_NR_SECTIONS) {
			pr_err("perf auxsample report: no section '%s'; --show takes edges, loops, blocks, calls\n",
			       pos->s);
			err = -EINVAL;
			break;
		}
		r->show |= 1U << id;
	}
	strlist__delete(list);
	return err;
}

/* --percent-limit: a percentage, not negative. */
static int report__parse_percent(struct report *r, const char *str)
{
	char *end;

	if (!str)
		return 0;
	r->filter.percent_limit = strtod(str, &end);
	if (*end || end == str || r->filter.percent_limit < 0) {
		pr_err("perf auxsample report: --percent-limit takes a percentage, not '%s'\n",
		       str);
		return -EINVAL;
	}
	return 0;
}

/* A comma-separated list of names, NULL if not given. */
static int report__parse_list(struct strlist **list, const char *str)
{
	if (!str)
		return 0;
	*list = strlist__new(str, NULL);
	return *list ? 0 : -ENOMEM;
}

static int report__init(struct report *r, const struct report_opts *opts)
{
	r->json = opts->json;
	r->walk.cmd = "report";
	r->walk.input = opts->input;
	r->walk.d.depth = opts->depth;
	r->walk.threads = opts->threads;
	r->walk.no_reuse = !opts->reuse;
	r->walk.window = opts->window;
	r->walk.sample = report__sample;
	r->walk.done = report__print;
	r->filter.max_entries = opts->max_entries;
	auxsample_hot__init(&r->hot, &r->walk.symcache, &r->walk.d.config);
	return report__parse_show(r, opts->show) ?:
	       report__parse_percent(r, opts->percent_limit) ?:
	       report__parse_list(&r->walk.comms, opts->comms) ?:
	       report__parse_list(&r->filter.dsos, opts->dsos) ?:
	       report__parse_list(&r->filter.symbols, opts->symbols);
}

static int report__run(const struct report_opts *opts)
{
	struct report r = {};
	int err = report__init(&r, opts);

	if (!err)
		err = auxsample_walk__run(&r.walk);
	auxsample_hot__exit(&r.hot);
	strlist__delete(r.walk.comms);
	strlist__delete(r.filter.dsos);
	strlist__delete(r.filter.symbols);
	return err;
}
#else
static int report__run(const struct report_opts *opts __maybe_unused)
{
	pr_err("perf auxsample report needs perf built with libipt or libopencsd (perf check feature auxsample)\n");
	return -1;
}
#endif

int cmd_auxsample_report(int argc, const char **argv)
{
	struct report_opts opts = {
		.input = "perf.data",
		.depth = AUXSAMPLE_DEFAULT_DEPTH,
		.max_entries = 20,
		.reuse = true,
		.window = AUXSAMPLE_DEFAULT_WINDOW,
	};
	const char * const usage[] = { "perf auxsample report [<options>]", NULL };
	const struct option options[] = {
		OPT_STRING('i', "input", &opts.input, "file", "input file name"),
		OPT_UINTEGER(0, "depth", &opts.depth, "branches per sample (default 64)"),
		OPT_STRING(0, "show", &opts.show, "sections",
			   "sections to show: edges,loops,blocks,calls (default: all)"),
		OPT_STRING('c', "comms", &opts.comms, "comm[,comm...]",
			   "only samples of these commands"),
		OPT_STRING('d', "dsos", &opts.dsos, "dso[,dso...]",
			   "only what starts or ends in these dsos"),
		OPT_STRING('S', "symbols", &opts.symbols, "symbol[,symbol...]",
			   "only what starts or ends in these functions"),
		OPT_STRING(0, "percent-limit", &opts.percent_limit, "percent",
			   "hide entries under that percent of their section"),
		OPT_UINTEGER('n', "max-entries", &opts.max_entries,
			     "entries per section (default 20, 0: all)"),
		OPT_BOOLEAN(0, "json", &opts.json, "one JSON object with all sections"),
		OPT_BOOLEAN(0, "reuse", &opts.reuse,
			    "decode the overlapping snippets of a CPU once (default: on)"),
		OPT_CALLBACK(0, "window-size", &opts.window, "size",
			     "trace before a sample beside a full trace (default 64K)",
			     auxsample__parse_size),
		OPT_UINTEGER('j', "threads", &opts.threads,
			     "decoding threads (default: one per online CPU; 1: decode inline)"),
		OPT_CALLBACK(0, "decoder", NULL, "walker|libipt",
			     "Intel PT decoder: the library's walker (default) or libipt, the reference",
			     auxsample__parse_decoder),
		OPT_CALLBACK(0, "symfs", NULL, "directory",
			     "look for the traced binaries relative to this directory",
			     symbol__config_symfs),
		OPT_STRING('k', "vmlinux", &symbol_conf.vmlinux_name, "file",
			   "vmlinux with the kernel's code and symbols, for kernel-traced samples"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END()
	};

	argc = parse_options(argc, argv, options, usage, 0);
	if (argc)
		usage_with_options(usage, options);
	if (auxsample__check_window(opts.window) || auxsample__check_depth("report", opts.depth))
		return 1;
	return report__run(&opts) ? 1 : 0;
}
