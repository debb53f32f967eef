// SPDX-License-Identifier: GPL-2.0
/*
 * The persistent event holder's runtime directory, as root reaches it.
 *
 * The directory may be named by anyone who can set PERF_PERSISTENT_DIR
 * in root's environment (sudo -E, su), so nothing in it is trusted by
 * path: it is opened once, O_NOFOLLOW, checked to be owned by whoever
 * must own it and writable by nobody else, and everything inside is then
 * reached relative to that descriptor, never following a symbolic link.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "debug.h"
#include "persistent-rundir.h"
#include "strbuf.h"

#define RUNDIR_OPEN	(O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

const char *persistent__dir(void)
{
	const char *dir = getenv(PERSISTENT_DIR_ENV);

	return dir && *dir ? dir : PERSISTENT_DIR_DEFAULT;
}

static int rundir__verify(int fd, const char *dir, bool holder, uid_t *owner)
{
	uid_t me = geteuid();
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (holder ? st.st_uid != me : st.st_uid != 0 && st.st_uid != me) {
		pr_err("Error: %s is owned by uid %u, not by %s: refusing to use it as the\n"
		       "persistent event holder's directory. Remove it, or point %s at a\n"
		       "directory that %s owns.\n", dir, (unsigned int)st.st_uid,
		       holder ? "the holder's user" : "root or you", PERSISTENT_DIR_ENV,
		       holder ? "the holder's user" : "root or you");
		return -EPERM;
	}
	if (st.st_mode & 0022) {
		pr_err("Error: %s is writable by others (mode %04o): refusing to use it as the\n"
		       "persistent event holder's directory. 'chmod go-w' it or remove it.\n",
		       dir, (unsigned int)(st.st_mode & 07777));
		return -EPERM;
	}
	if (owner)
		*owner = st.st_uid;
	return 0;
}

static int rundir__open_error(const char *dir, int err)
{
	if (err == -ELOOP || err == -ENOTDIR)
		pr_err("Error: %s is not a directory (a symbolic link?): refusing to use it as\n"
		       "the persistent event holder's directory.\n", dir);
	return err;
}

/* The holder runs in /, its clients anywhere: a relative path is two places. */
static int rundir__absolute(const char *dir)
{
	if (dir[0] == '/')
		return 0;
	pr_err("Error: %s=%s is not an absolute path.\n", PERSISTENT_DIR_ENV, dir);
	return -EINVAL;
}

int persistent_rundir__open_holder(void)
{
	const char *dir = persistent__dir();
	int fd, err;

	err = rundir__absolute(dir);
	if (err)
		return err;
	if (mkdir(dir, 0755) && errno != EEXIST) {
		err = -errno;
		pr_err("Error: cannot create the persistent event holder's directory %s: %s\n"
		       "Run the holder as root ('perf persistent daemon'), or point %s at a\n"
		       "directory you may write.\n", dir, strerror(-err), PERSISTENT_DIR_ENV);
		return err;
	}
	fd = open(dir, RUNDIR_OPEN);
	if (fd < 0)
		return rundir__open_error(dir, -errno);
	err = rundir__verify(fd, dir, /*holder=*/true, NULL);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int persistent_rundir__open_client(uid_t *owner)
{
	const char *dir = persistent__dir();
	int fd, err;

	err = rundir__absolute(dir);
	if (err)
		return err;
	fd = open(dir, RUNDIR_OPEN);
	if (fd < 0) {
		err = -errno;
		/* No holder: not an error of its own. */
		return err == -ENOENT ? err : rundir__open_error(dir, err);
	}
	err = rundir__verify(fd, dir, /*holder=*/false, owner);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int persistent_rundir__subdir(int dirfd, const char *name, bool create)
{
	int fd;

	if (create && mkdirat(dirfd, name, 0755) && errno != EEXIST)
		return -errno;
	fd = openat(dirfd, name, RUNDIR_OPEN);
	return fd < 0 ? -errno : fd;
}

int persistent_rundir__write(int dirfd, const char *name, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int fd, len, err = 0;

	va_start(ap, fmt);
	len = vscnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);

	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, len) != len)
		err = errno ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/*
 * Unlink every entry of @name, a directory in @parent, then @name itself.
 * Not upstream's rm_rf(), which goes by path: by file descriptor, only
 * within the directory that was checked, and @names gets the entries.
 */
static void rundir__empty(int parent, const char *name, struct strbuf *names)
{
	struct dirent *d;
	DIR *dir;
	int fd;

	fd = openat(parent, name, RUNDIR_OPEN);
	if (fd < 0)
		return;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		if (names)
			strbuf_addf(names, "%s%s", names->len ? ", " : "", d->d_name);
		unlinkat(dirfd(dir), d->d_name, 0);
	}
	closedir(dir);
	unlinkat(parent, name, AT_REMOVEDIR);
}

void persistent_rundir__remove(int dirfd, struct strbuf *lost)
{
	int pmu = openat(dirfd, PERSISTENT_PMU_NAME, RUNDIR_OPEN);

	if (pmu >= 0) {
		rundir__empty(pmu, "events", lost);
		rundir__empty(pmu, "format", NULL);
		unlinkat(pmu, "type", 0);
		unlinkat(pmu, "cpumask", 0);
		close(pmu);
		unlinkat(dirfd, PERSISTENT_PMU_NAME, AT_REMOVEDIR);
	}
	unlinkat(dirfd, PERSISTENT_SOCK_NAME, 0);
}

/*
 * A path to @name in the directory that @dirfd holds open, so that a
 * directory renamed or replaced since it was checked is never used.
 */
static int rundir__fd_path(char *buf, size_t size, int dirfd, const char *name)
{
	int n = snprintf(buf, size, "/proc/self/fd/%d/%s", dirfd, name);

	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

int persistent_rundir__bind(int dirfd, int sock)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t umask_old;
	int err = 0;

	err = rundir__fd_path(sa.sun_path, sizeof(sa.sun_path), dirfd, PERSISTENT_SOCK_NAME);
	if (err)
		return err;
	unlinkat(dirfd, PERSISTENT_SOCK_NAME, 0);
	/*
	 * Anyone may connect: the socket is made 0666 by bind() itself, so
	 * that no chmod() by path can be turned toward another file.
	 */
	umask_old = umask(0111);
	if (bind(sock, (struct sockaddr *)&sa, sizeof(sa)))
		err = -errno;
	umask(umask_old);
	return err;
}

int persistent_rundir__connect(int dirfd, uid_t owner)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval timeout = { .tv_sec = 10 };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int sock, err;

	err = rundir__fd_path(sa.sun_path, sizeof(sa.sun_path), dirfd, PERSISTENT_SOCK_NAME);
	if (err)
		return err;
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return -errno;
	if (connect(sock, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		goto out_close;
	}
	/* Whoever listens there must be who owns the directory. */
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		err = -errno;
		goto out_close;
	}
	/* A holder that stopped answering must not hang the client. */
	if (setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout))) {
		err = -errno;
		goto out_close;
	}
	if (cred.uid != owner) {
		pr_err("Error: the process serving %s/%s runs as uid %u, not as the\n"
		       "directory's owner (uid %u): refusing to talk to it.\n",
		       persistent__dir(), PERSISTENT_SOCK_NAME, (unsigned int)cred.uid,
		       (unsigned int)owner);
		err = -EPERM;
		goto out_close;
	}
	return sock;
out_close:
	close(sock);
	return err;
}
