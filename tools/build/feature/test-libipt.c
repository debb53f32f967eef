// SPDX-License-Identifier: GPL-2.0
#include <intel-pt.h>

/*
 * libipt 2.0 added the block decoder's end_on_call/end_on_jump flags and
 * the image section cache, which the AUX-sample decoder relies on.
 */
#if !defined(LIBIPT_VERSION_MAJOR) || (LIBIPT_VERSION_MAJOR < 2)
#error "libipt >= 2.0 is required"
#endif

int main(void)
{
	struct pt_config config;

	pt_config_init(&config);
	config.flags.variant.block.end_on_call = 1;
	(void)pt_library_version();
	(void)pt_iscache_alloc(NULL);
	return 0;
}
