// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample simulate: what each instruction and each sample put in
 * a thread's Intel PT stream and its ground truth, given where the
 * instruction went, and the simulated kernel's code around syscalls and
 * PMIs in kernel-traced mode (auxsample-sim-kernel.c).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <auxsample/pt-writer.h>
#include "auxsample-sim.h"
#include "auxsample-sim-core.h"
#include "auxsample-sim-kernel.h"
#include "intel-pt-decoder/intel-pt-insn-decoder.h"

/*
 * The PMI's path through the kernel, in TSC ticks: from the overflow to
 * the perf_clock() read of perf_prepare_sample() (NMI entry, the PMU's
 * handler, perf_event_overflow()), the AUX copy of
 * pt_event_snapshot_aux() (TraceEn clear to set), and from there back to
 * user code.  A few microseconds in all on hardware; what matters to
 * decoders is the order: the PMI's TIP.PGD, the sample's time, the TSC of
 * the restarted trace, the TIP.PGE.
 */
#define SIM_PMI_TO_SAMPLE_TIME	2000
#define SIM_AUX_COPY_TIME	1000
#define SIM_PMI_RETURN_TIME	1000

/* Time passes for @t: the MTCs of that time, in the kernel too. */
static int sim__pass_time(struct sim *sim, struct sim_thread *t, u64 ticks)
{
	sim->tsc += ticks;
	return auxsample_pt_writer__tick(t->pt, sim->tsc);
}

static int sim__write_truth(struct sim *sim, struct sim_thread *t, u64 ip)
{
	return auxsample_sim_truth__sample(&sim->truth, &t->truth,
					   &(struct auxsample_sim_truth_sample){
						.nr = sim->nr_samples, .pid = t->pid,
						.cpu = t->cpu, .time = sim->tsc, .ip = ip,
					   });
}

struct sim_kctx {
	struct sim		*sim;
	struct sim_thread	*t;
	u64			sample_ip;
	struct auxsample_sim_truth_mark mark;	/* the thread at the sample point */
};

/* The truth of a sample written after its point: what came before it. */
static int sim__write_truth_before(struct sim *sim, struct sim_kctx *c)
{
	struct sim_thread *t = c->t;

	return auxsample_sim_truth__sample_at(&sim->truth, &t->truth,
					      &(struct auxsample_sim_truth_sample){
						.nr = sim->nr_samples, .pid = t->pid,
						.cpu = t->cpu, .time = sim->tsc,
						.ip = c->sample_ip,
					      }, &c->mark);
}

/* One step of the kernel's code: its trace and its truth. */
static int sim__kstep(void *arg, const struct sim_kstep *s)
{
	struct sim_kctx *c = arg;
	struct sim_thread *t = c->t;
	struct auxsample_pt_writer *pt = t->pt;
	bool ind = s->type == SIM_KSTEP_IND_CALL;
	int err;

	switch (s->type) {
	case SIM_KSTEP_COND:
		if (s->taken)
			sim_thread__branch(t, s->from, s->to, SB_COND);
		return auxsample_pt_writer__cond(pt, s->taken);
	case SIM_KSTEP_JUMP:
		sim_thread__branch(t, s->from, s->to, SB_JUMP);
		return 0;
	case SIM_KSTEP_IND_JUMP:
		sim_thread__branch(t, s->from, s->to, SB_IND_JUMP);
		return auxsample_pt_writer__indirect(pt, s->to);
	case SIM_KSTEP_CALL:
	case SIM_KSTEP_IND_CALL:
		sim_thread__branch(t, s->from, s->to, ind ? SB_IND_CALL : SB_CALL);
		if (sim_thread__call(t, s->ret))
			return -ENOMEM;
		return auxsample_pt_writer__call(pt, s->ret, ind, s->to);
	case SIM_KSTEP_RET:
		sim_thread__branch(t, s->from, s->to, SB_RET);
		sim_thread__ret(t, s->to);
		return auxsample_pt_writer__ret(pt, s->to);
	case SIM_KSTEP_FAR:
		sim_thread__branch(t, s->from, s->to, SB_FAR);
		return auxsample_pt_writer__indirect(pt, s->to);
	case SIM_KSTEP_ASYNC:
		auxsample_sim_truth_thread__mark(&t->truth, &c->mark);
		sim_thread__branch(t, s->from, s->to, SB_INTR);
		return auxsample_pt_writer__async(pt, s->from, s->to);
	case SIM_KSTEP_TRACEPOINT:
		/* The tracepoint's sample: its point is the call site. */
		c->sample_ip = s->from;
		auxsample_sim_truth_thread__mark(&t->truth, &c->mark);
		return 0;
	case SIM_KSTEP_SAMPLE:
		return sim__pass_time(c->sim, t, SIM_PMI_TO_SAMPLE_TIME);
	case SIM_KSTEP_STOP:
		err = c->sim->opts->full_trace ? 0 : auxsample_pt_writer__stop_at(pt, s->from);
		if (!err)
			err = sim__write_sample(c->sim, t, c->sample_ip);
		if (!err)
			err = sim__write_truth_before(c->sim, c);
		t->insns = 0;
		return err;
	case SIM_KSTEP_RESTART:
		if (c->sim->opts->full_trace)
			return 0;
		return sim__pass_time(c->sim, t, SIM_AUX_COPY_TIME) ?:
		       auxsample_pt_writer__restart_at(pt, s->to);
	default:
		return -EINVAL;
	}
}

/*
 * Kernel-traced, the PMI is in the trace: an interrupt at the sample's IP
 * (the user IP, or the syscall entry where a syscall's PMI is taken),
 * the NMI path to perf's AUX copy, where the trace stops and starts again,
 * and IRET; the sample's truth is what came before the interrupt.
 */
static int sim__sample_kernel(struct sim *sim, struct sim_thread *t, u64 ip)
{
	struct sim_kctx c = {
		.sim = sim, .t = t,
		.sample_ip = t->in_kernel ? sim_kernel__syscall_entry(sim->kernel) : ip,
	};

	return sim_kernel__pmi(sim->kernel, c.sample_ip, sim__kstep, &c) ?:
	       sim__pass_time(sim, t, SIM_PMI_RETURN_TIME);
}

/*
 * Back to user code at @ip: from a syscall, through the kernel's code,
 * and __schedule() where it blocked.
 */
int sim__to_user(struct sim *sim, struct sim_thread *t, u64 ip, bool from_syscall)
{
	struct sim_kctx c = { .sim = sim, .t = t };

	if (!sim->kernel || !from_syscall)
		return auxsample_pt_writer__resume(t->pt, ip);
	return sim_kernel__syscall(sim->kernel, ip, t->blocked, sim__kstep, &c);
}

/*
 * The PMI of the period's last instruction, as the kernel handles it for
 * an AUX-sampling event:
 * - taken in user code, it disables packet generation there: FUP and
 *   TIP.PGD at the overflow (SDM Vol. 3C, "FUP Packet": asynchronous
 *   events);
 * - the sample's time is read later, in perf_prepare_sample(), after the
 *   NMI entry and the PMU handler: it is after all of the snippet's user
 *   code;
 * - pt_event_snapshot_aux() stops the trace (TraceEn 1 -> 0), copies the
 *   snippet and starts the trace again, which writes TSC, TMA and CBR
 *   (auxsample_pt_writer__restart()): everything after the sample comes
 *   after a TSC later than the sample's time, which is how timed decoders
 *   (perf's intel-pt.c) tell which branches are the sample's;
 * - the return to user code at @ip is a TIP.PGE; from a syscall it comes
 *   when the syscall returns.
 * A syscall that ends the period retires in user mode, but its PMI is taken
 * at the first instruction it can be, in the kernel: the sample's IP is
 * there and says so in header.misc (perf_instruction_pointer() and
 * perf_misc_flags() read the interrupted registers; exclude_kernel does not
 * move them), so decoders keep the syscall as its newest branch.
 * With --full-trace no AUX area is sampled and the trace runs on.
 */
int sim__sample(struct sim *sim, struct sim_thread *t, u64 ip)
{
	bool snapshot = !sim->opts->full_trace;
	u64 sample_ip = t->in_kernel ? SIM_SYSCALL_ENTRY_IP : ip;
	int err = 0;

	if (sim->kernel)
		return sim__sample_kernel(sim, t, ip);

	if (!t->in_kernel)
		err = auxsample_pt_writer__interrupt(t->pt, ip);
	if (!err)
		err = sim__pass_time(sim, t, SIM_PMI_TO_SAMPLE_TIME);
	if (!err && snapshot)
		err = auxsample_pt_writer__stop(t->pt);
	if (!err)
		err = sim__write_sample(sim, t, sample_ip);
	if (!err)
		err = sim__write_truth(sim, t, sample_ip);
	t->insns = 0;
	if (!err && snapshot)
		err = sim__pass_time(sim, t, SIM_AUX_COPY_TIME) ?:
		      auxsample_pt_writer__restart(t->pt);
	if (!err)
		err = sim__pass_time(sim, t, SIM_PMI_RETURN_TIME);
	if (err || t->in_kernel)
		return err;
	return auxsample_pt_writer__resume(t->pt, ip);
}

#define SIM_OVERRUN_MAX		8

/*
 * Some hypervisors emulate an instruction that exits to them (CPUID, seen
 * on Firecracker's KVM) without the single-step trap that should follow
 * it: the trap comes an instruction or more later, and where the step
 * ended tells what those did.  They are followed from @seq, falling
 * through conditional branches unless one goes to @next, along direct
 * jumps and calls, up to an indirect branch that went to @next; the path
 * is taken only if it gets there, and each of its instructions is
 * modelled and counted.  1 if it was, 0 if no such path is found.
 */
static int sim__overran(struct sim *sim, struct sim_thread *t, u64 seq, u64 next)
{
	unsigned char buf[INTEL_PT_INSN_BUF_SZ];
	struct intel_pt_insn *path = t->overrun;
	u64 at[SIM_OVERRUN_MAX], to[SIM_OVERRUN_MAX], p = seq;
	int n, i, err;

	for (n = 0; n < SIM_OVERRUN_MAX; n++) {
		struct intel_pt_insn *insn = &path[n];
		ssize_t len = pread(t->mem_fd, buf, sizeof(buf), p);
		u64 fall;

		memset(insn, 0, sizeof(*insn));
		if (len <= 0 || intel_pt_get_insn(buf, len, /*x86_64=*/1, insn) || !insn->length)
			return 0;
		fall = p + insn->length;
		at[n] = p;
		if (insn->op == INTEL_PT_OP_SYSCALL || insn->op == INTEL_PT_OP_INT)
			return 0;
		if (insn->branch == INTEL_PT_BR_CONDITIONAL)
			to[n] = fall + insn->rel == next ? next : fall;
		else if (insn->branch == INTEL_PT_BR_UNCONDITIONAL)
			to[n] = fall + insn->rel;
		else if (insn->branch == INTEL_PT_BR_INDIRECT)
			to[n] = next;
		else
			to[n] = fall;
		if (to[n] == next)
			break;
		if (insn->branch == INTEL_PT_BR_INDIRECT)
			return 0;
		p = to[n];
	}
	if (n == SIM_OVERRUN_MAX)
		return 0;
	for (i = 0; i <= n; i++) {
		err = sim__model(sim, t, at[i], &path[i], to[i]);
		if (err)
			return err;
		sim->nr_insns++;
		t->insns++;
	}
	return 1;
}

/* Encode what the instruction at @ip did, given where it went. */
int sim__model(struct sim *sim, struct sim_thread *t, u64 ip,
		      const struct intel_pt_insn *insn, u64 next)
{
	u64 seq = ip + insn->length;
	bool indirect = insn->branch == INTEL_PT_BR_INDIRECT;
	int err;

	switch (insn->op) {
	case INTEL_PT_OP_JCC:
	case INTEL_PT_OP_LOOP:
		if (next != seq)
			sim_thread__branch(t, ip, next, SB_COND);
		return auxsample_pt_writer__cond(t->pt, next != seq);
	case INTEL_PT_OP_JMP:
		sim_thread__branch(t, ip, next, indirect ? SB_IND_JUMP : SB_JUMP);
		return indirect ? auxsample_pt_writer__indirect(t->pt, next) : 0;
	case INTEL_PT_OP_CALL:
		sim_thread__branch(t, ip, next, indirect ? SB_IND_CALL : SB_CALL);
		if (next != seq && sim_thread__call(t, seq))
			return -ENOMEM;
		return auxsample_pt_writer__call(t->pt, seq, indirect, next);
	case INTEL_PT_OP_RET:
		sim_thread__branch(t, ip, next, SB_RET);
		sim_thread__ret(t, next);
		return auxsample_pt_writer__ret(t->pt, next);
	case INTEL_PT_OP_SYSCALL:
	case INTEL_PT_OP_INT:
		/*
		 * Into the kernel: user-only trace shows no target.  The TIP.PGE
		 * waits for where user code goes on: @next, or a signal handler.
		 */
		sim->tsc += 1000;
		t->in_kernel = true;
		if (sim->kernel) {
			/* Kernel-traced: the entry is in the trace, a TIP. */
			u64 entry = sim_kernel__syscall_entry(sim->kernel);

			sim_thread__branch(t, ip, entry, SB_FAR);
			return auxsample_pt_writer__indirect(t->pt, entry);
		}
		sim_thread__branch(t, ip, 0, SB_FAR);
		return auxsample_pt_writer__syscall(t->pt);
	case INTEL_PT_OP_OTHER:
	case INTEL_PT_OP_IRET:
	case INTEL_PT_OP_SYSRET:
	case INTEL_PT_OP_VMENTRY:
	case INTEL_PT_OP_ERETS:
	case INTEL_PT_OP_ERETU:
	default:
		if (next == seq)
			return 0;
		err = sim__overran(sim, t, seq, next);
		if (err)
			return err < 0 ? err : 0;
		/* Elsewhere without a branch: a fault delivered as a signal. */
		return auxsample_pt_writer__interrupt(t->pt, ip) ?:
		       auxsample_pt_writer__resume(t->pt, next);
	}
}
