"""make compare: bases side by side from their bench results."""

import subprocess
import unittest

from kmt import bases, compare, log


def rec(kernel, bench, kasan, metric, value, use=None):
    r = {'kernel': kernel, 'benchmark': bench, 'kasan': kasan, 'metric': metric,
         'value': value}
    if use:
        r['use'] = use
    return r


def run(base, plan, pairs):
    return {'base': base, 'plan': plan,
            'records': [rec(k, 'fork64m', 'sync', m, v, u) for k, m, v, u in pairs]}


class CompareTest(unittest.TestCase):
    def test_one_column_per_base_and_kernel(self):
        runs = {'6.12': run('6.12.117', 'quick', [
                    ('baseline', 'tagged_bytes_per_op', 449546.0, None),
                    ('patched', 'tagged_bytes_per_op', 184125.0, None),
                    ('baseline', 'tag_stores_use_per_op', 259.0, 'stack'),
                    ('patched', 'tag_stores_use_per_op', 0.0, 'stack')]),
                '7.3': run('7.3.4', 'quick', [
                    ('baseline', 'tagged_bytes_per_op', 190000.0, None),
                    ('patched', 'tagged_bytes_per_op', 190000.0, None)])}
        text = compare.markdown(runs)
        self.assertIn('| benchmark | kasan | 6.12 as shipped | 6.12 series | '
                      '7.3 as shipped | 7.3 series |', text)
        self.assertIn('| fork64m | sync | 449546 | 184125 | 190000 | 190000 |', text)
        # A use no kernel of a base measured shows as '-', not as 0.
        self.assertIn('| fork64m | sync | stack | 259.0 | 0.0 | - | - |', text)

    def test_reverted_kernel_is_a_column_before_as_shipped(self):
        runs = {'7.3': run('7.3.4', 'quick', [
            ('reverted', 'tagged_bytes_per_op', 449000.0, None),
            ('baseline', 'tagged_bytes_per_op', 184547.0, None),
            ('patched', 'tagged_bytes_per_op', 184806.0, None)])}
        text = compare.markdown(runs)
        self.assertIn('| benchmark | kasan | 7.3 own parts reverted | 7.3 as shipped | '
                      '7.3 series |', text)
        self.assertIn('| fork64m | sync | 449000 | 184547 | 184806 |', text)

    def test_different_plans_do_not_compare(self):
        runs = {'6.12': run('6.12.117', 'quick', [('baseline', 'insn_per_op', 1.0, None)]),
                '7.3': run('7.3.4', 'full', [('baseline', 'insn_per_op', 1.0, None)])}
        with self.assertRaises(log.StepError):
            compare.markdown(runs)

    def test_provenance_one_run_or_separate_runs(self):
        one = {b: dict(run(b, 'quick', [('baseline', 'insn_per_op', 1.0, None)]),
                       run_id='r1', tooling='abc', date='d') for b in ('6.12', '7.3')}
        self.assertIn('Measured in one run (r1, tooling abc)', compare.markdown(one))
        for change in ({'run_id': 'r2'}, {'run_id': None}, {'tooling': 'def'}):
            apart = dict(one, **{'7.3': dict(one['7.3'], **change)})
            text = compare.markdown(apart)
            self.assertIn('Separate runs (6.12 d, tooling abc; 7.3 d, tooling ', text)
            self.assertNotIn('Measured in one run', text)

    def test_measure_benches_every_base_with_one_run_id(self):
        calls = []

        def runner(argv, cwd=None, env=None):
            calls.append((argv[-4:], env['KMT_BASE'], env['KMT_RUN_ID']))
            return subprocess.CompletedProcess(argv, 0)
        run_id = compare.measure('quick', runner=runner)
        self.assertEqual(calls, [(['kmt', 'bench', '--plan', 'quick'], b, run_id)
                                 for b in bases.BASES])

    def test_measure_stops_at_a_failed_base(self):
        calls = []

        def runner(argv, cwd=None, env=None):
            calls.append(env['KMT_BASE'])
            return subprocess.CompletedProcess(argv, 1)
        with self.assertRaises(log.StepError):
            compare.measure('quick', runner=runner)
        self.assertEqual(calls, [list(bases.BASES)[0]])

    def test_no_results_is_an_error(self):
        with self.assertRaises(log.StepError):
            compare.markdown({})


if __name__ == '__main__':
    unittest.main()
