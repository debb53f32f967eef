/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_BACKEND_H
#define __AUXSAMPLE_BACKEND_H

/*
 * What a decoder backend (pt.c: Intel PT on libipt, etm.c: CoreSight ETM
 * on OpenCSD) sees of the library: its ops table, which the core calls,
 * and the core's functions, which it calls with what it decoded.  The
 * decoder object is the core's (internal.h); a backend keeps its own
 * state behind the pointer its ->init() returns.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <auxsample/auxsample.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#endif
#define __maybe_unused		__attribute__((unused))
#ifndef noinline
#define noinline		__attribute__((noinline))
#endif
#ifndef __aligned
#define __aligned(x)		__attribute__((__aligned__(x)))
#endif
#ifndef likely
#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)
#endif

struct auxsample_image_file;

/*
 * One trace format.  ->decode() (and the optional stream functions) find
 * the taken branches and hand them to the core in trace order; the core
 * keeps the ring of the last ones, the call stack, the statistics and the
 * errors, and resets them before each call.  Errors are -AUXSAMPLE_ERR_*.
 */
struct auxsample_backend {
	const char			*name;
	enum auxsample_trace_type	type;
	/* Check @config (a copy, constant while @dec lives): state for @dec. */
	int	(*init)(struct auxsample_decoder *dec, const struct auxsample_config *config,
			void **priv);
	void	(*exit)(void *priv);
	/* Decode the snippet of @len bytes at @buf. */
	int	(*decode)(void *priv, const uint8_t *buf, size_t len);
	/*
	 * Optional (NULL: -AUXSAMPLE_ERR_UNSUPPORTED), see
	 * auxsample_decoder__stream_begin(): __stream_to() decodes on to @end;
	 * ->stream_end() forgets the stream, if any, and may always be called.
	 */
	int	(*stream_begin)(void *priv, const uint8_t *buf, size_t len);
	int	(*stream_to)(void *priv, uint64_t end);
	void	(*stream_end)(void *priv);
	/*
	 * Optional: the backend's cache of the code of an image's files,
	 * shared by all its decoders of the image (image.c).  ->image_add()
	 * is called under the image's lock, for the files in their order.
	 */
	void	*(*image_new)(void);
	/*
	 * Optional (else ->image_new()): a cache of no files in @cache's
	 * family (auxsample_image__new_sibling()), which shares what the
	 * same files hold in every image of it; under @cache's image's lock.
	 */
	void	*(*image_sibling)(void *cache);
	void	(*image_delete)(void *cache);
	int	(*image_add)(void *cache, const struct auxsample_image_file *file);
	/*
	 * Optional: @dst, a clone's cache of the same files as @src, shares
	 * what does not contend (the walker's blocks); under @src's lock.
	 */
	void	(*image_clone)(void *dst, void *src);
	/*
	 * Optional (else ->image_add() of each file kept): @dst, a new
	 * cache in @src's family, of @src's files whose @keep is true, in
	 * their order, @nr the image's files; not checked again.  0, or
	 * -AUXSAMPLE_ERR_NOMEM; -AUXSAMPLE_ERR_INVALID where @src does
	 * not hold @nr files, which are then added to @dst one by one.
	 * Under @src's image's lock.
	 */
	int	(*image_copy)(void *dst, void *src, const bool *keep, unsigned int nr);
	/* Optional: the code at [@vaddr, @vaddr + @size) changed; under the lock. */
	void	(*image_invalidate)(void *cache, uint64_t vaddr, uint64_t size);
	/*
	 * Optional: the decoder's config->image is another image now, or
	 * NULL (auxsample_decoder__set_image()).  What points into the old
	 * one goes before the old one may; the next decode uses nothing of
	 * it, whatever the new image's generation.
	 */
	void	(*image_moved)(void *priv);
};

extern const struct auxsample_backend auxsample_pt_backend;	/* pt.c */
extern const struct auxsample_backend auxsample_etm_backend;	/* etm.c */
extern const struct auxsample_backend auxsample_pt_walk_backend;	/* pt-walk.c */

/* The backends built in (backends.c), and the one for a trace type. */
extern const struct auxsample_backend *const auxsample_backends[];
extern const unsigned int auxsample_nr_backends;
const struct auxsample_backend *auxsample_backend__find(enum auxsample_trace_type type);
/* The backend for @config: __find()'s, or the Intel PT walker if asked for. */
const struct auxsample_backend *auxsample_backend__select(const struct auxsample_config *config);

/*
 * A file of an image, as auxsample_image__add_file() or __add_file_id()
 * got it; shared by the image's copies, which do not change it.  A
 * backend's cache may point to it: it outlives the cache.
 */
struct auxsample_image_file {
	int		refcnt;
	char		*filename;
	char		*identity;	/* NULL: none, not shared with the family */
	uint64_t	offset;
	uint64_t	size;
	uint64_t	vaddr;
};

/*
 * @backend's cache of @image (its ->image_new()), locked against files
 * being added until auxsample_image__unlock(); *@generation says which
 * files it holds.
 */
void *auxsample_image__lock_cache(struct auxsample_image *image,
				  const struct auxsample_backend *backend,
				  unsigned int *generation);
void auxsample_image__unlock(struct auxsample_image *image);
unsigned int auxsample_image__generation(struct auxsample_image *image);

/* What the backend decoded, in trace order (lbr.c). */
void auxsample__add_branch(struct auxsample_decoder *dec, uint64_t from,
			   uint64_t to, unsigned int kind, unsigned int flags);
void auxsample__gap(struct auxsample_decoder *dec, uint64_t from, uint64_t to);
int auxsample__call(struct auxsample_decoder *dec, uint64_t ret_addr);
void auxsample__ret(struct auxsample_decoder *dec, uint64_t to);
/* The return address of the innermost call seen, 0 if none. */
uint64_t auxsample__stack_top(const struct auxsample_decoder *dec);
void auxsample__error(struct auxsample_decoder *dec, uint64_t offset, int error,
		      int lib_error);
void auxsample__insns(struct auxsample_decoder *dec, uint64_t n);
void auxsample__flow(struct auxsample_decoder *dec, struct auxsample_flow *flow);
/* The source (ETM trace ID) whose elements the next flow records are. */
void auxsample__set_source(struct auxsample_decoder *dec, uint8_t trace_id);
struct auxsample_stats *auxsample__stats(struct auxsample_decoder *dec);
/* The ring holds as many branches as asked for. */
bool auxsample__enough(const struct auxsample_decoder *dec);
/*
 * The trace ended after @from (@to 0) or began at @to (@from 0): where
 * the late-sample rule (late.c) may start a sample's branches.
 */
void auxsample__boundary(struct auxsample_decoder *dec, uint64_t from, uint64_t to);
/*
 * Where the flow was lost, the trace still shows a branch to @to: whether
 * the late-sample rule started the sample's branches after those waiting
 * (late.c).  Worth looking for only while some wait.
 */
bool auxsample__lost_branch(struct auxsample_decoder *dec, uint64_t to);
bool auxsample__late_waiting(const struct auxsample_decoder *dec);
/*
 * Skimming (skim.c): the branches up to a point walked with the ring
 * held, for the call stack and the counts only.  auxsample__skim() holds
 * it (the depth, 0: no skim), auxsample__unskim() gives it back at the
 * point (false: not yet, ask again after the next branch),
 * auxsample__skimmed() at the end says whether the result is a whole
 * decode's: if not, decode again without.
 */
unsigned int auxsample__skim(struct auxsample_decoder *dec);
bool auxsample__unskim(struct auxsample_decoder *dec);
bool auxsample__skimmed(struct auxsample_decoder *dec);
/*
 * @n taken branches skimmed, the last from @from to @to: what
 * auxsample__add_branch() of each would keep (a walk's batch).
 */
void auxsample__skim_taken(struct auxsample_decoder *dec, uint64_t n, uint64_t from,
			   uint64_t to);
/* Forget what was decoded, to decode the snippet again from elsewhere. */
void auxsample__restart(struct auxsample_decoder *dec);
/*
 * A decoder's state saved (checkpoint.c), to go back to: a stretch of a
 * stream walked again.  A checkpoint, empty: NULL without memory.
 */
struct auxsample_checkpoint;
struct auxsample_checkpoint *auxsample_checkpoint__new(void);
void auxsample_checkpoint__delete(struct auxsample_checkpoint *cp);
/*
 * @dec's state into @cp: 0, -AUXSAMPLE_ERR_NOMEM, or
 * -AUXSAMPLE_ERR_UNSUPPORTED while the late-sample rule holds branches
 * back (not in a stream).
 */
int auxsample__save(struct auxsample_decoder *dec, struct auxsample_checkpoint *cp);
/* @dec back to the state saved in @cp by the last auxsample__save(). */
void auxsample__restore(struct auxsample_decoder *dec, const struct auxsample_checkpoint *cp);
/*
 * A stream's stretch begins (auxsample_decoder__stream_to()): no errors,
 * no timing, and @stats; the ring and the call stack go on.
 */
void auxsample__stretch(struct auxsample_decoder *dec, const struct auxsample_stats *stats);
/*
 * A stream's bytes [@from, @to) into memory, and none before @from needed
 * any more (auxsample_decoder__set_stream_fetch()): 0 or
 * -AUXSAMPLE_ERR_FETCH.
 */
int auxsample__fetch(struct auxsample_decoder *dec, uint64_t from, uint64_t to);
/* The thread to decode for (auxsample_decoder__set_thread()), -1: any. */
int64_t auxsample__thread(const struct auxsample_decoder *dec);
int auxsample__read_memory(struct auxsample_decoder *dec, uint8_t *buf, size_t size,
			   uint64_t addr);

/*
 * Cycles of the branches, from the times of packets (cycles.c): a
 * backend whose trace times packets turns it on at ->init().
 */
void auxsample_timing__enable(struct auxsample_decoder *dec);
void auxsample_timing__break(struct auxsample_decoder *dec);
void auxsample_timing__packet(struct auxsample_decoder *dec, uint64_t time, uint32_t stretch,
			      bool exact);
void auxsample_timing__stop(struct auxsample_decoder *dec);
void auxsample_timing__start(struct auxsample_decoder *dec);

#endif /* __AUXSAMPLE_BACKEND_H */
