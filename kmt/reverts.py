"""make reverts: every assertion of the series' tests is seen failing with
the change it checks reverted. A test that passes whether or not its
change is there cannot fail and proves nothing.

patches/reverts.toml lists, per change of the series (by subject), the
cell to run and the tests that must fail with that change reverted from
the series (and, optionally, tests that must still pass: they check the
other changes). For each entry:

  1. branch revert/SLUG of the kernel tree = the series with that commit
     reverted (git revert, in a worktree of its own; a revert that does
     not apply is an error, never a skip);
  2. the cell's configuration built from that branch (out dir
     revert-CONFIG, so the next entry recompiles only what differs) and
     booted with only the suites that hold the listed tests;
  3. each "fails" test must report FAIL itself (a panic, timeout or lost
     result is not the failure asked for), each "passes" test PASS, with
     no kernel report.

Results: RESULTS/reverts.json (per entry: the branch head, the counts, each
test's status and detail) and the README table (<!-- reverts -->)."""

import os
import re
import tempfile
import tomllib
from dataclasses import dataclass, replace
from typing import Tuple

from . import build, log, matrix, paths, results, source

RESULT_FILE = os.path.join(paths.RESULTS, 'reverts.json')
_KEYS = {'change', 'cell', 'fails', 'passes', 'why'}
BROKEN_RUN = ('panic', 'timeout', 'qemu', 'missing')
REPORT_KINDS = {kind for kind, _ in results.REPORTS}


@dataclass(frozen=True)
class Revert:
    change: str                 # subject of the series commit reverted
    cell: str                   # a cell of targets.py
    fails: Tuple[str, ...]      # SUITE/CASE that must fail without it
    passes: Tuple[str, ...] = ()
    why: str = ''               # what the failing assertions see

    @property
    def slug(self):
        return re.sub(r'[^a-z0-9]+', '-', self.change.lower()).strip('-')[:60]


def reverts_file(patch_dir=None):
    return os.path.join(patch_dir or paths.PATCHES, 'reverts.toml')


def series_subjects(patch_dir=None):
    """The subjects of the series' patches, in order."""
    patch_dir = patch_dir or paths.PATCHES
    out = []
    for name in source.read_series(patch_dir):
        with open(os.path.join(patch_dir, name)) as f:
            out.append(source.patch_subject(f.read()))
    return out


def load(path=None, subjects=None, cells=None):
    """The entries of reverts.toml; StepError naming the entry on anything
    malformed: an unknown key, no test to fail, a change that is not a
    subject of the series, a cell that does not exist or does not run the
    test's suite."""
    path = path or reverts_file()
    if not os.path.exists(path):
        raise log.StepError('%s does not exist: base %s lists no reverts'
                            % (os.path.relpath(path, paths.REPO), paths.BASE_NAME))
    with open(path, 'rb') as f:
        try:
            data = tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise log.StepError('%s: %s' % (path, e))
    subjects = series_subjects() if subjects is None else subjects
    if cells is None:
        from . import postproof
        cells = postproof.find_cell
    out = []
    for i, d in enumerate(data.get('revert', ())):
        where = '%s, revert %d (%s)' % (os.path.basename(path), i + 1,
                                        d.get('change', 'no change'))
        unknown = set(d) - _KEYS
        if unknown:
            raise log.StepError('%s: unknown keys %s' % (where, ', '.join(sorted(unknown))))
        if not d.get('change') or not d.get('cell') or not d.get('fails'):
            raise log.StepError('%s: needs change, cell and fails' % where)
        if d['change'] not in subjects:
            raise log.StepError('%s: no patch of the series has this subject' % where)
        cell = cells(d['cell'])
        for t in list(d['fails']) + list(d.get('passes', ())):
            if '/' not in t:
                raise log.StepError('%s: %s is not SUITE/CASE' % (where, t))
            if t.split('/', 1)[0] not in cell.suites:
                raise log.StepError('%s: cell %s does not run suite %s'
                                    % (where, cell.name, t.split('/', 1)[0]))
        out.append(Revert(change=d['change'], cell=d['cell'], fails=tuple(d['fails']),
                          passes=tuple(d.get('passes', ())), why=d.get('why', '')))
    if not out:
        raise log.StepError('%s lists no [[revert]]' % os.path.basename(path))
    return out


def verdict(entry, tests, problems):
    """(ok, lines): each "fails" test FAILED by itself, each "passes" test
    PASSED, and the run was whole (no panic, timeout or QEMU error; no
    kernel report either when something must pass)."""
    lines = []
    broken = [p for p in problems if p['kind'] in BROKEN_RUN]
    reports = [p for p in problems if p['kind'] in REPORT_KINDS and p['kind'] not in BROKEN_RUN]
    for p in broken:
        lines.append('run broken: %s' % p['text'][:160])
    status = {}
    for t in tests:
        status['%s/%s' % (t['suite'], t['name'])] = _st(t['status'])
    ok = not broken
    for t in entry.fails:
        st = status.get(t)
        if st == 'fail':
            lines.append('%s fails without it, as it must' % t)
        else:
            ok = False
            lines.append('%s %s without the change: it cannot see it' % (
                t, 'is missing' if st is None else 'is %s' % st.upper()))
    for t in entry.passes:
        st = status.get(t)
        if st != 'pass':
            ok = False
            lines.append('%s must still pass, is %s' % (t, st.upper() if st else 'missing'))
    if entry.passes and reports:
        ok = False
        lines += ['kernel report: %s' % p['text'][:160] for p in reports]
    return ok, lines


def revert_branch(entry, tip):
    """revert/SLUG: tip with the commit whose subject is entry.change
    reverted, made in a worktree so that the tree's checkout stays."""
    branch = 'revert/' + entry.slug
    commits = source.git(['log', '--format=%H %s', '%s..%s' % (source.base_tag(), tip)]
                         ).stdout.splitlines()
    found = [c.split(' ', 1)[0] for c in commits if c.split(' ', 1)[1] == entry.change]
    if len(found) != 1:
        raise log.StepError('%d commits of %s have the subject "%s"'
                            % (len(found), tip, entry.change))
    with tempfile.TemporaryDirectory() as tmp:
        wt = os.path.join(tmp, 'wt')
        source.git(['worktree', 'add', '-q', '--detach', wt, tip])
        try:
            res = source.git(['revert', '--no-edit', found[0]], cwd=wt, env=source._GIT_ENV,
                             check=False)
            if res.returncode != 0:
                raise log.StepError('"%s" does not revert cleanly from %s:\n%s'
                                    % (entry.change, tip, res.stdout + res.stderr))
            source.git(['branch', '-f', branch, 'HEAD'], cwd=wt)
        finally:
            source.git(['worktree', 'remove', '--force', wt], check=False)
    return branch


def run_one(entry, tip):
    from . import postproof
    cell = postproof.find_cell(entry.cell)
    suites = tuple(s for s in cell.suites
                   if any(t.split('/', 1)[0] == s for t in entry.fails + entry.passes))
    cell = replace(cell, suites=suites)
    branch = revert_branch(entry, tip)
    head = source.git(['rev-parse', branch]).stdout.strip()
    source.git(['checkout', '-q', branch])
    image, initrd = build.build_all(cell.config, tree='revert')
    rec = matrix.run_cell('revert-' + entry.slug, cell, image, initrd, [])
    ok, lines = verdict(entry, rec['tests'], rec['problems'])
    for l in lines:
        log.info('  ' + l)
    wanted = set(entry.fails + entry.passes)
    return {'change': entry.change, 'cell': entry.cell, 'branch': branch, 'head': head,
            'ok': ok, 'lines': lines, 'log': rec['log'],
            'tests': {'%s/%s' % (t['suite'], t['name']): {'status': _st(t['status']),
                                                         'detail': t.get('detail', '')}
                      for t in rec['tests']
                      if '%s/%s' % (t['suite'], t['name']) in wanted},
            'counts': _counts(rec['tests'])}


def _st(status):
    """A status as the string it stores as ('pass', 'fail', ...)."""
    return getattr(status, 'value', status)


def _counts(tests):
    n = {}
    for t in tests:
        n[_st(t['status'])] = n.get(_st(t['status']), 0) + 1
    return n


def load_results():
    if not os.path.exists(RESULT_FILE):
        return {}
    import json
    with open(RESULT_FILE) as f:
        return json.load(f)


def run_all(entries, tip='series'):
    """Each entry in turn, the tree held; results saved after each one
    (a run cut short keeps what it showed). 0 if every entry holds."""
    old = load_results().get('reverts', [])
    done = []
    bad = 0
    with source.checked_out(tip) as _:
        tip_head = source.git(['rev-parse', 'HEAD']).stdout.strip()
        for i, e in enumerate(entries):
            log.info('[%d/%d] without "%s" (cell %s): expect %s to fail'
                     % (i + 1, len(entries), e.change, e.cell, ', '.join(e.fails)))
            rec = run_one(e, tip_head)
            rec['series_head'] = tip_head
            bad += not rec['ok']
            log.info('%s: %s' % (e.change, 'every listed test fails without it' if rec['ok']
                                 else 'NOT SHOWN: a listed test cannot see the change'))
            done.append(rec)
            keep = [r for r in old if r['change'] not in {d['change'] for d in done}]
            results.write_json(RESULT_FILE, {'base': source.base_version(),
                                             'reverts': keep + done})
    return 1 if bad else 0


def markdown(entries):
    """The README table: each change, the tests that fail without it, as
    last run."""
    res = {r['change']: r for r in load_results().get('reverts', [])}
    rows = ['| change reverted | cell | tests that must fail without it | seen |',
            '|---|---|---|---|']
    for e in entries:
        r = res.get(e.change)
        if r is None:
            seen = 'not run yet'
        else:
            seen = '<br>'.join('%s %s' % (t, r['tests'].get(t, {}).get('status', 'missing')
                                          .upper()) for t in e.fails)
            if e.passes:
                seen += '<br>(still pass: %s)' % ', '.join(
                    '%s %s' % (t.split('/', 1)[1], r['tests'].get(t, {}).get('status', 'missing')
                               .upper()) for t in e.passes)
            if not r['ok']:
                seen += '<br>**not shown**'
        rows.append('| %s | %s | %s | %s |' % (e.change, e.cell,
                                                ', '.join(t.split('/', 1)[1] for t in e.fails),
                                                seen))
    return '\n'.join(rows) + '\n'
