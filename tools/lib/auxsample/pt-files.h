/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_PT_FILES_H
#define __AUXSAMPLE_PT_FILES_H

/*
 * The Intel PT walker's blocks of files' code, shared by a family of
 * images (pt-files.c, auxsample_image__new_sibling()): the processes of
 * a recording map the same files (libc, ld.so, the program) at their own
 * addresses, and a block is decoded once a file and offset, not once a
 * process.  A file is known by its name within the family.
 */
#include <stdint.h>

struct ptw_block_cache;
struct ptw_files;

/*
 * A block's key in the family's cache: the file's id above
 * PTW_FILE_ID_SHIFT bits of its offset in the file.  Files are shared up
 * to that size, and a family knows up to PTW_FILE_IDS of them; others
 * keep their blocks by address, in the image's own cache.
 */
#define PTW_FILE_ID_SHIFT	44
#define PTW_FILE_IDS		(1U << (64 - PTW_FILE_ID_SHIFT))

/* Where an image maps a file the family knows: [@vaddr, @end) holds the code of @key on. */
struct ptw_file_range {
	uint64_t	vaddr;
	uint64_t	end;
	uint64_t	key;
};

/* An empty family: NULL without memory. */
struct ptw_files *ptw_files__new(void);
struct ptw_files *ptw_files__get(struct ptw_files *files);
void ptw_files__put(struct ptw_files *files);
/* The family's block cache, keyed by file and offset: NULL without memory. */
struct ptw_block_cache *ptw_files__blocks(struct ptw_files *files);
/*
 * The range of @size bytes of @filename from @offset at @vaddr into *@r:
 * 0, or -1 where the family does not share it (no memory for the name,
 * too many files, an offset or size too large).
 */
int ptw_files__range(struct ptw_files *files, const char *filename, uint64_t offset,
		     uint64_t size, uint64_t vaddr, struct ptw_file_range *r);

#endif /* __AUXSAMPLE_PT_FILES_H */
