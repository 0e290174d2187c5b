#!/usr/bin/env python3
"""compare.py REFERENCE.counts NEW.counts: compare what the project's
plugin (plugin/kmt-count.c, output lines "kmt-count ...") and the contrib
plugin of this posting (contrib/plugins/mte.c) counted in the same boot:
every region, the whole run and every kernel call chain. Prints both
numbers side by side; exits 1 on any difference."""
import sys

REF_NAMES = {'insn': 'insns', 'tfsr_read': 'mrs_tfsr_el1'}
SKIP = {'tb', 'tb_xpage'}


def kv(tokens):
    return dict(t.split('=', 1) for t in tokens if '=' in t)


def parse_ref(path):
    regions, chains = {}, {}
    for line in open(path, errors='replace'):
        t = line.split()
        if not t or t[0] != 'kmt-count':
            continue
        f = kv(t[1:])
        if t[1] == 'chain':
            key = (int(f['region']), f['class'],
                   tuple(int(p, 16) for p in f['pcs'].split(',')))
            chains[key] = chains.get(key, 0) + int(f['count'])
        elif 'region' in f or t[1] == 'exit':
            r = 'total' if t[1] == 'exit' else int(f['region'])
            for k, v in f.items():
                if ',' in v and k not in SKIP and k != 'pcs':
                    u, kern = (int(x) for x in v.split(','))
                    name = REF_NAMES.get(k, k)
                    regions[(r, 'user', name)] = u
                    regions[(r, 'kernel', name)] = kern
    return regions, chains


def parse_new(path):
    regions, chains = {}, {}
    for line in open(path, errors='replace'):
        t = line.split()
        if not t:
            continue
        if t[0] == 'callchain':
            f = kv(t[1:])
            key = (int(f['region']), f['class'],
                   tuple(int(p, 16) for p in f['pcs'].split(',')))
            chains[key] = chains.get(key, 0) + int(f['count'])
        elif t[0].startswith('region=') or t[0] == 'total':
            f = kv(t)
            r = 'total' if t[0] == 'total' else int(f['region'])
            for k, v in f.items():
                if k not in ('region', 'space'):
                    regions[(r, f['space'], k)] = int(v)
    return regions, chains


def main():
    ref, ref_chains = parse_ref(sys.argv[1])
    new, new_chains = parse_new(sys.argv[2])
    bad = 0
    print('%-6s %-7s %-14s %14s %14s' % ('region', 'space', 'counter',
                                         'reference', 'contrib'))
    for key in sorted(ref, key=lambda k: (str(k[0]).zfill(6), k[1], k[2])):
        got = new.get(key)
        mark = '' if got == ref[key] else '  <-- differs'
        bad += bool(mark)
        if ref[key] or got or mark:
            print('%-6s %-7s %-14s %14d %14s%s' % (key + (ref[key], got, mark)))
    extra = sorted((k for k in new if k not in ref and new[k]),
                   key=lambda k: (str(k[0]).zfill(6), k[1], k[2]))
    for key in extra:
        print('%-6s %-7s %-14s %14s %14d  (only in contrib)' % (key + ('-', new[key])))
    # chains: the reference records kernel tag stores only
    kern_new = {k: v for k, v in new_chains.items() if k[2][0] >> 55 & 1}
    same = sum(1 for k in ref_chains if kern_new.get(k) == ref_chains[k])
    print('call chains: reference %d (%d tag stores), contrib %d kernel (%d '
          'tag stores), identical %d'
          % (len(ref_chains), sum(ref_chains.values()), len(kern_new),
             sum(kern_new.values()), same))
    if ref_chains or kern_new:
        if same != len(ref_chains) or len(kern_new) != len(ref_chains):
            bad += 1
            print('call chains differ')
    print('RESULT: %s (%d regions compared)'
          % ('identical' if not bad else '%d difference(s)' % bad,
             len({k[0] for k in ref if k[0] != 'total'})))
    return 1 if bad else 0


sys.exit(main())
