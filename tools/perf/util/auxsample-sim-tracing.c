// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample simulate: the tracing data of the simulated kernel's
 * sched:sched_switch tracepoint (see auxsample-sim-tracing.h).
 */
#include <errno.h>
#include <string.h>
#include <linux/kernel.h>
#include <linux/stringify.h>

#include "auxsample-sim-tracing.h"
#include "header.h"
#include "strbuf.h"

/* As /sys/kernel/tracing/events/header_page says on x86-64. */
static const char sim_header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";

static const char sim_header_event[] =
	"# compressed entry header\n"
	"\ttype_len    :    5 bits\n"
	"\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n";

/* The print fmt's halves: each task's fields, then the arguments. */
#define SW_FMT_PREV	"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s"
#define SW_FMT_NEXT	"next_comm=%s next_pid=%d next_prio=%d"
#define SW_ARGS_PREV	"REC->prev_comm, REC->prev_pid, REC->prev_prio"
#define SW_ARGS_STATE	"(REC->prev_state & 1) ? \"S\" : \"R\""
#define SW_ARGS_NEXT	"REC->next_comm, REC->next_pid, REC->next_prio"

/* events/sched/sched_switch/format, its print fmt made shorter. */
static const char sim_sched_switch_format[] =
	"name: sched_switch\n"
	"ID: " __stringify(SIM_TP_SCHED_SWITCH_ID) "\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"" SW_FMT_PREV " ==> " SW_FMT_NEXT "\", "
	SW_ARGS_PREV ", " SW_ARGS_STATE ", " SW_ARGS_NEXT "\n";

static int sb__u32(struct strbuf *sb, u32 v)
{
	return strbuf_add(sb, &v, sizeof(v));
}

static int sb__u64(struct strbuf *sb, u64 v)
{
	return strbuf_add(sb, &v, sizeof(v));
}

/* A NUL-terminated tag or string, then nothing (@len 0) or a file. */
static int sb__file(struct strbuf *sb, const char *tag, const char *text)
{
	size_t len = strlen(text);

	return (tag ? strbuf_add(sb, tag, strlen(tag) + 1) : 0) ?:
	       sb__u64(sb, len) ?: strbuf_add(sb, text, len);
}

int auxsample_sim_tracing__write(struct feat_writer *fw)
{
	static const char magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	struct strbuf sb;
	int err;

	BUILD_BUG_ON(sizeof(struct sim_sched_switch) != 68);
	err = strbuf_init(&sb, 4096) ?:
	      strbuf_add(&sb, magic, sizeof(magic)) ?:
	      strbuf_add(&sb, "0.6", 4) ?:
	      strbuf_add(&sb, "\0\10", 2) ?:		/* little-endian, 8-byte long */
	      sb__u32(&sb, 4096) ?:			/* page size */
	      sb__file(&sb, "header_page", sim_header_page) ?:
	      sb__file(&sb, "header_event", sim_header_event) ?:
	      sb__u32(&sb, 0) ?:			/* no ftrace formats */
	      sb__u32(&sb, 1) ?:			/* one system: */
	      strbuf_add(&sb, "sched", 6) ?:
	      sb__u32(&sb, 1) ?:			/* with one event */
	      sb__file(&sb, NULL, sim_sched_switch_format) ?:
	      sb__u32(&sb, 0) ?:			/* no kallsyms */
	      sb__u32(&sb, 0) ?:			/* no printk formats */
	      sb__u64(&sb, 0);				/* no saved cmdlines */
	if (!err)
		err = fw->write(fw, sb.buf, sb.len);
	strbuf_release(&sb);
	return err;
}
