"""make backport-messages: a backport's changelog filled in from a mainline
clone, on a small git repository the test makes."""

import os
import shutil
import subprocess
import tempfile
import unittest

from kmt import backport, log

AUTHOR = 'Ann Upstream <ann@example.org>'
SUBJECT = 'arm64: mte: Do the thing in the kernel'
UPSTREAM_BODY = """The kernel does the thing too often. Do it less.

This is the upstream changelog; the repository never stores it.

Reported-by: Rita Reporter <rita@example.org>
Signed-off-by: Ann Upstream <ann@example.org>
Signed-off-by: Mae Maintainer <mae@example.org>"""

STORED = """From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Ann Upstream <ann@example.org>
Date: Mon, 30 Nov 2026 09:53:46 +0000
Subject: [PATCH 14/15] arm64: mte: Do the thing in the
 kernel

commit {cid} upstream.

{placeholder}

Reported-by: Rita Reporter <rita@example.org>
Signed-off-by: Ann Upstream <ann@example.org>
Signed-off-by: Mae Maintainer <mae@example.org>
[ 6.12: the bits have other names there (TCR_TCMA1 for
  TCR_EL1_TCMA1). ]
Signed-off-by: MTE Series Team <mte-series@example.org>
---
 arch/arm64/mm/proc.S | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/arch/arm64/mm/proc.S b/arch/arm64/mm/proc.S
+commit 0000000000000000000000000000000000000000 upstream. in the diff stays
"""


def git(cwd, *args, env=None):
    e = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM='1')
    e.update(env or {})
    return subprocess.run(['git', '-C', cwd] + list(args), check=True, env=e,
                          capture_output=True, text=True).stdout.strip()


class Repo(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='kmt-backport-test.')
        self.addCleanup(shutil.rmtree, self.tmp)
        self.linux = os.path.join(self.tmp, 'linux')
        os.makedirs(self.linux)
        git(self.linux, 'init', '-q')
        with open(os.path.join(self.linux, 'f'), 'w') as f:
            f.write('x\n')
        git(self.linux, 'add', 'f')
        env = {'GIT_AUTHOR_NAME': 'Ann Upstream', 'GIT_AUTHOR_EMAIL': 'ann@example.org',
               'GIT_AUTHOR_DATE': 'Tue, 6 Jan 2026 10:00:00 -0800',
               'GIT_COMMITTER_NAME': 'Mae Maintainer',
               'GIT_COMMITTER_EMAIL': 'mae@example.org'}
        git(self.linux, 'commit', '-q', '-m', SUBJECT + '\n\n' + UPSTREAM_BODY, env=env)
        self.cid = git(self.linux, 'rev-parse', 'HEAD')
        self.patches = os.path.join(self.tmp, 'patches')
        os.makedirs(self.patches)

    def write(self, name, text):
        with open(os.path.join(self.patches, name), 'w') as f:
            f.write(text)

    def read(self, name):
        with open(os.path.join(self.patches, name)) as f:
            return f.read()

    def stored(self, **kw):
        return STORED.format(**dict(dict(cid=self.cid, placeholder=backport.PLACEHOLDER),
                                    **kw))


class FillTest(Repo):
    def test_changelog_filled_notes_and_signoff_kept(self):
        self.write('0014-x.patch', self.stored())
        self.write('0001-own.patch', STORED.replace('commit {cid} upstream.\n', 'Ours.\n'))
        out = backport.fill_series(self.linux, self.patches)
        self.assertEqual(out, [('0014-x.patch', self.cid, True)])
        text = self.read('0014-x.patch')
        head, _, diff = text.partition('\n---\n')
        body = head.split('\n\n', 1)[1]
        self.assertTrue(body.startswith('commit %s upstream.\n\nThe kernel does the thing'
                                        % self.cid), body)
        self.assertIn('the repository never stores it.', body)
        self.assertNotIn(backport.PLACEHOLDER, body)
        # Upstream's trailers once each, then the note, then the sender.
        self.assertEqual(body.count('Signed-off-by: Ann Upstream'), 1)
        self.assertTrue(body.rstrip().endswith(
            'Signed-off-by: Mae Maintainer <mae@example.org>\n'
            '[ 6.12: the bits have other names there (TCR_TCMA1 for\n'
            '  TCR_EL1_TCMA1). ]\n'
            'Signed-off-by: MTE Series Team <mte-series@example.org>'), body)
        # The author date is upstream's; the diff is never touched.
        self.assertIn('\nDate: Tue, 6 Jan 2026 10:00:00 -0800\n', head)
        self.assertIn('+commit 0000000000000000000000000000000000000000 upstream. in the '
                      'diff stays', diff)
        # A patch without a commit line is not a backport: untouched.
        self.assertEqual(self.read('0001-own.patch'),
                         STORED.replace('commit {cid} upstream.\n', 'Ours.\n'))

    def test_idempotent(self):
        self.write('0014-x.patch', self.stored())
        backport.fill_series(self.linux, self.patches)
        once = self.read('0014-x.patch')
        self.assertEqual(backport.fill_series(self.linux, self.patches),
                         [('0014-x.patch', self.cid, False)])
        self.assertEqual(self.read('0014-x.patch'), once)

    def test_dry_run_writes_nothing(self):
        self.write('0014-x.patch', self.stored())
        out = backport.fill_series(self.linux, self.patches, dry_run=True)
        self.assertEqual(out, [('0014-x.patch', self.cid, True)])
        self.assertEqual(self.read('0014-x.patch'), self.stored())

    def test_no_note(self):
        text = self.stored().replace('[ 6.12: the bits have other names there (TCR_TCMA1 for\n'
                                     '  TCR_EL1_TCMA1). ]\n', '')
        self.write('0014-x.patch', text)
        backport.fill_series(self.linux, self.patches)
        body = self.read('0014-x.patch').partition('\n---\n')[0]
        self.assertTrue(body.endswith('Signed-off-by: Mae Maintainer <mae@example.org>\n'
                                      'Signed-off-by: MTE Series Team '
                                      '<mte-series@example.org>'), body)


class RefuseTest(Repo):
    def assertRefused(self, text, words):
        self.write('0014-x.patch', text)
        self.write('0015-y.patch', self.stored().replace('[PATCH 14/15]', '[PATCH 15/15]'))
        before = self.read('0015-y.patch')
        with self.assertRaises(log.StepError) as cm:
            backport.fill_series(self.linux, self.patches)
        self.assertIn(words, str(cm.exception))
        # Nothing is written when any backport is refused.
        self.assertEqual(self.read('0014-x.patch'), text)
        self.assertEqual(self.read('0015-y.patch'), before)

    def test_missing_id(self):
        self.assertRefused(self.stored(cid='1' * 40), 'is not in')

    def test_subject_differs(self):
        self.assertRefused(self.stored().replace('Do the thing in the\n kernel',
                                                 'do the thing in the\n kernel'),
                           'is not the upstream subject')

    def test_author_differs(self):
        self.assertRefused(self.stored().replace('From: Ann Upstream <ann@example.org>',
                                                 'From: Other One <other@example.org>'),
                           'is not the upstream author')

    def test_stored_trailer_not_upstream(self):
        self.assertRefused(self.stored().replace(
            'Reported-by: Rita', 'Tested-by: Tom Tester <tom@example.org>\nReported-by: Rita'),
            'would be lost')

    def test_unclosed_note(self):
        self.assertRefused(self.stored().replace('TCR_EL1_TCMA1). ]', 'TCR_EL1_TCMA1).'),
                           'no "]" closes it')

    def test_not_a_repository(self):
        with self.assertRaises(log.StepError) as cm:
            backport.fill_series(self.patches, self.patches)
        self.assertIn('not a git repository', str(cm.exception))


class StoredFormTest(Repo):
    def test_placeholder_form_passes(self):
        self.assertEqual(backport.stored_form_problems(self.stored()), [])

    def test_stored_changelog_fails(self):
        self.write('0014-x.patch', self.stored())
        backport.fill_series(self.linux, self.patches)
        problems = backport.stored_form_problems(self.read('0014-x.patch'), '0014-x.patch')
        self.assertEqual(len(problems), 1)
        self.assertIn('never stored', problems[0])

    def test_series_author_fails(self):
        text = self.stored().replace('From: Ann Upstream <ann@example.org>',
                                     'From: MTE Series Team <mte-series@example.org>')
        self.assertIn('upstream author', ' '.join(backport.stored_form_problems(text)))


if __name__ == '__main__':
    unittest.main()
