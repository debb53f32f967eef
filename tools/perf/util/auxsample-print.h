/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_PRINT_H
#define __PERF_AUXSAMPLE_PRINT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

struct auxsample_addr;
struct auxsample_result;
struct auxsample_symcache;
struct evsel;
struct perf_sample;
struct strbuf;
struct thread;

/*
 * A decoded sample as perf auxsample script shows it: a line for the
 * sample, one for each branch of its virtual LBR, one for each caller of
 * its call chain, with their symbols (from @cache), built in @sb and
 * written to @fp at once.
 */
void auxsample_print__text(FILE *fp, struct strbuf *sb, struct auxsample_symcache *cache,
			   struct thread *thread, struct perf_sample *sample, struct evsel *evsel,
			   const struct auxsample_result *res);

/*
 * The same as one JSON object on a line.  Every string goes through
 * perf's JSON writer, output_json_string() (data-convert.h): the one
 * escaper of perf auxsample's JSON.
 */
void auxsample_print__json(FILE *fp, struct auxsample_symcache *cache, struct thread *thread,
			   struct perf_sample *sample, struct evsel *evsel,
			   const struct auxsample_result *res);

/* "name+0x<off>" (or "name" without @with_off) as one JSON string. */
void auxsample_print__json_sym(FILE *fp, const char *name, u64 off, bool with_off);

/*
 * "<key>":address,"<key>_sym":symbol,"<key>_dso":file,"<key>_off":offset in
 * the file, each maybe null: an address as perf auxsample report keys it.
 */
void auxsample_print__json_addr(FILE *fp, const char *key, const struct auxsample_addr *a,
				bool offset);

#endif /* __PERF_AUXSAMPLE_PRINT_H */
