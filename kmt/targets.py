"""The test matrix as data. A new cell, QEMU target, kasan mode or suite is
one entry in one of these tables; the code that runs them does not change."""

from dataclasses import dataclass, field
from typing import Tuple


@dataclass(frozen=True)
class KernelConfig:
    name: str
    base: str                    # 'allnoconfig' or a defconfig under arch/arm64/configs
    fragments: Tuple[str, ...]   # files in configs/, merged in order
    # Options that exist only once the series is applied (its new tests):
    # merged for the patched tree, left out for the baseline (make bench).
    series_fragments: Tuple[str, ...] = ()


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


@dataclass(frozen=True)
class Cell:
    name: str
    config: str
    machine: str
    kasan: str
    suites: Tuple[str, ...]
    timeout_s: int = 900
    cmdline: Tuple[str, ...] = field(default_factory=tuple)


CONFIGS = {c.name: c for c in [
    KernelConfig('lean', 'allnoconfig', ('minimal.config', 'mte-kasan.config'),
                 ('series-tests.config',)),
    KernelConfig('full', 'defconfig', ('mte-kasan.config', 'full.config'),
                 ('series-tests.config',)),
    # MTE without KASAN (make series-check: the #ifdef branches compile).
    KernelConfig('lean-nokasan', 'allnoconfig',
                 ('minimal.config', 'mte-kasan.config', 'nokasan.config'),
                 ('series-tests.config',)),
    # No LSE atomics at all (MTE needs them, so no MTE and no KASAN either):
    # the refcount code on its LL/SC-only build.
    KernelConfig('lean-nolse', 'allnoconfig', ('minimal.config', 'nolse.config'),
                 ('series-tests.config',)),
]}

MACHINES = {m.name: m for m in [
    # MTE emulated; -cpu max also has LSE atomics.
    Machine('mte', 'virt,mte=on,gic-version=3', 'max'),
    # No LSE atomics (LL/SC paths), no MTE.
    Machine('llsc', 'virt,gic-version=3', 'cortex-a72', has_mte=False),
    # Four vCPUs for the refcount suite's concurrency case.
    Machine('mte-smp4', 'virt,mte=on,gic-version=3', 'max', smp=4),
    Machine('llsc-smp4', 'virt,gic-version=3', 'cortex-a72', smp=4, has_mte=False),
    # Room for upstream's pgtable benchmark (2 GiB faulted, then fork).
    Machine('mte-4g', 'virt,mte=on,gic-version=3', 'max', mem_mb=4096),
]}

KASAN_MODES = {
    'off': ('kasan=off',),
    'sync': ('kasan.mode=sync',),
    'async': ('kasan.mode=async',),
    'asymm': ('kasan.mode=asymm',),
}

SUITES = {s.name: s for s in [
    Suite('kasan', 'kunit', 'kasan',
          expected_reports=('kasan',), probabilistic=True),
    Suite('mte', 'kselftest', 'arm64:check_*'),
    Suite('lkdtm-refcount', 'kselftest', 'lkdtm:REFCOUNT_*',
          expected_reports=('warning',)),
    # The series leaves kernel stacks untagged: the VMAP stack guard pages
    # must still stop an access just below and just above the stack (each
    # case oopses the writing task on purpose).
    Suite('lkdtm-stack', 'kselftest', 'lkdtm:STACK_GUARD_PAGE_*',
          expected_reports=('oops',)),
    # Saturation cases make refcount_warn_saturate() WARN (once per type).
    Suite('refcount', 'kunit', 'refcount', expected_reports=('warning',)),
]}

# make check: the lean kernel, every kasan mode.
CHECK = [
    Cell('sync', 'lean', 'mte', 'sync', ('kasan', 'mte', 'lkdtm-refcount', 'lkdtm-stack')),
    Cell('async', 'lean', 'mte', 'async', ('kasan', 'mte', 'lkdtm-stack')),
    Cell('asymm', 'lean', 'mte', 'asymm', ('kasan', 'mte', 'lkdtm-stack')),
    # refcount_t (KUnit suite, 4 vCPUs for its concurrency case, and the
    # lkdtm hardening tests): LL/SC atomics picked at boot (cortex-a72),
    # LSE (-cpu max), and a kernel built without LSE support.
    Cell('llsc', 'lean', 'llsc-smp4', 'off', ('refcount', 'lkdtm-refcount')),
    Cell('refcount-lse', 'lean', 'mte-smp4', 'sync', ('refcount',)),
    Cell('refcount-nolse', 'lean-nolse', 'llsc-smp4', 'off', ('refcount', 'lkdtm-refcount')),
]

# make run: defconfig-based kernel, the default (sync) mode.
RUN = [
    Cell('run-sync', 'full', 'mte', 'sync', ('kasan', 'mte', 'lkdtm-refcount')),
]

MATRICES = {'check': CHECK, 'run': RUN}


def validate():
    """Every name a cell uses must exist (checked by the tooling self-tests)."""
    errors = []
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
            if sum(1 for s in c.suites if s in SUITES and SUITES[s].kind == 'kunit') > 1:
                errors.append('%s/%s: one KUnit suite per cell (kunit.filter_glob)'
                              % (matrix, c.name))
            m = MACHINES.get(c.machine)
            if m and not m.has_mte and c.kasan != 'off':
                errors.append('%s/%s: kasan %s needs a machine with MTE'
                              % (matrix, c.name, c.kasan))
    return errors
