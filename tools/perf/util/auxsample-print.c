// SPDX-License-Identifier: GPL-2.0
/*
 * Decoded samples as text and JSON: what perf auxsample script prints,
 * and the JSON of the addresses that perf auxsample report prints.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <linux/string.h>
#include <auxsample/auxsample.h>

#include "auxsample.h"
#include "auxsample-print.h"
#include "auxsample-symcache.h"
#include "branch.h"
#include "data-convert.h"
#include "debug.h"
#include "dso.h"
#include "event.h"
#include "evsel.h"
#include "sample.h"
#include "strbuf.h"
#include "symbol.h"
#include "thread.h"
#include "time-utils.h"

/*
 * "%16" PRIx64 " %s+%#" PRIx64 of the address and its symbol, at @p, by
 * hand: the branch lines are most of the output, and printf was most of
 * its cost.  @p has room for ADDR_TEXT_MAX plus the name.
 */
#define ADDR_TEXT_MAX	(16 + 2 + 1 + 18)

/* How many hex digits @v, not 0, has. */
static int hex_digits(u64 v)
{
	return (67 - __builtin_clzll(v)) / 4;
}

/* The hex digits of @v ("0" for 0), ending just before @end. */
static void hex_text(char *end, u64 v)
{
	static const char digits[] = "0123456789abcdef";

	do
		*--end = digits[v & 15];
	while (v >>= 4);
}

static char *addr_text(char *p, const struct auxsample_symcache_entry *e, u64 addr)
{
	int n;

	if (!addr) {
		memcpy(p, "               ?", 16);
		return p + 16;
	}
	/* Right-aligned in 16 columns, as %16 PRIx64. */
	memcpy(p, "                ", 16);
	hex_text(p + 16, addr);
	p += 16;
	if (!e->a.sym)
		return p;
	*p++ = ' ';
	memcpy(p, e->a.sym->name, e->name_len);
	p += e->name_len;
	*p++ = '+';
	if (!e->a.symoff) {
		*p++ = '0';
		return p;
	}
	*p++ = '0';
	*p++ = 'x';
	n = hex_digits(e->a.symoff);
	hex_text(p + n, e->a.symoff);
	return p + n;
}

/* A line's parts after an address: " -> ", or the suffix and its NUL. */
#define LINE_TAIL	16

/*
 * A part of a line that is not an address, copied LINE_TAIL bytes at a
 * time into the room that each address leaves after it: a copy of fixed
 * size is two instructions, a call to memcpy() and strlen() some forty.
 */
struct line_part {
	char		text[LINE_TAIL];
	unsigned int	len;
};

/* A longer string than the room: "initializer-string ... too long", an error with -Werror. */
#define LINE_PART(s)	{ s, sizeof(s) - 1 }

static const struct line_part line_none = LINE_PART("");
static const struct line_part line_end = LINE_PART("\n");
static const struct line_part line_arrow = LINE_PART(" -> ");
static const struct line_part line_branch = LINE_PART("\tbranch ");
static const struct line_part line_caller = LINE_PART("\tcaller ");

static void line_part__add(struct strbuf *sb, const struct line_part *part)
{
	memcpy(sb->buf + sb->len, part->text, LINE_TAIL);
	sb->len += part->len;
}

/* Room for @len bytes at the end of @sb, and LINE_TAIL more. */
static int auxsample_print__room(struct strbuf *sb, size_t len)
{
	/* strbuf_grow() is a call a part of each line, where most need none. */
	if (sb->alloc - sb->len > len + LINE_TAIL)
		return 0;
	return strbuf_grow(sb, len + LINE_TAIL);
}

/* A sample's listing: where it goes, and the process its addresses are of. */
struct auxsample_listing {
	struct auxsample_symcache	*cache;
	struct strbuf			*sb;
	struct thread			*thread;
	const struct maps		*maps;
	pid_t				pid;
};

/*
 * The text of @addr at the end of the listing, made and kept in its entry
 * of the cache, with room for LINE_TAIL bytes after it.  Not
 * NUL-terminated.
 */
static noinline int auxsample_listing__make_addr(struct auxsample_listing *l, u64 addr)
{
	struct auxsample_symcache_entry tmp;
	struct auxsample_symcache_entry *e = auxsample_symcache__find(l->cache, l->thread, addr,
								       &tmp);
	int err = auxsample_print__room(l->sb, ADDR_TEXT_MAX + e->name_len);
	size_t len;
	char *p;

	if (err)
		return err;
	p = l->sb->buf + l->sb->len;
	len = addr_text(p, e, addr) - p;
	/* Without memory for it, made again next time. */
	if (e != &tmp) {
		free(e->text);
		e->text = memdup(p, len);
		e->text_len = len;
	}
	l->sb->len += len;
	return 0;
}

/*
 * The text of @addr, as auxsample_listing__make_addr() made it before:
 * loops print the same branches in sample after sample.
 */
static int auxsample_listing__add_addr(struct auxsample_listing *l, u64 addr)
{
	const struct auxsample_symcache_entry *e = auxsample_symcache__hit(l->cache, l->maps,
									    l->pid, addr);
	int err;

	if (!e || !e->text)
		return auxsample_listing__make_addr(l, addr);
	err = auxsample_print__room(l->sb, e->text_len);
	if (err)
		return err;
	memcpy(l->sb->buf + l->sb->len, e->text, e->text_len);
	l->sb->len += e->text_len;
	return 0;
}

/*
 * One line of @prefix, the addresses and their symbols, and @suffix.  An
 * address's entry in the cache holds until the next lookup, which may
 * take its slot: each is looked up as its text is added.
 */
static int auxsample_listing__add_line(struct auxsample_listing *l,
				       const struct line_part *prefix, u64 from, const u64 *to,
				       const struct line_part *suffix)
{
	struct strbuf *sb = l->sb;
	int err = auxsample_print__room(sb, 0);

	if (!err) {
		line_part__add(sb, prefix);
		err = auxsample_listing__add_addr(l, from);
	}
	if (!err && to) {
		line_part__add(sb, &line_arrow);
		err = auxsample_listing__add_addr(l, *to);
	}
	if (err)
		return err;
	line_part__add(sb, suffix);
	return strbuf_setlen(sb, sb->len);
}

void auxsample_print__text(FILE *fp, struct strbuf *sb, struct auxsample_symcache *cache,
			   struct thread *thread, struct perf_sample *sample, struct evsel *evsel,
			   const struct auxsample_result *res)
{
	static const struct line_part branch_suffix[] = {
		[0]			= LINE_PART(" unknown\n"),
		[AUXSAMPLE_BR_COND]	= LINE_PART(" cond\n"),
		[AUXSAMPLE_BR_JUMP]	= LINE_PART(" jump\n"),
		[AUXSAMPLE_BR_IND_JUMP]	= LINE_PART(" ind_jump\n"),
		[AUXSAMPLE_BR_CALL]	= LINE_PART(" call\n"),
		[AUXSAMPLE_BR_IND_CALL]	= LINE_PART(" ind_call\n"),
		[AUXSAMPLE_BR_RET]	= LINE_PART(" ret\n"),
		[AUXSAMPLE_BR_FAR]	= LINE_PART(" far\n"),
		[AUXSAMPLE_BR_INTR]	= LINE_PART(" intr\n"),
		[AUXSAMPLE_BR_GAP]	= LINE_PART(" gap\n"),
	};
	struct auxsample_listing l = {
		.cache = cache, .sb = sb, .thread = thread,
		.maps = thread__maps(thread), .pid = thread__pid(thread),
	};
	const struct auxsample_branch *br = res->branches;
	const u64 *chain = res->callchain;
	bool sync = res->nr != -AUXSAMPLE_ERR_NOSYNC;
	int err;

	strbuf_setlen(sb, 0);
	err = strbuf_addf(sb, "%16s %6d [%03d] %" PRIu64 ": %s: ",
			  auxsample_thread__comm_str_at(thread, sample->time),
			  sample->tid, sample->cpu, sample->time, evsel__name(evsel)) ?:
	      auxsample_listing__add_line(&l, &line_none, sample->ip, NULL, &line_end);
	if (!err && !sync)
		err = strbuf_addf(sb, "\tno sync point in the %" PRIu64 " bytes of trace\n",
				  sample->aux_sample.size);
	for (int i = 0; !err && sync && i < res->nr_branches; i++) {
		unsigned int kind = br[i].kind < ARRAY_SIZE(branch_suffix) ? br[i].kind : 0;
		u64 to = br[i].to;

		err = auxsample_listing__add_line(&l, &line_branch, br[i].from, &to,
						  &branch_suffix[kind]);
	}
	for (int i = 0; !err && sync && i < res->depth; i++)
		err = auxsample_listing__add_line(&l, &line_caller, chain[i], NULL, &line_end);
	/* Out of memory: what fits, rather than nothing. */
	fwrite_unlocked(sb->buf, 1, sb->len, fp);
}

void auxsample_print__json_sym(FILE *fp, const char *name, u64 off, bool with_off)
{
	char *str = NULL;

	if (!with_off || asprintf(&str, "%s+0x%" PRIx64, name, off) < 0) {
		output_json_string(fp, name);
		return;
	}
	output_json_string(fp, str);
	free(str);
}

/*
 * "<key>sym":"symbol+offset","<key>dso":"file" of @addr, as perf script's
 * sym, symoff and dso fields give them, each null where unknown.
 */
static void auxsample_print__json_where(FILE *fp, struct auxsample_symcache *cache,
					struct thread *thread, const char *key, u64 addr)
{
	struct auxsample_symcache_entry tmp;
	const struct auxsample_addr *a = &auxsample_symcache__find(cache, thread, addr, &tmp)->a;

	fprintf(fp, "\"%ssym\":", key);
	if (a->sym)
		auxsample_print__json_sym(fp, a->sym->name, a->symoff, true);
	else
		fprintf(fp, "null");
	fprintf(fp, ",\"%sdso\":", key);
	if (a->dso)
		output_json_string(fp, dso__long_name(a->dso));
	else
		fprintf(fp, "null");
}

static void auxsample_print__json_branches(FILE *fp, struct auxsample_symcache *cache,
					   struct thread *thread,
					   const struct auxsample_branch *br, int nr)
{
	for (int i = 0; i < nr; i++) {
		bool to_known = !(br[i].flags & AUXSAMPLE_BRF_TO_UNKNOWN);

		fprintf(fp, "%s{\"from\":\"%#" PRIx64 "\",\"to\":", i ? "," : "", br[i].from);
		if (to_known)
			fprintf(fp, "\"%#" PRIx64 "\"", br[i].to);
		else
			fprintf(fp, "null");
		fprintf(fp, ",\"kind\":\"%s\",", auxsample_branch_kind__name(br[i].kind));
		auxsample_print__json_where(fp, cache, thread, "from_", br[i].from);
		fputc(',', fp);
		auxsample_print__json_where(fp, cache, thread, "to_", to_known ? br[i].to : 0);
		/* Intel PT with CYC packets: LBR's cycles since the branch before. */
		if (br[i].cycles)
			fprintf(fp, ",\"cycles\":%u", br[i].cycles);
		fputc('}', fp);
	}
}

/*
 * One JSON object per line: the sample, its branches and its call chain,
 * with what perf script shows of them: symbols, dsos, and the time as
 * seconds.microseconds ("time") besides the nanoseconds ("timestamp", as
 * perf data convert --to-json gives them).
 */
void auxsample_print__json(FILE *fp, struct auxsample_symcache *cache, struct thread *thread,
			   struct perf_sample *sample, struct evsel *evsel,
			   const struct auxsample_result *res)
{
	bool sync = res->nr != -AUXSAMPLE_ERR_NOSYNC;
	const u64 *chain = res->callchain;
	int depth = sync ? res->depth : 0;
	char time[32];

	timestamp__scnprintf_usec(sample->time, time, sizeof(time));
	fprintf(fp, "{\"comm\":");
	output_json_string(fp, auxsample_thread__comm_str_at(thread, sample->time) ?: "");
	fprintf(fp, ",\"pid\":%d,\"tid\":%d,\"cpu\":%d,\"time\":\"%s\",\"timestamp\":%" PRIu64
		",\"event\":", sample->pid, sample->tid, sample->cpu, time, sample->time);
	output_json_string(fp, evsel__name(evsel));
	fprintf(fp, ",\"ip\":\"%#" PRIx64 "\",", sample->ip);
	auxsample_print__json_where(fp, cache, thread, "", sample->ip);
	fprintf(fp, ",\"sync\":%s,\"branches\":[", sync ? "true" : "false");
	auxsample_print__json_branches(fp, cache, thread, res->branches,
				       sync ? res->nr_branches : 0);
	fprintf(fp, "],\"callchain\":[");
	for (int i = 0; i < depth; i++) {
		fprintf(fp, "%s{\"ip\":\"%#" PRIx64 "\",", i ? "," : "", chain[i]);
		auxsample_print__json_where(fp, cache, thread, "", chain[i]);
		fputc('}', fp);
	}
	fprintf(fp, "]}\n");
}

void auxsample_print__json_addr(FILE *fp, const char *key, const struct auxsample_addr *a,
				bool offset)
{
	fprintf(fp, "\"%s\":", key);
	if (a->ip)
		fprintf(fp, "\"%#" PRIx64 "\"", a->ip);
	else
		fprintf(fp, "null");
	fprintf(fp, ",\"%s_sym\":", key);
	if (a->sym)
		auxsample_print__json_sym(fp, a->sym->name, a->symoff, offset);
	else
		fprintf(fp, "null");
	fprintf(fp, ",\"%s_dso\":", key);
	if (a->dso) {
		output_json_string(fp, dso__long_name(a->dso));
		fprintf(fp, ",\"%s_off\":\"%#" PRIx64 "\"", key, a->off);
	} else {
		fprintf(fp, "null,\"%s_off\":null", key);
	}
}

/*
 * A far branch: into the kernel (a syscall, whose user-only trace shows
 * no target), back out of it, or, for ETM, an exception return.  Far
 * calls, jumps and returns within user code have no perf type of their own.
 */
static u8 auxsample_branch__far_type(const struct auxsample_branch *br, u32 trace_type)
{
	const u64 kernel = 1ULL << 63;	/* the upper half of x86-64 and AArch64 */
	u64 to = br->flags & AUXSAMPLE_BRF_TO_UNKNOWN ? 0 : br->to;

	if (trace_type == AUXSAMPLE_TRACE_ETM)
		return PERF_BR_ERET;
	if (br->from < kernel && (!to || to >= kernel))
		return PERF_BR_SYSCALL;
	if (br->from >= kernel && to && to < kernel)
		return PERF_BR_SYSRET;
	return PERF_BR_UNKNOWN;
}

u8 auxsample_branch__perf_type(const struct auxsample_branch *br, u32 trace_type)
{
	switch (br->kind) {
	case AUXSAMPLE_BR_COND:		return PERF_BR_COND;
	case AUXSAMPLE_BR_JUMP:		return PERF_BR_UNCOND;
	case AUXSAMPLE_BR_IND_JUMP:	return PERF_BR_IND;
	case AUXSAMPLE_BR_CALL:		return PERF_BR_CALL;
	case AUXSAMPLE_BR_IND_CALL:	return PERF_BR_IND_CALL;
	case AUXSAMPLE_BR_RET:		return PERF_BR_RET;
	case AUXSAMPLE_BR_FAR:		return auxsample_branch__far_type(br, trace_type);
	case AUXSAMPLE_BR_INTR:		return PERF_BR_IRQ;
	default:			return PERF_BR_UNKNOWN;
	}
}

/*
 * "/<type>/- ", the end of a brstack entry, for each perf branch type:
 * get_branch_type() builds its table of names at each call, which was a
 * tenth of -F ip,brstack's time a sample on the dense bench file.  Made
 * once, by the parse of -F, before any sample is printed.
 */
static struct line_part brstack_tails[PERF_BR_MAX];

static void brstack_tails__init(void)
{
	for (int t = 0; t < PERF_BR_MAX; t++) {
		struct branch_entry e = { .flags.type = t };
		const char *type = t == PERF_BR_EXTEND_ABI ? "" : get_branch_type(&e);
		struct line_part *tail = &brstack_tails[t];

		tail->len = snprintf(tail->text, sizeof(tail->text), "/%s/- ", type ?: "");
		if (tail->len >= sizeof(tail->text))
			tail->len = sizeof(tail->text) - 1;
	}
}

/* perf script -F's names of the fields printed here. */
static const struct {
	const char	*name;
	unsigned int	field;
} auxsample_field_names[] = {
	{ "comm",	AUXSAMPLE_FIELD_COMM },
	{ "pid",	AUXSAMPLE_FIELD_PID },
	{ "tid",	AUXSAMPLE_FIELD_TID },
	{ "cpu",	AUXSAMPLE_FIELD_CPU },
	{ "ip",		AUXSAMPLE_FIELD_IP },
	{ "brstack",	AUXSAMPLE_FIELD_BRSTACK },
	{ "brstacksym",	AUXSAMPLE_FIELD_BRSTACKSYM },
};

/*
 * Whether @evsel's samples have what @fields prints, as perf script
 * checks them (evsel__check_attr()): 0, or -EINVAL said with pr_err().
 * With call chains (perf record -g), perf script prints comm and ip its
 * own way, the chain after the ip: not here.
 */
int auxsample_print__check_fields(struct evsel *evsel, unsigned int fields)
{
	static const struct {
		unsigned int	fields;
		u64		sample_type;
		const char	*what;
	} needs[] = {
		{ AUXSAMPLE_FIELD_COMM | AUXSAMPLE_FIELD_PID | AUXSAMPLE_FIELD_TID,
		  PERF_SAMPLE_TID, "TID" },
		{ AUXSAMPLE_FIELD_CPU, PERF_SAMPLE_CPU, "CPU" },
		{ AUXSAMPLE_FIELD_IP, PERF_SAMPLE_IP, "IP" },
	};
	u64 sample_type = evsel->core.attr.sample_type;

	for (size_t i = 0; i < ARRAY_SIZE(needs); i++) {
		if ((fields & needs[i].fields) && !(sample_type & needs[i].sample_type)) {
			pr_err("perf auxsample script: samples for '%s' event do not have %s attribute set: cannot print -F's fields of it\n",
			       evsel__name(evsel), needs[i].what);
			return -EINVAL;
		}
	}
	if ((fields & (AUXSAMPLE_FIELD_COMM | AUXSAMPLE_FIELD_IP)) &&
	    (sample_type & PERF_SAMPLE_CALLCHAIN)) {
		pr_err("perf auxsample script: '%s' samples have call chains (perf record -g), which perf script -F prints with comm and ip its own way: perf auxsample inject, then perf script -F\n",
		       evsel__name(evsel));
		return -EINVAL;
	}
	return 0;
}

/* The field named @name, or 0. */
static unsigned int auxsample_print__field(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(auxsample_field_names); i++) {
		if (!strcmp(name, auxsample_field_names[i].name))
			return auxsample_field_names[i].field;
	}
	return 0;
}

int auxsample_print__parse_fields(const char *list, unsigned int *fields)
{
	char *copy = strdup(list), *tok, *saveptr = NULL;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	*fields = 0;
	for (tok = strtok_r(copy, ",", &saveptr); tok; tok = strtok_r(NULL, ",", &saveptr)) {
		unsigned int field = auxsample_print__field(tok);

		if (!field) {
			pr_err("perf auxsample script: -F: '%s' is not a field it prints: comm, pid, tid, cpu, ip, brstack, brstacksym (perf script -F prints the others of an injected file)\n",
			       tok);
			err = -EINVAL;
			break;
		}
		*fields |= field;
	}
	free(copy);
	if (!err && !*fields) {
		pr_err("perf auxsample script: -F: no field given\n");
		err = -EINVAL;
	}
	if (!err)
		brstack_tails__init();
	return err;
}

/* Room for a brstack entry's text but its tail: " 0x<from>/0x<to>/-/-/-/<cycles>". */
#define BRSTACK_ENTRY_MAX	(sizeof(" 0x/0x/-/-/-/") - 1 + 16 + 16 + 10)

/* @v in decimal, at @p: the end. */
static char *dec_text(char *p, unsigned int v)
{
	char digits[10];
	int n = 0;

	do
		digits[n++] = '0' + v % 10;
	while (v /= 10);
	while (n)
		*p++ = digits[--n];
	return p;
}

/* "0x" and @v's hex digits at @p: the end. */
static char *hex0x_text(char *p, u64 v)
{
	int n = v ? hex_digits(v) : 1;

	*p++ = '0';
	*p++ = 'x';
	hex_text(p + n, v);	/* 0: one digit */
	return p + n;
}

/* brstacksym's "<sym>+0x<off>" of @addr, or "[unknown]", as symbol__fprintf_symname_offs(). */
static int auxsample_listing__add_symoff(struct auxsample_listing *l, u64 addr)
{
	struct auxsample_symcache_entry tmp;
	const struct auxsample_symcache_entry *e = auxsample_symcache__find(l->cache, l->thread,
									    addr, &tmp);

	if (!e->a.sym)
		return strbuf_addstr(l->sb, "[unknown]");
	return strbuf_addf(l->sb, "%s+0x%" PRIx64, e->a.sym->name, e->a.symoff);
}

/*
 * One branch of perf script's brstack field: " 0x<from>/0x<to>" or, for
 * brstacksym, "<sym>+0x<off>/<sym>+0x<off>", then its flags:
 * "/<P|M|->/<X|->/<A|->/<cycles>/<type>/<spec> ", as print_bstack_flags()
 * prints them.  A virtual LBR predicts nothing and has no transactions;
 * its cycles are CYC's, as perf report's.
 */
static int auxsample_listing__add_brstack(struct auxsample_listing *l,
					  const struct auxsample_branch *br, u32 trace_type,
					  bool sym)
{
	u64 to = br->flags & AUXSAMPLE_BRF_TO_UNKNOWN ? 0 : br->to;
	unsigned int type = auxsample_branch__perf_type(br, trace_type);
	int err;
	char *p;

	if (sym) {
		err = auxsample_listing__add_symoff(l, br->from) ?:
		      strbuf_addch(l->sb, '/') ?:
		      auxsample_listing__add_symoff(l, to);
		if (err)
			return err;
	}
	err = auxsample_print__room(l->sb, BRSTACK_ENTRY_MAX);
	if (err)
		return err;
	p = l->sb->buf + l->sb->len;
	if (!sym) {
		*p++ = ' ';
		p = hex0x_text(p, br->from);
		*p++ = '/';
		p = hex0x_text(p, to);
	}
	memcpy(p, "/-/-/-/", 7);
	l->sb->len = dec_text(p + 7, br->cycles) - l->sb->buf;
	line_part__add(l->sb, &brstack_tails[type < PERF_BR_MAX ? type : PERF_BR_UNKNOWN]);
	return 0;
}

void auxsample_print__fields(FILE *fp, struct strbuf *sb, struct auxsample_symcache *cache,
			     struct thread *thread, struct perf_sample *sample,
			     const struct auxsample_result *res, u32 trace_type,
			     unsigned int fields)
{
	struct auxsample_listing l = {
		.cache = cache, .sb = sb, .thread = thread,
		.maps = thread__maps(thread), .pid = thread__pid(thread),
	};
	bool sym = !(fields & AUXSAMPLE_FIELD_BRSTACK);
	/* As perf auxsample inject writes it: no branches without a sync point. */
	int nr = res->nr > 0 ? res->nr : 0;
	int err = 0;

	strbuf_setlen(sb, 0);
	/* builtin-script.c's perf_sample__fprintf_start(), then process_event()'s. */
	if (fields & AUXSAMPLE_FIELD_COMM)
		err = strbuf_addf(sb, "%16s ", auxsample_thread__comm_str_at(thread, sample->time));
	if (!err && (fields & AUXSAMPLE_FIELD_PID) && (fields & AUXSAMPLE_FIELD_TID))
		err = strbuf_addf(sb, "%7d/%-7d ", sample->pid, sample->tid);
	else if (!err && (fields & (AUXSAMPLE_FIELD_PID | AUXSAMPLE_FIELD_TID)))
		err = strbuf_addf(sb, "%7d ", fields & AUXSAMPLE_FIELD_PID ? sample->pid : sample->tid);
	if (!err && (fields & AUXSAMPLE_FIELD_CPU))
		err = strbuf_addf(sb, "[%03d] ", sample->cpu);
	if (!err && (fields & AUXSAMPLE_FIELD_IP))
		err = strbuf_addf(sb, " %16" PRIx64, sample->ip);
	if (fields & (AUXSAMPLE_FIELD_BRSTACK | AUXSAMPLE_FIELD_BRSTACKSYM)) {
		for (int i = 0; !err && i < nr; i++)
			err = auxsample_listing__add_brstack(&l, &res->branches[i], trace_type, sym);
	}
	if (!err)
		strbuf_addch(sb, '\n');
	/* Out of memory: what fits, rather than nothing. */
	fwrite_unlocked(sb->buf, 1, sb->len, fp);
}
