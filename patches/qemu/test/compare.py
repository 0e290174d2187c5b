#!/usr/bin/env python3
"""compare.py REFERENCE.counts NEW.counts: compare what the project's
plugin (plugin/kmt-count.c, output lines "kmt-count ...") and the contrib
plugin of this posting (contrib/plugins/mte.c) counted in the same boot:
every region, the whole run and every kernel call chain, read and compared
by the project's own kmt/plugin.py (parse(), parse_contrib(),
differences()), as make bench does on every run. Prints both numbers
side by side; exits 1 on any difference."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..'))
from kmt import plugin  # noqa: E402


def read(path):
    with open(path, errors='replace') as f:
        return f.read().splitlines()


def main():
    ref = plugin.parse(read(sys.argv[1]))
    new = plugin.parse_contrib(read(sys.argv[2]))
    print('%-9s %-7s %-14s %14s %14s' % ('region', 'space', 'counter', 'reference', 'contrib'))
    rows = [(r['region'], r['counts'], n['counts']) for r, n in zip(ref.regions, new.regions)]
    rows.append(('whole', (ref.exit or {}).get('counts', {}), (new.exit or {}).get('counts', {})))
    for region, a, b in rows:
        for name in sorted(set(a) | set(b)):
            if name in plugin.CONTRIB_ABSENT:
                continue
            for side, space in enumerate(('user', 'kernel')):
                x = a[name][side] if name in a else None
                y = b[name][side] if name in b else None
                if x or y:
                    note = '' if x == y else ('  (only in contrib)' if x is None
                                             else '  <-- differs')
                    print('%-9s %-7s %-14s %14s %14s%s' % (region, space, name,
                                                           '-' if x is None else x,
                                                           '-' if y is None else y, note))
    chains = sum(len(c) for c in ref.chains.values()), sum(len(c) for c in new.chains.values())
    print('call chains: reference %d, contrib %d kernel' % chains)
    diffs = plugin.differences(ref, new)
    for d in diffs:
        print(d)
    print('RESULT: %s (%d regions compared)'
          % ('identical' if not diffs else '%d difference(s)' % len(diffs), len(ref.regions)))
    return 1 if diffs else 0


sys.exit(main())
