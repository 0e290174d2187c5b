"""The fidelity gate: every way a backport differs from the mainline
change it carries, shown to the reviewer, and a failure for each
difference its `[ ... ]` note does not name.

Two references, by what the sender has:

- a mainline clone (LINUX_GIT=): the backport's added and removed lines
  against those of `git show <id>`, file by file (exact);
- otherwise the tree of the newest mainline base here (7.3.4, where
  mainline's change lives): for each line the backport adds or removes,
  how often it stands in the patched base against how often it stands in
  mainline's file, within the function the hunk is in where both files
  have it. A line the backport adds that mainline lacks, or one it
  removes that mainline kept, is a difference. Only lines that name
  something (an identifier of three or more characters that is not a C
  keyword) are compared: a lone brace or `return;` says nothing about
  the shape of a change. What mainline changed elsewhere, beyond the
  lines the backport touches, only a clone shows.

A difference is named when the note quotes the line, or names an
identifier of the line that the other side does not have, or the
function the line is in.
"""

import collections
import dataclasses
import os
import re
import subprocess

from . import backport, log

KEYWORDS = frozenset('''auto bool break case char const continue default do double else
enum extern float for goto if inline int long register return short signed sizeof static
struct switch typedef union unsigned void volatile while true false NULL
define undef ifdef ifndef elif endif include pragma'''.split())
_IDENT = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')


def norm(line):
    return ' '.join(line.split())


def idents(line):
    return [t for t in _IDENT.findall(line) if len(t) >= 3 and t not in KEYWORDS]


@dataclasses.dataclass
class Change:
    path: str
    sign: str           # '+' or '-'
    line: str           # normalized
    lineno: int         # in the new file ('+') or the old one ('-'), 1-based
    func: str = ''      # the function it is in ('' at file scope)
    block: int = 0      # the run of added (or removed) lines it is in


def diff_changes(diff_text):
    """The added and removed lines of a unified diff (up to a format-patch
    signature), with file and line number; and the paths it touches."""
    out, path, paths, old, new = [], None, [], 0, 0
    for raw in diff_text.split('\n'):
        if raw == '-- ':
            break
        if raw.startswith('diff --git '):
            m = re.match(r'diff --git a/(\S+) b/(\S+)', raw)
            path = m.group(2) if m else None
            if path:
                paths.append(path)
            continue
        if raw.startswith(('+++', '---', 'index ', 'new file', 'deleted file')):
            continue
        m = re.match(r'^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@', raw)
        if m:
            old, new = int(m.group(1)), int(m.group(2))
            continue
        if not path:
            continue
        if raw.startswith('+'):
            if raw[1:].strip():
                out.append(Change(path, '+', norm(raw[1:]), new))
            new += 1
        elif raw.startswith('-'):
            if raw[1:].strip():
                out.append(Change(path, '-', norm(raw[1:]), old))
            old += 1
        else:
            old, new = old + 1, new + 1
    # Runs: changes of one file and sign on consecutive lines (blank ones
    # between them not counted) are one block.
    for i, c in enumerate(out):
        p = out[i - 1] if i else None
        same = p and p.path == c.path and p.sign == c.sign and 0 < c.lineno - p.lineno <= 2
        c.block = p.block if same else (p.block + 1 if p else 1)
    return out, paths


_DEF = re.compile(r'^[A-Za-z_][^;]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*\(')


def enclosing_function(text, lineno):
    """The name of the C function whose definition holds line lineno of
    text (1-based), or '' at file scope."""
    lines = (text or '').split('\n')
    for i in range(min(lineno, len(lines)) - 1, -1, -1):
        l = lines[i]
        if l.startswith('}') and i != lineno - 1:
            return ''
        m = _DEF.match(l)
        if m and not l.rstrip().endswith(';') and not l.startswith(('#', 'typedef')):
            return m.group(1)
    return ''


def attach_funcs(changes, new_text, old_text):
    """Set each change's function from the file it is a line of: new_text
    and old_text map a path to the file after and before the diff."""
    for c in changes:
        c.func = enclosing_function((new_text if c.sign == '+' else old_text).get(c.path),
                                    c.lineno)


def function_body(text, name):
    """The lines of the definition of function name in C source text (from
    its declarator line to the closing brace), or None."""
    if not name or text is None:
        return None
    lines = text.split('\n')
    start = re.compile(r'^[A-Za-z_].*\b%s\s*\(' % re.escape(name))
    for i, l in enumerate(lines):
        if not start.match(l) or l.rstrip().endswith(';'):
            continue
        depth, opened = 0, False
        for j in range(i, min(len(lines), i + 2000)):
            depth += lines[j].count('{') - lines[j].count('}')
            opened = opened or '{' in lines[j]
            if opened and depth <= 0:
                return lines[i:j + 1]
            if not opened and lines[j].rstrip().endswith(';'):
                break
    return None


def count(line, lines):
    return sum(1 for l in lines if norm(l) == line)


@dataclasses.dataclass
class Difference:
    path: str
    func: str
    line: str
    ours: int           # how often the backport has it (tree mode: in the patched file)
    theirs: int         # how often mainline has it
    why: str = ''       # how the note names it ('' : it does not)
    blocks: tuple = ()  # the runs of changed lines it stands in

    def describe(self):
        where = '%s%s' % (self.path, ' %s()' % self.func if self.func else '')
        return '%s: "%s" (backport %d, mainline %d)' % (where, self.line, self.ours,
                                                       self.theirs)


def named_by(note, d, other_text):
    """How note names the difference d, or ''. other_text: the side that
    does not have the line as often (for the identifiers only one side has)."""
    flat = norm(note)
    if d.line in flat:
        return 'quoted'
    other = set(_IDENT.findall(other_text or ''))
    for t in idents(d.line):
        if t not in other and re.search(r'\b%s\b' % re.escape(t), flat):
            return 'names %s' % t
    if d.func and re.search(r'\b%s\(\)' % re.escape(d.func), flat):
        return 'names %s()' % d.func
    return ''


def tree_differences(changes, after, mainline):
    """Differences against a mainline tree. after, mainline: path -> file
    text (None: no such file)."""
    out, seen = [], set()
    for c in changes:
        if not idents(c.line) or (c.path, c.line) in seen:
            continue
        seen.add((c.path, c.line))
        a_text, m_text = after.get(c.path), mainline.get(c.path)
        if m_text is None:
            out.append(Difference(c.path, '', '(file not in mainline)', 1, 0))
            seen.update((c.path, x.line) for x in changes if x.path == c.path)
            continue
        a_scope = function_body(a_text, c.func)
        m_scope = function_body(m_text, c.func)
        if a_scope is None or m_scope is None:
            a_scope, m_scope = (a_text or '').split('\n'), m_text.split('\n')
        a, m = count(c.line, a_scope), count(c.line, m_scope)
        if a != m:
            d = Difference(c.path, c.func, c.line, a, m,
                           blocks=tuple(x.block for x in changes
                                        if x.path == c.path and x.line == c.line))
            d.other = '\n'.join(m_scope if a > m else a_scope)
            out.append(d)
    return out


def diff_differences(ours, theirs):
    """Differences between the backport's diff lines and upstream's (clone)."""
    key = lambda c: (c.path, c.sign, c.line)
    a = collections.Counter(key(c) for c in ours)
    m = collections.Counter(key(c) for c in theirs)
    funcs = {key(c): c.func for c in list(ours) + list(theirs)}
    our_text = '\n'.join(c.line for c in ours)
    their_text = '\n'.join(c.line for c in theirs)
    out = []
    for k in sorted(set(a) | set(m)):
        if a[k] != m[k]:
            d = Difference(k[0], funcs[k], '%s%s' % (k[1], k[2]), a[k], m[k],
                           blocks=tuple(('ours', c.block) for c in ours if key(c) == k) +
                           tuple(('theirs', c.block) for c in theirs if key(c) == k))
            d.other = their_text if a[k] > m[k] else our_text
            out.append(d)
    return out


def note_text(patch_text):
    p = backport.Patch(patch_text)
    return '\n'.join(backport.split_body(p.body)[1])


def judge(patch_text, differences):
    """Mark each difference with how the note names it; the unnamed ones."""
    note = note_text(patch_text)
    for d in differences:
        # Without the '+'/'-' of a clone diff line for the quote check.
        line = d.line[1:] if d.line[:1] in '+-' and d.line[1:2] != '-' else d.line
        d.why = named_by(note, dataclasses.replace(d, line=line), getattr(d, 'other', ''))
    # A run of changed lines the note names a line of is named as a whole
    # (e.g. an #ifndef block whose first line the note quotes).
    named_blocks = {b for d in differences if d.why for b in d.blocks}
    for d in differences:
        if not d.why and set(d.blocks) & named_blocks:
            d.why = 'in a run of lines the note names'
    return [d for d in differences if not d.why]


def git_show(repo, rev_path):
    res = subprocess.run(['git', '-C', repo, 'show', rev_path], capture_output=True,
                         text=True, errors='replace')
    return res.stdout if res.returncode == 0 else None


def upstream_diff(linux_git, cid):
    res = subprocess.run(['git', '-C', linux_git, 'show', '--format=', '--no-renames', cid],
                         capture_output=True, text=True, errors='replace')
    if res.returncode != 0:
        raise log.StepError('git show %s in %s: %s' % (cid, linux_git, res.stderr.strip()))
    return res.stdout


def check_backport(patch_text, series_tree, sha, mainline_tree=None, mainline_rev=None,
                   linux_git=None):
    """(differences, unnamed, mode) for one backport: the patch file text,
    the series tree and the commit that applied it there; mainline as a
    tree at a revision, or a clone (linux_git)."""
    p = backport.Patch(patch_text)
    cid = p.upstream_id()
    changes, paths_ = diff_changes(p.rest)
    after = {f: git_show(series_tree, '%s:%s' % (sha, f)) for f in paths_}
    before = {f: git_show(series_tree, '%s^:%s' % (sha, f)) for f in paths_}
    attach_funcs(changes, after, before)
    if linux_git:
        theirs, their_paths = diff_changes(upstream_diff(linux_git, cid))
        attach_funcs(theirs, {f: git_show(linux_git, '%s:%s' % (cid, f)) for f in their_paths},
                     {f: git_show(linux_git, '%s^:%s' % (cid, f)) for f in their_paths})
        diffs = diff_differences(changes, theirs)
        mode = 'git show %s' % cid[:12]
    else:
        mainline = {f: git_show(mainline_tree, '%s:%s' % (mainline_rev, f)) for f in paths_}
        diffs = tree_differences(changes, after, mainline)
        mode = 'mainline tree %s' % mainline_rev
    return diffs, judge(patch_text, diffs), mode


# ---- the series gate ------------------------------------------------------

REFERENCE_BASE = '7.3'      # bases.py: the newest mainline base here


def reference_tree(prepare):
    """(tree, revision) of the mainline base as shipped: its kernel tree
    and base tag, unpacked first by prepare() when there is none yet."""
    from . import bases, paths
    tree = os.path.join(paths.BUILD, REFERENCE_BASE, 'linux')
    if not os.path.isdir(os.path.join(tree, '.git')):
        prepare()
    tags = subprocess.run(['git', '-C', tree, 'tag', '-l', 'base/*'], capture_output=True,
                          text=True).stdout.split()
    if len(tags) != 1:
        raise log.StepError('the %s tree %s has %s base tags, not one' % (
            bases.BASES[REFERENCE_BASE].package, tree, len(tags)))
    return tree, tags[0]


def gate(patch_names, patch_dir, series_tree, shas, mainline, linux_git=None, report=None):
    """One test per backport of the series: (name, ok, detail) and the
    report lines (every difference, named or not). shas: the series
    commit of each patch name; mainline: (tree, rev) when there is no
    clone."""
    tests, lines = [], []
    for name in patch_names:
        with open(os.path.join(patch_dir, name)) as f:
            text = f.read()
        cid = backport.Patch(text).upstream_id()
        if not cid:
            continue
        problems = backport.stored_form_problems(text, name)
        diffs, unnamed, mode = check_backport(
            text, series_tree, shas[name], *(mainline or (None, None)), linux_git=linux_git)
        lines.append('%s: backport of %s, against %s: %d differences, %d not named by '
                     'its note' % (name, cid[:12], mode, len(diffs), len(unnamed)))
        for d in diffs:
            lines.append('  %s  %s' % ('named (%s):' % d.why if d.why else 'NOT NAMED:',
                                       d.describe()))
        lines += ['  ' + p for p in problems]
        detail = '; '.join([d.describe() + ' is not named by the note' for d in unnamed[:3]]
                           + problems)
        tests.append((name, not unnamed and not problems, detail))
    return tests, lines
