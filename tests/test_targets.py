"""The matrix tables and the commands built from them."""

import unittest

from kmt import bases, bootspec, build, paths, targets


def cmdline(cell, **changes):
    return bootspec.kernel_cmdline(bootspec.for_cell(cell, 'Image', 'initrd', **changes))


class TargetsTest(unittest.TestCase):
    def test_tables_consistent(self):
        self.assertEqual(targets.validate(), [])

    def test_fragments_exist_and_parse(self):
        for cfg in targets.CONFIGS.values():
            want = build.requested(build.fragment_paths(cfg))
            self.assertTrue(want, cfg.name)

    def test_cmdline_kunit_and_kselftest(self):
        cell = [c for c in targets.CHECK if c.name == 'sync'][0]
        cl = cmdline(cell)
        self.assertIn('kasan.mode=sync', cl)
        self.assertIn('kunit.filter_glob=kasan', cl)
        self.assertIn('kmt.suites=mte=arm64:check_*,lkdtm-refcount=lkdtm:REFCOUNT_*', cl)
        self.assertIn('panic=-1', cl)

    def test_cmdline_without_kunit(self):
        cell = targets.Cell('lkdtm-only', 'lean', 'llsc', 'off', ('lkdtm-refcount',))
        cl = cmdline(cell)
        self.assertIn('kunit.enable=0', cl)
        self.assertIn('kasan=off', cl)

    def test_rerun_cmdline_runs_one_case_only(self):
        cell = [c for c in targets.CHECK if c.name == 'async'][0]
        cl = cmdline(cell, kunit_filter='kasan.kmalloc_oob_right')
        self.assertIn('kunit.filter_glob=kasan.kmalloc_oob_right', cl)
        self.assertNotIn('kmt.suites', cl)

    def test_cmdline_modules_cell_loads_each_suite_module(self):
        cell = [c for c in targets.CHECK if c.name == 'modules-rt'][0]
        cl = cmdline(cell)
        self.assertIn('kmt.modules=kasan_test,refcount_kunit,lkdtm', cl)
        self.assertIn('kunit.enable=1', cl)
        # Two KUnit suites in two modules: a filter would hide one.
        self.assertNotIn('filter_glob', cl)

    def test_cmdline_builtin_cell_loads_no_module(self):
        cell = [c for c in targets.CHECK_ALL if c.name == 'rt'][0]
        self.assertNotIn('kmt.modules', cmdline(cell))

    def test_compile_time_kasan_modes_pass_no_kasan_parameter(self):
        for name in ('kasan-generic', 'kasan-sw-tags', 'kcsan'):
            cell = [c for c in targets.CHECK_ALL if c.name == name][0]
            self.assertNotIn('kasan', cmdline(cell).replace(
                'filter_glob=kasan', ''), name)

    def test_validate_rejects_two_builtin_kunit_suites(self):
        bad = targets.Cell('two', 'lean', 'mte', 'sync', ('kasan', 'refcount'))
        ok = targets.Cell('two', 'lean-modules', 'mte', 'sync', ('kasan', 'refcount'))
        saved = targets.MATRICES['check']
        try:
            targets.MATRICES['check'] = [bad]
            self.assertTrue(any('one built-in KUnit suite' in e for e in targets.validate()))
            targets.MATRICES['check'] = [ok]
            self.assertEqual(targets.validate(), [])
        finally:
            targets.MATRICES['check'] = saved

    def test_validate_rejects_hw_tags_mode_without_mte(self):
        saved = targets.MATRICES['check']
        try:
            targets.MATRICES['check'] = [targets.Cell('x', 'lean', 'llsc', 'sync', ())]
            self.assertTrue(any('needs a machine with MTE' in e for e in targets.validate()))
            targets.MATRICES['check'] = [targets.Cell('x', 'lean-kasan-sw-tags', 'llsc',
                                                      'sw_tags', ())]
            self.assertEqual(targets.validate(), [])
        finally:
            targets.MATRICES['check'] = saved

    def test_llvm_config_builds_with_clang(self):
        args = build.make_args('/o', targets.CONFIGS['lean-clang'])
        self.assertIn('LLVM=1', args)
        self.assertTrue(any(a.startswith('CC=') and a.endswith('clang') for a in args))
        self.assertNotIn('LLVM=1', build.make_args('/o', targets.CONFIGS['lean']))

    def test_a_base_can_name_its_llvm_version(self):
        saved = paths.BASE
        try:
            paths.BASE = bases.BASES['7.3']
            args = build.make_args('/o', targets.CONFIGS['lean-clang'])
            self.assertIn('LLVM=-19', args)
            self.assertTrue(any(a.startswith('CC=') and a.endswith('clang-19') for a in args))
            self.assertEqual(build.toolchain_env(targets.CONFIGS['lean-clang'])['CC'],
                             'clang-19')
            self.assertIn('clang-19', paths.BASE.host_packages)
        finally:
            paths.BASE = saved

    def test_a_config_can_need_a_newer_llvm_than_its_base(self):
        # kCFI needs clang 16 or later: the GKI-shaped kernel builds with
        # clang-19 on 6.12 too, whose other clang cells use clang 14.
        saved = paths.BASE
        try:
            paths.BASE = bases.BASES['6.12']
            gki = targets.CONFIGS['lean-gki']
            args = build.make_args('/o', gki)
            self.assertIn('LLVM=-19', args)
            self.assertTrue(any(a.startswith('CC=') and a.endswith('clang-19') for a in args))
            self.assertEqual(build.toolchain_env(gki)['LLVM'], '-19')
            self.assertIn('LLVM=1', build.make_args('/o', targets.CONFIGS['lean-clang']))
        finally:
            paths.BASE = saved

    def test_dry_run_names_the_reverted_bench_kernel(self):
        # 7.3's make bench builds a third kernel; the plan must say so,
        # and a base without Base.reverted_dir must not mention one.
        from unittest import mock
        from kmt import plan
        for name, want in (('7.3', True), ('6.12', False)):
            base = bases.BASES[name]
            with mock.patch.object(paths, 'BASE', base), \
                    mock.patch.object(plan.source, 'read_series', lambda *a: ['0001-x.patch']):
                text = '\n'.join(plan.matrix_plan('check'))
            self.assertEqual('third lean kernel' in text, want, name)
            if want:
                self.assertIn(base.reverted_dir, text)

    def test_kselftest_build_derived_from_suites(self):
        self.assertEqual(build.kselftest_make_vars(),
                         ['TARGETS=arm64 lkdtm', 'ARM64_SUBTARGETS=mte'])
        saved = dict(targets.SUITES)
        try:
            targets.SUITES['x'] = targets.Suite('x', 'kselftest', 'mm:run_vmtests.sh')
            targets.SUITES['y'] = targets.Suite('y', 'kselftest', 'arm64:tags_test',
                                                subtarget='tags')
            self.assertEqual(build.kselftest_make_vars(),
                             ['TARGETS=arm64 lkdtm mm', 'ARM64_SUBTARGETS=mte tags'])
        finally:
            targets.SUITES.clear()
            targets.SUITES.update(saved)

    def test_qemu_command(self):
        cmd = bootspec.qemu_command(bootspec.BootSpec('x', 'Image', 'initrd', 'mte',
                                                      icount=True, seed=3, smp=1))
        self.assertEqual(cmd[cmd.index('-machine') + 1], 'virt,mte=on,gic-version=3')
        self.assertEqual(cmd[cmd.index('-cpu') + 1], 'max')
        self.assertEqual(cmd[cmd.index('-smp') + 1], '1')
        self.assertIn('-no-reboot', cmd)
        self.assertEqual(cmd[cmd.index('-seed') + 1], '3')
        self.assertEqual(cmd[cmd.index('-icount') + 1], 'shift=0,sleep=off')


class ConfigCheckTest(unittest.TestCase):
    def test_mismatch_reported(self):
        want = build.parse_config(['CONFIG_A=y', '# CONFIG_B is not set', 'CONFIG_C=y',
                                   'CONFIG_D="x"'])
        have = build.parse_config(['CONFIG_A=y', 'CONFIG_B=y', 'CONFIG_D="x"'])
        self.assertEqual(build.config_mismatches(want, have),
                         [('CONFIG_B', 'n', 'y'), ('CONFIG_C', 'y', 'n')])


if __name__ == '__main__':
    unittest.main()
