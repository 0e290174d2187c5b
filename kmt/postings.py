"""The postings: a base's series cut into the units its maintainers apply
(one fix, one cleanup, one suite), each written as the mails that post it.

patches/<base>/postings.toml says, per posting, which commits of the
series (by subject) it holds, what kind it is, who must receive it beyond
what scripts/get_maintainer.pl finds, its cover letter when it has more
than one patch, and the cells that prove it. From that:

  write  cherry-picks the posting's commits alone onto the base (branch
         posting/NAME of the kernel tree: it must apply alone) and writes
         patches/<base>/postings/NAME/ with git format-patch: To/Cc
         headers (get_maintainer.pl's maintainers in To, the rest in Cc,
         plus the names the posting lists), a plain-text cover letter
         with its diffstat, the base named, and its @@fragment lines
         replaced by the configuration they name.
  check  what a maintainer checks before applying, per posting: the mail
         headers and tags (static, no kernel tree needed: every listed
         recipient present, a fix's Fixes: ids in cited-commits.txt with
         their subjects and Cc: stable, the cover letter plain text under
         75 columns with a diffstat and the base, a sign-off on every
         patch) and, with the kernel tree, that the posting applies alone
         with git am on the base, checkpatch.pl --strict, get_maintainer.pl
         recipients present, and the same changes as the series' commits
         (the lines added and removed; context may differ when a posting
         applies without the commits before it): the union that make check
         tests is what is posted.
  prove  each proof of a posting: the named test fails on the base as it
         ships and passes with the posting alone (kmt/postproof.py).

The full series (patches/<base>/series) stays the union of the postings,
which BASE=<base> make check runs."""

import os
import re
import subprocess
import tempfile
import textwrap
import tomllib
from dataclasses import dataclass, field
from typing import Tuple

from . import bases, build, log, paths, provenance, source

KINDS = ('fix', 'cleanup', 'test', 'feature')
MAX_COLUMNS = 75
STABLE = 'stable@vger.kernel.org'


@dataclass(frozen=True)
class Proof:
    """One before/after proof: on `runner` ('cell': a cell of the matrix;
    'kunit.py': tools/testing/kunit/kunit.py with `arch` and `kconfig`),
    `test` (SUITE/CASE) fails on the base and passes with the posting."""
    runner: str
    test: str
    cell: str = ''
    arch: str = ''
    kconfig: Tuple[str, ...] = ()
    # kunit.py: --kernel_args (e.g. kasan.mode=asymm)
    kernel_args: Tuple[str, ...] = ()
    # What the test must fail on: 'base' (the base as it ships) or
    # 'test-alone' (the posting without its first patch, the fix: for a
    # posting that brings the test that shows its bug).
    before: str = 'base'
    # What the test must do with the posting: 'pass', or 'skip' for a fix
    # that makes a test skip where it cannot run (kunit.py proofs only).
    after: str = 'pass'


@dataclass(frozen=True)
class Measure:
    """One exact count of what the posting changes, on the base and with
    the posting, in the kernel of `cell` (its configuration, machine and
    KASAN mode), booted on one vCPU under the kmt-count plugin with
    -icount running kmt-bench's `bench` (names, or 'all'): per operation
    of each benchmark, the kernel's tag stores and the bytes they tag;
    over the whole boot, the calls of each kernel function of `calls`."""
    what: str
    cell: str
    bench: Tuple[str, ...]
    calls: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Posting:
    name: str
    kind: str
    what: str                       # one line: what it fixes or adds
    commits: Tuple[str, ...]        # subjects in the base's series, in order
    to: Tuple[str, ...] = ()
    cc: Tuple[str, ...] = ()
    # A fix that stable must not take says why here ('' : Cc: stable needed).
    no_stable: str = ''
    cover_subject: str = ''
    cover_text: str = ''
    proofs: Tuple[Proof, ...] = ()
    # 'ready', or what is missing before it can be sent.
    status: str = ''
    measures: Tuple[Measure, ...] = ()
    # The tree that takes it ("mm", "arm64", ...): said in the mails.
    tree: str = ''
    # Source files carried at the end of the cover letter, as they are:
    # (file in the repository, file inside it when that is a patch).
    cover_appendix: Tuple[Tuple[str, str], ...] = ()


def postings_file(patch_dir=None):
    return os.path.join(patch_dir or paths.PATCHES, 'postings.toml')


def posting_dir(name, patch_dir=None):
    return os.path.join(patch_dir or paths.PATCHES, 'postings', name)


_KEYS = {'kind', 'what', 'commits', 'to', 'cc', 'no_stable', 'cover_subject',
         'cover_text', 'proof', 'status', 'measure', 'tree', 'cover_appendix'}
_PROOF_KEYS = {'runner', 'test', 'cell', 'arch', 'kconfig', 'kernel_args', 'before',
               'after'}
_MEASURE_KEYS = {'what', 'cell', 'bench', 'calls'}


def read_toml(path, missing):
    """A TOML file of this base's patch directory; StepError saying that
    the base `missing` (e.g. "has no postings") when there is none, or
    naming the file on a syntax error."""
    if not os.path.exists(path):
        raise log.StepError('%s does not exist: base %s %s'
                            % (os.path.relpath(path, paths.REPO), paths.BASE_NAME, missing))
    with open(path, 'rb') as f:
        try:
            return tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise log.StepError('%s: %s' % (path, e))


def load(path=None):
    """The postings of postings.toml, in file order; StepError naming the
    entry on anything malformed."""
    path = path or postings_file()
    data = read_toml(path, 'has no postings')
    out = []
    for name, d in data.items():
        where = '%s [%s]' % (os.path.basename(path), name)
        if not re.fullmatch(r'[a-z0-9][a-z0-9-]*', name):
            raise log.StepError('%s: posting names are lower-case words joined by -' % where)
        unknown = set(d) - _KEYS
        if unknown:
            raise log.StepError('%s: unknown keys %s' % (where, ', '.join(sorted(unknown))))
        if d.get('kind') not in KINDS:
            raise log.StepError('%s: kind must be one of %s' % (where, ', '.join(KINDS)))
        if not d.get('commits') or not d.get('what') or not d.get('status') \
                or not d.get('tree'):
            raise log.StepError('%s: needs what, commits, status and tree' % where)
        if len(d['commits']) > 1 and not (d.get('cover_subject') and d.get('cover_text')):
            raise log.StepError('%s: more than one patch: needs cover_subject and cover_text'
                                % where)
        appendix = tuple(tuple(a.partition(':')[::2]) for a in d.get('cover_appendix', ()))
        if appendix and not (d.get('cover_subject') and d.get('cover_text')):
            raise log.StepError('%s: cover_appendix needs a cover letter (cover_subject and '
                                'cover_text)' % where)
        for a in appendix:
            appendix_text(a, where)
        proofs = []
        for pr in d.get('proof', ()):
            bad = set(pr) - _PROOF_KEYS
            if bad or pr.get('runner') not in ('cell', 'kunit.py') or '/' not in pr.get('test', ''):
                raise log.StepError('%s: a proof is runner ("cell" or "kunit.py"), test '
                                    '("SUITE/CASE") and cell, or arch and kconfig' % where)
            if pr['runner'] == 'cell' and not pr.get('cell'):
                raise log.StepError('%s: a cell proof names its cell' % where)
            if pr['runner'] == 'kunit.py' and not pr.get('arch'):
                raise log.StepError('%s: a kunit.py proof names its arch' % where)
            if pr.get('before', 'base') not in ('base', 'test-alone'):
                raise log.StepError('%s: a proof\'s before is "base" or "test-alone"' % where)
            if pr.get('after', 'pass') not in ('pass', 'skip') or (
                    pr.get('after') == 'skip' and pr['runner'] != 'kunit.py'):
                raise log.StepError('%s: a proof\'s after is "pass", or "skip" on kunit.py'
                                    % where)
            if pr.get('before') == 'test-alone' and len(d['commits']) < 2:
                raise log.StepError('%s: before = "test-alone" needs a fix and a test' % where)
            proofs.append(Proof(pr['runner'], pr['test'], pr.get('cell', ''),
                                pr.get('arch', ''), tuple(pr.get('kconfig', ())),
                                tuple(pr.get('kernel_args', ())), pr.get('before', 'base'),
                                pr.get('after', 'pass')))
        measures = []
        for m in d.get('measure', ()):
            if set(m) - _MEASURE_KEYS or not (m.get('what') and m.get('cell')
                                               and m.get('bench')):
                raise log.StepError('%s: a measure is what, cell, bench (kmt-bench names '
                                    'or ["all"]) and optionally calls (kernel functions)'
                                    % where)
            measures.append(Measure(m['what'], m['cell'], tuple(m['bench']),
                                    tuple(m.get('calls', ()))))
        out.append(Posting(name, d['kind'], d['what'], tuple(d['commits']),
                           tuple(d.get('to', ())), tuple(d.get('cc', ())),
                           d.get('no_stable', ''), d.get('cover_subject', ''),
                           d.get('cover_text', ''), tuple(proofs), d['status'],
                           tuple(measures), d['tree'], appendix))
    return out


def appendix_text(item, where='postings.toml'):
    """The text one cover_appendix entry carries: a repository file, or
    the file a patch of the repository creates (\"PATCH:FILE\"); StepError
    when either is missing."""
    path, inner = item
    full = os.path.join(paths.REPO, path)
    if not os.path.isfile(full):
        raise log.StepError('%s: cover_appendix %s does not exist' % (where, path))
    with open(full) as f:
        text = f.read()
    if not inner:
        return text
    content = source.new_file_of(text, inner)
    if content is None:
        raise log.StepError('%s: cover_appendix: %s creates no file %s' % (where, path, inner))
    return content


def chosen(postings, names):
    if not names:
        return postings
    known = {p.name for p in postings}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise log.StepError('no posting %s (postings: %s)'
                            % (', '.join(unknown), ', '.join(sorted(known))))
    return [p for p in postings if p.name in names]


# ---- mail text ------------------------------------------------------------

def split_mail(text):
    """(headers {lower-case name: [values]}, body) of one format-patch
    file; folded header lines are joined."""
    head, _, body = text.partition('\n\n')
    headers = {}
    last = None
    for line in head.split('\n')[1:]:
        if line[:1] in (' ', '\t') and last:
            headers[last][-1] += ' ' + line.strip()
            continue
        name, _, value = line.partition(':')
        last = name.strip().lower()
        headers.setdefault(last, []).append(value.strip())
    return headers, body


def addresses(values):
    """The e-mail addresses (lower case) in header values such as
    'A <a@x>, b@y'."""
    found = []
    for v in values:
        for part in v.split(','):
            m = re.search(r'<([^<>\s]+@[^<>\s]+)>', part) or \
                re.search(r'([^<>\s,]+@[^<>\s,]+)', part)
            if m:
                found.append(m.group(1).lower())
    return found


def recipients(text):
    h, _ = split_mail(text)
    return set(addresses(h.get('to', []) + h.get('cc', [])))


_FIXES = re.compile(r'^Fixes: ([0-9a-f]+) \("(.*)"\)\s*$', re.M)
_MARKDOWN = [
    (re.compile(r'^#{1,6} \S'), 'a Markdown heading'),
    (re.compile(r'^\s*\|.*\|\s*$'), 'a Markdown table row'),
    (re.compile(r'^\s*```'), 'a Markdown code fence'),
    (re.compile(r'`[^`\s][^`]*`'), 'Markdown backquotes'),
    (re.compile(r'\*\*[^*]+\*\*'), 'Markdown bold'),
    (re.compile(r'\[[^\]]+\]\([^)]+\)'), 'a Markdown link'),
]
_DIFFSTAT = re.compile(r'^ \d+ files? changed', re.M)


def base_line(base):
    return 'Based on %s.' % base


def tree_line(tree):
    return 'For the %s tree.' % tree


# A line of cover_text that stands for the configuration a figure was
# built with: "@@fragment minimal.config mte-kasan.config base-7.3.config@@"
# is replaced by the options those files of configs/ set, later files
# winning, one per line in the kernel's own syntax, so that
# "scripts/kconfig/merge_config.sh -n" on a file of those lines gives the
# .config the figures came from. Options the base has no longer
# (kmt/bases.py gone) are left out: merge_config.sh would only warn.
_FRAGMENT = re.compile(r'^@@fragment ((?:[\w.-]+\.config ?)+)@@$', re.M)


def gone_options(version):
    """The options the base of a kernel version ("v7.3.4") no longer has."""
    v = version.lstrip('v')
    for b in bases.BASES.values():
        if v == b.name or v.startswith(b.name + '.'):
            return {opt for opt, _ in b.gone}
    raise log.StepError('no base in kmt/bases.py for version %s' % version)


def fragment_lines(names, gone=()):
    """The option lines of the config fragments names (files of configs/),
    less the options of gone."""
    want = {}
    for name in names:
        path = os.path.join(paths.CONFIGS, name)
        if not os.path.isfile(path):
            raise log.StepError('cover_text: @@fragment names %s, which is not in configs/'
                                % name)
        with open(path) as f:
            for opt, val in build.parse_config(f).items():
                want.pop(opt, None)
                want[opt] = val
    return ['# %s is not set' % o if v == 'n' else '%s=%s' % (o, v)
            for o, v in want.items() if o not in gone]


def fragment_block(names, gone=()):
    return '\n'.join('  ' + l for l in fragment_lines(names, gone))


def expand_cover_text(text, version):
    """cover_text with each @@fragment line replaced by its options,
    indented by two columns, for a posting based on version."""
    gone = gone_options(version)
    return _FRAGMENT.sub(lambda m: fragment_block(m.group(1).split(), gone), text)


def below_the_line(posting, version, note):
    """What a single patch (no cover letter) carries below its ---: the
    tree and base note, then its cover_text if it has one (the
    configuration its figures were built with, @@fragment lines
    expanded)."""
    text = textwrap.fill(note, 72, break_on_hyphens=False)
    if posting.cover_text.strip():
        text += '\n\n' + expand_cover_text(posting.cover_text, version).strip('\n')
    return text


def fragment_problems(posting, cover, version):
    """A cover letter's configurations: each @@fragment of its cover_text
    as configs/ has it today, and no option list typed by hand."""
    problems = []
    gone = gone_options(version)
    for m in _FRAGMENT.finditer(posting.cover_text):
        if fragment_block(m.group(1).split(), gone) not in cover:
            problems.append('its configuration is not that of configs/ %s today: make postings'
                            % m.group(1).strip())
    flat = ' '.join(cover.split())
    for m in re.finditer(r'ARCH=(\w+) (?:(\S+) )?scripts/kconfig/merge_config\.sh', flat):
        if m.group(1) != 'x86_64' and not (m.group(2) or '').startswith('CROSS_COMPILE='):
            problems.append('"ARCH=%s scripts/kconfig/merge_config.sh" without CROSS_COMPILE=: '
                            'Kconfig then probes the host compiler and drops what needs '
                            'the %s one (ARM64_MTE, KASAN_HW_TAGS, ...)' % (m.group(1), m.group(1)))
    if re.search(r'allnoconfig,?\s+then\s+CONFIG_', cover):
        problems.append('a configuration typed as "allnoconfig, then CONFIG_...": give '
                        'the fragment it was built from (an @@fragment line: '
                        'merge_config.sh -n on it is the build\'s .config)')
    return problems


def cover_problems(text, base, verbatim=()):
    """What makes a cover letter unfit for a mailing list. verbatim: the
    texts carried as they are at its end (source code, which keeps its own
    line lengths), left out of the line checks."""
    problems = []
    for v in verbatim:
        v = v.rstrip('\n')
        if v and v in text:
            text = text.replace(v, '', 1)
    _, body = split_mail(text)
    head = text.partition('\n\n')[0].split('\n')[1:]
    for n, line in enumerate(head, 2):
        if len(line) > MAX_COLUMNS:
            problems.append('cover letter header line %d is %d columns (at most %d, fold '
                            'it): %s' % (n, len(line), MAX_COLUMNS, line[:40]))
    if '*** SUBJECT HERE ***' in text or '*** BLURB HERE ***' in text:
        problems.append('cover letter: format-patch placeholders left in it')
    for n, line in enumerate(body.split('\n'), 1):
        if len(line) > MAX_COLUMNS:
            problems.append('cover letter line %d is %d columns (at most %d): %s'
                            % (n, len(line), MAX_COLUMNS, line[:40]))
        for pattern, what in _MARKDOWN:
            if pattern.search(line):
                problems.append('cover letter line %d has %s: %s' % (n, what, line.strip()[:60]))
    if not _DIFFSTAT.search(body):
        problems.append('cover letter: no diffstat')
    if base_line(base) not in ' '.join(body.split()):
        problems.append('cover letter: does not say "%s"' % base_line(base))
    return problems


# A commit id in a message's prose, as checkpatch.pl finds it (its
# GIT_COMMIT_ID rule), which our tree, a source package without mainline's
# history, cannot run: checkpatch skips the style check of an id git does
# not know. Tags and links are left alone.
_ID = re.compile(r'(?<![0-9a-zA-Z/])[0-9a-f]{12,40}(?![0-9a-zA-Z])')
_TAG_LINE = re.compile(r'^\s*(?:[A-Za-z-]+:\s|https?://|This reverts commit)')


def commit_id_problems(message):
    """Lines of a commit message that cite a commit other than as
    'commit <12+ chars of id> ("<subject>")' on one line (the subject may
    go on over the next lines), as checkpatch --strict asks."""
    problems = []
    lines = message.split('\n')
    for n, (line, dump) in enumerate(zip(lines, provenance.in_kernel_log(lines))):
        if dump or _TAG_LINE.match(line):
            continue
        nxt = lines[n + 1] if n + 1 < len(lines) else ''
        if re.search(r'\bcommit\s*$', line, re.I) and _ID.match(nxt.lstrip()):
            problems.append('"commit" and its id %s on two lines: checkpatch wants '
                            'them on one' % _ID.match(nxt.lstrip()).group(0))
        for m in _ID.finditer(line):
            before = line[:m.start()]
            after = line[m.end():]
            if not re.search(r'\bcommit\s+$', before, re.I) and not (
                    n and not before.strip() and re.search(r'\bcommit\s*$', lines[n - 1], re.I)):
                problems.append('%s cited without "commit": checkpatch wants '
                                'commit %s ("<subject>")' % (m.group(0), m.group(0)))
            elif not (after.startswith(' ("') or (not after.strip() and nxt.startswith('("'))):
                problems.append('commit %s without its ("<subject>") after it' % m.group(0))
    return problems


# A token left where a figure or a sentence was still to be written: an
# upper-case name with an underscore (RESULTS_FIX, RESULT612), or the usual
# markers. Kernel identifiers in code are lower case; a CONFIG_ option or a
# macro in prose is not one of these names.
_PLACEHOLDER = re.compile(r'\b(?:RESULTS?(?:_[A-Z0-9_]+|[0-9][A-Z0-9_]*)|'
                          r'[A-Z0-9_]*PLACEHOLDER[A-Z0-9_]*|TODO|TBD|FIXME|XXX)\b')


def placeholder_problems(text):
    """Lines of a mail's prose (before its diff) holding a placeholder."""
    prose = text.split('\ndiff --git ', 1)[0]
    return ['a placeholder is left in: %s' % line.strip()
            for line in prose.split('\n') if _PLACEHOLDER.search(line)]


def patch_problems(name, text, posting, cited, first, single, base):
    """What a maintainer would send back about one patch mail of posting,
    from its text alone. cited: {short id: subject} (cited-commits.txt)."""
    problems = []
    _, body = split_mail(text)
    message = body.partition('\n---\n')[0]
    have = recipients(text)
    for want in posting.to + posting.cc:
        for a in addresses([want]):
            if a not in have:
                problems.append('%s: %s is not in its To/Cc' % (name, want))
    if not re.search(r'^Signed-off-by: .+ <.+@.+>$', message, re.M):
        problems.append('%s: no Signed-off-by' % name)
    problems += ['%s: %s' % (name, p) for p in commit_id_problems(message)]
    for cid, subject in _FIXES.findall(message):
        if len(cid) < 12:
            problems.append('%s: Fixes: %s: use at least 12 characters of the id' % (name, cid))
        elif cited.get(cid[:12]) != subject:
            problems.append('%s: Fixes: %s ("%s") is not in cited-commits.txt with that '
                            'subject' % (name, cid, subject))
    if posting.kind == 'fix' and first:
        if not _FIXES.search(message):
            problems.append('%s: a fix without a Fixes: tag' % name)
        has_stable = re.search(r'^Cc: .*%s' % re.escape(STABLE), message, re.M | re.I)
        if not posting.no_stable and not has_stable:
            problems.append('%s: a fix without Cc: %s (or no_stable = "why" in '
                            'postings.toml)' % (name, STABLE))
        if posting.no_stable and has_stable:
            problems.append('%s: Cc: stable, but postings.toml says no_stable' % name)
        # A Fixes: tag is what the automatic stable selection looks for:
        # a fix the message keeps out of stable says so to it as well
        # (Documentation/process/stable-kernel-rules.rst).
        # The wording is not what counts: a fix postings.toml keeps out
        # of stable, or whose message says so, carrying a Fixes: tag.
        kept_out = posting.no_stable or re.search(r'\bnot for stable\b', message, re.I)
        if kept_out and _FIXES.search(message) and \
                not re.search(r'^Cc: <?stable\+noautosel@kernel\.org>? # \S', message, re.M):
            problems.append('%s: kept out of stable but has Fixes: and no '
                            'Cc: <stable+noautosel@kernel.org> # reason' % name)
    # Andrew Morton's tree takes fixes meant for stable through its
    # mm-hotfixes branches, the rest through mm-new.
    if posting.kind == 'fix' and first and not posting.no_stable and posting.tree == 'mm':
        problems.append('%s: a fix for stable in the mm tree: say mm-hotfixes (tree = '
                        '"mm-hotfixes" in postings.toml)' % name)
    if posting.kind != 'fix' and _FIXES.search(message):
        problems.append('%s: a Fixes: tag on a %s posting' % (name, posting.kind))
    if single and base_line(base) not in ' '.join(body.split('\n---\n', 1)[-1].split()[:40]):
        problems.append('%s: does not say "%s" below its ---' % (name, base_line(base)))
    return problems


def read_posting(posting, patch_dir=None):
    """[(file name, text)] of a written posting, cover letter first;
    StepError when it was never written."""
    d = posting_dir(posting.name, patch_dir)
    series = os.path.join(d, 'series')
    if not os.path.exists(series):
        raise log.StepError('posting %s is not written (no %s): make postings'
                            % (posting.name, os.path.relpath(series, paths.REPO)))
    with open(series) as f:
        names = [l.strip() for l in f if l.strip() and not l.startswith('#')]
    out = []
    for n in names:
        with open(os.path.join(d, n)) as f:
            out.append((n, f.read()))
    return out


def _message_and_changes(text):
    """(commit message, [added and removed lines]) of a patch mail: the
    message without its headers, and the diff's +/- lines without their
    context or hunk positions, which differ where a posting applies alone
    on the base and the series' patch after others."""
    body = text.split('\n\n', 1)[1] if '\n\n' in text else ''
    message = body.split('\n---\n', 1)[0].strip()
    diff = text.split('\ndiff --git ', 1)[1] if '\ndiff --git ' in text else ''
    changes = [l for l in diff.split('\n')
               if l.startswith(('+', '-')) and not l.startswith(('+++ ', '--- '))]
    return message, changes


def stale_problems(patches, series_texts):
    """A written posting's patches against the series' patch files
    (series_texts): each must carry the message and the changed lines of
    the series patch with its subject (the posting was written before the
    series changed, otherwise: make postings)."""
    by_subject = {source.patch_subject(t): t for t in series_texts}
    problems = []
    for n, t in patches:
        theirs = by_subject.get(source.patch_subject(t))
        if theirs is None:
            problems.append('%s: no patch of the series has its subject "%s"'
                            % (n, source.patch_subject(t)))
            continue
        mine, ours = _message_and_changes(t), _message_and_changes(theirs)
        if mine[0] != ours[0]:
            problems.append('%s: its message differs from the series\' patch: '
                            'make postings' % n)
        elif mine[1] != ours[1]:
            problems.append('%s: its changed lines differ from the series\' patch: '
                            'make postings' % n)
    return problems


def known_titles(postings, patch_dir=None):
    """What a mail may cite by title: the postings' cover subjects and the
    subjects of the base's series."""
    return {p.cover_subject for p in postings if p.cover_subject} | \
        {source.patch_subject(t) for t in series_texts(patch_dir)}


def series_texts(patch_dir=None):
    patch_dir = patch_dir or paths.PATCHES
    out = []
    for n in source.read_series(patch_dir):
        with open(os.path.join(patch_dir, n)) as f:
            out.append(f.read())
    return out


def title_problems(mails, titles):
    """Quoted titles of other patches and postings that are not (or no
    longer) one of titles: a quote that starts like a known title (its
    first 25 characters) must be that title."""
    problems = []
    heads = {}
    for t in titles:
        if len(t) >= 25:
            heads.setdefault(t[:25], set()).add(t)
    for n, text in mails:
        flat = ' '.join(split_mail(text)[1].split())
        for head, known in heads.items():
            for m in re.finditer(re.escape('"' + head), flat):
                end = flat.find('"', m.end())
                quoted = flat[m.start() + 1:end if end > 0 else None]
                if quoted not in known:
                    problems.append('%s: cites "%s", which is not the title of any '
                                    'posting or patch (now "%s"?)'
                                    % (n, quoted[:60], sorted(known)[0]))
    return problems


def kunit_command_problems(text):
    """A kunit.py run command in a mail must build the kernel its proof
    ran: a --kunitconfig with the options named (runner "kunit.py" writes
    one), not --kconfig_add on kunit.py's default kunitconfig, which has
    CONFIG_KUNIT_ALL_TESTS=y and so builds every test besides."""
    problems = []
    flat = re.sub(r'\\\n\s*', ' ', text)
    for m in re.finditer(r'kunit\.py run\b[^\n]*', flat):
        cmd = m.group(0)
        if '--kconfig_add' in cmd and '--kunitconfig' not in cmd:
            problems.append('a kunit.py command with --kconfig_add on the default '
                            'kunitconfig (CONFIG_KUNIT_ALL_TESTS=y): not the kernel its '
                            'proof built; give the --kunitconfig and its options')
    return problems


def static_problems(posting, mails, cited, base, series=None, titles=None):
    """Everything check can say about a written posting without a kernel tree.
    titles: the subjects of the base's patches and postings, which a mail
    may cite (None: not checked)."""
    problems = []
    if titles is not None:
        problems += title_problems(mails, titles)
    covers = [(n, t) for n, t in mails if n.startswith('0000-')]
    patches = [(n, t) for n, t in mails if not n.startswith('0000-')]
    if len(patches) != len(posting.commits):
        problems.append('%d patches written, postings.toml lists %d commits: make postings'
                        % (len(patches), len(posting.commits)))
    single = len(patches) == 1 and len(posting.commits) == 1 and not covers
    if len(posting.commits) > 1 and not covers:
        problems.append('more than one patch and no cover letter')
    authors = {split_mail(t)[0].get('from', [''])[0] for _, t in patches}
    if single and posting.cover_text.strip():
        for n, t in patches:
            problems += [n + ': ' + p for p in fragment_problems(
                posting, t.split('\n---\n', 1)[-1], base)]
    for n, t in covers:
        problems += [n + ': ' + p for p in cover_problems(
            t, base, [appendix_text(a) for a in posting.cover_appendix])]
        problems += [n + ': ' + p for p in fragment_problems(posting, t, base)]
        if len(posting.cover_subject) > MAX_COLUMNS:
            problems.append('%s: its subject is %d columns (at most %d, as a patch\'s '
                            'summary line): %s' % (n, len(posting.cover_subject),
                                                   MAX_COLUMNS, posting.cover_subject))
        sender = split_mail(t)[0].get('from', [''])[0]
        if authors and sender not in authors:
            problems.append('%s: From: %s, not the author of its patches (%s)'
                            % (n, sender, ', '.join(sorted(authors))))
        have = recipients(t)
        for want in posting.to + posting.cc:
            for a in addresses([want]):
                if a not in have:
                    problems.append('%s: %s is not in its To/Cc' % (n, want))
    for i, (n, t) in enumerate(patches):
        problems += patch_problems(n, t, posting, cited, i == 0, single, base)
    for n, t in mails:
        problems += ['%s: %s' % (n, p) for p in placeholder_problems(t)]
        problems += ['%s: %s' % (n, p) for p in kunit_command_problems(t)]
    # What is posted is what the series carries and its tests ran on
    # (series: the texts of the base's series patches; None: not checked).
    if series is not None:
        problems += stale_problems(patches, series)
    # A maintainer reads which tree is meant to take it.
    said = covers if covers else patches[:1]
    for n, t in said:
        if tree_line(posting.tree) not in ' '.join(t.split()):
            problems.append('%s: does not say "%s"' % (n, tree_line(posting.tree)))
    # A figure in a posting comes from a run of its base.
    for n, t in mails:
        text = t if n.startswith('0000-') else provenance.message(t)
        problems += ['%s: %s' % (n, p) for p in provenance.figure_problems(text, base)]
    return problems


# ---- the kernel tree -------------------------------------------------------

def series_commits(tag, branch=source.BRANCH, src=None):
    out = source.git(['log', '--reverse', '--format=%H %s', '%s..%s' % (tag, branch)],
                     cwd=src).stdout
    return [tuple(l.split(' ', 1)) for l in out.splitlines() if l.strip()]


def commits_of(posting, tag, src=None):
    """The series commits (sha) the posting holds, in its order."""
    by_subject = {s: h for h, s in series_commits(tag, src=src)}
    missing = [s for s in posting.commits if s not in by_subject]
    if missing:
        raise log.StepError('posting %s: no commit "%s" in the series (branch %s of %s)'
                            % (posting.name, '", "'.join(missing), source.BRANCH,
                               src or paths.SRC))
    return [by_subject[s] for s in posting.commits]


def _get_maintainer(patch_file, src, *extra):
    # get_maintainer.pl lists maintainers of equal standing in Perl hash
    # order, which perl randomizes per run: a fixed seed keeps the To/Cc
    # of a written posting the same from one write to the next.
    env = dict(os.environ, PERL_HASH_SEED='0')
    res = subprocess.run(['perl', 'scripts/get_maintainer.pl', '--no-git',
                          '--no-git-fallback'] + list(extra) + [patch_file],
                         cwd=src or paths.SRC, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    if res.returncode != 0:
        raise log.StepError('get_maintainer.pl %s failed:\n%s' % (patch_file, res.stdout))
    found = []
    for line in res.stdout.splitlines():
        who, _, role = line.strip().partition(' (')
        if '@' in who:
            found.append((who, role))
    return found


def get_maintainers(patch_file, src=None):
    """(to, cc) from scripts/get_maintainer.pl for a patch: the maintainers
    of the files it changes go in To; reviewers, lists and whoever
    MAINTAINERS' K: keywords add (matched in the message too) go in Cc."""
    to = [w for w, role in _get_maintainer(patch_file, src, '--no-keywords')
          if role.startswith('maintainer:')]
    mine = {a for w in to for a in addresses([w])}
    cc = [w for w, _ in _get_maintainer(patch_file, src) if addresses([w])[0] not in mine]
    return to, cc


def _dedup(names, drop=()):
    seen = {a for n in drop for a in addresses([n])}
    out = []
    for n in names:
        a = addresses([n])
        if a and a[0] not in seen:
            seen.add(a[0])
            out.append(n)
    return out


def base_name():
    """What a reader can find: the upstream release the Debian package is."""
    version = source.base_version()
    upstream = re.split(r'[-~+]', version)[0]
    return 'v' + upstream


def write(posting, tag, src=None, patch_dir=None):
    """Branch posting/NAME = base + the posting's commits, and its mails."""
    src = src or paths.SRC
    shas = commits_of(posting, tag, src)
    branch = 'posting/' + posting.name
    out = posting_dir(posting.name, patch_dir)
    os.makedirs(out, exist_ok=True)
    with source.tree_lock(src, exclusive=True, what='write posting %s' % posting.name):
        source.git(['branch', '-f', branch, tag], cwd=src)
        with source.checked_out(branch, src):
            res = source.git(['cherry-pick', '--allow-empty-message'] + shas, cwd=src,
                             check=False, env=source._GIT_ENV)
            if res.returncode != 0:
                files = re.findall(r'^CONFLICT \(.*\): .* in (\S+)', res.stdout, re.M)
                source.git(['cherry-pick', '--abort'], cwd=src, check=False)
                raise log.StepError(
                    'posting %s does not apply alone on %s%s:\n%s'
                    % (posting.name, tag, (' (conflicts in %s)' % ', '.join(files))
                       if files else '', res.stdout.strip()))
        with tempfile.NamedTemporaryFile('w', suffix='.patch') as whole:
            # The messages too: MAINTAINERS K: keywords match them.
            whole.write(source.git(['format-patch', '--stdout', '%s..%s' % (tag, branch)],
                                   cwd=src).stdout)
            whole.flush()
            to, cc = get_maintainers(whole.name, src)
    to = _dedup(list(to) + list(posting.to))
    cc = _dedup(list(cc) + list(posting.cc), drop=to)
    for f in os.listdir(out):
        if f.endswith('.patch'):
            os.unlink(os.path.join(out, f))
    cmd = ['format-patch', '--zero-commit', '--no-signature', '-o', out]
    cmd += ['--to=' + t for t in to] + ['--cc=' + c for c in cc]
    cover = len(shas) > 1 or bool(posting.cover_subject)
    if cover:
        cmd += ['--cover-letter', '-n']
    res = source.git(cmd + ['%s..%s' % (tag, branch)], cwd=src)
    names = [os.path.basename(l.strip()) for l in res.stdout.splitlines() if l.strip()]
    base = base_name()
    dates = []
    for n in names:
        path = os.path.join(out, n)
        with open(path) as f:
            text = f.read()
        if not n.startswith('0000-'):
            dates.append(re.search(r'^Date: .*$', text, re.M).group(0))
            author = re.search(r'^From: .*$', text, re.M).group(0)
            if not cover:
                note = below_the_line(posting, base, tree_line(posting.tree) + ' '
                                      + base_line(base) + ' ' + debian_note(src, tag))
                text = text.replace('\n---\n', '\n---\n%s\n\n' % note, 1)
        with open(path, 'w') as f:
            f.write(text)
    if cover:
        path = os.path.join(out, names[0])
        with open(path) as f:
            text = f.read()
        text = re.sub(r'^Date: .*$', dates[-1], text, count=1, flags=re.M)
        # format-patch signs the cover letter as the local git identity.
        text = re.sub(r'^From: .*$', lambda m: author, text, count=1, flags=re.M)
        text = source.fold_subject(text.replace('*** SUBJECT HERE ***', posting.cover_subject),
                                   MAX_COLUMNS)
        blurb = expand_cover_text(posting.cover_text, base).strip('\n') + '\n\n' + textwrap.fill(
            tree_line(posting.tree) + ' ' + base_line(base) + ' ' + debian_note(src, tag), 72,
            break_on_hyphens=False)
        text = text.replace('*** BLURB HERE ***', blurb.strip())
        for a in posting.cover_appendix:
            text = text.rstrip('\n') + '\n\n' + appendix_text(a).rstrip('\n') + '\n'
        with open(path, 'w') as f:
            f.write(text)
    with open(os.path.join(out, 'series'), 'w') as f:
        f.write('# Written by "make postings" from postings.toml; git am order.\n')
        for n in names:
            if not n.startswith('0000-'):
                f.write(n + '\n')
        if cover:
            f.write('# cover letter\n' + names[0] + '\n')
    log.info('posting %s: %d patch(es) in %s, To: %d, Cc: %d'
             % (posting.name, len(shas), os.path.relpath(out, paths.REPO), len(to), len(cc)))
    return names


def debian_note(src, tag):
    """Where the tests ran: the Debian package is the release plus Debian's
    own patches, so say which package it was."""
    return ('The tests ran on it as Debian\'s %s %s ships it.'
            % (paths.SOURCE_PACKAGE, source.base_version()))


def tree_problems(posting, mails, tag, src=None):
    """What needs the kernel tree: applies alone, checkpatch, get_maintainer,
    the same changes as the series."""
    from . import series as gates
    src = src or paths.SRC
    problems = []
    d = posting_dir(posting.name)
    patches = [(n, t) for n, t in mails if not n.startswith('0000-')]
    scratch = 'posting-check/' + posting.name
    with source.checked_out(tag, src, branch=scratch):
        for n, _ in patches:
            res = source.git(['am', '-q', os.path.join(d, n)], cwd=src, check=False,
                             env=source._GIT_ENV)
            if res.returncode != 0:
                source.git(['am', '--abort'], cwd=src, check=False)
                problems.append('%s does not apply alone on %s: %s'
                                % (n, tag, res.stdout.strip()[:300]))
                break
    source.git(['branch', '-D', scratch], cwd=src, check=False)
    cited = gates.load_cited_commits(os.path.join(paths.PATCHES, 'cited-commits.txt'))
    try:
        shas = commits_of(posting, tag, src)
    except log.StepError as e:
        problems.append(str(e))
        shas = []
    symbols = provenance.kconfig_symbols(source.BRANCH, src)
    maintainers = gates.read_maintainers(src)
    for n, text in mails:
        body = text if n.startswith('0000-') else provenance.message(text)
        problems += ['%s: %s' % (n, p) for p in provenance.config_problems(body, symbols)]
    for i, (n, text) in enumerate(patches):
        path = os.path.join(d, n)
        res = subprocess.run(['perl', 'scripts/checkpatch.pl', '--strict', '-q', path],
                             cwd=src, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
        left = gates.unknown_ids_accounted(res.stdout, text, cited, maintainers)
        if left or (res.returncode != 0 and not gates.checkpatch_findings(res.stdout)):
            problems.append('%s: checkpatch --strict: %s' % (n, '; '.join(left[:3])
                                                              or res.stdout[-200:]))
        to, cc = get_maintainers(path, src)
        have = recipients(text)
        for who in to + cc:
            a = addresses([who])
            if a and a[0] not in have:
                problems.append('%s: get_maintainer.pl names %s, not in its To/Cc' % (n, who))
        if i < len(shas):
            mine = _patch_id(text, src)
            theirs = _patch_id(source.git(['show', '--format=', shas[i]], cwd=src).stdout, src)
            if mine != theirs:
                problems.append('%s differs from the series commit "%s" (the lines it adds '
                                'and removes): make postings' % (n, posting.commits[i]))
    return problems


def _patch_id(text, src=None):
    """What a patch changes, files and the lines it adds and removes, in
    order; not its context lines, which differ when a posting is applied
    without the series commits before it (git patch-id hashes those)."""
    import hashlib
    h = hashlib.sha1()
    start = 0 if text.startswith('diff --git ') else text.find('\ndiff --git ')
    diff = text[max(start, 0):]
    for line in diff.splitlines():
        if line.startswith(('+++ ', '--- ')):
            h.update(line.split('\t')[0].encode() + b'\n')
        elif line.startswith(('+', '-')) and not line.startswith(('+++', '---')):
            h.update(line.rstrip().encode() + b'\n')
        elif line == '-- ':
            break
    return h.hexdigest()


def coverage_problems(postings, subjects):
    """The series must be the union of the postings: every commit of it
    (subjects, in order) in exactly one posting, and no posting naming a
    commit the series does not have."""
    problems = []
    owner = {}
    for p in postings:
        for c in p.commits:
            if c not in subjects:
                problems.append('posting %s names "%s", which is not in the series' % (p.name, c))
            elif c in owner:
                problems.append('"%s" is in two postings: %s and %s' % (c, owner[c], p.name))
            else:
                owner[c] = p.name
    for c in subjects:
        if c not in owner:
            problems.append('"%s" is in no posting: the series would carry a change that is '
                            'never posted' % c)
    return problems


def check(postings, tag=None, src=None, with_tree=True):
    """{posting name: [problems]} (an empty list: fit to send)."""
    from . import series as gates
    cited = gates.load_cited_commits(os.path.join(paths.PATCHES, 'cited-commits.txt'))
    base = base_name()
    out = {}
    series, titles = series_texts(), known_titles(postings)
    for p in postings:
        try:
            mails = read_posting(p)
        except log.StepError as e:
            out[p.name] = [str(e)]
            continue
        problems = static_problems(p, mails, cited, base, series, titles)
        if with_tree:
            problems += tree_problems(p, mails, tag, src)
        out[p.name] = problems
    return out


def series_map_text(postings, subjects, width=72):
    """Which posting each patch of the series belongs to, for the series'
    cover letter: one entry per posting, in the series' order, naming the
    patch numbers and the posting by its subject (its cover letter's, or
    its one patch's), and whether it is held back."""
    number = {s: i + 1 for i, s in enumerate(subjects)}
    rows = []
    for p in postings:
        nums = []
        for c in p.commits:
            if c not in number:
                raise log.StepError('posting %s: "%s" is not a patch of the series'
                                    % (p.name, c))
            nums.append(number[c])
        title = '"%s"' % (p.cover_subject or p.commits[0])
        notes = (['%d patches' % len(nums)] if len(nums) > 1 else []) + \
            (['held back'] if p.status.split(':')[0] == 'hold' else [])
        if notes:
            title += ' (%s)' % ', '.join(notes)
        rows.append((min(nums), ', '.join(str(n) for n in sorted(nums)), title))
    out = []
    for _, nums, title in sorted(rows):
        out.append(textwrap.fill('%s: %s' % (nums, title), width, initial_indent='  ',
                                 subsequent_indent='      ', break_on_hyphens=False,
                                 break_long_words=False))
    return '\n'.join(out)
