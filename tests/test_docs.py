import os
import tempfile
import unittest

from kmt import docs, log


class ReplaceSectionTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.repo = self.tmp.name
        os.makedirs(os.path.join(self.repo, 'docs'))
        self.write('README.md', '# front\n<!-- a:begin -->\nold a\n<!-- a:end -->\n')
        self.write('docs/bench.md', 'x\n<!-- b:begin -->\nold b\n<!-- b:end -->\ny\n')

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        with open(os.path.join(self.repo, name), 'w') as f:
            f.write(text)

    def read(self, name):
        with open(os.path.join(self.repo, name)) as f:
            return f.read()

    def test_section_in_a_docs_page(self):
        self.assertEqual(docs.replace_section('b', 'new b\n', self.repo), 'docs/bench.md')
        self.assertEqual(self.read('docs/bench.md'),
                         'x\n<!-- b:begin -->\nnew b\n<!-- b:end -->\ny\n')
        self.assertIn('old a', self.read('README.md'))

    def test_section_in_the_readme(self):
        self.assertEqual(docs.replace_section('a', 'new a\n', self.repo), 'README.md')
        self.assertIn('new a', self.read('README.md'))

    def test_missing_section_is_an_error(self):
        with self.assertRaisesRegex(log.StepError, 'no <!-- c:begin/end -->'):
            docs.replace_section('c', 't\n', self.repo)

    def test_a_section_in_two_pages_is_an_error(self):
        self.write('docs/other.md', '<!-- a:begin -->\n<!-- a:end -->\n')
        with self.assertRaisesRegex(log.StepError, '2 <!-- a:begin/end -->'):
            docs.replace_section('a', 't\n', self.repo)
        self.assertIn('old a', self.read('README.md'))

    def test_the_repository_sections_each_live_in_one_page(self):
        markers = {}
        for page in docs.pages():
            with open(page) as f:
                for m in __import__('re').finditer(r'<!-- (\S+):begin -->', f.read()):
                    markers.setdefault(m.group(1), []).append(page)
        self.assertTrue(markers)
        self.assertEqual({k: v for k, v in markers.items() if len(v) != 1}, {})
