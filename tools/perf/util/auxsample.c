// SPDX-License-Identifier: GPL-2.0
/*
 * Glue between perf and libauxsample: the decoder reads the traced code
 * through the sampled thread's maps, as perf's own Intel PT decoder does.
 */
#include <linux/kernel.h>
#include <linux/types.h>

#include "addr_location.h"
#include "auxsample.h"
#include "dso.h"
#include "event.h"
#include "machine.h"
#include "map.h"
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
