// SPDX-License-Identifier: GPL-2.0
/*
 * AUX sample decoding in perf: libauxsample reading the traced code
 * through perf's machine, thread, maps and dsos.  The trace is real Intel
 * PT of a static program recorded by others (../shared/data/pt, found
 * through the AUXSAMPLE_DATA environment variable, as make check sets it).
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/zalloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include "debug.h"
#include "event.h"
#include "machine.h"
#include "maps.h"
#include "sample.h"
#include "tests.h"
#include "thread.h"

#ifdef HAVE_AUXSAMPLE_SUPPORT
#include <auxsample/auxsample.h>
#include "auxsample.h"
#include "auxsample-place.h"
#include "auxsample-stat.h"

#define HELLO_DIR	"pt/dynamorio-drpt2trace/v2022-06-glibc-static/test_simple.tracedir"
#define HELLO_PID	4242

static char *data_path(const char *name)
{
	const char *dir = getenv("AUXSAMPLE_DATA");
	char *path;

	if (!dir || asprintf(&path, "%s/%s/%s", dir, HELLO_DIR, name) < 0)
		return NULL;
	if (access(path, R_OK)) {
		free(path);
		return NULL;
	}
	return path;
}

static void *read_file(const char *path, size_t *size)
{
	struct stat st;
	void *buf = NULL;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && st.st_size > 0) {
		buf = malloc(st.st_size);
		if (buf && read(fd, buf, st.st_size) != st.st_size)
			zfree(&buf);
		*size = st.st_size;
	}
	close(fd);
	return buf;
}

/* @path's [@pgoff, +@len) mapped into HELLO_PID at @start, as PERF_RECORD_MMAP2 says. */
static int map_file(struct machine *machine, const char *path, u64 start, u64 len,
		    u64 pgoff, u32 prot, u64 ino)
{
	union perf_event *event = zalloc(sizeof(event->mmap2));
	struct perf_sample sample = { .cpumode = PERF_RECORD_MISC_USER };
	int err;

	if (!event)
		return -ENOMEM;
	event->mmap2.header.type = PERF_RECORD_MMAP2;
	event->mmap2.header.misc = PERF_RECORD_MISC_USER;
	event->mmap2.header.size = sizeof(event->mmap2);
	event->mmap2.pid = HELLO_PID;
	event->mmap2.tid = HELLO_PID;
	event->mmap2.start = start;
	event->mmap2.len = len;
	event->mmap2.pgoff = pgoff;
	event->mmap2.maj = ino ? 8 : 0;
	event->mmap2.ino = ino;
	event->mmap2.prot = prot;
	event->mmap2.flags = MAP_PRIVATE;
	strlcpy(event->mmap2.filename, path, sizeof(event->mmap2.filename));
	err = machine__process_mmap2_event(machine, event, &sample);
	free(event);
	return err;
}

/* Map the ELF's loadable segments into the thread, as PERF_RECORD_MMAP2 does. */
static int map_elf(struct machine *machine, const char *path)
{
	size_t size = 0;
	Elf64_Ehdr *eh = read_file(path, &size);
	Elf64_Phdr *ph;
	int ret = -1;

	if (!eh || size < sizeof(*eh) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		goto out;
	ph = (void *)eh + eh->e_phoff;
	for (int i = 0; i < eh->e_phnum; i++) {
		u64 skew = ph[i].p_vaddr & 0xfff;

		if (ph[i].p_type != PT_LOAD)
			continue;
		if (map_file(machine, path, ph[i].p_vaddr - skew, ph[i].p_filesz + skew,
			     ph[i].p_offset - skew,
			     PROT_READ | (ph[i].p_flags & PF_X ? PROT_EXEC : 0), 0))
			goto out;
	}
	ret = 0;
out:
	free(eh);
	return ret;
}

static int test__auxsample_maps(struct test_suite *test __maybe_unused,
				int subtest __maybe_unused)
{
	char *elf = data_path("hello"), *pt_path = data_path("pt.bin");
	struct auxsample_mem mem = { NULL, NULL };
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		/* The recording's Skylake-SP, as its README says. */
		.pt = { .family = 6, .model = 85, .stepping = 4,
			.cpuid_0x15_eax = 2, .cpuid_0x15_ebx = 308,
			.mtc_freq = 3, .nom_freq = 37 },
		.read_memory = auxsample_mem__read,
		.context = &mem,
	};
	struct auxsample_decoder *dec = NULL;
	struct auxsample_stats stats;
	size_t pt_size = 0;
	void *pt = NULL;
	u8 byte;
	int ret = TEST_FAIL;

	if (!elf || !pt_path || !auxsample_supports(AUXSAMPLE_TRACE_INTEL_PT)) {
		ret = TEST_SKIP;
		goto out;
	}
	pt = read_file(pt_path, &pt_size);
	mem.machine = machine__new_host();
	if (!pt || !mem.machine)
		goto out;
	mem.thread = machine__findnew_thread(mem.machine, HELLO_PID, HELLO_PID);
	if (!mem.thread || map_elf(mem.machine, elf)) {
		pr_debug("cannot map %s into a thread\n", elf);
		goto out;
	}

	TEST_ASSERT_VAL("no map at 0", auxsample_mem__read(&byte, 1, 0, &mem) < 0);

	dec = auxsample_decoder__new(&config, NULL);
	if (!dec)
		goto out;
	if (auxsample_decoder__decode(dec, pt, pt_size, 64) < 0)
		goto out;
	auxsample_decoder__stats(dec, &stats, sizeof(stats));
	pr_debug("%" PRIu64 " instructions, %" PRIu64 " branches, %" PRIu64 " errors\n",
		 (u64)stats.insns, (u64)stats.branches, (u64)stats.errors);
	if (stats.insns == 59234 && !stats.errors)
		ret = TEST_OK;
out:
	auxsample_decoder__delete(dec);
	thread__put(mem.thread);
	machine__delete(mem.machine);
	free(pt);
	free(elf);
	free(pt_path);
	return ret;
}

#define MAPS_SKIP "no AUXSAMPLE_DATA=<shared/data> with DynamoRIO's glibc-static trace, or perf built without libipt"

#define OVERLAP_SIZE	(2 * 1024 * 1024)
#define OVERLAP_MAX_S	5.0	/* the byte-at-a-time walk took half a minute */

static double overlap__seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool overlap__expect(const char *what, size_t got, size_t want)
{
	if (got == want)
		return true;
	pr_debug("overlap, %s: %zu, expected %zu\n", what, got, want);
	return false;
}

/*
 * perf auxsample stat's overlap of consecutive snippets: what they share,
 * and in linear time on snippets crafted to share half their bytes after
 * the probe (it once walked back a byte at a time, comparing each time).
 */
static int test__auxsample_overlap(struct test_suite *test __maybe_unused,
				   int subtest __maybe_unused)
{
	size_t half = OVERLAP_SIZE / 2, got;
	u32 x = 2463534242U;
	int ret = TEST_FAIL;
	u8 *prev, *cur;
	double t;

	prev = malloc(OVERLAP_SIZE);
	cur = malloc(OVERLAP_SIZE);
	if (!prev || !cur)
		goto out;

	/* The last 1000 bytes of @prev begin @cur; then zero padding. */
	for (size_t i = 0; i < OVERLAP_SIZE; i++) {
		/* xorshift32: no 32 bytes come twice */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		prev[i] = x >> 24;
	}
	memcpy(cur, prev + OVERLAP_SIZE - 1000, 1000);
	memset(cur + 1000, 0, 4096);
	if (!overlap__expect("a tail", auxsample__overlap(prev, OVERLAP_SIZE, cur, 5096), 1000))
		goto out;
	memset(prev + OVERLAP_SIZE - 8, 0, 8);
	if (!overlap__expect("up to the zero padding",
			     auxsample__overlap(prev, OVERLAP_SIZE, cur, 5096), 992) ||
	    !overlap__expect("none", auxsample__overlap(cur + 1000, 4096, prev, 4096), 0) ||
	    !overlap__expect("too short", auxsample__overlap(prev, 16, prev, 16), 0) ||
	    !overlap__expect("no previous", auxsample__overlap(NULL, 0, prev, 4096), 0))
		goto out;

	memset(prev, 'A', OVERLAP_SIZE);
	memset(prev + half, 'B', half);
	memset(cur, 'A', OVERLAP_SIZE);
	memset(cur + half, 'C', half);
	t = overlap__seconds();
	got = auxsample__overlap(prev, OVERLAP_SIZE, cur, OVERLAP_SIZE);
	t = overlap__seconds() - t;
	pr_debug("overlap of two %d byte snippets sharing %zu: %zu in %.3f s\n",
		 OVERLAP_SIZE, half, got, t);
	if (!overlap__expect("crafted snippets", got, half))
		goto out;
	if (t >= OVERLAP_MAX_S) {
		pr_debug("overlap took %.1f s: not linear\n", t);
		goto out;
	}
	ret = TEST_OK;
out:
	free(prev);
	free(cur);
	return ret;
}

#define OVERLAP_SKIP NULL

/* Feed @place a sideband event of @type about @tid on @cpu; 0 or an errno. */
static int place__feed(struct auxsample_place *place, u32 type, bool out, u32 tid, u32 cpu,
		       u32 next_prev_tid)
{
	union perf_event event = { .header = { .type = type, .size = sizeof(event) } };
	struct perf_sample sample = { .pid = tid, .tid = tid, .cpu = cpu };

	if (out)
		event.header.misc = PERF_RECORD_MISC_SWITCH_OUT;
	if (type == PERF_RECORD_ITRACE_START) {
		event.itrace_start.pid = tid;
		event.itrace_start.tid = tid;
	} else if (type == PERF_RECORD_SWITCH_CPU_WIDE) {
		event.context_switch.next_prev_pid = next_prev_tid;
		event.context_switch.next_prev_tid = next_prev_tid;
	}
	return auxsample_place__event(place, &event, &sample);
}

static bool place__expect(struct auxsample_place *place, const char *what, u32 tid, int want)
{
	struct perf_sample sample = { .pid = tid, .tid = tid, .cpu = -1 };
	int got = auxsample_place__cpu(place, &sample);

	if (got == want)
		return true;
	pr_debug("%s: thread %u placed on CPU %d, not %d\n", what, tid, got, want);
	return false;
}

/*
 * Samples without a CPU beside a full trace go where the sideband says
 * their thread ran, and nowhere where it does not say for certain.
 */
static int test__auxsample_place(struct test_suite *test __maybe_unused,
				 int subtest __maybe_unused)
{
	struct auxsample_place *place = auxsample_place__new();
	int ret = TEST_FAIL;

	if (!place)
		return TEST_FAIL;
	/* ITRACE_START alone: certain while the thread has run on one CPU. */
	if (place__feed(place, PERF_RECORD_ITRACE_START, false, 10, 3, 0) ||
	    !place__expect(place, "one ITRACE_START", 10, 3) ||
	    place__feed(place, PERF_RECORD_ITRACE_START, false, 10, 5, 0) ||
	    !place__expect(place, "ITRACE_STARTs on two CPUs, no switches", 10, -1) ||
	    !place__expect(place, "no sideband", 11, -1))
		goto out;
	/* Context switches of the task: in on a CPU until switched out. */
	if (place__feed(place, PERF_RECORD_ITRACE_START, false, 20, 1, 0) ||
	    place__feed(place, PERF_RECORD_SWITCH, true, 20, 1, 0) ||
	    !place__expect(place, "switched out", 20, -1) ||
	    place__feed(place, PERF_RECORD_ITRACE_START, false, 20, 2, 0) ||
	    place__feed(place, PERF_RECORD_SWITCH, false, 20, 2, 0) ||
	    !place__expect(place, "switched in after a move", 20, 2) ||
	    place__feed(place, PERF_RECORD_SWITCH, false, 20, 1, 0) ||
	    !place__expect(place, "switched in again on the first CPU", 20, 1))
		goto out;
	/* CPU-wide switches: the task switched in, and the one it replaced. */
	if (place__feed(place, PERF_RECORD_SWITCH_CPU_WIDE, true, 30, 4, 31) ||
	    !place__expect(place, "switched out, CPU-wide", 30, -1) ||
	    !place__expect(place, "next on the CPU, CPU-wide", 31, 4) ||
	    place__feed(place, PERF_RECORD_SWITCH_CPU_WIDE, false, 30, 6, 32) ||
	    !place__expect(place, "switched in, CPU-wide", 30, 6) ||
	    !place__expect(place, "previous, never seen in", 32, -1) ||
	    place__feed(place, PERF_RECORD_SWITCH_CPU_WIDE, false, 33, 7, 30) ||
	    !place__expect(place, "previous on another CPU (clock skew)", 30, 6))
		goto out;
	/* A sample id without a CPU (per-thread recording) places nothing. */
	if (place__feed(place, PERF_RECORD_ITRACE_START, false, 40, -1, 0) ||
	    !place__expect(place, "ITRACE_START without a CPU", 40, -1))
		goto out;
	ret = TEST_OK;
out:
	auxsample_place__delete(place);
	return ret;
}

#define PLACE_SKIP NULL

#define IMAGE_STEPS	6

/*
 * A process's image (auxsample_proc) is made again when its maps change
 * what it maps, even when their count does not: a file mapped where
 * another was.  An image of the old maps would decode the new file's
 * code as the old one's, and give it to the other processes' images as
 * such.  A map replaced by the same one (ld.so and mprotect() do that)
 * moves the maps' version but keeps the image, unless the process has
 * code outside files, which may have changed unseen (a JIT's).
 */
static int test__auxsample_image(struct test_suite *test __maybe_unused,
				 int subtest __maybe_unused)
{
	char names[2][32] = { "/tmp/perf-auxsample-a-XXXXXX", "/tmp/perf-auxsample-b-XXXXXX" };
	/* Each mapped at 0x400000 but the anonymous code, at 0x500000. */
	static const struct {
		int		file;		/* in names[], or -1: anonymous */
		u64		ino;
		u64		pgoff;
		bool		same;		/* the image of the step before */
		const char	*what;
	} steps[IMAGE_STEPS] = {
		{ 0, 1, 0,	false,	"a file" },
		{ 0, 1, 0,	true,	"the same map again" },
		{ 0, 3, 0,	false,	"the same name, another inode" },
		{ 0, 3, 0x1000,	false,	"another offset" },
		{ 1, 2, 0,	false,	"another file" },
		{ -1, 0, 0,	false,	"anonymous code" },
	};
	struct auxsample_image *image[IMAGE_STEPS + 1] = {};
	struct auxsample_proc proc = {};
	struct machine *machine;
	struct thread *thread = NULL;
	u64 version = 0;
	int ret = TEST_FAIL;

	for (int i = 0; i < 2; i++) {
		int fd = mkstemp(names[i]);

		if (fd < 0 || write(fd, "\xc3", 1) != 1)
			names[i][0] = '\0';
		if (fd >= 0)
			close(fd);
	}
	machine = machine__new_host();
	if (!names[0][0] || !names[1][0] || !machine)
		goto out;
	thread = machine__findnew_thread(machine, HELLO_PID, HELLO_PID);
	if (!thread)
		goto out;
	for (int i = 0; i <= IMAGE_STEPS; i++) {
		/* The last step maps the anonymous code again, the same map. */
		int k = i < IMAGE_STEPS ? i : IMAGE_STEPS - 1;
		bool anon = steps[k].file < 0;
		struct maps *maps = thread__maps(thread);

		if (map_file(machine, anon ? "//anon" : names[steps[k].file],
			     anon ? 0x500000 : 0x400000, 0x1000, steps[k].pgoff,
			     PROT_READ | PROT_EXEC, steps[k].ino))
			goto out;
		if (maps__nr_maps(maps) != 1U + (i >= IMAGE_STEPS - 1) ||
		    maps__version(maps) == version) {
			pr_debug("step %d: %u maps, version %" PRIu64 ": not as the test needs\n",
				 i, maps__nr_maps(maps), maps__version(maps));
			goto out;
		}
		version = maps__version(maps);
		/* Held: no image is freed and made again at the same address. */
		image[i] = auxsample_image__get(auxsample_proc__image(&proc, machine, thread));
		if (!image[i])
			goto out;
		pr_debug("%s: image %p\n", i < IMAGE_STEPS ? steps[i].what :
			 "the same anonymous map again", image[i]);
		if (i && (image[i] == image[i - 1]) != (i < IMAGE_STEPS && steps[i].same)) {
			pr_debug("%s: %s image\n", i < IMAGE_STEPS ? steps[i].what :
				 "the same anonymous map again",
				 image[i] == image[i - 1] ? "the same" : "a new");
			goto out;
		}
	}
	ret = TEST_OK;
out:
	auxsample_proc__exit(&proc);
	for (int i = 0; i <= IMAGE_STEPS; i++)
		auxsample_image__put(image[i]);
	thread__put(thread);
	machine__delete(machine);
	for (int i = 0; i < 2; i++) {
		if (names[i][0])
			unlink(names[i]);
	}
	return ret;
}

#define IMAGE_SKIP NULL
#else
static int test__auxsample_maps(struct test_suite *test __maybe_unused,
				int subtest __maybe_unused)
{
	return TEST_SKIP;
}

#define MAPS_SKIP "perf built without libauxsample (needs libipt, or libopencsd with CORESIGHT=1)"

static int test__auxsample_overlap(struct test_suite *test __maybe_unused,
				   int subtest __maybe_unused)
{
	return TEST_SKIP;
}

#define OVERLAP_SKIP MAPS_SKIP

static int test__auxsample_place(struct test_suite *test __maybe_unused,
				 int subtest __maybe_unused)
{
	return TEST_SKIP;
}

#define PLACE_SKIP MAPS_SKIP

static int test__auxsample_image(struct test_suite *test __maybe_unused,
				 int subtest __maybe_unused)
{
	return TEST_SKIP;
}

#define IMAGE_SKIP MAPS_SKIP
#endif

static struct test_case tests__auxsample[] = {
	TEST_CASE_REASON("Decode real Intel PT reading code through perf's maps",
			 auxsample_maps, MAPS_SKIP),
	TEST_CASE_REASON("Measure the overlap of snippets in linear time",
			 auxsample_overlap, OVERLAP_SKIP),
	TEST_CASE_REASON("Place samples without a CPU by their thread's sideband",
			 auxsample_place, PLACE_SKIP),
	TEST_CASE_REASON("Make a process's image again when its maps map other files",
			 auxsample_image, IMAGE_SKIP),
	{ .name = NULL, }
};

struct test_suite suite__auxsample = {
	.desc = "AUX sample decoding (libauxsample)",
	.test_cases = tests__auxsample,
};
