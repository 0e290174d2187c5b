"""Every boot is one BootSpec rendered one way: the QEMU commands of a
matrix cell, a seeded rerun, a benchmark boot, the refcount benchmark and
the plugin self-test (captured from the five hand-assembled command lines
this module replaced; any change here changes what the guests run)."""

import os
import unittest

from kmt import bootspec, qemu, targets

TAIL = ' -display none -monitor none -serial stdio -nic none -no-reboot'
MTE = 'qemu-system-aarch64 -machine virt,mte=on,gic-version=3 -cpu max'
LLSC = 'qemu-system-aarch64 -machine virt,gic-version=3 -cpu cortex-a72'
BOOT = ' -kernel Image -initrd initrd -append console=ttyAMA0 log_buf_len=1M panic=-1 rdinit=/init '


def cell(name, matrix='check'):
    return [c for c in targets.MATRICES[matrix] if c.name == name][0]


def render(spec):
    return ' '.join(bootspec.qemu_command(spec))


class BootSpecTest(unittest.TestCase):
    def test_cell(self):
        spec = bootspec.for_cell(cell('sync'), 'Image', 'initrd')
        self.assertEqual(render(spec), MTE + ' -smp 2 -m 1024' + BOOT +
                         'kasan.mode=sync kunit.enable=1 kunit.filter_glob=kasan '
                         'kmt.suites=mte=arm64:check_*,lkdtm-refcount=lkdtm:REFCOUNT_*,'
                         'lkdtm-stack=lkdtm:STACK_GUARD_PAGE_* hugepages=2' + TAIL)

    def test_cell_with_modules(self):
        modules = targets.Cell('modules', 'lean-modules', 'mte', 'sync',
                               ('kasan', 'refcount', 'lkdtm-refcount'))
        spec = bootspec.for_cell(modules, 'Image', 'initrd')
        self.assertEqual(spec.modules, ('kasan_test', 'refcount_kunit', 'lkdtm'))
        self.assertEqual(render(spec), MTE + ' -smp 2 -m 1024' + BOOT +
                         'kasan.mode=sync kunit.enable=1 kmt.modules=kasan_test,'
                         'refcount_kunit,lkdtm kmt.suites=lkdtm-refcount=lkdtm:REFCOUNT_*' + TAIL)

    def test_cell_cmdline_and_machine_smp(self):
        spec = bootspec.for_cell(cell('refcount-panic-on-warn'), 'Image', 'initrd')
        self.assertEqual(render(spec), MTE + ' -smp 4 -m 1024' + BOOT +
                         'kasan.mode=sync kunit.enable=1 kunit.filter_glob=refcount '
                         'panic_on_warn=1' + TAIL)

    def test_suite_kernel_parameters_only_where_the_suite_runs(self):
        # The mte kselftests' hugetlb case needs two 2 MiB pages, reserved
        # at boot (test_cell); a rerun of one KUnit case boots without the
        # kselftests, and a cell without the mte suite reserves none.
        rerun = bootspec.for_cell(cell('sync'), 'Image', 'initrd',
                                  kunit_filter='kasan.kmalloc_oob_right')
        self.assertNotIn('hugepages', render(rerun))
        self.assertNotIn('hugepages', render(bootspec.for_cell(cell('llsc'), 'Image', 'i')))

    def test_rerun(self):
        spec = bootspec.for_cell(cell('async'), 'Image', 'initrd',
                                 kunit_filter='kasan.kmalloc_oob_right', icount=True,
                                 seed=2, smp=1)
        self.assertEqual(render(spec), MTE + ' -smp 1 -m 1024' + BOOT +
                         'kasan.mode=async kunit.enable=1 '
                         'kunit.filter_glob=kasan.kmalloc_oob_right' + TAIL +
                         ' -icount shift=0,sleep=off -seed 2')

    def test_bench_boot(self):
        spec = bootspec.BootSpec('bench', 'Image', 'initrd', 'mte', kasan='sync',
                                 cmdline=('kmt.bench=-t,getpid',), smp=1, seed=1,
                                 qemu_extra=('-plugin', 'x.so'))
        self.assertEqual(render(spec), MTE + ' -smp 1 -m 1024' + BOOT +
                         'kasan.mode=sync kunit.enable=0 kmt.bench=-t,getpid' + TAIL +
                         ' -seed 1 -plugin x.so')

    def test_refcount_bench_boot(self):
        spec = bootspec.BootSpec('refbench', 'Image', 'initrd', 'llsc',
                                 cmdline=('refcount_bench.iters=1000',), smp=1,
                                 icount=True, seed=1)
        self.assertEqual(render(spec), LLSC + ' -smp 1 -m 1024' + BOOT +
                         'kasan=off kunit.enable=0 refcount_bench.iters=1000' + TAIL +
                         ' -icount shift=0,sleep=off -seed 1')


class BootResultTest(unittest.TestCase):
    SPEC = bootspec.BootSpec('x', 'Image', 'initrd', 'mte', timeout_s=7, logfile='x.log')

    def test_clean_exit_is_no_failure(self):
        res = qemu.BootResult(self.SPEC, [])
        res.exit_code = 0
        self.assertIsNone(res.failure)
        self.assertIs(res.check(), res)

    def test_timeout_and_qemu_error_are_failures(self):
        from kmt import log
        res = qemu.BootResult(self.SPEC, [])
        res.timed_out, res.exit_code, res.hang = True, -9, 'timed out after 7s'
        self.assertIn('x: timed out after 7s (log x.log)', res.failure)
        self.assertRaises(log.StepError, res.check)
        res = qemu.BootResult(self.SPEC, [])
        res.exit_code, res.lines = 1, ['qemu-system-aarch64: -machine x: bad']
        self.assertIn('QEMU exited with code 1: qemu-system-aarch64: -machine x', res.failure)

    def test_run_needs_a_log_file(self):
        self.assertRaises(ValueError, qemu.run, self.SPEC.replace(logfile=''))


FAKE_QEMU = r"""
import socket, sys, time
sock = [a for a in sys.argv if a.startswith('unix:')][0][5:].split(',')[0]
srv = socket.socket(socket.AF_UNIX)
srv.bind(sock)
srv.listen(1)
print('booting', flush=True)
conn, _ = srv.accept()
conn.recv(100)
conn.sendall(b'CPU#0\n PC=ffff800080001010 X00=0\nCPU#1\n PC=ffff800080002004 X00=1\n(qemu) ')
time.sleep(60)
"""


class HangTest(unittest.TestCase):
    """A guest that goes silent is stopped after silence_s, and the CPUs'
    program counters, read through the QEMU monitor, name where it hung."""

    def test_silent_guest_is_located_and_killed(self):
        import sys
        import tempfile
        from unittest import mock
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, 'fake_qemu.py')
            with open(fake, 'w') as f:
                f.write(FAKE_QEMU)
            smap = os.path.join(d, 'System.map')
            with open(smap, 'w') as f:
                f.write('ffff800080001000 T cpu_do_idle\nffff800080002000 T ret_to_kernel\n')
            spec = bootspec.BootSpec('x', 'Image', 'initrd', 'mte', timeout_s=60, silence_s=2,
                                     logfile=os.path.join(d, 'x.log'), system_map=smap)
            with mock.patch.object(bootspec, 'qemu_command',
                                   lambda s: [sys.executable, fake, '-monitor', 'none']), \
                    mock.patch.object(qemu.log, 'show_cmd', lambda *a, **k: None):
                res = qemu.run(spec, echo=False)
        self.assertTrue(res.timed_out)
        self.assertLess(res.duration, 30)
        self.assertEqual(res.lines[0], 'booting')
        self.assertIn('no console output for 2s', res.failure)
        self.assertIn('CPU0 at cpu_do_idle+0x10, CPU1 at ret_to_kernel+0x4', res.failure)
        self.assertTrue(res.lines[-1].startswith('KMT-HOST: hung: '))

    def test_cpu_pcs_and_where_without_symbols(self):
        text = 'CPU#0\n PC=ffff800080333000 X00=1\nCPU#1\n PC=0000000000401000 X00=2\n'
        self.assertEqual(qemu.cpu_pcs(text), [(0, 0xffff800080333000), (1, 0x401000)])
        self.assertEqual(qemu.where(qemu.cpu_pcs(text)),
                         'CPU0 at 0xffff800080333000, CPU1 at 0x401000')

    def test_cells_have_a_silence_limit_and_benchmarks_not(self):
        spec = bootspec.for_cell(cell('sync'), 'o/arch/arm64/boot/Image', 'initrd')
        self.assertEqual(spec.silence_s, bootspec.CELL_SILENCE_S)
        self.assertEqual(spec.system_map, 'o/System.map')
        self.assertEqual(bootspec.BootSpec('b', 'I', 'i', 'mte').silence_s, 0)


if __name__ == '__main__':
    unittest.main()


class RerunVariesTagsTest(unittest.TestCase):
    """A rerun of a failed HW_TAGS case must be able to draw other tags.
    IRG's tags come from an LFSR that the kernel seeds from the counter
    (mte_cpu_setup()); under -icount the counter is the instruction count,
    which QEMU's -seed does not change: reruns that differed only in -seed
    drew the same tags (kmalloc_oob_right: pointer tag f2 with seeds 1, 2
    and 3 on vhe-sync, fc on sync), so a collision in the rerun was a
    collision in every rerun."""

    def rerun_specs(self, cell_name):
        from unittest import mock
        from kmt import matrix, results
        specs = []

        def fake_run(spec, echo=True):
            specs.append(spec)
            return mock.Mock(lines=[], timed_out=False)

        with mock.patch.object(qemu, 'run', fake_run), \
                mock.patch.object(results, 'suite_results', lambda lines, suite: []), \
                mock.patch.object(matrix, '_cell_log', lambda *a: '/dev/null'):
            passes, runs, _ = matrix.rerun_case('check', cell(cell_name), 'Image', 'initrd',
                                                targets.SUITES['kasan'], 'kmalloc_oob_right')
        self.assertEqual((passes, runs), (0, 3))
        return specs

    def test_each_rerun_boots_a_command_line_of_its_own_length(self):
        for name in ('sync', 'vhe-sync'):
            lines = [bootspec.kernel_cmdline(s) for s in self.rerun_specs(name)]
            self.assertEqual(len({len(line) for line in lines}), len(lines), lines)
            for line in lines:
                self.assertIn('kunit.filter_glob=kasan.kmalloc_oob_right', line)
