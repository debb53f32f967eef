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
#include <linux/zalloc.h>
#include <stdlib.h>
#include <unistd.h>
#include <auxsample/auxsample.h>

#include "addr_location.h"
#include "auxsample.h"
#include "auxsample-etm.h"
#include "auxsample-place.h"
#include "auxsample-script.h"
#include "data.h"
#include "data-convert.h"
#include "debug.h"
#include "dso.h"
#include "dump-insn.h"
#include "intel-pt-decoder/intel-pt-insn-decoder.h"
#include "event.h"
#include "evsel.h"
#include "hashmap.h"
#include "header.h"
#include "machine.h"
#include "map.h"
#include "maps.h"
#include "sample.h"
#include "session.h"
#include "strbuf.h"
#include "string2.h"
#include "strlist.h"
#include "symbol.h"
#include "thread.h"
#include "time-utils.h"
#include "tool.h"

#define STAT_MAX_CPUS	4096
/* The most trace a sample beside a full trace gets: 32 PSBs of 2K. */
#define OVERLAP_PROBE	32	/* bytes of a snippet looked for in the previous one */

/* The previous snippet of each CPU, to measure how much they overlap. */
struct auxsample_prev {
	void	*data;
	size_t	size;
};

struct auxsample_walk;

/*
 * One AUX sample of the file, decoded: res->nr is what
 * auxsample_decoder__decode() returned, the number of branches or
 * -AUXSAMPLE_ERR_NOSYNC.  Called in file order, whether decoded inline or
 * by a pool (then @sample is a copy: its scalars and aux_sample hold).
 */
typedef int (*auxsample_walk__sample_fn)(struct auxsample_walk *w, struct thread *thread,
					  struct perf_sample *sample, struct evsel *evsel,
					  const struct auxsample_result *res);

/*
 * The walk that script, stat and report share: every sample of the file
 * that carries AUX area data, decoded by the decoder of its process.
 */
/*
 * Symbols by address: loops show the same few branches in sample after
 * sample, and a lookup through the thread's maps costs more than the
 * decoding.  An entry holds while its process's maps do: any sideband
 * starts a new generation.
 */
#define SYM_CACHE_SIZE	8192	/* a power of two */

struct sym_cache_entry {
	u64			addr;
	/*
	 * With the process: perf may give a thread other maps when it learns
	 * its process, with no sideband, and the freed maps' address may
	 * come back.
	 */
	const struct maps	*maps;
	pid_t			pid;
	u64			generation;	/* 0: empty */
	const char		*name;		/* NULL: no symbol there */
	size_t			name_len;
	u64			offset;
};

struct auxsample_walk {
	struct perf_tool		tool;
	const char			*cmd;	/* "script", ...: for messages */
	const char			*input;
	unsigned int			depth;	/* branches per sample, 0: all */
	struct strlist			*comms;	/* only samples of these, if set */
	auxsample_walk__sample_fn	sample;
	/* after the last event, while the session (its symbols) lives */
	int				(*done)(struct auxsample_walk *w);
	struct perf_session		*session;
	struct auxsample_decoder	*dec;	/* proc's, for the sample at hand */
	struct auxsample_proc		proc;
	/* decoding threads, 0: one per online CPU, 1: none (inline) */
	unsigned int			threads;
	struct auxsample_pool		*pool;
	struct auxsample_config		config;
	bool				have_config;
	struct sym_cache_entry		*sym_cache;
	u64				sym_generation;
	struct strbuf			line;		/* a sample's text */
	size_t				window;	/* bytes before a sample, full trace */
	/* overlapping snippets decoded once, unless ->no_reuse */
	struct auxsample_streams	*streams;
	bool				no_reuse;
	/*
	 * Full trace: the trace buffers (auxsample-etm.c), decoded by
	 * ->fulltrace() when asked to (->full_trace), or when the file has
	 * them and no AUX samples: ETM, which no kernel samples yet.
	 */
	int				(*fulltrace)(struct auxsample_walk *w);
	struct auxsample_fulltrace	*ft;
	bool				full_trace;
	/*
	 * Samples beside a full trace (no AUX data of their own): each is
	 * decoded from the window of trace that leads up to it, unless
	 * ->full_trace asks for the whole trace instead.
	 */
	struct auxsample_windows	*windows;
	/* what decodes the window at hand, if not ->config: ETM's CPU's */
	const struct auxsample_config	*window_config;
	/* the samples are beside a full trace: windows, not AUX samples */
	bool				beside;
	/* samples without a CPU: where their threads ran */
	struct auxsample_place		*place;
	u64				placed;		/* by their thread */
	u64				unplaced;	/* not: they get no trace */
	u64				samples;	/* AUX samples, filtered ones too */
	u64				filtered;	/* left out by ->comms */
	u64				nosync;
	u64				errors;		/* decode errors */
	u64				error_samples;	/* samples with decode errors */
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
	u64					late;
	u64					errors_by_kind[AUXSAMPLE_ERR_END -
								       AUXSAMPLE_ERR_BASE];
	struct auxsample_prev			*prev;
};

/*
 * How many bytes at the start of @cur the previous snippet of the same CPU
 * ended with: consecutive snippets of an overwrite-mode buffer share most
 * of their bytes at high sample rates.  The kernel pads snippets with
 * zeros to 8 bytes, so the end of the previous one may not match: the
 * overlap is what @cur has in common with @prev from where @prev first
 * holds @cur's first OVERLAP_PROBE bytes.  One memmem() and one compare:
 * linear in the sizes, whatever the bytes.
 *
 * Not upstream's intel_pt_find_overlap(): that one is Intel PT's only
 * (it cuts at PSBs and may compare TSCs), answers where the new data of
 * the second buffer starts rather than how much the two share, and stat
 * counts the overlap of ETM snippets too.
 */
size_t auxsample__overlap(const void *prev, size_t prev_size, const void *cur, size_t size)
{
	const u8 *p, *c = cur;
	size_t n, i;

	if (!prev || !cur || size < OVERLAP_PROBE || prev_size < OVERLAP_PROBE)
		return 0;
	p = memmem(prev, prev_size, cur, OVERLAP_PROBE);
	if (!p)
		return 0;
	n = min_t(size_t, prev_size - (size_t)(p - (const u8 *)prev), size);
	for (i = OVERLAP_PROBE; i < n && p[i] == c[i]; i++)
		;
	return i;
}

static int auxsample_script__account(struct auxsample_script *s, struct perf_sample *sample,
				     const struct auxsample_result *res)
{
	struct auxsample_prev *prev;

	s->bytes += sample->aux_sample.size;
	s->bytes_before_sync += res->stats->bytes_before_sync;
	s->syncs += res->stats->syncs;
	s->gaps += res->stats->gaps;
	s->late += res->stats->late;
	for (int i = 0; i < res->nr_errors; i++)
		s->errors_by_kind[auxsample__error_index(res->errors[i].error)]++;
	if (sample->cpu >= STAT_MAX_CPUS)
		return 0;
	if (!s->prev) {
		s->prev = calloc(STAT_MAX_CPUS, sizeof(*s->prev));
		if (!s->prev)
			return -ENOMEM;
	}
	prev = &s->prev[sample->cpu];
	s->overlap += auxsample__overlap(prev->data, prev->size, sample->aux_sample.data,
					 sample->aux_sample.size);
	free(prev->data);
	prev->data = memdup(sample->aux_sample.data, sample->aux_sample.size);
	prev->size = prev->data ? sample->aux_sample.size : 0;
	return 0;
}

/* What the decoded samples are, for the summaries. */
static const char *auxsample_walk__what(const struct auxsample_walk *w)
{
	return w->beside ? "samples beside a full trace" : "AUX samples";
}

static void auxsample_script__print_stat(struct auxsample_script *s)
{
	u64 n = s->walk.samples ?: 1;

	printf("%12" PRIu64 "  %s\n", s->walk.samples, auxsample_walk__what(&s->walk));
	if (s->walk.placed)
		printf("%12" PRIu64 "  samples without a CPU, placed by their thread\n",
		       s->walk.placed);
	if (s->walk.unplaced)
		printf("%12" PRIu64 "  samples without a CPU, not placed: no trace\n",
		       s->walk.unplaced);
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
	if (s->late)
		printf("%12" PRIu64 "  branches after the sample point (perf's own, left out)\n",
		       s->late);
	printf("%12" PRIu64 "  decode errors\n", s->walk.errors);
	for (unsigned int e = 1; e < ARRAY_SIZE(s->errors_by_kind); e++) {
		if (s->errors_by_kind[e])
			printf("%12" PRIu64 "    %s\n", s->errors_by_kind[e],
			       auxsample_strerror(-(int)(AUXSAMPLE_ERR_BASE + e)));
	}
}

/* A pipe's header features; the last one only says that they are all there. */
static int auxsample_walk__feature(struct perf_session *session, union perf_event *event)
{
	if (event->feat.feat_id >= HEADER_LAST_FEATURE)
		return 0;
	return perf_event__process_feature(session, event);
}

/* Intel PT's trace configuration, from AUXTRACE_INFO and the cpuid. */
static int auxsample_walk__auxtrace_info(struct perf_session *session,
					 union perf_event *event)
{
	struct auxsample_walk *w = container_of(session->tool, struct auxsample_walk, tool);
	u64 pmu_type;
	int err = auxsample_config__from_auxtrace_info(&w->config, session, event, &pmu_type);

	if (err == -EOPNOTSUPP)
		pr_err("perf auxsample %s: AUX area data of type %u: only Intel PT and CoreSight ETMv4/ETE are decoded so far\n",
		       w->cmd, event->auxtrace_info.type);
	if (err)
		return err;
	w->have_config = true;
	if (w->windows)
		auxsample_windows__time_conv(w->windows, event);
	return 0;
}

/* Kernel-traced snippets have kernel branches: their symbols are the kernel's. */
static u8 auxsample_script__cpumode(struct thread *thread, u64 addr)
{
	struct machine *machine = maps__machine(thread__maps(thread));

	return machine && machine__kernel_ip(machine, addr) ? PERF_RECORD_MISC_KERNEL :
							       PERF_RECORD_MISC_USER;
}

/* The symbol at @addr and the offset into it, or NULL. */
static const char *auxsample_script__sym(struct thread *thread, u64 addr, u64 *offset)
{
	struct addr_location al;
	const char *name = NULL;

	addr_location__init(&al);
	if (addr && thread__find_symbol(thread, auxsample_script__cpumode(thread, addr), addr, &al) &&
	    al.sym) {
		name = al.sym->name;
		*offset = map__map_ip(al.map, addr) - al.sym->start;
	}
	addr_location__exit(&al);
	return name;
}

/*
 * auxsample_script__sym(), remembered (the names live as long as the
 * session), or in @tmp when there is no memory for the cache.
 */
static const struct sym_cache_entry *auxsample_walk__sym_entry(struct auxsample_walk *w,
								struct thread *thread, u64 addr,
								struct sym_cache_entry *tmp)
{
	const struct maps *maps = thread__maps(thread);
	pid_t pid = thread__pid(thread);
	struct sym_cache_entry *e = tmp;

	if (!w->sym_cache)
		w->sym_cache = calloc(SYM_CACHE_SIZE, sizeof(*w->sym_cache));
	if (w->sym_cache) {
		e = &w->sym_cache[(addr ^ (addr >> 12)) & (SYM_CACHE_SIZE - 1)];
		if (e->generation == w->sym_generation + 1 && e->addr == addr &&
		    e->maps == maps && e->pid == pid)
			return e;
	}
	e->addr = addr;
	e->maps = maps;
	e->pid = pid;
	e->generation = w->sym_generation + 1;
	e->name = auxsample_script__sym(thread, addr, &e->offset);
	e->name_len = e->name ? strlen(e->name) : 0;
	return e;
}

/*
 * "%16" PRIx64 " %s+%#" PRIx64 of the address and its symbol, at @p, by
 * hand: the branch lines are most of the output, and printf was most of
 * its cost.  @p has room for ADDR_TEXT_MAX plus the name.
 */
#define ADDR_TEXT_MAX	(16 + 2 + 1 + 18)

static char *addr_text(char *p, const struct sym_cache_entry *e, u64 addr)
{
	static const char digits[] = "0123456789abcdef";
	u64 off;
	int n;

	if (!addr) {
		memcpy(p, "               ?", 16);
		return p + 16;
	}
	for (n = 15; n >= 0; n--, addr >>= 4)
		p[n] = addr || n == 15 ? digits[addr & 15] : ' ';
	p += 16;
	if (!e->name)
		return p;
	*p++ = ' ';
	memcpy(p, e->name, e->name_len);
	p += e->name_len;
	*p++ = '+';
	off = e->offset;
	if (!off) {
		*p++ = '0';
		return p;
	}
	*p++ = '0';
	*p++ = 'x';
	n = (67 - __builtin_clzll(off)) / 4;	/* digits */
	for (int i = n - 1; i >= 0; i--, off >>= 4)
		p[i] = digits[off & 15];
	return p + n;
}

/* One line of @prefix, the addresses and their symbols, and @suffix. */
static int auxsample_script__add_line(struct auxsample_walk *w, struct strbuf *sb,
				      struct thread *thread, const char *prefix,
				      u64 from, const u64 *to, const char *suffix)
{
	struct sym_cache_entry tmp_from, tmp_to;
	const struct sym_cache_entry *ef = auxsample_walk__sym_entry(w, thread, from, &tmp_from);
	size_t plen = strlen(prefix), slen = strlen(suffix);
	size_t max = plen + ADDR_TEXT_MAX + ef->name_len + slen + 1;
	struct sym_cache_entry et;
	char *p;
	int err;

	/* The cache may put both in one slot. */
	if (to) {
		et = *auxsample_walk__sym_entry(w, thread, *to, &tmp_to);
		ef = auxsample_walk__sym_entry(w, thread, from, &tmp_from);
		max += 4 + ADDR_TEXT_MAX + et.name_len;
	}
	err = strbuf_grow(sb, max);
	if (err)
		return err;
	p = sb->buf + sb->len;
	memcpy(p, prefix, plen);
	p = addr_text(p + plen, ef, from);
	if (to) {
		memcpy(p, " -> ", 4);
		p = addr_text(p + 4, &et, *to);
	}
	memcpy(p, suffix, slen);
	return strbuf_setlen(sb, p + slen - sb->buf);
}

static void auxsample_script__print_text(struct auxsample_walk *w, struct thread *thread,
					 struct perf_sample *sample, struct evsel *evsel,
					 const struct auxsample_result *res);

/* "name+0x<off>" as one JSON string, escaped by perf's JSON writer. */
static void json_sym(const char *name, u64 off, bool with_off)
{
	char *str = NULL;

	if (!with_off || asprintf(&str, "%s+0x%" PRIx64, name, off) < 0) {
		output_json_string(stdout, name);
		return;
	}
	output_json_string(stdout, str);
	free(str);
}

/*
 * "<key>sym":"symbol+offset","<key>dso":"file" of @addr, as perf script's
 * sym, symoff and dso fields give them, each null where unknown.  Looked
 * up here, not in the symbol cache: a dso's name lives only as long as
 * the dso.
 */
static void auxsample_script__json_where(struct thread *thread, const char *key, u64 addr)
{
	struct addr_location al;

	addr_location__init(&al);
	if (addr)
		thread__find_symbol(thread, auxsample_script__cpumode(thread, addr), addr, &al);
	printf("\"%ssym\":", key);
	if (al.sym)
		json_sym(al.sym->name, map__map_ip(al.map, addr) - al.sym->start, true);
	else
		printf("null");
	printf(",\"%sdso\":", key);
	if (al.map && map__dso(al.map))
		output_json_string(stdout, dso__long_name(map__dso(al.map)));
	else
		printf("null");
	addr_location__exit(&al);
}

/*
 * One JSON object per line: the sample, its branches and its call chain,
 * with what perf script shows of them: symbols, dsos, and the time as
 * seconds.microseconds ("time") besides the nanoseconds ("timestamp", as
 * perf data convert --to-json gives them).
 */
static void auxsample_script__print_json(struct auxsample_walk *w __maybe_unused,
					 struct thread *thread,
					 struct perf_sample *sample, struct evsel *evsel,
					 const struct auxsample_result *res)
{
	const struct auxsample_branch *br = res->branches;
	const u64 *chain = res->callchain;
	int nr = res->nr, depth = 0;
	char time[32];

	timestamp__scnprintf_usec(sample->time, time, sizeof(time));
	printf("{\"comm\":");
	output_json_string(stdout, auxsample_thread__comm_str_at(thread, sample->time) ?: "");
	printf(",\"pid\":%d,\"tid\":%d,\"cpu\":%d,\"time\":\"%s\",\"timestamp\":%" PRIu64
	       ",\"event\":", sample->pid, sample->tid, sample->cpu, time, sample->time);
	output_json_string(stdout, evsel__name(evsel));
	printf(",\"ip\":\"%#" PRIx64 "\",", sample->ip);
	auxsample_script__json_where(thread, "", sample->ip);
	printf(",\"sync\":%s,\"branches\":[", nr == -AUXSAMPLE_ERR_NOSYNC ? "false" : "true");
	if (nr != -AUXSAMPLE_ERR_NOSYNC) {
		nr = res->nr_branches;
		depth = res->depth;
	} else {
		nr = 0;
	}
	for (int i = 0; i < nr; i++) {
		bool to_known = !(br[i].flags & AUXSAMPLE_BRF_TO_UNKNOWN);

		printf("%s{\"from\":\"%#" PRIx64 "\",\"to\":", i ? "," : "", br[i].from);
		if (to_known)
			printf("\"%#" PRIx64 "\"", br[i].to);
		else
			printf("null");
		printf(",\"kind\":\"%s\",", auxsample_branch_kind__name(br[i].kind));
		auxsample_script__json_where(thread, "from_", br[i].from);
		putchar(',');
		auxsample_script__json_where(thread, "to_", to_known ? br[i].to : 0);
		/* Intel PT with CYC packets: LBR's cycles since the branch before. */
		if (br[i].cycles)
			printf(",\"cycles\":%u", br[i].cycles);
		printf("}");
	}
	printf("],\"callchain\":[");
	for (int i = 0; i < depth; i++) {
		printf("%s{\"ip\":\"%#" PRIx64 "\",", i ? "," : "", chain[i]);
		auxsample_script__json_where(thread, "", chain[i]);
		putchar('}');
	}
	printf("]}\n");
}

static void auxsample_script__print(struct auxsample_script *s, struct thread *thread,
				    struct perf_sample *sample, struct evsel *evsel,
				    const struct auxsample_result *res)
{
	if (s->opts->json) {
		auxsample_script__print_json(&s->walk, thread, sample, evsel, res);
		return;
	}
	auxsample_script__print_text(&s->walk, thread, sample, evsel, res);
}

static void auxsample_script__print_text(struct auxsample_walk *w, struct thread *thread,
					 struct perf_sample *sample, struct evsel *evsel,
					 const struct auxsample_result *res)
{
	static const char * const branch_suffix[] = {
		[0]			= " unknown\n",
		[AUXSAMPLE_BR_COND]	= " cond\n",
		[AUXSAMPLE_BR_JUMP]	= " jump\n",
		[AUXSAMPLE_BR_IND_JUMP]	= " ind_jump\n",
		[AUXSAMPLE_BR_CALL]	= " call\n",
		[AUXSAMPLE_BR_IND_CALL]	= " ind_call\n",
		[AUXSAMPLE_BR_RET]	= " ret\n",
		[AUXSAMPLE_BR_FAR]	= " far\n",
		[AUXSAMPLE_BR_INTR]	= " intr\n",
		[AUXSAMPLE_BR_GAP]	= " gap\n",
	};
	const struct auxsample_branch *br = res->branches;
	const u64 *chain = res->callchain;
	struct strbuf *sb = &w->line;
	int err;

	strbuf_setlen(sb, 0);
	err = strbuf_addf(sb, "%16s %6d [%03d] %" PRIu64 ": %s: ",
			  auxsample_thread__comm_str_at(thread, sample->time),
			  sample->tid, sample->cpu, sample->time, evsel__name(evsel)) ?:
	      auxsample_script__add_line(w, sb, thread, "", sample->ip, NULL, "\n");
	if (!err && res->nr == -AUXSAMPLE_ERR_NOSYNC)
		err = strbuf_addf(sb, "\tno sync point in the %" PRIu64 " bytes of trace\n",
				  sample->aux_sample.size);
	for (int i = 0; !err && res->nr != -AUXSAMPLE_ERR_NOSYNC && i < res->nr_branches; i++) {
		unsigned int kind = br[i].kind < ARRAY_SIZE(branch_suffix) ? br[i].kind : 0;
		u64 to = br[i].to;

		err = auxsample_script__add_line(w, sb, thread, "\tbranch ", br[i].from, &to,
						 branch_suffix[kind]);
	}
	for (int i = 0; !err && res->nr != -AUXSAMPLE_ERR_NOSYNC && i < res->depth; i++)
		err = auxsample_script__add_line(w, sb, thread, "\tcaller ", chain[i], NULL, "\n");
	/* Out of memory: what fits, rather than nothing. */
	fwrite_unlocked(sb->buf, 1, sb->len, stdout);
}

static bool auxsample_walk__wanted(struct auxsample_walk *w, struct thread *thread,
				   const struct perf_sample *sample)
{
	const char *comm;

	if (!w->comms)
		return true;
	comm = auxsample_thread__comm_str_at(thread, sample->time);
	return comm && strlist__has_entry(w->comms, comm);
}

/* A decoded sample, in file order: counted, then handed to w->sample(). */
static int auxsample_walk__deliver(void *arg, struct thread *thread, struct perf_sample *sample,
				   struct evsel *evsel, const struct auxsample_result *res,
				   union perf_event *event __maybe_unused)
{
	struct auxsample_walk *w = arg;

	if (res->nr == -AUXSAMPLE_ERR_NOSYNC) {
		w->nosync++;
	} else if (res->nr < 0) {
		char buf[STRERR_BUFSIZE];

		pr_err("perf auxsample %s: %s\n", w->cmd,
		       auxsample__strerror(res->nr, buf, sizeof(buf)));
		/* perf's session takes -errno only. */
		return auxsample__error_index(res->nr) ? -EINVAL : res->nr;
	}
	w->errors += res->stats->errors;
	if (res->stats->errors)
		w->error_samples++;
	return w->sample(w, thread, sample, evsel, res);
}

/* A sample's results from its stream, delivered at once. */
struct walk_stream_sample {
	struct auxsample_walk	*w;
	struct thread		*thread;
	struct perf_sample	*sample;
	struct evsel		*evsel;
};

static int auxsample_walk__stream_deliver(void *arg, const struct auxsample_result *res)
{
	struct walk_stream_sample *ws = arg;

	return auxsample_walk__deliver(ws->w, ws->thread, ws->sample, ws->evsel, res, NULL);
}

/* A claim, in this thread: 0 when delivered, or AUXSAMPLE_STREAM_ALONE. */
static int auxsample_walk__decode_claim(struct auxsample_walk *w,
					const struct auxsample_stream_job *job,
					struct perf_sample *sample, struct evsel *evsel,
					struct machine *machine, struct thread *thread,
					struct auxsample_image *image)
{
	struct walk_stream_sample ws = { w, thread, sample, evsel };
	struct auxsample_stream_ctx ctx = {
		.machine	= machine,
		.thread		= thread,
		.image		= image,
		.depth		= w->depth,
		.sample_ip	= sample->ip,
		.fn		= auxsample_walk__stream_deliver,
		.arg		= &ws,
	};

	return auxsample_stream_job__decode(job, &w->config, &ctx);
}

static int auxsample_walk__decode_stream(struct auxsample_walk *w, struct perf_sample *sample,
					 struct evsel *evsel, struct machine *machine,
					 struct thread *thread)
{
	struct auxsample_stream_job job;
	struct auxsample_image *image;

	if (!auxsample_streams__claim(w->streams, sample, &job))
		return AUXSAMPLE_STREAM_ALONE;
	image = auxsample_proc__image(&w->proc, machine, thread);
	if (!image)
		return -ENOMEM;
	return auxsample_walk__decode_claim(w, &job, sample, evsel, machine, thread, image);
}

static int auxsample_walk__decode(struct auxsample_walk *w, struct perf_sample *sample,
				  struct evsel *evsel, struct machine *machine,
				  struct thread *thread)
{
	struct auxsample_result res;
	struct auxsample_stats stats;
	int nr;

	if (w->streams) {
		nr = auxsample_walk__decode_stream(w, sample, evsel, machine, thread);
		if (nr != AUXSAMPLE_STREAM_ALONE)
			return nr;
	}
	w->dec = auxsample_proc__decoder(&w->proc, w->window_config ?: &w->config, machine,
					 thread);
	if (!w->dec)
		return -ENOMEM;
	/* ETM: the trace of the sample's thread only. */
	auxsample_decoder__set_thread(w->dec, sample->tid);
	auxsample_decoder__set_sample_ip(w->dec, sample->ip);
	nr = auxsample_decoder__decode(w->dec, sample->aux_sample.data, sample->aux_sample.size,
				       w->depth);
	auxsample_result__init(&res, w->dec, nr, &stats);
	return auxsample_walk__deliver(w, thread, sample, evsel, &res, NULL);
}

/*
 * The threads to decode with: w->threads, or one per online CPU; Intel
 * PT only (OpenCSD keeps global state: ETM decodes inline).
 */
static unsigned int auxsample_walk__nr_threads(struct auxsample_walk *w)
{
	long cpus;

	if (w->config.type != AUXSAMPLE_TRACE_INTEL_PT)
		return 1;
	if (w->threads)
		return min_t(unsigned int, w->threads, AUXSAMPLE_POOL_JOBS);
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return cpus > 1 ? min_t(long, cpus, AUXSAMPLE_POOL_JOBS) : 1;
}

/*
 * At the first AUX sample, when the trace configuration is known; without
 * the threads, the samples are decoded inline, as with -j 1.
 */
static void auxsample_walk__start_pool(struct auxsample_walk *w)
{
	unsigned int nr = auxsample_walk__nr_threads(w);

	if (nr <= 1)
		return;
	w->pool = auxsample_pool__new(&w->config, nr, AUXSAMPLE_POOL_JOBS,
				      auxsample_walk__deliver, w);
	if (!w->pool)
		pr_warning("perf auxsample %s: decoding without threads\n", w->cmd);
}

/* The sample's snippet to the pool, which hands it to w->sample() in order. */
static int auxsample_walk__submit(struct auxsample_walk *w, struct perf_sample *sample,
				  struct evsel *evsel, struct machine *machine)
{
	struct auxsample_stream_job stream;
	struct auxsample_image *image = NULL;
	struct thread *thread;
	bool wanted, in_stream = false;
	int err;

	auxsample_pool__lock(w->pool);
	thread = machine__findnew_thread(machine, sample->pid, sample->tid);
	wanted = thread && auxsample_walk__wanted(w, thread, sample);
	if (wanted)
		image = auxsample_proc__image(&w->proc, machine, thread);
	auxsample_pool__unlock(w->pool);
	if (image && w->streams)
		in_stream = auxsample_streams__claim(w->streams, sample, &stream);
	if (!thread)
		return -ENOMEM;
	w->samples++;
	if (!wanted) {
		w->filtered++;
		err = 0;
	} else if (!image) {
		err = -ENOMEM;
	} else if (in_stream) {
		/*
		 * A stream's samples cost little each, less than the two
		 * thread switches of a job: decoded and delivered here, after
		 * the jobs before them.
		 */
		err = auxsample_pool__flush(w->pool);
		auxsample_pool__lock(w->pool);
		if (!err)
			err = auxsample_walk__decode_claim(w, &stream, sample, evsel, machine,
							   thread, image);
		auxsample_pool__unlock(w->pool);
		if (err == AUXSAMPLE_STREAM_ALONE)
			err = auxsample_pool__submit(w->pool, machine, thread, image, NULL,
						     sample, evsel, w->depth);
	} else {
		err = auxsample_pool__submit(w->pool, machine, thread, image, NULL, sample,
					     evsel, w->depth);
	}
	auxsample_pool__lock(w->pool);
	thread__put(thread);
	auxsample_pool__unlock(w->pool);
	return err;
}

/*
 * A sample beside a full trace, kept for its window, in its CPU's trace:
 * a sample without a CPU goes where the sideband says its thread ran.
 */
static int auxsample_walk__add_window(struct auxsample_walk *w, struct perf_sample *sample,
				      struct evsel *evsel, struct machine *machine)
{
	struct perf_sample placed = *sample;
	struct thread *thread;
	int err, cpu;

	if (!auxsample_place__has_cpu(evsel)) {
		cpu = auxsample_place__cpu(w->place, sample);
		if (cpu >= 0) {
			placed.cpu = cpu;
			w->placed++;
		} else {
			w->unplaced++;
		}
	}
	thread = machine__findnew_thread(machine, sample->pid, sample->tid);
	if (!thread)
		return -ENOMEM;
	err = auxsample_windows__add(w->windows, &placed, evsel, thread);
	thread__put(thread);
	return err;
}

static int auxsample_walk__process_sample(const struct perf_tool *tool,
					  union perf_event *event __maybe_unused,
					  struct perf_sample *sample, struct evsel *evsel,
					  struct machine *machine)
{
	struct auxsample_walk *w = container_of(tool, struct auxsample_walk, tool);
	struct thread *thread;
	int err = 0;

	/* Kept for windows. */
	if (!sample->aux_sample.size && w->windows && !w->full_trace && w->have_config)
		return auxsample_walk__add_window(w, sample, evsel, machine);
	if (!sample->aux_sample.size || w->full_trace)
		return 0;
	if (!w->have_config) {
		pr_err("perf auxsample %s: AUX samples without AUXTRACE_INFO: a broken perf.data?\n",
		       w->cmd);
		return -EINVAL;
	}
	if (!w->samples) {
		auxsample_walk__start_pool(w);
		if (!w->no_reuse && w->config.type == AUXSAMPLE_TRACE_INTEL_PT)
			w->streams = auxsample_streams__new(w->session);
	}
	if (w->pool)
		return auxsample_walk__submit(w, sample, evsel, machine);
	thread = machine__findnew_thread(machine, sample->pid, sample->tid);
	if (!thread)
		return -ENOMEM;
	w->samples++;
	if (auxsample_walk__wanted(w, thread, sample))
		err = auxsample_walk__decode(w, sample, evsel, machine, thread);
	else
		w->filtered++;
	thread__put(thread);
	return err;
}

/*
 * Sideband changes a process's maps, its threads or their comm: decoding
 * and w->sample() must see them as they were at each sample, so the
 * samples of the process still in the pool are delivered before it.
 */
static int auxsample_walk__sideband(const struct perf_tool *tool, union perf_event *event,
				    struct perf_sample *sample, struct machine *machine,
				    pid_t pid, event_op process)
{
	struct auxsample_walk *w = container_of(tool, struct auxsample_walk, tool);
	int err = auxsample_pool__barrier(w->pool, pid);

	if (err)
		return err;
	auxsample_pool__lock(w->pool);
	err = process(tool, event, sample, machine);
	w->sym_generation++;
	auxsample_pool__unlock(w->pool);
	return err;
}

static int auxsample_walk__mmap(const struct perf_tool *tool, union perf_event *event,
				struct perf_sample *sample, struct machine *machine)
{
	return auxsample_walk__sideband(tool, event, sample, machine, event->mmap.pid,
					perf_event__process_mmap);
}

static int auxsample_walk__mmap2(const struct perf_tool *tool, union perf_event *event,
				 struct perf_sample *sample, struct machine *machine)
{
	return auxsample_walk__sideband(tool, event, sample, machine, event->mmap2.pid,
					perf_event__process_mmap2);
}

static int auxsample_walk__comm(const struct perf_tool *tool, union perf_event *event,
				struct perf_sample *sample, struct machine *machine)
{
	return auxsample_walk__sideband(tool, event, sample, machine, event->comm.pid,
					perf_event__process_comm);
}

/* Fork and exit: of the parent's process too, a thread of it. */
static int auxsample_walk__fork(const struct perf_tool *tool, union perf_event *event,
				struct perf_sample *sample, struct machine *machine)
{
	return auxsample_walk__sideband(tool, event, sample, machine, event->fork.ppid,
					perf_event__process_fork);
}

static int auxsample_walk__exit(const struct perf_tool *tool, union perf_event *event,
				struct perf_sample *sample, struct machine *machine)
{
	return auxsample_walk__sideband(tool, event, sample, machine, event->fork.pid,
					perf_event__process_exit);
}

/* Where threads run, for samples without a CPU beside a full trace. */
static int auxsample_walk__itrace_start(const struct perf_tool *tool, union perf_event *event,
					struct perf_sample *sample, struct machine *machine)
{
	struct auxsample_walk *w = container_of(tool, struct auxsample_walk, tool);

	return auxsample_place__event(w->place, event, sample) ?:
	       perf_event__process_itrace_start(tool, event, sample, machine);
}

static int auxsample_walk__switch(const struct perf_tool *tool, union perf_event *event,
				  struct perf_sample *sample, struct machine *machine)
{
	struct auxsample_walk *w = container_of(tool, struct auxsample_walk, tool);

	return auxsample_place__event(w->place, event, sample) ?:
	       perf_event__process_switch(tool, event, sample, machine);
}

/*
 * A file cut short, by a full disk or a copy that did not finish, makes
 * the session fail on the first missing event with little to say why.
 */

/* Full trace (auxsample-etm.c): the buffers, their format, trace IDs. */
static s64 auxsample_walk__auxtrace(struct perf_session *session, union perf_event *event)
{
	struct auxsample_walk *w = container_of(session->tool, struct auxsample_walk, tool);

	return auxsample_fulltrace__queue(w->ft, session, event);
}

static int auxsample_walk__aux(const struct perf_tool *tool, union perf_event *event,
			       struct perf_sample *sample, struct machine *machine)
{
	struct auxsample_walk *w = container_of(tool, struct auxsample_walk, tool);

	auxsample_fulltrace__aux(w->ft, event, sample);
	return perf_event__process_aux(tool, event, sample, machine);
}

static int auxsample_walk__aux_output_hw_id(const struct perf_tool *tool,
					    union perf_event *event,
					    struct perf_sample *sample,
					    struct machine *machine __maybe_unused)
{
	struct auxsample_walk *w = container_of(tool, struct auxsample_walk, tool);

	return auxsample_fulltrace__hw_id(w->ft, event, sample);
}

static int auxsample_walk__init_fulltrace(struct auxsample_walk *w)
{
	w->ft = auxsample_fulltrace__new();
	w->windows = auxsample_windows__new(w->window);
	w->place = auxsample_place__new();
	if (!w->ft || !w->windows || !w->place)
		return -ENOMEM;
	w->tool.auxtrace = auxsample_walk__auxtrace;
	w->tool.aux = auxsample_walk__aux;
	w->tool.aux_output_hw_id = auxsample_walk__aux_output_hw_id;
	w->tool.itrace_start = auxsample_walk__itrace_start;
	w->tool.context_switch = auxsample_walk__switch;
	return 0;
}

static void auxsample_walk__exit_fulltrace(struct auxsample_walk *w)
{
	auxsample_fulltrace__delete(w->ft);
	w->ft = NULL;
	auxsample_windows__delete(w->windows);
	w->windows = NULL;
	auxsample_place__delete(w->place);
	w->place = NULL;
}

/* A sample beside the trace, with its window as its AUX data. */
static int auxsample_walk__window(struct perf_sample *sample, struct evsel *evsel,
				  struct thread *thread, const struct auxsample_config *config,
				  void *context)
{
	struct auxsample_walk *w = context;

	w->samples++;
	if (!auxsample_walk__wanted(w, thread, sample)) {
		w->filtered++;
		return 0;
	}
	w->window_config = config;
	return auxsample_walk__decode(w, sample, evsel, &w->session->machines.host, thread);
}

/*
 * Full trace (Intel PT, CoreSight ETM) with samples beside it and no AUX
 * samples: each sample with its window.  1: there are none.
 */
static int auxsample_walk__windows(struct auxsample_walk *w)
{
	const struct auxsample_window_stats *st;
	int err;

	if (w->full_trace || w->samples || !w->have_config ||
	    !auxsample_windows__nr_samples(w->windows) ||
	    !auxsample_fulltrace__has_trace(w->ft))
		return 1;
	w->beside = true;
	err = auxsample_windows__run(w->windows, w->ft, w->session, auxsample_walk__window, w);
	w->window_config = NULL;
	st = auxsample_windows__stats(w->windows);
	pr_debug("windows: %" PRIu64 " at the sample's stop, %" PRIu64 " by time, %" PRIu64 " bad packets\n",
		 st->at_stop, st->by_time, st->bad_packets);
	if (!err) {
		char who[32];

		snprintf(who, sizeof(who), "perf auxsample %s: ", w->cmd);
		auxsample_place__warn_unplaced(who, w->unplaced);
	}
	return err;
}

/*
 * The trace buffers, when asked to decode them, or when there are no AUX
 * samples to decode but trace.  1: not a full-trace decode.
 */
static int auxsample_walk__fulltrace(struct auxsample_walk *w)
{
	int err = auxsample_walk__windows(w);

	if (err <= 0)
		return err ?: 1;
	if (!w->fulltrace ||
	    (!w->full_trace && (w->samples || !auxsample_fulltrace__has_trace(w->ft))))
		return 1;
	if (!w->have_config) {
		pr_err("perf auxsample %s: %s has no AUXTRACE_INFO: no trace to decode\n",
		       w->cmd, w->input);
		return -ENODATA;
	}
	return w->fulltrace(w);
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
	char who[32];
	int err;

	perf_tool__init(&w->tool, /*ordered_events=*/true);
	w->tool.sample = auxsample_walk__process_sample;
	w->tool.mmap = auxsample_walk__mmap;
	w->tool.mmap2 = auxsample_walk__mmap2;
	w->tool.comm = auxsample_walk__comm;
	w->tool.fork = auxsample_walk__fork;
	w->tool.exit = auxsample_walk__exit;
	w->tool.id_index = perf_event__process_id_index;
	/* A pipe: the events' attrs and the header's features come as events. */
	w->tool.attr = perf_event__process_attr;
	w->tool.event_update = perf_event__process_event_update;
	w->tool.feature = auxsample_walk__feature;
	w->tool.tracing_data = perf_event__process_tracing_data;
	w->tool.build_id = perf_event__process_build_id;
	w->tool.auxtrace_info = auxsample_walk__auxtrace_info;
	/* Trace buffers: for samples beside them, or decoded whole. */
	err = auxsample_walk__init_fulltrace(w);
	if (err) {
		auxsample_walk__exit_fulltrace(w);
		return err;
	}

	w->session = perf_session__new(&data, &w->tool);
	if (IS_ERR(w->session)) {
		auxsample_walk__exit_fulltrace(w);
		return PTR_ERR(w->session);
	}
	snprintf(who, sizeof(who), "perf auxsample %s: ", w->cmd);
	err = auxsample_session__check_size(w->session, who);
	if (!err)
		err = symbol__init(&w->session->header.env);
	if (!err)
		err = perf_session__process_events(w->session);
	if (!err)
		err = auxsample_pool__flush(w->pool);
	if (!err) {
		err = auxsample_walk__fulltrace(w);
		if (err <= 0)
			goto out_delete;
		err = 0;
	}
	if (!err && !w->samples) {
		pr_err("perf auxsample %s: %s has no samples with AUX area data; record them with perf record -A\n",
		       w->cmd, w->input);
		err = -ENODATA;
	}
	if (!err && w->done)
		err = w->done(w);
out_delete:
	/* Its jobs hold threads and images: before the session goes. */
	auxsample_pool__delete(w->pool);
	w->pool = NULL;
	auxsample_streams__delete(w->streams);
	w->streams = NULL;
	zfree(&w->sym_cache);
	strbuf_release(&w->line);
	auxsample_proc__exit(&w->proc);
	auxsample_config__exit(&w->config);
	perf_session__delete(w->session);
	w->session = NULL;
	/* After the session: it points to the itrace options the queues use. */
	auxsample_walk__exit_fulltrace(w);
	return err;
}

static int auxsample_script__sample(struct auxsample_walk *w, struct thread *thread,
				    struct perf_sample *sample, struct evsel *evsel,
				    const struct auxsample_result *res)
{
	struct auxsample_script *s = container_of(w, struct auxsample_script, walk);

	if (s->opts->stat) {
		s->branches += res->stats->branches;
		return auxsample_script__account(s, sample, res);
	}
	s->branches += res->nr > 0 ? res->nr : 0;
	auxsample_script__print(s, thread, sample, evsel, res);
	return 0;
}

static int auxsample_script__fulltrace(struct auxsample_walk *w)
{
	struct auxsample_script *s = container_of(w, struct auxsample_script, walk);

	return auxsample_fulltrace__run(w->ft, w->session, &w->config, s->opts);
}

static int auxsample_script__done(struct auxsample_walk *w)
{
	struct auxsample_script *s = container_of(w, struct auxsample_script, walk);

	if (s->opts->stat)
		auxsample_script__print_stat(s);
	else
		fprintf(stderr, "[ %" PRIu64 " %s, %" PRIu64 " branches, %" PRIu64 " without a sync point, %" PRIu64 " decode errors ]\n",
			w->samples, auxsample_walk__what(w), s->branches, w->nosync, w->errors);
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
			.threads = opts->threads,
			/* Statistics are of each snippet on its own. */
			.no_reuse = opts->stat || !opts->reuse,
			.window = opts->window,
			.sample = auxsample_script__sample,
			.done = auxsample_script__done,
			.fulltrace = auxsample_script__fulltrace,
			.full_trace = opts->full_trace,
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

/*
 * perf auxsample report: hot paths.  Every decoded virtual LBR adds its
 * branch edges, the loops it shows, the straight-line blocks between its
 * branches and its calls to four tables, keyed like perf report keys
 * code (dso and offset), printed sorted by count.
 */

#define HOT_BLOCK_MAX	4096	/* longer straight-line runs are not counted */
#define HOT_NAME_MAX	256
#define HOT_COLUMN_MAX	40	/* widest symbol column */

enum hot_section_id {
	HOT_EDGES,
	HOT_LOOPS,
	HOT_BLOCKS,
	HOT_CALLS,
	HOT_NR_SECTIONS,
};

static const char * const hot_section_names[HOT_NR_SECTIONS] = {
	[HOT_EDGES]	= "edges",
	[HOT_LOOPS]	= "loops",
	[HOT_BLOCKS]	= "blocks",
	[HOT_CALLS]	= "calls",
};

/* A code address as perf report keys it: the dso and the offset in it. */
struct hot_addr {
	struct dso	*dso;	/* NULL: in no map (key) */
	u64		off;	/* dso-relative, or the address without a dso (key) */
	u64		ip;	/* the address where first seen; 0: unknown */
	struct symbol	*sym;
	u64		symoff;
};

struct hot_item {
	struct hot_addr	a;	/* edge: from, loop: head, block: start, call: caller */
	struct hot_addr	b;	/* edge: to, loop: tail, block: end, call: callee */
	u32		kind;	/* edge: enum auxsample_branch_kind */
	u64		count;	/* times taken, samples with the loop, times run, calls */
	u64		seen;	/* the last sample that counted it */
	union {
		struct {
			u64	back_edges;	/* in the samples that count */
			u64	runs;		/* runs seen from entry to exit */
			u64	trips;		/* back edges taken in those runs */
			u64	trips_max;
			u64	partial_max;	/* of runs cut by the ends of the LBR */
		} loop;
		struct {
			u32	insns;		/* 0: unknown */
			u32	bytes;		/* 0: unknown */
		} block;
		struct {
			u64	samples;	/* whose call chain holds the call */
		} call;
	};
};

struct hot_section {
	struct hashmap	items;		/* struct hot_item, by its key */
	u64		total;		/* what percentages are of */
};

/* A branch of the sample at hand, in execution order, resolved. */
struct hot_br {
	const struct auxsample_branch	*br;
	struct hot_addr			from;
	struct hot_addr			to;
	int				depth;	/* calls open before it, relative */
	bool				seen;	/* loops: back edge looked at */
	bool				in_run;	/* loops: counted in a run */
};

/* A run of a loop: its back edge taken in a row in one frame. */
struct hot_run {
	u64	trips;
	bool	whole;		/* the LBR shows its entry and its exit */
};

/* Resolved addresses, as the walk's symbol cache (SYM_CACHE_SIZE). */
struct hot_addr_cache_entry {
	const struct maps	*maps;		/* and pid: as the symbol cache's */
	pid_t			pid;
	u64			generation;	/* 0: empty */
	struct hot_addr		a;
	/* a return address: the call before it, decoded once */
	bool			site_known;
	u64			site;		/* 0: no call ends at a.ip */
	u64			target;		/* of a direct call, else 0 */
};

struct auxsample_hot {
	struct auxsample_walk			walk;
	const struct auxsample_hot_opts		*opts;
	struct hot_section			sections[HOT_NR_SECTIONS];
	unsigned int				show;	/* 1 << HOT_* */
	double					percent_limit;
	struct strlist				*dsos;
	struct strlist				*symbols;
	struct hot_br				*brs;
	struct hot_run				*runs;	/* one per branch at most */
	unsigned int				brs_max;
	u64					decoded;
	u64					branches;
	struct hot_addr_cache_entry		*addr_cache;
	struct hashmap				*held_dsos;
};

static size_t held_dso__hash(long key, void *ctx __maybe_unused)
{
	return key >> 4;
}

static bool held_dso__equal(long key1, long key2, void *ctx __maybe_unused)
{
	return key1 == key2;
}

/*
 * The report's own reference to @dso, one for all its addresses, kept
 * until the report ends: the map's reference goes with the map when its
 * thread exits, and with reference count checking each map holds a
 * wrapper of its own, freed with it.  Keyed by the dso itself, so that
 * addresses in one dso share one pointer and compare equal.  NULL
 * without memory.
 */
static struct dso *auxsample_hot__hold_dso(struct auxsample_hot *h, struct dso *dso)
{
	long key = (long)RC_CHK_ACCESS(dso);
	struct dso *held;

	if (!h->held_dsos) {
		h->held_dsos = hashmap__new(held_dso__hash, held_dso__equal, NULL);
		if (IS_ERR(h->held_dsos)) {
			h->held_dsos = NULL;
			return NULL;
		}
	}
	if (hashmap__find(h->held_dsos, key, &held))
		return held;
	held = dso__get(dso);
	if (hashmap__add(h->held_dsos, key, held)) {
		dso__put(held);
		return NULL;
	}
	return held;
}

static void auxsample_hot__put_dsos(struct auxsample_hot *h)
{
	struct hashmap_entry *cur;
	size_t bkt;

	if (!h->held_dsos)
		return;
	hashmap__for_each_entry(h->held_dsos, cur, bkt)
		dso__put(cur->pvalue);
	hashmap__free(h->held_dsos);
	h->held_dsos = NULL;
}

static void hot_addr__resolve(struct auxsample_hot *h, struct hot_addr *a,
			      struct thread *thread, u64 ip)
{
	struct machine *machine = maps__machine(thread__maps(thread));
	u8 cpumode = machine__kernel_ip(machine, ip) ? PERF_RECORD_MISC_KERNEL :
						       PERF_RECORD_MISC_USER;
	struct addr_location al;

	memset(a, 0, sizeof(*a));
	a->ip = ip;
	a->off = ip;
	if (!ip)
		return;
	addr_location__init(&al);
	thread__find_symbol(thread, cpumode, ip, &al);
	if (al.map && map__dso(al.map))
		a->dso = auxsample_hot__hold_dso(h, map__dso(al.map));
	if (a->dso) {
		/* Its symbols live as long as it does. */
		a->off = map__map_ip(al.map, ip);
		if (al.sym) {
			a->sym = al.sym;
			a->symoff = a->off - al.sym->start;
		}
	}
	addr_location__exit(&al);
}

/* @ip's entry in the cache of resolved addresses, filled; NULL without memory. */
static struct hot_addr_cache_entry *auxsample_hot__cached(struct auxsample_hot *h,
							  struct thread *thread, u64 ip)
{
	const struct maps *maps = thread__maps(thread);
	u64 generation = h->walk.sym_generation + 1;
	pid_t pid = thread__pid(thread);
	struct hot_addr_cache_entry *e;

	if (!h->addr_cache) {
		h->addr_cache = calloc(SYM_CACHE_SIZE, sizeof(*h->addr_cache));
		if (!h->addr_cache)
			return NULL;
	}
	e = &h->addr_cache[(ip ^ (ip >> 12)) & (SYM_CACHE_SIZE - 1)];
	if (e->generation != generation || e->maps != maps || e->pid != pid || e->a.ip != ip) {
		hot_addr__resolve(h, &e->a, thread, ip);
		e->maps = maps;
		e->pid = pid;
		e->generation = generation;
		e->site_known = false;
	}
	return e;
}

static void auxsample_hot__resolve_addr(struct auxsample_hot *h, struct hot_addr *a,
					struct thread *thread, u64 ip)
{
	struct hot_addr_cache_entry *e = auxsample_hot__cached(h, thread, ip);

	if (e)
		*a = e->a;
	else
		hot_addr__resolve(h, a, thread, ip);
}

/* The function @a is in, as an address: its first byte. */
static void hot_addr__func(struct hot_addr *a)
{
	a->off -= a->symoff;
	a->ip -= a->symoff;
	a->symoff = 0;
}

/* The dso itself, as RC_CHK_EQUAL() compares it. */
static uintptr_t hot_dso__key(const struct dso *dso)
{
	return dso ? (uintptr_t)RC_CHK_ACCESS(dso) : 0;
}

static size_t hot_item__hash(long key, void *ctx __maybe_unused)
{
	const struct hot_item *item = (const struct hot_item *)key;
	u64 h = hot_dso__key(item->a.dso) ^ (hot_dso__key(item->b.dso) << 1);

	h = h * 31 + item->a.off;
	h = h * 31 + item->b.off;
	return h * 31 + item->kind;
}

static bool hot_item__equal(long key1, long key2, void *ctx __maybe_unused)
{
	const struct hot_item *x = (const struct hot_item *)key1;
	const struct hot_item *y = (const struct hot_item *)key2;

	return RC_CHK_EQUAL(x->a.dso, y->a.dso) && x->a.off == y->a.off &&
	       RC_CHK_EQUAL(x->b.dso, y->b.dso) && x->b.off == y->b.off &&
	       x->kind == y->kind;
}

/* The item of @key's key in @sec, made with @key's addresses if new. */
static struct hot_item *hot_section__findnew(struct hot_section *sec,
					     const struct hot_item *key)
{
	struct hot_item *item;

	if (hashmap__find(&sec->items, key, &item))
		return item;
	item = zalloc(sizeof(*item));
	if (!item)
		return NULL;
	item->a = key->a;
	item->b = key->b;
	item->kind = key->kind;
	if (hashmap__add(&sec->items, item, item)) {
		free(item);
		return NULL;
	}
	return item;
}

static void hot_section__exit(struct hot_section *sec)
{
	struct hashmap *items = &sec->items;
	struct hashmap_entry *cur;
	size_t bkt;

	hashmap__for_each_entry(items, cur, bkt)
		free(cur->pvalue);
	hashmap__clear(&sec->items);
}

static int auxsample_hot__add_edges(struct auxsample_hot *h, int n)
{
	struct hot_section *sec = &h->sections[HOT_EDGES];

	for (int i = 0; i < n; i++) {
		const struct hot_br *e = &h->brs[i];
		struct hot_item key = { .a = e->from, .b = e->to, .kind = e->br->kind };
		struct hot_item *edge;

		if (e->br->kind == AUXSAMPLE_BR_GAP)
			continue;
		edge = hot_section__findnew(sec, &key);
		if (!edge)
			return -ENOMEM;
		edge->count++;
		sec->total++;
		h->branches++;
	}
	return 0;
}

/*
 * The x86 instructions in @len bytes at @buf up to the one at @last, and
 * in *bytes their size; 0 where they do not decode to exactly that one.
 */
static u32 hot_insns__count(struct perf_insn *x, u64 ip, u8 *buf, int len, u64 last,
			    u32 *bytes)
{
	u64 off = 0;
	u32 insns = 0;
	int ilen;

	while (off < (u64)len) {
		ilen = 0;
		dump_insn(x, ip + off, buf + off, len - off, &ilen);
		if (ilen <= 0)
			return 0;
		insns++;
		if (off == last) {
			*bytes = last + ilen;
			return insns;
		}
		off += ilen;
		if (off > last)
			return 0;
	}
	return 0;
}

/*
 * Intel PT: the instructions of a new block, with perf's x86 instruction
 * decoder (where perf has it); they stay unknown (0) where the code cannot
 * be read or does not decode to the block's last instruction.
 */
static void auxsample_hot__block_size(struct auxsample_hot *h, struct hot_item *block,
				      struct thread *thread)
{
	struct auxsample_mem mem = {
		.machine = maps__machine(thread__maps(thread)),
		.thread = thread,
	};
	struct perf_insn x = {
		.thread = thread,
		.machine = mem.machine,
		.is64bit = dso__is_64_bit(block->a.dso),
	};
	u64 last = block->b.ip - block->a.ip;
	u8 buf[HOT_BLOCK_MAX + MAXINSN];
	int len;

	if (h->walk.config.type != AUXSAMPLE_TRACE_INTEL_PT)
		return;
	len = auxsample_mem__read(buf, last + MAXINSN, block->a.ip, &mem);
	if (len > 0)
		block->block.insns = hot_insns__count(&x, block->a.ip, buf, len, last,
						      &block->block.bytes);
}

/* The code run between two taken branches: from one's target to the next. */
static int auxsample_hot__add_blocks(struct auxsample_hot *h, int n, struct thread *thread)
{
	struct hot_section *sec = &h->sections[HOT_BLOCKS];

	for (int i = 1; i < n; i++) {
		const struct hot_br *prev = &h->brs[i - 1], *cur = &h->brs[i];
		struct hot_item key = { .a = prev->to, .b = cur->from };
		struct hot_item *block;

		if (prev->br->kind == AUXSAMPLE_BR_GAP || cur->br->kind == AUXSAMPLE_BR_GAP ||
		    (prev->br->flags & AUXSAMPLE_BRF_TO_UNKNOWN) ||
		    cur->br->from < prev->br->to ||
		    cur->br->from - prev->br->to >= HOT_BLOCK_MAX ||
		    !RC_CHK_EQUAL(prev->to.dso, cur->from.dso))
			continue;
		block = hot_section__findnew(sec, &key);
		if (!block)
			return -ENOMEM;
		if (!block->count && block->a.dso)
			auxsample_hot__block_size(h, block, thread);
		block->count++;
		sec->total++;
	}
	return 0;
}

static bool hot_br__is_back_edge(const struct hot_br *e)
{
	const struct auxsample_branch *br = e->br;

	if (br->kind != AUXSAMPLE_BR_COND && br->kind != AUXSAMPLE_BR_JUMP &&
	    br->kind != AUXSAMPLE_BR_IND_JUMP)
		return false;
	if ((br->flags & AUXSAMPLE_BRF_TO_UNKNOWN) || br->to > br->from)
		return false;
	/* Within one function. */
	return RC_CHK_EQUAL(e->from.dso, e->to.dso) && e->from.sym == e->to.sym;
}

static bool hot_br__same(const struct hot_br *x, const struct hot_br *y)
{
	return x->br->from == y->br->from && x->br->to == y->br->to &&
	       x->br->kind == y->br->kind;
}

/* Whether @e, run in the loop's own frame, leaves the loop @head .. @tail. */
static bool hot_br__leaves(const struct hot_br *e, u64 head, u64 tail)
{
	const struct auxsample_branch *br = e->br;

	if (br->from < head || br->from > tail)
		return true;	/* code outside the loop ran before it */
	switch (br->kind) {
	case AUXSAMPLE_BR_CALL:
	case AUXSAMPLE_BR_IND_CALL:
	case AUXSAMPLE_BR_FAR:		/* calls and syscalls come back */
		return false;
	case AUXSAMPLE_BR_RET:
	case AUXSAMPLE_BR_INTR:
	case AUXSAMPLE_BR_GAP:
		return true;
	default:
		return br->to < head || br->to > tail;
	}
}

enum hot_bound {
	HOT_CUT,	/* a gap or the end of the LBR */
	HOT_LEFT,	/* the loop left, or its frame not made yet */
	HOT_AGAIN,	/* the back edge taken again */
};

/*
 * What the LBR shows of the loop of back edge brs[i], going backwards
 * (@dir -1) or forwards (@dir 1) from it in the loop's frame; *next is
 * where the back edge is taken again.
 */
static enum hot_bound auxsample_hot__loop_bound(struct auxsample_hot *h, int n, int i,
						int dir, int *next)
{
	const struct hot_br *be = &h->brs[i];

	for (int j = i + dir; j >= 0 && j < n; j += dir) {
		const struct hot_br *e = &h->brs[j];

		if (e->br->kind == AUXSAMPLE_BR_GAP)
			return HOT_CUT;
		if (e->depth > be->depth)	/* in a callee */
			continue;
		if (e->depth < be->depth)
			return HOT_LEFT;
		if (hot_br__same(e, be)) {
			*next = j;
			return HOT_AGAIN;
		}
		if (hot_br__leaves(e, be->br->to, be->br->from))
			return HOT_LEFT;
	}
	return HOT_CUT;
}

/*
 * The run of the loop whose back edge is brs[i]: how often that back edge
 * is taken in a row in the loop's frame, its occurrences marked in_run.
 */
static struct hot_run auxsample_hot__loop_run(struct auxsample_hot *h, int n, int i)
{
	struct hot_run run = { .trips = 1 };
	enum hot_bound end;
	bool entered;
	int next;

	entered = auxsample_hot__loop_bound(h, n, i, -1, &next) == HOT_LEFT;
	h->brs[i].in_run = true;
	while ((end = auxsample_hot__loop_bound(h, n, i, 1, &next)) == HOT_AGAIN) {
		i = next;
		h->brs[i].in_run = true;
		run.trips++;
	}
	run.whole = entered && end == HOT_LEFT;
	return run;
}

static void hot_loop__add_run(struct hot_item *loop, const struct hot_run *run)
{
	loop->loop.back_edges += run->trips;
	if (run->whole) {
		loop->loop.runs++;
		loop->loop.trips += run->trips;
		loop->loop.trips_max = max(loop->loop.trips_max, run->trips);
	} else {
		loop->loop.partial_max = max(loop->loop.partial_max, run->trips);
	}
}

/*
 * The loop of back edge brs[first], if the sample takes it twice in a row
 * in one frame: a back edge taken once in each of several frames is
 * recursion, not a loop.
 */
static int auxsample_hot__add_loop(struct auxsample_hot *h, int n, int first)
{
	struct hot_br *be = &h->brs[first];
	struct hot_item key = { .a = be->to, .b = be->from };
	struct hot_run *runs = h->runs;
	struct hot_item *loop;
	u64 nr = 0, most = 0;

	for (int j = first; j < n; j++) {
		if (!hot_br__same(&h->brs[j], be))
			continue;
		h->brs[j].seen = true;
		if (h->brs[j].in_run)
			continue;
		runs[nr] = auxsample_hot__loop_run(h, n, j);
		most = max(most, runs[nr].trips);
		nr++;
	}
	if (most < 2)
		return 0;
	loop = hot_section__findnew(&h->sections[HOT_LOOPS], &key);
	if (!loop)
		return -ENOMEM;
	if (loop->seen != h->decoded) {
		loop->seen = h->decoded;
		loop->count++;
	}
	for (u64 r = 0; r < nr; r++)
		hot_loop__add_run(loop, &runs[r]);
	return 0;
}

static int auxsample_hot__add_loops(struct auxsample_hot *h, int n)
{
	int err;

	for (int i = 0; i < n; i++) {
		if (h->brs[i].seen || !hot_br__is_back_edge(&h->brs[i]))
			continue;
		err = auxsample_hot__add_loop(h, n, i);
		if (err)
			return err;
	}
	return 0;
}

static int auxsample_hot__add_calls(struct auxsample_hot *h, int n)
{
	struct hot_section *sec = &h->sections[HOT_CALLS];

	for (int i = 0; i < n; i++) {
		const struct hot_br *e = &h->brs[i];
		struct hot_item key = { .a = e->from, .b = e->to };
		struct hot_item *call;

		if ((e->br->kind != AUXSAMPLE_BR_CALL && e->br->kind != AUXSAMPLE_BR_IND_CALL) ||
		    (e->br->flags & AUXSAMPLE_BRF_TO_UNKNOWN))
			continue;
		hot_addr__func(&key.a);
		hot_addr__func(&key.b);
		call = hot_section__findnew(sec, &key);
		if (!call)
			return -ENOMEM;
		call->count++;
		sec->total++;
	}
	return 0;
}

/* x86 call instructions are 2 to 8 bytes long; E8 rel32, the commonest, first. */
static const int hot_x86_call_lens[] = { 5, 6, 2, 3, 7, 4, 8 };

/*
 * The call that returns to @ret, found by decoding the code before it: its
 * first byte, and in *target where it goes if that is in the instruction
 * (0 if not).  0 where no call ends at @ret: the code cannot be read, or
 * is not Intel PT's x86-64 or ETM's arm64.
 */
static u64 auxsample_hot__decode_call_site(struct auxsample_hot *h, struct thread *thread,
					   const struct hot_addr *ret, u64 *target)
{
	struct auxsample_mem mem = {
		.machine = maps__machine(thread__maps(thread)),
		.thread = thread,
	};
	struct intel_pt_insn insn;
	u8 buf[8];

	*target = 0;
	if (!ret->dso || !dso__is_64_bit(ret->dso))
		return 0;
	if (h->walk.config.type != AUXSAMPLE_TRACE_INTEL_PT) {
		u32 a64;

		/* arm64: BL imm26 or BLR, 4 bytes. */
		if (auxsample_mem__read(buf, 4, ret->ip - 4, &mem) != 4)
			return 0;
		memcpy(&a64, buf, 4);
		a64 = le32_to_cpu(a64);
		if ((a64 & 0xfc000000) == 0x94000000)
			*target = ret->ip - 4 + ((s64)((u64)a64 << 38) >> 36);
		else if ((a64 & 0xfffffc1f) != 0xd63f0000)
			return 0;
		return ret->ip - 4;
	}
	for (size_t i = 0; i < ARRAY_SIZE(hot_x86_call_lens); i++) {
		int len = hot_x86_call_lens[i];

		if (auxsample_mem__read(buf, len, ret->ip - len, &mem) != len ||
		    intel_pt_get_insn(buf, len, /*x86_64=*/1, &insn) ||
		    insn.op != INTEL_PT_OP_CALL || insn.length != len)
			continue;
		if (insn.branch == INTEL_PT_BR_UNCONDITIONAL)
			*target = ret->ip + insn.rel;
		return ret->ip - len;
	}
	return 0;
}

/* auxsample_hot__decode_call_site(), once for each return address. */
static u64 auxsample_hot__call_site(struct auxsample_hot *h, struct thread *thread,
				    const struct hot_addr *ret, u64 *target)
{
	struct hot_addr_cache_entry *e = auxsample_hot__cached(h, thread, ret->ip);

	if (!e)
		return auxsample_hot__decode_call_site(h, thread, ret, target);
	if (!e->site_known) {
		e->site = auxsample_hot__decode_call_site(h, thread, ret, &e->target);
		e->site_known = true;
	}
	*target = e->target;
	return e->site;
}

/*
 * The calls still open at the sample, from its call chain: once a sample,
 * keyed as the call branches are (auxsample_hot__add_calls()).  The chain
 * holds return addresses; in code without symbols the call sites and the
 * callees' entries are found by decoding the calls.
 */
static int auxsample_hot__add_chain(struct auxsample_hot *h, struct thread *thread,
				    u64 ip, const struct auxsample_result *res)
{
	const u64 *chain = res->callchain;
	struct hot_item key = {};
	struct hot_addr inner;
	int depth = res->depth;

	/* The code running in the innermost frame, then each caller's call. */
	auxsample_hot__resolve_addr(h, &inner, thread, ip);
	for (int i = 0; i < depth; i++) {
		struct hot_item *call;
		struct hot_addr ret;
		u64 site = 0, target = 0;

		auxsample_hot__resolve_addr(h, &ret, thread, chain[i]);
		if (!ret.sym || !inner.sym)
			site = auxsample_hot__call_site(h, thread, &ret, &target);
		/* A return address may be the first byte of the next function. */
		auxsample_hot__resolve_addr(h, &key.a, thread, site ?: chain[i] - 1);
		if (inner.sym) {
			key.b = inner;
			hot_addr__func(&key.b);
		} else if (target) {
			auxsample_hot__resolve_addr(h, &key.b, thread, target);
		} else {
			key.b.ip = 0;	/* callee unknown: no row to count in */
		}
		inner = key.a;
		hot_addr__func(&key.a);
		if (!key.b.ip || (!key.a.sym && !site))
			continue;
		call = hot_section__findnew(&h->sections[HOT_CALLS], &key);
		if (!call)
			return -ENOMEM;
		if (call->seen != h->decoded) {
			call->seen = h->decoded;
			call->call.samples++;
		}
	}
	return 0;
}

/* The sample's branches into h->brs, oldest first, with their call depth. */
static int auxsample_hot__resolve(struct auxsample_hot *h, struct thread *thread,
				  const struct auxsample_branch *br, int n)
{
	int depth = 0;

	if ((unsigned int)n > h->brs_max) {
		struct hot_br *brs = realloc(h->brs, n * sizeof(*brs));
		struct hot_run *runs;

		if (!brs)
			return -ENOMEM;
		h->brs = brs;
		runs = realloc(h->runs, n * sizeof(*runs));
		if (!runs)
			return -ENOMEM;
		h->runs = runs;
		h->brs_max = n;
	}
	for (int i = 0; i < n; i++) {
		struct hot_br *e = &h->brs[i];

		memset(e, 0, sizeof(*e));
		e->br = &br[n - 1 - i];
		e->depth = depth;
		auxsample_hot__resolve_addr(h, &e->from, thread, e->br->from);
		auxsample_hot__resolve_addr(h, &e->to, thread,
					    e->br->flags & AUXSAMPLE_BRF_TO_UNKNOWN ? 0 :
					    e->br->to);
		if (e->br->kind == AUXSAMPLE_BR_CALL || e->br->kind == AUXSAMPLE_BR_IND_CALL)
			depth++;
		else if (e->br->kind == AUXSAMPLE_BR_RET)
			depth--;
	}
	return 0;
}

static int auxsample_hot__sample(struct auxsample_walk *w, struct thread *thread,
				 struct perf_sample *sample, struct evsel *evsel __maybe_unused,
				 const struct auxsample_result *res)
{
	struct auxsample_hot *h = container_of(w, struct auxsample_hot, walk);
	int nr = res->nr_branches;
	int err;

	if (res->nr < 0)	/* no sync point: counted by the walk */
		return 0;
	h->decoded++;
	err = auxsample_hot__resolve(h, thread, res->branches, nr);
	if (!err)
		err = auxsample_hot__add_edges(h, nr);
	if (!err)
		err = auxsample_hot__add_loops(h, nr);
	if (!err)
		err = auxsample_hot__add_blocks(h, nr, thread);
	if (!err)
		err = auxsample_hot__add_calls(h, nr);
	if (!err)
		err = auxsample_hot__add_chain(h, thread, sample->ip, res);
	return err;
}

static const char *hot_addr__dso_name(const struct hot_addr *a)
{
	return a->dso ? dso__short_name(a->dso) : "[unknown]";
}

/*
 * As perf report names code: symbol(+offset), or without a symbol the
 * offset in the dso, which stays the same from run to run (PIE, ASLR).
 * @other: the address it is shown beside; where that is in another dso,
 * the dso is named too.
 */
static void hot_addr__name(const struct hot_addr *a, bool offset, const struct hot_addr *other,
			   char *buf, size_t size)
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

/*
 * "<key>":address,"<key>_sym":symbol,"<key>_dso":file,"<key>_off":offset in
 * the file, each maybe null.
 */
static void hot_addr__json(const char *key, const struct hot_addr *a, bool offset)
{
	printf("\"%s\":", key);
	if (a->ip)
		printf("\"%#" PRIx64 "\"", a->ip);
	else
		printf("null");
	printf(",\"%s_sym\":", key);
	if (a->sym)
		json_sym(a->sym->name, a->symoff, offset);
	else
		printf("null");
	printf(",\"%s_dso\":", key);
	if (a->dso) {
		output_json_string(stdout, dso__long_name(a->dso));
		printf(",\"%s_off\":\"%#" PRIx64 "\"", key, a->off);
	} else {
		printf("null,\"%s_off\":null", key);
	}
}

static bool hot_addr__in_dsos(const struct hot_addr *a, struct strlist *dsos)
{
	return a->dso && (strlist__has_entry(dsos, dso__short_name(a->dso)) ||
			  strlist__has_entry(dsos, dso__long_name(a->dso)));
}

static bool hot_addr__in_symbols(const struct hot_addr *a, struct strlist *symbols)
{
	return a->sym && strlist__has_entry(symbols, a->sym->name);
}

/* --dsos, --symbols: items with an end in them. */
static bool auxsample_hot__wanted(struct auxsample_hot *h, const struct hot_item *item)
{
	if (h->dsos && !hot_addr__in_dsos(&item->a, h->dsos) &&
	    !hot_addr__in_dsos(&item->b, h->dsos))
		return false;
	if (h->symbols && !hot_addr__in_symbols(&item->a, h->symbols) &&
	    !hot_addr__in_symbols(&item->b, h->symbols))
		return false;
	return true;
}

static int hot_item__cmp_addr(const struct hot_item *x, const struct hot_item *y)
{
	if (x->a.ip != y->a.ip)
		return x->a.ip < y->a.ip ? -1 : 1;
	if (x->b.ip != y->b.ip)
		return x->b.ip < y->b.ip ? -1 : 1;
	return x->kind < y->kind ? -1 : x->kind > y->kind;
}

#define HOT_CMP_DESC(x, y) ((x) > (y) ? -1 : (x) < (y))

static int hot_item__cmp(const void *p1, const void *p2)
{
	const struct hot_item *x = *(const struct hot_item **)p1;
	const struct hot_item *y = *(const struct hot_item **)p2;

	return HOT_CMP_DESC(x->count, y->count) ?: hot_item__cmp_addr(x, y);
}

static int hot_loop__cmp(const void *p1, const void *p2)
{
	const struct hot_item *x = *(const struct hot_item **)p1;
	const struct hot_item *y = *(const struct hot_item **)p2;

	return HOT_CMP_DESC(x->count, y->count) ?:
	       HOT_CMP_DESC(x->loop.back_edges, y->loop.back_edges) ?:
	       hot_item__cmp_addr(x, y);
}

static int hot_call__cmp(const void *p1, const void *p2)
{
	const struct hot_item *x = *(const struct hot_item **)p1;
	const struct hot_item *y = *(const struct hot_item **)p2;

	return HOT_CMP_DESC(x->count, y->count) ?:
	       HOT_CMP_DESC(x->call.samples, y->call.samples) ?:
	       hot_item__cmp_addr(x, y);
}

static double auxsample_hot__percent(struct auxsample_hot *h, enum hot_section_id id,
				     const struct hot_item *item)
{
	u64 total = id == HOT_LOOPS ? h->decoded : h->sections[id].total;

	return total ? 100.0 * item->count / total : 0.0;
}

/*
 * The items of section @id to show, hottest first, after --dsos,
 * --symbols, --percent-limit and -n: *nr of them, in an array to free.
 */
static struct hot_item **auxsample_hot__items(struct auxsample_hot *h, enum hot_section_id id,
					      size_t *nr)
{
	static int (* const cmp[HOT_NR_SECTIONS])(const void *, const void *) = {
		[HOT_EDGES] = hot_item__cmp, [HOT_LOOPS] = hot_loop__cmp,
		[HOT_BLOCKS] = hot_item__cmp, [HOT_CALLS] = hot_call__cmp,
	};
	struct hashmap *items = &h->sections[id].items;
	struct hot_item **array = calloc(hashmap__size(items) ?: 1, sizeof(*array));
	struct hashmap_entry *cur;
	size_t bkt, n = 0;

	if (!array)
		return NULL;
	hashmap__for_each_entry(items, cur, bkt) {
		struct hot_item *item = cur->pvalue;

		if (auxsample_hot__wanted(h, item) &&
		    auxsample_hot__percent(h, id, item) >= h->percent_limit)
			array[n++] = item;
	}
	qsort(array, n, sizeof(*array), cmp[id]);
	if (h->opts->max_entries && n > h->opts->max_entries)
		n = h->opts->max_entries;
	*nr = n;
	return array;
}

/* The width of the widest of the items' first addresses, for a column. */
static int hot_items__width(struct hot_item **items, size_t nr, bool offset, int min)
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
static int hot_items__dso_width(struct hot_item **items, size_t nr)
{
	int width = strlen("Dso");

	for (size_t i = 0; i < nr; i++)
		width = max_t(int, width, strlen(hot_addr__dso_name(&items[i]->a)));
	return min(width, HOT_COLUMN_MAX);
}

static void auxsample_hot__print_edges(struct auxsample_hot *h, struct hot_item **items,
				       size_t nr)
{
	char from[HOT_NAME_MAX], to[HOT_NAME_MAX];
	int width = hot_items__width(items, nr, true, strlen("Source"));
	int dso_width = hot_items__dso_width(items, nr);

	printf("# Branch edges: %" PRIu64 " taken branches\n#\n", h->sections[HOT_EDGES].total);
	printf("# %8s  %7s  %-8s  %-*s  %-*s  %s\n", "Count", "Percent", "Kind",
	       dso_width, "Dso", width, "Source", "Target");
	printf("# %.8s  %.7s  %.8s  %.*s  %.*s  %.6s\n", dots, dots, dots,
	       dso_width, dots, width, dots, dots);
	for (size_t i = 0; i < nr; i++) {
		hot_addr__name(&items[i]->a, true, NULL, from, sizeof(from));
		hot_addr__name(&items[i]->b, true, &items[i]->a, to, sizeof(to));
		printf("  %8" PRIu64 "  %6.2f%%  %-8s  %-*s  %-*s  %s\n", items[i]->count,
		       auxsample_hot__percent(h, HOT_EDGES, items[i]),
		       auxsample_branch_kind__name(items[i]->kind), dso_width,
		       hot_addr__dso_name(&items[i]->a), width, from, to);
	}
}

static void auxsample_hot__print_loops(struct auxsample_hot *h, struct hot_item **items,
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
		const struct hot_item *loop = items[i];

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
		printf("  %8" PRIu64 "  %6.2f%%  %10" PRIu64 "  %6" PRIu64 "  %9s  %9s  %-*s  %s .. %s\n",
		       loop->count, auxsample_hot__percent(h, HOT_LOOPS, loop),
		       loop->loop.back_edges, loop->loop.runs, avg, most, dso_width,
		       hot_addr__dso_name(&loop->a), head, tail);
	}
}

static void auxsample_hot__print_blocks(struct auxsample_hot *h, struct hot_item **items,
					size_t nr)
{
	char start[HOT_NAME_MAX], end[HOT_NAME_MAX];
	int dso_width = hot_items__dso_width(items, nr);

	printf("# Hot basic blocks: the code between two taken branches, %" PRIu64 " run\n#\n",
	       h->sections[HOT_BLOCKS].total);
	printf("# %8s  %7s  %5s  %5s  %-*s  %s\n", "Count", "Percent", "Insns", "Bytes",
	       dso_width, "Dso", "Block (first .. last instruction)");
	printf("# %.8s  %.7s  %.5s  %.5s  %.*s  %.33s\n", dots, dots,
	       dots, dots, dso_width, dots, dots);
	for (size_t i = 0; i < nr; i++) {
		const struct hot_item *block = items[i];

		hot_addr__name(&block->a, true, NULL, start, sizeof(start));
		hot_addr__name(&block->b, true, &block->a, end, sizeof(end));
		printf("  %8" PRIu64 "  %6.2f%%  ", block->count,
		       auxsample_hot__percent(h, HOT_BLOCKS, block));
		if (block->block.insns)
			printf("%5u  %5u", block->block.insns, block->block.bytes);
		else
			printf("%5s  %5s", "-", "-");
		printf("  %-*s  %s .. %s\n", dso_width, hot_addr__dso_name(&block->a), start, end);
	}
}

static void auxsample_hot__print_calls(struct auxsample_hot *h, struct hot_item **items,
				       size_t nr)
{
	char caller[HOT_NAME_MAX], callee[HOT_NAME_MAX];
	int width = hot_items__width(items, nr, false, strlen("Caller"));
	int dso_width = hot_items__dso_width(items, nr);

	printf("# Calls: %" PRIu64 " call branches; Samples: call chains with the call open\n",
	       h->sections[HOT_CALLS].total);
	printf("# Caller, callee: functions; [<offset>]: the call site, in code without symbols\n#\n");
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
		       auxsample_hot__percent(h, HOT_CALLS, items[i]), items[i]->call.samples,
		       dso_width, hot_addr__dso_name(&items[i]->a), width, caller, callee);
	}
}

static void auxsample_hot__json_item(struct auxsample_hot *h, enum hot_section_id id,
				     const struct hot_item *item)
{
	static const char * const keys[HOT_NR_SECTIONS][2] = {
		[HOT_EDGES] = { "from", "to" }, [HOT_LOOPS] = { "head", "tail" },
		[HOT_BLOCKS] = { "start", "end" }, [HOT_CALLS] = { "caller", "callee" },
	};

	putchar('{');
	hot_addr__json(keys[id][0], &item->a, id != HOT_CALLS);
	putchar(',');
	hot_addr__json(keys[id][1], &item->b, id != HOT_CALLS);
	printf(",\"%s\":%" PRIu64 ",\"percent\":%.2f", id == HOT_LOOPS ? "samples" :
	       id == HOT_CALLS ? "calls" : "count", item->count,
	       auxsample_hot__percent(h, id, item));
	switch (id) {
	case HOT_EDGES:
		printf(",\"kind\":\"%s\"", auxsample_branch_kind__name(item->kind));
		break;
	case HOT_LOOPS:
		printf(",\"back_edges\":%" PRIu64 ",\"runs\":%" PRIu64 ",\"trips_avg\":",
		       item->loop.back_edges, item->loop.runs);
		if (item->loop.runs)
			printf("%.2f", (double)item->loop.trips / item->loop.runs);
		else
			printf("null");
		printf(",\"trips_max\":%" PRIu64 ",\"partial_max\":%" PRIu64,
		       item->loop.trips_max, item->loop.partial_max);
		break;
	case HOT_BLOCKS:
		if (item->block.insns)
			printf(",\"insns\":%u,\"bytes\":%u", item->block.insns, item->block.bytes);
		else
			printf(",\"insns\":null,\"bytes\":null");
		break;
	case HOT_CALLS:
		printf(",\"samples\":%" PRIu64, item->call.samples);
		break;
	case HOT_NR_SECTIONS:
	default:
		break;
	}
	putchar('}');
}

static void auxsample_hot__print_header(struct auxsample_hot *h)
{
	struct auxsample_walk *w = &h->walk;

	if (h->opts->json) {
		printf("{\"samples\":%" PRIu64 ",\"filtered\":%" PRIu64 ",\"decoded\":%" PRIu64
		       ",\"failed\":%" PRIu64 ",\"error_samples\":%" PRIu64
		       ",\"branches\":%" PRIu64 ",\"depth\":%u", w->samples, w->filtered,
		       h->decoded, w->nosync, w->error_samples, h->branches, w->depth);
		return;
	}
	printf("# perf auxsample report: %" PRIu64 " %s, ", w->samples, auxsample_walk__what(w));
	if (w->filtered)
		printf("%" PRIu64 " left out by --comms, ", w->filtered);
	printf("%" PRIu64 " decoded, %" PRIu64 " failed (no sync point), %" PRIu64
	       " with decode errors, %" PRIu64 " branches (depth %u)\n",
	       h->decoded, w->nosync, w->error_samples, h->branches, w->depth);
}

static int auxsample_hot__print(struct auxsample_walk *w)
{
	static void (* const print[HOT_NR_SECTIONS])(struct auxsample_hot *h,
						       struct hot_item **items, size_t nr) = {
		[HOT_EDGES] = auxsample_hot__print_edges,
		[HOT_LOOPS] = auxsample_hot__print_loops,
		[HOT_BLOCKS] = auxsample_hot__print_blocks,
		[HOT_CALLS] = auxsample_hot__print_calls,
	};
	struct auxsample_hot *h = container_of(w, struct auxsample_hot, walk);

	auxsample_hot__print_header(h);
	for (int id = 0; id < HOT_NR_SECTIONS; id++) {
		struct hot_item **items;
		size_t nr;

		if (!(h->show & (1U << id)))
			continue;
		items = auxsample_hot__items(h, id, &nr);
		if (!items)
			return -ENOMEM;
		if (h->opts->json) {
			printf(",\"%s\":[", hot_section_names[id]);
			for (size_t i = 0; i < nr; i++) {
				printf(i ? ",\n" : "\n");
				auxsample_hot__json_item(h, id, items[i]);
			}
			printf("]");
		} else {
			printf("#\n");
			print[id](h, items, nr);
		}
		free(items);
	}
	if (h->opts->json)
		printf("}\n");
	return 0;
}

/* --show: the sections to print, all by default. */
static int auxsample_hot__parse_show(struct auxsample_hot *h, const char *show)
{
	struct str_node *pos;
	struct strlist *list;
	int err = 0;

	if (!show) {
		h->show = (1U << HOT_NR_SECTIONS) - 1;
		return 0;
	}
	list = strlist__new(show, NULL);
	if (!list)
		return -ENOMEM;
	strlist__for_each_entry(pos, list) {
		int id;

		for (id = 0; id < HOT_NR_SECTIONS; id++) {
			if (!strcmp(pos->s, hot_section_names[id]))
				break;
		}
		if (id == HOT_NR_SECTIONS) {
			pr_err("perf auxsample report: no section '%s'; --show takes edges, loops, blocks, calls\n",
			       pos->s);
			err = -EINVAL;
			break;
		}
		h->show |= 1U << id;
	}
	strlist__delete(list);
	return err;
}

static int auxsample_hot__init(struct auxsample_hot *h, const struct auxsample_hot_opts *opts)
{
	int err;

	h->opts = opts;
	h->walk.cmd = "report";
	h->walk.input = opts->input;
	h->walk.depth = opts->depth;
	h->walk.threads = opts->threads;
	h->walk.no_reuse = !opts->reuse;
	h->walk.window = opts->window;
	h->walk.sample = auxsample_hot__sample;
	h->walk.done = auxsample_hot__print;
	for (int id = 0; id < HOT_NR_SECTIONS; id++)
		hashmap__init(&h->sections[id].items, hot_item__hash, hot_item__equal, NULL);
	err = auxsample_hot__parse_show(h, opts->show);
	if (err)
		return err;
	if (opts->percent_limit) {
		char *end;

		h->percent_limit = strtod(opts->percent_limit, &end);
		if (*end || end == opts->percent_limit || h->percent_limit < 0) {
			pr_err("perf auxsample report: --percent-limit takes a percentage, not '%s'\n",
			       opts->percent_limit);
			return -EINVAL;
		}
	}
	if (opts->comms) {
		h->walk.comms = strlist__new(opts->comms, NULL);
		if (!h->walk.comms)
			return -ENOMEM;
	}
	if (opts->dsos) {
		h->dsos = strlist__new(opts->dsos, NULL);
		if (!h->dsos)
			return -ENOMEM;
	}
	if (opts->symbols) {
		h->symbols = strlist__new(opts->symbols, NULL);
		if (!h->symbols)
			return -ENOMEM;
	}
	return 0;
}

static void auxsample_hot__exit(struct auxsample_hot *h)
{
	for (int id = 0; id < HOT_NR_SECTIONS; id++)
		hot_section__exit(&h->sections[id]);
	strlist__delete(h->walk.comms);
	strlist__delete(h->dsos);
	strlist__delete(h->symbols);
	zfree(&h->brs);
	zfree(&h->runs);
	zfree(&h->addr_cache);
	auxsample_hot__put_dsos(h);
}

int auxsample_hot__run(const struct auxsample_hot_opts *opts)
{
	struct auxsample_hot h = {};
	int err = auxsample_hot__init(&h, opts);

	if (!err)
		err = auxsample_walk__run(&h.walk);
	auxsample_hot__exit(&h);
	return err;
}
