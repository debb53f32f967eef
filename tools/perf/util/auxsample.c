// SPDX-License-Identifier: GPL-2.0
/*
 * Glue between perf and libauxsample: the decoder reads the traced code
 * through the sampled thread's maps, as perf's own Intel PT decoder does.
 */
#include <unistd.h>
#include <linux/kernel.h>
#include <linux/types.h>
#include <sys/mman.h>
#include <auxsample/auxsample.h>

#include "addr_location.h"
#include "auxsample.h"
#include "dso.h"
#include "event.h"
#include "machine.h"
#include "map.h"
#include "maps.h"
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

struct auxsample_decoder *auxsample_proc__decoder(struct auxsample_proc *proc,
						   const struct auxsample_config *config,
						   struct machine *machine, struct thread *thread)
{
	struct maps *maps = thread__maps(thread);
	unsigned int nr_maps = maps ? maps__nr_maps(maps) : 0;
	struct auxsample_config cfg = *config;

	proc->mem.machine = machine;
	proc->mem.thread = thread;
	if (proc->dec && proc->pid == thread__pid(thread) && proc->nr_maps == nr_maps)
		return proc->dec;

	auxsample_proc__exit(proc);
	proc->image = auxsample_image__new();
	if (!proc->image)
		return NULL;
	if (maps)
		maps__for_each_map(maps, auxsample_proc__add_map, proc->image);
	cfg.image = proc->image;
	cfg.read_memory = auxsample_mem__read;
	cfg.context = &proc->mem;
	proc->dec = auxsample_decoder__new(&cfg);
	proc->pid = thread__pid(thread);
	proc->nr_maps = nr_maps;
	proc->mem.machine = machine;
	proc->mem.thread = thread;
	return proc->dec;
}

void auxsample_proc__exit(struct auxsample_proc *proc)
{
	auxsample_decoder__delete(proc->dec);
	proc->dec = NULL;
	auxsample_image__put(proc->image);
	proc->image = NULL;
}
