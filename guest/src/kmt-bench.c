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
 * Usage: kmt-bench [-t] [-s N] [-d MS] [-e MS] [NAME[=N]]...  |  kmt-bench -c
 *   (default: every benchmark, default N)
 *   -t: time only (no instruction counter, e.g. QEMU without -icount)
 *   -s N: N empty loop iterations before the counted region (below)
 *   -d MS: sleep MS ms before each counted chunk (below)
 *   -e MS: sleep MS ms before the counted region and before its end (below)
 *   -c: print the kmt-cpu line (DCZID_EL0's block size) only
 * Output, one line per benchmark (KTAP diagnostic lines):
 *   # kmt-bench NAME ops=N insn_per_op=X insn_mean=Y chunk=C ns_per_op=Z
 *   # kmt-bench NAME ops=N ns_per_op=Z ns_mean=W chunk=C          (-t)
 * (per operation: the median over chunks of C operations; *_mean: overall)
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
#include <sys/personality.h>
#include <sys/prctl.h>
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
	long chunk;	/* ops per counted chunk; the median chunk is reported */
	void (*setup)(long ops);
	void (*run)(long ops);
	void (*teardown)(void);
	int named_only;	/* not in the default set */
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

/*
 * The upstream "thread mode" shape: a forked child starts child_threads
 * threads, then joins them and exits. One operation is one child
 * (child_threads + 1 kernel stacks, one mm). thread8_child is
 * the shape scaled down, thread2000_child the upstream size.
 */
static int child_threads;

static void run_thread_child(long ops)
{
	for (long i = 0; i < ops; i++) {
		int st;
		pid_t pid = fork();

		if (pid == 0) {
			pthread_t *t = calloc(child_threads, sizeof(*t));

			if (!t)
				_exit(1);
			for (int j = 0; j < child_threads; j++)
				if (pthread_create(&t[j], NULL, thread_fn, NULL))
					_exit(1);
			for (int j = 0; j < child_threads; j++)
				pthread_join(t[j], NULL);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st)) {
			fprintf(stderr, "thread_child: child failed\n");
			exit(1);
		}
	}
}

static void setup_thread8(long ops)
{
	child_threads = 8;
}

static void setup_thread2000(long ops)
{
	child_threads = 2000;
}

/*
 * The upstream "pgtable mode" shape: fork a process with fork_mb of
 * faulted anonymous memory; the child exits at once. fork64m is the shape
 * scaled down, fork2g the upstream size (a guest with 3 GiB or more).
 */
static size_t fork_mb;
static char *fork_mem;

static void setup_fork(long ops)
{
	size_t len = fork_mb << 20;

	fork_mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fork_mem == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	for (size_t off = 0; off < len; off += 4096)
		fork_mem[off] = 1;
}

static void setup_fork64m(long ops)
{
	fork_mb = 64;
	setup_fork(ops);
}

static void setup_fork2g(long ops)
{
	fork_mb = 2048;
	setup_fork(ops);
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
	munmap(fork_mem, fork_mb << 20);
}

static struct bench benches[] = {
	{ "getpid", 20000, 200, NULL, run_getpid, NULL },
	{ "getppid", 20000, 200, NULL, run_getppid, NULL },
	{ "invalid_syscall", 20000, 200, NULL, run_invalid, NULL },
	{ "ctxsw", 2000, 20, setup_ctxsw, run_ctxsw, teardown_ctxsw },
	{ "thread", 500, 5, NULL, run_thread, NULL },
	{ "thread8_child", 60, 1, setup_thread8, run_thread_child, NULL },
	{ "fork64m", 30, 1, setup_fork64m, run_fork, teardown_fork },
	/* Upstream's sizes: only when named (fork2g needs a big guest). */
	{ "thread2000_child", 5, 1, setup_thread2000, run_thread_child, NULL, 1 },
	{ "fork2g", 10, 1, setup_fork2g, run_fork, teardown_fork, 1 },
};

#define NBENCH (sizeof(benches) / sizeof(benches[0]))

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Instruction mode: count each chunk of b->chunk operations on its own and
 * report the median chunk, so that the odd timer tick landing in a chunk
 * does not blur a per-operation figure of a few hundred instructions (the
 * mean over all operations is printed too). Time mode: one timed loop.
 */
/*
 * -s N: N iterations of an empty loop before each benchmark's counted
 * region, after its warm-up. With -icount, time is the instruction count,
 * so this moves where the timer interrupts and the deferred work they
 * trigger (RCU callbacks, kworkers) fall relative to the operations: the
 * same kernel booted with two shifts must give the same per-operation
 * count for that count to be a measurement.
 */
static long shift_loops;

/*
 * -d MS: before each counted chunk, with the counter off, sleep MS
 * milliseconds, so that the deferred work of the chunks before it (RCU
 * callbacks freeing tasks, kworkers) has run and each chunk starts from
 * the same state. The count is then what the operations cost on their
 * own path, without the deferred work whose share of a chunk depends on
 * where the timer interrupts fall.
 */
static long drain_ms;

static void drain(void)
{
	struct timespec ts = { drain_ms / 1000, (drain_ms % 1000) * 1000000L };

	if (drain_ms)
		nanosleep(&ts, NULL);
}

/*
 * -e MS: sleep MS milliseconds before the counted region begins and again
 * before it ends, inside it. The deferred work of the warm-up (RCU
 * callbacks, kworkers) then runs before the region, and that of the
 * counted operations within it (the RCU callbacks that free a task and
 * its stack run one or two grace periods after the task is reaped), so
 * that a count over the whole region, as the kmt-count plugin's flat
 * profile takes it, holds each operation's deferred work once, wherever
 * the timer interrupts fall. The sleeps cost no host time under -icount
 * with sleep=off.
 */
static long edge_ms;

static void settle(void)
{
	struct timespec ts = { edge_ms / 1000, (edge_ms % 1000) * 1000000L };

	if (edge_ms)
		nanosleep(&ts, NULL);
}

/* DC GVA / DC GZVA tag (and zero) one DCZID block each. */
static void print_cpu(void)
{
	unsigned long dczid;

	asm volatile("mrs %0, dczid_el0" : "=r" (dczid));
	printf("# kmt-cpu dczid_bs=%lu\n", dczid & 0xf);
}

static void shift_phase(void)
{
	for (long i = 0; i < shift_loops; i++)
		asm volatile("" ::: "memory");
}

static int run_one(struct bench *b, int num, int time_only)
{
	long warm = b->ops / 10 + 1, chunk = b->chunk, nchunks;
	uint64_t *counts, *times, total = 0, t0, t1;

	if (chunk < 1 || chunk > b->ops)
		chunk = b->ops;
	nchunks = b->ops / chunk;
	counts = calloc(nchunks, sizeof(*counts));
	times = calloc(nchunks, sizeof(*times));
	if (!counts || !times)
		return 1;

	/* Warm up caches and lazily allocated kernel state. */
	if (b->setup)
		b->setup(warm);
	b->run(warm);
	if (b->teardown)
		b->teardown();
	if (b->setup)
		b->setup(nchunks * chunk);
	shift_phase();
	settle();

	t0 = now_ns();
	REGION_BEGIN();
	for (long i = 0; i < nchunks; i++) {
		uint64_t c0;

		drain();
		c0 = now_ns();

		if (!time_only) {
			ioctl(perf_fd, PERF_EVENT_IOC_RESET, 0);
			ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0);
		}
		b->run(chunk);
		if (!time_only) {
			ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);
			if (read(perf_fd, &counts[i], sizeof(counts[i])) != sizeof(counts[i]))
				counts[i] = 0;
			total += counts[i];
		}
		times[i] = now_ns() - c0;
	}
	settle();
	REGION_END();
	t1 = now_ns();
	if (b->teardown)
		b->teardown();

	/* The median chunk time is robust against other load on the host. */
	qsort(times, nchunks, sizeof(*times), cmp_u64);
	if (time_only) {
		printf("# kmt-bench %s ops=%ld ns_per_op=%.1f ns_mean=%.1f chunk=%ld\n",
		       b->name, nchunks * chunk, (double)times[nchunks / 2] / chunk,
		       (double)(t1 - t0) / (nchunks * chunk), chunk);
		printf("ok %d %s\n", num, b->name);
		free(counts);
		free(times);
		return 0;
	}
	qsort(counts, nchunks, sizeof(*counts), cmp_u64);
	printf("# kmt-bench %s ops=%ld insn_per_op=%.1f insn_mean=%.1f chunk=%ld ns_per_op=%.1f\n",
	       b->name, nchunks * chunk, (double)counts[nchunks / 2] / chunk,
	       (double)total / (nchunks * chunk), chunk,
	       (double)(t1 - t0) / (nchunks * chunk));
	free(counts);
	if (total == 0) {
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
	int n = 0, fails = 0, time_only = 0;
	cpu_set_t cpus;

	/*
	 * No address space randomization, for this program and every task it
	 * starts: where the kernel places a thread's stack decides how many
	 * page-table entries the operation walks (glibc releases the unused
	 * part of an exiting thread's stack with MADV_DONTNEED), and the
	 * placement differs whenever the kernel's random numbers do (the
	 * kernel command line, which carries -s, is mixed into them).
	 * Randomized, two boots of one kernel that differed only in kmt-bench's
	 * arguments counted thread 24394.8 and 22192.0 instructions per
	 * operation, and a flat profile of two such boots (the kmt-count
	 * plugin's profile=1) put the difference in unmap_page_range();
	 * not randomized, 24476.8 and 24480.0 (-s 0, -s 1000003).
	 * KMT_BENCH_NORAND guards against a second re-exec should the kernel
	 * drop the flag at exec.
	 */
	if (!(personality(0xffffffff) & ADDR_NO_RANDOMIZE)) {
		if (getenv("KMT_BENCH_NORAND") ||
		    personality(personality(0xffffffff) | ADDR_NO_RANDOMIZE) == -1) {
			printf("# kmt-bench: cannot turn address randomization off: %s\n",
			       strerror(errno));
			return 1;
		}
		setenv("KMT_BENCH_NORAND", "1", 1);
		execv("/proc/self/exe", argv);
		printf("# kmt-bench: re-exec without address randomization failed: %s\n",
		       strerror(errno));
		return 1;
	}
	/* The re-exec through /proc/self/exe named the task "exe". */
	prctl(PR_SET_NAME, "kmt-bench");

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);

	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "-c")) {
			/* Only the CPU line, for another benchmark program's run. */
			print_cpu();
			return 0;
		}
		if (!strcmp(argv[a], "-t")) {
			time_only = 1;
			continue;
		}
		if (!strcmp(argv[a], "-s") && a + 1 < argc) {
			shift_loops = atol(argv[++a]);
			continue;
		}
		if (!strcmp(argv[a], "-d") && a + 1 < argc) {
			drain_ms = atol(argv[++a]);
			continue;
		}
		if (!strcmp(argv[a], "-e") && a + 1 < argc) {
			edge_ms = atol(argv[++a]);
			continue;
		}
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
			if (!benches[i].named_only)
				sel[n++] = &benches[i];

	printf("TAP version 13\n1..%d\n", n);
	print_cpu();
	perf_fd = time_only ? 0 : open_counter();
	if (perf_fd < 0) {
		printf("# perf_event_open: %s\n", strerror(errno));
		for (int i = 0; i < n; i++)
			printf("not ok %d %s # no instruction counter\n", i + 1, sel[i]->name);
		return 1;
	}
	for (int i = 0; i < n; i++)
		fails += run_one(sel[i], i + 1, time_only);
	fflush(stdout);
	return fails ? 1 : 0;
}
