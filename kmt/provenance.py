"""A figure in a base's patch or posting comes from a run of that base.

Two checks on the text of a commit message or cover letter, shared by the
postings check and the series gate 'provenance':

  figure_problems  a sentence that carries a figure (instructions, bytes,
                   cases, tag stores, bloat-o-meter, a percentage) and
                   names a kernel release other than the base's (6.12.117
                   in a posting based on v7.3.4). History stays allowed: a
                   release without its patch level after "since", "in",
                   "from", ... or in parentheses ("since v6.13", "(v5.5)").
  config_problems  an option (CONFIG_FOO, or FOO=y/n/m) that no Kconfig file
                   of the base (with the series applied) defines.
"""

import re

from . import source

# What makes a sentence carry a figure (a unit, a count, a before -> after).
_FIGURE = re.compile(r'\b(?:instructions?|insns?|bytes|KiB|MiB|KB|MB|cases|tag stores'
                     r'|barriers|cycles|bloat-o-meter|per operation|counted)\b|\d%|\S\s->\s',
                     re.I)
# A kernel release: v6.12 / v7.3.4, 6.12.117, Linux 6.12 / linux-source-6.12 /
# on 6.12, and 6.12 before .y, 's, -based, kernel, series, suite, base or tree. Other
# tools' versions (QEMU 10.0, clang 14.0.6) have a two-digit major or come
# without one of those forms.
_RELEASE = re.compile(r"""
    (?P<pre>\(|\b(?i:since|in|until|before|after|from)\s+)?
    (?:
      (?<![\w.])v(?P<v>[2-9]\.\d{1,2}(?:\.\d{1,3})?)(?![\w.])
    | (?<![\w.])(?P<three>[2-9]\.\d{1,2}\.\d{1,3})(?![\w.]|\.\d)
    | \b(?:Linux\s|linux-source-|[Oo]n\s)(?P<named>[2-9]\.\d{1,2})(?![\w.]|\.\d)
    | (?<![\w.])(?P<two>[2-9]\.\d{1,2})
      (?=\.y\b|'s\b|-based\b|\s(?:kernel|series|suite|base|tree)\b)
    )""", re.X)
_SENTENCE = re.compile(r'(?<=[.;:])\s+(?=[A-Z(])|\n\s*\n')
# CONFIG_FOO, or FOO_BAR=y/n/m as a configuration is written in prose.
_OPTION = re.compile(r'\bCONFIG_([A-Z0-9_]*[A-Z0-9])\b|(?<![\w.-])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)'
                     r'=[ynm]\b')


def _major_minor(version):
    m = re.match(r'v?(\d+)\.(\d+)', version)
    return (int(m.group(1)), int(m.group(2))) if m else None


def in_kernel_log(lines):
    """For each line of a commit message, whether it is part of a quoted
    kernel log: from a BUG:/WARNING: or timestamp line to the next blank
    line (checkpatch's commit_log_possible_stack_dump). Such lines hold
    addresses, not commit ids."""
    flags, dump = [], False
    for line in lines:
        if re.match(r'\s*(?:WARNING:|BUG:|\[\s*\d+\.\d{6}\s*\])', line):
            dump = True
        elif not line.strip():
            dump = False
        flags.append(dump)
    return flags


def message(mail):
    """The part of a patch mail a reader reads as its message: up to the
    first --- line (the diffstat and diff are code, not claims)."""
    return mail.split('\n---\n', 1)[0]


def releases(sentence):
    """[(release, is_history)] named in sentence."""
    out = []
    for m in _RELEASE.finditer(sentence):
        rel = m.group('v') or m.group('three') or m.group('named') or m.group('two')
        history = bool(m.group('pre')) and bool(m.group('v')) and rel.count('.') == 1
        out.append((rel, history))
    return out


def figure_problems(text, base):
    """Sentences of text that carry a figure and name a kernel release whose
    major.minor is not base's (base: 'v7.3.4', '6.12.118', ...)."""
    want = _major_minor(base)
    problems = []
    for sentence in _SENTENCE.split(text):
        if not sentence or not _FIGURE.search(sentence):
            continue
        other = sorted({r for r, history in releases(sentence)
                        if not history and _major_minor(r) != want})
        if other:
            flat = ' '.join(sentence.split())
            problems.append('a figure from %s in a text for %s: "%s"'
                            % (', '.join(other), base, flat[:160]))
    return problems


def config_problems(text, symbols):
    """Options named in text that symbols (the Kconfig symbols of the base
    with the series) does not have, each once."""
    problems, seen = [], set()
    for m in _OPTION.finditer(text):
        name = m.group(1) or m.group(2)
        if name in symbols or name in seen:
            continue
        seen.add(name)
        problems.append('CONFIG_%s is not an option of this base (no Kconfig defines it)'
                        % name)
    return problems


def kconfig_symbols(rev, src=None):
    """Every symbol a Kconfig file defines in the tree at rev."""
    res = source.git(['grep', '-h', '-I', '-E', r'^\s*(menu)?config\s+[A-Z0-9_]+', rev,
                      '--', '*Kconfig*'], cwd=src, check=False)
    return {l.split()[1] for l in res.stdout.splitlines() if len(l.split()) > 1}
