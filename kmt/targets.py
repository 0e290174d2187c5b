"""The test matrix as data. A new cell, QEMU target, kasan mode or suite is
one entry in one of these tables; the code that runs them does not change."""

import dataclasses
from dataclasses import dataclass, field
from typing import Tuple

from . import bases


@dataclass(frozen=True)
class KernelConfig:
    name: str
    base: str                    # 'allnoconfig' or a defconfig under arch/arm64/configs
    fragments: Tuple[str, ...]   # files in configs/, merged in order
    # Options that exist only once the series is applied (its new tests):
    # merged for the patched tree, left out for the baseline (make bench).
    series_fragments: Tuple[str, ...] = ()
    # Build with clang and the LLVM tools (make LLVM=1) instead of GCC.
    llvm: bool = False
    # make LLVM= for this config where it needs a newer LLVM than the
    # base's (Base.llvm), e.g. '-19' for kCFI (clang 16 or later).
    llvm_version: str = ''
    # Build the modules too and install them into the initramfs; the guest
    # loads the module of each suite (Suite.module) before running it.
    modules: bool = False


@dataclass(frozen=True)
class Machine:
    """One QEMU target (cf. kunit's qemu_configs/arm64.py)."""
    name: str
    machine: str
    cpu: str
    smp: int = 2
    mem_mb: int = 1024
    has_mte: bool = True
    extra: Tuple[str, ...] = ()
    # Bytes of memory one STGM/STZGM tags: GMID_EL1.BS, which only EL1
    # can read, so it is taken from QEMU's CPU model (aarch64_max_tcg_initfn:
    # gm_blocksize = 6, i.e. 64 words = 256 bytes). 0: no MTE.
    gm_block_bytes: int = 0
    # What the boot log must show for the machine's shape to have been
    # tested (e.g. the exception level the kernel runs at): (regex, what).
    boot_expect: Tuple[Tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Suite:
    """A test suite and the kernel reports it provokes on purpose (allowed
    only while it runs)."""
    name: str
    kind: str                    # 'kunit' or 'kselftest'
    select: str                  # kunit: filter glob; kselftest: COLLECTION:TEST glob
    expected_reports: Tuple[str, ...] = ()
    # HW_TAGS detection is probabilistic (random 4-bit tags): a failed case
    # is rerun with other seeds before it counts as a failure.
    probabilistic: bool = False
    # The module that holds the suite when it is built as one (=m).
    module: str = ''
    # kselftest: the subtarget of its collection to build (e.g. arm64's
    # mte; ARM64_SUBTARGETS), or '' for the whole collection.
    subtarget: str = ''
    # Added by the series (a base without it has no such suite).
    from_series: bool = False
    # Kernel parameters the suite needs, added to a boot that runs it.
    cmdline: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Cell:
    name: str
    config: str
    machine: str
    kasan: str
    suites: Tuple[str, ...]
    timeout_s: int = 900
    cmdline: Tuple[str, ...] = field(default_factory=tuple)
    # As Machine.boot_expect, for what the cell's kernel parameters ask.
    boot_expect: Tuple[Tuple[str, str], ...] = ()


CONFIGS = {c.name: c for c in [
    KernelConfig('lean', 'allnoconfig', ('minimal.config', 'mte-kasan.config'),
                 ('series-tests.config', 'mte-kunit.config')),
    KernelConfig('full', 'defconfig', ('mte-kasan.config', 'full.config'),
                 ('series-tests.config',)),
    # MTE without KASAN, as distribution kernels are (and make series-check:
    # the #ifdef branches compile).
    KernelConfig('lean-nokasan', 'allnoconfig',
                 ('minimal.config', 'mte-kasan.config', 'nokasan.config', 'hotplug.config'),
                 ('series-tests.config', 'mte-kunit.config')),
    # No LSE atomics at all (MTE needs them, so no MTE and no KASAN either):
    # the refcount code on its LL/SC-only build.
    KernelConfig('lean-nolse', 'allnoconfig', ('minimal.config', 'nolse.config'),
                 ('series-tests.config',)),
    # The configurations users build (the lean config plus one change each).
    KernelConfig('lean-modules', 'allnoconfig',
                 ('minimal.config', 'mte-kasan.config', 'modules.config'),
                 ('series-tests.config', 'modules-series.config'), modules=True),
    # Modules and PREEMPT_RT together, to keep make check within its
    # budget (the two changes' cells are independent): the kasan suite on
    # RT with HW_TAGS (the stack ring lock: docs/rt-kasan-hang.md) and the
    # refcount suite on RT run in make check on this kernel.
    KernelConfig('lean-modules-rt', 'allnoconfig',
                 ('minimal.config', 'mte-kasan.config', 'modules.config', 'expert.config',
                  'rt.config'),
                 ('series-tests.config', 'modules-series.config'), modules=True),
    KernelConfig('lean-rt', 'allnoconfig',
                 ('minimal.config', 'mte-kasan.config', 'expert.config', 'rt.config'),
                 ('series-tests.config',)),
    KernelConfig('lean-kasan-generic', 'allnoconfig',
                 ('minimal.config', 'mte-kasan.config', 'kasan-generic.config'),
                 ('series-tests.config',)),
    # Two changes each, to keep make check within its time budget (every
    # kernel costs about nine minutes of compiling on two cores; the cells
    # of each change are independent of the other's):
    # Debian's rt flavour: PREEMPT_RT, MTE, no KASAN.
    KernelConfig('lean-nokasan-rt', 'allnoconfig',
                 ('minimal.config', 'mte-kasan.config', 'nokasan.config', 'hotplug.config',
                  'expert.config', 'rt.config'),
                 ('series-tests.config', 'mte-kunit.config')),
    # KASAN generic on a kernel built without LSE atomics (LL/SC only).
    KernelConfig('lean-kasan-generic-llsc', 'allnoconfig',
                 ('minimal.config', 'mte-kasan.config', 'kasan-generic.config',
                  'llsc-only.config'),
                 ('series-tests.config',)),
    KernelConfig('lean-kasan-sw-tags', 'allnoconfig',
                 ('minimal.config', 'mte-kasan.config', 'kasan-sw-tags.config'),
                 ('series-tests.config',)),
    KernelConfig('lean-kcsan', 'allnoconfig',
                 ('minimal.config', 'mte-kasan.config', 'expert.config', 'kcsan.config'),
                 ('series-tests.config',)),
    # make bench's refcount kernels (the lean config with the benchmark
    # module of bench/, built on a throw-away branch, with part 3's commits
    # reverted or not: kmt/refbench.py VARIANTS).
    KernelConfig('refbench', 'allnoconfig', ('minimal.config', 'mte-kasan.config')),
    # Shadow call stacks with GCC (12 and later build them for arm64):
    # the lean kernel plus SCS, for the kasan suite's shadow call stack
    # check, at a GCC build's cost.
    KernelConfig('lean-scs', 'allnoconfig', ('minimal.config', 'mte-kasan.config', 'scs.config'),
                 ('series-tests.config',)),
    # KVM built in, for a boot in protected mode (pKVM).
    KernelConfig('lean-kvm', 'allnoconfig', ('minimal.config', 'mte-kasan.config', 'kvm.config'),
                 ('series-tests.config', 'mte-kunit.config')),
    KernelConfig('lean-clang', 'allnoconfig',
                 ('minimal.config', 'mte-kasan.config', 'scs.config'),
                 ('series-tests.config',), llvm=True),
    # Shaped as Android's GKI: clang with ThinLTO, kCFI (clang 16 or
    # later: clang-19 on every base) and shadow call stacks, modules.
    KernelConfig('lean-gki', 'allnoconfig',
                 ('minimal.config', 'mte-kasan.config', 'modules.config', 'gki.config'),
                 ('series-tests.config', 'modules-series.config'),
                 llvm=True, llvm_version='-19', modules=True),
]}

MACHINES = {m.name: m for m in [
    # MTE emulated; -cpu max also has LSE atomics.
    Machine('mte', 'virt,mte=on,gic-version=3', 'max', gm_block_bytes=256),
    # No LSE atomics (LL/SC paths), no MTE.
    Machine('llsc', 'virt,gic-version=3', 'cortex-a72', has_mte=False),
    # Four vCPUs for the refcount suite's concurrency case.
    Machine('mte-smp4', 'virt,mte=on,gic-version=3', 'max', smp=4, gm_block_bytes=256),
    Machine('llsc-smp4', 'virt,gic-version=3', 'cortex-a72', smp=4, has_mte=False),
    # Booted at EL2 with the Virtualization Host Extensions, as servers and
    # most boards boot (tuxlava's and KernelCI's qemu-arm64 machine): the
    # kernel runs at EL2 and its TFSR_EL1/TCR_EL1 accesses reach the EL2
    # registers (HCR_EL2.E2H).
    Machine('mte-vhe', 'virt,mte=on,gic-version=3,virtualization=on', 'max',
            gm_block_bytes=256,
            boot_expect=((r'CPU: All CPU\(s\) started at EL2', 'every CPU started at EL2'),
                         (r'CPU features: detected: Virtualization Host Extensions',
                          'VHE in use'))),
    # Entered at EL2, for a hypervisor (pKVM) to stay there.
    Machine('mte-el2', 'virt,mte=on,gic-version=3,virtualization=on', 'max',
            gm_block_bytes=256,
            boot_expect=((r'CPU: All CPU\(s\) started at EL2', 'every CPU started at EL2'),)),
    # Room for upstream's pgtable benchmark (2 GiB faulted, then fork).
    Machine('mte-4g', 'virt,mte=on,gic-version=3', 'max', mem_mb=4096, gm_block_bytes=256),
]}

# The KASAN mode of a cell, as kernel parameters. HW_TAGS modes are picked
# at boot (and need MTE); generic and sw_tags are fixed by the config, and
# 'none' is a kernel built without KASAN.
KASAN_MODES = {
    'off': ('kasan=off',),
    'sync': ('kasan.mode=sync',),
    'async': ('kasan.mode=async',),
    'asymm': ('kasan.mode=asymm',),
    'generic': (),
    'sw_tags': (),
    'none': (),
}
HW_TAGS_MODES = ('sync', 'async', 'asymm')

SUITES = {s.name: s for s in [
    Suite('kasan', 'kunit', 'kasan',
          expected_reports=('kasan',), probabilistic=True, module='kasan_test'),
    # check_hugetlb_options sets nr_hugepages=2 itself; a lean kernel
    # (no COMPACTION) may by then have no two free 2 MiB blocks, so the
    # pages are reserved at boot.
    Suite('mte', 'kselftest', 'arm64:check_*', subtarget='mte', cmdline=('hugepages=2',)),
    Suite('lkdtm-refcount', 'kselftest', 'lkdtm:REFCOUNT_*',
          expected_reports=('warning',), module='lkdtm'),
    # The series leaves kernel stacks untagged: the VMAP stack guard pages
    # must still stop an access just below and just above the stack (each
    # case oopses the writing task on purpose).
    Suite('lkdtm-stack', 'kselftest', 'lkdtm:STACK_GUARD_PAGE_*',
          expected_reports=('oops',), module='lkdtm'),
    # TCR_EL1.TCMA1 on every CPU, also after CPU hotplug (part 4).
    Suite('arm64-mte', 'kunit', 'arm64_mte', module='mte_kunit', from_series=True),
    # Saturation cases make refcount_warn_saturate() WARN (once per type).
    Suite('refcount', 'kunit', 'refcount', expected_reports=('warning',),
          module='refcount_kunit', from_series=True),
]}

# make check: the lean kernel, every kasan mode.
CHECK = [
    Cell('sync', 'lean', 'mte', 'sync', ('kasan', 'mte', 'lkdtm-refcount', 'lkdtm-stack')),
    # The same kernel booted once more for its arm64_mte suite (one
    # built-in KUnit suite per boot): in sync mode exception entry and
    # exit leave TFSR_EL1 alone (part 1), and TCMA1 is set as before.
    Cell('sync-tfsr', 'lean', 'mte', 'sync', ('arm64-mte',)),
    Cell('async', 'lean', 'mte', 'async', ('kasan', 'mte', 'lkdtm-stack')),
    Cell('asymm', 'lean', 'mte', 'asymm', ('kasan', 'mte', 'lkdtm-stack')),
    # refcount_t (KUnit suite, 4 vCPUs for its concurrency case, and the
    # lkdtm hardening tests): LL/SC atomics picked at boot (cortex-a72) and
    # LSE (-cpu max); a kernel built without LSE support is further down.
    Cell('llsc', 'lean', 'llsc-smp4', 'off', ('refcount', 'lkdtm-refcount')),
    Cell('refcount-lse', 'lean', 'mte-smp4', 'sync', ('refcount',)),
    # Part 4, the kernels most MTE machines run: MTE for user space and no
    # KASAN (distribution kernels), and KASAN HW_TAGS built in but booted
    # with kasan=off. The kernel's own accesses must be Tag Unchecked
    # (TCMA1); user-space MTE, uaccess tag checks and lkdtm unchanged.
    Cell('distro', 'lean-nokasan', 'mte', 'none',
         ('arm64-mte', 'mte', 'lkdtm-refcount', 'lkdtm-stack')),
    Cell('kasan-off', 'lean', 'mte', 'off', ('arm64-mte', 'mte', 'lkdtm-refcount')),
    # The refcount suite provokes the refcount_t warnings on purpose: a
    # panic_on_warn kernel must not go down (6.12: those cases skip; 7.3:
    # they run with KUnit's warning suppression, which cannot panic).
    Cell('refcount-panic-on-warn', 'lean', 'mte-smp4', 'sync', ('refcount',),
         cmdline=('panic_on_warn=1',)),
    # The configurations users build. A built-in kernel runs one KUnit
    # suite per boot (kunit.filter_glob), so some kernels boot twice.
    # Modules: KUnit built in, the kasan and refcount suites and lkdtm
    # loaded by the guest (KASAN HW_TAGS: the kasan module references
    # HW_TAGS-only code that generic KASAN compiles out). The kernel is
    # PREEMPT_RT too (sleeping spinlocks, interrupts left on by
    # *_irqsave): the kasan suite's reports on RT, where a report waiting
    # for the stack ring's lock used to hang the kernel, and the refcount
    # suite on RT with 4 vCPUs for its concurrency case.
    Cell('modules-rt', 'lean-modules-rt', 'mte', 'sync',
         ('kasan', 'refcount', 'lkdtm-refcount', 'mte')),
    Cell('rt-refcount', 'lean-modules-rt', 'mte-smp4', 'sync', ('refcount',)),
    # The compiler-instrumented KASAN mode with the series' refcount_t
    # checks: refcount operations on freed memory must be reported (kasan
    # suite) and the semantics kept (refcount suite, lkdtm). The kernel is
    # built without LSE atomics, so these cells also cover the LL/SC-only
    # build of the atomics and their immediate (cortex-a72).
    Cell('kasan-generic', 'lean-kasan-generic-llsc', 'llsc', 'generic', ('kasan',)),
    Cell('refcount-nolse', 'lean-kasan-generic-llsc', 'llsc-smp4', 'generic',
         ('refcount', 'lkdtm-refcount')),
    # The same kernels booted at EL2 with VHE: part 1's TFSR checks (sync,
    # async) and part 4's TCMA1 on a distribution kernel, where the
    # kernel's TCR_EL1 is TCR_EL2.
    Cell('vhe-sync', 'lean', 'mte-vhe', 'sync', ('kasan', 'mte')),
    Cell('vhe-async', 'lean', 'mte-vhe', 'async', ('kasan', 'mte')),
    Cell('vhe-distro', 'lean-nokasan', 'mte-vhe', 'none', ('arm64-mte', 'mte')),
]

# ALL=1 make check: also the compiler-instrumented configurations that do
# not fit the time budget of a cold make check on two cores (each of these
# kernels takes two to three times as long to build as the lean one).
CHECK_ALL = CHECK + [
    # The single-change kernels that make check folds into the two-change
    # ones above: modules without RT, KASAN generic with LSE atomics (-cpu
    # max), the LL/SC-only kernel without KASAN; and Debian's rt flavour
    # (PREEMPT_RT, MTE, no KASAN), at EL1 and at EL2 with VHE.
    Cell('modules', 'lean-modules', 'mte', 'sync',
         ('kasan', 'refcount', 'lkdtm-refcount')),
    Cell('distro-rt', 'lean-nokasan-rt', 'mte', 'none',
         ('arm64-mte', 'mte', 'lkdtm-refcount', 'lkdtm-stack')),
    Cell('vhe-distro-rt', 'lean-nokasan-rt', 'mte-vhe', 'none', ('arm64-mte', 'mte')),
    Cell('kasan-generic-lse', 'lean-kasan-generic', 'mte', 'generic', ('kasan',)),
    Cell('kasan-generic-lse-refcount', 'lean-kasan-generic', 'mte-smp4', 'generic',
         ('refcount',)),
    Cell('refcount-nolse-nokasan', 'lean-nolse', 'llsc-smp4', 'off',
         ('refcount', 'lkdtm-refcount')),
    # The kasan suite built in on PREEMPT_RT with KASAN HW_TAGS (make
    # check runs it as a module, cell modules-rt).
    Cell('rt', 'lean-rt', 'mte', 'sync', ('kasan', 'mte')),
    Cell('kasan-sw-tags', 'lean-kasan-sw-tags', 'mte', 'sw_tags', ('kasan',)),
    Cell('kasan-sw-tags-refcount', 'lean-kasan-sw-tags', 'mte-smp4', 'sw_tags',
         ('refcount',)),
    # KCSAN: the refcount suite's concurrent cases, no data race reported.
    Cell('kcsan', 'lean-kcsan', 'mte-smp4', 'none', ('refcount',)),
    # Shadow call stacks (GCC): kernel_stack_untagged checks the task's
    # shadow call stack too.
    Cell('scs', 'lean-scs', 'mte', 'sync', ('kasan',)),
    # Protected KVM, as Android boots: the kernel at EL1 under the pKVM
    # hypervisor (nVHE at EL2), part 1's TFSR_EL1 checks and the tag
    # checks of KASAN HW_TAGS with the host's stage 2 in place.
    Cell('pkvm-sync', 'lean-kvm', 'mte-el2', 'sync', ('kasan', 'mte'),
         cmdline=('kvm-arm.mode=protected',),
         # hVHE where the CPU has VHE (QEMU's max), nVHE otherwise.
         boot_expect=((r'kvm \[\d+\]: Protected [hn]VHE mode initialized successfully',
                       'pKVM initialized'),)),
    # clang (LLVM=1) with shadow call stacks, as Android builds.
    Cell('clang', 'lean-clang', 'mte', 'sync', ('kasan', 'mte')),
    Cell('clang-refcount', 'lean-clang', 'mte-smp4', 'sync', ('refcount',)),
    # A GKI-shaped kernel (clang-19, ThinLTO, kCFI, shadow call stacks,
    # modules), booted as Android products boot it: kasan.stacktrace=off,
    # and sampled page_alloc tagging (gki-sampled). Sampling makes KASAN
    # skip the checks of 9 in 10 order-3+ page allocations by design
    # (Documentation/dev-tools/kasan.rst), which the kasan suite's
    # page_alloc cases would report: that boot runs the other suites.
    Cell('gki', 'lean-gki', 'mte', 'sync', ('kasan', 'refcount', 'mte', 'lkdtm-refcount'),
         cmdline=('kasan.stacktrace=off',)),
    Cell('gki-sampled', 'lean-gki', 'mte', 'sync', ('refcount', 'mte', 'lkdtm-refcount'),
         cmdline=('kasan.stacktrace=off', 'kasan.page_alloc.sample=10')),
]

# make run: defconfig-based kernel, the default (sync) mode.
RUN = [
    Cell('run-sync', 'full', 'mte', 'sync', ('kasan', 'mte', 'lkdtm-refcount')),
]

# Cells only the postings' proofs boot (make postings-prove): the hugetlb
# kselftest fails on the kernel's TAINT_BAD_PAGE, which the kasan suite's
# own reports set, so it runs in a boot without any KUnit suite.
PROOF = [
    Cell('run-mte', 'full', 'mte', 'sync', ('mte',)),
]

MATRICES = {'check': CHECK, 'check-all': CHECK_ALL, 'run': RUN, 'proof': PROOF}

# ALL=1 make series-check, gate bisect-kunit: at every prefix of the
# series, the KUnit suites of these cells that the prefix contains (the
# kasan suite in sync and async mode, where the series' async cases run;
# the refcount suite; the arm64_mte suite on a kernel without KASAN, where
# TCMA1 comes from the series alone).
BISECT_KUNIT_CELLS = ('sync', 'async', 'refcount-lse', 'distro')


# What a series carries besides test suites: code whose config option
# only exists in a tree with that part of the series.
SERIES_PARTS = {
}

# The series' config fragments, each with the suite (from_series) or the
# part (SERIES_PARTS) whose code and options it needs: merged only where
# the base's series carries it.
SERIES_FRAGMENT_NEEDS = {
    'series-tests.config': 'refcount',
    'modules-series.config': 'refcount',
    'mte-kunit.config': 'arm64-mte',
}


def series_carries(base):
    """The suites (from_series) and parts (SERIES_PARTS) that `base`'s
    series carries."""
    every = tuple(n for n, s in SUITES.items() if s.from_series) + tuple(SERIES_PARTS)
    return every if base.series_carries is None else base.series_carries


def for_base(matrix, base):
    """The cells of matrix on base (bases.py): its dropped cells left out,
    its added ones (from ALL=1 make check) put in. Returns (cells,
    [(cell name, why it is left out)])."""
    gone = dict(base.dropped_cells)
    cells = [c for c in MATRICES[matrix] if c.name not in gone]
    if matrix == 'check':
        have = {c.name for c in cells}
        cells += [c for c in CHECK_ALL if c.name in base.added_cells and c.name not in have]
    return cells, [(c.name, gone[c.name]) for c in MATRICES[matrix] if c.name in gone]


def without_series(cells, kept_suites=()):
    """The cells as they run on a tree without (part of) the series: the
    suites the series adds, except kept_suites, are left out, and a cell
    left with none is dropped. With the default, a tree without the series
    at all (an empty series: a base as it ships). Returns (cells,
    [(cell name, suites left out)])."""
    def gone_here(name):
        return SUITES[name].from_series and name not in kept_suites

    kept, dropped = [], []
    for c in cells:
        gone = tuple(s for s in c.suites if gone_here(s))
        if gone:
            dropped.append((c.name, gone))
        left = tuple(s for s in c.suites if not gone_here(s))
        if left:
            kept.append(dataclasses.replace(c, suites=left) if gone else c)
    return kept, dropped


def kselftest_build():
    """What make kselftest-install builds for the suites: (TARGETS, {collection:
    [subtargets]}), derived from the kselftest suites' selectors."""
    collections, subs = [], {}
    for s in SUITES.values():
        if s.kind != 'kselftest':
            continue
        coll = s.select.split(':', 1)[0]
        if coll not in collections:
            collections.append(coll)
        if s.subtarget and s.subtarget not in subs.setdefault(coll, []):
            subs[coll].append(s.subtarget)
    return collections, subs


def validate():
    """Every name a cell uses must exist (checked by the tooling self-tests)."""
    errors = []
    every = {c.name for cells in MATRICES.values() for c in cells}
    errors += ['BISECT_KUNIT_CELLS: no cell %s' % n for n in BISECT_KUNIT_CELLS if n not in every]
    for matrix, cells in MATRICES.items():
        names = set()
        for c in cells:
            if c.name in names:
                errors.append('%s: duplicate cell %s' % (matrix, c.name))
            names.add(c.name)
            if c.config not in CONFIGS:
                errors.append('%s/%s: unknown config %s' % (matrix, c.name, c.config))
            if c.machine not in MACHINES:
                errors.append('%s/%s: unknown machine %s' % (matrix, c.name, c.machine))
            if c.kasan not in KASAN_MODES:
                errors.append('%s/%s: unknown kasan mode %s' % (matrix, c.name, c.kasan))
            for s in c.suites:
                if s not in SUITES:
                    errors.append('%s/%s: unknown suite %s' % (matrix, c.name, s))
            cfg = CONFIGS.get(c.config)
            kunit = [s for s in c.suites if s in SUITES and SUITES[s].kind == 'kunit']
            if cfg and cfg.modules:
                for s in kunit:
                    if not SUITES[s].module:
                        errors.append('%s/%s: KUnit suite %s names no module'
                                      % (matrix, c.name, s))
            elif len(kunit) > 1:
                errors.append('%s/%s: one built-in KUnit suite per cell (kunit.filter_glob)'
                              % (matrix, c.name))
            m = MACHINES.get(c.machine)
            if m and not m.has_mte and c.kasan in HW_TAGS_MODES:
                errors.append('%s/%s: kasan %s needs a machine with MTE'
                              % (matrix, c.name, c.kasan))
    for b in bases.BASES.values():
        for name, _ in b.dropped_cells:
            if name not in every:
                errors.append('base %s drops no cell %s' % (b.name, name))
        for name in b.added_cells:
            if name not in {c.name for c in CHECK_ALL}:
                errors.append('base %s adds %s, not a cell of ALL=1 make check'
                              % (b.name, name))
    return errors
