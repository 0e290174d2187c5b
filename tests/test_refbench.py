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
             'kernel': 'atomic_t/shipped', 'value': 1.0},
            {'benchmark': 'refcount_inc', 'metric': 'insn_per_op', 'cpu': 'max',
             'kernel': 'atomic_t/series', 'value': 1.0},
            {'benchmark': 'refcount_inc', 'metric': 'insn_per_op', 'cpu': 'max',
             'kernel': 'shipped', 'value': 4.0},
            {'benchmark': 'refcount_inc', 'metric': 'insn_per_op', 'cpu': 'max',
             'kernel': 'onecmp', 'value': 3.5},
            {'benchmark': 'refcount_inc', 'metric': 'insn_per_op', 'cpu': 'max',
             'kernel': 'series', 'value': 3.0},
            {'benchmark': 'refcount', 'metric': 'text_bytes', 'cpu': '-', 'kernel': 'shipped',
             'value': 1000},
            {'benchmark': 'refcount', 'metric': 'text_bytes', 'cpu': '-', 'kernel': 'series',
             'value': 900},
        ]
        t = refbench.markdown_table(recs)
        self.assertIn('| inc | max | 1.00 / 1.00 | 4.00 | 3.50 | 3.00 | -1.00 (-25.0%) |', t)
        self.assertIn('arm64 vmlinux .text (size -A): as shipped 1000 bytes, + LL/SC imm 900 bytes', t)
        self.assertEqual(refbench.markdown_table([]), '')

    def test_x86_64_has_no_onecmp_kernel(self):
        recs = [{'benchmark': 'refcount_inc', 'metric': 'insn_per_op', 'cpu': 'x86_64',
                 'kernel': k, 'value': v} for k, v in (('shipped', 8.0), ('series', 6.0),
                                                        ('atomic_t/series', 3.0))]
        t = refbench.markdown_table(recs)
        self.assertIn('| inc | x86_64 | - / 3.00 | 8.00 | - | 6.00 | -2.00 (-25.0%) |', t)
        self.assertIn('x86_64 --', refbench.x86_command('bz', 10, True)[0] + ' --')
        self.assertIn('-icount', refbench.x86_command('bz', 10, True))
        self.assertNotIn('-icount', refbench.x86_command('bz', 10, False))

    BLOAT = """\
add/remove: 0/0 grow/shrink: 3/41 up/down: 48/-1432 (-1384)
Function                                     old     new   delta
do_exit                                     1200    1180     -20
Total: Before=3318402, After=3317018, chg -0.04%
"""

    def test_bloat_o_meter_summary(self):
        summary, chg, before, after = refbench.parse_bloat(self.BLOAT)
        self.assertEqual(chg, -1384)
        self.assertEqual((before, after), (3318402, 3317018))
        self.assertTrue(summary.startswith('add/remove: 0/0'))
        with self.assertRaises(log.StepError):
            refbench.parse_bloat('Traceback (most recent call last):\n')
        rec = {'benchmark': 'refcount', 'metric': 'bloat_text', 'cpu': 'arm64',
               'kernel': 'series/shipped', 'value': chg, 'before': before, 'after': after,
               'summary': summary}
        t = refbench.markdown_table([rec, {'benchmark': 'refcount_inc', 'metric': 'insn_per_op',
                                           'cpu': 'max', 'kernel': 'series', 'value': 1.0}])
        self.assertIn('arm64 scripts/bloat-o-meter -t, shipped -> series (lean config): '
                      'add/remove: 0/0 grow/shrink: 3/41 up/down: 48/-1432 (-1384)', t)

    def test_each_bloat_pair_named_by_its_kernels(self):
        # PLAN=refcount-postings: every pair was printed "shipped -> series"
        summary, chg, before, after = refbench.parse_bloat(self.BLOAT)
        recs = [{'benchmark': 'refcount', 'metric': 'bloat_text', 'cpu': 'arm64',
                 'kernel': k, 'value': chg, 'before': before, 'after': after,
                 'summary': summary} for k in ('onecmp/shipped', 'imm/shipped')]
        t = refbench.markdown_table(recs + [{'benchmark': 'refcount_inc', 'metric': 'insn_per_op',
                                             'cpu': 'max', 'kernel': 'series', 'value': 1.0}])
        self.assertIn('bloat-o-meter -t, as shipped -> one comparison (lean config)', t)
        self.assertIn('bloat-o-meter -t, as shipped -> LL/SC imm alone (lean config)', t)
        self.assertNotIn('shipped -> series', t)

    def test_x86_64_build_environment(self):
        env = refbench.x86_env({'PATH': '/bin', 'CROSS_COMPILE': 'aarch64-linux-gnu-',
                                'ARCH': 'arm64'})
        self.assertEqual(env['ARCH'], 'x86_64')
        self.assertNotIn('CROSS_COMPILE', env)
        self.assertEqual(env['PATH'], '/bin')
        self.assertEqual(env['KBUILD_BUILD_HOST'], 'kmt')

    def test_an_operation_missing_a_kernel_is_left_out(self):
        recs = [{'benchmark': 'refcount_inc', 'metric': 'insn_per_op', 'cpu': 'max',
                 'kernel': k, 'value': 4.0} for k in ('onecmp', 'series')]
        self.assertNotIn('| inc |', refbench.markdown_table(recs))

    def test_commits_to_revert_newest_first(self):
        lines = ['c3 arm64: mte: set TCMA1 whenever MTE is present',
                 'c2 ' + refbench.LLSC_IMM,
                 'c1 ' + refbench.ONE_CMP,
                 'c0 locking/refcount: Add a KUnit suite for the refcount_t semantics']
        self.assertEqual(refbench.commits_to_revert(
            lines, (refbench.ONE_CMP, refbench.LLSC_IMM)), ['c2', 'c1'])
        self.assertEqual(refbench.commits_to_revert(lines, ()), [])

    def test_reverted_subjects_name_patches_of_each_series(self):
        # A renamed patch must break this test, not a benchmark run.
        import os
        from kmt import paths, source
        for d in ('patches', os.path.join('patches', '7.3')):
            pdir = os.path.join(paths.REPO, d)
            subjects = []
            for name in source.read_series(pdir):
                with open(os.path.join(pdir, name)) as f:
                    subjects.append(source.patch_subject(f.read()))
            for want in (refbench.ONE_CMP, refbench.LLSC_IMM):
                self.assertEqual(sum(s.startswith(want) for s in subjects), 1, (d, want))

    def test_commits_to_revert_want_exactly_one_each(self):
        with self.assertRaises(log.StepError):
            refbench.commits_to_revert(['c0 something else'], (refbench.ONE_CMP,))
        with self.assertRaises(log.StepError):
            refbench.commits_to_revert(['c1 %s a' % refbench.ONE_CMP,
                                        'c0 %s b' % refbench.ONE_CMP], (refbench.ONE_CMP,))

    def test_tb_counts_pair_regions_with_loops_in_order(self):
        parsed = refbench.parse(LOG)
        regions = [{'counts': {'tb': (0, 1), 'tb_xpage': (0, 1)}},   # the baseline loop
                   {'counts': {'tb': (0, 4 * 200000), 'tb_xpage': (0, 0)}},
                   {'counts': {'tb': (0, 3 * 200000), 'tb_xpage': (7, 2 * 200000)}},
                   {'counts': {'tb': (0, 200000), 'tb_xpage': (0, 0)}},
                   {'counts': {'tb': (0, 5 * 200000), 'tb_xpage': (0, 100000)}}]
        tbs = refbench.tb_counts(parsed, regions)
        self.assertEqual(tbs['atomic_inc'], (4.0, 0.0))
        # user-side counts (interrupts are off, so they are noise) are left out
        self.assertEqual(tbs['refcount_inc'], (3.0, 2.0))
        self.assertEqual(tbs['refcount_dec_and_test'], (5.0, 0.5))

    def test_tb_counts_refuse_a_region_mismatch(self):
        with self.assertRaises(log.StepError):
            refbench.tb_counts(refbench.parse(LOG), [{'counts': {}}])

    def test_table_page_crossings(self):
        recs = []
        for k, tb, xp in (('shipped', 4.0, 0.0), ('series', 4.0, 2.0)):
            for m, v in (('tb_per_iter', tb), ('tb_xpage_per_iter', xp)):
                recs.append({'benchmark': 'refcount_add', 'metric': m, 'cpu': 'cortex-a72',
                             'kernel': k, 'value': v})
        t = refbench.markdown_table(recs + [
            {'benchmark': 'refcount_add', 'metric': 'insn_per_op', 'cpu': 'cortex-a72',
             'kernel': k, 'value': 10.0} for k in refbench.VARIANT_NAMES])
        self.assertIn('| add | cortex-a72 | 4.00 | 0.00 | 4.00 | 2.00 | - / - |', t)

    def test_time_ratios_normalised_by_the_same_code(self):
        def boot(atomic_ns, ref_ns):
            return {'atomic_dec': {'ns': atomic_ns}, 'refcount_dec': {'ns': ref_ns}}
        # the second series boot ran on a host twice as slow: the raw ratio
        # doubles, the normalised one does not
        fast = [boot(100, 150), boot(200, 300)]
        generic = [boot(100, 200), boot(100, 200)]
        rec = [r for r in refbench.time_ratios(fast, generic, 'max')
               if r['benchmark'] == 'refcount_dec'][0]
        self.assertEqual(rec['pairs'], [0.75, 1.5])
        self.assertEqual(rec['atomic_t'], {'median': 1.5, 'min': 1.0, 'max': 2.0})
        self.assertEqual(rec['normalised'], {'median': 0.75, 'min': 0.75, 'max': 0.75})
        insn = [{'benchmark': 'refcount_dec', 'metric': 'insn_per_op', 'cpu': 'max',
                 'kernel': k, 'value': 4.0} for k in refbench.VARIANT_NAMES]
        t = refbench.markdown_table(insn + [rec])
        self.assertIn('| dec | max | 1.125 | 0.750 | 1.500 | 1.500 (1.00-2.00) | '
                      '0.750 (0.75-0.75) | 2 |', t)


if __name__ == '__main__':
    unittest.main()
