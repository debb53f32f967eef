/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_SIM_KERNEL_H
#define __PERF_AUXSAMPLE_SIM_KERNEL_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * The simulated machine's kernel: a small kernel-like image, linked at
 * kernel addresses, whose code perf auxsample simulate "runs" in its
 * kernel-traced mode.  It has the paths a kernel-traced AUX sample goes
 * through: the syscall entry, the NMI entry of a PMI down to perf's AUX
 * copy (pt_event_snapshot_aux(): TraceEn cleared and set by WRMSR), and
 * a tracepoint call site in __schedule() that calls into perf the same
 * way; with calls, loops, indirect calls and jumps as kernel code has.
 *
 * The walk of a path gives its steps, in order, to a callback: every
 * branch (taken or not) with its addresses as laid out in the image, the
 * point where perf_prepare_sample() reads the sample's time, and the
 * trace's stop and restart around the AUX copy.
 */
#define SIM_KERNEL_BASE		0xffffffff81000000ULL

enum sim_kstep_type {
	SIM_KSTEP_COND,		/* from, to (taken), taken */
	SIM_KSTEP_JUMP,
	SIM_KSTEP_IND_JUMP,
	SIM_KSTEP_CALL,		/* ret: the return address */
	SIM_KSTEP_IND_CALL,
	SIM_KSTEP_RET,
	SIM_KSTEP_FAR,		/* sysret, iret */
	SIM_KSTEP_ASYNC,	/* the PMI: an interrupt at from */
	SIM_KSTEP_SAMPLE,	/* perf_prepare_sample() reads the time */
	SIM_KSTEP_STOP,		/* TraceEn cleared; to: the next IP */
	SIM_KSTEP_RESTART,	/* TraceEn set again; to: the next IP */
	SIM_KSTEP_TRACEPOINT,	/* from: the tracepoint's call site, a sample's point */
};

struct sim_kstep {
	enum sim_kstep_type	type;
	u64			from;
	u64			to;
	u64			ret;
	bool			taken;
};

typedef int (*sim_kstep_fn)(void *arg, const struct sim_kstep *step);

struct sim_kernel;

struct sim_kernel *sim_kernel__new(void);
void sim_kernel__delete(struct sim_kernel *k);
/* perf samples the tracepoint: __schedule() calls into it (a static key). */
void sim_kernel__enable_tracepoint(struct sim_kernel *k);

/* The image's code, and where it ends. */
const u8 *sim_kernel__text(const struct sim_kernel *k, size_t *size);
/* Where the PMI of a syscall is taken: the entry's first instruction. */
u64 sim_kernel__syscall_entry(const struct sim_kernel *k);

/* Write the image as an ELF vmlinux with symbols and @build_id (20 bytes). */
int sim_kernel__write_vmlinux(const struct sim_kernel *k, const char *path, u8 *build_id);
/* Fill @dir as perf record --kcore fills <output>/kcore_dir. */
int sim_kernel__write_kcore_dir(const struct sim_kernel *k, const char *dir);

/*
 * The paths.  __syscall(): the syscall entry up to the SYSRET to @ret_ip
 * (the syscall's FAR branch into the entry is the caller's); a syscall
 * that @blocks calls __schedule(), and with the tracepoint on that goes
 * through the tracepoint's call site (SIM_KSTEP_TRACEPOINT) into perf's
 * handling of its sample, to the AUX copy, and back.  __pmi(): the PMI
 * taken at @ip (user, or the syscall entry), through perf to the AUX copy
 * and back with IRET.
 */
int sim_kernel__syscall(const struct sim_kernel *k, u64 ret_ip, bool blocks, sim_kstep_fn fn,
			void *arg);
int sim_kernel__pmi(const struct sim_kernel *k, u64 ip, sim_kstep_fn fn, void *arg);

#endif /* __PERF_AUXSAMPLE_SIM_KERNEL_H */
