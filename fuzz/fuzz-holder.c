// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the persistent event holder's request handling, fed
 * what a hostile client may send it over its socket.
 *
 * Input: a header byte, then messages.  Header bit 0: the client is root
 * (else uid 65534), bit 1: it is in the reader group.  Each message: a
 * kind byte (bits 0-1: the fd passed with it: none, /dev/null, a pipe, a
 * perf event of this task, opened disabled and write-backward; bit 2: the
 * holder's scan and relay run after it), a length byte (times 8, at most
 * a persistent_msg and a bit), then that many bytes.  The holder serves
 * one client through a socketpair, as its event loop would, and the
 * replies are read and dropped; every event it took is deleted at the
 * end of each input.
 *
 * Built by scripts/fuzz-link-perf against perf's objects, with the
 * holder's files instrumented.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>
#include <internal/lib.h>
#include "debug.h"
#include "persistent.h"
#include "persistent-holder.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char rundir[] = "/tmp/perf-fuzz-holder.XXXXXX";
static struct holder h;

static void cleanup(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", rundir);
	if (system(cmd))
		fprintf(stderr, "fuzz-holder: cannot remove %s\n", rundir);
}

int LLVMFuzzerInitialize(int *argc __maybe_unused, char ***argv __maybe_unused)
{
	verbose = -1;
	page_size = sysconf(_SC_PAGE_SIZE);	/* perf's main() sets it */
	if (!mkdtemp(rundir))
		abort();
	atexit(cleanup);
	INIT_LIST_HEAD(&h.events);
	INIT_LIST_HEAD(&h.clients);
	h.dirfd = open(rundir, O_DIRECTORY | O_CLOEXEC);
	if (h.dirfd < 0 || mkdirat(h.dirfd, "events", 0755))
		abort();
	h.eventsfd = openat(h.dirfd, "events", O_DIRECTORY | O_CLOEXEC);
	h.listen = h.lockfd = h.pmufd = h.reserve_fd = -1;
	h.next_id = 1;
	h.max_conns = 64;
	h.max_pages = 1 << 16;
	h.root = geteuid() == 0;
	h.have_reader_group = true;
	h.reader_group = 4242;
	return h.eventsfd < 0 ? -1 : 0;
}

static int fuzz_fd(int kind, int *pipefd)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK,
		.size = sizeof(attr), .sample_period = 100000, .disabled = 1,
		.write_backward = 1, .sample_id_all = 1, .exclude_kernel = 1,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID,
	};

	switch (kind & 3) {
	case 1:
		return open("/dev/null", O_RDONLY | O_CLOEXEC);
	case 2:
		return pipefd[0] >= 0 ? dup(pipefd[0]) : -1;
	case 3:
		return syscall(__NR_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	default:
		return -1;
	}
}

static void drain(int sock)
{
	char buf[PERSISTENT_DATA_MAX + 64];

	while (recv(sock, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/* One message as the client sends it, with its fd if it has one. */
static void fuzz_send(int sock, const void *buf, size_t len, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cmsg;

	if (fd >= 0) {
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cmsg = CMSG_FIRSTHDR(&mh);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	}
	if (sendmsg(sock, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		drain(sock);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct holder_event *ev, *etmp;
	struct holder_client *c;
	int sv[2], pipefd[2] = { -1, -1 };
	size_t off = 1;

	if (!size || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return 0;
	if (pipe(pipefd))
		pipefd[0] = pipefd[1] = -1;
	c = zalloc(sizeof(*c));
	if (!c)
		abort();
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	c->sock = sv[0];
	c->uid = data[0] & 1 ? 0 : 65534;
	c->reader = data[0] & 2;
	c->deadline = ~0ULL;
	c->last_cpu = -1;
	list_add_tail(&c->list, &h.clients);

	while (off + 2 <= size && !c->dead) {
		int kind = data[off], fd;
		size_t len = min((size_t)data[off + 1] * 8, sizeof(struct persistent_msg) + 16);

		off += 2;
		len = min(len, size - off);
		fd = fuzz_fd(kind, pipefd);
		fuzz_send(sv[1], data + off, len, fd);
		if (fd >= 0)
			close(fd);
		off += len;
		holder__serve(&h, c);
		if (!c->dead && holder_client__flush(c))
			c->dead = true;
		if (kind & 4) {
			holder__scan(&h);
			holder__relay(&h);
		}
		drain(sv[1]);
	}

	/* The client hangs up; the holder is left as it was. */
	close(sv[1]);
	while (!list_empty(&h.clients))
		holder_client__delete(&h, list_first_entry(&h.clients, struct holder_client, list));
	list_for_each_entry_safe(ev, etmp, &h.events, list)
		holder_event__delete(&h, ev);
	if (h.pages)
		abort();	/* every page charged is given back */
	if (pipefd[0] >= 0) {
		close(pipefd[0]);
		close(pipefd[1]);
	}
	return 0;
}
