// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The CoreSight ETM backend needs OpenCSD's C API. */
#include <opencsd/c_api/opencsd_c_api.h>

int main(void)
{
	return !ocsd_get_version();
}
