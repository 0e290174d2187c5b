"""The command line: one function per subcommand, as kunit.py has."""

import argparse
import contextlib
import io
import unittest

from kmt import __main__ as cli, targets


def subcommands():
    ap = cli.build_parser()
    sub = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


class CommandLineTest(unittest.TestCase):
    def test_every_subcommand_has_its_own_function(self):
        for name, p in subcommands().items():
            func = p.get_default('func')
            self.assertIsNotNone(func, name)
            self.assertEqual(func.__name__, 'cmd_' + name.replace('-', '_'), name)

    def test_main_is_short(self):
        import inspect
        self.assertLess(len(inspect.getsource(cli.main).splitlines()), 30)

    def test_dry_run_refused_where_it_would_run_steps(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(cli.main(['--dry-run', 'bench']), 2)
        self.assertIn('supported by', err.getvalue())

    def test_cells_lists_every_cell_once(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(cli.main(['cells']), 0)
        # (the phase summary of earlier tests' steps may follow the list)
        names = [l.split()[1] for l in out.getvalue().splitlines()
                 if l.split()[:1] and l.split()[0] in targets.MATRICES]
        self.assertIn('sync', names)
        self.assertEqual(len(names), len(set(names)))


if __name__ == '__main__':
    unittest.main()
