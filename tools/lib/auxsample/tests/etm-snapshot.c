// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The real ETM/ETE traces the tests decode (etm-snapshot.h): OpenCSD's
 * test snapshots, read as trc_pkt_lister reads them, and the trace
 * buffers of perf's cs_etm recordings.  fuzz-etm reads them too.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <auxsample/auxsample.h>
#include "tests.h"
#include "test-data.h"
#include "etm-snapshot.h"

const char * const etm_snapshots[ETM_SNAPSHOTS][2] = {
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

void snapshot__exit(struct snapshot *ss)
{
	for (unsigned int i = 0; i < ss->nr_mem; i++)
		free(ss->mem[i].file);
	free(ss->trace);
	free(ss);
}

struct snapshot *snapshot__load(const char *subdir, const char *name)
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

int snapshot__read(uint8_t *buf, size_t size, uint64_t addr, void *context)
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

/*
 * A decoder for @nr sources of @ss from @first on, reading code with
 * @read, every step of the flow to @flow if not NULL.
 */
struct auxsample_decoder *snapshot__new_decoder(struct snapshot *ss, unsigned int first,
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

struct auxsample_decoder *snapshot__decoder(struct snapshot *ss, unsigned int first,
						   unsigned int nr)
{
	return snapshot__new_decoder(ss, first, nr, snapshot__read, NULL, NULL);
}

struct snapshot *snapshot__get(const char *subdir, const char *name)
{
	struct snapshot *ss = snapshot__load(subdir, name);

	if (!ss)
		test_skip_reason = "no ../shared/data/" OPENCSD " snapshots (set AUXSAMPLE_DATA)";
	return ss;
}

/*
 * perf's own recordings: the trace buffers (PERF_RECORD_AUXTRACE) of a
 * cs_etm perf.data, as perf record writes them for a full trace, with
 * each buffer's CPU's source from AUXTRACE_INFO (version 1 and later),
 * formatted (ETMv4 through an ETR).  No code: what is compared is where
 * the trace syncs, is lost (every kernel address is unreadable here) and
 * ends, and the branches that need no code.
 */
#define PERF_RECORD_AUXTRACE_INFO	70
#define PERF_RECORD_AUXTRACE		71
#define CS_ETMV4_MAGIC		0x4040404040404040ULL
#define CS_HEADER_U64S		3	/* version, PMU type and CPUs, snapshot */
#define CS_BLOCK_U64S		3	/* magic, CPU, number of parameters */

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
int perfdata__load(const char *name, struct snapshot **ss, unsigned int *nr)
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

/* Register h[5] of @src xored with h[6..7], as fuzz-etm does. */
void etm_repro__xor_register(struct auxsample_etm_source *src, const uint8_t *h)
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
