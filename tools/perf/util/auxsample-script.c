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
#include "auxsample-etm.h"
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

struct auxsample_script {
	struct perf_tool			tool;
	const struct auxsample_script_opts	*opts;
	struct perf_session			*session;
	struct auxsample_decoder		*dec;	/* proc's, for the sample at hand */
	struct auxsample_proc			proc;
	struct auxsample_config			config;
	bool					have_config;
	u64					samples;
	u64					nosync;
	u64					errors;
	u64					branches;
	/* perf auxsample stat */
	u64					bytes;
	u64					bytes_before_sync;
	u64					syncs;
	u64					overlap;
	u64					gaps;
	u64					errors_by_kind[AUXSAMPLE_ERR_OVERFLOW + 1];
	struct auxsample_prev			*prev;
	struct auxsample_fulltrace		*ft;	/* trace buffers */
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

	auxsample_decoder__stats(s->dec, &stats, sizeof(stats));
	s->bytes += sample->aux_sample.size;
	s->bytes_before_sync += stats.bytes_before_sync;
	s->syncs += stats.syncs;
	s->gaps += stats.gaps;
	nr = auxsample_decoder__errors(s->dec, &errs);
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
	u64 n = s->samples ?: 1;

	printf("%12" PRIu64 "  AUX samples\n", s->samples);
	printf("%12" PRIu64 "  bytes of trace (%" PRIu64 " per sample)\n", s->bytes, s->bytes / n);
	printf("%12" PRIu64 "  bytes before the first sync point, not decodable (%.1f%%)\n",
	       s->bytes_before_sync, s->bytes ? 100.0 * s->bytes_before_sync / s->bytes : 0.0);
	printf("%12" PRIu64 "  decodes from a sync point, resyncs included (%.1f per sample)\n",
	       s->syncs, (double)s->syncs / n);
	printf("%12" PRIu64 "  samples without a sync point\n", s->nosync);
	printf("%12" PRIu64 "  bytes overlapping the CPU's previous snippet (%.1f%%)\n",
	       s->overlap, s->bytes ? 100.0 * s->overlap / s->bytes : 0.0);
	printf("%12" PRIu64 "  taken branches (%.1f per sample)\n", s->branches,
	       (double)s->branches / n);
	printf("%12" PRIu64 "  trace gaps\n", s->gaps);
	printf("%12" PRIu64 "  decode errors\n", s->errors);
	for (unsigned int e = 1; e < ARRAY_SIZE(s->errors_by_kind); e++) {
		if (s->errors_by_kind[e])
			printf("%12" PRIu64 "    %s\n", s->errors_by_kind[e],
			       auxsample_strerror(-e));
	}
}

/* Intel PT's trace configuration, from AUXTRACE_INFO and the cpuid. */
static int auxsample_script__auxtrace_info(struct perf_session *session,
					   union perf_event *event)
{
	struct auxsample_script *s = container_of(session->tool, struct auxsample_script, tool);
	u64 pmu_type;
	int err = auxsample_config__from_auxtrace_info(&s->config, session, event, &pmu_type);

	if (err == -EOPNOTSUPP)
		pr_err("perf auxsample script: AUX area data of type %u: only Intel PT and CoreSight ETMv4/ETE are decoded so far\n",
		       event->auxtrace_info.type);
	if (err)
		return err;
	s->have_config = true;
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
		nr = auxsample_decoder__branches(s->dec, &br);
		depth = auxsample_decoder__callchain(s->dec, &chain);
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
	nr = auxsample_decoder__branches(s->dec, &br);
	for (int i = 0; i < nr; i++) {
		printf("\tbranch ");
		auxsample_script__print_addr(thread, br[i].from);
		printf(" -> ");
		auxsample_script__print_addr(thread, br[i].to);
		printf(" %s\n", auxsample_branch_kind__name(br[i].kind));
	}
	depth = auxsample_decoder__callchain(s->dec, &chain);
	for (int i = 0; i < depth; i++) {
		printf("\tcaller ");
		auxsample_script__print_addr(thread, chain[i]);
		printf("\n");
	}
}

static int auxsample_script__sample(const struct perf_tool *tool,
				    union perf_event *event __maybe_unused,
				    struct perf_sample *sample, struct evsel *evsel,
				    struct machine *machine)
{
	struct auxsample_script *s = container_of(tool, struct auxsample_script, tool);
	struct auxsample_stats stats;
	struct thread *thread;
	int nr;

	if (!sample->aux_sample.size || s->opts->full_trace)
		return 0;
	if (!s->have_config) {
		pr_err("perf auxsample script: AUX samples without AUXTRACE_INFO: a broken perf.data?\n");
		return -EINVAL;
	}
	thread = machine__findnew_thread(machine, sample->pid, sample->tid);
	if (!thread)
		return -ENOMEM;
	s->dec = auxsample_proc__decoder(&s->proc, &s->config, machine, thread);
	if (!s->dec) {
		thread__put(thread);
		return -ENOMEM;
	}
	/* Statistics want the whole snippet decoded: depth 0. */
	nr = auxsample_decoder__decode(s->dec, sample->aux_sample.data, sample->aux_sample.size,
				       s->opts->stat ? 0 : s->opts->depth);
	s->samples++;
	if (nr == -AUXSAMPLE_ERR_NOSYNC) {
		s->nosync++;
	} else if (nr < 0) {
		pr_err("perf auxsample script: %s\n", auxsample_strerror(nr));
		thread__put(thread);
		return nr;
	}
	auxsample_decoder__stats(s->dec, &stats, sizeof(stats));
	s->errors += stats.errors;
	if (s->opts->stat) {
		s->branches += stats.branches;
		thread__put(thread);
		return auxsample_script__account(s, sample);
	}
	s->branches += nr > 0 ? nr : 0;
	auxsample_script__print(s, thread, sample, evsel, nr);
	thread__put(thread);
	return 0;
}

/* Full trace (auxsample-etm.c): the buffers, their format, trace IDs. */
static s64 auxsample_script__auxtrace(struct perf_session *session, union perf_event *event)
{
	struct auxsample_script *s = container_of(session->tool, struct auxsample_script, tool);

	return auxsample_fulltrace__queue(s->ft, session, event);
}

static int auxsample_script__aux(const struct perf_tool *tool, union perf_event *event,
				 struct perf_sample *sample, struct machine *machine)
{
	struct auxsample_script *s = container_of(tool, struct auxsample_script, tool);

	auxsample_fulltrace__aux(s->ft, event, sample);
	return perf_event__process_aux(tool, event, sample, machine);
}

static int auxsample_script__aux_output_hw_id(const struct perf_tool *tool,
					      union perf_event *event,
					      struct perf_sample *sample,
					      struct machine *machine __maybe_unused)
{
	struct auxsample_script *s = container_of(tool, struct auxsample_script, tool);

	return auxsample_fulltrace__hw_id(s->ft, event, sample);
}

static int auxsample_script__init_fulltrace(struct auxsample_script *s)
{
	s->ft = auxsample_fulltrace__new();
	if (!s->ft)
		return -ENOMEM;
	s->tool.auxtrace = auxsample_script__auxtrace;
	s->tool.aux = auxsample_script__aux;
	s->tool.aux_output_hw_id = auxsample_script__aux_output_hw_id;
	return 0;
}

/*
 * Decode the trace buffers when asked to, or when there are no AUX
 * samples to decode but trace (ETM: no kernel gives AUX samples).
 */
static int auxsample_script__fulltrace(struct auxsample_script *s)
{
	if (!s->opts->full_trace && (s->samples || !auxsample_fulltrace__has_trace(s->ft)))
		return 1;
	if (!s->have_config) {
		pr_err("perf auxsample script: %s has no AUXTRACE_INFO: no trace to decode\n",
		       s->opts->input);
		return -ENODATA;
	}
	return auxsample_fulltrace__run(s->ft, s->session, &s->config, s->opts);
}

int auxsample_script__run(const struct auxsample_script_opts *opts)
{
	struct perf_data data = {
		.path = opts->input,
		.mode = PERF_DATA_MODE_READ,
	};
	struct auxsample_script s = { .opts = opts };
	int err;

	perf_tool__init(&s.tool, /*ordered_events=*/true);
	s.tool.sample = auxsample_script__sample;
	s.tool.mmap = perf_event__process_mmap;
	s.tool.mmap2 = perf_event__process_mmap2;
	s.tool.comm = perf_event__process_comm;
	s.tool.fork = perf_event__process_fork;
	s.tool.exit = perf_event__process_exit;
	s.tool.id_index = perf_event__process_id_index;
	s.tool.auxtrace_info = auxsample_script__auxtrace_info;

	err = auxsample_script__init_fulltrace(&s);
	if (err)
		return err;
	s.session = perf_session__new(&data, &s.tool);
	if (IS_ERR(s.session)) {
		auxsample_fulltrace__delete(s.ft);
		return PTR_ERR(s.session);
	}
	err = symbol__init(&s.session->header.env);
	if (!err)
		err = perf_session__process_events(s.session);
	if (!err) {
		err = auxsample_script__fulltrace(&s);
		if (err <= 0)
			goto out_delete;
		err = 0;
	}
	if (!err && !s.samples) {
		pr_err("perf auxsample script: %s has no samples with AUX area data; record them with perf record -A\n",
		       opts->input);
		err = -ENODATA;
	}
	if (!err && opts->stat)
		auxsample_script__print_stat(&s);
	else if (!err)
		fprintf(stderr, "[ %" PRIu64 " AUX samples, %" PRIu64 " branches, %" PRIu64 " without a sync point, %" PRIu64 " decode errors ]\n",
			s.samples, s.branches, s.nosync, s.errors);
out_delete:
	if (s.prev) {
		for (int i = 0; i < STAT_MAX_CPUS; i++)
			free(s.prev[i].data);
		free(s.prev);
	}
	auxsample_proc__exit(&s.proc);
	auxsample_config__exit(&s.config);
	perf_session__delete(s.session);
	/* After the session: it points to the itrace options the queues use. */
	auxsample_fulltrace__delete(s.ft);
	return err;
}
