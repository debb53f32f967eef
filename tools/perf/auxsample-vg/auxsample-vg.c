// SPDX-License-Identifier: GPL-2.0
/*
 * auxsample: a Valgrind tool that reports a program's control flow to
 * 'perf auxsample simulate --engine=valgrind' (util/auxsample-sim-vg.c).
 *
 * Why Valgrind, and what differs from hardware: see "Engines" in
 * tools/perf/Documentation/perf-auxsample.txt and DESIGN in
 * tools/perf/util/auxsample-sim-vg.c.
 *
 * Valgrind translates the program superblock by superblock (VEX IR);
 * with --vex-guest-chase=no a superblock is a straight run of guest
 * instructions that ends at the first branch.  For each new superblock
 * the tool sends its instructions (addresses and bytes: perf classifies
 * them with its own x86 decoder) and its exits; each time one is left,
 * a dirty helper sends which exit it took, with the target when the
 * exit's target is not a constant (indirect jumps, calls, returns).
 * Signal deliveries, threads, fork, exec and executable mappings come
 * from the core's callbacks.  Everything goes, in chunks of at most
 * PIPE_BUF bytes (written whole even when processes share the pipe),
 * to the FIFO named by --auxsample-fifo; the record layout is
 * auxsample-vg-proto.h's, which perf reads.
 *
 * The tool runs inside Valgrind, without libc: only the VG_() calls of
 * Valgrind's core.
 */
#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

#include "auxsample-vg-proto.h"

/* Valgrind's core has it, its tool headers do not declare it. */
extern Int VG_(safe_fd)(Int oldfd);

static const HChar *fifo_path;
static Int out_fd = -1;
static ULong buf[AVG_CHUNK_BYTES / 8];
static UInt used = 1;			/* words; buf[0] is the chunk header */
static Int pid;
static Int cur_ktid;			/* whose records follow */
/* Valgrind's ThreadIds are small; more threads than this are refused. */
#define AVG_MAX_THREADS	1024
static Int ktid_of[AVG_MAX_THREADS];
static Int parent_ktid[AVG_MAX_THREADS];
static ULong next_sb = 1;
/* The superblock running now, for a signal that interrupts it. */
static ULong cur_sb;

static void avg_flush(void)
{
	UInt bytes = used * 8;

	if (used == 1)
		return;
	buf[0] = AVG_CHUNK_HEADER(bytes, pid);
	if (out_fd >= 0 && VG_(write)(out_fd, buf, bytes) != (Int)bytes) {
		/* perf went away (a stop): the program runs on untraced. */
		VG_(close)(out_fd);
		out_fd = -1;
	}
	used = 1;
}

static inline ULong *avg_reserve(UInt words)
{
	ULong *p;

	if (used + words > AVG_CHUNK_BYTES / 8)
		avg_flush();
	p = &buf[used];
	used += words;
	return p;
}

/* Records of @tid's thread follow; says so when another one's came last. */
static void avg_switch(ThreadId tid)
{
	Int ktid = ktid_of[tid];

	if (!ktid)
		ktid = ktid_of[tid] = VG_(gettid)();
	if (ktid == cur_ktid)
		return;
	cur_ktid = ktid;
	avg_reserve(1)[0] = AVG_REC(AVG_THREAD_SWITCH, (ULong)(UInt)ktid);
}

/* --- run time: dirty helpers called from the instrumented code --- */

static VG_REGPARM(1) void avg_exit(ULong rec)
{
	ULong *p;

	if (used + 1 > AVG_CHUNK_BYTES / 8)
		avg_flush();
	p = &buf[used++];
	*p = rec;
}

static VG_REGPARM(2) void avg_exit_to(ULong rec, ULong target)
{
	ULong *p;

	if (used + 2 > AVG_CHUNK_BYTES / 8)
		avg_flush();
	p = &buf[used];
	used += 2;
	p[0] = rec;
	p[1] = target;
}

/* --- translation time --- */

#define AVG_MAX_INSNS	128
#define AVG_MAX_EXITS	(AVG_MAX_INSNS + 1)

struct avg_sb {
	Addr	addr[AVG_MAX_INSNS];
	UChar	len[AVG_MAX_INSNS];
	UInt	nr_insns;
	UInt	code_bytes;
	UInt	exit_insn[AVG_MAX_EXITS];
	UInt	exit_jk[AVG_MAX_EXITS];
	Addr	exit_to[AVG_MAX_EXITS];
	Bool	exit_const[AVG_MAX_EXITS];
	UInt	nr_exits;
};

static struct avg_sb sb;

/* The superblock's definition: its instructions and its exits. */
static void avg_define(ULong id)
{
	UInt words = 2 + sb.nr_insns + 2 * sb.nr_exits + (sb.nr_insns + 7) / 8 +
		     (sb.code_bytes + 7) / 8;
	ULong *p;
	UChar *bytes;
	UInt i, off = 0;

	tl_assert(words + 1 < AVG_CHUNK_BYTES / 8);
	p = avg_reserve(words);
	VG_(memset)(p, 0, words * 8);
	p[0] = AVG_REC(AVG_SB_DEFINE, AVG_SB_DEF_SIZES(sb.nr_insns, sb.nr_exits, sb.code_bytes));
	p[1] = id;
	p += 2;
	for (i = 0; i < sb.nr_insns; i++)
		*p++ = sb.addr[i];
	for (i = 0; i < sb.nr_exits; i++) {
		*p++ = AVG_EXIT_DESC(sb.exit_insn[i], sb.exit_jk[i], sb.exit_const[i]);
		*p++ = sb.exit_to[i];
	}
	bytes = (UChar *)p;
	for (i = 0; i < sb.nr_insns; i++)
		bytes[i] = sb.len[i];
	bytes += (sb.nr_insns + 7) / 8 * 8;
	for (i = 0; i < sb.nr_insns; i++) {
		VG_(memcpy)(bytes + off, (void *)sb.addr[i], sb.len[i]);
		off += sb.len[i];
	}
}

static UInt avg_jk(IRJumpKind jk)
{
	switch (jk) {
	case Ijk_Boring:
	case Ijk_Call:
	case Ijk_Ret:
	case Ijk_Yield:
	case Ijk_ClientReq:
	case Ijk_NoRedir:
	case Ijk_EmWarn:
	case Ijk_InvalICache:
	case Ijk_FlushDCache:
		return AVG_JK_FLOW;
	case Ijk_Sys_syscall:
	case Ijk_Sys_int32:
	case Ijk_Sys_int128:
	case Ijk_Sys_int129:
	case Ijk_Sys_int130:
	case Ijk_Sys_int145:
	case Ijk_Sys_int210:
	case Ijk_Sys_sysenter:
		return AVG_JK_SYSCALL;
	default:
		/* SIGILL, SIGTRAP, SIGSEGV ...: the instruction faults. */
		return AVG_JK_FAULT;
	}
}

static void avg_add_exit(IRSB *out, IRExpr *guard, IRJumpKind jk, IRConst *dst, IRExpr *next)
{
	UInt e = sb.nr_exits++;
	ULong rec = AVG_REC(AVG_SB_EXIT, AVG_EXIT_ID(next_sb, e));
	IRDirty *di;

	sb.exit_insn[e] = sb.nr_insns - 1;
	sb.exit_jk[e] = avg_jk(jk);
	sb.exit_const[e] = dst != NULL;
	sb.exit_to[e] = dst ? dst->Ico.U64 : 0;
	if (dst) {
		di = unsafeIRDirty_0_N(1, "avg_exit", VG_(fnptr_to_fnentry)(avg_exit),
				       mkIRExprVec_1(mkIRExpr_HWord(rec)));
	} else {
		rec = AVG_REC(AVG_SB_EXIT_TO, AVG_EXIT_ID(next_sb, e));
		di = unsafeIRDirty_0_N(2, "avg_exit_to", VG_(fnptr_to_fnentry)(avg_exit_to),
				       mkIRExprVec_2(mkIRExpr_HWord(rec), next));
	}
	if (guard)
		di->guard = guard;
	addStmtToIRSB(out, IRStmt_Dirty(di));
}

static IRSB *avg_instrument(VgCallbackClosure *closure, IRSB *in,
			    const VexGuestLayout *layout, const VexGuestExtents *vge,
			    const VexArchInfo *archinfo_host, IRType gWordTy, IRType hWordTy)
{
	IRSB *out = deepCopyIRSBExceptStmts(in);
	Bool ok = True;
	Int i;

	VG_(memset)(&sb, 0, sizeof(sb));
	for (i = 0; i < in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];

		if (!st)
			continue;
		if (st->tag == Ist_IMark) {
			if (sb.nr_insns == 0)
				addStmtToIRSB(out, IRStmt_Store(Iend_LE,
								mkIRExpr_HWord((HWord)&cur_sb),
								mkIRExpr_HWord(next_sb)));
			if (sb.nr_insns == AVG_MAX_INSNS) {
				ok = False;
			} else {
				sb.addr[sb.nr_insns] = st->Ist.IMark.addr;
				sb.len[sb.nr_insns] = st->Ist.IMark.len;
				sb.code_bytes += st->Ist.IMark.len;
				sb.nr_insns++;
			}
		} else if (st->tag == Ist_Exit && sb.nr_insns && ok) {
			avg_add_exit(out, st->Ist.Exit.guard, st->Ist.Exit.jk,
				     st->Ist.Exit.dst, NULL);
		}
		addStmtToIRSB(out, st);
	}
	tl_assert2(ok && sb.nr_insns, "auxsample: superblock of %u instructions", sb.nr_insns);
	if (out->next->tag == Iex_Const)
		avg_add_exit(out, NULL, out->jumpkind, out->next->Iex.Const.con, NULL);
	else
		avg_add_exit(out, NULL, out->jumpkind, NULL, out->next);
	avg_define(next_sb);
	next_sb++;
	return out;
}

/* --- the core's events --- */

static void avg_mmap(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di_handle)
{
	NSegment const *seg;
	const HChar *name = NULL;
	ULong pgoff = 0, ino = 0;
	UInt name_len, words;
	ULong *p;

	if (!xx || !len)
		return;
	seg = VG_(am_find_nsegment)(a);
	/* Valgrind's own code (its trampoline page) is no mapping of the program's. */
	if (seg && seg->kind != SkFileC && seg->kind != SkAnonC && seg->kind != SkShmC)
		return;
	if (seg) {
		name = VG_(am_get_filename)(seg);
		ino = seg->ino;
		if (name)
			pgoff = seg->offset + (a - seg->start);
	}
	if (!name)
		name = "//anon";
	name_len = VG_(strlen)(name);
	if (name_len > AVG_MAX_NAME)
		name_len = AVG_MAX_NAME;
	/*
	 * One reservation for the whole record, the inode too: perf reads a
	 * chunk's records whole, and a second one could flush the chunk
	 * between the name and the inode.
	 */
	words = 5 + (name_len + 8) / 8;
	p = avg_reserve(words);
	VG_(memset)(p, 0, words * 8);
	p[0] = AVG_REC(AVG_MMAP, name_len);
	p[1] = a;
	p[2] = a + len;
	p[3] = pgoff;
	/* The inode goes after the name's words. */
	VG_(memcpy)(&p[4], name, name_len);
	p[words - 1] = ino;
}

static void avg_mprotect(Addr a, SizeT len, Bool rr, Bool ww, Bool xx)
{
	avg_mmap(a, len, rr, ww, xx, 0);
}

static void avg_start_client_code(ThreadId tid, ULong blocks)
{
	avg_switch(tid);
}

static void avg_thread_create(ThreadId parent, ThreadId child)
{
	parent_ktid[child] = ktid_of[parent] ? ktid_of[parent] : VG_(gettid)();
	ktid_of[child] = 0;
}

static void avg_thread_first_insn(ThreadId tid)
{
	ULong *p;

	ktid_of[tid] = VG_(gettid)();
	p = avg_reserve(3);
	p[0] = AVG_REC(AVG_THREAD_NEW, (ULong)(UInt)ktid_of[tid]);
	p[1] = (ULong)(UInt)parent_ktid[tid];
	p[2] = VG_(get_IP)(tid);
	cur_ktid = 0;
	avg_switch(tid);
}

static void avg_thread_exit(ThreadId tid)
{
	avg_switch(tid);
	avg_reserve(1)[0] = AVG_REC(AVG_THREAD_EXIT, (ULong)(UInt)ktid_of[tid]);
	ktid_of[tid] = 0;
}

static void avg_signal(ThreadId tid, Int sig, Bool alt_stack)
{
	ULong *p;

	avg_switch(tid);
	p = avg_reserve(3);
	p[0] = AVG_REC(AVG_SIGNAL, (ULong)(UInt)sig);
	p[1] = VG_(get_IP)(tid);
	p[2] = cur_sb;
}

/* The parent's records so far reach perf before any of the child's. */
static void avg_fork_pre(ThreadId tid)
{
	avg_switch(tid);
	avg_flush();
}

static void avg_fork_child(ThreadId tid)
{
	Int ppid = pid, ptid = cur_ktid;
	ULong *p;
	Int i;

	pid = VG_(getpid)();
	for (i = 0; i < AVG_MAX_THREADS; i++)
		ktid_of[i] = 0;
	ktid_of[tid] = cur_ktid = pid;
	p = avg_reserve(3);
	p[0] = AVG_REC(AVG_FORK, (ULong)(UInt)ppid);
	p[1] = (ULong)(UInt)ptid;
	p[2] = VG_(get_IP)(tid);
}

static void avg_pre_syscall(ThreadId tid, UInt nr, UWord *args, UInt nr_args)
{
	/* The new program's instance writes on after this one. */
	if (nr == __NR_execve || nr == __NR_execveat)
		avg_flush();
}

static void avg_post_syscall(ThreadId tid, UInt nr, UWord *args, UInt nr_args, SysRes res)
{
}

/* --- start and end --- */

static Bool avg_option(const HChar *arg)
{
	if (VG_STR_CLO(arg, "--auxsample-fifo", fifo_path))
		return True;
	return False;
}

static void avg_usage(void)
{
	VG_(printf)("    --auxsample-fifo=<path>   where perf reads the control flow\n");
}

static void avg_debug_usage(void)
{
}

static void avg_post_clo_init(void)
{
	const HChar *exe = VG_(args_the_exename);
	const HChar *base = exe ? exe : "";
	SysRes res;
	UInt len, words;
	ULong *p;

	tl_assert(VG_N_THREADS <= AVG_MAX_THREADS);
	if (!fifo_path)
		VG_(fmsg_bad_option)("--auxsample-fifo", "perf auxsample simulate gives it\n");
	res = VG_(open)(fifo_path, VKI_O_WRONLY, 0);
	if (sr_isError(res)) {
		VG_(umsg)("auxsample: cannot open %s\n", fifo_path);
		VG_(exit)(1);
	}
	out_fd = VG_(safe_fd)(sr_Res(res));
	pid = VG_(getpid)();
	ktid_of[1] = cur_ktid = pid;
	for (const HChar *c = base; *c; c++) {
		if (*c == '/')
			base = c + 1;
	}
	len = VG_(strlen)(base);
	if (len > AVG_COMM_LEN - 1)
		len = AVG_COMM_LEN - 1;
	words = 2 + AVG_COMM_LEN / 8;
	p = avg_reserve(words);
	VG_(memset)(p, 0, words * 8);
	p[0] = AVG_REC(AVG_START, (ULong)(UInt)pid);
	p[1] = (ULong)(UInt)VG_(getppid)();
	VG_(memcpy)(&p[2], base, len);
}

static void avg_fini(Int exitcode)
{
	avg_reserve(1)[0] = AVG_REC(AVG_PROCESS_EXIT, (ULong)(UInt)pid);
	avg_flush();
}

static void avg_pre_clo_init(void)
{
	VG_(details_name)("auxsample");
	VG_(details_version)(NULL);
	VG_(details_description)("control flow for perf auxsample simulate");
	VG_(details_copyright_author)("GPL-2.0");
	VG_(details_bug_reports_to)("the perf auxsample maintainers");
	VG_(details_avg_translation_sizeB)(400);

	VG_(basic_tool_funcs)(avg_post_clo_init, avg_instrument, avg_fini);
	VG_(needs_command_line_options)(avg_option, avg_usage, avg_debug_usage);
	VG_(needs_syscall_wrapper)(avg_pre_syscall, avg_post_syscall);
	VG_(track_new_mem_startup)(avg_mmap);
	VG_(track_new_mem_mmap)(avg_mmap);
	VG_(track_change_mem_mprotect)(avg_mprotect);
	VG_(track_start_client_code)(avg_start_client_code);
	VG_(track_pre_thread_ll_create)(avg_thread_create);
	VG_(track_pre_thread_first_insn)(avg_thread_first_insn);
	VG_(track_pre_thread_ll_exit)(avg_thread_exit);
	VG_(track_pre_deliver_signal)(avg_signal);
	VG_(atfork)(avg_fork_pre, NULL, avg_fork_child);
}

VG_DETERMINE_INTERFACE_VERSION(avg_pre_clo_init)
