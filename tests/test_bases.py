"""Base kernels as data (BASE=7.3): paths, the archive a downloaded base
comes from, and the cells of a base without the series."""

import os
import subprocess
import sys
import tempfile
import unittest

from kmt import bases, paths, source, targets


def paths_for(base):
    code = 'from kmt import paths; print(paths.SRC); print(paths.PATCHES); ' \
           'print(paths.SOURCE_TARBALL); print(paths.RESULTS)'
    res = subprocess.run([sys.executable, '-c', code], cwd=paths.REPO, text=True,
                         env=dict(os.environ, KMT_BASE=base, KMT_BUILD='/b'),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return res.returncode, res.stdout.split(), res.stderr


class BasesTest(unittest.TestCase):
    def test_default_base_keeps_the_old_layout(self):
        rc, out, _ = paths_for('')
        self.assertEqual(rc, 0)
        self.assertEqual(out, ['/b/linux', os.path.join(paths.REPO, 'patches'),
                               '/usr/src/linux-source-6.12.tar.xz', '/b/results'])

    def test_other_base_has_its_own_directories(self):
        rc, out, _ = paths_for('7.3')
        self.assertEqual(rc, 0)
        self.assertEqual(out, ['/b/7.3/linux', os.path.join(paths.REPO, 'patches', '7.3'),
                               '/b/7.3/pkg/usr/src/linux-source-7.3.tar.xz',
                               '/b/7.3/results'])

    def test_unknown_base_is_an_error(self):
        rc, _, err = paths_for('9.9')
        self.assertNotEqual(rc, 0)
        self.assertIn("unknown base '9.9'", err)

    def test_every_base_has_a_series_file(self):
        for b in bases.BASES.values():
            self.assertTrue(os.path.exists(os.path.join(paths.REPO, b.patch_dir, 'series')),
                            b.name)

    def test_reverted_patches_are_listed_and_not_in_the_series(self):
        for b in bases.BASES.values():
            if not b.reverted_dir:
                continue
            rdir = os.path.join(paths.REPO, b.reverted_dir)
            names = source.read_series(rdir)
            self.assertTrue(names, b.name)
            # A subdirectory of the series' own: never applied with it.
            self.assertFalse(set(names) & set(source.read_series(
                os.path.join(paths.REPO, b.patch_dir))), b.name)

    def test_host_archives_from_both_source_formats(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, 'a.sources'), 'w') as f:
                f.write('Types: deb\nURIs: http://mirror.example/debian/\n'
                        'Suites: bookworm\n\nTypes: deb\n'
                        'URIs: http://security.example/debian-security\n')
            with open(os.path.join(d, 'b.list'), 'w') as f:
                f.write('deb [arch=amd64] http://other.example/debian bookworm main\n'
                        'deb https://packages.example/apt cloud main\n')
            self.assertEqual(source.host_archives((d,)),
                             ['http://mirror.example/debian', 'http://other.example/debian'])


class WithoutSeriesTest(unittest.TestCase):
    def test_series_suites_left_out_and_empty_cells_dropped(self):
        by = {c.name: c for c in targets.CHECK}
        kept, dropped = targets.without_series([by['sync'], by['kasan-off'],
                                                by['refcount-lse']])
        self.assertEqual([c.name for c in kept], ['sync', 'kasan-off'])
        self.assertEqual(kept[0], by['sync'])
        self.assertEqual(kept[1].suites, ('mte', 'lkdtm-refcount'))
        self.assertEqual(dict(dropped), {'kasan-off': ('arm64-mte',),
                                         'refcount-lse': ('refcount',)})

    def test_a_series_that_carries_some_suites_keeps_those(self):
        by = {c.name: c for c in targets.CHECK}
        kept, dropped = targets.without_series([by['kasan-off'], by['refcount-lse']],
                                               ('refcount',))
        self.assertEqual([c.name for c in kept], ['kasan-off', 'refcount-lse'])
        self.assertEqual(kept[1], by['refcount-lse'])
        self.assertEqual(dict(dropped), {'kasan-off': ('arm64-mte',)})

    def test_series_fragments_follow_the_suites_the_base_series_has(self):
        from unittest import mock
        from kmt import build
        cfg = targets.CONFIGS['lean']
        names = lambda: [os.path.basename(f) for f in build.fragment_paths(cfg)]
        every = bases.Base('x', 'linux-source-x')
        some = bases.Base('y', 'linux-source-y', series_carries=('refcount',))
        none = bases.Base('z', 'linux-source-z', series_carries=())
        with mock.patch.object(paths, 'BASE', every):
            self.assertEqual(names(), list(cfg.fragments + cfg.series_fragments))
        with mock.patch.object(paths, 'BASE', some):
            self.assertEqual(names(), list(cfg.fragments) + ['series-tests.config'])
        with mock.patch.object(paths, 'BASE', none):
            self.assertEqual(names(), list(cfg.fragments))

    def test_every_series_fragment_names_a_series_suite_or_part(self):
        used = {f for c in targets.CONFIGS.values() for f in c.series_fragments}
        self.assertEqual(used, set(targets.SERIES_FRAGMENT_NEEDS))
        for need in targets.SERIES_FRAGMENT_NEEDS.values():
            self.assertTrue(need in targets.SERIES_PARTS or targets.SUITES[need].from_series,
                            need)

    def test_expectations_live_with_each_base_series(self):
        for b in bases.BASES.values():
            for e in _load(os.path.join(paths.REPO, b.patch_dir, 'expectations.txt')):
                self.assertTrue(e['reason'])


def _load(path):
    from kmt import results
    return results.load_expectations(path)


if __name__ == '__main__':
    unittest.main()


class GoneOptionsTest(unittest.TestCase):
    """An option a base no longer has is not checked there, and a base
    that still has an option it lists as gone is an error."""

    def configure(self, dot_config, gone):
        from unittest import mock
        from kmt import bases as b, build, log
        cfg = targets.KernelConfig('t', 'allnoconfig', ('minimal.config',))
        with tempfile.TemporaryDirectory() as out:
            def fake_merge(cmd, **kw):
                with open(os.path.join(out, '.config'), 'w') as f:
                    f.write(dot_config)
            base = b.Base('x', 'linux-source-x', gone=gone)
            with mock.patch.object(log, 'run', fake_merge), \
                    mock.patch.object(paths, 'BASE', base):
                build.configure(cfg, '/src', out, os.path.join(out, 'log'),
                                series_tests=False)

    def test_gone_option_is_not_checked(self):
        from kmt import build
        want = build.requested(build.fragment_paths(
            targets.KernelConfig('t', 'allnoconfig', ('minimal.config',)),
            series_tests=False))
        have = ''.join('%s=%s\n' % kv for kv in want.items() if kv[0] != 'CONFIG_PROC_SYSCTL')
        from kmt import log
        self.assertRaises(log.StepError, self.configure, have, ())
        self.configure(have, (('CONFIG_PROC_SYSCTL', 'merged into SYSCTL'),))

    def test_option_listed_as_gone_but_present_is_an_error(self):
        from kmt import build, log
        want = build.requested(build.fragment_paths(
            targets.KernelConfig('t', 'allnoconfig', ('minimal.config',)),
            series_tests=False))
        have = ''.join('%s=%s\n' % kv for kv in want.items() if kv[0] != 'CONFIG_PROC_SYSCTL')
        have += '# CONFIG_PROC_SYSCTL is not set\n'
        with self.assertRaises(log.StepError) as e:
            self.configure(have, (('CONFIG_PROC_SYSCTL', 'merged into SYSCTL'),))
        self.assertIn('still has it', str(e.exception))


class BaseFragmentsTest(unittest.TestCase):
    def test_base_fragments_exist_and_come_last(self):
        from kmt import build
        for b in bases.BASES.values():
            for f in b.fragments:
                path = os.path.join(paths.CONFIGS, f)
                self.assertTrue(build.requested([path]), path)
        code = ('from kmt import build, targets; '
                'print(build.fragment_paths(targets.CONFIGS["lean"])[-1])')
        res = subprocess.run([sys.executable, '-c', code], cwd=paths.REPO, text=True,
                             env=dict(os.environ, KMT_BASE='7.3'), stdout=subprocess.PIPE)
        self.assertTrue(res.stdout.strip().endswith('base-7.3.config'), res.stdout)


class BaseCellsTest(unittest.TestCase):
    def test_a_base_drops_cells_with_a_reason_and_adds_stand_ins(self):
        base = bases.Base('x', 'linux-source-x',
                          dropped_cells=(('modules-rt', 'no PREEMPT_RT here'),),
                          added_cells=('modules',))
        cells, dropped = targets.for_base('check', base)
        names = [c.name for c in cells]
        self.assertNotIn('modules-rt', names)
        self.assertIn('modules', names)
        self.assertIn('sync', names)
        self.assertEqual(dropped, [('modules-rt', 'no PREEMPT_RT here')])
        # Only make check takes the stand-ins; ALL=1 has them already.
        cells, _ = targets.for_base('check-all', base)
        self.assertEqual([c.name for c in cells].count('modules'), 1)

    def test_6_1_runs_no_rt_cell_and_the_modules_kernel_without_rt(self):
        cells, dropped = targets.for_base('check', bases.BASES['6.1'])
        configs = {targets.CONFIGS[c.config] for c in cells}
        self.assertFalse([c.name for c in configs if 'rt.config' in c.fragments])
        self.assertIn('modules', [c.name for c in cells])
        self.assertIn('distro', [c.name for c in cells])

    def test_make_check_runs_the_kasan_suite_on_rt_with_hw_tags(self):
        # Issue 51 item 1: the stack ring hang is fixed, so its cell runs in
        # make check, not only with ALL=1.
        rt_kasan = [c for c in targets.CHECK if 'kasan' in c.suites and c.kasan == 'sync'
                    and 'rt.config' in targets.CONFIGS[c.config].fragments]
        self.assertTrue(rt_kasan)

    def test_the_default_base_runs_every_cell(self):
        cells, dropped = targets.for_base('check', bases.BASES[bases.DEFAULT])
        self.assertEqual(cells, targets.CHECK)
        self.assertEqual(dropped, [])

    def test_a_cell_named_on_the_command_line_but_dropped_says_why(self):
        from kmt import log, matrix
        saved = paths.BASE
        try:
            paths.BASE = bases.BASES['6.1']
            with self.assertRaises(log.StepError) as e:
                matrix.chosen_cells('check', ['distro-rt'])
            self.assertIn('on base 6.1', str(e.exception))
        finally:
            paths.BASE = saved

    def test_validate_rejects_a_base_dropping_an_unknown_cell(self):
        saved = dict(bases.BASES)
        try:
            bases.BASES['y'] = bases.Base('y', 'p', dropped_cells=(('nope', 'why'),),
                                          added_cells=('sync-x',))
            errs = targets.validate()
            self.assertIn('base y drops no cell nope', errs)
            self.assertTrue(any('base y adds sync-x' in e for e in errs))
        finally:
            bases.BASES.clear()
            bases.BASES.update(saved)
