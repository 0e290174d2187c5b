"""make reverts: each listed case of the series' tests is seen failing
with the change it checks reverted. A case that passes whether or not its
change is there cannot fail and proves nothing. (Per case, not per
assertion: a case with one live assertion and one dead one is shown by the
live one; the commit messages say which assertions are which.)

patches/reverts.toml lists, per change of the series (by subject), the
cell to run and the cases that must fail with that change reverted from
the series (and, optionally, cases that must still pass: they check the
other changes). For each entry:

  1. the series is applied from patches/ (make prepare), so what is
     reverted is what patches/ holds, and a listed case must have passed
     in that cell in the last make check of this same series (the
     baseline: a case broken on the series is not "shown" by a revert);
  2. branch revert/SLUG of the kernel tree = the series with that commit
     reverted (git revert; a revert that does not apply is an error,
     never a skip), checked out in a worktree of its own
     (BASE_BUILD/revert-linux: the kernel tree's checkout never moves);
  3. the cell's configuration built there (out dir revert-CONFIG, so the
     next entry recompiles only what differs) and booted with only the
     suites that hold the listed cases;
  4. each "fails" case must report FAIL itself, each "passes" case PASS;
     a panic, oops, KASAN or other kernel report, timeout or lost result
     makes the entry fail (it is not the failure asked for).

Results: RESULTS/reverts.json (per entry: the stamp of the series' diffs, the branch
head, the lists checked, the counts, each case's status and detail) and
the README table (<!-- reverts -->), which says "stale" for a record of
another series or other lists."""

import os
import re
import tempfile
from dataclasses import dataclass, replace
from typing import Tuple

from . import build, log, matrix, paths, results, source

RESULT_FILE = os.path.join(paths.RESULTS, 'reverts.json')
_KEYS = {'change', 'cell', 'fails', 'passes', 'why', 'reports'}
BROKEN_RUN = ('panic', 'timeout', 'qemu', 'missing')
REPORT_KINDS = {kind for kind, _ in results.REPORTS}


@dataclass(frozen=True)
class Revert:
    change: str                 # subject of the series commit reverted
    cell: str                   # a cell of targets.py
    fails: Tuple[str, ...]      # SUITE/CASE that must fail without it
    passes: Tuple[str, ...] = ()
    why: str = ''               # what the failing assertions see
    # Kinds of kernel report (results.REPORTS) that the revert itself
    # makes the kernel print, and must: what the change stops (e.g. a
    # report of an asynchronous fault that never happened). Any other
    # report still breaks the run.
    reports: Tuple[str, ...] = ()

    @property
    def slug(self):
        return (re.sub(r'[^a-z0-9]+', '-', self.change.lower()).strip('-')[:60]
                + '-' + self.cell)

    @property
    def key(self):
        return '%s [%s]' % (self.change, self.cell)


_MKEYS = {'name', 'tests', 'cell', 'file', 'find', 'replace', 'fails', 'passes', 'why',
          'reports'}


@dataclass(frozen=True)
class Mutation:
    """A test added by the series with nothing to revert (a guard of
    behaviour that must not change) is shown able to fail by breaking that
    behaviour on purpose: `find`, which must occur once in `file` of the
    series tip, replaced by `replace`."""
    name: str                   # the behaviour broken, in words
    tests: str                  # subject of the series commit whose cases it shows
    cell: str
    file: str                   # a path of the kernel tree
    find: str
    replace: str
    fails: Tuple[str, ...]
    passes: Tuple[str, ...] = ()
    why: str = ''
    reports: Tuple[str, ...] = ()   # as for Revert

    @property
    def change(self):
        return 'mutation: ' + self.name

    @property
    def slug(self):
        return ('mutate-' + re.sub(r'[^a-z0-9]+', '-', self.name.lower()).strip('-')[:53]
                + '-' + self.cell)

    @property
    def key(self):
        return '%s [%s]' % (self.change, self.cell)

    @property
    def digest(self):
        import hashlib
        return hashlib.sha1('\0'.join((self.file, self.find, self.replace)).encode()
                            ).hexdigest()[:16]


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


def _read(path, subjects, cells):
    """reverts.toml's path and data, the series' subjects and the cell
    lookup, each the real one unless given (tests give their own)."""
    from .postings import read_toml
    path = path or reverts_file()
    data = read_toml(path, 'lists no reverts')
    subjects = series_subjects() if subjects is None else subjects
    if cells is None:
        from . import postproof
        cells = postproof.find_cell
    return path, data, subjects, cells


def _tables(path, data, table, title, keys):
    """(where, entry) for each [[table]] of reverts.toml, where naming it
    for errors; StepError on a key not in keys."""
    for i, d in enumerate(data.get(table, ())):
        where = '%s, %s %d (%s)' % (os.path.basename(path), table, i + 1,
                                    d.get(title, 'no ' + title))
        unknown = set(d) - keys
        if unknown:
            raise log.StepError('%s: unknown keys %s' % (where, ', '.join(sorted(unknown))))
        yield where, d


def _add(out, e, where, what):
    """Append entry e to out, refusing a second one of the same key and
    a case listed both to fail and to pass."""
    if any(o.key == e.key for o in out):
        raise log.StepError('%s: a second %s' % (where, what))
    if set(e.fails) & set(e.passes):
        raise log.StepError('%s: %s both fails and passes' % (
            where, ', '.join(sorted(set(e.fails) & set(e.passes)))))
    out.append(e)


def load(path=None, subjects=None, cells=None):
    """The entries of reverts.toml; StepError naming the entry on anything
    malformed: an unknown key, no test to fail, a change that is not a
    subject of the series, a cell that does not exist or does not run the
    test's suite."""
    path, data, subjects, cells = _read(path, subjects, cells)
    out = []
    for where, d in _tables(path, data, 'revert', 'change', _KEYS):
        if not d.get('change') or not d.get('cell') or not d.get('fails'):
            raise log.StepError('%s: needs change, cell and fails' % where)
        if d['change'] not in subjects:
            raise log.StepError('%s: no patch of the series has this subject' % where)
        _check_cases(where, cells(d['cell']), list(d['fails']) + list(d.get('passes', ())))
        _check_reports(where, d)
        e = Revert(change=d['change'], cell=d['cell'], fails=tuple(d['fails']),
                   passes=tuple(d.get('passes', ())), why=d.get('why', ''),
                   reports=tuple(d.get('reports', ())))
        _add(out, e, where, 'entry for this change and cell')
    if not out:
        raise log.StepError('%s lists no [[revert]]' % os.path.basename(path))
    return out


def _check_reports(where, d):
    bad = [k for k in d.get('reports', ()) if k not in REPORT_KINDS]
    if bad:
        raise log.StepError('%s: reports names %s, not a kind of kernel report (%s)'
                            % (where, ', '.join(bad), ', '.join(sorted(REPORT_KINDS))))


def _check_cases(where, cell, cases):
    for t in cases:
        if '/' not in t:
            raise log.StepError('%s: %s is not SUITE/CASE' % (where, t))
        if t.split('/', 1)[0] not in cell.suites:
            raise log.StepError('%s: cell %s does not run suite %s'
                                % (where, cell.name, t.split('/', 1)[0]))


def load_mutations(path=None, subjects=None, cells=None):
    """The [[mutation]] entries of reverts.toml (none is fine); StepError
    naming the entry on an unknown key, a missing field, a test commit
    that is not in the series, a cell that does not run the cases, a
    replacement equal to what it replaces, or a second entry of the same
    name and cell."""
    path, data, subjects, cells = _read(path, subjects, cells)
    out = []
    for where, d in _tables(path, data, 'mutation', 'name', _MKEYS):
        missing = [k for k in ('name', 'tests', 'cell', 'file', 'find', 'replace', 'fails')
                   if not d.get(k) and not (k == 'replace' and d.get(k) == '')]
        if missing:
            raise log.StepError('%s: needs %s' % (where, ', '.join(missing)))
        if d['tests'] not in subjects:
            raise log.StepError('%s: no patch of the series has the subject "%s"'
                                % (where, d['tests']))
        if d['find'] == d['replace']:
            raise log.StepError('%s: replace is the same as find' % where)
        cell = cells(d['cell'])
        _check_cases(where, cell, list(d['fails']) + list(d.get('passes', ())))
        _check_reports(where, d)
        e = Mutation(name=d['name'], tests=d['tests'], cell=d['cell'], file=d['file'],
                     find=d['find'], replace=d['replace'], fails=tuple(d['fails']),
                     passes=tuple(d.get('passes', ())), why=d.get('why', ''),
                     reports=tuple(d.get('reports', ())))
        _add(out, e, where, 'mutation of this name and cell')
    return out


def verdict(entry, tests, problems, baseline=None):
    """(ok, lines): each "fails" case FAILED by itself, each "passes" case
    PASSED, the run was whole (no panic, timeout, QEMU error or lost
    result) and the kernel reported nothing (a KASAN report, oops or
    warning is not the failure asked for). baseline: {SUITE/CASE: status}
    of the series itself in the same cell; every listed case must have
    passed there."""
    lines = []
    expected = set(getattr(entry, 'reports', ()))
    broken = [p for p in problems if p['kind'] in BROKEN_RUN or
              (p['kind'] in REPORT_KINDS and p['kind'] not in expected)]
    for p in broken:
        lines.append('run broken: %s' % p['text'][:160])
    seen = {p['kind'] for p in problems} & expected
    for k in sorted(expected):
        if k in seen:
            lines.append('the %s report the revert makes the kernel print came, as it must' % k)
        else:
            lines.append('no %s report, which the revert must make the kernel print' % k)
    status = {}
    for t in tests:
        status['%s/%s' % (t['suite'], t['name'])] = _st(t['status'])
    ok = not broken and seen == expected
    if baseline is not None:
        for t in entry.fails + entry.passes:
            if baseline.get(t) != 'pass':
                ok = False
                lines.append('%s does not pass on the series itself (%s in the last make check '
                             'of cell %s): nothing to compare with'
                             % (t, (baseline.get(t) or 'no result').upper(), entry.cell))
    for t in entry.fails:
        st = status.get(t)
        if st == 'fail':
            lines.append('%s fails %s, as it must' % (
                t, 'with the mutation' if isinstance(entry, Mutation) else 'without it'))
        else:
            ok = False
            lines.append('%s %s %s: it cannot see it' % (
                t, 'is missing' if st is None else 'is %s' % st.upper(),
                'with the mutation' if isinstance(entry, Mutation) else 'without the change'))
    for t in entry.passes:
        st = status.get(t)
        if st != 'pass':
            ok = False
            lines.append('%s must still pass, is %s' % (t, st.upper() if st else 'missing'))
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


def mutation_branch(entry, tip):
    """mutate/SLUG: tip with entry's one replacement committed, made in a
    worktree so that the tree's checkout stays. The text to replace must
    occur exactly once in the file: anything else is an error, never a
    skip."""
    branch = 'mutate/' + entry.slug
    with tempfile.TemporaryDirectory() as tmp:
        wt = os.path.join(tmp, 'wt')
        source.git(['worktree', 'add', '-q', '--detach', wt, tip])
        try:
            path = os.path.join(wt, entry.file)
            if not os.path.isfile(path):
                raise log.StepError('mutation "%s": %s is not a file of %s'
                                    % (entry.name, entry.file, tip))
            with open(path) as f:
                text = f.read()
            n = text.count(entry.find)
            if n != 1:
                raise log.StepError('mutation "%s": the text to replace occurs %d times in '
                                    '%s at %s, not once' % (entry.name, n, entry.file, tip))
            with open(path, 'w') as f:
                f.write(text.replace(entry.find, entry.replace))
            source.git(['commit', '-q', '-a', '-m', entry.change], cwd=wt,
                       env=source._GIT_ENV)
            source.git(['branch', '-f', branch, 'HEAD'], cwd=wt)
        finally:
            source.git(['worktree', 'remove', '--force', wt], check=False)
    return branch


REVERT_SRC = os.path.join(paths.BASE_BUILD, 'revert-linux')


def worktree_at(ref):
    """The revert worktree (a git worktree of the kernel tree, owned by
    this tool) with ref checked out, detached; made on first use."""
    return source.worktree_at(REVERT_SRC, ref)


def cell_for(entry, cases):
    from . import postproof
    cell = postproof.find_cell(entry.cell)
    return replace(cell, suites=tuple(s for s in cell.suites
                                      if any(t.split('/', 1)[0] == s for t in cases)))


def boot(cell, ref, name):
    """Build cell's configuration at ref in the revert worktree and boot
    it: the run's record (tests, problems, log)."""
    with source.tree_lock(REVERT_SRC, exclusive=True, what='revert %s' % name):
        src = worktree_at(ref)
        image, initrd = build.build_all(cell.config, src=src, tree='revert')
    return matrix.run_cell('revert-' + name, cell, image, initrd, [])


def statuses(rec):
    return {'%s/%s' % (t['suite'], t['name']): _st(t['status']) for t in rec['tests']}


def run_one(entry, tip, base_rec):
    """entry's revert on top of tip, judged against base_rec (the series
    itself booted in the same cell with the same suites)."""
    cases = entry.fails + entry.passes
    cell = cell_for(entry, cases)
    mutation = isinstance(entry, Mutation)
    branch = mutation_branch(entry, tip) if mutation else revert_branch(entry, tip)
    head = source.git(['rev-parse', branch]).stdout.strip()
    rec = boot(cell, head, entry.slug)
    base = statuses(base_rec)
    # The baseline run must itself be whole: a report there taints it.
    if any(p['kind'] in BROKEN_RUN or p['kind'] in REPORT_KINDS for p in base_rec['problems']):
        base = {}
    ok, lines = verdict(entry, rec['tests'], rec['problems'], base)
    for l in lines:
        log.info('  ' + l)
    wanted = set(cases)
    return {'change': entry.change, 'cell': entry.cell, 'fails': list(entry.fails),
            'kind': 'mutation' if mutation else 'revert',
            'passes': list(entry.passes), 'branch': branch, 'head': head,
            'ok': ok, 'lines': lines, 'log': rec['log'], 'baseline_log': base_rec['log'],
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


def current_stamp(patch_dir=None):
    """What the series changes, without the commit messages: a hash of
    each patch's diff, in order (a reworded message does not make a
    revert run stale; a changed line of code does)."""
    import hashlib
    patch_dir = patch_dir or paths.PATCHES
    h = hashlib.sha1(source.base_tag().encode())
    for name in source.read_series(patch_dir):
        with open(os.path.join(patch_dir, name)) as f:
            text = f.read()
        i = text.find('\ndiff --git ')
        h.update(text[i:].encode() if i >= 0 else b'')
    return h.hexdigest()


def run_all(entries):
    """The series from patches/ (applied if the tree does not hold it),
    then per cell the series itself and each entry's revert, in the
    revert worktree; results saved after each entry (a run cut short
    keeps what it showed). 0 if every entry holds."""
    tag = source.ensure_base()
    source.apply_series(tag=tag)
    tip = source.git(['rev-parse', source.BRANCH]).stdout.strip()
    stamp = current_stamp()
    old = [r for r in load_results().get('reverts', [])
           if r.get('stamp', '').split(':')[0] == stamp]
    done = []
    bad = 0
    base_recs = {}
    # Entries of one configuration together: each build after the first
    # recompiles only what the revert changes.
    order = sorted(entries, key=lambda e: (cell_for(e, e.fails).config, entries.index(e)))
    for i, e in enumerate(order):
        if e.cell not in base_recs:
            cell = cell_for(e, [t for x in entries if x.cell == e.cell
                                for t in x.fails + x.passes])
            log.info('the series itself in cell %s (the baseline)' % e.cell)
            base_recs[e.cell] = boot(cell, tip, 'series-' + e.cell)
        log.info('[%d/%d] %s "%s" (cell %s): expect %s to fail'
                 % (i + 1, len(order), 'with' if isinstance(e, Mutation) else 'without',
                    e.change, e.cell, ', '.join(e.fails)))
        rec = run_one(e, tip, base_recs[e.cell])
        rec.update(series_head=tip, stamp=entry_stamp(e, stamp), key=e.key)
        bad += not rec['ok']
        log.info('%s: %s' % (e.key, 'every listed case fails' if rec['ok']
                             else 'NOT SHOWN (above: why)'))
        done.append(rec)
        keys = {d['key'] for d in done}
        results.write_json(RESULT_FILE, {'base': source.base_version(),
                                         'reverts': [r for r in old if r.get('key') not in keys]
                                         + done})
    return 1 if bad else 0


def entry_stamp(entry, stamp):
    """The stamp a record of entry must carry to be current: the series'
    (current_stamp()), and for a mutation also its replacement's."""
    return stamp + ':' + entry.digest if isinstance(entry, Mutation) else stamp


def markdown_mutations(entries, stamp=None):
    """The table of the mutations: what each breaks, the commit whose
    cases it shows able to fail, those cases as last run."""
    stamp = stamp or current_stamp()
    res = {r.get('key'): r for r in load_results().get('reverts', [])}
    rows = ['| behaviour broken on purpose (file) | cases of | cell | cases that must fail '
            'with it | seen |', '|---|---|---|---|---|']
    for e in entries:
        r = res.get(e.key)
        seen = _seen(e, r, entry_stamp(e, stamp))
        rows.append('| %s (`%s`) | %s | %s | %s | %s |' % (
            e.name, e.file, e.tests, e.cell,
            ', '.join(t.split('/', 1)[1] for t in e.fails), seen))
    return '\n'.join(rows) + '\n'


def _seen(e, r, stamp):
    if r is None:
        return 'not run yet'
    if (r.get('stamp') != stamp or tuple(r.get('fails', ())) != e.fails
            or tuple(r.get('passes', ())) != e.passes):
        return 'stale (another series or other cases): run make reverts'
    got = lambda t: r['tests'].get(t, {}).get('status', 'missing').upper()
    seen = '<br>'.join('%s %s' % (t.split('/', 1)[1], got(t)) for t in e.fails)
    if e.passes:
        seen += '<br>(still pass: %s)' % ', '.join(
            '%s %s' % (t.split('/', 1)[1], got(t)) for t in e.passes)
    if not r['ok']:
        seen += '<br>**not shown**'
    return seen


def markdown(entries, stamp=None):
    """The README table: each change, the cases that fail without it, as
    last run; "stale" for a record of another series or other lists."""
    stamp = stamp or current_stamp()
    res = {r.get('key'): r for r in load_results().get('reverts', [])}
    rows = ['| change reverted | cell | cases that must fail without it | seen |',
            '|---|---|---|---|']
    for e in entries:
        seen = _seen(e, res.get(e.key), stamp)
        rows.append('| %s | %s | %s | %s |' % (e.change, e.cell,
                                                ', '.join(t.split('/', 1)[1] for t in e.fails),
                                                seen))
    return '\n'.join(rows) + '\n'
