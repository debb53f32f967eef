/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_SIM_TRACING_H
#define __PERF_AUXSAMPLE_SIM_TRACING_H

#include <linux/compiler.h>
#include <linux/types.h>

struct feat_writer;

/*
 * The simulated kernel's one tracepoint, sched:sched_switch: its ID and
 * its record (include/trace/events/sched.h), as perf samples carry it in
 * PERF_SAMPLE_RAW.  The padding makes the raw size plus its u32 size a
 * multiple of 8, as the kernel pads it.
 */
#define SIM_TP_SCHED_SWITCH_ID	316

struct sim_sched_switch {
	u16	common_type;
	u8	common_flags;
	u8	common_preempt_count;
	s32	common_pid;
	char	prev_comm[16];
	s32	prev_pid;
	s32	prev_prio;
	s64	prev_state;
	char	next_comm[16];
	s32	next_pid;
	s32	next_prio;
	u32	pad;
} __packed;

/*
 * The HEADER_TRACING_DATA feature perf record writes for tracepoint
 * events (trace-event-info.c's format, read by trace-event-read.c): the
 * ring buffer's header page and the event's format file, as the
 * simulated kernel's tracefs would give them.  perf reads a tracepoint
 * event's name and fields from it, and refuses the file without it.
 */
int auxsample_sim_tracing__write(struct feat_writer *fw);

#endif /* __PERF_AUXSAMPLE_SIM_TRACING_H */
