// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample script: every sample that carries AUX area data, decoded
 * with libauxsample into its virtual LBR (the last taken branches before
 * it, newest first) and the call chain those branches show; perf
 * auxsample stat: what those samples hold, and what decodes and why not.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <linux/kernel.h>
#include <subcmd/parse-options.h>

#include "builtin-auxsample.h"
#include "util/auxsample-config.h"
#include "util/debug.h"
#include "util/symbol.h"

#ifdef HAVE_AUXSAMPLE_SUPPORT
#include <auxsample/auxsample.h>

#include "util/auxsample-fulltrace.h"
#include "util/auxsample-print.h"
#include "util/auxsample-stat.h"
#include "util/auxsample-walk.h"
#include "util/sample.h"
#include "util/session.h"
#include "util/strbuf.h"
#endif

struct script_opts {
	const char	*input;
	unsigned int	depth;		/* branches per sample */
	unsigned int	threads;	/* decoding threads, 0: per CPU, 1: inline */
	bool		json;
	bool		stat;		/* statistics instead of samples */
	bool		reuse;		/* decode overlapping snippets once */
	u64		window;		/* bytes before a sample beside a full trace */
	/* decode the trace buffers, not AUX samples (auxsample-fulltrace.h) */
	bool		full_trace;
	bool		autofdo;	/* full trace as AutoFDO text */
	const char	*fields;	/* -F: perf script's fields, as it prints them */
};

#ifdef HAVE_AUXSAMPLE_SUPPORT
struct script {
	struct auxsample_walk		walk;
	const struct script_opts	*opts;
	u64				branches;
	/* -v: what the decodes walked, and their time */
	u64				decoded;
	u64				decodes;
	u64				decode_ns;
	u64				skims;
	u64				skims_lost;
	struct strbuf			line;	/* a sample's text */
	unsigned int			fields;	/* -F's AUXSAMPLE_FIELD_*, or 0 */
	struct evsel			*fields_checked;	/* the last sample's event */
	struct auxsample_stat		stat;	/* perf auxsample stat */
};

/*
 * Whether the file's Intel PT went to the walker (the default decoder),
 * which leaves what it does not handle to libipt: stat counts those.
 */
static bool script__walker(const struct auxsample_walk *w)
{
	return w->d.have_config && w->d.config.type == AUXSAMPLE_TRACE_INTEL_PT &&
	       w->d.config.pt_decoder != AUXSAMPLE_PT_DECODER_LIBIPT;
}

static void script__print_stat(struct script *s)
{
	const struct auxsample_walk *w = &s->walk;
	const struct auxsample_stat *st = &s->stat;
	u64 n = w->samples ?: 1;

	printf("%12" PRIu64 "  %s\n", w->samples, auxsample_walk__what(w));
	if (w->placed)
		printf("%12" PRIu64 "  samples without a CPU, placed by their thread\n", w->placed);
	if (w->unplaced)
		printf("%12" PRIu64 "  samples without a CPU, not placed: no trace\n", w->unplaced);
	printf("%12" PRIu64 "  bytes of trace (%" PRIu64 " per sample)\n",
	       st->bytes, st->bytes / n);
	printf("%12" PRIu64 "  bytes before the first sync point, not decodable (%.1f%%)\n",
	       st->bytes_before_sync, st->bytes ? 100.0 * st->bytes_before_sync / st->bytes : 0.0);
	printf("%12" PRIu64 "  decodes from a sync point, resyncs included (%.1f per sample)\n",
	       st->syncs, (double)st->syncs / n);
	printf("%12" PRIu64 "  samples without a sync point\n", w->nosync);
	printf("%12" PRIu64 "  bytes overlapping the CPU's previous snippet (%.1f%%)\n",
	       st->overlap, st->bytes ? 100.0 * st->overlap / st->bytes : 0.0);
	printf("%12" PRIu64 "  taken branches (%.1f per sample)\n", st->branches,
	       (double)st->branches / n);
	printf("%12" PRIu64 "  trace gaps\n", st->gaps);
	if (st->late)
		printf("%12" PRIu64 "  branches after the sample point (perf's own, left out)\n",
		       st->late);
	if (script__walker(w)) {
		printf("%12" PRIu64
		       "  snippets decoded by libipt: the walker does not handle them (%.1f%%)\n",
		       st->pt_fallbacks, 100.0 * st->pt_fallbacks / n);
		/* -v: with -j threads race to decode a block first. */
		if (verbose > 0)
			printf("%12" PRIu64 "  basic blocks the walker decoded (%" PRIu64
			       " evicted from a full block cache)\n", st->pt_blocks_built,
			       st->pt_blocks_evicted);
	}
	printf("%12" PRIu64 "  decode errors\n", w->errors);
	for (unsigned int e = 1; e < ARRAY_SIZE(st->errors_by_kind); e++) {
		if (st->errors_by_kind[e])
			printf("%12" PRIu64 "    %s\n", st->errors_by_kind[e],
			       auxsample_strerror(-(int)(AUXSAMPLE_ERR_BASE + e)));
	}
}

/*
 * -v: what decoding cost, the decoder's calls alone (the time each took
 * on the thread that made it: with -j 1 nothing else runs there): the
 * taken branches they walked (from the sync point, not only those kept),
 * per sample and per branch.
 */
static void script__print_cost(const struct script *s)
{
	double us = s->decode_ns / 1e3;

	fprintf(stderr, "[ decoding: %" PRIu64 " taken branches walked (%.1f a sample) in %.3f s: ",
		s->decoded, (double)s->decoded / s->decodes, us / 1e6);
	fprintf(stderr, "%.2f us a sample, %.2f ns a branch ]\n", us / s->decodes,
		s->decoded ? s->decode_ns / (double)s->decoded : 0.0);
	if (s->skims)
		fprintf(stderr, "[ the walker skimmed %" PRIu64 " decodes, walked %" PRIu64
			" of them again whole ]\n", s->skims, s->skims_lost);
}

/* -F: the sample's line, its event's fields checked when it is first seen. */
static int script__print_fields(struct script *s, struct thread *thread,
				struct perf_sample *sample, struct evsel *evsel,
				const struct auxsample_result *res)
{
	if (evsel != s->fields_checked && auxsample_print__check_fields(evsel, s->fields))
		return -EINVAL;
	s->fields_checked = evsel;
	auxsample_print__fields(stdout, &s->line, &s->walk.symcache, thread, sample, res,
				s->walk.d.config.type, s->fields);
	return 0;
}

static int script__sample(struct auxsample_walk *w, struct thread *thread,
			  struct perf_sample *sample, struct evsel *evsel,
			  const struct auxsample_result *res)
{
	struct script *s = container_of(w, struct script, walk);

	if (s->opts->stat)
		return auxsample_stat__add(&s->stat, sample, res);
	s->branches += res->nr > 0 ? res->nr : 0;
	s->decoded += res->stats->branches;
	s->decodes++;
	s->decode_ns += res->decode_ns;
	s->skims += res->stats->pt_skims;
	s->skims_lost += res->stats->pt_skims_lost;
	if (s->fields)
		return script__print_fields(s, thread, sample, evsel, res);
	if (s->opts->json)
		auxsample_print__json(stdout, &w->symcache, thread, sample, evsel, res);
	else
		auxsample_print__text(stdout, &s->line, &w->symcache, thread, sample, evsel, res);
	return 0;
}

static int script__fulltrace(struct auxsample_walk *w)
{
	struct script *s = container_of(w, struct script, walk);
	struct auxsample_fulltrace_opts opts = {
		.input	 = s->opts->input,
		.stat	 = s->opts->stat,
		.json	 = s->opts->json,
		.autofdo = s->opts->autofdo,
	};

	/* A file with a full trace and no AUX samples: nothing -F prints. */
	if (s->fields) {
		pr_err("perf auxsample script: -F prints AUX samples, and %s holds a full trace without them: perf auxsample script prints it without -F\n",
		       s->opts->input);
		return -EINVAL;
	}
	return auxsample_fulltrace__run(w->ft, w->session, &w->d.config, &opts);
}

static int script__done(struct auxsample_walk *w)
{
	struct script *s = container_of(w, struct script, walk);

	if (s->opts->stat) {
		script__print_stat(s);
		return 0;
	}
	fprintf(stderr, "[ %" PRIu64 " %s, %" PRIu64 " branches, %" PRIu64
		" without a sync point, %" PRIu64 " decode errors ]\n",
		w->samples, auxsample_walk__what(w), s->branches, w->nosync, w->errors);
	if (verbose > 0 && s->decodes)
		script__print_cost(s);
	return 0;
}

/*
 * Output a block at a time where it goes to a file or a pipe: stdio
 * buffers those by their block size (4 KiB), and a sample prints some 65
 * lines (3 to 5 KiB), so each cost a write(), which on the bench VM was
 * a quarter of a dense file's time a sample (bench/README.md).  A
 * terminal's stays line by line.  Static: stdio flushes it at exit.
 */
#define SCRIPT_OUTPUT_BUF	(128 << 10)

static void script__buffer_output(void)
{
	static char buf[SCRIPT_OUTPUT_BUF];

	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, buf, _IOFBF, sizeof(buf));
}

/*
 * ^C or SIGTERM stops reading events, as in perf script: the samples
 * read are printed whole and the output flushed, then perf dies of the
 * signal, as perf record does, so that a shell or a script sees it.  A
 * second one kills at once, should a decode not end.
 */
static volatile sig_atomic_t script_signal;

static void script__sig_handler(int sig)
{
	script_signal = sig;
	session_done = 1;
	signal(sig, SIG_DFL);
}

static int script__run(const struct script_opts *opts)
{
	struct script s = {
		.walk = {
			.cmd = opts->stat ? "stat" : "script",
			.input = opts->input,
			/* Statistics want the whole snippet decoded: depth 0. */
			.d.depth = opts->stat ? 0 : opts->depth,
			.threads = opts->threads,
			/* Statistics are of each snippet on its own. */
			.no_reuse = opts->stat || !opts->reuse,
			.window = opts->window,
			.sample = script__sample,
			.done = script__done,
			.fulltrace = script__fulltrace,
			.full_trace = opts->full_trace,
		},
		.opts = opts,
		.line = STRBUF_INIT,
	};
	int err;

	if (opts->fields && auxsample_print__parse_fields(opts->fields, &s.fields))
		return -1;
	script__buffer_output();
	signal(SIGINT, script__sig_handler);
	signal(SIGTERM, script__sig_handler);
	err = auxsample_walk__run(&s.walk);
	strbuf_release(&s.line);
	auxsample_stat__exit(&s.stat);
	if (script_signal)
		auxsample__die_of_signal(script_signal);
	return err;
}
#else
static int script__run(const struct script_opts *opts)
{
	pr_err("perf auxsample %s needs perf built with libipt or libopencsd (perf check feature auxsample)\n",
	       opts->stat ? "stat" : "script");
	return -1;
}
#endif

int cmd_auxsample_script(int argc, const char **argv, bool stat)
{
	struct script_opts opts = {
		.input = "perf.data",
		.depth = AUXSAMPLE_DEFAULT_DEPTH,
		.stat = stat,
		.reuse = true,
		.window = AUXSAMPLE_DEFAULT_WINDOW,
	};
	const char * const script_usage[] = { "perf auxsample script [<options>]", NULL };
	const char * const stat_usage[] = { "perf auxsample stat [<options>]", NULL };
	const char * const *usage = stat ? stat_usage : script_usage;
	const struct option options[] = {
		OPT_STRING('i', "input", &opts.input, "file", "input file name"),
		OPT_UINTEGER(0, "depth", &opts.depth, "branches per sample (default 64)"),
		OPT_BOOLEAN(0, "json", &opts.json, "one JSON object per sample (script)"),
		OPT_STRING('F', "fields", &opts.fields, "comm,pid,tid,cpu,ip,brstack,brstacksym",
			   "a line a sample of these fields, as perf script -F prints them (script)"),
		OPT_BOOLEAN(0, "reuse", &opts.reuse,
			    "decode the overlapping snippets of a CPU once (default: on)"),
		OPT_CALLBACK(0, "window-size", &opts.window, "size",
			     "trace before a sample beside a full trace (default 64K)",
			     auxsample__parse_size),
		OPT_UINTEGER('j', "threads", &opts.threads,
			     "decoding threads (default: one per online CPU; 1: decode inline)"),
		OPT_BOOLEAN(0, "full-trace", &opts.full_trace,
			    "decode the trace buffers, not AUX samples (default without them)"),
		OPT_BOOLEAN(0, "autofdo", &opts.autofdo,
			    "full trace as AutoFDO text: ranges and branches per binary (script)"),
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
	if (auxsample__check_window(opts.window) ||
	    auxsample__check_depth(stat ? "stat" : "script", opts.depth))
		return 1;
	if (opts.autofdo && (stat || opts.json)) {
		pr_err("perf auxsample: --autofdo is a perf auxsample script output of its own, without --json\n");
		return 1;
	}
	if (opts.fields && (stat || opts.json || opts.full_trace || opts.autofdo)) {
		pr_err("perf auxsample: -F is an output of perf auxsample script, of AUX samples, without --json, --full-trace or --autofdo\n");
		return 1;
	}
	if (opts.autofdo)
		opts.full_trace = true;
	return script__run(&opts) ? 1 : 0;
}
