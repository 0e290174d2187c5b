"""Bases side by side: the benchmark results of every base (make bench,
or the QUICK run of make check: build/results/bench/results.json and
build/<base>/results/bench/results.json) in one table per figure, one
column per base and kernel (baseline: the base as shipped; patched: with
that base's series). The counts are exact (-icount shift=0, the guest
PMU and the kmt-count plugin), so runs of different bases compare as long
as they measured the same plan (QUICK or full sizes)."""

import json
import os

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
KERNEL_NAMES = {'baseline': 'as shipped', 'patched': 'series'}


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


def _columns(runs):
    return [(b, k) for b in runs for k in ('baseline', 'patched')
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
                                           for b, r in runs.items()))]
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
