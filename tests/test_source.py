"""git am failure handling and series bookkeeping on a tiny repository."""

import os
import shutil
import subprocess
import tempfile
import unittest
from unittest import mock

from kmt import log, source


def sh(args, cwd):
    subprocess.run(args, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


class GitAmTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.repo = os.path.join(self.tmp, 'repo')
        self.pdir = os.path.join(self.tmp, 'patches')
        os.makedirs(self.repo)
        os.makedirs(self.pdir)
        sh(['git', 'init', '-q', '-b', 'base'], self.repo)
        sh(['git', 'config', 'user.name', 't'], self.repo)
        sh(['git', 'config', 'user.email', 't@t'], self.repo)
        with open(os.path.join(self.repo, 'a.c'), 'w') as f:
            f.write('int a;\nint b;\nint c;\n')
        sh(['git', 'add', '.'], self.repo)
        sh(['git', 'commit', '-q', '-m', 'base'], self.repo)
        sh(['git', 'tag', 'base/1'], self.repo)

    def make_patch(self, old, new, name):
        sh(['git', 'checkout', '-q', '-B', 'tmp', 'base/1'], self.repo)
        path = os.path.join(self.repo, 'a.c')
        with open(path) as f:
            text = f.read()
        with open(path, 'w') as f:
            f.write(text.replace(old, new))
        sh(['git', 'commit', '-q', '-am', 'change ' + name + '\n\nSigned-off-by: t <t@t>'],
           self.repo)
        out = subprocess.run(['git', 'format-patch', '-1', '-o', self.pdir],
                             cwd=self.repo, check=True, stdout=subprocess.PIPE,
                             text=True).stdout.strip()
        dst = os.path.join(self.pdir, name)
        os.rename(out, dst)
        sh(['git', 'checkout', '-q', 'base'], self.repo)
        return name

    def write_series(self, names):
        with open(os.path.join(self.pdir, 'series'), 'w') as f:
            f.write('# test\n' + '\n'.join(names) + '\n')

    def test_applies_in_order_and_skips_when_unchanged(self):
        p1 = self.make_patch('int b;', 'int b2;', '0001-b.patch')
        self.write_series([p1])
        got = source.apply_series(src=self.repo, patch_dir=self.pdir, tag='base/1')
        self.assertEqual(got, [p1])
        with open(os.path.join(self.repo, 'a.c')) as f:
            self.assertIn('int b2;', f.read())
        head = source.git(['rev-parse', 'HEAD'], cwd=self.repo).stdout
        source.apply_series(src=self.repo, patch_dir=self.pdir, tag='base/1')
        self.assertEqual(head, source.git(['rev-parse', 'HEAD'], cwd=self.repo).stdout)

    def test_failing_patch_named_and_tree_left_in_am(self):
        p1 = self.make_patch('int b;', 'int b2;', '0001-b.patch')
        p2 = self.make_patch('int b;', 'int b3;', '0002-conflict.patch')
        self.write_series([p1, p2])
        with self.assertRaises(log.StepError) as cm:
            source.apply_series(src=self.repo, patch_dir=self.pdir, tag='base/1')
        msg = str(cm.exception)
        self.assertIn('0002-conflict.patch', msg)
        self.assertIn('a.c', msg)
        self.assertTrue(os.path.isdir(os.path.join(self.repo, '.git', 'rebase-apply')))

    def test_unlisted_patch_is_an_error(self):
        self.make_patch('int b;', 'int b2;', '0001-b.patch')
        self.write_series([])
        with self.assertRaises(log.StepError) as cm:
            source.read_series(self.pdir)
        self.assertIn('0001-b.patch', str(cm.exception))

    def test_dirty_tree_refused(self):
        self.write_series([])
        with open(os.path.join(self.repo, 'a.c'), 'a') as f:
            f.write('int dirty;\n')
        with self.assertRaises(log.StepError) as cm:
            source.apply_series(src=self.repo, patch_dir=self.pdir, tag='base/1')
        self.assertIn('uncommitted', str(cm.exception))

    def test_export_round_trip(self):
        sh(['git', 'checkout', '-q', '-b', 'dev', 'base/1'], self.repo)
        with open(os.path.join(self.repo, 'a.c'), 'a') as f:
            f.write('int d;\n')
        sh(['git', 'commit', '-q', '-am', 'add d\n\nSigned-off-by: t <t@t>'], self.repo)
        names = source.export_series('dev', src=self.repo, patch_dir=self.pdir, tag='base/1')
        self.assertEqual(names, ['0001-add-d.patch'])
        self.assertEqual(source.read_series(self.pdir), names)
        sh(['git', 'checkout', '-q', 'base'], self.repo)
        source.apply_series(src=self.repo, patch_dir=self.pdir, tag='base/1')
        with open(os.path.join(self.repo, 'a.c')) as f:
            self.assertIn('int d;', f.read())

    def test_am_or_abort_applies_as_the_fixed_identity(self):
        p1 = self.make_patch('int b;', 'int b2;', '0001-b.patch')
        with source.checked_out('base/1', src=self.repo, branch='scratch'):
            source.am_or_abort([os.path.join(self.pdir, p1)], 'the base', src=self.repo)
            with open(os.path.join(self.repo, 'a.c')) as f:
                self.assertIn('int b2;', f.read())
            who = source.git(['log', '-1', '--format=%cn %cd', '--date=unix'],
                             cwd=self.repo).stdout.split()
            self.assertEqual(who, ['kmt', '946684800'])
        self.assertEqual(source.current_head(self.repo), 'base')

    def test_am_or_abort_aborts_and_names_what_failed(self):
        p1 = self.make_patch('int b;', 'int b2;', '0001-b.patch')
        p2 = self.make_patch('int b;', 'int b3;', '0002-conflict.patch')
        with self.assertRaises(log.StepError) as cm:
            with source.checked_out('base/1', src=self.repo, branch='scratch'):
                source.am_or_abort([os.path.join(self.pdir, p) for p in (p1, p2)],
                                   'the base', src=self.repo)
        msg = str(cm.exception)
        self.assertIn('on the base failed', msg)
        # git am's own words name the patch that failed, not the one before.
        self.assertIn('Patch failed at 0002', msg)
        # Aborted, so checked_out() could put the tree back as it was.
        self.assertFalse(os.path.isdir(os.path.join(self.repo, '.git', 'rebase-apply')))
        self.assertEqual(source.current_head(self.repo), 'base')

    def test_checked_out_restores_the_branch(self):
        sh(['git', 'checkout', '-q', '-b', 'work'], self.repo)
        with open(os.path.join(self.repo, 'a.c'), 'w') as f:
            f.write('changed\n')
        sh(['git', 'commit', '-q', '-am', 'work'], self.repo)
        with source.checked_out('base/1', src=self.repo) as head:
            self.assertEqual(head, 'work')
            with open(os.path.join(self.repo, 'a.c')) as f:
                self.assertEqual(f.read(), 'int a;\nint b;\nint c;\n')
        self.assertEqual(source.current_head(self.repo), 'work')
        # Also when the block fails, and with a branch made for the block.
        with self.assertRaises(RuntimeError):
            with source.checked_out('base/1', src=self.repo, branch='scratch'):
                self.assertEqual(source.current_head(self.repo), 'scratch')
                raise RuntimeError('build failed')
        self.assertEqual(source.current_head(self.repo), 'work')


class SubjectTest(unittest.TestCase):
    def test_folded_subject_is_unfolded(self):
        text = ('From: A <a@example.com>\nSubject: [PATCH 01/15] kasan: test that async '
                'tag faults are reported without\n a forced check\n\nBody\n')
        self.assertEqual(source.patch_subject(text),
                         'kasan: test that async tag faults are reported without a forced check')

    def test_single_line_subject(self):
        self.assertEqual(source.patch_subject('Subject: [PATCH] mm: x\n\nb\n'), 'mm: x')


if __name__ == '__main__':
    unittest.main()

class TreeUseTest(GitAmTest):
    """Two kmt runs on one kernel tree, and --no-apply on the base."""

    def other_process_can_lock(self, exclusive):
        """Whether another process gets the tree's lock right now."""
        code = ('import fcntl, os, sys\n'
                'fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n'
                'try:\n'
                '    fcntl.flock(fd, (fcntl.LOCK_EX if sys.argv[2] == "x" else fcntl.LOCK_SH)'
                ' | fcntl.LOCK_NB)\n'
                'except BlockingIOError:\n'
                '    sys.exit(1)\n')
        res = subprocess.run(['python3', '-c', code, source._lock_file(self.repo),  # pylint: disable=protected-access
                              'x' if exclusive else 's'], check=False)
        return res.returncode == 0

    def test_checkout_excludes_builds_and_builds_share(self):
        with source.checked_out('base/1', src=self.repo):
            self.assertFalse(self.other_process_can_lock(exclusive=False))
            # A build inside the block (make bench's baseline) nests.
            with source.tree_lock(self.repo):
                self.assertFalse(self.other_process_can_lock(exclusive=False))
        self.assertTrue(self.other_process_can_lock(exclusive=True))
        with source.tree_lock(self.repo):
            self.assertTrue(self.other_process_can_lock(exclusive=False))
            self.assertFalse(self.other_process_can_lock(exclusive=True))
            with self.assertRaises(RuntimeError):
                with source.tree_lock(self.repo, exclusive=True):
                    pass
        self.assertTrue(self.other_process_can_lock(exclusive=True))

    def test_git_am_waits_for_a_build_in_another_process(self):
        p1 = self.make_patch('int b;', 'int b2;', '0001-b.patch')
        self.write_series([p1])
        # Another run holds the tree for a build for one second.
        holder = subprocess.Popen(
            ['python3', '-c', 'import fcntl, os, sys, time\n'
             'fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n'
             'fcntl.flock(fd, fcntl.LOCK_SH)\n'
             'print("held", flush=True)\n'
             'time.sleep(1)\n', source._lock_file(self.repo)],  # pylint: disable=protected-access
            stdout=subprocess.PIPE, text=True)
        self.addCleanup(holder.stdout.close)
        self.addCleanup(holder.wait)
        self.assertEqual(holder.stdout.readline().strip(), 'held')
        source.apply_series(src=self.repo, patch_dir=self.pdir, tag='base/1')
        # git am ran only once the build was done.
        self.assertIsNotNone(holder.poll())
        with open(os.path.join(self.repo, 'a.c')) as f:
            self.assertIn('int b2;', f.read())

    def test_another_runs_git_am_is_not_taken_for_a_stale_one(self):
        """Another run is in the middle of a git am, inside its exclusive
        hold of the tree (make postings-check applying a posting): this
        run must wait for it, not abort it as a stale git am (which left
        both runs with a broken tree)."""
        p1 = self.make_patch('int b;', 'int b2;', '0001-b.patch')
        self.write_series([p1])
        rebase_apply = os.path.join(self.repo, '.git', 'rebase-apply')
        holder = subprocess.Popen(
            ['python3', '-c', 'import fcntl, os, shutil, sys, time\n'
             'fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n'
             'fcntl.flock(fd, fcntl.LOCK_EX)\n'
             'os.makedirs(sys.argv[2])\n'
             'print("in git am", flush=True)\n'
             'time.sleep(1)\n'
             'shutil.rmtree(sys.argv[2])\n',
             source._lock_file(self.repo), rebase_apply],  # pylint: disable=protected-access
            stdout=subprocess.PIPE, text=True)
        self.addCleanup(holder.stdout.close)
        self.addCleanup(holder.wait)
        self.assertEqual(holder.stdout.readline().strip(), 'in git am')
        with mock.patch.object(log, 'warn') as warn:
            source.apply_series(src=self.repo, patch_dir=self.pdir, tag='base/1')
        self.assertFalse([c for c in warn.call_args_list if 'aborting' in str(c)])
        self.assertIsNotNone(holder.poll())
        with open(os.path.join(self.repo, 'a.c')) as f:
            self.assertIn('int b2;', f.read())

    def test_no_apply_refuses_the_base_when_the_series_is_not_empty(self):
        p1 = self.make_patch('int b;', 'int b2;', '0001-b.patch')
        self.write_series([p1])
        with self.assertRaises(log.StepError) as cm:
            source.check_tree_as_is('base/1', src=self.repo, patch_dir=self.pdir)
        self.assertIn('--no-apply', str(cm.exception))
        source.apply_series(src=self.repo, patch_dir=self.pdir, tag='base/1')
        source.check_tree_as_is('base/1', src=self.repo, patch_dir=self.pdir)
        # An empty series is how the base as shipped is tested.
        os.unlink(os.path.join(self.pdir, p1))
        self.write_series([])
        sh(['git', 'checkout', '-q', 'base'], self.repo)
        source.check_tree_as_is('base/1', src=self.repo, patch_dir=self.pdir)


class PlainTextTest(unittest.TestCase):
    MD = ("Instructions per operation (exact: -icount shift=0, guest PMU, 1 vCPU, "
          "median of counted chunks, every one of them)\n\n"
          "| benchmark | kasan | baseline | patched | change | kasan=off | gap closed |\n"
          "|---|---|---:|---:|---:|---:|---:|\n"
          "| getpid | sync | 274.6 | 269.5 | -1.9% | 269.5 | 100% |\n"
          "| thread2000_child_with_a_long_name | `sync` | 45123456.0 | 40123456.0 | "
          "-11.1% | 39123456.0 | 83% |\n")

    def test_no_markdown_and_no_long_line(self):
        from kmt import source
        out = source.plain_text(self.MD)
        self.assertNotIn('|', out)
        self.assertNotIn('`', out)
        self.assertTrue(all(len(l) <= source.MAIL_WIDTH for l in out.splitlines()), out)
        # the first column is repeated in each block; every value is kept
        for v in ('274.6', '269.5', '-1.9%', '100%', '45123456.0', '83%', 'gap closed'):
            self.assertIn(v, out)
        # the label columns (left-aligned in the Markdown) start every block
        self.assertGreaterEqual(out.count('thread2000_child_with_a_long_name  sync'), 2)

    def test_columns_align(self):
        from kmt import source
        out = source.plain_text('| a | bb |\n|---|---:|\n| xyz | 1 |\n| q | 22 |\n')
        self.assertEqual(out, 'a    bb\n---  --\nxyz   1\nq    22\n')
