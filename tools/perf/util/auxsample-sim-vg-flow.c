// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample simulate --engine=valgrind: the records of the
 * auxsample Valgrind tool (auxsample-vg-proto.h), per process and
 * thread, turned into the simulator's events (auxsample-sim-engine.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>

#include "auxsample-sim-engine.h"
#include "auxsample-sim-vg-flow.h"
#include "debug.h"

/* --- processes and threads --- */

static struct vg_proc *vg__proc(struct vg *vg, pid_t pid)
{
	for (int i = 0; i < VG_MAX_PROCS; i++) {
		if (vg->procs[i].used && vg->procs[i].pid == pid)
			return &vg->procs[i];
	}
	return NULL;
}

static struct vg_proc *vg__proc_new(struct vg *vg, pid_t pid)
{
	for (int i = 0; i < VG_MAX_PROCS; i++) {
		struct vg_proc *p = &vg->procs[i];

		if (!p->used) {
			memset(p, 0, sizeof(*p));
			p->used = true;
			p->pid = pid;
			return p;
		}
	}
	pr_err("perf auxsample simulate: more than %d processes at once\n", VG_MAX_PROCS);
	return NULL;
}

void vg__proc_forget_sbs(struct vg_proc *p)
{
	zfree(&p->sbs);
	p->nr_sbs = 0;
}

static struct vg_thr *vg__thr(struct vg *vg, pid_t tid)
{
	for (int i = 0; i < VG_MAX_THREADS; i++) {
		if (vg->thrs[i].t && vg->thrs[i].tid == tid)
			return &vg->thrs[i];
	}
	return NULL;
}

static struct vg_thr *vg__thr_new(struct vg *vg, struct vg_proc *p, pid_t tid, pid_t ppid,
				  pid_t ptid)
{
	for (int i = 0; i < VG_MAX_THREADS; i++) {
		struct vg_thr *thr = &vg->thrs[i];

		if (thr->t)
			continue;
		memset(thr, 0, sizeof(*thr));
		thr->t = auxsample_sim__thread_new(vg->sim, p->pid, tid, ppid, ptid);
		if (!thr->t)
			return NULL;
		thr->tid = tid;
		thr->proc = p;
		return thr;
	}
	pr_err("perf auxsample simulate: more than %d threads at once\n", VG_MAX_THREADS);
	return NULL;
}

int vg__thr_exit(struct vg *vg, struct vg_thr *thr)
{
	int err = auxsample_sim__thread_exit(vg->sim, thr->t);

	if (thr->proc->cur == thr)
		thr->proc->cur = NULL;
	thr->t = NULL;
	return err;
}

static int vg__proc_exit(struct vg *vg, struct vg_proc *p)
{
	int err = 0;

	for (int i = 0; i < VG_MAX_THREADS; i++) {
		if (vg->thrs[i].t && vg->thrs[i].proc == p)
			err = vg__thr_exit(vg, &vg->thrs[i]) ?: err;
	}
	vg__proc_forget_sbs(p);
	p->used = false;
	return err;
}

/* --- records --- */

static int vg__bad(const char *what)
{
	pr_err("perf auxsample simulate: bad record from the Valgrind tool: %s\n", what);
	return -EPROTO;
}

static int vg__start(struct vg *vg, pid_t pid, const u64 *w, size_t nr)
{
	struct vg_proc *p;
	struct vg_thr *thr;
	bool exec;
	int err;

	if (nr < 2 + AVG_COMM_LEN / 8)
		return vg__bad("short start");
	p = vg__proc(vg, pid);
	exec = p != NULL;
	if (exec) {
		/* exec: the other threads are gone, the code is new. */
		for (int i = 0; i < VG_MAX_THREADS; i++) {
			thr = &vg->thrs[i];
			if (thr->t && thr->proc == p && thr->tid != pid) {
				err = vg__thr_exit(vg, thr);
				if (err)
					return err;
			}
		}
		vg__proc_forget_sbs(p);
	} else {
		p = vg__proc_new(vg, pid);
		if (!p)
			return -E2BIG;
	}
	vg->started = true;
	memcpy(p->comm, &w[2], AVG_COMM_LEN);
	p->comm[AVG_COMM_LEN - 1] = '\0';
	thr = vg__thr(vg, pid);
	if (!thr) {
		thr = vg__thr_new(vg, p, pid, -1, -1);
		if (!thr)
			return -ENOMEM;
	}
	p->cur = thr;
	thr->started = false;
	/* The program's first start is an exec too, as perf record sees it. */
	return auxsample_sim__comm(vg->sim, thr->t, true, p->comm);
}

static int vg__fork(struct vg *vg, pid_t pid, const u64 *w, size_t nr)
{
	struct vg_proc *parent, *p;
	struct vg_thr *thr;
	pid_t ppid, ptid;
	int err;

	if (nr < 3)
		return vg__bad("short fork");
	ppid = AVG_REC_PAYLOAD(w[0]);
	ptid = w[1];
	parent = vg__proc(vg, ppid);
	p = vg__proc(vg, pid) ?: vg__proc_new(vg, pid);
	if (!p)
		return -E2BIG;
	if (parent) {
		/* The child runs the parent's translations. */
		p->sbs = calloc(parent->nr_sbs, sizeof(*p->sbs));
		if (!p->sbs && parent->nr_sbs)
			return -ENOMEM;
		memcpy(p->sbs, parent->sbs, parent->nr_sbs * sizeof(*p->sbs));
		p->nr_sbs = parent->nr_sbs;
		memcpy(p->comm, parent->comm, sizeof(p->comm));
	}
	thr = vg__thr_new(vg, p, pid, ppid, ptid);
	if (!thr)
		return -ENOMEM;
	p->cur = thr;
	err = auxsample_sim__comm(vg->sim, thr->t, false, p->comm) ?:
	      auxsample_sim__trace_from(vg->sim, thr->t, w[2]);
	thr->started = true;
	thr->pos = w[2];
	return err;
}

static int vg__thread_new(struct vg *vg, struct vg_proc *p, const u64 *w, size_t nr)
{
	struct vg_thr *thr;
	int err;

	if (nr < 3)
		return vg__bad("short thread");
	/* The main thread is said too: it started with the process. */
	if (vg__thr(vg, AVG_REC_PAYLOAD(w[0])))
		return 0;
	thr = vg__thr_new(vg, p, AVG_REC_PAYLOAD(w[0]), p->pid, w[1]);
	if (!thr)
		return -ENOMEM;
	err = auxsample_sim__trace_from(vg->sim, thr->t, w[2]);
	thr->started = true;
	thr->pos = w[2];
	return err;
}

/*
 * @sb's exits from the descriptors and targets at @w, each exit's
 * instruction decoded from @code, where @start_of says where each of
 * the @ni instructions starts and @lens how long it is.
 */
static int vg_sb__exits(struct vg_sb *sb, const u64 *w, unsigned int ni, const u8 *lens,
			const u8 *code, const unsigned int *start_of)
{
	for (unsigned int e = 0; e < sb->nr_exits; e++) {
		struct vg_exit *x = &sb->exits[e];
		u64 desc = w[2 + ni + 2 * e];
		unsigned int i = AVG_EXIT_INSN(desc);

		x->insn = i;
		x->jk = AVG_EXIT_JK(desc);
		x->is_const = AVG_EXIT_CONST(desc);
		x->to = w[3 + ni + 2 * e];
		if (i >= ni)
			return vg__bad("exit instruction");
		if (intel_pt_get_insn(code + start_of[i], lens[i], /*x86_64=*/1, &x->decoded))
			memset(&x->decoded, 0, sizeof(x->decoded));
	}
	return 0;
}

/* @sb is superblock @id of @p: the table grows to hold it. */
static int vg_proc__set_sb(struct vg_proc *p, u64 id, struct vg_sb *sb)
{
	if (id >= p->nr_sbs) {
		u64 n = max(id + 1, p->nr_sbs * 2);
		struct vg_sb **sbs = realloc(p->sbs, n * sizeof(*sbs));

		if (!sbs)
			return -ENOMEM;
		memset(sbs + p->nr_sbs, 0, (n - p->nr_sbs) * sizeof(*sbs));
		p->sbs = sbs;
		p->nr_sbs = n;
	}
	p->sbs[id] = sb;
	return 0;
}

static int vg__define(struct vg *vg, struct vg_proc *p, const u64 *w, size_t nr)
{
	u64 sizes = AVG_REC_PAYLOAD(w[0]), id = w[1];
	unsigned int ni = AVG_SB_DEF_INSNS(sizes), ne = AVG_SB_DEF_EXITS(sizes);
	unsigned int nb = AVG_SB_DEF_BYTES(sizes), off = 0;
	size_t words = 2 + ni + 2 * ne + (ni + 7) / 8 + (nb + 7) / 8;
	const u8 *lens, *code;
	unsigned int *start_of;
	struct vg_sb *sb;
	int err;

	if (nr < words || !ni || !ne || id > (1ULL << 32))
		return vg__bad("superblock");
	sb = zalloc(sizeof(*sb));
	start_of = calloc(ni, sizeof(*start_of));
	if (sb) {
		sb->addr = calloc(ni, sizeof(*sb->addr));
		sb->exits = calloc(ne, sizeof(*sb->exits));
	}
	if (!sb || !start_of || !sb->addr || !sb->exits) {
		free(start_of);
		if (sb) {
			free(sb->addr);
			free(sb->exits);
		}
		free(sb);
		return -ENOMEM;
	}
	sb->next = vg->all_sbs;
	vg->all_sbs = sb;
	sb->nr_insns = ni;
	sb->nr_exits = ne;
	memcpy(sb->addr, &w[2], ni * sizeof(u64));
	lens = (const u8 *)&w[2 + ni + 2 * ne];
	code = lens + (ni + 7) / 8 * 8;
	for (unsigned int i = 0; i < ni; i++) {
		start_of[i] = off;
		off += lens[i];
	}
	err = off != nb ? vg__bad("superblock code size") :
	      vg_sb__exits(sb, w, ni, lens, code, start_of);
	free(start_of);
	return err ?: vg_proc__set_sb(p, id, sb);
}

/* The thread runs @sb from its start: back from the kernel, or onwards. */
static int vg__enter(struct vg *vg, struct vg_thr *thr, struct vg_sb *sb)
{
	u64 start = sb->addr[0];

	if (!thr->started) {
		thr->started = true;
		thr->pos = start;
		return auxsample_sim__trace_from(vg->sim, thr->t, start);
	}
	/* From the kernel user code goes on anywhere: the PGE says where. */
	if (auxsample_sim__in_kernel(thr->t) || thr->pos == start)
		return 0;
	/*
	 * Valgrind went elsewhere without a branch of the program (a
	 * function it redirects): the trace says so as an interrupt, so
	 * that it stays decodable.
	 */
	pr_debug("perf auxsample simulate: thread %d: %#" PRIx64 " -> %#" PRIx64
		 " without a branch\n",
		 thr->tid, thr->pos, start);
	return auxsample_sim__signal(vg->sim, thr->t, thr->pos);
}

static int vg__exit(struct vg *vg, struct vg_proc *p, u64 rec, u64 target)
{
	u64 id = AVG_EXIT_SB(rec);
	unsigned int e = AVG_EXIT_NR(rec), k, i;
	struct vg_thr *thr = p->cur;
	struct vg_exit *x;
	struct vg_sb *sb;
	int err;

	if (id >= p->nr_sbs || !p->sbs[id] || e >= p->sbs[id]->nr_exits || !thr)
		return vg__bad("exit of an unknown superblock");
	sb = p->sbs[id];
	x = &sb->exits[e];
	k = x->insn;
	if (x->is_const)
		target = x->to;
	err = vg__enter(vg, thr, sb);
	for (i = 0; !err && i < k; i++)
		err = auxsample_sim__retire(vg->sim, thr->t, sb->addr[i], NULL, sb->addr[i + 1]);
	if (err)
		return err;
	if (x->jk == AVG_JK_FAULT) {
		/* Not executed: the signal follows, at it. */
		thr->pos = sb->addr[k];
		return 0;
	}
	thr->pos = target;
	/* A REP string instruction loops on itself until it is done. */
	if (target == sb->addr[k] && x->decoded.branch == INTEL_PT_BR_NO_BRANCH &&
	    x->decoded.op == INTEL_PT_OP_OTHER)
		return 0;
	if (!x->decoded.length) {
		/*
		 * Bytes perf cannot decode: only where they went is known, as
		 * an interrupt there and the PGE of the next instruction (not
		 * counted: no decoder could tell it from the trace either).
		 */
		return auxsample_sim__signal(vg->sim, thr->t, sb->addr[k]);
	}
	return auxsample_sim__retire(vg->sim, thr->t, sb->addr[k], &x->decoded, target);
}

static int vg__signal(struct vg *vg, struct vg_proc *p, const u64 *w, size_t nr)
{
	struct vg_thr *thr = p->cur;
	u64 ip, id;
	struct vg_sb *sb;
	int err = 0;

	if (nr < 3 || !thr)
		return vg__bad("signal");
	ip = w[1];
	id = w[2];
	if (!thr->started)
		return 0;
	sb = id < p->nr_sbs ? p->sbs[id] : NULL;
	/* A fault in the middle of a superblock: what ran before it. */
	if (sb && sb->addr[0] == thr->pos && ip != thr->pos) {
		unsigned int i, n = 0;

		while (n < sb->nr_insns && sb->addr[n] != ip)
			n++;
		if (n < sb->nr_insns) {
			err = vg__enter(vg, thr, sb);
			for (i = 0; !err && i < n; i++)
				err = auxsample_sim__retire(vg->sim, thr->t, sb->addr[i], NULL,
							    sb->addr[i + 1]);
			thr->pos = ip;
		}
	}
	return err ?: auxsample_sim__signal(vg->sim, thr->t, ip);
}

static int vg__mmap(struct vg *vg, struct vg_proc *p, const u64 *w, size_t nr)
{
	size_t len = AVG_REC_PAYLOAD(w[0]), name_words = (len + 8) / 8;
	char name[AVG_MAX_NAME + 1];
	struct vg_thr *thr = p->cur;

	if (len > AVG_MAX_NAME || nr < 5 + name_words || !thr)
		return vg__bad("mmap");
	memcpy(name, &w[4], len);
	name[len] = '\0';
	return auxsample_sim__mmap(vg->sim, thr->t, w[1], w[2], w[3], w[4 + name_words], name);
}

/* The size in words of the record at @w, 0 if it does not fit in @nr. */
static size_t vg__record_size(const u64 *w, size_t nr)
{
	u64 pl = AVG_REC_PAYLOAD(w[0]);
	size_t size;

	switch (AVG_REC_TYPE(w[0])) {
	case AVG_START:
		size = 2 + AVG_COMM_LEN / 8;
		break;
	case AVG_THREAD_SWITCH:
	case AVG_SB_EXIT:
	case AVG_THREAD_EXIT:
	case AVG_PROCESS_EXIT:
		size = 1;
		break;
	case AVG_SB_EXIT_TO:
		size = 2;
		break;
	case AVG_SB_DEFINE:
		size = 2 + AVG_SB_DEF_INSNS(pl) + 2 * AVG_SB_DEF_EXITS(pl) +
		       (AVG_SB_DEF_INSNS(pl) + 7) / 8 + (AVG_SB_DEF_BYTES(pl) + 7) / 8;
		break;
	case AVG_MMAP:
		size = 5 + (min_t(u64, pl, AVG_MAX_NAME) + 8) / 8;
		break;
	case AVG_SIGNAL:
	case AVG_THREAD_NEW:
	case AVG_FORK:
		size = 3;
		break;
	default:
		return 0;
	}
	return size <= nr ? size : 0;
}

static int vg__record(struct vg *vg, pid_t pid, const u64 *w, size_t nr)
{
	struct vg_proc *p = vg__proc(vg, pid);
	struct vg_thr *thr;
	unsigned int type = AVG_REC_TYPE(w[0]);

	if (type == AVG_START)
		return vg__start(vg, pid, w, nr);
	if (type == AVG_FORK)
		return vg__fork(vg, pid, w, nr);
	if (!p)
		return vg__bad("a process that did not start");
	switch (type) {
	case AVG_SB_EXIT:
		return vg__exit(vg, p, AVG_REC_PAYLOAD(w[0]), 0);
	case AVG_SB_EXIT_TO:
		return vg__exit(vg, p, AVG_REC_PAYLOAD(w[0]), w[1]);
	case AVG_SB_DEFINE:
		return vg__define(vg, p, w, nr);
	case AVG_THREAD_SWITCH:
		thr = vg__thr(vg, AVG_REC_PAYLOAD(w[0]));
		if (thr && thr->proc != p)
			return vg__bad("switch to another process's thread");
		p->cur = thr;
		return 0;
	case AVG_MMAP:
		return vg__mmap(vg, p, w, nr);
	case AVG_SIGNAL:
		return vg__signal(vg, p, w, nr);
	case AVG_THREAD_NEW:
		return vg__thread_new(vg, p, w, nr);
	case AVG_THREAD_EXIT:
		thr = vg__thr(vg, AVG_REC_PAYLOAD(w[0]));
		return thr ? vg__thr_exit(vg, thr) : 0;
	case AVG_PROCESS_EXIT:
		return vg__proc_exit(vg, p);
	default:
		return vg__bad("unknown type");
	}
}

static int vg__chunk(struct vg *vg, const u64 *w, size_t nr, pid_t pid)
{
	size_t i = 0, size;
	int err = 0;

	while (!err && i < nr) {
		size = vg__record_size(&w[i], nr - i);
		if (!size) {
			pr_err("perf auxsample simulate: record %#" PRIx64
			       " at word %zu of %zu of pid %d's chunk\n",
			       w[i], i, nr, pid);
			return vg__bad("record size");
		}
		err = vg__record(vg, pid, &w[i], size);
		i += size;
	}
	return err;
}

/* The whole chunks in the buffer; a partial one waits for the rest. */
int vg__consume(struct vg *vg)
{
	size_t off = 0;
	int err = 0;

	while (!err && vg->have - off >= 8) {
		u64 header;
		u32 bytes;

		memcpy(&header, vg->buf + off, 8);
		bytes = header & 0xffffffff;
		if (bytes < 8 || bytes > AVG_CHUNK_BYTES || bytes % 8)
			return vg__bad("chunk header");
		if (vg->have - off < bytes)
			break;
		err = vg__chunk(vg, (const u64 *)(vg->buf + off + 8), bytes / 8 - 1, header >> 32);
		off += bytes;
		/* A stop (signal, bound) takes effect a chunk at most later. */
		if (!err && auxsample_sim__check(vg->sim)) {
			vg->stopping = true;
			break;
		}
	}
	memmove(vg->buf, vg->buf + off, vg->have - off);
	vg->have -= off;
	return err;
}
