// SPDX-License-Identifier: GPL-2.0
/*
 * Glue between perf and libauxsample: the decoder reads the traced code
 * through the sampled thread's maps, as perf's own Intel PT decoder does.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/zalloc.h>
#include <sys/mman.h>
#include <auxsample/auxsample.h>

#include "addr_location.h"
#include "auxsample.h"
#include "auxtrace.h"
#include "comm.h"
#include "data.h"
#include "debug.h"
#include "dso.h"
#include "env.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "intel-pt.h"
#include "machine.h"
#include "map.h"
#include "maps.h"
#include "mutex.h"
#include "sample.h"
#include "session.h"
#include "thread.h"
#include "util.h"

const char *auxsample__strerror(int err, char *buf, size_t size)
{
	if (auxsample__error_index(err))
		return auxsample_strerror(err);
	return str_error_r(err < 0 ? -err : err, buf, size);
}

unsigned int auxsample__error_index(int err)
{
	unsigned int e = err < 0 ? -err : err;

	if (e <= AUXSAMPLE_ERR_BASE || e >= AUXSAMPLE_ERR_END)
		return 0;
	return e - AUXSAMPLE_ERR_BASE;
}

/*
 * Not upstream's thread__memcpy(), which reads the same way but reads on
 * past the end of the mapping into whatever the file holds after it
 * (which a decoder would take for the traced code), and gives up on the
 * map where map__load() fails, which loads symbols, not the code.
 */
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

const char *auxsample_thread__comm_str_at(struct thread *thread, u64 time)
{
	struct comm *comm, *at = NULL;
	const char *str;

	down_read(thread__comm_lock(thread));
	/* Newest first; before the first comm's start, the first comm. */
	list_for_each_entry(comm, thread__comm_list(thread), list) {
		at = comm;
		if (comm->start <= time)
			break;
	}
	str = at ? comm__str(at) : NULL;
	up_read(thread__comm_lock(thread));
	return str;
}

int auxsample_session__check_size(struct perf_session *session, const char *who)
{
	struct perf_header *header = &session->header;
	u64 end = header->data_offset + header->data_size, size;
	struct stat st;

	if (perf_data__is_pipe(session->data) || perf_data__is_dir(session->data) ||
	    !header->data_size)
		return 0;
	if (end < header->data_offset) {
		/* A wrapped sum: the reader would loop on its mapping. */
		pr_err("%s%s is damaged: its header gives its data section %" PRIu64
		       " bytes; record it again\n", who, session->data->path, header->data_size);
		return -EINVAL;
	}
	/* Not perf_data__size(): an unsigned long, 32 bits on some machines */
	if (fstat(perf_data__fd(session->data), &st) || !S_ISREG(st.st_mode))
		return 0;
	size = st.st_size;
	if (size >= end)
		return 0;
	pr_err("%s%s is truncated: %" PRIu64 " bytes where its header says %" PRIu64
	       "; copy or record it again\n",
	       who, session->data->path, size, end);
	return -EIO;
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
	res->decode_ns = 0;
}
