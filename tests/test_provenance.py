"""kmt/provenance.py: no figure from another base's run, no option the
base does not have (issue 49)."""

import unittest

from kmt import provenance

# The shape of the refcount-constants posting's table header before v2:
# 6.12 counts in a posting based on v7.3.4.
TABLE = """Instructions per operation with the same change on 6.12.117, exact
(QEMU 10.0 TCG, -icount shift=0, one vCPU, kasan=off, GCC 12):

                      arm64 LSE
  inc                    3     7   6
"""

BLOAT = """In code size,
scripts/bloat-o-meter -t on an arm64 vmlinux (GCC 12, allnoconfig plus
a QEMU virt platform; measured on 6.12.117), without and with this
patch:
"""


class FigureTest(unittest.TestCase):
    def test_a_figure_of_another_base_is_found(self):
        found = provenance.figure_problems(TABLE, 'v7.3.4')
        self.assertEqual(len(found), 1)
        self.assertIn('6.12.117', found[0])
        self.assertIn('Instructions per operation', found[0])

    def test_bloat_o_meter_of_another_base_is_found(self):
        self.assertEqual(len(provenance.figure_problems(BLOAT, 'v7.3.4')), 1)

    def test_the_base_itself_is_fine(self):
        text = TABLE.replace('6.12.117', '7.3.4')
        self.assertEqual(provenance.figure_problems(text, 'v7.3.4'), [])
        self.assertEqual(provenance.figure_problems(TABLE, '6.12.118'), [])

    def test_history_stays_allowed(self):
        for text in ('Since v6.13 the suite has 393 cases.',
                     'The generic rework (v5.5) took 3 instructions out.',
                     'It went in v6.4, and saves 4 bytes.'):
            self.assertEqual(provenance.figure_problems(text, 'v7.3.4'), [], text)

    def test_a_release_named_with_its_patch_level_is_not_history(self):
        found = provenance.figure_problems('Measured in v6.12.117: 5 instructions.', 'v7.3.4')
        self.assertEqual(len(found), 1)

    def test_other_version_numbers_are_not_kernels(self):
        for text in ('QEMU 10.0 counts 12 instructions.', 'clang 14.0.6: 40 bytes less.',
                     'It takes 2.5 hours and 0.5% of the instructions.'):
            self.assertEqual(provenance.figure_problems(text, 'v7.3.4'), [], text)

    def test_a_version_without_a_figure_is_fine(self):
        text = 'Backport of 249bf9733198 to 6.12.118; 7.3.4 has it.'
        self.assertEqual(provenance.figure_problems(text, 'v6.1.192'), [])

    def test_on_a_release_counts(self):
        text = 'on 6.12 the same suite fails 15 of its\n366 cases with either comparison.'
        self.assertEqual(len(provenance.figure_problems(text, 'v7.3.4')), 1)
        self.assertEqual(provenance.figure_problems(text.replace('6.12', '7.3'), 'v7.3.4'), [])

    def test_a_before_and_after_is_a_figure(self):
        text = ('The same two patches on 6.12, counted exactly under QEMU, as\n'
                'shipped -> with them:\n\n  inc   3   7   6\n')
        self.assertEqual(len(provenance.figure_problems(text, 'v7.3.4')), 1)

    def test_named_kernels_count(self):
        found = provenance.figure_problems('On Linux 6.12 the suite fails 15 of its 366 cases.',
                                           'v7.3.4')
        self.assertEqual(len(found), 1)


class ConfigTest(unittest.TestCase):
    SYMBOLS = {'KASAN_HW_TAGS', 'ARM64_MTE', 'REFCOUNT_KUNIT_TEST'}

    def test_an_option_the_base_lacks_is_found(self):
        found = provenance.config_problems(
            'on CPUs without LSE atomics (or with ARM64_LSE_ATOMICS=n),', self.SYMBOLS)
        self.assertEqual(len(found), 1)
        self.assertIn('ARM64_LSE_ATOMICS', found[0])
        found = provenance.config_problems('built with CONFIG_ARM64_LSE_ATOMICS', self.SYMBOLS)
        self.assertEqual(len(found), 1)

    def test_options_the_base_has_are_fine(self):
        text = 'CONFIG_KASAN_HW_TAGS=y, ARM64_MTE=y and CONFIG_REFCOUNT_KUNIT_TEST=m.'
        self.assertEqual(provenance.config_problems(text, self.SYMBOLS), [])

    def test_each_option_once(self):
        text = 'CONFIG_FOO_BAR=y here, CONFIG_FOO_BAR again.'
        self.assertEqual(len(provenance.config_problems(text, self.SYMBOLS)), 1)


class MessageTest(unittest.TestCase):
    def test_only_the_message_of_a_patch_is_read(self):
        mail = ('Subject: [PATCH] x\n\nThe message.\n\nSigned-off-by: A <a@b>\n---\n'
                ' f | 1 +\n\ndiff --git a/f b/f\n+/* 6.12.117: 5 instructions */\n')
        self.assertEqual(provenance.message(mail).strip().splitlines()[-1],
                         'Signed-off-by: A <a@b>')


if __name__ == '__main__':
    unittest.main()
