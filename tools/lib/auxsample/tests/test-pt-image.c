// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An image's copy (auxsample_image__copy()): the files it keeps, and only
 * those, decoded by libipt and the walker against libipt's decodes of a
 * random program (pt-traced.h).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <auxsample/auxsample.h>
#include "tests.h"
#include "test-data.h"
#include "pt-program.h"
#include "pt-traced.h"

static int keep_at(const char *filename, uint64_t offset, uint64_t size, uint64_t vaddr,
		   void *arg)
{
	(void)filename, (void)offset, (void)size;
	return vaddr == *(const uint64_t *)arg;
}

static int keep_not_at(const char *filename, uint64_t offset, uint64_t size, uint64_t vaddr,
		       void *arg)
{
	return !keep_at(filename, offset, size, vaddr, arg);
}

static int keep_named(const char *filename, uint64_t offset, uint64_t size, uint64_t vaddr,
		      void *arg)
{
	(void)offset, (void)size, (void)vaddr;
	return !strcmp(filename, arg);
}

/*
 * @t's samples decoded with @image by libipt, which reads the code of
 * the image's files, and only theirs (@files), or by the walker, which
 * reads code through the callback and keys its blocks by the image's
 * files: 0, or -1.  The walker's blocks built, into *@built.
 */
static int traced__walk_image(const struct traced *t, struct auxsample_image *image,
			      bool files, uint64_t *built)
{
	struct auxsample_config config = traced__config(t->prog, image, files ?
						       AUXSAMPLE_PT_DECODER_LIBIPT :
						       AUXSAMPLE_PT_DECODER_WALKER);
	struct auxsample_decoder *dec;
	int err = -1;

	if (files)
		config.read_memory = read_nothing;
	dec = auxsample_decoder__new(&config, NULL);
	if (dec)
		err = traced__walk(t, dec, 1, built);
	auxsample_decoder__delete(dec);
	return err;
}

#define COPIES	4

/*
 * auxsample_image__copy(): a copy maps the files it keeps, as libipt
 * reads them (0), and nothing where it dropped one (1); where a dropped
 * file was mapped over a kept one, the kept one's code is there again
 * (2: not in the image it was copied from).  The walker builds no block
 * of a copy that the family has (0, 2), and takes none of the family's
 * where the copy maps no file: another program's code there, read
 * through the callback, is decoded as libipt decodes it (1).  Code
 * changed in the image is the copy's own, its blocks built again (3).
 */
static int test_image_copy(void)
{
	char name[] = "/tmp/auxsample-copy-XXXXXX", decoy[] = "/tmp/auxsample-decoy-XXXXXX";
	struct auxsample_image *image = NULL, *over = NULL, *copy[COPIES] = {};
	const uint64_t at = CODE_BASE;
	uint64_t built[COPIES + 1] = {}, none;
	struct traced t, d;
	int ret = TEST_FAIL;
	int named = 0;

	if (!T_CHECK(!traced__init(&t, 17) && !traced__init(&d, 18)))
		goto out;
	if (!T_CHECK(!program__to_file(t.prog, name)))
		goto out;
	named++;
	if (!T_CHECK(!program__to_file(d.prog, decoy)))
		goto out;
	named++;
	image = auxsample_image__new();
	over = auxsample_image__new_sibling(image);
	if (!T_CHECK(image && over &&
		     !auxsample_image__add_file_id(image, decoy, 0, CODE_SIZE, MOVED_BASE,
						   "decoy") &&
		     !auxsample_image__add_file_id(image, name, 0, CODE_SIZE, CODE_BASE, "prog") &&
		     !auxsample_image__add_file_id(over, name, 0, CODE_SIZE, CODE_BASE, "prog") &&
		     !auxsample_image__add_file_id(over, decoy, 0, CODE_SIZE, CODE_BASE,
						   "decoy")))
		goto out;
	if (!T_CHECK(!traced__walk_image(&t, image, false, &built[COPIES])))
		goto out;
	if (!T_CHECK(!traced__walk_image(&t, image, true, &none)))
		goto out;
	if (!T_CHECK(traced__walk_image(&t, over, true, &none)))
		goto out;
	copy[0] = auxsample_image__copy(image, keep_at, (void *)&at);
	copy[1] = auxsample_image__copy(image, keep_not_at, (void *)&at);
	copy[2] = auxsample_image__copy(over, keep_named, name);
	if (!T_CHECK(copy[0] && copy[1] && copy[2] &&
		     !auxsample_image__invalidate(image, CODE_BASE + t.prog->fn_start[0], 1)))
		goto out;
	copy[3] = auxsample_image__copy(image, NULL, NULL);
	if (!T_CHECK(copy[3] && !traced__walk_image(&t, copy[0], true, &none) &&
		     traced__walk_image(&t, copy[1], true, &none) &&
		     !traced__walk_image(&t, copy[2], true, &none)))
		goto out;
	if (!T_CHECK(!traced__walk_image(&t, copy[0], false, &built[0]) &&
		     !traced__walk_image(&d, copy[1], false, &built[1]) &&
		     !traced__walk_image(&t, copy[2], false, &built[2]) &&
		     !traced__walk_image(&t, copy[3], false, &built[3])))
		goto out;
	pr_test("blocks built: image %llu, copies %llu, %llu (other code), %llu, %llu (changed)\n",
		(unsigned long long)built[COPIES], (unsigned long long)built[0],
		(unsigned long long)built[1], (unsigned long long)built[2],
		(unsigned long long)built[3]);
	if (!T_CHECK(built[COPIES] > 0 && built[0] == 0 && built[1] > 0 && built[2] == 0 &&
		     built[3] > 0 && built[3] < built[COPIES]))
		goto out;
	ret = TEST_OK;
out:
	if (named > 0)
		unlink(name);
	if (named > 1)
		unlink(decoy);
	for (int k = 0; k < COPIES; k++)
		auxsample_image__put(copy[k]);
	auxsample_image__put(over);
	auxsample_image__put(image);
	traced__exit(&t);
	traced__exit(&d);
	return ret;
}

const struct test tests_pt_image[] = {
	{ "an image's copy maps the files it keeps, and only those", test_image_copy },
	{ NULL, NULL },
};
