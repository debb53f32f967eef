/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The real ETM/ETE traces of ../shared/data (etm-snapshot.c): OpenCSD's
 * test snapshots, a trace and the memory dumps and ETM/ETE registers of
 * its sources, and the trace buffers of perf's cs_etm recordings, for
 * the tests (test-etm-*.c) and fuzz-etm.
 */
#ifndef __AUXSAMPLE_TESTS_ETM_SNAPSHOT_H
#define __AUXSAMPLE_TESTS_ETM_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>
#include <auxsample/auxsample.h>

/* Under data_dir(): OpenCSD's snapshots, and perf.data files of simpleperf's recordings */
#define OPENCSD		"etm/opencsd"
#define SIMPLEPERF	"etm/simpleperf"
#define MAX_SOURCES	16
#define MAX_REGIONS	256
#define NR_IDS		128		/* trace IDs */
#define MAX_BUFFERS	16		/* a perf.data's trace buffers */

/* A memory dump: @size bytes at @addr, from @file. */
struct region {
	uint64_t	addr;
	uint64_t	size;
	const uint8_t	*data;
	uint8_t		*file;
};

/* A trace, its sources' registers and their memory: the decoder's configuration. */
struct snapshot {
	char				dir[1024];
	struct region			mem[MAX_REGIONS];
	unsigned int			nr_mem;
	struct auxsample_etm_source	src[MAX_SOURCES];
	char				src_name[MAX_SOURCES][64];
	unsigned int			nr_src;
	uint8_t				formatted;
	uint8_t				*trace;
	size_t				trace_size;
};

/*
 * OpenCSD's snapshots under OPENCSD, {subdirectory, name}: the repro
 * inputs' and fuzz-etm's header byte 0 picks one of them by its index.
 */
#define ETM_SNAPSHOTS	12
extern const char * const etm_snapshots[ETM_SNAPSHOTS][2];

/* ../shared/data/etm/opencsd/@subdir/@name, or NULL */
struct snapshot *snapshot__load(const char *subdir, const char *name);
/* The same, saying why the test skips where it is missing. */
struct snapshot *snapshot__get(const char *subdir, const char *name);
void snapshot__exit(struct snapshot *ss);
/* An auxsample_read_memory_fn: the snapshot's memory dumps (none: read_nothing()). */
int snapshot__read(uint8_t *buf, size_t size, uint64_t addr, void *context);
/*
 * A decoder for @nr sources of @ss from @first on, reading code with
 * @read, every step of the flow to @flow if not NULL.
 */
struct auxsample_decoder *snapshot__new_decoder(struct snapshot *ss, unsigned int first,
						unsigned int nr, auxsample_read_memory_fn *read,
						auxsample_flow_fn *flow, void *flow_context);
struct auxsample_decoder *snapshot__decoder(struct snapshot *ss, unsigned int first,
					    unsigned int nr);
/*
 * The trace buffers of ../shared/data/etm/simpleperf/@name, each a
 * snapshot of its CPU's source, no memory, into @ss, *@nr of them: 0 or -1.
 */
int perfdata__load(const char *name, struct snapshot **ss, unsigned int *nr);
/* Register h[5] of @src xored with h[6..7]: fuzz-etm's inputs, and the repro tests'. */
void etm_repro__xor_register(struct auxsample_etm_source *src, const uint8_t *h);

#endif /* __AUXSAMPLE_TESTS_ETM_SNAPSHOT_H */
