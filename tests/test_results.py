"""Console-log analysis on captured logs (no kernel, no QEMU needed)."""

import json
import os
import tempfile
import unittest

from kmt import results, targets

FIX = os.path.join(os.path.dirname(__file__), 'fixtures')
# The suites the captured sync logs ran (the sync cell has grown since).
SYNC = targets.Cell('sync', 'lean', 'mte', 'sync', ('kasan', 'mte', 'lkdtm-refcount'))


def load(name):
    with open(os.path.join(FIX, name)) as f:
        return [l.rstrip('\n') for l in f]


def by_name(out):
    return {(t['suite'], t['name']): t for t in out['tests']}


# A kernel with KUnit built in and the suites as modules: the boot prints an
# empty KTAP document, each module loaded prints its own.
MODULES_LOG = """[    0.5] KTAP version 1
[    0.5] 1..0
[    3.0] KTAP version 1
[    3.0] 1..1
[    3.0]     KTAP version 1
[    3.0]     # Subtest: kasan
[    3.0]     # module: kasan_test
[    3.0]     1..2
[    3.1]     ok 1 kmalloc_oob_right
[    3.2]     ok 2 kmalloc_oob_left # SKIP Test requires CONFIG_X=y
[    3.3] ok 1 kasan
KMT-MODULE kasan_test rc=0
[    4.0] KTAP version 1
[    4.0] 1..1
[    4.0]     KTAP version 1
[    4.0]     # Subtest: refcount
[    4.0]     # module: refcount_kunit
[    4.0]     1..1
[    4.1]     not ok 1 refcount_test_constants
[    4.2] not ok 1 refcount
KMT-MODULE refcount_kunit rc=0
KMT-MODULE lkdtm rc=1
KMT-DONE""".split('\n')
MODULES = targets.Cell('modules', 'lean-modules', 'mte', 'sync', ('kasan', 'refcount'))


class ModulesTest(unittest.TestCase):
    def test_each_module_document_is_parsed(self):
        out = results.analyze(MODULES_LOG, MODULES)
        t = by_name(out)
        self.assertEqual(t[('kasan', 'kmalloc_oob_right')]['status'], results.PASS)
        self.assertEqual(t[('kasan', 'kmalloc_oob_left')]['status'], results.SKIP)
        self.assertEqual(t[('refcount', 'refcount_test_constants')]['status'], results.FAIL)

    def test_failed_modprobe_is_a_problem(self):
        out = results.analyze(MODULES_LOG, MODULES)
        mods = [p for p in out['problems'] if p['kind'] == 'module']
        self.assertEqual(len(mods), 1)
        self.assertIn('lkdtm', mods[0]['text'])

    def test_module_that_never_loaded_is_missing(self):
        lines = [l for l in MODULES_LOG if not l.startswith('[    4.')]
        out = results.analyze(lines, MODULES)
        self.assertTrue(any(p['kind'] == 'missing' and 'refcount' in p['text']
                            for p in out['problems']))

    def test_documents_split_at_top_level_only(self):
        docs = results.ktap_documents(MODULES_LOG)
        self.assertEqual(len(docs), 3)
        self.assertTrue(all(d[0].endswith('] KTAP version 1') for d in docs))


# Linux 6.1: a module's suites print without a top-level header (no
# "KTAP version 1" / "1..1" of their own), after the boot's empty document.
MODULES_LOG_61 = """[    0.5] KTAP version 1
[    0.5] 1..0
[    3.0]     KTAP version 1
[    3.0]     # Subtest: kasan
[    3.0]     1..2
[    3.1]     ok 1 kmalloc_oob_right
[    3.2]     not ok 2 pagealloc_oob_right
[    3.2] # kasan: pass:1 fail:1 skip:0 total:2
[    3.3] not ok 1 kasan
KMT-MODULE kasan_test rc=0
[    4.0]     KTAP version 1
[    4.0]     # Subtest: refcount
[    4.0]     1..1
[    4.1]     ok 1 refcount_test_constants
[    4.2] ok 1 refcount
KMT-MODULE refcount_kunit rc=0
KMT-DONE""".split('\n')


class Modules61Test(unittest.TestCase):
    def test_headerless_module_documents_are_parsed(self):
        out = results.analyze(MODULES_LOG_61, MODULES)
        t = by_name(out)
        self.assertEqual(t[('kasan', 'kmalloc_oob_right')]['status'], results.PASS)
        self.assertEqual(t[('kasan', 'pagealloc_oob_right')]['status'], results.FAIL)
        self.assertEqual(t[('refcount', 'refcount_test_constants')]['status'], results.PASS)
        self.assertFalse([p for p in out['problems'] if p['kind'] == 'missing'])

    def test_a_headerless_document_gets_a_top_level_header(self):
        docs = results.ktap_documents(MODULES_LOG_61)
        self.assertEqual(len(docs), 3)
        self.assertEqual([d[:2] for d in docs[1:]],
                         [['[    3.0] KTAP version 1', '[    3.0] 1..1'],
                          ['[    4.0] KTAP version 1', '[    4.0] 1..1']])


    def test_a_document_with_suites_left_to_report_is_not_split(self):
        # Two built-in suites in one document: the second is not a module.
        log = ['[    0.5] KTAP version 1', '[    0.5] 1..2',
               '[    0.6]     KTAP version 1', '[    0.6]     # Subtest: kasan',
               '[    0.6]     1..1', '[    0.6]     ok 1 a', '[    0.7] ok 1 kasan',
               '[    0.8]     KTAP version 1', '[    0.8]     # Subtest: refcount',
               '[    0.8]     1..1', '[    0.8]     ok 1 b', '[    0.9] ok 2 refcount']
        self.assertEqual(len(results.ktap_documents(log)), 1)


class AnalyzeTest(unittest.TestCase):
    def test_clean_run(self):
        out = results.analyze(load('sync-ok.log'), SYNC)
        self.assertEqual(out['problems'], [])
        t = by_name(out)
        self.assertEqual(t[('kasan', 'kmalloc_oob_right')]['status'], results.PASS)
        self.assertEqual(t[('kasan', 'kasan_bitops_generic')]['status'], results.SKIP)
        self.assertEqual(t[('mte', 'check_buffer_fill')]['status'], results.PASS)
        self.assertIn('2/2 subtests', t[('mte', 'check_buffer_fill')]['detail'])
        self.assertEqual(t[('mte', 'check_hugetlb_options')]['status'], results.SKIP)
        self.assertEqual(t[('lkdtm-refcount', 'REFCOUNT_INC_OVERFLOW.sh')]['status'],
                         results.PASS)
        self.assertEqual(len(out['tests']), 6)

    def test_panic_is_a_failure(self):
        out = results.analyze(load('panic.log'), SYNC)
        kinds = {p['kind'] for p in out['problems']}
        self.assertIn('panic', kinds)
        self.assertIn('oops', kinds)
        # The lkdtm suite never finished and init never got to the end.
        texts = ' '.join(p['text'] for p in out['problems'])
        self.assertIn('lkdtm-refcount never finished', texts)
        self.assertIn('KMT-DONE', texts)

    def test_truncated_ktap_is_missing_results(self):
        out = results.analyze(load('truncated.log'), SYNC)
        texts = [p['text'] for p in out['problems'] if p['kind'] == 'missing']
        self.assertTrue(any('kasan' in t for t in texts), texts)
        self.assertTrue(any('mte never started' in t for t in texts), texts)
        self.assertTrue(all(t['status'] == results.FAIL for t in out['tests']))

    def test_replayed_console_line_counts_once(self):
        # 7.3's printk replays the line a WARN interrupted on the console
        # ("** replaying previous printk message **", then the line again).
        lines = ['[    1.0] KTAP version 1', '[    1.0] 1..1',
                 '[    1.0]     KTAP version 1', '[    1.0]     # Subtest: refcount',
                 '[    1.0]     1..1',
                 '[    1.0]         KTAP version 1',
                 '[    1.0]         # Subtest: refcount_test_add',
                 '[    1.1]         ok 1 old=1 i=1',
                 '[    1.2]         ok 2 old=0 i=0',
                 '** replaying previous printk message **',
                 '[    1.2]         ok 2 old=0 i=0',
                 '[    1.3]         ok 3 old=0 i=2',
                 '[    1.4]     # refcount_test_add: pass:3 fail:0 skip:0 total:3',
                 '[    1.4]     ok 1 refcount_test_add',
                 '[    1.5] ok 1 refcount']
        self.assertEqual(results.suite_results(lines, targets.SUITES['refcount']),
                         [('refcount_test_add', results.PASS, '')])
        # A line printed twice for real (different timestamps) stays twice.
        again = ['[    1.0] x', '** replaying previous printk message **', '[    1.1] x']
        self.assertEqual(results.kernel_lines(again), ['[    1.0] x', '[    1.1] x'])

    def test_dropped_console_messages_are_named(self):
        lines = ['[    1.0] KTAP version 1', '[    1.0] 1..1',
                 '[    1.0]     KTAP version 1', '[    1.0]     # Subtest: kasan',
                 '[    1.0]     1..2', '[    1.1]     ok 1 kmalloc_oob_right',
                 '** 13 printk messages dropped **', '[    1.2] ok 1 kasan']
        err = results.suite_results(lines, targets.SUITES['kasan'])
        self.assertEqual(err, 'KUnit suite kasan: 1 of 2 cases reported '
                              '(printk dropped console messages)')

    def test_kasan_report_outside_its_suite(self):
        out = results.analyze(load('kasan-outside.log'), SYNC)
        self.assertEqual([p['kind'] for p in out['problems']], ['kasan'])
        self.assertIn('__arm64_sys_getpid', out['problems'][0]['text'])
        self.assertEqual(out["problems"][0]["line"], 24)

    def test_kasan_report_inside_kasan_suite_is_expected(self):
        out = results.analyze(load('sync-ok.log'), SYNC)
        self.assertFalse([p for p in out['problems'] if p['kind'] == 'kasan'])

    def test_warning_only_allowed_in_lkdtm(self):
        lines = load('sync-ok.log')
        i = lines.index('KMT-BEGIN mte')
        lines.insert(i + 1, '[    4.0] WARNING: CPU: 0 PID: 1 at mm/page_alloc.c:1 foo+0x0/0x4')
        out = results.analyze(lines, SYNC)
        self.assertEqual([p['kind'] for p in out['problems']], ['warning'])

    def test_failed_case(self):
        out = results.analyze(load('kasan-case-fails.log'), SYNC)
        t = by_name(out)
        self.assertEqual(t[('kasan', 'kmalloc_oob_left')]['status'], results.FAIL)
        self.assertEqual(t[('kasan', 'kmalloc_oob_right')]['status'], results.PASS)

    def test_timeout(self):
        lines = load('sync-ok.log')[:20]
        out = results.analyze(lines, SYNC, timed_out=True)
        self.assertIn('timeout', [p['kind'] for p in out['problems']])

    def test_no_test_in_suite(self):
        lines = load('sync-ok.log')
        i = lines.index('KMT-BEGIN mte')
        j = lines.index('KMT-END mte rc=0')
        lines[i + 1:j] = ['KMT-ERROR mte: no kselftest matches arm64:check_*']
        out = results.analyze(lines, SYNC)
        self.assertTrue(any('no kselftest matches' in p['text'] for p in out['problems']))


class MachineShapeTest(unittest.TestCase):
    """A machine that promises a boot shape (EL2 with VHE, pKVM) must see it
    in the log: a kernel that quietly dropped to EL1 has not tested it."""

    VHE = targets.Cell('vhe-sync', 'lean', 'mte-vhe', 'sync', ('kasan', 'mte', 'lkdtm-refcount'))

    def test_el1_boot_on_an_el2_machine_is_a_failure(self):
        lines = [l.replace('started at EL2', 'started at EL1') for l in load('sync-ok.log')]
        lines = [l for l in lines if 'Virtualization Host Extensions' not in l]
        out = results.analyze(lines, self.VHE)
        probs = [p for p in out['problems'] if p['kind'] == 'machine']
        self.assertEqual(len(probs), 2, out['problems'])
        self.assertIn('EL2', probs[0]['text'])

    def test_vhe_boot_passes(self):
        lines = load('sync-ok.log')
        at = next(i for i, l in enumerate(lines) if 'Kernel command line' in l)
        lines = (lines[:at] + ['[    0.000000] CPU features: detected: Virtualization Host Extensions']
                 + lines[at:at + 1] + ['[    0.251116] CPU: All CPU(s) started at EL2']
                 + lines[at + 1:])
        out = results.analyze(lines, self.VHE)
        self.assertEqual(out['problems'], [])

    def test_pkvm_in_either_mode_and_only_when_initialized(self):
        cell = [c for c in targets.CHECK_ALL if c.name == 'pkvm-sync'][0]
        base = load('sync-ok.log')
        at = next(i for i, l in enumerate(base) if 'Kernel command line' in l) + 1
        for mode, ok in (('hVHE', True), ('nVHE', True), ('none', False)):
            extra = ['[    0.250139] CPU: All CPU(s) started at EL2']
            if mode != 'none':
                extra.append('[    1.543116] kvm [1]: Protected %s mode initialized successfully'
                             % mode)
            out = results.analyze(base[:at] + extra + base[at:], cell)
            probs = [p['text'] for p in out['problems'] if p['kind'] == 'machine']
            self.assertEqual(probs == [], ok, (mode, probs))
            if not ok:
                self.assertIn('cell pkvm-sync', probs[0])

    def test_machines_without_a_shape_check_nothing(self):
        self.assertEqual(targets.MACHINES['mte'].boot_expect, ())
        self.assertTrue(all(targets.MACHINES[c.machine].boot_expect
                            for c in targets.CHECK if c.name.startswith('vhe-')))


class KunitJsonTest(unittest.TestCase):
    """kunit.py's --json format, written next to each boot's record: the
    same cases and statuses as kmt's own reading of the log."""

    def test_the_same_cases_as_analyze(self):
        lines = load('sync-ok.log')
        doc = json.loads(results.kunit_json(lines, [targets.SUITES[s] for s in SYNC.suites],
                                            config='lean'))
        self.assertEqual(doc['name'], 'KUnit Test Group')
        self.assertEqual([g['name'] for g in doc['sub_groups']], ['kasan'])
        cases = {c['name']: c['status'] for c in doc['sub_groups'][0]['test_cases']}
        mine = {t['name']: t['status'] for t in results.analyze(lines, SYNC)['tests']
                if t['suite'] == 'kasan'}
        self.assertEqual(set(cases), set(mine))
        status = {'pass': 'PASS', 'skip': 'SKIP', 'fail': 'FAIL'}
        self.assertEqual(cases, {n: status[st] for n, st in mine.items()})
        self.assertEqual(doc['defconfig'], 'lean')

    def test_suites_of_modules_are_found_in_their_documents(self):
        doc = json.loads(results.kunit_json(MODULES_LOG, [targets.SUITES[s]
                                                          for s in MODULES.suites]))
        groups = {g['name']: g for g in doc['sub_groups']}
        self.assertEqual(sorted(groups), ['kasan', 'refcount'])
        self.assertEqual(groups['refcount']['test_cases'],
                         [{'name': 'refcount_test_constants', 'status': 'FAIL'}])

    def test_no_kunit_suite_no_json(self):
        self.assertIsNone(results.kunit_json(MODULES_LOG, [targets.SUITES['mte']]))


class ExpectationsTest(unittest.TestCase):
    def _write(self, text):
        fd, path = tempfile.mkstemp()
        with os.fdopen(fd, 'w') as f:
            f.write(text)
        self.addCleanup(os.unlink, path)
        return path

    def test_reason_required(self):
        path = self._write('sync kasan/kmalloc_oob_left fail\n')
        with self.assertRaises(Exception):
            results.load_expectations(path)

    def test_expected_failure_and_unexpected_pass(self):
        path = self._write('# comment\nsy* kasan/kmalloc_oob_* fail # known: reason here\n')
        exp = results.load_expectations(path)
        out = results.analyze(load('kasan-case-fails.log'), SYNC)
        problems = results.apply_expectations('sync', out['tests'], exp)
        t = by_name(out)
        self.assertEqual(t[('kasan', 'kmalloc_oob_left')]['status'], results.XFAIL)
        # kmalloc_oob_right matches the glob but passed: reported.
        self.assertEqual([p['kind'] for p in problems], ['unexpected-pass'])


if __name__ == '__main__':
    unittest.main()


class WriteJsonTest(unittest.TestCase):
    def test_schema_version_and_phases(self):
        import json
        import tempfile
        from kmt import log
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'sub', 'x.json')
            with log.phase('unit'):
                pass
            results.write_json(path, {'a': 1, 'phases': log.phases()})
            with open(path) as f:
                data = json.load(f)
        self.assertEqual(data['schema'], results.SCHEMA_VERSION)
        self.assertEqual(data['a'], 1)
        names = [p['name'] for p in data['phases']]
        self.assertIn('unit', names)
        self.assertEqual(names[-1], 'total')
        self.assertTrue(all(p['seconds'] >= 0 for p in data['phases']))


class TypedRecordsTest(unittest.TestCase):
    def test_one_shape_for_every_record(self):
        rec = results.record('x', ('s',), '-', [results.test('s', 'a', 'pass')],
                             [results.problem('gate', 'bad')], 'l.log', duration_s=1.5)
        self.assertEqual(rec, {'cell': 'x', 'suites': ['s'], 'kasan': '-', 'log': 'l.log',
                               'duration_s': 1.5,
                               'tests': [{'suite': 's', 'name': 'a', 'status': 'pass',
                                          'detail': ''}],
                               'problems': [{'kind': 'gate', 'line': 0, 'text': 'bad'}]})

    def test_unknown_status_or_kind_is_refused(self):
        self.assertRaises(ValueError, results.test, 's', 'a', 'passed')
        self.assertRaises(ValueError, results.problem, 'oopsie', 'x')
        # A hand-built dict that strays from the shape is caught too.
        self.assertRaises(TypeError, results.record, 'x', ('s',), '-',
                          [{'suite': 's', 'name': 'a', 'status': 'pass', 'extra': 1}])

    def test_status_is_a_string(self):
        self.assertEqual(results.PASS, 'pass')
        self.assertEqual(str(results.XFAIL), 'xfail')
        self.assertEqual(json.dumps({'s': results.FAIL}), '{"s": "fail"}')


class ParserVersionsTest(unittest.TestCase):
    """The KTAP parser comes from the base's tree: 6.12's Printer takes the
    output only, newer ones (7.3) a print flag too, and their
    parse_run_tests() takes the printer."""

    def test_quiet_printer_for_both_signatures(self):
        import types

        class Old:
            def __init__(self, output):
                self.output = output

        class New:
            def __init__(self, print=True, output=None):
                self.print, self.output = print, output
        self.assertTrue(hasattr(results.quiet_printer(types.SimpleNamespace(Printer=Old)),
                                'output'))
        p = results.quiet_printer(types.SimpleNamespace(Printer=New))
        self.assertFalse(p.print)
        self.assertIsNotNone(p.output)
