"""Benchmark output parsing and the report table (no kernel needed)."""

import json
import os
import tempfile
import unittest
from unittest import mock

from kmt import bench, log, targets

BLOCK = """KMT-BEGIN bench
TAP version 13
1..2
# kmt-bench getpid ops=20000 insn_per_op=280.9 insn_mean=281.2 chunk=200 ns_per_op=4700.5
ok 1 getpid
# kmt-bench ctxsw ops=5000 ns_per_op=30000.0 ns_mean=31000.0 chunk=20
ok 2 ctxsw
KMT-END bench rc=0
KMT-DONE""".splitlines()


class BenchParseTest(unittest.TestCase):
    def test_parse(self):
        res = bench.parse_bench(BLOCK)
        self.assertEqual(res['getpid']['insn_per_op'], 280.9)
        self.assertEqual(res['getpid']['insn_mean'], 281.2)
        self.assertEqual(res['ctxsw']['ops'], 5000)
        self.assertNotIn('insn_per_op', res['ctxsw'])  # time-only line

    def test_missing_end_is_an_error(self):
        with self.assertRaises(log.StepError):
            bench.parse_bench(BLOCK[:4])

    def test_failed_benchmark_is_an_error(self):
        lines = [l.replace('ok 2 ctxsw', 'not ok 2 ctxsw # instruction counter read 0')
                 for l in BLOCK]
        with self.assertRaises(log.StepError):
            bench.parse_bench(lines)

    def test_table_gap_closed(self):
        recs = []
        for k, mode, v in [('baseline', 'off', 270.0), ('patched', 'off', 269.0),
                           ('baseline', 'sync', 281.0), ('patched', 'sync', 270.0)]:
            recs.append({'benchmark': 'getpid', 'metric': 'insn_per_op', 'kernel': k,
                         'kasan': mode, 'value': v})
        recs.append({'benchmark': 'getpid', 'metric': 'time_ratio', 'kernel': 'patched/baseline',
                     'kasan': 'sync', 'value': 0.9, 'min': 0.8, 'max': 1.0,
                     'pairs': [0.8, 0.9, 1.0], 'best_ratio': 0.95})
        table = bench.markdown_table({'records': recs, 'base': '6.12', 'series_head': 'abc',
                                      'series_empty': False})
        self.assertIn('| getpid | sync | 281.0 | 270.0 | -3.9% | 269.0 | 92% |', table)
        self.assertIn('| getpid | sync | 0.900 | 0.800 | 1.000 | 0.950 | 3 |', table)


class CountsPlanTest(unittest.TestCase):
    """make bench PLAN=counts: every mode counted, then counted again after
    the phase shift, so that the cover letter can quote what repeats."""

    def test_every_mode_counted_and_repeated(self):
        plan = bench.PLANS['counts']
        self.assertEqual(tuple(plan['modes']), bench.MODES)
        self.assertEqual(plan['phase_shift'], bench.PHASE_SHIFT_LOOPS)
        self.assertEqual(plan['bench'], 'all')
        self.assertFalse(plan.get('refcount'))
        images = {'baseline': ('b/Image', 'i'), 'patched': ('p/Image', 'i')}
        boots = bench.plan_boots('counts', images)
        counted = {(k, m) for k, m, tag, _ in boots if tag == 'counts-icount'}
        self.assertEqual(counted, {(k, m) for k in ('baseline', 'patched')
                                   for m in bench.MODES})


class GkiPlanTest(unittest.TestCase):
    """make bench PLAN=gki: the counts of the GKI-shaped kernel, booted as
    Android products boot it (issue: the figures a phone pays)."""

    def test_plan_builds_lean_gki_and_boots_with_androids_options(self):
        plan = bench.PLANS['gki']
        self.assertEqual(plan['config'], 'lean-gki')
        self.assertIn('lean-gki', targets.CONFIGS)
        images = bench.built_images('lean-gki')
        self.assertTrue(all('lean-gki' in images[k][0] for k in images))
        self.assertEqual(images['baseline'][1], images['patched'][1])
        boots = bench.plan_boots('gki', images)
        self.assertEqual({(k, m) for k, m, _, _ in boots},
                         {(k, m) for k in ('baseline', 'patched') for m in bench.MODES})
        for _, _, tag, spec in boots:
            self.assertEqual(tag, 'gki-icount')
            self.assertIn('kasan.stacktrace=off', spec.cmdline)
            self.assertIn('kasan.page_alloc.sample=10', spec.cmdline)
            self.assertEqual(spec.cmdline[0], 'kmt.bench=all')
        # The other plans boot the benchmark's own option only.
        for _, _, _, spec in bench.plan_boots('counts', images):
            self.assertEqual(len(spec.cmdline), 1)
            self.assertTrue(spec.cmdline[0].startswith('kmt.bench='))

    def test_run_builds_the_plans_config(self):
        seen = []

        def fake_build(apply, config='lean', patched_only=False):
            seen.append((config, patched_only))
            raise RuntimeError('stop here')
        with mock.patch.object(bench, 'build_kernels', fake_build):
            for name in ('gki', 'counts', 'refcount'):
                with self.assertRaises(RuntimeError):
                    bench.run(plan_name=name)
        # PLAN=refcount builds its own kernels: only the patched one here.
        self.assertEqual(seen, [('lean-gki', False), ('lean', False), ('lean', True)])


class RefcountOnlyPlanTest(unittest.TestCase):
    """make bench PLAN=refcount: part 3's benchmark alone."""
    PLAN = bench.PLANS['refcount']
    KERNELS = {'baseline': ('b/Image', 'p/initrd'), 'patched': ('p/Image', 'p/initrd')}
    REC = {'benchmark': 'refcount_dec', 'metric': 'insn_per_op', 'cpu': 'max',
           'kernel': 'series', 'value': 4.0}

    def test_runs_refbench_only_and_writes_its_own_files(self):
        calls = []

        def fake(initrd, plan):
            calls.append((initrd, plan))
            return [self.REC, dict(self.REC, kernel='onecmp', value=4.5),
                    dict(self.REC, kernel='shipped', value=5.0)]
        with tempfile.TemporaryDirectory() as d:
            result, table = bench.refcount_only(self.PLAN, 'refcount', self.KERNELS, 'abc',
                                                False, run_refbench=fake, outdir=d,
                                                meta={'plan': 'refcount'})
            self.assertEqual(calls, [('p/initrd', 'idle')])
            self.assertEqual(sorted(os.listdir(d)), ['refcount.json', 'refcount.md'])
            with open(os.path.join(d, 'refcount.json')) as f:
                saved = json.load(f)
        self.assertEqual(saved['records'], result['records'])
        self.assertEqual(result['problems'], [])
        self.assertIn('| dec | max | - / - | 5.00 | 4.50 | 4.00 | -1.00 (-20.0%) |', table)

    def test_failed_refbench_is_a_problem_not_a_result(self):
        def broken(initrd, plan):
            raise log.StepError('refcount benchmark did not finish')
        with tempfile.TemporaryDirectory() as d:
            result, _ = bench.refcount_only(self.PLAN, 'refcount', self.KERNELS, 'abc', False,
                                            run_refbench=broken, outdir=d, meta={})
        self.assertEqual(result['records'], [])
        self.assertEqual(result['problems'],
                         ['refcount benchmark: refcount benchmark did not finish'])

    def test_empty_series_has_nothing_to_measure(self):
        with self.assertRaises(log.StepError):
            bench.refcount_only(self.PLAN, 'refcount', self.KERNELS, 'abc', True,
                                run_refbench=lambda *a, **k: [], outdir='/nonexistent', meta={})


if __name__ == '__main__':
    unittest.main()


class PhaseShiftTest(unittest.TestCase):
    def result(self, spreads):
        recs = []
        for (b, k), (v0, v1) in spreads.items():
            recs.append({'benchmark': b, 'metric': 'insn_per_op', 'kernel': k, 'kasan': 'off',
                         'value': v0})
            recs.append(bench.phase_record(b, k, 'off', v0, v1, 100003, 'log'))
        return {'records': recs, 'base': 'b', 'series_head': 'abcdef012345',
                'series_empty': False}

    def test_spread_decides(self):
        r = bench.phase_record('thread', 'baseline', 'off', 21907.4, 21029.4, 100003, 'l')
        self.assertEqual(r['value'], 4.008)
        self.assertFalse(r['repeats'])
        self.assertTrue(bench.phase_record('fork64m', 'baseline', 'off', 5304748.0,
                                           5305018.0, 100003, 'l')['repeats'])

    def test_both_kernels_must_repeat(self):
        res = self.result({('getpid', 'baseline'): (250.0, 250.0),
                           ('getpid', 'patched'): (249.0, 249.0),
                           ('thread', 'baseline'): (21907.4, 21929.4),
                           ('thread', 'patched'): (21500.0, 23538.0)})
        self.assertEqual(bench.repeats(res, 'getpid', 'off'), (True, 0.0))
        ok, worst = bench.repeats(res, 'thread', 'off')
        self.assertFalse(ok)
        self.assertGreater(worst, 9)
        self.assertIsNone(bench.repeats(res, 'fork64m', 'off'))
        table = bench.markdown_table(res)
        self.assertIn('| getpid | off | 250.0 | 249.0 | -0.4% | 249.0 | - | yes (0.00%) |',
                      table)
        self.assertIn('no (moves 9.5%) |', table)

    def test_repeats_cell(self):
        self.assertEqual(bench.repeats_cell(None, 1.0, 1.0), '-')
        self.assertEqual(bench.repeats_cell((False, 1.2), 100.0, 90.0), 'no (moves 1.2%)')
        self.assertEqual(bench.repeats_cell((True, 0.1), 100.0, 90.0), 'yes (0.10%)')
        # -0.5% against a 0.29% move: the kernels differ less than twice
        # what one kernel's two boots do.
        self.assertEqual(bench.repeats_cell((True, 0.29), 1000.0, 995.0),
                         'yes (0.29%; change unresolved)')
        self.assertEqual(bench.repeats_cell((True, 0.0), 100.0, 100.0), 'yes (0.00%)')


class BaselineRefTest(unittest.TestCase):
    """A base that does not build without the series' first patches (6.1
    with KASAN HW_TAGS) has them in make bench's baseline."""

    def setUp(self):
        import subprocess
        self.tmp = tempfile.TemporaryDirectory()
        self.repo = self.tmp.name
        env = dict(os.environ, GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@t',
                   GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@t')

        def git(*args):
            return subprocess.run(['git'] + list(args), cwd=self.repo, env=env, check=True,
                                  stdout=subprocess.PIPE, text=True).stdout.strip()
        git('init', '-q', '-b', 'series')
        self.commits = []
        for i in range(3):
            with open(os.path.join(self.repo, 'f'), 'w') as f:
                f.write('%d\n' % i)
            git('add', 'f')
            git('commit', '-q', '-m', 'c%d' % i)
            self.commits.append(git('rev-parse', 'HEAD'))
            if i == 0:
                git('tag', 'base/x')

    def tearDown(self):
        self.tmp.cleanup()

    def ref(self, n):
        from kmt import bases, paths
        saved = paths.BASE
        try:
            paths.BASE = bases.Base('x', 'p', baseline_patches=n)
            return bench.baseline_ref('base/x', src=self.repo)
        finally:
            paths.BASE = saved

    def test_the_base_itself_by_default(self):
        self.assertEqual(self.ref(0), 'base/x')

    def test_the_base_with_its_fixes(self):
        self.assertEqual(self.ref(1), self.commits[1])
        self.assertEqual(self.ref(2), self.commits[2])

    def test_more_fixes_than_patches_is_an_error(self):
        with self.assertRaises(log.StepError):
            self.ref(3)

    def test_base_6_1_needs_its_build_fix(self):
        from kmt import bases
        self.assertEqual(bases.BASES['6.1'].baseline_patches, 1)


class EntryBenchTest(unittest.TestCase):
    """PLAN=entry runs guest/src/entry-bench.c, the program a cover letter
    can carry: its output parses like kmt-bench's, its exit code counts."""

    LINES = ['KMT-BEGIN bench',
             '# bench getpid ops=20000 insn_per_op=274.6 insn_mean=275.1 chunk=200',
             '# bench ctxsw ops=2000 insn_per_op=3861.0 insn_mean=3870.2 chunk=20',
             'KMT-END bench rc=0']

    def test_parse(self):
        got = bench.parse_bench(self.LINES)
        self.assertEqual(got['getpid'], {'ops': 20000, 'insn_per_op': 274.6,
                                         'insn_mean': 275.1, 'chunk': 200})
        self.assertEqual(set(got), {'getpid', 'ctxsw'})

    def test_exit_code_fails(self):
        lines = self.LINES[:-1] + ['KMT-END bench rc=1']
        with self.assertRaises(Exception) as e:
            bench.parse_bench(lines)
        self.assertIn('exited with 1', str(e.exception))

    def test_plan(self):
        p = bench.PLANS['entry']
        self.assertEqual(p['bench'], 'all')
        self.assertIn('kmt.benchprog=entry-bench', bench.plan_cmdline(p))
        self.assertEqual(bench.plan_cmdline(bench.PLANS['counts']), ())
        self.assertEqual(bench.plan_cmdline(bench.PLANS['gki'])[:2],
                         ('kasan.stacktrace=off', 'kasan.page_alloc.sample=10'))
        src = os.path.join(os.path.dirname(__file__), '..', 'guest', 'src', 'entry-bench.c')
        with open(src) as f:
            text = f.read()
        # The same loops and sizes as kmt-bench's rows it stands for.
        for row in ('{ "getpid", 20000, 200,', '{ "getppid", 20000, 200,',
                    '{ "invalid_syscall", 20000, 200,', '{ "ctxsw", 2000, 20,'):
            self.assertIn(row, text)

    def test_thread_and_fork_only_when_named(self):
        # The stack and page-table counts need a thread create + join and a
        # fork of a process with 64 MiB mapped, at kmt-bench's sizes; named
        # on the command line only, so that a run without names (PLAN=entry,
        # the cover letters' tables) counts the four loops it always did.
        src = os.path.join(os.path.dirname(__file__), '..', 'guest', 'src', 'entry-bench.c')
        with open(src) as f:
            text = f.read()
        for row in ('{ "thread", 500, 5, NULL, run_thread, NULL, 1 }',
                    '{ "fork64m", 30, 1, setup_fork64m, run_fork, teardown_fork, 1 }'):
            self.assertIn(row, text)
        for row in ('{ "getpid", 20000, 200, NULL, run_getpid, NULL }',
                    '{ "ctxsw", 2000, 20, setup_ctxsw, run_ctxsw, teardown_ctxsw }'):
            self.assertIn(row, text)
        self.assertIn('[NAME]...', text)


class RefbenchPostingsTest(unittest.TestCase):
    """PLAN=refcount-postings builds the 7.3 base with part 3's postings
    applied one by one: each variant's patches come from the posting
    files, and every variant the bloat pairs name is built."""

    def test_posting_patches_found(self):
        import os
        from kmt import paths, refbench, source
        d = os.path.join(paths.REPO, 'patches', '7.3')
        for subj in (refbench.ONE_CMP, refbench.LLSC_IMM):
            p = refbench.posting_patch(subj, d)
            self.assertIn(os.sep + 'postings' + os.sep, p)
            with open(p) as f:
                self.assertEqual(source.patch_subject(f.read()), subj)

    def test_unknown_subject_is_an_error(self):
        import os
        from kmt import log, paths, refbench
        with self.assertRaises(log.StepError):
            refbench.posting_patch('no such patch', os.path.join(paths.REPO, 'patches', '7.3'))

    def test_variants_cover_the_bloat_pairs(self):
        from kmt import refbench
        names = [v[0] for v in refbench.POSTING_VARIANTS]
        self.assertEqual(names[0], 'shipped')
        self.assertEqual(refbench.POSTING_VARIANTS[0][2], ())
        for before, after in refbench.POSTING_BLOAT:
            self.assertLess(names.index(before), len(names))
            self.assertIn(after, names)
        self.assertTrue(set(refbench.X86_VARIANTS) <= set(names))
