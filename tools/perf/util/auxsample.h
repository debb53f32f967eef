/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_H
#define __PERF_AUXSAMPLE_H

#include <linux/types.h>
#include <stddef.h>

struct machine;
struct thread;

/*
 * perf's side of libauxsample (tools/lib/auxsample): the traced code as
 * perf knows it, through the thread's maps and their dsos (files, the
 * build-id cache, the vDSO, kcore or vmlinux for kernel addresses).
 */
struct auxsample_mem {
	struct machine	*machine;
	struct thread	*thread;
};

/* An auxsample_read_memory_fn: @context is a struct auxsample_mem. */
int auxsample_mem__read(u8 *buf, size_t size, u64 addr, void *context);

#endif /* __PERF_AUXSAMPLE_H */
