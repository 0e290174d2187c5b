"""The one cached-step helper."""

import os
import tempfile
import unittest

from kmt import cache


class CacheTest(unittest.TestCase):
    def test_key_depends_on_parts_order_and_file_contents(self):
        with tempfile.TemporaryDirectory() as d:
            f = os.path.join(d, 'frag')
            with open(f, 'w') as fh:
                fh.write('CONFIG_A=y\n')
            k = cache.key('allnoconfig', 'gcc', files=[f])
            self.assertEqual(k, cache.key('allnoconfig', 'gcc', files=[f]))
            self.assertNotEqual(k, cache.key('gcc', 'allnoconfig', files=[f]))
            # No ambiguity from concatenation.
            self.assertNotEqual(cache.key('ab', 'c'), cache.key('a', 'bc'))
            with open(f, 'w') as fh:
                fh.write('CONFIG_A=n\n')
            self.assertNotEqual(k, cache.key('allnoconfig', 'gcc', files=[f]))

    def test_fresh_only_after_record_and_with_outputs(self):
        with tempfile.TemporaryDirectory() as d:
            stamp, out = os.path.join(d, 'stamp'), os.path.join(d, 'out')
            self.assertFalse(cache.fresh(stamp, 'k'))
            cache.record(stamp, 'k')
            self.assertTrue(cache.fresh(stamp, 'k'))
            self.assertFalse(cache.fresh(stamp, 'other'))
            self.assertFalse(cache.fresh(stamp, 'k', outputs=(out,)))
            open(out, 'w').close()
            self.assertTrue(cache.fresh(stamp, 'k', outputs=(out,)))
            cache.invalidate(stamp)
            self.assertFalse(cache.fresh(stamp, 'k', outputs=(out,)))
            cache.invalidate(stamp)  # twice is fine


if __name__ == '__main__':
    unittest.main()
