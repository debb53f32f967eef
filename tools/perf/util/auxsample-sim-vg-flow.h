/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_SIM_VG_FLOW_H
#define __PERF_AUXSAMPLE_SIM_VG_FLOW_H

/*
 * The Valgrind engine's state, shared by its runner (auxsample-sim-vg.c)
 * and the reader of the tool's records (auxsample-sim-vg-flow.c), which
 * turns them into the simulator's events.  Not for use outside the engine.
 */
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "intel-pt-decoder/intel-pt-insn-decoder.h"

typedef u64 ULong;
typedef u32 UInt;
#include "../auxsample-vg/auxsample-vg-proto.h"

struct sim;
struct sim_thread;

#define VG_READ_SIZE		(1024 * 1024)
#define VG_MAX_THREADS		256
#define VG_MAX_PROCS		64

struct vg_exit {
	unsigned int		insn;		/* index of the instruction it leaves from */
	unsigned int		jk;		/* AVG_JK_* */
	bool			is_const;
	u64			to;
	struct intel_pt_insn	decoded;
};

struct vg_sb {
	struct vg_sb		*next;		/* all of them, to free */
	unsigned int		nr_insns;
	unsigned int		nr_exits;
	u64			*addr;
	struct vg_exit		*exits;
};

struct vg_proc {
	pid_t			pid;
	bool			used;
	char			comm[AVG_COMM_LEN];
	struct vg_sb		**sbs;		/* by id */
	u64			nr_sbs;
	struct vg_thr		*cur;
};

struct vg_thr {
	pid_t			tid;
	struct vg_proc		*proc;
	struct sim_thread	*t;
	bool			started;	/* its trace began */
	u64			pos;		/* where it goes on */
};

struct vg {
	struct sim		*sim;
	int			fd;
	pid_t			pid;
	bool			started;	/* a program started */
	bool			stopping;
	bool			reaped;
	int			status;
	char			dir[64];
	char			fifo[80];
	u8			*buf;
	size_t			have;
	struct vg_sb		*all_sbs;
	struct vg_proc		procs[VG_MAX_PROCS];
	struct vg_thr		thrs[VG_MAX_THREADS];
};

/*
 * The whole chunks of the tool's records in @vg->buf, turned into the
 * simulator's events; a partial one waits for the rest.  A stop sets
 * @vg->stopping.
 */
int vg__consume(struct vg *vg);
/* @thr ended: its trace is written, its slot free. */
int vg__thr_exit(struct vg *vg, struct vg_thr *thr);
void vg__proc_forget_sbs(struct vg_proc *p);

#endif /* __PERF_AUXSAMPLE_SIM_VG_FLOW_H */
