import os
import tempfile
import unittest
from types import SimpleNamespace

from kmt import log, paths, reverts

SUBJECTS = ['mm: skip KASAN tagging of page table pages', 'fork: skip KASAN tagging of kernel thread stacks']


def cell(name):
    cells = {'sync': ('kasan', 'mte'), 'distro': ('arm64-mte', 'mte')}
    if name not in cells:
        raise log.StepError('no cell %s' % name)
    return SimpleNamespace(name=name, suites=cells[name])


def load_toml(text):
    with tempfile.NamedTemporaryFile('w', suffix='.toml', delete=False) as f:
        f.write(text)
    try:
        return reverts.load(f.name, subjects=SUBJECTS, cells=cell)
    finally:
        os.unlink(f.name)


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

    def test_the_real_file(self):
        entries = reverts.load()
        self.assertGreaterEqual(len(entries), 4)
        for e in entries:
            self.assertTrue(e.why, e.change)


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

