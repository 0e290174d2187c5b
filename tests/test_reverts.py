import os
import tempfile
import unittest
from types import SimpleNamespace

from kmt import log, paths, reverts

SUBJECTS = ['mm: skip KASAN tagging of page table pages', 'fork: skip KASAN tagging of kernel thread stacks',
            'locking/refcount: Add a KUnit suite for the refcount_t semantics']


def cell(name):
    cells = {'sync': ('kasan', 'mte'), 'distro': ('arm64-mte', 'mte'),
             'refcount-lse': ('refcount',)}
    if name not in cells:
        raise log.StepError('no cell %s' % name)
    return SimpleNamespace(name=name, suites=cells[name])


def load_toml(text, loader=reverts.load):
    with tempfile.NamedTemporaryFile('w', suffix='.toml', delete=False) as f:
        f.write(text)
    try:
        return loader(f.name, subjects=SUBJECTS, cells=cell)
    finally:
        os.unlink(f.name)


MUTATION = ONE_M = '''
[[mutation]]
name = "refcount_dec() does not report a decrement to 0"
tests = "locking/refcount: Add a KUnit suite for the refcount_t semantics"
cell = "refcount-lse"
file = "include/linux/refcount.h"
find = "if (unlikely(old <= 1))"
replace = "if (unlikely(old < 1))"
fails = ["refcount/refcount_test_dec"]
why = "a decrement to 0 neither saturates nor WARNs"
'''


ONE = '''
[[revert]]
change = "mm: skip KASAN tagging of page table pages"
cell = "sync"
fails = ["kasan/page_table_untagged"]
'''


def test(suite, name, status):
    return {'suite': suite, 'name': name, 'status': status}


class LoadTest(unittest.TestCase):
    def test_one(self):
        (e,) = load_toml(ONE)
        self.assertEqual(e.fails, ('kasan/page_table_untagged',))
        self.assertEqual(e.slug, 'mm-skip-kasan-tagging-of-page-table-pages-sync')

    def test_the_same_change_in_two_cells(self):
        two = load_toml(ONE + ONE.replace('"sync"', '"distro"').replace('kasan/', 'arm64-mte/'))
        self.assertEqual(len({e.slug for e in two}), 2)

    def test_the_same_change_and_cell_twice(self):
        self.assertRefused(ONE + ONE, 'a second entry for this change and cell')

    def test_a_case_that_must_fail_and_pass(self):
        self.assertRefused(ONE + 'passes = ["kasan/page_table_untagged"]\n', 'both fails and passes')

    def assertRefused(self, text, words):
        with self.assertRaises(log.StepError) as cm:
            load_toml(text)
        self.assertIn(words, str(cm.exception))

    def test_unknown_key(self):
        self.assertRefused(ONE + 'revert_too = true\n', 'unknown keys revert_too')

    def test_nothing_to_fail(self):
        self.assertRefused(ONE.replace('fails = ["kasan/page_table_untagged"]', 'fails = []'),
                           'needs change, cell and fails')

    def test_change_not_in_series(self):
        self.assertRefused(ONE.replace('page table pages', 'page tables'),
                           'no patch of the series has this subject')

    def test_suite_the_cell_does_not_run(self):
        self.assertRefused(ONE.replace('kasan/page', 'refcount/page'),
                           'cell sync does not run suite refcount')

    def test_unknown_cell(self):
        self.assertRefused(ONE.replace('"sync"', '"synch"'), 'no cell synch')

    def test_empty(self):
        self.assertRefused('# nothing\n', 'lists no [[revert]]')

    def test_the_real_file_mutations(self):
        for m in reverts.load_mutations():
            self.assertTrue(m.why, m.name)
            self.assertIn(m.tests, reverts.series_subjects())

    def test_the_real_file(self):
        entries = reverts.load()
        self.assertGreaterEqual(len(entries), 4)
        for e in entries:
            self.assertTrue(e.why, e.change)


class MutationLoadTest(unittest.TestCase):
    def load(self, text):
        return load_toml(ONE + text, loader=reverts.load_mutations)

    def test_one(self):
        (m,) = self.load(MUTATION)
        self.assertEqual(m.change, 'mutation: refcount_dec() does not report a decrement to 0')
        self.assertEqual(m.slug, 'mutate-refcount-dec-does-not-report-a-decrement-to-0-'
                                 'refcount-lse')
        self.assertEqual(m.fails, ('refcount/refcount_test_dec',))
        self.assertEqual(load_toml(ONE, loader=reverts.load_mutations), [])

    def refused(self, text, words):
        with self.assertRaises(log.StepError) as cm:
            self.load(text)
        self.assertIn(words, str(cm.exception))

    def test_refused(self):
        self.refused(MUTATION + 'more = 1\n', 'unknown keys more')
        self.refused(MUTATION.replace('fails = ["refcount/refcount_test_dec"]', ''),
                     'needs fails')
        self.refused(MUTATION.replace('Add a KUnit suite', 'Add a suite'),
                     'no patch of the series has the subject')
        self.refused(MUTATION.replace('"if (unlikely(old < 1))"', '"if (unlikely(old <= 1))"'),
                     'replace is the same as find')
        self.refused(MUTATION.replace('refcount/refcount_test_dec', 'kasan/x'),
                     'cell refcount-lse does not run suite kasan')
        self.refused(MUTATION + MUTATION, 'a second mutation of this name and cell')

    def test_stamp_carries_the_replacement(self):
        (m,) = self.load(MUTATION)
        (m2,) = self.load(MUTATION.replace('old < 1', 'old < 0'))
        self.assertTrue(reverts.entry_stamp(m, 's').startswith('s:'))
        self.assertNotEqual(reverts.entry_stamp(m, 's'), reverts.entry_stamp(m2, 's'))

    def test_table_not_run_then_seen_then_stale(self):
        (m,) = self.load(MUTATION)
        saved = reverts.RESULT_FILE
        with tempfile.TemporaryDirectory() as d:
            reverts.RESULT_FILE = os.path.join(d, 'reverts.json')
            try:
                self.assertIn('| not run yet |', reverts.markdown_mutations([m], stamp='s1'))
                from kmt import results
                rec = {'key': m.key, 'ok': True, 'stamp': reverts.entry_stamp(m, 's1'),
                       'fails': list(m.fails), 'passes': [],
                       'tests': {'refcount/refcount_test_dec': {'status': 'fail'}}}
                results.write_json(reverts.RESULT_FILE, {'reverts': [rec]})
                self.assertIn('| refcount_test_dec FAIL |',
                              reverts.markdown_mutations([m], stamp='s1'))
                (m2,) = self.load(MUTATION.replace('old < 1', 'old < 0'))
                self.assertIn('stale', reverts.markdown_mutations([m2], stamp='s1'))
            finally:
                reverts.RESULT_FILE = saved


class MutationBranchTest(unittest.TestCase):
    """mutation_branch() on a small repository standing in for the tree."""
    def setUp(self):
        import subprocess
        self.d = tempfile.TemporaryDirectory()
        self.saved = paths.SRC
        paths.SRC = self.d.name
        os.makedirs(os.path.join(self.d.name, 'include'))
        with open(os.path.join(self.d.name, 'include', 'r.h'), 'w') as f:
            f.write('a\nif (unlikely(old <= 1))\nb\n')
        env = dict(os.environ, GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@t',
                   GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@t')
        for c in (['init', '-q'], ['add', '.'], ['commit', '-q', '-m', 'tip']):
            subprocess.run(['git'] + c, cwd=self.d.name, env=env, check=True)

    def tearDown(self):
        paths.SRC = self.saved
        self.d.cleanup()

    def mutation(self, **kw):
        (m,) = load_toml(ONE + MUTATION, loader=reverts.load_mutations)
        from dataclasses import replace
        return replace(m, **dict({'file': 'include/r.h'}, **kw))

    def test_branch_holds_the_replacement_and_the_checkout_stays(self):
        from kmt import source
        branch = reverts.mutation_branch(self.mutation(), 'HEAD')
        self.assertEqual(source.git(['show', branch + ':include/r.h']).stdout,
                         'a\nif (unlikely(old < 1))\nb\n')
        with open(os.path.join(self.d.name, 'include', 'r.h')) as f:
            self.assertIn('old <= 1', f.read())

    def test_text_not_found_once_is_an_error(self):
        with self.assertRaisesRegex(log.StepError, 'occurs 0 times'):
            reverts.mutation_branch(self.mutation(find='old <= 2'), 'HEAD')
        with self.assertRaisesRegex(log.StepError, 'not a file'):
            reverts.mutation_branch(self.mutation(file='include/none.h'), 'HEAD')


class ExpectedReportTest(unittest.TestCase):
    KASAN = {'kind': 'kasan', 'text': 'BUG: KASAN: invalid-access'}

    def entry(self, reports):
        return load_toml(ONE + 'reports = %s\n' % reports)[0]

    def test_the_report_the_revert_must_print(self):
        e = self.entry('["kasan"]')
        ok, lines = reverts.verdict(e, [test('kasan', 'page_table_untagged', 'fail')],
                                    [self.KASAN])
        self.assertTrue(ok, lines)
        ok, lines = reverts.verdict(e, [test('kasan', 'page_table_untagged', 'fail')], [])
        self.assertFalse(ok)
        self.assertIn('no kasan report, which the revert must make the kernel print', lines)

    def test_another_report_still_breaks_the_run(self):
        ok, lines = reverts.verdict(self.entry('["kasan"]'),
                                    [test('kasan', 'page_table_untagged', 'fail')],
                                    [self.KASAN, {'kind': 'oops', 'text': 'Internal error'}])
        self.assertFalse(ok)
        self.assertIn('run broken: Internal error', lines)

    def test_unknown_kind(self):
        with self.assertRaisesRegex(log.StepError, 'not a kind of kernel report'):
            self.entry('["kasn"]')

    def test_a_mutation_names_its_report_too(self):
        (m,) = load_toml(ONE + MUTATION + 'reports = ["kasan"]\n',
                         loader=reverts.load_mutations)
        self.assertEqual(m.reports, ('kasan',))
        fails = [test(*c.split('/'), 'fail') for c in m.fails]
        ok, lines = reverts.verdict(m, fails, [self.KASAN])
        self.assertTrue(ok, lines)
        ok, lines = reverts.verdict(m, fails, [])
        self.assertFalse(ok)
        with self.assertRaisesRegex(log.StepError, 'not a kind of kernel report'):
            load_toml(ONE + MUTATION + 'reports = ["kasn"]\n', loader=reverts.load_mutations)


class VerdictTest(unittest.TestCase):
    def setUp(self):
        self.e = load_toml(ONE + 'passes = ["kasan/kernel_stack_untagged"]\n')[0]

    def test_fails_as_it_must(self):
        ok, lines = reverts.verdict(self.e, [test('kasan', 'page_table_untagged', 'fail'),
                                             test('kasan', 'kernel_stack_untagged', 'pass')], [])
        self.assertTrue(ok, lines)

    def test_a_test_that_cannot_fail(self):
        ok, lines = reverts.verdict(self.e, [test('kasan', 'page_table_untagged', 'pass'),
                                             test('kasan', 'kernel_stack_untagged', 'pass')], [])
        self.assertFalse(ok)
        self.assertIn('kasan/page_table_untagged is PASS without the change: it cannot see it',
                      lines)

    def test_a_skip_is_not_a_failure(self):
        ok, _ = reverts.verdict(self.e, [test('kasan', 'page_table_untagged', 'skip'),
                                         test('kasan', 'kernel_stack_untagged', 'pass')], [])
        self.assertFalse(ok)

    def test_missing_result(self):
        ok, lines = reverts.verdict(self.e, [test('kasan', 'kernel_stack_untagged', 'pass')], [])
        self.assertFalse(ok)
        self.assertIn('kasan/page_table_untagged is missing without the change: it cannot see it',
                      lines)

    def test_a_panic_is_not_the_failure_asked_for(self):
        ok, lines = reverts.verdict(self.e, [test('kasan', 'page_table_untagged', 'fail'),
                                             test('kasan', 'kernel_stack_untagged', 'pass')],
                                    [{'kind': 'panic', 'text': 'Kernel panic - not syncing'}])
        self.assertFalse(ok)
        self.assertTrue(lines[0].startswith('run broken: Kernel panic'))

    def test_what_must_still_pass(self):
        ok, lines = reverts.verdict(self.e, [test('kasan', 'page_table_untagged', 'fail'),
                                             test('kasan', 'kernel_stack_untagged', 'fail')], [])
        self.assertFalse(ok)
        self.assertIn('kasan/kernel_stack_untagged must still pass, is FAIL', lines)

    def test_a_kernel_report_is_not_the_failure_asked_for(self):
        e = load_toml(ONE)[0]
        ok, lines = reverts.verdict(e, [test('kasan', 'page_table_untagged', 'fail')],
                                    [{'kind': 'oops', 'text': 'Internal error: Oops'}])
        self.assertFalse(ok)
        self.assertIn('run broken: Internal error: Oops', lines)

    def test_a_case_broken_on_the_series_itself(self):
        ok, lines = reverts.verdict(self.e, [test('kasan', 'page_table_untagged', 'fail'),
                                             test('kasan', 'kernel_stack_untagged', 'pass')], [],
                                    baseline={'kasan/page_table_untagged': 'fail',
                                              'kasan/kernel_stack_untagged': 'pass'})
        self.assertFalse(ok)
        self.assertTrue(any('does not pass on the series itself' in l for l in lines), lines)

    def test_with_its_baseline(self):
        ok, lines = reverts.verdict(self.e, [test('kasan', 'page_table_untagged', 'fail'),
                                             test('kasan', 'kernel_stack_untagged', 'pass')], [],
                                    baseline={'kasan/page_table_untagged': 'pass',
                                              'kasan/kernel_stack_untagged': 'pass'})
        self.assertTrue(ok, lines)


class MarkdownTest(unittest.TestCase):
    def test_not_run_yet_shown_and_stale(self):
        e = load_toml(ONE)[0]
        saved = reverts.RESULT_FILE
        with tempfile.TemporaryDirectory() as d:
            reverts.RESULT_FILE = os.path.join(d, 'reverts.json')
            try:
                self.assertIn('| not run yet |', reverts.markdown([e], stamp='s1'))
                from kmt import results
                rec = {'key': e.key, 'change': e.change, 'ok': True, 'stamp': 's1',
                       'fails': list(e.fails), 'passes': [],
                       'tests': {'kasan/page_table_untagged': {'status': 'fail'}}}
                results.write_json(reverts.RESULT_FILE, {'reverts': [rec]})
                self.assertIn('| page_table_untagged FAIL |', reverts.markdown([e], stamp='s1'))
                self.assertIn('stale', reverts.markdown([e], stamp='s2'))
                e2 = load_toml(ONE + 'passes = ["kasan/kernel_stack_untagged"]\n')[0]
                self.assertIn('stale', reverts.markdown([e2], stamp='s1'))
            finally:
                reverts.RESULT_FILE = saved


if __name__ == '__main__':
    unittest.main()


class StampTest(unittest.TestCase):
    def write(self, d, body, diff):
        with open(os.path.join(d, '0001-a.patch'), 'w') as f:
            f.write('Subject: [PATCH] a\n\n%s\n---\n a | 1 +\n\ndiff --git a/a b/a\n%s' % (body, diff))
        with open(os.path.join(d, 'series'), 'w') as f:
            f.write('0001-a.patch\n')
        return reverts.current_stamp(d)

    def test_a_reworded_message_keeps_the_stamp(self):
        with tempfile.TemporaryDirectory() as d:
            one = self.write(d, 'why', '+x\n')
            self.assertEqual(one, self.write(d, 'why, better said', '+x\n'))
            self.assertNotEqual(one, self.write(d, 'why', '+y\n'))

