"""make compare: bases side by side from their bench results."""

import unittest

from kmt import compare, log


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

    def test_different_plans_do_not_compare(self):
        runs = {'6.12': run('6.12.117', 'quick', [('baseline', 'insn_per_op', 1.0, None)]),
                '7.3': run('7.3.4', 'full', [('baseline', 'insn_per_op', 1.0, None)])}
        with self.assertRaises(log.StepError):
            compare.markdown(runs)

    def test_no_results_is_an_error(self):
        with self.assertRaises(log.StepError):
            compare.markdown({})


if __name__ == '__main__':
    unittest.main()
