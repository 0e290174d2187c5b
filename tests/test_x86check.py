"""The x86_64 build gate's verdicts (kmt/x86check.py): no kernel needed."""
import collections
import unittest

from kmt import results, x86check

W = lambda *msgs: collections.Counter(('kernel/fork.c', 'warning', m) for m in msgs)
PRE = '# 1 "../include/linux/refcount.h" 1\n'


class VerdictTest(unittest.TestCase):
    def verdicts(self, before, after, files=None, pre=None):
        files = files or {'kernel/fork.c': 'changed by the series'}
        return {t['name']: t for t in x86check.verdicts(
            'x86_64-defconfig', files, before, after, pre or {}, '/nonexistent')}

    def test_old_warnings_pass_new_ones_fail(self):
        t = self.verdicts({'kernel/fork.c': W('old')}, {'kernel/fork.c': W('old')})
        self.assertEqual(t['x86_64-defconfig kernel/fork.c']['status'], results.PASS)
        t = self.verdicts({'kernel/fork.c': W('old')}, {'kernel/fork.c': W('old', 'unused x')})
        got = t['x86_64-defconfig kernel/fork.c']
        self.assertEqual(got['status'], results.FAIL)
        self.assertIn('1 new W=1 warning(s): warning: unused x', got['detail'])

    def test_a_build_break_fails_and_an_unbuilt_file_skips(self):
        t = self.verdicts({'kernel/fork.c': W()}, {'kernel/fork.c': None})
        self.assertEqual(t['x86_64-defconfig kernel/fork.c']['status'], results.FAIL)
        t = self.verdicts({'kernel/fork.c': None}, {'kernel/fork.c': None})
        self.assertEqual(t['x86_64-defconfig kernel/fork.c']['status'], results.SKIP)
        # A file the series adds compares against nothing.
        t = self.verdicts({}, {'kernel/fork.c': None})
        self.assertEqual(t['x86_64-defconfig kernel/fork.c']['status'], results.FAIL)

    def test_a_header_user_must_include_the_header(self):
        files = {'lib/refcount.c': 'includes include/linux/refcount.h'}
        ok = self.verdicts({'lib/refcount.c': W()}, {'lib/refcount.c': W()}, files,
                           {'lib/refcount.c': PRE})
        self.assertEqual(ok['x86_64-defconfig lib/refcount.c']['status'], results.PASS)
        gone = self.verdicts({'lib/refcount.c': W()}, {'lib/refcount.c': W()}, files,
                             {'lib/refcount.c': '# 1 "../include/linux/atomic.h" 1\n'})
        self.assertEqual(gone['x86_64-defconfig lib/refcount.c']['status'], results.FAIL)
        self.assertIn('no longer includes', gone['x86_64-defconfig lib/refcount.c']['detail'])

    def test_every_header_user_list_names_c_files(self):
        for header, users in x86check.HEADER_USERS.items():
            self.assertTrue(header.endswith('.h'))
            self.assertTrue(users and all(u.endswith('.c') for u in users))


class ArmTest(unittest.TestCase):
    """The 32-bit arm configuration of the build gate (series-check ALL=1)."""

    def test_arm_config_cross_compiles_with_debians_compiler(self):
        arch = x86check.config_arch('arm-multi_v7')
        self.assertEqual(arch.name, 'arm')
        self.assertEqual(arch.cross, 'arm-linux-gnueabihf-')
        self.assertEqual(x86check.packages(('arm-multi_v7',)), ['gcc-arm-linux-gnueabihf'])
        # The x86_64 configurations need nothing beyond the host's gcc.
        self.assertEqual(x86check.packages(('x86_64-defconfig', 'x86_64-kasan')), [])
        env = x86check.arch_env(arch)
        self.assertEqual((env['ARCH'], env['CROSS_COMPILE']), ('arm', 'arm-linux-gnueabihf-'))
        self.assertNotIn('CROSS_COMPILE', x86check.arch_env(x86check.ARCHES['x86_64']))

    def test_pgalloc_users_are_the_arch_own(self):
        for arch, users in x86check.ARCH_HEADER_USERS.items():
            for header, files in users.items():
                self.assertTrue(all(f.startswith('arch/%s/' % ('x86' if arch == 'x86_64'
                                                               else arch)) for f in files))

    def test_arm_gate_is_in_all_and_installs_its_compiler(self):
        from kmt import series
        self.assertIn('arm', series.ALL_GATES)
        self.assertNotIn('arm', series.QUICK_GATES)
        self.assertEqual(series.GATE_PACKAGES['arm'], ('gcc-arm-linux-gnueabihf',))


class BisectCrossTest(unittest.TestCase):
    """bisect-cross: the cross builds at every prefix (series-check ALL=1)."""

    def file_tests(self, *statuses):
        return [results.test('bisect-cross', 'x86_64-kasan f%d.c' % i, s, 'why %d' % i)
                for i, s in enumerate(statuses)]

    def test_a_prefix_fails_when_one_file_fails_and_names_it(self):
        t = x86check.prefix_test('x86_64-kasan', '3/15 mm: x', self.file_tests(
            results.PASS, results.FAIL, results.FAIL))
        self.assertEqual(t['status'], results.FAIL)
        self.assertEqual(t['name'], 'x86_64-kasan 3/15 mm: x')
        self.assertIn('2 of 3 file(s) failed, first f1.c: why 1', t['detail'])

    def test_a_prefix_passes_when_its_files_build(self):
        t = x86check.prefix_test('arm-multi_v7', '1/2 a', self.file_tests(results.PASS,
                                                                          results.SKIP))
        self.assertEqual(t['status'], results.PASS)

    def test_nothing_built_is_a_skip_with_its_reason(self):
        t = x86check.prefix_test('arm-multi_v7', '1/2 a', [])
        self.assertEqual((t['status'], t['detail']), (results.SKIP,
                                                       'touches no generic file yet'))
        t = x86check.prefix_test('arm-multi_v7', '1/2 a', self.file_tests(results.SKIP))
        self.assertEqual(t['status'], results.SKIP)
        self.assertIn('no file of this prefix is built in arm-multi_v7', t['detail'])

    def test_every_cross_configuration_at_every_prefix_in_all(self):
        from kmt import series
        self.assertEqual(set(x86check.BISECT_CONFIGS), {c[0] for c in x86check.CONFIGS})
        self.assertIn('bisect-cross', series.ALL_GATES)
        self.assertNotIn('bisect-cross', series.QUICK_GATES)
        self.assertEqual(series.GATE_PACKAGES['bisect-cross'], ('gcc-arm-linux-gnueabihf',))


class KconfigChangedTest(unittest.TestCase):
    """A prefix is reconfigured when its commits change a Kconfig file."""

    def changed(self, files, prev='a'):
        from unittest import mock
        out = mock.Mock(stdout='\n'.join(files) + '\n')
        with mock.patch.object(x86check.source, 'git', return_value=out) as git:
            got = x86check.kconfig_changed(prev, 'b')
        return got, git

    def test_first_prefix_is_always_configured(self):
        got, git = self.changed([], prev=None)
        self.assertTrue(got)
        git.assert_not_called()

    def test_kconfig_files_trigger_it_and_others_do_not(self):
        self.assertTrue(self.changed(['lib/Kconfig.debug', 'lib/refcount.c'])[0])
        self.assertTrue(self.changed(['arch/arm64/Kconfig'])[0])
        self.assertFalse(self.changed(['kernel/fork.c', 'scripts/kconfig/confdata.c'])[0])


class GateRecordTest(unittest.TestCase):
    """make series-check prints one row per (cell, suite) of a gate's
    record: a gate whose tests carry another suite than its record names
    shows 0 passed, 0 failed however many ran (series-x86_64-kasan did)."""

    def test_every_build_gate_files_its_tests_under_its_own_suite(self):
        from unittest import mock
        from kmt import series

        def fake_gate(tag, configs, suite='x86_64'):
            return [results.test(suite, '%s kernel/fork.c' % configs[0], results.PASS)], '-'

        with mock.patch.object(series.x86check, 'gate', side_effect=fake_gate):
            for name in ('x86_64', 'x86_64-kasan', 'arm'):
                r = series.GATES[name]('base')
                for t in r['tests']:
                    self.assertIn(t['suite'], r['suites'], name)
