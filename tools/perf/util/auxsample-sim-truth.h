/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_SIM_TRUTH_H
#define __PERF_AUXSAMPLE_SIM_TRUTH_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * The ground truth of perf auxsample simulate, <output>.truth: for each
 * sample, the true last branches of its thread (up to
 * AUXSAMPLE_SIM_TRUTH_BRANCHES, newest first) and its true call stack.
 *
 * Consecutive samples of a thread share most of their branches, so the
 * file holds each branch once: a thread's branches go into the file when
 * a sample first needs them, and a sample says how many of its thread's
 * newest branches are its own.  The file is a header and a stream of
 * records, so that whatever a run wrote before it stopped can be read.
 *
 * Header, 16 bytes: the magic "AUXTRUTH", then the version (2) and
 * AUXSAMPLE_SIM_TRUTH_BRANCHES, each a little-endian u32.  A record is a
 * type byte and numbers, each an unsigned LEB128 (u) or a zigzag-encoded
 * signed LEB128 (s) of a difference taken modulo 2^64:
 *
 *   'T' u tid			a thread starts: forget any earlier @tid
 *   'B' u tid u skip u n	@n branches of @tid, after @skip of its
 *				branches that no sample holds; each is
 *       u kind s (from - base) s (to - from)
 *				base: the target of the branch before, or
 *				its source where the target is 0
 *   'S' u nr u pid u tid u cpu u time u ip u branches u kept u n
 *				a sample: its branches are the newest
 *				@branches of @tid; its call stack, outermost
 *				first, is the first @kept return addresses
 *				of @tid's previous sample, then @n more,
 *       s (addr - prev)	prev: the address before (0 for the first)
 *   'E' u samples		the end: the file is whole
 *
 * Kinds: 0 cond, 1 jump, 2 ind_jump, 3 call, 4 ind_call, 5 ret, 6 far,
 * 7 intr.  A far branch into the kernel (a syscall) has target 0: user-only
 * trace does not show where it went.  intr, kernel-traced only: an
 * interrupt (a PMI) into the kernel's code.  The reader of the tests,
 * tests/shell/lib/auxsample_truth.py, prints a file as text (--dump).
 */
#define AUXSAMPLE_SIM_TRUTH_BRANCHES	1024
#define AUXSAMPLE_SIM_TRUTH_MAGIC	"AUXTRUTH"
#define AUXSAMPLE_SIM_TRUTH_VERSION	2

enum auxsample_sim_branch {
	SB_COND, SB_JUMP, SB_IND_JUMP, SB_CALL, SB_IND_CALL, SB_RET, SB_FAR, SB_INTR,
};

struct auxsample_sim_truth_branch {
	u64				from;
	u64				to;
	enum auxsample_sim_branch	kind;
};

/* What a thread has done so far, as its samples show it. */
struct auxsample_sim_truth_thread {
	pid_t		tid;
	bool		announced;	/* its 'T' record written */
	/* The newest branches: branch n is at n % AUXSAMPLE_SIM_TRUTH_BRANCHES. */
	struct auxsample_sim_truth_branch branches[AUXSAMPLE_SIM_TRUTH_BRANCHES];
	u64		nr_branches;	/* since the thread started */
	u64		nr_written;	/* up to here in the file, or skipped */
	u64		base;		/* of the next branch written */
	u64		*stack;		/* return addresses, outermost first */
	unsigned int	depth;
	unsigned int	stack_cap;
	unsigned int	kept;		/* entries unchanged since the last sample */
};

struct auxsample_sim_truth {
	FILE		*file;
	char		*path;
	u64		samples;
	u64		size;		/* once closed */
};

/* @truth's <output>.truth, for writing. */
int auxsample_sim_truth__open(struct auxsample_sim_truth *truth, const char *output);
/* The end record, then close: 0, or a negative errno if anything failed. */
int auxsample_sim_truth__close(struct auxsample_sim_truth *truth);
/* Free @truth; a file still open is closed as it is; @remove: delete it. */
void auxsample_sim_truth__exit(struct auxsample_sim_truth *truth, bool remove);
/* Bytes written so far. */
u64 auxsample_sim_truth__size(const struct auxsample_sim_truth *truth);
/*
 * perf writes <output>.old when it replaces <output>: move <output>.truth
 * along to <output>.old.truth, so that each file keeps its truth.
 */
int auxsample_sim_truth__rotate(const char *output);

void auxsample_sim_truth_thread__init(struct auxsample_sim_truth_thread *t, pid_t tid);
void auxsample_sim_truth_thread__exit(struct auxsample_sim_truth_thread *t);
void auxsample_sim_truth_thread__branch(struct auxsample_sim_truth_thread *t, u64 from, u64 to,
					enum auxsample_sim_branch kind);
int auxsample_sim_truth_thread__call(struct auxsample_sim_truth_thread *t, u64 ret_addr);
void auxsample_sim_truth_thread__ret(struct auxsample_sim_truth_thread *t, u64 to);
/* exec: a new program has no callers. */
void auxsample_sim_truth_thread__exec(struct auxsample_sim_truth_thread *t);

struct auxsample_sim_truth_sample {
	u64	nr;
	pid_t	pid;
	int	cpu;
	u64	time;
	u64	ip;
};

/* @s of thread @t, with its branches and call stack. */
int auxsample_sim_truth__sample(struct auxsample_sim_truth *truth,
				struct auxsample_sim_truth_thread *t,
				const struct auxsample_sim_truth_sample *s);

/*
 * Where a thread was at a sample's point, for a sample written later:
 * kernel-traced, a sample is written at perf's AUX copy, after its
 * interrupt and the NMI path, and its truth is what came before.
 */
struct auxsample_sim_truth_mark {
	u64		nr_branches;
	unsigned int	depth;
};

void auxsample_sim_truth_thread__mark(const struct auxsample_sim_truth_thread *t,
				      struct auxsample_sim_truth_mark *m);
/* @s of thread @t as it was at @m: the branches and calls since left out. */
int auxsample_sim_truth__sample_at(struct auxsample_sim_truth *truth,
				   struct auxsample_sim_truth_thread *t,
				   const struct auxsample_sim_truth_sample *s,
				   const struct auxsample_sim_truth_mark *m);

#endif /* __PERF_AUXSAMPLE_SIM_TRUTH_H */
