// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CoreSight ETMv4/ETE backend on OpenCSD: being written, see internal.h
 * for what it has to do.  Until then ETM decoders cannot be created.
 */
#include "internal.h"

int auxsample_etm__init(struct auxsample_decoder *dec)
{
	return -AUXSAMPLE_ERR_UNSUPPORTED;
}

void auxsample_etm__exit(struct auxsample_decoder *dec)
{
}

int auxsample_etm__decode(struct auxsample_decoder *dec, const uint8_t *buf, size_t len)
{
	return -AUXSAMPLE_ERR_UNSUPPORTED;
}
