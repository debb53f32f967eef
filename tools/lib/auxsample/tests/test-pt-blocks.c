// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The walker's block cache (pt-blocks.c), shared by the decoders of an
 * image and its clones in every thread: decoded once, forgotten where the
 * code changes, kept to its cap.  Random programs (pt-program.c) decoded
 * by the walker against libipt's decodes of the same snippets.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <auxsample/auxsample.h>
#include <auxsample/pt-writer.h>
#include "tests.h"
#include "test-data.h"
#include "pt-program.h"
#include "pt-traced.h"
#include "../pt-blocks.h"
#include "../pt-files.h"
#include "../x86-branch.h"

struct walker_thread {
	const struct traced		*t;
	struct auxsample_image		*image;
	int				step;
	int				err;
	uint64_t			built;
};

static void *walker_thread__run(void *arg)
{
	struct walker_thread *wt = arg;
	struct auxsample_config config = traced__config(wt->t->prog, wt->image,
						       AUXSAMPLE_PT_DECODER_WALKER);
	struct auxsample_decoder *dec = auxsample_decoder__new(&config, NULL);

	wt->err = -1;
	/* Thrice: the decodes after the first overlap the other thread's more. */
	for (int round = 0; dec && round < 3; round++) {
		uint64_t built;

		wt->err = traced__walk(wt->t, dec, wt->step, &built);
		wt->built += built;
		if (wt->err)
			break;
	}
	auxsample_decoder__delete(dec);
	return NULL;
}

/*
 * A block is decoded once an image: a second decoder, and one of a
 * clone, build none; two threads decoding at once (under the sanitizers
 * in `make check`) give libipt's branches.
 */
static int test_blocks_shared(void)
{
	struct auxsample_image *image = NULL, *clone = NULL, *both = NULL;
	struct walker_thread wt[2] = {};
	struct auxsample_decoder *dec[3] = {};
	struct auxsample_config config;
	pthread_t tid[2];
	uint64_t built[3];
	struct traced t;
	int ret = TEST_FAIL;

	if (traced__init(&t, 11))
		goto out;
	image = auxsample_image__new();
	both = auxsample_image__new();
	if (!image || !both)
		goto out;
	config = traced__config(t.prog, image, AUXSAMPLE_PT_DECODER_WALKER);
	dec[0] = auxsample_decoder__new(&config, NULL);
	dec[1] = auxsample_decoder__new(&config, NULL);
	if (!T_CHECK(dec[0] && dec[1]))
		goto out;
	if (!T_CHECK(!traced__walk(&t, dec[0], 1, &built[0])))
		goto out;
	if (!T_CHECK(!traced__walk(&t, dec[1], -1, &built[1])))
		goto out;
	clone = auxsample_image__clone(image);
	if (!T_CHECK(clone))
		goto out;
	config.image = clone;
	dec[2] = auxsample_decoder__new(&config, NULL);
	if (!T_CHECK(dec[2] && !traced__walk(&t, dec[2], 1, &built[2])))
		goto out;
	pr_test("blocks built: %llu, then %llu, on a clone %llu\n", (unsigned long long)built[0],
		(unsigned long long)built[1], (unsigned long long)built[2]);
	if (!T_CHECK(built[0] > 0 && built[1] == 0 && built[2] == 0))
		goto out;

	/* One thread on @both, the other on its clone, as perf's pool. */
	wt[0] = (struct walker_thread){ .t = &t, .image = both, .step = 1 };
	wt[1] = (struct walker_thread){ .t = &t, .image = auxsample_image__clone(both),
					 .step = -1 };
	if (!T_CHECK(wt[1].image))
		goto out;
	for (int i = 0; i < 2; i++) {
		if (!T_CHECK(!pthread_create(&tid[i], NULL, walker_thread__run, &wt[i])))
			goto out;
	}
	for (int i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	pr_test("two threads built %llu and %llu blocks\n", (unsigned long long)wt[0].built,
		(unsigned long long)wt[1].built);
	if (!T_CHECK(!wt[0].err && !wt[1].err))
		goto out;
	/* Each block once, but for those both built at the same time. */
	if (!T_CHECK(wt[0].built + wt[1].built <= 2 * built[0]))
		goto out;
	ret = TEST_OK;
out:
	for (int i = 0; i < 3; i++)
		auxsample_decoder__delete(dec[i]);
	auxsample_image__put(wt[1].image);
	auxsample_image__put(clone);
	auxsample_image__put(both);
	auxsample_image__put(image);
	traced__exit(&t);
	return ret;
}

/*
 * New code where the blocks were: a file mapped over the range (the
 * image's add), or code changed in place and said so (JIT,
 * auxsample_image__invalidate()).  The same decoder then walks the new
 * program as libipt decodes it, its blocks built again.
 */
static int test_blocks_remapped(void)
{
	char name[] = "/tmp/auxsample-blocks-XXXXXX";
	struct auxsample_image *image[2] = {};
	struct auxsample_decoder *dec[2] = {};
	struct program *code = malloc(sizeof(*code));
	struct traced t[2] = {};
	int ret = TEST_FAIL;
	bool named = false;

	if (!code || traced__init(&t[0], 21) || traced__init(&t[1], 22))
		goto out;
	for (int k = 0; k < 2; k++) {
		struct auxsample_config config = traced__config(code, NULL,
							       AUXSAMPLE_PT_DECODER_WALKER);
		uint64_t built;

		image[k] = auxsample_image__new();
		if (!T_CHECK(image[k]))
			goto out;
		config.image = image[k];
		dec[k] = auxsample_decoder__new(&config, NULL);
		if (!T_CHECK(dec[k]))
			goto out;
		*code = *t[0].prog;
		if (!T_CHECK(!traced__walk(&t[0], dec[k], 1, &built)))
			goto out;
		if (!T_CHECK(built > 0))
			goto out;
		*code = *t[1].prog;
		if (k == 0) {
			/* libipt reads the file's code, the walker read_program()'s */
			if (!T_CHECK(!program__to_file(t[1].prog, name)))
				goto out;
			named = true;
			if (!T_CHECK(!auxsample_image__add_file(image[k], name, 0, CODE_SIZE,
				     CODE_BASE)))
				goto out;
		} else {
			if (!T_CHECK(!auxsample_image__invalidate(image[k], CODE_BASE, CODE_SIZE)))
				goto out;
		}
		if (!T_CHECK(!traced__walk(&t[1], dec[k], 1, &built)))
			goto out;
		pr_test("%s: %llu blocks built for the new code\n", k ? "invalidated" : "remapped",
			(unsigned long long)built);
		if (!T_CHECK(built > 0))
			goto out;
	}
	ret = TEST_OK;
out:
	if (named)
		unlink(name);
	for (int k = 0; k < 2; k++) {
		auxsample_decoder__delete(dec[k]);
		auxsample_image__put(image[k]);
		traced__exit(&t[k]);
	}
	free(code);
	return ret;
}

#define FAMILY_IMAGES	4

/*
 * The images of a family (auxsample_image__new_sibling(), one a
 * recording's processes) share the blocks of a file's code wherever each
 * maps it, for files added with an identity: a program's file at
 * CODE_BASE in one image (0), at MOVED_BASE in its sibling (1), whose
 * decoder builds none and walks the moved program as libipt decodes it
 * (from the trace of its run there).  An image of another family (2),
 * and a sibling that adds the file without an identity (3), build their
 * own.  The code said to have changed in the sibling is its own from
 * then on: it builds those blocks again, and the first image none.
 */
static int test_blocks_family(void)
{
	char name[] = "/tmp/auxsample-family-XXXXXX";
	struct auxsample_image *image[FAMILY_IMAGES] = {};
	struct auxsample_decoder *dec[FAMILY_IMAGES] = {};
	const uint64_t base[FAMILY_IMAGES] = { CODE_BASE, MOVED_BASE, MOVED_BASE, MOVED_BASE };
	const char * const identity[FAMILY_IMAGES] = { "prog", "prog", "prog", NULL };
	struct traced t[2] = {};
	uint64_t built[FAMILY_IMAGES + 2];
	int ret = TEST_FAIL;
	bool named = false;

	if (!T_CHECK(!traced__init_at(&t[0], 17, CODE_BASE) &&
		     !traced__init_at(&t[1], 17, MOVED_BASE)))
		goto out;
	if (!T_CHECK(!program__to_file(t[0].prog, name)))
		goto out;
	named = true;
	image[0] = auxsample_image__new();
	image[1] = auxsample_image__new_sibling(image[0]);
	image[2] = auxsample_image__new();
	image[3] = auxsample_image__new_sibling(image[0]);
	for (int k = 0; k < FAMILY_IMAGES; k++) {
		struct auxsample_config config = traced__config(t[k > 0].prog, image[k],
							       AUXSAMPLE_PT_DECODER_WALKER);

		if (!T_CHECK(image[k] && !auxsample_image__add_file_id(image[k], name, 0, CODE_SIZE,
									base[k], identity[k])))
			goto out;
		dec[k] = auxsample_decoder__new(&config, NULL);
		if (!T_CHECK(dec[k]))
			goto out;
		if (!T_CHECK(!traced__walk(&t[k > 0], dec[k], 1, &built[k])))
			goto out;
	}
	if (!T_CHECK(!auxsample_image__invalidate(image[1],
						  MOVED_BASE + t[1].prog->fn_start[0], 1)))
		goto out;
	if (!T_CHECK(!traced__walk(&t[1], dec[1], 1, &built[FAMILY_IMAGES]) &&
		     !traced__walk(&t[0], dec[0], 1, &built[FAMILY_IMAGES + 1])))
		goto out;
	pr_test("blocks built: %llu at %#llx, its sibling at %#llx %llu, another family %llu\n",
		(unsigned long long)built[0], (unsigned long long)CODE_BASE,
		(unsigned long long)MOVED_BASE, (unsigned long long)built[1],
		(unsigned long long)built[2]);
	pr_test("a sibling without the identity %llu; after a change in the sibling: it %llu\n",
		(unsigned long long)built[3], (unsigned long long)built[4]);
	pr_test("the first image, after it: %llu\n", (unsigned long long)built[5]);
	if (!T_CHECK(built[0] > 0 && built[1] == 0 && built[2] == built[0] &&
		     built[3] == built[0] && built[4] > 0 && built[4] < built[0] && built[5] == 0))
		goto out;
	ret = TEST_OK;
out:
	if (named)
		unlink(name);
	for (int k = 0; k < FAMILY_IMAGES; k++) {
		auxsample_decoder__delete(dec[k]);
		auxsample_image__put(image[k]);
	}
	for (int k = 0; k < 2; k++)
		traced__exit(&t[k]);
	return ret;
}

/*
 * A process's code that changes at the first read of a decode: the
 * program becomes @next, and its image is told so, as a JIT or a
 * debugger's caller would, while the decode is under way.
 */
struct changing_code {
	struct program		*code;
	const struct program	*next;
	struct auxsample_image	*image;
	bool			changed;
};

static int read_changing(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	struct changing_code *cc = context;

	if (!cc->changed) {
		cc->changed = true;
		*cc->code = *cc->next;
		auxsample_image__invalidate(cc->image, CODE_BASE, CODE_SIZE);
	}
	return read_program(buf, size, addr, cc->code);
}

/*
 * Code that changed in one process stays its own: in its clone made
 * before the change (the clone's decoder walks the new program as libipt
 * decodes it), and when the change comes during a decode (none of the
 * new code reaches the family).  A sibling of the first image, whose
 * code did not change, then walks the old program from the family's
 * blocks, and builds none in the first case.
 */
static int test_blocks_family_changed(void)
{
	char name[] = "/tmp/auxsample-changed-XXXXXX";
	struct auxsample_image *image = NULL, *clone = NULL, *sibling = NULL;
	struct auxsample_decoder *dec[3] = {};
	struct program *code = malloc(sizeof(*code));
	struct changing_code cc = {};
	struct traced t[2] = {};
	uint64_t built[4] = {};
	int ret = TEST_FAIL;
	bool named = false;

	if (!T_CHECK(code && !traced__init(&t[0], 17) && !traced__init(&t[1], 29)))
		goto out;
	if (!T_CHECK(!program__to_file(t[0].prog, name)))
		goto out;
	named = true;
	for (int round = 0; round < 2; round++) {
		struct auxsample_config config;

		image = auxsample_image__new();
		if (!T_CHECK(image && !auxsample_image__add_file_id(image, name, 0, CODE_SIZE,
								     CODE_BASE, "prog")))
			goto out;
		clone = auxsample_image__clone(image);
		sibling = auxsample_image__new_sibling(image);
		if (!T_CHECK(clone && sibling &&
			     !auxsample_image__add_file_id(sibling, name, 0, CODE_SIZE, CODE_BASE,
							   "prog")))
			goto out;
		*code = *t[0].prog;
		config = traced__config(code, image, AUXSAMPLE_PT_DECODER_WALKER);
		dec[0] = auxsample_decoder__new(&config, NULL);
		config = traced__config(code, clone, AUXSAMPLE_PT_DECODER_WALKER);
		dec[1] = auxsample_decoder__new(&config, NULL);
		config = traced__config(t[0].prog, sibling, AUXSAMPLE_PT_DECODER_WALKER);
		dec[2] = auxsample_decoder__new(&config, NULL);
		if (!T_CHECK(dec[0] && dec[1] && dec[2]))
			goto out;
		if (round == 0) {
			/*
			 * The old code in the family, walked by the clone too,
			 * then changed: the clone walks the new.
			 */
			if (!T_CHECK(!traced__walk(&t[0], dec[0], 1, &built[0]) &&
				     !traced__walk(&t[0], dec[1], 1, &built[1]) && !built[1]))
				goto out;
			*code = *t[1].prog;
			if (!T_CHECK(!auxsample_image__invalidate(image, CODE_BASE, CODE_SIZE) &&
				     !traced__walk(&t[1], dec[1], 1, &built[1])))
				goto out;
		} else {
			/* Changed at the first read of the image's first decode */
			auxsample_decoder__delete(dec[0]);
			cc = (struct changing_code){ .code = code, .next = t[1].prog,
						     .image = image };
			config = traced__config(code, image, AUXSAMPLE_PT_DECODER_WALKER);
			config.read_memory = read_changing;
			config.context = &cc;
			dec[0] = auxsample_decoder__new(&config, NULL);
			if (!T_CHECK(dec[0] && !traced__walk(&t[1], dec[0], 1, &built[3]) &&
				     cc.changed))
				goto out;
		}
		if (!T_CHECK(!traced__walk(&t[0], dec[2], 1, &built[2])))
			goto out;
		pr_test("%s: the sibling built %llu blocks of the old code\n",
			round ? "changed during a decode" : "changed, then a clone",
			(unsigned long long)built[2]);
		if (!T_CHECK(round || built[2] == 0))
			goto out;
		for (int k = 0; k < 3; k++) {
			auxsample_decoder__delete(dec[k]);
			dec[k] = NULL;
		}
		auxsample_image__put(sibling);
		auxsample_image__put(clone);
		auxsample_image__put(image);
		image = clone = sibling = NULL;
	}
	ret = TEST_OK;
out:
	if (named)
		unlink(name);
	for (int k = 0; k < 3; k++)
		auxsample_decoder__delete(dec[k]);
	auxsample_image__put(sibling);
	auxsample_image__put(clone);
	auxsample_image__put(image);
	for (int k = 0; k < 2; k++)
		traced__exit(&t[k]);
	free(code);
	return ret;
}

/*
 * An image's extents (pt-files.c): a file mapped over part of another
 * takes that part, the rest keeps its keys.  And a block of the family's
 * cache that runs past the extent the image maps (another image maps
 * more of the file) is not this image's: with no code to read, none.
 */
static int test_blocks_extents(void)
{
	const uint64_t key = 1ULL << PTW_FILE_ID_SHIFT;
	struct ptw_extents x = {};
	const struct ptw_extent *e[4];
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.read_memory = read_nothing,
		.pt_decoder = AUXSAMPLE_PT_DECODER_WALKER,
	};
	struct ptw_block b = {
		.start = key, .end = key, .cls = X86_BR_JUMP, .length = 5, .ninsn = 1,
		.target = key + 0x10, .valid = 1,
	};
	struct auxsample_decoder *dec = NULL;
	struct ptw_block_cache *cache = NULL;
	struct ptw_blocks *blocks = NULL;
	int ret = TEST_FAIL;

	if (!T_CHECK(!ptw_extents__set(&x, CODE_BASE, CODE_SIZE, key) &&
		     !ptw_extents__set(&x, CODE_BASE + 1, 0x10, 0) &&
		     !ptw_extents__set(&x, CODE_BASE + 0x8000, 0x10, 2 * key)))
		goto out;
	e[0] = ptw_extents__find(x.e, x.nr, CODE_BASE);
	e[1] = ptw_extents__find(x.e, x.nr, CODE_BASE + 5);
	e[2] = ptw_extents__find(x.e, x.nr, CODE_BASE + 0x20);
	e[3] = ptw_extents__find(x.e, x.nr, CODE_BASE + 0x8008);
	if (!T_CHECK(x.nr == 5 && e[0] && e[0]->end == CODE_BASE + 1 && e[0]->key == key &&
		     e[1] && !e[1]->key && e[2] && e[2]->vaddr == CODE_BASE + 0x11 &&
		     e[2]->key == key + 0x11 && e[3] && e[3]->key == 2 * key &&
		     !ptw_extents__find(x.e, x.nr, CODE_BASE + CODE_SIZE) &&
		     !ptw_extents__find(x.e, x.nr, CODE_BASE - 1)))
		goto out;

	/* The family's block at the file's start, five bytes long: the image maps one. */
	cache = ptw_block_cache__new(PTW_CACHE_SETS);
	blocks = ptw_blocks__new();
	dec = auxsample_decoder__new(&config, NULL);
	if (!T_CHECK(cache && blocks && dec))
		goto out;
	ptw_block_cache__insert(cache, &b, ptw_block_cache__generation(cache));
	if (!T_CHECK(!ptw_blocks__set_files(blocks, cache, x.e, x.nr)))
		goto out;
	if (!T_CHECK(ptw_blocks__fill(blocks, &b, dec, CODE_BASE) == -1))
		goto out;
	/* Mapped whole, it is the image's, moved to where the image maps the file. */
	ptw_extents__set(&x, CODE_BASE, CODE_SIZE, key);
	if (!T_CHECK(!ptw_blocks__set_files(blocks, cache, x.e, x.nr) &&
		     !ptw_blocks__fill(blocks, &b, dec, CODE_BASE) && b.start == CODE_BASE &&
		     b.target == CODE_BASE + 0x10))
		goto out;
	ret = TEST_OK;
out:
	auxsample_decoder__delete(dec);
	ptw_blocks__delete(blocks);
	ptw_block_cache__put(cache);
	ptw_extents__exit(&x);
	return ret;
}

struct cache_thread {
	struct ptw_block_cache	*cache;
	unsigned int		seed;
	unsigned int		torn;
};

/*
 * One of two threads on one cache, each putting in and looking up
 * blocks of the same addresses, one dropping ranges too: every block
 * found is whole (its fields all of one block).
 */
static void *cache_thread__run(void *arg)
{
	struct cache_thread *ct = arg;
	uint32_t seed = ct->seed;

	for (unsigned int i = 0; i < 200000; i++) {
		uint64_t ip;
		struct ptw_block b;

		seed = seed * 1103515245 + 12345;
		ip = CODE_BASE + (seed >> 8) % 65536;
		if (i % 3 == 0) {
			b = (struct ptw_block){ .start = ip, .end = ip + 7, .target = ~ip,
						.ninsn = (uint32_t)ip, .cls = X86_BR_COND,
						.length = 2, .valid = 1 };
			ptw_block_cache__insert(ct->cache, &b,
						ptw_block_cache__generation(ct->cache));
		} else if (ct->seed == 2 && i % 1000 == 1) {
			ptw_block_cache__invalidate(ct->cache, ip, 4096);
		} else if (ptw_block_cache__lookup(ct->cache, ip, &b)) {
			ct->torn += b.end != ip + 7 || b.target != ~ip || b.ninsn != (uint32_t)ip;
		}
	}
	return NULL;
}

/*
 * The shared cache holds PTW_CACHE_SETS * PTW_CACHE_WAYS blocks at most,
 * counting what it evicts for more, and grows to that only as it evicts;
 * blocks built before a range was dropped do not come back.
 */
static int test_blocks_cap(void)
{
	const unsigned int cap = PTW_CACHE_SETS * PTW_CACHE_WAYS, n = 3 * cap;
	struct ptw_block_cache *cache = ptw_block_cache__new(PTW_CACHE_SETS);
	unsigned int evicted = 0, generation;
	struct ptw_block b = {}, found;
	int ret = TEST_FAIL;

	if (!T_CHECK(cache))
		goto out;
	generation = ptw_block_cache__generation(cache);
	/* A small program's blocks, as many as the smallest cache holds: no growth. */
	for (unsigned int i = 0; i < PTW_CACHE_SETS_MIN; i++) {
		b = (struct ptw_block){
			.start = CODE_BASE + 24 * i, .end = CODE_BASE + 24 * i + 1,
			.ninsn = 2, .cls = X86_BR_RET, .length = 1, .valid = 1,
		};
		evicted += ptw_block_cache__insert(cache, &b, generation);
	}
	if (!T_CHECK(ptw_block_cache__capacity(cache) == PTW_CACHE_SETS_MIN * PTW_CACHE_WAYS))
		goto out;
	if (!T_CHECK(ptw_block_cache__count(cache) + evicted == PTW_CACHE_SETS_MIN))
		goto out;
	ptw_block_cache__invalidate(cache, 0, UINT64_MAX);
	generation = ptw_block_cache__generation(cache);
	evicted = 0;
	for (unsigned int i = 0; i < n; i++) {
		b = (struct ptw_block){
			.start = CODE_BASE + 3 * i, .end = CODE_BASE + 3 * i + 1,
			.ninsn = 2, .cls = X86_BR_RET, .length = 1, .valid = 1,
		};
		evicted += ptw_block_cache__insert(cache, &b, generation);
	}
	pr_test("%u blocks put in, %u held, %u evicted, room for %u\n", n,
		ptw_block_cache__count(cache), evicted, ptw_block_cache__capacity(cache));
	if (!T_CHECK(ptw_block_cache__count(cache) <= cap))
		goto out;
	if (!T_CHECK(ptw_block_cache__capacity(cache) == cap))
		goto out;
	if (!T_CHECK(ptw_block_cache__count(cache) + evicted == n))
		goto out;
	/* The newest stays: the oldest of its set went. */
	if (!T_CHECK(ptw_block_cache__lookup(cache, b.start, &found) && found.end == b.end))
		goto out;
	if (!T_CHECK(!ptw_block_cache__lookup(cache, CODE_BASE, &found)))
		goto out;

	ptw_block_cache__invalidate(cache, b.end, 1);		/* its RET */
	if (!T_CHECK(!ptw_block_cache__lookup(cache, b.start, &found)))
		goto out;
	/* Built from the code before: refused. */
	if (!T_CHECK(!ptw_block_cache__insert(cache, &b, generation)))
		goto out;
	if (!T_CHECK(!ptw_block_cache__lookup(cache, b.start, &found)))
		goto out;
	ptw_block_cache__invalidate(cache, 0, UINT64_MAX);
	if (!T_CHECK(ptw_block_cache__count(cache) == 0))
		goto out;

	/*
	 * Two threads at once (under the sanitizers in `make check`), on a
	 * new cache: it grows while they look up and put in blocks.
	 */
	{
		struct ptw_block_cache *fresh = ptw_block_cache__new(PTW_CACHE_SETS);
		struct cache_thread ct[2] = { { fresh, 1, 0 }, { fresh, 2, 0 } };
		pthread_t tid[2];
		int started = 0;
		bool ok;

		if (!T_CHECK(fresh))
			goto out;
		while (started < 2 &&
		       !pthread_create(&tid[started], NULL, cache_thread__run, &ct[started]))
			started++;
		for (int i = 0; i < started; i++)
			pthread_join(tid[i], NULL);
		pr_test("two threads: %u and %u torn blocks, %u held, room for %u\n", ct[0].torn,
			ct[1].torn, ptw_block_cache__count(fresh), ptw_block_cache__capacity(fresh));
		ok = T_CHECK(started == 2) && T_CHECK(!ct[0].torn && !ct[1].torn) &&
		     T_CHECK(ptw_block_cache__count(fresh) <= cap) &&
		     T_CHECK(ptw_block_cache__capacity(fresh) > PTW_CACHE_SETS_MIN * PTW_CACHE_WAYS);
		ptw_block_cache__put(fresh);
		if (!ok)
			goto out;
	}
	ret = TEST_OK;
out:
	ptw_block_cache__put(cache);
	return ret;
}

/*
 * A decoder's own blocks start few and double only where blocks took
 * each other's slots as often as there are slots; the blocks held stay.
 */
static int test_blocks_grow(void)
{
	struct ptw_blocks *blocks = ptw_blocks__new();
	struct ptw_block *b;
	int ret = TEST_FAIL;

	if (!T_CHECK(blocks && blocks->mask + 1 == PTW_BLOCKS_MIN))
		goto out;
	for (uint64_t i = 0; i < 2 * PTW_BLOCKS_MIN; i += 7) {
		b = ptw_blocks__slot(blocks, CODE_BASE + i);
		*b = (struct ptw_block){ .start = CODE_BASE + i, .end = CODE_BASE + i + 1,
					 .cls = X86_BR_RET, .length = 1, .valid = 1 };
	}
	blocks->conflicts = PTW_BLOCKS_MIN - 1;
	ptw_blocks__grow(blocks);
	if (!T_CHECK(blocks->mask + 1 == PTW_BLOCKS_MIN))
		goto out;
	while (blocks->mask + 1 < PTW_BLOCKS) {
		uint64_t nr = blocks->mask + 1;

		blocks->conflicts = nr;
		ptw_blocks__grow(blocks);
		if (!T_CHECK(blocks->mask + 1 == 2 * nr && !blocks->conflicts))
			goto out;
	}
	blocks->conflicts = UINT64_MAX;
	ptw_blocks__grow(blocks);
	if (!T_CHECK(blocks->mask + 1 == PTW_BLOCKS))
		goto out;
	/* Seven bytes apart, none shared a slot: all are found where they now belong. */
	for (uint64_t i = 0; i < 2 * PTW_BLOCKS_MIN; i += 7) {
		b = ptw_blocks__slot(blocks, CODE_BASE + i);
		if (!T_CHECK(b->valid && b->start == CODE_BASE + i && b->end == CODE_BASE + i + 1))
			goto out;
	}
	ret = TEST_OK;
out:
	ptw_blocks__delete(blocks);
	return ret;
}

const struct test tests_pt_blocks[] = {
	{ "walker's blocks are decoded once an image, shared by threads", test_blocks_shared },
	{ "walker's blocks of a range mapped again are the new code's", test_blocks_remapped },
	{ "walker's blocks of a file, shared by a family of images wherever mapped",
	  test_blocks_family },
	{ "walker's blocks of a family's file, only where the image maps them",
	  test_blocks_extents },
	{ "walker's blocks of code changed in one image stay its own, and its clones'",
	  test_blocks_family_changed },
	{ "walker's block cache keeps to its cap, whole under threads", test_blocks_cap },
	{ "walker's own blocks grow with the code in use, keeping theirs", test_blocks_grow },
	{ NULL, NULL },
};
