// SPDX-License-Identifier: GPL-2.0
/*
 * The decoders of the last few processes decoded, each with a
 * libauxsample image of the files its maps map (auxsample.h).
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
#include "build-id.h"
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

struct auxsample_proc_maps {
	struct auxsample_image	*image;
	struct machine		*machine;
};

/*
 * What only a file of the same bytes has, for the image's family
 * (auxsample_image__add_file_id()): the dso perf reads its code through,
 * as perf tells dsos apart (its name and the device, inode and generation
 * MMAP2 gave: a container's libc is not the host's), with its build-id,
 * in its machine.  Empty where neither a build-id nor, on the host, the
 * inode is known, or too long: the file's code is then the process's
 * own.
 */
static void auxsample_proc__identity(struct dso *dso, struct machine *machine, char *buf,
				     size_t size)
{
	const struct dso_id *id = dso__id(dso);
	char bid[SBUILD_ID_SIZE] = "-";
	int n;

	buf[0] = '\0';
	if (!machine)
		return;
	if (dso__has_build_id(dso))
		build_id__sprintf(dso__bid(dso), bid);
	else if (!machine__is_host(machine) || dso_id__empty(id))
		return;
	n = snprintf(buf, size, "%d %s %u:%u:%" PRIu64 ":%" PRIu64 " %s", machine->pid, bid,
		     id->maj, id->min, id->ino, id->ino_generation, dso__long_name(dso));
	if (n < 0 || (size_t)n >= size)
		buf[0] = '\0';
}

/* A map of a readable file: a section of the image. */
static int auxsample_proc__add_map(struct map *map, void *data)
{
	struct auxsample_proc_maps *m = data;
	struct dso *dso = map__dso(map);
	const char *name = dso ? dso__long_name(dso) : NULL;
	char identity[PATH_MAX + 128];

	/* A JIT's symbols (perf-<pid>.map) are text, not its code. */
	if (!name || name[0] != '/' || !(map__prot(map) & PROT_EXEC) ||
	    is_perf_pid_map_name(name) || access(name, R_OK))
		return 0;
	auxsample_proc__identity(dso, m->machine, identity, sizeof(identity));
	/* A file that will not load leaves its code to the callback. */
	auxsample_image__add_file_id(m->image, name, map__pgoff(map), map__size(map),
				     map__start(map), identity);
	return 0;
}

static void auxsample_proc_entry__exit(struct auxsample_proc_entry *e)
{
	auxsample_decoder__delete(e->dec);
	auxsample_image__put(e->image);
	memset(e, 0, sizeof(*e));
}

/*
 * The entry of the process with maps of @version and, unless @any,
 * decoding @config; else NULL.  Entries of the process's older maps are
 * gone.
 */
static struct auxsample_proc_entry *auxsample_proc__find(struct auxsample_proc *proc,
							 pid_t pid, u64 version,
							 const struct auxsample_config *config,
							 bool any)
{
	struct auxsample_proc_entry *found = NULL;

	for (int i = 0; i < AUXSAMPLE_PROC_CACHE; i++) {
		struct auxsample_proc_entry *e = &proc->entries[i];

		if (!e->image || e->pid != pid)
			continue;
		if (e->maps_version != version)
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

/*
 * Not their count: a file mapped where another was leaves as many maps,
 * and an image of the old ones would give the family the new file's code
 * under the old file's identity.
 */
u64 auxsample_proc__maps_version(struct thread *thread)
{
	struct maps *maps = thread__maps(thread);

	return maps ? maps__version(maps) : 0;
}

/* The process's image, made again when its maps change. */
struct auxsample_image *auxsample_proc__image(struct auxsample_proc *proc,
					      struct machine *machine, struct thread *thread)
{
	u64 version = auxsample_proc__maps_version(thread);
	struct maps *maps = thread__maps(thread);
	pid_t pid = thread__pid(thread);
	struct auxsample_proc_entry *e;

	proc->mem.machine = machine;
	proc->mem.thread = thread;
	e = auxsample_proc__find(proc, pid, version, NULL, true);
	if (e) {
		e->used = ++proc->clock;
		return e->image;
	}
	if (!proc->family)
		proc->family = auxsample_image__new();
	if (!proc->family)
		return NULL;
	e = auxsample_proc__new_entry(proc);
	e->image = auxsample_image__new_sibling(proc->family);
	if (!e->image)
		return NULL;
	if (maps) {
		struct auxsample_proc_maps m = { .image = e->image, .machine = machine };

		maps__for_each_map(maps, auxsample_proc__add_map, &m);
	}
	e->pid = pid;
	e->maps_version = version;
	e->used = ++proc->clock;
	return e->image;
}

struct auxsample_decoder *auxsample_proc__decoder(struct auxsample_proc *proc,
						   const struct auxsample_config *config,
						   struct machine *machine, struct thread *thread)
{
	struct auxsample_image *image = auxsample_proc__image(proc, machine, thread);
	u64 version = auxsample_proc__maps_version(thread);
	pid_t pid = thread__pid(thread);
	struct auxsample_config cfg = *config;
	struct auxsample_proc_entry *e;
	int err;

	if (!image)
		return NULL;
	e = auxsample_proc__find(proc, pid, version, config, false);
	if (!e)
		e = auxsample_proc__find(proc, pid, version, NULL, false);
	if (!e) {
		/* Another configuration (ETM: another CPU's source): its own entry. */
		auxsample_image__get(image);
		e = auxsample_proc__new_entry(proc);
		e->image = image;
		e->pid = pid;
		e->maps_version = version;
	}
	e->used = ++proc->clock;
	if (e->dec)
		return e->dec;
	e->config = config;
	cfg.image = e->image;
	cfg.read_memory = auxsample_mem__read;
	cfg.context = &proc->mem;
	e->dec = auxsample_decoder__new(&cfg, &err);
	if (!e->dec)
		pr_err("cannot set up an AUX sample decoder: %s\n", auxsample_strerror(err));
	return e->dec;
}

void auxsample_proc__exit(struct auxsample_proc *proc)
{
	for (int i = 0; i < AUXSAMPLE_PROC_CACHE; i++) {
		if (proc->entries[i].image)
			auxsample_proc_entry__exit(&proc->entries[i]);
	}
	auxsample_image__put(proc->family);
	proc->family = NULL;
}
