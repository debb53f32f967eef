// SPDX-License-Identifier: GPL-2.0
/*
 * Windows: every sample recorded beside a full trace gets the trace that
 * leads up to it, as if the kernel had copied it into the sample
 * (PERF_SAMPLE_AUX), and is then decoded as any AUX snippet is.
 *
 * CoreSight ETM: each CPU's buffers are decoded once, without code, for
 * the timestamps of its own source (in formatted trace, its trace ID's),
 * and a sample gets the trace up to the last timestamp not later than it,
 * cut on the frame before it in formatted trace, within the buffer that
 * holds it: buffers are not contiguous.  Its source alone decodes it.
 * The timestamps are perf time only where every ETM says they are the
 * kernel's (ts_source 1, as perf's cs-etm.c requires): then they convert
 * with PERF_RECORD_TIME_CONV, else no sample can be placed in the trace.
 *
 * Intel PT:
 *
 * Each CPU's trace is scanned once, packet by packet (no code is read):
 * where the traced code stopped (FUP + TIP.PGD: an interrupt, in user-only
 * trace the PMI of a sample at the FUP's IP; TIP.PGD alone: a syscall,
 * then the TIP.PGE of the return) and the TSC packets with their offsets.
 * A sample then takes the first stop after the previous sample's on its
 * CPU that is at its IP (or, trace off, resumes at it) and that lies
 * before the first TSC later than the sample: its window ends with that
 * stop's TIP.PGD, as a real snippet ends.  A sample without such a stop
 * gets the trace up to the last TSC not later than it: older branches
 * only, never one that came after the sample.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/bitfield.h>
#include <linux/coresight-pmu.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/string.h>
#include <linux/zalloc.h>
#include <auxsample/auxsample.h>

#include "addr_location.h"
#include "auxsample.h"
#include "auxsample-config.h"
#include "auxsample-fulltrace.h"
#include "auxsample-profile.h"
#include "auxsample-window.h"
#include "auxtrace.h"
#include "build-id.h"
#include "cs-etm.h"
#include "data.h"
#include "debug.h"
#include "dso.h"
#include "event.h"
#include "intel-pt.h"
#include "intel-pt-decoder/intel-pt-pkt-decoder.h"
#include "machine.h"
#include "map.h"
#include "sample.h"
#include "session.h"
#include "symbol.h"
#include "thread.h"
#include "tsc.h"

/* CoreSight formatter frames: formatted trace is cut on them */
#define CS_ETM_FRAME_SIZE	16

struct window_stop {
	u64	end;	/* offset just past the TIP.PGD */
	u64	at;	/* FUP IP: where an interrupt stopped the code, or 0 */
	u64	resume;	/* TIP.PGE IP: where the code went on, or 0 */
};

struct window_tsc {
	u64	offset;	/* of the TSC packet, or ETM timestamp packet */
	u64	time;	/* perf time */
	u64	base;	/* ETM: where its buffer begins in the CPU's trace */
};

struct window_cpu {
	int			cpu;
	u8			*trace;		/* the CPU's buffers, concatenated */
	size_t			len;
	struct window_stop	*stops;
	size_t			nr_stops;
	size_t			next_stop;	/* the first one no sample took */
	struct window_tsc	*tscs;
	size_t			nr_tscs;
	/* ETM: the CPU's source, that decodes its windows; NULL: Intel PT */
	struct auxsample_config	*config;
};

struct window_sample {
	struct perf_sample	sample;		/* the scalar fields only */
	struct evsel		*evsel;
	/* a reference: the machine forgets threads that exit */
	struct thread		*thread;
};

struct auxsample_windows {
	struct window_sample		*samples;
	size_t				nr_samples;
	size_t				cap_samples;
	struct window_cpu		*cpus;
	size_t				nr_cpus;
	struct perf_tsc_conversion	tc;
	bool				have_tc;
	size_t				max_bytes;
	struct auxsample_window_stats	stats;
	/* ETM: every source, from AUXTRACE_INFO */
	struct auxsample_config		etm;
	bool				have_etm;
	bool				etm_virtual_ts;	/* timestamps are kernel time */
};

struct auxsample_windows *auxsample_windows__new(size_t max_bytes)
{
	struct auxsample_windows *ws = zalloc(sizeof(*ws));

	if (ws)
		ws->max_bytes = max_bytes;
	return ws;
}

void auxsample_windows__delete(struct auxsample_windows *ws)
{
	if (!ws)
		return;
	for (size_t i = 0; i < ws->nr_cpus; i++) {
		free(ws->cpus[i].trace);
		free(ws->cpus[i].stops);
		free(ws->cpus[i].tscs);
		if (ws->cpus[i].config)
			auxsample_config__exit(ws->cpus[i].config);
		free(ws->cpus[i].config);
	}
	free(ws->cpus);
	auxsample_config__exit(&ws->etm);
	for (size_t i = 0; i < ws->nr_samples; i++)
		thread__put(ws->samples[i].thread);
	free(ws->samples);
	free(ws);
}

/* ETM: every source, and whether its timestamps are perf's. */
static void auxsample_windows__cs_etm(struct auxsample_windows *ws, union perf_event *event)
{
	u64 pmu_type;

	if (ws->have_etm || auxsample_config__from_cs_etm(&ws->etm, event, &pmu_type))
		return;
	ws->have_etm = true;
	ws->etm_virtual_ts = auxsample_cs_etm__virtual_ts(event);
}

void auxsample_windows__time_conv(struct auxsample_windows *ws, union perf_event *event)
{
	const __u64 *priv = event->auxtrace_info.priv;
	size_t nr = (event->header.size - sizeof(event->auxtrace_info)) / sizeof(u64);

	if (event->auxtrace_info.type == PERF_AUXTRACE_CS_ETM) {
		auxsample_windows__cs_etm(ws, event);
		return;
	}
	if (event->auxtrace_info.type != PERF_AUXTRACE_INTEL_PT ||
	    nr <= INTEL_PT_CAP_USER_TIME_ZERO || !priv[INTEL_PT_CAP_USER_TIME_ZERO])
		return;
	ws->tc.time_shift = priv[INTEL_PT_TIME_SHIFT];
	ws->tc.time_mult = priv[INTEL_PT_TIME_MULT];
	ws->tc.time_zero = priv[INTEL_PT_TIME_ZERO];
	ws->tc.cap_user_time_zero = 1;
	ws->have_tc = true;
}

int auxsample_windows__add(struct auxsample_windows *ws, struct perf_sample *sample,
			   struct evsel *evsel, struct thread *thread)
{
	struct window_sample *s;

	if (ws->nr_samples == ws->cap_samples) {
		size_t cap = ws->cap_samples ? ws->cap_samples * 2 : 1024;

		s = realloc(ws->samples, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		ws->samples = s;
		ws->cap_samples = cap;
	}
	s = &ws->samples[ws->nr_samples++];
	memset(s, 0, sizeof(*s));
	s->sample.ip = sample->ip;
	s->sample.pid = sample->pid;
	s->sample.tid = sample->tid;
	s->sample.time = sample->time;
	s->sample.cpu = sample->cpu;
	s->sample.id = sample->id;
	s->sample.period = sample->period;
	s->sample.cpumode = sample->cpumode;
	s->evsel = evsel;
	s->thread = thread__get(thread);
	return 0;
}

/* The IP an IP packet gives, from the last one (Intel SDM, IP compression). */
static u64 window__ip(const struct intel_pt_pkt *p, u64 last_ip)
{
	switch (p->count) {
	case 1:
		return (last_ip & ~0xffffULL) | p->payload;
	case 2:
		return (last_ip & ~0xffffffffULL) | p->payload;
	case 3:
		return p->payload & BIT_ULL(47) ? p->payload | ~GENMASK_ULL(47, 0) : p->payload;
	case 4:
		return (last_ip & ~GENMASK_ULL(47, 0)) | p->payload;
	case 6:
		return p->payload;
	default:
		return 0;	/* suppressed */
	}
}

static int window_cpu__add_stop(struct window_cpu *c, size_t *cap, u64 end, u64 at)
{
	if (c->nr_stops == *cap) {
		size_t n = *cap ? *cap * 2 : 256;
		struct window_stop *stops = realloc(c->stops, n * sizeof(*stops));

		if (!stops)
			return -ENOMEM;
		c->stops = stops;
		*cap = n;
	}
	c->stops[c->nr_stops++] = (struct window_stop){ .end = end, .at = at };
	return 0;
}

static int window_cpu__add_tsc(struct window_cpu *c, size_t *cap, u64 offset, u64 time)
{
	if (c->nr_tscs == *cap) {
		size_t n = *cap ? *cap * 2 : 256;
		struct window_tsc *tscs = realloc(c->tscs, n * sizeof(*tscs));

		if (!tscs)
			return -ENOMEM;
		c->tscs = tscs;
		*cap = n;
	}
	c->tscs[c->nr_tscs++] = (struct window_tsc){ .offset = offset, .time = time };
	return 0;
}

static bool window__is_ip_packet(enum intel_pt_pkt_type type)
{
	return type == INTEL_PT_TIP || type == INTEL_PT_TIP_PGE ||
	       type == INTEL_PT_TIP_PGD || type == INTEL_PT_FUP;
}

/* Packets that may come between a FUP and its TIP.PGD. */
static bool window__is_timing_packet(enum intel_pt_pkt_type type)
{
	return type == INTEL_PT_PAD || type == INTEL_PT_TSC || type == INTEL_PT_MTC ||
	       type == INTEL_PT_CYC || type == INTEL_PT_TMA || type == INTEL_PT_CBR;
}

/* The 7 bytes of a TSC packet, the top byte from the previous TSC. */
static u64 window__tsc(u64 payload, u64 prev)
{
	const u64 mask = GENMASK_ULL(55, 0);
	u64 tsc = (prev & ~mask) | payload;

	if (prev && tsc < prev && prev - tsc > mask / 2)
		tsc += mask + 1;
	return tsc;
}

/*
 * Intel PT: one pass over the packets.  A corrupt byte loses the packets
 * up to the next PSB, where the scan goes on, as decoders resync.
 */
static int window_cpu__scan_pt(struct auxsample_windows *ws, struct window_cpu *c)
{
	enum intel_pt_pkt_ctx ctx = INTEL_PT_NO_CTX;
	size_t cap_stops = 0, cap_tscs = 0, pos = 0;
	u64 last_ip = 0, last_fup = 0, tsc = 0;
	struct intel_pt_pkt p;
	int n, err = 0;

	while (!err && pos < c->len) {
		n = intel_pt_get_packet(c->trace + pos, c->len - pos, &p, &ctx);
		if (n <= 0) {
			u8 *psb = memmem(c->trace + pos + 1, c->len - pos - 1,
					 INTEL_PT_PSB_STR, INTEL_PT_PSB_LEN);

			ws->stats.bad_packets++;
			if (!psb)
				break;
			pos = psb - c->trace;
			last_ip = last_fup = 0;
			continue;
		}
		intel_pt_upd_pkt_ctx(&p, &ctx);
		if (p.type == INTEL_PT_TSC) {
			tsc = window__tsc(p.payload, tsc);
			if (ws->have_tc)
				err = window_cpu__add_tsc(c, &cap_tscs, pos,
							  tsc_to_perf_time(tsc, &ws->tc));
		} else if (window__is_ip_packet(p.type) && p.count) {
			last_ip = window__ip(&p, last_ip);
		}
		if (p.type == INTEL_PT_TIP_PGD) {
			err = window_cpu__add_stop(c, &cap_stops, pos + n, last_fup);
		} else if (p.type == INTEL_PT_TIP_PGE && c->nr_stops &&
			   !c->stops[c->nr_stops - 1].resume) {
			c->stops[c->nr_stops - 1].resume = p.count ? last_ip : 0;
		} else if (p.type == INTEL_PT_PSB) {
			last_ip = 0;
		}
		/* Only a FUP right before a TIP.PGD says where code stopped. */
		if (p.type == INTEL_PT_FUP)
			last_fup = p.count ? last_ip : 0;
		else if (!window__is_timing_packet(p.type))
			last_fup = 0;
		pos += n;
	}
	return err;
}

/* ETM: the configuration that decodes @c's windows: its CPU's source alone. */
static int window_cpu__etm_config(struct auxsample_windows *ws, struct auxsample_fulltrace *ft,
				  struct window_cpu *c)
{
	const struct auxsample_etm_config *etm = &ws->etm.etm;
	struct auxsample_etm_source *src = NULL;
	int trace_id;
	bool raw;

	for (unsigned int i = 0; i < etm->nr_sources && !src; i++) {
		if (etm->sources[i].cpu == c->cpu)
			src = memdup(&etm->sources[i], sizeof(*src));
	}
	/* Not traced: its samples get no window. */
	if (!src) {
		pr_debug("CPU %d has no ETM configuration in AUXTRACE_INFO\n", c->cpu);
		return 0;
	}
	auxsample_fulltrace__cpu_format(ft, c->cpu, &trace_id, &raw);
	if (trace_id >= 0)
		src->trace_id = trace_id;
	c->config = memdup(&ws->etm, sizeof(*c->config));
	if (!c->config) {
		free(src);
		return -ENOMEM;
	}
	c->config->etm.sources = src;
	c->config->etm.nr_sources = 1;
	c->config->etm.formatted = !raw;
	return 0;
}

/* What scanning one ETM buffer for its timestamps needs. */
struct window_etm_scan {
	struct auxsample_windows	*ws;
	struct window_cpu		*c;
	size_t				cap;
	u64				base;	/* of the buffer in the CPU's trace */
	int				err;
};

static void window__etm_flow(const struct auxsample_flow *flow, void *context)
{
	struct window_etm_scan *scan = context;
	struct window_cpu *c = scan->c;
	u64 time;

	if (flow->type != AUXSAMPLE_FLOW_TIMESTAMP || scan->err)
		return;
	time = tsc_to_perf_time(flow->to, &scan->ws->tc);
	/* Out of order (a wrap, a reset): not a place a sample can be put. */
	if (c->nr_tscs && time < c->tscs[c->nr_tscs - 1].time)
		return;
	scan->err = window_cpu__add_tsc(c, &scan->cap, scan->base + flow->from, time);
	if (!scan->err)
		c->tscs[c->nr_tscs - 1].base = scan->base;
}

/* Where the timestamps are, needs no code: the scan reads none. */
static int window__no_code(u8 *buf __maybe_unused, size_t size __maybe_unused,
			   u64 addr __maybe_unused, void *context __maybe_unused)
{
	return -1;
}

/*
 * ETM: each of @c's @nr buffers (@sizes bytes, one after the other in
 * c->trace) decoded on its own, as they are not contiguous, for the
 * timestamps of the CPU's source.
 */
static int window_cpu__scan_etm(struct auxsample_windows *ws, struct auxsample_fulltrace *ft,
				struct window_cpu *c, const size_t *sizes, size_t nr)
{
	struct window_etm_scan scan = { .ws = ws, .c = c, };
	struct auxsample_decoder *dec;
	struct auxsample_config cfg;
	int err = window_cpu__etm_config(ws, ft, c);

	/* Placing samples needs perf time: without it every window is empty. */
	if (err || !c->config || !ws->have_tc)
		return err;
	cfg = *c->config;
	cfg.read_memory = window__no_code;
	cfg.flow = window__etm_flow;
	cfg.flow_context = &scan;
	dec = auxsample_decoder__new(&cfg, &err);
	if (!dec) {
		pr_err("cannot set up an ETM decoder for CPU %d: %s\n", c->cpu,
		       auxsample_strerror(err));
		return -EINVAL;
	}
	for (size_t i = 0; i < nr && !scan.err; i++) {
		auxsample_decoder__decode(dec, c->trace + scan.base, sizes[i], 0);
		scan.base += sizes[i];
	}
	auxsample_decoder__delete(dec);
	return scan.err;
}

/* @cpu's trace, read and scanned the first time a sample asks for it. */
/*
 * @c's CPU's trace, its buffers one after the other, and in *@sizesp
 * (to free) the size of each of the *@nr buffers.
 */
static int window_cpu__read(struct window_cpu *c, struct auxsample_fulltrace *ft,
			    struct perf_session *session, size_t **sizesp, size_t *nr)
{
	struct auxtrace_queues *queues = auxsample_fulltrace__queues(ft);
	int fd = perf_data__fd(session->data), cpu = c->cpu;
	size_t size = 0, nr_buffers = 0, *sizes;
	struct auxtrace_buffer *buffer;

	*nr = 0;
	for (unsigned int i = 0; i < queues->nr_queues; i++) {
		list_for_each_entry(buffer, &queues->queue_array[i].head, list) {
			if (buffer->cpu.cpu == cpu) {
				size += buffer->size;
				nr_buffers++;
			}
		}
	}
	c->trace = malloc(size ?: 1);
	/* ETM: where each buffer ends, as windows must not go past it. */
	sizes = calloc(nr_buffers ?: 1, sizeof(*sizes));
	*sizesp = sizes;
	if (!c->trace || !sizes)
		return -ENOMEM;
	for (unsigned int i = 0; i < queues->nr_queues; i++) {
		list_for_each_entry(buffer, &queues->queue_array[i].head, list) {
			void *data;

			if (buffer->cpu.cpu != cpu)
				continue;
			data = auxtrace_buffer__get_data(buffer, fd);
			if (!data) {
				pr_err("cannot read %zu bytes of trace at %#" PRIx64 " of the file\n",
				       buffer->size, (u64)buffer->data_offset);
				return -EIO;
			}
			memcpy(c->trace + c->len, data, buffer->size);
			c->len += buffer->size;
			sizes[(*nr)++] = buffer->size;
			auxtrace_buffer__put_data(buffer);
		}
	}
	return 0;
}

static int windows__cpu(struct auxsample_windows *ws, struct auxsample_fulltrace *ft,
			struct perf_session *session, int cpu, struct window_cpu **cp)
{
	struct window_cpu *c;
	size_t *sizes, nr;
	int err;

	for (size_t i = 0; i < ws->nr_cpus; i++) {
		if (ws->cpus[i].cpu == cpu) {
			*cp = &ws->cpus[i];
			return 0;
		}
	}
	c = realloc(ws->cpus, (ws->nr_cpus + 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	ws->cpus = c;
	c = &ws->cpus[ws->nr_cpus++];
	memset(c, 0, sizeof(*c));
	c->cpu = cpu;

	err = window_cpu__read(c, ft, session, &sizes, &nr);
	if (err) {
		free(sizes);
		return err;
	}
	if (ws->have_etm)
		err = window_cpu__scan_etm(ws, ft, c, sizes, nr);
	else
		err = window_cpu__scan_pt(ws, c);
	free(sizes);
	if (err)
		return err;
	if (ws->have_etm)
		pr_debug("CPU %d: %zu bytes of ETM trace, %zu timestamp packets\n",
			 cpu, c->len, c->nr_tscs);
	else
		pr_debug("CPU %d: %zu bytes of trace, %zu stops, %zu TSC packets\n",
			 cpu, c->len, c->nr_stops, c->nr_tscs);
	*cp = c;
	return 0;
}

/* The index of the first TSC packet later than @time, or nr_tscs. */
static size_t window_cpu__next_tsc(const struct window_cpu *c, u64 time)
{
	size_t lo = 0, hi = c->nr_tscs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->tscs[mid].time <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Where @s's window ends: just past its stop, else at the last TSC before it. */
static u64 window_cpu__end(struct auxsample_windows *ws, struct window_cpu *c,
			   const struct perf_sample *s)
{
	size_t next = window_cpu__next_tsc(c, s->time);
	u64 limit = ws->have_tc && next < c->nr_tscs ? c->tscs[next].offset : c->len;

	size_t resumed = c->nr_stops;

	/*
	 * An interrupt at the sample's IP (its PMI) wins over trace that
	 * resumed there: a syscall's return, sigreturn's included, may resume
	 * at the very IP where the sample then comes.
	 */
	for (size_t i = c->next_stop; i < c->nr_stops && c->stops[i].end <= limit; i++) {
		const struct window_stop *stop = &c->stops[i];

		if (stop->at == s->ip) {
			c->next_stop = i + 1;
			ws->stats.at_stop++;
			return stop->end;
		}
		if (!stop->at && stop->resume == s->ip && resumed == c->nr_stops)
			resumed = i;
	}
	if (resumed < c->nr_stops) {
		c->next_stop = resumed + 1;
		ws->stats.at_stop++;
		return c->stops[resumed].end;
	}
	ws->stats.by_time++;
	return next ? c->tscs[next - 1].offset : 0;
}

/*
 * ETM: @s's window, [*@start, *@end) of the CPU's trace: up to its last
 * timestamp not later than it, on the frame before it, in its buffer.
 */
static void window_cpu__etm_window(struct auxsample_windows *ws, struct window_cpu *c,
				   const struct perf_sample *s, u64 *start, u64 *end)
{
	size_t next = window_cpu__next_tsc(c, s->time);
	u64 unit = c->config->etm.formatted ? CS_ETM_FRAME_SIZE : 1;
	u64 max = ws->max_bytes - ws->max_bytes % unit;
	const struct window_tsc *t;

	ws->stats.by_time++;
	*start = *end = 0;
	if (!next)
		return;
	t = &c->tscs[next - 1];
	*end = t->offset - (t->offset - t->base) % unit;
	*start = *end - t->base > max ? *end - max : t->base;
}

/*
 * ETM timestamps are perf time where every ETM says they are the kernel's
 * time: then they convert as perf's cs-etm.c converts them, through
 * PERF_RECORD_TIME_CONV.
 */
static void auxsample_windows__etm_time(struct auxsample_windows *ws,
					struct perf_session *session)
{
	struct perf_record_time_conv *tc = &session->time_conv;

	if (!ws->etm_virtual_ts) {
		pr_warning("ETM timestamps are not the kernel's time here (ts_source is not 1 on every CPU): samples cannot be placed in the trace, and get no window of it\n");
		return;
	}
	ws->tc.time_shift = tc->time_shift;
	ws->tc.time_mult = tc->time_mult;
	ws->tc.time_zero = tc->time_zero;
	if (event_contains(*tc, time_cycles)) {
		ws->tc.time_cycles = tc->time_cycles;
		ws->tc.time_mask = tc->time_mask;
		ws->tc.cap_user_time_zero = tc->cap_user_time_zero;
		ws->tc.cap_user_time_short = tc->cap_user_time_short;
	}
	ws->have_tc = true;
}

int auxsample_windows__run(struct auxsample_windows *ws, struct auxsample_fulltrace *ft,
			   struct perf_session *session, auxsample_window_fn fn, void *context)
{
	int err = 0;

	if (ws->have_etm)
		auxsample_windows__etm_time(ws, session);
	for (size_t i = 0; i < ws->nr_samples && !err; i++) {
		struct window_sample *s = &ws->samples[i];
		struct window_cpu *c;
		u64 end, start;

		err = windows__cpu(ws, ft, session, s->sample.cpu, &c);
		if (err)
			return err;
		if (c->config) {
			window_cpu__etm_window(ws, c, &s->sample, &start, &end);
		} else {
			end = window_cpu__end(ws, c, &s->sample);
			start = end > ws->max_bytes ? end - ws->max_bytes : 0;
		}
		s->sample.aux_sample.data = (void *)(c->trace + start);
		s->sample.aux_sample.size = end - start;
		err = fn(&s->sample, s->evsel, s->thread, c->config, context);
	}
	return err;
}

size_t auxsample_windows__nr_samples(const struct auxsample_windows *ws)
{
	return ws->nr_samples;
}

const struct auxsample_window_stats *auxsample_windows__stats(const struct auxsample_windows *ws)
{
	return &ws->stats;
}
