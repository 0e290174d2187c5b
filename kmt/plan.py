"""What make check / make run would do, printed without doing any of it:
no git, no make, no QEMU, no file written (make DRY_RUN=1 check).

The plan is rendered from the same tables (targets.py) and the same boot
descriptions (bootspec.py) that the real run uses."""

import os
import shlex

from . import bootspec, build, kunitpy, paths, series, source, targets
from . import matrix as matrix_mod


def _rel(p):
    return os.path.relpath(p, paths.REPO)


def matrix_plan(matrix, cells=None):
    """The plan as lines of text; raises StepError on an inconsistent table."""
    chosen = matrix_mod.chosen_cells(matrix, cells)
    patches = source.read_series()
    chosen, dropped = targets.without_series(
        chosen, targets.series_carries(paths.BASE) if patches else ())
    configs = []
    for c in chosen:
        if c.config not in configs:
            configs.append(c.config)
    lines = ['Plan for matrix %s on base %s: %d cell(s), %d kernel(s); nothing below is run.'
             % (matrix, paths.BASE_NAME, len(chosen), len(configs)),
             '',
             'kernel tree %s: the base unpacked from %s%s, then git am of the %d patches '
             'in %s/series' % (_rel(paths.SRC), paths.SOURCE_PACKAGE,
                               ' (downloaded from %s)' % paths.BASE.suite
                               if paths.BASE.suite else '',
                               len(patches), _rel(paths.PATCHES))]
    for name, suites in dropped:
        lines.append('%s: without %s (the series adds it; %s)'
                     % (name, ', '.join(suites), 'not in the %s series' % paths.BASE_NAME
                        if patches else 'the series is empty'))
    whole = matrix.startswith('check') and not cells
    if whole:
        lines.append('tooling self-tests (tests/, no kernel)')
    for name in configs:
        cfg = targets.CONFIGS[name]
        out = build.out_dir(name)
        frags = [os.path.basename(f) for f in
                 build.fragment_paths(cfg, series_tests=bool(patches))]
        goals = 'Image' + (' modules (installed into the initramfs)' if cfg.modules else '')
        lines += ['',
                  'build %s: %s + %s%s -> %s: %s; kselftests %s; initramfs'
                  % (name, cfg.base, ' '.join(frags),
                     (' (LLVM=%s)' % build.llvm(cfg)) if cfg.llvm else '',
                     _rel(out), goals, ' '.join(build.kselftest_make_vars()))]
        image = os.path.join(out, 'arch', paths.ARCH, 'boot', 'Image')
        initrd = os.path.join(out, 'initramfs.cpio.gz')
        for c in chosen:
            if c.config != name:
                continue
            spec = bootspec.for_cell(c, _rel(image), _rel(initrd))
            lines.append('  boot %s (timeout %ds): %s'
                         % (c.name, spec.timeout_s, ' '.join(bootspec.qemu_command(spec))))
    if whole and matrix == 'check-all':
        lines += ['', "kunit.py: one arm64 kernel from kunit/kunitconfigs/ (%s), then per "
                  "run kunit.py exec, compared case by case with its cell:" % ', '.join(
                      kunitpy.CONFIG_NAMES)]
        lines += ['  %s as cell %s: %s' % (r.suite, r.cell, shlex.join(kunitpy.exec_command(
            os.path.join('build', 'out', kunitpy.OUT_NAME), r, kunitpy.find_cell(r.cell),
            '%s.kunit.json' % r.name))) for r in kunitpy.RUNS]
    if whole:
        lines += ['', 'QUICK=1 make bench: the base and the patched lean kernel, every '
                  'benchmark with exact counts and the kmt-count plugin']
        if paths.BASE.reverted_dir and patches:
            lines.append('  and a third lean kernel, the base with %s/series applied '
                         '(counted, not timed; it must read TFSR_EL1 in a sync-mode '
                         'system call and tag stacks and page tables again)'
                         % paths.BASE.reverted_dir)
        lines.append('series gates: ' + ' '.join(series.QUICK_GATES))
    return lines
