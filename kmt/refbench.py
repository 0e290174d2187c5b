"""make bench, refcount part: atomic_t and refcount_t as shipped, with
the series' one-comparison checks, and with the LL/SC immediate too:
exact instructions per operation on LSE (-cpu max) and LL/SC (-cpu
cortex-a72), vmlinux .text sizes, and interleaved wall-time A/B ratios
(series / shipped).

The loops live in a benchmark-only kernel patch (bench/, never part of
the series): lib/refcount_bench.c runs each operation N times at boot
(refcount_bench.iters=N) and prints the virtual time of each loop, which
under -icount shift=0 is its instruction count, and the same less an
empty loop. It is applied on a throw-away branch on top of the series
and built three times from the lean config: the series, then with the
LL/SC immediate reverted, then with the one-comparison checks reverted
too (the refcount_t code as the base ships it)."""

import os
import re
import shutil
import statistics
import subprocess

from . import bases, bootspec, build, log, paths, plugin, qemu, source, targets

# The benchmark patch of each base: bench/ for the default base, bench/<base>/
# for another (its lib/Makefile differs).
BENCH_PATCHES = os.path.join(paths.REPO, 'bench', *(
    () if paths.BASE_NAME == bases.DEFAULT else (paths.BASE_NAME,)))
BRANCH = 'refcount-bench'
CONFIG = 'refbench'
# The series' part 3 commits, by the start of their subjects, and the
# kernels built from the series with some of them reverted, in build
# order (each reverts what the one before did, and more): name, label,
# commits reverted.
ONE_CMP = 'locking/refcount: Check positive constant amounts with one comparison'
LLSC_IMM = 'arm64: atomics: Use an immediate for LL/SC sub of a positive constant'
VARIANTS = (
    ('series', '+ LL/SC imm', ()),
    ('onecmp', 'one comparison', (LLSC_IMM,)),
    ('shipped', 'as shipped', (LLSC_IMM, ONE_CMP)),
)
VARIANT_NAMES = tuple(v[0] for v in VARIANTS)
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


def text_size(vmlinux, size=paths.CROSS_COMPILE + 'size'):
    res = subprocess.run([size, '-A', vmlinux],
                         stdout=subprocess.PIPE, text=True, check=True)
    for l in res.stdout.splitlines():
        f = l.split()
        if f and f[0] == '.text':
            return int(f[1])
    raise log.StepError('no .text in %s' % vmlinux)


def commits_to_revert(log_lines, subjects):
    """The commits (newest first, as git revert wants them) of `log_lines`
    ('<sha> <subject>', newest first) whose subjects start with one of
    `subjects`; StepError unless each subject matches exactly one."""
    found = []
    for subj in subjects:
        hits = [l.split(' ', 1)[0] for l in log_lines if l.split(' ', 1)[1:2]
                and l.split(' ', 1)[1].startswith(subj)]
        if len(hits) != 1:
            raise log.StepError('%d commits of the series start with "%s" (want 1): '
                                'the refcount benchmark cannot build its kernels'
                                % (len(hits), subj))
        found += hits
    order = [l.split(' ', 1)[0] for l in log_lines]
    return sorted(found, key=order.index)


def posting_patch(subject, patch_dir=None):
    """The patch file of the posting (patches/BASE/postings/NAME/, in the
    order of its series file) with this subject; StepError if none or
    more than one has it. (Read from the files: kmt.postings imports
    what imports this module.)"""
    found = []
    root = os.path.join(patch_dir or paths.PATCHES, 'postings')
    for name in sorted(os.listdir(root)) if os.path.isdir(root) else ():
        series = os.path.join(root, name, 'series')
        if not os.path.exists(series):
            continue
        with open(series) as f:
            names = [l.strip() for l in f if l.strip() and not l.startswith('#')]
        for n in names:
            with open(os.path.join(root, name, n)) as f:
                if not n.startswith('0000-') and source.patch_subject(f.read()) == subject:
                    found.append(os.path.join(root, name, n))
    if len(found) != 1:
        raise log.StepError('%d postings carry "%s" (want 1): the refcount benchmark '
                            'cannot build its kernels from the postings' % (len(found), subject))
    return found[0]


# PLAN=refcount-postings: the base as shipped with only the postings of
# part 3 applied, as a list reader would build them (the series carries
# other postings too). Name, label, postings applied (by commit subject),
# in build order.
POSTING_VARIANTS = (
    ('shipped', 'as shipped', ()),
    ('onecmp', 'one comparison', (ONE_CMP,)),
    ('series', '+ LL/SC imm', (ONE_CMP, LLSC_IMM)),
    ('imm', 'LL/SC imm alone', (LLSC_IMM,)),
)
# bloat-o-meter pairs of that plan: before, after, what each posting's
# message quotes.
POSTING_BLOAT = (('shipped', 'onecmp'), ('onecmp', 'series'), ('shipped', 'imm'))


def build_from_postings(x86=True):
    """The POSTING_VARIANTS kernels: the base tag + the benchmark patch,
    then each posting's patch on top (the last variant reverts the first
    posting); returns what build_kernels() does."""
    patches = sorted(p for p in os.listdir(BENCH_PATCHES) if p.endswith('.patch'))
    out = {}
    cfg = targets.CONFIGS[CONFIG]
    tag = source.base_tag()
    with source.checked_out(tag, branch=BRANCH + '-postings'):
        source.am_or_abort([os.path.join(BENCH_PATCHES, p) for p in patches], tag)
        applied = []
        for v, label, subjects in POSTING_VARIANTS:
            for subj in applied[:]:
                if subj not in subjects:
                    sha = source.git(['log', '-1', '--format=%H', '-F', '--grep=' + subj]
                                     ).stdout.strip()
                    log.info('%s kernel: git revert %s' % (v, sha[:12]))
                    source.git(['revert', '--no-edit', sha])
                    applied.remove(subj)
            for subj in subjects:
                if subj not in applied:
                    source.am_or_abort([posting_patch(subj)], tag)
                    applied.append(subj)
            o = build.out_dir('%s-postings-%s' % (cfg.name, v), 'bench')
            logfile = os.path.join(paths.LOGS, 'build-bench-postings-%s.log' % v)
            with log.phase('build the %s kernel (%s; %s)' % (v, label, ' '.join(cfg.fragments))):
                image = build.build_kernel(cfg, paths.SRC, o, logfile, tree='base')
            out[v] = (image, os.path.join(o, 'vmlinux'))
            if x86 and v in X86_VARIANTS:
                xlog = os.path.join(paths.LOGS, 'build-bench-postings-x86_64-%s.log' % v)
                with log.phase('build the x86_64 %s kernel (%s; %s)' % (v, label, X86_CONFIG)):
                    out[(X86_CPU, v)] = build_x86(v, xlog, 'postings-')
    return out


def build_kernels(x86=True, from_postings=False):
    """Build the variants from series + benchmark patch; returns
    {variant: (image, vmlinux)}, and {('x86_64', variant): ...} for the
    x86_64 kernels. The kernel tree's branch is restored. from_postings:
    build_from_postings() instead."""
    if from_postings:
        return build_from_postings(x86)
    patches = sorted(p for p in os.listdir(BENCH_PATCHES) if p.endswith('.patch'))
    out = {}
    cfg = targets.CONFIGS[CONFIG]
    with source.checked_out('HEAD', branch=BRANCH):
        tag = source.base_tag()
        lines = source.git(['log', '--format=%H %s', '%s..HEAD' % tag]).stdout.splitlines()
        source.am_or_abort([os.path.join(BENCH_PATCHES, p) for p in patches], 'the series')
        reverted = set()
        for v, label, reverts in VARIANTS:
            todo = [c for c in commits_to_revert(lines, reverts) if c not in reverted]
            for c in todo:
                log.info('%s kernel: git revert %s' % (v, c[:12]))
                source.git(['revert', '--no-edit', c])
                reverted.add(c)
            o = build.out_dir('%s-%s' % (cfg.name, v), 'bench')
            logfile = os.path.join(paths.LOGS, 'build-bench-%s-%s.log' % (cfg.name, v))
            with log.phase('build the %s kernel (%s; %s)' % (v, label, ' '.join(cfg.fragments))):
                image = build.build_kernel(cfg, paths.SRC, o, logfile)
            out[v] = (image, os.path.join(o, 'vmlinux'))
            if x86 and v in X86_VARIANTS:
                xlog = os.path.join(paths.LOGS, 'build-bench-x86_64-%s.log' % v)
                with log.phase('build the x86_64 %s kernel (%s; %s)' % (v, label, X86_CONFIG)):
                    out[(X86_CPU, v)] = build_x86(v, xlog)
    return out


# ---- x86_64: the same benchmark, the generic code on another architecture

X86_CONFIG = 'x86_64-refbench.config'
# On x86_64 the LL/SC immediate changes nothing: two kernels.
X86_VARIANTS = ('series', 'shipped')
X86_CPU = 'x86_64'


def x86_env(base=None):
    """The environment of an x86_64 build: the fixed build identity, the
    host's own compiler (no CROSS_COMPILE)."""
    env = dict(os.environ if base is None else base)
    env.update(build.KERNEL_ENV)
    env['ARCH'] = 'x86_64'
    env.pop('CROSS_COMPILE', None)
    return env


def build_x86(variant, logfile, prefix=''):
    """The x86_64 kernel of a variant from the tree as checked out
    (allnoconfig + configs/x86_64-refbench.config, the host's gcc)."""
    out = build.out_dir('refbench-x86_64-' + prefix + variant, 'bench')
    os.makedirs(out, exist_ok=True)
    env = x86_env()
    frag = os.path.join(paths.CONFIGS, X86_CONFIG)
    log.run([os.path.join(paths.SRC, 'scripts/kconfig/merge_config.sh'), '-O', out, '-n', frag],
            logfile=logfile, cwd=paths.SRC, env=env)
    with open(os.path.join(out, '.config')) as f:
        have = build.parse_config(f)
    bad = build.config_mismatches(build.requested([frag]), have)
    if bad:
        raise log.StepError('x86_64 config: %s' % ', '.join('%s=%s (got %s)' % b for b in bad))
    cc = 'ccache gcc' if build._ccache() else 'gcc'
    log.run(['make', '-j' + build.jobs(), 'O=' + out, 'ARCH=x86_64', 'CC=' + cc, 'bzImage'],
            logfile=logfile, cwd=paths.SRC, env=env)
    image = os.path.join(out, 'arch', 'x86', 'boot', 'bzImage')
    if not os.path.exists(image):
        raise log.StepError('no bzImage after the build (log: %s)' % logfile)
    return image, os.path.join(out, 'vmlinux')


def x86_command(image, iters, icount):
    """qemu-system-x86_64 for one benchmark boot: TCG, one vCPU, no
    initramfs (the kernel panics after the benchmark and QEMU exits)."""
    cmd = ['qemu-system-x86_64', '-machine', 'pc', '-accel', 'tcg', '-cpu', 'max',
           '-smp', '1', '-m', '256', '-nographic', '-no-reboot', '-nic', 'none',
           '-kernel', image,
           '-append', 'console=ttyS0 panic=-1 refcount_bench.iters=%d' % iters]
    if icount:
        cmd += ['-icount', 'shift=0,sleep=off', '-seed', '1']
    return cmd


def boot_x86(variant, image, iters, icount, tag):
    logfile = os.path.join(paths.LOGS, 'bench', 'refcount-%s-%s-%s.log' % (variant, X86_CPU,
                                                                          tag))
    os.makedirs(os.path.dirname(logfile), exist_ok=True)
    cmd = x86_command(image, iters, icount)
    log.show_cmd(cmd)
    try:
        res = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, errors='replace',
                             timeout=BOOT_TIMEOUT_S)
        text = res.stdout
    except subprocess.TimeoutExpired as e:
        text = (e.stdout or b'').decode('utf-8', 'replace') if isinstance(e.stdout, bytes) \
            else (e.stdout or '')
        text += '\n[kmt] timeout after %d s\n' % BOOT_TIMEOUT_S
    with open(logfile, 'w') as f:
        f.write(text)
    return parse(text.splitlines()), os.path.relpath(logfile, paths.REPO)


_BLOAT_SUMMARY = re.compile(r'^add/remove: \S+ grow/shrink: \S+ up/down: \S+ \((-?\d+)\)$')
_BLOAT_TOTAL = re.compile(r'^Total: Before=(\d+), After=(\d+), chg (\S+)$')


def parse_bloat(text):
    """(summary line, bytes changed, before, after) from bloat-o-meter's
    output; StepError without them."""
    summary = total = None
    for l in text.splitlines():
        l = l.strip()
        if _BLOAT_SUMMARY.match(l):
            summary = l
        m = _BLOAT_TOTAL.match(l)
        if m:
            total = (int(m.group(1)), int(m.group(2)))
    if summary is None or total is None:
        raise log.StepError('bloat-o-meter printed no summary')
    return summary, int(_BLOAT_SUMMARY.match(summary).group(1)), total[0], total[1]


def bloat(before, after, arch, prefix, kernel='series/shipped'):
    """scripts/bloat-o-meter -t (text symbols) between two vmlinux, as a
    record (kernel: after/before); its full output in the logs."""
    cmd = [os.path.join(paths.SRC, 'scripts', 'bloat-o-meter'), '-t'] + \
        (['-p', prefix] if prefix else []) + [before, after]
    log.show_cmd(cmd)
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    logfile = os.path.join(paths.LOGS, 'bench', 'bloat-o-meter-%s%s.txt' % (
        arch, '' if kernel == 'series/shipped' else '-' + kernel.replace('/', '-')))
    os.makedirs(os.path.dirname(logfile), exist_ok=True)
    with open(logfile, 'w') as f:
        f.write('$ %s\n%s' % (' '.join(cmd), res.stdout))
    summary, chg, b, a = parse_bloat(res.stdout)
    return {'benchmark': 'refcount', 'metric': 'bloat_text', 'kernel': kernel,
            'kasan': 'off', 'cpu': arch, 'value': chg, 'before': b, 'after': a,
            'summary': summary, 'log': os.path.relpath(logfile, paths.REPO)}


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


def run(initrd, quick=False, plan=None, from_postings=False):
    """Returns the records for results.json (from_postings: the kernels
    of build_from_postings())."""
    plan = PLANS[plan or ('quick' if quick else 'full')]
    x86 = bool(shutil.which('qemu-system-x86_64'))
    if not x86:
        log.warn('no qemu-system-x86_64 (make setup): the refcount benchmark runs on '
                 'arm64 only')
    built = build_kernels(x86=x86, from_postings=from_postings)
    kernels = {v: k for v, k in built.items() if isinstance(v, str)}
    # The exact-count boots also load the plugin (it does not change what
    # -icount counts): translation blocks and page-crossing jumps per loop.
    so = plugin.build()
    records = []
    for v, (_, vmlinux) in kernels.items():
        records.append({'benchmark': 'refcount', 'metric': 'text_bytes', 'kernel': v,
                        'kasan': 'off', 'cpu': '-', 'value': text_size(vmlinux)})
    records.append(bloat(kernels['shipped'][1], kernels['series'][1], 'arm64',
                         paths.CROSS_COMPILE))
    if from_postings:
        for before, after in POSTING_BLOAT:
            records.append(bloat(kernels[before][1], kernels[after][1], 'arm64',
                                 paths.CROSS_COMPILE, kernel='%s/%s' % (after, before)))
    if (X86_CPU, 'shipped') in built and (X86_CPU, 'series') in built:
        records.append(bloat(built[(X86_CPU, 'shipped')][1], built[(X86_CPU, 'series')][1],
                             X86_CPU, ''))
    for v in X86_VARIANTS:
        if (X86_CPU, v) not in built:
            continue
        image, vmlinux = built[(X86_CPU, v)]
        records.append({'benchmark': 'refcount', 'metric': 'text_bytes', 'kernel': v,
                        'kasan': 'off', 'cpu': X86_CPU, 'value': text_size(vmlinux, 'size')})
        with log.phase('refcount instruction counts: %s, %s' % (v, X86_CPU)):
            res, logf = boot_x86(v, image, plan['iters'], True, 'icount')
        records += insn_records(res, v, X86_CPU, logf)
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
                    # atomic_t per kernel (atomic_t/<kernel>): the LL/SC
                    # immediate changes atomic_dec() and atomic_sub*() too,
                    # and the same code need not lie at the same place.
                    rec = {'benchmark': 'refcount_' + op, 'kasan': 'off', 'cpu': cpu,
                           'kernel': v if kind == 'refcount' else 'atomic_t/' + v,
                           'log': logf}
                    records.append(dict(rec, metric='insn_per_op', value=r['net'],
                                        per_iter=r['per_iter'], ops=r['n']))
                    tb, xpage = tbs[name]
                    records.append(dict(rec, metric='tb_per_iter', value=round(tb, 3)))
                    records.append(dict(rec, metric='tb_xpage_per_iter', value=round(xpage, 3)))
    # Wall time, series / shipped, interleaved.
    for cpu, mname in CPUS:
        times = {v: [] for v in ('series', 'shipped')}
        with log.phase('refcount wall time, %d interleaved pairs, cpu %s' % (plan['pairs'], cpu)):
            for i in range(plan['pairs']):
                for v in times:
                    res, _, _ = _boot(v, kernels[v][0], initrd, cpu, mname, plan['iters'],
                                      False, 'time%d' % i)
                    times[v].append(res)
        records += time_ratios(times['series'], times['shipped'], cpu)
    return records


def insn_records(res, variant, cpu, logf):
    """insn_per_op records of one boot's parsed output."""
    out = []
    for op in OPS:
        for kind in ('atomic', 'refcount'):
            r = res.get('%s_%s' % (kind, op))
            if r is not None:
                out.append({'benchmark': 'refcount_' + op, 'kasan': 'off', 'cpu': cpu,
                            'kernel': variant if kind == 'refcount' else 'atomic_t/' + variant,
                            'log': logf, 'metric': 'insn_per_op', 'value': r['net'],
                            'per_iter': r['per_iter'], 'ops': r['n']})
    return out


def time_ratios(fast, generic, cpu):
    """Wall-time records from interleaved boots ([parsed] per kernel, in
    boot order). Per operation: series / shipped per pair, and the same
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
        rec = {'benchmark': name, 'metric': 'time_ratio', 'kernel': 'series/shipped',
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
    """Per operation and CPU: atomic_t and refcount_t in each kernel, and
    the series' change against the shipped code; .text sizes; page
    crossings; time ratios."""
    by = {(r['benchmark'], r['cpu'], r['kernel']): r['value'] for r in records
          if r['metric'] == 'insn_per_op' and r['benchmark'].startswith('refcount_')}
    if not by:
        return ''
    labels = [label for _, label, _ in VARIANTS[::-1]]
    # x86_64 has no LL/SC: its series kernel is the one-comparison one.
    lines = ['refcount_t: instructions per operation, loop overhead removed (exact: '
             '-icount shift=0, kasan=off, 1 vCPU). atomic_t: as shipped / with the series '
             '(the LL/SC immediate changes atomic_dec() and atomic_sub*() too).', '',
             '| operation | cpu | atomic_t | %s | series vs shipped |' % ' | '.join(labels),
             '|---|---|---:|' + '---:|' * len(labels) + '---:|']
    for op in OPS:
        b = 'refcount_' + op
        for cpu in [c for c, _ in CPUS] + [X86_CPU]:
            vals = [by.get((b, cpu, v)) for v in VARIANT_NAMES[::-1]]
            old, new = vals[0], vals[-1]
            if old is None or new is None:
                continue
            at = [by.get((b, cpu, 'atomic_t/' + k)) for k in ('shipped', 'series')]
            lines.append('| %s | %s | %s | %s | %s |' % (
                op, cpu, ' / '.join('-' if x is None else '%.2f' % x for x in at),
                ' | '.join('-' if x is None else '%.2f' % x for x in vals),
                '%+.2f (%+.1f%%)' % (new - old, (new - old) * 100.0 / old) if old else '-'))
    for cpu, arch in (('-', 'arm64'), (X86_CPU, X86_CPU)):
        text = {r['kernel']: r['value'] for r in records
                if r['metric'] == 'text_bytes' and r['cpu'] == cpu}
        if text:
            lines += ['', '%s vmlinux .text (size -A): %s' % (arch, ', '.join(
                '%s %d bytes' % (label, text[v]) for v, label, _ in VARIANTS[::-1]
                if v in text))]
    labels = {v: label for v, label, _ in POSTING_VARIANTS}
    for r in records:
        if r['metric'] == 'bloat_text':
            after, _, before = r.get('kernel', 'series/shipped').partition('/')
            pair = ('shipped -> series' if (after, before) == ('series', 'shipped') else
                    '%s -> %s' % (labels.get(before, before), labels.get(after, after)))
            lines += ['', '%s scripts/bloat-o-meter -t, %s (lean config): %s; '
                      'text symbols %d -> %d bytes' % (r['cpu'], pair, r['summary'],
                                                       r['before'], r['after'])]
    tb = {(r['benchmark'], r['cpu'], r['kernel'], r['metric']): r['value'] for r in records
          if r['metric'] in ('tb_per_iter', 'tb_xpage_per_iter')}
    if tb:
        lines += ['', 'TCG translation blocks per loop iteration, and among them those entered '
                  'from a block on another 4 KiB page (no direct chaining: a lookup each; '
                  'kmt-count plugin, tbpages=1)', '',
                  '| operation | cpu | shipped blocks | shipped cross-page | '
                  'series blocks | series cross-page | atomic_t cross-page '
                  '(shipped / series kernel) |',
                  '|---|---|---:|---:|---:|---:|---:|']
        for op in OPS:
            b = 'refcount_' + op
            for cpu, _ in CPUS:
                row = [tb.get((b, cpu, k, m)) for k in ('shipped', 'series')
                       for m in ('tb_per_iter', 'tb_xpage_per_iter')]
                if None in row:
                    continue
                at = [tb.get((b, cpu, 'atomic_t/' + k, 'tb_xpage_per_iter'))
                      for k in ('shipped', 'series')]
                lines.append('| %s | %s | %s | %s |' % (
                    op, cpu, ' | '.join('%.2f' % x for x in row),
                    ' / '.join('-' if x is None else '%.2f' % x for x in at)))
    ratios = [r for r in records if r['metric'] == 'time_ratio'
              and r['kernel'] == 'series/shipped']
    if ratios:
        lines += ['', 'TCG wall time, series / shipped, interleaved boots (< 1: faster; '
                  'atomic_t: the same ratio for the atomic_t loop before it; normalised: '
                  'the ratio divided by that one, pair by pair)',
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
