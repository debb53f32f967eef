// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The Intel PT backend needs libipt 2's block decoder and section cache. */
#include <intel-pt.h>

int main(void)
{
	struct pt_image_section_cache *iscache = pt_iscache_alloc(NULL);

	pt_iscache_free(iscache);
	return !pt_library_version().major;
}
