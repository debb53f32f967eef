// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Intel PT walker's cache of basic blocks: direct mapped by start
 * address, so bounded (PTW_BLOCKS entries) and without eviction lists;
 * a block that loses its slot is decoded again when next reached.  Code
 * is read through the decoder's read_memory callback, one instruction
 * at a time, only when a block is built.
 */
#include <stdlib.h>
#include <string.h>
#include "backend.h"
#include "pt-blocks.h"
#include "x86-branch.h"

#define PTW_BLOCK_MAX_INSNS	4096		/* longer: libipt's */
#define PTW_INSN_MAX		15

struct ptw_blocks *ptw_blocks__new(void)
{
	return calloc(1, sizeof(struct ptw_blocks));
}

void ptw_blocks__delete(struct ptw_blocks *blocks)
{
	free(blocks);
}

void ptw_blocks__clear(struct ptw_blocks *blocks)
{
	memset(blocks->slots, 0, sizeof(blocks->slots));
}

static int ptw_read(struct auxsample_decoder *dec, uint8_t *raw, uint64_t ip)
{
	return auxsample__read_memory(dec, raw, PTW_INSN_MAX, ip);
}

static bool ptw_is_prefix(uint8_t b)
{
	return b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x64 ||
	       b == 0x65 || b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3;
}

/*
 * The displacement of the relative branch of @len bytes at @raw: rel8
 * for the short forms, else rel32 (64-bit mode ignores 0x66 on them).
 */
static int64_t ptw_rel(const uint8_t *raw, unsigned int len)
{
	unsigned int i = 0;
	uint8_t op;

	while (i < len && (ptw_is_prefix(raw[i]) || (raw[i] & 0xf0) == 0x40))
		i++;
	op = i < len ? raw[i] : 0;
	if ((op & 0xf0) == 0x70 || (op & 0xfc) == 0xe0 || op == 0xeb)
		return (int8_t)raw[len - 1];
	return (int32_t)((uint32_t)raw[len - 4] | (uint32_t)raw[len - 3] << 8 |
			 (uint32_t)raw[len - 2] << 16 | (uint32_t)raw[len - 1] << 24);
}

int ptw_block__build(struct ptw_block *b, struct auxsample_decoder *dec, uint64_t ip)
{
	uint8_t raw[PTW_INSN_MAX];
	struct x86_branch br;
	uint64_t at = ip;

	for (uint32_t n = 1; n <= PTW_BLOCK_MAX_INSNS; n++) {
		int size = ptw_read(dec, raw, at), len;

		if (size <= 0)
			return -1;
		if (!x86_branch__decode(raw, size, X86_MODE_64, &br)) {
			b->start = ip;
			b->end = at;
			b->ninsn = n;
			b->cls = br.cls;
			b->length = br.length;
			b->target = 0;
			if (br.cls == X86_BR_COND || br.cls == X86_BR_JUMP ||
			    br.cls == X86_BR_CALL)
				b->target = at + br.length + ptw_rel(raw, br.length);
			b->valid = 1;
			return 0;
		}
		len = x86_insn__length(raw, size, X86_MODE_64);
		if (len <= 0)
			return -1;
		at += len;
	}
	return -1;
}

int ptw_blocks__count_to(struct auxsample_decoder *dec, const struct ptw_block *b,
			 uint64_t ip)
{
	uint8_t raw[PTW_INSN_MAX];
	uint64_t at = b->start;

	for (uint32_t n = 0; n < b->ninsn; n++) {
		int size, len;

		if (at == ip)
			return n;
		if (at >= b->end)
			return -1;
		size = ptw_read(dec, raw, at);
		if (size <= 0)
			return -1;
		len = x86_insn__length(raw, size, X86_MODE_64);
		if (len <= 0)
			return -1;
		at += len;
	}
	return -1;
}
