/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_BUILTIN_AUXSAMPLE_H
#define __PERF_BUILTIN_AUXSAMPLE_H

#include <stdbool.h>
#include <linux/types.h>

struct option;

/* What perf auxsample's commands share (builtin-auxsample.c). */
#define AUXSAMPLE_DEFAULT_DEPTH		64
/* Windows before samples: at most this much trace, as a snippet of that size. */
#define AUXSAMPLE_DEFAULT_WINDOW	(64 * 1024)

/* An OPT_CALLBACK for sizes: a number of bytes, or with B, K or M. */
int auxsample__parse_size(const struct option *opt, const char *str, int unset);
/* -1, said why, unless --window-size is one that windows can be. */
int auxsample__check_window(u64 size);
/* -1, said why, for --depth 0. */
int auxsample__check_depth(const char *cmd, unsigned int depth);
/* Stopped by @sig: die of it once the output is flushed, as perf record does. */
void auxsample__die_of_signal(int sig);

/* builtin-auxsample-script.c: perf auxsample script, and stat when @stat. */
int cmd_auxsample_script(int argc, const char **argv, bool stat);
/* builtin-auxsample-report.c: perf auxsample report. */
int cmd_auxsample_report(int argc, const char **argv);

#endif /* __PERF_BUILTIN_AUXSAMPLE_H */
