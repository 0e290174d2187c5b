"""kmt's modules import each other in one direction only: no module
imports (at its top or inside a function) one that imports it back,
directly or through others."""

import ast
import os
import unittest

KMT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'kmt')


def import_graph(pkg_dir=KMT):
    """{module: set of kmt modules it imports}, every `from . import x`
    and `from .x import y` counted, wherever it is in the file."""
    mods = {f[:-3] for f in os.listdir(pkg_dir) if f.endswith('.py')}
    graph = {}
    for m in mods:
        with open(os.path.join(pkg_dir, m + '.py')) as f:
            tree = ast.parse(f.read())
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names = [node.module.split('.')[0]] if node.module else \
                    [a.name for a in node.names]
                deps.update(n for n in names if n in mods and n != m)
        graph[m] = deps
    return graph


def cycles(graph):
    """Each cycle found by a depth-first walk, as [a, b, ..., a]."""
    found, state, stack = [], {}, []

    def walk(u):
        state[u] = 'open'
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 'open':
                found.append(stack[stack.index(v):] + [v])
            elif v not in state:
                walk(v)
        stack.pop()
        state[u] = 'done'
    for u in sorted(graph):
        if u not in state:
            walk(u)
    return found


class ImportGraphTest(unittest.TestCase):
    def test_finds_a_cycle(self):
        g = {'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}
        self.assertEqual(cycles(g), [['a', 'b', 'c', 'a']])
        self.assertEqual(cycles({'a': {'b'}, 'b': set()}), [])

    def test_kmt_imports_run_one_way(self):
        graph = import_graph()
        self.assertIn('bench', graph['lavarun'])
        self.assertEqual(cycles(graph), [],
                         'import circles: ' + '; '.join(' -> '.join(c) for c in cycles(graph)))


if __name__ == '__main__':
    unittest.main()
