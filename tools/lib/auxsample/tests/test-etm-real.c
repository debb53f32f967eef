// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Real CoreSight ETMv4 and ETE traces: OpenCSD's test snapshots
 * (../shared/data/etm/opencsd), decoded whole and checked against the
 * branches implied by trc_pkt_lister's output (expected/<name>.ppl), and
 * cut into windows, as AUX samples are, checked against the whole decode.
 *
 * Each trace ID is decoded by a decoder of its own, configured with that
 * one source: a sample belongs to one CPU, and branches and call stacks of
 * several CPUs interleaved in one ring would mean nothing.  A decoder with
 * all the sources is checked to find the sum of what they find alone.
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

/*
 * What trc_pkt_lister's elements imply for one trace ID, by the rules
 * that etm.c follows (see there): a range marked E whose last instruction,
 * at B - S, is a branch gives a branch from B - S to what comes next, an
 * exception an "intr" branch from its return address to its vector.  A
 * target that no element names (an exception that does not say it was
 * taken at the branch target, trace off, lost sync, end of trace) is, for
 * an indirect branch, the address in the first address packet that
 * trc_pkt_lister lists after the branch's atom packet, when no packet but
 * timestamps, cycle counts, contexts, commits, events and exception
 * returns comes between; else it is unknown.
 */
struct exp_branch {
	uint64_t	from;
	uint64_t	to;
	unsigned int	kind;
	bool		known;
};

#define PKT_TARGETS	16

struct expect {
	struct exp_branch	*br;
	size_t			nr;
	size_t			cap;
	uint64_t		insns;
	uint64_t		nacc;
	uint64_t		overflows;
	uint64_t		taken;		/* branches from E ranges */
	uint64_t		by_packet;	/* targets only a packet names */
	bool			pending;
	struct exp_branch	open;
	bool			open_indirect;
	uint64_t		open_atom;	/* the Idx of its atom packet */
	/* the first address packet after each of the last atom packets */
	uint64_t		atom_idx[PKT_TARGETS];
	uint64_t		atom_addr[PKT_TARGETS];
	unsigned int		nr_atoms;	/* with an address, all told */
	uint64_t		atom;		/* the last atom packet */
	bool			atom_open;	/* nothing else since it */
};

static int expect__add(struct expect *x, uint64_t to, bool known)
{
	if (!x->pending)
		return 0;
	x->pending = false;
	for (unsigned int i = 0; !known && x->open_indirect && i < PKT_TARGETS &&
	     i < x->nr_atoms; i++) {
		unsigned int k = (x->nr_atoms - 1 - i) % PKT_TARGETS;

		if (x->atom_idx[k] == x->open_atom) {
			to = x->atom_addr[k];
			known = true;
			x->by_packet++;
		}
	}
	if (x->nr == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 4096;
		struct exp_branch *br = realloc(x->br, cap * sizeof(*br));

		if (!br)
			return -1;
		x->br = br;
		x->cap = cap;
	}
	x->open.to = known ? to : 0;
	x->open.known = known;
	x->br[x->nr++] = x->open;
	return 0;
}

static unsigned int ppl_kind(const char *type, const char *rest)
{
	if (!strcmp(type, "BR")) {
		if (strstr(rest, "b+link"))
			return AUXSAMPLE_BR_CALL;
		return strstr(rest, "<cond>") ? AUXSAMPLE_BR_COND : AUXSAMPLE_BR_JUMP;
	}
	if (strstr(rest, "b+link"))
		return AUXSAMPLE_BR_IND_CALL;
	if (strstr(rest, "A64:eret"))
		return AUXSAMPLE_BR_FAR;
	if (strstr(rest, "A64:ret") || strstr(rest, "V7:impl ret"))
		return AUXSAMPLE_BR_RET;
	return AUXSAMPLE_BR_IND_JUMP;
}

static int expect__range(struct expect *x, uint64_t idx, const char *elem)
{
	uint64_t st, en, num;
	unsigned int sz;
	const char *p = strstr(elem, "(ISA=");
	char exec, type[8];

	/* "... (ISA=A64) E BR <cond>)": after the ISA, taken or not, and type. */
	p = p ? strchr(p, ')') : NULL;
	if (sscanf(elem, "INSTR_RANGE(exec range=0x%" SCNx64 ":[0x%" SCNx64 "] num_i(%" SCNu64
		   ") last_sz(%u)", &st, &en, &num, &sz) != 4 || !p ||
	    sscanf(p + 1, " %c %7s", &exec, type) != 2)
		return -1;
	if (expect__add(x, st, true))
		return -1;
	x->insns += num;
	if (exec != 'E' || (strcmp(type, "BR") && strcmp(type, "iBR")))
		return 0;
	x->taken++;
	x->pending = true;
	x->open.from = en - sz;
	x->open.kind = ppl_kind(type, p + 4);
	x->open_indirect = !strcmp(type, "iBR");
	x->open_atom = idx;
	return 0;
}

static int expect__exception(struct expect *x, const char *elem)
{
	uint64_t ret;

	if (sscanf(elem, "EXCEPTION(pref ret addr:0x%" SCNx64, &ret) != 1)
		return -1;
	if (expect__add(x, ret, strstr(elem, "prev br tgt")))
		return -1;
	x->pending = true;
	x->open.from = ret;
	x->open.kind = AUXSAMPLE_BR_INTR;
	x->open_indirect = false;
	return 0;
}

static int expect__element(struct expect *x, uint64_t idx, const char *elem)
{
	uint64_t addr;

	if (!strncmp(elem, "INSTR_RANGE(", 12))
		return expect__range(x, idx, elem);
	if (!strncmp(elem, "EXCEPTION(", 10))
		return expect__exception(x, elem);
	if (!strncmp(elem, "ADDR_NACC(", 10)) {
		if (sscanf(elem, "ADDR_NACC( 0x%" SCNx64, &addr) != 1)
			return -1;
		x->nacc++;
		return expect__add(x, addr, true);
	}
	if (!strncmp(elem, "NO_SYNC", 7) || !strncmp(elem, "TRACE_ON", 8) ||
	    !strncmp(elem, "EO_TRACE", 8) || !strncmp(elem, "ADDR_UNKNOWN", 12) ||
	    !strncmp(elem, "I_RANGE_NOPATH", 14))
		return expect__add(x, 0, false);
	return 0;
}

static bool pkt_is(const char *name, const char * const *names)
{
	for (; *names; names++) {
		if (!strncmp(name, *names, strlen(*names)))
			return true;
	}
	return false;
}

/* A packet line, "[0x.. ];\tI_ADDR_S_IS0 : ...; Addr=0x...": the address after an atom. */
static void expect__packet(struct expect *x, uint64_t idx, const char *line)
{
	static const char * const aside[] = {
		"I_TIMESTAMP ", "I_CCNT_F", "I_CTXT ", "I_COMMIT ", "I_EVENT ", "I_IGNORE ",
		"I_EXCEPT_RTN ", NULL,
	};
	static const char * const speculative[] = { "I_CANCEL_", "I_MISPREDICT ", NULL };
	const char *name = strstr(line, "];\tI_"), *a;
	unsigned int k = x->nr_atoms % PKT_TARGETS;

	if (!name)
		return;
	name += 3;
	if (!strncmp(name, "I_OVERFLOW ", 11))
		x->overflows++;
	if (!strncmp(name, "I_ATOM_F", 8)) {
		x->atom = idx;
		x->atom_open = true;
	} else if (!strncmp(name, "I_ADDR_", 7)) {
		a = strstr(name, "Addr=0x");
		if (x->atom_open && a && sscanf(a, "Addr=0x%" SCNx64, &x->atom_addr[k]) == 1) {
			x->atom_idx[k] = x->atom;
			x->nr_atoms++;
		}
		x->atom_open = false;
	} else if (!pkt_is(name, aside)) {
		if (pkt_is(name, speculative))
			x->nr_atoms = 0;
		x->atom_open = false;
	}
}

/*
 * expected/<name>.ppl or .ppl.gz, into @x[trace ID]; a raw buffer has one
 * source, whose lines all go to @x[@raw_id].
 */
static int expect__load(struct expect *x, const char *name, int raw_id)
{
	char path[2048], cmd[2200], line[1024];
	bool gz = false;
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/" OPENCSD "/expected/%s.ppl", data_dir(), name);
	f = fopen(path, "r");
	if (!f) {
		/* No zlib in the tests: zcat reads it. */
		snprintf(cmd, sizeof(cmd), "zcat '%s.gz' 2>/dev/null", path);
		f = popen(cmd, "r");
		gz = true;
	}
	if (!f)
		return -1;
	while (!err && fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "; ID:");
		unsigned int id;
		uint64_t idx;

		if (sscanf(line, "Idx:%" SCNu64 ";", &idx) != 1 || !p ||
		    sscanf(p, "; ID:%x;", &id) != 1)
			continue;
		id = raw_id >= 0 ? (unsigned int)raw_id : id % NR_IDS;
		p = strstr(p, "OCSD_GEN_TRC_ELEM_");
		if (p)
			err = expect__element(&x[id], idx, p + 18);
		else
			expect__packet(&x[id], idx, line);
	}
	if (gz)
		err |= pclose(f) ? -1 : 0;
	else
		fclose(f);
	return err;
}

static const char *kind_name(unsigned int kind)
{
	return auxsample_branch_kind__name(kind);
}

/* The decoder's branches, oldest first and gaps left out, against @x. */
static int compare_branches(const struct expect *x, const struct auxsample_branch *br, int n,
			    unsigned int id)
{
	size_t j = 0, bad = 0;

	for (int i = n - 1; i >= 0; i--) {
		const struct auxsample_branch *b = &br[i];
		const struct exp_branch *e = j < x->nr ? &x->br[j] : NULL;

		if (b->kind == AUXSAMPLE_BR_GAP)
			continue;
		j++;
		/* An unknown target may still be read from a direct branch. */
		if (e && b->from == e->from && b->kind == e->kind &&
		    (e->known ? b->to == e->to && !b->flags : true))
			continue;
		if (bad++ < 5)
			fprintf(stderr, "  ID %#x branch %zu: %#" PRIx64 " -> %#" PRIx64
				" %s, expected %#" PRIx64 " -> %#" PRIx64 " %s\n",
				id, j - 1, b->from, b->to,
				kind_name(b->kind), e ? e->from : 0, e ? e->to : 0,
				e ? kind_name(e->kind) : "none");
	}
	if (j != x->nr) {
		fprintf(stderr, "  ID %#x: %zu branches, expected %zu\n", id, j, x->nr);
		bad++;
	}
	return bad ? TEST_FAIL : TEST_OK;
}

/* One trace ID of a snapshot, decoded whole, against its expected lines. */
static int check_source(struct snapshot *ss, unsigned int i, const struct expect *x,
			struct auxsample_stats *total)
{
	const struct auxsample_branch *br;
	struct auxsample_decoder *dec = snapshot__decoder(ss, i, 1);
	struct auxsample_stats st;
	unsigned int id = ss->src[i].trace_id;
	int n, unknown = 0, ret = TEST_FAIL;

	if (!dec) {
		fprintf(stderr, "  ID %#x: no decoder\n", id);
		return TEST_FAIL;
	}
	n = auxsample_decoder__decode(dec, ss->trace, ss->trace_size, 1U << 22);
	auxsample_decoder__stats(dec, &st, sizeof(st));
	auxsample_decoder__branches(dec, &br);
	if (n < 0 && !(n == -AUXSAMPLE_ERR_NOSYNC && !x->insns && !x->nacc)) {
		fprintf(stderr, "  ID %#x: %s\n", id, auxsample_strerror(n));
		goto out;
	}
	ret = compare_branches(x, br, n < 0 ? 0 : n, id);
	for (int k = 0; k < n; k++) {
		if (br[k].kind != AUXSAMPLE_BR_GAP && (br[k].flags & AUXSAMPLE_BRF_TO_UNKNOWN))
			unknown++;
	}
	if (st.insns != x->insns || st.errors != x->nacc + x->overflows) {
		fprintf(stderr, "  ID %#x: %" PRIu64 " instructions, %" PRIu64
			" errors; expected %" PRIu64 ", %" PRIu64 " NACC + %" PRIu64 " overflows\n",
			id, st.insns, st.errors, x->insns, x->nacc, x->overflows);
		ret = TEST_FAIL;
	}
	/* Where nothing else breaks the flow: one gap each, an overflow's too. */
	if (st.gaps != x->nacc + x->overflows) {
		fprintf(stderr, "  ID %#x: %" PRIu64 " gaps; expected one for each of %" PRIu64
			" NACC and %" PRIu64 " overflows\n", id, st.gaps, x->nacc, x->overflows);
		ret = TEST_FAIL;
	}
	pr_test("ID %#x: %zu branches (%" PRIu64 " from E ranges), %" PRIu64
		" instructions, %" PRIu64 " NACC, %" PRIu64 " gaps, %" PRIu64 " syncs\n",
		id, x->nr, x->taken, x->insns, x->nacc, st.gaps, st.syncs);
	pr_test("ID %#x: %d targets unknown; %" PRIu64 " named by an address packet alone\n",
		id, unknown, x->by_packet);
	total->branches += st.branches;
	total->insns += st.insns;
out:
	auxsample_decoder__delete(dec);
	return ret;
}

/* All the sources in one decoder find what they find one by one. */
static int check_all_sources(struct snapshot *ss, const struct auxsample_stats *total)
{
	struct auxsample_decoder *dec = snapshot__decoder(ss, 0, ss->nr_src);
	struct auxsample_stats st;
	int ret = TEST_FAIL;

	if (!dec)
		return TEST_FAIL;
	auxsample_decoder__decode(dec, ss->trace, ss->trace_size, 64);
	auxsample_decoder__stats(dec, &st, sizeof(st));
	if (st.branches == total->branches && st.insns == total->insns)
		ret = TEST_OK;
	else
		fprintf(stderr, "  %u sources together: %" PRIu64 " branches, %" PRIu64
			" instructions; alone %" PRIu64 ", %" PRIu64 "\n", ss->nr_src,
			st.branches, st.insns, total->branches, total->insns);
	auxsample_decoder__delete(dec);
	return ret;
}

static int check_snapshot(const char *subdir, const char *name, const char *expected)
{
	struct auxsample_stats total = { .size = sizeof(total) };
	struct snapshot *ss = snapshot__get(subdir, name);
	struct expect *x = calloc(NR_IDS, sizeof(*x));
	int ret = TEST_FAIL;

	if (!ss) {
		free(x);
		return TEST_SKIP;
	}
	if (!x || expect__load(x, expected, ss->formatted ? -1 : ss->src[0].trace_id)) {
		fprintf(stderr, "  %s: cannot read %s.ppl\n", name, expected);
		goto out;
	}
	ret = TEST_OK;
	for (unsigned int i = 0; i < ss->nr_src; i++) {
		if (check_source(ss, i, &x[ss->src[i].trace_id], &total) != TEST_OK)
			ret = TEST_FAIL;
	}
	if (ss->nr_src > 1 && check_all_sources(ss, &total) != TEST_OK)
		ret = TEST_FAIL;
out:
	for (unsigned int i = 0; x && i < NR_IDS; i++)
		free(x[i].br);
	free(x);
	snapshot__exit(ss);
	return ret;
}

static int test_a57_single_step(void)
{
	return check_snapshot("snapshots", "a57_single_step", "a57_single_step");
}

static int test_juno_r1_1(void)
{
	return check_snapshot("snapshots", "juno_r1_1", "juno_r1_1");
}

static int test_juno_uname(void)
{
	return check_snapshot("snapshots", "juno-uname-001", "juno-uname-001");
}

static int test_mem_offsets(void)
{
	return check_snapshot("snapshots", "test-file-mem-offsets", "test-file-mem-offsets");
}

static int test_exact_match(void)
{
	return check_snapshot("snapshots", "bugfix-exact-match", "bugfix-exact-match");
}

static const char * const ete_snapshots[] = {
	"001-ack_test", "002-ack_test_scr", "ete_ip", "src_addr", "tme_test",
	"trace_file_cid_vmid", "ts_marker",
};

static int test_ete(void)
{
	char expected[64];
	int ret = TEST_OK, r;

	for (size_t i = 0; i < ARRAY_SIZE(ete_snapshots); i++) {
		snprintf(expected, sizeof(expected), "ete-%s", ete_snapshots[i]);
		r = check_snapshot("snapshots-ete", ete_snapshots[i], expected);
		if (r == TEST_SKIP)
			return r;
		if (r != TEST_OK) {
			fprintf(stderr, "  %s failed\n", ete_snapshots[i]);
			ret = r;
		}
	}
	return ret;
}

/*
 * Windows of one source's trace ending at @end, against a reference decode
 * ending there too: the buffer's prefix [0, @end), or for big buffers its
 * last 48 KiB, which holds many sync points before the window begins
 * (checked: bytes_before_sync).  After its first sync point a window must
 * decode to exactly the reference's newest branches, and with no sync
 * point to nothing.
 */
#define WINDOW_MAX	(1U << 15)
#define REF_SPAN	(48U << 10)

struct window_run {
	struct snapshot			*ss;
	struct auxsample_decoder	*win;
	struct auxsample_decoder	*ref;
	unsigned int			windows;
	unsigned int			synced;
	uint64_t			branches;
};

static int check_window(struct window_run *w, size_t start, size_t end, size_t ref_start,
			int np, const struct auxsample_stats *ps)
{
	const struct auxsample_branch *wb, *pb;
	struct auxsample_stats ws;
	int nw;

	nw = auxsample_decoder__decode(w->win, w->ss->trace + start, end - start, WINDOW_MAX);
	auxsample_decoder__stats(w->win, &ws, sizeof(ws));
	auxsample_decoder__branches(w->win, &wb);
	auxsample_decoder__branches(w->ref, &pb);
	w->windows++;
	if (nw == -AUXSAMPLE_ERR_NOSYNC) {
		if (ws.bytes_before_sync == end - start && !ws.insns && !ws.branches)
			return TEST_OK;
		fprintf(stderr, "  window [%zu, %zu) has no sync point, yet decoded\n", start, end);
		return TEST_FAIL;
	}
	w->synced++;
	w->branches += nw;
	if (ref_start + ps->bytes_before_sync > start + ws.bytes_before_sync) {
		fprintf(stderr, "  window [%zu, %zu) synced before its reference\n", start, end);
		return TEST_FAIL;
	}
	if (nw < 0 || np < nw || memcmp(wb, pb, nw * sizeof(*wb)) || ws.end_ip != ps->end_ip ||
	    ws.insns > ps->insns) {
		fprintf(stderr, "  window [%zu, %zu): %d branches, reference %d\n",
			start, end, nw, np);
		for (int i = 0; i < nw && i < np; i++) {
			if (!memcmp(&wb[i], &pb[i], sizeof(*wb)))
				continue;
			fprintf(stderr, "  newest %d: %#" PRIx64 " -> %#" PRIx64 " %s, reference %#"
				PRIx64 " -> %#" PRIx64 " %s\n", i, wb[i].from, wb[i].to,
				kind_name(wb[i].kind), pb[i].from, pb[i].to, kind_name(pb[i].kind));
			break;
		}
		return TEST_FAIL;
	}
	return TEST_OK;
}

static int check_windows_at(struct window_run *w, size_t end, size_t align)
{
	static const size_t sizes[] = { 4096, 8192, 16384 };
	size_t ref_start = end > REF_SPAN ? end - REF_SPAN : 0;
	struct auxsample_stats ps;
	int np;

	np = auxsample_decoder__decode(w->ref, w->ss->trace + ref_start, end - ref_start,
				       WINDOW_MAX);
	auxsample_decoder__stats(w->ref, &ps, sizeof(ps));
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		size_t start = end > sizes[i] ? end - sizes[i] : 0;

		start -= start % align;
		if (start <= ref_start)
			continue;
		if (check_window(w, start, end, ref_start, np, &ps) != TEST_OK)
			return TEST_FAIL;
	}
	return TEST_OK;
}

static int check_windows_of(struct snapshot *ss, const char *name, size_t step, bool need_sync)
{
	struct window_run w = { .ss = ss };
	size_t align, end_all;
	int ret = TEST_OK;

	/* Formatted data is decoded in whole frames: cut on frames. */
	align = w.ss->formatted ? 16 : 1;
	for (unsigned int i = 0; ret == TEST_OK && i < w.ss->nr_src; i++) {
		w.win = snapshot__decoder(w.ss, i, 1);
		w.ref = snapshot__decoder(w.ss, i, 1);
		ret = w.win && w.ref ? TEST_OK : TEST_FAIL;
		/* A source with nothing in the buffer has nothing to compare. */
		if (ret == TEST_OK && auxsample_decoder__decode(w.ref, w.ss->trace,
								w.ss->trace_size, 0) < 0)
			end_all = 0;
		else
			end_all = w.ss->trace_size + step;
		/* Ends every @step bytes, moved off the step a little each time. */
		for (size_t end = step, k = 0; ret == TEST_OK && end < end_all;
		     end += step, k++) {
			size_t e = end + (k * 37) % step;

			e = e > w.ss->trace_size ? w.ss->trace_size : e;
			ret = check_windows_at(&w, e - e % align, align);
		}
		auxsample_decoder__delete(w.win);
		auxsample_decoder__delete(w.ref);
	}
	pr_test("%s: %u of %u windows synced, %" PRIu64 " branches compared\n", name, w.synced,
		w.windows, w.branches);
	if (ret == TEST_OK && need_sync && !w.synced) {
		fprintf(stderr, "  %s: no window held a sync point\n", name);
		ret = TEST_FAIL;
	}
	return ret;
}

static int check_windows(const char *subdir, const char *name, size_t step, bool need_sync)
{
	struct snapshot *ss = snapshot__get(subdir, name);
	int ret;

	if (!ss)
		return TEST_SKIP;
	ret = check_windows_of(ss, name, step, need_sync);
	snapshot__exit(ss);
	return ret;
}

static int test_windows(void)
{
	int ret = check_windows("snapshots", "juno_r1_1", 1024, true);

	if (ret == TEST_OK)
		ret = check_windows("snapshots", "test-file-mem-offsets", 1024, true);
	if (ret == TEST_OK)
		ret = check_windows("snapshots", "juno-uname-001", 1024, true);
	if (ret == TEST_OK)
		ret = check_windows("snapshots", "bugfix-exact-match", 32768, true);
	return ret;
}

/*
 * The ETE buffers hold a single A-sync, at their start: every window that
 * leaves it out must decode to nothing.
 */
static int test_windows_ete(void)
{
	int ret = check_windows("snapshots-ete", "001-ack_test", 512, false);

	if (ret == TEST_OK)
		ret = check_windows("snapshots-ete", "tme_test", 512, false);
	return ret;
}


/*
 * Windows of 4, 8 and 16 KiB (as many as the buffer has) ending every
 * 512 bytes of each buffer of simpleperf's ETMv4 kernel recording, as
 * perf's ETM windows cut them: on frames, within one buffer.
 */
static int test_windows_perfdata(void)
{
	struct snapshot *ss[MAX_BUFFERS];
	unsigned int nr = 0;
	int ret = perfdata__load("perf_kernel.data", ss, &nr);
	char name[64];

	if (ret > 0) {
		test_skip_reason = "no ../shared/data/" SIMPLEPERF
				   "/perf_kernel.data (set AUXSAMPLE_DATA)";
		return TEST_SKIP;
	}
	if (ret || !nr) {
		fprintf(stderr, "  perf_kernel.data: no cs_etm trace buffers found\n");
		ret = TEST_FAIL;
	}
	for (unsigned int i = 0; i < nr; i++) {
		snprintf(name, sizeof(name), "perf_kernel.data buffer %u", i);
		if (ret == TEST_OK)
			ret = check_windows_of(ss[i], name, 512, true);
		snapshot__exit(ss[i]);
	}
	return ret;
}

/* Bit flips, cuts anywhere, garbage: errors are counted, nothing crashes. */
static int corrupt_rounds(struct snapshot *ss, unsigned int src, uint64_t *errors)
{
	struct auxsample_decoder *dec = snapshot__decoder(ss, src, 1);
	struct auxsample_stats st;
	uint32_t seed = 12345;
	uint8_t *buf = malloc(ss->trace_size);
	int ret = TEST_OK;

	for (int round = 0; dec && buf && ret == TEST_OK && round < 100; round++) {
		size_t len = ss->trace_size, start = 0;
		int n;

		memcpy(buf, ss->trace, len);
		for (int k = 0; k < 1 + round % 8; k++) {
			seed = seed * 1103515245 + 12345;
			buf[(seed >> 8) % len] ^= 1 << (seed % 8);
		}
		if (round % 3 == 0) {
			start = (seed >> 4) % len;
			len = (seed >> 12) % (len - start + 1);
		}
		if (round % 10 == 9)
			memset(buf + start, round & 0x80 ? 0xff : 0, len / 2);
		n = auxsample_decoder__decode(dec, buf + start, len, 64);
		auxsample_decoder__stats(dec, &st, sizeof(st));
		if (n < 0 && n != -AUXSAMPLE_ERR_NOSYNC) {
			fprintf(stderr, "  round %d: %s\n", round, auxsample_strerror(n));
			ret = TEST_FAIL;
		}
		*errors += st.errors;
	}
	if (!dec || !buf)
		ret = TEST_FAIL;
	free(buf);
	auxsample_decoder__delete(dec);
	return ret;
}

static int test_corrupt(void)
{
	static const char * const names[][2] = {
		{ "snapshots", "test-file-mem-offsets" },
		{ "snapshots", "juno_r1_1" },
		{ "snapshots-ete", "001-ack_test" },
	};
	uint64_t errors = 0;
	int ret = TEST_OK;

	for (size_t i = 0; ret == TEST_OK && i < ARRAY_SIZE(names); i++) {
		struct snapshot *ss = snapshot__get(names[i][0], names[i][1]);

		if (!ss)
			return TEST_SKIP;
		ret = corrupt_rounds(ss, 0, &errors);
		snapshot__exit(ss);
	}
	pr_test("%" PRIu64 " errors over the corrupt snippets\n", errors);
	if (ret == TEST_OK && !errors) {
		fprintf(stderr, "  no corruption was noticed\n");
		ret = TEST_FAIL;
	}
	return ret;
}

const struct test tests_etm_real[] = {
	{ "real ETM, a57_single_step against trc_pkt_lister", test_a57_single_step },
	{ "real ETM, juno_r1_1 against trc_pkt_lister", test_juno_r1_1 },
	{ "real ETM, juno-uname-001 (images missing) against trc_pkt_lister", test_juno_uname },
	{ "real ETM, test-file-mem-offsets against trc_pkt_lister", test_mem_offsets },
	{ "real ETM, bugfix-exact-match against trc_pkt_lister", test_exact_match },
	{ "real ETE snapshots against trc_pkt_lister", test_ete },
	{ "real ETM windows decode as the whole buffer, or not at all", test_windows },
	{ "real ETE windows decode as the whole buffer, or not at all", test_windows_ete },
	{ "real ETM windows of perf.data trace buffers decode as the whole buffer",
	  test_windows_perfdata },
	{ "real ETM/ETE, corrupt and truncated snippets", test_corrupt },
	{ NULL, NULL },
};
