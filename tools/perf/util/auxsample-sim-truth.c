// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample simulate's ground truth: the true branches and call
 * stack of every sample, written compactly (see auxsample-sim-truth.h
 * for the format).  The text form that every sample once repeated its
 * 1024 branches in was 8 to 11 times the size of the perf.data it
 * described; here each branch is written once, as small differences.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/zalloc.h>

#include "auxsample-sim-truth.h"
#include "debug.h"

/* A record's numbers: the most a sample's fixed fields take, encoded. */
#define TRUTH_RECORD_MAX	(1 + 16 * 10)
#define LEB128_MAX		10	/* bytes of a u64 */

struct truth_buf {
	u8		data[TRUTH_RECORD_MAX];
	unsigned int	len;
};

static void truth_buf__u(struct truth_buf *b, u64 v)
{
	do {
		u8 byte = v & 0x7f;

		v >>= 7;
		b->data[b->len++] = byte | (v ? 0x80 : 0);
	} while (v);
}

/* A difference modulo 2^64, as a signed number: zigzag, then LEB128. */
static void truth_buf__s(struct truth_buf *b, u64 diff)
{
	s64 v = (s64)diff;

	truth_buf__u(b, ((u64)v << 1) ^ (u64)(v >> 63));
}

static int truth__write(struct auxsample_sim_truth *truth, struct truth_buf *b)
{
	if (fwrite(b->data, 1, b->len, truth->file) != b->len)
		return -errno ?: -EIO;
	b->len = 0;
	return 0;
}

/* Write @b when no other record of the largest size would fit. */
static int truth__flush_full(struct auxsample_sim_truth *truth, struct truth_buf *b)
{
	if (b->len + 3 * LEB128_MAX <= sizeof(b->data))
		return 0;
	return truth__write(truth, b);
}

int auxsample_sim_truth__open(struct auxsample_sim_truth *truth, const char *output)
{
	u32 header[2] = {
		htole32(AUXSAMPLE_SIM_TRUTH_VERSION), htole32(AUXSAMPLE_SIM_TRUTH_BRANCHES),
	};
	char sbuf[STRERR_BUFSIZE];

	memset(truth, 0, sizeof(*truth));
	if (asprintf(&truth->path, "%s.truth", output) < 0) {
		truth->path = NULL;
		pr_err("perf auxsample simulate: out of memory\n");
		return -ENOMEM;
	}
	truth->file = fopen(truth->path, "w");
	if (!truth->file ||
	    fwrite(AUXSAMPLE_SIM_TRUTH_MAGIC, 1, 8, truth->file) != 8 ||
	    fwrite(header, 1, sizeof(header), truth->file) != sizeof(header)) {
		int err = errno;

		pr_err("perf auxsample simulate: cannot create %s: %s: name a file in a writable directory with -o\n",
		       truth->path, str_error_r(err, sbuf, sizeof(sbuf)));
		return -err;
	}
	return 0;
}

int auxsample_sim_truth__close(struct auxsample_sim_truth *truth)
{
	struct truth_buf b = { .len = 0 };
	int err;

	if (!truth->file)
		return 0;
	b.data[b.len++] = 'E';
	truth_buf__u(&b, truth->samples);
	err = truth__write(truth, &b);
	if (ferror(truth->file) && !err)
		err = -EIO;
	truth->size = auxsample_sim_truth__size(truth);
	if (fclose(truth->file) && !err)
		err = -errno;
	truth->file = NULL;
	if (err)
		pr_err("cannot write %s: %s\n", truth->path, strerror(-err));
	return err;
}

void auxsample_sim_truth__exit(struct auxsample_sim_truth *truth, bool remove)
{
	if (truth->file) {
		fclose(truth->file);
		truth->file = NULL;
	}
	if (remove && truth->path)
		unlink(truth->path);
	zfree(&truth->path);
}

u64 auxsample_sim_truth__size(const struct auxsample_sim_truth *truth)
{
	off_t pos;

	if (!truth->file)
		return truth->size;
	pos = ftello(truth->file);
	return pos > 0 ? (u64)pos : 0;
}

/* The same test as perf_data's check_backup() for the perf.data itself. */
int auxsample_sim_truth__rotate(const char *output)
{
	char *truth = NULL, *old = NULL, sbuf[STRERR_BUFSIZE];
	struct stat st;
	int err = 0;

	if (stat(output, &st) || !st.st_size)
		return 0;
	if (asprintf(&truth, "%s.truth", output) < 0)
		truth = NULL;
	if (!truth || asprintf(&old, "%s.old.truth", output) < 0) {
		pr_err("perf auxsample simulate: out of memory\n");
		free(truth);
		return -ENOMEM;
	}
	if (!rename(truth, old))
		goto out_free;
	if (errno != ENOENT) {
		err = -errno;
		pr_err("perf auxsample simulate: cannot move %s to %s: %s\n", truth, old,
		       str_error_r(errno, sbuf, sizeof(sbuf)));
	} else if (unlink(old) && errno != ENOENT) {
		/* No truth beside the file: none may seem to describe its .old. */
		err = -errno;
		pr_err("perf auxsample simulate: cannot remove %s: %s\n", old,
		       str_error_r(errno, sbuf, sizeof(sbuf)));
	}
out_free:
	free(truth);
	free(old);
	return err;
}

void auxsample_sim_truth_thread__init(struct auxsample_sim_truth_thread *t, pid_t tid)
{
	memset(t, 0, sizeof(*t));
	t->tid = tid;
}

void auxsample_sim_truth_thread__exit(struct auxsample_sim_truth_thread *t)
{
	zfree(&t->stack);
}

void auxsample_sim_truth_thread__branch(struct auxsample_sim_truth_thread *t, u64 from, u64 to,
					enum auxsample_sim_branch kind)
{
	t->branches[t->nr_branches++ % AUXSAMPLE_SIM_TRUTH_BRANCHES] =
		(struct auxsample_sim_truth_branch){ from, to, kind };
}

int auxsample_sim_truth_thread__call(struct auxsample_sim_truth_thread *t, u64 ret_addr)
{
	if (t->depth == t->stack_cap) {
		unsigned int cap = t->stack_cap ? t->stack_cap * 2 : 256;
		u64 *stack = realloc(t->stack, cap * sizeof(*stack));

		if (!stack)
			return -ENOMEM;
		t->stack = stack;
		t->stack_cap = cap;
	}
	t->stack[t->depth++] = ret_addr;
	return 0;
}

void auxsample_sim_truth_thread__ret(struct auxsample_sim_truth_thread *t, u64 to)
{
	unsigned int i = t->depth;

	while (i > 0) {
		if (t->stack[--i] == to) {
			t->depth = i;
			break;
		}
	}
	/* A return to no frame seen: longjmp or a frame older than exec. */
	if (!i)
		t->depth = 0;
	t->kept = min(t->kept, t->depth);
}

void auxsample_sim_truth_thread__exec(struct auxsample_sim_truth_thread *t)
{
	t->depth = 0;
	t->kept = 0;
}

/* The branches of @t that its sample holds and the file does not yet. */
static int truth__branches(struct auxsample_sim_truth *truth, struct auxsample_sim_truth_thread *t,
			   unsigned int nr)
{
	u64 first = max(t->nr_branches - nr, t->nr_written);
	struct truth_buf b = { .len = 0 };
	int err;

	if (first == t->nr_branches)
		return 0;
	b.data[b.len++] = 'B';
	truth_buf__u(&b, t->tid);
	truth_buf__u(&b, first - t->nr_written);
	truth_buf__u(&b, t->nr_branches - first);
	for (u64 n = first; n < t->nr_branches; n++) {
		const struct auxsample_sim_truth_branch *br =
			&t->branches[n % AUXSAMPLE_SIM_TRUTH_BRANCHES];

		truth_buf__u(&b, br->kind);
		truth_buf__s(&b, br->from - t->base);
		truth_buf__s(&b, br->to - br->from);
		t->base = br->to ?: br->from;
		err = truth__flush_full(truth, &b);
		if (err)
			return err;
	}
	t->nr_written = t->nr_branches;
	return truth__write(truth, &b);
}

static int truth__stack(struct auxsample_sim_truth *truth, struct auxsample_sim_truth_thread *t,
			struct truth_buf *b)
{
	u64 prev = t->kept ? t->stack[t->kept - 1] : 0;
	int err;

	truth_buf__u(b, t->kept);
	truth_buf__u(b, t->depth - t->kept);
	for (unsigned int i = t->kept; i < t->depth; i++) {
		truth_buf__s(b, t->stack[i] - prev);
		prev = t->stack[i];
		err = truth__flush_full(truth, b);
		if (err)
			return err;
	}
	t->kept = t->depth;
	return truth__write(truth, b);
}

static int truth__sample(struct auxsample_sim_truth *truth, struct auxsample_sim_truth_thread *t,
			 const struct auxsample_sim_truth_sample *s, unsigned int nr)
{
	struct truth_buf b = { .len = 0 };
	int err = 0;

	if (!t->announced) {
		b.data[b.len++] = 'T';
		truth_buf__u(&b, t->tid);
		err = truth__write(truth, &b);
		t->announced = true;
	}
	err = err ?: truth__branches(truth, t, nr);
	if (err)
		return err;
	b.data[b.len++] = 'S';
	truth_buf__u(&b, s->nr);
	truth_buf__u(&b, s->pid);
	truth_buf__u(&b, t->tid);
	truth_buf__u(&b, s->cpu);
	truth_buf__u(&b, s->time);
	truth_buf__u(&b, s->ip);
	truth_buf__u(&b, nr);
	err = truth__stack(truth, t, &b);
	if (!err)
		truth->samples++;
	return err;
}

int auxsample_sim_truth__sample(struct auxsample_sim_truth *truth,
				struct auxsample_sim_truth_thread *t,
				const struct auxsample_sim_truth_sample *s)
{
	return truth__sample(truth, t, s, min_t(u64, t->nr_branches, AUXSAMPLE_SIM_TRUTH_BRANCHES));
}

void auxsample_sim_truth_thread__mark(const struct auxsample_sim_truth_thread *t,
				      struct auxsample_sim_truth_mark *m)
{
	m->nr_branches = t->nr_branches;
	m->depth = t->depth;
}

/*
 * The thread rewound to @m for the sample, then as it is: the file's
 * branches stop at @m, and the next sample's go on from there.  The calls
 * since @m only pushed and popped above m->depth (an interrupt's path
 * returns to where it was taken), so the stack below is as it was.
 */
int auxsample_sim_truth__sample_at(struct auxsample_sim_truth *truth,
				   struct auxsample_sim_truth_thread *t,
				   const struct auxsample_sim_truth_sample *s,
				   const struct auxsample_sim_truth_mark *m)
{
	u64 nr_branches = t->nr_branches, since = nr_branches - m->nr_branches;
	unsigned int depth = t->depth, nr;
	int err;

	if (m->nr_branches > nr_branches || m->nr_branches < t->nr_written ||
	    since >= AUXSAMPLE_SIM_TRUTH_BRANCHES)
		return -EINVAL;
	/* The ring still holds the branches before @m that came after since. */
	nr = min_t(u64, m->nr_branches, AUXSAMPLE_SIM_TRUTH_BRANCHES - since);
	t->nr_branches = m->nr_branches;
	t->depth = min(m->depth, depth);
	t->kept = min(t->kept, t->depth);
	err = truth__sample(truth, t, s, nr);
	t->nr_branches = nr_branches;
	t->depth = depth;
	return err;
}
