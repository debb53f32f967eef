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
#include "auxsample-etm.h"
#include "auxsample-profile.h"
#include "auxsample-script.h"
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
/* CoreSight formatter frames: formatted trace is cut on them */
#define CS_ETM_FRAME_SIZE	16

/* Where register @idx of a v1 (or later) block is in a v0 one: no count. */
#define CS_ETM_V0_INDEX(idx)	((idx) - 1)

/* A register of one CPU's block, 0 where the block is too short to have it. */
static u64 cs_etm_block__reg(const u64 *blk, size_t len, u64 version, int idx)
{
	if (!version)
		idx = CS_ETM_V0_INDEX(idx);
	return (size_t)idx < len ? blk[idx] : 0;
}

/*
 * One CPU's block at @blk (@avail u64s left): its source into @src.
 * Returns the block's length in u64s, or a negative errno.
 */
static int cs_etm_block__parse(const u64 *blk, size_t avail, u64 version,
			       struct auxsample_etm_source *src)
{
	size_t len;
	u64 magic, traceidr;

	if (avail < CS_ETM_COMMON_BLK_MAX_V1)
		return -EINVAL;
	magic = blk[CS_ETM_MAGIC];
	if (version)
		len = CS_ETM_COMMON_BLK_MAX_V1 + blk[CS_ETM_NR_TRC_PARAMS];
	else if (magic == __perf_cs_etmv4_magic)
		len = CS_ETM_NR_TRC_PARAMS + CS_ETMV4_NR_TRC_PARAMS_V0;
	else
		len = CS_ETM_NR_TRC_PARAMS + CS_ETM_NR_TRC_PARAMS_V0;
	if (len > avail)
		return -EINVAL;

	if (magic == __perf_cs_etmv3_magic) {
		pr_err("CPU %" PRIu64 " has an ETMv3/PTM: libauxsample decodes ETMv4 and ETE only\n",
		       blk[CS_ETM_CPU]);
		return -EOPNOTSUPP;
	}
	if (magic != __perf_cs_etmv4_magic && magic != __perf_cs_ete_magic)
		return -EINVAL;

	/* ETE's block is ETMv4's plus TRCDEVARCH: the same indices. */
	src->ete = magic == __perf_cs_ete_magic;
	src->cpu = blk[CS_ETM_CPU];
	src->trcconfigr = cs_etm_block__reg(blk, len, version, CS_ETMV4_TRCCONFIGR);
	src->trcidr[0] = cs_etm_block__reg(blk, len, version, CS_ETMV4_TRCIDR0);
	src->trcidr[1] = cs_etm_block__reg(blk, len, version, CS_ETMV4_TRCIDR1);
	src->trcidr[2] = cs_etm_block__reg(blk, len, version, CS_ETMV4_TRCIDR2);
	src->trcidr[8] = cs_etm_block__reg(blk, len, version, CS_ETMV4_TRCIDR8);
	if (src->ete)
		src->trcdevarch = cs_etm_block__reg(blk, len, version, CS_ETE_TRCDEVARCH);
	/*
	 * From version 2 on the kernel may assign trace IDs dynamically and
	 * say so with PERF_RECORD_AUX_OUTPUT_HW_ID: 0 (no ID) until then.
	 */
	traceidr = cs_etm_block__reg(blk, len, version, CS_ETMV4_TRCTRACEIDR);
	src->trace_id = traceidr & CORESIGHT_TRACE_ID_VAL_MASK;
	if (!CS_IS_VALID_TRACE_ID(src->trace_id))
		src->trace_id = 0;
	return len;
}

int auxsample_config__from_cs_etm(struct auxsample_config *config,
				  union perf_event *event, u64 *pmu_type)
{
	struct perf_record_auxtrace_info *info = &event->auxtrace_info;
	size_t nr = (info->header.size - sizeof(*info)) / sizeof(u64);
	struct auxsample_etm_source *src;
	const u64 *priv = (const u64 *)info->priv;
	unsigned int nr_cpus, i;
	size_t pos = CS_HEADER_VERSION_MAX;
	u64 version;
	int len;

	if (info->header.size < sizeof(*info) || nr < CS_HEADER_VERSION_MAX)
		goto out_short;
	version = priv[CS_HEADER_VERSION];
	if (version > CS_HEADER_CURRENT_VERSION) {
		pr_err("cs_etm AUXTRACE_INFO version %" PRIu64 " is newer than this perf knows (%d)\n",
		       version, CS_HEADER_CURRENT_VERSION);
		return -EINVAL;
	}
	nr_cpus = (u32)priv[CS_PMU_TYPE_CPUS];
	if (!nr_cpus || nr_cpus > FULLTRACE_MAX_CPUS)
		goto out_short;
	src = calloc(nr_cpus, sizeof(*src));
	if (!src)
		return -ENOMEM;
	for (i = 0; i < nr_cpus; i++) {
		len = cs_etm_block__parse(priv + pos, nr - pos, version, &src[i]);
		if (len == -EOPNOTSUPP) {
			free(src);
			return len;
		}
		if (len < 0) {
			free(src);
			goto out_short;
		}
		pos += len;
	}

	memset(config, 0, sizeof(*config));
	config->size = sizeof(*config);
	config->type = AUXSAMPLE_TRACE_ETM;
	config->read_memory = auxsample_mem__read;
	config->etm.sources = src;
	config->etm.nr_sources = nr_cpus;
	config->etm.formatted = 1;
	*pmu_type = priv[CS_PMU_TYPE_CPUS] >> 32;
	return 0;

out_short:
	pr_err("cs_etm AUXTRACE_INFO record is too short or malformed: the perf.data file is damaged\n");
	return -EINVAL;
}

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
	const struct auxsample_script_opts	*opts;
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
			pr_err("PERF_RECORD_AUXTRACE at %#" PRIx64 " announces %#" PRIx64 " bytes of trace past the end of the file: it was cut short\n",
			       (u64)data_offset, (u64)event->auxtrace.size);
			return -EINVAL;
		}
	}
	err = auxtrace_queues__add_event(&ft->queues, session, event, data_offset, NULL);
	if (err)
		return err;
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
	const struct auxsample_script_opts *opts = ft->opts;
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
		if (err)
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
		pr_err("%s: its PERF_RECORD_AUX records announce %" PRIu64 " bytes of trace, but it holds no trace data (no PERF_RECORD_AUXTRACE): the file is damaged or was cut short\n",
		       input, announced);
		return -ENODATA;
	}
	if (*missing)
		pr_warning("%s: %" PRIu64 " bytes of trace on %d CPUs are missing: decoding what is there\n",
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
			     const struct auxsample_script_opts *opts)
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
		fprintf(stderr, "[ %" PRIu64 " trace buffers, %" PRIu64 " branches, %" PRIu64 " without a sync point, %" PRIu64 " decode errors ]\n",
			ft->stats.buffers, ft->stats.branches, ft->stats.nosync,
			ft->stats.errors);
	return 0;
}

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

/*
 * Whether every ETM of a cs_etm AUXTRACE_INFO timestamps its trace with
 * the kernel's time (ts_source 1: FEAT_TRF virtual time), as perf's
 * cs_etm__has_virtual_ts() asks; the kernel says so from version 1 on.
 */
static bool cs_etm__virtual_ts(union perf_event *event)
{
	struct perf_record_auxtrace_info *info = &event->auxtrace_info;
	size_t nr = (info->header.size - sizeof(*info)) / sizeof(u64);
	const u64 *priv = (const u64 *)info->priv;
	size_t pos = CS_HEADER_VERSION_MAX;
	unsigned int nr_cpus;
	u64 version;

	if (nr < CS_HEADER_VERSION_MAX)
		return false;
	version = priv[CS_HEADER_VERSION];
	nr_cpus = (u32)priv[CS_PMU_TYPE_CPUS];
	if (!version || !nr_cpus)
		return false;
	for (unsigned int i = 0; i < nr_cpus; i++) {
		struct auxsample_etm_source src;
		int len = cs_etm_block__parse(priv + pos, nr - pos, version, &src);

		if (len < 0 || cs_etm_block__reg(priv + pos, len, version, src.ete ?
						  CS_ETE_TS_SOURCE : CS_ETMV4_TS_SOURCE) != 1)
			return false;
		pos += len;
	}
	return true;
}

/* ETM: every source, and whether its timestamps are perf's. */
static void auxsample_windows__cs_etm(struct auxsample_windows *ws, union perf_event *event)
{
	u64 pmu_type;

	if (ws->have_etm || auxsample_config__from_cs_etm(&ws->etm, event, &pmu_type))
		return;
	ws->have_etm = true;
	ws->etm_virtual_ts = cs_etm__virtual_ts(event);
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
	struct fulltrace_cpu *fc = fulltrace__cpu(ft, c->cpu);
	struct auxsample_etm_source *src = NULL;

	for (unsigned int i = 0; i < etm->nr_sources && !src; i++) {
		if (etm->sources[i].cpu == c->cpu)
			src = memdup(&etm->sources[i], sizeof(*src));
	}
	/* Not traced: its samples get no window. */
	if (!src) {
		pr_debug("CPU %d has no ETM configuration in AUXTRACE_INFO\n", c->cpu);
		return 0;
	}
	if (fc && fc->trace_id >= 0)
		src->trace_id = fc->trace_id;
	c->config = memdup(&ws->etm, sizeof(*c->config));
	if (!c->config) {
		free(src);
		return -ENOMEM;
	}
	c->config->etm.sources = src;
	c->config->etm.nr_sources = 1;
	c->config->etm.formatted = !(fc && fc->raw);
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
static int windows__cpu(struct auxsample_windows *ws, struct auxsample_fulltrace *ft,
			struct perf_session *session, int cpu, struct window_cpu **cp)
{
	int fd = perf_data__fd(session->data);
	struct auxtrace_buffer *buffer;
	struct window_cpu *c;
	size_t size = 0, nr_buffers = 0, *sizes, nr = 0;
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

	for (unsigned int i = 0; i < ft->queues.nr_queues; i++) {
		list_for_each_entry(buffer, &ft->queues.queue_array[i].head, list) {
			if (buffer->cpu.cpu == cpu) {
				size += buffer->size;
				nr_buffers++;
			}
		}
	}
	c->trace = malloc(size ?: 1);
	/* ETM: where each buffer ends, as windows must not go past it. */
	sizes = calloc(nr_buffers ?: 1, sizeof(*sizes));
	if (!c->trace || !sizes) {
		free(sizes);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < ft->queues.nr_queues; i++) {
		list_for_each_entry(buffer, &ft->queues.queue_array[i].head, list) {
			void *data;

			if (buffer->cpu.cpu != cpu)
				continue;
			data = auxtrace_buffer__get_data(buffer, fd);
			if (!data) {
				pr_err("cannot read %zu bytes of trace at %#" PRIx64 " of the file\n",
				       buffer->size, (u64)buffer->data_offset);
				free(sizes);
				return -EIO;
			}
			memcpy(c->trace + c->len, data, buffer->size);
			c->len += buffer->size;
			sizes[nr++] = buffer->size;
			auxtrace_buffer__put_data(buffer);
		}
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
