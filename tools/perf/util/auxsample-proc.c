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
 * A file's name and identity, shared by the lists of files that have it,
 * and its dso's build-id and id that the identity was made of.
 */
struct auxsample_proc_name {
	int			refcnt;
	bool			has_build_id;
	struct build_id		bid;
	struct dso_id		id;
	char			*identity;	/* after @name */
	char			name[];
};

/*
 * A file the image of a process maps, as perf's maps say it; or, with
 * @anon, a map of other code, which the image's own blocks keep as read
 * through auxsample_mem__read() (a JIT's): only that map holds it, a map
 * made again in its place may hold other code.  @in_image: the file is
 * in the image; else its code comes through the callback too.
 */
struct auxsample_proc_file {
	u64			start;
	u64			size;
	u64			pgoff;
	struct auxsample_proc_name *n;
	struct map		*map;		/* a reference */
	bool			anon;
	bool			in_image;
	bool			from_base;	/* as the last image had it */
};

/*
 * The files of a process's maps that its image was made of.  @unsure: a
 * file could not be added, its code is read as @anon's is, from what
 * may be another file by now.  @ordered: sorted by start, none over
 * another, as perf keeps a process's maps (where they are not, an image
 * made in their order is the one that maps what maps__find() finds).
 */
struct auxsample_proc_files {
	struct auxsample_proc_file	*files;
	unsigned int			nr;
	unsigned int			cap;
	bool				unsure;
	bool				ordered;
};

/*
 * The files of a process's maps being collected; those the process's
 * last image was made of, @base, found again as they were (the same dso
 * at the same place) keep what was made of them: their identity, their
 * place in the image (@reused, by @base's index).  Both sorted by start,
 * as maps__for_each_map() goes; @at: where in @base the next map starts,
 * @hint: where the next file of the last image likely is (it has them
 * in that order but for those added since).
 */
struct auxsample_proc_collect {
	struct auxsample_proc_files	*f;
	struct machine			*machine;
	const struct auxsample_proc_files *base;
	bool				*reused;
	unsigned int			at;
	unsigned int			hint;
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

static struct auxsample_proc_name *auxsample_proc_name__new(const char *name,
							    const char *identity)
{
	size_t len = strlen(name) + 1, id_len = strlen(identity) + 1;
	struct auxsample_proc_name *n = malloc(sizeof(*n) + len + id_len);

	if (!n)
		return NULL;
	memset(n, 0, sizeof(*n));
	n->refcnt = 1;
	memcpy(n->name, name, len);
	n->identity = n->name + len;
	memcpy(n->identity, identity, id_len);
	return n;
}

/* Only the thread that decodes with the processes' images uses their names. */
static void auxsample_proc_name__put(struct auxsample_proc_name *n)
{
	if (n && !--n->refcnt)
		free(n);
}

static void auxsample_proc_files__delete(struct auxsample_proc_files *f)
{
	if (!f)
		return;
	for (unsigned int i = 0; i < f->nr; i++) {
		auxsample_proc_name__put(f->files[i].n);
		map__put(f->files[i].map);
	}
	free(f->files);
	free(f);
}

/* @map's file as @like says: its name (a reference), its identity and more. */
static int auxsample_proc_files__add(struct auxsample_proc_files *f, struct map *map,
				     const struct auxsample_proc_file *like)
{
	struct auxsample_proc_file *file;

	if (f->nr == f->cap) {
		unsigned int cap = f->cap ? 2 * f->cap : 16;
		struct auxsample_proc_file *files = realloc(f->files, cap * sizeof(*files));

		if (!files) {
			auxsample_proc_name__put(like->n);
			return -ENOMEM;
		}
		f->files = files;
		f->cap = cap;
	}
	file = &f->files[f->nr++];
	*file = *like;
	if (f->nr > 1 && (file[-1].start + file[-1].size < file[-1].start ||
			  file[-1].start + file[-1].size > map__start(map)))
		f->ordered = false;
	file->start = map__start(map);
	file->size = map__size(map);
	file->pgoff = map__pgoff(map);
	file->map = map__get(map);
	return 0;
}

/*
 * Whether @dso is as it was when @old's identity was made: perf sets a
 * dso's build-id again from each MMAP2 that has one, and its device and
 * inode from the first that has them.
 */
static bool auxsample_proc_file__same_dso(const struct auxsample_proc_file *old,
					  struct dso *dso)
{
	const struct build_id *bid = dso__bid(dso);
	const struct auxsample_proc_name *n = old->n;
	const struct dso_id *id = dso__id(dso);

	return RC_CHK_EQUAL(map__dso(old->map), dso) &&
	       n->has_build_id == dso__has_build_id(dso) && n->bid.size == bid->size &&
	       !memcmp(n->bid.data, bid->data, bid->size) && n->id.maj == id->maj &&
	       n->id.min == id->min && n->id.ino == id->ino &&
	       n->id.ino_generation == id->ino_generation;
}

/*
 * @map's file as the last image had it, if it is still there: the same
 * map of other code, or the same file, as its dso and identity were then.
 */
static const struct auxsample_proc_file *
auxsample_proc_collect__reuse(struct auxsample_proc_collect *c, struct map *map,
			      const char *name)
{
	const struct auxsample_proc_files *base = c->base;
	struct dso *dso = map__dso(map);

	if (!base || !dso)
		return NULL;
	while (c->at < base->nr && base->files[c->at].start < map__start(map))
		c->at++;
	for (unsigned int i = c->at; i < base->nr && base->files[i].start == map__start(map); i++) {
		const struct auxsample_proc_file *old = &base->files[i];

		if (old->size != map__size(map) || old->pgoff != map__pgoff(map))
			continue;
		if (old->anon ? !RC_CHK_EQUAL(old->map, map) :
				!auxsample_proc_file__same_dso(old, dso))
			continue;
		/* The same name, the same kind of map. */
		if (strcmp(old->n->name, name))
			continue;
		c->reused[i] = true;
		return old;
	}
	return NULL;
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
	struct auxsample_proc_file file = { };
	const struct auxsample_proc_file *old;
	char identity[PATH_MAX + 128];

	if (!(map__prot(map) & PROT_EXEC))
		return 0;
	old = auxsample_proc_collect__reuse(c, map, name ?: "");
	if (old) {
		file = *old;
		file.from_base = true;
		file.n->refcnt++;
		return auxsample_proc_files__add(c->f, map, &file);
	}
	/* A JIT's symbols (perf-<pid>.map) are text, not its code. */
	file.anon = !name || name[0] != '/' || is_perf_pid_map_name(name);
	if (file.anon && name && is_vdso_map(name))
		return 0;
	identity[0] = '\0';
	if (!file.anon)
		auxsample_proc__identity(dso, c->machine, identity, sizeof(identity));
	file.n = auxsample_proc_name__new(name ?: "", identity);
	if (!file.n)
		return -ENOMEM;
	if (!file.anon) {
		file.n->has_build_id = dso__has_build_id(dso);
		file.n->bid = *dso__bid(dso);
		file.n->id = *dso__id(dso);
	}
	return auxsample_proc_files__add(c->f, map, &file);
}

/*
 * @maps' files, those of @c's base found again as they were; NULL
 * without the memory for all of them.
 */
static struct auxsample_proc_files *auxsample_proc__files(struct maps *maps,
							  struct auxsample_proc_collect *c)
{
	c->f = zalloc(sizeof(*c->f));
	if (c->f)
		c->f->ordered = true;
	/* As many as the last time, most likely: not copied as the array grows. */
	if (c->f && c->base && c->base->nr) {
		c->f->files = malloc(c->base->nr * sizeof(*c->f->files));
		c->f->cap = c->f->files ? c->base->nr : 0;
	}
	if (c->f && maps && maps__for_each_map(maps, auxsample_proc__add_map, c)) {
		auxsample_proc_files__delete(c->f);
		c->f = NULL;
	}
	return c->f;
}

static bool auxsample_proc_file__equal(const struct auxsample_proc_file *a,
				       const struct auxsample_proc_file *b)
{
	return a->start == b->start && a->size == b->size && a->pgoff == b->pgoff &&
	       (a->n == b->n || (!strcmp(a->n->name, b->n->name) &&
				 !strcmp(a->n->identity, b->n->identity))) &&
	       a->anon == b->anon && (!a->anon || RC_CHK_EQUAL(a->map, b->map));
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
 * Whether the file of the last image at @vaddr is still mapped, as it
 * was (auxsample_image__copy()): one of @c's base files found again.
 */
static int auxsample_proc_collect__keep(const char *name, uint64_t offset, uint64_t size,
					uint64_t vaddr, void *arg)
{
	struct auxsample_proc_collect *c = arg;
	const struct auxsample_proc_files *base = c->base;
	unsigned int lo = 0, hi = base->nr;

	if (c->hint < base->nr && base->files[c->hint].start == vaddr &&
	    (!c->hint || base->files[c->hint - 1].start < vaddr))
		lo = hi = c->hint;
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (base->files[mid].start < vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < base->nr && base->files[lo].start == vaddr; lo++) {
		const struct auxsample_proc_file *old = &base->files[lo];

		if (c->reused[lo] && old->in_image && old->size == size &&
		    old->pgoff == offset && !strcmp(old->n->name, name)) {
			c->hint = lo + 1;
			return 1;
		}
	}
	return 0;
}

/*
 * The readable files of @c's files: the sections of a new image in
 * @family's family, a copy of @base_image's files still mapped where
 * there is one, and those mapped since.  The code of the others comes
 * through the callback: the files are unsure then (checked once a file,
 * not at each version).
 */
static struct auxsample_image *auxsample_proc_files__image(struct auxsample_proc_collect *c,
							   struct auxsample_image *family,
							   struct auxsample_image *base_image)
{
	struct auxsample_proc_files *f = c->f;
	struct auxsample_image *image;

	image = base_image ? auxsample_image__copy(base_image, auxsample_proc_collect__keep, c) :
			     NULL;
	/* No memory for the copy: perhaps for one of the files alone. */
	if (!image) {
		base_image = NULL;
		image = auxsample_image__new_sibling(family);
	}
	for (unsigned int i = 0; image && i < f->nr; i++) {
		struct auxsample_proc_file *file = &f->files[i];

		if (file->anon)
			continue;
		/* A file that will not load leaves its code to the callback too. */
		if (!file->from_base || !base_image)
			file->in_image = !access(file->n->name, R_OK) &&
					 !auxsample_image__add_file_id(image, file->n->name,
								       file->pgoff, file->size,
								       file->start,
								       file->n->identity);
		if (!file->in_image)
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
 * The entry that made an image of the process: the one of @files where
 * @files is given (a map replaced by the same one, as ld.so and
 * mprotect() do, moves the version and changes nothing), else the last
 * used; or NULL.
 */
static struct auxsample_proc_entry *auxsample_proc__maker(struct auxsample_proc *proc,
							  pid_t pid,
							  const struct auxsample_proc_files *files)
{
	struct auxsample_proc_entry *found = NULL;

	for (int i = 0; i < AUXSAMPLE_PROC_CACHE; i++) {
		struct auxsample_proc_entry *e = &proc->entries[i];

		if (!e->image || e->pid != pid || !e->files)
			continue;
		if (files ? auxsample_proc_files__equal(e->files, files) :
			    !found || e->used > found->used)
			found = e;
		if (files && found)
			break;
	}
	return found;
}

/*
 * The process's maps are of @version now: its entries whose image is
 * @kept's are of @version too; the others go.
 */
static void auxsample_proc__update(struct auxsample_proc *proc, pid_t pid, u64 version,
				   const struct auxsample_proc_entry *kept)
{
	for (int i = 0; i < AUXSAMPLE_PROC_CACHE; i++) {
		struct auxsample_proc_entry *e = &proc->entries[i];

		if (!e->image || e->pid != pid)
			continue;
		if (kept && e->image == kept->image)
			e->maps_version = version;
		else
			auxsample_proc_entry__exit(e);
	}
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
	struct auxsample_proc_collect c = { .machine = machine };
	struct maps *maps = thread__maps(thread);
	pid_t pid = thread__pid(thread);
	struct auxsample_proc_entry *e, *base;
	struct auxsample_image *image = NULL;

	proc->mem.machine = machine;
	proc->mem.thread = thread;
	e = auxsample_proc__find(proc, pid, version, NULL, true);
	if (e) {
		e->used = ++proc->clock;
		return e->image;
	}
	base = auxsample_proc__maker(proc, pid, NULL);
	/* Found again and copied in start order: not where files overlap. */
	if (base && !base->files->ordered)
		base = NULL;
	if (base) {
		c.base = base->files;
		c.reused = calloc(base->files->nr ?: 1, sizeof(*c.reused));
		if (!c.reused)
			return NULL;
	}
	if (!auxsample_proc__files(maps, &c))
		goto out;
	e = auxsample_proc__maker(proc, pid, c.f);
	if (e) {
		auxsample_proc__update(proc, pid, version, e);
		image = e->image;
		e->used = ++proc->clock;
		goto out;
	}
	if (!proc->family)
		proc->family = auxsample_image__new();
	if (proc->family)
		image = auxsample_proc_files__image(&c, proc->family,
						    base && c.f->ordered ? base->image : NULL);
	if (!image)
		goto out;
	auxsample_proc__update(proc, pid, version, NULL);
	e = auxsample_proc__new_entry(proc);
	e->image = image;
	e->files = c.f;
	c.f = NULL;
	e->pid = pid;
	e->maps_version = version;
	e->used = ++proc->clock;
out:
	auxsample_proc_files__delete(c.f);
	free(c.reused);
	return image;
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
