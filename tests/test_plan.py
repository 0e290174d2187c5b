"""make DRY_RUN=1 check: the plan, with nothing run and nothing written."""

import builtins
import contextlib
import io
import os
import subprocess
import unittest
from unittest import mock

from kmt import __main__ as kmt_main
from kmt import targets


def _forbidden(*args, **kwargs):
    raise AssertionError('a dry run started a process: %r' % (args[:1],))


_open = builtins.open


def _read_only_open(file, mode='r', *args, **kwargs):
    if any(c in mode for c in 'wax+'):
        raise AssertionError('a dry run opened %s for writing' % file)
    return _open(file, mode, *args, **kwargs)


@contextlib.contextmanager
def nothing_runs():
    with mock.patch.object(subprocess, 'Popen', _forbidden), \
            mock.patch.object(subprocess, 'run', _forbidden), \
            mock.patch.object(subprocess, 'call', _forbidden), \
            mock.patch.object(os, 'system', _forbidden), \
            mock.patch.object(os, 'makedirs', _forbidden), \
            mock.patch.object(builtins, 'open', _read_only_open):
        yield


def dry(*argv):
    out, err = io.StringIO(), io.StringIO()
    with nothing_runs(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = kmt_main.main(['--dry-run'] + list(argv))
    return rc, out.getvalue(), err.getvalue()


class DryRunTest(unittest.TestCase):
    def test_check_plan_names_every_cell_and_kernel(self):
        rc, out, _ = dry('check')
        self.assertEqual(rc, 0)
        for c in targets.CHECK:
            self.assertIn('  boot %s (timeout' % c.name, out)
            self.assertIn('build %s:' % c.config, out)
        self.assertIn('qemu-system-aarch64 -machine virt,mte=on', out)
        self.assertIn('series gates:', out)

    def test_check_all_and_one_cell(self):
        rc, out, _ = dry('check', '--all')
        self.assertEqual(rc, 0)
        for c in targets.CHECK_ALL:
            self.assertIn('  boot %s (timeout' % c.name, out)
        rc, out, _ = dry('--cell', 'llsc', 'check')
        self.assertEqual(rc, 0)
        self.assertEqual(out.count('  boot '), 1)
        self.assertNotIn('series gates', out)

    def test_commands_that_would_have_to_run_refuse(self):
        for cmd in ('bench', 'series-check', 'prepare'):
            rc, out, err = dry(cmd)
            self.assertEqual(rc, 2, cmd)
            self.assertIn('supported by', err)
            self.assertEqual(out, '')


if __name__ == '__main__':
    unittest.main()
