"""The series' KUnit suites run by the kernel's own kunit.py, as reviewers
run them, and compared case by case with kmt's boots of the same suites.

kunit.py (tools/testing/kunit/kunit.py of the kernel tree with the
series) builds one arm64 kernel from the kunitconfigs this repository
ships (kunit/kunitconfigs/, concatenated: kunit.py --kunitconfig
repeated) and boots it once per run below with `kunit.py exec`, on the
MTE qemu_config (kunit/qemu_configs/arm64_mte.py, QEMU 10, TCG only).
Each run names the cell of the matrix that boots the same suite (same
KASAN mode, or kernel tag checks off in both; same number of CPUs; the
options the suite's cases need); its per-case statuses must equal that
cell's in the same make check, or the run fails with the differences.

The kasan suite's detection is probabilistic under HW_TAGS (random 4-bit
tags): a case that fails here only is run again on its own with QEMU
seeds (one vCPU, -icount) and a command line of another length each
(bootspec.rerun_param: what makes them draw other tags), and counts as a
tag collision only if most of those pass, as kmt's own reruns do
(matrix.rerun_case).

ALL=1 make check runs this after the matrix; `python3 -m kmt kunitpy`
runs it against the last make check's results (build/results/)."""

import dataclasses
import json
import os
import shutil
import subprocess
from typing import Tuple

from . import bootspec, build, log, paths, postproof, results, source, targets

KUNIT_DIR = os.path.join(paths.REPO, 'kunit')
KUNITCONFIGS = os.path.join(KUNIT_DIR, 'kunitconfigs')
QEMU_CONFIG = os.path.join(KUNIT_DIR, 'qemu_configs', 'arm64_mte.py')
OUT_NAME = 'kunitpy-cell'
TIMEOUT_S = 1500
RERUN_SEEDS = (1, 2, 3)


@dataclasses.dataclass(frozen=True)
class Run:
    name: str
    suite: str                     # the KUnit suite (kunit.py's filter glob)
    kmt_suite: str                 # its name in targets.SUITES
    cell: str                      # the cell of the matrix that runs it
    kernel_args: Tuple[str, ...] = ()


RUNS = (
    Run('refcount', 'refcount', 'refcount', 'refcount-lse', ('kasan.mode=sync',)),
    # kunit.py's kernel (HW_TAGS booted with kasan=off) has CPU hotplug
    # for the suite's hotplug case; the lean kernel of cell kasan-off has
    # none (that case skips there), the distribution kernel of distro
    # has it: kernel tag checks are off in both, TCMA1 must be set.
    Run('arm64_mte', 'arm64_mte', 'arm64-mte', 'distro', ('kasan=off',)),
    Run('kasan-sync', 'kasan', 'kasan', 'sync', ('kasan.mode=sync',)),
)
# Every kunitconfig in kunit/kunitconfigs/, in name order.
CONFIG_NAMES = ('arm64_mte', 'kasan_hw_tags', 'refcount')


def kunitconfig_paths():
    return [os.path.join(KUNITCONFIGS, n + '.kunitconfig') for n in CONFIG_NAMES]


find_cell = postproof.find_cell


def qemu_args(cell, extra=()):
    """kunit.py --qemu_args for a cell's machine: its CPU count (the
    qemu_config gives the machine and CPU model; kunit.py gives 1 GiB, as
    the cells have)."""
    m = targets.MACHINES[cell.machine]
    if m.mem_mb != 1024:
        raise log.StepError('kunit.py run as cell %s: kunit.py boots with 1024 MiB, the '
                            'cell with %d' % (cell.name, m.mem_mb))
    return ['-smp %d' % m.smp] + list(extra)


def common_args(build_dir):
    return (['--arch=arm64', '--build_dir=' + build_dir, '--qemu_config=' + QEMU_CONFIG] +
            postproof.kunit_compiler_args('arm64', shutil.which('ccache') is not None) +
            ['--kunitconfig=' + p for p in kunitconfig_paths()])


def build_command(build_dir):
    return ['python3', 'tools/testing/kunit/kunit.py', 'build'] + common_args(build_dir) + \
        ['--jobs=%s' % build.jobs()]


def exec_command(build_dir, run, cell, json_file, test_filter=None, extra_qemu=(),
                 extra_kernel_args=()):
    return (['python3', 'tools/testing/kunit/kunit.py', 'exec'] + common_args(build_dir) +
            ['--timeout=%d' % TIMEOUT_S, '--json=' + json_file] +
            ['--qemu_args=' + a for a in qemu_args(cell, extra_qemu)] +
            ['--kernel_args=' + a for a in run.kernel_args + tuple(extra_kernel_args)] +
            [test_filter or run.suite])


def _group_status(group):
    """A parameterized case (a sub-group of kunit_json) from its
    parameters, as KUnit reports it: failed if one failed or crashed,
    skipped if every one was, passed otherwise; None without any. The
    group's own counts (misc) are not in every kernel's kunit_json (6.12
    writes none)."""
    leaves = [c.get('status') for c in group.get('test_cases', ())]
    subs = [_group_status(g) for g in group.get('sub_groups', ())]
    if not leaves and not subs:
        return None
    if any(st not in ('PASS', 'SKIP') for st in leaves) or results.FAIL in subs or None in subs:
        return results.FAIL
    if all(st == 'SKIP' for st in leaves) and all(st == results.SKIP for st in subs):
        return results.SKIP
    return results.PASS


def case_statuses(data, suite):
    """{case: 'pass'/'fail'/'skip'} of one suite in kunit_json output (what
    kunit.py --json and kmt's <cell log>.kunit.json hold), or None if the
    suite is not in it. A parameterized case with no parameter reported
    is a failure."""
    status = {'PASS': results.PASS, 'SKIP': results.SKIP}
    stack = [data]
    while stack:
        node = stack.pop()
        if node.get('name') == suite:
            out = {c['name']: status.get(c.get('status'), results.FAIL)
                   for c in node.get('test_cases', ())}
            for g in node.get('sub_groups', ()):
                out[g['name']] = _group_status(g) or results.FAIL
            return out
        stack.extend(node.get('sub_groups', ()))
    return None


def record_statuses(record, kmt_suite):
    """{case: status} of one suite in a matrix record (after kmt's seeded
    reruns; an expected failure counts as a failure)."""
    out = {}
    for t in record['tests']:
        if t['suite'] == kmt_suite and t['name'] != '(suite)':
            st = t['status']
            out[t['name']] = results.FAIL if st == results.XFAIL else st
    return out


def differences(kunitpy, kmt):
    """[(case, kunit.py's status, kmt's status)] where the two runs differ
    (None: the case is missing from that run)."""
    return [(c, kunitpy.get(c), kmt.get(c)) for c in sorted(set(kunitpy) | set(kmt))
            if kunitpy.get(c) != kmt.get(c)]


def describe(diffs):
    return '; '.join('%s: kunit.py %s, kmt %s' % (c, a or 'missing', b or 'missing')
                     for c, a, b in diffs)


def summary(statuses):
    n = {}
    for st in statuses.values():
        n[st] = n.get(st, 0) + 1
    return ', '.join('%d %s' % (n[k], k) for k in sorted(n))


def _run(cmd, logfile, env, json_file=None):
    """Run a kunit.py command in the kernel tree (held, shared: nothing
    checks another commit out meanwhile); with json_file, that file is
    removed first, so that a run that writes none cannot be read as the
    last one's."""
    if json_file and os.path.exists(json_file):
        os.unlink(json_file)
    log.show_cmd(cmd, paths.SRC)
    with source.tree_lock(what='kunit.py'), open(logfile, 'a') as lf:
        lf.write('$ %s\n' % ' '.join(cmd))
        lf.flush()
        return subprocess.run(cmd, cwd=paths.SRC, env=env, stdout=lf,
                              stderr=subprocess.STDOUT, text=True).returncode


def _load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def collisions(diffs, run, cell, build_dir, logfile, env, out_dir):
    """The differences left after a seeded rerun of each kasan case that
    failed here only; [(case, detail)] of the tag collisions found."""
    left, found = [], []
    for case, here, there in diffs:
        suite = targets.SUITES[run.kmt_suite]
        if not (suite.probabilistic and here == results.FAIL and there == results.PASS):
            left.append((case, here, there))
            continue
        passes = 0
        for seed in RERUN_SEEDS:
            jf = os.path.join(out_dir, '%s-%s-seed%d.kunit.json' % (run.name, case, seed))
            _run(exec_command(build_dir, run, cell, jf, '%s.%s' % (run.suite, case),
                              ('-smp 1 -icount shift=0,sleep=off -seed %d' % seed,),
                              (bootspec.rerun_param(seed),)),
                 logfile, env, jf)
            got = case_statuses(_load(jf) or {}, run.suite) or {}
            passes += got.get(case) == results.PASS
        if passes * 2 > len(RERUN_SEEDS):
            found.append((case, 'tag collision: failed once, passed %d of %d seeded reruns'
                          % (passes, len(RERUN_SEEDS))))
        else:
            left.append((case, here, there))
    return left, found


def record(cell_records):
    """The kunit.py record: one test per run of RUNS, compared with the
    records of the matrix run that came before (cell_records)."""
    by_cell = {r['cell']: r for r in cell_records}
    build_dir = os.path.join(paths.OUT, OUT_NAME)
    # kunit.py makes the build directory, not its parents.
    os.makedirs(paths.OUT, exist_ok=True)
    out_dir = os.path.join(paths.RESULTS, 'kunitpy')
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(paths.LOGS, exist_ok=True)
    logfile = os.path.join(paths.LOGS, 'kunitpy.log')
    open(logfile, 'w').close()
    env = dict(os.environ, PATH=os.path.join(KUNIT_DIR, 'bin') + ':' + os.environ['PATH'])
    tests, problems = [], []
    with log.phase('kunit.py build (arm64, %s), log %s'
                   % (' + '.join(CONFIG_NAMES), os.path.relpath(logfile, paths.REPO))):
        rc = _run(build_command(build_dir), logfile, env)
    if rc != 0:
        problems.append(results.problem('build', 'kunit.py build failed (rc %d), log %s'
                                        % (rc, os.path.relpath(logfile, paths.REPO))))
        return results.record('kunit.py', ['kunit.py'], 'sync,off', tests,
                              problems, os.path.relpath(logfile, paths.REPO))
    for run in RUNS:
        cell = find_cell(run.cell)
        json_file = os.path.join(out_dir, run.name + '.kunit.json')
        with log.phase('kunit.py exec %s (as cell %s)' % (run.suite, cell.name)):
            rc = _run(exec_command(build_dir, run, cell, json_file), logfile, env, json_file)
        here = case_statuses(_load(json_file) or {}, run.suite)
        rec = by_cell.get(run.cell)
        detail = ''
        if not here:
            why = 'kunit.py reported no result for suite %s (exit code %d)' % (run.suite, rc)
        elif rec is None:
            why = 'no run of cell %s to compare with (make check first)' % run.cell
        else:
            kmt = record_statuses(rec, run.kmt_suite)
            diffs, found = collisions(differences(here, kmt), run, cell, build_dir,
                                      logfile, env, out_dir)
            why = ('differs from cell %s: %s' % (run.cell, describe(diffs))) if diffs else ''
            detail = 'same as cell %s: %d cases (%s)%s' % (
                run.cell, len(here), summary(here), ''.join('; %s %s' % f for f in found))
        tests.append(results.test('kunit.py', run.name,
                                  results.FAIL if why else results.PASS, why or detail))
        log.info('kunit.py %s: %s' % (run.name, why or detail))
    return results.record('kunit.py', ['kunit.py'], 'sync,off', tests,
                          problems, os.path.relpath(logfile, paths.REPO))


def last_check_records():
    """The cell records RUNS compare with, from the newer of the last make
    check and ALL=1 make check that ran them; a run of another series than
    the tree's (series_head) is no comparison."""
    want = {r.cell for r in RUNS}
    head = source.git(['rev-parse', 'HEAD']).stdout.strip()
    runs = []
    for name in ('check', 'check-all'):
        data = _load(os.path.join(paths.RESULTS, name + '.json')) or {}
        cells = [r for r in data.get('cells', ()) if r.get('cell') in want]
        if cells:
            runs.append((data.get('date', ''), name, data.get('series_head'), cells))
    if not runs:
        return []
    date, name, series_head, cells = max(runs)
    if series_head != head:
        raise log.StepError('the last make check that ran cells %s (%s.json, %s) ran series '
                            'commit %s, the tree has %s: run make check again'
                            % (', '.join(sorted(want)), name, date, series_head, head))
    return cells
