// SPDX-License-Identifier: GPL-2.0
// kmt-cflags: -march=armv8.5-a+memtag
/*
 * kmt-tagtest: the exact-count self-test of the kmt-count QEMU plugin.
 *
 * Executes, between the region markers (HINT #0x70 / #0x71), one
 * straight-line block of user-space code with a known number of each
 * instruction the plugin counts (STG, STZG, ST2G, STZ2G, STGP in their
 * offset, post- and pre-index forms, DC GVA, DC GZVA, DSB, ISB, DMB) and
 * LDGs, which must not be counted. No system call or fault happens
 * inside the region (the memory is faulted in before). Then an empty
 * region, which must count nothing. STGM, STZGM and TFSR_EL1 reads are
 * EL1-only and expected to be 0 here. Then a region of N_GETPPID
 * getppid() system calls, for the plugin's pc= counts: the kernel's
 * __arm64_sys_getppid() runs exactly that often inside it.
 *
 * Output: what each region executed, in the plugin's counter names,
 *   # kmt-tagtest executed region=N insn=49 stg=6 ...
 *   # kmt-tagtest called region=3 __arm64_sys_getppid=5
 * and a KTAP result line; the host compares with the plugin's counts.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#ifndef PROT_MTE
#define PROT_MTE 0x20
#endif

#define STR_(x) #x
#define STR(x) STR_(x)

/* Offset forms repeated N_x times, plus one post- and one pre-index form. */
#define N_STG 4
#define N_STZG 3
#define N_ST2G 2
#define N_STZ2G 1
#define N_STGP 3
#define N_DC_GVA 7
#define N_DC_GZVA 2
#define N_LDG 5
#define N_DSB 4		/* sy, ish, ishst, nsh */
#define N_ISB 3
#define N_DMB 2		/* ish, ishld */
#define N_OTHER 3	/* the three movs */

#define X_STG (N_STG + 2)
#define X_STZG (N_STZG + 2)
#define X_ST2G (N_ST2G + 2)
#define X_STZ2G (N_STZ2G + 2)
#define X_STGP (N_STGP + 2)
#define X_INSN (X_STG + X_STZG + X_ST2G + X_STZ2G + X_STGP + N_DC_GVA + N_DC_GZVA + \
		N_LDG + N_DSB + N_ISB + N_DMB + N_OTHER)

#define LEN (64 * 1024)

#define N_GETPPID 5
#define NR_GETPPID 173	/* asm-generic/unistd.h */

static void tagged_block(char *p)
{
	asm volatile(
		"hint #0x70\n"
		"mov x9, %[p]\n"
		"mov x10, xzr\n"
		"mov x11, xzr\n"
		".rept " STR(N_STG) "\n stg x9, [x9, #16]\n .endr\n"
		"stg x9, [x9], #16\n"
		"stg x9, [x9, #-16]!\n"
		".rept " STR(N_STZG) "\n stzg x9, [x9, #32]\n .endr\n"
		"stzg x9, [x9], #32\n"
		"stzg x9, [x9, #-32]!\n"
		".rept " STR(N_ST2G) "\n st2g x9, [x9, #64]\n .endr\n"
		"st2g x9, [x9], #32\n"
		"st2g x9, [x9, #-32]!\n"
		".rept " STR(N_STZ2G) "\n stz2g x9, [x9, #-64]\n .endr\n"
		"stz2g x9, [x9], #32\n"
		"stz2g x9, [x9, #-32]!\n"
		".rept " STR(N_STGP) "\n stgp x10, x11, [x9, #128]\n .endr\n"
		"stgp x10, x11, [x9], #16\n"
		"stgp x10, x11, [x9, #-16]!\n"
		".rept " STR(N_DC_GVA) "\n dc gva, x9\n .endr\n"
		".rept " STR(N_LDG) "\n ldg x10, [x9]\n .endr\n"
		".rept " STR(N_DC_GZVA) "\n dc gzva, x9\n .endr\n"
		"dsb sy\n"
		"dsb ish\n"
		"dsb ishst\n"
		"dsb nsh\n"
		".rept " STR(N_ISB) "\n isb\n .endr\n"
		"dmb ish\n"
		"dmb ishld\n"
		"hint #0x71\n"
		: : [p] "r"(p) : "x9", "x10", "x11", "memory");
}

static void empty_region(void)
{
	asm volatile("hint #0x70\n"
		     "hint #0x71\n" ::: "memory");
}

static void syscall_region(void)
{
	asm volatile("hint #0x70\n"
		     ".rept " STR(N_GETPPID) "\n"
		     "mov x8, #" STR(NR_GETPPID) "\n"
		     "svc #0\n"
		     ".endr\n"
		     "hint #0x71\n" ::: "x0", "x8", "memory");
}

int main(void)
{
	char *buf;

	printf("TAP version 13\n1..1\n");
	buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE | PROT_MTE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		perror("mmap(PROT_MTE)");
		printf("not ok 1 kmt-tagtest # no PROT_MTE memory\n");
		return 1;
	}
	/* Fault every page in: no kernel entry inside the region. */
	memset(buf, 1, LEN);
	fflush(stdout);

	tagged_block(buf + LEN / 2);
	empty_region();
	syscall_region();

	printf("# kmt-tagtest executed region=1 insn=%d stg=%d stzg=%d st2g=%d stz2g=%d "
	       "stgp=%d dc_gva=%d dc_gzva=%d dsb=%d isb=%d dmb=%d stgm=0 stzgm=0 "
	       "tfsr_read=0\n", X_INSN, X_STG, X_STZG, X_ST2G, X_STZ2G, X_STGP,
	       N_DC_GVA, N_DC_GZVA, N_DSB, N_ISB, N_DMB);
	printf("# kmt-tagtest executed region=2 insn=0\n");
	printf("# kmt-tagtest called region=3 __arm64_sys_getppid=%d\n", N_GETPPID);
	printf("ok 1 kmt-tagtest\n");
	return 0;
}
