"""make bench: baseline (base, no series) vs patched (series) kernels, the
lean config, every kasan mode; exact instruction counts per operation
(QEMU -icount shift=0 + guest PMU), exact tag stores, barriers and TFSR_EL1
reads per operation (QEMU TCG plugins) and interleaved A/B
wall-time ratios."""

import datetime
import os
import re
import statistics

from . import (attrib, bootspec, build, kasancost, labresults, log, paths, plugin, qemu, refbench, results,
               source, targets)

KERNELS = ('baseline', 'patched')
# A base whose Base.reverted_dir is set gets a third kernel, counted (not
# timed): the base with what it already has of the series undone.
REVERTED = 'reverted'
REVERTED_BRANCH = 'mainline-reverted'
MODES = ('off', 'sync', 'async', 'asymm')
MACHINE = 'mte'
BOOT_TIMEOUT_S = 900
SEED = 1
# Frame records the plugin follows up from each kernel tag store.
CHAIN_DEPTH = 24
# Default, QUICK=1 (smoke run: the harness exercised, the figures rough)
# and PLAN=shapes (upstream's two benchmarks at upstream's sizes: a child
# with 2000 threads, fork with 2 GiB faulted; a 4 GiB guest; results in
# shapes.json so that they do not replace the default run's).
# The exact counts are deterministic for one kernel, but where the timer
# interrupts (and the deferred work they start) fall relative to the
# operations is set by everything the kernel executed before, and the
# kernel's random numbers by its command line: two kernels whose code
# differs anywhere, or one kernel after kmt-bench -s N spins N loop
# iterations first (the argument is on the command line, so its random
# numbers change too), can count a benchmark differently although its
# path is the same. Each counted boot is repeated with this shift; a
# per-operation count is quoted only where the two agree within
# REPEAT_PCT percent, for both kernels.
PHASE_SHIFT_LOOPS = 100003
REPEAT_PCT = 0.5

# PLAN=attrib's benchmarks, after kmt-bench -e: a sleep of this many
# milliseconds before the profiled region and before its end, which is one
# or two RCU grace periods many times over (HZ=250, one CPU), so that the
# tasks and stacks the operations free are freed inside the region.
ATTRIB_EDGE_MS = 500
LAYOUT_PATCH = '0001-arm64-kasan-slab-objects-aligned-to-the-tag-granule-.patch'
ATTRIB_BENCH = '-e,%d,getpid=2000,ctxsw=500,thread=200,thread8_child=20,fork64m=10' % (
    ATTRIB_EDGE_MS)

PLANS = {
    'full': {'modes': MODES, 'pairs': 5, 'ratio_modes': ('sync',), 'bench': 'all',
             'refcount': True, 'phase_shift': PHASE_SHIFT_LOOPS},
    # PLAN=counts: the exact counts of 'full' (every mode, every benchmark,
    # the repeat boot) without its wall-time pairs and part 3's benchmark:
    # what a base whose series has no refcount_t part quotes (6.1).
    'counts': {'modes': MODES, 'pairs': 1, 'ratio_modes': ('sync',), 'bench': 'all',
               'phase_shift': PHASE_SHIFT_LOOPS},
    # PLAN=entry: the exact counts of the benchmarks that are one kernel
    # entry and exit, or a context switch, in every mode, with the repeat
    # boot: what a change to the exception entry/exit and context switch
    # paths (the TFSR_EL1 checks) quotes, in a fraction of PLAN=counts.
    # Its program is guest/src/entry-bench.c, short enough to stand in the
    # reproduction section of a cover letter: the same four loops as
    # kmt-bench's, at the same sizes.
    'entry': {'modes': MODES, 'pairs': 0, 'ratio_modes': (), 'bench': 'all',
              'program': 'entry-bench',
              'phase_shift': PHASE_SHIFT_LOOPS, 'output': 'entry'},
    'quick': {'modes': ('off', 'sync'), 'pairs': 1, 'ratio_modes': ('sync',),
              'bench': 'getpid=2000,getppid=2000,invalid_syscall=2000,ctxsw=500,'
                       'thread=50,fork64m=5'},
    'shapes': {'modes': ('off', 'sync'), 'pairs': 9, 'ratio_modes': ('sync',),
               'bench': 'thread2000_child=5,fork2g=10', 'machine': 'mte-4g',
               'output': 'shapes'},
    # PLAN=gki: the exact counts on the GKI-shaped kernel (clang-19,
    # ThinLTO, kCFI, shadow call stacks, modules: targets.CONFIGS
    # 'lean-gki') booted with the options Android products boot it with,
    # stack traces off and page_alloc tagging sampled, as the gki-sampled
    # cell does: what a phone's kernel pays per operation.
    'gki': {'modes': MODES, 'pairs': 0, 'ratio_modes': (), 'bench': 'all',
            'phase_shift': PHASE_SHIFT_LOOPS, 'config': 'lean-gki',
            'cmdline': ('kasan.stacktrace=off', 'kasan.page_alloc.sample=10'),
            'output': 'gki'},
    # PLAN=refcount: part 3's benchmark alone (refbench.PLANS['idle']: more
    # interleaved pairs), for wall-time ratios from an otherwise idle host.
    'refcount': {'refcount_only': 'idle', 'output': 'refcount'},
    # PLAN=refcount-postings: the same counts (refbench's quick sizes) from
    # the base as shipped with only part 3's postings applied, one and then
    # the other (refbench.POSTING_VARIANTS): the figures those postings
    # quote. Base 7.3.
    'refcount-postings': {'refcount_only': 'quick', 'from_postings': True,
                          'output': 'refcount-postings'},
    # PLAN=attrib: what KASAN still costs over kasan=off on the patched
    # kernel, per benchmark and mode, by cause (kmt/kasancost.py): the
    # plugin's flat kernel profile of each mode against kasan=off, twice
    # (the second boot with the timer phase shifted). PLAN=attrib-gki: the
    # same on the GKI-shaped kernel with Android's boot options.
    # -e: the deferred work of the warm-up runs before the profiled region,
    # that of the operations in it (kmt-bench's -e; ATTRIB_EDGE_MS).
    'attrib': {'attrib_only': True, 'modes': MODES,
               'bench': ATTRIB_BENCH,
               'phase_shift': PHASE_SHIFT_LOOPS, 'output': 'attrib'},
    'attrib-gki': {'attrib_only': True, 'modes': MODES,
                   'bench': ATTRIB_BENCH,
                   'phase_shift': PHASE_SHIFT_LOOPS, 'config': 'lean-gki',
                   'cmdline': ('kasan.stacktrace=off', 'kasan.page_alloc.sample=10'),
                   # The same kernel with KASAN's slab layout also under
                   # kasan=off, booted kasan=off: what the layout alone
                   # costs (kasancost.LAYOUT).
                   'layout_reference': os.path.join('bench', 'attrib', LAYOUT_PATCH),
                   'output': 'attrib-gki'},
}
# The benchmarks that allocate stacks / page tables: the baseline must
# show tag stores of that use there (or the attribution rules are stale).
EXPECT_BASELINE_USE = {'thread': 'stack', 'thread8_child': 'stack', 'fork64m': 'page_table',
                       'thread2000_child': 'stack', 'fork2g': 'page_table'}

# kmt-bench's lines, and entry-bench's.
_LINE = re.compile(r'# (?:kmt-bench|bench) (\S+) ((?:\w+=[0-9.]+ ?)+)$')
_END = re.compile(r'^KMT-END bench rc=(\d+)')
_CPU = re.compile(r'# kmt-cpu dczid_bs=(\d+)')


def plan_cmdline(plan):
    """The kernel options of a plan's boots beyond the benchmark's: its
    'cmdline', and kmt.benchprog= for a plan with its own program."""
    return tuple(plan.get('cmdline', ())) + (
        ('kmt.benchprog=' + plan['program'],) if plan.get('program') else ())


def tag_blocks(lines, machine):
    """{'gm', 'dcz'}: bytes one STGM and one DC GVA tag on this guest (DCZID_EL0
    as kmt-bench read it, GMID_EL1 from the machine table)."""
    blocks = {'gm': targets.MACHINES[machine].gm_block_bytes}
    for l in lines:
        m = _CPU.search(l)
        if m:
            blocks['dcz'] = 4 << int(m.group(1))
    return blocks


def parse_bench(lines):
    """{benchmark: {'insn_per_op': x, 'ns_per_op': y}} from a console log;
    raises StepError when the bench block is missing or a benchmark failed."""
    out, inside, end = {}, False, None
    failed = []
    for l in lines:
        if l.startswith('KMT-BEGIN bench'):
            inside = True
        elif l.startswith('KMT-END bench'):
            end = l
            break
        elif inside:
            m = _LINE.search(l)
            if m:
                fields = dict(kv.split('=') for kv in m.group(2).split())
                out[m.group(1)] = {k: (int(v) if k in ('ops', 'chunk') else float(v))
                                   for k, v in fields.items()}
            if l.startswith('not ok'):
                failed.append(l)
    if end is None:
        raise log.StepError('the benchmark never finished (no KMT-END bench)')
    m = _END.match(end)
    if m and m.group(1) != '0' and not failed:
        failed.append('the program exited with %s' % m.group(1))
    if failed or not out:
        raise log.StepError('benchmark failed: %s' % ('; '.join(failed) or 'no result'))
    return out


def build_kernels(apply, config='lean', patched_only=False):
    """Build the baseline (base tag) and the patched kernel (series, or the
    tree as checked out with apply=False) with targets.CONFIGS[config];
    returns {kernel: (image, initrd)}. patched_only: the patched kernel
    alone (PLAN=refcount builds its own kernels from the series and needs
    only the patched kernel's initramfs)."""
    tag = source.ensure_base()
    if apply:
        source.apply_series(tag=tag)
    else:
        source.check_tree_as_is(tag)
    with source.tree_lock(what='check the tree is clean'):
        dirty = source.git(['status', '--porcelain', '--untracked-files=no']).stdout.strip()
    if dirty:
        raise log.StepError('uncommitted changes in %s: commit them first' % paths.SRC)
    kernels = {}
    baseline = baseline_ref(tag)
    if patched_only:
        same = source.tree_is_base(baseline)
        head = source.current_head()
        kernels['patched'] = build.build_all(config, tree='series', series_tests=not same)
        return kernels, head, same
    with source.checked_out(baseline) as head:
        kernels['baseline'] = build.build_all(config, tree='base')
    same = source.tree_is_base(baseline)
    # An empty series has none of the series' test options to configure.
    kernels['patched'] = build.build_all(config, tree='series', series_tests=not same)
    # One userspace for both kernels: the initramfs (kselftests built in
    # another O= directory differ in a few bytes) is unpacked at boot, and
    # a different amount of work there shifts where timer ticks land in the
    # measured loops. Only the kernel may differ between A and B.
    kernels['baseline'] = (kernels['baseline'][0], kernels['patched'][1])
    if paths.BASE.reverted_dir and not same:
        kernels[REVERTED] = (build_reverted(tag, config), kernels['patched'][1])
    return kernels, head, same


def baseline_ref(tag, src=None):
    """What the baseline kernel is built from: the base tag, or where the
    base needs the series' first Base.baseline_patches patches to build at
    all, the commit of the last of them on the checked-out series."""
    n = paths.BASE.baseline_patches
    if not n:
        return tag
    commits = source.git(['rev-list', '--reverse', '%s..HEAD' % tag], cwd=src).stdout.split()
    if len(commits) < n:
        raise log.StepError('base %s: the baseline is the base with the series\' first %d '
                            'patch(es) (bases.py baseline_patches), but the series has %d'
                            % (paths.BASE_NAME, n, len(commits)))
    log.info('baseline: base %s with the series\' first %d patch(es), up to %s'
             % (paths.BASE_NAME, n, source.git(['log', '-1', '--format=%h %s', commits[n - 1]],
                                               cwd=src).stdout.strip()))
    return commits[n - 1]


def build_reverted(tag, config='lean'):
    """The kernel (config, default lean) of the base with Base.reverted_dir
    applied (git am on a throw-away branch from the base tag); returns its
    Image."""
    pdir = os.path.join(paths.REPO, paths.BASE.reverted_dir)
    patches = source.read_series(pdir)
    cfg = targets.CONFIGS[config]
    out = build.out_dir(config, REVERTED)
    logfile = os.path.join(paths.LOGS, 'build-%s-%s.log' % (REVERTED, config))
    with source.checked_out(tag, branch=REVERTED_BRANCH):
        source.am_or_abort([os.path.join(pdir, p) for p in patches], 'the base')
        with log.phase('build %s kernel, %s reverted (%s), log %s'
                       % (config, paths.BASE_NAME, ', '.join(patches),
                          os.path.relpath(logfile))):
            return build.build_kernel(cfg, paths.SRC, out, logfile, tree='base')


def counted_kernels(kernels):
    """The kernels whose counts make bench takes, in boot order."""
    return [k for k in (REVERTED,) if k in kernels] + list(KERNELS)


def boot_spec(kernel, image, initrd, mode, bench, icount, tag, time_only=False,
              machine=MACHINE, logfile='', cmdline=()):
    """The description of one benchmark boot (the local run and the LAVA
    export both render it). time_only: the guest reads no PMU (wall-time
    boots, and plugin boots, which must see no perf_event system call
    inside the marked regions). cmdline: kernel options beyond the
    benchmark's (a plan's 'cmdline')."""
    if not icount or time_only:
        bench = '-t,' + bench if bench != 'all' else '-t'
    # A fixed -seed fixes the guest's random numbers (the DTB's rng-seed and
    # kaslr-seed, RNDR): without it the same kernel takes other paths
    # through hashing and allocation on every boot.
    return bootspec.BootSpec(name='bench-%s-%s-%s' % (kernel, mode, tag), image=image,
                             initrd=initrd, machine=machine, kasan=mode,
                             cmdline=('kmt.bench=' + bench,) + tuple(cmdline), smp=1,
                             icount=icount,
                             seed=SEED, timeout_s=BOOT_TIMEOUT_S, logfile=logfile)


def built_images(config='lean'):
    """{kernel: (image, initrd)} of the two kernels (config, default lean)
    make bench built (one initramfs for both, the patched tree's, as the
    local run uses)."""
    initrd = os.path.join(build.out_dir(config, 'series'), 'initramfs.cpio.gz')
    return {k: (os.path.join(build.out_dir(config, tree), 'arch', paths.ARCH, 'boot', 'Image'),
                initrd)
            for k, tree in (('baseline', 'base'), ('patched', 'series'))}


def plan_boots(plan_name, images):
    """Every boot of a plan but the plugin's, in the order the local run
    makes them: (kernel, mode, tag, BootSpec). images: {kernel: (image,
    initrd)}."""
    plan = PLANS[plan_name]
    machine = plan.get('machine', MACHINE)
    cmdline = plan_cmdline(plan)
    prefix = '' if plan_name in ('full', 'quick') else plan_name + '-'
    out = []
    for mode in plan['modes']:
        for k in KERNELS:
            out.append((k, mode, prefix + 'icount', boot_spec(
                k, *images[k], mode, plan['bench'], True, prefix + 'icount',
                machine=machine, cmdline=cmdline)))
    for mode in plan['ratio_modes']:
        for i in range(plan['pairs']):
            for k in KERNELS:
                tag = '%stime%d' % (prefix, i)
                out.append((k, mode, tag, boot_spec(k, *images[k], mode, plan['bench'],
                                                    False, tag, machine=machine,
                                                    cmdline=cmdline)))
    return out


def _boot(kernel, image, initrd, mode, bench, icount, tag, plugin_so=None, machine=MACHINE,
          cmdline=(), profile=False, contrib=False):
    """One benchmark boot. With plugin_so: that plugin loaded (kmt-count,
    or with contrib the QEMU contrib plugin of patches/qemu) and the guest
    in time-only mode (no perf_event system calls inside the marked
    regions); returns the plugin's output as a third value."""
    logfile = os.path.join(paths.LOGS, 'bench', '%s-%s-%s.log' % (kernel, mode, tag))
    counts = logfile[:-len('.log')] + '.counts'
    spec = boot_spec(kernel, image, initrd, mode, bench, icount, tag,
                     time_only=bool(plugin_so), machine=machine, logfile=logfile,
                     cmdline=cmdline)
    if plugin_so:
        if os.path.exists(counts):
            os.unlink(counts)
        if contrib:
            args = plugin.contrib_qemu_args(plugin_so, counts, chains=CHAIN_DEPTH)
        else:
            args = plugin.qemu_args(plugin_so, counts, chains=0 if profile else CHAIN_DEPTH,
                                    profile=profile)
        spec = spec.replace(qemu_extra=tuple(args))
    res = qemu.run(spec, echo=False)
    res.check()
    parsed = parse_bench(res.lines)
    if plugin_so:
        out = plugin.read_output(counts, res.lines, contrib=contrib)
        out.blocks = tag_blocks(res.lines, machine)
        return parsed, os.path.relpath(logfile, paths.REPO), out
    return parsed, os.path.relpath(logfile, paths.REPO)


def use_records(kernel, mode, b, ops, region, chains, symbols, logf):
    """Tag stores per operation by use (attrib.RULES), and the owners
    behind them; raises StepError when the chains do not add up to the
    region's tag-store count (a chain was lost)."""
    by_use, by_owner = attrib.attribute(chains, symbols)
    counted = sum(region['counts'].get(n, (0, 0))[1] for n in plugin.TAG_STORES)
    if sum(by_use.values()) != counted:
        raise log.StepError('%s/%s/%s: call chains cover %d tag stores, the counters %d (%s)'
                            % (b, kernel, mode, sum(by_use.values()), counted, logf))
    top = sorted(by_owner.items(), key=lambda kv: -kv[1])[:12]
    records = []
    for use in attrib.USES:
        rec = {'benchmark': b, 'metric': 'tag_stores_use_per_op', 'use': use,
               'kernel': kernel, 'kasan': mode, 'cpu': targets.MACHINES[MACHINE].cpu,
               'value': round(by_use.get(use, 0) / ops, 3), 'ops': ops, 'log': logf}
        rec['owners'] = [[o, round(n / ops, 3)] for (u, o), n in top if u == use]
        records.append(rec)
    return records


def plugin_records(kernel, mode, parsed, out, logf, symbols=None):
    """results.json records from one plugin boot: region n is the n-th
    benchmark kmt-bench reported (it marks one region per benchmark).
    With symbols (the kernel's System.map): tag stores by use, too."""
    records = []
    regions = plugin.attribute(out.regions, [(b, v['ops']) for b, v in parsed.items()])
    for b, (ops, region) in regions.items():
        if symbols is not None:
            records += use_records(kernel, mode, b, ops, region,
                                   out.chains.get(region['region'], []), symbols, logf)
        figs = plugin.per_op(region, ops, out.blocks)
        for metric, value in figs.items():
            rec = {'benchmark': b, 'metric': metric, 'kernel': kernel, 'kasan': mode,
                   'cpu': targets.MACHINES[MACHINE].cpu, 'value': value, 'ops': ops,
                   'log': logf}
            if metric == 'tag_stores_per_op':
                # Raw counts of the whole region, [user, kernel] per counter.
                rec['region_counts'] = {k: list(v) for k, v in region['counts'].items()}
            records.append(rec)
    return records


def run(quick=False, apply=True, plan_name=None):
    plan_name = plan_name or ('quick' if quick else 'full')
    plan = PLANS[plan_name]
    quick = plan_name == 'quick'
    machine = plan.get('machine', MACHINE)
    cmdline = plan_cmdline(plan)
    prefix = '' if plan_name in ('full', 'quick') else plan_name + '-'
    if plan.get('attrib_only'):
        return attrib_only(plan, plan_name, apply)
    kernels, head, same = build_kernels(apply, plan.get('config', 'lean'),
                                        patched_only=bool(plan.get('refcount_only')))
    if plan.get('refcount_only'):
        return refcount_only(plan, plan_name, kernels, head, same)
    records = []
    insn = {}
    for mode in plan['modes']:
        for k in counted_kernels(kernels):
            with log.phase('instruction counts: %s kernel, kasan %s' % (k, mode)):
                res, logf = _boot(k, *kernels[k], mode, plan['bench'], True, prefix + 'icount',
                                  machine=machine, cmdline=cmdline)
            insn[(k, mode)] = res
            for b, v in res.items():
                records.append({'benchmark': b, 'metric': 'insn_per_op', 'kernel': k,
                                'kasan': mode, 'cpu': targets.MACHINES[MACHINE].cpu,
                                'value': v['insn_per_op'], 'mean': v['insn_mean'],
                                'ops': v['ops'], 'chunk': v['chunk'], 'log': logf})
    if plan.get('phase_shift'):
        records += phase_records(plan, prefix, kernels, insn, machine)
    problems = []
    counted = {}
    so = plugin.build()
    with log.phase('plugin self-test (kmt-tagtest)'):
        errors, logf = plugin.selftest(*kernels['baseline'], os.path.join(paths.LOGS, 'bench'))
        problems += ['plugin self-test: %s (log %s)' % (e, os.path.relpath(logf, paths.REPO))
                     for e in errors]
        if not errors:
            log.info('plugin self-test: every count exact (log %s)'
                     % os.path.relpath(logf, paths.REPO))
        selftest = {'status': 'fail' if errors else 'pass', 'errors': errors,
                    'log': os.path.relpath(logf, paths.REPO)}
    # The counts come from the QEMU contrib plugin of patches/qemu (what
    # QEMU would ship); one boot is counted by kmt-count too, and every
    # region and call chain of the two must be identical.
    mte = plugin.build_contrib()
    plugin_check = None
    # The boot checked against kmt-count: the first with KASAN on, where
    # there are tag stores and call chains to compare.
    check_mode = next((m for m in plan['modes'] if m not in ('off', 'none')), plan['modes'][0])
    symbols = {}
    for mode in plan['modes']:
        for k in counted_kernels(kernels):
            with log.phase('plugin counts (contrib plugin mte): %s kernel, kasan %s' % (k, mode)):
                res, logf, out = _boot(k, *kernels[k], mode, plan['bench'], True,
                                       prefix + 'plugin', plugin_so=mte, machine=machine,
                                       cmdline=cmdline, contrib=True)
            if plugin_check is None and mode == check_mode:
                with log.phase('the same boot under kmt-count: %s kernel, kasan %s' % (k, mode)):
                    _, ref_logf, ref = _boot(k, *kernels[k], mode, plan['bench'], True,
                                             prefix + 'plugin-kmt-count', plugin_so=so,
                                             machine=machine, cmdline=cmdline)
                diffs = plugin.differences(ref, out)
                plugin_check = {'kernel': k, 'kasan': mode, 'logs': [ref_logf, logf],
                                'regions': len(out.regions),
                                'chains': sum(len(c) for c in out.chains.values()),
                                'differences': diffs,
                                'result': 'identical' if not diffs else 'differ'}
                problems += ['contrib plugin vs kmt-count, %s/%s: %s' % (k, mode, d)
                             for d in diffs]
                log.info('contrib plugin vs kmt-count, same boot: %s (%d regions, %d call '
                         'chains)' % (plugin_check['result'], plugin_check['regions'],
                                      plugin_check['chains']))
            with log.phase('plugin records: %s kernel, kasan %s' % (k, mode)):
                if out and k not in symbols:
                    symbols[k] = attrib.Symbols.load(bootspec.system_map(kernels[k][0]))
                recs = plugin_records(k, mode, res, out, logf, symbols.get(k)) if out else []
            records += recs
            counted[(k, mode)] = {(r['benchmark'], r['metric'], r.get('use')): r['value']
                                  for r in recs}
    problems += untagged_problems(records, same)
    if same:
        # Empty series: both kernels are built from the same tree, so the
        # counts must match exactly (a self-check of the harness).
        for (k, mode), res in insn.items():
            if k != 'baseline':
                continue
            other = insn[('patched', mode)]
            for b, v in res.items():
                if other.get(b, {}).get('insn_per_op') != v['insn_per_op']:
                    problems.append('empty series but %s/%s differs: %s vs %s' % (
                        b, mode, v['insn_per_op'], other.get(b, {}).get('insn_per_op')))
        for (k, mode), figs in counted.items():
            if k != 'baseline':
                continue
            other = counted.get(('patched', mode), {})
            for key, v in figs.items():
                if other.get(key) != v:
                    problems.append('empty series but plugin %s/%s/%s differs: %s vs %s' % (
                        key[0], key[1], mode, v, other.get(key)))
    for mode in plan['ratio_modes']:
        times = {k: [] for k in KERNELS}
        with log.phase('wall time, %d interleaved pairs, kasan %s' % (plan['pairs'], mode)):
            for i in range(plan['pairs']):
                for k in KERNELS:
                    res, _ = _boot(k, *kernels[k], mode, plan['bench'], False,
                                   '%stime%d' % (prefix, i), machine=machine,
                                   cmdline=cmdline)
                    times[k].append(res)
                log.info('   pair %d of %d done' % (i + 1, plan['pairs']))
        for b in times['baseline'][0]:
            ratios = [p[b]['ns_per_op'] / a[b]['ns_per_op']
                      for a, p in zip(times['baseline'], times['patched'])]
            # Best of N: host noise only ever adds time, so the fastest boot
            # of each kernel is the other robust estimate.
            best = {k: min(t[b]['ns_per_op'] for t in times[k]) for k in KERNELS}
            records.append({'benchmark': b, 'metric': 'time_ratio', 'kernel': 'patched/baseline',
                            'kasan': mode, 'cpu': targets.MACHINES[MACHINE].cpu,
                            'value': round(statistics.median(ratios), 4),
                            'min': round(min(ratios), 4), 'max': round(max(ratios), 4),
                            'pairs': [round(r, 4) for r in ratios],
                            'best_ratio': round(best['patched'] / best['baseline'], 4),
                            'ns_per_op': {k: [t[b]['ns_per_op'] for t in times[k]]
                                          for k in KERNELS}})
    if plan.get('refcount') and not same:
        try:
            records += refbench.run(kernels['patched'][1], quick=quick)
        except log.StepError as e:
            problems.append('refcount benchmark: %s' % e)
    result = dict(provenance(head, same, plan_name), **{
        'machine': machine,
        'config': plan.get('config', 'lean'),
        'cmdline': list(cmdline),
        'plugin_selftest': selftest,
        'plugin_check': plugin_check,
        'records': records,
        'problems': problems,
    })
    outdir = os.path.join(paths.RESULTS, 'bench')
    name = plan.get('output', 'results')
    if name == 'results':
        # Figures a lab sent back (make lava-import BOOT=...) stay with the run.
        labs = labresults.lab_bench_records()
        if labs:
            result['lab_records'] = labs
    results.write_json(os.path.join(outdir, name + '.json'), dict(result, phases=log.phases()))
    table = markdown_table(result)
    with open(os.path.join(outdir, name + '.md'), 'w') as f:
        f.write(table)
    return result, table


def phase_records(plan, prefix, kernels, insn, machine):
    """The counted boots again with kmt-bench -s plan['phase_shift']: per
    benchmark, kernel and mode, how far the per-operation count moved
    (insn_phase_spread, percent of the unshifted count)."""
    records = []
    shift = plan['phase_shift']
    bench = '-s,%d%s' % (shift, '' if plan['bench'] == 'all' else ',' + plan['bench'])
    for mode in plan['modes']:
        for k in counted_kernels(kernels):
            with log.phase('instruction counts, timer phase shifted (-s %d): %s kernel, kasan %s'
                           % (shift, k, mode)):
                res, logf = _boot(k, *kernels[k], mode, bench, True, prefix + 'icount-shift',
                                  machine=machine, cmdline=plan_cmdline(plan))
            for b, v in res.items():
                first = insn.get((k, mode), {}).get(b)
                if not first:
                    continue
                records.append(phase_record(b, k, mode, first['insn_per_op'], v['insn_per_op'],
                                            shift, logf))
    return records


def phase_record(b, kernel, mode, first, shifted, shift, logf):
    spread = abs(shifted - first) * 100.0 / first if first else 0.0
    return {'benchmark': b, 'metric': 'insn_phase_spread', 'kernel': kernel, 'kasan': mode,
            'cpu': targets.MACHINES[MACHINE].cpu, 'value': round(spread, 3),
            'unshifted': first, 'shifted': shifted, 'shift_loops': shift,
            'repeats': spread <= REPEAT_PCT, 'log': logf}


def repeats_cell(rp, base, patched):
    """The repeats column: '-' without a shifted boot, 'no (moves N%)'
    when a count moved more than REPEAT_PCT, else 'yes (N%)' with the
    largest move, and 'change unresolved' where the change is smaller
    than twice that move (the two boots of one kernel differ by nearly
    as much as the two kernels)."""
    if rp is None:
        return '-'
    ok, worst = rp
    if not ok:
        return 'no (moves %.1f%%)' % worst
    change = abs(patched - base) * 100.0 / base if base else 0.0
    if change and change < 2 * worst:
        return 'yes (%.2f%%; change unresolved)' % worst
    return 'yes (%.2f%%)' % worst


def repeats(result, b, mode):
    """Whether benchmark b's count in mode repeats under a timer-phase
    shift for every kernel measured; None when the run made no shifted
    boot."""
    recs = [r for r in result['records'] if r['metric'] == 'insn_phase_spread'
            and r['benchmark'] == b and r['kasan'] == mode and r['kernel'] in KERNELS]
    if not recs:
        return None
    return all(r['repeats'] for r in recs), max(r['value'] for r in recs)


def provenance(head, same, plan_name):
    """What a results file says about what was measured, and with what."""
    return {
        'date': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
        'base': source.base_version(),
        'series_head': source.git(['rev-parse', 'HEAD']).stdout.strip(),
        'series_ref': head,
        'series_empty': same,
        'plan': plan_name,
        # make compare MEASURE=1 measures every base in one run: the same
        # id on each base's results, and the tooling (harness and plugin
        # sources) they were measured with.
        'run_id': os.environ.get('KMT_RUN_ID') or None,
        'tooling': source.tooling_revision(),
    }


def refcount_only(plan, plan_name, kernels, head, same,
                  run_refbench=None, outdir=None, meta=None):
    """PLAN=refcount: part 3's benchmark (refbench) and nothing else; its
    results go to <output>.json / .md beside the default run's."""
    if same:
        raise log.StepError('the series is empty: no refcount_t change to measure')
    run_refbench = run_refbench or refbench.run
    problems = []
    try:
        records = run_refbench(kernels['patched'][1], plan=plan['refcount_only'],
                               **({'from_postings': True} if plan.get('from_postings')
                                  else {}))
    except log.StepError as e:
        records, problems = [], ['refcount benchmark: %s' % e]
    meta = meta if meta is not None else provenance(head, same, plan_name)
    result = dict(meta, records=records, problems=problems)
    outdir = outdir or os.path.join(paths.RESULTS, 'bench')
    results.write_json(os.path.join(outdir, plan['output'] + '.json'),
                       dict(result, phases=log.phases()))
    table = refbench.markdown_table(records)
    with open(os.path.join(outdir, plan['output'] + '.md'), 'w') as f:
        f.write(table)
    return result, table


def attrib_rows(profiles, ops, modes, shifted=None, blocks=None, shifted_blocks=None,
                layout=None, shifted_layout=None):
    """[(benchmark, mode, kasancost.attribute() of the first boot, repeat)]
    from {(mode, benchmark): {function: kernel instructions}} of the
    first boots (and of the shifted ones: repeat is how far the gap moved
    between the two, percent of the first; None without them); blocks,
    shifted_blocks: {(mode, benchmark): plugin.profile_by_block()} of the
    same boots, where kept (kasancost.HOOK_SITES); layout, shifted_layout:
    {benchmark: profile} of the layout reference kernel booted kasan=off
    (kasancost.LAYOUT), first and shifted boot."""
    def blocks_of(where, mode, b):
        return (where or {}).get((mode, b))
    rows = []
    for b in sorted({b for _, b in profiles}, key=lambda b: list(ops).index(b)):
        off = profiles.get(('off', b))
        if off is None:
            raise log.StepError('no kasan=off profile of %s: nothing to attribute against' % b)
        for mode in modes:
            if mode == 'off' or (mode, b) not in profiles:
                continue
            lay = (kasancost.layout_differences(off, layout[b], ops[b])
                   if layout and b in layout else None)
            a = kasancost.attribute(off, profiles[(mode, b)], ops[b],
                                    blocks_of(blocks, 'off', b), blocks_of(blocks, mode, b),
                                    layout=lay)
            rep = None
            if shifted is not None and ('off', b) in shifted and (mode, b) in shifted:
                lay2 = (kasancost.layout_differences(shifted[('off', b)], shifted_layout[b],
                                                     ops[b])
                        if shifted_layout and b in shifted_layout else None)
                again = kasancost.attribute(shifted[('off', b)], shifted[(mode, b)], ops[b],
                                            blocks_of(shifted_blocks, 'off', b),
                                            blocks_of(shifted_blocks, mode, b), layout=lay2)
                rep = (round(abs(again['gap'] - a['gap']) * 100.0 / abs(a['gap']), 2)
                       if a['gap'] else 0.0)
                a = dict(a, both_boots=kasancost.agreement(a, again))
            rows.append((b, mode, a, rep))
    return rows


def bench_names(bench):
    """The benchmark names of a plan's kmt.bench string, in its order
    (its options, e.g. -e,500, left out)."""
    return [b.split('=')[0] for b in bench.split(',') if '=' in b]


def _nest(profiles):
    """{(mode, benchmark): profile} as {mode: {benchmark: profile}} (JSON)."""
    out = {}
    for (mode, b), prof in profiles.items():
        out.setdefault(mode, {})[b] = prof
    return out


def attrib_rows_from_result(result, modes=MODES):
    """attrib_rows() again from the profiles a PLAN=attrib run kept in its
    JSON: the causes sorted by today's kasancost.CAUSES, nothing booted."""
    if 'profiles' not in result or 'ops' not in result:
        raise log.StepError('these attrib results keep no profiles (written before the '
                            'profiles were kept): run make bench PLAN=attrib again')

    def flat(nested):
        return {(m, b): p for m, per in (nested or {}).items() for b, p in per.items()}
    shifted = flat(result['profiles'].get('shifted'))
    blocks = result.get('blocks') or {}
    # The plan's order (JSON may have sorted the benchmarks by name).
    order = bench_names(ATTRIB_BENCH)
    ops = dict(sorted(result['ops'].items(),
                      key=lambda kv: (order.index(kv[0]) if kv[0] in order else len(order),
                                      kv[0])))
    layout = result['profiles'].get('layout') or {}
    return attrib_rows(flat(result['profiles']['first']), ops, modes,
                       shifted or None, flat(blocks.get('first')) or None,
                       flat(blocks.get('shifted')) or None,
                       layout.get('first') or None, layout.get('shifted') or None)


def attrib_only(plan, plan_name, apply, outdir=None):
    """PLAN=attrib: the patched kernel only, booted in every mode under the
    plugin's flat profile (profile=1), twice; the differences to kasan=off
    by cause (kmt/kasancost.py). Results in <output>.json / .md."""
    config = plan.get('config', 'lean')
    cmdline = plan_cmdline(plan)
    tag = source.ensure_base()
    if apply:
        source.apply_series(tag=tag)
    else:
        source.check_tree_as_is(tag)
    same = source.tree_is_base(baseline_ref(tag))
    image, initrd = build.build_all(config, tree='series', series_tests=not same)
    so = plugin.build()
    symbols = attrib.Symbols.load(bootspec.system_map(image))
    boots, block_boots, problems = profile_boots(
        'patched', image, initrd, plan['modes'], plan, plan_name + '-profile', so, cmdline,
        symbols, 'profile')
    ops = {}
    for (_, _, b), (n, _) in sorted(boots.items(), key=lambda kv: kv[0][0]):
        ops.setdefault(b, n)
    ops = {b: ops[b] for b in bench_names(plan['bench']) if b in ops}
    layout = {0: {}, 1: {}}
    if plan.get('layout_reference'):
        layout, more = layout_boots(plan, plan_name, config, cmdline, initrd, so)
        problems += more
    first = {(m, b): p for (s, m, b), (_, p) in boots.items() if s == 0}
    later = {(m, b): p for (s, m, b), (_, p) in boots.items() if s}
    first_blocks = {(m, b): p for (s, m, b), p in block_boots.items() if s == 0}
    later_blocks = {(m, b): p for (s, m, b), p in block_boots.items() if s}
    rows = attrib_rows(first, ops, plan['modes'], later or None, first_blocks,
                       later_blocks or None, layout[0] or None, layout[1] or None)
    result = dict(provenance(source.git(['rev-parse', 'HEAD']).stdout.strip(), same,
                             plan_name), **{
        'config': config, 'cmdline': list(cmdline), 'problems': problems,
        'rows': [{'benchmark': b, 'kasan': m, 'repeat_pct': rep, **a}
                 for b, m, a, rep in rows],
        # The flat profiles themselves, so that the causes can be sorted
        # again without booting (python3 -m kmt attrib-table).
        'ops': ops, 'profiles': {'first': _nest(first), 'shifted': _nest(later),
                                 'layout': {'first': layout[0], 'shifted': layout[1]}},
        'blocks': {'first': _nest(first_blocks), 'shifted': _nest(later_blocks)}})
    outdir = outdir or os.path.join(paths.RESULTS, 'bench')
    results.write_json(os.path.join(outdir, plan['output'] + '.json'),
                       dict(result, phases=log.phases()))
    table = kasancost.markdown(rows, result=result)
    with open(os.path.join(outdir, plan['output'] + '.md'), 'w') as f:
        f.write(table)
    return result, table


def profile_boots(kernel, image, initrd, modes, plan, tag, so, cmdline, symbols, label):
    """Boots of one kernel in each of modes under the plugin's flat profile
    (profile=1), and again with the timer phase shifted when the plan
    shifts it. Returns ({(shift, mode, benchmark): (ops, profile by
    function)}, {(shift, mode, benchmark): profile by block}, [problems
    of the profiles' own checks])."""
    boots, block_boots, problems = {}, {}, []
    shifts = (0,) + ((plan['phase_shift'],) if plan.get('phase_shift') else ())
    for shift in shifts:
        bench = plan['bench'] if not shift else '-s,%d,%s' % (shift, plan['bench'])
        for mode in modes:
            what = '%s, kasan %s%s' % (label, mode, ', timer phase shifted' if shift else '')
            with log.phase(what):
                res, logf, out = _boot(kernel, image, initrd, mode, bench, True,
                                       tag + ('-shift' if shift else ''),
                                       plugin_so=so, cmdline=cmdline, profile=True)
            problems += ['%s: %s (%s)' % (what, e, logf) for e in plugin.compare_profile(out)]
            regions = plugin.attribute(out.regions, [(b, v['ops']) for b, v in res.items()])
            for b, (ops, region) in regions.items():
                boots[(shift, mode, b)] = (ops, plugin.profile_by_function(
                    out, symbols, {region['region']}))
                block_boots[(shift, mode, b)] = plugin.profile_by_block(
                    out, symbols, {region['region']})
    return boots, block_boots, problems


def layout_boots(plan, plan_name, config, cmdline, initrd, so):
    """The layout reference of PLAN=attrib-gki: the series with the plan's
    layout_reference patch on a throw-away branch, built as the plan's
    config, booted kasan=off under the flat profile, first and shifted
    boot. Returns ({0: {benchmark: profile}, 1: {...}} (1: shifted),
    [problems])."""
    patch = os.path.join(paths.REPO, plan['layout_reference'])
    out = build.out_dir(config + '-layout', 'bench')
    logfile = os.path.join(paths.LOGS, 'build-bench-%s-layout.log' % config)
    with source.checked_out('HEAD', branch='kmt-layout-reference'):
        source.am_or_abort([patch], 'the series')
        with log.phase('build the layout reference kernel (%s + %s)'
                       % (config, os.path.basename(patch))):
            image = build.build_kernel(targets.CONFIGS[config], paths.SRC, out, logfile)
    symbols = attrib.Symbols.load(bootspec.system_map(image))
    boots, _, problems = profile_boots('layout', image, initrd, ('off',), plan,
                                       plan_name + '-layout', so, cmdline, symbols,
                                       'layout reference')
    got = {0: {}, 1: {}}
    for (shift, _, b), (_, prof) in boots.items():
        got[1 if shift else 0][b] = prof
    return got, problems


def untagged_checks(records, same, base_untagged=None, series_untags=None):
    """The series' promise, checked on the plugin's chains: with kasan on,
    the patched kernel stores no tag for a kernel stack or a page table.
    The baseline must show such tag stores in the benchmarks that create
    them, or the attribution itself is broken (checked both ways), unless
    the base as shipped already leaves them untagged (base_untagged,
    default: the base's Base.untagged_stacks, mainline 7.3): then both
    kernels must store none. A 'reverted' kernel (Base.reverted_dir) must
    show them, and read TFSR_EL1 in a sync-mode system call: else its
    patches do not undo the base's own version. Returns [(name, problem
    or None)], one per record checked. A series without part 2 yet
    (series_untags false, default: Base.series_untags) is checked as the
    baseline: its patched kernel must show those tag stores too."""
    if base_untagged is None:
        base_untagged = paths.BASE.untagged_stacks
    if series_untags is None:
        series_untags = paths.BASE.series_untags
    checks = []
    for r in records:
        if (r['kernel'] == REVERTED and r['metric'] == 'tfsr_reads_per_op'
                and r['kasan'] == 'sync' and r['benchmark'] == 'getpid'):
            # Part 1 undone: a system call in sync mode reads TFSR_EL1 again.
            checks.append(('getpid/sync/tfsr-reverted', None if r['value'] else
                           'reverted kernel, kasan sync, getpid: no TFSR_EL1 read '
                           '(the revert does not undo the base\'s own gating)'))
        if r['metric'] != 'tag_stores_use_per_op' or r['kasan'] == 'off':
            continue
        b, k, mode, use, v = r['benchmark'], r['kernel'], r['kasan'], r['use'], r['value']
        name = '%s/%s/%s' % (b, mode, use)
        untagging = k == 'patched' and not same and series_untags
        want_zero = use in attrib.UNTAGGED and k != REVERTED and (base_untagged or untagging)
        if want_zero:
            checks.append((name + ('-untagged' if k == 'patched' else '-untagged-base'),
                           None if not v else
                           '%s kernel, kasan %s, %s: %s %s tag stores per op (want 0)'
                           % (k, mode, b, v, use)))
        elif (k == 'baseline' or (k == 'patched' and not series_untags)) \
                and EXPECT_BASELINE_USE.get(b) == use:
            checks.append((name + ('-attributed' if k == 'baseline' else '-still-tagged'),
                           None if v else
                           '%s kernel, kasan %s, %s: no %s tag stores attributed '
                           '(the attribution rules no longer match this kernel)'
                           % (k, mode, b, use)))
        if k == REVERTED and EXPECT_BASELINE_USE.get(b) == use:
            # The base with its own version undone must tag again what the
            # version stopped tagging, or the revert is not one.
            checks.append((name + '-reverted', None if v else
                           'reverted kernel, kasan %s, %s: no %s tag stores '
                           '(the revert does not undo the base\'s own skip)' % (mode, b, use)))
    return checks


def untagged_problems(records, same, base_untagged=None, series_untags=None):
    """The failed untagged_checks, as problem strings."""
    return [p for _, p in untagged_checks(records, same, base_untagged, series_untags) if p]


def _fmt_pct(new, old):
    return '%+.1f%%' % ((new - old) * 100.0 / old) if old else '-'


def markdown_table(result):
    """Per benchmark and kasan mode: baseline, patched, kasan=off, change
    and the share of the gap to kasan=off that the series closed."""
    by = {}
    for r in result['records']:
        if r['metric'] == 'insn_per_op' and r['kernel'] in KERNELS:
            by[(r['benchmark'], r['kasan'], r['kernel'])] = r['value']
    benches = sorted({b for b, _, _ in by}, key=lambda b: [r['benchmark'] for r in
                                                          result['records']].index(b))
    modes = [m for m in MODES if any(k[1] == m for k in by)]
    shifted = any(r['metric'] == 'insn_phase_spread' for r in result['records'])
    lines = ['Instructions per operation (exact: -icount shift=0, guest PMU, 1 vCPU)',
             '',
             '| benchmark | kasan | baseline | patched | change | kasan=off | gap closed |' +
             (' repeats |' if shifted else ''),
             '|---|---|---:|---:|---:|---:|---:|' + ('---|' if shifted else '')]
    for b in benches:
        off = by.get((b, 'off', 'patched'))
        for m in modes:
            base, pat = by.get((b, m, 'baseline')), by.get((b, m, 'patched'))
            if base is None or pat is None:
                continue
            closed = '-'
            if m != 'off' and off is not None and base - off > 0.5:
                closed = '%.0f%%' % ((base - pat) * 100.0 / (base - off))
            row = '| %s | %s | %.1f | %.1f | %s | %s | %s |' % (
                b, m, base, pat, _fmt_pct(pat, base),
                '%.1f' % off if off is not None else '-', closed)
            if shifted:
                row += ' %s |' % repeats_cell(repeats(result, b, m), base, pat)
            lines.append(row)
    lines += plugin_table(result)
    lines += use_table(result)
    ratios = [r for r in result['records'] if r['metric'] == 'time_ratio'
              and r['kernel'] == 'patched/baseline']
    if ratios:
        lines += ['', 'TCG wall time, patched/baseline, interleaved pairs (< 1: faster; '
                  'ratio: median over pairs, min and max of them; best: fastest patched boot '
                  'over fastest baseline boot)', '',
                  '| benchmark | kasan | ratio | min | max | best | pairs |',
                  '|---|---|---:|---:|---:|---:|---:|']
        for r in ratios:
            best = '%.3f' % r['best_ratio'] if 'best_ratio' in r else '-'
            lines.append('| %s | %s | %.3f | %.3f | %.3f | %s | %d |' % (
                r['benchmark'], r['kasan'], r['value'], r['min'], r['max'], best,
                len(r['pairs'])))
    rc = refbench.markdown_table(result['records'])
    if rc:
        lines += ['', rc.rstrip('\n')]
    lab = lab_table(result.get('lab_records', ()))
    if lab:
        lines += ['', lab.rstrip('\n')]
    if shifted:
        lines += ['', 'repeats: the same kernels booted again with kmt-bench -s %d (that many '
                  'loop iterations before each benchmark, which moves where the timer '
                  'interrupts fall, and, on the kernel command line, changes the '
                  'kernel\'s random numbers) count within %.1f%% of the figures above, '
                  'the largest move in brackets; "change unresolved": the change is '
                  'smaller than twice that move; "no": not a measurement.'
                  % (PHASE_SHIFT_LOOPS, REPEAT_PCT)]
    lines += ['', 'Base %s, series %s%s.' % (result['base'], result['series_head'][:12],
                                             ' (empty series)' if result['series_empty'] else '')]
    return '\n'.join(lines) + '\n'


def lab_table(records):
    """The figures labs sent back (make lava-import BOOT=...), one row per
    benchmark, mode, kernel and lab job."""
    if not records:
        return ''
    lines = ['Measured in LAVA labs (the exported benchmark jobs; ns_per_op from wall-time '
             'boots, insn_per_op from exact-count ones)', '',
             '| benchmark | kasan | kernel | figure | value | lab | device | job |',
             '|---|---|---|---|---:|---|---|---|']
    for r in records:
        lines.append('| %s | %s | %s | %s | %s | %s | %s | %s |' % (
            r['benchmark'], r['kasan'], r['kernel'], r['metric'], r['value'], r['lab'],
            r['device'], r['job']))
    return '\n'.join(lines) + '\n'


def use_table(result):
    """Kernel tag stores per operation by what they tag (baseline ->
    patched), from the plugin's call chains, in the first kasan mode
    measured after off (sync)."""
    by = {(r['benchmark'], r['kasan'], r['kernel'], r['use']): r for r in result['records']
          if r['metric'] == 'tag_stores_use_per_op'}
    modes = [m for m in MODES if m != 'off' and any(k[1] == m for k in by)]
    if not modes:
        return []
    mode = modes[0]
    benches = list(dict.fromkeys(k[0] for k in by if k[1] == mode))
    uses = [u for u in attrib.USES if any(k[3] == u and by[k]['value'] for k in by)]

    def fmt(v):
        return '%.0f' % v if v >= 100 or v == 0 else '%.1f' % v
    lines = ['', 'Kernel tag stores per operation by what they tag, kasan %s, baseline -> '
             'patched (call chains of %s, symbolized with System.map; uses: '
             'kmt/attrib.py RULES)' % (mode, plugin_name(result)), '',
             '| benchmark | ' + ' | '.join(u.replace('_', ' ') for u in uses) + ' |',
             '|---|' + '---:|' * len(uses)]
    for b in benches:
        cells = []
        for u in uses:
            base, pat = by.get((b, mode, 'baseline', u)), by.get((b, mode, 'patched', u))
            cells.append('%s -> %s' % (fmt(base['value']) if base else '-',
                                       fmt(pat['value']) if pat else '-'))
        lines.append('| %s | %s |' % (b, ' | '.join(cells)))
    return lines


def plugin_name(result):
    """Which plugin counted a run's figures, as its tables name it."""
    check = result.get('plugin_check')
    if check:
        return ('the QEMU contrib plugin mte of patches/qemu; kmt-count on the same boot: %s'
                % check['result'])
    return 'kmt-count TCG plugin'


def plugin_table(result):
    """Tag stores, barriers and TFSR_EL1 reads per operation (kernel, from
    the plugin): baseline and patched, and the kasan=off limit."""
    by = {}
    for r in result['records']:
        by[(r['benchmark'], r['kasan'], r['kernel'], r['metric'])] = r['value']
    if not any(k[3] == 'tag_stores_per_op' for k in by):
        return []
    benches = []
    for r in result['records']:
        if r['metric'] == 'tag_stores_per_op' and r['benchmark'] not in benches:
            benches.append(r['benchmark'])
    modes = [m for m in MODES if any(k[1] == m and k[3] == 'tag_stores_per_op' for k in by)]

    def fmt(b, m, k, metric):
        v = by.get((b, m, k, metric))
        if v is None:
            return '-'
        return '%.0f' % v if v >= 100 else '%.1f' % v if v >= 10 else '%.2f' % v
    lines = ['', 'Kernel tag stores, barriers and TFSR_EL1 reads per operation '
             '(exact: %s, 1 vCPU; tag stores = STG family + STGP + '
             'DC GVA + DC GZVA; barriers = DSB + ISB)' % plugin_name(result), '',
             '| benchmark | kasan | tag stores baseline | patched | barriers baseline '
             '| patched | kasan=off | TFSR reads baseline | patched |',
             '|---|---|---:|---:|---:|---:|---:|---:|---:|']
    for b in benches:
        for m in modes:
            if (b, m, 'baseline', 'tag_stores_per_op') not in by:
                continue
            lines.append('| %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
                b, m, fmt(b, m, 'baseline', 'tag_stores_per_op'),
                fmt(b, m, 'patched', 'tag_stores_per_op'),
                fmt(b, m, 'baseline', 'barriers_per_op'), fmt(b, m, 'patched', 'barriers_per_op'),
                fmt(b, 'off', 'patched', 'barriers_per_op'),
                fmt(b, m, 'baseline', 'tfsr_reads_per_op'),
                fmt(b, m, 'patched', 'tfsr_reads_per_op')))
    return lines
