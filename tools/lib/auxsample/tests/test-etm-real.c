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

#define OPENCSD		"etm/opencsd"
#define MAX_SOURCES	16
#define MAX_REGIONS	256
#define NR_IDS		128

static const char *data_dir(void)
{
	return getenv("AUXSAMPLE_DATA") ?: "../shared/data";
}

static uint8_t *read_path(const char *path, size_t *size)
{
	struct stat st;
	uint8_t *buf;
	FILE *f = fopen(path, "rb");

	if (!f)
		return NULL;
	buf = fstat(fileno(f), &st) ? NULL : malloc(st.st_size + 1);
	if (buf && fread(buf, 1, st.st_size, f) != (size_t)st.st_size) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (!buf)
		return NULL;
	buf[st.st_size] = 0;
	*size = st.st_size;
	return buf;
}

/* A snapshot .ini file: [section] and key=value lines, in file order. */
struct ini_entry {
	const char	*section;
	const char	*key;
	const char	*value;
};

struct ini {
	char			*text;
	struct ini_entry	*e;
	unsigned int		nr;
};

static char *strip(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = 0;
	return s;
}

static int ini__load(struct ini *ini, const char *path)
{
	const char *section = "";
	char *line, *next;
	size_t size;

	memset(ini, 0, sizeof(*ini));
	ini->text = (char *)read_path(path, &size);
	if (!ini->text)
		return -1;
	ini->e = calloc(size / 2 + 1, sizeof(*ini->e));
	if (!ini->e)
		return -1;
	for (line = ini->text; line; line = next) {
		char *eq;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		line = strip(line);
		if (*line == '[' && strchr(line, ']')) {
			*strchr(line, ']') = 0;
			section = line + 1;
			continue;
		}
		eq = strchr(line, '=');
		if (*line == ';' || *line == '#' || !eq)
			continue;
		*eq = 0;
		ini->e[ini->nr++] = (struct ini_entry){ section, strip(line), strip(eq + 1) };
	}
	return 0;
}

static void ini__exit(struct ini *ini)
{
	free(ini->e);
	free(ini->text);
}

/* Register keys carry their offset, "TRCIDR0(0x078)": match the name. */
static bool key_is(const char *key, const char *name)
{
	size_t len = strcspn(key, "(");

	return len == strlen(name) && !strncasecmp(key, name, len);
}

static const char *ini__get(const struct ini *ini, const char *section, const char *key)
{
	for (unsigned int i = 0; i < ini->nr; i++) {
		if (!strcasecmp(ini->e[i].section, section) && key_is(ini->e[i].key, key))
			return ini->e[i].value;
	}
	return NULL;
}

static uint64_t ini__num(const struct ini *ini, const char *section, const char *key,
			 uint64_t dflt)
{
	const char *v = ini__get(ini, section, key);

	return v ? strtoull(v, NULL, 0) : dflt;
}

struct region {
	uint64_t	addr;
	uint64_t	size;
	const uint8_t	*data;
	uint8_t		*file;
};

struct snapshot {
	char				dir[1024];
	struct region			mem[MAX_REGIONS];
	unsigned int			nr_mem;
	struct auxsample_etm_source	src[MAX_SOURCES];
	char				src_name[MAX_SOURCES][64];
	unsigned int			nr_src;
	uint8_t				formatted;
	uint8_t				*trace;
	size_t				trace_size;
};

/*
 * A core's memory dumps, as trc_pkt_lister maps them: a file that is
 * missing or a range that overlaps one already mapped is left out.
 */
static void snapshot__add_dump(struct snapshot *ss, const struct ini *dev, const char *section)
{
	uint64_t addr = ini__num(dev, section, "address", 0);
	uint64_t offset = ini__num(dev, section, "offset", 0);
	struct region *r = &ss->mem[ss->nr_mem];
	char path[2048];
	size_t size;

	if (ss->nr_mem == MAX_REGIONS)
		return;
	snprintf(path, sizeof(path), "%s/%s", ss->dir, ini__get(dev, section, "file"));
	r->file = read_path(path, &size);
	if (!r->file)
		return;
	if (offset >= size)
		goto skip;
	r->size = ini__num(dev, section, "length", size - offset);
	if (r->size > size - offset)
		r->size = size - offset;
	r->addr = addr;
	r->data = r->file + offset;
	for (unsigned int i = 0; i < ss->nr_mem; i++) {
		if (addr < ss->mem[i].addr + ss->mem[i].size && ss->mem[i].addr < addr + r->size)
			goto skip;
	}
	ss->nr_mem++;
	return;
skip:
	free(r->file);
	r->file = NULL;
}

static void snapshot__add_source(struct snapshot *ss, const struct ini *dev, const char *name)
{
	struct auxsample_etm_source *s = &ss->src[ss->nr_src];
	const char *type = ini__get(dev, "device", "type") ?: "";
	char reg[16];

	if (ss->nr_src == MAX_SOURCES || (strncasecmp(type, "ETM4", 4) && strcasecmp(type, "ETE")))
		return;
	memset(s, 0, sizeof(*s));
	s->ete = !strcasecmp(type, "ETE");
	s->trace_id = ini__num(dev, "regs", "TRCTRACEIDR", 0) & 0x7f;
	s->trcconfigr = ini__num(dev, "regs", "TRCCONFIGR", 0);
	s->trcdevarch = ini__num(dev, "regs", "TRCDEVARCH", 0);
	for (int i = 0; i < 14; i++) {
		snprintf(reg, sizeof(reg), "TRCIDR%d", i);
		s->trcidr[i] = ini__num(dev, "regs", reg, 0);
	}
	snprintf(ss->src_name[ss->nr_src++], sizeof(ss->src_name[0]), "%s", name);
}

static int snapshot__load_device(struct snapshot *ss, const char *file)
{
	const char *class, *name;
	char path[2048];
	struct ini dev;

	snprintf(path, sizeof(path), "%s/%s", ss->dir, file);
	if (ini__load(&dev, path)) {
		ini__exit(&dev);
		return -1;
	}
	class = ini__get(&dev, "device", "class") ?: "";
	name = ini__get(&dev, "device", "name") ?: "";
	if (!strcasecmp(class, "core")) {
		for (unsigned int i = 0; i < dev.nr; i++) {
			if (!strcasecmp(dev.e[i].key, "file"))
				snapshot__add_dump(ss, &dev, dev.e[i].section);
		}
	} else if (!strcasecmp(class, "trace_source")) {
		snapshot__add_source(ss, &dev, name);
	}
	ini__exit(&dev);
	return 0;
}

/* The buffer the ETM/ETE sources write to; the sources that write it. */
static int snapshot__load_trace(struct snapshot *ss, const struct ini *trace)
{
	const char *buffer = NULL, *name, *file, *format;
	char path[2048];
	unsigned int n = 0;

	for (unsigned int i = 0; i < ss->nr_src && !buffer; i++)
		buffer = ini__get(trace, "source_buffers", ss->src_name[i]);
	if (!buffer)
		return -1;
	for (unsigned int i = 0; i < ss->nr_src; i++) {
		name = ini__get(trace, "source_buffers", ss->src_name[i]);
		if (name && !strcmp(name, buffer))
			ss->src[n++] = ss->src[i];
	}
	ss->nr_src = n;
	for (unsigned int i = 0; i < trace->nr; i++) {
		if (!key_is(trace->e[i].key, "name") || strcmp(trace->e[i].value, buffer))
			continue;
		file = ini__get(trace, trace->e[i].section, "file");
		format = ini__get(trace, trace->e[i].section, "format") ?: "";
		if (!file)
			return -1;
		ss->formatted = !strcasecmp(format, "coresight");
		snprintf(path, sizeof(path), "%s/%s", ss->dir, file);
		ss->trace = read_path(path, &ss->trace_size);
		return ss->trace ? 0 : -1;
	}
	return -1;
}

static void snapshot__exit(struct snapshot *ss)
{
	for (unsigned int i = 0; i < ss->nr_mem; i++)
		free(ss->mem[i].file);
	free(ss->trace);
	free(ss);
}

static struct snapshot *snapshot__load(const char *subdir, const char *name)
{
	struct snapshot *ss = calloc(1, sizeof(*ss));
	struct ini snap, trace;
	const char *meta;
	char path[2048];
	int err = -1;

	if (!ss)
		return NULL;
	snprintf(ss->dir, sizeof(ss->dir), "%s/" OPENCSD "/%s/%s", data_dir(), subdir, name);
	snprintf(path, sizeof(path), "%s/snapshot.ini", ss->dir);
	if (ini__load(&snap, path)) {
		ini__exit(&snap);
		snapshot__exit(ss);
		return NULL;
	}
	for (unsigned int i = 0; i < snap.nr; i++) {
		if (!strcasecmp(snap.e[i].section, "device_list"))
			snapshot__load_device(ss, snap.e[i].value);
	}
	meta = ini__get(&snap, "trace", "metadata");
	snprintf(path, sizeof(path), "%s/%s", ss->dir, meta ?: "trace.ini");
	if (!ini__load(&trace, path))
		err = snapshot__load_trace(ss, &trace);
	ini__exit(&trace);
	ini__exit(&snap);
	if (err || !ss->nr_src) {
		snapshot__exit(ss);
		return NULL;
	}
	return ss;
}

static int snapshot__read(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	struct snapshot *ss = context;

	for (unsigned int i = 0; i < ss->nr_mem; i++) {
		const struct region *r = &ss->mem[i];

		if (addr < r->addr || addr - r->addr >= r->size)
			continue;
		if (size > r->size - (addr - r->addr))
			size = r->size - (addr - r->addr);
		memcpy(buf, r->data + (addr - r->addr), size);
		return size;
	}
	return -1;
}

/* No code at all: what the trace says without it. */
static int no_memory(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	return -1;
}

/*
 * A decoder for @nr sources of @ss from @first on, reading code with
 * @read, every step of the flow to @flow if not NULL.
 */
static struct auxsample_decoder *snapshot__new_decoder(struct snapshot *ss, unsigned int first,
						       unsigned int nr,
						       auxsample_read_memory_fn *read,
						       auxsample_flow_fn *flow, void *flow_context)
{
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_ETM,
		.read_memory = read,
		.context = ss,
		.etm = {
			.sources = &ss->src[first],
			.nr_sources = nr,
			.formatted = ss->formatted,
		},
		.flow = flow,
		.flow_context = flow_context,
	};

	return auxsample_decoder__new(&config, NULL);
}

static struct auxsample_decoder *snapshot__decoder(struct snapshot *ss, unsigned int first,
						   unsigned int nr)
{
	return snapshot__new_decoder(ss, first, nr, snapshot__read, NULL, NULL);
}

static struct snapshot *snapshot__get(const char *subdir, const char *name)
{
	struct snapshot *ss = snapshot__load(subdir, name);

	if (!ss)
		test_skip_reason = "no ../shared/data/" OPENCSD " snapshots (set AUXSAMPLE_DATA)";
	return ss;
}

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
 * perf's own recordings: the trace buffers (PERF_RECORD_AUXTRACE) of a
 * cs_etm perf.data, as perf record writes them for a full trace, with
 * each buffer's CPU's source from AUXTRACE_INFO (version 1 and later),
 * formatted (ETMv4 through an ETR).  No code: what is compared is where
 * the trace syncs, is lost (every kernel address is unreadable here) and
 * ends, and the branches that need no code.
 */
#define SIMPLEPERF		"etm/simpleperf"
#define PERF_RECORD_AUXTRACE_INFO	70
#define PERF_RECORD_AUXTRACE		71
#define CS_ETMV4_MAGIC		0x4040404040404040ULL
#define CS_HEADER_U64S		3	/* version, PMU type and CPUs, snapshot */
#define CS_BLOCK_U64S		3	/* magic, CPU, number of parameters */
#define MAX_BUFFERS		16

struct perf_header_sections {
	uint64_t	magic;
	uint64_t	size;
	uint64_t	attr_size;
	uint64_t	attrs[2];
	uint64_t	data[2];	/* offset, size */
};

struct perf_event_hdr {
	uint32_t	type;
	uint16_t	misc;
	uint16_t	size;
};

struct perf_auxtrace_event {
	struct perf_event_hdr	header;
	uint64_t		size;
	uint64_t		offset;
	uint64_t		reference;
	uint32_t		idx;
	uint32_t		tid;
	uint32_t		cpu;
	uint32_t		reserved;
};

/* The ETMv4 sources of a cs_etm AUXTRACE_INFO's @nr u64s, into @src[cpu]. */
static int perfdata__sources(const uint64_t *priv, size_t nr,
			     struct auxsample_etm_source *src, unsigned int max_cpus)
{
	size_t pos = CS_HEADER_U64S;
	unsigned int nr_cpus;

	if (nr < CS_HEADER_U64S || priv[0] < 1)
		return -1;
	nr_cpus = (uint32_t)priv[1];
	for (unsigned int i = 0; i < nr_cpus; i++) {
		const uint64_t *blk = priv + pos;
		uint64_t cpu;

		/* TRCCONFIGR, TRCTRACEIDR, TRCIDR0, 1, 2, 8 after the block's head */
		if (pos + CS_BLOCK_U64S + 6 > nr || blk[0] != CS_ETMV4_MAGIC)
			return -1;
		cpu = blk[1];
		if (cpu >= max_cpus)
			return -1;
		memset(&src[cpu], 0, sizeof(src[cpu]));
		src[cpu].cpu = cpu;
		src[cpu].trcconfigr = blk[3];
		src[cpu].trace_id = blk[4] & 0x7f;
		src[cpu].trcidr[0] = blk[5];
		src[cpu].trcidr[1] = blk[6];
		src[cpu].trcidr[2] = blk[7];
		src[cpu].trcidr[8] = blk[8];
		pos += CS_BLOCK_U64S + blk[2];
	}
	return 0;
}

/* Each trace buffer of @name as a snapshot of its own, its CPU's source alone. */
static int perfdata__load(const char *name, struct snapshot **ss, unsigned int *nr)
{
	struct auxsample_etm_source src[MAX_SOURCES];
	const struct perf_header_sections *h;
	bool have_src = false;
	uint64_t off, end;
	char path[2048];
	uint8_t *d;
	size_t size;
	int err = 0;

	*nr = 0;
	snprintf(path, sizeof(path), "%s/" SIMPLEPERF "/%s", data_dir(), name);
	d = read_path(path, &size);
	if (!d)
		return 1;
	h = (const void *)d;
	if (size < sizeof(*h) || memcmp(d, "PERFILE2", 8) || h->data[0] + h->data[1] > size) {
		free(d);
		return -1;
	}
	off = h->data[0];
	end = h->data[0] + h->data[1];
	while (!err && off + sizeof(struct perf_event_hdr) <= end) {
		const struct perf_event_hdr *e = (const void *)(d + off);
		const struct perf_auxtrace_event *at = (const void *)e;

		if (!e->size || off + e->size > end)
			break;
		if (e->type == PERF_RECORD_AUXTRACE_INFO && e->size > 16) {
			err = perfdata__sources((const uint64_t *)(d + off + 16),
						(e->size - 16) / 8, src, MAX_SOURCES);
			have_src = !err;
		} else if (e->type == PERF_RECORD_AUXTRACE) {
			struct snapshot *s;

			if (!have_src || at->cpu >= MAX_SOURCES || *nr == MAX_BUFFERS ||
			    off + e->size + at->size > end) {
				err = -1;
				break;
			}
			s = calloc(1, sizeof(*s));
			if (s)
				s->trace = malloc(at->size ?: 1);
			if (!s || !s->trace) {
				free(s);
				err = -1;
				break;
			}
			memcpy(s->trace, d + off + e->size, at->size);
			s->trace_size = at->size;
			s->src[0] = src[at->cpu];
			s->nr_src = 1;
			s->formatted = 1;
			ss[(*nr)++] = s;
			off += at->size;
		}
		off += e->size;
	}
	free(d);
	return err;
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
							     code ? snapshot__read : no_memory,
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

/*
 * Inputs that crashed or hung OpenCSD through the decoder
 * (../shared/data/repro, REPRO-etm-*.bin): 8 header bytes, then the
 * trace.  h[0]: the snapshot whose sources configure the decoder, of
 * etm_repro_snapshots[]; h[1] bit 0: all its sources, else source h[2];
 * bit 1: whole snippet; bit 2: a flow callback; bit 3: set_thread(h[3]);
 * bit 4: 'formatted' flipped; bit 5: no memory reader; bit 6: decode
 * twice; bit 7: register h[5] (TRCIDR0..13, TRCCONFIGR, TRCDEVARCH) xored
 * with h[6..7], as in fuzz-etm's inputs; h[4]: the branches asked for (0: 64).
 */
#define ETM_REPRO_TIMEOUT	60	/* seconds, under a sanitizer on a busy machine */

static const char * const etm_repro_snapshots[][2] = {
	{ "snapshots", "juno_r1_1" },
	{ "snapshots", "a57_single_step" },
	{ "snapshots", "test-file-mem-offsets" },
	{ "snapshots", "juno-uname-001" },
	{ "snapshots", "bugfix-exact-match" },
	{ "snapshots-ete", "ete_ip" },
	{ "snapshots-ete", "ts_marker" },
	{ "snapshots-ete", "trace_file_cid_vmid" },
	{ "snapshots-ete", "src_addr" },
	{ "snapshots-ete", "001-ack_test" },
	{ "snapshots-ete", "002-ack_test_scr" },
	{ "snapshots-ete", "tme_test" },
};

struct etm_repro {
	struct snapshot		*ss;
	const uint8_t		*h;
	const uint8_t		*trace;
	size_t			len;
	uint64_t		flows;
	int			errors;		/* each decode's, or -1: some */
};

static void etm_repro__flow(const struct auxsample_flow *flow, void *context)
{
	struct etm_repro *rp = context;

	rp->flows++;
}

/* Register h[5] of @src xored with h[6..7], as fuzz-etm does. */
static void etm_repro__xor_register(struct auxsample_etm_source *src, const uint8_t *h)
{
	uint32_t x = h[6] | h[7] << 8;
	unsigned int reg = h[5] % 16;

	if (reg < 14)
		src->trcidr[reg] ^= x;
	else if (reg == 14)
		src->trcconfigr ^= x;
	else
		src->trcdevarch ^= x;
}

/* The decoder the header asks for, or NULL where it refuses the configuration. */
static struct auxsample_decoder *etm_repro__decoder(struct etm_repro *rp, unsigned int first,
						    unsigned int nr)
{
	const uint8_t *h = rp->h;
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_ETM,
		.read_memory = h[1] & 0x20 ? no_memory : snapshot__read,
		.context = rp->ss,
		.etm = {
			.sources = &rp->ss->src[first],
			.nr_sources = nr,
			.formatted = rp->ss->formatted,
		},
		.flow = h[1] & 4 ? etm_repro__flow : NULL,
		.flow_context = rp,
		.flags = h[1] & 2 ? AUXSAMPLE_CFG_WHOLE_SNIPPET : 0,
	};

	return auxsample_decoder__new(&config, NULL);
}

static void etm_repro__errors(struct auxsample_decoder *dec)
{
	const struct auxsample_decode_error *errs;
	int n = auxsample_decoder__errors(dec, &errs);

	for (int i = 0; i < n; i++)
		pr_test("  at %" PRIu64 ": %s (%d)\n", (uint64_t)errs[i].offset,
			auxsample_strerror(errs[i].error), errs[i].lib_error);
}

static int etm_repro__run(void *arg)
{
	struct etm_repro *rp = arg;
	struct snapshot *ss = rp->ss;
	const uint8_t *h = rp->h;
	unsigned int first = 0, nr = ss->nr_src;
	struct auxsample_decoder *dec;
	struct auxsample_stats stats;
	int n, ret = TEST_OK;

	if (!(h[1] & 1)) {
		first = h[2] % ss->nr_src;
		nr = 1;
	}
	if (h[1] & 0x10)
		ss->formatted = !ss->formatted;
	if (h[1] & 0x80)
		etm_repro__xor_register(&ss->src[first], h);
	dec = etm_repro__decoder(rp, first, nr);
	if (!dec) {
		/* A configuration the decoder refuses is a clear error too. */
		pr_test("decoder refused\n");
		return TEST_OK;
	}
	if (h[1] & 8)
		auxsample_decoder__set_thread(dec, h[3]);
	for (int i = 0; i < (h[1] & 0x40 ? 2 : 1); i++) {
		n = auxsample_decoder__decode(dec, rp->trace, rp->len, h[4] ?: 64);
		auxsample_decoder__stats(dec, &stats, sizeof(stats));
		pr_test("decode: %d, %" PRIu64 " instructions, %" PRIu64 " errors, %" PRIu64
			" flow records\n", n, (uint64_t)stats.insns, (uint64_t)stats.errors,
			rp->flows);
		etm_repro__errors(dec);
		if (n < 0 && n != -AUXSAMPLE_ERR_NOSYNC) {
			fprintf(stderr, "  %s\n", auxsample_strerror(n));
			ret = TEST_FAIL;
		} else if (rp->errors >= 0) {
			if (!T_CHECK(stats.errors == (uint64_t)rp->errors))
				ret = TEST_FAIL;
		} else if (n >= 0 && !stats.errors) {
			fprintf(stderr, "  the corrupt trace decoded without an error\n");
			ret = TEST_FAIL;
		}
	}
	auxsample_decoder__delete(dec);
	return ret;
}

/*
 * One input, header and trace, decoded in a child that may not crash or
 * hang, to @errors decode errors (-1: some, or no sync point).
 */
static int check_etm_input(const uint8_t *input, size_t size, int errors)
{
	struct etm_repro rp = { .errors = errors };
	int ret;

	if (size <= 8)
		return TEST_FAIL;
	rp.h = input;
	rp.trace = input + 8;
	rp.len = size - 8;
	rp.ss = snapshot__get(etm_repro_snapshots[input[0] % ARRAY_SIZE(etm_repro_snapshots)][0],
			      etm_repro_snapshots[input[0] % ARRAY_SIZE(etm_repro_snapshots)][1]);
	if (!rp.ss)
		return TEST_SKIP;
	ret = test_run_bounded(etm_repro__run, &rp, ETM_REPRO_TIMEOUT);
	snapshot__exit(rp.ss);
	return ret;
}

static int check_etm_repro(const char *name)
{
	char path[2048];
	uint8_t *file;
	size_t size;
	int ret;

	snprintf(path, sizeof(path), "%s/repro/%s", data_dir(), name);
	file = read_path(path, &size);
	if (!file) {
		test_skip_reason = "no ../shared/data/repro (set AUXSAMPLE_DATA)";
		return TEST_SKIP;
	}
	ret = check_etm_input(file, size, -1);
	free(file);
	return ret;
}

/* OpenCSD 1.3.3 used a stale iterator in TrcPktDecodeEtmV4I::mispredictAtom(). */
static int test_repro_mispredict(void)
{
	return check_etm_repro("REPRO-etm-opencsd-mispredictAtom-segv.bin");
}

/* OpenCSD 1.3.3 looped in TrcPktDecodeEtmV4I::cancelElements(). */
static int test_repro_cancel(void)
{
	return check_etm_repro("REPRO-etm-opencsd-cancelElements-hang.bin");
}

/*
 * OpenCSD 1.3.3 committed an exception before its address, and read the
 * address past the end of its P0 stack in processException() (SIGSEGV).
 * The first input is fuzz-etm's (fuzz/regress/etm), minimized: two TPIU
 * frames of juno_r1_1's sources; the second is one juno_r1_1 source's raw
 * trace, with a context between the exception and the commit.
 */
static int test_repro_exception_commit(void)
{
	static const uint8_t fuzzed[] = {
		0x00, 0x61, 0xaa, 0xdf, 0xde, 0xf8, 0xf7, 0x9a,
		0x2b, 0xee, 0xbe, 0xdb, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,
		0x80, 0x01, 0x58, 0x80, 0x58, 0x00, 0x06, 0x1d,
		0x2c, 0x59, 0x98, 0xff, 0xf6, 0x95, 0xb2, 0x74,
	};
	static const uint8_t context_between[] = {
		0x00, 0x30, 0, 0, 0, 0, 0, 0,	/* juno_r1_1, raw, no memory */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-sync */
		0x01, 0x00,			/* Trace Info */
		0x9d, 0, 0, 0, 0, 0, 0, 0, 0,	/* Address, 64-bit */
		0x06, 0x1d,			/* Exception: IRQ */
		0x80,				/* Context: same */
		0x2d, 0x05,			/* Commit 5 */
		0x01, 0x00,			/* Trace Info: skipped */
	};
	int ret = check_etm_input(fuzzed, sizeof(fuzzed), 1);

	return ret != TEST_OK ? ret : check_etm_input(context_between, sizeof(context_between), 1);
}

/* A Trace Info 5 elements deep, MAXSPEC 0: the exception after it is committed. */
static int test_repro_spec_depth(void)
{
	static const uint8_t input[] = {
		0x00, 0x30, 0, 0, 0, 0, 0, 0,	/* juno_r1_1, raw, no memory */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-sync */
		0x01, 0x04, 0x05,		/* Trace Info, speculation depth 5 */
		0x06, 0x1d,			/* Exception: IRQ */
		0x70, 0x70,			/* reserved here: not a Trace Info */
	};

	return check_etm_input(input, sizeof(input), 0);
}

/* A Q element without its address (Q packets: TRCIDR0 bit 15). */
static int test_repro_q_commit(void)
{
	static const uint8_t input[] = {
		0x00, 0xb0, 0, 0, 0, 0, 0x00, 0x80,	/* juno_r1_1, raw, no memory */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-sync */
		0x01, 0x00,				/* Trace Info */
		0x9d, 0, 0x10, 0, 0, 0, 0, 0, 0,	/* Address 0x2000 */
		0xaf,					/* Q, no address */
		0x2d, 0x01,				/* Commit 1 */
		0x01, 0x00,				/* Trace Info: skipped */
	};

	return check_etm_input(input, sizeof(input), 1);
}

/*
 * With speculation (TRCIDR8 2) a Commit after the
 * exception's address is real trace, and decodes.
 */
static int test_exception_addr_commit(void)
{
	static const uint8_t input[] = {
		0x00, 0xb0, 0, 0, 0, 8, 0x02, 0x00,	/* juno_r1_1, raw, no memory */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-sync */
		0x01, 0x00,				/* Trace Info */
		0x9d, 0, 0x10, 0, 0, 0, 0, 0, 0,	/* Address 0x2000 */
		0x06, 0x1d,				/* Exception: IRQ */
		0x9d, 0, 0x10, 0, 0, 0, 0, 0, 0,	/* Address 0x2000 */
		0x2d, 0x01,				/* Commit 1 */
		0x01, 0x00,				/* Trace Info: skipped */
	};

	return check_etm_input(input, sizeof(input), 0);
}

/*
 * OpenCSD 1.3.3's mispredictAtom() on a source with speculation:
 * fuzz-etm's input, minimized, with trace_file_cid_vmid's TRCIDR8 xored
 * with 0x76c4.
 */
static int test_repro_mispredict_speculative(void)
{
	static const uint8_t input[] = {
		0x07, 0x86, 0x00, 0x23, 0xf5, 0x38, 0xc4, 0x76,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-sync */
		0x01, 0x00,				/* Trace Info */
		0x9a, 0x49, 0x1e, 0x18, 0x0a,		/* Address 0xa183d24 */
		0xf6,					/* Atom N */
		0x34,					/* Cancel 1, mispredict */
		0x70,					/* Ignore */
	};

	return check_etm_input(input, sizeof(input), 1);
}

/*
 * After a bad packet the source syncs at the A-sync right after it: the
 * decoder halted at the packet's end, and nothing there is dropped.  Its
 * context then comes with the atom, where no memory is read: the bad
 * packet's error and the gap's.
 */
static int test_resync_after_bad_packet(void)
{
	static const uint8_t input[] = {
		0x00, 0x30, 0, 0, 0, 0, 0, 0,	/* juno_r1_1, raw, no memory */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-sync */
		0x01, 0x00,				/* Trace Info */
		0x30,					/* Mispredict */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-sync */
		0x01, 0x00,				/* Trace Info */
		0x85, 0x00, 0x08, 0x00, 0x00, 0x00,	/* Address 0x1000 */
		0x00, 0x00, 0x00, 0x31,			/* & Context */
		0xf7,					/* Atom E */
		0x01, 0x00,				/* Trace Info: skipped */
	};

	return check_etm_input(input, sizeof(input), 2);
}

/*
 * With a return stack (TRCCONFIGR.RS), OpenCSD 1.3.3 popped it empty
 * committing an exception, reset itself there and went on with the
 * exception it had deleted (fuzz-etm's input, minimized: tme_test's
 * sources).
 */
static int test_repro_return_stack(void)
{
	static const uint8_t input[] = {
		0x0b, 0x81, 0x00, 0x00, 0x00, 0x0e, 0x00, 0x10,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-sync */
		0x01, 0x00,				/* Trace Info */
		0x82, 0x02, 0x02, 0x00, 0x00, 0x11,	/* Address 0x408 & Context */
		0x9a, 0x4a, 0x0b, 0x01, 0x00,		/* Address 0x11728 */
		0xc0,					/* Atoms EEEE */
		0x06, 0x05,				/* Exception: call */
		0x91,					/* Address match 1 */
	};

	return check_etm_input(input, sizeof(input), 1);
}

/*
 * OpenCSD 1.3.3's memory cache took a read whose address plus size wraps
 * for a hit, and copied from outside its page: an ETE source address at
 * the last word (fuzz-etm's input, minimized: ts_marker's first source)...
 */
static int test_repro_top_address(void)
{
	static const uint8_t input[] = {
		0x06, 0x45, 0x54, 0x4d, 0x56, 0x33, 0x08, 0x00,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-sync */
		0x01, 0x00,				/* Trace Info */
		0x82, 0x61, 0x11, 0x0c, 0x00, 0x31,	/* Address 0xc2384 & Context */
		0xff,					/* Atoms EEE */
		0xb8, 0xff, 0xff, 0xff, 0xff, 0xff,	/* Source Address 0xff...fc */
		0xff, 0xff, 0xff,
		0x70,					/* Ignore */
	};

	return check_etm_input(input, sizeof(input), 1);
}

/*
 * A64 code at every address: "b ." in the low 4 GiB, but at 0x3000 a
 * branch back to the last word of the address space; 128 MiB below the
 * top a branch forward to it; NOPs elsewhere.
 */
#define ETM_TOP_BRANCH	0xfffffffff8000000ULL
#define ETM_WRAP_BRANCH	0x3000

static int code_everywhere(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	for (size_t i = 0; i < size; i++) {
		uint64_t at = addr + i;
		uint32_t insn = 0xd503201f;

		if (at - ETM_WRAP_BRANCH < 4)
			insn = 0x17fff3ff;	/* b .-0x3004 */
		else if (at < (1ULL << 32))
			insn = 0x14000000;
		else if (at - ETM_TOP_BRANCH < 4)
			insn = 0x15ffffff;	/* b .+0x7fffffc */
		buf[i] = insn >> (at % 4 * 8);
	}
	return size;
}

struct etm_code_input {
	struct snapshot		*ss;
	const uint8_t		*trace;
	size_t			len;
};

/* The flow stops where code is no longer read: a gap, not a crash. */
static int etm_code__run(void *arg)
{
	struct etm_code_input *in = arg;
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_ETM,
		.read_memory = code_everywhere,
		.etm = { .sources = &in->ss->src[0], .nr_sources = 1 },
	};
	struct auxsample_decoder *dec = auxsample_decoder__new(&config, NULL);
	const struct auxsample_decode_error *errs;
	int n, nomap = 0;

	if (!dec)
		return TEST_FAIL;
	auxsample_decoder__decode(dec, in->trace, in->len, 64);
	n = auxsample_decoder__errors(dec, &errs);
	for (int i = 0; i < n; i++)
		nomap += errs[i].error == -AUXSAMPLE_ERR_NOMAP;
	auxsample_decoder__delete(dec);
	return T_CHECK(nomap >= 1) ? TEST_OK : TEST_FAIL;
}

static int check_etm_code(const uint8_t *trace, size_t len)
{
	struct etm_code_input in = {
		.ss = snapshot__get("snapshots-ete", "ts_marker"),
		.trace = trace,
		.len = len,
	};
	int ret;

	if (!in.ss)
		return TEST_SKIP;
	ret = test_run_bounded(etm_code__run, &in, ETM_REPRO_TIMEOUT);
	snapshot__exit(in.ss);
	return ret;
}

/*
 * ... and a branch to the last word: the cache took the read there for a
 * hit in the page at 0x1000.  No code is read in the last 256 MiB: from
 * 128 MiB below the top, the decoder stops at the branch, not readable;
 * from 0x3000, at its target.
 */
static int test_top_of_memory(void)
{
	static const uint8_t backward[] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,		/* A-sync */
		0x01, 0x00,					/* Trace Info */
		0x85, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00,	/* Address 0x1000 */
		0x00, 0x00, 0x31,				/* & Context */
		0xf7,						/* Atom E */
		0x9d, 0x00, 0x18, 0x00, 0x00, 0x00, 0x00,	/* Address */
		0x00, 0x00,					/* ETM_WRAP_BRANCH */
		0xf7, 0xf7,					/* Atoms E, E */
		0x70, 0x70,					/* Ignore */
	};
	static const uint8_t trace[] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,		/* A-sync */
		0x01, 0x00,					/* Trace Info */
		0x85, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00,	/* Address 0x1000 */
		0x00, 0x00, 0x31,				/* & Context */
		0xf7,						/* Atom E */
		0x9d, 0x00, 0x00, 0x00, 0xf8, 0xff, 0xff,	/* Address */
		0xff, 0xff,					/* ETM_TOP_BRANCH */
		0xf7, 0xf7,					/* Atoms E, E */
		0x70, 0x70,					/* Ignore */
	};
	int ret = check_etm_code(trace, sizeof(trace));

	return ret != TEST_OK ? ret : check_etm_code(backward, sizeof(backward));
}

/*
 * OpenCSD walks code to the next branch, however far: from 4 GiB, NOPs
 * to the top, and again at each address.  The decode stops reading code
 * after 16 MiB and 1 KiB a byte of trace: 4000 walks, each of up to 16 MiB,
 * end within the test's bound.
 */
#define ETM_WALKS	4000

static int test_code_without_branches(void)
{
	static const uint8_t head[] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,		/* A-sync */
		0x01, 0x00,					/* Trace Info */
		0x85, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,	/* Address 4 GiB */
		0x00, 0x00, 0x31,				/* & Context */
		0xf7,						/* Atom E */
	};
	static const uint8_t walk[] = {
		0x9d, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,	/* Address 4 GiB */
		0x00, 0x00,
		0xf7,						/* Atom E */
	};
	size_t len = sizeof(head) + ETM_WALKS * sizeof(walk);
	uint8_t *trace = malloc(len);
	int ret;

	if (!trace)
		return TEST_FAIL;
	memcpy(trace, head, sizeof(head));
	for (int i = 0; i < ETM_WALKS; i++)
		memcpy(trace + sizeof(head) + i * sizeof(walk), walk, sizeof(walk));
	ret = check_etm_code(trace, len);
	free(trace);
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
	{ "real ETM, the flow callback sees every branch, instruction and error", test_flow },
	{ "real ETM/ETE timestamps as trc_pkt_lister's, and windows cut at them", test_timestamps },
	{ "real ETM, another thread's trace is left out", test_thread },
	{ "ETE repro: a mispredict that crashed OpenCSD ends in a decode error",
	  test_repro_mispredict },
	{ "ETE repro: a cancel that hung OpenCSD ends in a decode error", test_repro_cancel },
	{ "ETE repro: with speculation too, a mispredict is a bad packet",
	  test_repro_mispredict_speculative },
	{ "ETM repro: a Commit before an exception's address is a decode error",
	  test_repro_exception_commit },
	{ "ETM repro: a Trace Info deeper than MAXSPEC does not sync", test_repro_spec_depth },
	{ "ETM repro: a Commit before a Q element's address is a decode error",
	  test_repro_q_commit },
	{ "ETM: with speculation, a Commit after an exception's address decodes",
	  test_exception_addr_commit },
	{ "ETM: after a bad packet, the A-sync right after it syncs", test_resync_after_bad_packet },
	{ "ETE repro: an empty return stack popped at an exception is a decode error",
	  test_repro_return_stack },
	{ "ETE repro: a source address at the top of memory is a gap",
	  test_repro_top_address },
	{ "ETE: no code is read at the top of memory", test_top_of_memory },
	{ "ETE: walks of code without a branch end", test_code_without_branches },
	{ NULL, NULL },
};
