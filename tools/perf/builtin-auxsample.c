// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample: the AUX-sample toolbox.
 *
 *   perf auxsample script [<options>]
 *   perf auxsample stat [<options>]
 *   perf auxsample inject [<options>] -o <file>
 *   perf auxsample simulate [<options>] -- <command> [<args>]
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/kernel.h>
#include <subcmd/parse-options.h>

#include "builtin.h"
#include "builtin-auxsample.h"
#include "util/auxsample-config.h"
#include "util/auxsample-inject.h"
#include "util/auxsample-profile.h"
#include "util/auxsample-report.h"
#include "util/auxsample-sim.h"
#include "util/auxsample-sim-progress.h"
#include "util/data.h"
#include "util/debug.h"
#include "ui/progress.h"
#include "util/symbol.h"
#include "util/units.h"

#define SIM_DEFAULT_AUX_SAMPLE_SIZE	4096
#define SIM_DEFAULT_PSB_PERIOD		2048	/* sample mode's psb_period=0 */
#define SIM_DEFAULT_PERIOD		1000
#define SIM_MAX_AUX_SAMPLE_SIZE		(60 * 1024)	/* as perf record */

static const char * const auxsample_usage[] = {
	"perf auxsample script [<options>]",
	"perf auxsample stat [<options>]",
	"perf auxsample inject [<options>] -o <file>",
	"perf auxsample report [<options>]",
	"perf auxsample simulate [<options>] -- <command> [<args>]",
	"",
	"script     each sample's virtual LBR and call chain, as perf script shows them",
	"stat       samples, trace, sync points and decode errors: what decodes and why not",
	"inject     a copy with the virtual LBRs as branch stacks, for perf report -b, BOLT, AutoFDO",
	"report     hot branch edges, loops, basic blocks and calls of the virtual LBRs",
	"simulate   record a command's Intel PT AUX samples on a machine without Intel PT",
	"",
	"'perf help auxsample' or 'perf auxsample <command> -h' says more.",
	NULL
};

int auxsample__parse_size(const struct option *opt, const char *str, int unset)
{
	static struct parse_tag tags[] = {
		{ .tag = 'B', .mult = 1 }, { .tag = 'K', .mult = 1 << 10 },
		{ .tag = 'M', .mult = 1 << 20 }, { .tag = 0 },
	};
	unsigned long val;
	char *end;

	if (unset)
		return -1;
	val = strtoul(str, &end, 0);
	if (*end)
		val = parse_tag_value(str, tags);
	if (val == (unsigned long)-1 || val > UINT_MAX) {
		pr_err("bad size: %s\n", str);
		return -1;
	}
	*(u64 *)opt->value = val;
	return 0;
}

#define AUXSAMPLE_MAX_WINDOW		(16 * 1024 * 1024)

int auxsample__check_window(u64 size)
{
	if (size >= 256 && size <= AUXSAMPLE_MAX_WINDOW)
		return 0;
	pr_err("perf auxsample: --window-size must be from 256 bytes to 16M\n");
	return -1;
}

/* --depth 0 would decode every sample and show none of its branches. */
int auxsample__check_depth(const char *cmd, unsigned int depth)
{
	if (depth)
		return 0;
	pr_err("perf auxsample %s: --depth must be at least 1: it is the number of branches shown per sample\n",
	       cmd);
	return -1;
}

void auxsample__die_of_signal(int sig)
{
	fflush(NULL);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* One output: a perf.data, with call chains or not, or one of the profiles. */
static int inject__check_outputs(const struct auxsample_inject *inject)
{
	if (inject->bolt && inject->autofdo) {
		pr_err("perf auxsample inject: --bolt and --autofdo are two outputs: give one\n");
		return -1;
	}
	if ((inject->bolt || inject->autofdo) && inject->callchain) {
		pr_err("perf auxsample inject: -g adds call chains to a perf.data: not with --bolt or --autofdo\n");
		return -1;
	}
	return 0;
}

/* Most of it is the OPT_* table, as in upstream's cmd_ functions. */
static int cmd_auxsample_inject(int argc, const char **argv)
{
	struct auxsample_inject inject = {
		.input	= "perf.data",
		.depth	= AUXSAMPLE_REPORT_DEPTH,
		.output	= {
			.mode	= PERF_DATA_MODE_WRITE,
		},
	};
	const char * const usage[] = {
		"perf auxsample inject [<options>] -o <file>",
		NULL
	};
	const struct option options[] = {
		OPT_STRING('i', "input", &inject.input, "file", "input file name"),
		OPT_STRING('o', "output", &inject.output.path, "file", "output file name"),
		OPT_UINTEGER(0, "depth", &inject.depth,
			     "branches of the virtual LBR per sample (default 64)"),
		OPT_BOOLEAN('g', "callchain", &inject.callchain,
			    "add each snippet's call chain to samples recorded without one"),
		OPT_BOOLEAN('f', "force", &inject.force,
			    "overwrite the output file; don't complain about the input's owner"),
		OPT_UINTEGER('j', "threads", &inject.threads,
			     "decoding threads (default: one per online CPU; 1: decode inline)"),
		OPT_STRING(0, "bolt", &inject.bolt, "binary",
			   "write BOLT's pre-aggregated profile of the binary (perf2bolt --pa)"),
		OPT_BOOLEAN(0, "autofdo", &inject.autofdo,
			    "write AutoFDO text (simpleperf's) of every binary"),
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
	int err;

	argc = parse_options(argc, argv, options, usage, 0);
	if (argc)
		usage_with_options(usage, options);
	if (inject__check_outputs(&inject))
		return 1;
	if (!inject.output.path) {
		pr_err("perf auxsample inject: no output file: give it with -o\n");
		usage_with_options(usage, options);
	}
	if (auxsample__check_depth("inject", inject.depth))
		return 1;
	if (inject.bolt || inject.autofdo) {
		inject.profile = auxsample_profile__new();
		if (!inject.profile)
			return 1;
	}
	err = auxsample_inject__run(&inject);
	auxsample_profile__delete(inject.profile);
	return err ? 1 : 0;
}

/* A count of instructions: digits only, so that -1 is no huge count. */
static int parse_insns(const struct option *opt, const char *str, int unset)
{
	u64 *val = opt->value;
	char *end;

	if (unset) {
		*val = 0;
		return 0;
	}
	errno = 0;
	if (isdigit(*str)) {
		*val = strtoull(str, &end, 10);
		if (!*end && !errno)
			return 0;
	}
	pr_err("--%s expects a number of instructions, not '%s'\n", opt->long_name, str);
	return -1;
}

/* Seconds, or a number with s, m, h or d, as perf record --switch-output=<time>. */
static int parse_duration(const struct option *opt, const char *str, int unset)
{
	static struct parse_tag tags[] = {
		{ .tag = 's', .mult = 1 }, { .tag = 'm', .mult = 60 },
		{ .tag = 'h', .mult = 60 * 60 }, { .tag = 'd', .mult = 60 * 60 * 24 },
		{ .tag = 0 },
	};
	unsigned long *val = opt->value;
	char *end;

	if (unset) {
		*val = 0;
		return 0;
	}
	*val = isdigit(*str) ? strtoul(str, &end, 10) : (unsigned long)-1;
	if (*val != (unsigned long)-1 && *end)
		*val = parse_tag_value(str, tags);
	if (*val == (unsigned long)-1 || !*val) {
		pr_err("--duration expects a time of at least 1s (30, 30s, 5m, 2h), not '%s'\n",
		       str);
		return -1;
	}
	return 0;
}

static int parse_engine(const struct option *opt, const char *str, int unset)
{
	int *engine = opt->value;

	if (unset || !strcmp(str, "default"))
		*engine = SIM_ENGINE_DEFAULT;
	else if (!strcmp(str, "ptrace"))
		*engine = SIM_ENGINE_PTRACE;
	else if (!strcmp(str, "valgrind"))
		*engine = SIM_ENGINE_VALGRIND;
	else {
		pr_err("--engine is ptrace or valgrind, not '%s'\n", str);
		return -1;
	}
	return 0;
}

/*
 * The options together: each wrong use a usage error, as perf record's,
 * and the options that imply others set.
 */
static void simulate__check_opts(struct sim_opts *opts, u64 aux_size, u64 psb_period,
				 bool mtc_set, const char * const *usage,
				 const struct option *options)
{
	if (!opts->period)
		usage_with_options_msg(usage, options,
				       "-c must be at least 1: a sample every <n> user instructions");
	if (!aux_size || aux_size > SIM_MAX_AUX_SAMPLE_SIZE)
		usage_with_options_msg(usage, options,
				       "--aux-sample-size must be 1 to %d bytes, as perf record allows",
				       SIM_MAX_AUX_SAMPLE_SIZE);
	if (psb_period < 256)
		usage_with_options_msg(usage, options, "--psb-period must be at least 256 bytes");
	if (opts->tracepoint || opts->kcore)
		opts->kernel = true;
	/* The simulated kernel runs in the ptrace engine only. */
	if (opts->kernel && opts->engine == SIM_ENGINE_VALGRIND)
		usage_with_options_msg(usage, options,
				       "--kernel, --tracepoint and --kcore need --engine=ptrace: the Valgrind engine runs no simulated kernel");
	if (opts->kernel)
		opts->engine = SIM_ENGINE_PTRACE;
	/* As intel_pt/tsc=0/ would, --no-tsc leaves the MTCs out unless asked. */
	if (!opts->tsc && !mtc_set)
		opts->mtc = false;
	if (opts->mtc_period > 15 || !(SIM_MTC_PERIODS & (1U << opts->mtc_period)))
		usage_with_options_msg(usage, options,
				       "Invalid --mtc-period %u: the simulated CPU's valid values are 0,3,6,9",
				       opts->mtc_period);
	if (opts->mtc && !opts->tsc)
		usage_with_options_msg(usage, options,
				       "--mtc needs TSC packets (drop --no-tsc): MTC counts from the TSC in PSB+");
	if (opts->full_trace && !opts->tsc)
		usage_with_options_msg(usage, options,
				       "--full-trace needs TSC packets (drop --no-tsc): samples are placed in the trace by time");
	if (!strcmp(opts->output, "-"))
		usage_with_options_msg(usage, options,
				       "-o - : the simulator seeks in its output, which a pipe cannot do; write a file, then 'perf inject -i <file> -o -'");
	opts->aux_sample_size = aux_size;
	opts->psb_period = psb_period;
}

static int simulate__run(struct sim_opts *opts __maybe_unused, int argc __maybe_unused,
			 const char **argv __maybe_unused)
{
#ifdef HAVE_AUXSAMPLE_SIM
	int ret = auxsample_sim__run(opts, argc, argv);

	if (ret > 0)
		auxsample__die_of_signal(ret);	/* its files are whole */
	return ret ? -1 : 0;
#else
	pr_err("perf auxsample simulate needs x86-64 and perf built with libipt (perf check feature libipt)\n");
	return -1;
#endif
}

/* Most of it is the OPT_* table, as in upstream's cmd_ functions. */
static int cmd_auxsample_simulate(int argc, const char **argv)
{
	u64 aux_size = SIM_DEFAULT_AUX_SAMPLE_SIZE, psb_period = SIM_DEFAULT_PSB_PERIOD;
	bool progress = false, progress_set = false;
	/* perf record -Aintel_pt's intel_pt config: tsc, mtc, mtc_period=3. */
	struct sim_opts opts = {
		.output = "perf.data",
		.period = SIM_DEFAULT_PERIOD,
		.tsc = true,
		.mtc = true,
		.mtc_period = SIM_DEFAULT_MTC_PERIOD,
		.sample_cpu = true,
	};
	bool mtc_set = false;
	const char * const usage[] = {
		"perf auxsample simulate [<options>] -- <command> [<args>]",
		NULL
	};
	const struct option options[] = {
		OPT_STRING('o', "output", &opts.output, "file", "output file name"),
		OPT_CALLBACK('c', "count", &opts.period, "n", "user instructions between samples",
			     parse_insns),
		OPT_CALLBACK(0, "aux-sample-size", &aux_size, "size",
			     "bytes of trace per sample (default 4K)", auxsample__parse_size),
		OPT_CALLBACK(0, "psb-period", &psb_period, "size",
			     "bytes between PSB packets (default 2K, as sample mode)",
			     auxsample__parse_size),
		OPT_BOOLEAN(0, "noretcomp", &opts.noretcomp, "no return compression"),
		OPT_BOOLEAN_SET(0, "mtc", &opts.mtc, &mtc_set,
				"MTC timing packets and TMA (default; --no-mtc: TSC only)"),
		OPT_UINTEGER(0, "mtc-period", &opts.mtc_period,
			     "an MTC every 2^n crystal clock ticks (default 3)"),
		OPT_BOOLEAN(0, "cyc", &opts.cyc, "CYC cycle-accurate packets"),
		OPT_BOOLEAN(0, "tsc", &opts.tsc,
			    "TSC packets (--no-tsc: timeless, each sample decoded on its own)"),
		OPT_BOOLEAN(0, "full-trace", &opts.full_trace,
			    "full trace: no AUX samples, the whole trace in AUXTRACE buffers"),
		OPT_BOOLEAN(0, "kernel", &opts.kernel,
			    "also trace the simulated kernel, as record without :u (ptrace)"),
		OPT_BOOLEAN(0, "tracepoint", &opts.tracepoint,
			    "sched:sched_switch samples, one per hit (implies --kernel)"),
		OPT_BOOLEAN(0, "kcore", &opts.kcore,
			    "kcore in <output>/kcore_dir, as record --kcore (implies --kernel)"),
		OPT_BOOLEAN(0, "sample-cpu", &opts.sample_cpu,
			    "the CPU in samples (--no-sample-cpu: perf record without -a, -C)"),
		OPT_CALLBACK(0, "max-instructions", &opts.max_insns, "n",
			     "stop after that many user instructions", parse_insns),
		OPT_CALLBACK(0, "duration", &opts.duration, "time",
			     "stop after that long (seconds, or with s, m, h, d)", parse_duration),
		OPT_CALLBACK(0, "engine", &opts.engine, "ptrace|valgrind",
			     "how the program runs (default: valgrind where installed)",
			     parse_engine),
		OPT_BOOLEAN_SET(0, "progress", &progress, &progress_set,
				"show progress (default: on a terminal)"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END()
	};

	argc = parse_options(argc, argv, options, usage, PARSE_OPT_STOP_AT_NON_OPTION);
	if (!argc)
		usage_with_options_msg(usage, options,
				       "no command: name the program to simulate after --");
	opts.progress = !progress_set ? SIM_PROGRESS_AUTO : progress ? SIM_PROGRESS_ON :
		SIM_PROGRESS_OFF;
	simulate__check_opts(&opts, aux_size, psb_period, mtc_set, usage, options);
	return simulate__run(&opts, argc, argv);
}

/*
 * Decoding a large file takes a while: say how far it got on a terminal,
 * on stderr, as perf's TUI does for perf report.  perf session's reader
 * drives it ("Processing events...", by file offset).
 */
static int auxsample_progress__percent = -1;

static void auxsample_progress__update(struct ui_progress *p)
{
	int percent = p->total ? (int)(p->curr * 100 / p->total) : 0;

	if (percent == auxsample_progress__percent)
		return;
	auxsample_progress__percent = percent;
	fprintf(stderr, "\r[ perf auxsample: decoding, %3d%% of the file read ]", percent);
}

static void auxsample_progress__finish(void)
{
	if (auxsample_progress__percent >= 0)
		fprintf(stderr, "\r\033[K");
	auxsample_progress__percent = -1;
}

static struct ui_progress_ops auxsample_progress__ops = {
	.update	= auxsample_progress__update,
	.finish	= auxsample_progress__finish,
};

static void auxsample_progress__setup(bool output_to_stdout)
{
	if (quiet || verbose > 0 || !isatty(STDERR_FILENO) ||
	    (output_to_stdout && isatty(STDOUT_FILENO)))
		return;
	ui_progress__ops = &auxsample_progress__ops;
}

int cmd_auxsample(int argc, const char **argv)
{
	static const char * const subcommands[] = {
		"inject", "report", "script", "simulate", "stat", NULL
	};
	const struct option options[] = {
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END()
	};

	argc = parse_options_subcommand(argc, argv, options, subcommands,
					(const char **)auxsample_usage,
					PARSE_OPT_STOP_AT_NON_OPTION);
	if (!argc)
		usage_with_options(auxsample_usage, options);
	if (!strcmp(argv[0], "simulate"))
		return cmd_auxsample_simulate(argc, argv);
	auxsample_progress__setup(!strcmp(argv[0], "script"));
	if (!strcmp(argv[0], "script"))
		return cmd_auxsample_script(argc, argv, false);
	if (!strcmp(argv[0], "stat"))
		return cmd_auxsample_script(argc, argv, true);
	if (!strcmp(argv[0], "inject"))
		return cmd_auxsample_inject(argc, argv);
	if (!strcmp(argv[0], "report"))
		return cmd_auxsample_report(argc, argv);
	pr_err("unknown command: perf auxsample %s\n", argv[0]);
	usage_with_options(auxsample_usage, options);
	return -1;
}
