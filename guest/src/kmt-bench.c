// SPDX-License-Identifier: GPL-2.0
/*
 * kmt-bench: micro-benchmarks for the kernel paths the series changes.
 *
 * Each benchmark runs its operation N times and reports, per operation,
 * the guest instructions retired on CPU 0 (kernel and user, all tasks:
 * perf_event_open(PERF_COUNT_HW_INSTRUCTIONS) system-wide on one CPU) and
 * the elapsed CLOCK_MONOTONIC time. Run on one vCPU; under QEMU with
 * -icount shift=0 the instruction counts are exact and repeatable.
 *
 * Usage: kmt-bench [NAME[=N]]...   (default: every benchmark, default N)
 * Output, one line per benchmark (KTAP diagnostic lines):
 *   # kmt-bench NAME ops=N insn_per_op=X ns_per_op=Y
 * and a KTAP result line per benchmark.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int perf_fd = -1;

/* Region markers: HINT instructions that execute as NOPs (see kmt/plugin). */
#define REGION_BEGIN() asm volatile("hint #0x70" ::: "memory")
#define REGION_END() asm volatile("hint #0x71" ::: "memory")

static int open_counter(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_INSTRUCTIONS;
	attr.disabled = 1;
	attr.exclude_hv = 1;
	/* All tasks on CPU 0, kernel included. */
	return syscall(SYS_perf_event_open, &attr, -1, 0, -1, 0);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

struct bench {
	const char *name;
	long ops;
	void (*setup)(long ops);
	void (*run)(long ops);
	void (*teardown)(void);
};

static void run_getpid(long ops)
{
	for (long i = 0; i < ops; i++)
		syscall(SYS_getpid);
}

static void run_getppid(long ops)
{
	for (long i = 0; i < ops; i++)
		syscall(SYS_getppid);
}

static void run_invalid(long ops)
{
	for (long i = 0; i < ops; i++)
		syscall(-1L);
}

/* Two tasks on one CPU ping-pong a byte through two pipes. */
static int ping[2], pong[2];
static pid_t partner;

static void setup_ctxsw(long ops)
{
	char c;

	if (pipe(ping) || pipe(pong)) {
		perror("pipe");
		exit(1);
	}
	partner = fork();
	if (partner == 0) {
		for (long i = 0; i < ops; i++) {
			if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
}

static void run_ctxsw(long ops)
{
	char c = 'x';

	for (long i = 0; i < ops; i++) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) {
			perror("ctxsw");
			exit(1);
		}
	}
}

static void teardown_ctxsw(void)
{
	int st;

	waitpid(partner, &st, 0);
	close(ping[0]);
	close(ping[1]);
	close(pong[0]);
	close(pong[1]);
}

static void *thread_fn(void *arg)
{
	return arg;
}

static void run_thread(long ops)
{
	for (long i = 0; i < ops; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, thread_fn, NULL)) {
			perror("pthread_create");
			exit(1);
		}
		pthread_join(t, NULL);
	}
}

/* Fork a process with FORK_MB of faulted anonymous memory. */
#define FORK_MB 64
static char *fork_mem;

static void setup_fork(long ops)
{
	size_t len = FORK_MB << 20;

	fork_mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fork_mem == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	for (size_t off = 0; off < len; off += 4096)
		fork_mem[off] = 1;
}

static void run_fork(long ops)
{
	for (long i = 0; i < ops; i++) {
		int st;
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		waitpid(pid, &st, 0);
	}
}

static void teardown_fork(void)
{
	munmap(fork_mem, FORK_MB << 20);
}

static struct bench benches[] = {
	{ "getpid", 20000, NULL, run_getpid, NULL },
	{ "getppid", 20000, NULL, run_getppid, NULL },
	{ "invalid_syscall", 20000, NULL, run_invalid, NULL },
	{ "ctxsw", 5000, setup_ctxsw, run_ctxsw, teardown_ctxsw },
	{ "thread", 500, NULL, run_thread, NULL },
	{ "fork64m", 50, setup_fork, run_fork, teardown_fork },
};

#define NBENCH (sizeof(benches) / sizeof(benches[0]))

static int run_one(struct bench *b, int num)
{
	uint64_t insn = 0, t0, t1;

	if (b->setup)
		b->setup(b->ops);
	/* Warm up caches and lazily allocated kernel state. */
	b->run(b->ops / 10 + 1);
	if (b->teardown)
		b->teardown();
	if (b->setup)
		b->setup(b->ops);

	ioctl(perf_fd, PERF_EVENT_IOC_RESET, 0);
	t0 = now_ns();
	ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0);
	REGION_BEGIN();
	b->run(b->ops);
	REGION_END();
	ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);
	t1 = now_ns();
	if (read(perf_fd, &insn, sizeof(insn)) != sizeof(insn))
		insn = 0;
	if (b->teardown)
		b->teardown();

	printf("# kmt-bench %s ops=%ld insn_per_op=%.1f ns_per_op=%.1f\n",
	       b->name, b->ops, (double)insn / b->ops, (double)(t1 - t0) / b->ops);
	if (insn == 0) {
		printf("not ok %d %s # instruction counter read 0 (needs -icount)\n",
		       num, b->name);
		return 1;
	}
	printf("ok %d %s\n", num, b->name);
	return 0;
}

int main(int argc, char **argv)
{
	struct bench *sel[NBENCH];
	int n = 0, fails = 0;
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);

	for (int a = 1; a < argc; a++) {
		char *eq = strchr(argv[a], '=');
		size_t len = eq ? (size_t)(eq - argv[a]) : strlen(argv[a]);
		size_t i;

		for (i = 0; i < NBENCH; i++) {
			if (strlen(benches[i].name) == len &&
			    !strncmp(benches[i].name, argv[a], len))
				break;
		}
		if (i == NBENCH) {
			fprintf(stderr, "unknown benchmark %s\n", argv[a]);
			return 2;
		}
		if (eq)
			benches[i].ops = atol(eq + 1);
		sel[n++] = &benches[i];
	}
	if (!n)
		for (size_t i = 0; i < NBENCH; i++)
			sel[n++] = &benches[i];

	printf("TAP version 13\n1..%d\n", n);
	perf_fd = open_counter();
	if (perf_fd < 0) {
		printf("# perf_event_open: %s\n", strerror(errno));
		for (int i = 0; i < n; i++)
			printf("not ok %d %s # no instruction counter\n", i + 1, sel[i]->name);
		return 1;
	}
	for (int i = 0; i < n; i++)
		fails += run_one(sel[i], i + 1);
	fflush(stdout);
	return fails ? 1 : 0;
}
