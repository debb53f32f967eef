// SPDX-License-Identifier: GPL-2.0
/*
 * Decoding in parallel, delivered in order (auxsample.h): worker threads
 * decode the samples of a window of jobs, each with a decoder of its
 * own, and the thread that reads the file delivers them in the order it
 * submitted them.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/zalloc.h>
#include <sys/mman.h>
#include <auxsample/auxsample.h>

#include "addr_location.h"
#include "auxsample.h"
#include "auxtrace.h"
#include "comm.h"
#include "data.h"
#include "debug.h"
#include "dso.h"
#include "env.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "intel-pt.h"
#include "machine.h"
#include "map.h"
#include "maps.h"
#include "mutex.h"
#include "sample.h"
#include "session.h"
#include "thread.h"
#include "time-utils.h"
#include "util.h"

/*
 * One sample in the pool's window: what decoding it needs, copied, and
 * then what it gave.  Its buffers stay for the next sample in its slot.
 */
struct auxsample_job {
	struct perf_sample		sample;		/* aux_sample.data: snippet */
	struct evsel			*evsel;
	struct machine			*machine;
	struct thread			*thread;	/* a reference */
	struct auxsample_image		*image;		/* a reference */
	unsigned int			depth;
	bool				decoded;	/* under pool->lock */
	void				*snippet;
	size_t				snippet_cap;
	union perf_event		*event;		/* a copy, if submitted with it */
	size_t				event_cap;
	bool				has_event;
	/* the results */
	struct auxsample_result		res;
	struct auxsample_stats		stats;
	struct auxsample_branch		*branches;
	size_t				branches_cap;
	u64				*callchain;
	size_t				callchain_cap;
	struct auxsample_decode_error	*errors;
	size_t				errors_cap;
};

/*
 * A decoding thread: its decoder is for one process image at a time, a
 * clone of the shared one (auxsample_image__clone(): threads sharing an
 * image contend for its sections).
 */
struct auxsample_worker {
	struct auxsample_pool		*pool;
	pthread_t			tid;
	struct auxsample_decoder	*dec;
	struct auxsample_image		*shared;	/* a reference */
	struct auxsample_image		*image;		/* the clone of shared */
	struct auxsample_mem		mem;		/* the job at hand's */
};

struct auxsample_pool {
	struct mutex			lock;		/* next, tail, stop, decoded */
	struct cond			work;		/* a job queued, or stop */
	struct cond			done;		/* a job decoded */
	struct mutex			perf_lock;	/* perf's machine, maps, dsos */
	struct auxsample_config		config;
	auxsample_pool_deliver_fn	deliver;
	void				*arg;
	struct auxsample_job		*jobs;
	unsigned int			window;
	/* job sequence numbers, slot = number % window */
	u64				head;		/* the next to deliver */
	u64				next;		/* the next to decode */
	u64				tail;		/* the next to queue */
	bool				stop;
	unsigned int			nr_workers;
	struct auxsample_worker		*workers;
};

/* @size bytes of @src into *@buf, grown as needed. */
static int auxsample_job__copy(void **buf, size_t *cap, const void *src, size_t size)
{
	if (size > *cap) {
		void *p = realloc(*buf, size);

		if (!p)
			return -ENOMEM;
		*buf = p;
		*cap = size;
	}
	if (size)
		memcpy(*buf, src, size);
	return 0;
}

/* The decoder's results into the job, which outlives the next decode. */
static int auxsample_job__keep(struct auxsample_job *job, const struct auxsample_decoder *dec,
			       int nr)
{
	struct auxsample_result res;
	int err;

	auxsample_result__init(&res, dec, nr, &job->stats);
	err = auxsample_job__copy((void **)&job->branches, &job->branches_cap, res.branches,
				  res.nr_branches * sizeof(*res.branches));
	if (!err)
		err = auxsample_job__copy((void **)&job->callchain, &job->callchain_cap,
					  res.callchain, res.depth * sizeof(*res.callchain));
	if (!err)
		err = auxsample_job__copy((void **)&job->errors, &job->errors_cap, res.errors,
					  res.nr_errors * sizeof(*res.errors));
	if (err)
		return err;
	res.branches = job->branches;
	res.callchain = job->callchain;
	res.errors = job->errors;
	job->res = res;
	return 0;
}

static void auxsample_job__fail(struct auxsample_job *job, int error)
{
	memset(&job->res, 0, sizeof(job->res));
	memset(&job->stats, 0, sizeof(job->stats));
	job->res.nr = error;
	job->res.stats = &job->stats;
}

/* Code outside the image, from perf's maps: one thread at a time. */
static int auxsample_worker__read_memory(u8 *buf, size_t size, u64 addr, void *context)
{
	struct auxsample_worker *wk = context;
	int len;

	mutex_lock(&wk->pool->perf_lock);
	len = auxsample_mem__read(buf, size, addr, &wk->mem);
	mutex_unlock(&wk->pool->perf_lock);
	return len;
}

static void auxsample_worker__exit(struct auxsample_worker *wk)
{
	auxsample_decoder__delete(wk->dec);
	wk->dec = NULL;
	auxsample_image__put(wk->image);
	wk->image = NULL;
	auxsample_image__put(wk->shared);
	wk->shared = NULL;
}

/* The worker's decoder, or NULL and why in *@err. */
static struct auxsample_decoder *auxsample_worker__decoder(struct auxsample_worker *wk,
							    struct auxsample_image *shared,
							    int *err)
{
	struct auxsample_config cfg = wk->pool->config;

	*err = -AUXSAMPLE_ERR_NOMEM;
	if (wk->shared != shared) {
		auxsample_worker__exit(wk);
		wk->image = auxsample_image__clone(shared);
		if (!wk->image)
			return NULL;
		wk->shared = auxsample_image__get(shared);
	}
	if (wk->dec)
		return wk->dec;
	cfg.image = wk->image;
	cfg.read_memory = auxsample_worker__read_memory;
	cfg.context = wk;
	wk->dec = auxsample_decoder__new(&cfg, err);
	return wk->dec;
}

static void auxsample_worker__decode(struct auxsample_worker *wk, struct auxsample_job *job)
{
	struct auxsample_decoder *dec;
	u64 start, took;
	int nr;

	dec = auxsample_worker__decoder(wk, job->image, &nr);
	if (!dec) {
		auxsample_job__fail(job, nr);
		return;
	}
	wk->mem.machine = job->machine;
	wk->mem.thread = job->thread;
	auxsample_decoder__set_thread(dec, job->sample.tid);
	auxsample_decoder__set_sample_ip(dec, job->sample.ip);
	start = rdclock();
	nr = auxsample_decoder__decode(dec, job->sample.aux_sample.data,
				       job->sample.aux_sample.size, job->depth);
	/* The decode's time, not the copy of its results: as inline. */
	took = rdclock() - start;
	if (auxsample_job__keep(job, dec, nr))
		auxsample_job__fail(job, -AUXSAMPLE_ERR_NOMEM);
	else
		job->res.decode_ns = took;
	/* A decoder that failed starts afresh: nothing of it for the next job. */
	if (nr < 0 && nr != -AUXSAMPLE_ERR_NOSYNC) {
		auxsample_decoder__delete(wk->dec);
		wk->dec = NULL;
	}
}

static void *auxsample_worker__run(void *arg)
{
	struct auxsample_worker *wk = arg;
	struct auxsample_pool *pool = wk->pool;
	struct auxsample_job *job;

	mutex_lock(&pool->lock);
	for (;;) {
		while (pool->next == pool->tail && !pool->stop)
			cond_wait(&pool->work, &pool->lock);
		if (pool->stop)
			break;
		job = &pool->jobs[pool->next++ % pool->window];
		mutex_unlock(&pool->lock);
		auxsample_worker__decode(wk, job);
		mutex_lock(&pool->lock);
		job->decoded = true;
		cond_signal(&pool->done);
	}
	mutex_unlock(&pool->lock);
	auxsample_worker__exit(wk);
	return NULL;
}

/* The job's references: on the submitting thread, under the perf lock. */
static void auxsample_job__release(struct auxsample_job *job)
{
	thread__zput(job->thread);
	auxsample_image__put(job->image);
	job->image = NULL;
}

static void auxsample_job__exit(struct auxsample_job *job)
{
	auxsample_job__release(job);
	zfree(&job->snippet);
	zfree(&job->event);
	zfree(&job->branches);
	zfree(&job->callchain);
	zfree(&job->errors);
}

static void auxsample_pool__stop(struct auxsample_pool *pool, unsigned int nr_started)
{
	mutex_lock(&pool->lock);
	pool->stop = true;
	cond_broadcast(&pool->work);
	mutex_unlock(&pool->lock);
	for (unsigned int i = 0; i < nr_started; i++)
		pthread_join(pool->workers[i].tid, NULL);
}

static int auxsample_pool__start(struct auxsample_pool *pool)
{
	char sbuf[STRERR_BUFSIZE];
	unsigned int i;
	int err;

	for (i = 0; i < pool->nr_workers; i++) {
		pool->workers[i].pool = pool;
		err = pthread_create(&pool->workers[i].tid, NULL, auxsample_worker__run,
				     &pool->workers[i]);
		if (err) {
			pr_err("perf auxsample: cannot start a decoding thread: %s\n",
			       str_error_r(err, sbuf, sizeof(sbuf)));
			auxsample_pool__stop(pool, i);
			return -err;
		}
	}
	return 0;
}

struct auxsample_pool *auxsample_pool__new(const struct auxsample_config *config,
					   unsigned int nr_workers, unsigned int window,
					   auxsample_pool_deliver_fn deliver, void *arg)
{
	struct auxsample_pool *pool = zalloc(sizeof(*pool));

	if (!pool)
		return NULL;
	pool->config = *config;
	pool->deliver = deliver;
	pool->arg = arg;
	pool->window = window;
	pool->nr_workers = nr_workers;
	pool->jobs = calloc(window, sizeof(*pool->jobs));
	pool->workers = calloc(nr_workers, sizeof(*pool->workers));
	if (!pool->jobs || !pool->workers)
		goto out_free;
	mutex_init(&pool->lock);
	mutex_init(&pool->perf_lock);
	cond_init(&pool->work);
	cond_init(&pool->done);
	if (auxsample_pool__start(pool))
		goto out_destroy;
	return pool;

out_destroy:
	cond_destroy(&pool->done);
	cond_destroy(&pool->work);
	mutex_destroy(&pool->perf_lock);
	mutex_destroy(&pool->lock);
out_free:
	free(pool->workers);
	free(pool->jobs);
	free(pool);
	return NULL;
}

void auxsample_pool__delete(struct auxsample_pool *pool)
{
	if (!pool)
		return;
	auxsample_pool__stop(pool, pool->nr_workers);
	for (unsigned int i = 0; i < pool->window; i++)
		auxsample_job__exit(&pool->jobs[i]);
	cond_destroy(&pool->done);
	cond_destroy(&pool->work);
	mutex_destroy(&pool->perf_lock);
	mutex_destroy(&pool->lock);
	free(pool->workers);
	free(pool->jobs);
	free(pool);
}

void auxsample_pool__lock(struct auxsample_pool *pool)
{
	if (pool)
		mutex_lock(&pool->perf_lock);
}

void auxsample_pool__unlock(struct auxsample_pool *pool)
{
	if (pool)
		mutex_unlock(&pool->perf_lock);
}

static int auxsample_pool__deliver_job(struct auxsample_pool *pool, struct auxsample_job *job)
{
	int err;

	mutex_lock(&pool->perf_lock);
	err = pool->deliver(pool->arg, job->thread, &job->sample, job->evsel, &job->res,
			    job->has_event ? job->event : NULL);
	auxsample_job__release(job);
	mutex_unlock(&pool->perf_lock);
	return err;
}

/*
 * Deliver the jobs before number @end, waiting for them to be decoded,
 * and then those after them that are decoded already.
 */
static int auxsample_pool__deliver(struct auxsample_pool *pool, u64 end)
{
	struct auxsample_job *job;
	bool decoded;
	int err;

	while (pool->head != pool->tail) {
		job = &pool->jobs[pool->head % pool->window];
		mutex_lock(&pool->lock);
		while (!job->decoded && pool->head < end)
			cond_wait(&pool->done, &pool->lock);
		decoded = job->decoded;
		mutex_unlock(&pool->lock);
		if (!decoded)
			break;
		pool->head++;
		err = auxsample_pool__deliver_job(pool, job);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The sample's snippet, where the job decodes it: in the copy of @event
 * it was parsed from (perf report's, with the window's copies of the
 * events the larger part of its memory), else a copy of its own.
 */
static int auxsample_job__snippet(struct auxsample_job *job, union perf_event *event,
				  struct perf_sample *sample)
{
	uintptr_t data = (uintptr_t)sample->aux_sample.data, start = (uintptr_t)event;
	u64 size = sample->aux_sample.size;
	int err;

	if (event && data >= start && size <= event->header.size &&
	    data - start <= event->header.size - size) {
		job->sample.aux_sample.data = (char *)job->event + (data - start);
		return 0;
	}
	err = auxsample_job__copy(&job->snippet, &job->snippet_cap, sample->aux_sample.data, size);
	job->sample.aux_sample.data = job->snippet;
	return err;
}

/* The sample, with its snippet, and what decoding it needs, into @job. */
static int auxsample_job__init(struct auxsample_job *job, struct machine *machine,
			       struct thread *thread, struct auxsample_image *image,
			       union perf_event *event, struct perf_sample *sample,
			       struct evsel *evsel, unsigned int depth)
{
	int err = 0;

	if (event)
		err = auxsample_job__copy((void **)&job->event, &job->event_cap, event,
					  event->header.size);
	if (err)
		return err;
	job->has_event = !!event;
	job->sample = *sample;
	err = auxsample_job__snippet(job, event, sample);
	if (err)
		return err;
	/* Only the event's copy, which goes, holds these. */
	job->sample.raw_data = NULL;
	job->sample.raw_size = 0;
	job->sample.callchain = NULL;
	job->sample.branch_stack = NULL;
	job->sample.branch_stack_cntr = NULL;
	memset(&job->sample.user_regs, 0, sizeof(job->sample.user_regs));
	memset(&job->sample.intr_regs, 0, sizeof(job->sample.intr_regs));
	memset(&job->sample.user_stack, 0, sizeof(job->sample.user_stack));
	memset(&job->sample.read, 0, sizeof(job->sample.read));
	job->evsel = evsel;
	job->machine = machine;
	job->thread = thread__get(thread);
	job->image = auxsample_image__get(image);
	job->depth = depth;
	return 0;
}

int auxsample_pool__submit(struct auxsample_pool *pool, struct machine *machine,
			   struct thread *thread, struct auxsample_image *image,
			   union perf_event *event, struct perf_sample *sample,
			   struct evsel *evsel, unsigned int depth)
{
	struct auxsample_job *job;
	int err;

	if (pool->tail - pool->head == pool->window) {
		err = auxsample_pool__deliver(pool, pool->head + 1);
		if (err)
			return err;
	}
	job = &pool->jobs[pool->tail % pool->window];
	err = auxsample_job__init(job, machine, thread, image, event, sample, evsel, depth);
	if (err)
		return err;
	mutex_lock(&pool->lock);
	job->decoded = false;
	pool->tail++;
	cond_signal(&pool->work);
	mutex_unlock(&pool->lock);
	return auxsample_pool__deliver(pool, pool->head);
}

int auxsample_pool__flush(struct auxsample_pool *pool)
{
	return pool ? auxsample_pool__deliver(pool, pool->tail) : 0;
}

int auxsample_pool__barrier(struct auxsample_pool *pool, pid_t pid)
{
	u64 last = 0;

	if (!pool)
		return 0;
	for (u64 n = pool->head; n != pool->tail; n++) {
		/* Not yet known (-1): whichever process it turns out to be in. */
		pid_t job_pid = thread__pid(pool->jobs[n % pool->window].thread);

		if (pid == -1 || job_pid == -1 || job_pid == pid)
			last = n + 1;
	}
	return last ? auxsample_pool__deliver(pool, last) : 0;
}
