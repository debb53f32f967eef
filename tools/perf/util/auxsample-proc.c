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
#include "vdso.h"

/*
 * A file the image of a process maps, as perf's maps say it; or, with
 * @anon, a map of other code, which the image's own blocks keep as read
 * through auxsample_mem__read() (a JIT's): only that map holds it, a map
 * made again in its place may hold other code.
 */
struct auxsample_proc_file {
	u64			start;
	u64			size;
	u64			pgoff;
	char			*name;
	char			*identity;
	struct map		*anon;
};

/*
 * The files of a process's maps that its image was made of.  @unsure: a
 * file could not be added, its code is read as @anon's is, from what
 * may be another file by now.
 */
struct auxsample_proc_files {
	struct auxsample_proc_file	*files;
	unsigned int			nr;
	unsigned int			cap;
	bool				unsure;
};

/* The files of a process's maps being collected. */
struct auxsample_proc_collect {
	struct auxsample_proc_files	*f;
	struct machine			*machine;
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

static void auxsample_proc_files__delete(struct auxsample_proc_files *f)
{
	if (!f)
		return;
	for (unsigned int i = 0; i < f->nr; i++) {
		free(f->files[i].name);
		free(f->files[i].identity);
		map__put(f->files[i].anon);
	}
	free(f->files);
	free(f);
}

static int auxsample_proc_files__add(struct auxsample_proc_files *f, struct map *map,
				     const char *name, const char *identity, bool anon)
{
	struct auxsample_proc_file *file;

	if (f->nr == f->cap) {
		unsigned int cap = f->cap ? 2 * f->cap : 16;
		struct auxsample_proc_file *files = realloc(f->files, cap * sizeof(*files));

		if (!files)
			return -ENOMEM;
		f->files = files;
		f->cap = cap;
	}
	file = &f->files[f->nr];
	*file = (struct auxsample_proc_file){
		.start = map__start(map), .size = map__size(map), .pgoff = map__pgoff(map),
		.name = strdup(name), .identity = strdup(identity),
	};
	if (!file->name || !file->identity) {
		free(file->name);
		free(file->identity);
		return -ENOMEM;
	}
	if (anon)
		file->anon = map__get(map);
	f->nr++;
	return 0;
}

/*
 * A map of a file's code: a file of the image.  Other code the decoder
 * reads through auxsample_mem__read(), into the image's own blocks, the
 * vDSO's the same in every process.
 */
static int auxsample_proc__add_map(struct map *map, void *data)
{
	struct auxsample_proc_collect *c = data;
	struct dso *dso = map__dso(map);
	const char *name = dso ? dso__long_name(dso) : NULL;
	char identity[PATH_MAX + 128];

	if (!(map__prot(map) & PROT_EXEC))
		return 0;
	/* A JIT's symbols (perf-<pid>.map) are text, not its code. */
	if (!name || name[0] != '/' || is_perf_pid_map_name(name)) {
		if (name && is_vdso_map(name))
			return 0;
		return auxsample_proc_files__add(c->f, map, name ?: "", "", true);
	}
	auxsample_proc__identity(dso, c->machine, identity, sizeof(identity));
	return auxsample_proc_files__add(c->f, map, name, identity, false);
}

/* @maps' files, or NULL without the memory for all of them. */
static struct auxsample_proc_files *auxsample_proc__files(struct maps *maps,
							  struct machine *machine)
{
	struct auxsample_proc_collect c = { .f = zalloc(sizeof(*c.f)), .machine = machine };

	if (c.f && maps && maps__for_each_map(maps, auxsample_proc__add_map, &c)) {
		auxsample_proc_files__delete(c.f);
		return NULL;
	}
	return c.f;
}

static bool auxsample_proc_file__equal(const struct auxsample_proc_file *a,
				       const struct auxsample_proc_file *b)
{
	return a->start == b->start && a->size == b->size && a->pgoff == b->pgoff &&
	       !strcmp(a->name, b->name) && !strcmp(a->identity, b->identity) &&
	       (a->anon ? b->anon && RC_CHK_EQUAL(a->anon, b->anon) : !b->anon);
}

/*
 * Whether an image made of @a's files would hold the code of one made of
 * @b's: the same files, the same maps of other code.
 */
static bool auxsample_proc_files__equal(const struct auxsample_proc_files *a,
					const struct auxsample_proc_files *b)
{
	if (a->unsure || b->unsure || a->nr != b->nr)
		return false;
	for (unsigned int i = 0; i < a->nr; i++) {
		if (!auxsample_proc_file__equal(&a->files[i], &b->files[i]))
			return false;
	}
	return true;
}

/*
 * The readable files of @f: the sections of a new image in @family's
 * family.  The code of the others comes through the callback: @f is
 * unsure then (checked here, once an image, not at each version).
 */
static struct auxsample_image *auxsample_proc_files__image(struct auxsample_proc_files *f,
							   struct auxsample_image *family)
{
	struct auxsample_image *image = auxsample_image__new_sibling(family);

	for (unsigned int i = 0; image && i < f->nr; i++) {
		const struct auxsample_proc_file *file = &f->files[i];

		if (file->anon)
			continue;
		/* A file that will not load leaves its code to the callback too. */
		if (access(file->name, R_OK) ||
		    auxsample_image__add_file_id(image, file->name, file->pgoff, file->size,
						 file->start, file->identity))
			f->unsure = true;
	}
	return image;
}

static void auxsample_proc_entry__exit(struct auxsample_proc_entry *e)
{
	auxsample_decoder__delete(e->dec);
	auxsample_image__put(e->image);
	auxsample_proc_files__delete(e->files);
	memset(e, 0, sizeof(*e));
}

/*
 * The entry of the process with maps of @version and, unless @any,
 * decoding @config; else NULL.
 */
static struct auxsample_proc_entry *auxsample_proc__find(struct auxsample_proc *proc,
							 pid_t pid, u64 version,
							 const struct auxsample_config *config,
							 bool any)
{
	for (int i = 0; i < AUXSAMPLE_PROC_CACHE; i++) {
		struct auxsample_proc_entry *e = &proc->entries[i];

		if (e->image && e->pid == pid && e->maps_version == version &&
		    (any || e->config == config))
			return e;
	}
	return NULL;
}

/*
 * The process's maps are of @version now, their files @files: its
 * entries whose image is of the same files are of @version too (a map
 * replaced by the same one, as ld.so and mprotect() do, moves the
 * version and changes nothing); the others go.  The entry that made the
 * image kept, or NULL.
 */
static struct auxsample_proc_entry *auxsample_proc__update(struct auxsample_proc *proc,
							   pid_t pid, u64 version,
							   const struct auxsample_proc_files *files)
{
	struct auxsample_proc_entry *kept = NULL;

	for (int i = 0; i < AUXSAMPLE_PROC_CACHE && !kept; i++) {
		struct auxsample_proc_entry *e = &proc->entries[i];

		if (e->image && e->pid == pid && e->files &&
		    auxsample_proc_files__equal(e->files, files))
			kept = e;
	}
	for (int i = 0; i < AUXSAMPLE_PROC_CACHE; i++) {
		struct auxsample_proc_entry *e = &proc->entries[i];

		if (!e->image || e->pid != pid)
			continue;
		if (kept && e->image == kept->image)
			e->maps_version = version;
		else
			auxsample_proc_entry__exit(e);
	}
	return kept;
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

/* The process's image, made again when its maps change what it maps. */
struct auxsample_image *auxsample_proc__image(struct auxsample_proc *proc,
					      struct machine *machine, struct thread *thread)
{
	u64 version = auxsample_proc__maps_version(thread);
	struct maps *maps = thread__maps(thread);
	pid_t pid = thread__pid(thread);
	struct auxsample_proc_files *files;
	struct auxsample_proc_entry *e;
	struct auxsample_image *image;

	proc->mem.machine = machine;
	proc->mem.thread = thread;
	e = auxsample_proc__find(proc, pid, version, NULL, true);
	if (e) {
		e->used = ++proc->clock;
		return e->image;
	}
	files = auxsample_proc__files(maps, machine);
	if (!files)
		return NULL;
	e = auxsample_proc__update(proc, pid, version, files);
	if (e) {
		auxsample_proc_files__delete(files);
		e->used = ++proc->clock;
		return e->image;
	}
	if (!proc->family)
		proc->family = auxsample_image__new();
	image = proc->family ? auxsample_proc_files__image(files, proc->family) : NULL;
	if (!image) {
		auxsample_proc_files__delete(files);
		return NULL;
	}
	e = auxsample_proc__new_entry(proc);
	e->image = image;
	e->files = files;
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
