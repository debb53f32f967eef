// SPDX-License-Identifier: GPL-2.0
/*
 * CoreSight ETM/ETE in perf.data files, for libauxsample.
 *
 * The trace configuration comes from perf's cs_etm AUXTRACE_INFO: a
 * header (version, PMU type and number of CPUs) and one block per CPU
 * with the ETMv4 or ETE ID and configuration registers, laid out as
 * cs-etm.h says.  Whether a CPU's trace is in CoreSight frames (ETR, ETF)
 * or raw (TRBE) is in the flags of its PERF_RECORD_AUX records; its trace
 * ID is TRCTRACEIDR, or on newer kernels PERF_RECORD_AUX_OUTPUT_HW_ID.
 *
 * No kernel implements AUX snapshots for cs_etm (pmu->snapshot_aux), so
 * there are no ETM AUX samples: ETM recordings are full trace, the AUX
 * buffers copied into PERF_RECORD_AUXTRACE events.  Those are decoded
 * here whole, one CPU's buffers after another, with the library's flow
 * callback: every executed range and taken branch, and the context ID
 * changes that say whose code runs, which select the thread whose maps
 * the code is read through.
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

#define FULLTRACE_MAX_CPUS	4096

/* What each CPU's AUX records said. */
struct fulltrace_cpu {
	u64	aux_bytes;	/* announced by PERF_RECORD_AUX */
	u64	trace_bytes;	/* in PERF_RECORD_AUXTRACE */
	u64	truncated;	/* AUX records with PERF_AUX_FLAG_TRUNCATED */
	int	trace_id;	/* from AUX_OUTPUT_HW_ID, or -1 */
	bool	raw;		/* PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW */
};

struct fulltrace_stats {
	u64	buffers;
	u64	bytes;
	u64	bytes_before_sync;
	u64	syncs;
	u64	ranges;
	u64	insns;
	u64	branches;
	u64	gaps;
	u64	errors;
	u64	nosync;		/* buffers without a sync point */
	u64	errors_by_kind[AUXSAMPLE_ERR_END - AUXSAMPLE_ERR_BASE];
};

struct auxsample_fulltrace {
	struct auxtrace_queues			queues;
	struct fulltrace_cpu			*cpus;
	const struct auxsample_fulltrace_opts	*opts;
	struct machine				*machine;
	struct auxsample_mem			mem;	/* .thread: the traced one, or NULL */
	int					cpu;	/* of the buffer being decoded */
	struct auxsample_profile		*profile;	/* --autofdo */
	struct fulltrace_stats			stats;
	int					err;	/* first error in a callback */
	struct itrace_synth_opts		itrace;	/* for auxtrace_queues: all CPUs */
};

struct auxsample_fulltrace *auxsample_fulltrace__new(void)
{
	struct auxsample_fulltrace *ft = zalloc(sizeof(*ft));

	if (!ft)
		return NULL;
	if (auxtrace_queues__init(&ft->queues))
		goto out_free;
	ft->cpus = calloc(FULLTRACE_MAX_CPUS, sizeof(*ft->cpus));
	if (!ft->cpus)
		goto out_free_queues;
	for (int i = 0; i < FULLTRACE_MAX_CPUS; i++)
		ft->cpus[i].trace_id = -1;
	return ft;

out_free_queues:
	auxtrace_queues__free(&ft->queues);
out_free:
	free(ft);
	return NULL;
}

void auxsample_fulltrace__delete(struct auxsample_fulltrace *ft)
{
	if (!ft)
		return;
	auxsample_profile__delete(ft->profile);
	thread__put(ft->mem.thread);
	auxtrace_queues__free(&ft->queues);
	free(ft->cpus);
	free(ft);
}

static struct fulltrace_cpu *fulltrace__cpu(struct auxsample_fulltrace *ft, int cpu)
{
	if (cpu < 0 || cpu >= FULLTRACE_MAX_CPUS)
		return NULL;
	return &ft->cpus[cpu];
}

s64 auxsample_fulltrace__queue(struct auxsample_fulltrace *ft, struct perf_session *session,
			       union perf_event *event)
{
	int fd = perf_data__fd(session->data);
	struct auxtrace_buffer *buffer = NULL;
	struct fulltrace_cpu *c;
	off_t data_offset = 0;
	struct stat st;
	int err;

	/* The queues filter CPUs by the session's --itrace options. */
	if (!session->itrace_synth_opts)
		session->itrace_synth_opts = &ft->itrace;
	if (!perf_data__is_pipe(session->data)) {
		data_offset = lseek(fd, 0, SEEK_CUR);
		if (data_offset == -1)
			return -errno;
		/* The data is mapped from the file: all of it must be there. */
		if (fstat(fd, &st) || data_offset + event->auxtrace.size > (u64)st.st_size) {
			pr_err("PERF_RECORD_AUXTRACE at %#" PRIx64 " announces %#" PRIx64
			       " bytes of trace past the end of the file: it was cut short\n",
			       (u64)data_offset, (u64)event->auxtrace.size);
			return -EINVAL;
		}
	}
	err = auxtrace_queues__add_event(&ft->queues, session, event, data_offset, &buffer);
	if (err)
		return err;
	/*
	 * Decoded after all the events, not through the reader's map of the
	 * whole file, which auxtrace.c points a buffer into (one_mmap) and
	 * which the reader replaces where an event runs past what it mapped
	 * (a crafted size): auxtrace_buffer__get_data() maps it anew.
	 */
	if (buffer && !buffer->data_needs_freeing)
		buffer->data = NULL;
	c = fulltrace__cpu(ft, event->auxtrace.cpu);
	if (c)
		c->trace_bytes += event->auxtrace.size;
	return event->auxtrace.size;
}

void auxsample_fulltrace__aux(struct auxsample_fulltrace *ft, union perf_event *event,
			      struct perf_sample *sample)
{
	struct fulltrace_cpu *c = fulltrace__cpu(ft, sample->cpu);

	if (!c)
		return;
	c->aux_bytes += event->aux.aux_size;
	if (event->aux.flags & PERF_AUX_FLAG_TRUNCATED)
		c->truncated++;
	if (event->aux.flags & PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW)
		c->raw = true;
}

int auxsample_fulltrace__hw_id(struct auxsample_fulltrace *ft, union perf_event *event,
			       struct perf_sample *sample)
{
	u64 hw_id = event->aux_output_hw_id.hw_id;
	struct fulltrace_cpu *c = fulltrace__cpu(ft, sample->cpu);

	if (FIELD_GET(CS_AUX_HW_ID_MAJOR_VERSION_MASK, hw_id) > CS_AUX_HW_ID_MAJOR_VERSION) {
		pr_err("PERF_RECORD_AUX_OUTPUT_HW_ID version %llu is newer than this perf knows\n",
		       FIELD_GET(CS_AUX_HW_ID_MAJOR_VERSION_MASK, hw_id));
		return -EINVAL;
	}
	if (c)
		c->trace_id = FIELD_GET(CS_AUX_HW_ID_TRACE_ID_MASK, hw_id);
	return 0;
}

bool auxsample_fulltrace__has_trace(const struct auxsample_fulltrace *ft)
{
	for (int i = 0; i < FULLTRACE_MAX_CPUS; i++) {
		if (ft->cpus[i].aux_bytes || ft->cpus[i].trace_bytes)
			return true;
	}
	return ft->queues.populated;
}

/*
 * The decoder for @cpu's buffers: raw trace is that CPU's source alone;
 * formatted trace may hold every source that shares the sink, @cpu's
 * first (the one whose calls and returns the library follows).
 */
static struct auxsample_decoder *fulltrace__decoder(struct auxsample_fulltrace *ft,
						     const struct auxsample_config *config,
						     int cpu)
{
	const struct auxsample_etm_config *etm = &config->etm;
	struct fulltrace_cpu *c = fulltrace__cpu(ft, cpu);
	struct auxsample_etm_source *src;
	struct auxsample_config cfg = *config;
	struct auxsample_decoder *dec;
	unsigned int i, n = 0;
	int err;

	src = calloc(etm->nr_sources, sizeof(*src));
	if (!src)
		return NULL;
	for (i = 0; i < etm->nr_sources; i++) {
		struct fulltrace_cpu *sc = fulltrace__cpu(ft, etm->sources[i].cpu);

		if (etm->sources[i].cpu != cpu)
			continue;
		src[n] = etm->sources[i];
		if (sc && sc->trace_id >= 0)
			src[n].trace_id = sc->trace_id;
		n++;
	}
	if (!n) {
		pr_err("the trace of CPU %d has no ETM configuration in AUXTRACE_INFO\n", cpu);
		goto out_free;
	}
	cfg.etm.formatted = !(c && c->raw);
	for (i = 0; cfg.etm.formatted && i < etm->nr_sources; i++) {
		struct fulltrace_cpu *sc = fulltrace__cpu(ft, etm->sources[i].cpu);

		if (etm->sources[i].cpu == cpu)
			continue;
		src[n] = etm->sources[i];
		if (sc && sc->trace_id >= 0)
			src[n].trace_id = sc->trace_id;
		/* A source without a trace ID cannot be told apart: leave it out. */
		if (src[n].trace_id)
			n++;
	}
	cfg.etm.sources = src;
	cfg.etm.nr_sources = cfg.etm.formatted ? n : 1;
	cfg.flags |= AUXSAMPLE_CFG_WHOLE_SNIPPET;
	dec = auxsample_decoder__new(&cfg, &err);
	if (!dec)
		pr_err("cannot set up an ETM decoder for CPU %d (trace ID %#x): %s\n", cpu,
		       src[0].trace_id, auxsample_strerror(err));
	free(src);
	return dec;

out_free:
	free(src);
	return NULL;
}

/* Code is read through the traced thread's maps; none before it is known. */
static int fulltrace__read(u8 *buf, size_t size, u64 addr, void *context)
{
	struct auxsample_mem *mem = context;

	if (!mem->thread)
		return -1;
	return auxsample_mem__read(buf, size, addr, mem);
}

static void fulltrace__set_thread(struct auxsample_fulltrace *ft, pid_t tid)
{
	thread__zput(ft->mem.thread);
	if (tid > 0)
		ft->mem.thread = machine__find_thread(ft->machine, -1, tid);
}

/* @addr's binary and its address there, as objdump (and AutoFDO) see it. */
static struct dso *fulltrace__binary_addr(struct auxsample_fulltrace *ft, u64 addr, u64 *baddr)
{
	struct addr_location al;
	struct dso *dso = NULL;

	if (!ft->mem.thread || !addr)
		return NULL;
	addr_location__init(&al);
	if (thread__find_map(ft->mem.thread, PERF_RECORD_MISC_USER, addr, &al) ||
	    thread__find_map(ft->mem.thread, PERF_RECORD_MISC_KERNEL, addr, &al)) {
		dso = map__dso(al.map);
		*baddr = map__rip_2objdump(al.map, map__map_ip(al.map, addr));
	}
	addr_location__exit(&al);
	return dso;
}

/*
 * Ranges count where they are; a branch counts in its source's binary,
 * its target 0 where it is in another binary or unknown, as simpleperf
 * writes it.
 */
static int fulltrace__autofdo(struct auxsample_fulltrace *ft, const struct auxsample_flow *flow)
{
	struct dso *dso, *to_dso;
	u64 a, b = 0, to = 0;

	dso = fulltrace__binary_addr(ft, flow->from, &a);
	if (!dso)
		return 0;
	if (flow->type == AUXSAMPLE_FLOW_RANGE) {
		fulltrace__binary_addr(ft, flow->to, &b);
		return auxsample_profile__add_range(ft->profile, dso, a, b);
	}
	if (!(flow->flags & AUXSAMPLE_BRF_TO_UNKNOWN)) {
		to_dso = fulltrace__binary_addr(ft, flow->to, &to);
		if (!RC_CHK_EQUAL(to_dso, dso))
			to = 0;
	}
	return auxsample_profile__add_taken(ft->profile, dso, a, to);
}

static void fulltrace__print_addr(struct auxsample_fulltrace *ft, u64 addr)
{
	struct addr_location al;

	if (!addr) {
		printf("%16s", "?");
		return;
	}
	printf("%16" PRIx64, addr);
	if (!ft->mem.thread)
		return;
	addr_location__init(&al);
	if (thread__find_symbol(ft->mem.thread, PERF_RECORD_MISC_USER, addr, &al) && al.sym)
		printf(" %s+%#" PRIx64, al.sym->name, map__map_ip(al.map, addr) - al.sym->start);
	else if (al.map && map__dso(al.map))
		printf(" (%s)", dso__short_name(map__dso(al.map)));
	addr_location__exit(&al);
}

static void fulltrace__print_branch(struct auxsample_fulltrace *ft,
				    const struct auxsample_flow *flow)
{
	struct thread *thread = ft->mem.thread;

	printf("%16s %6d [%03d] ", thread ? thread__comm_str(thread) : "?",
	       thread ? thread__tid(thread) : -1, ft->cpu);
	fulltrace__print_addr(ft, flow->from);
	printf(" -> ");
	fulltrace__print_addr(ft, flow->type == AUXSAMPLE_FLOW_GAP ? 0 : flow->to);
	printf(" %s\n", flow->type == AUXSAMPLE_FLOW_GAP ? "gap" :
	       auxsample_branch_kind__name(flow->kind));
}

static void fulltrace__flow(const struct auxsample_flow *flow, void *context)
{
	struct auxsample_fulltrace *ft = context;
	const struct auxsample_fulltrace_opts *opts = ft->opts;
	int err = 0;

	switch (flow->type) {
	case AUXSAMPLE_FLOW_CONTEXT:
		fulltrace__set_thread(ft, flow->pid);
		return;
	case AUXSAMPLE_FLOW_ERROR:
		ft->stats.errors_by_kind[auxsample__error_index(flow->kind)]++;
		return;
	case AUXSAMPLE_FLOW_RANGE:
		ft->stats.ranges++;
		if (opts->autofdo)
			err = fulltrace__autofdo(ft, flow);
		break;
	case AUXSAMPLE_FLOW_BRANCH:
	case AUXSAMPLE_FLOW_GAP:
		if (!opts->autofdo) {
			if (!opts->stat)
				fulltrace__print_branch(ft, flow);
		} else if (flow->type == AUXSAMPLE_FLOW_BRANCH &&
			   flow->kind != AUXSAMPLE_BR_INTR) {
			/*
			 * AutoFDO's branches are taken branch instructions,
			 * where its ranges end (simpleperf's): no exception.
			 */
			err = fulltrace__autofdo(ft, flow);
		}
		break;
	default:
		break;
	}
	if (err && !ft->err)
		ft->err = err;
}

static void fulltrace__account(struct auxsample_fulltrace *ft, struct auxsample_decoder *dec,
			       int ret)
{
	struct auxsample_stats st;

	auxsample_decoder__stats(dec, &st, sizeof(st));
	ft->stats.buffers++;
	ft->stats.bytes += st.bytes;
	ft->stats.bytes_before_sync += st.bytes_before_sync;
	ft->stats.syncs += st.syncs;
	ft->stats.insns += st.insns;
	ft->stats.branches += st.branches;
	ft->stats.gaps += st.gaps;
	ft->stats.errors += st.errors;
	if (ret == -AUXSAMPLE_ERR_NOSYNC)
		ft->stats.nosync++;
}

static int fulltrace__decode_buffer(struct auxsample_fulltrace *ft, struct auxsample_decoder *dec,
				    struct auxtrace_buffer *buffer, int fd)
{
	void *data = auxtrace_buffer__get_data(buffer, fd);
	int ret;

	if (!data) {
		pr_err("cannot read %zu bytes of trace at %#" PRIx64 " of the file\n",
		       buffer->size, (u64)buffer->data_offset);
		return -EIO;
	}
	/* Until the trace names the thread: the buffer's, if per-thread. */
	fulltrace__set_thread(ft, buffer->tid);
	ret = auxsample_decoder__decode(dec, data, buffer->size, 0);
	auxtrace_buffer__put_data(buffer);
	if (ret < 0 && ret != -AUXSAMPLE_ERR_NOSYNC) {
		char buf[STRERR_BUFSIZE];

		pr_err("decoding the trace of CPU %d: %s\n", ft->cpu,
		       auxsample__strerror(ret, buf, sizeof(buf)));
		return -EINVAL;
	}
	fulltrace__account(ft, dec, ret);
	return ft->err;
}

static int fulltrace__decode_queue(struct auxsample_fulltrace *ft, struct perf_session *session,
				   const struct auxsample_config *config,
				   struct auxtrace_queue *queue)
{
	int fd = perf_data__fd(session->data);
	struct auxsample_decoder *dec = NULL;
	struct auxtrace_buffer *buffer;
	int err = 0;

	list_for_each_entry(buffer, &queue->head, list) {
		if (!dec || buffer->cpu.cpu != ft->cpu) {
			auxsample_decoder__delete(dec);
			ft->cpu = buffer->cpu.cpu;
			dec = fulltrace__decoder(ft, config, ft->cpu);
			if (!dec)
				return -EINVAL;
		}
		pr_debug("CPU %d: %zu bytes of trace at %#" PRIx64 "\n", ft->cpu,
			 buffer->size, (u64)buffer->data_offset);
		err = fulltrace__decode_buffer(ft, dec, buffer, fd);
		/* ^C: what is decoded is printed, as after the last buffer */
		if (err || session_done())
			break;
	}
	auxsample_decoder__delete(dec);
	return err;
}

/*
 * Trace that PERF_RECORD_AUX records announce but no PERF_RECORD_AUXTRACE
 * holds (the kernel pads buffers to 8 bytes: more is fine).  None at all
 * is an error: there is nothing to decode.
 */
static int fulltrace__check_missing(struct auxsample_fulltrace *ft, const char *input,
				    u64 *missing)
{
	u64 announced = 0, held = 0;
	int cpus = 0;

	*missing = 0;
	for (int i = 0; i < FULLTRACE_MAX_CPUS; i++) {
		struct fulltrace_cpu *c = &ft->cpus[i];

		announced += c->aux_bytes;
		held += c->trace_bytes;
		if (c->aux_bytes > c->trace_bytes) {
			*missing += c->aux_bytes - c->trace_bytes;
			cpus++;
		}
	}
	if (!held && announced) {
		pr_err("%s: its PERF_RECORD_AUX records announce %" PRIu64
		       " bytes of trace, but it holds no trace data (no PERF_RECORD_AUXTRACE): the file is damaged or was cut short\n",
		       input, announced);
		return -ENODATA;
	}
	if (*missing)
		pr_warning("%s: %" PRIu64
			   " bytes of trace on %d CPUs are missing: decoding what is there\n",
			   input, *missing, cpus);
	return 0;
}

static void fulltrace__print_stat(struct auxsample_fulltrace *ft, u64 missing)
{
	const struct fulltrace_stats *st = &ft->stats;
	u64 truncated = 0;

	for (int i = 0; i < FULLTRACE_MAX_CPUS; i++)
		truncated += ft->cpus[i].truncated;
	printf("%12" PRIu64 "  trace buffers (full trace: PERF_RECORD_AUXTRACE, no AUX samples)\n",
	       st->buffers);
	printf("%12" PRIu64 "  bytes of trace\n", st->bytes);
	printf("%12" PRIu64 "  bytes of trace announced but missing\n", missing);
	printf("%12" PRIu64 "  AUX records with truncated trace\n", truncated);
	printf("%12" PRIu64 "  bytes before the first sync point, not decodable (%.1f%%)\n",
	       st->bytes_before_sync,
	       st->bytes ? 100.0 * st->bytes_before_sync / st->bytes : 0.0);
	printf("%12" PRIu64 "  decodes from a sync point, resyncs included\n", st->syncs);
	printf("%12" PRIu64 "  buffers without a sync point\n", st->nosync);
	printf("%12" PRIu64 "  instruction ranges\n", st->ranges);
	printf("%12" PRIu64 "  instructions\n", st->insns);
	printf("%12" PRIu64 "  taken branches\n", st->branches);
	printf("%12" PRIu64 "  trace gaps\n", st->gaps);
	printf("%12" PRIu64 "  decode errors\n", st->errors);
	for (unsigned int e = 1; e < ARRAY_SIZE(st->errors_by_kind); e++) {
		if (st->errors_by_kind[e])
			printf("%12" PRIu64 "    %s\n", st->errors_by_kind[e],
			       auxsample_strerror(-(int)(AUXSAMPLE_ERR_BASE + e)));
	}
}

int auxsample_fulltrace__run(struct auxsample_fulltrace *ft, struct perf_session *session,
			     const struct auxsample_config *config,
			     const struct auxsample_fulltrace_opts *opts)
{
	struct auxsample_config cfg = *config;
	u64 missing;
	int err;

	err = fulltrace__check_missing(ft, opts->input, &missing);
	if (err)
		return err;
	if (!ft->queues.populated) {
		pr_err("%s has no trace to decode: no AUX samples, no PERF_RECORD_AUXTRACE\n",
		       opts->input);
		return -ENODATA;
	}
	if (config->type != AUXSAMPLE_TRACE_ETM) {
		pr_err("%s: full trace is decoded for CoreSight ETM/ETE only so far\n",
		       opts->input);
		return -EOPNOTSUPP;
	}
	if (opts->json && !opts->stat) {
		pr_err("%s has no AUX samples: --json lists samples; use the text listing or --autofdo for its full trace\n",
		       opts->input);
		return -EINVAL;
	}
	if (opts->autofdo) {
		ft->profile = auxsample_profile__new();
		if (!ft->profile)
			return -ENOMEM;
	}
	ft->opts = opts;
	ft->machine = &session->machines.host;
	ft->mem.machine = ft->machine;
	cfg.read_memory = fulltrace__read;
	cfg.context = &ft->mem;
	cfg.flow = fulltrace__flow;
	cfg.flow_context = ft;
	for (unsigned int i = 0; i < ft->queues.nr_queues && !err; i++)
		err = fulltrace__decode_queue(ft, session, &cfg, &ft->queues.queue_array[i]);
	thread__zput(ft->mem.thread);
	if (err)
		return err;
	if (opts->autofdo)
		return auxsample_profile__write_autofdo(ft->profile, stdout);
	if (opts->stat)
		fulltrace__print_stat(ft, missing);
	else
		fprintf(stderr, "[ %" PRIu64 " trace buffers, %" PRIu64 " branches, %" PRIu64
			" without a sync point, %" PRIu64 " decode errors ]\n",
			ft->stats.buffers, ft->stats.branches, ft->stats.nosync,
			ft->stats.errors);
	return 0;
}

struct auxtrace_queues *auxsample_fulltrace__queues(struct auxsample_fulltrace *ft)
{
	return &ft->queues;
}

void auxsample_fulltrace__cpu_format(struct auxsample_fulltrace *ft, int cpu, int *trace_id,
				     bool *raw)
{
	const struct fulltrace_cpu *fc = fulltrace__cpu(ft, cpu);

	*trace_id = fc ? fc->trace_id : -1;
	*raw = fc && fc->raw;
}
