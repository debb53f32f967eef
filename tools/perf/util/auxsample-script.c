// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample script: every sample that carries AUX area data, decoded
 * with libauxsample into its virtual LBR (the last taken branches before
 * it, newest first) and the call chain those branches show.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <linux/kernel.h>
#include <linux/err.h>
#include <linux/string.h>
#include <stdlib.h>
#include <auxsample/auxsample.h>

#include "addr_location.h"
#include "auxsample.h"
#include "auxsample-script.h"
#include "data.h"
#include "debug.h"
#include "event.h"
#include "evsel.h"
#include "header.h"
#include "machine.h"
#include "map.h"
#include "sample.h"
#include "session.h"
#include "symbol.h"
#include "thread.h"
#include "tool.h"

#define STAT_MAX_CPUS	4096
#define OVERLAP_PROBE	32	/* bytes of a snippet looked for in the previous one */

/* The previous snippet of each CPU, to measure how much they overlap. */
struct auxsample_prev {
	void	*data;
	size_t	size;
};

struct auxsample_walk;

/*
 * One AUX sample of the file, decoded: @nr is what auxsample_decoder__decode()
 * returned, the number of branches or -AUXSAMPLE_ERR_NOSYNC; the results are
 * w->dec's until the next sample.
 */
typedef int (*auxsample_walk__sample_fn)(struct auxsample_walk *w, struct thread *thread,
					  struct perf_sample *sample, struct evsel *evsel,
					  int nr);

/*
 * The walk that script, stat and report share: every sample of the file
 * that carries AUX area data, decoded by the decoder of its process.
 */
struct auxsample_walk {
	struct perf_tool		tool;
	const char			*cmd;	/* "script", ...: for messages */
	const char			*input;
	unsigned int			depth;	/* branches per sample, 0: all */
	auxsample_walk__sample_fn	sample;
	/* after the last event, while the session (its symbols) lives */
	int				(*done)(struct auxsample_walk *w);
	struct perf_session		*session;
	struct auxsample_decoder	*dec;	/* proc's, for the sample at hand */
	struct auxsample_proc		proc;
	struct auxsample_config		config;
	bool				have_config;
	u64				samples;
	u64				nosync;
	u64				errors;		/* decode errors */
};

struct auxsample_script {
	struct auxsample_walk			walk;
	const struct auxsample_script_opts	*opts;
	u64					branches;
	/* perf auxsample stat */
	u64					bytes;
	u64					bytes_before_sync;
	u64					syncs;
	u64					overlap;
	u64					gaps;
	u64					errors_by_kind[AUXSAMPLE_ERR_OVERFLOW + 1];
	struct auxsample_prev			*prev;
};

/*
 * How many bytes at the start of @cur the previous snippet of the same CPU
 * ended with: consecutive snippets of an overwrite-mode buffer share most
 * of their bytes at high sample rates.  The kernel pads snippets with
 * zeros to 8 bytes, so the end of the previous one may not match.
 */
static size_t auxsample__overlap(const struct auxsample_prev *prev, const u8 *cur,
				 size_t size)
{
	const u8 *p, *end;

	if (!prev->data || size < OVERLAP_PROBE || prev->size < OVERLAP_PROBE)
		return 0;
	end = (const u8 *)prev->data + prev->size;
	for (p = memmem(prev->data, prev->size, cur, OVERLAP_PROBE); p;
	     p = memmem(p + 1, end - p - 1, cur, OVERLAP_PROBE)) {
		size_t n = min_t(size_t, (size_t)(end - p), size);

		while (n && memcmp(p, cur, n))
			n--;
		if (n >= OVERLAP_PROBE)
			return n;
		if (end - p - 1 < OVERLAP_PROBE)
			break;
	}
	return 0;
}

static int auxsample_script__account(struct auxsample_script *s, struct perf_sample *sample)
{
	const struct auxsample_decode_error *errs;
	struct auxsample_stats stats;
	struct auxsample_prev *prev;
	int nr;

	auxsample_decoder__stats(s->walk.dec, &stats, sizeof(stats));
	s->bytes += sample->aux_sample.size;
	s->bytes_before_sync += stats.bytes_before_sync;
	s->syncs += stats.syncs;
	s->gaps += stats.gaps;
	nr = auxsample_decoder__errors(s->walk.dec, &errs);
	for (int i = 0; i < nr; i++) {
		unsigned int e = -errs[i].error;

		if (e < ARRAY_SIZE(s->errors_by_kind))
			s->errors_by_kind[e]++;
	}
	if (sample->cpu >= STAT_MAX_CPUS)
		return 0;
	if (!s->prev) {
		s->prev = calloc(STAT_MAX_CPUS, sizeof(*s->prev));
		if (!s->prev)
			return -ENOMEM;
	}
	prev = &s->prev[sample->cpu];
	s->overlap += auxsample__overlap(prev, sample->aux_sample.data, sample->aux_sample.size);
	free(prev->data);
	prev->data = memdup(sample->aux_sample.data, sample->aux_sample.size);
	prev->size = prev->data ? sample->aux_sample.size : 0;
	return 0;
}

static void auxsample_script__print_stat(struct auxsample_script *s)
{
	u64 n = s->walk.samples ?: 1;

	printf("%12" PRIu64 "  AUX samples\n", s->walk.samples);
	printf("%12" PRIu64 "  bytes of trace (%" PRIu64 " per sample)\n", s->bytes, s->bytes / n);
	printf("%12" PRIu64 "  bytes before the first sync point, not decodable (%.1f%%)\n",
	       s->bytes_before_sync, s->bytes ? 100.0 * s->bytes_before_sync / s->bytes : 0.0);
	printf("%12" PRIu64 "  decodes from a sync point, resyncs included (%.1f per sample)\n",
	       s->syncs, (double)s->syncs / n);
	printf("%12" PRIu64 "  samples without a sync point\n", s->walk.nosync);
	printf("%12" PRIu64 "  bytes overlapping the CPU's previous snippet (%.1f%%)\n",
	       s->overlap, s->bytes ? 100.0 * s->overlap / s->bytes : 0.0);
	printf("%12" PRIu64 "  taken branches (%.1f per sample)\n", s->branches,
	       (double)s->branches / n);
	printf("%12" PRIu64 "  trace gaps\n", s->gaps);
	printf("%12" PRIu64 "  decode errors\n", s->walk.errors);
	for (unsigned int e = 1; e < ARRAY_SIZE(s->errors_by_kind); e++) {
		if (s->errors_by_kind[e])
			printf("%12" PRIu64 "    %s\n", s->errors_by_kind[e],
			       auxsample_strerror(-e));
	}
}

/* Intel PT's trace configuration, from AUXTRACE_INFO and the cpuid. */
static int auxsample_walk__auxtrace_info(struct perf_session *session,
					 union perf_event *event)
{
	struct auxsample_walk *w = container_of(session->tool, struct auxsample_walk, tool);
	u64 pmu_type;
	int err = auxsample_config__from_auxtrace_info(&w->config, session, event, &pmu_type);

	if (err == -EOPNOTSUPP)
		pr_err("perf auxsample %s: AUX area data of type %u: only Intel PT is decoded so far\n",
		       w->cmd, event->auxtrace_info.type);
	if (err)
		return err;
	w->have_config = true;
	return 0;
}

/* The symbol at @addr and the offset into it, or NULL. */
static const char *auxsample_script__sym(struct thread *thread, u64 addr, u64 *offset)
{
	struct addr_location al;
	const char *name = NULL;

	addr_location__init(&al);
	if (addr && thread__find_symbol(thread, PERF_RECORD_MISC_USER, addr, &al) && al.sym) {
		name = al.sym->name;
		*offset = map__map_ip(al.map, addr) - al.sym->start;
	}
	addr_location__exit(&al);
	return name;
}

static void auxsample_script__print_addr(struct thread *thread, u64 addr)
{
	const char *name;
	u64 offset;

	if (!addr) {
		printf("%16s", "?");
		return;
	}
	printf("%16" PRIx64, addr);
	name = auxsample_script__sym(thread, addr, &offset);
	if (name)
		printf(" %s+%#" PRIx64, name, offset);
}

static void auxsample_script__print_text(struct auxsample_script *s, struct thread *thread,
					 struct perf_sample *sample, struct evsel *evsel, int nr);

static void json_puts(const char *str)
{
	for (const char *c = str; *c; c++) {
		if (*c == '"' || *c == '\\')
			putchar('\\');
		if ((unsigned char)*c >= ' ')
			putchar(*c);
	}
}

/* A JSON string of the symbol at @addr, or null. */
static void auxsample_script__json_sym(struct thread *thread, u64 addr)
{
	u64 offset;
	const char *name = auxsample_script__sym(thread, addr, &offset);

	if (!name) {
		printf("null");
		return;
	}
	putchar('"');
	json_puts(name);
	printf("+%#" PRIx64 "\"", offset);
}

/* One JSON object per line: the sample, its branches and its call chain. */
static void auxsample_script__print_json(struct auxsample_script *s, struct thread *thread,
					 struct perf_sample *sample, struct evsel *evsel,
					 int nr)
{
	const struct auxsample_branch *br = NULL;
	const u64 *chain = NULL;
	int depth = 0;

	printf("{\"comm\":\"");
	json_puts(thread__comm_str(thread) ?: "");
	printf("\",\"pid\":%d,\"tid\":%d,\"cpu\":%d,\"time\":%" PRIu64 ",\"event\":\"",
	       sample->pid, sample->tid, sample->cpu, sample->time);
	json_puts(evsel__name(evsel));
	printf("\",\"ip\":\"%#" PRIx64 "\",\"sym\":", sample->ip);
	auxsample_script__json_sym(thread, sample->ip);
	printf(",\"sync\":%s,\"branches\":[", nr == -AUXSAMPLE_ERR_NOSYNC ? "false" : "true");
	if (nr != -AUXSAMPLE_ERR_NOSYNC) {
		nr = auxsample_decoder__branches(s->walk.dec, &br);
		depth = auxsample_decoder__callchain(s->walk.dec, &chain);
	} else {
		nr = 0;
	}
	for (int i = 0; i < nr; i++) {
		printf("%s{\"from\":\"%#" PRIx64 "\",\"to\":", i ? "," : "", br[i].from);
		if (br[i].flags & AUXSAMPLE_BRF_TO_UNKNOWN)
			printf("null");
		else
			printf("\"%#" PRIx64 "\"", br[i].to);
		printf(",\"kind\":\"%s\",\"from_sym\":", auxsample_branch_kind__name(br[i].kind));
		auxsample_script__json_sym(thread, br[i].from);
		printf(",\"to_sym\":");
		auxsample_script__json_sym(thread, br[i].to);
		printf("}");
	}
	printf("],\"callchain\":[");
	for (int i = 0; i < depth; i++)
		printf("%s\"%#" PRIx64 "\"", i ? "," : "", chain[i]);
	printf("]}\n");
}

static void auxsample_script__print(struct auxsample_script *s, struct thread *thread,
				    struct perf_sample *sample, struct evsel *evsel, int nr)
{
	if (s->opts->json) {
		auxsample_script__print_json(s, thread, sample, evsel, nr);
		return;
	}
	auxsample_script__print_text(s, thread, sample, evsel, nr);
}

static void auxsample_script__print_text(struct auxsample_script *s, struct thread *thread,
					 struct perf_sample *sample, struct evsel *evsel, int nr)
{
	const struct auxsample_branch *br;
	const u64 *chain;
	int depth;

	printf("%16s %6d [%03d] %" PRIu64 ": %s: ", thread__comm_str(thread), sample->tid,
	       sample->cpu, sample->time, evsel__name(evsel));
	auxsample_script__print_addr(thread, sample->ip);
	printf("\n");
	if (nr == -AUXSAMPLE_ERR_NOSYNC) {
		printf("\tno sync point in the %" PRIu64 " bytes of trace\n", sample->aux_sample.size);
		return;
	}
	nr = auxsample_decoder__branches(s->walk.dec, &br);
	for (int i = 0; i < nr; i++) {
		printf("\tbranch ");
		auxsample_script__print_addr(thread, br[i].from);
		printf(" -> ");
		auxsample_script__print_addr(thread, br[i].to);
		printf(" %s\n", auxsample_branch_kind__name(br[i].kind));
	}
	depth = auxsample_decoder__callchain(s->walk.dec, &chain);
	for (int i = 0; i < depth; i++) {
		printf("\tcaller ");
		auxsample_script__print_addr(thread, chain[i]);
		printf("\n");
	}
}

static int auxsample_walk__decode(struct auxsample_walk *w, struct perf_sample *sample,
				  struct evsel *evsel, struct machine *machine,
				  struct thread *thread)
{
	struct auxsample_stats stats;
	int nr;

	w->dec = auxsample_proc__decoder(&w->proc, &w->config, machine, thread);
	if (!w->dec)
		return -ENOMEM;
	nr = auxsample_decoder__decode(w->dec, sample->aux_sample.data, sample->aux_sample.size,
				       w->depth);
	if (nr == -AUXSAMPLE_ERR_NOSYNC) {
		w->nosync++;
	} else if (nr < 0) {
		pr_err("perf auxsample %s: %s\n", w->cmd, auxsample_strerror(nr));
		return nr;
	}
	auxsample_decoder__stats(w->dec, &stats, sizeof(stats));
	w->errors += stats.errors;
	return w->sample(w, thread, sample, evsel, nr);
}

static int auxsample_walk__process_sample(const struct perf_tool *tool,
					  union perf_event *event __maybe_unused,
					  struct perf_sample *sample, struct evsel *evsel,
					  struct machine *machine)
{
	struct auxsample_walk *w = container_of(tool, struct auxsample_walk, tool);
	struct thread *thread;
	int err = 0;

	if (!sample->aux_sample.size)
		return 0;
	if (!w->have_config) {
		pr_err("perf auxsample %s: AUX samples without AUXTRACE_INFO: a broken perf.data?\n",
		       w->cmd);
		return -EINVAL;
	}
	thread = machine__findnew_thread(machine, sample->pid, sample->tid);
	if (!thread)
		return -ENOMEM;
	w->samples++;
	err = auxsample_walk__decode(w, sample, evsel, machine, thread);
	thread__put(thread);
	return err;
}

/*
 * A file cut short, by a full disk or a copy that did not finish, makes
 * the session fail on the first missing event with little to say why.
 */
static int auxsample_walk__check_size(struct auxsample_walk *w, struct perf_data *data)
{
	struct perf_header *header = &w->session->header;
	u64 end = header->data_offset + header->data_size;

	if (perf_data__is_pipe(data) || !header->data_size || perf_data__size(data) >= end)
		return 0;
	pr_err("perf auxsample %s: %s is truncated: %lu bytes where its header says %" PRIu64 "\n",
	       w->cmd, w->input, perf_data__size(data), end);
	return -EIO;
}

/*
 * Decode every AUX sample of w->input and hand it to w->sample(), then
 * call w->done().  Errors are negative errnos or -AUXSAMPLE_ERR_*, and
 * have been reported.
 */
static int auxsample_walk__run(struct auxsample_walk *w)
{
	struct perf_data data = {
		.path = w->input,
		.mode = PERF_DATA_MODE_READ,
	};
	int err;

	perf_tool__init(&w->tool, /*ordered_events=*/true);
	w->tool.sample = auxsample_walk__process_sample;
	w->tool.mmap = perf_event__process_mmap;
	w->tool.mmap2 = perf_event__process_mmap2;
	w->tool.comm = perf_event__process_comm;
	w->tool.fork = perf_event__process_fork;
	w->tool.exit = perf_event__process_exit;
	w->tool.id_index = perf_event__process_id_index;
	w->tool.auxtrace_info = auxsample_walk__auxtrace_info;

	w->session = perf_session__new(&data, &w->tool);
	if (IS_ERR(w->session))
		return PTR_ERR(w->session);
	err = auxsample_walk__check_size(w, &data);
	if (!err)
		err = symbol__init(&w->session->header.env);
	if (!err)
		err = perf_session__process_events(w->session);
	if (!err && !w->samples) {
		pr_err("perf auxsample %s: %s has no samples with AUX area data; record them with perf record -A\n",
		       w->cmd, w->input);
		err = -ENODATA;
	}
	if (!err && w->done)
		err = w->done(w);
	auxsample_proc__exit(&w->proc);
	perf_session__delete(w->session);
	w->session = NULL;
	return err;
}

static int auxsample_script__sample(struct auxsample_walk *w, struct thread *thread,
				    struct perf_sample *sample, struct evsel *evsel, int nr)
{
	struct auxsample_script *s = container_of(w, struct auxsample_script, walk);
	struct auxsample_stats stats;

	if (s->opts->stat) {
		auxsample_decoder__stats(w->dec, &stats, sizeof(stats));
		s->branches += stats.branches;
		return auxsample_script__account(s, sample);
	}
	s->branches += nr > 0 ? nr : 0;
	auxsample_script__print(s, thread, sample, evsel, nr);
	return 0;
}

static int auxsample_script__done(struct auxsample_walk *w)
{
	struct auxsample_script *s = container_of(w, struct auxsample_script, walk);

	if (s->opts->stat)
		auxsample_script__print_stat(s);
	else
		fprintf(stderr, "[ %" PRIu64 " AUX samples, %" PRIu64 " branches, %" PRIu64 " without a sync point, %" PRIu64 " decode errors ]\n",
			w->samples, s->branches, w->nosync, w->errors);
	return 0;
}

int auxsample_script__run(const struct auxsample_script_opts *opts)
{
	struct auxsample_script s = {
		.walk = {
			.cmd = opts->stat ? "stat" : "script",
			.input = opts->input,
			/* Statistics want the whole snippet decoded: depth 0. */
			.depth = opts->stat ? 0 : opts->depth,
			.sample = auxsample_script__sample,
			.done = auxsample_script__done,
		},
		.opts = opts,
	};
	int err = auxsample_walk__run(&s.walk);

	if (s.prev) {
		for (int i = 0; i < STAT_MAX_CPUS; i++)
			free(s.prev[i].data);
		free(s.prev);
	}
	return err;
}
