import collections
import os
import unittest

from kmt import diag, plot, series

BEFORE = """\
  CC      mm/vmalloc.o
mm/vmalloc.c:120:5: warning: no previous prototype for 'foo' [-Wmissing-prototypes]
mm/vmalloc.c:300:9: warning: incorrect type in argument 1 (different address spaces)
  CHECK   mm/vmalloc.c
"""

# The same warnings moved by the patch, plus one new one.
AFTER = """\
mm/vmalloc.c:126:5: warning: no previous prototype for 'foo' [-Wmissing-prototypes]
mm/vmalloc.c:306:9: warning: incorrect type in argument 1 (different address spaces)
mm/vmalloc.c:410:1: warning: symbol 'bar' was not declared. Should it be static?
./mm/vmalloc.c:500:2: error: implicit declaration of function 'baz'
"""


class Diagnostics(unittest.TestCase):
    def test_line_numbers_do_not_matter(self):
        new = diag.new_diagnostics(diag.diagnostics(BEFORE), diag.diagnostics(AFTER))
        self.assertEqual(new, [
            ('mm/vmalloc.c', 'error', "implicit declaration of function 'baz'"),
            ('mm/vmalloc.c', 'warning', "symbol 'bar' was not declared. Should it be static?"),
        ])

    def test_a_second_copy_of_an_old_warning_is_new(self):
        twice = BEFORE + BEFORE.replace(':300:', ':900:')
        new = diag.new_diagnostics(diag.diagnostics(BEFORE), diag.diagnostics(twice))
        self.assertEqual(len(new), 2)

    def test_nothing_new(self):
        self.assertEqual(diag.new_diagnostics(diag.diagnostics(BEFORE),
                                                diag.diagnostics(BEFORE)), [])
        self.assertEqual(diag.diagnostics('  CC  foo.o\nmake: done\n'), collections.Counter())

    def test_only_the_files_own_warnings(self):
        out = ('/src/linux/arch/arm64/kernel/vdso/vgetrandom.c:5:27: warning: symbol '
               "'__kernel_getrandom' was not declared. Should it be static?\n"
               "/src/linux/lib/refcount_kunit.c:9:1: warning: unused variable 'x'\n")
        own = diag.own_diagnostics(diag.diagnostics(out), 'lib/refcount_kunit.c')
        self.assertEqual(list(own), [('/src/linux/lib/refcount_kunit.c', 'warning',
                                      "unused variable 'x'")])

    def test_checkpatch_findings(self):
        out = ('WARNING: line length of 104 exceeds 100 columns\n#12: FILE: a.c:3:\n'
               'CHECK: Alignment should match open parenthesis\n'
               'total: 0 errors, 1 warnings, 1 checks, 20 lines checked\n')
        self.assertEqual(len(series.checkpatch_findings(out)), 2)
        self.assertEqual(series.checkpatch_findings('total: 0 errors, 0 warnings\n'), [])

    def test_docs_findings(self):
        out = ('Documentation/dev-tools/kasan.rst:80: WARNING: Bullet list ends without a '
               'blank line; unexpected unindent.\n'
               'Documentation/dev-tools/kunit/start.rst:35: WARNING: unknown document\n'
               'writing output... [100%] kasan\n')
        self.assertEqual(len(series.docs_findings(out, 'Documentation/dev-tools/kasan.rst')), 1)
        self.assertEqual(series.docs_findings(out, 'Documentation/dev-tools/gdb.rst'), [])

    def test_gates(self):
        self.assertTrue(set(series.QUICK_GATES) <= set(series.ALL_GATES))
        self.assertEqual(set(series.GATES), set(series.ALL_GATES))


def rec(bench, kasan, kernel, value):
    return {'benchmark': bench, 'kasan': kasan, 'kernel': kernel, 'metric': 'insn_per_op',
            'value': value}


class Plot(unittest.TestCase):
    def test_relative_costs(self):
        result = {'records': [
            rec('thread', 'off', 'baseline', 100.0), rec('thread', 'off', 'patched', 100.0),
            rec('thread', 'sync', 'baseline', 180.0), rec('thread', 'sync', 'patched', 120.0),
            rec('getpid', 'off', 'baseline', 50.0),
            rec('getpid', 'sync', 'baseline', 55.0), rec('getpid', 'sync', 'patched', 52.5),
            {'benchmark': 'getpid', 'kasan': 'sync', 'kernel': 'patched/baseline',
             'metric': 'time_ratio', 'value': 0.9},
        ]}
        self.assertEqual(plot.relative_costs(result),
                         {'sync': [('thread', 1.8, 1.2), ('getpid', 1.1, 1.05)]})

    def test_no_reference_no_rows(self):
        result = {'records': [rec('thread', 'sync', 'baseline', 180.0),
                              rec('thread', 'sync', 'patched', 120.0)]}
        self.assertEqual(plot.relative_costs(result), {})


class MessageWidth(unittest.TestCase):
    """checkpatch warns of a commit message line over 75 columns ("possible
    unwrapped commit description"): every patch of every base and every
    posting is checked here, without a kernel tree, before the checkpatch
    gate runs on the whole series (a 92-column line in 6.12's 0010 failed
    make check's checkpatch gate)."""

    def test_every_message(self):
        import glob
        from kmt import bases, paths, source
        found = []
        dirs = [os.path.join(paths.REPO, b.patch_dir) for b in bases.BASES.values()]
        dirs += sorted(glob.glob(os.path.join(paths.REPO, 'patches', '*', 'postings', '*')))
        for d in dirs:
            for n in sorted(os.listdir(d)):
                if not n.endswith('.patch') or n.startswith('0000-'):
                    continue
                with open(os.path.join(d, n)) as f:
                    text = f.read()
                found += ['%s: %s' % (os.path.relpath(os.path.join(d, n), paths.REPO), l)
                          for l in series.long_message_lines(text)]
                subject = series.long_subject(text)
                if subject:
                    found.append('%s: subject of %d columns: %s'
                                 % (os.path.relpath(os.path.join(d, n), paths.REPO),
                                    len(subject), subject))
        self.assertEqual(found, [])

    def test_long_subject(self):
        head = 'From: A <a@example.org>\nSubject: [PATCH 2/5] x: '
        self.assertIsNone(series.long_subject(head + 'y' * 72 + '\n\nbody\n'))
        self.assertEqual(series.long_subject(head + 'y' * 60 + '\n ' + 'z' * 12 + '\n\nb\n'),
                         'x: ' + 'y' * 60 + ' ' + 'z' * 12)
        backport = head + 'y' * 80 + '\n\ncommit ' + '0' * 40 + ' upstream.\n'
        self.assertIsNone(series.long_subject(backport))

    def test_long_message_lines(self):
        text = ('From: A <a@example.org>\nSubject: [PATCH] x: y\n\n' + 'w ' * 40 +
                '\nLink: https://lore.kernel.org/' + 'x' * 80 + '\n' +
                'Signed-off-by: A <a@example.org>\n---\n' + '+' + 'c' * 90 + '\n')
        self.assertEqual(series.long_message_lines(text), ['w ' * 40])


if __name__ == '__main__':
    unittest.main()


class CitedCommits(unittest.TestCase):
    """checkpatch cannot look commit ids up in a tree without history; the
    gate accepts its warning only for a listed id quoted with its subject."""
    OUT = "WARNING: Unknown commit id '25c17c4b55de', maybe rebased or not pulled?\n"
    CITED = {'25c17c4b55de': 'hugetlb: arm64: add mte support'}

    def test_listed_id_with_its_subject_is_accounted(self):
        text = 'Fixes: 25c17c4b55de ("hugetlb: arm64: add mte support")\n'
        self.assertEqual(series.unknown_ids_accounted(self.OUT, text, self.CITED), [])

    def test_subject_wrapped_in_the_message_is_accounted(self):
        text = 'Since commit 25c17c4b55de ("hugetlb: arm64:\nadd mte support"), x\n'
        self.assertEqual(series.unknown_ids_accounted(self.OUT, text, self.CITED), [])

    def test_wrong_subject_or_unlisted_id_still_fails(self):
        text = 'Fixes: 25c17c4b55de ("hugetlb: add mte support")\n'
        self.assertEqual(len(series.unknown_ids_accounted(self.OUT, text, self.CITED)), 1)
        self.assertEqual(len(series.unknown_ids_accounted(self.OUT, text, {})), 1)

    def test_other_findings_are_kept(self):
        out = self.OUT + 'WARNING: Prefer a maximum 75 chars per line\n'
        text = 'Fixes: 25c17c4b55de ("hugetlb: arm64: add mte support")\n'
        self.assertEqual(series.unknown_ids_accounted(out, text, self.CITED),
                         ['WARNING: Prefer a maximum 75 chars per line'])

    # A stable-style backport: its first body line names the upstream
    # commit, its subject is that commit's, its upstream tags are kept.
    FULL = '25c17c4b55def92a01e3eecc9c775a6ee25ca20f'
    BACKPORT = ('From: Up Author <up@example.org>\n'
                'Subject: [PATCH 14/15] hugetlb: arm64: add mte support\n\n'
                'commit 25c17c4b55def92a01e3eecc9c775a6ee25ca20f upstream.\n\n'
                '[ backport notes ]\n\nReported-by: A <a@example.org>\n'
                'Signed-off-by: Up Author <up@example.org>\n'
                'Signed-off-by: Maintainer <m@example.org>\n'
                'Signed-off-by: Sender <s@example.org>\n---\n')
    CLOSES = ('WARNING: Reported-by: should be immediately followed by Closes: '
              'with a URL to the report\n')

    def cited_full(self):
        return dict(self.CITED, **{self.FULL: self.CITED['25c17c4b55de']})

    def test_backport_of_a_listed_commit_is_accounted(self):
        out = self.OUT.replace("'25c17c4b55de'", "'25c17c4b55def92a01e3eecc9c775a6ee25ca20f'")
        self.CITED = self.cited_full()
        self.assertEqual(series.unknown_ids_accounted(out + self.CLOSES, self.BACKPORT,
                                                      self.CITED), [])
        # git format-patch folds a long Subject: header.
        folded = self.BACKPORT.replace('arm64: add', 'arm64:\n add', 1)
        self.assertEqual(series.unknown_ids_accounted(out + self.CLOSES, folded,
                                                      self.cited_full()), [])

    def test_backport_needs_the_full_listed_id(self):
        # Listed by its short id only, or another commit with the same
        # first 12 digits: not the backport of a listed commit.
        other = self.BACKPORT.replace(self.FULL, '25c17c4b55de' + 'f' * 28)
        out = "WARNING: Unknown commit id '%s', maybe rebased or not pulled?\n" % (
            '25c17c4b55de' + 'f' * 28)
        self.assertEqual(len(series.unknown_ids_accounted(out, other, self.cited_full())), 1)
        self.assertIsNone(series.backport_of(self.BACKPORT, self.CITED))

    def test_backport_keeps_the_upstream_author(self):
        # The series' own From: on a 'commit ... upstream.' patch, or the
        # author's sign-off last (nobody else took it): not a backport.
        ours = self.BACKPORT.replace('From: Up Author', 'From: Sender').replace(
            '<up@example.org>\nSubject', '<s@example.org>\nSubject')
        self.assertIsNone(series.backport_of(ours, self.cited_full()))
        alone = self.BACKPORT.replace('Signed-off-by: Maintainer <m@example.org>\n'
                                      'Signed-off-by: Sender <s@example.org>\n', '')
        self.assertIsNone(series.backport_of(alone, self.cited_full()))
        self.assertEqual(series.backport_of(self.BACKPORT, self.cited_full()), self.FULL)

    def test_sender_added_reported_by_is_not_excused(self):
        added = self.BACKPORT.replace('Signed-off-by: Sender',
                                      'Reported-by: C <c@example.org>\nSigned-off-by: Sender')
        self.assertEqual(series.unknown_ids_accounted(self.CLOSES, added, self.cited_full()),
                         [self.CLOSES.strip()])

    def test_other_unknown_id_in_a_backport_still_fails(self):
        out = "WARNING: Unknown commit id '0123456789ab', maybe rebased or not pulled?\n"
        self.assertEqual(len(series.unknown_ids_accounted(out, self.BACKPORT,
                                                          self.cited_full())), 1)

    def test_backport_line_needs_the_listed_subject_and_id(self):
        out = self.OUT + self.CLOSES
        other = self.BACKPORT.replace('hugetlb: arm64: add mte support',
                                      'hugetlb: arm64: add MTE support')
        self.assertEqual(len(series.unknown_ids_accounted(out, other, self.cited_full())), 2)
        self.assertEqual(len(series.unknown_ids_accounted(out, self.BACKPORT, {})), 2)
        # Upstream's tags are only accounted in a backport.
        plain = self.BACKPORT.replace('upstream.', 'is mentioned.')
        self.assertEqual(series.unknown_ids_accounted(self.CLOSES, plain, self.cited_full()),
                         [self.CLOSES.strip()])

    # checkpatch only looks up ids written as 'commit <id>' or in a
    # Fixes: tag; an id cited any other way must be listed all the same.
    def test_id_cited_without_commit_must_be_listed(self):
        text = ('Subject: [PATCH] x\n\nThe same change went into mainline as '
                '25c17c4b55de ("hugetlb: arm64: add mte support").\n---\n')
        self.assertEqual(series.uncited_ids(text, self.CITED), [])
        self.assertEqual(series.uncited_ids(text, {}), ['25c17c4b55de'])
        wrong = text.replace('add mte', 'add MTE')
        self.assertEqual(series.uncited_ids(wrong, self.CITED), ['25c17c4b55de'])

    def test_ids_in_links_numbers_and_the_diff_are_not_citations(self):
        text = ('Subject: [PATCH] x\n\n0x0123456789abcdef is a mask; 123456789012345 '
                'instructions.\n\nLink: https://lore.kernel.org/r/'
                '7ad5e5a9db79e3aba08d8f43aca24350b04080f6.1680114854.git.a@b\n---\n'
                ' deadbeefcafe0123 in the diff\nbase-commit: 25c17c4b55deffffffff\n')
        self.assertEqual(series.uncited_ids(text, {}), [])

    def test_addresses_in_a_quoted_kernel_log_are_not_citations(self):
        text = ('Subject: [PATCH] x\n\nIt triggers:\n\n'
                '  BUG: KASAN: invalid-access in clear_page+0xc/0x74\n'
                '  Write at addr faf000000c003000 by task t/1\n\n'
                'and faf000000c003000 after the log is cited again.\n---\n')
        self.assertEqual(series.uncited_ids(text, {}), ['faf000000c003000'])
        self.assertEqual(series.uncited_ids(
            text.replace('and faf000000c003000 after the log is cited again.\n', ''), {}), [])

    def test_every_base_list_is_well_formed(self):
        import os
        from kmt import bases, paths
        for b in bases.BASES.values():
            series.load_cited_commits(os.path.join(paths.REPO, b.patch_dir,
                                                   'cited-commits.txt'))


# The arm64_mte suite's message as it was when the suite came before the
# change it checks (the series had it as patch 14 of 15, TCMA1 as 15).
TEST_BEFORE_ITS_FIX = """\
On 6.12 with CONFIG_KASAN_HW_TAGS=n both cases fail on an MTE system
(QEMU -machine virt,mte=on -cpu max, -smp 2 or more for the hotplug
case) until the next patch sets TCMA1 whenever CONFIG_ARM64_MTE is
enabled. With CONFIG_KASAN_HW_TAGS=y they pass before and after it.
"""


class Order(unittest.TestCase):
    def test_a_test_that_fails_until_the_next_patch(self):
        found = series.order_findings('arm64: mte: add a KUnit suite', TEST_BEFORE_ITS_FIX)
        self.assertEqual(len(found), 1)
        self.assertIn('until the next patch sets TCMA1', found[0])

    def test_a_fix_that_names_the_test_after_it(self):
        self.assertEqual(series.order_findings('arm64: mte: set TCMA1', (
            'The next patch adds a KUnit suite, arm64_mte, that reads TCR_EL1; it\n'
            'fails without this change and passes with it.\n')), [])

    def test_the_series_as_exported(self):
        import os
        from kmt import paths, source
        for d in (os.path.join(paths.REPO, 'patches'), os.path.join(paths.REPO, 'patches', '7.3')):
            for name in source.read_series(d):
                with open(os.path.join(d, name)) as f:
                    text = f.read()
                body = text.split('\n\n', 1)[1].split('\n---\n', 1)[0]
                self.assertEqual(series.order_findings(name, body), [], name)


class BisectKunitTest(unittest.TestCase):
    """The per-prefix KUnit gate: which suites a prefix contains, which
    cells boot them, what fails a prefix."""

    def test_suites_at_a_prefix(self):
        self.assertEqual(series.suites_at(['mm/kasan/kasan_test_c.c', 'lib/refcount.c']), ())
        self.assertEqual(series.suites_at(['lib/refcount_kunit.c']), ('refcount',))
        self.assertEqual(set(series.suites_at(['lib/tests/refcount_kunit.c',
                                               'arch/arm64/kernel/mte_kunit.c'])),
                         {'refcount', 'arm64-mte'})

    def test_cells_of_a_prefix(self):
        early = series.prefix_cells(())
        self.assertEqual([c.name for c in early], ['sync', 'async'])
        self.assertTrue(all(c.suites == ('kasan',) for c in early))
        full = {c.name: c.suites for c in series.prefix_cells(('refcount', 'arm64-mte'))}
        self.assertEqual(full, {'sync': ('kasan',), 'async': ('kasan',),
                                'refcount-lse': ('refcount',), 'distro': ('arm64-mte',)})

    def test_what_fails_a_prefix(self):
        from kmt import results
        ok = {'tests': [results.test('kasan', 'a', results.PASS),
                        results.test('kasan', 'b', results.SKIP, 'no')], 'problems': []}
        self.assertEqual(series.prefix_verdict(ok), '')
        bad = dict(ok, tests=ok['tests'] + [results.test('arm64_mte', 'tcma1', results.FAIL,
                                                         'TCMA1 clear on CPU 0')])
        self.assertIn('arm64_mte/tcma1', series.prefix_verdict(bad))
        panic = dict(ok, problems=[results.problem('panic', 'Kernel panic - not syncing')])
        self.assertIn('panic', series.prefix_verdict(panic))
        self.assertEqual(series.prefix_verdict({'tests': [], 'problems': []}),
                         'no test reported')


class BisectKunitArgsTest(unittest.TestCase):
    def test_prefix_out_of_range_is_an_error(self):
        from unittest import mock
        from kmt import log
        with mock.patch.object(series, 'series_commits', lambda tag: [('a', 'x: A'), ('b', 'x: B')]):
            for bad in ([0], [3], [1, 5]):
                with self.assertRaises(log.StepError):
                    series.gate_bisect_kunit('base', bad)
        with mock.patch.object(series, 'series_commits', lambda tag: []):
            with self.assertRaises(log.StepError):
                series.gate_bisect_kunit('base')


class WorktreeTest(unittest.TestCase):
    """source.worktree_at() on a tiny repository: made, reused, and made
    again when the directory is no worktree of the tree any more (a reset
    there would reach the repository above it)."""

    def test_worktree_made_again_when_not_ours(self):
        import shutil
        import subprocess
        import tempfile
        from unittest import mock
        from kmt import paths, source
        with tempfile.TemporaryDirectory() as d:
            tree = os.path.join(d, 'linux')
            os.makedirs(tree)
            g = lambda *a: subprocess.run(['git', '-c', 'user.name=t', '-c', 'user.email=t@t'] +
                                          list(a), cwd=tree, check=True, capture_output=True)
            g('init', '-q')
            for n in ('one', 'two'):
                with open(os.path.join(tree, n), 'w') as f:
                    f.write(n)
                g('add', n)
                g('commit', '-q', '-m', n)
            first = g('rev-parse', 'HEAD~1').stdout.decode().strip()
            tip = g('rev-parse', 'HEAD').stdout.decode().strip()
            wt = os.path.join(d, 'wt')
            with mock.patch.object(paths, 'SRC', tree):
                source.worktree_at(wt, first)
                self.assertFalse(os.path.exists(os.path.join(wt, 'two')))
                source.worktree_at(wt, tip)
                self.assertTrue(os.path.exists(os.path.join(wt, 'two')))
                # The directory loses its .git: made again, not reset
                os.unlink(os.path.join(wt, '.git'))
                with open(os.path.join(wt, 'mine'), 'w') as f:
                    f.write('x')
                source.worktree_at(wt, first)
                self.assertFalse(os.path.exists(os.path.join(wt, 'mine')))
                self.assertFalse(os.path.exists(os.path.join(wt, 'two')))
                top = subprocess.run(['git', 'rev-parse', '--show-toplevel'], cwd=wt,
                                     capture_output=True, text=True).stdout.strip()
                self.assertEqual(top, os.path.realpath(wt))


class NewFileMaintainers(unittest.TestCase):
    """checkpatch asks whether MAINTAINERS needs updating for every new
    file; the gate answers it from the base's MAINTAINERS: a file an
    existing section (not THE REST) already covers needs no entry, and
    adding one would be churn a maintainer asks to drop."""
    OUT = ('WARNING: added, moved or deleted file(s), does MAINTAINERS '
           'need updating?\n')
    MAINTAINERS = ('ARM64 PORT (AARCH64 ARCHITECTURE)\n'
                   'M:\tA Maintainer <a@example.org>\n'
                   'F:\tarch/arm64/\n'
                   'X:\tarch/arm64/boot/dts/\n'
                   '\n'
                   'KASAN\n'
                   'F:\tmm/kasan/\n'
                   'F:\tlib/Kconfig.kasan\n'
                   'F:\tinclude/linux/kasan*.h\n'
                   '\n'
                   'THE REST\n'
                   'M:\tLinus <l@example.org>\n'
                   'F:\t*\n'
                   'F:\t*/\n')

    @staticmethod
    def patch(*files):
        return ''.join('diff --git a/%s b/%s\nnew file mode 100644\n'
                       '--- /dev/null\n+++ b/%s\n@@ -0,0 +1 @@\n+x\n' % (f, f, f)
                       for f in files)

    def left(self, *files):
        return series.unknown_ids_accounted(self.OUT, self.patch(*files), {},
                                            maintainers=self.MAINTAINERS)

    def test_file_under_a_section_is_accounted(self):
        self.assertEqual(self.left('arch/arm64/kernel/mte_kunit.c'), [])
        self.assertEqual(self.left('include/linux/kasan-extra.h'), [])

    def test_file_only_the_rest_covers_still_fails(self):
        self.assertEqual(len(self.left('drivers/misc/new.c')), 1)

    def test_excluded_file_still_fails(self):
        self.assertEqual(len(self.left('arch/arm64/boot/dts/new.dts')), 1)

    def test_one_uncovered_file_of_several_fails(self):
        self.assertEqual(len(self.left('mm/kasan/new.c', 'drivers/misc/new.c')), 1)

    def test_without_maintainers_the_warning_stays(self):
        self.assertEqual(len(series.unknown_ids_accounted(
            self.OUT, self.patch('mm/kasan/new.c'), {})), 1)

    def test_glob_does_not_cross_directories(self):
        self.assertEqual(self.left('include/linux/kasan.h'), [])
        self.assertEqual(len(self.left('include/linux/sub/kasan.h')), 1)


class UpstreamStatus(unittest.TestCase):
    """Every patch of a product series says what it is upstream: a
    backport, or where it is proposed, or why it is carried only here."""

    BACKPORT = ('From: A Author <a@example.org>\nSubject: [PATCH 01/02] x: do y\n\n'
                'commit %s upstream.\n\nbody\n\nSigned-off-by: A Author <a@example.org>\n'
                'Signed-off-by: Sender <s@example.org>\n---\n' % ('a' * 40))
    OURS = ('From: Sender <s@example.org>\nSubject: [PATCH] x: do z\n\nbody\n%s\n'
            'Signed-off-by: Sender <s@example.org>\n---\n diff\n')

    def test_findings(self):
        cited = {'a' * 40: 'x: do y'}
        self.assertIsNone(series.upstream_finding(self.BACKPORT, cited, ()))
        self.assertIn('does not say', series.upstream_finding(self.OURS % '', cited, ()))
        self.assertIsNone(series.upstream_finding(
            self.OURS % '\nProposed for mainline as patch 2 of the mm series "s".\n', cited, ()))
        self.assertIsNone(series.upstream_finding(
            self.OURS % '\nCarried here only: mainline has another form.\n', cited, ()))
        # A posting's commit (mainline's own series) needs no such line.
        self.assertIsNone(series.upstream_finding(self.OURS % '', cited, ('x: do z',)))
        # Proposed for mainline: under a posted subject, or it is another
        # change (FROMLIST: keeps the posted subject).
        proposed = self.OURS % '\nProposed for mainline as patch 2 of the mm series "s".\n'
        self.assertIsNone(series.upstream_finding(proposed, cited, (), ('x: do z',)))
        self.assertIn('no posting has its subject "x: do z"',
                      series.upstream_finding(proposed, cited, (), ('x: do z for all',)))
        carried = self.OURS % '\nCarried here only, in this form: mainline takes another.\n'
        self.assertIsNone(series.upstream_finding(carried, cited, (), ('x: do w',)))
        # The words in the diff do not count.
        self.assertIn('does not say', series.upstream_finding(
            self.OURS.replace(' diff', 'Proposed for mainline as') % '', cited, ()))

    def test_every_base(self):
        from kmt import bases, paths, source
        for b in bases.BASES.values():
            pdir = os.path.join(paths.REPO, b.patch_dir)
            found = series.upstream_findings(pdir, b)
            self.assertEqual(found, [], '%s: %s' % (b.name, found))
            self.assertTrue(source.read_series(pdir))


class NoPlaceholderLeft(unittest.TestCase):
    """A token written where a figure was still to come (RESULTS_FIX,
    STATUS_PLACEHOLDER) must not reach a mail: every patch and cover letter
    of every base and posting, and the test of the check itself."""

    def test_every_mail(self):
        import glob
        from kmt import bases, paths, postings
        found = []
        dirs = [os.path.join(paths.REPO, b.patch_dir) for b in bases.BASES.values()]
        dirs += sorted(glob.glob(os.path.join(paths.REPO, 'patches', '*', 'postings', '*')))
        dirs.append(os.path.join(paths.REPO, 'patches', 'qemu'))
        for d in dirs:
            for n in sorted(os.listdir(d)):
                if n.endswith('.patch'):
                    with open(os.path.join(d, n)) as f:
                        found += ['%s: %s' % (os.path.relpath(os.path.join(d, n), paths.REPO), p)
                                  for p in postings.placeholder_problems(f.read())]
        self.assertEqual(found, [])

    def test_what_counts_as_one(self):
        from kmt import postings
        mail = ('Subject: [PATCH 1/2] x: y\n\nIt hung in RESULTS_FIX boots.\n'
                'status = STATUS_PLACEHOLDER\nTODO: measure\n'
                'CONFIG_KASAN_HW_TAGS and RESUME_PATH stay, as do results and\n'
                'a quoted "RESULT: identical" or RESULTS line; RESULT612 does not.\n'
                '---\ndiff --git a/x.c b/x.c\n+\t/* XXX in the code is not prose */\n')
        self.assertEqual(postings.placeholder_problems(mail), [
            'a placeholder is left in: It hung in RESULTS_FIX boots.',
            'a placeholder is left in: status = STATUS_PLACEHOLDER',
            'a placeholder is left in: TODO: measure',
            'a placeholder is left in: a quoted "RESULT: identical" or RESULTS line; RESULT612 '
            'does not.'])
