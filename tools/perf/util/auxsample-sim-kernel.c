// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample simulate: the simulated machine's kernel, its code and
 * how it runs (see auxsample-sim-kernel.h).
 *
 * Each function is a list of operations; laying them out gives the
 * image's bytes (real x86-64 instructions that both perf's Intel PT
 * decoder and libauxsample decode), walking them gives the control flow
 * with the same addresses.  One description serves both, so the trace
 * the simulator writes is the code's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/align.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>

#include "auxsample-sim-kernel.h"
#include "auxsample-sim-vmlinux.h"

enum kop_type {
	K_END,
	K_NOP,		/* @arg NOPs */
	K_CALL,		/* call rel32 to function @arg */
	K_ICALL,	/* movabs $fn,%rax; call *%rax */
	K_LOOP,		/* mov $arg,%ecx; 1: nop; dec %ecx; jnz 1b */
	K_SKIP,		/* je +1 taken over a nop */
	K_NOSKIP,	/* jne +1 not taken */
	K_JMP,		/* jmp rel32 over two NOPs */
	K_IJMP,		/* lea 2(%rip),%rax; jmp *%rax over two NOPs */
	K_RET,
	K_IRET,		/* iretq to the path's return IP */
	K_SYSRET,	/* sysretq to the path's return IP */
	K_STOP,		/* wrmsr: TraceEn cleared (the AUX copy) */
	K_RESTART,	/* wrmsr: TraceEn set again */
	K_SAMPLE,	/* no code: perf_prepare_sample() reads the time here */
	K_TP_SITE,	/* no code: the next K_ICALL is the tracepoint's call site */
	K_SCHED_CALL,	/* jne over call rel32 to @arg: taken unless the syscall blocks */
	K_TP_CALL,	/* jne over call rel32 to @arg: taken unless the tracepoint is on */
};

struct kop {
	u8	type;
	u8	arg;
};

enum {
	F_ENTRY_SYSCALL, F_DO_SYSCALL, F_SYS_WORK,
	F_NMI, F_EXC_NMI, F_PERF_NMI, F_PMU_IRQ, F_OVERFLOW, F_PREPARE,
	F_OUTPUT, F_AUX_OUTPUT, F_SNAPSHOT,
	F_SCHEDULE, F_PICK_NEXT, F_TRACEITER, F_PERF_TRACE, F_TP_EVENT,
	F_MAX,
};

#define OP(t, a)	{ K_##t, a }
#define END		{ K_END, 0 }

static const struct kop op_entry_syscall[] = {
	OP(NOP, 3), OP(CALL, F_DO_SYSCALL), OP(NOP, 1), OP(SYSRET, 0), END };
static const struct kop op_do_syscall[] = {
	OP(NOP, 2), OP(SKIP, 0), OP(ICALL, F_SYS_WORK), OP(SCHED_CALL, F_SCHEDULE), OP(RET, 0),
	END };
static const struct kop op_sys_work[] = {
	OP(LOOP, 3), OP(NOSKIP, 0), OP(JMP, 0), OP(RET, 0), END };
static const struct kop op_nmi[] = {
	OP(NOP, 2), OP(CALL, F_EXC_NMI), OP(IRET, 0), END };
static const struct kop op_exc_nmi[] = {
	OP(NOP, 1), OP(ICALL, F_PERF_NMI), OP(RET, 0), END };
static const struct kop op_perf_nmi[] = {
	OP(CALL, F_PMU_IRQ), OP(RET, 0), END };
static const struct kop op_pmu_irq[] = {
	OP(LOOP, 4), OP(IJMP, 0), OP(CALL, F_OVERFLOW), OP(RET, 0), END };
static const struct kop op_overflow[] = {
	OP(CALL, F_PREPARE), OP(CALL, F_OUTPUT), OP(RET, 0), END };
static const struct kop op_prepare[] = {
	OP(SAMPLE, 0), OP(NOP, 2), OP(SKIP, 0), OP(RET, 0), END };
static const struct kop op_output[] = {
	OP(CALL, F_AUX_OUTPUT), OP(RET, 0), END };
static const struct kop op_aux_output[] = {
	OP(ICALL, F_SNAPSHOT), OP(RET, 0), END };
static const struct kop op_snapshot[] = {
	OP(NOP, 1), OP(STOP, 0), OP(NOP, 3), OP(RESTART, 0), OP(RET, 0), END };
static const struct kop op_schedule[] = {
	OP(NOP, 1), OP(CALL, F_PICK_NEXT), OP(NOSKIP, 0), OP(TP_CALL, F_TRACEITER), OP(NOP, 1),
	OP(RET, 0), END };
static const struct kop op_pick_next[] = {
	OP(LOOP, 2), OP(IJMP, 0), OP(RET, 0), END };
static const struct kop op_traceiter[] = {
	OP(NOP, 1), OP(TP_SITE, 0), OP(ICALL, F_PERF_TRACE), OP(RET, 0), END };
static const struct kop op_perf_trace[] = {
	OP(NOP, 1), OP(CALL, F_TP_EVENT), OP(RET, 0), END };
static const struct kop op_tp_event[] = {
	OP(SAMPLE, 0), OP(CALL, F_OUTPUT), OP(RET, 0), END };

static const struct {
	const char		*name;
	const struct kop	*ops;
} kfuncs[F_MAX] = {
	[F_ENTRY_SYSCALL]	= { "entry_SYSCALL_64",		op_entry_syscall },
	[F_DO_SYSCALL]		= { "do_syscall_64",		op_do_syscall },
	[F_SYS_WORK]		= { "ksys_work",		op_sys_work },
	[F_NMI]			= { "asm_exc_nmi",		op_nmi },
	[F_EXC_NMI]		= { "exc_nmi",			op_exc_nmi },
	[F_PERF_NMI]		= { "perf_event_nmi_handler",	op_perf_nmi },
	[F_PMU_IRQ]		= { "intel_pmu_handle_irq",	op_pmu_irq },
	[F_OVERFLOW]		= { "perf_event_overflow",	op_overflow },
	[F_PREPARE]		= { "perf_prepare_sample",	op_prepare },
	[F_OUTPUT]		= { "perf_output_sample",	op_output },
	[F_AUX_OUTPUT]		= { "perf_aux_sample_output",	op_aux_output },
	[F_SNAPSHOT]		= { "pt_event_snapshot_aux",	op_snapshot },
	[F_SCHEDULE]		= { "__schedule",		op_schedule },
	[F_PICK_NEXT]		= { "pick_next_task",		op_pick_next },
	[F_TRACEITER]		= { "__traceiter_sched_switch",	op_traceiter },
	[F_PERF_TRACE]		= { "perf_trace_sched_switch",	op_perf_trace },
	[F_TP_EVENT]		= { "perf_tp_event",		op_tp_event },
};

#define KTEXT_MAX	4096
#define KFUNC_ALIGN	16

struct sim_kernel {
	u8	text[KTEXT_MAX];
	size_t	size;
	u64	addr[F_MAX];
	u64	end[F_MAX];
	bool	tp_on;		/* perf samples the tracepoint */
};

/* --- the image --- */

static void put32(u8 *p, u32 v)
{
	memcpy(p, &v, sizeof(v));
}

static void put64(u8 *p, u64 v)
{
	memcpy(p, &v, sizeof(v));
}

/*
 * The bytes of @op at @pc into @p; returns their number.  Long, as a
 * table is: one short case per kind of op, read side by side.
 */
static size_t kop__emit(struct sim_kernel *k, const struct kop *op, u64 pc, u8 *p)
{
	switch (op->type) {
	case K_NOP:
		memset(p, 0x90, op->arg);
		return op->arg;
	case K_CALL:
		p[0] = 0xe8;
		put32(p + 1, (u32)(k->addr[op->arg] - (pc + 5)));
		return 5;
	case K_ICALL:
		p[0] = 0x48;
		p[1] = 0xb8;
		put64(p + 2, k->addr[op->arg]);
		p[10] = 0xff;
		p[11] = 0xd0;
		return 12;
	case K_LOOP:
		p[0] = 0xb9;
		put32(p + 1, op->arg);
		p[5] = 0x90;
		p[6] = 0xff;
		p[7] = 0xc9;
		p[8] = 0x75;
		p[9] = 0xfb;	/* back to the nop */
		return 10;
	case K_SKIP:
	case K_NOSKIP:
		p[0] = op->type == K_SKIP ? 0x74 : 0x75;
		p[1] = 0x01;
		p[2] = 0x90;
		return 3;
	case K_JMP:
		p[0] = 0xe9;
		put32(p + 1, 2);
		p[5] = 0x90;
		p[6] = 0x90;
		return 7;
	case K_IJMP:
		memcpy(p, "\x48\x8d\x05\x02\x00\x00\x00\xff\xe0\x90\x90", 11);
		return 11;
	case K_RET:
		p[0] = 0xc3;
		return 1;
	case K_IRET:
		p[0] = 0x48;
		p[1] = 0xcf;
		return 2;
	case K_SYSRET:
		memcpy(p, "\x48\x0f\x07", 3);
		return 3;
	case K_STOP:
	case K_RESTART:
		p[0] = 0x0f;
		p[1] = 0x30;
		return 2;
	case K_SCHED_CALL:
	case K_TP_CALL:
		/* A static key would patch a NOP; a Jcc shows the same choice. */
		p[0] = 0x75;
		p[1] = 0x05;
		p[2] = 0xe8;
		put32(p + 3, (u32)(k->addr[op->arg] - (pc + 7)));
		return 7;
	case K_SAMPLE:
	case K_END:
	default:
		return 0;
	}
}

/* Lay the functions out; twice, the second time with every address known. */
static void sim_kernel__layout(struct sim_kernel *k)
{
	for (int pass = 0; pass < 2; pass++) {
		u64 pc = SIM_KERNEL_BASE;

		for (int f = 0; f < F_MAX; f++) {
			pc = ALIGN(pc, KFUNC_ALIGN);
			k->addr[f] = pc;
			for (const struct kop *op = kfuncs[f].ops; op->type != K_END; op++)
				pc += kop__emit(k, op, pc, k->text + (pc - SIM_KERNEL_BASE));
			k->end[f] = pc;
		}
		k->size = pc - SIM_KERNEL_BASE;
	}
}

struct sim_kernel *sim_kernel__new(void)
{
	struct sim_kernel *k = zalloc(sizeof(*k));

	if (!k)
		return NULL;
	/* int3 between functions, as the kernel pads them. */
	memset(k->text, 0xcc, sizeof(k->text));
	sim_kernel__layout(k);
	return k;
}

void sim_kernel__enable_tracepoint(struct sim_kernel *k)
{
	k->tp_on = true;
}

void sim_kernel__delete(struct sim_kernel *k)
{
	free(k);
}

const u8 *sim_kernel__text(const struct sim_kernel *k, size_t *size)
{
	*size = k->size;
	return k->text;
}

u64 sim_kernel__syscall_entry(const struct sim_kernel *k)
{
	return k->addr[F_ENTRY_SYSCALL];
}

int sim_kernel__write_vmlinux(const struct sim_kernel *k, const char *path, u8 *build_id)
{
	struct sim_vmlinux_sym syms[F_MAX + 3];
	int n = 0;

	syms[n++] = (struct sim_vmlinux_sym){ "_text", SIM_KERNEL_BASE, 0, false };
	syms[n++] = (struct sim_vmlinux_sym){ "_stext", SIM_KERNEL_BASE, 0, false };
	for (int f = 0; f < F_MAX; f++)
		syms[n++] = (struct sim_vmlinux_sym){ kfuncs[f].name, k->addr[f],
						      k->end[f] - k->addr[f], true };
	syms[n++] = (struct sim_vmlinux_sym){ "_etext", SIM_KERNEL_BASE + k->size, 0, false };
	return sim_vmlinux__write(path, SIM_KERNEL_BASE, k->text, k->size, syms, n, build_id);
}

/*
 * What perf record --kcore copies into <output>/kcore_dir, for @k: its
 * kallsyms, an empty modules list and the image as kcore (an ELF file
 * whose PT_LOAD is the kernel's text at its address).
 */
int sim_kernel__write_kcore_dir(const struct sim_kernel *k, const char *dir)
{
	char path[4096];
	u8 id[SIM_VMLINUX_BUILD_ID_SIZE];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "%016llx T _text\n%016llx T _stext\n", SIM_KERNEL_BASE, SIM_KERNEL_BASE);
	for (int fn = 0; fn < F_MAX; fn++)
		fprintf(f, "%016llx T %s\n", (unsigned long long)k->addr[fn], kfuncs[fn].name);
	fprintf(f, "%016llx T _etext\n", (unsigned long long)(SIM_KERNEL_BASE + k->size));
	if (fclose(f))
		return -errno;
	snprintf(path, sizeof(path), "%s/modules", dir);
	f = fopen(path, "w");
	if (!f || fclose(f))
		return -errno;
	snprintf(path, sizeof(path), "%s/kcore", dir);
	err = sim_kernel__write_vmlinux(k, path, id);
	return err;
}

/* --- the control flow --- */

struct kwalk {
	const struct sim_kernel	*k;
	sim_kstep_fn		fn;
	void			*arg;
	u64			far_to;		/* where IRET/SYSRET go */
	bool			blocks;		/* the syscall schedules */
	unsigned int		depth;
};

#define KWALK_MAX_DEPTH	16

static int kwalk__step(struct kwalk *w, enum sim_kstep_type type, u64 from, u64 to, u64 ret,
		       bool taken)
{
	struct sim_kstep step = { type, from, to, ret, taken };

	return w->fn(w->arg, &step);
}

static int kwalk__func(struct kwalk *w, int f, u64 ret);

static int kwalk__op(struct kwalk *w, const struct kop *op, u64 pc, u64 ret)
{
	bool on = op->type == K_SCHED_CALL ? w->blocks : w->k->tp_on;
	u64 loop;
	int err = 0;

	switch (op->type) {
	case K_CALL:
		err = kwalk__step(w, SIM_KSTEP_CALL, pc, w->k->addr[op->arg], pc + 5, true);
		return err ?: kwalk__func(w, op->arg, pc + 5);
	case K_ICALL:
		err = kwalk__step(w, SIM_KSTEP_IND_CALL, pc + 10, w->k->addr[op->arg], pc + 12,
				  true);
		return err ?: kwalk__func(w, op->arg, pc + 12);
	case K_LOOP:
		loop = pc + 5;
		for (unsigned int i = 1; i <= op->arg && !err; i++)
			err = kwalk__step(w, SIM_KSTEP_COND, pc + 8, loop, 0, i < op->arg);
		return err;
	case K_SKIP:
	case K_NOSKIP:
		return kwalk__step(w, SIM_KSTEP_COND, pc, pc + 3, 0, op->type == K_SKIP);
	case K_JMP:
		return kwalk__step(w, SIM_KSTEP_JUMP, pc, pc + 7, 0, true);
	case K_IJMP:
		return kwalk__step(w, SIM_KSTEP_IND_JUMP, pc + 7, pc + 11, 0, true);
	case K_RET:
		return kwalk__step(w, SIM_KSTEP_RET, pc, ret, 0, true);
	case K_IRET:
	case K_SYSRET:
		return kwalk__step(w, SIM_KSTEP_FAR, pc, w->far_to, 0, true);
	case K_STOP:
		return kwalk__step(w, SIM_KSTEP_STOP, pc, pc + 2, 0, true);
	case K_RESTART:
		return kwalk__step(w, SIM_KSTEP_RESTART, pc, pc + 2, 0, true);
	case K_SAMPLE:
		return kwalk__step(w, SIM_KSTEP_SAMPLE, pc, 0, 0, true);
	case K_TP_SITE:
		return kwalk__step(w, SIM_KSTEP_TRACEPOINT, pc, 0, 0, true);
	case K_SCHED_CALL:
	case K_TP_CALL:
		err = kwalk__step(w, SIM_KSTEP_COND, pc, pc + 7, 0, !on);
		if (err || !on)
			return err;
		err = kwalk__step(w, SIM_KSTEP_CALL, pc + 2, w->k->addr[op->arg], pc + 7, true);
		return err ?: kwalk__func(w, op->arg, pc + 7);
	default:
		return 0;
	}
}

static int kwalk__func(struct kwalk *w, int f, u64 ret)
{
	u64 pc = w->k->addr[f];
	int err = 0;

	if (++w->depth > KWALK_MAX_DEPTH)
		return -ELOOP;
	for (const struct kop *op = kfuncs[f].ops; op->type != K_END && !err; op++) {
		u8 scratch[16];

		err = kwalk__op(w, op, pc, ret);
		pc += kop__emit((struct sim_kernel *)w->k, op, pc, scratch);
	}
	w->depth--;
	return err;
}

static int sim_kernel__walk(const struct sim_kernel *k, int f, u64 far_to, bool blocks,
			    sim_kstep_fn fn, void *arg)
{
	struct kwalk w = { .k = k, .fn = fn, .arg = arg, .far_to = far_to, .blocks = blocks };

	return kwalk__func(&w, f, 0);
}

int sim_kernel__syscall(const struct sim_kernel *k, u64 ret_ip, bool blocks, sim_kstep_fn fn,
			void *arg)
{
	return sim_kernel__walk(k, F_ENTRY_SYSCALL, ret_ip, blocks, fn, arg);
}

int sim_kernel__pmi(const struct sim_kernel *k, u64 ip, sim_kstep_fn fn, void *arg)
{
	struct sim_kstep step = { SIM_KSTEP_ASYNC, ip, k->addr[F_NMI], 0, true };

	return fn(arg, &step) ?: sim_kernel__walk(k, F_NMI, ip, false, fn, arg);
}
