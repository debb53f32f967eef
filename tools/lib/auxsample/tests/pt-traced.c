// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A random program's trace and libipt's decodes of it (pt-traced.h). */
#include <stdlib.h>
#include <string.h>
#include <auxsample/pt-writer.h>
#include "tests.h"
#include "pt-program.h"
#include "pt-traced.h"

struct auxsample_config traced__config(struct program *code, struct auxsample_image *image,
				       enum auxsample_pt_decoder which)
{
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.pt = { .family = 6, .model = 85, .stepping = 4 },
		.read_memory = read_program,
		.context = code,
		.image = image,
		.pt_decoder = which,
	};

	return config;
}

size_t traced__start(const struct traced *t, unsigned int i)
{
	return t->ends[i] > 4096 ? t->ends[i] - 4096 : 0;
}

int traced__init_at(struct traced *t, uint32_t seed, uint64_t base)
{
	struct auxsample_pt_writer_config wcfg = { .size = sizeof(wcfg), .psb_period = 2048 };
	struct auxsample_config config;
	struct auxsample_decoder *dec;
	size_t len;

	memset(t, 0, sizeof(*t));
	t->prog = malloc(sizeof(*t->prog));
	t->w = auxsample_pt_writer__new(&wcfg);
	t->ref = calloc(ARRAY_SIZE(t->ends), sizeof(*t->ref));
	t->nr_ref = calloc(ARRAY_SIZE(t->ends), sizeof(*t->nr_ref));
	if (!t->prog || !t->w || !t->ref || !t->nr_ref)
		return -1;
	program__generate(t->prog, seed);
	t->prog->base = base;
	if (program__run(t->prog, t->w, 100000, false, t->ends, t->ips, &t->nr_ends,
			 ARRAY_SIZE(t->ends)))
		return -1;
	t->buf = auxsample_pt_writer__data(t->w, &len);
	config = traced__config(t->prog, NULL, AUXSAMPLE_PT_DECODER_LIBIPT);
	dec = auxsample_decoder__new(&config, NULL);
	if (!dec)
		return -1;
	for (unsigned int i = 0; i < t->nr_ends; i++) {
		const struct auxsample_branch *br;
		size_t start = traced__start(t, i);

		t->nr_ref[i] = auxsample_decoder__decode(dec, t->buf + start, t->ends[i] - start,
							 64);
		auxsample_decoder__branches(dec, &br);
		if (t->nr_ref[i] > 0)
			memcpy(t->ref[i], br, t->nr_ref[i] * sizeof(*br));
	}
	auxsample_decoder__delete(dec);
	return t->nr_ends > 10 ? 0 : -1;
}

int traced__init(struct traced *t, uint32_t seed)
{
	return traced__init_at(t, seed, CODE_BASE);
}

void traced__exit(struct traced *t)
{
	auxsample_pt_writer__delete(t->w);
	free(t->prog);
	free(t->ref);
	free(t->nr_ref);
}

int traced__walk(const struct traced *t, struct auxsample_decoder *dec, int step,
		 uint64_t *built)
{
	*built = 0;
	for (unsigned int k = 0; k < t->nr_ends; k++) {
		unsigned int i = step > 0 ? k : t->nr_ends - 1 - k;
		size_t start = traced__start(t, i);
		const struct auxsample_branch *br;
		struct auxsample_stats st;
		int n;

		n = auxsample_decoder__decode(dec, t->buf + start, t->ends[i] - start, 64);
		auxsample_decoder__branches(dec, &br);
		auxsample_decoder__stats(dec, &st, sizeof(st));
		*built += st.pt_blocks_built;
		if (n != t->nr_ref[i] || st.pt_fallbacks ||
		    (n > 0 && memcmp(br, t->ref[i], n * sizeof(*br)))) {
			pr_test("sample %u: %d branches, libipt %d, %llu fallbacks\n", i, n,
				t->nr_ref[i], (unsigned long long)st.pt_fallbacks);
			return -1;
		}
	}
	return 0;
}
