// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Real CoreSight ETM traces (OpenCSD snapshots, ../shared/data/etm). */
#include "tests.h"

const struct test tests_etm_real[] = {
	{ NULL, NULL },
};
