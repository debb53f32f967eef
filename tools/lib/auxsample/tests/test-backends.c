// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Which backends this build has: a decoder for each trace type whose
 * library was found, and for the others a clear "not built" from
 * auxsample_decoder__new() rather than a bare NULL.
 */
#include <string.h>
#include <auxsample/auxsample.h>
#include "tests.h"
#include "test-data.h"

static const struct auxsample_etm_source etm_source = {
	.trace_id	= 0x10,
	/* TRCIDR0..2 of an ETMv4.2 (Cortex-A53, perf's Juno snapshots) */
	.trcidr		= { 0x28000ea1, 0x4100f424, 0x488000 },
};

static int test_built(enum auxsample_trace_type type, bool built)
{
	struct auxsample_config config = {
		.size		= sizeof(config),
		.type		= type,
		.read_memory	= read_nothing,
		.etm		= { .sources = &etm_source, .nr_sources = 1, .formatted = 1 },
	};
	struct auxsample_decoder *dec;
	int err = 1;

	if (!T_CHECK(auxsample_supports(type) == built))
		return TEST_FAIL;
	dec = auxsample_decoder__new(&config, &err);
	if (built) {
		if (!T_CHECK(dec && !err))
			return TEST_FAIL;
	} else {
		if (!T_CHECK(!dec && err == -AUXSAMPLE_ERR_NOT_BUILT))
			return TEST_FAIL;
		if (!T_CHECK(!strcmp(auxsample_strerror(err), "decoder not built in")))
			return TEST_FAIL;
	}
	auxsample_decoder__delete(dec);
	return TEST_OK;
}

static int test_pt_backend(void)
{
#ifdef AUXSAMPLE_PT
	return test_built(AUXSAMPLE_TRACE_INTEL_PT, true);
#else
	return test_built(AUXSAMPLE_TRACE_INTEL_PT, false);
#endif
}

static int test_etm_backend(void)
{
#ifdef AUXSAMPLE_ETM
	return test_built(AUXSAMPLE_TRACE_ETM, true);
#else
	return test_built(AUXSAMPLE_TRACE_ETM, false);
#endif
}

#ifdef AUXSAMPLE_PT
static void no_flow(const struct auxsample_flow *flow, void *context)
{
}

/* The fallbacks to libipt that decoding a snippet with @pt_decoder counts. */
static int pt_fallbacks(uint32_t pt_decoder, uint64_t *fallbacks)
{
	struct auxsample_config config = {
		.size		= sizeof(config),
		.type		= AUXSAMPLE_TRACE_INTEL_PT,
		.read_memory	= read_nothing,
		.flow		= no_flow,
		.pt_decoder	= pt_decoder,
	};
	static const uint8_t nothing[16];
	struct auxsample_decoder *dec = auxsample_decoder__new(&config, NULL);
	struct auxsample_stats st;

	if (!dec)
		return -1;
	auxsample_decoder__decode(dec, nothing, sizeof(nothing), 64);
	auxsample_decoder__stats(dec, &st, sizeof(st));
	*fallbacks = st.pt_fallbacks;
	auxsample_decoder__delete(dec);
	return 0;
}
#endif

/*
 * Intel PT's default decoder is the walker: what only libipt does (flow
 * records, here) it hands to libipt and counts, which libipt itself
 * never does.  A decoder the library does not have is refused.
 */
static int test_pt_default(void)
{
#ifdef AUXSAMPLE_PT
	struct auxsample_config config = {
		.size		= sizeof(config),
		.type		= AUXSAMPLE_TRACE_INTEL_PT,
		.read_memory	= read_nothing,
		.pt_decoder	= AUXSAMPLE_PT_DECODER_WALKER + 1,
	};
	uint64_t n;
	int err = 0;

	if (!T_CHECK(!pt_fallbacks(AUXSAMPLE_PT_DECODER_DEFAULT, &n) && n == 1))
		return TEST_FAIL;
	if (!T_CHECK(!pt_fallbacks(AUXSAMPLE_PT_DECODER_WALKER, &n) && n == 1))
		return TEST_FAIL;
	if (!T_CHECK(!pt_fallbacks(AUXSAMPLE_PT_DECODER_LIBIPT, &n) && n == 0))
		return TEST_FAIL;
	if (!T_CHECK(!auxsample_decoder__new(&config, &err) && err == -AUXSAMPLE_ERR_INVALID))
		return TEST_FAIL;
	return TEST_OK;
#else
	test_skip_reason = "built without libipt: no Intel PT decoder";
	return TEST_SKIP;
#endif
}

/* Images hold files for whichever backends read code from them. */
static int test_image(void)
{
	struct auxsample_image *image = auxsample_image__new();
	struct auxsample_image *clone;

	if (!T_CHECK(image))
		return TEST_FAIL;
	if (!T_CHECK(auxsample_image__add_file(image, NULL, 0, 1, 0) == -AUXSAMPLE_ERR_INVALID))
		return TEST_FAIL;
	clone = auxsample_image__clone(image);
	if (!T_CHECK(clone))
		return TEST_FAIL;
	auxsample_image__put(clone);
	auxsample_image__put(image);
	return TEST_OK;
}

const struct test tests_backends[] = {
	{ "Intel PT decodes when built with libipt, else says not built", test_pt_backend },
	{ "ETM decodes when built with OpenCSD, else says not built", test_etm_backend },
	{ "Intel PT's default decoder is the walker, libipt on request", test_pt_default },
	{ "images without files, for any backend", test_image },
	{ NULL, NULL },
};
