"""make signoff: the submitter's identity on every patch."""

import os
import shutil
import tempfile
import unittest

from kmt import identity, log

ME = 'Jane Hacker <jane@example.com>'
PATCH = """From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: MTE Series Team <mte-series@example.org>
Date: Mon, 30 Nov 2026 01:05:52 +0000
Subject: [PATCH 02/11] arm64: mte: something

Body.

Reviewed-by: Some One <some@example.net>
Signed-off-by: MTE Series Team <mte-series@example.org>
---
 arch/arm64/kernel/mte.c | 1 +
+Signed-off-by: MTE Series Team <mte-series@example.org> in the diff stays
"""


class SignTest(unittest.TestCase):
    def test_author_and_signoff_replaced(self):
        out = identity.sign(PATCH, ME)
        head, _, diff = out.partition('\n---\n')
        self.assertIn('\nFrom: %s\n' % ME, head)
        self.assertIn('Signed-off-by: %s' % ME, head)
        self.assertNotIn('mte-series@example.org', head)
        self.assertIn('Reviewed-by: Some One <some@example.net>', head)
        # The diff is never touched.
        self.assertIn('mte-series@example.org> in the diff stays', diff)

    def test_idempotent(self):
        once = identity.sign(PATCH, ME)
        self.assertEqual(identity.sign(once, ME), once)
        self.assertEqual(once.count('Signed-off-by: ' + ME), 1)

    def test_other_author_gets_submitter_signoff_appended(self):
        other = PATCH.replace('From: MTE Series Team <mte-series@example.org>',
                              'From: Carl Worth <carl@example.com>').replace(
            'Signed-off-by: MTE Series Team <mte-series@example.org>',
            'Signed-off-by: Carl Worth <carl@example.com>')
        out = identity.sign(other, ME)
        self.assertIn('From: Carl Worth <carl@example.com>', out)
        self.assertIn('Signed-off-by: Carl Worth <carl@example.com>\n'
                      'Signed-off-by: %s\n---' % ME, out)

    def test_cover_letter_gets_no_signoff(self):
        cover = PATCH.replace('[PATCH 02/11]', '[PATCH 00/11]').replace(
            'Signed-off-by: MTE Series Team <mte-series@example.org>\n', '')
        out = identity.sign(cover, ME)
        self.assertNotIn('Signed-off-by', out.partition('\n---\n')[0])
        self.assertIn('From: ' + ME, out)

    def test_bad_identity_refused(self):
        for bad in ('Jane', 'jane@example.com', identity.PLACEHOLDER, 'J <a b@c>'):
            with self.assertRaises(log.StepError):
                identity.sign(PATCH, bad)

    def test_sign_series_rewrites_files(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        with open(os.path.join(d, '0001-x.patch'), 'w') as f:
            f.write(PATCH)
        with open(os.path.join(d, 'series'), 'w') as f:
            f.write('0001-x.patch\n')
        self.assertEqual(identity.sign_series(ME, d), ['0001-x.patch'])
        with open(os.path.join(d, '0001-x.patch')) as f:
            self.assertIn('From: ' + ME, f.read())
        self.assertEqual(identity.sign_series(ME, d), [])

    def test_sign_series_signs_the_postings_too(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        os.makedirs(os.path.join(d, 'postings', 'strscpy'))
        for name in ('0001-x.patch', os.path.join('postings', 'strscpy', '0001-y.patch')):
            with open(os.path.join(d, name), 'w') as f:
                f.write(PATCH)
        self.assertEqual(identity.sign_series(ME, d),
                         ['0001-x.patch', os.path.join('postings', 'strscpy', '0001-y.patch')])
        with open(os.path.join(d, 'postings', 'strscpy', '0001-y.patch')) as f:
            self.assertIn('Signed-off-by: ' + ME, f.read())


if __name__ == '__main__':
    unittest.main()
