/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __AUXSAMPLE_PT_FILES_H
#define __AUXSAMPLE_PT_FILES_H

/*
 * The Intel PT walker's blocks of files' code, shared by a family of
 * images (pt-files.c, auxsample_image__new_sibling()): the processes of
 * a recording map the same files (libc, ld.so, the program) at their own
 * addresses, and a block is decoded once a file and offset, not once a
 * process.  A file is known by the identity its caller gave it
 * (auxsample_image__add_file_id(): a build-id, a device and inode), never
 * by its name alone: two files of one name (a container's libc and the
 * host's, a program rebuilt during the recording) are two.
 */
#include <stdbool.h>
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

/*
 * Where an image's code comes from, [@vaddr, @end): the key of @vaddr in
 * the family's cache, or 0 where its blocks are the image's own (a file
 * the family does not share, code said to have changed in this image).
 * An image's extents are sorted and do not overlap: where files are
 * mapped over one another, the later one's part.
 */
struct ptw_extent {
	uint64_t	vaddr;
	uint64_t	end;
	uint64_t	key;
};

/* The extents of an image, built as it maps files. */
struct ptw_extents {
	struct ptw_extent	*e;
	unsigned int		nr;
	unsigned int		cap;
};

/* An empty family: NULL without memory. */
struct ptw_files *ptw_files__new(void);
struct ptw_files *ptw_files__get(struct ptw_files *files);
void ptw_files__put(struct ptw_files *files);
/* The family's block cache, keyed by file and offset: NULL without memory. */
struct ptw_block_cache *ptw_files__blocks(struct ptw_files *files);
/*
 * The key of @offset in the file known by @identity, with @size bytes
 * from there: 0 where the family does not share it (no identity, no
 * memory for it, too many files, an offset or size too large).
 */
uint64_t ptw_files__key(struct ptw_files *files, const char *identity, uint64_t offset,
			uint64_t size);

/*
 * [@vaddr, @vaddr + @size) of @x is @key's from now on (0: the image's
 * own), over whatever was there: 0, or -1 without memory.
 */
int ptw_extents__set(struct ptw_extents *x, uint64_t vaddr, uint64_t size, uint64_t key);
void ptw_extents__exit(struct ptw_extents *x);
/* Whether any extent of @x lies in [@vaddr, @vaddr + @size). */
bool ptw_extents__overlaps(const struct ptw_extents *x, uint64_t vaddr, uint64_t size);
/* The extent of @nr, sorted, that holds @ip; NULL for none. */
const struct ptw_extent *ptw_extents__find(const struct ptw_extent *e, unsigned int nr,
					   uint64_t ip);

#endif /* __AUXSAMPLE_PT_FILES_H */
