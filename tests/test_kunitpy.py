"""The kunit.py cell: reading kunit.py's JSON, comparing with a cell."""

import os
import unittest

from kmt import bootspec, kunitpy, results, targets

JSON = {'name': 'KUnit Test Group', 'test_cases': [], 'sub_groups': [
    {'name': 'refcount', 'test_cases': [
        {'name': 'refcount_test_set', 'status': 'PASS'},
        {'name': 'refcount_test_race', 'status': 'SKIP'},
        {'name': 'refcount_test_dec', 'status': 'FAIL'}],
     'sub_groups': [
         {'name': 'refcount_test_add_not_zero', 'test_cases': [
             {'name': '0', 'status': 'PASS'}, {'name': 'INT_MAX', 'status': 'FAIL'}],
          'sub_groups': [], 'misc': {'tests': 2, 'passed': 1, 'failed': 1, 'crashed': 0,
                                     'skipped': 0, 'errors': 0}},
         {'name': 'refcount_test_inc', 'test_cases': [{'name': '0', 'status': 'PASS'}],
          'sub_groups': [], 'misc': {'tests': 1, 'passed': 1, 'failed': 0, 'crashed': 0,
                                     'skipped': 0, 'errors': 0}},
         {'name': 'refcount_test_smp', 'test_cases': [{'name': '0', 'status': 'SKIP'}],
          'sub_groups': [], 'misc': {'tests': 1, 'passed': 0, 'failed': 0, 'crashed': 0,
                                     'skipped': 1, 'errors': 0}}]}]}


class KunitPyTest(unittest.TestCase):
    def test_case_statuses(self):
        got = kunitpy.case_statuses(JSON, 'refcount')
        self.assertEqual(got, {'refcount_test_set': results.PASS,
                               'refcount_test_race': results.SKIP,
                               'refcount_test_dec': results.FAIL,
                               'refcount_test_add_not_zero': results.FAIL,
                               'refcount_test_inc': results.PASS,
                               'refcount_test_smp': results.SKIP})
        self.assertIsNone(kunitpy.case_statuses(JSON, 'kasan'))

    def test_differences_both_ways(self):
        rec = {'tests': [results.test('refcount', 'refcount_test_set', results.PASS),
                         results.test('refcount', 'refcount_test_dec', results.XFAIL, 'known'),
                         results.test('refcount', 'refcount_test_new', results.PASS),
                         results.test('kasan', 'kmalloc_oob_right', results.PASS)],
               'problems': []}
        kmt = kunitpy.record_statuses(rec, 'refcount')
        self.assertEqual(set(kmt), {'refcount_test_set', 'refcount_test_dec', 'refcount_test_new'})
        here = {'refcount_test_set': results.PASS, 'refcount_test_dec': results.FAIL,
                'refcount_test_race': results.SKIP}
        diffs = kunitpy.differences(here, kmt)
        self.assertEqual(diffs, [('refcount_test_new', None, results.PASS),
                                 ('refcount_test_race', results.SKIP, None)])
        self.assertIn('refcount_test_new: kunit.py missing', kunitpy.describe(diffs))
        self.assertEqual(kunitpy.differences(here, dict(here)), [])

    def test_runs_name_real_cells_and_configs(self):
        for r in kunitpy.RUNS:
            cell = kunitpy.find_cell(r.cell)
            self.assertIn(r.kmt_suite, cell.suites)
            self.assertEqual(targets.SUITES[r.kmt_suite].select, r.suite)
        for p in kunitpy.kunitconfig_paths():
            self.assertTrue(os.path.exists(p), p)
        self.assertEqual(sorted(f[:-len('.kunitconfig')]
                                for f in os.listdir(kunitpy.KUNITCONFIGS)),
                         list(kunitpy.CONFIG_NAMES))

    def test_commands(self):
        r = kunitpy.RUNS[0]
        cell = kunitpy.find_cell(r.cell)
        cmd = kunitpy.exec_command('out', r, cell, 'x.json')
        self.assertEqual(cmd[:3], ['python3', 'tools/testing/kunit/kunit.py', 'exec'])
        self.assertIn('--qemu_args=-smp %d' % targets.MACHINES[cell.machine].smp, cmd)
        self.assertEqual(cmd[-1], r.suite)
        self.assertEqual(sum(a.startswith('--kunitconfig=') for a in cmd),
                         len(kunitpy.CONFIG_NAMES))
        again = kunitpy.exec_command('out', r, cell, 'x.json', 'refcount.refcount_test_set',
                                     ('-seed 1',))
        self.assertEqual(again[-1], 'refcount.refcount_test_set')
        self.assertIn('--qemu_args=-seed 1', again)
        rerun = kunitpy.exec_command('out', r, cell, 'x.json', 'kasan.kmalloc_oob_right',
                                     ('-seed 3',), (bootspec.rerun_param(3),))
        self.assertIn('--kernel_args=kmt.rerun=333', rerun)
        self.assertEqual(rerun[-1], 'kasan.kmalloc_oob_right')
        self.assertIn('build', kunitpy.build_command('out'))


if __name__ == '__main__':
    unittest.main()


class KunitPyReviewTest(unittest.TestCase):
    """What a cold review found: 6.12's kunit_json has no counts per
    group; a stale JSON must not stand for a run that wrote none."""

    def test_group_status_without_counts(self):
        def group(name, *statuses):
            return {'name': name, 'sub_groups': [],
                    'test_cases': [{'name': str(i), 'status': s} for i, s in enumerate(statuses)]}
        data = {'name': 'KUnit Test Group', 'test_cases': [], 'sub_groups': [
            {'name': 'refcount', 'test_cases': [], 'sub_groups': [
                group('a', 'PASS', 'FAIL'), group('b', 'PASS', 'SKIP'),
                group('c', 'SKIP', 'SKIP'), group('d'), group('e', 'PASS', 'ERROR')]}]}
        self.assertEqual(kunitpy.case_statuses(data, 'refcount'),
                         {'a': results.FAIL, 'b': results.PASS, 'c': results.SKIP,
                          'd': results.FAIL, 'e': results.FAIL})

    def test_stale_json_removed_before_a_run(self):
        import contextlib
        import tempfile
        from unittest import mock
        from kmt import source
        from kmt import paths
        # (a fresh clone has no kernel tree yet: kunit.py runs in paths.SRC)
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(paths, 'SRC', d), \
                mock.patch.object(source, 'tree_lock', lambda **kw: contextlib.nullcontext()):
            jf = os.path.join(d, 'x.kunit.json')
            with open(jf, 'w') as f:
                f.write('{"name": "refcount", "test_cases": [{"name": "a", "status": "PASS"}]}')
            rc = kunitpy._run(['false'], os.path.join(d, 'log'), dict(os.environ), jf)
            self.assertNotEqual(rc, 0)
            self.assertFalse(os.path.exists(jf))
            self.assertIsNone(kunitpy._load(jf))


class KunitPyBuildFailsTest(unittest.TestCase):
    def test_a_failed_build_is_a_failed_record(self):
        import tempfile
        from unittest import mock
        from kmt import paths
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(paths, 'RESULTS', d), mock.patch.object(paths, 'LOGS', d), \
                mock.patch.object(paths, 'OUT', d), \
                mock.patch.object(kunitpy, '_run', lambda *a, **kw: 2):
            rec = kunitpy.record([])
        self.assertEqual(rec['cell'], 'kunit.py')
        self.assertEqual([p['kind'] for p in rec['problems']], ['build'])
        self.assertIn('kunit.py build failed (rc 2)', rec['problems'][0]['text'])
