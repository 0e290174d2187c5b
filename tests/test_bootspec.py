"""Every boot is one BootSpec rendered one way: the QEMU commands of a
matrix cell, a seeded rerun, a benchmark boot, the refcount benchmark and
the plugin self-test (captured from the five hand-assembled command lines
this module replaced; any change here changes what the guests run)."""

import unittest

from kmt import bootspec, qemu, targets

TAIL = ' -display none -monitor none -serial stdio -nic none -no-reboot'
MTE = 'qemu-system-aarch64 -machine virt,mte=on,gic-version=3 -cpu max'
LLSC = 'qemu-system-aarch64 -machine virt,gic-version=3 -cpu cortex-a72'
BOOT = ' -kernel Image -initrd initrd -append console=ttyAMA0 panic=-1 rdinit=/init '


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
                         'lkdtm-stack=lkdtm:STACK_GUARD_PAGE_*' + TAIL)

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
        res.timed_out, res.exit_code = True, -9
        self.assertIn('timed out after 7s', res.failure)
        self.assertRaises(log.StepError, res.check)
        res = qemu.BootResult(self.SPEC, [])
        res.exit_code, res.lines = 1, ['qemu-system-aarch64: -machine x: bad']
        self.assertIn('QEMU exited with code 1: qemu-system-aarch64: -machine x', res.failure)

    def test_run_needs_a_log_file(self):
        self.assertRaises(ValueError, qemu.run, self.SPEC.replace(logfile=''))


if __name__ == '__main__':
    unittest.main()
