// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Real CoreSight ETMv4 and ETE traces (etm-snapshot.h) through what the
 * decoder tells besides its ring: the flow callback's every branch,
 * instruction and error, timestamps as trc_pkt_lister's, and another
 * thread's trace left out.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <auxsample/auxsample.h>
#include "tests.h"
#include "test-data.h"
#include "etm-snapshot.h"

/* What a flow callback saw: counts, and the last taken branches. */
#define FLOW_LAST	64

struct flow_seen {
	uint64_t		branches;
	uint64_t		insns;
	uint64_t		errors;
	uint64_t		gaps;
	struct auxsample_branch	last[FLOW_LAST];	/* a ring */
};

static void flow__record(const struct auxsample_flow *flow, void *context)
{
	struct flow_seen *seen = context;
	struct auxsample_branch *br;

	switch (flow->type) {
	case AUXSAMPLE_FLOW_RANGE:
		seen->insns += flow->insns;
		break;
	case AUXSAMPLE_FLOW_BRANCH:
		br = &seen->last[seen->branches++ % FLOW_LAST];
		br->from = flow->from;
		br->to = flow->to;
		br->kind = flow->kind;
		break;
	case AUXSAMPLE_FLOW_ERROR:
		seen->errors++;
		break;
	case AUXSAMPLE_FLOW_GAP:
		seen->gaps++;
		break;
	default:
		break;
	}
}

/*
 * One source decoded whole with a flow callback: it sees every branch,
 * instruction and error the statistics count, and its last branches are
 * the virtual LBR's.
 */
static int check_flow(struct snapshot *ss, unsigned int i)
{
	struct flow_seen *seen = calloc(1, sizeof(*seen));
	struct auxsample_decoder *dec = seen ? snapshot__new_decoder(ss, i, 1, snapshot__read,
								     flow__record, seen) : NULL;
	const struct auxsample_branch *br;
	struct auxsample_stats st;
	int n, ret = TEST_FAIL;

	if (!dec)
		goto out;
	n = auxsample_decoder__decode(dec, ss->trace, ss->trace_size, FLOW_LAST);
	auxsample_decoder__stats(dec, &st, sizeof(st));
	if (seen->branches != st.branches || seen->insns != st.insns ||
	    seen->errors != st.errors) {
		fprintf(stderr, "  ID %#x: flow saw %" PRIu64 " branches, %" PRIu64
			" instructions, %" PRIu64 " errors; stats %" PRIu64 ", %" PRIu64
			", %" PRIu64 "\n", ss->src[i].trace_id, seen->branches, seen->insns,
			seen->errors, st.branches, st.insns, st.errors);
		goto out;
	}
	auxsample_decoder__branches(dec, &br);
	ret = TEST_OK;
	/* The LBR's branches, newest first, gap markers aside, are the flow's last. */
	for (int k = 0, j = 0; k < n; k++) {
		const struct auxsample_branch *f;

		f = &seen->last[(seen->branches - 1 - j) % FLOW_LAST];
		if (br[k].kind == AUXSAMPLE_BR_GAP)
			continue;
		j++;
		if (f->from != br[k].from || f->to != br[k].to || f->kind != br[k].kind) {
			fprintf(stderr, "  ID %#x: branch %d: flow %#" PRIx64 " -> %#" PRIx64
				", LBR %#" PRIx64 " -> %#" PRIx64 "\n", ss->src[i].trace_id, k,
				f->from, f->to, br[k].from, br[k].to);
			ret = TEST_FAIL;
			break;
		}
	}
	pr_test("ID %#x: flow: %" PRIu64 " branches, %" PRIu64 " instructions, %" PRIu64
		" errors, %" PRIu64 " gaps\n", ss->src[i].trace_id, seen->branches, seen->insns,
		seen->errors, seen->gaps);
out:
	auxsample_decoder__delete(dec);
	free(seen);
	return ret;
}

static int test_flow(void)
{
	static const char * const names[] = {
		"a57_single_step", "juno_r1_1", "juno-uname-001", "test-file-mem-offsets",
	};
	int ret = TEST_OK;

	for (unsigned int k = 0; k < ARRAY_SIZE(names); k++) {
		struct snapshot *ss = snapshot__get("snapshots", names[k]);

		if (!ss)
			return TEST_SKIP;
		for (unsigned int i = 0; i < ss->nr_src; i++) {
			if (check_flow(ss, i) != TEST_OK)
				ret = TEST_FAIL;
		}
		snapshot__exit(ss);
	}
	return ret;
}

/* The threads the trace names (context IDs), and the branches decoded. */
struct ctx_seen {
	int64_t		pids[8];
	unsigned int	nr;
};

static void ctx__record(const struct auxsample_flow *flow, void *context)
{
	struct ctx_seen *seen = context;

	if (flow->type != AUXSAMPLE_FLOW_CONTEXT || flow->pid < 0)
		return;
	for (unsigned int k = 0; k < seen->nr; k++) {
		if (seen->pids[k] == flow->pid)
			return;
	}
	if (seen->nr < ARRAY_SIZE(seen->pids))
		seen->pids[seen->nr++] = flow->pid;
}

static int ctx__decode(struct snapshot *ss, unsigned int i, int64_t tid, struct ctx_seen *seen,
		       struct auxsample_stats *st)
{
	struct auxsample_decoder *dec = snapshot__new_decoder(ss, i, 1, snapshot__read,
							     ctx__record, seen);
	int n;

	if (!dec)
		return -1;
	auxsample_decoder__set_thread(dec, tid);
	n = auxsample_decoder__decode(dec, ss->trace, ss->trace_size, 64);
	auxsample_decoder__stats(dec, st, sizeof(*st));
	auxsample_decoder__delete(dec);
	return n;
}

/*
 * The thread decoded for: trace whose context ID names it decodes as with
 * any thread; trace of another thread is left out, none of its branches.
 */
static int check_thread(struct snapshot *ss, unsigned int i, unsigned int *checked)
{
	struct auxsample_stats all, mine, other;
	struct ctx_seen seen = { .nr = 0 }, ignore = { .nr = 0 };

	/* No sync point, no thread named, or several: nothing to tell apart. */
	if (ctx__decode(ss, i, -1, &seen, &all) < 0 || seen.nr != 1 || !all.branches)
		return TEST_OK;
	if (ctx__decode(ss, i, seen.pids[0], &ignore, &mine) < 0 ||
	    ctx__decode(ss, i, seen.pids[0] + 1, &ignore, &other) < 0)
		return TEST_FAIL;
	pr_test("ID %#x: thread %" PRId64 ": %" PRIu64 " branches; as %" PRId64
		": %" PRIu64 ", %" PRIu64 " left out; as another: %" PRIu64 ", %" PRIu64
		" left out\n", ss->src[i].trace_id, seen.pids[0], all.branches, seen.pids[0],
		mine.branches, mine.foreign, other.branches, other.foreign);
	if (mine.branches != all.branches || mine.foreign || mine.errors != all.errors)
		return TEST_FAIL;
	if (!other.foreign || other.branches >= all.branches)
		return TEST_FAIL;
	(*checked)++;
	return TEST_OK;
}

static const char * const perfdata_files[] = {
	"perf_etm.data", "perf_with_unformatted_trace.data", "perf_kernel.data", NULL,
};

static int test_thread(void)
{
	static const char * const names[] = {
		"a57_single_step", "juno_r1_1", "juno-uname-001", "test-file-mem-offsets",
	};
	unsigned int checked = 0;
	int ret = TEST_OK;

	for (unsigned int k = 0; k < ARRAY_SIZE(names); k++) {
		struct snapshot *ss = snapshot__get("snapshots", names[k]);

		if (!ss)
			return TEST_SKIP;
		for (unsigned int i = 0; i < ss->nr_src; i++) {
			if (check_thread(ss, i, &checked) != TEST_OK) {
				fprintf(stderr, "  %s ID %#x: not left out as another thread's\n",
					names[k], ss->src[i].trace_id);
				ret = TEST_FAIL;
			}
		}
		snapshot__exit(ss);
	}
	/* simpleperf's recordings name the traced program's threads. */
	for (const char * const *name = perfdata_files; *name; name++) {
		struct snapshot *bufs[MAX_BUFFERS];
		unsigned int nr = 0;

		if (perfdata__load(*name, bufs, &nr))
			continue;
		for (unsigned int b = 0; b < nr; b++) {
			for (unsigned int i = 0; i < bufs[b]->nr_src; i++) {
				if (check_thread(bufs[b], i, &checked) != TEST_OK) {
					fprintf(stderr, "  %s buffer %u ID %#x: %s\n", *name, b,
						bufs[b]->src[i].trace_id,
						"not left out as another thread's");
					ret = TEST_FAIL;
				}
			}
			snapshot__exit(bufs[b]);
		}
	}
	if (ret == TEST_OK && !checked) {
		test_skip_reason = "no snapshot names one thread in its context IDs";
		return TEST_SKIP;
	}
	return ret;
}

/*
 * Timestamps: the flow's TIMESTAMP records of one source, against the
 * TIMESTAMP elements (and timestamps other elements carry, "TS=") that
 * trc_pkt_lister prints, at the same packet index and of the same value.
 * Each keeps the number of taken branches the flow had shown before it.
 */
#define MAX_TS		4096

struct ts_seen {
	uint64_t		offset[MAX_TS];
	uint64_t		value[MAX_TS];
	uint64_t		branches_before[MAX_TS];
	unsigned int		nr;
	bool			overflow;
	uint64_t		branches;
	struct auxsample_branch	*br;		/* every taken branch, in order */
	size_t			cap;
};

static void ts__record(const struct auxsample_flow *flow, void *context)
{
	struct ts_seen *ts = context;

	if (flow->type == AUXSAMPLE_FLOW_BRANCH) {
		if (ts->branches == ts->cap) {
			size_t cap = ts->cap ? ts->cap * 2 : 4096;
			struct auxsample_branch *br = realloc(ts->br, cap * sizeof(*br));

			if (!br) {
				ts->overflow = true;
				return;
			}
			ts->br = br;
			ts->cap = cap;
		}
		ts->br[ts->branches].from = flow->from;
		ts->br[ts->branches].to = flow->to;
		ts->br[ts->branches].kind = flow->kind;
		ts->branches++;
		return;
	}
	if (flow->type != AUXSAMPLE_FLOW_TIMESTAMP)
		return;
	if (ts->nr == MAX_TS) {
		ts->overflow = true;
		return;
	}
	ts->offset[ts->nr] = flow->from;
	ts->value[ts->nr] = flow->to;
	ts->branches_before[ts->nr++] = ts->branches;
}

static int ts__decode(struct snapshot *ss, unsigned int i, struct ts_seen *ts, bool code)
{
	struct auxsample_decoder *dec = snapshot__new_decoder(ss, i, 1,
							     code ? snapshot__read : read_nothing,
							     ts__record, ts);
	int n;

	if (!dec)
		return -1;
	n = auxsample_decoder__decode(dec, ss->trace, ss->trace_size, 0);
	auxsample_decoder__delete(dec);
	return n < 0 && n != -AUXSAMPLE_ERR_NOSYNC ? -1 : 0;
}

/* trc_pkt_lister's timestamps of trace ID @id (every line, if @raw). */
static int ts__expected(const char *name, unsigned int id, bool raw, struct ts_seen *x)
{
	char path[2048], line[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/" OPENCSD "/expected/%s.ppl", data_dir(), name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		const char *ts = strstr(line, "TS=0x");
		uint64_t idx, value;
		unsigned int lid;

		if (!ts || !strstr(line, "OCSD_GEN_TRC_ELEM_") ||
		    sscanf(line, "Idx:%" SCNu64 "; ID:%x;", &idx, &lid) != 2 ||
		    sscanf(ts, "TS=0x%" SCNx64, &value) != 1 || (!raw && lid != id))
			continue;
		if (x->nr == MAX_TS) {
			fclose(f);
			return -1;
		}
		x->offset[x->nr] = idx;
		x->value[x->nr++] = value;
	}
	fclose(f);
	return 0;
}

/*
 * The trace up to a timestamp, as a window that ends there (on the frame
 * before it, in formatted trace), decodes to the branches the whole
 * buffer shows before that timestamp, and at most the one still open
 * there, whose target the window cannot know.
 */
static int check_window_at_ts(struct snapshot *ss, unsigned int i, const struct ts_seen *ts,
			      unsigned int k, uint64_t *compared)
{
	struct auxsample_decoder *dec = snapshot__decoder(ss, i, 1);
	size_t end = ts->offset[k] - (ss->formatted ? ts->offset[k] % 16 : 0);
	uint64_t before = ts->branches_before[k];
	const struct auxsample_branch *br;
	int n, ret = TEST_OK;
	uint64_t j = 0;

	if (!dec)
		return TEST_FAIL;
	n = auxsample_decoder__decode(dec, ss->trace, end, 1U << 20);
	auxsample_decoder__branches(dec, &br);
	for (int b = n - 1; b >= 0 && ret == TEST_OK; b--, j++) {
		const struct auxsample_branch *f = j < ts->branches ? &ts->br[j] : NULL;

		if (br[b].kind == AUXSAMPLE_BR_GAP) {
			j--;
			continue;
		}
		if (!f || f->from != br[b].from || f->kind != br[b].kind ||
		    (b && f->to != br[b].to))
			ret = TEST_FAIL;
	}
	/* Formatted: the frame cut may leave out a few before the timestamp. */
	if (j > before + 1 || (!ss->formatted && j < before))
		ret = TEST_FAIL;
	if (ret != TEST_OK)
		fprintf(stderr, "  ID %#x: window [0, %zu) before timestamp %u: %" PRIu64
			" branches, the whole buffer %" PRIu64 " before it\n",
			ss->src[i].trace_id, end, k, j, before);
	*compared += j;
	auxsample_decoder__delete(dec);
	return ret;
}

static int check_timestamps(const char *subdir, const char *name, const char *expected,
			    unsigned int *total)
{
	uint64_t compared = 0;
	struct snapshot *ss = snapshot__get(subdir, name);
	struct ts_seen *ts = calloc(1, sizeof(*ts)), *nocode = calloc(1, sizeof(*nocode));
	struct ts_seen *x = calloc(1, sizeof(*x));
	int ret = TEST_FAIL;

	if (!ss) {
		ret = TEST_SKIP;
		goto out;
	}
	for (unsigned int i = 0; ts && nocode && x && i < ss->nr_src; i++) {
		unsigned int id = ss->src[i].trace_id;

		free(ts->br);
		free(nocode->br);
		memset(ts, 0, sizeof(*ts));
		memset(nocode, 0, sizeof(*nocode));
		memset(x, 0, sizeof(*x));
		if (ts__expected(expected, id, !ss->formatted, x) || ts__decode(ss, i, ts, true) ||
		    ts__decode(ss, i, nocode, false) || ts->overflow || nocode->overflow) {
			fprintf(stderr, "  %s ID %#x: cannot decode or read %s.ppl\n", name, id,
				expected);
			goto out;
		}
		pr_test("%s ID %#x: %u timestamps, %u expected, %u without code\n", name, id,
			ts->nr, x->nr, nocode->nr);
		/* Where they are and what they say needs no code: a window scan reads none. */
		if (ts->nr != x->nr || nocode->nr != x->nr ||
		    memcmp(ts->offset, x->offset, x->nr * sizeof(x->offset[0])) ||
		    memcmp(ts->value, x->value, x->nr * sizeof(x->value[0])) ||
		    memcmp(nocode->offset, x->offset, x->nr * sizeof(x->offset[0])) ||
		    memcmp(nocode->value, x->value, x->nr * sizeof(x->value[0]))) {
			fprintf(stderr,
				"  %s ID %#x: %u timestamps (%u without code), expected %u\n",
				name, id, ts->nr, nocode->nr, x->nr);
			goto out;
		}
		for (unsigned int k = 1; k < ts->nr; k++) {
			if (ts->value[k] < ts->value[k - 1] || ts->offset[k] <= ts->offset[k - 1]) {
				fprintf(stderr, "  %s ID %#x: timestamp %u goes back\n",
					name, id, k);
				goto out;
			}
		}
		for (unsigned int k = 0; k < ts->nr; k++) {
			if (check_window_at_ts(ss, i, ts, k, &compared) != TEST_OK)
				goto out;
		}
		*total += ts->nr;
	}
	pr_test("%s: %" PRIu64 " branches of windows cut at timestamps compared\n", name,
		compared);
	ret = ts && nocode && x ? TEST_OK : TEST_FAIL;
out:
	if (ts)
		free(ts->br);
	if (nocode)
		free(nocode->br);
	free(ts);
	free(nocode);
	free(x);
	if (ss)
		snapshot__exit(ss);
	return ret;
}

static int test_timestamps(void)
{
	unsigned int total = 0;
	int ret = check_timestamps("snapshots", "a57_single_step", "a57_single_step", &total);

	if (ret == TEST_OK)
		ret = check_timestamps("snapshots-ete", "ts_marker", "ete-ts_marker", &total);
	if (ret == TEST_OK && !total) {
		fprintf(stderr, "  no timestamp in the snapshots\n");
		ret = TEST_FAIL;
	}
	pr_test("%u timestamps checked\n", total);
	return ret;
}

const struct test tests_etm_flow[] = {
	{ "real ETM, the flow callback sees every branch, instruction and error", test_flow },
	{ "real ETM/ETE timestamps as trc_pkt_lister's, and windows cut at them", test_timestamps },
	{ "real ETM, another thread's trace is left out", test_thread },
	{ NULL, NULL },
};
