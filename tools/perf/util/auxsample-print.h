/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_PRINT_H
#define __PERF_AUXSAMPLE_PRINT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

struct auxsample_addr;
struct auxsample_branch;
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

/*
 * perf script -F's fields that perf auxsample script -F prints, each as
 * perf script prints it: what reads perf script's text reads this.
 */
#define AUXSAMPLE_FIELD_COMM		(1U << 0)
#define AUXSAMPLE_FIELD_PID		(1U << 1)
#define AUXSAMPLE_FIELD_TID		(1U << 2)
#define AUXSAMPLE_FIELD_CPU		(1U << 3)
#define AUXSAMPLE_FIELD_IP		(1U << 4)
#define AUXSAMPLE_FIELD_BRSTACK		(1U << 5)
#define AUXSAMPLE_FIELD_BRSTACKSYM	(1U << 6)

/* A -F list ("pid,ip,brstack") into @fields: 0, or -EINVAL said with pr_err(). */
int auxsample_print__parse_fields(const char *list, unsigned int *fields);
/* Whether @evsel's samples have what @fields prints: 0, or -EINVAL said. */
int auxsample_print__check_fields(struct evsel *evsel, unsigned int fields);

/*
 * A decoded sample as perf script -F @fields prints the sample that perf
 * auxsample inject writes for it (its virtual LBR as the branch stack,
 * @trace_type's branch kinds as perf's types): one line.
 */
void auxsample_print__fields(FILE *fp, struct strbuf *sb, struct auxsample_symcache *cache,
			     struct thread *thread, struct perf_sample *sample,
			     const struct auxsample_result *res, u32 trace_type,
			     unsigned int fields);

/* The perf branch type (PERF_BR_*) of a decoded branch, from a @trace_type trace. */
u8 auxsample_branch__perf_type(const struct auxsample_branch *br, u32 trace_type);

#endif /* __PERF_AUXSAMPLE_PRINT_H */
