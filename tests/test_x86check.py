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
