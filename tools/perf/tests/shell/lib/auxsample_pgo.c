// SPDX-License-Identifier: GPL-2.0
/*
 * A program for the profile-guided optimisation tests (BOLT, AutoFDO):
 * short enough for single-stepping (perf auxsample simulate), with hot
 * and cold paths that a profile tells apart, and an output that an
 * optimised build must reproduce.
 *   pgo N	N rounds of the hot loop; prints a checksum
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned int rare = 1000003;

/* Runs once in a hundred rounds or never: what layout should move away. */
static unsigned int __attribute__((noinline)) cold_path(unsigned int x)
{
	return x * 2654435761u + 12345;
}

static unsigned int __attribute__((noinline)) hot_step(unsigned int x)
{
	if (x & 1)
		return 3 * x + 1;
	return x / 2;
}

static unsigned int __attribute__((noinline)) hot_mix(unsigned int x, int i)
{
	if (i % 100 == 99)
		return cold_path(x);
	if (x > rare)
		return cold_path(x ^ 7);
	return x + (unsigned int)i;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	unsigned int x = 27, sum = 0;

	for (int i = 0; i < n; i++) {
		x = hot_step(x) % 100000;
		sum += hot_mix(x, i);
	}
	printf("%u\n", sum);
	return 0;
}
