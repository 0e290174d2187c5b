import json
import os
import subprocess
import tempfile
import unittest

from kmt import log, paths, postings, postproof, series, source

REPO = paths.REPO
P73 = os.path.join(REPO, 'patches', '7.3')
CITED = series.load_cited_commits(os.path.join(P73, 'cited-commits.txt'))
BASE = 'v7.3.4'


def load_toml(text):
    with tempfile.NamedTemporaryFile('w', suffix='.toml', delete=False) as f:
        f.write(text)
    try:
        return postings.load(f.name)
    finally:
        os.unlink(f.name)


def real(name):
    """A posting of patches/7.3/postings.toml and its written mails."""
    p = postings.chosen(postings.load(os.path.join(P73, 'postings.toml')), [name])[0]
    return p, postings.read_posting(p, P73)


FIX = '''
[one]
kind = "fix"
what = "x"
commits = ["a: Fix b"]
status = "ready"
tree = "mm"
'''


class LoadTest(unittest.TestCase):
    def test_minimal_fix(self):
        p, = load_toml(FIX)
        self.assertEqual((p.name, p.kind, p.commits), ('one', 'fix', ('a: Fix b',)))

    def test_a_posting_says_its_tree(self):
        p, mails = real('vrealloc')
        self.assertEqual(p.tree, 'mm-hotfixes')
        cover = dict(mails)[[n for n, _ in mails if n.startswith('0000-')][0]]
        self.assertIn(postings.tree_line('mm-hotfixes'), ' '.join(cover.split()))
        bare = [(n, t.replace(postings.tree_line('mm-hotfixes'), '')) for n, t in mails]
        found = postings.static_problems(p, bare, CITED, BASE)
        self.assertTrue(any('For the mm-hotfixes tree.' in f for f in found), found)

    def test_bad_entries_named(self):
        for text, what in [
                (FIX.replace('"fix"', '"bugfix"'), 'kind'),
                (FIX.replace('status = "ready"', ''), 'status'),
                (FIX.replace('tree = "mm"', ''), 'tree'),
                (FIX.replace('["a: Fix b"]', '["a: Fix b", "a: Test b"]'), 'cover_subject'),
                (FIX + 'colour = "red"\n', 'unknown keys'),
                (FIX + '[[one.proof]]\nrunner = "cell"\ntest = "kasan/x"\n', 'names its cell'),
                (FIX + '[[one.proof]]\nrunner = "lava"\ntest = "kasan/x"\n', 'runner'),
                (FIX.replace('[one]', '[One_Posting]'), 'lower-case')]:
            with self.assertRaises(log.StepError, msg=what) as e:
                load_toml(text)
            self.assertIn(what, str(e.exception))
            self.assertIn('[', str(e.exception))

    def test_the_7_3_postings_load(self):
        ps = postings.load(os.path.join(P73, 'postings.toml'))
        self.assertIn('strscpy', [p.name for p in ps])
        for p in ps:
            for pr in p.proofs:
                if pr.runner == 'cell':
                    # raises for an unknown cell or one without the suite
                    self.assertEqual(postproof.proof_cell(pr).suites,
                                     (pr.test.split('/')[0],))
                else:
                    self.assertIn(pr.arch, postproof.KUNIT_QEMU_CONFIGS)


class SeriesMapTest(unittest.TestCase):
    """The 7.3 cover letter names the posting of every patch by its
    subject (a reader has no postings directory), in the series' order."""

    def test_each_patch_once_by_subject(self):
        ps = postings.load(os.path.join(P73, 'postings.toml'))
        subjects = [source.patch_subject(open(os.path.join(P73, n)).read())
                    for n in source.read_series(P73)]
        text = postings.series_map_text(ps, subjects)
        numbers = [int(n) for line in text.splitlines() if not line.startswith('      ')
                   for n in line.split(':')[0].split(',')]
        self.assertEqual(sorted(numbers), list(range(1, len(subjects) + 1)))
        self.assertRegex(text, r'\n  28: "mm/slab: skip the page allocator\'s KASAN tagging of '
                               r'new slab\n      pages" \(held back\)')

    def test_a_commit_not_in_the_series_is_named(self):
        p, = load_toml(FIX)
        with self.assertRaises(log.StepError) as e:
            postings.series_map_text([p], ['other: Subject'])
        self.assertIn('a: Fix b', str(e.exception))


class WrittenPostingsTest(unittest.TestCase):
    """The postings as committed pass the checks that need no kernel tree
    (make postings-check runs the rest)."""

    def test_every_written_posting_is_fit(self):
        every = postings.load(os.path.join(P73, 'postings.toml'))
        titles = postings.known_titles(every, P73)
        for p in every:
            mails = postings.read_posting(p, P73)
            self.assertEqual(postings.static_problems(p, mails, CITED, BASE,
                                                      postings.series_texts(P73), titles),
                             [], p.name)

    def test_a_stale_title_is_named(self):
        titles = {'scs, kasan: untagged shadow call stacks and more HW_TAGS tests',
                  'arm64: mte: Check load_unaligned_zeropad() in asymmetric mode'}
        mail = ('Subject: [PATCH] x\n\nas "scs, kasan: untagged shadow call stacks,\n and '
                'the HW_TAGS tests mainline lacks" does, and "arm64: mte: Check\n'
                'load_unaligned_zeropad() in asymmetric mode" too.\n')
        found = postings.title_problems([('0001-x.patch', mail)], titles)
        self.assertEqual(len(found), 1, found)
        self.assertIn('stacks, and the HW_TAGS', found[0])

    def test_a_cross_recipe_names_its_compiler(self):
        p, = load_toml(FIX + 'cover_subject = "a: b"\ncover_text = "x"\n')
        bad = 'configured with "ARCH=arm64 scripts/kconfig/merge_config.sh -n a.config"'
        self.assertTrue(any('CROSS_COMPILE' in x for x in postings.fragment_problems(p, bad, BASE)))
        good = bad.replace('ARCH=arm64 ', 'ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- ')
        self.assertEqual(postings.fragment_problems(p, good, BASE), [])
        x86 = 'x86_64: "ARCH=x86_64 scripts/kconfig/merge_config.sh -n x86.config"'
        self.assertEqual(postings.fragment_problems(p, x86, BASE), [])

    def test_a_kunit_py_command_names_the_kunitconfig_its_proof_ran(self):
        # kunit.py's default kunitconfig has CONFIG_KUNIT_ALL_TESTS=y: a
        # command with --kconfig_add builds another kernel than the
        # proof's --kunitconfig (only the options the proof names).
        bad = ('  ./tools/testing/kunit/kunit.py run --arch=arm64 \\\n'
               '      --kconfig_add CONFIG_KASAN=y \\\n'
               '      --kernel_args kasan.mode=async kasan\n')
        found = postings.kunit_command_problems(bad)
        self.assertEqual(len(found), 1, found)
        self.assertIn('KUNIT_ALL_TESTS', found[0])
        good = ('  ./tools/testing/kunit/kunit.py run --arch=arm64 \\\n'
                '      --kunitconfig=kasan.kunitconfig kasan\n')
        self.assertEqual(postings.kunit_command_problems(good), [])
        self.assertEqual(postings.kunit_command_problems('kunit.py exec kasan'), [])


class BelowTheLineTest(unittest.TestCase):
    """A single patch has no cover letter: its cover_text (the
    configuration its figures were built with) goes below its ---."""

    def test_a_single_patch_carries_its_configuration(self):
        p, = load_toml(FIX + 'cover_text = """\nBuilt from\n\n'
                       '@@fragment minimal.config@@\n"""\n')
        text = postings.below_the_line(p, BASE, 'For the mm tree.')
        self.assertTrue(text.startswith('For the mm tree.'))
        self.assertIn(postings.fragment_block(['minimal.config'],
                                              postings.gone_options(BASE)), text)
        self.assertNotIn('@@fragment', text)
        # and the check finds a single patch whose list went stale
        self.assertEqual(postings.fragment_problems(p, text, BASE), [])
        self.assertTrue(postings.fragment_problems(p, 'Built from', BASE))

    def test_without_cover_text_only_the_note(self):
        p, = load_toml(FIX)
        self.assertEqual(postings.below_the_line(p, BASE, 'For the mm tree.'),
                         'For the mm tree.')


class PatchProblemsTest(unittest.TestCase):
    def setUp(self):
        self.posting, mails = real('strscpy')
        self.name, self.text = mails[0]

    def problems(self, text, posting=None):
        return postings.static_problems(posting or self.posting, [(self.name, text)],
                                        CITED, BASE)

    def test_clean(self):
        self.assertEqual(self.problems(self.text), [])

    def test_fix_without_fixes(self):
        text = '\n'.join(l for l in self.text.split('\n') if not l.startswith('Fixes:'))
        self.assertTrue(any('without a Fixes' in p for p in self.problems(text)))

    def test_fix_without_stable(self):
        text = self.text.replace('Cc: stable@vger.kernel.org\n', '')
        self.assertTrue(any('Cc: stable' in p for p in self.problems(text)))

    def test_fixes_id_not_cited(self):
        text = self.text.replace('Fixes: d94c12bd97d5', 'Fixes: 0123456789ab')
        self.assertTrue(any('cited-commits' in p for p in self.problems(text)))

    def test_fixes_subject_misquoted(self):
        text = self.text.replace('code\npath', 'code path', 1).replace(
            'to sized_strscpy()")', 'to strscpy()")')
        self.assertTrue(any('cited-commits' in p for p in self.problems(text)))

    def test_short_fixes_id(self):
        text = self.text.replace('Fixes: d94c12bd97d5', 'Fixes: d94c12b')
        self.assertTrue(any('12 characters' in p for p in self.problems(text)))

    def test_named_recipient_missing(self):
        text = self.text.replace('    Peter Collingbourne <pcc@google.com>,\n', '')
        self.assertNotEqual(text, self.text)
        self.assertTrue(any('pcc@google.com' in p for p in self.problems(text)))

    def test_no_signoff(self):
        text = '\n'.join(l for l in self.text.split('\n')
                         if not l.startswith('Signed-off-by:'))
        self.assertTrue(any('Signed-off-by' in p for p in self.problems(text)))

    def test_base_not_named(self):
        text = self.text.replace('Based on v7.3.4.', 'Based on my tree.')
        self.assertTrue(any('Based on v7.3.4' in p for p in self.problems(text)))

    def test_no_stable_must_have_a_reason_or_the_tag(self):
        p = postings.Posting(**dict(vars(self.posting), no_stable='only in 7.3'))
        self.assertTrue(any('no_stable' in x for x in self.problems(self.text, p)))

    def test_not_for_stable_keeps_autosel_off_too(self):
        p = postings.Posting(**dict(vars(self.posting), no_stable='a debugging gap'))
        text = self.text.replace('Cc: stable@vger.kernel.org\n', '').replace(
            'For stable:', 'Not for stable:')
        self.assertTrue(any('noautosel' in x for x in self.problems(text, p)))
        text2 = text.replace('Signed-off-by:', 'Cc: <stable+noautosel@kernel.org> # a gap\n'
                             'Signed-off-by:', 1)
        self.assertFalse(any('noautosel' in x for x in self.problems(text2, p)))

    def test_no_stable_with_fixes_keeps_autosel_off_whatever_the_wording(self):
        # The review found a fix with Fixes: whose message says "not
        # marked for stable" (no "not for stable"): the automatic
        # selection would still take it.
        p = postings.Posting(**dict(vars(self.posting), no_stable='a debugging gap'))
        text = self.text.replace('Cc: stable@vger.kernel.org\n', '')
        self.assertTrue(any('noautosel' in x for x in self.problems(text, p)))

    def test_a_stable_fix_for_mm_goes_to_mm_hotfixes(self):
        # The review: hugetlb, vrealloc and kasan-rt-stack-ring carry
        # Cc: stable but asked for "the mm tree"; Andrew Morton takes
        # such fixes through mm-hotfixes.
        p = postings.Posting(**dict(vars(self.posting), tree='mm'))
        text = self.text.replace(postings.tree_line(self.posting.tree),
                                 postings.tree_line('mm'))
        self.assertTrue(any('mm-hotfixes' in x for x in self.problems(text, p)))
        p2 = postings.Posting(**dict(vars(self.posting), tree='mm-hotfixes'))
        text2 = self.text.replace(postings.tree_line(self.posting.tree),
                                  postings.tree_line('mm-hotfixes'))
        self.assertFalse(any('mm-hotfixes' in x for x in self.problems(text2, p2)))

    def test_fixes_on_a_cleanup(self):
        p = postings.Posting(**dict(vars(self.posting), kind='cleanup'))
        self.assertTrue(any('cleanup' in x for x in self.problems(self.text, p)))

    def test_patch_count_must_match(self):
        p = postings.Posting(**dict(vars(self.posting), commits=('a', 'b')))
        found = self.problems(self.text, p)
        self.assertTrue(any('lists 2 commits' in x for x in found))
        self.assertTrue(any('no cover letter' in x for x in found))


COVER = '''From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A <a@example.org>
Subject: [PATCH 0/2] x: Fix y
To: M <m@example.org>

Two fixes for y.

  case          before  after
  kasan_foo     FAIL    pass

Based on v7.3.4. The tests ran on it as Debian's linux-source-7.3 ships it.

A (2):
  x: Fix y
  x: Test y

 mm/x.c | 4 ++--
 1 file changed, 2 insertions(+), 2 deletions(-)

--
2.39.5
'''


class CoverTest(unittest.TestCase):
    def test_clean(self):
        self.assertEqual(postings.cover_problems(COVER, BASE), [])

    def test_markdown_and_width(self):
        for bad, what in [('| case | before |', 'table'), ('# Results', 'heading'),
                          ('the `foo` case', 'backquotes'), ('**really**', 'bold'),
                          ('```', 'fence'), ('see [here](http://x)', 'link'),
                          ('x' * 76, 'columns')]:
            text = COVER.replace('Two fixes for y.', bad)
            found = postings.cover_problems(text, BASE)
            self.assertTrue(any(what in p for p in found), (bad, found))

    def test_long_subject_folded(self):
        long = '[PATCH 0/2] kasan: hw_tags: poison the tail of a vrealloc()-shrunk area'
        text = COVER.replace('[PATCH 0/2] x: Fix y', long)
        self.assertTrue(any('header' in p for p in postings.cover_problems(text, BASE)))
        folded = COVER.replace('[PATCH 0/2] x: Fix y', long.replace(' a vrealloc', '\n a vrealloc'))
        self.assertEqual(postings.cover_problems(folded, BASE), [])
        self.assertEqual(postings.split_mail(folded)[0]['subject'], [long])

    def test_subject_at_most_75_columns(self):
        p, mails = real('kasan-tests')
        self.assertLessEqual(len(p.cover_subject), 75)
        long = postings.Posting(**dict(vars(p), cover_subject='scs, kasan: ' + 'x' * 64))
        found = postings.static_problems(long, mails, CITED, BASE)
        self.assertTrue(any('76 columns' in x for x in found), found)

    def test_placeholders_diffstat_base(self):
        self.assertTrue(postings.cover_problems(
            COVER.replace('x: Fix y\nTo', '*** SUBJECT HERE ***\nTo'), BASE))
        self.assertTrue(any('diffstat' in p for p in postings.cover_problems(
            COVER.replace(' 1 file changed', ' one file changed'), BASE)))
        self.assertTrue(any('Based on' in p for p in postings.cover_problems(COVER, 'v7.3.5')))


class CoverAppendixTest(unittest.TestCase):
    PATCH = """Subject: [PATCH] lib: bench

---
diff --git a/lib/Makefile b/lib/Makefile
--- a/lib/Makefile
+++ b/lib/Makefile
@@ -1,1 +1,2 @@
 obj-y += a.o
+obj-y += bench.o
diff --git a/lib/bench.c b/lib/bench.c
new file mode 100644
index 0000000..85c51a8
--- /dev/null
+++ b/lib/bench.c
@@ -0,0 +1,4 @@
+// SPDX-License-Identifier: GPL-2.0
+
+static int x;
+/* %s */
""" % ('y' * 90)

    def test_the_new_file_of_a_patch(self):
        self.assertEqual(source.new_file_of(self.PATCH, 'lib/bench.c'),
                         '// SPDX-License-Identifier: GPL-2.0\n\nstatic int x;\n/* %s */\n'
                         % ('y' * 90))
        self.assertIsNone(source.new_file_of(self.PATCH, 'lib/Makefile'))

    def test_verbatim_code_keeps_its_widths(self):
        code = source.new_file_of(self.PATCH, 'lib/bench.c')
        text = COVER.rstrip('\n') + '\n\n' + code
        self.assertTrue(any('columns' in p for p in postings.cover_problems(text, BASE)))
        self.assertEqual(postings.cover_problems(text, BASE, [code]), [])
        # only the carried text is exempt: the same line in the letter is not
        text2 = text.replace('Two fixes for y.', 'y' * 90)
        self.assertTrue(any('columns' in p for p in postings.cover_problems(text2, BASE, [code])))

    def test_needs_a_cover_and_an_existing_file(self):
        with self.assertRaises(log.StepError) as e:
            load_toml(FIX + 'cover_appendix = ["README.md"]\n')
        self.assertIn('cover letter', str(e.exception))
        cover = FIX + 'cover_subject = "a: b"\ncover_text = "c"\n'
        with self.assertRaises(log.StepError) as e:
            load_toml(cover + 'cover_appendix = ["no/such/file"]\n')
        self.assertIn('does not exist', str(e.exception))
        with self.assertRaises(log.StepError) as e:
            load_toml(cover + 'cover_appendix = ["README.md:lib/x.c"]\n')
        self.assertIn('creates no file', str(e.exception))
        p, = load_toml(cover + 'cover_appendix = ["README.md"]\n')
        self.assertEqual(p.cover_appendix, (('README.md', ''),))


class CoverSenderTest(unittest.TestCase):
    def test_cover_from_must_be_the_author(self):
        p, mails = real('vrealloc')
        self.assertEqual(postings.static_problems(p, mails, CITED, BASE), [])
        bad = [(n, t.replace('From: MTE Series Team <mte-series@example.org>',
                             'From: kmt <kmt@localhost>', 1) if n.startswith('0000-') else t)
               for n, t in mails]
        self.assertTrue(any('not the author' in x
                            for x in postings.static_problems(p, bad, CITED, BASE)))


class HeaderTest(unittest.TestCase):
    def test_folded_addresses(self):
        text = ('From x\nTo: A <a@x.org>,\n    b@y.org\nCc: C D <C@Z.org>\n'
                'Subject: s\n\nbody\n')
        self.assertEqual(postings.recipients(text), {'a@x.org', 'b@y.org', 'c@z.org'})


class ProofOutcomeTest(unittest.TestCase):
    def test_cell_outcome(self):
        tests = [{'suite': 'kasan', 'name': 'kasan_strings', 'status': 'fail'},
                 {'suite': 'kasan', 'name': 'kmalloc_oob_right', 'status': 'pass'}]
        self.assertEqual(postproof.outcome(tests, [], 'kasan/kasan_strings'), 'fail')
        self.assertEqual(postproof.outcome(tests, [], 'kasan/kmalloc_oob_right'), 'pass')
        self.assertEqual(postproof.outcome(tests, [], 'kasan/vmalloc_oob'), 'missing')
        # A pass in a run that panicked or timed out is no pass.
        self.assertEqual(postproof.outcome(tests, [{'kind': 'timeout', 'text': ''}],
                                           'kasan/kmalloc_oob_right'), 'fail')

    def test_kunit_json(self):
        data = {'name': 'KUnit Test Group', 'sub_groups': [
            {'name': 'kasan', 'test_cases': [
                {'name': 'kasan_strings', 'status': 'FAIL'},
                {'name': 'kmalloc_oob_right', 'status': 'PASS'}], 'sub_groups': []}],
            'test_cases': []}
        data = json.loads(json.dumps(data))
        self.assertEqual(postproof.kunit_json_outcome(data, 'kasan/kasan_strings'), 'fail')
        self.assertEqual(postproof.kunit_json_outcome(data, 'kasan/kmalloc_oob_right'), 'pass')
        self.assertEqual(postproof.kunit_json_outcome(data, 'kasan/nope'), 'missing')
        self.assertEqual(postproof.kunit_json_outcome(data, 'refcount/x'), 'missing')

    def test_kunit_json_parameterized(self):
        # A parameterized case is a sub-group of its suite (kunit.py's
        # JSON of the refcount suite, shortened).
        case = lambda *st: {'name': 'refcount_test_add_not_zero', 'sub_groups': [],
                            'test_cases': [{'name': 'old=%d' % i, 'status': s}
                                           for i, s in enumerate(st)]}
        data = lambda *st: {'name': 'KUnit Test Group', 'test_cases': [], 'sub_groups': [
            {'name': 'refcount', 'test_cases': [], 'sub_groups': [case(*st)]}]}
        t = 'refcount/refcount_test_add_not_zero'
        self.assertEqual(postproof.kunit_json_outcome(data('PASS', 'PASS'), t), 'pass')
        self.assertEqual(postproof.kunit_json_outcome(data('PASS', 'FAIL'), t), 'fail')
        self.assertEqual(postproof.kunit_json_outcome(data(), t), 'missing')


class SkipProofTest(unittest.TestCase):
    """A fix whose right result is a skip (a suite that cannot run where
    the kernel turned its feature off by design): FAIL -> SKIP."""

    def test_kunit_json_reports_a_skip(self):
        data = {'name': 'KUnit Test Group', 'test_cases': [], 'sub_groups': [
            {'name': 'kfence', 'sub_groups': [], 'test_cases': [
                {'name': 'test_out_of_bounds_read', 'status': 'SKIP'},
                {'name': 'test_krealloc', 'status': 'FAIL'}]}]}
        self.assertEqual(postproof.kunit_json_outcome(data, 'kfence/test_out_of_bounds_read'),
                         'skip')
        self.assertEqual(postproof.kunit_json_outcome(data, 'kfence/test_krealloc'), 'fail')

    def test_after_is_read_and_checked(self):
        base = FIX + ('[[one.proof]]\nrunner = "kunit.py"\narch = "arm64"\n'
                      'test = "kfence/test_out_of_bounds_read"\n')
        p, = load_toml(base + 'after = "skip"\n')
        self.assertEqual(p.proofs[0].after, 'skip')
        p, = load_toml(base)
        self.assertEqual(p.proofs[0].after, 'pass')
        with self.assertRaises(Exception):
            load_toml(base + 'after = "gone"\n')

    def test_proven_only_by_the_result_it_names(self):
        pr = postings.Proof('kunit.py', 'kfence/x', arch='arm64', after='skip')
        self.assertTrue(postproof.proven(pr, 'fail', 'skip'))
        self.assertFalse(postproof.proven(pr, 'fail', 'pass'))
        self.assertFalse(postproof.proven(pr, 'skip', 'skip'))
        plain = postings.Proof('kunit.py', 'kfence/x', arch='arm64')
        self.assertFalse(postproof.proven(plain, 'fail', 'skip'))
        self.assertTrue(postproof.proven(plain, 'fail', 'pass'))


class ShortTest(unittest.TestCase):
    def test_short_names(self):
        pr = postings.Proof('kunit.py', 'kasan/x', arch='arm64',
                            kconfig=('CONFIG_KASAN=y', 'CONFIG_KASAN_HW_TAGS=y',
                                     'CONFIG_KASAN_KUNIT_TEST=y'),
                            kernel_args=('kasan.mode=asymm',))
        self.assertEqual(postproof.short(pr), 'kunit.py arm64 KASAN_HW_TAGS kasan.mode=asymm')
        self.assertEqual(postproof.short(postings.Proof('cell', 'kasan/x', cell='sync')),
                         'cell sync')


class MergedTest(unittest.TestCase):
    def test_rerun_replaces_only_its_own_records(self):
        a = {'test': 'kasan/x', 'how': 'cell sync', 'before': 'base', 'proven': False}
        b = {'test': 'kasan/x', 'how': 'kunit.py --arch=x86_64', 'before': 'base',
             'proven': True}
        a2 = dict(a, proven=True)
        self.assertEqual(postproof.merged([a, b], [a2]), [b, a2])
        self.assertEqual(postproof.merged([], [a]), [a])

    def test_a_record_of_a_proof_no_longer_listed_is_dropped(self):
        # A proof whose kernel arguments changed is another proof: the old
        # record (NOT PROVEN, say) must not stay in the posting's file.
        old = {'test': 'slub_test/x', 'how': 'kunit.py --arch=arm64 --kernel_args a',
               'before': 'base', 'proven': False}
        new = dict(old, how='kunit.py --arch=arm64 --kernel_args a --kernel_args b',
                   proven=True)
        listed = {postproof.record_key(new)}
        self.assertEqual(postproof.merged([old], [new], listed), [new])


class CommittedProofsTest(unittest.TestCase):
    def test_every_committed_proof_record_is_listed_and_proven(self):
        # patches/7.3/proofs/ is what the docs quote: a record of a proof
        # postings.toml no longer lists, or one not proven, must not sit there.
        every = postings.load(os.path.join(P73, 'postings.toml'))
        for p in every:
            path = os.path.join(P73, 'proofs', p.name + '.json')
            if not os.path.exists(path):
                continue
            with open(path) as f:
                recs = json.load(f)['proofs']
            listed = {postproof.proof_key(pr) for pr in p.proofs}
            for r in recs:
                self.assertIn(postproof.record_key(r), listed, (p.name, r['test'], r['how']))
                self.assertTrue(r['proven'], (p.name, r['test'], r['how']))


class TcgWrapperTest(unittest.TestCase):
    """kunit/bin/qemu-system-*-tcg keep only -accel tcg of kunit.py's list."""

    def test_drops_kvm_and_hvf(self):
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, 'qemu-system-x86_64')
            with open(fake, 'w') as f:
                f.write('#!/bin/sh\nfor a in "$@"; do echo "[$a]"; done\n')
            os.chmod(fake, 0o755)
            res = subprocess.run(
                [os.path.join(REPO, 'kunit', 'bin', 'qemu-system-x86_64-tcg'), '-nodefaults',
                 '-m', '1024', '-append', 'console=ttyS0 kunit.filter_glob=kasan',
                 '-accel', 'kvm', '-accel', 'hvf', '-accel', 'tcg', '-bios', 'qboot.rom'],
                env=dict(os.environ, PATH=d + ':' + os.environ['PATH']),
                stdout=subprocess.PIPE, text=True, check=True)
        self.assertEqual(res.stdout.split('\n')[:-1], [
            '[-nodefaults]', '[-m]', '[1024]', '[-append]',
            '[console=ttyS0 kunit.filter_glob=kasan]', '[-accel]', '[tcg]', '[-bios]',
            '[qboot.rom]'])


if __name__ == '__main__':
    unittest.main()


class SelectedTest(unittest.TestCase):
    def test_runner_and_cell_filters(self):
        cell = postings.Proof(runner='cell', test='mte/x', cell='sync')
        big = postings.Proof(runner='cell', test='mte/x', cell='run-sync')
        kunit = postings.Proof(runner='kunit.py', test='kasan/x', arch='arm64')
        self.assertTrue(all(postproof.selected(p) for p in (cell, big, kunit)))
        self.assertEqual([postproof.selected(p, cells=['sync']) for p in (cell, big, kunit)],
                         [True, False, True])
        self.assertEqual([postproof.selected(p, runners=['cell'], cells=['sync'])
                          for p in (cell, big, kunit)], [True, False, False])


class WhyFailedTest(unittest.TestCase):
    def test_a_kernel_report_is_named(self):
        self.assertEqual(postproof.why_failed({'result': 'fail', 'problems': [
            '[  149.092177] BUG: KASAN: invalid-access in clear_page+0xc/0x74']}),
            ' (BUG: KASAN: invalid-access in clear_page+0xc/0x74)')

    def test_the_test_s_own_failure(self):
        self.assertEqual(postproof.why_failed({'result': 'fail', 'problems': []}), '')
        self.assertEqual(postproof.why_failed({'result': 'pass', 'problems': ['x']}), '')


class MeasureTest(unittest.TestCase):
    def test_measure_entries(self):
        p, = load_toml(FIX + '[[one.measure]]\nwhat = "w"\ncell = "asymm"\n'
                       'bench = ["getpid"]\ncalls = ["fixup_exception"]\n')
        m, = p.measures
        self.assertEqual((m.cell, m.bench, m.calls), ('asymm', ('getpid',),
                                                      ('fixup_exception',)))
        for bad in ('what = "w"\ncell = "asymm"\n',            # no bench
                    'cell = "asymm"\nbench = ["getpid"]\n',     # no what
                    'what = "w"\ncell = "c"\nbench = ["x"]\nruns = 3\n'):
            with self.assertRaises(log.StepError) as e:
                load_toml(FIX + '[[one.measure]]\n' + bad)
            self.assertIn('a measure is', str(e.exception))

    def test_the_7_3_measures_name_cells(self):
        for p in postings.load(os.path.join(P73, 'postings.toml')):
            for m in p.measures:
                postproof.find_cell(m.cell)     # raises for an unknown cell

    def test_only_repeating_figures_are_kept(self):
        run = lambda ts, insn, calls: {'bench': {'thread': {'tag_stores_per_op': ts,
                                                            'plugin_insn_kernel_per_op': insn}},
                                        'calls': {'fixup_exception': calls}}
        got = postproof.repeated([run(4.0, 100.0, 0), run(4.0, 101.5, 0)])
        self.assertEqual(got['bench']['thread'], {'tag_stores_per_op': 4.0,
                                                  'plugin_insn_kernel_per_op': None})
        self.assertEqual(got['calls'], {'fixup_exception': 0})
        got = postproof.repeated([run(4.0, 100.0, 0), run(4.0, 100.0, 3)])
        self.assertEqual(got['calls'], {'fixup_exception': None})
        # Within 0.5% repeats (382.0 and 383.5: 0.39%), beyond does not.
        got = postproof.repeated([run(382.0, 1000.0, 0), run(383.5, 1006.0, 0)])
        self.assertEqual(got['bench']['thread'], {'tag_stores_per_op': 382.0,
                                                  'plugin_insn_kernel_per_op': None})

    def test_lines_say_what_does_not_repeat(self):
        m = postings.Measure('w', 'scs', ('thread',))
        p = postings.Posting('scs', 'cleanup', 'x', ('a',), measures=(m,))
        base = {'bench': {'thread': {'tag_stores_per_op': 68.0, 'tagged_bytes_per_op': 4096.0,
                                     'plugin_insn_kernel_per_op': None}}, 'calls': {}}
        after = {'bench': {'thread': {'tag_stores_per_op': 4.0, 'tagged_bytes_per_op': 64.0,
                                      'plugin_insn_kernel_per_op': None}}, 'calls': {}}
        lines = postproof.measure_lines(p, m, base, after)
        self.assertIn('  thread tag_stores_per_op: 68 -> 4', lines)
        self.assertIn('  thread plugin_insn_kernel_per_op: differs between runs -> '
                      'differs between runs', lines)


class CoverageTest(unittest.TestCase):
    def test_the_7_3_series_is_the_union_of_its_postings(self):
        from kmt import reverts
        ps = postings.load(os.path.join(P73, 'postings.toml'))
        self.assertEqual(postings.coverage_problems(ps, reverts.series_subjects(P73)), [])

    def test_gaps_and_overlaps_are_named(self):
        one = postings.Posting('one', 'fix', 'x', ('a: Fix b',))
        two = postings.Posting('two', 'test', 'x', ('a: Fix b', 'a: Test c'))
        got = postings.coverage_problems([one, two], ['a: Fix b', 'a: Add d'])
        self.assertEqual(got, ['"a: Fix b" is in two postings: one and two',
                               'posting two names "a: Test c", which is not in the series',
                               '"a: Add d" is in no posting: the series would carry a change '
                               'that is never posted'])


class MeasuredLinesTest(unittest.TestCase):
    def test_readme_lines(self):
        m = postings.Measure('w', 'scs', ('thread',), ('fixup_exception',))
        p = postings.Posting('scs', 'cleanup', 'x', ('a',), measures=(m,))
        rep = lambda ts, calls: {'bench': {'thread': {'tag_stores_per_op': ts,
                                                      'tagged_bytes_per_op': None}},
                                 'calls': {'fixup_exception': calls}}
        data = {'measures': [{'what': 'w', 'cell': 'scs',
                              'base': {'runs': [{}, {}], 'repeated': rep(68.0, 0)},
                              'posting': {'runs': [{}, {}], 'repeated': rep(4.0, None)}}]}
        old = postproof.PROOF_RESULTS
        with tempfile.TemporaryDirectory() as d:
            postproof.PROOF_RESULTS = d
            try:
                self.assertEqual(postproof.measured_lines(p),
                                 ['measured (w, cell scs): not run yet'])
                with open(os.path.join(d, 'scs-measure.json'), 'w') as f:
                    json.dump(data, f)
                self.assertEqual(postproof.measured_lines(p), [
                    'measured (cell scs, 2 runs each): '
                    'fixup_exception() calls over the boot 0 -> differ between runs'])
                # Without calls: the tag stores that repeated.
                m2 = postings.Measure('w', 'scs', ('thread',))
                p2 = postings.Posting('scs', 'cleanup', 'x', ('a',), measures=(m2,))
                self.assertEqual(postproof.measured_lines(p2), [
                    'measured (cell scs, 2 runs each): thread tag stores/op 68 -> 4'])
                # Kernel instructions per operation (the plugin's count),
                # where they repeated: the evidence of a change to a path.
                data['measures'][0]['base']['repeated']['bench']['thread'][
                    'plugin_insn_kernel_per_op'] = 296.345
                data['measures'][0]['posting']['repeated']['bench']['thread'][
                    'plugin_insn_kernel_per_op'] = 294.324
                with open(os.path.join(d, 'scs-measure.json'), 'w') as f:
                    json.dump(data, f)
                self.assertEqual(postproof.measured_lines(p2), [
                    'measured (cell scs, 2 runs each): thread kernel instructions/op '
                    '296.35 -> 294.32; thread tag stores/op 68 -> 4'])
            finally:
                postproof.PROOF_RESULTS = old


class ChangeIdTest(unittest.TestCase):
    DIFF = ('Subject: x\n\nmsg\n---\n a.c | 1 +\n\ndiff --git a/a.c b/a.c\n'
            '--- a/a.c\n+++ b/a.c\n@@ -%d,3 +%d,4 @@\n %s\n+int new;\n int b;\n')

    def test_context_does_not_count_the_change_does(self):
        one = self.DIFF % (10, 10, 'int a;')
        moved = self.DIFF % (40, 40, 'int vrealloc_case;')   # other neighbours
        self.assertEqual(postings._patch_id(one), postings._patch_id(moved))  # pylint: disable=protected-access
        other = one.replace('+int new;', '+int newer;')
        self.assertNotEqual(postings._patch_id(one), postings._patch_id(other))  # pylint: disable=protected-access
        # Two files: git show's output starts with the first one's header.
        two = one + 'diff --git a/b.c b/b.c\n--- a/b.c\n+++ b/b.c\n@@ -1 +1 @@\n-x\n+y\n'
        self.assertEqual(postings._patch_id(two),  # pylint: disable=protected-access
                         postings._patch_id(two[two.index('diff --git'):]))  # pylint: disable=protected-access
        self.assertNotEqual(postings._patch_id(two), postings._patch_id(one))  # pylint: disable=protected-access
        # git show's output (no mail around it) gives the same id.
        self.assertEqual(postings._patch_id(one),  # pylint: disable=protected-access
                         postings._patch_id(one[one.index('diff --git'):]))  # pylint: disable=protected-access


class KunitCompilerArgsTest(unittest.TestCase):
    def test_arm64_cross_compiler_through_ccache(self):
        # CROSS_COMPILE names AR, LD, OBJCOPY too: 'ccache aarch64-linux-gnu-'
        # made AR two words, and kunit.py's compile_commands.json target
        # (gen_compile_commands.py -a "$(AR)") failed on arm64. Only CC goes
        # through ccache.
        from kmt import postproof
        self.assertEqual(postproof.kunit_compiler_args('arm64', True),
                         ['--cross_compile=aarch64-linux-gnu-',
                          '--make_options=CC=ccache aarch64-linux-gnu-gcc'])
        self.assertEqual(postproof.kunit_compiler_args('arm64', False),
                         ['--cross_compile=aarch64-linux-gnu-'])

    def test_x86_64_through_ccache_only_where_there_is_one(self):
        from kmt import postproof
        self.assertEqual(postproof.kunit_compiler_args('x86_64', True),
                         ['--make_options=CC=ccache gcc'])
        self.assertEqual(postproof.kunit_compiler_args('x86_64', False), [])


class ProofTableTest(unittest.TestCase):
    """The README's postings table on a machine that ran only some proofs:
    the others keep their proof column; results kept in the repository
    are read back."""

    def test_rows_kept_where_nothing_ran_here(self):
        import tempfile
        from unittest import mock
        from kmt import docs, postproof
        chosen = postings.load(os.path.join(P73, 'postings.toml'))
        old = docs.read_section('postings-7.3')
        self.assertIsNotNone(old)
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(postproof, 'PROOF_RESULTS', d), \
                mock.patch.object(postproof, 'KEPT_RESULTS', d):
            # (the status column comes from postings.toml, not from the page)
            nostatus = lambda t: [l.rsplit(' | ', 1)[0] for l in t.splitlines()]
            self.assertEqual(nostatus(postproof.markdown(chosen, old)), nostatus(old))
            self.assertIn('not run yet', postproof.markdown(chosen, None))
            p = next(x for x in chosen if x.name == 'strscpy')
            postproof.write_result('strscpy', {'posting': 'strscpy', 'proofs': [
                {'test': pr.test, 'how': postproof.describe(pr), 'before': pr.before,
                 'base': {'result': 'fail'}, 'posting': {'result': 'pass'}, 'proven': True}
                for pr in p.proofs[:1]]})
            self.assertEqual(postproof.load_result('strscpy')['posting'], 'strscpy')
            table = postproof.markdown(chosen, old)
        row = next(l for l in table.splitlines() if l.startswith('| `strscpy`'))
        self.assertIn('FAIL -> PASS', row)
        self.assertIn('not run yet', row)    # its other proofs did not run here
        self.assertEqual([l.rsplit(' | ', 1)[0] for l in table.splitlines()
                          if not l.startswith('| `strscpy`')],
                         [l.rsplit(' | ', 1)[0] for l in old.splitlines()
                          if not l.startswith('| `strscpy`')])


class GetMaintainerOrderTest(unittest.TestCase):
    """get_maintainer.pl lists maintainers of equal standing in Perl hash
    order, which perl randomizes per run: the To: of the strscpy posting
    flipped between two writes of the same patch. The script must run
    with a fixed hash seed so that make postings writes the same mails."""

    def test_runs_with_a_fixed_perl_hash_seed(self):
        seen = {}

        def fake_run(cmd, **kw):
            seen['env'] = kw.get('env')
            return subprocess.CompletedProcess(cmd, 0, stdout='A <a@x.org> (maintainer:X)\n')

        real = subprocess.run
        subprocess.run = fake_run
        try:
            found = postings._get_maintainer('p.patch', '/nonexistent')
        finally:
            subprocess.run = real
        self.assertEqual(found, [('A <a@x.org>', 'maintainer:X)')])
        env = seen['env']
        self.assertIsNotNone(env, 'get_maintainer.pl runs with the caller\'s environment')
        self.assertEqual(env.get('PERL_HASH_SEED'), '0')
        self.assertEqual(env.get('PATH'), os.environ.get('PATH'))


class StaleTest(unittest.TestCase):
    """A posting carries the series' commit as it is: the same message and
    the same added and removed lines."""

    SERIES = ('From 0 Mon Sep 17 00:00:00 2001\nFrom: S <s@example.org>\n'
              'Subject: [PATCH 03/20] x: do y\n\nWhy.\n\nSigned-off-by: S <s@example.org>\n'
              '---\n a.c | 1 +\n\ndiff --git a/a.c b/a.c\nindex 1..2 100644\n--- a/a.c\n'
              '+++ b/a.c\n@@ -10,3 +10,4 @@ f\n ctx\n+added\n ctx\n')

    def test_same(self):
        posted = self.SERIES.replace('[PATCH 03/20]', '[PATCH 1/2]').replace(
            '@@ -10,3 +10,4 @@', '@@ -7,3 +7,4 @@').replace(
            '---\n', '---\nFor the mm tree.\n\n', 1).replace(
            'Subject:', 'To: m <m@example.org>\nSubject:')
        self.assertEqual(postings.stale_problems([('0001-x.patch', posted)],
                                                 [self.SERIES]), [])

    def test_stale(self):
        old_msg = self.SERIES.replace('Why.', 'Why, at length.')
        found = postings.stale_problems([('0001-x.patch', old_msg)], [self.SERIES])
        self.assertEqual(len(found), 1)
        self.assertIn('message differs from the series', found[0])
        old_code = self.SERIES.replace('+added', '+added\n+more')
        found = postings.stale_problems([('0001-x.patch', old_code)], [self.SERIES])
        self.assertIn('changed lines differ from the series', found[0])
        found = postings.stale_problems([('0001-x.patch', self.SERIES.replace('do y', 'do z'))],
                                        [self.SERIES])
        self.assertIn('no patch of the series has its subject', found[0])

    def test_written_postings_are_current(self):
        import glob
        from kmt import source
        if paths.BASE_NAME != '7.3':
            pdir = os.path.join(paths.REPO, 'patches', '7.3')
        else:
            pdir = paths.PATCHES
        series = []
        for n in source.read_series(pdir):
            with open(os.path.join(pdir, n)) as f:
                series.append(f.read())
        for d in sorted(glob.glob(os.path.join(pdir, 'postings', '*'))):
            mails = []
            for f in sorted(glob.glob(os.path.join(d, '0*.patch'))):
                if not os.path.basename(f).startswith('0000-'):
                    with open(f) as fh:
                        mails.append((os.path.basename(f), fh.read()))
            self.assertEqual(postings.stale_problems(mails, series), [], d)


class FragmentTest(unittest.TestCase):
    """A cover letter's configuration is the fragments the kernel was
    built from, as merge_config.sh -n takes them, never a list typed by
    hand (the review found one that gave another .config)."""

    def test_later_fragments_win_and_gone_options_are_left_out(self):
        lines = postings.fragment_lines(['mte-kasan.config', 'nokasan.config'],
                                        gone=postings.gone_options('v7.3.4'))
        self.assertIn('# CONFIG_KASAN is not set', lines)
        self.assertNotIn('CONFIG_KASAN=y', lines)
        self.assertIn('CONFIG_ARM64_MTE=y', lines)
        # 7.3 has no CONFIG_ARM64_LSE_ATOMICS; 6.12 has
        self.assertNotIn('CONFIG_ARM64_LSE_ATOMICS=y', lines)
        self.assertIn('CONFIG_ARM64_LSE_ATOMICS=y',
                      postings.fragment_lines(['mte-kasan.config'],
                                              postings.gone_options('v6.12.58')))
        with self.assertRaises(log.StepError):
            postings.fragment_lines(['no-such.config'])
        with self.assertRaises(log.StepError):
            postings.gone_options('v5.4.1')

    def test_expanded_in_place(self):
        text = 'Configured with\n\n@@fragment x86_64-refbench.config@@\n\nbuilt.\n'
        out = postings.expand_cover_text(text, 'v7.3.4')
        self.assertIn('\n\n  CONFIG_64BIT=y\n  CONFIG_SMP=y\n', out)
        self.assertIn('  CONFIG_KALLSYMS=y\n\nbuilt.\n', out)
        self.assertNotIn('@@', out)
        self.assertNotIn('#', out)

    def test_stale_or_typed_configurations_are_problems(self):
        p, = load_toml(FIX + 'cover_subject = "a: b"\n'
                       'cover_text = "x\\n\\n@@fragment x86_64-refbench.config@@\\n"\n')
        good = postings.expand_cover_text(p.cover_text, BASE)
        self.assertEqual(postings.fragment_problems(p, good, BASE), [])
        stale = good.replace('  CONFIG_NR_CPUS=8\n', '')
        self.assertEqual(len(postings.fragment_problems(p, stale, BASE)), 1)
        typed = good + '\nx86_64: make allnoconfig, then CONFIG_64BIT=y, CONFIG_SMP=y\n'
        self.assertIn('typed', postings.fragment_problems(p, typed, BASE)[0])


class CommitIdTest(unittest.TestCase):
    """checkpatch's commit description style, checked without a tree that
    knows the ids (checkpatch in ours skips it for an unknown id)."""

    def test_one_line_with_subject(self):
        ok = ('Since commit 0123456789ab ("a: b c"), x.\n'
              'As commit 0123456789ab\n("a: b c") did.\n'
              'Fixes: 0123456789ab ("a: b c")\n'
              'Link: https://lore.kernel.org/r/0123456789abcdef@x\n\n'
              'BUG: KASAN: invalid-access in clear_page+0xc/0x74\n'
              '  Write at addr faf000000c003000 by task t/1\n')
        self.assertEqual(postings.commit_id_problems(ok), [])

    def test_split_bare_and_subjectless_ids(self):
        self.assertEqual(len(postings.commit_id_problems(
            'Since commit\n0123456789ab ("a: b"), x.\n')), 1)
        self.assertIn('without "commit"', postings.commit_id_problems(
            'the part where 0123456789ab is.\n')[0])
        self.assertIn('without its', postings.commit_id_problems(
            'as before commit 0123456789ab: a.\n')[0])
        # the log ends at the blank line
        self.assertEqual(len(postings.commit_id_problems(
            'BUG: x\n  at 0123456789abcdef\n\nthen 0123456789ab did.\n')), 1)
