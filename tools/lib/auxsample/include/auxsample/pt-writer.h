/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_PT_WRITER_H
#define __AUXSAMPLE_PT_WRITER_H

/*
 * Write an Intel PT stream as the hardware does for user-only tracing
 * (intel_pt//u), from what each instruction did: for simulators and tests
 * on machines without Intel PT.  PSB+ every psb_period bytes (PSB, TSC,
 * TMA, CBR, MODE.Exec, FUP, PSBEND), TNT-8/TNT-64, TIP with the hardware's IP
 * compression, return compression as the hardware does it (only for
 * returns whose call came after the latest PSB), TIP.PGD/PGE around the
 * kernel, FUP before asynchronous disables (interrupts, the PMI).
 *
 * Not part of the decoder's API: libauxsample-pt-writer.a, built beside
 * libauxsample when libipt is found (its encoder writes the packets),
 * for perf auxsample simulate and the tests.  Errors are the library's
 * (-AUXSAMPLE_ERR_*).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <auxsample/auxsample.h>

struct auxsample_pt_writer_config {
	size_t		size;		/* sizeof(struct auxsample_pt_writer_config) */
	size_t		psb_period;	/* bytes between PSBs */
	uint8_t		noretcomp;	/* no return compression */
	uint8_t		tsc;		/* TSC packets in PSB+ and at restart */
	uint8_t		mtc;		/* MTC packets, TMA with each TSC */
	uint8_t		mtc_period;	/* an MTC every 2^mtc_period CTC ticks */
	uint32_t	tsc_per_ctc;	/* TSC ticks per CTC tick (CPUID.15H) */
	uint8_t		cyc;		/* CYC packets */
	/*
	 * core:bus ratio, in every PSB+ and restart (0: no CBR packets);
	 * cycles = TSC ticks * cbr / max non-turbo ratio
	 */
	uint8_t		cbr;
	uint8_t		nom_freq;	/* max non-turbo ratio */
};

struct auxsample_pt_writer;

struct auxsample_pt_writer *
auxsample_pt_writer__new(const struct auxsample_pt_writer_config *config);
void auxsample_pt_writer__delete(struct auxsample_pt_writer *w);

/* The stream so far; valid until the next call that writes. */
const uint8_t *auxsample_pt_writer__data(const struct auxsample_pt_writer *w,
						       size_t *len);
/*
 * Check the stream with libipt's packet decoder: 0 when every byte parses,
 * else a negative error and the offset of the first bad packet.
 */
int auxsample_pt_writer__verify(const struct auxsample_pt_writer *w,
					      uint64_t *bad_offset);

/* Forget the stream (a new program: exec). */
void auxsample_pt_writer__reset(struct auxsample_pt_writer *w);

/*
 * Time passes: the TSC that the next PSB+ carries; MTCs as CTC ticks by,
 * in the kernel (between TIP.PGD and TIP.PGE) too, while TraceEn is set.
 */
int auxsample_pt_writer__tick(struct auxsample_pt_writer *w, uint64_t tsc);

/* Tracing starts at @ip with a PSB+. */
int auxsample_pt_writer__start(struct auxsample_pt_writer *w, uint64_t ip);
/*
 * Tracing starts in the kernel, user code entered at @ip: PSB+ without a
 * FUP (PacketEn clear), then TIP.PGE, as for a thread or a new program
 * whose event the kernel enables before it returns to user space.
 */
int auxsample_pt_writer__enter(struct auxsample_pt_writer *w, uint64_t ip);
/* Call before each instruction at @ip: writes a PSB+ when one is due. */
int auxsample_pt_writer__maybe_psb(struct auxsample_pt_writer *w, uint64_t ip);

int auxsample_pt_writer__cond(struct auxsample_pt_writer *w, bool taken);
int auxsample_pt_writer__call(struct auxsample_pt_writer *w, uint64_t ret_addr,
					    bool indirect, uint64_t to);
int auxsample_pt_writer__ret(struct auxsample_pt_writer *w, uint64_t to);
int auxsample_pt_writer__indirect(struct auxsample_pt_writer *w, uint64_t to);
/*
 * Kernel and user traced (no exclude_kernel): an interrupt or exception
 * at @from goes to @to, FUP and TIP; PacketEn stays set.  Far branches
 * (syscall, sysret, iret) are __indirect()s.
 */
int auxsample_pt_writer__async(struct auxsample_pt_writer *w, uint64_t from,
			       uint64_t to);
/* Into the kernel by a syscall: TIP.PGD without IP. */
int auxsample_pt_writer__syscall(struct auxsample_pt_writer *w);
/* Interrupted at @ip: FUP, TIP.PGD. */
int auxsample_pt_writer__interrupt(struct auxsample_pt_writer *w, uint64_t ip);
/*
 * The kernel stops the trace to copy an AUX sample (TraceEn 1 -> 0) and
 * starts it again (0 -> 1: TSC, TMA, CBR), as pt_event_snapshot_aux() does.
 */
int auxsample_pt_writer__stop(struct auxsample_pt_writer *w);
int auxsample_pt_writer__restart(struct auxsample_pt_writer *w);
/*
 * The same in kernel-traced code: the WRMSR at @ip clears TraceEn, FUP
 * @ip and TIP.PGD (an asynchronous disable, as both libipt and perf's
 * decoder take it); set again by the WRMSR before @ip, the trace starts
 * with the timing packets and a TIP.PGE at @ip.
 */
int auxsample_pt_writer__stop_at(struct auxsample_pt_writer *w, uint64_t ip);
int auxsample_pt_writer__restart_at(struct auxsample_pt_writer *w, uint64_t ip);
/* Back in user code at @ip: TIP.PGE. */
int auxsample_pt_writer__resume(struct auxsample_pt_writer *w, uint64_t ip);
/*
 * The CPU's internal buffers overflow: the packets of what runs next are
 * lost, nothing is written, until the overflow resolves at @ip: OVF, and
 * FUP @ip while tracing is on, else the next TIP.PGE (__resume()).
 */
int auxsample_pt_writer__lose(struct auxsample_pt_writer *w);
int auxsample_pt_writer__overflow(struct auxsample_pt_writer *w, uint64_t ip);

#endif /* __AUXSAMPLE_PT_WRITER_H */
