"""KASAN's cost over kasan=off by cause, from two flat profiles."""

import json
import os
import unittest

from kmt import bench, kasancost, log, paths


OFF = {'memset': 600, 'kmem_cache_alloc_noprof': 4000, 'copy_process': 9000,
       'clear_page': 1000, 'el0_svc': 2000}
SYNC = {'memset': 200, 'kmem_cache_alloc_noprof': 4200, 'copy_process': 9000,
        '__kasan_slab_alloc': 1800, '__kasan_slab_free': 1000, 'clear_page': 0,
        '__kasan_unpoison_pages': 1200, 'el0_svc': 2000}


class KasanCostTest(unittest.TestCase):
    def test_cause_of(self):
        self.assertEqual(kasancost.cause_of('__kasan_slab_alloc'), 'slab object tagging at alloc')
        self.assertEqual(kasancost.cause_of('__kasan_mempool_unpoison_object'),
                         'slab object tagging at alloc')
        self.assertEqual(kasancost.cause_of('el0t_64_sync_handler'),
                         'exception entry and exit, context switch')
        self.assertEqual(kasancost.cause_of('kmem_cache_alloc_noprof'), kasancost.OTHER)
        self.assertIn(kasancost.OTHER, kasancost.CAUSE_NAMES)
        self.assertEqual(len(set(kasancost.CAUSE_NAMES)), len(kasancost.CAUSE_NAMES))
        for c, detects, patterns in kasancost.CAUSES:
            self.assertTrue(detects and patterns, c)

    def test_stack_traces(self):
        # What kasan.stacktrace=off turns off: the stack walk and the
        # stack depot under kasan_save_alloc_info() / kasan_save_free_info().
        for fn in ('kasan_save_alloc_info', 'kasan_save_free_info', 'kasan_save_stack',
                   'kasan_save_track', 'stack_trace_save', 'arch_stack_walk',
                   'stack_trace_consume_entry', 'stack_depot_save_flags', 'kunwind_next'):
            self.assertEqual(kasancost.cause_of(fn), 'allocation and free stack traces', fn)
        self.assertEqual(kasancost.cause_of('kasan_report'), 'report path')
        self.assertEqual(kasancost.cause_of('stack_trace_print'), kasancost.OTHER)

    def test_attribute(self):
        a = kasancost.attribute(OFF, SYNC, 10)
        # ((200 - 600) + (4200 - 4000) + 1800 + 1000 + (0 - 1000) + 1200) / 10
        self.assertEqual(a['gap'], 280.0)
        self.assertEqual(a['causes']['slab object tagging at alloc'], 180.0)
        self.assertEqual(a['causes']['slab object poisoning at free'], 100.0)
        self.assertEqual(a['causes']['page tagging at alloc'], 120.0)
        self.assertEqual(a['causes']['memory initialised by memset() or clear_page() instead'],
                         -140.0)
        self.assertEqual(a['causes'][kasancost.OTHER], 20.0)
        self.assertNotIn('report path', a['causes'])
        # |other| 20 of 20 + 180 + 100 + 120 + 40 + 100 = 560 absolute
        self.assertEqual(a['covered_pct'], round(100 * 540 / 560, 1))
        self.assertEqual(a['functions'][kasancost.OTHER], [('kmem_cache_alloc_noprof', 20.0)])
        with self.assertRaises(ValueError):
            kasancost.attribute(OFF, SYNC, 0)
        same = kasancost.attribute(OFF, OFF, 5)
        self.assertEqual((same['gap'], same['covered_pct'], same['causes']), (0.0, 100.0, {}))

    def test_layout_names_what_the_reference_shows(self):
        """The part of an unnamed function's difference that a kasan=off
        reference kernel with the KASAN slab layout shows too is the
        layout's; no more than the difference, and only with its sign."""
        off = {'__slab_free': 1000, 'setup_object': 500, '__free_one_page': 300,
               '__kasan_slab_alloc': 0}
        on = {'__slab_free': 1400, 'setup_object': 560, '__free_one_page': 200,
              '__kasan_slab_alloc': 900}
        ref = {'__slab_free': 1300, 'setup_object': 700, '__free_one_page': 400,
               '__kasan_slab_alloc': 50}
        layout = kasancost.layout_differences(off, ref, 10)
        self.assertEqual(layout, {'__slab_free': 30.0, 'setup_object': 20.0,
                                  '__free_one_page': 10.0, '__kasan_slab_alloc': 5.0})
        a = kasancost.attribute(off, on, 10, layout=layout)
        # __slab_free: +40, 30 of it the layout's; setup_object: +6, all of
        # it (the reference's 20 is more); __free_one_page: -10, the
        # reference goes the other way: other; a named function keeps its
        # cause whatever the reference shows.
        self.assertEqual(a['causes'][kasancost.LAYOUT], 36.0)
        self.assertNotIn(kasancost.OTHER, a['causes'])     # +10 and -10
        self.assertEqual(dict(a['functions'][kasancost.OTHER]),
                         {'__slab_free': 10.0, '__free_one_page': -10.0})
        self.assertEqual(a['causes']['slab object tagging at alloc'], 90.0)
        self.assertEqual(a['gap'], 126.0)
        self.assertIn(kasancost.LAYOUT, kasancost.DETECTS)
        without = kasancost.attribute(off, on, 10)
        self.assertNotIn(kasancost.LAYOUT, without['causes'])
        self.assertLess(without['covered_pct'], a['covered_pct'])

    def test_rows_and_repeat(self):
        profiles = {('off', 'thread'): OFF, ('sync', 'thread'): SYNC,
                    ('off', 'getpid'): {'el0_svc': 100}, ('sync', 'getpid'): {'el0_svc': 100}}
        shifted = {('off', 'thread'): OFF, ('sync', 'thread'): dict(SYNC, memset=234)}
        rows = bench.attrib_rows(profiles, {'getpid': 100, 'thread': 10}, ('off', 'sync'),
                                 shifted)
        self.assertEqual([(b, m) for b, m, _, _ in rows], [('getpid', 'sync'), ('thread', 'sync')])
        self.assertIsNone(rows[0][3])
        self.assertEqual(rows[1][3], 1.21)    # the gap moved 3.4 of 280
        with self.assertRaises(Exception):
            bench.attrib_rows({('sync', 'thread'): SYNC}, {'thread': 10}, ('off', 'sync'))

    def test_markdown(self):
        rows = [('thread', 'sync', kasancost.attribute(OFF, SYNC, 10), 0.5)]
        text = kasancost.markdown(rows)
        self.assertIn('| thread | sync | +280.0 | 0.50% | 96% | - | +180.0 | +100.0 |', text)
        self.assertIn('- thread (sync): slab object tagging at alloc: __kasan_slab_alloc +180.0',
                      text)
        self.assertIn('- report path: nothing by itself', text)

    def test_rows_from_result(self):
        # The JSON a PLAN=attrib run writes keeps the profiles, so the
        # table can be made again with today's causes, nothing booted.
        first = {('off', 'thread'): OFF, ('sync', 'thread'): SYNC}
        shifted = {('off', 'thread'): OFF, ('sync', 'thread'): dict(SYNC, memset=234)}
        result = json.loads(json.dumps({'ops': {'thread': 10}, 'profiles': {
            'first': bench._nest(first), 'shifted': bench._nest(shifted)}}))
        again = bench.attrib_rows_from_result(result)
        self.assertEqual(again, bench.attrib_rows(first, {'thread': 10}, bench.MODES, shifted))
        self.assertEqual(again[0][3], 1.21)
        no_shift = dict(result, profiles={'first': result['profiles']['first']})
        self.assertIsNone(bench.attrib_rows_from_result(no_shift)[0][3])
        with self.assertRaises(log.StepError):
            bench.attrib_rows_from_result({'rows': []})

    def test_agreement(self):
        # What both boots show: a tick's work in one boot only (a
        # kmem_cache_free in the first, none in the second) is no part of
        # it, and of a difference both show, the smaller.
        first = kasancost.attribute(OFF, dict(SYNC, kmem_cache_free=300), 10)
        second = kasancost.attribute(OFF, dict(SYNC, __kasan_slab_alloc=1700), 10)
        both = kasancost.agreement(first, second)
        # 280 of SYNC with __kasan_slab_alloc 170 instead of 180
        self.assertEqual(both['gap'], 270.0)
        # |other| 20 (kmem_cache_alloc_noprof) of 20 + 170 + 100 + 120 + 40 + 100
        self.assertEqual(both['covered_pct'], round(100 * 530 / 550, 1))
        flipped = kasancost.attribute(OFF, dict(SYNC, copy_process=8000), 10)
        again = kasancost.attribute(OFF, dict(SYNC, copy_process=9500), 10)
        self.assertEqual(kasancost.agreement(flipped, again)['gap'], 280.0)
        rows = bench.attrib_rows({('off', 'thread'): OFF, ('sync', 'thread'): SYNC},
                                 {'thread': 10}, ('off', 'sync'),
                                 {('off', 'thread'): OFF, ('sync', 'thread'): SYNC})
        self.assertEqual(rows[0][2]['both_boots'], {'gap': 280.0, 'covered_pct': 96.4})
        self.assertIn('| +280.0, 96% |', kasancost.markdown(rows))

    def test_blocks_split_other(self):
        # kmem_cache_alloc_noprof: +200 in all, of which the blocks at 0x20
        # and 0x24 run only with KASAN (its hook's call site, 230) and the
        # block at 0x30 only with kasan=off (the memset() call, 50); the
        # block both ran lost 20. A named function is not split.
        # Blocks: [start, instructions in it, instructions executed]. The
        # KASAN boot's block at 0x10 is cut at 0x20 where kasan=off's runs
        # on (a branch target only KASAN's path has): 0x10-0x1c both ran.
        off_b = {'kmem_cache_alloc_noprof': [['10', 8, 3160], ['30', 2, 50]],
                 '__kasan_slab_alloc': []}
        on_b = {'kmem_cache_alloc_noprof': [['10', 4, 1572], ['20', 4, 1588], ['40', 2, 70],
                                            ['50', 1, 200]],
                '__kasan_slab_alloc': [['40', 1, 1800]]}
        on = dict(SYNC, kmem_cache_alloc_noprof=4200)
        a = kasancost.attribute(OFF, on, 10, off_b, on_b)
        self.assertEqual(a['causes'][kasancost.HOOK_SITES], 27.0)
        self.assertEqual(a['causes'][kasancost.OFF_SITES], -5.0)
        self.assertEqual(a['causes'][kasancost.OTHER], -2.0)
        self.assertEqual(a['causes']['slab object tagging at alloc'], 180.0)
        self.assertEqual(a['gap'], kasancost.attribute(OFF, on, 10)['gap'])
        self.assertEqual(a['functions'][kasancost.HOOK_SITES],
                         [('kmem_cache_alloc_noprof', 27.0)])
        # A block's executions spread over its instructions, blocks that
        # overlap add up.
        self.assertEqual(kasancost.executions([['10', 2, 10], ['14', 1, 3]]),
                         {0x10: 5, 0x14: 8})
        self.assertEqual(kasancost.split_blocks([['0', 2, 10]], [['4', 2, 6]]), (3.0, 5.0))
        # What both boots show is taken per cause and function.
        both = kasancost.agreement(a, a)
        self.assertEqual(both['gap'], a['gap'])
        self.assertEqual(both['covered_pct'], a['covered_pct'])
        self.assertIn(kasancost.HOOK_SITES, kasancost.DETECTS)

    def test_plans(self):
        for name in ('attrib', 'attrib-gki'):
            p = bench.PLANS[name]
            self.assertEqual(p['modes'][0], 'off')
            self.assertTrue(p['attrib_only'])
            self.assertNotIn('all', p['bench'])
        # The GKI plan's layout reference is a patch of this repository.
        ref = bench.PLANS['attrib-gki']['layout_reference']
        self.assertTrue(os.path.exists(os.path.join(paths.REPO, ref)), ref)
        with open(os.path.join(paths.REPO, ref)) as f:
            self.assertIn('arch_slab_minalign', f.read())

    def test_profile_boots_first_and_shifted(self):
        """profile_boots() boots each mode, and again with the timer phase
        shifted when the plan shifts it, keying profiles by (shift, mode,
        benchmark), and keeps the profiles' own check problems."""
        from unittest import mock
        from kmt import plugin
        booted = []

        def boot(kernel, image, initrd, mode, bench_arg, icount, tag, **kw):
            booted.append((kernel, mode, bench_arg, tag))
            return {'thread': {'ops': 200}}, 'log-%s' % tag, mock.Mock(regions=[])
        plan = {'bench': 'thread=200', 'phase_shift': 7}
        with mock.patch.object(bench, '_boot', side_effect=boot), \
                mock.patch.object(plugin, 'compare_profile', return_value=['odd']), \
                mock.patch.object(plugin, 'attribute',
                                  return_value={'thread': (200, {'region': 1})}), \
                mock.patch.object(plugin, 'profile_by_function', return_value={'f': 1}), \
                mock.patch.object(plugin, 'profile_by_block', return_value={'f': []}):
            boots, blocks, problems = bench.profile_boots(
                'layout', 'Image', 'initrd', ('off',), plan, 'p-layout', 'so', (), None,
                'layout reference')
        self.assertEqual(booted, [('layout', 'off', 'thread=200', 'p-layout'),
                                  ('layout', 'off', '-s,7,thread=200', 'p-layout-shift')])
        self.assertEqual(boots, {(0, 'off', 'thread'): (200, {'f': 1}),
                                 (7, 'off', 'thread'): (200, {'f': 1})})
        self.assertEqual(set(blocks), set(boots))
        self.assertEqual(len(problems), 2)
        self.assertIn('layout reference, kasan off, timer phase shifted: odd', problems[1])
        # Without a phase shift: one boot per mode.
        booted.clear()
        with mock.patch.object(bench, '_boot', side_effect=boot), \
                mock.patch.object(plugin, 'compare_profile', return_value=[]), \
                mock.patch.object(plugin, 'attribute',
                                  return_value={'thread': (200, {'region': 1})}), \
                mock.patch.object(plugin, 'profile_by_function', return_value={}), \
                mock.patch.object(plugin, 'profile_by_block', return_value={}):
            bench.profile_boots('patched', 'I', 'r', ('off', 'sync'), {'bench': 'x=1'}, 't',
                                'so', (), None, 'profile')
        self.assertEqual([b[1] for b in booted], ['off', 'sync'])

    def test_rows_with_the_layout_reference(self):
        off = {'__slab_free': 1000, '__kasan_slab_alloc': 0}
        on = {'__slab_free': 1400, '__kasan_slab_alloc': 900}
        ref = {'__slab_free': 1300}
        profiles = {('off', 'thread'): off, ('async', 'thread'): on}
        rows = bench.attrib_rows(profiles, {'thread': 10}, ('off', 'async'),
                                 layout={'thread': ref})
        (_, _, a, _), = rows
        self.assertEqual(a['causes'][kasancost.LAYOUT], 30.0)
        self.assertEqual(a['causes'][kasancost.OTHER], 10.0)
        plain = bench.attrib_rows(profiles, {'thread': 10}, ('off', 'async'))
        self.assertNotIn(kasancost.LAYOUT, plain[0][2]['causes'])


if __name__ == '__main__':
    unittest.main()
