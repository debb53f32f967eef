/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_PERSISTENT_RUNDIR_H
#define __PERF_PERSISTENT_RUNDIR_H

#include <linux/compiler.h>
#include <stdbool.h>
#include <sys/types.h>

struct strbuf;

/*
 * The persistent PMU's name, in sysfs and in the holder's directory, which
 * is laid out like it; the directory is $PERF_PERSISTENT_DIR, else
 * /run/perf-persistent.
 */
#define PERSISTENT_PMU_NAME	"persistent"
#define PERSISTENT_DIR_DEFAULT	"/run/perf-persistent"
#define PERSISTENT_DIR_ENV	"PERF_PERSISTENT_DIR"

#define PERSISTENT_SOCK_NAME	"holder.sock"
#define PERSISTENT_PID_NAME	"holder.pid"

/* Where the holder lives: $PERF_PERSISTENT_DIR or /run/perf-persistent. */
const char *persistent__dir(void);

/*
 * The holder's directory, opened O_NOFOLLOW and checked: for the holder,
 * created if missing and owned by its own uid; for a client, owned by
 * root or by the client's uid (returned in @owner).  Neither accepts a
 * directory that others may write.  Errors are said with pr_err();
 * -ENOENT (no directory, so no holder) is not.
 */
int persistent_rundir__open_holder(void);
int persistent_rundir__open_client(uid_t *owner);

/* @name in @dirfd, opened as a directory without following links. */
int persistent_rundir__subdir(int dirfd, const char *name, bool create);
/* Write a small file in @dirfd, never through a link. */
int persistent_rundir__write(int dirfd, const char *name, const char *fmt, ...)
	__printf(3, 4);
/* Remove what a holder publishes; the names of its events go to @lost. */
void persistent_rundir__remove(int dirfd, struct strbuf *lost);

/* Bind @sock as the holder's socket in @dirfd, mode 0666. */
int persistent_rundir__bind(int dirfd, int sock);
/* Connect to the holder in @dirfd, which must run as @owner. */
int persistent_rundir__connect(int dirfd, uid_t owner);

#endif /* __PERF_PERSISTENT_RUNDIR_H */
