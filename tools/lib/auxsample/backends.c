// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The decoder backends this build has: each is built only when its
 * library was found (the Makefile defines AUXSAMPLE_PT with libipt,
 * AUXSAMPLE_ETM with OpenCSD).  A decoder for a trace type whose backend
 * is missing fails with AUXSAMPLE_ERR_NOT_BUILT.
 */
#include "backend.h"

const struct auxsample_backend *const auxsample_backends[] = {
#ifdef AUXSAMPLE_PT
	&auxsample_pt_backend,
#endif
#ifdef AUXSAMPLE_ETM
	&auxsample_etm_backend,
#endif
	NULL,
};

/* Not counting the NULL, which keeps the array from being empty. */
const unsigned int auxsample_nr_backends = ARRAY_SIZE(auxsample_backends) - 1;

const struct auxsample_backend *auxsample_backend__find(enum auxsample_trace_type type)
{
	for (unsigned int i = 0; i < auxsample_nr_backends; i++) {
		if (auxsample_backends[i]->type == type)
			return auxsample_backends[i];
	}
	return NULL;
}

const struct auxsample_backend *auxsample_backend__select(const struct auxsample_config *config)
{
	const struct auxsample_backend *backend = auxsample_backend__find(config->type);

#ifdef AUXSAMPLE_PT
	/* The walker unless libipt is asked for: it is the faster of the two. */
	if (backend == &auxsample_pt_backend &&
	    config->pt_decoder != AUXSAMPLE_PT_DECODER_LIBIPT)
		return &auxsample_pt_walk_backend;
#endif
	return backend;
}
