"""Cover letters: a base's template filled in with its series, its
results and the texts every letter shares (kmt cover, make cover)."""

import functools
import os
import textwrap

from . import log, paths, source


def write_cover_letter(template, bench_md, patch_dir=paths.PATCHES, base=None,
                       config_symbols=None, cells=None):
    """patches/0000-cover-letter.patch from a template, the patch subjects
    of patches/series and the benchmark table written by make bench
    (config_symbols: the base's Kconfig symbols, for {bench_config})."""
    patches = source.read_series(patch_dir)
    subjects = []
    for p in patches:
        with open(os.path.join(patch_dir, p)) as f:
            subjects.append(source.patch_subject(f.read()))
    with open(template) as f:
        text = f.read()
    with open(bench_md) as f:
        table = source.plain_text(source.cover_tables(f.read()))
    base = base or source.base_version()
    stat = source.series_diffstat()
    fields = dict(count=len(patches), base=base, upstream=base.split('-')[0],
                  bench_table=table,
                  shortlog=source.shortlog(subjects).rstrip('\n') +
                  ('\n\n' + stat.rstrip('\n') if stat else ''))
    if '{bench_config}' in text:
        if config_symbols is None:
            raise log.StepError('%s names {bench_config}: the base\'s Kconfig symbols '
                                'are needed' % template)
        fields['bench_config'] = source.benchmark_config_text(config_symbols)
    if '{matrix_legend}' in text:
        # What each cell of the table is (cells: the run's cell names).
        if config_symbols is None or not cells:
            raise log.StepError('%s names {matrix_legend}: the run\'s cells and the base\'s '
                                'Kconfig symbols are needed' % template)
        fields['matrix_legend'] = matrix_legend(cells, config_symbols)
    if '{postings_map}' in text:
        # Which posting each patch is part of (a base whose series is sent
        # as postings: patches/7.3/postings.toml).
        from . import postings
        fields['postings_map'] = postings.series_map_text(
            postings.load(postings.postings_file(patch_dir)), subjects)
    if '{testing_howto}' in text:
        # How the suites were run: the same words in every base's letter.
        fields['testing_howto'] = testing_howto()
    if '{rt_options}' in text:
        # What a PREEMPT_RT kernel adds to the benchmark kernel's options.
        if config_symbols is None:
            raise log.StepError('%s names {rt_options}: the base\'s Kconfig symbols '
                                'are needed' % template)
        fields['rt_options'] = source.fragment_options_text(
            ('expert.config', 'rt.config'), config_symbols)
    if '{entry_bench_howto}' in text:
        # How to build, pack and boot it: the same words in every base's
        # cover letter.
        with open(os.path.join(paths.REPO, 'docs', 'cover-entry-bench.txt')) as f:
            fields['entry_bench_howto'] = f.read().rstrip('\n')
    if '{entry_bench}' in text:
        # The benchmark program itself, so that a reader can run it.
        with open(os.path.join(paths.REPO, 'guest', 'src', 'entry-bench.c')) as f:
            fields['entry_bench'] = f.read().rstrip('\n')
    if '{refcount_bench}' in text:
        # The built-in refcount_t benchmark (a patch not for merging)
        # whose loops the refcount_t figures come from.
        bench_dir = os.path.join(paths.REPO, 'bench')
        names = sorted(n for n in os.listdir(bench_dir) if n.endswith('.patch'))
        if len(names) != 1:
            raise log.StepError('%s names {refcount_bench}: bench/ holds %d patches, not one'
                                % (template, len(names)))
        # Its source file, not the patch: a diff in a cover letter would be
        # applied by git am of the whole thread.
        with open(os.path.join(bench_dir, names[0])) as f:
            code = source.new_file_of(f.read(), 'lib/refcount_bench.c')
        if code is None:
            raise log.StepError('%s creates no lib/refcount_bench.c' % names[0])
        fields['refcount_bench'] = code.rstrip('\n')
    body = source.fold_subject(text.format(**fields)).rstrip('\n') + '\n'
    out = os.path.join(patch_dir, '0000-cover-letter.patch')
    with open(out, 'w') as f:
        f.write('From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n')
        f.write('From: MTE Series Team <mte-series@example.org>\n')
        f.write(body)
    return out


def testing_howto(base=None):
    """How the suites ran (docs/cover-testing.txt), for a base: the suites
    its series adds, their options, the reruns and the hang timeout."""
    from . import build, targets
    base = base or paths.BASE
    carries = targets.series_carries(base)
    suites = [targets.SUITES[s] for s in carries if s in targets.SUITES]
    globs = [s.select for s in suites if s.kind == 'kunit']
    # The test options of the built-in kernel the letter describes (the
    # lean one), those of the series' parts this base carries.
    wanted = build.requested([os.path.join(paths.CONFIGS, frag)
                              for frag in targets.CONFIGS['lean'].series_fragments
                              if targets.SERIES_FRAGMENT_NEEDS[frag] in carries])
    options = [k[len('CONFIG_'):] for k, v in wanted.items() if v == 'y']
    if globs:
        suite_globs = ('kunit.filter_glob=%s for the suite%s the series adds'
                       % (' or '.join(globs), 's' if len(globs) > 1 else ''))
    else:
        suite_globs = 'the series adds no KUnit suite'
    if 'refcount' in carries:
        suite_globs += ("; -smp 4 for the refcount suite's concurrent case; -machine "
                        "virt,gic-version=3 -cpu cortex-a72 for its LL/SC atomics")
    if options:
        series_options = 'the series\' test options (%s)' % ', '.join(options)
    else:
        series_options = 'no test option of the series'
    with open(os.path.join(paths.REPO, 'docs', 'cover-testing.txt')) as f:
        text = f.read()
    for key, value in (('suite_globs', suite_globs), ('series_options', series_options),
                       ('rerun_rule', rerun_rule())):
        text = text.replace('{%s}' % key, value)
    # Each paragraph wrapped again (the fields change line lengths), the
    # indented command lines as they are.
    out = []
    for para in text.rstrip('\n').split('\n\n'):
        if para.startswith('  '):
            out.append(para)
        else:
            out.append(textwrap.fill(' '.join(para.split()), 72, break_on_hyphens=False,
                                     break_long_words=False))
    return '\n\n'.join(out)


def _suite_words(name):
    """A suite as a list reader knows it (its KUnit suite name, or the
    kselftests it runs)."""
    from . import targets
    s = targets.SUITES[name]
    if s.kind == 'kunit':
        return 'KUnit %s' % s.select
    coll, _, glob = s.select.partition(':')
    return '%s %s' % (coll, glob)


def _config_values(cfg, symbols):
    """{option: value} of a kernel configuration as merge_config.sh -n
    takes it after allnoconfig on this base (the series' test fragments
    and the base's own included; "is not set" as 'n'), in order, without
    the options the base does not define."""
    from . import build
    return {k[len('CONFIG_'):]: v for k, v in build.requested(build.fragment_paths(cfg)).items()
            if k[len('CONFIG_'):] in symbols}


def _option_words(opts):
    return [k if v == 'y' else '%s=%s' % (k, v) for k, v in opts.items()]


def rerun_rule():
    """How a kasan case that failed is run again, and what counts as a
    hang: the same words in the legend and in "How the suites ran"."""
    from . import bootspec, matrix
    return ('A kasan case that fails in a HW_TAGS mode boots again alone, on one vCPU '
            'with "-icount shift=0,sleep=off -seed N", up to %d times (N = 1, 2, ...), '
            'each with an unused kernel parameter of N digits N added so that the '
            'command line\'s length, and with it the tags, differ; it counts as passed '
            'where most of those runs pass (a tag collision). A boot silent for %d s '
            'counts as hung, a failure.' % (len(matrix.RERUN_SEEDS), bootspec.CELL_SILENCE_S))


def matrix_legend(cell_names, symbols, width=72):
    """What each cell of a make check run is, in a list reader's terms:
    the kernel (its options after allnoconfig), the QEMU machine, the
    kernel parameters and the suites. cell_names: the run's cells in its
    order (those not in a matrix, such as the tooling's, are left out)."""
    from . import targets
    known = {}
    for cells in targets.MATRICES.values():
        for c in cells:
            known.setdefault(c.name, c)
    cells = [known[n] for n in cell_names if n in known]
    if not cells:
        raise log.StepError('no cell of the run is a kernel cell: nothing to explain')
    fill = functools.partial(textwrap.fill, width=width, break_on_hyphens=False,
                             break_long_words=False)
    out = [fill(
        'Each cell boots one kernel (built with GCC 12) under QEMU 10.0.2, runs '
        'the KUnit suite it names (built in and selected with kunit.filter_glob, '
        'or loaded with modprobe where the kernel builds its tests as modules) '
        'and then its kselftests, with run_kselftest.sh, from an initramfs that '
        'holds a shell, the kselftests (make ARCH=arm64 '
        'CROSS_COMPILE=aarch64-linux-gnu- TARGETS="arm64 lkdtm" '
        'ARM64_SUBTARGETS=mte kselftest-install) and, for a kernel with modules, '
        'its modules (make modules_install). Passed, failed and skipped count '
        'KUnit cases as KTAP reports them (a parameterised case once) and '
        'kselftests; expected failures are failures listed, each with its '
        'reason, before the run; kernel reports are KASAN reports, warnings and '
        'oopses outside the cases that provoke them. ' + rerun_rule() +
        ' The cells:'), '']
    for c in cells:
        params = list(targets.KASAN_MODES[c.kasan]) + list(c.cmdline)
        for s in c.suites:
            params += [p for p in targets.SUITES[s].cmdline if p not in params]
        text = '%s: kernel %s, machine %s%s; %s' % (
            c.name, c.config, c.machine,
            (', ' + ' '.join(params)) if params else '',
            ', '.join(_suite_words(s) for s in c.suites))
        out.append(fill(text, initial_indent='  ', subsequent_indent='      '))
    out += ['', 'The kernels, from allnoconfig (scripts/kconfig/merge_config.sh -n',
            'with these options; =y unless a value is given):', '']
    order = []
    for c in cells:
        if c.config not in order:
            order.append(c.config)
    first = None
    for name in order:
        cfg = targets.CONFIGS[name]
        opts = _config_values(cfg, symbols)
        tool = ''
        if cfg.llvm:
            tool = ' (LLVM=%s)' % (cfg.llvm_version or '1')
        if first is None:
            first, first_opts = name, opts
            text = '%s%s: %s' % (name, tool, ', '.join(
                _option_words({k: v for k, v in opts.items() if v != 'n'})))
        else:
            # What differs from the first kernel, by name; an option the
            # first sets and this one's fragments do not name is off, as
            # allnoconfig leaves it.
            diff = {k: v for k, v in opts.items() if first_opts.get(k, 'n') != v}
            diff.update((k, 'n') for k in first_opts if first_opts[k] != 'n' and k not in opts)
            text = '%s%s: those of %s, and %s' % (
                name, tool, first, ', '.join(_option_words(diff)) or 'nothing else')
        out.append(fill(text, initial_indent='  ', subsequent_indent='      '))
    out += ['', fill('The machines (qemu-system-aarch64 ... -nic none -no-reboot, kernel '
                     'parameters console=ttyAMA0 log_buf_len=1M panic=-1 rdinit=/init and '
                     'those above):'), '']
    seen = []
    for c in cells:
        if c.machine in seen:
            continue
        seen.append(c.machine)
        m = targets.MACHINES[c.machine]
        out.append(fill('%s: -machine %s -cpu %s -smp %d -m %d%s' % (
            m.name, m.machine, m.cpu, m.smp, m.mem_mb,
            (' ' + ' '.join(m.extra)) if m.extra else ''),
            initial_indent='  ', subsequent_indent='      '))
    return '\n'.join(out)
