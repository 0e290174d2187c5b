"""The fidelity gate, on generated git repositories: a base, the series
tree with a backport applied, a mainline tree and a mainline clone."""

import os
import shutil
import subprocess
import tempfile
import unittest

from kmt import backport, fidelity

BASE_C = """static int other(void)
{
	return 1;
}

void mte_suspend_enter(void)
{
	if (!system_supports_mte())
		return;

	dsb(nsh);
	isb();
	mte_check_tfsr_el1();
}
"""
# Mainline's change: a second test after the first one.
MAINLINE_C = BASE_C.replace("""		return;

	dsb(nsh);""", """		return;

	if (!system_uses_mte_async_or_asymm_mode())
		return;

	dsb(nsh);""")
# A backport in another shape: the first test replaced.
OTHER_SHAPE_C = BASE_C.replace("	if (!system_supports_mte())",
                               "	if (!system_uses_mte_async_or_asymm_mode())")


def git(cwd, *args):
    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM='1',
               GIT_AUTHOR_NAME='Ann Upstream', GIT_AUTHOR_EMAIL='ann@example.org',
               GIT_COMMITTER_NAME='Ann Upstream', GIT_COMMITTER_EMAIL='ann@example.org')
    return subprocess.run(['git', '-C', cwd] + list(args), check=True, env=env,
                          capture_output=True, text=True).stdout.strip()


def commit_file(repo, text, msg):
    os.makedirs(os.path.join(repo, 'arch'), exist_ok=True)
    with open(os.path.join(repo, 'arch', 'mte.c'), 'w') as f:
        f.write(text)
    git(repo, 'add', '-A')
    git(repo, 'commit', '-q', '-m', msg)
    return git(repo, 'rev-parse', 'HEAD')


class FidelityTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='kmt-fidelity-test.')
        self.addCleanup(shutil.rmtree, self.tmp)
        # The mainline clone: base, then the upstream commit.
        self.clone = os.path.join(self.tmp, 'mainline')
        os.makedirs(self.clone)
        git(self.clone, 'init', '-q')
        commit_file(self.clone, BASE_C, 'base')
        self.cid = commit_file(self.clone, MAINLINE_C, 'arm64: mte: Skip it\n\nBody.\n\n'
                               'Signed-off-by: Ann Upstream <ann@example.org>')
        # The mainline tree (as a Debian tarball gives it): one commit, tagged.
        self.tree = os.path.join(self.tmp, 'tree')
        os.makedirs(self.tree)
        git(self.tree, 'init', '-q')
        commit_file(self.tree, MAINLINE_C + '\nvoid later_mainline_code(void)\n{\n}\n', 'tree')
        git(self.tree, 'tag', 'base/7.3.4')
        self.patches = os.path.join(self.tmp, 'patches')
        os.makedirs(self.patches)

    def series(self, new_text, note=''):
        """A series tree with one backport making new_text of the base;
        returns (patch name, sha)."""
        repo = os.path.join(self.tmp, 'series')
        shutil.rmtree(repo, ignore_errors=True)
        os.makedirs(repo)
        git(repo, 'init', '-q')
        commit_file(repo, BASE_C, 'base')
        msg = ('arm64: mte: Skip it\n\ncommit %s upstream.\n\n%s\n\n'
               'Signed-off-by: Ann Upstream <ann@example.org>\n%s'
               'Signed-off-by: MTE Series Team <mte-series@example.org>'
               % (self.cid, backport.PLACEHOLDER, note))
        sha = commit_file(repo, new_text, msg)
        out = git(repo, 'format-patch', '-1', '--zero-commit', '-o', self.patches, sha)
        self.repo = repo
        return os.path.basename(out.strip()), sha

    def run_gate(self, name, sha, clone=False):
        return fidelity.gate([name], self.patches, self.repo, {name: sha},
                             None if clone else (self.tree, 'base/7.3.4'),
                             linux_git=self.clone if clone else None)

    def test_faithful_backport_passes_both_ways(self):
        name, sha = self.series(MAINLINE_C)
        for clone in (False, True):
            tests, lines = self.run_gate(name, sha, clone)
            self.assertEqual(tests, [(name, True, '')], lines)
            self.assertIn('0 differences', lines[0])

    def test_other_shape_fails_against_the_tree(self):
        name, sha = self.series(OTHER_SHAPE_C)
        tests, lines = self.run_gate(name, sha)
        self.assertFalse(tests[0][1])
        text = '\n'.join(lines)
        # The test it removed, which mainline kept. (The line it added
        # stands in mainline's function too, as a second test: only a
        # clone shows that mainline added a return there as well.)
        self.assertIn('NOT NAMED:  arch/mte.c mte_suspend_enter(): '
                      '"if (!system_supports_mte())" (backport 0, mainline 1)', text)
        self.assertIn('not named by the note', tests[0][2])

    def test_other_shape_fails_against_the_clone(self):
        name, sha = self.series(OTHER_SHAPE_C)
        tests, lines = self.run_gate(name, sha, clone=True)
        self.assertFalse(tests[0][1])
        text = '\n'.join(lines)
        self.assertIn('"-if (!system_supports_mte())" (backport 1, mainline 0)', text)
        self.assertIn('"+return;" (backport 0, mainline 1)', text)

    def test_a_note_naming_the_difference_passes(self):
        note = ('[ 6.12: mte_suspend_enter() tests only the async/asymm key there, '
                'for the sake of the test. ]\n')
        name, sha = self.series(OTHER_SHAPE_C, note)
        for clone in (False, True):
            tests, lines = self.run_gate(name, sha, clone)
            self.assertEqual(tests, [(name, True, '')], lines)
            self.assertIn('named (names mte_suspend_enter())', '\n'.join(lines))

    def test_a_note_on_something_else_does_not(self):
        note = '[ 6.12: other_function() is called other_name() there. ]\n'
        name, sha = self.series(OTHER_SHAPE_C, note)
        tests, _ = self.run_gate(name, sha)
        self.assertFalse(tests[0][1])

    def test_stored_changelog_fails(self):
        name, sha = self.series(MAINLINE_C)
        path = os.path.join(self.patches, name)
        with open(path) as f:
            text = f.read()
        with open(path, 'w') as f:
            f.write(text.replace(backport.PLACEHOLDER, 'The upstream changelog, copied.'))
        tests, _ = self.run_gate(name, sha)
        self.assertFalse(tests[0][1])
        self.assertIn('never stored', tests[0][2])

    def test_not_a_backport_is_not_judged(self):
        name, sha = self.series(MAINLINE_C)
        path = os.path.join(self.patches, name)
        with open(path) as f:
            text = f.read()
        with open(path, 'w') as f:
            f.write(text.replace('commit %s upstream.' % self.cid, 'Our own change.'))
        self.assertEqual(self.run_gate(name, sha), ([], []))


class UnitTest(unittest.TestCase):
    def test_function_body(self):
        self.assertEqual(fidelity.function_body(BASE_C, 'other'),
                         ['static int other(void)', '{', '\treturn 1;', '}'])
        self.assertIsNone(fidelity.function_body(BASE_C, 'missing'))

    def test_lines_without_a_name_are_not_compared(self):
        self.assertEqual(fidelity.idents('return;'), [])
        self.assertEqual(fidelity.idents('} else {'), [])
        self.assertEqual(fidelity.idents('isb();'), ['isb'])


if __name__ == '__main__':
    unittest.main()


class BlockTest(unittest.TestCase):
    def test_a_named_line_names_its_run(self):
        diff = ('diff --git a/k.h b/k.h\n--- a/k.h\n+++ b/k.h\n@@ -1,2 +1,5 @@\n'
                ' #endif\n+#ifndef arch_hook\n+#define arch_hook()\n+#endif\n #endif\n')
        changes, _ = fidelity.diff_changes(diff)
        self.assertEqual(len({c.block for c in changes}), 1)
        after = {'k.h': '#endif\n#ifndef arch_hook\n#define arch_hook()\n#endif\n#endif\n'}
        diffs = fidelity.tree_differences(changes, after, {'k.h': '#endif\n#define hw_hook() arch_hook()\n#endif\n'})
        # '#endif' names nothing: only the two lines with the hook compare.
        self.assertEqual([d.line for d in diffs], ['#ifndef arch_hook', '#define arch_hook()'])
        patch = ('From 0 Mon Sep 17 00:00:00 2001\nFrom: A <a@example.org>\nSubject: x\n\n'
                 'commit %s upstream.\n\nx\n[ 6.1: adds "#ifndef arch_hook" defaults. ]\n'
                 'Signed-off-by: B <b@example.org>\n---\n' % ('1' * 40))
        self.assertEqual(fidelity.judge(patch, diffs), [])
        self.assertEqual(diffs[1].why, 'in a run of lines the note names')
