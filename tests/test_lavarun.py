"""make lava-run without LAVA: reading lava-run's log back, checking LAVA's
results against the console and the direct run, the device rendering."""

import json
import os
import tempfile
import unittest
from unittest import mock

from kmt import lava, lavarun, results, targets

CELL = [c for c in targets.CHECK if c.name == 'sync'][0]


def entry(lvl, msg):
    return json.dumps({'dt': '2026-11-30T21:17:28.1', 'lvl': lvl, 'msg': msg})


OUTPUT = [
    '$ /usr/bin/python3 lava-run --job-id sync ...',
    entry('info', 'start: 1 deployimages'),
    entry('target', '[    3.51]     # Subtest: kasan'),
    entry('target', '[    3.60]     ok 1 kmalloc_oob_right'),
    entry('results', {'case': 'kmalloc_oob_right', 'definition': 'kunit',
                      'extra': {'test_case_id': 'kmalloc_oob_right'}, 'result': 'pass'}),
    entry('target', '[    3.61]     not ok 2 kmalloc_oob_left'),
    entry('results', {'case': 'kmalloc_oob_left', 'definition': 'kunit',
                      'extra': {'test_case_id': 'kmalloc_oob_left'}, 'result': 'fail'}),
    entry('feedback', 'KMT-DONE'),
    "{dt: '2026-11-30', lvl: results, msg: {case: job, definition: lava, result: pass}}",
    '{not json nor yaml: [',
]


def rec(*tests):
    return results.record('sync', ('kasan',), 'sync',
                          [results.test(s, n, st) for s, n, st in tests])


class ReadBackTest(unittest.TestCase):
    def test_results_and_console_from_the_log(self):
        found, console = lavarun.read_output(OUTPUT)
        self.assertEqual([r['case'] for r in found],
                         ['kmalloc_oob_right', 'kmalloc_oob_left', 'job'])
        self.assertEqual(console[0], '[    3.51]     # Subtest: kasan')
        self.assertEqual(console[-1], 'KMT-DONE')
        self.assertEqual(lavarun.lava_verdict(found), 'pass')
        self.assertIsNone(lavarun.lava_verdict(found[:2]))

    def test_lava_results_checked_against_the_console(self):
        found, _ = lavarun.read_output(OUTPUT)
        same = rec(('kasan', 'kmalloc_oob_right', results.PASS),
                   ('kasan', 'kmalloc_oob_left', results.XFAIL))
        self.assertEqual(lavarun.monitor_mismatches(found, same, CELL), [])
        other = rec(('kasan', 'kmalloc_oob_right', results.PASS),
                    ('kasan', 'kmalloc_oob_left', results.PASS))
        self.assertEqual(lavarun.monitor_mismatches(found, other, CELL),
                         ['kasan/kmalloc_oob_left: LAVA says fail, its console says pass'])
        missing = rec(('kasan', 'kmalloc_oob_right', results.PASS))
        self.assertEqual(len(lavarun.monitor_mismatches(found, missing, CELL)), 1)

    def test_every_outcome_compared_with_the_direct_run(self):
        a = rec(('kasan', 'x', results.PASS), ('kasan', 'y', results.SKIP),
                ('mte', 'z', results.FAIL))
        self.assertEqual(lavarun.differences(a, a), [])
        b = rec(('kasan', 'x', results.PASS), ('kasan', 'y', results.PASS))
        self.assertEqual(lavarun.differences(a, b),
                         ['kasan/y: skip through LAVA, pass directly',
                          'mte/z: fail through LAVA, absent directly'])

    def test_dispatcher_keeps_its_files_in_the_job_directory(self):
        self.assertEqual(lavarun.dispatcher_config('/b/jobs/sync/tmp/'),
                         'dispatcher_ip: 127.0.0.1\nprefix: /b/jobs/sync/tmp/\n')

    def test_device_rendered_with_the_job_context_and_no_network(self):
        if lava.debian_module('jinja2') is None or lava.debian_module('yaml') is None:
            self.skipTest('python3-jinja2 is not installed (scripts/setup-host.sh installs it)')
        stock = '''{% block body %}
device_type: qemu
actions:
  boot:
    methods:
      qemu:
        parameters:
          options:
{% block qemu_options %}
          - -net nic,model=virtio -net user
{% endblock qemu_options %}
{% endblock body %}
'''
        job = lava.job(lavarun.bootspec.for_cell(CELL, 'I', 'R'), 'file:///I', 'file:///R')
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, 'qemu.jinja2'), 'w') as f:
                f.write(stock)
            with mock.patch.object(lavarun, 'templates_dir', return_value=d):
                text = lavarun.render_device(job['context'])
        opts = lava.debian_module('yaml').safe_load(text)[
            'actions']['boot']['methods']['qemu']['parameters']
        self.assertEqual(opts['options'], ['-cpu max', '-machine virt,mte=on,gic-version=3',
                                           '-nographic', '-m 1024', '-monitor none'])
        self.assertEqual(opts['extra'], job['context']['extra_options'])
        self.assertNotIn('-net', text)


def lab_log(console):
    """A lab's job log (lavacli jobs logs ID --raw): YAML list items."""
    out = ['- ' + entry('info', 'start: 1 tftp-deploy')]
    out += ['- ' + entry('target', l) for l in console]
    out.append('- ' + entry('results', {'case': 'job', 'definition': 'lava',
                                        'result': 'pass'}))
    return out


class TempResults(unittest.TestCase):
    """Results written under a temporary directory."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        p = mock.patch.object(lavarun.paths, 'RESULTS', self.tmp.name)
        p.start()
        self.addCleanup(p.stop)


class LabImportTest(TempResults):
    """make lava-import: a lab's job log back into the results."""

    def setUp(self):
        super().setUp()
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, 'fixtures', 'sync-ok.log')) as f:
            self.console = f.read().splitlines()
        self.log = os.path.join(self.tmp.name, 'job.log')
        with open(self.log, 'w') as f:
            f.write('\n'.join(lab_log(self.console)) + '\n')

    def test_list_items_read_like_lava_run_lines(self):
        found, console = lavarun.read_output(lab_log(['[    1.0] hello']))
        self.assertEqual(console, ['[    1.0] hello'])
        self.assertEqual(lavarun.lava_verdict(found), 'pass')

    def test_lab_run_lands_beside_the_local_cells(self):
        local = results.analyze(self.console, CELL)
        direct = results.record('sync', CELL.suites, 'sync', local['tests'], local['problems'])
        summary = {'matrix': 'check', 'cells': [direct]}
        results.write_json(os.path.join(self.tmp.name, 'check.json'), summary)
        record, checks, path = lavarun.lab_import(self.log, 'sync', 'lab-a', 'fvp-mte',
                                                  '1234')
        self.assertEqual(os.path.basename(path), 'sync@lab-a-1234.json')
        self.assertEqual(record['where'], 'LAVA lab lab-a, device fvp-mte, job 1234')
        self.assertEqual((record['lab'], record['device'], record['job']),
                         ('lab-a', 'fvp-mte', '1234'))
        # same console, same outcomes as the direct run: nothing to report
        self.assertEqual(lavarun.outcome_set(record), lavarun.outcome_set(direct))
        self.assertEqual([c for c in checks if 'direct' in c], [])
        with open(os.path.join(self.tmp.name, 'check.json')) as f:
            merged = json.load(f)
        self.assertEqual(merged['cells'], [direct])
        self.assertEqual([c['where'] for c in merged['lab_cells']], [record['where']])
        table = lavarun_table(merged)
        self.assertIn('| sync (LAVA lab lab-a, fvp-mte, job 1234) | sync |', table)

    def test_lab_failure_is_reported_not_hidden(self):
        console = [l.replace('ok 1 ', 'not ok 1 ', 1) if ' ok 1 ' in l else l
                   for l in self.console]
        with open(self.log, 'w') as f:
            f.write('\n'.join(lab_log(console)) + '\n')
        record, checks, _ = lavarun.lab_import(self.log, 'sync', 'lab-a', 'fvp-mte', '7')
        self.assertIn('fail', [t['status'] for t in record['tests']])
        self.assertTrue(any('no direct run' in c for c in checks))

    def test_missing_log_is_an_error(self):
        with self.assertRaises(lavarun.log.StepError):
            lavarun.lab_import('/nonexistent.log', 'sync', 'l', 'd', '1')


BENCH_CONSOLE = ['KMT-BEGIN bench', 'TAP version 13', '1..2',
                 '# kmt-bench getpid ops=2000 insn_per_op=280.9 insn_mean=281.2 chunk=200 '
                 'ns_per_op=4700.5',
                 'ok 1 getpid',
                 '# kmt-bench fork64m ops=5 insn_per_op=5306345.0 insn_mean=5306400.0 chunk=1 '
                 'ns_per_op=9.0',
                 'ok 2 fork64m', 'KMT-END bench rc=0', 'KMT-DONE']


class LabBenchImportTest(TempResults):
    """make lava-import BOOT=...: a lab's benchmark figures back."""

    def setUp(self):
        super().setUp()
        self.log = os.path.join(self.tmp.name, 'job.log')

    def write(self, measurements):
        lines = ['- ' + entry('target', l) for l in BENCH_CONSOLE]
        for case, value in measurements.items():
            lines.append('- ' + entry('results', {'definition': 'kmt-bench', 'case': case,
                                                  'result': 'pass', 'measurement': value,
                                                  'units': 'insn_per_op'}))
        with open(self.log, 'w') as f:
            f.write('\n'.join(lines) + '\n')

    def test_figures_land_in_the_bench_results(self):
        self.write({'getpid': 280.9, 'fork64m': 5306345.0})
        recs, checks, path = lavarun.lab_import_bench(self.log, 'bench-patched-sync-icount',
                                                      'lab-a', 'ampereone', '42')
        self.assertEqual(checks, [])
        self.assertEqual(os.path.basename(path), 'bench-patched-sync-icount@lab-a-42.json')
        self.assertEqual([(r['benchmark'], r['metric'], r['kernel'], r['kasan'], r['value'])
                          for r in recs],
                         [('getpid', 'insn_per_op', 'patched', 'sync', 280.9),
                          ('fork64m', 'insn_per_op', 'patched', 'sync', 5306345.0)])
        with open(os.path.join(self.tmp.name, 'bench', 'results.json')) as f:
            merged = json.load(f)
        self.assertEqual(merged['lab_records'], recs)
        from kmt import bench  # pylint: disable=import-outside-toplevel
        self.assertIn('| getpid | sync | patched | insn_per_op | 280.9 | lab-a | ampereone | 42 |',
                      bench.lab_table(merged['lab_records']))

    def test_wall_time_boot_gives_ns_and_a_disagreement_is_reported(self):
        self.write({'getpid': 4700.5})
        recs, checks, _ = lavarun.lab_import_bench(self.log, 'bench-baseline-sync-time0',
                                                   'lab-a', 'ampereone', '43')
        self.assertEqual([r['metric'] for r in recs], ['ns_per_op', 'ns_per_op'])
        self.assertEqual(checks, ['fork64m: LAVA reported no measurement'])

    def test_a_name_that_is_no_bench_boot_is_refused(self):
        self.write({})
        with self.assertRaises(lavarun.log.StepError):
            lavarun.lab_import_bench(self.log, 'sync', 'lab-a', 'x', '1')


def lavarun_table(summary):
    from kmt import matrix  # pylint: disable=import-outside-toplevel
    return matrix.markdown_cells(summary)


if __name__ == '__main__':
    unittest.main()
