"""The generated sections of the documentation: README.md and docs/*.md
hold tables between <!-- marker:begin --> and <!-- marker:end --> lines,
which the commands that measure them rewrite. A marker lives in exactly
one file, so a section can move between pages without touching the code."""

import glob
import os
import re

from . import log, paths


def pages(repo=None):
    repo = repo or paths.REPO
    return [os.path.join(repo, 'README.md')] + sorted(glob.glob(os.path.join(repo, 'docs',
                                                                             '*.md')))


def _pattern(marker):
    return re.compile(r'(<!-- %s:begin -->\n).*?(<!-- %s:end -->)'
                      % (re.escape(marker), re.escape(marker)), re.S)


def read_section(marker, repo=None):
    """The text of section marker, or None."""
    for page in pages(repo):
        with open(page) as f:
            m = _pattern(marker).search(f.read())
        if m:
            return m.group(0)[len(m.group(1)):-len(m.group(2))]
    return None


def replace_section(marker, table, repo=None):
    """Put table into the section marker; returns the page's path relative
    to the repository."""
    repo = repo or paths.REPO
    pat = _pattern(marker)
    found = []
    for page in pages(repo):
        with open(page) as f:
            text = f.read()
        if pat.search(text):
            found.append((page, text))
    if len(found) != 1:
        raise log.StepError('%s <!-- %s:begin/end --> sections in README.md and docs/*.md '
                            '(need exactly one)%s'
                            % ('no' if not found else len(found), marker,
                               ': ' + ', '.join(os.path.relpath(p, repo) for p, _ in found)
                               if found else ''))
    page, text = found[0]
    with open(page, 'w') as f:
        f.write(pat.sub(lambda m: m.group(1) + table + m.group(2), text, count=1))
    return os.path.relpath(page, repo)
