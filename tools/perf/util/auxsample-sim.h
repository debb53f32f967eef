/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_SIM_H
#define __PERF_AUXSAMPLE_SIM_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * perf auxsample simulate: run a program under single-stepping and write
 * the perf.data that 'perf record -Aintel_pt -e instructions:u' would
 * write on a machine with Intel PT (or, with full_trace, 'perf record
 * -e intel_pt//u -e instructions:u'), plus the true branches of every
 * sample in <output>.truth.  SIGINT, SIGTERM and SIGHUP stop it as they
 * stop perf record: the program is let go and sent SIGTERM, and both
 * files are finished.
 */
/* How the program is run and watched. */
enum auxsample_sim_engine {
	SIM_ENGINE_DEFAULT,	/* valgrind where it is installed, else ptrace */
	SIM_ENGINE_PTRACE,	/* single-stepping: slow, no dependency */
	SIM_ENGINE_VALGRIND,	/* the auxsample Valgrind tool (auxsample-sim-vg.c) */
};

struct sim_opts {
	const char		*output;
	int			engine;		/* enum auxsample_sim_engine */
	u64			period;		/* user instructions per sample */
	u32			aux_sample_size;
	size_t			psb_period;	/* bytes between PSBs */
	bool			noretcomp;	/* no return compression */
	bool			tsc;		/* TSC in PSB+, timed decoding */
	bool			mtc;		/* MTC packets and TMA with TSC */
	unsigned int		mtc_period;	/* an MTC every 2^n CTC ticks */
	bool			cyc;		/* CYC packets */
	/*
	 * Full trace: what 'perf record -e intel_pt//u -e instructions:u'
	 * writes, the samples without AUX payload and each CPU's whole
	 * stream in PERF_RECORD_AUXTRACE buffers.
	 */
	bool			full_trace;
	/*
	 * PERF_SAMPLE_CPU in instructions:u's samples: perf record sets it
	 * only with -a, -C or --sample-cpu (or -A), so a per-task full trace
	 * has samples that do not say their CPU.
	 */
	bool			sample_cpu;
	u64			max_insns;	/* stop after that many, 0: no bound */
	unsigned long		duration;	/* stop after so many seconds, 0: none */
	int			progress;	/* enum auxsample_sim_progress_mode */
	/*
	 * Kernel and user traced, as perf record -Aintel_pt -e instructions
	 * (no :u) as root: the simulated kernel's code (auxsample-sim-kernel.c)
	 * is in the trace around syscalls and every PMI, its image is
	 * <output>.vmlinux, in the build-id cache too.
	 */
	bool			kernel;
	/*
	 * Tracepoint samples, as perf record -Aintel_pt -e sched:sched_switch
	 * -a: the simulated kernel's sched_switch fires in every syscall that
	 * blocks, and each hit is a sample (period 1, raw data, its IP the
	 * tracepoint's call site) instead of an instructions sample.  Implies
	 * @kernel.
	 */
	bool			tracepoint;
	/*
	 * The output is a directory, as perf record --kcore makes it: the
	 * simulated kernel's kallsyms and kcore in <output>/kcore_dir, and
	 * not in the build-id cache.  Implies @kernel.
	 */
	bool			kcore;
};

/*
 * The simulated CPU's caps/mtc_periods (a Skylake-SP's): which mtc_period
 * values it takes, and perf record's default among them.
 */
#define SIM_MTC_PERIODS		0x249
#define SIM_DEFAULT_MTC_PERIOD	3

/*
 * 0 when the program ran to its end or to a bound, the number of the
 * signal (SIGINT, SIGTERM, SIGHUP) that stopped it, or a negative errno.
 * The ground truth goes to <output>.truth (see auxsample-sim-truth.h).
 */
int auxsample_sim__run(const struct sim_opts *opts, int argc, const char **argv);

#endif /* __PERF_AUXSAMPLE_SIM_H */
