/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_PROFILE_H
#define __PERF_AUXSAMPLE_PROFILE_H

#include <stdio.h>
#include <linux/types.h>

/*
 * The branch stacks of many samples (virtual LBRs) summed up per binary,
 * as the profile-guided optimisers sum up LBR samples: taken branches,
 * and the straight-line runs between two consecutive branches of a stack;
 * or the ranges and branches of a full trace (script
 * --autofdo of CoreSight ETM).  Written as BOLT's pre-aggregated profile
 * (perf2bolt --pa) or as AutoFDO text (simpleperf inject's).
 */
struct auxsample_profile;
struct branch_stack;
struct dso;
struct thread;

struct auxsample_profile *auxsample_profile__new(void);
void auxsample_profile__delete(struct auxsample_profile *p);

/* @bs, newest branch first, of a sample of @thread. */
int auxsample_profile__add(struct auxsample_profile *p, struct thread *thread,
			   const struct branch_stack *bs);

/*
 * A full trace's flow (CoreSight ETM): instructions @first to @last run,
 * a branch taken from @from to @to (0: another binary or unknown), at
 * addresses in @dso as objdump shows them.
 */
int auxsample_profile__add_range(struct auxsample_profile *p, struct dso *dso, u64 first,
				 u64 last);
int auxsample_profile__add_taken(struct auxsample_profile *p, struct dso *dso, u64 from, u64 to);

/*
 * BOLT: the branches and straight-line runs of @binary (its path, as perf
 * report's dso or any other that leads to the file, or its file name)
 * as 'B from to count 0', 'F from to count' and 'f from to count'
 * lines, addresses in the binary (as objdump shows them).  -ENOENT when
 * no branch touched it.
 */
int auxsample_profile__write_bolt(struct auxsample_profile *p, FILE *f, const char *binary);

/*
 * AutoFDO text, as simpleperf inject writes it from LBR samples: per
 * binary, the ranges run, no addresses, the taken branches, its build-id
 * and path.
 */
int auxsample_profile__write_autofdo(struct auxsample_profile *p, FILE *f);

#endif /* __PERF_AUXSAMPLE_PROFILE_H */
