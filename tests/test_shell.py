import os
import re
import unittest

from kmt import paths, shell, targets

INIT = os.path.join(paths.REPO, 'guest', 'init')


class ShellCommandTest(unittest.TestCase):
    def cmd(self, cell='sync', **kw):
        return shell.command(targets.CHECK[[c.name for c in targets.CHECK].index(cell)],
                             'out/arch/arm64/boot/Image', 'out/initramfs.cpio.gz', **kw)

    def append(self, cmd):
        return cmd[cmd.index('-append') + 1].split()

    def test_the_cells_machine_and_kasan_mode_with_a_shell(self):
        cmd = self.cmd('async')
        self.assertEqual(cmd[cmd.index('-machine') + 1], targets.MACHINES['mte'].machine)
        args = self.append(cmd)
        self.assertIn('kasan.mode=async', args)
        self.assertIn('kmt.shell=1', args)
        # No suite unless asked: no KUnit at boot, no kselftests.
        self.assertIn('kunit.enable=0', args)
        self.assertFalse([a for a in args if a.startswith('kmt.suites=')])
        self.assertEqual(cmd[cmd.index('-serial') + 1], 'mon:stdio')
        self.assertNotIn('-S', cmd)

    def test_suites_and_gdb_on_request(self):
        cmd = self.cmd('sync', gdb=True, suites=True)
        args = self.append(cmd)
        self.assertIn('kunit.filter_glob=kasan', args)
        self.assertTrue([a for a in args if a.startswith('kmt.suites=mte=')])
        self.assertEqual(cmd[-2:], ['-s', '-S'])

    def test_the_cells_own_parameters_stay(self):
        args = self.append(self.cmd('refcount-panic-on-warn'))
        self.assertIn('panic_on_warn=1', args)


class GuestInitShellTest(unittest.TestCase):
    def test_init_starts_a_shell_before_powering_off(self):
        with open(INIT) as f:
            text = f.read()
        self.assertIn('kmt.shell=*) shell=', text)
        tail = text[text.index('if [ -n "$shell" ]'):]
        self.assertLess(tail.index('/bin/sh'), tail.index('poweroff -f'))
        self.assertTrue(re.search(r'KMT-DONE"\npoweroff -f\n?$', text))


if __name__ == '__main__':
    unittest.main()
