"""make bench, refcount part: atomic_t vs the generic refcount_t vs the
arm64 fast path, exact instructions per operation on LSE (-cpu max) and
LL/SC (-cpu cortex-a72), vmlinux .text sizes, and interleaved wall-time
A/B ratios (fast path / generic).

The loops live in a benchmark-only kernel patch (bench/, never part of
the series): lib/refcount_bench.c runs each operation N times at boot
(refcount_bench.iters=N) and prints the virtual time of each loop, which
under -icount shift=0 is its instruction count, and the same less an
empty loop. It is applied on a throw-away branch on top of the series
and built twice from the lean config: fast path on and off."""

import os
import re
import statistics
import subprocess

from . import bases, bootspec, build, log, paths, plugin, qemu, source, targets

# The benchmark patch of each base: bench/ for the default base, bench/<base>/
# for another (its lib/Makefile differs).
BENCH_PATCHES = os.path.join(paths.REPO, 'bench', *(
    () if paths.BASE_NAME == bases.DEFAULT else (paths.BASE_NAME,)))
BRANCH = 'refcount-bench'
# kernel variant -> its configuration (targets.CONFIGS)
VARIANTS = {'fastpath': 'refbench-fastpath', 'generic': 'refbench-generic'}
CPUS = (('max', 'mte'), ('cortex-a72', 'llsc'))
OPS = ('inc', 'add', 'dec', 'dec_and_test', 'sub_and_test', 'inc_not_zero',
       'dec_and_test_final', 'timing')
# full: make bench's default run; idle: make bench PLAN=refcount, for an
# otherwise idle host, where wall-time ratios repeat within a few percent.
PLANS = {'full': {'iters': 200000, 'pairs': 3}, 'quick': {'iters': 20000, 'pairs': 1},
         'idle': {'iters': 200000, 'pairs': 9}}
BOOT_TIMEOUT_S = 600

_LINE = re.compile(r'refcount_bench: (\S+)\s+n=(\d+) ns=(\d+) per_iter=([0-9.]+) '
                   r'net=(-?[0-9.]+)')


def parse(lines):
    """{name: {'n', 'ns', 'per_iter', 'net'}} from a console log, in the
    order printed (that of the plugin's regions); raises StepError unless
    the run finished."""
    out, done = {}, False
    for l in lines:
        m = _LINE.search(l)
        if m:
            out[m.group(1)] = {'n': int(m.group(2)), 'ns': int(m.group(3)),
                               'per_iter': float(m.group(4)), 'net': float(m.group(5))}
        elif 'refcount_bench: done' in l:
            done = True
    if not done or not out:
        raise log.StepError('refcount benchmark did not finish (no "refcount_bench: done")')
    return out


def text_size(vmlinux):
    res = subprocess.run([paths.CROSS_COMPILE + 'size', '-A', vmlinux],
                         stdout=subprocess.PIPE, text=True, check=True)
    for l in res.stdout.splitlines():
        f = l.split()
        if f and f[0] == '.text':
            return int(f[1])
    raise log.StepError('no .text in %s' % vmlinux)


def build_kernels():
    """Build both variants from series + benchmark patch; returns
    {variant: (image, vmlinux)}. The kernel tree's branch is restored."""
    patches = sorted(p for p in os.listdir(BENCH_PATCHES) if p.endswith('.patch'))
    out = {}
    with source.checked_out('HEAD', branch=BRANCH):
        source.am_or_abort([os.path.join(BENCH_PATCHES, p) for p in patches], 'the series')
        for v in VARIANTS:
            cfg = targets.CONFIGS[VARIANTS[v]]
            o = build.out_dir(cfg.name, 'bench')
            logfile = os.path.join(paths.LOGS, 'build-bench-%s.log' % cfg.name)
            with log.phase('build %s kernel (%s)' % (cfg.name, ' '.join(cfg.fragments))):
                image = build.build_kernel(cfg, paths.SRC, o, logfile)
            out[v] = (image, os.path.join(o, 'vmlinux'))
    return out


def tb_counts(parsed, regions):
    """{name: (tb, tb_xpage)} per loop iteration, kernel side: the plugin's
    n-th region after the first is the n-th loop the benchmark printed (the
    first is the empty loop it runs once, unprinted, as the baseline)."""
    names = list(parsed)
    regions = regions[1:]
    if len(regions) != len(names):
        raise log.StepError('the plugin saw %d marked region(s) but the benchmark printed %d '
                            'loop(s)' % (len(regions), len(names)))
    out = {}
    for name, reg in zip(names, regions):
        n = parsed[name]['n']
        c = reg['counts']
        out[name] = (c['tb'][1] / n, c['tb_xpage'][1] / n)
    return out


def _boot(variant, image, initrd, cpu, machine_name, iters, icount, tag, plugin_so=None):
    logfile = os.path.join(paths.LOGS, 'bench', 'refcount-%s-%s-%s.log' % (variant, cpu, tag))
    counts = logfile[:-len('.log')] + '.counts'
    extra = ()
    if plugin_so:
        if os.path.exists(counts):
            os.unlink(counts)
        extra = tuple(plugin.qemu_args(plugin_so, counts, tbpages=True))
    spec = bootspec.BootSpec(name='refcount-%s-%s-%s' % (variant, cpu, tag), image=image,
                             initrd=initrd, machine=machine_name, kasan='off',
                             cmdline=('refcount_bench.iters=%d' % iters,), smp=1,
                             icount=icount, seed=1, qemu_extra=extra,
                             timeout_s=BOOT_TIMEOUT_S, logfile=logfile)
    res = qemu.run(spec, echo=False).check()
    parsed = parse(res.lines)
    tbs = None
    if plugin_so:
        tbs = tb_counts(parsed, plugin.read_output(counts, res.lines).regions)
    return parsed, os.path.relpath(logfile, paths.REPO), tbs


def run(initrd, quick=False, plan=None):
    """Returns the records for results.json."""
    plan = PLANS[plan or ('quick' if quick else 'full')]
    kernels = build_kernels()
    # The exact-count boots also load the plugin (it does not change what
    # -icount counts): translation blocks and page-crossing jumps per loop.
    so = plugin.build()
    records = []
    for v, (_, vmlinux) in kernels.items():
        records.append({'benchmark': 'refcount', 'metric': 'text_bytes', 'kernel': v,
                        'kasan': 'off', 'cpu': '-', 'value': text_size(vmlinux)})
    for cpu, mname in CPUS:
        for v, (image, _) in kernels.items():
            with log.phase('refcount instruction counts: %s, cpu %s' % (v, cpu)):
                res, logf, tbs = _boot(v, image, initrd, cpu, mname, plan['iters'], True,
                                       'icount', plugin_so=so)
            for op in OPS:
                for kind in ('atomic', 'refcount'):
                    name = '%s_%s' % (kind, op)
                    r = res.get(name)
                    if r is None:
                        continue
                    rec = {'benchmark': 'refcount_' + op, 'kasan': 'off', 'cpu': cpu,
                           'kernel': v if kind == 'refcount' else 'atomic_t', 'log': logf}
                    records.append(dict(rec, metric='insn_per_op', value=r['net'],
                                        per_iter=r['per_iter'], ops=r['n']))
                    # atomic_t: the same code in both kernels, but not at the
                    # same place (atomic_t/<kernel>)
                    tb, xpage = tbs[name]
                    if kind == 'atomic':
                        rec['kernel'] = 'atomic_t/' + v
                    records.append(dict(rec, metric='tb_per_iter', value=round(tb, 3)))
                    records.append(dict(rec, metric='tb_xpage_per_iter', value=round(xpage, 3)))
    # Wall time, fast path / generic, interleaved.
    for cpu, mname in CPUS:
        times = {v: [] for v in kernels}
        with log.phase('refcount wall time, %d interleaved pairs, cpu %s' % (plan['pairs'], cpu)):
            for i in range(plan['pairs']):
                for v, (image, _) in kernels.items():
                    res, _, _ = _boot(v, image, initrd, cpu, mname, plan['iters'], False,
                                      'time%d' % i)
                    times[v].append(res)
        records += time_ratios(times['fastpath'], times['generic'], cpu)
    return records


def time_ratios(fast, generic, cpu):
    """Wall-time records from interleaved boots ([parsed] per kernel, in
    boot order). Per operation: fast / generic per pair, and the same
    normalised by the atomic_t loop of that operation, which ran just
    before it in the same boot and is the same code in both kernels, so
    that a change of host speed between or within boots cancels out
    (what is left still includes where the code lies: see tb_xpage)."""
    out = []
    for op in OPS:
        name, same = 'refcount_' + op, 'atomic_' + op
        pairs = [(f, g) for f, g in zip(fast, generic)
                 if name in f and name in g and g[name]['ns']]
        ratios = [f[name]['ns'] / g[name]['ns'] for f, g in pairs]
        if not ratios:
            continue
        rec = {'benchmark': name, 'metric': 'time_ratio', 'kernel': 'fastpath/generic',
               'kasan': 'off', 'cpu': cpu, 'value': round(statistics.median(ratios), 4),
               'min': round(min(ratios), 4), 'max': round(max(ratios), 4),
               'pairs': [round(r, 4) for r in ratios]}
        both = [(f, g) for f, g in pairs if same in f and same in g
                and f[same]['ns'] and g[same]['ns']]
        if both:
            atomic = [f[same]['ns'] / g[same]['ns'] for f, g in both]
            norm = [(f[name]['ns'] / f[same]['ns']) / (g[name]['ns'] / g[same]['ns'])
                    for f, g in both]
            rec['atomic_t'] = {'median': round(statistics.median(atomic), 4),
                               'min': round(min(atomic), 4), 'max': round(max(atomic), 4)}
            rec['normalised'] = {'median': round(statistics.median(norm), 4),
                                 'min': round(min(norm), 4), 'max': round(max(norm), 4)}
        out.append(rec)
    return out


def markdown_table(records):
    """atomic_t / generic / fast path per operation and CPU, with the fast
    path's change against the generic code; .text sizes; time ratios."""
    by = {(r['benchmark'], r['cpu'], r['kernel']): r['value'] for r in records
          if r['metric'] == 'insn_per_op' and r['benchmark'].startswith('refcount_')}
    if not by:
        return ''
    lines = ['refcount_t: instructions per operation, loop overhead removed (exact: '
             '-icount shift=0, kasan=off, 1 vCPU; atomic_t from the fast-path kernel)', '',
             '| operation | cpu | atomic_t | generic | fast path | fast vs generic |',
             '|---|---|---:|---:|---:|---:|']
    for op in OPS:
        b = 'refcount_' + op
        for cpu, _ in CPUS:
            a = by.get((b, cpu, 'atomic_t'))
            g, f = by.get((b, cpu, 'generic')), by.get((b, cpu, 'fastpath'))
            if g is None or f is None:
                continue
            lines.append('| %s | %s | %s | %.2f | %.2f | %s |' % (
                op, cpu, '%.2f' % a if a is not None else '-', g, f,
                '%+.1f%%' % ((f - g) * 100.0 / g) if g else '-'))
    text = {r['kernel']: r['value'] for r in records if r['metric'] == 'text_bytes'}
    if text:
        lines += ['', 'vmlinux .text: generic %d bytes, fast path %d bytes (%+d)' % (
            text.get('generic', 0), text.get('fastpath', 0),
            text.get('fastpath', 0) - text.get('generic', 0))]
    tb = {(r['benchmark'], r['cpu'], r['kernel'], r['metric']): r['value'] for r in records
          if r['metric'] in ('tb_per_iter', 'tb_xpage_per_iter')}
    if tb:
        lines += ['', 'TCG translation blocks per loop iteration, and among them those entered '
                  'from a block on another 4 KiB page (no direct chaining: a lookup each; '
                  'kmt-count plugin, tbpages=1)', '',
                  '| operation | cpu | generic blocks | generic cross-page | '
                  'fast path blocks | fast path cross-page | atomic_t cross-page '
                  '(generic / fast path kernel) |',
                  '|---|---|---:|---:|---:|---:|---:|']
        for op in OPS:
            b = 'refcount_' + op
            for cpu, _ in CPUS:
                row = [tb.get((b, cpu, k, m)) for k in ('generic', 'fastpath')
                       for m in ('tb_per_iter', 'tb_xpage_per_iter')]
                if None in row:
                    continue
                at = [tb.get((b, cpu, 'atomic_t/' + k, 'tb_xpage_per_iter'))
                      for k in ('generic', 'fastpath')]
                lines.append('| %s | %s | %s | %s |' % (
                    op, cpu, ' | '.join('%.2f' % x for x in row),
                    ' / '.join('-' if x is None else '%.2f' % x for x in at)))
    ratios = [r for r in records if r['metric'] == 'time_ratio'
              and r['kernel'] == 'fastpath/generic']
    if ratios:
        lines += ['', 'TCG wall time, fast path / generic, interleaved boots (< 1: faster; '
                  'atomic_t: the same ratio for the atomic_t loop before it, the same code '
                  'in both kernels; normalised: the ratio divided by that one, pair by pair)',
                  '',
                  '| operation | cpu | ratio | min | max | atomic_t (min-max) | normalised '
                  '(min-max) | pairs |',
                  '|---|---|---:|---:|---:|---:|---:|---:|']

        def rng(d):
            return '%.3f (%.2f-%.2f)' % (d['median'], d['min'], d['max']) if d else '-'
        for r in ratios:
            lines.append('| %s | %s | %.3f | %.3f | %.3f | %s | %s | %d |' % (
                r['benchmark'][len('refcount_'):], r['cpu'], r['value'], r['min'], r['max'],
                rng(r.get('atomic_t')), rng(r.get('normalised')), len(r['pairs'])))
    return '\n'.join(lines) + '\n'
