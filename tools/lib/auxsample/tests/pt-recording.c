// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The real Intel PT recordings of ../shared/data/pt (DynamoRIO's
 * drpt2trace tests, recorded on a Skylake-SP server by others): a
 * recording's trace and its static program's loadable segments, read as
 * its process mapped them.  For the tests, and for fuzz-pt (which
 * includes this file).
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <auxsample/auxsample.h>
#include "tests.h"
#include "test-data.h"
#include "pt-recording.h"

static void elf_program__add(struct elf_program *p, uint64_t vaddr, uint64_t off, uint64_t size)
{
	if (p->nr_segs == ARRAY_SIZE(p->segs) || off + size > p->elf_size)
		return;
	p->segs[p->nr_segs++] = (struct segment){ vaddr, size, off, p->elf + off };
}

/* The PT_LOAD segments of a static ELF, as the loader maps them. */
int elf_program__load(struct elf_program *p, const char *name)
{
	memset(p, 0, sizeof(*p));
	p->elf = read_data(name, &p->elf_size);
	if (!p->elf || p->elf_size < sizeof(Elf64_Ehdr) || memcmp(p->elf, ELFMAG, SELFMAG))
		return -1;
	if (p->elf[EI_CLASS] == ELFCLASS64) {
		const Elf64_Ehdr *eh = (const void *)p->elf;
		const Elf64_Phdr *ph = (const void *)(p->elf + eh->e_phoff);

		for (int i = 0; i < eh->e_phnum; i++) {
			if (ph[i].p_type == PT_LOAD)
				elf_program__add(p, ph[i].p_vaddr, ph[i].p_offset, ph[i].p_filesz);
		}
	} else {
		const Elf32_Ehdr *eh = (const void *)p->elf;
		const Elf32_Phdr *ph = (const void *)(p->elf + eh->e_phoff);

		for (int i = 0; i < eh->e_phnum; i++) {
			if (ph[i].p_type == PT_LOAD)
				elf_program__add(p, ph[i].p_vaddr, ph[i].p_offset, ph[i].p_filesz);
		}
	}
	return p->nr_segs ? 0 : -1;
}

int elf_program__read(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	struct elf_program *p = context;

	for (unsigned int i = 0; i < p->nr_segs; i++) {
		const struct segment *s = &p->segs[i];

		if (addr < s->vaddr || addr >= s->vaddr + s->size)
			continue;
		if (size > s->vaddr + s->size - addr)
			size = s->vaddr + s->size - addr;
		memcpy(buf, s->data + (addr - s->vaddr), size);
		return size;
	}
	return -1;
}

/* The recordings' parameters (DynamoRIO's CMakeLists). */
struct auxsample_config recording__config(struct elf_program *p)
{
	struct auxsample_config config = {
		.size = sizeof(config),
		.type = AUXSAMPLE_TRACE_INTEL_PT,
		.pt = {
			.family = 6, .model = 85, .stepping = 4,
			.cpuid_0x15_eax = 2, .cpuid_0x15_ebx = 308,
			.mtc_freq = 3, .nom_freq = 37,
		},
		.read_memory = elf_program__read,
		.context = p,
	};

	return config;
}

struct auxsample_decoder *elf_program__decoder(struct elf_program *p)
{
	struct auxsample_config config = recording__config(p);

	return auxsample_decoder__new(&config, NULL);
}

int recording__load(struct recording *r, const char *dir)
{
	char name[256];

	memset(r, 0, sizeof(*r));
	snprintf(name, sizeof(name), DRPT "/%s/pt.bin", dir);
	r->pt = read_data(name, &r->pt_size);
	snprintf(name, sizeof(name), DRPT "/%s/hello", dir);
	if (!r->pt || elf_program__load(&r->prog, name)) {
		test_skip_reason = "no ../shared/data/" DRPT " (set AUXSAMPLE_DATA)";
		return TEST_SKIP;
	}
	r->dec = elf_program__decoder(&r->prog);
	return r->dec ? TEST_OK : TEST_FAIL;
}

void recording__exit(struct recording *r)
{
	auxsample_decoder__delete(r->dec);
	free(r->pt);
	free(r->prog.elf);
}
