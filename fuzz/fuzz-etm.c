// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer harness: libauxsample's CoreSight ETM/ETE decoder (OpenCSD
 * behind it), through its public API, configured as each real trace of
 * ../shared/data/etm was recorded.
 *
 * Input: 8 header bytes, then the trace (the format of the
 * REPRO-etm-*.bin files in ../shared/data/repro):
 *   h[0]  the configuration, modulo their number: the snapshots juno_r1_1,
 *         a57_single_step, test-file-mem-offsets, juno-uname-001,
 *         bugfix-exact-match, ete_ip, ts_marker, trace_file_cid_vmid,
 *         src_addr, 001-ack_test, 002-ack_test_scr, tme_test (their ID
 *         registers and memory images), then the trace buffers of the
 *         simpleperf recordings perf_etm.data and perf_kernel.data (their
 *         AUXTRACE_INFO's registers, no memory)
 *   h[1]  bit 0 all sources (else source h[2]), bit 1 whole snippet,
 *         bit 2 flow callback, bit 3 set_thread(h[3]), bit 4 flip
 *         'formatted', bit 5 no memory reader, bit 6 decode twice,
 *         bit 7 xor register h[5] (TRCIDR0..13, TRCCONFIGR, TRCDEVARCH)
 *         of the source with h[6..7]
 *   h[4]  max branches (0: 64)
 *
 * The snapshots are loaded by the unit tests' own loader
 * (tests/etm-snapshot.c, included).
 */
#include "../tools/lib/auxsample/tests/test-data.c"
#include "../tools/lib/auxsample/tests/etm-snapshot.c"
#include "unit-tests.h"

static const char * const perfdata_names[] = { "perf_etm.data", "perf_kernel.data" };

#define MAX_CONFIGS	(ETM_SNAPSHOTS + 2 * MAX_BUFFERS)

/* Every configuration, in the order above; NULL where the data is absent. */
static struct snapshot *configs[MAX_CONFIGS];
static unsigned int nr_configs;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	for (size_t i = 0; i < ETM_SNAPSHOTS; i++) {
		configs[nr_configs] = snapshot__load(etm_snapshots[i][0], etm_snapshots[i][1]);
		if (!configs[nr_configs])
			fprintf(stderr, "fuzz-etm: no snapshot %s (set AUXSAMPLE_DATA)\n",
				etm_snapshots[i][1]);
		nr_configs++;
	}
	for (size_t i = 0; i < ARRAY_SIZE(perfdata_names); i++) {
		struct snapshot *ss[MAX_BUFFERS];
		unsigned int nr = 0;

		if (perfdata__load(perfdata_names[i], ss, &nr))
			fprintf(stderr, "fuzz-etm: cannot read %s\n", perfdata_names[i]);
		/* The buffers' sources; their trace is the input's. */
		for (unsigned int j = 0; j < nr && nr_configs < MAX_CONFIGS; j++)
			configs[nr_configs++] = ss[j];
	}
	return 0;
}

static void flow_seen(const struct auxsample_flow *flow, void *context)
{
	uint64_t *sum = context;

	*sum += flow->type + flow->kind + flow->from + flow->to + flow->flags +
		flow->insns + flow->pid + flow->trace_id;
}

static uint64_t results(struct auxsample_decoder *dec)
{
	const struct auxsample_decode_error *errors;
	const struct auxsample_branch *br;
	struct auxsample_stats stats;
	const uint64_t *ips;
	uint64_t sum = 0;
	int n;

	n = auxsample_decoder__branches(dec, &br);
	for (int i = 0; i < n; i++)
		sum += br[i].from + br[i].to + br[i].kind + br[i].flags;
	n = auxsample_decoder__callchain(dec, &ips);
	for (int i = 0; i < n; i++)
		sum += ips[i];
	n = auxsample_decoder__errors(dec, &errors);
	for (int i = 0; i < n; i++)
		sum += errors[i].offset + errors[i].error + errors[i].lib_error;
	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	return sum + stats.insns;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct auxsample_etm_source src[MAX_SOURCES];
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_ETM,
	};
	struct auxsample_decoder *dec;
	unsigned int first = 0, nr;
	uint64_t flow_sum = 0;
	struct snapshot *ss;
	uint8_t flags;

	if (size < 8 || !nr_configs)
		return 0;
	ss = configs[data[0] % nr_configs];
	if (!ss || !ss->nr_src)
		return 0;
	flags = data[1];
	nr = ss->nr_src;
	if (!(flags & 1)) {
		first = data[2] % ss->nr_src;
		nr = 1;
	}
	memcpy(src, &ss->src[first], nr * sizeof(src[0]));
	if (flags & 0x80)
		etm_repro__xor_register(&src[0], data);

	config.etm.sources = src;
	config.etm.nr_sources = nr;
	config.etm.formatted = ss->formatted ^ !!(flags & 0x10);
	if (!(flags & 0x20) && ss->nr_mem) {
		config.read_memory = snapshot__read;
		config.context = ss;
	} else {
		config.read_memory = read_nothing;
	}
	if (flags & 2)
		config.flags |= AUXSAMPLE_CFG_WHOLE_SNIPPET;
	if (flags & 4) {
		config.flow = flow_seen;
		config.flow_context = &flow_sum;
	}

	dec = auxsample_decoder__new(&config, NULL);
	if (!dec)
		return 0;
	if (flags & 8)
		auxsample_decoder__set_thread(dec, data[3]);
	auxsample_decoder__decode(dec, data + 8, size - 8, data[4] ?: 64);
	results(dec);
	if (flags & 0x40) {
		/* Again, on the second half: no state may leak between decodes. */
		auxsample_decoder__decode(dec, data + 8 + (size - 8) / 2,
					  size - 8 - (size - 8) / 2, data[4] ?: 64);
		results(dec);
	}
	auxsample_decoder__delete(dec);
	return 0;
}
