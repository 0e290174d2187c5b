"""Bases side by side: the benchmark results of every base (make bench,
or the QUICK run of make check: build/results/bench/results.json and
build/<base>/results/bench/results.json) in one table per figure, one
column per base and kernel (reverted: the base with its own version of
the series undone, where Base.reverted_dir gives one; baseline: the base
as shipped; patched: with that base's series). The counts are exact
(-icount shift=0, the guest PMU and the kmt-count plugin), so runs of
different bases compare as long as they measured the same plan (QUICK or
full sizes).

make compare MEASURE=1 (compare --measure) measures every base in one run
first: make bench of each base in turn, with the same run id and the same
tooling, then the table; the table says whether its columns come from
one run or from separate ones."""

import datetime
import json
import os
import subprocess
import sys

from . import attrib, bases, log, paths

# (metric, title, format) of the per-operation figures shown.
FIGURES = (
    ('insn_per_op', 'Instructions per operation (guest PMU)', '%.1f'),
    ('barriers_per_op', 'Barriers (DSB, ISB, DMB) per operation (plugin)', '%.2f'),
    ('tfsr_reads_per_op', 'TFSR_EL1 reads per operation (plugin)', '%.2f'),
    ('tag_stores_per_op', 'Tag stores per operation (plugin)', '%.1f'),
    ('tagged_bytes_per_op', 'Tagged bytes per operation (plugin: STG 16, ST2G 32, '
     'DC GVA/GZVA one DCZID block, STGM/STZGM per GMID)', '%.0f'),
)
KERNEL_NAMES = {'reverted': 'own parts reverted', 'baseline': 'as shipped', 'patched': 'series'}


def results_path(base_name):
    """Where make bench writes its results for a base (paths.py layout)."""
    root = paths.BUILD if base_name == bases.DEFAULT else os.path.join(paths.BUILD, base_name)
    return os.path.join(root, 'results', 'bench', 'results.json')


def load(base_names=None):
    """{base name: results} for every base that has bench results."""
    found = {}
    for name in base_names or bases.BASES:
        p = results_path(name)
        if os.path.exists(p):
            with open(p) as f:
                found[name] = json.load(f)
    return found


def bench_commands(plan_name, run_id):
    """[(base name, argv, environment changes)] of a one-run measurement:
    make bench of every base, in table order."""
    argv = [sys.executable, '-m', 'kmt', 'bench', '--plan', plan_name]
    return [(name, argv, {'KMT_BASE': name, 'KMT_RUN_ID': run_id}) for name in bases.BASES]


def measure(plan_name='quick', runner=subprocess.run):
    """Measure every base in one run; returns the run id. A base whose
    bench fails stops the run (its error is in its own log)."""
    run_id = '%s-%d' % (datetime.datetime.now(datetime.timezone.utc)
                        .strftime('%Y%m%dT%H%M%SZ'), os.getpid())
    for name, argv, env in bench_commands(plan_name, run_id):
        with log.phase('bench of base %s (plan %s, run %s)' % (name, plan_name, run_id)):
            res = runner(argv, cwd=paths.REPO, env=dict(os.environ, **env))
            if res.returncode != 0:
                raise log.StepError('make bench of base %s failed (exit %d): see its '
                                    'output above' % (name, res.returncode))
    return run_id


def provenance(runs):
    """One line: whether the results come from one run (make compare
    MEASURE=1: one run id, one tooling revision) or from separate ones."""
    ids = {r.get('run_id') for r in runs.values()}
    tools = {r.get('tooling') for r in runs.values()}
    if len(ids) == 1 and None not in ids and len(tools) == 1:
        return 'Measured in one run (%s, tooling %s): `make compare MEASURE=1`.' % (
            ids.pop(), tools.pop())
    return ('Separate runs (%s): `make compare MEASURE=1` measures every base in one run.'
            % '; '.join('%s %s, tooling %s' % (b, r.get('date', '?'), r.get('tooling') or '?')
                        for b, r in runs.items()))


def _columns(runs):
    return [(b, k) for b in runs for k in KERNEL_NAMES
            if any(r['kernel'] == k for r in runs[b]['records'])]


def _fmt(fmt, v):
    return '-' if v is None else fmt % v


def markdown(runs):
    """The side-by-side tables (markdown) of runs = {base: results}."""
    if not runs:
        raise log.StepError('no bench results of any base: run make bench (or make check)')
    plans = {b: r.get('plan') for b, r in runs.items()}
    if len(set(plans.values())) > 1:
        raise log.StepError('the bases were measured with different plans (%s): '
                            'compare runs of the same plan' % plans)
    cols = _columns(runs)
    val, benches, modes = {}, [], []
    for b, res in runs.items():
        for r in res['records']:
            key = (b, r['kernel'], r['benchmark'], r['kasan'], r['metric'], r.get('use'))
            val[key] = r['value']
            if r['benchmark'] not in benches:
                benches.append(r['benchmark'])
            if r['kasan'] not in modes:
                modes.append(r['kasan'])
    head = '| benchmark | kasan | ' + ' | '.join(
        '%s %s' % (b, KERNEL_NAMES[k]) for b, k in cols) + ' |'
    rule = '|---|---|' + '---:|' * len(cols)
    lines = ['Bases side by side (plan %s): %s.' % (
        list(plans.values())[0], '; '.join('%s = Debian %s' % (b, r.get('base'))
                                           for b, r in runs.items())),
             '', provenance(runs)]
    for metric, title, fmt in FIGURES:
        lines += ['', title, '', head, rule]
        for bench in benches:
            for m in modes:
                cells = [val.get((b, k, bench, m, metric, None)) for b, k in cols]
                if all(c is None for c in cells):
                    continue
                lines.append('| %s | %s | %s |' % (bench, m, ' | '.join(
                    _fmt(fmt, c) for c in cells)))
    lines += ['', 'Tag stores per operation by use, kasan on (plugin call chains)', '',
              '| benchmark | kasan | use | ' + head.split('| kasan | ', 1)[1],
              '|---|---|---|' + '---:|' * len(cols)]
    for bench in benches:
        for m in modes:
            if m == 'off':
                continue
            for use in attrib.USES:
                cells = [val.get((b, k, bench, m, 'tag_stores_use_per_op', use))
                         for b, k in cols]
                if all(not c for c in cells):
                    continue
                lines.append('| %s | %s | %s | %s |' % (bench, m, use, ' | '.join(
                    _fmt('%.1f', c) for c in cells)))
    return '\n'.join(lines) + '\n'
