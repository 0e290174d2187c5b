"""The kernel work tree: the Debian base as one git commit, the series
applied on a branch with git am, and the export of a branch back to patches/.
"""

import contextlib
import fcntl
import glob
import os
import re
import shutil
import subprocess
import textwrap

from . import cache, log, paths

BRANCH = 'series'
# A fixed identity and date make the base commit the same on every machine,
# so its hash can be quoted (format-patch --base) and compared.
_GIT_ENV = {
    'GIT_AUTHOR_NAME': 'kmt', 'GIT_AUTHOR_EMAIL': 'kmt@localhost',
    'GIT_COMMITTER_NAME': 'kmt', 'GIT_COMMITTER_EMAIL': 'kmt@localhost',
    'GIT_AUTHOR_DATE': '2000-01-01T00:00:00Z',
    'GIT_COMMITTER_DATE': '2000-01-01T00:00:00Z',
}


def tooling_revision():
    """The project's own revision (harness, plugin, series): its HEAD,
    with '+changes' when the work tree differs from it; None outside git."""
    head = git(['rev-parse', 'HEAD'], cwd=paths.REPO, check=False)
    if head.returncode != 0:
        return None
    dirty = git(['status', '--porcelain', '--untracked-files=no'], cwd=paths.REPO,
                check=False).stdout.strip()
    return head.stdout.strip()[:12] + ('+changes' if dirty else '')


def git(args, cwd=None, check=True, capture=True, env=None):
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    res = subprocess.run(['git'] + args, cwd=cwd or paths.SRC, env=full_env,
                         stdout=subprocess.PIPE if capture else None,
                         stderr=subprocess.STDOUT if capture else None,
                         text=True)
    if check and res.returncode != 0:
        raise log.StepError('git %s failed:\n%s' % (' '.join(args), res.stdout or ''))
    return res


def current_head(src=None):
    """The branch checked out in src, or the commit when HEAD is detached."""
    return git(['symbolic-ref', '-q', '--short', 'HEAD'], cwd=src, check=False).stdout.strip() \
        or git(['rev-parse', 'HEAD'], cwd=src).stdout.strip()


# Locks this process holds on kernel trees: {lock file: [fd, exclusive, depth]}
_HELD = {}


def _lock_file(src):
    src = os.path.abspath(src or paths.SRC)
    return os.path.join(os.path.dirname(src), '.%s.kmt-lock' % os.path.basename(src))


def worktree_at(wt, ref):
    """wt, a git worktree of the kernel tree that kmt owns, with ref checked
    out (detached, reset hard). Made anew when it is missing or is no
    longer a worktree of this tree (the tree was unpacked again, or the
    directory lost its .git): a reset in such a directory would reach
    whatever repository git finds above it. The caller holds
    tree_lock(wt, exclusive=True)."""
    real = os.path.realpath(wt)
    listed = git(['worktree', 'list', '--porcelain']).stdout.splitlines()
    ours = 'worktree ' + real in listed
    if os.path.isdir(wt):
        top = subprocess.run(['git', 'rev-parse', '--show-toplevel'], cwd=wt, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.strip()
        if not ours or top != real:
            log.info('%s is not a worktree of %s any more: made again' % (wt, paths.SRC))
            shutil.rmtree(wt)
    if not os.path.isdir(wt):
        git(['worktree', 'prune'])
        git(['worktree', 'add', '-q', '--detach', wt, ref])
    else:
        git(['reset', '-q', '--hard'], cwd=wt)
        git(['checkout', '-q', '--detach', ref], cwd=wt)
    return wt


@contextlib.contextmanager
def tree_lock(src=None, exclusive=False, what=''):
    """Hold the kernel tree src for the with block: shared while building
    from it as it is checked out, exclusive while changing what is checked
    out (git am, make bench's baseline, series-check's prefixes). Another
    kmt run that needs it the other way waits, and says so: without the
    lock, one run's checkout breaks the other's build, or silently builds
    the wrong tree. Nested use in one process is allowed, except asking for
    exclusive use inside shared use."""
    path = _lock_file(src)
    held = _HELD.get(path)
    if held:
        if exclusive and not held[1]:
            raise RuntimeError('kmt: exclusive use of %s asked for inside shared use' % path)
        held[2] += 1
        try:
            yield
        finally:
            held[2] -= 1
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    try:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info('waiting for the kernel tree %s: another kmt run is %s (lock %s)'
                     % (src or paths.SRC, 'using it' if exclusive else 'changing its checkout',
                        os.path.basename(path)))
            fcntl.flock(fd, mode)
            log.info('kernel tree %s is ours now%s' % (src or paths.SRC,
                                                       (' (%s)' % what) if what else ''))
        _HELD[path] = [fd, exclusive, 1]
        yield
    finally:
        _HELD.pop(path, None)
        os.close(fd)


@contextlib.contextmanager
def checked_out(ref, src=None, branch=None):
    """Check ref out in src (with branch: a branch of that name reset to
    ref) for the with block; afterwards, on errors and on ^C too, check out
    again what was checked out before (its name is what the block gets).
    Holds the tree exclusively (tree_lock) for the whole block."""
    with tree_lock(src, exclusive=True, what='check out %s' % ref):
        head = current_head(src)
        try:
            git(['checkout', '-q'] + (['-B', branch] if branch else []) + [ref], cwd=src)
            yield head
        finally:
            git(['checkout', '-q', head], cwd=src)


def base_version():
    """The Debian version of the base's kernel source package: installed on
    the host, or downloaded into the base's build directory (bases.py)."""
    if paths.BASE.suite:
        debs = sorted(glob.glob(os.path.join(paths.PKG, '%s_*.deb' % paths.SOURCE_PACKAGE)))
        if not debs:
            fetch_base_package()
            debs = sorted(glob.glob(os.path.join(paths.PKG, '%s_*.deb'
                                                 % paths.SOURCE_PACKAGE)))
        res = subprocess.run(['dpkg-deb', '-f', debs[-1], 'Version'],
                             stdout=subprocess.PIPE, text=True, check=True)
        return res.stdout.strip()
    res = subprocess.run(['dpkg-query', '-W', '-f=${Version}', paths.SOURCE_PACKAGE],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if res.returncode != 0 or not res.stdout:
        raise log.StepError('%s is not installed (run scripts/setup-host.sh)'
                            % paths.SOURCE_PACKAGE)
    return res.stdout.strip()


APT_SOURCES = ('/etc/apt/sources.list', '/etc/apt/sources.list.d')
DEBIAN_KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg'


def host_archives(sources=APT_SOURCES):
    """The Debian archive addresses the host's apt sources name (one-line
    .list and deb822 .sources files), security archives left out."""
    files = []
    for s in sources:
        if os.path.isdir(s):
            files += sorted(os.path.join(s, f) for f in os.listdir(s)
                            if f.endswith(('.list', '.sources')))
        elif os.path.exists(s):
            files.append(s)
    uris = []
    for f in files:
        with open(f) as fh:
            text = fh.read()
        if f.endswith('.sources'):
            found = re.findall(r'^URIs:\s*(.+)$', text, re.M)
            found = [u for line in found for u in line.split()]
        else:
            found = re.findall(r'^deb(?:-src)?\s+(?:\[[^]]*\]\s+)?(\S+)', text, re.M)
        for u in found:
            u = u.rstrip('/')
            if u.endswith('/debian') and u not in uris:
                uris.append(u)
    return uris


def fetch_base_package():
    """apt-get download the base's package from its suite, with an apt
    state of its own (the host's sources, lists and installed packages are
    not touched), and unpack it (dpkg -x) into paths.PKG."""
    base = paths.BASE
    archives = host_archives()
    if not archives:
        raise log.StepError('no Debian archive in the host\'s apt sources (%s) to download '
                            '%s from' % (', '.join(APT_SOURCES), base.package))
    state = os.path.join(paths.BASE_BUILD, 'apt')
    for d in ('lists/partial', 'archives/partial', 'etc/sources.list.d'):
        os.makedirs(os.path.join(state, d), exist_ok=True)
    with open(os.path.join(state, 'etc', 'sources.list'), 'w') as f:
        f.write('deb [signed-by=%s] %s %s main\n' % (DEBIAN_KEYRING, archives[0], base.suite))
    opts = ['-o', 'Dir::State=' + state, '-o', 'Dir::Cache=' + state,
            '-o', 'Dir::Etc::SourceList=' + os.path.join(state, 'etc', 'sources.list'),
            '-o', 'Dir::Etc::SourceParts=' + os.path.join(state, 'etc', 'sources.list.d'),
            '-o', 'Debug::NoLocking=1', '-o', 'APT::Sandbox::User=root', '-q']
    logfile = os.path.join(paths.LOGS, 'base-package.log')
    os.makedirs(paths.PKG, exist_ok=True)
    with log.phase('download %s from %s %s' % (base.package, archives[0], base.suite)):
        log.run(['apt-get'] + opts + ['update'], logfile=logfile)
        log.run(['apt-get'] + opts + ['download', base.package], logfile=logfile,
                cwd=paths.PKG)
        debs = glob.glob(os.path.join(paths.PKG, '%s_*.deb' % base.package))
        if not debs:
            raise log.StepError('apt-get download left no %s .deb (log %s)'
                                % (base.package, logfile))
        log.run(['dpkg-deb', '-x', sorted(debs)[-1], paths.PKG], logfile=logfile)


def base_tag(version=None):
    version = version or base_version()
    return 'base/' + re.sub(r'[^0-9A-Za-z.+-]', '_', version)


def ensure_base(src=paths.SRC):
    """Unpack the kernel source into a git repo with one base commit."""
    version = base_version()
    tag = base_tag(version)
    if os.path.isdir(os.path.join(src, '.git')):
        if git(['rev-parse', '-q', '--verify', tag], cwd=src, check=False).returncode == 0:
            return tag
        have = git(['tag', '-l', 'base/*'], cwd=src).stdout.split()
        raise log.StepError(
            'the kernel tree %s was made from %s, but the installed %s is %s.\n'
            'Export any work (make export), then remove %s and run again.'
            % (src, ', '.join(have) or 'an unknown base', paths.SOURCE_PACKAGE,
               version, src))
    if paths.BASE.suite and not os.path.exists(paths.SOURCE_TARBALL):
        fetch_base_package()
    if not os.path.exists(paths.SOURCE_TARBALL):
        raise log.StepError('%s missing (package %s)' % (paths.SOURCE_TARBALL,
                                                          paths.SOURCE_PACKAGE))
    with log.phase('unpack %s %s' % (paths.SOURCE_PACKAGE, version)):
        tmp = src + '.unpack'
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        log.run(['tar', '-xf', paths.SOURCE_TARBALL, '-C', tmp,
                 '--strip-components=1'])
        git(['init', '-q', '-b', 'base'], cwd=tmp)
        git(['config', 'user.name', 'kmt'], cwd=tmp)
        git(['config', 'user.email', 'kmt@localhost'], cwd=tmp)
        git(['config', 'gc.auto', '0'], cwd=tmp)
        log.info('git add (about 90k files)')
        git(['add', '-A', '-f', '.'], cwd=tmp)
        git(['commit', '-q', '-m', 'Debian %s %s' % (paths.SOURCE_PACKAGE, version)],
            cwd=tmp, env=_GIT_ENV)
        git(['tag', tag], cwd=tmp)
        os.rename(tmp, src)
        log.info('base commit %s tagged %s' % (
            git(['rev-parse', 'HEAD'], cwd=src).stdout.strip(), tag))
    return tag


def tree_is_base(tag, src=None):
    """True if the checked-out tree is the base's (an empty series)."""
    return git(['rev-parse', tag + '^{tree}'], cwd=src).stdout == \
        git(['rev-parse', 'HEAD^{tree}'], cwd=src).stdout


def check_tree_as_is(tag, src=None, patch_dir=paths.PATCHES):
    """--no-apply builds the tree as it is checked out. Refuse a tree at the
    base itself while the series lists patches: the run would test the base
    and, as for an empty series, leave out the suites the series adds,
    which has looked like a passing run of the series (e.g. when another
    run had the base checked out). An empty series tests the base."""
    patches = read_series(patch_dir)
    if patches and tree_is_base(tag, src):
        raise log.StepError(
            '--no-apply (APPLY=0): the kernel tree %s has the base checked out, without '
            'the series (%d patches in %s). Check out the branch to test, or run without '
            '--no-apply; to test the base as it ships, empty the series file.'
            % (src or paths.SRC, len(patches), os.path.relpath(patch_dir, paths.REPO)))


def read_series(patch_dir=paths.PATCHES):
    """Patch file names in order, from patch_dir/series. Every .patch file
    other than the cover letter must be listed, and every listed file exist."""
    series_file = os.path.join(patch_dir, 'series')
    listed = []
    if os.path.exists(series_file):
        with open(series_file) as f:
            for line in f:
                line = line.split('#', 1)[0].strip()
                if line:
                    listed.append(line)
    present = sorted(p for p in os.listdir(patch_dir)
                     if p.endswith('.patch') and not p.startswith('0000-'))
    missing = [p for p in listed if not os.path.exists(os.path.join(patch_dir, p))]
    unlisted = [p for p in present if p not in listed]
    if missing or unlisted:
        msg = []
        if missing:
            msg.append('listed in series but missing: ' + ', '.join(missing))
        if unlisted:
            msg.append('in %s but not in series: %s' % (patch_dir, ', '.join(unlisted)))
        raise log.StepError('patches/series is out of date: ' + '; '.join(msg))
    return listed


def series_stamp(tag, patches, patch_dir=paths.PATCHES):
    return cache.key(tag, *patches, files=[os.path.join(patch_dir, p) for p in patches])


def _am_in_progress(src):
    return os.path.isdir(os.path.join(src, '.git', 'rebase-apply'))


def apply_series(src=paths.SRC, patch_dir=paths.PATCHES, branch=BRANCH, tag=None):
    """Check out `branch` = base + the series (git am). Skipped when the
    branch already holds exactly this series. On failure the tree is left in
    the middle of git am for inspection and the error names patch and file."""
    tag = tag or ensure_base(src)
    # The tree's state is read (and a stale git am aborted) only while it
    # is held: another run's git am inside its own locked block is not
    # stale, and aborting it leaves both runs with a broken tree.
    with tree_lock(src, exclusive=True, what='git am'):
        return _apply_series_locked(src, patch_dir, branch, tag)


def _apply_series_locked(src, patch_dir, branch, tag):
    patches = read_series(patch_dir)
    stamp = series_stamp(tag, patches, patch_dir)
    stamp_file = os.path.join(src, '.git', 'kmt-series-stamp')
    head = git(['symbolic-ref', '-q', '--short', 'HEAD'], cwd=src, check=False).stdout.strip()
    dirty = git(['status', '--porcelain', '--untracked-files=no'], cwd=src).stdout.strip()
    if _am_in_progress(src):
        log.warn('a previous git am was left in progress in %s; aborting it' % src)
        git(['am', '--abort'], cwd=src)
        dirty = ''
    elif dirty:
        raise log.StepError(
            'uncommitted changes in %s (branch %s):\n%s\nCommit them (then make export) '
            'or stash them; or build the tree as it is with APPLY=0.'
            % (src, head or '(detached)', dirty))
    if head == branch and cache.fresh(stamp_file, stamp):
        log.info('series up to date on branch %s (%d patches)' % (branch, len(patches)))
        return patches
    with log.phase('apply %d patches (git am)' % len(patches)):
        cache.invalidate(stamp_file)
        git(['checkout', '-q', '-B', branch, tag], cwd=src)
        for p in patches:
            path = os.path.join(patch_dir, p)
            res = git(['am', '-q', path], cwd=src, check=False)
            if res.returncode != 0:
                raise log.StepError(describe_am_failure(p, res.stdout, src))
            log.info('applied %s' % p)
        cache.record(stamp_file, stamp)
    return patches


def am_or_abort(patch_paths, onto, src=None):
    """git am patch_paths, in order, on what src has checked out, as the
    fixed identity (so the commits are the same on every machine). For
    the throw-away branches of checked_out() (make bench's reverted
    kernel, the refcount benchmark's patch): if one does not apply, the
    git am is aborted, so that checked_out() can restore the tree, and the
    error says what did not apply on onto."""
    res = git(['am', '-q'] + list(patch_paths), cwd=src, check=False, env=_GIT_ENV)
    if res.returncode != 0:
        git(['am', '--abort'], cwd=src, check=False)
        raise log.StepError('git am of %s on %s failed (aborted):\n%s'
                            % (', '.join(os.path.basename(p) for p in patch_paths),
                               onto, res.stdout))


def describe_am_failure(patch, output, src):
    files = re.findall(r'^error: (?:patch failed: |)([^:\n]+):\d+', output, re.M)
    files += re.findall(r'^error: ([^:\n]+): (?:does not exist in index|'
                        r'No such file or directory|already exists)', output, re.M)
    seen = []
    for f in files:
        if f not in seen:
            seen.append(f)
    return ('patch %s does not apply%s.\n%s\n'
            'The tree %s is left in the middle of git am: inspect it, then '
            '"git am --abort" there (or just run again: the tool aborts it).'
            % (patch, (' to ' + ', '.join(seen)) if seen else '',
               '\n'.join('    | ' + l for l in output.strip().splitlines()), src))


def export_series(branch, src=paths.SRC, patch_dir=paths.PATCHES, tag=None):
    """git format-patch base..branch into patch_dir and rewrite series.
    The cover letter (0000-cover-letter.patch) is kept as it is."""
    tag = tag or base_tag()
    git(['rev-parse', '-q', '--verify', branch], cwd=src)
    for p in os.listdir(patch_dir):
        if p.endswith('.patch') and not p.startswith('0000-'):
            os.unlink(os.path.join(patch_dir, p))
    res = git(['format-patch', '--zero-commit', '--no-signature', '--base=' + tag,
               '-o', patch_dir, '%s..%s' % (tag, branch)], cwd=src)
    names = [os.path.basename(l.strip()) for l in res.stdout.splitlines() if l.strip()]
    with open(os.path.join(patch_dir, 'series'), 'w') as f:
        f.write('# Order in which the patches apply (git am) on the base.\n')
        f.write('# Written by "make export"; one file name per line.\n')
        for n in names:
            f.write(n + '\n')
    return names


def patch_subject(text):
    """The subject of a format-patch file, unfolded (a long Subject: header
    continues on lines that start with a space), without [PATCH n/m]."""
    m = re.search(r'^Subject: (.*(?:\n[ \t].*)*)', text, flags=re.M)
    if not m:
        return ''
    subject = ' '.join(l.strip() for l in m.group(1).split('\n'))
    return re.sub(r'^(\[PATCH[^]]*\] )?', '', subject)


def new_file_of(patch_text, name):
    """The content of the file name that a patch creates, or None."""
    m = re.search(r'^diff --git a/%s b/%s\nnew file mode .*\n(?:index .*\n)?--- /dev/null\n'
                  r'\+\+\+ b/%s\n@@ [^\n]*@@[^\n]*\n((?:[+].*\n?)*)'
                  % ((re.escape(name),) * 3), patch_text, re.M)
    if not m:
        return None
    return ''.join(l[1:] + '\n' for l in m.group(1).rstrip('\n').split('\n'))


MAIL_WIDTH = 72


def _cells(line):
    return [c.strip().replace('`', '') for c in line.strip().strip('|').split('|')]


def _plain_table(rows, width=MAIL_WIDTH, keys=1, right=()):
    """Markdown table rows (header first, the |---| line already dropped)
    as aligned text columns no wider than `width`. The first `keys`
    columns (the row's labels) are repeated in each block when the table
    has to be split; columns in `right` are right-aligned."""
    ncol = max(len(r) for r in rows)
    rows = [r + [''] * (ncol - len(r)) for r in rows]
    w = [max(len(r[i]) for r in rows) for i in range(ncol)]
    keys = max(1, min(keys, ncol - 1)) if ncol > 1 else ncol
    lead = sum(w[j] + 2 for j in range(keys))
    blocks, cur = [], []
    for i in range(keys, ncol):
        if cur and lead + sum(w[j] + 2 for j in cur) + w[i] > width:
            blocks.append(cur)
            cur = []
        cur.append(i)
    blocks.append(cur)
    out = []
    for blk in blocks:
        cols = list(range(keys)) + blk
        for n, r in enumerate(rows):
            line = '  '.join(r[c].rjust(w[c]) if c in right else r[c].ljust(w[c])
                             for c in cols)
            out.append(line.rstrip())
            if n == 0:
                out.append('  '.join('-' * w[c] for c in cols))
        out.append('')
    return out[:-1]


def plain_text(md, width=MAIL_WIDTH):
    """Markdown tables and long lines as a mailing list reads them: tables
    as aligned columns (split into blocks where too wide), other lines
    wrapped at `width`, backquotes dropped."""
    out, table = [], []

    def flush():
        if not table:
            return
        sep = [l for l in table if re.fullmatch(r'\|[\s:|-]+\|?', l.strip())]
        align = _cells(sep[0]) if sep else []
        right = {i for i, a in enumerate(align) if a.endswith(':')}
        keys = next((i for i, a in enumerate(align) if a.endswith(':')), 1)
        out.extend(_plain_table([_cells(l) for l in table if l not in sep], width,
                                keys=keys, right=right))
        table.clear()
    for line in md.splitlines():
        if line.lstrip().startswith('|'):
            table.append(line)
            continue
        flush()
        line = line.replace('`', '')
        out.extend(textwrap.wrap(line, width) if len(line) > width else [line])
    flush()
    return '\n'.join(out) + ('\n' if md.endswith('\n') else '')


# Benchmarks that start or fork tasks: their instruction count per
# operation moves by several percent between two kernels whose code on
# the path is the same (deferred work lands in whichever counted chunk it
# falls), so the cover letter quotes only their exact tag-store counts.
NOT_REPEATING = ('thread', 'thread8_child', 'fork64m', 'thread2000_child', 'fork2g')


def cover_tables(md):
    """The benchmark tables as the cover letter quotes them: no TCG
    wall-time ratios (they say nothing about hardware), no plugin counts
    (a reader has no such plugin yet), no instruction
    counts that do not repeat: rows whose "repeats" column says no (make
    bench's timer-phase check), or, in a table without that column (an
    older run), those of NOT_REPEATING. A table belongs to the last line
    of text above it."""
    out = []
    title = ''
    repeat_col = None
    # What only this repository's run explains: the legend of the repeats
    # column (the cover letter says it in words) and the run's own ids.
    md = '\n\n'.join(p for p in md.split('\n\n')
                     if not p.startswith('repeats:')
                     and not re.match(r'Base \S+, series [0-9a-f]+\.', p.strip()))
    for line in md.splitlines():
        if line.strip() and not line.lstrip().startswith('|'):
            title = line
            repeat_col = None
        # TCG's own behaviour (wall time, translation blocks) says nothing
        # about hardware; tag stores, barriers and TFSR_EL1 reads are
        # counted by a plugin a reader cannot run yet (not public).
        if title.startswith(('TCG wall time', 'TCG translation blocks', 'Kernel tag stores')):
            continue
        if title.startswith('Instructions per operation') and line.lstrip().startswith('|'):
            cells = _cells(line)
            if cells and cells[0] == 'benchmark':
                repeat_col = cells.index('repeats') if 'repeats' in cells else None
            elif repeat_col is not None and not set(cells[0]) <= set('-:'):
                if cells[repeat_col].startswith('no'):
                    continue
            elif repeat_col is None and cells[0] in NOT_REPEATING:
                continue
        out.append(line)
    text = re.sub(r'\n{3,}', '\n\n', '\n'.join(out))
    return text.strip('\n') + '\n'


def series_diffstat(src=None):
    """git diff --stat of the base against the series branch, as a cover
    letter carries it (72 columns); '' without a tree holding both."""
    src = src or paths.SRC
    if not os.path.isdir(os.path.join(src, '.git')):
        return ''
    res = git(['diff', '--stat=72', '--summary', base_tag(), BRANCH], cwd=src, check=False)
    return res.stdout if res.returncode == 0 else ''


def shortlog(subjects):
    """The subjects as git format-patch's cover letter lists them: two
    columns in, wrapped at 72 with continuation lines four in."""
    return '\n'.join(textwrap.fill(s, width=72, initial_indent='  ', subsequent_indent='    ',
                                    break_long_words=False, break_on_hyphens=False)
                      for s in subjects)


def fold_subject(text, width=75):
    """The Subject: header of a mail (the first of its header block, which
    ends at the first empty line) folded at spaces (RFC 5322: a
    continuation line starts with white space), so that no line of it
    passes width columns."""
    head, sep, rest = text.partition('\n\n')
    lines = head.split('\n')
    for i, line in enumerate(lines):
        if not line.startswith('Subject: '):
            continue
        if len(line) <= width:
            break
        out, cur = [], ''
        for word in line.split(' '):
            if cur and len(cur) + 1 + len(word) > width:
                out.append(cur)
                cur = ''
            cur = (cur + ' ' + word) if cur or out else word
        out.append(cur)
        lines[i:i + 1] = out
        break
    return '\n'.join(lines) + sep + rest


def config_options(lines, symbols):
    """The options a config fragment sets, as a cover letter names them
    (SMP, NR_CPUS=8), in order, each once with its last value (as
    merge_config.sh would leave it), without
    those the base's Kconfig does not define (symbols)."""
    opts = {}
    for line in lines:
        m = re.match(r'^CONFIG_([A-Z0-9_]+)=(.*)$', line.strip())
        if not m or m.group(1) not in symbols:
            continue
        opts[m.group(1)] = m.group(2)     # where it first came, its last value
    return [k if v == 'y' else '%s=%s' % (k, v) for k, v in opts.items()]


def benchmark_config_text(symbols, cfg_name='lean'):
    """The benchmark kernel's options after allnoconfig, wrapped for a
    cover letter: the fragments of targets.CONFIGS[cfg_name]."""
    from . import targets
    return fragment_options_text(targets.CONFIGS[cfg_name].fragments, symbols)


def fragment_options_text(fragments, symbols):
    """The options config fragments set, wrapped for a cover letter."""
    lines = []
    for frag in fragments:
        with open(os.path.join(paths.CONFIGS, frag)) as f:
            lines += f.read().splitlines()
    return textwrap.fill(', '.join(config_options(lines, symbols)), 72,
                         break_on_hyphens=False, break_long_words=False)
