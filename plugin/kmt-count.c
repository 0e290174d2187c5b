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
 * With the argument tbpages=1, the plugin also counts translation blocks
 * as they execute (tb) and, among them, those whose first instruction is
 * on another 4 KiB page than the previous block's first instruction
 * (tb_xpage): QEMU chains one block directly to the next only within the
 * page the first one starts on, so each such transition goes through a
 * lookup of the next block instead of a direct jump. Execution order is
 * what the instruction count does not show: code of the same length runs
 * slower under TCG when its hot loop crosses a page. A callback on every
 * block: use it where the time is not measured (e.g. with -icount).
 *
 * With the argument chains=DEPTH (1..32), every kernel tag store inside a
 * region is also attributed to its call chain: the tag store's PC, the
 * link register and the return addresses of up to DEPTH frame records
 * (x29 chain; the kernel is built with frame pointers). Identical chains
 * are counted together and printed when the region ends.
 *
 * Output (qemu_plugin_outs: run QEMU with -d plugin -D FILE), one line
 * per region, counters as USER,KERNEL:
 *   kmt-count version=1 api=4 vcpus=N counters=insn,stg,... chains=DEPTH
 *   kmt-count chain region=1 class=dc_gva count=C pcs=PC,LR,RET1,...
 *   kmt-count region=1 vcpu=0 insn=U,K stg=U,K ... tfsr_read=U,K
 *   kmt-count exit regions=N open=0|1 insn=U,K ...   (whole run)
 * (a region's chain lines come just before its region line).
 *
 * With the arguments pc=ADDR (hex, up to 16 of them), the plugin also
 * counts how often the instruction at each kernel address ADDR executes
 * (a function's first instruction: its calls), in every region and over
 * the whole run, printed in the order of the arguments:
 *   kmt-count pcs region=1 counts=N1,N2,...   (before its region line)
 *   kmt-count pcs exit counts=N1,N2,...
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
	K_TB,		/* translation blocks executed (tbpages=1) */
	K_TB_XPAGE,	/* ... starting on another page than the last one */
	K_NCOUNT,
	K_NONE = K_NCOUNT,
	K_BEGIN,	/* region markers */
	K_END,
};

static const char *const names[K_NCOUNT] = {
	"insn", "stg", "stzg", "st2g", "stz2g", "stgm", "stzgm", "stgp",
	"dc_gva", "dc_gzva", "dsb", "isb", "dmb", "tfsr_read", "tb", "tb_xpage",
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

#include <glib.h>
#include <pthread.h>
#include <stdlib.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_PCS 16	/* pc= arguments */

/* Per vCPU: counters[class][0 user, 1 kernel]. */
struct vcpu_counts {
	uint64_t c[K_NCOUNT][2];
	uint64_t last_tb;	/* first PC of the last block executed (tbpages) */
	uint64_t pc_hits[MAX_PCS];	/* executions of each pc= address */
};

static uint64_t pcs[MAX_PCS];
static int n_pcs;
static uint64_t pc_start[MAX_PCS];

#define TB_PAGE_SHIFT 12	/* QEMU's target page for these CPUs: 4 KiB */
static int tb_pages;

/*
 * profile=1: a flat profile of the kernel inside regions. Every kernel
 * translation block carries one of these; at a region's end, for each
 * block (start PC and length) executed in it, the plugin prints the
 * instructions executed there (the host side adds them up per function,
 * System.map, or spreads them over the block's instructions to compare
 * two runs instruction by instruction, whatever their blocks):
 *   kmt-count prof region=1 pc=PC n=LEN insns=N     (before its region line)
 * A block is counted whole when it is entered, so a block left early (an
 * exception, an I/O recompile under icount) counts a few instructions
 * too many: a profile locates where two runs part, it does not replace
 * the region's exact insn= count. A block translated again (after a
 * flush, or shortened for an I/O access under icount) shares the record
 * of its first translation of the same length, so the records are
 * bounded by the kernel's distinct blocks, not by translations.
 */
static int profile;
struct prof_tb {
	uint64_t pc;		/* key: pc and n */
	uint64_t n;		/* instructions in the block */
	uint64_t insns;		/* executed inside the open region */
	struct prof_tb *next;
};
static struct prof_tb *prof_list;	/* every distinct block (lock) */
static GHashTable *prof_blocks;		/* the same, by pc and n (lock) */
static unsigned long prof_records;

static guint prof_hash(gconstpointer p)
{
	const struct prof_tb *b = p;

	return g_int64_hash(&b->pc) ^ (guint)b->n;
}

static gboolean prof_equal(gconstpointer a, gconstpointer b)
{
	const struct prof_tb *x = a, *y = b;

	return x->pc == y->pc && x->n == y->n;
}

static struct qemu_plugin_scoreboard *board;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t start[K_NCOUNT][2];
static int open_region = -1;	/* vCPU that began the open region, or -1 */
static unsigned long regions, stray_ends, nested_begins;

/* Call-chain attribution (chains=DEPTH). */
#define MAX_DEPTH 32
static int chain_depth;
static GHashTable *chains;	/* struct chain -> count (in the open region) */
static struct qemu_plugin_register *reg_fp, *reg_lr;
static unsigned long chain_read_errors;

struct chain {
	uint32_t klass;
	uint32_t n;
	uint64_t pc[MAX_DEPTH + 2];
	uint64_t count;
};

static guint chain_hash(gconstpointer p)
{
	const struct chain *c = p;
	guint h = c->klass * 31u + c->n;

	for (uint32_t i = 0; i < c->n; i++)
		h = h * 1000003u ^ (guint)(c->pc[i] ^ (c->pc[i] >> 32));
	return h;
}

static gboolean chain_equal(gconstpointer a, gconstpointer b)
{
	const struct chain *x = a, *y = b;

	return x->klass == y->klass && x->n == y->n &&
	       !memcmp(x->pc, y->pc, x->n * sizeof(x->pc[0]));
}

/* Kernel pointers may carry a KASAN tag in the top byte: use match-all. */
static uint64_t untag(uint64_t v)
{
	return (v >> 55) & 1 ? v | 0xff00000000000000ull : v;
}

static uint64_t read_reg(struct qemu_plugin_register *r, GByteArray *buf)
{
	uint64_t v = 0;

	g_byte_array_set_size(buf, 0);
	if (!r || qemu_plugin_read_register(r, buf) != 8)
		return 0;
	memcpy(&v, buf->data, 8);	/* target order: little-endian here */
	return v;
}

static qemu_plugin_u64 counter(enum klass k, int kernel)
{
	return (qemu_plugin_u64){ board,
		offsetof(struct vcpu_counts, c) + (k * 2 + kernel) * sizeof(uint64_t) };
}

static qemu_plugin_u64 pc_counter(int i)
{
	return (qemu_plugin_u64){ board, offsetof(struct vcpu_counts, pc_hits) +
					 i * sizeof(uint64_t) };
}

static void snapshot_pcs(uint64_t out[MAX_PCS])
{
	for (int i = 0; i < n_pcs; i++)
		out[i] = qemu_plugin_u64_sum(pc_counter(i));
}

static void emit_pcs(const char *head, const uint64_t v[MAX_PCS])
{
	char buf[512];
	size_t n;

	if (!n_pcs)
		return;
	n = snprintf(buf, sizeof(buf), "kmt-count pcs %s counts=", head);
	for (int i = 0; i < n_pcs && n < sizeof(buf); i++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%" PRIu64, i ? "," : "", v[i]);
	if (n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, "\n");
	qemu_plugin_outs(buf);
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

static void emit_chains(unsigned long region)
{
	GHashTableIter it;
	gpointer key;

	g_hash_table_iter_init(&it, chains);
	while (g_hash_table_iter_next(&it, &key, NULL)) {
		const struct chain *c = key;
		GString *s = g_string_new(NULL);

		g_string_printf(s, "kmt-count chain region=%lu class=%s count=%" PRIu64 " pcs=",
				region, names[c->klass], c->count);
		for (uint32_t i = 0; i < c->n; i++)
			g_string_append_printf(s, "%s%" PRIx64, i ? "," : "", c->pc[i]);
		g_string_append_c(s, '\n');
		qemu_plugin_outs(s->str);
		g_string_free(s, TRUE);
	}
	g_hash_table_remove_all(chains);
}

/*
 * A kernel tag store is about to execute: record its call chain when a
 * region is open. udata: the instruction's PC and class (on_tb_trans).
 */
struct tag_insn {
	uint64_t pc;
	enum klass k;
};

static void on_tag_store(unsigned int vcpu, void *udata)
{
	const struct tag_insn *ti = udata;
	/* One buffer per vCPU thread: this runs for every kernel tag store. */
	static __thread GByteArray *buf;
	struct chain c = { .klass = ti->k };
	struct chain *found;
	uint64_t fp;

	if (__atomic_load_n(&open_region, __ATOMIC_RELAXED) < 0)
		return;
	if (!buf)
		buf = g_byte_array_new();
	c.pc[c.n++] = ti->pc;
	c.pc[c.n++] = untag(read_reg(reg_lr, buf));
	fp = untag(read_reg(reg_fp, buf));
	for (int d = 0; d < chain_depth && fp && !(fp & 15); d++) {
		uint64_t rec[2];

		g_byte_array_set_size(buf, 0);
		if (!qemu_plugin_read_memory_vaddr(fp, buf, sizeof(rec))) {
			__atomic_add_fetch(&chain_read_errors, 1, __ATOMIC_RELAXED);
			break;
		}
		memcpy(rec, buf->data, sizeof(rec));
		if (!rec[1])
			break;
		c.pc[c.n++] = untag(rec[1]);
		fp = untag(rec[0]);
	}
	pthread_mutex_lock(&lock);
	found = g_hash_table_lookup(chains, &c);
	if (!found) {
		found = g_memdup2(&c, sizeof(c));
		g_hash_table_add(chains, found);
	}
	found->count++;
	pthread_mutex_unlock(&lock);
}

static void on_vcpu_init(qemu_plugin_id_t id, unsigned int vcpu)
{
	GArray *regs = qemu_plugin_get_registers();

	pthread_mutex_lock(&lock);
	for (guint i = 0; regs && i < regs->len; i++) {
		qemu_plugin_reg_descriptor *r =
			&g_array_index(regs, qemu_plugin_reg_descriptor, i);

		/* Handles are the same on every vCPU of one target. */
		if (!strcmp(r->name, "x29"))
			reg_fp = r->handle;
		else if (!strcmp(r->name, "x30"))
			reg_lr = r->handle;
	}
	pthread_mutex_unlock(&lock);
	if (regs)
		g_array_free(regs, TRUE);
}

static void emit_profile(unsigned long region)
{
	/* One record per distinct block: pc and length (prof_blocks' key). */
	for (struct prof_tb *p = prof_list; p; p = p->next) {
		uint64_t n = __atomic_exchange_n(&p->insns, 0, __ATOMIC_RELAXED);
		char line[128];

		if (!n)
			continue;
		snprintf(line, sizeof(line), "kmt-count prof region=%lu pc=%" PRIx64
			 " n=%" PRIu64 " insns=%" PRIu64 "\n", region, p->pc, p->n, n);
		qemu_plugin_outs(line);
	}
}

/* profile=1: one kernel block executed; udata is its struct prof_tb. */
static void on_prof_exec(unsigned int vcpu, void *udata)
{
	struct prof_tb *p = udata;

	if (__atomic_load_n(&open_region, __ATOMIC_RELAXED) >= 0)
		__atomic_add_fetch(&p->insns, p->n, __ATOMIC_RELAXED);
}

static void on_marker(unsigned int vcpu, void *udata)
{
	uint64_t now[K_NCOUNT][2], pc_now[MAX_PCS];
	char head[96];

	pthread_mutex_lock(&lock);
	snapshot(now);
	snapshot_pcs(pc_now);
	if ((uintptr_t)udata == K_BEGIN) {
		if (open_region >= 0)
			nested_begins++;	/* restart: the last begin wins */
		memcpy(start, now, sizeof(start));
		memcpy(pc_start, pc_now, sizeof(pc_start));
		for (struct prof_tb *p = prof_list; p; p = p->next)
			__atomic_store_n(&p->insns, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&open_region, vcpu, __ATOMIC_RELAXED);
		if (chains)
			g_hash_table_remove_all(chains);
	} else if (open_region < 0) {
		stray_ends++;
	} else {
		for (int k = 0; k < K_NCOUNT; k++)
			for (int e = 0; e < 2; e++)
				now[k][e] -= start[k][e];
		for (int i = 0; i < n_pcs; i++)
			pc_now[i] -= pc_start[i];
		regions++;
		if (chains)
			emit_chains(regions);
		if (profile)
			emit_profile(regions);
		snprintf(head, sizeof(head), "region=%lu", regions);
		emit_pcs(head, pc_now);
		snprintf(head, sizeof(head), "region=%lu vcpu=%d end_vcpu=%u",
			 regions, open_region, vcpu);
		emit(head, now);
		__atomic_store_n(&open_region, -1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&lock);
}

/* tbpages=1: one block executed; udata is its first PC. */
static void on_tb_exec(unsigned int vcpu, void *udata)
{
	uint64_t pc = (uintptr_t)udata;
	int kernel = (pc >> 55) & 1;
	struct vcpu_counts *v = qemu_plugin_scoreboard_find(board, vcpu);

	qemu_plugin_u64_add(counter(K_TB, kernel), vcpu, 1);
	if (v->last_tb && (v->last_tb ^ pc) >> TB_PAGE_SHIFT)
		qemu_plugin_u64_add(counter(K_TB_XPAGE, kernel), vcpu, 1);
	v->last_tb = pc;
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	if (profile && (qemu_plugin_tb_vaddr(tb) >> 55) & 1) {
		struct prof_tb key = { .pc = qemu_plugin_tb_vaddr(tb), .n = n }, *p;

		pthread_mutex_lock(&lock);
		p = g_hash_table_lookup(prof_blocks, &key);
		if (!p) {
			/* Never freed: QEMU may run any translation until exit. */
			p = g_new0(struct prof_tb, 1);
			*p = key;
			p->next = prof_list;
			prof_list = p;
			g_hash_table_add(prof_blocks, p);
			prof_records++;
		}
		pthread_mutex_unlock(&lock);
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_prof_exec, QEMU_PLUGIN_CB_NO_REGS, p);
	}
	if (tb_pages)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb_exec, QEMU_PLUGIN_CB_NO_REGS,
						     (void *)(uintptr_t)qemu_plugin_tb_vaddr(tb));
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
		for (int p = 0; p < n_pcs; p++)
			if (kernel && qemu_plugin_insn_vaddr(insn) == pcs[p])
				qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(
					insn, QEMU_PLUGIN_INLINE_ADD_U64, pc_counter(p), 1);
		if (k != K_NONE)
			qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(
				insn, QEMU_PLUGIN_INLINE_ADD_U64, counter(k, kernel), 1);
		if (chains && kernel && k >= K_STG && k <= K_DC_GZVA) {
			struct tag_insn *ti = g_new(struct tag_insn, 1);

			/* Lives as long as QEMU may run this translation. */
			ti->pc = qemu_plugin_insn_vaddr(insn);
			ti->k = k;
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_tag_store,
							       QEMU_PLUGIN_CB_R_REGS, ti);
		}
	}
}

static void on_plugin_exit(qemu_plugin_id_t id, void *udata)
{
	uint64_t total[K_NCOUNT][2], pc_total[MAX_PCS];
	char head[128];

	pthread_mutex_lock(&lock);
	snapshot(total);
	snapshot_pcs(pc_total);
	emit_pcs("exit", pc_total);
	snprintf(head, sizeof(head),
		 "exit regions=%lu open=%d stray_ends=%lu nested_begins=%lu chain_read_errors=%lu prof_blocks=%lu",
		 regions, open_region >= 0, stray_ends, nested_begins, chain_read_errors,
		 prof_records);
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
	for (int a = 0; a < argc; a++) {
		char *end;

		if (!strncmp(argv[a], "chains=", 7)) {
			chain_depth = strtol(argv[a] + 7, &end, 10);
			if (*end || chain_depth < 1 || chain_depth > MAX_DEPTH) {
				fprintf(stderr, "kmt-count: chains=1..%d, got %s\n", MAX_DEPTH, argv[a]);
				return -1;
			}
		} else if (!strcmp(argv[a], "tbpages=1")) {
			tb_pages = 1;
		} else if (!strcmp(argv[a], "profile=1")) {
			profile = 1;
		} else if (!strncmp(argv[a], "pc=", 3)) {
			if (n_pcs == MAX_PCS) {
				fprintf(stderr, "kmt-count: at most %d pc= arguments\n", MAX_PCS);
				return -1;
			}
			pcs[n_pcs] = strtoull(argv[a] + 3, &end, 16);
			if (*end || !pcs[n_pcs]) {
				fprintf(stderr, "kmt-count: pc=HEX, got %s\n", argv[a]);
				return -1;
			}
			n_pcs++;
		} else {
			fprintf(stderr, "kmt-count: unknown argument %s\n", argv[a]);
			return -1;
		}
	}
	board = qemu_plugin_scoreboard_new(sizeof(struct vcpu_counts));
	n = snprintf(buf, sizeof(buf), "kmt-count version=1 api=%d vcpus=%d counters=",
		     QEMU_PLUGIN_VERSION, info->system.smp_vcpus);
	for (int k = 0; k < K_NCOUNT && n < sizeof(buf); k++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s", k ? "," : "", names[k]);
	if (n < sizeof(buf))
		n += snprintf(buf + n, sizeof(buf) - n, " chains=%d tbpages=%d profile=%d pcs=",
			      chain_depth, tb_pages, profile);
	for (int i = 0; i < n_pcs && n < sizeof(buf); i++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%" PRIx64, i ? "," : "", pcs[i]);
	if (n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, "\n");
	if (chain_depth) {
		chains = g_hash_table_new_full(chain_hash, chain_equal, g_free, NULL);
		qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
	}
	if (profile)
		prof_blocks = g_hash_table_new(prof_hash, prof_equal);
	qemu_plugin_outs(buf);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_atexit_cb(id, on_plugin_exit, NULL);
	return 0;
}

#endif /* KMT_DECODE_MAIN */
