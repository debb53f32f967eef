// SPDX-License-Identifier: GPL-2.0
/*
 * What the persistent event holder does with the files clients send it
 * and it does not keep, and with their sockets.
 *
 * Closing the last reference to a file runs its release, which can wait
 * on whoever is at the other end: a TCP socket set to linger on a peer
 * that never reads, a FUSE file whose daemon never answers, a terminal
 * that never drains.  A client could hand the holder such a file in any
 * message, or leave it unread in its socket for the holder's close() of
 * that socket to release.  So the holder closes only the files it knows
 * (perf events) itself; everything else goes to a short-lived child
 * process that holds the last reference and is killed if it waits too
 * long, and a client's socket is shut down and emptied before it is
 * closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/sockios.h>
#include <linux/kernel.h>

#include "debug.h"
#include "persistent.h"
#include "persistent-holder.h"

/* As many as one message can carry (the kernel's SCM_MAX_FD). */
#define HOLDER_MAX_FDS		253
#define HOLDER_MAX_DOOMED	4096

bool holder__is_perf_event(int fd)
{
	char link[64], target[64];
	ssize_t n;

	scnprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return !strcmp(target, "anon_inode:[perf_event]");
}

void holder__drop_fd(struct holder *h, int fd)
{
	int *tmp;

	if (fd < 0)
		return;
	/* A perf event's release waits on nobody. */
	if (holder__is_perf_event(fd) || h->nr_doomed >= HOLDER_MAX_DOOMED) {
		close(fd);
		return;
	}
	if (h->nr_doomed == h->max_doomed) {
		tmp = realloc(h->doomed, (h->max_doomed * 2 + 16) * sizeof(int));
		if (!tmp) {
			close(fd);
			return;
		}
		h->doomed = tmp;
		h->max_doomed = h->max_doomed * 2 + 16;
	}
	h->doomed[h->nr_doomed++] = fd;
}

static int holder__recvmsg(int sock, struct persistent_msg *msg, int *fds, int *nr)
{
	char cbuf[CMSG_SPACE(HOLDER_MAX_FDS * sizeof(int))];
	struct iovec iov = { .iov_base = msg, .iov_len = sizeof(*msg) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cmsg;
	ssize_t n;

	*nr = 0;
	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	for (cmsg = CMSG_FIRSTHDR(&mh); cmsg; cmsg = CMSG_NXTHDR(&mh, cmsg)) {
		int i, count;

		if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS)
			continue;
		count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < count && *nr < HOLDER_MAX_FDS; i++)
			memcpy(&fds[(*nr)++], CMSG_DATA(cmsg) + i * sizeof(int), sizeof(int));
	}
	if (n == 0)
		return -ECONNRESET;
	if (n != (ssize_t)sizeof(*msg) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		return -EPROTO;
	return 0;
}

int holder__recv(struct holder *h, int sock, struct persistent_msg *msg, int *fd)
{
	int fds[HOLDER_MAX_FDS], nr, i, err;

	*fd = -1;
	err = holder__recvmsg(sock, msg, fds, &nr);
	/* One file a message, and only with a whole one. */
	for (i = 0; i < nr; i++) {
		if (!err && i == 0)
			*fd = fds[i];
		else
			holder__drop_fd(h, fds[i]);
	}
	if (err)
		return err;
	persistent_msg__terminate(msg);
	return 0;
}

void holder__close_sock(struct holder *h, int sock)
{
	int pending = 1;

	/*
	 * Nothing more comes in.  What came and was not read may carry
	 * files, released by whoever closes the socket: a closer then.
	 */
	shutdown(sock, SHUT_RDWR);
	if (!ioctl(sock, SIOCINQ, &pending) && !pending)
		close(sock);
	else
		holder__drop_fd(h, sock);
}

static int holder__cmp_fd(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static void holder__close_range(unsigned int first, unsigned int last)
{
	long fd, max = sysconf(_SC_OPEN_MAX);

	if (first > last)
		return;
#ifdef __NR_close_range
	if (!syscall(__NR_close_range, first, last, 0))
		return;
#endif
	for (fd = first; fd <= (long)last && fd < min(max, 1L << 20); fd++)
		close(fd);
}

/* A child takes the last references to the doomed files and closes them. */
static void holder__spawn_closer(struct holder *h, struct holder_closer *slot)
{
	int i, go[2];
	pid_t pid;

	/*
	 * The child closes only once the holder has closed its copies:
	 * else the holder's close() could be the last, and wait.
	 */
	if (pipe2(go, O_CLOEXEC))
		return;
	pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		return;
	}
	if (pid == 0) {
		int next = 0, *keep;
		char c;

		/*
		 * Nothing of the holder's stays open here (its lock on
		 * holder.pid above all), only the doomed files, in order.
		 */
		signal(SIGTERM, SIG_DFL);
		keep = malloc((h->nr_doomed + 1) * sizeof(int));
		if (!keep)
			_exit(1);
		memcpy(keep, h->doomed, h->nr_doomed * sizeof(int));
		keep[h->nr_doomed] = go[0];
		qsort(keep, h->nr_doomed + 1, sizeof(int), holder__cmp_fd);
		for (i = 0; i <= h->nr_doomed; i++) {
			holder__close_range(next, keep[i] - 1);
			next = keep[i] + 1;
		}
		holder__close_range(next, ~0U);
		/* EOF: the holder has let go of them. */
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		for (i = 0; i < h->nr_doomed; i++)
			close(h->doomed[i]);
		_exit(0);
	}
	pr_debug("holder: %d files to closer %d\n", h->nr_doomed, pid);
	close(go[0]);
	for (i = 0; i < h->nr_doomed; i++)
		close(h->doomed[i]);
	close(go[1]);
	h->nr_doomed = 0;
	slot->pid = pid;
	slot->start = holder__now_ms();
}

/*
 * Reap the closers that are done, kill those that wait too long, and
 * give the files doomed since to a new one.  @all: the holder is going:
 * kill them all, and leave the rest to one last closer, not waited for.
 */
void holder__closers(struct holder *h, bool all)
{
	struct holder_closer *free_slot = NULL;
	u64 now = holder__now_ms();
	int i;

	for (i = 0; i < HOLDER_CLOSERS; i++) {
		struct holder_closer *c = &h->closers[i];

		if (c->pid > 0 && waitpid(c->pid, NULL, WNOHANG) == c->pid)
			c->pid = 0;
		if (c->pid > 0 && (all || now - c->start > HOLDER_CLOSE_MS)) {
			pr_debug("holder: a file took too long to close\n");
			kill(c->pid, SIGKILL);
			if (all)
				waitpid(c->pid, NULL, 0);
		}
		if (c->pid <= 0 && !free_slot)
			free_slot = c;
	}
	if (all) {
		struct holder_closer last = { .pid = 0 };

		if (h->nr_doomed)
			holder__spawn_closer(h, &last);
		free(h->doomed);
		h->doomed = NULL;
		return;
	}
	if (h->nr_doomed && free_slot)
		holder__spawn_closer(h, free_slot);
}
