/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_AUXSAMPLE_H
#define __AUXSAMPLE_AUXSAMPLE_H

/*
 * libauxsample: decode one AUX area trace snippet (the PERF_SAMPLE_AUX
 * payload of a sample, or any window of a trace buffer) into the taken
 * branches leading up to its end, newest first (a "virtual LBR"), and the
 * call chain rebuilt from the calls and returns among them.
 *
 * The library knows nothing of perf.data: it gets the snippet, the trace
 * configuration and a callback that reads the traced program's memory.
 * One decoder per thread; decoders share nothing.
 *
 * Functions return a negative enum auxsample_error on failure.
 */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AUXSAMPLE_API __attribute__((visibility("default")))

/*
 * The library's errors start above errno's range (Linux's MAX_ERRNO is
 * 4095), so that a caller that also passes -errno around can always tell
 * one from the other.
 */
#define AUXSAMPLE_ERR_BASE	4096

enum auxsample_error {
	AUXSAMPLE_ERR_INVALID = AUXSAMPLE_ERR_BASE + 1,	/* bad argument */
	AUXSAMPLE_ERR_NOMEM,		/* out of memory */
	AUXSAMPLE_ERR_NOSYNC,		/* no sync point (PSB+) in the snippet */
	AUXSAMPLE_ERR_DECODE,		/* trace and code disagree, or corrupt trace */
	AUXSAMPLE_ERR_NOMAP,		/* no memory at an address the trace reached */
	AUXSAMPLE_ERR_UNSUPPORTED,	/* trace type or feature not built in */
	AUXSAMPLE_ERR_OVERFLOW,		/* the hardware lost trace (OVF) */
	AUXSAMPLE_ERR_NOT_BUILT,	/* the trace type's decoder library was not found */
	AUXSAMPLE_ERR_NOT_IN_STREAM,	/* a stream cannot serve it: decode the snippet alone */
	AUXSAMPLE_ERR_FETCH,		/* a stream's fetch callback failed */
	AUXSAMPLE_ERR_END,		/* one past the last */
};

enum auxsample_trace_type {
	AUXSAMPLE_TRACE_INTEL_PT = 1,
	AUXSAMPLE_TRACE_ETM,		/* CoreSight ETMv4 or ETE */
};

/*
 * Read up to @size bytes of the traced program's memory at @addr into
 * @buf.  Return the number of bytes read (fewer at the end of a mapping),
 * or a negative value if nothing is mapped there.  Called from the
 * decoding thread.
 */
typedef int (auxsample_read_memory_fn)(uint8_t *buf, size_t size, uint64_t addr,
				       void *context);

/* Intel PT: what AUXTRACE_INFO and the CPU tell about the trace. */
struct auxsample_pt_config {
	uint16_t	family;		/* CPU, for the decoder's errata */
	uint8_t		model;
	uint8_t		stepping;
	uint32_t	cpuid_0x15_eax;	/* TSC/CTC ratio, for MTC timing */
	uint32_t	cpuid_0x15_ebx;
	uint8_t		mtc_freq;	/* attr.config mtc_period */
	uint8_t		nom_freq;	/* max non-turbo ratio */
	/*
	 * CYC packets in the trace (attr.config cyc): each branch gets the
	 * cycles since the taken branch before it (struct auxsample_branch).
	 */
	uint8_t		cyc;
};

/*
 * CoreSight: one trace source (a CPU's ETM or ETE), described by its ID
 * and configuration registers as perf's cs_etm AUXTRACE_INFO and OpenCSD
 * snapshots carry them.
 */
struct auxsample_etm_source {
	uint8_t		trace_id;	/* TRCTRACEIDR, or from AUX_OUTPUT_HW_ID */
	uint8_t		ete;		/* ETE (Armv9) rather than ETMv4 */
	uint16_t	cpu;		/* the CPU it traces: for the caller only */
	uint32_t	trcidr[14];	/* TRCIDR0 .. TRCIDR13 */
	uint32_t	trcconfigr;
	uint32_t	trcdevarch;	/* ETE */
};

struct auxsample_etm_config {
	const struct auxsample_etm_source *sources;	/* copied by __new() */
	unsigned int	nr_sources;
	uint8_t		formatted;	/* CoreSight frames (ETF/ETR), else raw (TRBE) */
};

/*
 * The code of one address space, from files: decoders that use it read
 * code through a section cache shared by all threads, much faster than
 * through read_memory, which serves what no file covers (vDSO, JIT ...).
 * Reference counted; sections may be added while decoders use it.
 */
struct auxsample_image;

/*
 * Full-trace consumers (profiles, AutoFDO) want every step of the flow,
 * not the last branches: a config's flow callback gets, in trace order,
 *   RANGE	instructions from..to (@to the last one's address) executed
 *		(ETM only);
 *   BRANCH	a taken branch from..to (@to 0 if unknown), of @kind;
 *   GAP	the flow is lost after @from (what follows is unrelated);
 *   CONTEXT	the traced thread is now @pid (the trace's context ID or
 *		VMID, as the trace configuration says the OS writes it),
 *		-1 when the trace does not say (ETM only);
 *   ERROR	a decode error, its enum auxsample_error in @kind, at snippet
 *		offset @from (every one: __errors() keeps the first few);
 *   TIMESTAMP	the trace's own timestamp @to, raw, carried by the packet at
 *		snippet offset @from (ETM only: TIMESTAMP elements and
 *		timestamps that other elements carry).
 * It is called from the decoding thread, during __decode().
 */
enum auxsample_flow_type {
	AUXSAMPLE_FLOW_RANGE = 1,
	AUXSAMPLE_FLOW_BRANCH,
	AUXSAMPLE_FLOW_GAP,
	AUXSAMPLE_FLOW_CONTEXT,
	AUXSAMPLE_FLOW_ERROR,
	AUXSAMPLE_FLOW_TIMESTAMP,
};

struct auxsample_flow {
	uint32_t	type;		/* enum auxsample_flow_type */
	uint32_t	kind;		/* BRANCH: enum auxsample_branch_kind */
					/* ERROR: -enum auxsample_error */
	uint64_t	from;
	uint64_t	to;
	uint32_t	flags;		/* BRANCH: AUXSAMPLE_BRF_* */
	uint32_t	insns;		/* RANGE: instructions in it */
	int64_t		pid;		/* CONTEXT */
	uint8_t		trace_id;	/* ETM: the source, in formatted trace */
};

typedef void (auxsample_flow_fn)(const struct auxsample_flow *flow, void *context);

struct auxsample_config {
	size_t				size;	/* sizeof(struct auxsample_config) */
	enum auxsample_trace_type	type;
	struct auxsample_pt_config	pt;
	auxsample_read_memory_fn	*read_memory;
	void				*context;	/* for read_memory */
	struct auxsample_etm_config	etm;
	struct auxsample_image		*image;		/* optional, Intel PT */
	uint32_t			flags;		/* AUXSAMPLE_CFG_* */
	auxsample_flow_fn		*flow;		/* optional: every step */
	void				*flow_context;
	/*
	 * The lowest kernel address (perf's machine__kernel_start()), for
	 * the late-sample rule (auxsample_decoder__set_sample_ip()); 0: the
	 * rule is off, the snippet's end is the sample point.
	 */
	uint64_t			kernel_start;
	uint32_t			pt_decoder;	/* enum auxsample_pt_decoder */
};

/*
 * Intel PT: the library's own walker, which hands what it does not
 * handle (stats.pt_fallbacks) to libipt, or libipt's block decoder, the
 * reference.  DEFAULT is the walker, the faster one.
 */
enum auxsample_pt_decoder {
	AUXSAMPLE_PT_DECODER_DEFAULT = 0,
	AUXSAMPLE_PT_DECODER_LIBIPT,
	AUXSAMPLE_PT_DECODER_WALKER,
};

/* Decode from the first sync point on: call chains see every call. */
#define AUXSAMPLE_CFG_WHOLE_SNIPPET	(1U << 0)

enum auxsample_branch_kind {
	AUXSAMPLE_BR_COND = 1,		/* taken conditional jump */
	AUXSAMPLE_BR_JUMP,		/* direct jump */
	AUXSAMPLE_BR_IND_JUMP,		/* indirect jump */
	AUXSAMPLE_BR_CALL,		/* direct call */
	AUXSAMPLE_BR_IND_CALL,		/* indirect call */
	AUXSAMPLE_BR_RET,		/* return */
	AUXSAMPLE_BR_FAR,		/* syscall, sysret, far call/jump/return */
	AUXSAMPLE_BR_INTR,		/* interrupt or exception */
	AUXSAMPLE_BR_GAP,		/* trace gap: what lies between is unknown */
};

/* The branch target is unknown (tracing stopped there, e.g. a syscall). */
#define AUXSAMPLE_BRF_TO_UNKNOWN	(1U << 0)

/*
 * @cycles: core cycles since the taken branch before this one, as LBR's
 * cycle count (saturated at 65535), 0 where unknown: Intel PT with CYC
 * packets only.  The trace times packets, not branches: the cycles between
 * two packets go to the branches between them by their instruction counts,
 * exact where the time per instruction is even between two packets.
 */
struct auxsample_branch {
	uint64_t	from;
	uint64_t	to;
	uint32_t	kind;		/* enum auxsample_branch_kind */
	uint32_t	flags;		/* AUXSAMPLE_BRF_* */
	uint32_t	cycles;
	uint32_t	reserved;	/* 0: no padding, entries compare whole */
};

struct auxsample_stats {
	size_t		size;		/* sizeof(struct auxsample_stats) */
	uint64_t	bytes;		/* snippet bytes */
	uint64_t	bytes_before_sync; /* before the first sync point: unused */
	uint64_t	syncs;		/* sync points decoded from */
	uint64_t	insns;		/* instructions decoded */
	uint64_t	branches;	/* taken branches seen (kept or not) */
	uint64_t	errors;		/* decode errors */
	uint64_t	gaps;		/* trace gaps */
	uint64_t	underflows;	/* returns into frames older than the snippet */
	uint64_t	end_ip;		/* where the trace stopped (the sample point), or 0 */
	/* offset decoding started at: the latest sync point giving enough */
	uint64_t	decode_start;
	/* stretches left out: another thread's (__set_thread()) */
	uint64_t	foreign;
	/* branches decoded after the sample point, left out (__set_sample_ip()) */
	uint64_t	late;
	/* Intel PT walker: snippets (a stream's stretches) it handed to libipt */
	uint64_t	pt_fallbacks;
	/*
	 * Intel PT walker: basic blocks it decoded from the code (not found
	 * in the image's block cache), and blocks it evicted from that
	 * cache, which was full (see auxsample_image__invalidate())
	 */
	uint64_t	pt_blocks_built;
	uint64_t	pt_blocks_evicted;
	/*
	 * Intel PT walker: decodes that skimmed the snippet's early part
	 * (only the call stack and the counts kept), and those of them it
	 * walked again whole, where skimming could not give the same
	 */
	uint64_t	pt_skims;
	uint64_t	pt_skims_lost;
};

/* One decode error: where in the snippet, and the library's code. */
struct auxsample_decode_error {
	uint64_t	offset;		/* snippet offset */
	int		error;		/* -enum auxsample_error */
	int		lib_error;	/* the backend's own code (libipt: -pte_*) */
};

struct auxsample_decoder;

/*
 * A decoder for @config, or NULL with the reason in *@err (if not NULL):
 * -AUXSAMPLE_ERR_INVALID for a bad configuration, -AUXSAMPLE_ERR_NOT_BUILT
 * for a trace type whose decoder this build of the library lacks (its
 * library, libipt or OpenCSD, was not found), -AUXSAMPLE_ERR_NOMEM.
 */
AUXSAMPLE_API struct auxsample_decoder *
auxsample_decoder__new(const struct auxsample_config *config, int *err);
AUXSAMPLE_API void auxsample_decoder__delete(struct auxsample_decoder *dec);

/*
 * Decode @len bytes at @snippet, keeping the last @max_branches taken
 * branches.  Returns the number of branches kept, 0 or more, even when
 * parts of the snippet failed to decode (see __errors() and the gap
 * records); -AUXSAMPLE_ERR_NOSYNC when the snippet holds no sync point.
 *
 * Decoding starts at the latest sync point that still yields
 * @max_branches (stats.decode_start), so that a shallow virtual LBR
 * costs a fraction of the snippet; the call chain then only knows the
 * calls made since (unless AUXSAMPLE_CFG_WHOLE_SNIPPET).
 */
AUXSAMPLE_API int auxsample_decoder__decode(struct auxsample_decoder *dec,
					    const void *snippet, size_t len,
					    unsigned int max_branches);

/*
 * Stream decoding, for samples whose snippets overlap (consecutive samples
 * of a CPU, at high sample rates, share most of their bytes): lay their
 * snippets end to end, each one's new bytes after the last, and decode
 * the whole once.  __stream_begin() starts at the first sync point of
 * the @len bytes at @trace, which the caller keeps until the next
 * __stream_begin(), __decode() or __delete().  __stream_to() decodes on
 * to @end, where a sample's snippet ends (it began at @start), and leaves
 * the results as __decode() of that snippet would, and more: branches
 * older than the snippet, calls made before it.  Its ends must come in
 * order.
 *
 * Returns what __decode() returns; -AUXSAMPLE_ERR_NOT_IN_STREAM where the
 * stream cannot tell which branches came before @end: the trace did not
 * stop there (Intel PT: the PMI of a sample of user code stops it; kernel
 * trace goes on), or the stream is past it.  Decode that snippet on its
 * own then.  Only Intel PT so far.
 */
AUXSAMPLE_API int auxsample_decoder__stream_begin(struct auxsample_decoder *dec,
						  const void *trace, size_t len,
						  unsigned int max_branches);
AUXSAMPLE_API int auxsample_decoder__stream_to(struct auxsample_decoder *dec,
					       uint64_t start, uint64_t end);

/*
 * Make bytes [@from, @to) of a stream's trace readable where
 * __stream_begin() was told the trace is; the decoder will not read the
 * bytes before @from again without fetching them again.  Return 0, or
 * anything else where the bytes cannot be had.  Called from the decoding
 * thread, within __stream_begin() and __stream_to().
 */
typedef int (auxsample_fetch_fn)(uint64_t from, uint64_t to, void *context);

/*
 * For the streams begun after it (NULL, the default: the whole trace is
 * there from the start): the decoder asks @fetch for the stretches of the
 * trace it needs, in turn, so that a long stream need not be in memory
 * whole.  The Intel PT walker fetches what each __stream_to() reads
 * and lets go of what is behind it; libipt, which reads its buffer
 * anywhere, fetches the whole trace, as does the walker where it hands a
 * stream to libipt.  A failed fetch fails the call with
 * -AUXSAMPLE_ERR_FETCH.
 */
AUXSAMPLE_API int auxsample_decoder__set_stream_fetch(struct auxsample_decoder *dec,
						      auxsample_fetch_fn *fetch, void *context);

/*
 * Decode on with @image's code (NULL: none, all code through
 * config.read_memory), for a process whose maps changed: unlike a new
 * decoder, a stream goes on with the calls it has seen.  The decoder takes
 * a reference to @image and puts the old one's.  From the next __decode()
 * or __stream_to() on, nothing of the old image's code is used.
 */
AUXSAMPLE_API int auxsample_decoder__set_image(struct auxsample_decoder *dec,
					       struct auxsample_image *image);

/*
 * The IP of the sample the next __decode()s are for (perf's sample->ip),
 * or 0, the default: the snippet's end is the sample point.
 *
 * A sample is written some time after its event.  With kernel tracing
 * the snippet goes on past the sample point, through the PMI entry,
 * perf's NMI handler and the AUX copy (a tracepoint: through the call
 * into perf), and its newest branches are perf's own.  With the sample
 * IP and config.kernel_start, decoding drops the branches after the
 * sample point, by upstream perf's rule (thread_stack__br_sample_late()):
 * for a user-space IP the branch stack starts at the newest branch to user
 * space; for a kernel IP at the newest branch from whose target the code
 * runs straight past the IP to the next branch, or the newest branch from
 * or to user space.  The call chain is the one at that point, and
 * @max_branches counts branches before it: decoding goes back to earlier
 * sync points until it has them.  stats.late counts the branches left out.
 * Stream decoding (__stream_to()) serves snippets that end at the sample:
 * where the rule would leave branches out, it returns
 * -AUXSAMPLE_ERR_NOT_IN_STREAM.
 */
AUXSAMPLE_API int auxsample_decoder__set_sample_ip(struct auxsample_decoder *dec, uint64_t ip);

/*
 * The thread the next decodes are for, as the trace names it (ETM: the
 * context ID, which Linux sets to the thread's ID), or -1, the default:
 * any.  Trace that says it is another thread's is left out, a gap, and its
 * code is not read (through the wrong thread's memory it would decode to
 * branches that never were).  Intel PT trace names no thread.
 */
AUXSAMPLE_API int auxsample_decoder__set_thread(struct auxsample_decoder *dec, int64_t tid);

/* Results of the last decode; valid until the next one. */
AUXSAMPLE_API int auxsample_decoder__branches(const struct auxsample_decoder *dec,
					      const struct auxsample_branch **branches);
AUXSAMPLE_API int auxsample_decoder__callchain(const struct auxsample_decoder *dec,
					       const uint64_t **ips);
AUXSAMPLE_API int auxsample_decoder__errors(const struct auxsample_decoder *dec,
					    const struct auxsample_decode_error **errors);
AUXSAMPLE_API int auxsample_decoder__stats(const struct auxsample_decoder *dec,
					   struct auxsample_stats *stats, size_t size);

AUXSAMPLE_API struct auxsample_image *auxsample_image__new(void);
/*
 * A new image, of no files, in @image's family: the Intel PT walker
 * decodes the code of a file at an offset once for all the images of a
 * family, wherever each maps it (the processes of a recording map the
 * same libc, ld.so and programs), for the files added with an identity
 * (auxsample_image__add_file_id()).  NULL when out of memory.
 */
AUXSAMPLE_API struct auxsample_image *auxsample_image__new_sibling(struct auxsample_image *image);
AUXSAMPLE_API struct auxsample_image *auxsample_image__get(struct auxsample_image *image);
AUXSAMPLE_API void auxsample_image__put(struct auxsample_image *image);
/* @size bytes of @filename from @offset are the code at @vaddr. */
AUXSAMPLE_API int auxsample_image__add_file(struct auxsample_image *image,
					    const char *filename, uint64_t offset,
					    uint64_t size, uint64_t vaddr);
/*
 * The same, the file known to the image's family by @identity: a string
 * that only files of the same bytes have (a build-id; a device, inode
 * and generation), so that its code is decoded once for all the family.
 * Never the name alone: a container's libc and the host's, or a program
 * rebuilt during a recording, have one name and other bytes.  NULL or
 * "": the file's code is the image's own, as auxsample_image__add_file()
 * adds it.
 */
AUXSAMPLE_API int auxsample_image__add_file_id(struct auxsample_image *image,
					       const char *filename, uint64_t offset,
					       uint64_t size, uint64_t vaddr, const char *identity);
/*
 * A new image of the same files, as of now, in @image's family, that
 * shares only what does not contend with @image: decoders in different
 * threads decode faster from images of their own than from one shared
 * image, whose sections' block caches and locks they contend for.  NULL
 * when out of memory.
 */
AUXSAMPLE_API struct auxsample_image *auxsample_image__clone(struct auxsample_image *image);

/* Whether auxsample_image__copy() keeps a file, as it was added: non-zero to keep it. */
typedef int (*auxsample_image_keep_fn)(const char *filename, uint64_t offset, uint64_t size,
				       uint64_t vaddr, void *arg);
/*
 * A new image in @image's family, of those of its files that @keep keeps
 * (all, where @keep is NULL), in their order; add the files mapped since
 * to it.  It costs no more than what changed: the files are not looked
 * at again, and the family's decoded code of them stays.  The code that
 * changed in @image (auxsample_image__invalidate()) is the copy's own
 * too.  @keep is called under @image's lock, and must not use @image.
 * NULL when out of memory.
 */
AUXSAMPLE_API struct auxsample_image *auxsample_image__copy(struct auxsample_image *image,
							   auxsample_image_keep_fn keep,
							   void *arg);

/*
 * The code at [@vaddr, @vaddr + @size) changed without a new file mapped
 * there (JIT code, self-modifying code, a patched text): the Intel PT
 * walker decodes it again (it keeps the basic blocks of an image's code,
 * shared by the image's clones, from the first time it reads them, and
 * drops them only here and where auxsample_image__add_file() maps a file
 * over them).  Only this image's copy of a file's code changed there
 * (a uprobe, a breakpoint): the range's code is this image's own from
 * then on, decoded apart from the image's family.  Decodes under way
 * keep the code they started with; each decode after this call reads the
 * new one.  0, or -AUXSAMPLE_ERR_INVALID.
 */
AUXSAMPLE_API int auxsample_image__invalidate(struct auxsample_image *image,
					      uint64_t vaddr, uint64_t size);

/* Whether this build of the library decodes trace of @type. */
AUXSAMPLE_API int auxsample_supports(enum auxsample_trace_type type);

AUXSAMPLE_API const char *auxsample_strerror(int error);
AUXSAMPLE_API const char *auxsample_branch_kind__name(unsigned int kind);

#ifdef __cplusplus
}
#endif

#endif /* __AUXSAMPLE_AUXSAMPLE_H */
