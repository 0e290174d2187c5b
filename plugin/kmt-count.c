// SPDX-License-Identifier: GPL-2.0
/*
 * kmt-count: a QEMU TCG plugin (arm64 guests, system emulation) that counts,
 * between region markers, every guest instruction executed and the MTE
 * tag stores, barriers and TFSR_EL1 reads among them, split by privilege
 * (user: EL0 addresses, kernel: TTBR1 addresses).
 *
 * Region markers: HINT #0x70 (0xd5032e1f) begins a region, HINT #0x71
 * (0xd5032e3f) ends it. Both execute as NOPs and are not counted
 * themselves. Regions are numbered 1, 2, ... in the order they end.
 * Counts are system-wide: the sum over all vCPUs of what they executed
 * between the begin and the end marker (exact with -smp 1).
 *
 * Counting uses inline per-vCPU scoreboard adds; only the markers run a
 * callback. An instruction is counted when it starts executing (one that
 * faults and is re-executed after the fault counts twice).
 *
 * Output (qemu_plugin_outs: run QEMU with -d plugin -D FILE), one line
 * per region, counters as USER,KERNEL:
 *   kmt-count version=1 api=4 vcpus=N counters=insn,stg,...
 *   kmt-count region=1 vcpu=0 insn=U,K stg=U,K ... tfsr_read=U,K
 *   kmt-count exit regions=N open=0|1 insn=U,K ...   (whole run)
 *
 * Built with: gcc -shared -fPIC $(pkg-config --cflags glib-2.0) -I<dir
 * holding qemu-plugin.h>. With -DKMT_DECODE_MAIN it is instead a host
 * program that reads hex instruction words on stdin and prints the class
 * of each (a test of the decoder).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum klass {
	K_INSN,		/* every instruction (not a class of its own) */
	K_STG,		/* STG (post-index, pre-index, signed offset) */
	K_STZG,
	K_ST2G,
	K_STZ2G,
	K_STGM,		/* EL1 and above only */
	K_STZGM,	/* EL1 and above only */
	K_STGP,
	K_DC_GVA,
	K_DC_GZVA,
	K_DSB,
	K_ISB,
	K_DMB,
	K_TFSR_READ,	/* MRS Xt, TFSR_EL1 */
	K_NCOUNT,
	K_NONE = K_NCOUNT,
	K_BEGIN,	/* region markers */
	K_END,
};

static const char *const names[K_NCOUNT] = {
	"insn", "stg", "stzg", "st2g", "stz2g", "stgm", "stzgm", "stgp",
	"dc_gva", "dc_gzva", "dsb", "isb", "dmb", "tfsr_read",
};

#define MARK_BEGIN 0xd5032e1fu	/* hint #0x70 */
#define MARK_END 0xd5032e3fu	/* hint #0x71 */

/* Decode one A64 instruction word (Arm ARM encodings). */
static enum klass decode(uint32_t w)
{
	if (w == MARK_BEGIN)
		return K_BEGIN;
	if (w == MARK_END)
		return K_END;

	/*
	 * Load/store memory tags: 1101 1001 | opc:2 | 1 | imm9 | op2:2 | Rn | Rt.
	 * op2 != 00: STG (opc 00), STZG (01), ST2G (10), STZ2G (11), each in
	 * post-index (01), signed-offset (10) and pre-index (11) form.
	 * op2 == 00 (imm9 must be 0 except for LDG): STZGM (00), LDG (01),
	 * STGM (10), LDGM (11).
	 */
	if ((w & 0xff200000u) == 0xd9200000u) {
		unsigned int opc = (w >> 22) & 3, op2 = (w >> 10) & 3;
		unsigned int imm9 = (w >> 12) & 0x1ff;
		static const enum klass single[4] = { K_STG, K_STZG, K_ST2G, K_STZ2G };

		if (op2)
			return single[opc];
		if (opc == 1 || imm9)
			return K_NONE;	/* LDG, or unallocated */
		return opc == 0 ? K_STZGM : opc == 2 ? K_STGM : K_NONE; /* LDGM */
	}
	/* STGP post-index, signed offset, pre-index (LDPSW shares the group). */
	switch (w & 0xffc00000u) {
	case 0x68800000u:
	case 0x69000000u:
	case 0x69800000u:
		return K_STGP;
	}
	/* DC GVA / DC GZVA, Xt: SYS #3, C7, C4, #3 / #4. */
	if ((w & 0xffffffe0u) == 0xd50b7460u)
		return K_DC_GVA;
	if ((w & 0xffffffe0u) == 0xd50b7480u)
		return K_DC_GZVA;
	/* MRS Xt, TFSR_EL1 (S3_0_C5_C6_0). */
	if ((w & 0xffffffe0u) == 0xd5385600u)
		return K_TFSR_READ;
	/* Barriers: 1101 0101 0000 0011 0011 CRm op2 11111. */
	if ((w & 0xfffff0ffu) == 0xd503309fu) {
		unsigned int crm = (w >> 8) & 0xf;

		/* CRm 0000 and 0100 are SSBB and PSSBB, not DSBs. */
		return (crm == 0 || crm == 4) ? K_NONE : K_DSB;
	}
	if ((w & 0xfffff3ffu) == 0xd503323fu)
		return K_DSB;	/* DSB <option>nXS */
	if ((w & 0xfffff0ffu) == 0xd50330dfu)
		return K_ISB;
	if ((w & 0xfffff0ffu) == 0xd50330bfu)
		return K_DMB;
	return K_NONE;
}

#ifdef KMT_DECODE_MAIN

static const char *const marker_names[] = { "none", "begin", "end" };

int main(void)
{
	char line[64];

	while (fgets(line, sizeof(line), stdin)) {
		unsigned long w;
		enum klass k;

		if (sscanf(line, "%lx", &w) != 1)
			continue;
		k = decode((uint32_t)w);
		printf("%08lx %s\n", w, k < K_NCOUNT ? names[k] : marker_names[k - K_NONE]);
	}
	return 0;
}

#else /* the plugin */

#include <pthread.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* Per vCPU: counters[class][0 user, 1 kernel]. */
struct vcpu_counts {
	uint64_t c[K_NCOUNT][2];
};

static struct qemu_plugin_scoreboard *board;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t start[K_NCOUNT][2];
static int open_region = -1;	/* vCPU that began the open region, or -1 */
static unsigned long regions, stray_ends, nested_begins;

static qemu_plugin_u64 counter(enum klass k, int kernel)
{
	return (qemu_plugin_u64){ board,
		offsetof(struct vcpu_counts, c) + (k * 2 + kernel) * sizeof(uint64_t) };
}

static void snapshot(uint64_t out[K_NCOUNT][2])
{
	for (int k = 0; k < K_NCOUNT; k++)
		for (int e = 0; e < 2; e++)
			out[k][e] = qemu_plugin_u64_sum(counter(k, e));
}

static void emit(const char *head, uint64_t v[K_NCOUNT][2])
{
	char buf[1024];
	size_t n = snprintf(buf, sizeof(buf), "kmt-count %s", head);

	for (int k = 0; k < K_NCOUNT && n < sizeof(buf); k++)
		n += snprintf(buf + n, sizeof(buf) - n, " %s=%" PRIu64 ",%" PRIu64,
			      names[k], v[k][0], v[k][1]);
	if (n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, "\n");
	qemu_plugin_outs(buf);
}

static void on_marker(unsigned int vcpu, void *udata)
{
	uint64_t now[K_NCOUNT][2];
	char head[96];

	pthread_mutex_lock(&lock);
	snapshot(now);
	if ((uintptr_t)udata == K_BEGIN) {
		if (open_region >= 0)
			nested_begins++;	/* restart: the last begin wins */
		memcpy(start, now, sizeof(start));
		open_region = vcpu;
	} else if (open_region < 0) {
		stray_ends++;
	} else {
		for (int k = 0; k < K_NCOUNT; k++)
			for (int e = 0; e < 2; e++)
				now[k][e] -= start[k][e];
		regions++;
		snprintf(head, sizeof(head), "region=%lu vcpu=%d end_vcpu=%u",
			 regions, open_region, vcpu);
		emit(head, now);
		open_region = -1;
	}
	pthread_mutex_unlock(&lock);
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint32_t w = 0;
		int kernel = (qemu_plugin_insn_vaddr(insn) >> 55) & 1;
		enum klass k;

		if (qemu_plugin_insn_data(insn, &w, sizeof(w)) != sizeof(w))
			k = K_NONE;
		else
			k = decode(w);	/* A64 is little-endian here */
		if (k == K_BEGIN || k == K_END) {
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)k);
			continue;
		}
		qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(
			insn, QEMU_PLUGIN_INLINE_ADD_U64, counter(K_INSN, kernel), 1);
		if (k != K_NONE)
			qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(
				insn, QEMU_PLUGIN_INLINE_ADD_U64, counter(k, kernel), 1);
	}
}

static void on_plugin_exit(qemu_plugin_id_t id, void *udata)
{
	uint64_t total[K_NCOUNT][2];
	char head[128];

	pthread_mutex_lock(&lock);
	snapshot(total);
	snprintf(head, sizeof(head), "exit regions=%lu open=%d stray_ends=%lu nested_begins=%lu",
		 regions, open_region >= 0, stray_ends, nested_begins);
	emit(head, total);
	pthread_mutex_unlock(&lock);
	qemu_plugin_scoreboard_free(board);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	char buf[512];
	size_t n;

	if (QEMU_PLUGIN_VERSION < info->version.min || QEMU_PLUGIN_VERSION > info->version.cur) {
		fprintf(stderr, "kmt-count: built for plugin API %d, this QEMU supports %d..%d: "
			"rebuild it with the qemu-plugin.h of the installed QEMU\n",
			QEMU_PLUGIN_VERSION, info->version.min, info->version.cur);
		return -1;
	}
	if (strcmp(info->target_name, "aarch64") || !info->system_emulation) {
		fprintf(stderr, "kmt-count: needs qemu-system-aarch64 (target %s)\n",
			info->target_name);
		return -1;
	}
	board = qemu_plugin_scoreboard_new(sizeof(struct vcpu_counts));
	n = snprintf(buf, sizeof(buf), "kmt-count version=1 api=%d vcpus=%d counters=",
		     QEMU_PLUGIN_VERSION, info->system.smp_vcpus);
	for (int k = 0; k < K_NCOUNT && n < sizeof(buf); k++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s", k ? "," : "", names[k]);
	if (n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, "\n");
	qemu_plugin_outs(buf);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_atexit_cb(id, on_plugin_exit, NULL);
	return 0;
}

#endif /* KMT_DECODE_MAIN */
