"""make series-check: the gates a patch series must pass before it is
posted. Each gate returns a record (one test per patch, file or build) in
the same shape as a matrix cell, so make check can fold them in.

  checkpatch   scripts/checkpatch.pl --strict on every patch
  maintainers  scripts/get_maintainer.pl per patch (the Cc lists), recorded
  warnings     W=1 and sparse on the C files the series touches, base vs
               series: no new warning
  docs         make htmldocs (SPHINXDIRS=each Documentation directory the
               series touches): no Sphinx warning about a touched file
  asm          the refcount_t operations compiled with GCC, clang and
               clang-19 in a translation unit with over 1 MiB of text after
               them: it assembles, no code outside a function, no
               conditional branch leaving its function (kmt/asmcheck.py)
  x86_64       the C files the series touches outside arch/ and users of the
               generic headers it changes, W=1 with the host's gcc on
               x86_64_defconfig, base vs series: they build, no new warning
               (kmt/x86check.py); x86_64-kasan: the same with generic KASAN;
               arm: the same for 32-bit arm (multi_v7_defconfig, Debian's
               gcc-arm-linux-gnueabihf)
  fidelity     every backport against the mainline change it carries: each
               difference in the lines it changes is named by its [ ... ]
               note, and it keeps no upstream changelog (kmt/fidelity.py;
               LINUX_GIT=<mainline clone>: against git show <id>, else
               against the 7.3.4 tree)
  provenance   no message or cover letter quotes a figure from a run of
               another base, or names an option the base's Kconfig lacks
               (kmt/provenance.py)
  bisect       every prefix of the series builds (lean config)
  bisect-cross every prefix: the x86_64, x86_64-kasan and arm builds above,
               on the files the prefix has touched
  bisect-kunit at every prefix of the series, the KUnit suites it contains
               pass, booted as the cells of targets.BISECT_KUNIT_CELLS are
               (no commit adds a test that fails until a later one)
  configs      the whole series builds with KASAN off and with MTE (and
               LSE atomics) off, so every #ifdef branch compiles

make check runs checkpatch, maintainers, order, fidelity, provenance,
warnings, docs, asm and x86_64 (minutes); the x86_64-kasan, arm, bisect, bisect-cross, bisect-kunit and
configs gates
rebuild large parts of the kernel and run with make series-check ALL=1."""

import collections
import dataclasses
import os
import re
import subprocess
import sys
import tomllib

from . import (asmcheck, backport, bases, build, diag, fidelity, log, matrix, paths, provenance,
               results, source, targets, x86check)

QUICK_GATES = ('checkpatch', 'maintainers', 'order', 'upstream', 'fidelity', 'provenance',
               'warnings',
               'docs', 'asm', 'x86_64')
ALL_GATES = QUICK_GATES + ('x86_64-kasan', 'arm', 'bisect', 'bisect-cross',
                           'bisect-kunit', 'configs')
# Configurations the whole series must build with (Image only), beyond
# the ones the matrix boots.
VARIANT_CONFIGS = ('lean-nokasan', 'lean-nolse')

SERIES_RESULTS = os.path.join(paths.RESULTS, 'series')


def _record(gate, tests, logfile='-', problems=()):
    return results.record('series-' + gate, [gate], '-', tests, problems,
                          os.path.relpath(logfile, paths.REPO) if logfile != '-' else '-')


def _test(suite, name, ok, detail=''):
    return results.test(suite, name, results.PASS if ok else results.FAIL,
                        '' if ok else detail)


def series_commits(tag):
    """(sha, subject) of each commit base..HEAD of the kernel tree, oldest first."""
    out = source.git(['log', '--reverse', '--format=%H %s', '%s..HEAD' % tag]).stdout
    return [tuple(l.split(' ', 1)) for l in out.splitlines() if l.strip()]


# ---- checkpatch and get_maintainer ---------------------------------------

def checkpatch_findings(output):
    """The ERROR/WARNING/CHECK lines of checkpatch output."""
    return re.findall(r'^(?:ERROR|WARNING|CHECK):.*$', output, re.M)


_UNKNOWN_ID = re.compile(r"^WARNING: Unknown commit id '([0-9a-f]+)'", re.M)


def load_cited_commits(path):
    """{short id: subject} of the mainline commits a base's series cites
    (patches/<base>/cited-commits.txt: 'ID SUBJECT # where it was checked').
    The tree is a Debian source package in one commit, so checkpatch cannot
    look these ids up; this file is what they are checked against instead."""
    cited = {}
    for n, body, source_ in results.annotated_lines(path):
        cid, _, subject = body.partition(' ')
        if not re.fullmatch(r'[0-9a-f]{12,40}', cid) or not subject or not source_.strip():
            raise log.StepError('%s:%d: expected "ID SUBJECT # where it was checked"'
                                % (path, n))
        cited[cid[:12]] = subject.strip()
        if len(cid) == 40:
            cited[cid] = subject.strip()     # a backport must name it in full
    return cited


_BACKPORT = re.compile(r'^commit ([0-9a-f]{40}) upstream\.$', re.M)
# A long Subject: is folded over lines that start with white space.
_SUBJECT = re.compile(r'^Subject: (?:\[[^]]*\] )?(.*(?:\n[ \t].*)*)$', re.M)
# Upstream's tags, which a backport keeps as they are.
_UPSTREAM_TAG_FINDINGS = ('WARNING: Reported-by: should be immediately followed by Closes:',)
_FROM = re.compile(r'^From: (.+)$', re.M)


def _message(patch_text):
    """The commit message lines of a patch (after the headers, before ---)."""
    body = patch_text.split('\n\n', 1)[1] if '\n\n' in patch_text else ''
    return body.split('\n---\n', 1)[0].split('\n')


# What checkpatch lets run past 75 columns in a commit message: tags,
# URLs, and a file path with its line (a compiler's message).
_LONG_OK = re.compile(r'^\s*(?:[\w-]+:\s|https?://|\S+/\S+:\d+)')


def long_message_lines(patch_text, width=75):
    """The commit message lines of a patch over width columns that
    checkpatch would warn of ("possible unwrapped commit description")."""
    return [l for l in _message(patch_text) if len(l) > width and not _LONG_OK.match(l)]


def long_subject(patch_text, width=75):
    """The summary line of a patch (its Subject: less the [PATCH] prefix)
    if it is over width columns, which Documentation/process/
    submitting-patches.rst asks not to pass (70-75); None otherwise, and
    for a backport, whose subject is upstream's."""
    s = _SUBJECT.search(patch_text)
    if not s or _BACKPORT.search(patch_text):
        return None
    subject = ' '.join(s.group(1).split())
    return subject if len(subject) > width else None


def backport_of(patch_text, cited):
    """The id of the listed commit a stable-style backport names in its
    'commit <id> upstream.' line: the full id listed, the patch's subject
    that commit's, and its author the upstream one (From: has a sign-off,
    and someone else signs off after it). None for anything else."""
    m = _BACKPORT.search(patch_text)
    s = _SUBJECT.search(patch_text)
    a = _FROM.search(patch_text)
    if not (m and s and a) or cited.get(m.group(1)) != ' '.join(s.group(1).split()):
        return None
    sobs = [l[len('Signed-off-by: '):].strip() for l in _message(patch_text)
            if l.startswith('Signed-off-by: ')]
    author = a.group(1).strip()
    if author not in sobs or sobs[-1] == author:
        return None
    return m.group(1)


def _upstream_reports_only(patch_text):
    """Every Reported-by: of a backport's message sits above the last
    upstream sign-off (the one before the sender's): upstream's tags."""
    lines = _message(patch_text)
    sobs = [i for i, l in enumerate(lines) if l.startswith('Signed-off-by: ')]
    reps = [i for i, l in enumerate(lines) if l.startswith('Reported-by: ')]
    return len(sobs) >= 2 and all(i < sobs[-2] for i in reps)


_NEW_FILE_FINDING = 'WARNING: added, moved or deleted file(s), does MAINTAINERS need updating?'
_NEW_FILE = re.compile(r'^diff --git a/\S+ b/(\S+)\nnew file mode ', re.M)


def _maintainers_pattern(value):
    # get_maintainer.pl's conversion of an F:/X: pattern to a regex
    return re.escape(value).replace(r'\*', '.*').replace(r'\?', '.')


def _maintainers_match(path, value):
    """get_maintainer.pl's file_match_pattern(): a pattern ending in / covers
    everything below it; any other matches from the start with as many
    directory levels as the path."""
    if not re.match(_maintainers_pattern(value), path):
        return False
    return value.endswith('/') or path.count('/') == value.count('/')


def maintainers_sections(text):
    """[(name, [F: patterns], [X: patterns])] of a MAINTAINERS file."""
    sections, cur = [], None
    for line in text.splitlines():
        if re.match(r'^[FX]:\s', line) and cur is not None:
            cur[1 if line[0] == 'F' else 2].append(line[2:].strip())
        elif line and not re.match(r'^[A-Z]:', line) and not line[0].isspace():
            cur = (line.strip(), [], [])
            sections.append(cur)
    return sections


def covered_by_maintainers(path, text):
    """A section of MAINTAINERS other than THE REST covers path."""
    for name, files, excludes in maintainers_sections(text):
        if name == 'THE REST':
            continue
        if any(_maintainers_match(path, v) for v in files) and \
                not any(_maintainers_match(path, v) for v in excludes):
            return True
    return False


def read_maintainers(tree):
    """The MAINTAINERS text of a kernel tree (None if it has none)."""
    try:
        with open(os.path.join(tree, 'MAINTAINERS')) as f:
            return f.read()
    except FileNotFoundError:
        return None


def unknown_ids_accounted(output, patch_text, cited, maintainers=None):
    """checkpatch's findings minus its 'Unknown commit id' warnings for ids
    listed in cited whose subject the patch quotes exactly as listed (or
    whose backport the patch is), and, in such a backport, the findings on
    the upstream tags it must keep (a Reported-by: without Closes:). Given
    the base's MAINTAINERS text, also minus checkpatch's question whether
    MAINTAINERS needs updating, when every file the patch adds is already
    covered by a section of it (not THE REST): adding an entry for it
    would be churn."""
    left = []
    added = _NEW_FILE.findall(patch_text)
    new_files_covered = maintainers is not None and bool(added) and \
        all(covered_by_maintainers(f, maintainers) for f in added)
    # A message may wrap the quoted subject over two lines.
    flat = ' '.join(patch_text.split())
    backport = backport_of(patch_text, cited)
    for f in checkpatch_findings(output):
        m = _UNKNOWN_ID.match(f)
        subject = cited.get(m.group(1)[:12]) if m else None
        if subject and '%s ("%s")' % (m.group(1), subject) in flat:
            continue
        if backport and m and m.group(1) == backport:
            continue
        if backport and f.startswith(_UPSTREAM_TAG_FINDINGS) and \
                _upstream_reports_only(patch_text):
            continue
        if f.startswith(_NEW_FILE_FINDING) and new_files_covered:
            continue
        left.append(f)
    return left


_CITED_ID = re.compile(r'(?<![0-9A-Za-z])[0-9a-f]{12,40}(?![0-9A-Za-z])')


def uncited_ids(patch_text, cited):
    """Commit ids the message cites that are not listed in cited with the
    subject the message quotes for them. checkpatch looks up only ids
    written as 'commit <id>' or in a Fixes: tag; one cited as 'mainline
    made it as <id> ("subject")' would otherwise go unchecked. An id is a
    run of 12 to 40 hex digits with a letter in it (a count is not), not
    in a URL (a Message-Id in a Link: is not), in the message only."""
    flat = ' '.join(' '.join(_message(patch_text)).split())
    backport = backport_of(patch_text, cited)
    left = []
    lines = _message(patch_text)
    for line, dump in zip(lines, provenance.in_kernel_log(lines)):
        if '://' in line or dump:
            continue
        for m in _CITED_ID.finditer(line):
            cid = m.group(0)
            if not re.search('[a-f]', cid) or cid == backport or cid in left:
                continue
            subject = cited.get(cid) or cited.get(cid[:12])
            if not subject or '%s ("%s")' % (cid, subject) not in flat:
                left.append(cid)
    return left


def gate_checkpatch(tag):
    tests = []
    cited = load_cited_commits(os.path.join(paths.PATCHES, 'cited-commits.txt'))
    maintainers = read_maintainers(paths.SRC)
    for p in source.read_series():
        path = os.path.join(paths.PATCHES, p)
        # checkpatch runs scripts/spdxcheck.py with the first python3 on
        # PATH; the system's has python3-ply (setup-host.sh), a private
        # interpreter earlier on PATH may not.
        env = dict(os.environ, PATH=os.pathsep.join(['/usr/bin', os.environ.get('PATH', '')]))
        res = subprocess.run(['perl', 'scripts/checkpatch.pl', '--strict', '-q', path],
                             cwd=paths.SRC, stdout=subprocess.PIPE, env=env,
                             stderr=subprocess.STDOUT, text=True)
        with open(path) as f:
            text = f.read()
        found = unknown_ids_accounted(res.stdout, text, cited, maintainers)
        found += ['commit id %s is not in cited-commits.txt with the subject the message '
                  'quotes' % i for i in uncited_ids(text, cited)]
        # A helper that crashed checked nothing (spdxcheck.py without ply).
        found += ['checkpatch helper crashed: ' + l for l in res.stdout.splitlines()
                  if l.startswith('Traceback')][:1]
        # checkpatch exits non-zero for any finding: once the accounted
        # ones are left out, what remains decides; a non-zero exit without
        # any finding (perl died) fails.
        crashed = res.returncode != 0 and not checkpatch_findings(res.stdout)
        ok = not found and not crashed
        # What checkpatch said that the gate accounts for is said, not hidden.
        accounted = [f for f in checkpatch_findings(res.stdout) if f not in found]
        note = ('clean but for what a tree without mainline history, a backport\'s '
                'upstream tags or a new file MAINTAINERS already covers make it say: '
                + '; '.join(accounted)) if accounted else 'clean'
        tests.append(_test('checkpatch', p, ok, '; '.join(found[:3]) or
                           (note if accounted else res.stdout[-200:])))
        log.info('checkpatch %s: %s' % (p, note if ok else '\n' + res.stdout.strip()))
    return _record('checkpatch', tests)


def gate_maintainers(tag):
    """get_maintainer.pl for every patch, written to
    build/results/series/maintainers.txt (the To/Cc lists for posting)."""
    os.makedirs(SERIES_RESULTS, exist_ok=True)
    out_file = os.path.join(SERIES_RESULTS, 'maintainers.txt')
    tests = []
    everyone = collections.OrderedDict()
    with open(out_file, 'w') as out:
        for p in source.read_series():
            res = subprocess.run(['perl', 'scripts/get_maintainer.pl', '--no-git',
                                  '--no-git-fallback', '--no-rolestats',
                                  os.path.join(paths.PATCHES, p)],
                                 # the same order every run (postings.py)
                                 cwd=paths.SRC, env=dict(os.environ, PERL_HASH_SEED='0'),
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
            names = [l.strip() for l in res.stdout.splitlines() if '@' in l]
            out.write('%s:\n%s\n\n' % (p, '\n'.join('  Cc: ' + n for n in names)))
            for n in names:
                everyone[n] = True
            tests.append(_test('maintainers', p, res.returncode == 0 and bool(names),
                               'get_maintainer.pl found nobody: %s' % res.stdout[-200:]))
        out.write('whole series (cover letter):\n%s\n'
                  % '\n'.join('  Cc: ' + n for n in everyone))
    log.info('get_maintainer.pl: %d addresses for the series, per patch in %s'
             % (len(everyone), os.path.relpath(out_file, paths.REPO)))
    return _record('maintainers', tests, out_file)


# ---- W=1 and sparse ------------------------------------------------------

def touched_c_files(tag):
    out = source.git(['diff', '--name-only', '--diff-filter=AM', tag, 'HEAD', '--',
                      '*.c']).stdout
    return [f for f in out.split() if f]


def _compile_checked(cfg, tree, files, logfile):
    """Compile `files` with W=1 and sparse (C=2: check even if up to date)
    in the out dir of `tree`; returns {file: diagnostics}."""
    out = build.out_dir(cfg.name, tree)
    build.configure(cfg, paths.SRC, out, logfile, tree)
    found = {}
    for f in files:
        if not os.path.exists(os.path.join(paths.SRC, f)):
            found[f] = collections.Counter()
            continue
        obj = f[:-2] + '.o'
        cmd = build.make_args(out) + ['W=1', 'C=2', obj]
        log.show_cmd(cmd, paths.SRC)
        res = subprocess.run(cmd, cwd=paths.SRC, env=dict(os.environ, **build.KERNEL_ENV),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        with open(logfile, 'a') as lf:
            lf.write('$ %s\n%s' % (' '.join(cmd), res.stdout))
        # None: does not compile (e.g. its subsystem is off in this config).
        found[f] = diag.own_diagnostics(diag.diagnostics(res.stdout), f) if res.returncode == 0 else None
    return found


def gate_warnings(tag):
    cfg = targets.CONFIGS['lean']
    files = touched_c_files(tag)
    logfile = os.path.join(paths.LOGS, 'series-warnings.log')
    if os.path.exists(logfile):
        os.remove(logfile)
    if not files:
        return _record('warnings', [], logfile)
    # Files the base lacks compare against nothing: all their warnings are new.
    in_base = [f for f in files
               if source.git(['cat-file', '-e', '%s:%s' % (tag, f)], check=False).returncode == 0]
    with source.checked_out(tag):
        before = _compile_checked(cfg, 'base', in_base, logfile)
    after = _compile_checked(cfg, 'series', files, logfile)
    tests = []
    for f in files:
        if after[f] is None:
            if f in before and before[f] is None:
                tests.append(results.test('warnings', f, results.SKIP,
                                          'not built with the %s config, before or after '
                                          'the series' % cfg.name))
                log.info('W=1 + sparse %s: skipped, not built with the %s config'
                         % (f, cfg.name))
            else:
                tests.append(_test('warnings', f, False, 'does not compile with the series '
                                   '(log %s)' % os.path.relpath(logfile, paths.REPO)))
            continue
        new = diag.new_diagnostics(before.get(f) or collections.Counter(), after[f])
        tests.append(_test('warnings', f, not new,
                           '%d new: %s' % (len(new), '; '.join('%s: %s' % (k, m)
                                                              for _, k, m in new[:3]))))
        log.info('W=1 + sparse %s: %s' % (f, 'no new warning' if not new else
                                           '%d NEW:\n    %s' % (len(new), '\n    '.join(
                                               '%s: %s: %s' % n for n in new))))
    return _record('warnings', tests, logfile)


# ---- documentation --------------------------------------------------------

def touched_docs(tag):
    out = source.git(['diff', '--name-only', '--diff-filter=AM', tag, 'HEAD', '--',
                      'Documentation/*.rst']).stdout
    return [f for f in out.split() if f]


def docs_findings(text, rst):
    """Sphinx WARNING/ERROR lines that name the file `rst`."""
    return [l.strip() for l in text.splitlines()
            if rst in l and re.search(r'\b(WARNING|ERROR|CRITICAL)\b', l)]


def gate_docs(tag):
    files = touched_docs(tag)
    logfile = os.path.join(paths.LOGS, 'series-htmldocs.log')
    if os.path.exists(logfile):
        os.remove(logfile)
    tests = []
    dirs = sorted({os.path.dirname(f)[len('Documentation/'):] for f in files})
    out = os.path.join(paths.OUT, 'htmldocs')
    for d in dirs:
        cmd = ['make', 'O=' + out, 'SPHINXDIRS=' + d, 'htmldocs']
        log.show_cmd(cmd, paths.SRC)
        res = subprocess.run(cmd, cwd=paths.SRC, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        with open(logfile, 'a') as lf:
            lf.write('$ %s\n%s' % (' '.join(cmd), res.stdout))
        for f in files:
            if os.path.dirname(f)[len('Documentation/'):] != d:
                continue
            found = docs_findings(res.stdout, f)
            html = os.path.join(out, 'Documentation', 'output', d,
                                os.path.basename(f)[:-4] + '.html')
            ok = res.returncode == 0 and not found and os.path.exists(html)
            tests.append(_test('docs', f, ok, '; '.join(found[:3]) or
                               'htmldocs exit code %d, see %s' % (
                                   res.returncode, os.path.relpath(logfile, paths.REPO))))
            log.info('htmldocs %s: %s' % (f, 'clean' if ok else 'FAILED'))
    return _record('docs', tests, logfile)


# ---- order: no commit's tests wait for a later commit ---------------------

# "... fail until the next patch ...": the commit's own tests fail at that
# commit, so a bisection that stops there sees a failure the series
# itself put in. Tests come with or after the change they check.
_LATER = re.compile(r'\b(?:until|before)\s+(?:the\s+)?(?:next|following|later|a\s+later)'
                    r'\s+(?:patch|commit|change)', re.I)


def order_findings(subject, message):
    """The sentences of a commit message that say its tests fail until a
    later commit of the series."""
    text = ' '.join(message.split())
    found = []
    for sentence in re.split(r'(?<=[.;:])\s+', text):
        if re.search(r'\bfail', sentence, re.I) and _LATER.search(sentence):
            found.append(sentence)
    return found


def gate_order(tag):
    tests = []
    for sha, subject in series_commits(tag):
        body = source.git(['log', '-1', '--format=%B', sha]).stdout
        found = order_findings(subject, body)
        tests.append(_test('order', subject, not found,
                           'its tests fail until a later commit (move them after it): "%s"'
                           % found[0][:200] if found else ''))
    return _record('order', tests)


def gate_provenance(tag):
    """Every patch message and the cover letter: each figure from a run of
    this base, each option one of its Kconfig files defines (with the
    series applied: HEAD)."""
    base = re.split(r'[-~+]', source.base_version())[0]
    symbols = provenance.kconfig_symbols('HEAD')
    names = source.read_series()
    cover = os.path.join(paths.PATCHES, '0000-cover-letter.patch')
    if os.path.exists(cover):
        names = ['0000-cover-letter.patch'] + names
    tests = []
    for n in names:
        with open(os.path.join(paths.PATCHES, n)) as f:
            text = f.read()
        if not n.startswith('0000-'):
            text = provenance.message(text)
        found = provenance.figure_problems(text, base) + provenance.config_problems(text, symbols)
        tests.append(_test('provenance', n, not found, '; '.join(found[:3])))
    return _record('provenance', tests)


# ---- what each patch is upstream -------------------------------------------

# A patch that is not a backport says where mainline gets it, or why not.
_UPSTREAM_STATUS = re.compile(r'^(Proposed for mainline|Carried here only)\b', re.M)


def upstream_finding(patch_text, cited, posted_subjects, proposed_subjects=None):
    """None if the patch says what it is upstream: a backport of a cited
    mainline commit, a commit of one of the base's own postings
    (posted_subjects: a mainline base's series is its postings), or a
    message line that starts 'Proposed for mainline' or 'Carried here
    only'; else what is missing. proposed_subjects: the subjects of the
    mainline postings; a patch proposed for mainline carries one of them
    (Android takes it as FROMLIST: under the posted subject, each
    difference in a [ ... ] note), or it is another change."""
    if backport_of(patch_text, cited):
        return None
    subject = source.patch_subject(patch_text)
    if subject in posted_subjects:
        return None
    status = _UPSTREAM_STATUS.search('\n'.join(_message(patch_text)))
    if status and status.group(1) == 'Proposed for mainline' and \
            proposed_subjects is not None and subject not in proposed_subjects:
        return ('says it is proposed for mainline, but no posting has its subject "%s": '
                'carry the posted patch under its subject (each difference in a [ ... ] '
                'note), or say "Carried here only: <why>"' % subject)
    if status:
        return None
    return ('does not say what it is upstream: neither "commit <id> upstream." of a '
            'cited commit, nor a line "Proposed for mainline ..." or "Carried here '
            'only: <why>"')


def upstream_findings(patch_dir, base):
    """[(patch, finding)] of a base's series (patch_dir/series)."""
    cited_file = os.path.join(patch_dir, 'cited-commits.txt')
    cited = load_cited_commits(cited_file) if os.path.exists(cited_file) else {}
    posted = ()
    toml = os.path.join(patch_dir, 'postings.toml')
    if os.path.exists(toml):
        # postings.py imports this module: read its file, not through it.
        with open(toml, 'rb') as f:
            posted = tuple(c for p in tomllib.load(f).values() if isinstance(p, dict)
                           for c in p.get('commits', ()))
    proposed = None
    ref = bases.BASES.get(fidelity.REFERENCE_BASE)
    ref_toml = ref and os.path.join(paths.REPO, ref.patch_dir, 'postings.toml')
    if not posted and ref_toml and os.path.exists(ref_toml):
        with open(ref_toml, 'rb') as f:
            proposed = tuple(c for p in tomllib.load(f).values() if isinstance(p, dict)
                             for c in p.get('commits', ()))
    out = []
    for n in source.read_series(patch_dir):
        with open(os.path.join(patch_dir, n)) as f:
            found = upstream_finding(f.read(), cited, posted, proposed)
        if found:
            out.append((n, found))
    return out


def gate_upstream(tag):
    """Every patch says what it is upstream (see upstream_finding())."""
    del tag
    found = dict(upstream_findings(paths.PATCHES, paths.BASE))
    return _record('upstream', [_test('upstream', n, n not in found, found.get(n, ''))
                                for n in source.read_series(paths.PATCHES)])


# ---- builds: bisectability and configuration variants --------------------

def _prepare_reference():
    """Unpack the mainline base as shipped (KMT_BASE=7.3 prepare), for
    the fidelity gate of another base."""
    logfile = os.path.join(paths.LOGS, 'fidelity-reference.log')
    os.makedirs(paths.LOGS, exist_ok=True)
    with log.phase('unpack the %s tree for the fidelity gate' % fidelity.REFERENCE_BASE):
        log.run([sys.executable, '-m', 'kmt', 'prepare'], logfile=logfile, cwd=paths.REPO,
                env=dict(os.environ, KMT_BASE=fidelity.REFERENCE_BASE))


def gate_fidelity(tag):
    """Each backport of the series against mainline's change (kmt/fidelity.py)."""
    names = source.read_series()
    shas = dict(zip(names, [sha for sha, _ in series_commits(tag)]))
    linux_git = os.environ.get('LINUX_GIT') or None
    if paths.BASE_NAME == fidelity.REFERENCE_BASE and not linux_git:
        return _record('fidelity', [_test('fidelity', 'backports', True)],
                       problems=()) if not any(
            backport.Patch(open(os.path.join(paths.PATCHES, n)).read()).upstream_id()
            for n in names) else _record('fidelity', [], problems=[results.problem(
                'gate', 'a backport on the mainline base itself needs LINUX_GIT=')])
    mainline = None if linux_git else fidelity.reference_tree(_prepare_reference)
    tests, lines = fidelity.gate(names, paths.PATCHES, paths.SRC, shas, mainline, linux_git)
    os.makedirs(SERIES_RESULTS, exist_ok=True)
    out_file = os.path.join(SERIES_RESULTS, 'fidelity.txt')
    with open(out_file, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    for l in lines:
        log.info(l)
    return _record('fidelity', [_test('fidelity', n, ok, d) for n, ok, d in tests], out_file)


def gate_bisect(tag):
    """Build every prefix of the series (the last one is the series) with
    the lean config, in one out dir: each step is an incremental build."""
    cfg = targets.CONFIGS['lean']
    commits = series_commits(tag)
    out = build.out_dir('lean', 'bisect')
    logfile = os.path.join(paths.LOGS, 'series-bisect.log')
    tests = []
    with source.checked_out(tag):
        for i, (sha, subject) in enumerate(commits, 1):
            source.git(['checkout', '-q', sha])
            name = '%d/%d %s' % (i, len(commits), subject)
            with log.phase('bisect: build %s' % name):
                try:
                    # The series' own test options do not exist in early
                    # prefixes: the plain lean config for every step.
                    build.build_kernel(cfg, paths.SRC, out, logfile, series_tests=False)
                    tests.append(_test('bisect', name, True))
                except log.StepError as e:
                    tests.append(_test('bisect', name, False, str(e).splitlines()[0]))
    return _record('bisect', tests, logfile)


BISECT_SRC = os.path.join(paths.BASE_BUILD, 'bisect-linux')


def suites_at(files):
    """The suites the series adds (from_series) whose module source is
    among files (a tree's file list): the ones a prefix contains."""
    names = {os.path.basename(f) for f in files}
    return tuple(n for n, s in targets.SUITES.items()
                 if s.from_series and s.module + '.c' in names)


def prefix_cells(present):
    """The cells of BISECT_KUNIT_CELLS with only their KUnit suites that a
    prefix contains (present: suites_at()); a cell left with none is out."""
    cells = {c.name: c for cs in targets.MATRICES.values() for c in cs}
    out = []
    for name in targets.BISECT_KUNIT_CELLS:
        c = cells[name]
        suites = tuple(s for s in c.suites if targets.SUITES[s].kind == 'kunit'
                       and (not targets.SUITES[s].from_series or s in present))
        if suites:
            out.append(dataclasses.replace(c, suites=suites))
    return out


def prefix_verdict(rec):
    """'' if a prefix's cell run is whole and every case passed, else why
    not (the first failed case, or the first problem: a panic, a timeout,
    a kernel report, a missing result)."""
    failed = [t for t in rec['tests'] if t['status'] == results.FAIL]
    if failed:
        t = failed[0]
        return '%d case(s) failed, first %s/%s: %s' % (len(failed), t['suite'], t['name'],
                                                       (t.get('detail') or '')[:160])
    if rec['problems']:
        p = rec['problems'][0]
        return '%s: %s' % (p['kind'], p['text'][:200])
    if not rec['tests']:
        return 'no test reported'
    return ''


def gate_bisect_kunit(tag, prefixes=None):
    """Every prefix of the series (prefixes: only these, 1-based), in a
    worktree of its own: each configuration of BISECT_KUNIT_CELLS built
    with the test options of the suites that prefix contains, and its cells
    booted with those suites (expectations of the base apply). One test
    per prefix and cell; a prefix whose tree cannot be read fails whole."""
    commits = series_commits(tag)
    if not commits:
        raise log.StepError('bisect-kunit: no series commits on %s' % tag)
    bad = sorted(set(prefixes or ()) - set(range(1, len(commits) + 1)))
    if bad:
        raise log.StepError('bisect-kunit: no prefix %s (the series has %d commits)'
                            % (', '.join(map(str, bad)), len(commits)))
    expectations = results.load_expectations()
    tests, logs = [], []
    for i, (sha, subject) in enumerate(commits, 1):
        if prefixes and i not in prefixes:
            continue
        head = '%d/%d %s' % (i, len(commits), subject)
        with source.tree_lock(BISECT_SRC, exclusive=True, what='bisect-kunit %d' % i):
            try:
                src = source.worktree_at(BISECT_SRC, sha)
                files = source.git(['ls-files'], cwd=src).stdout.split()
            except log.StepError as e:
                tests.append(_test('bisect-kunit', head, False,
                                   'worktree: %s' % str(e).splitlines()[0]))
                continue
            present = suites_at(files)
            built = {}
            for cell in prefix_cells(present):
                name = '%s [%s: %s]' % (head, cell.name, ' '.join(cell.suites))
                with log.phase('bisect-kunit %s' % name):
                    try:
                        if cell.config not in built:
                            try:
                                built[cell.config] = build.build_all(
                                    cell.config, src=src, tree='bisect-kunit',
                                    series_tests=present)
                            except log.StepError as e:
                                built[cell.config] = 'build %s: %s' % (
                                    cell.config, str(e).splitlines()[0])
                        if isinstance(built[cell.config], str):
                            raise log.StepError(built[cell.config])
                        rec = matrix.run_cell('bisect-%02d' % i, cell, *built[cell.config],
                                              expectations)
                        logs.append(rec['log'])
                        why = prefix_verdict(rec)
                    except log.StepError as e:
                        why = str(e).splitlines()[0]
                tests.append(_test('bisect-kunit', name, not why, why))
    return _record('bisect-kunit', tests, logs[0] if logs else '-')


def gate_configs(tag):
    tests = []
    logs = []
    for name in VARIANT_CONFIGS:
        cfg = targets.CONFIGS[name]
        logfile = os.path.join(paths.LOGS, 'build-series-%s.log' % name)
        logs.append(logfile)
        with log.phase('build the series with %s (%s)' % (name, ' '.join(cfg.fragments))):
            try:
                build.build_kernel(cfg, paths.SRC, build.out_dir(name), logfile)
                tests.append(_test('configs', name, True))
            except log.StepError as e:
                tests.append(_test('configs', name, False, str(e).splitlines()[0]))
    return _record('configs', tests, logs[0] if logs else '-')


def gate_asm(tag):
    tests, logfile = asmcheck.gate(tag, source.git)
    return _record('asm', tests, logfile)


def gate_x86_64(tag):
    tests, logfile = x86check.gate(tag, ('x86_64-defconfig',))
    return _record('x86_64', tests, logfile)


def gate_x86_64_kasan(tag):
    tests, logfile = x86check.gate(tag, ('x86_64-kasan',), suite='x86_64-kasan')
    return _record('x86_64-kasan', tests, logfile)


def gate_arm(tag):
    tests, logfile = x86check.gate(tag, ('arm-multi_v7',), suite='arm')
    return _record('arm', tests, logfile)


def gate_bisect_cross(tag):
    commits = series_commits(tag)
    if not commits:
        raise log.StepError('bisect-cross: no series commits on %s' % tag)
    tests, logfile = x86check.bisect_gate(tag, commits)
    return _record('bisect-cross', tests, logfile)


# The host packages a gate needs beyond what every command installs.
GATE_PACKAGES = {'arm': tuple(x86check.packages(('arm-multi_v7',))),
                 'bisect-cross': tuple(x86check.packages(x86check.BISECT_CONFIGS))}


GATES = {'x86_64': gate_x86_64, 'x86_64-kasan': gate_x86_64_kasan, 'arm': gate_arm,
         'checkpatch': gate_checkpatch, 'maintainers': gate_maintainers, 'order': gate_order,
         'fidelity': gate_fidelity, 'provenance': gate_provenance, 'upstream': gate_upstream,
         'warnings': gate_warnings, 'docs': gate_docs, 'asm': gate_asm,
         'bisect': gate_bisect, 'bisect-cross': gate_bisect_cross,
         'bisect-kunit': gate_bisect_kunit, 'configs': gate_configs}


def run(gates=QUICK_GATES, prefixes=None):
    """Run the gates on the kernel tree as checked out (base..HEAD is the
    series); returns the records. prefixes: bisect-kunit runs only these
    prefixes (1-based)."""
    tag = source.ensure_base()
    with source.tree_lock(what='check the tree is clean'):
        dirty = source.git(['status', '--porcelain', '--untracked-files=no']).stdout.strip()
    if dirty and any(g in gates for g in ('warnings', 'bisect', 'bisect-cross', 'x86_64',
                                          'x86_64-kasan', 'arm')):
        raise log.StepError('uncommitted changes in %s: commit them first' % paths.SRC)
    records = []
    for g in gates:
        with log.phase('series gate: %s' % g):
            try:
                records.append(GATES[g](tag, prefixes) if g == 'bisect-kunit'
                               else GATES[g](tag))
            except log.StepError as e:
                records.append(_record(g, [], problems=[results.problem('gate', str(e))]))
    return records
