"""Every matrix cell as a LAVA job, rendered from its BootSpec and valid
by LAVA's own schema (Debian's lava-common)."""

import json
import os
import re
import tempfile
import unittest

from kmt import bench, bootspec, lava, targets

KUNIT_LOG = '''[    3.50] KTAP version 1
[    3.51]     # Subtest: kasan
[    3.60]     ok 1 kmalloc_oob_right
[    3.61]     not ok 2 kmalloc_oob_left
[    3.62]     ok 3 kasan_global_oob_right # SKIP Test requires CONFIG_KASAN_GENERIC=y
[    3.70] ok 1 kasan
KMT-KUNIT-DONE
'''
KSFT_LOG = '''KMT-BEGIN mte
ok 1 selftests: arm64: check_buffer_fill
not ok 2 selftests: arm64: check_child_memory
not ok 3 selftests: arm64: check_gcr_el1_cswitch # exit=1
ok 4 selftests: arm64: check_hugetlb_options # SKIP
not ok 5 selftests: arm64: check_ksm_options # TIMEOUT 45 seconds
KMT-END mte rc=1
'''


def spec(name, matrix='check'):
    c = [c for c in targets.MATRICES[matrix] if c.name == name][0]
    return bootspec.for_cell(c, 'o/arch/arm64/boot/Image', 'o/initramfs.cpio.gz')


class LavaJobTest(unittest.TestCase):
    def test_every_cell_validates_with_lavas_schema(self):
        if lava.lava_common() is None:
            self.skipTest('lava-common is not installed (scripts/setup-host.sh installs it)')
        for matrix in ('check', 'check-all'):
            for c in targets.MATRICES[matrix]:
                data = lava.job(bootspec.for_cell(c, 'I', 'i'), 'https://lab/I', 'https://lab/i')
                lava.validate(data)

    def test_schema_is_not_a_rubber_stamp(self):
        if lava.lava_common() is None:
            self.skipTest('lava-common is not installed (scripts/setup-host.sh installs it)')
        data = lava.job(spec('sync'), 'file:///I', 'file:///i')
        data['actions'][2]['test']['monitors'][0]['fixupdict']['ok'] = 'passed'
        self.assertRaises(Exception, lava.validate, data)

    def test_same_boot_as_the_local_run(self):
        s = spec('refcount-panic-on-warn')
        data = lava.job(s, 'file:///I', 'file:///i')
        self.assertEqual(data['context']['machine'], 'virt,mte=on,gic-version=3')
        self.assertEqual(data['context']['cpu'], 'max')
        self.assertIn('-smp 4', data['context']['extra_options'])
        kernel = data['actions'][0]['deploy']['images']['kernel']['image_arg']
        self.assertIn('-append "%s"' % bootspec.kernel_cmdline(s), kernel)
        self.assertIn('panic_on_warn=1', kernel)

    def test_monitors_follow_the_console_order(self):
        names = [m['name'] for m in lava.monitors(spec('sync'))]
        self.assertEqual(names, ['kunit', 'mte', 'lkdtm-refcount', 'lkdtm-stack'])
        self.assertEqual([m['name'] for m in lava.monitors(spec('llsc'))],
                         ['kunit', 'lkdtm-refcount'])

    def test_patterns_report_passes_and_failures_not_skips(self):
        # LAVA reads QEMU's serial console through a pty: the guest's CRLF
        # arrives as CR CR LF (lava-run 2023.01, QEMU 10).
        def results(pattern, text):
            return [(m.group('test_case_id'), lava.FIXUP[m.group('result')])
                    for m in re.finditer(pattern, text.replace('\n', '\r\r\n'))]
        self.assertEqual(results(lava.KUNIT_PATTERN, KUNIT_LOG),
                         [('kmalloc_oob_right', 'pass'), ('kmalloc_oob_left', 'fail')])
        # A failure with a directive other than SKIP is still a failure.
        self.assertEqual(results(lava.KSELFTEST_PATTERN, KSFT_LOG),
                         [('check_buffer_fill', 'pass'), ('check_child_memory', 'fail'),
                          ('check_gcr_el1_cswitch', 'fail'), ('check_ksm_options', 'fail')])

    def test_a_silent_suite_does_not_time_the_monitor_out(self):
        # lava-run applies the boot action's timeout between two console
        # lines of a monitor, and the lava-test-monitor connection timeout
        # while waiting for a monitor's start: the mte suite is silent for
        # minutes. Both must allow the cell's whole run.
        data = lava.job(spec('sync'), 'file:///i', 'file:///r')
        boot = [a['boot'] for a in data['actions'] if 'boot' in a][0]
        test = [a['test'] for a in data['actions'] if 'test' in a][0]
        self.assertEqual(boot['timeout'], test['timeout'])
        self.assertEqual(data['timeouts']['connections']['lava-test-monitor'],
                         test['timeout'])
        self.assertGreaterEqual(test['timeout']['minutes'] * 60, spec('sync').timeout_s)

    def test_export_writes_yaml(self):
        if lava.lava_common() is None:
            self.skipTest('lava-common is not installed (scripts/setup-host.sh installs it)')
        with tempfile.TemporaryDirectory() as d:
            files = lava.export('check', d, url_base='https://lab.example/kmt', cells=['sync'])
            self.assertEqual([os.path.basename(f) for f in files], ['sync.yaml'])
            with open(files[0]) as f:
                text = f.read()
        import yaml     # lava-common depends on python3-yaml
        data = yaml.safe_load(text)
        self.assertEqual(data, json.loads(text))
        url = data['actions'][0]['deploy']['images']['kernel']['url']
        self.assertTrue(url.startswith('https://lab.example/kmt/out/series-lean/'), url)


class TemplateTest(unittest.TestCase):
    """The lab templates: FVP Base RevC with MTE, a U-Boot board with MTE."""

    def test_every_cell_validates_on_each_template(self):
        if lava.lava_common() is None:
            self.skipTest('lava-common is not installed (scripts/setup-host.sh installs it)')
        for dt in ('fvp', 'u-boot'):
            for c in targets.MATRICES['check']:
                lava.validate(lava.job(bootspec.for_cell(c, 'I', 'i'), 'https://lab/I',
                                       'https://lab/i', dt, 'https://lab/fw'))

    def test_fvp_turns_mte_on_and_boots_the_same_kernel(self):
        s = spec('sync')
        data = lava.job(s, 'https://lab/Image', 'https://lab/initrd', 'fvp', 'https://lab/fw/')
        deploy, boot, test = (a[k] for a, k in zip(data['actions'], ('deploy', 'boot', 'test')))
        self.assertEqual(deploy['images']['kernel']['url'], 'https://lab/Image')
        self.assertEqual(deploy['images']['bl1']['url'], 'https://lab/fw/bl1.bin')
        self.assertIn('-C cluster0.memory_tagging_support_level=3', boot['arguments'])
        self.assertIn('-C bp.dram_metadata.is_enabled=1', boot['arguments'])
        self.assertEqual(test['monitors'], lava.monitors(s))
        cmdline = data['metadata']['kernel_cmdline']
        self.assertIn('kasan.mode=sync', cmdline)
        self.assertNotIn('console=', cmdline)

    def test_board_gets_the_command_line_through_uboot(self):
        data = lava.job(spec('sync'), 'https://lab/Image', 'https://lab/i', 'u-boot',
                        device_type_name='ampere-mte')
        self.assertEqual(data['device_type'], 'ampere-mte')
        self.assertEqual(data['context']['extra_kernel_args'],
                         data['metadata']['kernel_cmdline'])
        self.assertEqual(data['actions'][1]['boot']['method'], 'u-boot')


IMAGES = {'baseline': ('b/Image', 'p/initramfs.cpio.gz'),
          'patched': ('p/Image', 'p/initramfs.cpio.gz')}


class BenchJobTest(unittest.TestCase):
    """make bench's boots as LAVA jobs (make lava BENCH=1)."""

    def test_every_bench_boot_validates_with_lavas_schema(self):
        if lava.lava_common() is None:
            self.skipTest('lava-common is not installed (scripts/setup-host.sh installs it)')
        for plan in ('quick', 'full'):
            for _, _, _, s in bench.plan_boots(plan, IMAGES):
                lava.validate(lava.job(s, 'https://lab/I', 'https://lab/i'))

    def test_boots_in_the_local_order_baseline_and_patched_interleaved(self):
        boots = bench.plan_boots('quick', IMAGES)
        self.assertEqual([(k, m, t) for k, m, t, _ in boots],
                         [('baseline', 'off', 'icount'), ('patched', 'off', 'icount'),
                          ('baseline', 'sync', 'icount'), ('patched', 'sync', 'icount'),
                          ('baseline', 'sync', 'time0'), ('patched', 'sync', 'time0')])
        self.assertEqual(len(bench.plan_boots('full', IMAGES)), 8 + 2 * 5)

    def test_same_boot_as_the_local_run(self):
        k, mode, tag, s = bench.plan_boots('quick', IMAGES)[3]
        self.assertEqual(s, bench.boot_spec(k, *IMAGES[k], mode, bench.PLANS['quick']['bench'],
                                            True, tag))
        data = lava.job(s, 'file:///p/Image', 'file:///p/initramfs.cpio.gz')
        kernel = data['actions'][0]['deploy']['images']['kernel']['image_arg']
        self.assertIn('kmt.bench=getpid=2000', kernel)
        self.assertIn('kasan.mode=sync', kernel)
        self.assertIn('-icount shift=0,sleep=off', data['context']['extra_options'])
        self.assertIn('-smp 1', data['context']['extra_options'])
        time_boot = bench.plan_boots('quick', IMAGES)[4][3]
        self.assertIn('kmt.bench=-t,getpid', lava.bootspec.kernel_cmdline(time_boot))
        self.assertNotIn('-icount shift=0,sleep=off',
                         lava.job(time_boot, 'file:///I', 'file:///i')['context']['extra_options'])

    def test_bench_pattern_takes_the_first_figure_as_the_measurement(self):
        mon = lava.monitors(bench.plan_boots('quick', IMAGES)[0][3])
        self.assertEqual([m['name'] for m in mon], ['kmt-bench'])
        pat = re.compile(mon[0]['pattern'])
        m = pat.match('# kmt-bench getpid ops=2000 insn_per_op=280.9 insn_mean=281.2 '
                      'chunk=200 ns_per_op=4700.5\r\r\n')
        self.assertEqual((m['test_case_id'], m['units'], m['measurement']),
                         ('getpid', 'insn_per_op', '280.9'))
        m = pat.match('# kmt-bench ctxsw ops=500 ns_per_op=30000.0 ns_mean=31000.0 chunk=20\n')
        self.assertEqual((m['units'], m['measurement']), ('ns_per_op', '30000.0'))
        self.assertIsNone(pat.match('# kmt-cpu dczid_bs=64\n'))


if __name__ == '__main__':
    unittest.main()
