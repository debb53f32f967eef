/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_AUXSAMPLE_SIM_VMLINUX_H
#define __PERF_AUXSAMPLE_SIM_VMLINUX_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Write a vmlinux-like ELF file: one executable segment of @size bytes of
 * @text at @vaddr, its symbols, and a GNU build-id note, which is
 * returned in @build_id (SIM_VMLINUX_BUILD_ID_SIZE bytes): what perf
 * needs to find and read a kernel image by build-id, as it does a real
 * vmlinux.
 */
#define SIM_VMLINUX_BUILD_ID_SIZE	20

struct sim_vmlinux_sym {
	const char	*name;
	u64		addr;
	u64		size;
	bool		func;
};

int sim_vmlinux__write(const char *path, u64 vaddr, const u8 *text, size_t size,
		       const struct sim_vmlinux_sym *syms, int nr_syms, u8 *build_id);

#endif /* __PERF_AUXSAMPLE_SIM_VMLINUX_H */
