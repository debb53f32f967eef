// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Random x86-64 programs, and an executor that runs them and writes their
 * trace with the library's PT writer (see pt-program.h).
 */
#include <stdlib.h>
#include <string.h>
#include <auxsample/auxsample.h>
#include <auxsample/pt-writer.h>
#include "tests.h"
#include "pt-program.h"

static uint32_t rnd(struct program *p)
{
	p->seed = p->seed * 1103515245 + 12345;
	return p->seed >> 8;
}

int read_program(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	struct program *p = context;

	if (addr < CODE_BASE || addr >= CODE_BASE + CODE_SIZE)
		return -1;
	if (size > CODE_BASE + CODE_SIZE - addr)
		size = CODE_BASE + CODE_SIZE - addr;
	memcpy(buf, p->code + (addr - CODE_BASE), size);
	return size;
}

/* Instructions that are no branches, of many lengths and maps. */
static const struct { uint8_t len; uint8_t bytes[11]; } plain[] = {
	{ 1, { 0x90 } },				/* nop */
	{ 3, { 0x48, 0x89, 0xc3 } },			/* mov %rax,%rbx */
	{ 4, { 0x48, 0x83, 0xc0, 0x01 } },		/* add $1,%rax */
	{ 5, { 0x0f, 0x1f, 0x44, 0x00, 0x00 } },	/* nopl 0(%rax,%rax) */
	{ 5, { 0x48, 0x8d, 0x44, 0x24, 0x08 } },	/* lea 8(%rsp),%rax */
	{ 4, { 0x66, 0x0f, 0xef, 0xc0 } },		/* pxor %xmm0,%xmm0 */
	{ 4, { 0xc5, 0xf9, 0xef, 0xc0 } },		/* vpxor */
	{ 10, { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 } },	/* movabs */
	{ 7, { 0x48, 0x8b, 0x05, 0x10, 0, 0, 0 } },	/* mov 0x10(%rip),%rax */
	{ 6, { 0x81, 0xfb, 0x00, 0x01, 0x00, 0x00 } },	/* cmp $0x100,%ebx */
	{ 3, { 0xf6, 0xc1, 0x01 } },			/* test $1,%cl */
	{ 6, { 0xc4, 0xe3, 0x79, 0x0f, 0xc1, 0x08 } },	/* vpalignr */
	{ 6, { 0x66, 0x0f, 0x3a, 0x0f, 0xc1, 0x08 } },	/* palignr $8 */
	{ 2, { 0x31, 0xc0 } },				/* xor %eax,%eax */
	{ 9, { 0x48, 0xc7, 0x44, 0x24, 0x08, 1, 0, 0, 0 } }, /* movq $1,8(%rsp) */
};

static unsigned int emit(struct program *p, uint32_t at, const uint8_t *bytes, unsigned int len,
			 enum unit_type type, unsigned int fn)
{
	memcpy(p->code + at, bytes, len);
	p->units[at] = (struct unit){ .type = type, .len = len, .fn = fn };
	return len;
}

static void put_rel32(struct program *p, uint32_t at, unsigned int len, uint32_t target)
{
	int32_t rel = (int32_t)(target - (at + len));

	memcpy(p->code + at + len - 4, &rel, 4);
	p->units[at].target = target;
}

/*
 * Functions one after another; function i calls only later ones, so
 * every call returns.  Function 0 loops forever: a JMP back to its start.
 */
void program__generate(struct program *p, uint32_t seed)
{
	uint32_t at = 0;
	uint32_t fixups[256];

	memset(p, 0, sizeof(*p));
	p->seed = seed;
	for (unsigned int fn = 0; fn < NR_FUNCS; fn++) {
		unsigned int n = 3 + rnd(p) % 24, nr_fix = 0;
		uint32_t starts[32];

		at = (at + 15) & ~15U;
		p->fn_start[fn] = at;
		for (unsigned int k = 0; k < n; k++) {
			unsigned int r = rnd(p) % 16;
			static const uint8_t jcc[] = { 0x0f, 0x84, 0, 0, 0, 0 };
			static const uint8_t jcc8[] = { 0x75, 0 };
			static const uint8_t call[] = { 0xe8, 0, 0, 0, 0 };
			static const uint8_t icall[] = { 0xff, 0xd0 };
			static const uint8_t ijmp[] = { 0x41, 0xff, 0xe3 };
			static const uint8_t sysc[] = { 0x0f, 0x05 };

			starts[k] = at;
			if (r < 8 || k + 2 >= n) {
				unsigned int i = rnd(p) % ARRAY_SIZE(plain);

				at += emit(p, at, plain[i].bytes, plain[i].len, U_PLAIN, fn);
			} else if (r < 11) {
				fixups[nr_fix++] = at;
				at += emit(p, at, jcc, sizeof(jcc), U_JCC, fn);
			} else if (r == 11) {
				/* a short loop back: taken at random, so it ends */
				uint32_t t = starts[rnd(p) % (k + 1)];

				if (at + 2 - t > 120)
					t = at;
				at += emit(p, at, jcc8, sizeof(jcc8), U_JCC, fn);
				p->code[at - 1] = (uint8_t)(int8_t)(t - at);
				p->units[at - 2].target = t;
			} else if (r == 12 && fn + 1 < NR_FUNCS) {
				at += emit(p, at, call, sizeof(call), U_CALL, fn);
				p->units[at - 5].target = fn + 1 + rnd(p) % (NR_FUNCS - fn - 1);
			} else if (r == 13 && fn + 1 < NR_FUNCS) {
				at += emit(p, at, icall, sizeof(icall), U_ICALL, fn);
			} else if (r == 14) {
				fixups[nr_fix++] = at;
				at += emit(p, at, ijmp, sizeof(ijmp), U_IJMP, fn);
			} else {
				at += emit(p, at, sysc, sizeof(sysc), U_SYSCALL, fn);
			}
		}
		/* The last unit: RET, or function 0's JMP to its start. */
		starts[n] = at;
		if (fn) {
			static const uint8_t ret = 0xc3;

			at += emit(p, at, &ret, 1, U_RET, fn);
		} else {
			static const uint8_t jmp[] = { 0xe9, 0, 0, 0, 0 };

			emit(p, at, jmp, sizeof(jmp), U_JMP, fn);
			put_rel32(p, at, sizeof(jmp), p->fn_start[0]);
			at += sizeof(jmp);
		}
		p->fn_end[fn] = at;
		/* Forward branches: to a later unit of the function. */
		for (unsigned int i = 0; i < nr_fix; i++) {
			uint32_t from = fixups[i], t = 0;

			for (unsigned int k = 0; k <= n; k++) {
				if (starts[k] > from) {
					t = starts[k + rnd(p) % (n + 1 - k)];
					break;
				}
			}
			if (p->units[from].type == U_JCC)
				put_rel32(p, from, 6, t);
			else
				p->units[from].target = t;
		}
	}
	/* Direct calls: to the functions chosen above. */
	for (uint32_t a = 0; a < at; a++) {
		if (p->units[a].type == U_CALL && p->units[a].len)
			put_rel32(p, a, 5, p->fn_start[p->units[a].target]);
	}
}

/*
 * Run the program for @insns instructions, writing its trace; the trace's
 * length at each interrupt (where an AUX sample's snippet ends) in @ends.
 */
int program__run(struct program *p, struct auxsample_pt_writer *w, unsigned int insns,
		 bool cyc, size_t *ends, uint64_t *ips, unsigned int *nr_ends,
			unsigned int max_ends)
{
	uint32_t stack[1024], ip = p->fn_start[0];
	unsigned int depth = 0;
	uint64_t tsc = 1000;

	auxsample_pt_writer__tick(w, tsc);
	if (auxsample_pt_writer__start(w, CODE_BASE + ip))
		return -1;
	for (unsigned int i = 0; i < insns; i++) {
		const struct unit *u = &p->units[ip];
		uint64_t next = CODE_BASE + ip + u->len;
		int err = 0;

		if (!u->len || auxsample_pt_writer__maybe_psb(w, CODE_BASE + ip)) {
			pr_test("step %u: no instruction at %#x, or no PSB\n", i, ip);
			return -1;
		}
		if (rnd(p) % 400 == 0) {
			size_t len;

			/* The kernel's time: after the interrupt's packets */
			if (auxsample_pt_writer__interrupt(w, CODE_BASE + ip))
				return -1;
			auxsample_pt_writer__tick(w, tsc += 5000);
			auxsample_pt_writer__data(w, &len);
			if (*nr_ends < max_ends) {
				ips[*nr_ends] = CODE_BASE + ip;
				ends[(*nr_ends)++] = len;
			}
			if (auxsample_pt_writer__resume(w, CODE_BASE + ip))
				return -1;
			continue;
		}
		/*
		 * With CYC, time per instruction run: 1 to 4 ticks, for CYCs
		 * that differ; or always p->cpi, for cycles that can be checked.
		 */
		if (cyc)
			auxsample_pt_writer__tick(w, tsc += p->cpi ?: 1 + rnd(p) % 4);
		switch (u->type) {
		case U_PLAIN:
			ip += u->len;
			break;
		case U_JCC: {
			bool taken = rnd(p) % 2;

			err = auxsample_pt_writer__cond(w, taken);
			ip = taken ? u->target : ip + u->len;
			break;
		}
		case U_JMP:
			ip = u->target;
			break;
		case U_CALL:
		case U_ICALL: {
			/* a direct call's target is set; an indirect one's, chosen now */
			uint32_t to = u->type == U_CALL ? u->target :
				      p->fn_start[u->fn + 1 + rnd(p) % (NR_FUNCS - u->fn - 1)];

			if (depth == ARRAY_SIZE(stack)) {
				pr_test("stack overflow at %#x\n", ip);
				return -1;
			}
			stack[depth++] = ip + u->len;
			err = auxsample_pt_writer__call(w, next, u->type == U_ICALL,
							CODE_BASE + to);
			ip = to;
			break;
		}
		case U_IJMP:
			err = auxsample_pt_writer__indirect(w, CODE_BASE + u->target);
			ip = u->target;
			break;
		case U_RET:
			if (!depth) {
				pr_test("RET at %#x with no call\n", ip);
				return -1;
			}
			ip = stack[--depth];
			err = auxsample_pt_writer__ret(w, CODE_BASE + ip);
			break;
		case U_SYSCALL:
			err = auxsample_pt_writer__syscall(w) ||
			      auxsample_pt_writer__resume(w, next);
			ip += u->len;
			break;
		default:
			return -1;
		}
		if (err) {
			pr_test("step %u: unit %u at %#x: writer error\n", i, u->type, ip);
			return -1;
		}
	}
	return 0;
}

/*
 * The instructions from @to (a branch's target) straight to the branch at
 * @from, both counted; 0 if the code does not get there without a branch.
 */
unsigned int program__insns(const struct program *p, uint64_t to, uint64_t from)
{
	unsigned int n = 0;

	while (to >= CODE_BASE && to <= from && from < CODE_BASE + CODE_SIZE) {
		const struct unit *u = &p->units[to - CODE_BASE];

		if (!u->len)
			return 0;
		n++;
		if (to == from)
			return n;
		if (u->type != U_PLAIN && !(u->type == U_JCC))
			return 0;
		to += u->len;
	}
	return 0;
}
