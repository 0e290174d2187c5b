"""Compiler and sparse warnings read from a build's output, for the W=1
gates (series.py on arm64, x86check.py on x86_64)."""

import collections
import re

_DIAG = re.compile(r'^(?P<file>[^\s:]+\.[ch]):(?P<line>\d+):(?:(?P<col>\d+):)?\s*'
                   r'(?P<kind>warning|error):\s*(?P<msg>.*)$')


def diagnostics(text):
    """Compiler and sparse warnings as a multiset of (file, message):
    line numbers are dropped so that a patch that moves code does not make
    an old warning look new."""
    found = collections.Counter()
    for line in text.splitlines():
        m = _DIAG.match(line.strip())
        if m:
            f = m.group('file')
            f = f[2:] if f.startswith('./') else f
            found[(f, m.group('kind'), m.group('msg').strip())] += 1
    return found


def own_diagnostics(found, path):
    """Only the warnings located in `path` itself: make also builds (and
    sparse checks) other objects on the way, e.g. the vDSO."""
    return collections.Counter({k: n for k, n in found.items()
                                if k[0] == path or k[0].endswith('/' + path)})


def new_diagnostics(before, after):
    """Warnings in `after` that `before` does not have (multiset difference)."""
    return sorted((after - before).elements())
