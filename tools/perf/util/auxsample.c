// SPDX-License-Identifier: GPL-2.0
/*
 * Glue between perf and libauxsample: the decoder reads the traced code
 * through the sampled thread's maps, as perf's own Intel PT decoder does.
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
#include "auxsample-etm.h"
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
#include "util.h"

const char *auxsample__strerror(int err, char *buf, size_t size)
{
	if (auxsample__error_index(err))
		return auxsample_strerror(err);
	return str_error_r(err < 0 ? -err : err, buf, size);
}

unsigned int auxsample__error_index(int err)
{
	unsigned int e = err < 0 ? -err : err;

	if (e <= AUXSAMPLE_ERR_BASE || e >= AUXSAMPLE_ERR_END)
		return 0;
	return e - AUXSAMPLE_ERR_BASE;
}

int auxsample_mem__read(u8 *buf, size_t size, u64 addr, void *context)
{
	struct auxsample_mem *mem = context;
	u8 cpumode = machine__kernel_ip(mem->machine, addr) ?
		     PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
	struct addr_location al;
	struct dso *dso;
	ssize_t len = -1;

	addr_location__init(&al);
	if (!thread__find_map(mem->thread, cpumode, addr, &al))
		goto out;
	dso = map__dso(al.map);
	if (!dso)
		goto out;
	/* A dso that failed to open once is not tried for every block. */
	if (dso__data(dso)->status == DSO_DATA_STATUS_ERROR &&
	    dso__data_status_seen(dso, DSO_DATA_STATUS_SEEN_ITRACE))
		goto out;
	map__load(al.map);
	/* Not past the mapping: the file goes on with what is not mapped here. */
	size = min_t(u64, size, map__end(al.map) - addr);
	len = dso__data_read_offset(dso, mem->machine, map__map_ip(al.map, addr), buf, size);
out:
	addr_location__exit(&al);
	return len > 0 ? (int)len : -1;
}

const char *auxsample_thread__comm_str_at(struct thread *thread, u64 time)
{
	struct comm *comm, *at = NULL;
	const char *str;

	down_read(thread__comm_lock(thread));
	/* Newest first; before the first comm's start, the first comm. */
	list_for_each_entry(comm, thread__comm_list(thread), list) {
		at = comm;
		if (comm->start <= time)
			break;
	}
	str = at ? comm__str(at) : NULL;
	up_read(thread__comm_lock(thread));
	return str;
}

/* A map of a readable file: a section of the image. */
static int auxsample_proc__add_map(struct map *map, void *data)
{
	struct auxsample_image *image = data;
	struct dso *dso = map__dso(map);
	const char *name = dso ? dso__long_name(dso) : NULL;

	if (!name || name[0] != '/' || !(map__prot(map) & PROT_EXEC) || access(name, R_OK))
		return 0;
	/* A file that will not load leaves its code to the callback. */
	auxsample_image__add_file(image, name, map__pgoff(map), map__size(map),
				  map__start(map));
	return 0;
}

static void auxsample_proc_entry__exit(struct auxsample_proc_entry *e)
{
	auxsample_decoder__delete(e->dec);
	auxsample_image__put(e->image);
	memset(e, 0, sizeof(*e));
}

/*
 * The entry of the process with @nr_maps maps and, unless @any, decoding
 * @config; else NULL.  Entries of the process with other maps are gone.
 */
static struct auxsample_proc_entry *auxsample_proc__find(struct auxsample_proc *proc,
							 pid_t pid, unsigned int nr_maps,
							 const struct auxsample_config *config,
							 bool any)
{
	struct auxsample_proc_entry *found = NULL;

	for (int i = 0; i < AUXSAMPLE_PROC_CACHE; i++) {
		struct auxsample_proc_entry *e = &proc->entries[i];

		if (!e->image || e->pid != pid)
			continue;
		if (e->nr_maps != nr_maps)
			auxsample_proc_entry__exit(e);
		else if (!found && (any || e->config == config))
			found = e;
	}
	return found;
}

/* A free entry, or the least recently used one, freed. */
static struct auxsample_proc_entry *auxsample_proc__new_entry(struct auxsample_proc *proc)
{
	struct auxsample_proc_entry *lru = &proc->entries[0];

	for (int i = 0; i < AUXSAMPLE_PROC_CACHE; i++) {
		struct auxsample_proc_entry *e = &proc->entries[i];

		if (!e->image)
			return e;
		if (e->used < lru->used)
			lru = e;
	}
	auxsample_proc_entry__exit(lru);
	return lru;
}

static unsigned int auxsample_thread__nr_maps(struct thread *thread)
{
	struct maps *maps = thread__maps(thread);

	return maps ? maps__nr_maps(maps) : 0;
}

/* The process's image, made again when its maps change. */
struct auxsample_image *auxsample_proc__image(struct auxsample_proc *proc,
					      struct machine *machine, struct thread *thread)
{
	unsigned int nr_maps = auxsample_thread__nr_maps(thread);
	struct maps *maps = thread__maps(thread);
	pid_t pid = thread__pid(thread);
	struct auxsample_proc_entry *e;

	proc->mem.machine = machine;
	proc->mem.thread = thread;
	e = auxsample_proc__find(proc, pid, nr_maps, NULL, true);
	if (e) {
		e->used = ++proc->clock;
		return e->image;
	}
	e = auxsample_proc__new_entry(proc);
	e->image = auxsample_image__new();
	if (!e->image)
		return NULL;
	if (maps)
		maps__for_each_map(maps, auxsample_proc__add_map, e->image);
	e->pid = pid;
	e->nr_maps = nr_maps;
	e->used = ++proc->clock;
	return e->image;
}

struct auxsample_decoder *auxsample_proc__decoder(struct auxsample_proc *proc,
						   const struct auxsample_config *config,
						   struct machine *machine, struct thread *thread)
{
	struct auxsample_image *image = auxsample_proc__image(proc, machine, thread);
	unsigned int nr_maps = auxsample_thread__nr_maps(thread);
	pid_t pid = thread__pid(thread);
	struct auxsample_config cfg = *config;
	struct auxsample_proc_entry *e;

	if (!image)
		return NULL;
	e = auxsample_proc__find(proc, pid, nr_maps, config, false);
	if (!e)
		e = auxsample_proc__find(proc, pid, nr_maps, NULL, false);
	if (!e) {
		/* Another configuration (ETM: another CPU's source): its own entry. */
		auxsample_image__get(image);
		e = auxsample_proc__new_entry(proc);
		e->image = image;
		e->pid = pid;
		e->nr_maps = nr_maps;
	}
	e->used = ++proc->clock;
	if (e->dec)
		return e->dec;
	e->config = config;
	cfg.image = e->image;
	cfg.read_memory = auxsample_mem__read;
	cfg.context = &proc->mem;
	e->dec = auxsample_decoder__new(&cfg);
	return e->dec;
}

void auxsample_proc__exit(struct auxsample_proc *proc)
{
	for (int i = 0; i < AUXSAMPLE_PROC_CACHE; i++) {
		if (proc->entries[i].image)
			auxsample_proc_entry__exit(&proc->entries[i]);
	}
}

int auxsample_session__check_size(struct perf_session *session, const char *who)
{
	struct perf_header *header = &session->header;
	u64 end = header->data_offset + header->data_size;
	unsigned long size = perf_data__size(session->data);

	if (perf_data__is_pipe(session->data) || perf_data__is_dir(session->data) ||
	    !header->data_size || size >= end)
		return 0;
	pr_err("%s%s is truncated: %lu bytes where its header says %" PRIu64 "; copy or record it again\n",
	       who, session->data->path, size, end);
	return -EIO;
}

/*
 * Whether the Intel PT event of @session traces cycles (CYC packets):
 * then each branch of the virtual LBR gets its cycles, as LBR's do.
 */
static bool auxsample_config__pt_cyc(struct perf_session *session,
				     const struct perf_record_auxtrace_info *info, size_t nr)
{
	struct evsel *evsel;

	if (nr <= INTEL_PT_CYC_BIT || !session->evlist || !info->priv[INTEL_PT_CYC_BIT])
		return false;
	evlist__for_each_entry(session->evlist, evsel) {
		if (evsel->core.attr.type == info->priv[INTEL_PT_PMU_TYPE] &&
		    (evsel->core.attr.config & info->priv[INTEL_PT_CYC_BIT]))
			return true;
	}
	return false;
}

/*
 * Where the kernel starts, as perf's own Intel PT decoder takes it, for
 * the late-sample rule: a sample's branches end at the sample, not in
 * perf's interrupt path (auxsample_decoder__set_sample_ip()).
 */
static void auxsample_config__kernel_start(struct auxsample_config *config,
					   struct perf_session *session)
{
	config->kernel_start = machine__kernel_start(&session->machines.host);
}

int auxsample_config__from_auxtrace_info(struct auxsample_config *config,
					 struct perf_session *session,
					 union perf_event *event, u64 *pmu_type)
{
	struct perf_record_auxtrace_info *info = &event->auxtrace_info;
	size_t nr = (info->header.size - sizeof(*info)) / sizeof(u64);
	const char *cpuid = perf_env__cpuid(&session->header.env);
	unsigned int family, model, stepping;

	int err;

	if (info->type == PERF_AUXTRACE_CS_ETM) {
		err = auxsample_config__from_cs_etm(config, event, pmu_type);
		if (!err)
			auxsample_config__kernel_start(config, session);
		return err;
	}
	if (info->type != PERF_AUXTRACE_INTEL_PT)
		return -EOPNOTSUPP;
	if (nr <= INTEL_PT_PMU_TYPE) {
		pr_err("AUXTRACE_INFO record is too short (%zu fields): the perf.data file is damaged\n",
		       nr);
		return -EINVAL;
	}

	memset(config, 0, sizeof(*config));
	config->size = sizeof(*config);
	config->type = AUXSAMPLE_TRACE_INTEL_PT;
	config->read_memory = auxsample_mem__read;
	/* The CPU only selects errata workarounds: none when unknown. */
	if (cpuid && sscanf(cpuid, "GenuineIntel,%u,%u,%u", &family, &model, &stepping) == 3) {
		config->pt.family = family;
		config->pt.model = model;
		config->pt.stepping = stepping;
	}
	if (nr > INTEL_PT_MAX_NONTURBO_RATIO) {
		config->pt.cpuid_0x15_ebx = info->priv[INTEL_PT_TSC_CTC_N];
		config->pt.cpuid_0x15_eax = info->priv[INTEL_PT_TSC_CTC_D];
		config->pt.nom_freq = info->priv[INTEL_PT_MAX_NONTURBO_RATIO];
	}
	config->pt.cyc = auxsample_config__pt_cyc(session, info, nr);
	*pmu_type = info->priv[INTEL_PT_PMU_TYPE];
	auxsample_config__kernel_start(config, session);
	return 0;
}

void auxsample_config__exit(struct auxsample_config *config)
{
	if (config->type == AUXSAMPLE_TRACE_ETM)
		zfree((void **)&config->etm.sources);
	config->etm.nr_sources = 0;
}

void auxsample_result__init(struct auxsample_result *res, const struct auxsample_decoder *dec,
			    int nr, struct auxsample_stats *stats)
{
	res->nr = nr;
	res->nr_branches = auxsample_decoder__branches(dec, &res->branches);
	res->depth = auxsample_decoder__callchain(dec, &res->callchain);
	res->nr_errors = auxsample_decoder__errors(dec, &res->errors);
	auxsample_decoder__stats(dec, stats, sizeof(*stats));
	res->stats = stats;
}

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

static struct auxsample_decoder *auxsample_worker__decoder(struct auxsample_worker *wk,
							    struct auxsample_image *shared)
{
	struct auxsample_config cfg = wk->pool->config;

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
	wk->dec = auxsample_decoder__new(&cfg);
	return wk->dec;
}

static void auxsample_worker__decode(struct auxsample_worker *wk, struct auxsample_job *job)
{
	struct auxsample_decoder *dec = auxsample_worker__decoder(wk, job->image);
	int nr;

	if (!dec) {
		auxsample_job__fail(job, -AUXSAMPLE_ERR_NOMEM);
		return;
	}
	wk->mem.machine = job->machine;
	wk->mem.thread = job->thread;
	auxsample_decoder__set_thread(dec, job->sample.tid);
	auxsample_decoder__set_sample_ip(dec, job->sample.ip);
	nr = auxsample_decoder__decode(dec, job->snippet, job->sample.aux_sample.size,
				       job->depth);
	if (auxsample_job__keep(job, dec, nr))
		auxsample_job__fail(job, -AUXSAMPLE_ERR_NOMEM);
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

/* The sample, with its snippet, and what decoding it needs, into @job. */
static int auxsample_job__init(struct auxsample_job *job, struct machine *machine,
			       struct thread *thread, struct auxsample_image *image,
			       union perf_event *event, struct perf_sample *sample,
			       struct evsel *evsel, unsigned int depth)
{
	int err = auxsample_job__copy(&job->snippet, &job->snippet_cap, sample->aux_sample.data,
				      sample->aux_sample.size);

	if (!err && event)
		err = auxsample_job__copy((void **)&job->event, &job->event_cap, event,
					  event->header.size);
	if (err)
		return err;
	job->has_event = !!event;
	job->sample = *sample;
	job->sample.aux_sample.data = job->snippet;
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
		if (pid == -1 || pool->jobs[n % pool->window].sample.pid == (u32)pid)
			last = n + 1;
	}
	return last ? auxsample_pool__deliver(pool, last) : 0;
}
