"""The other in-tree suites under HW_TAGS: suite selection, commands,
log problems and the judgement of a run, without a kernel."""

import os
import tempfile
import unittest
from unittest import mock

from kmt import othersuites, results


def _json(suites):
    """kunit_json with {suite: {case: 'PASS'/'FAIL'/'SKIP'}}."""
    return {'name': 'KUnit Test Group', 'test_cases': [], 'sub_groups': [
        {'name': s, 'sub_groups': [],
         'test_cases': [{'name': c, 'status': st} for c, st in cases.items()]}
        for s, cases in suites.items()]}


def _data(modes, suites=('string', 'slub_test')):
    return {'base': '6.12', 'date': '2026-12-05T00:00:00+00:00', 'series_head': 'a' * 40,
            'suites': list(suites), 'absent': ['printf'], 'modes': modes}


def _mode(statuses, problems=(), reruns=None):
    return {'rc': 0, 'statuses': statuses, 'problems': list(problems),
            'reruns': reruns or {}}


PASSING = {'string': {'test_memset16': results.PASS, 'test_strcmp': results.PASS},
           'slub_test': {'test_kmalloc_redzone_access': results.PASS,
                         'test_leak_destroy': results.SKIP}}


class OtherSuitesTest(unittest.TestCase):
    def test_the_6_12_entries_fit_the_6_12_run(self):
        # Every case EXPECTED names for 6.12 is a case of its suite, each
        # with its reason (expected_for() checks the reason and modes).
        exp = othersuites.expected_for('6.12')
        self.assertEqual(len(exp), 27)
        self.assertEqual({s for s, _ in exp}, {'kfence', 'slub_test'})
        # 7.3 carries the three fixes (postings kfence-hwtags, slub-kunit-hwtags).
        self.assertEqual(othersuites.expected_for('7.3'), {})

    def test_kconfig_symbols_and_select(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, 'lib'))
            os.makedirs(os.path.join(d, '.git'))
            with open(os.path.join(d, 'lib', 'Kconfig.debug'), 'w') as f:
                f.write('config STRING_KUNIT_TEST\n\ttristate "x"\n'
                        'menuconfig SLUB_DEBUG\n'
                        'config SLUB_KUNIT_TEST\n'
                        '\tdepends on FORTIFY_KUNIT_TEST\n')
            with open(os.path.join(d, '.git', 'Kconfig'), 'w') as f:
                f.write('config FORTIFY_KUNIT_TEST\n')
            syms = othersuites.kconfig_symbols(d)
        self.assertEqual(syms, {'STRING_KUNIT_TEST', 'SLUB_DEBUG', 'SLUB_KUNIT_TEST'})
        have, lack = othersuites.select(syms)
        self.assertEqual([s.name for s in have], ['slub_test', 'string'])
        self.assertIn('fortify', [s.name for s in lack])
        self.assertEqual(len(have) + len(lack), len(othersuites.SUITES))

    def test_kunitconfig(self):
        have = [s for s in othersuites.SUITES if s.name in ('fortify', 'string')]
        text = othersuites.kunitconfig(have)
        lines = text.splitlines()
        self.assertIn('CONFIG_KASAN_HW_TAGS=y', lines)
        self.assertIn('CONFIG_FORTIFY_SOURCE=y', lines)
        self.assertIn('CONFIG_FORTIFY_KUNIT_TEST=y', lines)
        self.assertIn('CONFIG_STRING_KUNIT_TEST=y', lines)
        # Not the kasan suite: it runs in the matrix.
        self.assertNotIn('CONFIG_KASAN_KUNIT_TEST=y', lines)
        self.assertTrue(text.endswith('\n'))

    def test_suite_names_unique(self):
        names = [s.name for s in othersuites.SUITES]
        self.assertEqual(len(names), len(set(names)))
        self.assertEqual(othersuites.MODE_NAMES[0], 'off')

    def test_commands(self):
        cmd = othersuites.exec_command('out', 'x.kunitconfig', ('kasan.mode=async',), 'x.json')
        self.assertEqual(cmd[:3], ['python3', 'tools/testing/kunit/kunit.py', 'exec'])
        self.assertIn('--kunitconfig=x.kunitconfig', cmd)
        self.assertIn('--kernel_args=kasan.mode=async', cmd)
        self.assertIn('--qemu_args=-smp 2', cmd)
        self.assertTrue(cmd[-1].startswith('--kernel_args='))
        one = othersuites.exec_command('out', 'x.kunitconfig', (), 'x.json', 'string.test_x',
                                       ('-seed 2',), ('kmt.rerun=2',))
        self.assertEqual(one[-1], 'string.test_x')
        self.assertIn('--qemu_args=-seed 2', one)
        self.assertIn('--kernel_args=kmt.rerun=2', one)
        b = othersuites.build_command('out', 'x.kunitconfig')
        self.assertEqual(b[2], 'build')

    def test_log_problems(self):
        lines = ['[    1.0] ok 1 string',
                 '[    2.0] BUG: KASAN: invalid-access in memcpy+0x10/0x40',
                 '[    3.0] WARNING: CPU: 0 PID: 1 at mm/slub.c:100 f+0x1/0x2',
                 '[    4.0] Unable to handle kernel paging request at virtual address 0',
                 '[    5.0] Kernel panic - not syncing: Oops']
        kinds = [k for k, *_ in othersuites.log_problems(lines)]
        self.assertEqual(kinds, ['kasan', 'warning', 'oops', 'panic'])

    def test_log_problems_name_their_case(self):
        lines = ['[    0.5]     # Subtest: slub_test',
                 '[    0.6]     1..2',
                 '[    1.0] BUG: KASAN: invalid-access in test_clobber_zone+0x60/0x120',
                 '[    1.1]     not ok 1 test_clobber_zone',
                 '[    1.2]     ok 2 test_kmalloc_redzone_access',
                 '[    1.3] ok 1 slub_test',
                 '[    2.0] BUG: KASAN: invalid-access in memcpy+0x10/0x40']
        found = othersuites.log_problems(lines)
        self.assertEqual([(k, c) for k, _, c in found],
                         [('kasan', 'slub_test.test_clobber_zone'), ('kasan', '')])

    def test_a_report_in_an_expected_case_is_not_a_log_problem(self):
        # The case fails by its KASAN report; EXPECTED names why. A report
        # elsewhere, or in a mode the entry does not name, still fails.
        failing = dict(PASSING, slub_test={'test_clobber_zone': results.FAIL})
        report = ('kasan', 'BUG: KASAN: invalid-access in test_clobber_zone',
                  'slub_test.test_clobber_zone')
        modes = {m: _mode(PASSING) for m in othersuites.MODE_NAMES}
        modes['sync'] = _mode(failing, problems=[report])
        modes['async'] = _mode(failing, problems=[report])
        why = 'writes the redzone through a tagged pointer'
        with mock.patch.dict(othersuites.EXPECTED,
                             {'6.12': (('slub_test', 'test_clobber_zone', ('sync',), why),)}):
            by = {t['name']: t for t in othersuites.judge(_data(modes), '6.12')}
        first = 'string'  # a log problem is reported on the mode's first suite
        self.assertEqual(by['sync/%s' % first]['status'], results.PASS, by['sync/%s' % first])
        self.assertEqual(by['async/%s' % first]['status'], results.FAIL)

    def test_judge_all_pass(self):
        data = _data({m: _mode(PASSING) for m in othersuites.MODE_NAMES})
        tests = othersuites.judge(data, 'a base with no EXPECTED entry')
        self.assertEqual(len(tests), 2 * len(othersuites.MODE_NAMES))
        self.assertTrue(all(t['status'] == results.PASS for t in tests), tests)
        self.assertIn('2 pass', tests[0]['detail'])

    def test_judge_failures(self):
        failing = dict(PASSING, string={'test_memset16': results.FAIL,
                                        'test_strcmp': results.PASS})
        modes = {m: _mode(PASSING) for m in othersuites.MODE_NAMES}
        modes['async'] = _mode(failing, reruns={'string.test_memset16': 1})
        modes['asymm'] = _mode(PASSING, problems=[('kasan', 'BUG: KASAN: x')])
        modes['sync'] = _mode({'string': PASSING['string']})
        del modes['off']
        by = {t['name']: t for t in othersuites.judge(_data(modes), '6.12')}
        self.assertEqual(by['async/string']['status'], results.FAIL)
        self.assertIn('test_memset16 fails (alone: passed 1 of 3', by['async/string']['detail'])
        self.assertEqual(by['async/slub_test']['status'], results.PASS)
        # A log problem fails the mode once (on its first suite).
        self.assertEqual(by['asymm/string']['status'], results.FAIL)
        self.assertEqual(by['asymm/slub_test']['status'], results.PASS)
        self.assertIn('not in the results', by['sync/slub_test']['detail'])
        self.assertIn('no results', by['off/string']['detail'])

    def test_expected_entries(self):
        failing = dict(PASSING, string={'test_memset16': results.FAIL,
                                        'test_strcmp': results.PASS})
        modes = {m: _mode(PASSING) for m in othersuites.MODE_NAMES}
        modes['sync'] = _mode(failing)
        why = 'test_memset16 reads past the buffer it tagged'
        with mock.patch.dict(othersuites.EXPECTED,
                             {'6.12': (('string', 'test_memset16', ('sync', 'async'), why),)}):
            by = {t['name']: t for t in othersuites.judge(_data(modes), '6.12')}
        self.assertEqual(by['sync/string']['status'], results.PASS)
        # Named for async, where it passed: a stale reason fails.
        self.assertEqual(by['expected/string.test_memset16/async']['status'], results.FAIL)
        self.assertNotIn('expected/string.test_memset16/sync', by)
        with mock.patch.dict(othersuites.EXPECTED, {'6.12': (('string', 'x', ('sync',), ' '),)}):
            with self.assertRaises(Exception):
                othersuites.judge(_data(modes), '6.12')
        with mock.patch.dict(othersuites.EXPECTED,
                             {'6.12': (('string', 'x', ('fast',), 'why'),)}):
            with self.assertRaises(Exception):
                othersuites.judge(_data(modes), '6.12')

    def test_statuses_from_json(self):
        data = _json({'string': {'a': 'PASS', 'b': 'FAIL'}, 'other': {'c': 'PASS'}})
        got = othersuites._statuses(data, ['string', 'slub_test'])
        self.assertEqual(got, {'string': {'a': results.PASS, 'b': results.FAIL}})
        self.assertIsNone(othersuites._statuses(None, ['string']))

    def test_markdown(self):
        failing = dict(PASSING, string={'test_memset16': results.FAIL,
                                        'test_strcmp': results.PASS})
        modes = {m: _mode(PASSING) for m in othersuites.MODE_NAMES}
        modes['async'] = _mode(failing, reruns={'string.test_memset16': 0},
                               problems=[('kasan', 'BUG: KASAN: invalid-access in x')])
        text = othersuites.markdown(_data(modes))
        self.assertIn('| string | STRING_KUNIT_TEST | 2 / 0 / 0 | 2 / 0 / 0 | 1 / 1 / 0 |',
                      text)
        self.assertIn('| printf | PRINTF_KUNIT_TEST | not in this base', text)
        self.assertIn('- string.test_memset16 in async (alone: 0 of 3 passed)', text)
        self.assertIn('- async: kasan: `BUG: KASAN: invalid-access in x`', text)
        clean = othersuites.markdown(_data({m: _mode(PASSING)
                                            for m in othersuites.MODE_NAMES}))
        self.assertIn('No case failed in any mode.', clean)


if __name__ == '__main__':
    unittest.main()
