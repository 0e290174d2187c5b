"""Tag stores by use: the plugin's chain lines, symbolization, the rules,
and make bench's check that the series leaves stacks and page tables
untagged (no kernel, no QEMU). The fixtures are one fork64m region
(kasan sync) captured from the baseline and the patched lean kernels,
with the System.map lines their chains need."""

import os
import unittest

from kmt import attrib, bench, log, plugin

FIXTURES = os.path.join(os.path.dirname(__file__), 'fixtures')


def _load(kernel):
    with open(os.path.join(FIXTURES, 'plugin-chains-%s.counts' % kernel)) as f:
        out = plugin.parse(f.read().splitlines())
    syms = attrib.Symbols.load(os.path.join(FIXTURES, 'System.map-%s' % kernel))
    return out, syms


class SymbolsTest(unittest.TestCase):
    def test_lookup(self):
        s = attrib.Symbols(['ffff800080010000 T _text', 'ffff800080010100 t foo.constprop.0',
                            'ffff800080010200 D some_data', 'ffff800080010300 T bar'])
        self.assertEqual(s.name(0xffff800080010104), 'foo')
        # Data symbols do not end a function.
        self.assertEqual(s.name(0xffff800080010204), 'foo')
        self.assertEqual(s.name(0xffff800080010300), 'bar')
        self.assertEqual(s.name(0x1000), '0x1000')


class RulesTest(unittest.TestCase):
    def test_classify(self):
        cases = [
            (['__kasan_unpoison_range', 'copy_process', 'kernel_clone'], 'stack'),
            (['kasan_unpoison', '__kasan_unpoison_pages', 'post_alloc_hook',
              '__alloc_pages_noprof', '__pte_alloc', 'copy_page_range'], 'page_table'),
            (['kasan_poison', '__kasan_poison_pages', 'free_unref_page', '__folio_put',
              'tlb_remove_table_rcu', 'rcu_core'], 'page_table'),
            # The RCU callback also frees the batch page: not a table.
            (['kasan_poison', '__kasan_poison_pages', 'free_unref_page', '__free_pages',
              'free_pages', 'tlb_remove_table_rcu', 'rcu_core'], 'mmu_gather_batch'),
            # Slab objects allocated from copy_process are not its stack.
            (['kasan_unpoison', '__kasan_slab_alloc', 'kmem_cache_alloc_node_noprof',
              'copy_process'], 'slab'),
            (['kasan_unpoison', 'something_new'], 'other'),
            # A stack freed by vfree() from an RCU callback: deferred.
            (['kasan_poison', '__kasan_poison_pages', 'free_unref_page', '__free_pages', 'vfree',
              'delayed_vfree_work', 'process_one_work'], 'stack'),
            # A softirq's slab free that interrupted __pte_alloc() is not a
            # page table: the chain is cut at the interrupt entry.
            (['kasan_poison', '__kasan_slab_free', 'kmem_cache_free', 'free_task', 'rcu_core',
              'handle_softirqs', 'irq_exit_rcu', 'el1_interrupt', 'el1h_64_irq_handler',
              'el1h_64_irq', '__pte_alloc', 'copy_page_range'], 'slab'),
        ]
        for frames, use in cases:
            self.assertEqual(attrib.classify(frames), use, frames)

    def test_classify_61_names(self):
        # Linux 6.1's names for the same paths (BASE=6.1).
        cases = [
            # vfree() from the RCU callback defers to free_work().
            (['kasan_poison', '__kasan_poison_pages', 'free_unref_page', '__free_pages',
              '__vunmap', 'free_work', 'process_one_work'], 'stack'),
            # The mmu_gather's batch page, before folios.
            (['kasan_unpoison', '__kasan_unpoison_pages', 'post_alloc_hook',
              'get_page_from_freelist', '__alloc_pages', '__get_free_pages',
              '__tlb_remove_page_size', 'zap_pte_range'], 'mmu_gather_batch'),
            # Objects of a new slab, set up before 6.5's new_object hooks.
            (['kasan_unpoison', '__kasan_unpoison_object_data', 'setup_object',
              'allocate_slab', '___slab_alloc'], 'slab'),
            (['kasan_poison', '__kasan_poison_object_data', 'setup_object',
              'allocate_slab', '___slab_alloc'], 'slab'),
            # A slab page freed by a kfree() in the deferred vfree() (its
            # vm_struct or pages array): slab's, not the stack's.
            (['kasan_poison', '__kasan_poison_pages', 'free_pcp_prepare', 'free_unref_page',
              '__free_pages', '__free_slab', '__slab_free', '__kmem_cache_free', 'kfree',
              '__vunmap', 'free_work', 'process_one_work'], 'slab'),
        ]
        for frames, use in cases:
            self.assertEqual(attrib.classify(frames), use, frames)

    def test_owner(self):
        self.assertEqual(attrib.owner(['kasan_unpoison', '__kasan_unpoison_pages',
                                       'post_alloc_hook', 'get_page_from_freelist',
                                       '__alloc_pages_noprof', '__pte_alloc']), '__pte_alloc')


class CapturedTest(unittest.TestCase):
    def test_chains_parsed(self):
        out, _ = _load('baseline')
        self.assertEqual(list(out.chains), [1])
        cls, count, pcs = out.chains[1][0]
        self.assertIn(cls, plugin.TAG_STORES)
        self.assertGreater(count, 0)
        self.assertGreater(len(pcs), 2)
        self.assertEqual(out.exit['chain_read_errors'], 0)

    def _uses(self, kernel):
        out, syms = _load(kernel)
        recs = bench.use_records(kernel, 'sync', 'fork64m', 5, out.regions[0],
                                 out.chains[1], syms, 'log')
        return {r['use']: r['value'] for r in recs}, recs

    def test_baseline_tags_stacks_and_page_tables(self):
        uses, _ = self._uses('baseline')
        # One 16 KiB stack per fork: 255 DC GVA + 4 STG (cached stack re-tagged).
        self.assertEqual(uses['stack'], 259)
        self.assertGreater(uses['page_table'], 4000)
        self.assertEqual(uses['other'], 0)

    def test_patched_tags_neither(self):
        uses, recs = self._uses('patched')
        self.assertEqual(uses['stack'], 0)
        self.assertEqual(uses['page_table'], 0)
        self.assertGreater(uses['slab'], 0)
        self.assertGreater(uses['mmu_gather_batch'], 0)
        self.assertEqual(bench.untagged_problems(recs, same=False, base_untagged=False), [])

    def test_lost_chain_is_an_error(self):
        out, syms = _load('patched')
        with self.assertRaises(log.StepError):
            bench.use_records('patched', 'sync', 'fork64m', 5, out.regions[0],
                              out.chains[1][1:], syms, 'log')


class UntaggedProblemsTest(unittest.TestCase):
    def _rec(self, kernel, use, value, b='fork64m', mode='sync'):
        return {'benchmark': b, 'metric': 'tag_stores_use_per_op', 'kernel': kernel,
                'kasan': mode, 'use': use, 'value': value}

    def test_patched_page_table_tag_is_a_problem(self):
        recs = [self._rec('baseline', 'page_table', 4636), self._rec('patched', 'page_table', 1)]
        problems = bench.untagged_problems(recs, same=False, base_untagged=False)
        self.assertEqual(len(problems), 1)
        self.assertIn('page_table', problems[0])

    def test_empty_series_is_not_checked_for_zero(self):
        recs = [self._rec('baseline', 'page_table', 4636),
                self._rec('patched', 'page_table', 4636)]
        self.assertEqual(bench.untagged_problems(recs, same=True, base_untagged=False), [])

    def test_baseline_without_attribution_is_a_problem(self):
        recs = [self._rec('baseline', 'stack', 0, b='thread')]
        self.assertIn('attribution', bench.untagged_problems(recs, same=False, base_untagged=False)[0])

    def test_a_base_that_skips_stacks_wants_none_on_either_kernel(self):
        recs = [self._rec('baseline', 'stack', 0, b='thread'),
                self._rec('patched', 'stack', 0, b='thread')]
        self.assertEqual(bench.untagged_problems(recs, same=True, base_untagged=True), [])
        recs[0]['value'] = 259
        problems = bench.untagged_problems(recs, same=True, base_untagged=True)
        self.assertEqual(len(problems), 1)
        self.assertIn('baseline kernel', problems[0])

    def test_reverted_kernel_must_tag_and_read_tfsr_again(self):
        # A base that skips stacks itself (7.3), with its own version undone.
        recs = [self._rec('baseline', 'stack', 0, b='thread'),
                self._rec('patched', 'stack', 0, b='thread'),
                self._rec('reverted', 'stack', 259, b='thread'),
                self._rec('reverted', 'page_table', 4636),
                {'benchmark': 'getpid', 'metric': 'tfsr_reads_per_op', 'kernel': 'reverted',
                 'kasan': 'sync', 'value': 2.0}]
        self.assertEqual(bench.untagged_problems(recs, same=False, base_untagged=True), [])
        names = [n for n, _ in bench.untagged_checks(recs, same=False, base_untagged=True)]
        self.assertIn('thread/sync/stack-reverted', names)
        self.assertIn('fork64m/sync/page_table-reverted', names)
        self.assertIn('getpid/sync/tfsr-reverted', names)
        # A revert that leaves stacks untagged, or TFSR_EL1 unread, is not one.
        recs[2]['value'] = 0
        recs[4]['value'] = 0.0
        problems = bench.untagged_problems(recs, same=False, base_untagged=True)
        self.assertEqual(len(problems), 2)
        self.assertIn('reverted kernel, kasan sync, thread', problems[0])
        self.assertIn('TFSR_EL1', problems[1])

    def test_a_series_without_part_2_must_still_tag(self):
        # A series without part 2 (6.1's, before part 2 was ported): the
        # patched kernel tags stacks and page tables as the baseline does,
        # and must be seen doing so.
        recs = [self._rec('baseline', 'page_table', 4636), self._rec('patched', 'page_table', 3886)]
        self.assertEqual(bench.untagged_problems(recs, same=False, base_untagged=False,
                                                 series_untags=False), [])
        names = [n for n, _ in bench.untagged_checks(recs, same=False, base_untagged=False,
                                                       series_untags=False)]
        self.assertEqual(names, ['fork64m/sync/page_table-attributed',
                                 'fork64m/sync/page_table-still-tagged'])
        recs[1]['value'] = 0
        problems = bench.untagged_problems(recs, same=False, base_untagged=False,
                                           series_untags=False)
        self.assertEqual(len(problems), 1)
        self.assertIn('patched kernel', problems[0])

    def test_kasan_off_is_not_checked(self):
        recs = [self._rec('baseline', 'stack', 0, b='thread', mode='off')]
        self.assertEqual(bench.untagged_problems(recs, same=False, base_untagged=False), [])


if __name__ == '__main__':
    unittest.main()


class AddressTest(unittest.TestCase):
    def test_name_to_address(self):
        syms = attrib.Symbols(['ffff800080001000 T a\n', 'ffff800080002000 t b\n',
                               'ffff800080003000 D data\n'])
        self.assertEqual(syms.address('b'), 0xffff800080002000)
        self.assertIsNone(syms.address('data'))     # not text
        self.assertIsNone(syms.address('nope'))
