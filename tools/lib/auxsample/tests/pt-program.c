// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Random x86-64 programs, and an executor that runs them and writes their
 * trace with the library's PT writer (see pt-program.h).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <auxsample/auxsample.h>
#include <auxsample/pt-writer.h>
#include "tests.h"
#include "pt-program.h"

static uint32_t rnd(struct program *p)
{
	p->seed = p->seed * 1103515245 + 12345;
	return p->seed >> 8;
}

int program__to_file(const struct program *prog, char *name)
{
	int fd = mkstemp(name);
	bool ok;

	if (fd < 0)
		return -1;
	ok = write(fd, prog->code, CODE_SIZE) == CODE_SIZE;
	close(fd);
	return ok ? 0 : -1;
}

int read_program(uint8_t *buf, size_t size, uint64_t addr, void *context)
{
	struct program *p = context;
	uint64_t base = p->base;

	if (p->kern && addr >= KCODE_BASE) {
		p = p->kern;
		base = KCODE_BASE;
	}
	if (addr < base || addr >= base + CODE_SIZE)
		return -1;
	if (size > base + CODE_SIZE - addr)
		size = base + CODE_SIZE - addr;
	memcpy(buf, p->code + (addr - base), size);
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
 * The first function that function @fn may call: a later one; in a
 * kernel, from the entries any but the other entry, from the others only
 * the last few, so that the calls nest a few deep.
 */
static unsigned int program__first_callee(const struct program *p, unsigned int fn)
{
	if (!p->kernel)
		return fn + 1;
	if (fn < 2)
		return 2;
	return fn + 1 > NR_FUNCS - 6 ? fn + 1 : NR_FUNCS - 6;
}

static uint32_t program__callee(struct program *p, unsigned int fn)
{
	unsigned int first = program__first_callee(p, fn);

	return first + rnd(p) % (NR_FUNCS - first);
}

/* The end of a kernel's entry @fn: SYSRET (sysretq), IRET (iretq). */
static unsigned int program__farret(struct program *p, uint32_t at, unsigned int fn)
{
	static const uint8_t sysret[] = { 0x48, 0x0f, 0x07 }, iret[] = { 0x48, 0xcf };

	if (fn == 0)
		return emit(p, at, sysret, sizeof(sysret), U_FARRET, fn);
	return emit(p, at, iret, sizeof(iret), U_FARRET, fn);
}

/*
 * Functions one after another; function i calls only later ones, so
 * every call returns.  Function 0 loops forever: a JMP back to its start
 * (in a kernel, functions 0 and 1 return to the user).
 */
static void program__build(struct program *p, uint32_t seed, bool kernel)
{
	uint32_t at = 0;
	uint32_t fixups[256];

	memset(p, 0, sizeof(*p));
	p->seed = seed;
	p->kernel = kernel;
	p->base = kernel ? KCODE_BASE : CODE_BASE;
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
			} else if (r == 12 && program__first_callee(p, fn) < NR_FUNCS) {
				at += emit(p, at, call, sizeof(call), U_CALL, fn);
				p->units[at - 5].target = program__callee(p, fn);
			} else if (r == 13 && program__first_callee(p, fn) < NR_FUNCS) {
				at += emit(p, at, icall, sizeof(icall), U_ICALL, fn);
			} else if (r == 14) {
				fixups[nr_fix++] = at;
				at += emit(p, at, ijmp, sizeof(ijmp), U_IJMP, fn);
			} else if (!kernel) {
				at += emit(p, at, sysc, sizeof(sysc), U_SYSCALL, fn);
			} else {
				at += emit(p, at, plain[0].bytes, plain[0].len, U_PLAIN, fn);
			}
		}
		/* The last unit: RET, or function 0's JMP to its start. */
		starts[n] = at;
		if (kernel && fn < 2) {
			at += program__farret(p, at, fn);
		} else if (fn) {
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

void program__generate(struct program *p, uint32_t seed)
{
	program__build(p, seed, false);
}

void program__generate_kernel(struct program *p, uint32_t seed)
{
	program__build(p, seed, true);
}

/* One of the executor's threads of code: the user's, or the kernel's. */
struct exec {
	struct program	*p;
	uint64_t	base;
	uint32_t	ip;
	unsigned int	depth;
	uint32_t	stack[1024];
};

struct executor {
	struct program			*p;	/* the user's: its rnd() for all */
	struct auxsample_pt_writer	*w;
	struct exec			user;
	struct exec			kern;
	struct exec			*cur;
	uint64_t			tsc;
	uint64_t			uret;	/* where the kernel returns to */
	uint64_t			pmi_ip;	/* the sample's IP, in user code */
	unsigned int			pmi;	/* kernel insns to its stop, 0: none */
	unsigned int			lost;	/* insns to the OVF, 0: none lost */
	size_t				*ends;
	uint64_t			*ips;
	unsigned int			*nr_ends;
	unsigned int			max_ends;
};

static uint64_t exec__ip(const struct exec *e)
{
	return e->base + e->ip;
}

/* An AUX sample's snippet ends here, the sample's IP @ip. */
static void executor__end(struct executor *x, uint64_t ip)
{
	size_t len;

	auxsample_pt_writer__data(x->w, &len);
	if (*x->nr_ends < x->max_ends) {
		x->ips[*x->nr_ends] = ip;
		x->ends[(*x->nr_ends)++] = len;
	}
}

/* Into the kernel's entry @fn (0: syscall, 1: interrupt), back to @uret. */
static void executor__enter(struct executor *x, unsigned int fn, uint64_t uret)
{
	x->uret = uret;
	x->kern.ip = x->p->kern->fn_start[fn];
	x->kern.depth = 0;
	x->cur = &x->kern;
}

/*
 * An interrupt at the user's IP: the sample's PMI.  User-only, FUP and
 * TIP.PGD, and the trace goes on there (an overflow resolved while in
 * the kernel binds to its TIP.PGE); with the kernel traced, FUP and TIP
 * into the kernel's interrupt entry, every other one the sample's, whose
 * snippet ends where the kernel stops the trace to copy it.
 */
static int executor__interrupt(struct executor *x)
{
	uint64_t ip = exec__ip(&x->user);
	int err;

	if (x->p->kern) {
		if (rnd(x->p) % 2) {
			x->pmi = 1 + rnd(x->p) % 40;
			x->pmi_ip = ip;
		}
		executor__enter(x, 1, ip);
		return auxsample_pt_writer__async(x->w, ip, exec__ip(&x->kern));
	}
	/* The kernel's time: after the interrupt's packets */
	err = auxsample_pt_writer__interrupt(x->w, ip);
	if (err)
		return err;
	auxsample_pt_writer__tick(x->w, x->tsc += 5000);
	executor__end(x, ip);
	if (x->lost) {
		x->lost = 0;
		err = auxsample_pt_writer__overflow(x->w, ip);
	}
	return err ?: auxsample_pt_writer__resume(x->w, ip);
}

/* The kernel stops the trace at its IP to copy the sample's snippet. */
static int executor__pmi_stop(struct executor *x)
{
	uint64_t ip = exec__ip(&x->kern);
	int err;

	x->pmi = 0;
	err = auxsample_pt_writer__stop_at(x->w, ip);
	if (err)
		return err;
	auxsample_pt_writer__tick(x->w, x->tsc += 2000);
	executor__end(x, x->pmi_ip);
	auxsample_pt_writer__tick(x->w, x->tsc += 1000);
	return auxsample_pt_writer__restart_at(x->w, ip);
}

/* A syscall: user-only, TIP.PGD and TIP.PGE; else into the kernel. */
static int executor__syscall(struct executor *x, uint64_t next)
{
	int err;

	if (x->p->kern) {
		executor__enter(x, 0, next);
		return auxsample_pt_writer__indirect(x->w, exec__ip(&x->kern));
	}
	err = auxsample_pt_writer__syscall(x->w);
	if (!err && x->lost) {
		x->lost = 0;
		err = auxsample_pt_writer__overflow(x->w, next);
	}
	x->user.ip = next - x->user.base;
	return err ?: auxsample_pt_writer__resume(x->w, next);
}

/* Where SYSRET or IRET goes: back to the user. */
static int executor__farret(struct executor *x)
{
	x->cur = &x->user;
	x->user.ip = x->uret - x->user.base;
	return auxsample_pt_writer__indirect(x->w, x->uret);
}

/* Packets lost now and then: an OVF where the overflow resolves. */
static int executor__overflow(struct executor *x)
{
	if (x->lost) {
		if (--x->lost)
			return 0;
		return auxsample_pt_writer__overflow(x->w, exec__ip(x->cur));
	}
	if (!x->p->ovf || rnd(x->p) % x->p->ovf)
		return 0;
	x->lost = 10 + rnd(x->p) % 300;
	return auxsample_pt_writer__lose(x->w);
}

/* The instruction at the current IP, its trace written. */
static int executor__step(struct executor *x)
{
	struct exec *e = x->cur;
	const struct unit *u = &e->p->units[e->ip];
	uint64_t next = exec__ip(e) + u->len;

	switch (u->type) {
	case U_PLAIN:
		e->ip += u->len;
		return 0;
	case U_JCC: {
		bool taken = rnd(x->p) % 2;

		e->ip = taken ? u->target : e->ip + u->len;
		return auxsample_pt_writer__cond(x->w, taken);
	}
	case U_JMP:
		e->ip = u->target;
		return 0;
	case U_CALL:
	case U_ICALL: {
		/* a direct call's target is set; an indirect one's, chosen now */
		unsigned int first = program__first_callee(e->p, u->fn);
		uint32_t to = u->type == U_CALL ? u->target :
			      e->p->fn_start[first + rnd(x->p) % (NR_FUNCS - first)];

		if (e->depth == ARRAY_SIZE(e->stack)) {
			pr_test("stack overflow at %#x\n", e->ip);
			return -1;
		}
		e->stack[e->depth++] = e->ip + u->len;
		e->ip = to;
		return auxsample_pt_writer__call(x->w, next, u->type == U_ICALL, e->base + to);
	}
	case U_IJMP:
		e->ip = u->target;
		return auxsample_pt_writer__indirect(x->w, e->base + u->target);
	case U_RET:
		if (!e->depth) {
			pr_test("RET at %#x with no call\n", e->ip);
			return -1;
		}
		e->ip = e->stack[--e->depth];
		return auxsample_pt_writer__ret(x->w, exec__ip(e));
	case U_SYSCALL:
		return executor__syscall(x, next);
	case U_FARRET:
		return executor__farret(x);
	default:
		return -1;
	}
}

/*
 * Run the program for @insns instructions (its kernel's too, if it has
 * one), writing its trace; the trace's length at each sample (where an
 * AUX sample's snippet ends) in @ends, the sample's user IP in @ips.
 */
int program__run(struct program *p, struct auxsample_pt_writer *w, unsigned int insns,
		 bool cyc, size_t *ends, uint64_t *ips, unsigned int *nr_ends,
			unsigned int max_ends)
{
	struct executor *x = calloc(1, sizeof(*x));
	int err = -1;

	if (!x)
		return -1;
	*x = (struct executor){
		.p = p, .w = w, .tsc = 1000, .ends = ends, .ips = ips,
		.nr_ends = nr_ends, .max_ends = max_ends,
		.user = { .p = p, .base = p->base, .ip = p->fn_start[0] },
		.kern = { .p = p->kern, .base = KCODE_BASE },
	};
	x->cur = &x->user;
	auxsample_pt_writer__tick(w, x->tsc);
	if (auxsample_pt_writer__start(w, exec__ip(x->cur)))
		goto out;
	for (unsigned int i = 0; i < insns; i++) {
		struct exec *e = x->cur;
		const struct unit *u = &e->p->units[e->ip];

		if (!u->len || auxsample_pt_writer__maybe_psb(w, exec__ip(e))) {
			pr_test("step %u: no instruction at %#x, or no PSB\n", i, e->ip);
			goto out;
		}
		if (executor__overflow(x))
			goto out;
		if (e == &x->kern && x->pmi && (--x->pmi == 0 || u->type == U_FARRET)) {
			if (executor__pmi_stop(x))
				goto out;
		} else if (e == &x->user && rnd(p) % 400 == 0) {
			if (executor__interrupt(x))
				goto out;
			continue;
		}
		/*
		 * With CYC, time per instruction run: 1 to 4 ticks, for CYCs
		 * that differ; or always p->cpi, for cycles that can be checked.
		 */
		if (cyc)
			auxsample_pt_writer__tick(w, x->tsc += p->cpi ?: 1 + rnd(p) % 4);
		if (executor__step(x)) {
			pr_test("step %u: unit %u at %#x: writer error\n", i, u->type, e->ip);
			goto out;
		}
	}
	err = 0;
out:
	free(x);
	return err;
}

/*
 * The instructions from @to (a branch's target) straight to the branch at
 * @from, both counted; 0 if the code does not get there without a branch.
 */
unsigned int program__insns(const struct program *p, uint64_t to, uint64_t from)
{
	unsigned int n = 0;

	while (to >= p->base && to <= from && from < p->base + CODE_SIZE) {
		const struct unit *u = &p->units[to - p->base];

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
