/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __AUXSAMPLE_VG_PROTO_H
#define __AUXSAMPLE_VG_PROTO_H

/*
 * What the auxsample Valgrind tool (auxsample-vg.c) sends to 'perf
 * auxsample simulate' (util/auxsample-sim-vg.c) through a FIFO.  Both
 * sides are built from this header; they run on the same machine, so
 * the words are native (little-endian x86-64) 64-bit words.
 *
 * The stream is a sequence of chunks of at most AVG_CHUNK_BYTES, each
 * written by one write() so that the chunks of the processes of a
 * program (fork) never mix: a header word (size in bytes, pid of the
 * writer) and whole records (perf parses a chunk alone: a record never
 * goes on into the next).  A record's first word holds its type in the
 * low 8 bits and a payload above:
 *
 * AVG_START	 pid; ppid; comm (AVG_COMM_LEN bytes).  A Valgrind instance
 *		 starts: the program, or a new one exec()ed by a known pid.
 * AVG_THREAD_SWITCH  kernel tid: the records that follow are that thread's.
 * AVG_SB_DEFINE sizes (AVG_SB_DEF_SIZES); id; nr_insns addresses;
 *		 nr_exits (AVG_EXIT_DESC, constant target) pairs; nr_insns
 *		 lengths (bytes, padded to 8); the code bytes (padded to 8).
 * AVG_SB_EXIT	 AVG_EXIT_ID: superblock id and exit taken (constant target).
 * AVG_SB_EXIT_TO  AVG_EXIT_ID; the target.
 * AVG_MMAP	 name length; start; end; pgoff; name (NUL-padded to 8,
 *		 at least one NUL); inode.
 * AVG_SIGNAL	 signal number; the IP it interrupts; the superblock that
 *		 was running.
 * AVG_THREAD_NEW	kernel tid; parent's kernel tid; first IP.
 * AVG_THREAD_EXIT	kernel tid.
 * AVG_FORK	 ppid; parent's kernel tid; IP (in the child's chunk).
 * AVG_PROCESS_EXIT	pid.
 */
#define AVG_CHUNK_BYTES		4096	/* PIPE_BUF: one write() is atomic */
#define AVG_CHUNK_HEADER(bytes, pid)	((ULong)(bytes) | (ULong)(UInt)(pid) << 32)
#define AVG_COMM_LEN		16
#define AVG_MAX_NAME		1024

#define AVG_START		1
#define AVG_THREAD_SWITCH	2
#define AVG_SB_DEFINE		3
#define AVG_SB_EXIT		4
#define AVG_SB_EXIT_TO		5
#define AVG_MMAP		6
#define AVG_SIGNAL		7
#define AVG_THREAD_NEW		8
#define AVG_THREAD_EXIT		9
#define AVG_FORK		10
#define AVG_PROCESS_EXIT	11

#define AVG_REC(type, payload)	((ULong)(type) | (ULong)(payload) << 8)
#define AVG_REC_TYPE(w)		((unsigned int)((w) & 0xff))
#define AVG_REC_PAYLOAD(w)	((w) >> 8)

#define AVG_SB_DEF_SIZES(insns, exits, bytes) \
	((ULong)(insns) | (ULong)(exits) << 16 | (ULong)(bytes) << 32)
#define AVG_SB_DEF_INSNS(p)	((unsigned int)((p) & 0xffff))
#define AVG_SB_DEF_EXITS(p)	((unsigned int)(((p) >> 16) & 0xffff))
#define AVG_SB_DEF_BYTES(p)	((unsigned int)(((p) >> 32) & 0xffff))

/* How an exit leaves: */
#define AVG_JK_FLOW		0	/* a jump, call, return or the next insn */
#define AVG_JK_SYSCALL		1	/* into the kernel */
#define AVG_JK_FAULT		2	/* the instruction faults (a signal follows) */

#define AVG_EXIT_DESC(insn, jk, is_const) \
	((ULong)(insn) | (ULong)(jk) << 16 | (ULong)!!(is_const) << 24)
#define AVG_EXIT_INSN(d)	((unsigned int)((d) & 0xffff))
#define AVG_EXIT_JK(d)		((unsigned int)(((d) >> 16) & 0xff))
#define AVG_EXIT_CONST(d)	((unsigned int)(((d) >> 24) & 1))

#define AVG_EXIT_ID(sb, exit)	((ULong)(sb) << 16 | (ULong)(exit))
#define AVG_EXIT_SB(p)		((p) >> 16)
#define AVG_EXIT_NR(p)		((unsigned int)((p) & 0xffff))

#endif /* __AUXSAMPLE_VG_PROTO_H */
