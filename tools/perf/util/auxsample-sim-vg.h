/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_SIM_VG_H
#define __PERF_AUXSAMPLE_SIM_VG_H

#include <stdbool.h>
#include <sys/types.h>

struct sim;

/*
 * The Valgrind engine of perf auxsample simulate: whether it can run
 * here (else *why says what is missing), and running @argv under it.
 * The pid of the program (Valgrind's) goes to *pid as soon as it runs.
 */
bool auxsample_sim_vg__available(const char **why);
int auxsample_sim_vg__trace(struct sim *sim, const char **argv, pid_t *pid);

#endif /* __PERF_AUXSAMPLE_SIM_VG_H */
