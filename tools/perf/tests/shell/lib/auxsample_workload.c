// SPDX-License-Identifier: GPL-2.0
/*
 * Small workloads with the control flow shapes that virtual LBR tests
 * need, short enough for single-stepping (perf auxsample simulate):
 *   workload branches N	conditional, direct and indirect calls, returns,
 *				recursion, a switch jump table
 *   workload longjmp N		setjmp/longjmp out of nested calls
 *   workload signal N		a signal handler entered N times
 *   workload syscalls N		a syscall-heavy loop
 *   workload threads N		two threads running branches
 *   workload sleeps N		two threads, each N times branches and a sleep
 *   workload loops N		N calls of nest(): LOOP_OUTER runs of an inner
 *				loop of LOOP_INNER iterations each
 *   workload exec N PROG ARG...	branches, then exec PROG ARG... (a new comm)
 *   workload mmaps N		N times: an exec that fails, k = 0, 1 ... N - 1
 *				loop iterations, a mapping of executable memory
 *   workload files N DIR	N times: code from one of two files it writes
 *				in DIR, mapped in turn at one address, called
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

/*
 * perf auxsample report's test counts on these: do-while loops leave at
 * the bottom, so each run takes the inner back edge LOOP_INNER - 1 times
 * and the outer one LOOP_OUTER - 1 times.
 */
#define LOOP_INNER	12
#define LOOP_OUTER	4

static volatile int sink;
static jmp_buf env;

static int __attribute__((noinline)) fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static int __attribute__((noinline)) odd(int x) { return 3 * x + 1; }
static int __attribute__((noinline)) even(int x) { return x / 2; }
static int (*const steps[])(int) = { even, odd };

static int __attribute__((noinline)) pick(int x)
{
	switch (x % 7) {	/* a jump table */
	case 0: return x + 1;
	case 1: return x ^ 3;
	case 2: return x * 5;
	case 3: return x - 7;
	case 4: return x << 1;
	case 5: return x >> 1;
	default: return x;
	}
}

static void branches(int n)
{
	for (int i = 0; i < n; i++) {
		int x = steps[i & 1](i);

		if (x > 10)
			x = pick(x);
		sink += x + fib(i % 6);
	}
}

static void __attribute__((noinline)) deep(int depth)
{
	if (!depth)
		longjmp(env, 1);
	deep(depth - 1);
	sink++;
}

static void jumps(int n)
{
	for (int i = 0; i < n; i++) {
		if (!setjmp(env))
			deep(3 + i % 3);
		sink++;
	}
}

static void handler(int sig)
{
	sink += sig;
}

static void signals(int n)
{
	signal(SIGUSR1, handler);
	for (int i = 0; i < n; i++) {
		kill(getpid(), SIGUSR1);
		sink += i;
	}
}

static void syscalls(int n)
{
	for (int i = 0; i < n; i++)
		sink += syscall(SYS_getppid) & 1;
}

static void __attribute__((noinline)) nest(void)
{
	int i = 0;

	do {
		int j = 0;

		do
			sink += j;
		while (++j < LOOP_INNER);
	} while (++i < LOOP_OUTER);
}

static void __attribute__((noinline)) loops(int n)
{
	for (int k = 0; k < n; k++)
		nest();
}

static void *thread_main(void *arg)
{
	branches((int)(long)arg);
	return NULL;
}

static void threads(int n)
{
	pthread_t t;

	if (pthread_create(&t, NULL, thread_main, (void *)(long)n))
		exit(2);
	branches(n);
	pthread_join(t, NULL);
}

/* Work, then sleep: each sleep blocks, a sched_switch. */
static void *sleeper(void *arg)
{
	struct timespec ts = { 0, 1000 };

	for (int i = 0; i < (int)(long)arg; i++) {
		branches(1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void sleeps(int n)
{
	pthread_t t;

	if (pthread_create(&t, NULL, sleeper, (void *)(long)n))
		exit(2);
	sleeper((void *)(long)n);
	pthread_join(t, NULL);
}

/*
 * The Valgrind engine's tool sends its records in chunks of 512 words
 * and empties its chunk at an exec, failed or not; each loop iteration
 * is one word (the exit of the loop's superblock).  So the record of
 * the k-th mapping lands one word further into a chunk than the one
 * before: with N >= 512 one is where the chunk ends.
 */
static void mmaps(int n)
{
	char *const argv[] = { "/nonexistent/auxsample-workload", NULL };

	for (int k = 0; k < n; k++) {
		void *p;

		execv(argv[0], argv);
		for (int i = 0; i < k; i++)
			sink += i;
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			exit(2);
		munmap(p, 4096);
	}
}

/*
 * Two functions of int (n > 0) in machine code: a loop of n iterations,
 * and one of two branches an iteration.  Each goes in a file of its own,
 * at an offset and of a size of its own.
 */
static const unsigned char code_loop[] = {
	0x89, 0xf8,		/*	mov %edi,%eax */
	0xff, 0xc8,		/* 1:	dec %eax */
	0x75, 0xfc,		/*	jne 1b */
	0xc3,			/*	ret */
};

static const unsigned char code_odd[] = {
	0x31, 0xc0,		/*	xor %eax,%eax */
	0x01, 0xf8,		/* 1:	add %edi,%eax */
	0xa8, 0x01,		/*	test $1,%al */
	0x74, 0x02,		/*	je 2f */
	0xff, 0xc0,		/*	inc %eax */
	0xff, 0xcf,		/* 2:	dec %edi */
	0x7f, 0xf4,		/*	jg 1b */
	0xc3,			/*	ret */
};

static const struct code_file {
	const unsigned char	*code;
	size_t			len;
	size_t			offset;
	size_t			size;
} code_files[] = {
	{ code_loop, sizeof(code_loop), 0x100, 4096 },
	{ code_odd, sizeof(code_odd), 0x340, 8192 },
};

/* @cf's file in @dir: its fd, or exit. */
static int code_file__write(const struct code_file *cf, const char *dir, int k)
{
	static unsigned char page[8192];
	char name[4096];
	int fd;

	snprintf(name, sizeof(name), "%s/code%d.bin", dir, k);
	memset(page, 0xcc, cf->size);
	memcpy(page + cf->offset, cf->code, cf->len);
	fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, page, cf->size) != (ssize_t)cf->size)
		exit(2);
	return fd;
}

/*
 * Each file mapped where the other was (the hint is free again after
 * munmap()), so the process maps one file and then another at one
 * address, each time with k = 1 ... N iterations.  Between them, more
 * loop iterations than a 4 KiB snippet holds branches: a sample's trace
 * never holds the code of the file mapped there before.
 */
static void files(int n, const char *dir)
{
	int fd[2] = { code_file__write(&code_files[0], dir, 0),
		      code_file__write(&code_files[1], dir, 1) };
	void *at = NULL;

	for (int k = 1; k <= n; k++) {
		const struct code_file *cf = &code_files[k % 2];
		int (*fn)(int n);
		char *p;

		p = mmap(at, cf->size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd[k % 2], 0);
		if (p == MAP_FAILED)
			exit(2);
		at = p;
		fn = (int (*)(int n))(p + cf->offset);
		sink += fn(k);
		munmap(p, cf->size);
		for (int i = 0; i < 40000; i++)
			sink += i;
	}
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 20;

	if (argc < 2 || !strcmp(argv[1], "branches"))
		branches(n);
	else if (!strcmp(argv[1], "longjmp"))
		jumps(n);
	else if (!strcmp(argv[1], "signal"))
		signals(n);
	else if (!strcmp(argv[1], "syscalls"))
		syscalls(n);
	else if (!strcmp(argv[1], "threads"))
		threads(n);
	else if (!strcmp(argv[1], "sleeps"))
		sleeps(n);
	else if (!strcmp(argv[1], "loops"))
		loops(n);
	else if (!strcmp(argv[1], "mmaps"))
		mmaps(n);
	else if (!strcmp(argv[1], "files") && argc > 3)
		files(n, argv[3]);
	else if (!strcmp(argv[1], "exec") && argc > 3) {
		branches(n);
		execv(argv[3], argv + 3);
		return 2;
	} else
		return 1;
	return 0;
}
