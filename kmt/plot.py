"""The benchmark results as a PNG: per kasan mode, each benchmark's
instructions per operation on the baseline and the patched kernel,
relative to kasan=off (1.0 = the cost without KASAN; the patched bar's
drop towards 1.0 is what the series saves).

matplotlib comes from Debian (python3-matplotlib), so the drawing runs
in the system interpreter: `python3 kmt/plot.py results.json out.png` or
plot.write_png() from the tooling, which finds that interpreter."""

import json
import os
import shutil
import subprocess
import sys

SYSTEM_PYTHONS = ('/usr/bin/python3',)
MODES = ('sync', 'async', 'asymm')


def relative_costs(result):
    """{mode: [(benchmark, baseline/off, patched/off)]} from results.json;
    benchmarks in the order they ran, modes without data left out."""
    val, order = {}, []
    for r in result['records']:
        if r['metric'] != 'insn_per_op':
            continue
        val[(r['benchmark'], r['kasan'], r['kernel'])] = r['value']
        if r['benchmark'] not in order:
            order.append(r['benchmark'])
    out = {}
    for m in MODES:
        rows = []
        for b in order:
            off = val.get((b, 'off', 'baseline'))
            base, pat = val.get((b, m, 'baseline')), val.get((b, m, 'patched'))
            if off and base is not None and pat is not None:
                rows.append((b, base / off, pat / off))
        if rows:
            out[m] = rows
    return out


def draw(result, png):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    data = relative_costs(result)
    if not data:
        raise SystemExit('no instruction counts with kasan=off to compare with')
    fig, axes = plt.subplots(1, len(data), figsize=(5 * len(data), 4.2), squeeze=False,
                             sharey=True)
    for ax, (mode, rows) in zip(axes[0], data.items()):
        xs = range(len(rows))
        w = 0.38
        ax.bar([x - w / 2 for x in xs], [r[1] for r in rows], w, label='baseline',
               color='#c44e52')
        ax.bar([x + w / 2 for x in xs], [r[2] for r in rows], w, label='patched',
               color='#4c72b0')
        ax.axhline(1.0, color='black', linewidth=0.8, linestyle='--')
        ax.set_xticks(list(xs))
        ax.set_xticklabels([r[0] for r in rows], rotation=30, ha='right')
        ax.set_title('kasan.mode=%s' % mode)
        ax.grid(axis='y', alpha=0.3)
    axes[0][0].set_ylabel('instructions per op / kasan=off')
    axes[0][0].legend(loc='upper left')
    fig.suptitle('Exact instructions per operation relative to kasan=off '
                 '(-icount shift=0, 1 vCPU; base %s)' % result.get('base', '?'), fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def system_python():
    """An interpreter that has matplotlib (Debian's python3-matplotlib)."""
    cands = [p for p in SYSTEM_PYTHONS if os.path.exists(p)] + \
        [p for p in (shutil.which('python3'),) if p]
    for p in cands:
        if subprocess.run([p, '-c', 'import matplotlib'], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0:
            return p
    return None


def write_png(results_json, png):
    """Draw; returns None on success, else why not (the caller reports it)."""
    py = system_python()
    if not py:
        return 'no Python with matplotlib (install python3-matplotlib)'
    res = subprocess.run([py, os.path.abspath(__file__), results_json, png],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if res.returncode != 0 or not os.path.exists(png):
        return 'plot failed: %s' % res.stdout.strip()[-300:]
    return None


if __name__ == '__main__':
    with open(sys.argv[1]) as f:
        draw(json.load(f), sys.argv[2])
