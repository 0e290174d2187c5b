"""Run a test matrix (a list of cells from targets.py): build what the
cells need, boot each cell, rerun probabilistic failures with other seeds,
write a JSON file next to every log and print the result table."""

import collections
import datetime
import os

from . import bootspec, build, labresults, log, paths, qemu, results, source, targets

RERUN_SEEDS = (1, 2, 3, 4, 5)
RERUN_TIMEOUT_S = 300


def _cell_log(matrix, cell, suffix=''):
    name = '%s-%s-%s-%s%s' % (cell.name, cell.config, cell.machine, cell.kasan, suffix)
    return os.path.join(paths.LOGS, matrix, name + '.log')


def rerun_case(matrix, cell, image, initrd, suite, case):
    """Boot once per seed with only this KUnit case, one vCPU and -icount,
    so each run is reproducible, and a command line of another length per
    seed, so each draws other tags (bootspec.rerun_param). Returns
    (passes, runs, logs)."""
    passes = runs = 0
    logs = []
    need = len(RERUN_SEEDS) // 2 + 1
    for seed in RERUN_SEEDS:
        logfile = _cell_log(matrix, cell, '-rerun-%s-seed%d' % (case, seed))
        spec = bootspec.for_cell(cell, image, initrd, logfile,
                                 kunit_filter='%s.%s' % (suite.select, case),
                                 icount=True, seed=seed, rerun=seed, smp=1,
                                 timeout_s=RERUN_TIMEOUT_S)
        res = qemu.run(spec, echo=False)
        r = results.suite_results(res.lines, suite)
        runs += 1
        ok = (not isinstance(r, str) and not res.timed_out
              and any(n == case and st == results.PASS for n, st, _ in r))
        passes += ok
        logs.append(os.path.relpath(logfile, paths.REPO))
        log.info('   rerun %s seed %d: %s' % (case, seed, 'pass' if ok else 'FAIL'))
        if passes >= need or runs - passes >= need:
            break
    return passes, runs, logs


def run_cell(matrix, cell, image, initrd, expectations):
    machine = targets.MACHINES[cell.machine]
    logfile = _cell_log(matrix, cell)
    spec = bootspec.for_cell(cell, image, initrd, logfile)
    with log.phase('boot %s: %s, cpu %s, kasan %s, suites %s' % (
            cell.name, cell.config, machine.cpu, cell.kasan, ' '.join(cell.suites))):
        res = qemu.run(spec)
    out = results.analyze(res.lines, cell, timed_out=res.timed_out)
    if res.failure and not res.timed_out:
        out['problems'].append(results.problem('qemu', res.failure))
    out['problems'] += results.apply_expectations(cell.name, out['tests'], expectations)
    for t in out['tests']:
        suite = targets.SUITES[t['suite']]
        if t['status'] != results.FAIL or not suite.probabilistic or t['name'] == '(suite)':
            continue
        if any(p['kind'] in ('panic', 'timeout') for p in out['problems']):
            continue
        log.info('%s/%s failed: rerunning with other seeds (HW_TAGS tags are random)'
                 % (t['suite'], t['name']))
        passes, runs, logs = rerun_case(matrix, cell, image, initrd, suite, t['name'])
        t['reruns'] = {'passed': passes, 'runs': runs, 'logs': logs}
        if passes * 2 > runs:
            t['status'] = results.PASS
            t['detail'] = ('tag collision: failed once, passed %d of %d seeded reruns'
                           % (passes, runs))
        else:
            t['detail'] = 'failed %d of %d seeded reruns too' % (runs - passes, runs)
    record = results.record(
        cell.name, cell.suites, cell.kasan, out['tests'], out['problems'],
        os.path.relpath(logfile, paths.REPO), matrix=matrix, config=cell.config,
        machine=cell.machine, cpu=machine.cpu, qemu=res.cmd, exit_code=res.exit_code,
        timed_out=res.timed_out, duration_s=round(res.duration, 1))
    results.write_json(logfile[:-4] + '.json', record)
    kjson = results.kunit_json(res.lines, [targets.SUITES[s] for s in cell.suites],
                               config=cell.config)
    if kjson is not None:
        with open(logfile[:-4] + '.kunit.json', 'w') as f:
            f.write(kjson + '\n')
    return record


def counts(records):
    c = {'pass': 0, 'fail': 0, 'skip': 0, 'xfail': 0}
    for r in records:
        for t in r['tests']:
            c[t['status']] += 1
        c['fail'] += len(r['problems'])
    return c


def print_table(records):
    print('\nResults (one row per cell and suite):')
    print('  %-10s %-16s %-8s %6s %6s %6s %6s' % ('cell', 'suite', 'kasan', 'pass', 'fail',
                                                 'skip', 'xfail'))
    for r in records:
        for s in r['suites']:
            ts = [t for t in r['tests'] if t['suite'] == s]
            n = {k: sum(1 for t in ts if t['status'] == k) for k in ('pass', 'fail', 'skip', 'xfail')}
            print('  %-10s %-16s %-8s %6d %6d %6d %6d' % (r['cell'], s, r['kasan'], n['pass'],
                                                          n['fail'], n['skip'], n['xfail']))
    notes = []
    for r in records:
        for t in r['tests']:
            if t['status'] != 'pass' or t['detail']:
                notes.append('  [%s] %s/%s: %s %s' % (r['cell'], t['suite'], t['name'],
                                                      t['status'].upper(), t['detail']))
        for p in r['problems']:
            where = ' (%s:%d)' % (r['log'], p['line']) if p['line'] else ' (%s)' % r['log']
            notes.append('  [%s] %s: %s%s' % (r['cell'], p['kind'].upper(), p['text'][:200], where))
    if notes:
        print('\nDetails:')
        print('\n'.join(notes))


def chosen_cells(matrix, cells=None):
    """The cells of matrix to run (all, or those named); raises StepError
    on an inconsistent table or when no cell matches."""
    errs = targets.validate()
    if errs:
        raise log.StepError('targets.py is inconsistent:\n  ' + '\n  '.join(errs))
    here, dropped = targets.for_base(matrix, paths.BASE)
    for name, why in dropped:
        if not cells or name in cells:
            log.info('%s: not on base %s (%s)' % (name, paths.BASE_NAME, why))
    chosen = [c for c in here if not cells or c.name in cells]
    if not chosen:
        raise log.StepError('no cell of matrix %s on base %s matches %s'
                            % (matrix, paths.BASE_NAME, cells))
    return chosen


def run_matrix(matrix, cells=None, apply=True, extra_records=()):
    """Build, boot and report; returns (records, counts, summary), summary
    being what RESULTS/<matrix>.json holds."""
    chosen = chosen_cells(matrix, cells)
    expectations = results.load_expectations()
    with log.phase('kernel tree'):
        tag = source.ensure_base()
        patches = source.apply_series(tag=tag) if apply else None
        if not apply:
            source.check_tree_as_is(tag)
    # An empty series (a base as it ships): no series test options to
    # configure, no suites the series adds to run; a base's series may
    # carry only some of those suites.
    empty = source.tree_is_base(tag)
    chosen, dropped = targets.without_series(
        chosen, () if empty else targets.series_carries(paths.BASE))
    for name, suites in dropped:
        log.info('%s: no %s here (the series adds it; %s)'
                 % (name, ', '.join(suites), 'the series is empty' if empty
                    else 'not in the %s series' % paths.BASE_NAME))
    built = {}
    records = list(extra_records)
    for cell in chosen:
        if cell.config not in built:
            built[cell.config] = build.build_all(cell.config, series_tests=not empty)
        image, initrd = built[cell.config]
        rec = run_cell(matrix, cell, image, initrd, expectations)
        if rec:
            records.append(rec)
    summary = {
        'matrix': matrix,
        'date': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
        'base': source.base_version(),
        'base_tag': tag,
        'series': patches,
        'series_head': source.git(['rev-parse', 'HEAD']).stdout.strip(),
        'cells': records,
    }
    write_summary(summary)
    return records, counts(records), summary


def write_summary(summary):
    """RESULTS/<matrix>.json, with the phase durations so far; rewritten
    when records are added after the matrix (the benchmark smoke run and
    the series gates of make check)."""
    # Results a lab sent back (make lava-import) stay beside the local cells.
    labs = labresults.lab_cells(summary['matrix'])
    results.write_json(os.path.join(paths.RESULTS, summary['matrix'] + '.json'),
                       dict(summary, phases=log.phases(), **({'lab_cells': labs} if labs else {})))


REPORT_KINDS = {kind for kind, _ in results.REPORTS}


def kernel_cell(name):
    """Whether a check run's cell boots a kernel (a cell of a matrix), not
    the tooling's tests, a series gate or make bench's smoke run."""
    return any(c.name == name for cells in targets.MATRICES.values() for c in cells)


def markdown_cells(summary, kernel_only=False):
    """A markdown table of a check run (the summary check.json holds): per
    cell its kasan mode and counts, then every expected failure with its
    reason. The 7.3 cover letter (kernel_only: the cells that boot a
    kernel) and README quote it."""
    rows = ['| cell | kasan | passed | failed | skipped | expected failures | kernel reports |',
            '|---|---|---:|---:|---:|---:|---:|']
    xfails = []
    for c in list(summary['cells']) + list(summary.get('lab_cells', ())):
        if kernel_only and not c.get('lab') and not kernel_cell(c['cell']):
            continue
        n = collections.Counter(t['status'] for t in c['tests'])
        reports = sum(1 for p in c['problems'] if p['kind'] in REPORT_KINDS)
        name = c['cell']
        if c.get('lab'):
            name = '%s (LAVA lab %s, %s, job %s)' % (name, c['lab'], c['device'], c['job'])
        rows.append('| %s | %s | %d | %d | %d | %d | %d |' % (
            name, c['kasan'], n['pass'], n['fail'] + len(c['problems']), n['skip'],
            n['xfail'], reports))
        xfails += ['%s %s/%s' % (c['cell'], t['suite'], t['name']) + (
            ': ' + t['detail'][len('expected failure: '):] if t['detail'] else '')
            for t in c['tests'] if t['status'] == results.XFAIL]
    text = '\n'.join(rows) + '\n'
    if xfails:
        text += '\nExpected failures (expectations.txt):\n\n' + \
            ''.join('- %s\n' % x for x in xfails)
    return text
