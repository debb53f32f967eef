// SPDX-License-Identifier: GPL-2.0
/*
 * perf auxsample simulate: the simulated kernel's image as an ELF
 * vmlinux (auxsample-sim-vmlinux.h).  Written by hand, not by a linker,
 * so that simulate needs no toolchain: ELF header, a PT_LOAD and a
 * PT_NOTE program header, and the sections .text, .notes, .symtab,
 * .strtab, .shstrtab.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/align.h>
#include <linux/kernel.h>

#include "auxsample-sim-vmlinux.h"

#define TEXT_OFFSET	0x1000
#define NR_SECTIONS	6	/* null, .text, .notes, .symtab, .strtab, .shstrtab */

static const char shstrtab[] = "\0.text\0.notes\0.symtab\0.strtab\0.shstrtab";
enum { SH_TEXT = 1, SH_NOTES = 7, SH_SYMTAB = 14, SH_STRTAB = 22, SH_SHSTRTAB = 30 };

struct build_id_note {
	Elf64_Nhdr	nhdr;
	char		name[4];	/* "GNU" */
	u8		desc[SIM_VMLINUX_BUILD_ID_SIZE];
};

/* A build-id of the code: FNV-1a, spread over 20 bytes. */
static void sim_vmlinux__build_id(const u8 *text, size_t size, u8 *id)
{
	u64 h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < size; i++)
		h = (h ^ text[i]) * 0x100000001b3ULL;
	for (int i = 0; i < SIM_VMLINUX_BUILD_ID_SIZE; i++) {
		h = (h ^ i) * 0x100000001b3ULL;
		id[i] = h >> 56;
	}
}

struct vmlinux_buf {
	u8	*p;
	size_t	len;
	size_t	cap;
};

static int vmlinux_buf__put(struct vmlinux_buf *b, size_t at, const void *data, size_t n)
{
	if (at + n > b->cap) {
		size_t cap = max_t(size_t, 2 * b->cap, at + n + 4096);
		u8 *p = realloc(b->p, cap);

		if (!p)
			return -ENOMEM;
		memset(p + b->cap, 0, cap - b->cap);
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + at, data, n);
	b->len = max(b->len, at + n);
	return 0;
}

static int vmlinux_buf__write(const struct vmlinux_buf *b, const char *path)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f)
		return -errno;
	if (fwrite(b->p, 1, b->len, f) != b->len)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

/* The program and section headers, where the parts of the file are. */
static int sim_vmlinux__headers(struct vmlinux_buf *b, Elf64_Ehdr *eh, u64 vaddr, size_t size,
				size_t note_off, size_t sym_off, size_t sym_size,
				size_t str_off, size_t str_size, size_t shstr_off)
{
	size_t note_size = sizeof(struct build_id_note);
	Elf64_Phdr ph[2] = {
		{ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = TEXT_OFFSET,
		  .p_vaddr = vaddr, .p_paddr = vaddr & 0xffffffffULL,
		  .p_filesz = size, .p_memsz = size, .p_align = 4096 },
		{ .p_type = PT_NOTE, .p_flags = PF_R, .p_offset = note_off,
		  .p_vaddr = vaddr + (note_off - TEXT_OFFSET),
		  .p_filesz = note_size, .p_memsz = note_size, .p_align = 4 },
	};
	Elf64_Shdr sh[NR_SECTIONS] = {
		[1] = { .sh_name = SH_TEXT, .sh_type = SHT_PROGBITS,
			.sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = vaddr,
			.sh_offset = TEXT_OFFSET, .sh_size = size, .sh_addralign = 16 },
		[2] = { .sh_name = SH_NOTES, .sh_type = SHT_NOTE, .sh_flags = SHF_ALLOC,
			.sh_addr = vaddr + (note_off - TEXT_OFFSET), .sh_offset = note_off,
			.sh_size = note_size, .sh_addralign = 4 },
		[3] = { .sh_name = SH_SYMTAB, .sh_type = SHT_SYMTAB, .sh_offset = sym_off,
			.sh_size = sym_size, .sh_link = 4, .sh_info = 1, .sh_addralign = 8,
			.sh_entsize = sizeof(Elf64_Sym) },
		[4] = { .sh_name = SH_STRTAB, .sh_type = SHT_STRTAB, .sh_offset = str_off,
			.sh_size = str_size, .sh_addralign = 1 },
		[5] = { .sh_name = SH_SHSTRTAB, .sh_type = SHT_STRTAB, .sh_offset = shstr_off,
			.sh_size = sizeof(shstrtab), .sh_addralign = 1 },
	};

	eh->e_shoff = ALIGN(shstr_off + sizeof(shstrtab), 8);
	return vmlinux_buf__put(b, 0, eh, sizeof(*eh)) ?:
	       vmlinux_buf__put(b, eh->e_phoff, ph, sizeof(ph)) ?:
	       vmlinux_buf__put(b, shstr_off, shstrtab, sizeof(shstrtab)) ?:
	       vmlinux_buf__put(b, eh->e_shoff, sh, sizeof(sh));
}

int sim_vmlinux__write(const char *path, u64 vaddr, const u8 *text, size_t size,
		       const struct sim_vmlinux_sym *syms, int nr_syms, u8 *build_id)
{
	struct vmlinux_buf b = { NULL, 0, 0 };
	struct build_id_note note = {
		.nhdr = { .n_namesz = 4, .n_descsz = SIM_VMLINUX_BUILD_ID_SIZE,
			  .n_type = NT_GNU_BUILD_ID },
		.name = "GNU",
	};
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
			     EV_CURRENT },
		.e_type = ET_EXEC, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
		.e_entry = vaddr, .e_phoff = sizeof(Elf64_Ehdr), .e_ehsize = sizeof(Elf64_Ehdr),
		.e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 2,
		.e_shentsize = sizeof(Elf64_Shdr), .e_shnum = NR_SECTIONS,
		.e_shstrndx = NR_SECTIONS - 1,
	};
	size_t note_off = TEXT_OFFSET + ALIGN(size, 16), sym_off, str_off, shstr_off;
	size_t names = 1;
	int err;

	sim_vmlinux__build_id(text, size, note.desc);
	memcpy(build_id, note.desc, SIM_VMLINUX_BUILD_ID_SIZE);

	sym_off = ALIGN(note_off + sizeof(note), 8);
	str_off = sym_off + (nr_syms + 1) * sizeof(Elf64_Sym);
	err = vmlinux_buf__put(&b, TEXT_OFFSET, text, size) ?:
	      vmlinux_buf__put(&b, note_off, &note, sizeof(note)) ?:
	      vmlinux_buf__put(&b, str_off, "", 1);
	for (int i = 0; i < nr_syms && !err; i++) {
		Elf64_Sym sym = {
			.st_name = names,
			.st_info = ELF64_ST_INFO(STB_GLOBAL, syms[i].func ? STT_FUNC : STT_NOTYPE),
			.st_shndx = 1, .st_value = syms[i].addr, .st_size = syms[i].size,
		};

		err = vmlinux_buf__put(&b, sym_off + (i + 1) * sizeof(sym), &sym, sizeof(sym)) ?:
		      vmlinux_buf__put(&b, str_off + names, syms[i].name,
				       strlen(syms[i].name) + 1);
		names += strlen(syms[i].name) + 1;
	}
	shstr_off = str_off + names;
	if (!err)
		err = sim_vmlinux__headers(&b, &eh, vaddr, size, note_off, sym_off,
					   (nr_syms + 1) * sizeof(Elf64_Sym), str_off, names,
					   shstr_off);
	if (!err)
		err = vmlinux_buf__write(&b, path);
	free(b.p);
	return err;
}
