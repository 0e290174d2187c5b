import unittest

from kmt import log, refbench

LOG = """\
[    2.100000] refcount_bench: atomic_inc                   n=200000 ns=1400180 per_iter=7.00 net=3.00
[    2.200000] refcount_bench: refcount_inc                 n=200000 ns=1800180 per_iter=9.00 net=5.00
[    2.300000] refcount_bench: empty                        n=200000 ns=800000 per_iter=4.00 net=0.00
[    2.400000] refcount_bench: refcount_dec_and_test        n=200000 ns=700000 per_iter=3.50 net=-0.50
[    2.500000] refcount_bench: done
""".splitlines()


class RefbenchTest(unittest.TestCase):
    def test_parse(self):
        res = refbench.parse(LOG)
        self.assertEqual(res['refcount_inc'], {'n': 200000, 'ns': 1800180, 'per_iter': 9.0,
                                               'net': 5.0})
        self.assertEqual(res['refcount_dec_and_test']['net'], -0.5)

    def test_unfinished_run_is_an_error(self):
        with self.assertRaises(log.StepError):
            refbench.parse(LOG[:-1])

    def test_table(self):
        recs = [
            {'benchmark': 'refcount_inc', 'metric': 'insn_per_op', 'cpu': 'max',
             'kernel': 'atomic_t', 'value': 1.0},
            {'benchmark': 'refcount_inc', 'metric': 'insn_per_op', 'cpu': 'max',
             'kernel': 'generic', 'value': 4.0},
            {'benchmark': 'refcount_inc', 'metric': 'insn_per_op', 'cpu': 'max',
             'kernel': 'fastpath', 'value': 3.0},
            {'benchmark': 'refcount', 'metric': 'text_bytes', 'cpu': '-', 'kernel': 'generic',
             'value': 1000},
            {'benchmark': 'refcount', 'metric': 'text_bytes', 'cpu': '-', 'kernel': 'fastpath',
             'value': 900},
        ]
        t = refbench.markdown_table(recs)
        self.assertIn('| inc | max | 1.00 | 4.00 | 3.00 | -25.0% |', t)
        self.assertIn('generic 1000 bytes, fast path 900 bytes (-100)', t)
        self.assertEqual(refbench.markdown_table([]), '')


if __name__ == '__main__':
    unittest.main()
