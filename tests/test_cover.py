import unittest


class CoverTablesTest(unittest.TestCase):
    MD = ('Instructions per operation (exact)\n\n| benchmark | kasan | baseline |\n|---|---|---:|\n'
          '| getpid | sync | 274.6 |\n| thread | sync | 32407.2 |\n\n'
          'Kernel tag stores per operation\n\n| benchmark | kasan | tag stores |\n|---|---|---:|\n'
          '| thread | sync | 609 |\n\n'
          'TCG wall time, patched/baseline\n\n| benchmark | kasan | ratio |\n|---|---|---:|\n'
          '| thread | sync | 0.948 |\n')

    def test_only_what_repeats(self):
        from kmt import source
        out = source.cover_tables(self.MD)
        self.assertIn('| getpid | sync | 274.6 |', out)
        self.assertNotIn('32407.2', out)      # a thread instruction count
        self.assertIn('| thread | sync | 609 |', out)   # its exact tag stores
        self.assertNotIn('TCG wall time', out)
        self.assertNotIn('0.948', out)

    def test_the_repeats_column_decides(self):
        from kmt import source
        md = ('Instructions per operation (exact)\n\n'
              '| benchmark | kasan | baseline | repeats |\n|---|---|---:|---|\n'
              '| getpid | sync | 274.6 | yes |\n| fork64m | sync | 5305341.0 | yes |\n'
              '| thread | sync | 32407.2 | no (moves 6.1%) |\n')
        out = source.cover_tables(md)
        self.assertIn('| getpid | sync | 274.6 | yes |', out)
        # measured to repeat: quoted, although NOT_REPEATING names it
        self.assertIn('5305341.0', out)
        self.assertNotIn('32407.2', out)
        self.assertIn('|---|---|---:|---|', out)

    def test_no_tree_no_diffstat(self):
        import tempfile
        from kmt import source
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(source.series_diffstat(d), '')


if __name__ == '__main__':
    unittest.main()
