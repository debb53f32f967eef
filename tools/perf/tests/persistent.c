// SPDX-License-Identifier: GPL-2.0
/*
 * The readers of persistent events' shared, read-only, backward-written
 * ring buffers: on a buffer written here as the kernel writes one, and on
 * a real event of this process.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>
#include <internal/lib.h>

#include "debug.h"
#include "event.h"
#include "perf-sys.h"
#include "persistent.h"
#include "tests.h"
#include "util.h"


#define FAKE_PAGES	4

/* A record whose payload says its sequence number all through. */
struct fake_record {
	struct perf_event_header	header;
	u64				seq[];
};

struct fake_rb {
	struct persistent_buf	buf;
	u64			head;		/* what the kernel's rb->head would be */
	u64			next_seq;
};

static int fake_rb__init(struct fake_rb *rb)
{
	struct persistent_buf *buf = &rb->buf;

	memset(rb, 0, sizeof(*rb));
	buf->size = FAKE_PAGES * page_size;
	buf->len = buf->size + page_size;
	buf->base = zalloc(buf->len);
	buf->copy = malloc(buf->size);
	buf->offs = malloc(buf->size / sizeof(struct perf_event_header) * sizeof(u32));
	buf->prev = 0;
	return buf->base && buf->copy && buf->offs ? 0 : -ENOMEM;
}

static void fake_rb__exit(struct fake_rb *rb)
{
	zfree(&rb->buf.base);
	zfree(&rb->buf.copy);
	zfree(&rb->buf.offs);
}

/* Write one record below head, as perf_output_begin_backward() does. */
static void fake_rb__write(struct fake_rb *rb, unsigned int nr_words)
{
	struct persistent_buf *buf = &rb->buf;
	size_t size = sizeof(struct perf_event_header) + nr_words * sizeof(u64);
	u8 *data = (u8 *)buf->base + page_size, rec[512];
	struct fake_record *r = (void *)rec;
	u64 mask = buf->size - 1, pos;
	unsigned int i;

	r->header.type = PERF_RECORD_SAMPLE;
	r->header.misc = 0;
	r->header.size = size;
	for (i = 0; i < nr_words; i++)
		r->seq[i] = rb->next_seq;
	rb->next_seq++;

	rb->head -= size;
	for (i = 0, pos = rb->head; i < size; i++, pos++)
		data[pos & mask] = rec[i];
	((struct perf_event_mmap_page *)buf->base)->data_head = rb->head;
}

struct seen {
	u64	first, last, nr;
	bool	torn, disorder;
};

static int check_record(union perf_event *event, int cpu __maybe_unused, void *arg)
{
	struct fake_record *r = (void *)event;
	struct seen *seen = arg;
	unsigned int i, nr = (r->header.size - sizeof(r->header)) / sizeof(u64);

	for (i = 1; i < nr; i++) {
		if (r->seq[i] != r->seq[0])
			seen->torn = true;
	}
	if (seen->nr && r->seq[0] != seen->last + 1)
		seen->disorder = true;
	if (!seen->nr)
		seen->first = r->seq[0];
	seen->last = r->seq[0];
	seen->nr++;
	return 0;
}

static int test__persistent_buf_order(struct test_suite *test __maybe_unused,
				      int subtest __maybe_unused)
{
	struct seen seen = { .nr = 0 };
	struct fake_rb rb;
	int i;

	TEST_ASSERT_VAL("alloc", !fake_rb__init(&rb));
	for (i = 0; i < 40; i++)
		fake_rb__write(&rb, 1 + i % 7);
	TEST_ASSERT_VAL("read", !persistent_buf__read(&rb.buf, check_record, &seen));
	TEST_ASSERT_VAL("all records", seen.nr == 40);
	TEST_ASSERT_VAL("oldest first", seen.first == 0 && seen.last == 39 && !seen.disorder);
	TEST_ASSERT_VAL("intact", !seen.torn);
	TEST_ASSERT_VAL("nothing lost", rb.buf.lost_bytes == 0);

	/* A second read gets only what came since. */
	memset(&seen, 0, sizeof(seen));
	TEST_ASSERT_VAL("read again", !persistent_buf__read(&rb.buf, check_record, &seen));
	TEST_ASSERT_VAL("nothing new", seen.nr == 0);
	for (i = 0; i < 5; i++)
		fake_rb__write(&rb, 3);
	TEST_ASSERT_VAL("read new", !persistent_buf__read(&rb.buf, check_record, &seen));
	TEST_ASSERT_VAL("the new ones", seen.nr == 5 && seen.first == 40 && seen.last == 44);
	fake_rb__exit(&rb);
	return TEST_OK;
}

/*
 * A reader three buffers behind gets the newest records that are whole,
 * in order and intact, and counts the rest as lost.
 */
static int test__persistent_buf_overwrite(struct test_suite *test __maybe_unused,
					  int subtest __maybe_unused)
{
	struct seen seen = { .nr = 0 };
	struct fake_rb rb;
	u64 written = 0;
	int i;

	TEST_ASSERT_VAL("alloc", !fake_rb__init(&rb));
	for (i = 0; written < 3 * rb.buf.size; i++) {
		fake_rb__write(&rb, 1 + i % 13);
		written += sizeof(struct perf_event_header) + (1 + i % 13) * sizeof(u64);
	}
	TEST_ASSERT_VAL("read", !persistent_buf__read(&rb.buf, check_record, &seen));
	pr_debug("wrote %" PRIu64 " records, read %" PRIu64 " (%" PRIu64 "-%" PRIu64
		 "), lost %" PRIu64 " bytes\n", rb.next_seq, seen.nr, seen.first, seen.last,
		 rb.buf.lost_bytes);
	TEST_ASSERT_VAL("some read", seen.nr > 0);
	TEST_ASSERT_VAL("newest last", seen.last == rb.next_seq - 1);
	TEST_ASSERT_VAL("in order", !seen.disorder);
	TEST_ASSERT_VAL("intact", !seen.torn);
	TEST_ASSERT_VAL("lost counted", rb.buf.lost_bytes >= 2 * rb.buf.size);
	/* At most a page and a record short of the buffer: nothing else lost. */
	TEST_ASSERT_VAL("lost no more",
			rb.buf.lost_bytes <= written - rb.buf.size + page_size + 112);
	fake_rb__exit(&rb);
	return TEST_OK;
}

/* A real backward event of ours, mapped read-only twice. */
static int test__persistent_buf_kernel(struct test_suite *test __maybe_unused,
				       int subtest __maybe_unused)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.sample_period = 100000,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.write_backward = 1,
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	struct persistent_buf a, b;
	struct seen sa = { .nr = 0 }, sb = { .nr = 0 };
	volatile u64 spin = 0;
	int fd, ret = TEST_FAIL;

	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	if (fd < 0) {
		pr_debug("perf_event_open: %s\n", strerror(errno));
		return TEST_SKIP;
	}
	if (persistent_buf__mmap(&a, fd, -1, 8, false) ||
	    persistent_buf__mmap(&b, fd, -1, 8, false)) {
		pr_debug("read-only mmap of a backward buffer: %s\n", strerror(errno));
		goto out_close;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	while (spin < 100000000ULL)
		spin++;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);

	/* Only counting: the payload is not a sequence here. */
	if (persistent_buf__read(&a, check_record, &sa) ||
	    persistent_buf__read(&b, check_record, &sb))
		goto out_unmap;
	pr_debug("readers got %" PRIu64 " and %" PRIu64 " records\n", sa.nr, sb.nr);
	if (sa.nr > 0 && sa.nr == sb.nr)
		ret = TEST_OK;
out_unmap:
	persistent_buf__munmap(&a);
	persistent_buf__munmap(&b);
out_close:
	close(fd);
	return ret;
}

static struct test_case tests__persistent[] = {
	TEST_CASE("Read a backward buffer oldest first", persistent_buf_order),
	TEST_CASE("Count overwritten records as lost, never torn", persistent_buf_overwrite),
	TEST_CASE("Share a real event's buffer between readers", persistent_buf_kernel),
	{ .name = NULL, }
};

struct test_suite suite__persistent = {
	.desc = "Persistent event buffers",
	.test_cases = tests__persistent,
};
