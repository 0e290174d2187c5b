import os
import unittest


class CoverTablesTest(unittest.TestCase):
    MD = ('Instructions per operation (exact)\n\n| benchmark | kasan | baseline |\n|---|---|---:|\n'
          '| getpid | sync | 274.6 |\n| thread | sync | 32407.2 |\n\n'
          'Kernel tag stores per operation\n\n| benchmark | kasan | tag stores |\n|---|---|---:|\n'
          '| thread | sync | 609 |\n\n'
          'TCG wall time, patched/baseline\n\n| benchmark | kasan | ratio |\n|---|---|---:|\n'
          '| thread | sync | 0.948 |\n')

    def test_only_what_repeats(self):
        from kmt import source
        out = source.cover_tables(self.MD)
        self.assertIn('| getpid | sync | 274.6 |', out)
        self.assertNotIn('32407.2', out)      # a thread instruction count
        # plugin counts: no public tool counts them yet
        self.assertNotIn('| thread | sync | 609 |', out)
        self.assertNotIn('TCG wall time', out)
        self.assertNotIn('0.948', out)

    def test_no_legend_and_no_ids_of_this_repository(self):
        from kmt import source
        md = ('Instructions per operation (exact)\n\n| benchmark | kasan | baseline |\n'
              '|---|---|---:|\n| getpid | sync | 274.6 |\n\n'
              'repeats: the same kernels booted again with kmt-bench -s 100003 count\n'
              'within 0.5%.\n\nBase 6.12.118-1~deb12u1, series 7f479f48d0fe.\n')
        out = source.cover_tables(md)
        self.assertIn('274.6', out)
        self.assertNotIn('kmt-bench', out)
        self.assertNotIn('7f479f48d0fe', out)

    def test_the_repeats_column_decides(self):
        from kmt import source
        md = ('Instructions per operation (exact)\n\n'
              '| benchmark | kasan | baseline | repeats |\n|---|---|---:|---|\n'
              '| getpid | sync | 274.6 | yes |\n| fork64m | sync | 5305341.0 | yes |\n'
              '| thread | sync | 32407.2 | no (moves 6.1%) |\n')
        out = source.cover_tables(md)
        self.assertIn('| getpid | sync | 274.6 | yes |', out)
        # measured to repeat: quoted, although NOT_REPEATING names it
        self.assertIn('5305341.0', out)
        self.assertNotIn('32407.2', out)
        self.assertIn('|---|---|---:|---|', out)

    def test_another_base_fills_its_own_bench_section(self):
        # BASE=6.1 make cover must not put 6.1's figures into the 6.12
        # table of docs/benchmarks.md.
        from kmt import bases, docs
        from kmt.__main__ import bench_marker
        self.assertEqual(bench_marker(bases.DEFAULT), 'bench')
        self.assertEqual(bench_marker('6.1'), 'bench-6.1')
        for name in ('bench', 'bench-6.1'):
            self.assertIsNotNone(docs.read_section(name), name)

    def test_bench_names_the_results_of_its_base(self):
        import os
        from kmt import paths
        from kmt.__main__ import bench_results_line
        line = bench_results_line('results')
        where = os.path.relpath(os.path.join(paths.RESULTS, 'bench', 'results'), paths.REPO)
        self.assertTrue(line.startswith('Results: %s.json' % where), line)
        saved = paths.RESULTS
        try:
            paths.RESULTS = os.path.join(paths.BUILD, '6.1', 'results')
            want = os.path.relpath(os.path.join(paths.BUILD, '6.1', 'results', 'bench',
                                                'results.json'), paths.REPO)
            self.assertIn(want, bench_results_line('results'))
        finally:
            paths.RESULTS = saved

    def test_no_tree_no_diffstat(self):
        import tempfile
        from kmt import source
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(source.series_diffstat(d), '')

    def test_long_lines_wrapped_as_git_does(self):
        from kmt import source
        long = 'kasan: test that kernel stacks, page tables and __GFP_SKIP_KASAN vmalloc stay untagged'
        out = source.shortlog([long, 'fork: skip KASAN tagging of kernel thread stacks'])
        lines = out.splitlines()
        self.assertTrue(all(len(l) <= 72 for l in lines), lines)
        self.assertEqual(lines[0][:2], '  ')
        self.assertEqual(lines[1][:4], '    ')
        self.assertEqual(' '.join(l.strip() for l in lines[:2]), long)
        self.assertEqual(lines[2], '  fork: skip KASAN tagging of kernel thread stacks')

    def test_subject_header_folded(self):
        from kmt import source
        text = ('Subject: [PATCH 0/15] arm64: less MTE/KASAN HW_TAGS and refcount_t '
                'overhead on hot paths\n\nBody line\n')
        out = source.fold_subject(text)
        head = out.split('\n\n')[0].split('\n')
        self.assertTrue(all(len(l) <= 75 for l in head), head)
        self.assertTrue(head[1].startswith(' ') and not head[1].startswith('  '))
        self.assertEqual(head[0] + head[1], text.split('\n')[0])
        self.assertTrue(out.endswith('\n\nBody line\n'))
        self.assertEqual(source.fold_subject('Subject: short\n\nx\n'), 'Subject: short\n\nx\n')

    def test_subject_folded_in_a_format_patch_mail(self):
        from kmt import source
        subject = ('Subject: [PATCH 0/2] kasan: hw_tags: poison the tail of a '
                   'vrealloc()-shrunk area')
        mail = ('From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n'
                'From: A <a@example.org>\nDate: Mon, 30 Nov 2026 18:18:57 +0000\n'
                + subject + '\nTo: B <b@example.org>\n\nSubject: not a header, ' + 'x' * 80
                + '\n')
        out = source.fold_subject(mail)
        head, body = out.split('\n\n', 1)
        self.assertTrue(all(len(l) <= 75 for l in head.split('\n')[1:]), head)
        self.assertIn('\nTo: B <b@example.org>', head)
        self.assertEqual(head.split('\n')[3] + head.split('\n')[4], subject)
        self.assertEqual(body, mail.split('\n\n', 1)[1])


class WriteCoverLetterTest(unittest.TestCase):
    """The cover letter from its template: the shortlog, the diffstat
    right after it, and the benchmark program in full where the template
    asks for it ({entry_bench}), so that a reader can run it."""

    def test_program_after_the_diffstat(self):
        import os
        import tempfile
        from unittest import mock
        from kmt import coverletter, source
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, 'series'), 'w') as f:
                f.write('0001-x.patch\n')
            with open(os.path.join(d, '0001-x.patch'), 'w') as f:
                f.write('From: A <a@example.org>\nSubject: [PATCH 1/1] x: do y\n\nbody\n')
            tpl = os.path.join(d, 'cover.txt')
            with open(tpl, 'w') as f:
                f.write('Subject: [PATCH 0/{count}] s\n\nText.\n\n{entry_bench_howto}\n\n'
                        '{shortlog}\n\nThe program:\n\n{entry_bench}\n')
            md = os.path.join(d, 'bench.md')
            with open(md, 'w') as f:
                f.write('')
            stat = ' mm/x.c | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n'
            with mock.patch.object(source, 'series_diffstat', return_value=stat):
                out = coverletter.write_cover_letter(tpl, md, patch_dir=d, base='6.12.118-1')
            with open(out) as f:
                text = f.read()
        program = open(os.path.join(os.path.dirname(__file__), '..', 'guest', 'src',
                                    'entry-bench.c')).read()
        self.assertIn('  x: do y\n\n mm/x.c | 2 +-\n 1 file changed', text)
        self.assertIn('deletion(-)\n\nThe program:\n\n' + program, text)
        self.assertTrue(text.endswith(program))
        self.assertIn('int main(int argc, char **argv)', text)
        # How to build and boot it, the same words in every base's letter.
        howto = open(os.path.join(os.path.dirname(__file__), '..', 'docs',
                                  'cover-entry-bench.txt')).read().rstrip('\n')
        self.assertIn('Text.\n\n' + howto + '\n\n  x: do y', text)
        self.assertIn('usr/gen_init_cpio list', howto)


if __name__ == '__main__':
    unittest.main()


class ConfigOptions(unittest.TestCase):
    """The cover letter's "To reproduce" lists the benchmark kernel's
    options exactly, from the config fragments, less what the base does
    not define (an option of another release must not be named)."""

    def test_options_listed_in_order_without_prefix(self):
        from kmt import source
        lines = ['# comment', 'CONFIG_SMP=y', 'CONFIG_NR_CPUS=8', '',
                 'CONFIG_ARM_PMUV3=y', '# CONFIG_FOO is not set', 'CONFIG_KASAN=y']
        got = source.config_options(lines, {'SMP', 'NR_CPUS', 'KASAN', 'FOO'})
        self.assertEqual(got, ['SMP', 'NR_CPUS=8', 'KASAN'])

    def test_duplicates_keep_the_last_value(self):
        from kmt import source
        got = source.config_options(['CONFIG_NR_CPUS=4', 'CONFIG_X=y', 'CONFIG_NR_CPUS=8'],
                                    {'NR_CPUS', 'X'})
        self.assertEqual(got, ['NR_CPUS=8', 'X'])


class CoverMatchesSeriesTest(unittest.TestCase):
    """Each base's cover letter announces as many patches as its series
    holds and lists every subject in order (the 7.3 cover said 0/15 and
    listed 15 subjects for a series of 20)."""

    def test_every_base(self):
        import re
        from kmt import bases, paths, source
        problems = []
        for b in bases.BASES.values():
            d = os.path.join(paths.REPO, b.patch_dir)
            names = source.read_series(d)
            subjects = []
            for n in names:
                with open(os.path.join(d, n)) as f:
                    subjects.append(source.patch_subject(f.read()))
            with open(os.path.join(d, '0000-cover-letter.patch')) as f:
                cover = f.read()
            m = re.search(r'^Subject: \[PATCH 0/(\d+)\]', cover, re.M)
            if not m or int(m.group(1)) != len(names):
                problems.append('%s: cover says 0/%s, series has %d'
                                % (b.patch_dir, m and m.group(1), len(names)))
            if source.shortlog(subjects).rstrip('\n') not in cover:
                problems.append('%s: cover letter does not list the series\' subjects'
                                % b.patch_dir)
        self.assertEqual(problems, [])


class MatrixLegendTest(unittest.TestCase):
    """The 7.3 cover letter's matrix table is explained in a list reader's
    terms: what each cell boots and runs, each kernel's options, each
    machine's QEMU options; the tooling's own rows are left out of it."""

    def symbols(self):
        # Every option the fragments name: the legend then lists them all.
        import glob
        import re
        from kmt import paths
        syms = set()
        for fn in glob.glob(os.path.join(paths.CONFIGS, '*.config')):
            with open(fn) as f:
                syms |= set(re.findall(r'CONFIG_([A-Z0-9_]+)', f.read()))
        return syms

    def test_cells_kernels_and_machines(self):
        from kmt import coverletter
        text = coverletter.matrix_legend(['tooling', 'sync', 'distro', 'kasan-generic',
                                     'series-checkpatch'], self.symbols())
        self.assertIn('  sync: kernel lean, machine mte, kasan.mode=sync hugepages=2; KUnit\n'
                      '      kasan,', text)
        self.assertNotIn('tooling', text)
        self.assertNotIn('series-checkpatch', text)
        # The first kernel in full, the others by what they change.
        self.assertRegex(text, r'\n  lean: SMP, NR_CPUS=8,')
        self.assertRegex(text, r'lean-nokasan: those of lean, and KASAN=n,')
        self.assertRegex(text, r'lean-kasan-generic-llsc: those of lean, and [^:]*'
                               r'ARM64_MTE=n[^:]*KASAN_GENERIC')
        self.assertIn('  mte: -machine virt,mte=on,gic-version=3 -cpu max -smp 2 -m 1024', text)
        self.assertIn('  llsc: -machine virt,gic-version=3 -cpu cortex-a72', text)
        # Each machine and kernel once.
        self.assertEqual(text.count('\n  mte: '), 1)
        self.assertEqual(text.count('\n  lean: '), 1)

    def test_no_kernel_cell_is_an_error(self):
        from kmt import coverletter, log
        with self.assertRaises(log.StepError):
            coverletter.matrix_legend(['tooling', 'series-docs'], self.symbols())

    def test_cover_table_has_the_kernel_cells_only(self):
        from kmt import matrix

        def cell(name):
            return {'cell': name, 'kasan': 'sync', 'tests': [
                {'suite': 'kasan', 'name': 'a', 'status': 'pass', 'detail': ''}],
                'problems': []}
        summary = {'cells': [cell('tooling'), cell('sync'), cell('series-asm')]}
        full = matrix.markdown_cells(summary)
        cover = matrix.markdown_cells(summary, kernel_only=True)
        self.assertIn('| tooling |', full)
        self.assertNotIn('| tooling |', cover)
        self.assertNotIn('| series-asm |', cover)
        self.assertIn('| sync | sync | 1 | 0 | 0 | 0 | 0 |', cover)


class TestingHowtoTest(unittest.TestCase):
    """"How the suites ran" names what each base's series adds to the
    built-in test kernel, and only that (6.1 has no refcount suite)."""

    def test_per_base(self):
        from kmt import bases, coverletter
        t612 = ' '.join(coverletter.testing_howto(bases.BASES['6.12']).split())
        t61 = ' '.join(coverletter.testing_howto(bases.BASES['6.1']).split())
        self.assertIn("the series' test options (REFCOUNT_KUNIT_TEST, ARM64_MTE_KUNIT_TEST)",
                      t612)
        self.assertIn('kunit.filter_glob=refcount or arm64_mte for the suites', t612)
        self.assertIn('cortex-a72', t612)
        self.assertIn("the series' test options (ARM64_MTE_KUNIT_TEST)", t61)
        self.assertNotIn('refcount', t61.replace('lkdtm:REFCOUNT_*', ''))
        self.assertNotIn('cortex-a72', t61)
        # The rerun and hang rule, filled in; no field left unfilled.
        for t in (t612, t61):
            self.assertIn('up to 5 times', t)
            self.assertIn('silent for 300 s counts as hung', t)
            self.assertNotIn('{', t)
