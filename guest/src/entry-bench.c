// SPDX-License-Identifier: GPL-2.0
/*
 * entry-bench: instructions per system call and per pipe round trip (and,
 * when named, per thread create + join and per fork).
 *
 * For each benchmark, the PMU counts the instructions retired on CPU 0 by
 * every task, kernel and user (perf_event_open(PERF_COUNT_HW_INSTRUCTIONS),
 * pid -1, cpu 0), around each of nchunks chunks of chunk operations, and
 * the median chunk per operation is printed. Under QEMU with -icount
 * shift=0 on one vCPU the counts are exact.
 *
 *   getpid, getppid   one kernel entry and exit each
 *   invalid_syscall   system call number -1: entry and exit, no handler
 *   ctxsw             a byte sent to a second task through one pipe and
 *                     back through another: two context switches
 *
 * Run only when named (a kernel stack, page tables and slab objects each):
 *   thread            pthread_create() and pthread_join() of a thread that
 *                     returns at once
 *   fork64m           fork() of this process with 64 MiB of anonymous
 *                     memory mapped and touched; the child exits at once
 *
 * Build: aarch64-linux-gnu-gcc -O2 -static -o entry-bench entry-bench.c
 * It runs as /init too: a kernel initramfs of /dev/console and the program
 * as /init (usr/gen_init_cpio with "dir /dev 755 0 0",
 * "nod /dev/console 600 0 0 c 5 1" and "file /init entry-bench 755 0 0").
 * Usage: entry-bench [-t] [-s N] [NAME]...
 *   -t:   no counter (under a plugin that counts for itself: no
 *         perf_event system calls between the markers)
 *   -s N: N empty loop iterations before each benchmark's counted chunks,
 *         which moves where the timer interrupts fall: a count is a
 *         measurement where two runs with different N agree.
 *   NAME: only these benchmarks, in this order (default: every one that
 *         is not run only when named).
 * Output, one line per benchmark:
 *   # bench NAME ops=N insn_per_op=X insn_mean=Y chunk=C
 *   # bench NAME ops=N chunk=C                              (-t)
 *
 * HINT #0x70 and #0x71, around the counted chunks, execute as NOPs; an
 * instruction-counting TCG plugin can take them as region markers.
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
#include <sys/personality.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int perf_fd, time_only;

static inline void region_begin(void)
{
	asm volatile("hint #0x70" ::: "memory");
}

static inline void region_end(void)
{
	asm volatile("hint #0x71" ::: "memory");
}
static long shift_loops;
static int ping[2], pong[2];
static pid_t partner;

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

#define FORK_MEM (64UL << 20)
static char *fork_mem;

static void setup_fork64m(long ops)
{
	fork_mem = mmap(NULL, FORK_MEM, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fork_mem == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	for (size_t off = 0; off < FORK_MEM; off += 4096)
		fork_mem[off] = 1;
}

static void run_fork(long ops)
{
	for (long i = 0; i < ops; i++) {
		int st;
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid < 0 || waitpid(pid, &st, 0) != pid) {
			perror("fork");
			exit(1);
		}
	}
}

static void teardown_fork(void)
{
	munmap(fork_mem, FORK_MEM);
}

struct bench {
	const char *name;
	long ops;
	long chunk;
	void (*setup)(long ops);
	void (*run)(long ops);
	void (*teardown)(void);
	int named_only;
};

static struct bench benches[] = {
	{ "getpid", 20000, 200, NULL, run_getpid, NULL },
	{ "getppid", 20000, 200, NULL, run_getppid, NULL },
	{ "invalid_syscall", 20000, 200, NULL, run_invalid, NULL },
	{ "ctxsw", 2000, 20, setup_ctxsw, run_ctxsw, teardown_ctxsw },
	{ "thread", 500, 5, NULL, run_thread, NULL, 1 },
	{ "fork64m", 30, 1, setup_fork64m, run_fork, teardown_fork, 1 },
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int run_one(struct bench *b)
{
	long warm = b->ops / 10 + 1, nchunks = b->ops / b->chunk;
	uint64_t counts[1000], total = 0;

	if (nchunks > 1000)
		return 1;
	/* Warm up caches and lazily allocated kernel state. */
	if (b->setup)
		b->setup(warm);
	b->run(warm);
	if (b->teardown)
		b->teardown();
	if (b->setup)
		b->setup(nchunks * b->chunk);
	for (long i = 0; i < shift_loops; i++)
		asm volatile("" ::: "memory");

	region_begin();
	for (long i = 0; i < nchunks; i++) {
		if (time_only) {
			b->run(b->chunk);
			continue;
		}
		ioctl(perf_fd, PERF_EVENT_IOC_RESET, 0);
		ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0);
		b->run(b->chunk);
		ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(perf_fd, &counts[i], sizeof(counts[i])) != sizeof(counts[i]))
			counts[i] = 0;
		total += counts[i];
	}
	region_end();
	if (b->teardown)
		b->teardown();

	if (time_only) {
		printf("# bench %s ops=%ld chunk=%ld\n", b->name, nchunks * b->chunk, b->chunk);
		return 0;
	}
	qsort(counts, nchunks, sizeof(counts[0]), cmp_u64);
	printf("# bench %s ops=%ld insn_per_op=%.1f insn_mean=%.1f chunk=%ld\n",
	       b->name, nchunks * b->chunk, (double)counts[nchunks / 2] / b->chunk,
	       (double)total / (nchunks * b->chunk), b->chunk);
	return total == 0;
}

int main(int argc, char **argv)
{
	struct bench *sel[ARRAY_SIZE(benches)];
	struct perf_event_attr attr;
	size_t n = 0;
	cpu_set_t cpus;
	int fails = 0;

	/* Where the kernel maps a task must not change between two runs. */
	if (!(personality(0xffffffff) & ADDR_NO_RANDOMIZE)) {
		if (getenv("ENTRY_BENCH_NORAND") ||
		    personality(personality(0xffffffff) | ADDR_NO_RANDOMIZE) == -1) {
			printf("# entry-bench: address randomization stays on: %s\n",
			       strerror(errno));
			return 1;
		}
		setenv("ENTRY_BENCH_NORAND", "1", 1);
		/* argv[0]: as /init there is no /proc to find ourselves in. */
		execvp(argv[0], argv);
		printf("# entry-bench: exec %s: %s\n", argv[0], strerror(errno));
		return 1;
	}
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "-t")) {
			time_only = 1;
		} else if (!strcmp(argv[a], "-s") && a + 1 < argc) {
			shift_loops = atol(argv[++a]);
		} else {
			size_t i = 0;

			while (i < ARRAY_SIZE(benches) && strcmp(argv[a], benches[i].name))
				i++;
			if (i == ARRAY_SIZE(benches) || n == ARRAY_SIZE(sel)) {
				fprintf(stderr, "usage: entry-bench [-t] [-s N] [NAME]...\n");
				return 2;
			}
			sel[n++] = &benches[i];
		}
	}
	if (!n) {
		for (size_t i = 0; i < ARRAY_SIZE(benches); i++)
			if (!benches[i].named_only)
				sel[n++] = &benches[i];
	}

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_INSTRUCTIONS;
	attr.disabled = 1;
	attr.exclude_hv = 1;
	perf_fd = time_only ? 0 : syscall(SYS_perf_event_open, &attr, -1, 0, -1, 0);
	if (perf_fd < 0) {
		printf("# entry-bench: perf_event_open: %s\n", strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		fails += run_one(sel[i]);
	fflush(stdout);
	return fails ? 1 : 0;
}
