// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample simulate: the sideband records that say whose the
 * trace is, as perf record gets them from the kernel: COMM, FORK, EXIT,
 * ITRACE_START, MMAP2 with build-ids of the executable mappings, and the
 * simulated kernel's MMAP.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <linux/string.h>
#include <sys/mman.h>

#include "auxsample-sim.h"
#include "auxsample-sim-core.h"
#include "auxsample-sim-kernel.h"
#include "auxsample-sim-vmlinux.h"
#include "build-id.h"
#include "debug.h"
#include "dso.h"
#include "machine.h"
#include "map.h"
#include "session.h"
#include "symbol.h"

/* The thread's name, as the kernel has it; "" if it cannot be read. */
void sim_thread__comm(struct sim_thread *t, char comm[16])
{
	char path[64];
	FILE *f;

	comm[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", t->tid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(comm, 16, f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
}

/* @name: the thread's name, or NULL to read it from /proc. */
int sim__write_comm(struct sim *sim, struct sim_thread *t, bool exec,
			   const char *name)
{
	union perf_event *ev = sim->event;
	char comm[16];

	if (name)
		strlcpy(comm, name, sizeof(comm));
	else
		sim_thread__comm(t, comm);
	memset(ev, 0, sizeof(ev->comm));
	ev->comm.header.type = PERF_RECORD_COMM;
	ev->comm.header.misc = exec ? PERF_RECORD_MISC_COMM_EXEC : 0;
	ev->comm.pid = t->pid;
	ev->comm.tid = t->tid;
	strlcpy(ev->comm.comm, comm, sizeof(ev->comm.comm));
	ev->comm.header.size = sizeof(ev->comm);
	return sim__write_sideband(sim, ev, sim->dummy_evsel, t);
}

int sim__write_task(struct sim *sim, struct sim_thread *t, u32 type, pid_t ppid,
			   pid_t ptid)
{
	union perf_event *ev = sim->event;

	memset(ev, 0, sizeof(ev->fork));
	ev->fork.header.type = type;
	ev->fork.header.size = sizeof(ev->fork);
	ev->fork.pid = t->pid;
	ev->fork.tid = t->tid;
	ev->fork.ppid = ppid;
	ev->fork.ptid = ptid;
	ev->fork.time = sim->tsc;
	/* Its pid may be another process's later, its mappings new to it. */
	if (type == PERF_RECORD_EXIT && t->tid == t->pid)
		sim__forget_process_maps(sim, t->pid);
	return sim__write_sideband(sim, ev, sim->dummy_evsel, t);
}

int sim__write_itrace_start(struct sim *sim, struct sim_thread *t)
{
	union perf_event *ev = sim->event;

	memset(ev, 0, sizeof(ev->itrace_start));
	ev->itrace_start.header.type = PERF_RECORD_ITRACE_START;
	ev->itrace_start.header.size = sizeof(ev->itrace_start);
	ev->itrace_start.pid = t->pid;
	ev->itrace_start.tid = t->tid;
	return sim__write_sideband(sim, ev, sim->pt_evsel, t);
}

static bool sim__map_seen(struct sim *sim, const struct sim_map *m)
{
	for (unsigned int i = 0; i < sim->nr_maps; i++) {
		const struct sim_map *old = &sim->maps[i];

		/* Field by field: the struct has padding after the pid. */
		if (old->pid == m->pid && old->start == m->start && old->end == m->end &&
		    old->pgoff == m->pgoff && old->ino == m->ino)
			return true;
	}
	return false;
}

/* @pid's mappings in [@start, @end) are gone: mapped again, they are new. */
static void sim__forget_maps(struct sim *sim, pid_t pid, u64 start, u64 end)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < sim->nr_maps; i++) {
		const struct sim_map *old = &sim->maps[i];

		if (old->pid != pid || old->end <= start || old->start >= end)
			sim->maps[n++] = *old;
	}
	sim->nr_maps = n;
}

/* A process's mappings are all new after an exec(): the kernel tells them all. */
void sim__forget_process_maps(struct sim *sim, pid_t pid)
{
	sim__forget_maps(sim, pid, 0, ~0ULL);
}

/*
 * @m is its process's mapping from now on, and no longer the mappings it
 * was mapped over: one of those mapped there again is new again, as the
 * kernel tells each mmap() (a file mapped where another was, in turn).
 */
static int sim__remember_map(struct sim *sim, const struct sim_map *m)
{
	sim__forget_maps(sim, m->pid, m->start, m->end);
	if (sim->nr_maps == sim->maps_cap) {
		unsigned int cap = sim->maps_cap ? sim->maps_cap * 2 : 64;
		struct sim_map *maps = realloc(sim->maps, cap * sizeof(*maps));

		if (!maps)
			return -ENOMEM;
		sim->maps = maps;
		sim->maps_cap = cap;
	}
	sim->maps[sim->nr_maps++] = *m;
	return 0;
}

static int sim__write_mmap(struct sim *sim, struct sim_thread *t, const struct sim_map *m,
			   const char *name)
{
	union perf_event *ev = sim->event;
	struct build_id bid;
	size_t len = strlen(name) + 1;

	memset(ev, 0, sizeof(ev->mmap2));
	ev->mmap2.header.type = PERF_RECORD_MMAP2;
	ev->mmap2.header.misc = PERF_RECORD_MISC_USER;
	ev->mmap2.pid = t->pid;
	ev->mmap2.tid = t->pid;
	ev->mmap2.start = m->start;
	ev->mmap2.len = m->end - m->start;
	ev->mmap2.pgoff = m->pgoff;
	ev->mmap2.prot = PROT_READ | PROT_EXEC;
	ev->mmap2.flags = MAP_PRIVATE;
	if (name[0] == '/' && filename__read_build_id(name, &bid) > 0) {
		ev->mmap2.header.misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
		ev->mmap2.build_id_size = bid.size;
		memcpy(ev->mmap2.build_id, bid.data, bid.size);
	} else {
		ev->mmap2.ino = m->ino;
	}
	memcpy(ev->mmap2.filename, name, len);
	ev->mmap2.header.size = offsetof(struct perf_record_mmap2, filename) +
				PERF_ALIGN(len, sizeof(u64));
	return sim__write_sideband(sim, ev, sim->dummy_evsel, t);
}

/* MMAP2 for the mapping @m of @t's process, unless it was written already. */
int sim__add_map(struct sim *sim, struct sim_thread *t, const struct sim_map *m,
		 const char *name)
{
	if (sim__map_seen(sim, m))
		return 0;
	return sim__remember_map(sim, m) ?: sim__write_mmap(sim, t, m, name);
}

/* MMAP2 for the executable mappings of @t's process not written yet. */
int sim__scan_maps(struct sim *sim, struct sim_thread *t)
{
	char path[64], line[PATH_MAX + 128], perms[8], name[PATH_MAX];
	unsigned int maj, min;
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", t->pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		struct sim_map m = { .pid = t->pid };

		name[0] = '\0';
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %s",
			   &m.start, &m.end, perms, &m.pgoff, &maj, &min, &m.ino, name) < 7)
			continue;
		if (perms[2] != 'x')
			continue;
		if (!name[0])
			strlcpy(name, "//anon", sizeof(name));
		err = sim__add_map(sim, t, &m, name);
	}
	fclose(f);
	return err;
}

/*
 * Kernel-traced: the simulated kernel published as perf record publishes
 * a real one, the [kernel.kallsyms]_text MMAP and its build-id in the
 * header; its image, <output>.vmlinux, is in the build-id cache as
 * 'perf buildid-cache --add' puts a vmlinux there, or with --kcore its
 * kallsyms and kcore are in <output>/kcore_dir instead.
 */
int sim__write_kernel(struct sim *sim)
{
	struct sim_thread kt = { .pid = -1, .tid = -1, .cpu = 0 };
	union perf_event *ev = sim->event;
	u8 id[SIM_VMLINUX_BUILD_ID_SIZE];
	char path[PATH_MAX], sbuild_id[SBUILD_ID_SIZE];
	struct build_id bid;
	struct dso *dso;
	struct map *map;
	size_t size;
	int err;

	if (!sim->opts->kernel)
		return 0;
	sim->kernel = sim_kernel__new();
	if (!sim->kernel)
		return -ENOMEM;
	if (sim->opts->tracepoint)
		sim_kernel__enable_tracepoint(sim->kernel);
	snprintf(path, sizeof(path), "%s.vmlinux", sim->opts->output);
	err = sim_kernel__write_vmlinux(sim->kernel, path, id);
	if (err) {
		pr_err("cannot write %s: %s\n", path, strerror(-err));
		return err;
	}
	sim_kernel__text(sim->kernel, &size);
	memset(ev, 0, sizeof(ev->mmap));
	ev->mmap.header.type = PERF_RECORD_MMAP;
	ev->mmap.header.misc = PERF_RECORD_MISC_KERNEL;
	ev->mmap.pid = -1;
	ev->mmap.start = SIM_KERNEL_BASE;
	ev->mmap.len = PERF_ALIGN(size, 4096);
	ev->mmap.pgoff = SIM_KERNEL_BASE;	/* _text, the ref_reloc_sym */
	strlcpy(ev->mmap.filename, "[kernel.kallsyms]_text", sizeof(ev->mmap.filename));
	ev->mmap.header.size = offsetof(struct perf_record_mmap, filename) +
			       PERF_ALIGN(strlen(ev->mmap.filename) + 1, sizeof(u64));
	err = sim__write_sideband(sim, ev, sim->dummy_evsel, &kt);
	if (err)
		return err;
	map = machine__kernel_map(&sim->session->machines.host);
	dso = map ? map__dso(map) : NULL;
	if (!dso)
		return -ENOMEM;
	build_id__init(&bid, id, sizeof(id));
	dso__set_build_id(dso, &bid);
	if (sim->opts->kcore) {
		/* As perf record --kcore: perf reads kcore_dir before any vmlinux. */
		if (perf_data__make_kcore_dir(&sim->data, path, sizeof(path)) ||
		    sim_kernel__write_kcore_dir(sim->kernel, path)) {
			pr_err("cannot write %s/kcore_dir\n", sim->opts->output);
			return -EIO;
		}
		return 0;
	}
	build_id__sprintf(&bid, sbuild_id);
	if (build_id_cache__add_s(sbuild_id, path, NULL, false, false) < 0)
		pr_warning("cannot add %s to the build-id cache\n", path);
	return 0;
}
