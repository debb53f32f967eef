// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample: the AUX-sample toolbox.
 *
 *   perf auxsample simulate [<options>] -- <command> [<args>]
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kernel.h>
#include <subcmd/parse-options.h>

#include "builtin.h"
#include "util/auxsample-script.h"
#include "util/auxsample-sim.h"
#include "util/debug.h"
#include "util/units.h"

#define SIM_DEFAULT_AUX_SAMPLE_SIZE	4096
#define SIM_DEFAULT_PSB_PERIOD		2048	/* sample mode's psb_period=0 */
#define SIM_DEFAULT_PERIOD		1000
#define SIM_MAX_AUX_SAMPLE_SIZE		(60 * 1024)	/* as perf record */

static const char * const auxsample_usage[] = {
	"perf auxsample script [<options>]",
	"perf auxsample stat [<options>]",
	"perf auxsample report [<options>]",
	"perf auxsample simulate [<options>] -- <command> [<args>]",
	NULL
};

#define AUXSAMPLE_DEFAULT_DEPTH	64

static int cmd_auxsample_script(int argc, const char **argv, bool stat)
{
	struct auxsample_script_opts opts = {
		.input = "perf.data",
		.depth = AUXSAMPLE_DEFAULT_DEPTH,
		.stat = stat,
	};
	const char * const script_usage[] = { "perf auxsample script [<options>]", NULL };
	const char * const stat_usage[] = { "perf auxsample stat [<options>]", NULL };
	const char * const *usage = stat ? stat_usage : script_usage;
	const struct option options[] = {
		OPT_STRING('i', "input", &opts.input, "file", "input file name"),
		OPT_UINTEGER(0, "depth", &opts.depth, "branches per sample (default 64)"),
		OPT_BOOLEAN(0, "json", &opts.json, "one JSON object per sample (script)"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END()
	};

	argc = parse_options(argc, argv, options, usage, 0);
	if (argc)
		usage_with_options(usage, options);
#ifdef HAVE_AUXSAMPLE_SUPPORT
	return auxsample_script__run(&opts) ? 1 : 0;
#else
	pr_err("perf auxsample %s needs perf built with libipt and libopencsd (perf check feature auxsample)\n",
	       stat ? "stat" : "script");
	return 1;
#endif
}

static int cmd_auxsample_report(int argc, const char **argv)
{
	struct auxsample_hot_opts opts = {
		.input = "perf.data",
		.depth = AUXSAMPLE_DEFAULT_DEPTH,
		.max_entries = 20,
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
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END()
	};

	argc = parse_options(argc, argv, options, usage, 0);
	if (argc)
		usage_with_options(usage, options);
#ifdef HAVE_AUXSAMPLE_SUPPORT
	return auxsample_hot__run(&opts) ? 1 : 0;
#else
	pr_err("perf auxsample report needs perf built with libipt and libopencsd (perf check feature auxsample)\n");
	return 1;
#endif
}

static int parse_size(const struct option *opt, const char *str, int unset)
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

static int cmd_auxsample_simulate(int argc, const char **argv)
{
	u64 aux_size = SIM_DEFAULT_AUX_SAMPLE_SIZE, psb_period = SIM_DEFAULT_PSB_PERIOD;
	struct sim_opts opts = {
		.output = "perf.data",
		.period = SIM_DEFAULT_PERIOD,
		.tsc = true,
	};
	const char * const usage[] = {
		"perf auxsample simulate [<options>] -- <command> [<args>]",
		NULL
	};
	const struct option options[] = {
		OPT_STRING('o', "output", &opts.output, "file", "output file name"),
		OPT_U64('c', "count", &opts.period, "user instructions between samples"),
		OPT_CALLBACK(0, "aux-sample-size", &aux_size, "size",
			     "bytes of trace per sample (default 4K)", parse_size),
		OPT_CALLBACK(0, "psb-period", &psb_period, "size",
			     "bytes between PSB packets (default 2K, as sample mode)", parse_size),
		OPT_BOOLEAN(0, "noretcomp", &opts.noretcomp, "no return compression"),
		OPT_BOOLEAN(0, "mtc", &opts.mtc, "MTC timing packets (mtc_period=3), TMA in PSB+"),
		OPT_BOOLEAN(0, "cyc", &opts.cyc, "CYC cycle-accurate packets, CBR in PSB+"),
		OPT_BOOLEAN(0, "tsc", &opts.tsc,
			    "TSC packets (--no-tsc: timeless, each sample decoded on its own)"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END()
	};

	argc = parse_options(argc, argv, options, usage, PARSE_OPT_STOP_AT_NON_OPTION);
	if (!argc)
		usage_with_options(usage, options);
	if (!opts.period) {
		pr_err("-c must be at least 1\n");
		return -EINVAL;
	}
	if (!aux_size || aux_size > SIM_MAX_AUX_SAMPLE_SIZE) {
		pr_err("--aux-sample-size must be 1 to %d bytes, as perf record allows\n",
		       SIM_MAX_AUX_SAMPLE_SIZE);
		return -EINVAL;
	}
	if (psb_period < 256) {
		pr_err("--psb-period must be at least 256 bytes\n");
		return -EINVAL;
	}
	if (opts.mtc && !opts.tsc) {
		pr_err("--mtc needs TSC packets: MTC counts from the TSC in PSB+\n");
		return -EINVAL;
	}
	opts.aux_sample_size = aux_size;
	opts.psb_period = psb_period;
#ifdef HAVE_AUXSAMPLE_SIM
	return auxsample_sim__run(&opts, argc, argv) ? 1 : 0;
#else
	pr_err("perf auxsample simulate needs x86-64 and perf built with libipt and libopencsd (perf check feature auxsample)\n");
	return 1;
#endif
}

int cmd_auxsample(int argc, const char **argv)
{
	static const char * const subcommands[] = {
		"report", "script", "simulate", "stat", NULL
	};
	const struct option options[] = {
		OPT_INCR('v', "verbose", &verbose, "be more verbose"),
		OPT_END()
	};

	argc = parse_options_subcommand(argc, argv, options, subcommands,
					(const char **)auxsample_usage, PARSE_OPT_STOP_AT_NON_OPTION);
	if (!argc)
		usage_with_options(auxsample_usage, options);
	if (!strcmp(argv[0], "simulate"))
		return cmd_auxsample_simulate(argc, argv);
	if (!strcmp(argv[0], "script"))
		return cmd_auxsample_script(argc, argv, false);
	if (!strcmp(argv[0], "stat"))
		return cmd_auxsample_script(argc, argv, true);
	if (!strcmp(argv[0], "report"))
		return cmd_auxsample_report(argc, argv);
	pr_err("unknown command: perf auxsample %s\n", argv[0]);
	usage_with_options(auxsample_usage, options);
	return -1;
}
