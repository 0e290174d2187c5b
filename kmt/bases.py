"""The base kernels, as data: which Debian source package each comes from
and where its series lives. BASE=<name> (environment KMT_BASE) picks one;
6.12 is the default. A new base is one entry here plus a series directory.
"""

from dataclasses import dataclass
from typing import Optional, Tuple


@dataclass(frozen=True)
class Base:
    name: str
    package: str        # Debian package holding /usr/src/<package>.tar.xz
    # '' : installed on the host by scripts/setup-host.sh (the host's own
    # suites). Otherwise the Debian suite to download the package from,
    # with a private apt state (the host's apt state and what it installs
    # are left alone), from the archive the host already uses.
    suite: str = ''
    patch_dir: str = 'patches'      # relative to the repository
    what: str = ''
    # Options the config fragments request that this base no longer has
    # at all, each with why: not checked there (and checked to be absent).
    gone: Tuple[Tuple[str, str], ...] = ()
    # Fragments (in configs/) merged last into every configuration on this
    # base: what the base needs so that the same tests run as on 6.12.
    fragments: Tuple[str, ...] = ()
    # The suites (targets.SUITES, from_series) and parts (targets.SERIES_PARTS)
    # that this base's series carries; None: all of them. The series' config
    # fragments of the others are not merged and those suites do not run.
    series_carries: Optional[Tuple[str, ...]] = None
    # make cover: the cover letter's template (in docs/) and the results
    # its table comes from: 'bench' (make bench) or 'check' (make check).
    cover_template: str = 'cover-letter.txt'
    cover_results: str = 'bench'
    # The base as shipped already leaves kernel stacks and page tables
    # untagged (mainline's part 2): make bench then wants no such tag
    # store on either kernel, instead of seeing them on the baseline.
    untagged_stacks: bool = False
    # The base's series leaves kernel stacks and page tables untagged
    # (part 2): make bench wants no such tag store on the patched kernel.
    # A series without part 2 must show them as the baseline does.
    series_untags: bool = True
    # make LLVM= for the clang cells: '1' (the host's clang, 14 on Debian
    # 12) or a version suffix ('-19': clang-19, ld.lld-19, ...) where the
    # base needs a newer LLVM than the host's default.
    llvm: str = '1'
    # Debian packages of the host's own suites this base needs besides
    # scripts/setup-host.sh's (installed by it: KMT_HOST_PKGS).
    host_packages: Tuple[str, ...] = ()
    # Patches (a directory with a series file, relative to the repository)
    # that undo what the base as shipped already has of the series, for a
    # third make bench kernel 'reverted': the base's own baseline. Never
    # part of a series; only make bench builds it.
    reverted_dir: str = ''
    # The first N patches of the series are fixes without which the base
    # does not build the lean kernel at all: make bench's baseline is the
    # base with them (the base as shipped cannot be measured).
    baseline_patches: int = 0
    # Cells (targets.py) that cannot exist on this base, each with why:
    # left out of every matrix there, and the run says so.
    dropped_cells: Tuple[Tuple[str, str], ...] = ()
    # Cells of ALL=1 make check that make check runs on this base too,
    # where they stand in for a dropped one.
    added_cells: Tuple[str, ...] = ()


BASES = {b.name: b for b in [
    Base('6.12', 'linux-source-6.12',
         what='Linux 6.12 LTS as Debian 12 (bookworm) ships it: the series target',
         # Part 3 is generic C there (one comparison per check) plus the
         # LL/SC immediate: no arm64 refcount_t option to turn on.
         series_carries=('refcount', 'arm64-mte')),
    # Mainline with its own versions of parts 1 and 2 (249bf9733198 in v7.1;
    # the stack and page-table skip in v7.2). Architecture all (a tarball).
    Base('7.3', 'linux-source-7.3', suite='trixie-backports', patch_dir='patches/7.3',
         what='mainline 7.3 as Debian 13 backports ships it: the peer',
         gone=(('CONFIG_ARM64_LSE_ATOMICS', 'LSE atomics are always built in (picked '
                'at boot by the ARM64_HAS_LSE_ATOMICS alternative): no LL/SC-only kernel'),
               ('CONFIG_ARM64_USE_LSE_ATOMICS', 'as CONFIG_ARM64_LSE_ATOMICS'),
               ('CONFIG_ARM64_PAN', 'PAN is always built in'),
               ('CONFIG_PROC_SYSCTL', '/proc/sys comes with CONFIG_SYSCTL')),
         fragments=('base-7.3.config',),
         # 7.3 needs LLVM 17.0.1 or later (scripts/min-tool-version.sh);
         # Debian 12 has clang 14 as clang and clang-19 as a package.
         llvm='-19', host_packages=('clang-19', 'lld-19', 'llvm-19'),
         # The 7.3 series carries KASAN fixes, the KUnit cases of the 6.12
         # series (kasan suite), its refcount and arm64_mte suites and part
         # 3 as generic C plus the LL/SC immediate.
         series_carries=('refcount', 'arm64-mte'),
         cover_template='cover-letter-7.3.txt', cover_results='check',
         untagged_stacks=True,
         # Mainline's own parts 1 and 2 undone, from the code (the tree has
         # no history): 7.3 before them, as 6.12 as shipped behaves.
         reverted_dir='patches/7.3/mainline-reverted'),
    # Debian 12's own kernel and the base of android14-6.1: a build fix
    # the base needs, then the series' parts as they are ported (1, 2 and
    # 4, with the async kasan cases, the untagged-memory kasan cases and
    # the arm64_mte suite).
    Base('6.1', 'linux-source-6.1', patch_dir='patches/6.1',
         what='Linux 6.1 LTS as Debian 12 (bookworm) ships it: its own kernel',
         host_packages=('linux-source-6.1',),
         gone=(('CONFIG_ARM_PMUV3', 'the arm64 PMU driver is arch/arm64/kernel/perf_event.c, '
                'built with CONFIG_HW_PERF_EVENTS'),
               ('CONFIG_CACHESTAT_SYSCALL', 'cachestat() came in 6.5')),
         series_carries=('arm64-mte',),
         cover_template='cover-letter-6.1.txt',
         # 6.1.120 to 6.1.192 do not build with KASAN HW_TAGS (patch 1).
         baseline_patches=1,
         dropped_cells=tuple((c, 'arm64 has no ARCH_SUPPORTS_RT before 6.12 and the source '
                              'package carries no RT patch: no PREEMPT_RT kernel')
                             for c in ('modules-rt', 'rt-refcount', 'distro-rt',
                                       'vhe-distro-rt', 'rt')),
         # The modules kernel without RT instead.
         added_cells=('modules',)),
]}
DEFAULT = '6.12'
