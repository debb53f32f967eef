// SPDX-License-Identifier: GPL-2.0
/*
 * Glue between perf and libauxsample: the decoder reads the traced code
 * through the sampled thread's maps, as perf's own Intel PT decoder does.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/kernel.h>
#include <linux/types.h>
#include <linux/zalloc.h>
#include <sys/mman.h>
#include <auxsample/auxsample.h>

#include "addr_location.h"
#include "auxsample.h"
#include "auxsample-etm.h"
#include "auxtrace.h"
#include "debug.h"
#include "dso.h"
#include "env.h"
#include "event.h"
#include "intel-pt.h"
#include "machine.h"
#include "map.h"
#include "maps.h"
#include "session.h"
#include "thread.h"

int auxsample_mem__read(u8 *buf, size_t size, u64 addr, void *context)
{
	struct auxsample_mem *mem = context;
	u8 cpumode = machine__kernel_ip(mem->machine, addr) ?
		     PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
	struct addr_location al;
	struct dso *dso;
	ssize_t len = -1;

	addr_location__init(&al);
	if (!thread__find_map(mem->thread, cpumode, addr, &al))
		goto out;
	dso = map__dso(al.map);
	if (!dso)
		goto out;
	/* A dso that failed to open once is not tried for every block. */
	if (dso__data(dso)->status == DSO_DATA_STATUS_ERROR &&
	    dso__data_status_seen(dso, DSO_DATA_STATUS_SEEN_ITRACE))
		goto out;
	map__load(al.map);
	/* Not past the mapping: the file goes on with what is not mapped here. */
	size = min_t(u64, size, map__end(al.map) - addr);
	len = dso__data_read_offset(dso, mem->machine, map__map_ip(al.map, addr), buf, size);
out:
	addr_location__exit(&al);
	return len > 0 ? (int)len : -1;
}

/* A map of a readable file: a section of the image. */
static int auxsample_proc__add_map(struct map *map, void *data)
{
	struct auxsample_image *image = data;
	struct dso *dso = map__dso(map);
	const char *name = dso ? dso__long_name(dso) : NULL;

	if (!name || name[0] != '/' || !(map__prot(map) & PROT_EXEC) || access(name, R_OK))
		return 0;
	/* A file that will not load leaves its code to the callback. */
	auxsample_image__add_file(image, name, map__pgoff(map), map__size(map),
				  map__start(map));
	return 0;
}

/* The process's image, made again when the process or its maps change. */
struct auxsample_image *auxsample_proc__image(struct auxsample_proc *proc,
					      struct machine *machine, struct thread *thread)
{
	struct maps *maps = thread__maps(thread);
	unsigned int nr_maps = maps ? maps__nr_maps(maps) : 0;

	proc->mem.machine = machine;
	proc->mem.thread = thread;
	if (proc->image && proc->pid == thread__pid(thread) && proc->nr_maps == nr_maps)
		return proc->image;

	auxsample_proc__exit(proc);
	proc->image = auxsample_image__new();
	if (!proc->image)
		return NULL;
	if (maps)
		maps__for_each_map(maps, auxsample_proc__add_map, proc->image);
	proc->pid = thread__pid(thread);
	proc->nr_maps = nr_maps;
	return proc->image;
}

struct auxsample_decoder *auxsample_proc__decoder(struct auxsample_proc *proc,
						   const struct auxsample_config *config,
						   struct machine *machine, struct thread *thread)
{
	struct auxsample_image *image = auxsample_proc__image(proc, machine, thread);
	struct auxsample_config cfg = *config;

	if (!image || proc->dec)
		return proc->dec;
	cfg.image = image;
	cfg.read_memory = auxsample_mem__read;
	cfg.context = &proc->mem;
	proc->dec = auxsample_decoder__new(&cfg);
	return proc->dec;
}

void auxsample_proc__exit(struct auxsample_proc *proc)
{
	auxsample_decoder__delete(proc->dec);
	proc->dec = NULL;
	auxsample_image__put(proc->image);
	proc->image = NULL;
}

int auxsample_config__from_auxtrace_info(struct auxsample_config *config,
					 struct perf_session *session,
					 union perf_event *event, u64 *pmu_type)
{
	struct perf_record_auxtrace_info *info = &event->auxtrace_info;
	size_t nr = (info->header.size - sizeof(*info)) / sizeof(u64);
	const char *cpuid = perf_env__cpuid(&session->header.env);
	unsigned int family, model, stepping;

	if (info->type == PERF_AUXTRACE_CS_ETM)
		return auxsample_config__from_cs_etm(config, event, pmu_type);
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
	*pmu_type = info->priv[INTEL_PT_PMU_TYPE];
	return 0;
}

void auxsample_config__exit(struct auxsample_config *config)
{
	if (config->type == AUXSAMPLE_TRACE_ETM)
		zfree((void **)&config->etm.sources);
	config->etm.nr_sources = 0;
}

void auxsample_result__init(struct auxsample_result *res, const struct auxsample_decoder *dec,
			    int nr, struct auxsample_stats *stats)
{
	res->nr = nr;
	res->nr_branches = auxsample_decoder__branches(dec, &res->branches);
	res->depth = auxsample_decoder__callchain(dec, &res->callchain);
	res->nr_errors = auxsample_decoder__errors(dec, &res->errors);
	auxsample_decoder__stats(dec, stats, sizeof(*stats));
	res->stats = stats;
}
