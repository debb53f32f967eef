// SPDX-License-Identifier: GPL-2.0
/*
 * The decoder's configuration from a file's AUXTRACE_INFO record: Intel
 * PT's (and the header's cpuid), or CoreSight ETMv4/ETE's per-CPU ID and
 * configuration registers (cs-etm.h's layout, every version of it).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/zalloc.h>
#include <auxsample/auxsample.h>

#include "auxsample.h"
#include "auxsample-config.h"
#include "auxtrace.h"
#include "config.h"
#include "cs-etm.h"
#include "debug.h"
#include "env.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "intel-pt.h"
#include "machine.h"
#include "session.h"

#define CONFIG_MAX_CPUS	4096	/* cs_etm blocks in one record, at most */

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
		pr_err("CPU %" PRIu64
		       " has an ETMv3/PTM: libauxsample decodes ETMv4 and ETE only\n",
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
		pr_err("cs_etm AUXTRACE_INFO version %" PRIu64
		       " is newer than this perf knows (%d)\n",
		       version, CS_HEADER_CURRENT_VERSION);
		return -EINVAL;
	}
	nr_cpus = (u32)priv[CS_PMU_TYPE_CPUS];
	if (!nr_cpus || nr_cpus > CONFIG_MAX_CPUS)
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

/*
 * Whether the Intel PT event of @session traces cycles (CYC packets):
 * then each branch of the virtual LBR gets its cycles, as LBR's do.
 */
static bool auxsample_config__pt_cyc(struct perf_session *session,
				     const struct perf_record_auxtrace_info *info, size_t nr)
{
	struct evsel *evsel;

	if (nr <= INTEL_PT_CYC_BIT || !session->evlist || !info->priv[INTEL_PT_CYC_BIT])
		return false;
	evlist__for_each_entry(session->evlist, evsel) {
		if (evsel->core.attr.type == info->priv[INTEL_PT_PMU_TYPE] &&
		    (evsel->core.attr.config & info->priv[INTEL_PT_CYC_BIT]))
			return true;
	}
	return false;
}

/*
 * Where the kernel starts, as perf's own Intel PT decoder takes it, for
 * the late-sample rule: a sample's branches end at the sample, not in
 * perf's interrupt path (auxsample_decoder__set_sample_ip()).
 */
static void auxsample_config__kernel_start(struct auxsample_config *config,
					   struct perf_session *session)
{
	config->kernel_start = machine__kernel_start(&session->machines.host);
}

int auxsample_config__from_auxtrace_info(struct auxsample_config *config,
					 struct perf_session *session,
					 union perf_event *event, u64 *pmu_type)
{
	struct perf_record_auxtrace_info *info = &event->auxtrace_info;
	size_t nr = (info->header.size - sizeof(*info)) / sizeof(u64);
	const char *cpuid = perf_env__cpuid(&session->header.env);
	unsigned int family, model, stepping;
	int err;

	if (info->type == PERF_AUXTRACE_CS_ETM) {
		err = auxsample_config__from_cs_etm(config, event, pmu_type);
		if (!err && !auxsample_supports(config->type)) {
			auxsample_config__exit(config);
			return -AUXSAMPLE_ERR_NOT_BUILT;
		}
		if (!err)
			auxsample_config__kernel_start(config, session);
		return err;
	}
	if (info->type != PERF_AUXTRACE_INTEL_PT)
		return -EOPNOTSUPP;
	if (nr <= INTEL_PT_PMU_TYPE) {
		pr_err("AUXTRACE_INFO record is too short (%zu fields): the perf.data file is damaged\n",
		       nr);
		return -EINVAL;
	}

	memset(config, 0, sizeof(*config));
	config->size = sizeof(*config);
	config->type = AUXSAMPLE_TRACE_INTEL_PT;
	config->read_memory = auxsample_mem__read;
	/* The CPU only selects errata workarounds: none when unknown. */
	if (cpuid && sscanf(cpuid, "GenuineIntel,%u,%u,%u", &family, &model, &stepping) == 3) {
		config->pt.family = family;
		config->pt.model = model;
		config->pt.stepping = stepping;
	}
	if (nr > INTEL_PT_MAX_NONTURBO_RATIO) {
		config->pt.cpuid_0x15_ebx = info->priv[INTEL_PT_TSC_CTC_N];
		config->pt.cpuid_0x15_eax = info->priv[INTEL_PT_TSC_CTC_D];
		config->pt.nom_freq = info->priv[INTEL_PT_MAX_NONTURBO_RATIO];
	}
	config->pt.cyc = auxsample_config__pt_cyc(session, info, nr);
	config->pt_decoder = auxsample__pt_decoder();
	*pmu_type = info->priv[INTEL_PT_PMU_TYPE];
	auxsample_config__kernel_start(config, session);
	return auxsample_supports(config->type) ? 0 : -AUXSAMPLE_ERR_NOT_BUILT;
}

static unsigned int auxsample_pt_decoder = AUXSAMPLE_PT_DECODER_DEFAULT;
/* --decoder was given, or auxsample.decoder was read. */
static bool auxsample_pt_decoder_set;

static int auxsample__decoder_from(const char *str)
{
	if (!str || !strcmp(str, "default"))
		auxsample_pt_decoder = AUXSAMPLE_PT_DECODER_DEFAULT;
	else if (!strcmp(str, "libipt"))
		auxsample_pt_decoder = AUXSAMPLE_PT_DECODER_LIBIPT;
	else if (!strcmp(str, "walker"))
		auxsample_pt_decoder = AUXSAMPLE_PT_DECODER_WALKER;
	else
		return -1;
	return 0;
}

int auxsample__parse_decoder(const struct option *opt __maybe_unused, const char *str,
			     int unset)
{
	auxsample_pt_decoder_set = true;
	if (auxsample__decoder_from(unset ? NULL : str)) {
		pr_err("--decoder=%s: not an Intel PT decoder (libipt, walker)\n", str);
		return -1;
	}
	return 0;
}

static int auxsample__decoder_config(const char *var, const char *value,
				     void *cb __maybe_unused)
{
	if (strcmp(var, "auxsample.decoder"))
		return 0;
	if (auxsample__decoder_from(value))
		pr_warning("perfconfig: auxsample.decoder=%s is not libipt or walker: ignored\n",
			   value);
	return 0;
}

/*
 * Without --decoder, the config's auxsample.decoder chooses: read when
 * the first config is made, so that perf report, which has no --decoder
 * of its own, follows it too.
 */
unsigned int auxsample__pt_decoder(void)
{
	if (!auxsample_pt_decoder_set) {
		auxsample_pt_decoder_set = true;
		perf_config(auxsample__decoder_config, NULL);
	}
	return auxsample_pt_decoder;
}

/* Each decoder of libauxsample is built only when its library was found. */
static const char auxsample__no_opencsd[] =
	"CoreSight ETM trace is not decoded: perf was built without libopencsd (CORESIGHT=1)";
static const char auxsample__no_libipt[] =
	"Intel PT trace is not decoded: perf was built without libipt";

const char *auxsample__not_built(const struct auxsample_config *config)
{
	if (config->type == AUXSAMPLE_TRACE_ETM)
		return auxsample__no_opencsd;
	return auxsample__no_libipt;
}

void auxsample_config__exit(struct auxsample_config *config)
{
	if (config->type == AUXSAMPLE_TRACE_ETM)
		zfree((void **)&config->etm.sources);
	config->etm.nr_sources = 0;
}

/*
 * Whether every ETM of a cs_etm AUXTRACE_INFO timestamps its trace with
 * the kernel's time (ts_source 1: FEAT_TRF virtual time), as perf's
 * cs_etm__has_virtual_ts() asks; the kernel says so from version 1 on.
 * Not that one: it is static in cs-etm.c and reads cs-etm.c's own parse
 * of the record, which the virtual LBR does not make.
 */
bool auxsample_cs_etm__virtual_ts(union perf_event *event)
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
