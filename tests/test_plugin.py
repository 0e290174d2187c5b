"""The kmt-count plugin's output parser, region attribution, self-test
comparison, report table and instruction decoder (no kernel, no QEMU)."""

import os
import re
import shutil
import struct
import subprocess
import tempfile
import unittest

from kmt import attrib, bench, log, paths, plugin

FIXTURES = os.path.join(os.path.dirname(__file__), 'fixtures')


def _read(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read().splitlines()


def _region(n, **counts):
    c = {k: (0, 0) for k in plugin.COUNTERS}
    c.update(counts)
    return {'region': n, 'vcpu': 0, 'end_vcpu': 0, 'counts': c}


class ParseTest(unittest.TestCase):
    def test_captured_output(self):
        out = plugin.parse(_read('plugin-tagtest.counts'))
        self.assertEqual(out.header['api'], 4)
        self.assertEqual(out.header['vcpus'], 1)
        self.assertEqual(tuple(out.header['counters']), plugin.COUNTERS)
        self.assertEqual([r['region'] for r in out.regions], [1, 2, 3])
        r1 = out.regions[0]['counts']
        self.assertEqual(r1['insn'], (49, 0))
        self.assertEqual(r1['stg'], (6, 0))
        self.assertEqual(r1['dc_gva'], (7, 0))
        self.assertEqual(out.regions[1]['counts']['insn'], (0, 0))
        self.assertEqual(out.exit['regions'], 3)
        self.assertEqual(out.exit['open'], 0)
        # Whole run: the kernel cleared the tags of the 16 PROT_MTE pages
        # kmt-tagtest faulted in (64 DC GZVA of 64 bytes per page).
        self.assertEqual(out.exit['counts']['dc_gzva'][1], 1024)

    def test_other_lines_ignored(self):
        lines = ['garbage', 'kmt-count region=3 vcpu=1 end_vcpu=0 insn=5,7 stg=0,2',
                 'qemu: something else']
        out = plugin.parse(lines)
        self.assertIsNone(out.header)
        self.assertEqual(out.regions[0]['region'], 3)
        self.assertEqual(out.regions[0]['vcpu'], 1)
        self.assertEqual(out.regions[0]['counts'], {'insn': (5, 7), 'stg': (0, 2)})

    def test_missing_output_is_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'none.counts')
            with self.assertRaisesRegex(log.StepError, 'no output.*Could not load plugin'):
                plugin.read_output(path, ['qemu-system-aarch64: Could not load plugin x.so'])
            with self.assertRaisesRegex(log.StepError, 'qemu-plugin.h of the installed'):
                plugin.read_output(path, [
                    'qemu-system-aarch64: Could not load plugin x.so: plugin requires API '
                    'version 5, but this QEMU supports only up to version 4'])
            with open(path, 'w') as f:
                f.write('\n'.join(_read('plugin-tagtest.counts')[:2]) + '\n')
            with self.assertRaisesRegex(log.StepError, 'no exit line'):
                plugin.read_output(path)


class ProfileTest(unittest.TestCase):
    LINES = ['kmt-count version=1 api=3 vcpus=1 counters=insn chains=0 tbpages=0 pcs=',
             'kmt-count prof region=1 pc=ffff800080010000 insns=30',
             'kmt-count prof region=1 pc=ffff800080010010 insns=12',
             'kmt-count prof region=1 pc=ffff800080020004 insns=7',
             'kmt-count region=1 vcpu=0 end_vcpu=0 insn=5,49',
             'kmt-count prof region=2 pc=ffff800080020000 insns=100',
             'kmt-count region=2 vcpu=0 end_vcpu=0 insn=5,100']
    SYMS = attrib.Symbols(['ffff800080010000 T unmap_page_range',
                           'ffff800080020000 t memset.constprop.0'])

    def test_parse(self):
        out = plugin.parse(self.LINES)
        self.assertEqual(out.profile, {1: {0xffff800080010000: 30, 0xffff800080010010: 12,
                                           0xffff800080020004: 7},
                                       2: {0xffff800080020000: 100}})
        self.assertEqual([r['region'] for r in out.regions], [1, 2])

    def test_by_function(self):
        out = plugin.parse(self.LINES)
        self.assertEqual(plugin.profile_by_function(out, self.SYMS),
                         {'unmap_page_range': 42, 'memset': 107})
        self.assertEqual(plugin.profile_by_function(out, self.SYMS, regions={1}),
                         {'unmap_page_range': 42, 'memset': 7})

    def test_blocks(self):
        # One line per block (start and length): two blocks at one pc, cut
        # at different lengths, add up in the flat profile and stay apart
        # in the block list.
        lines = ['kmt-count prof region=1 pc=ffff800080010000 n=4 insns=40',
                 'kmt-count prof region=1 pc=ffff800080010000 n=2 insns=6',
                 'kmt-count prof region=1 pc=ffff800080020004 n=1 insns=7',
                 'kmt-count region=1 vcpu=0 end_vcpu=0 insn=5,53']
        out = plugin.parse(lines)
        self.assertEqual(out.profile, {1: {0xffff800080010000: 46, 0xffff800080020004: 7}})
        self.assertEqual(plugin.profile_by_block(out, self.SYMS),
                         {'unmap_page_range': [['ffff800080010000', 4, 40],
                                               ['ffff800080010000', 2, 6]],
                          'memset': [['ffff800080020004', 1, 7]]})
        self.assertEqual(plugin.profile_by_block(out, self.SYMS, regions={2}), {})

    def test_compare_profile(self):
        head = 'kmt-count version=1 api=4 vcpus=1 counters=insn chains=0 tbpages=0 profile=1 pcs='
        ex = 'kmt-count exit regions=2 open=0 stray_ends=0 nested_begins=0 ' \
             'chain_read_errors=0 prof_blocks=3 insn=9,9'
        out = plugin.parse([head] + self.LINES[1:] + [ex])
        self.assertEqual(out.header['profile'], 1)
        self.assertEqual(out.exit['prof_blocks'], 3)
        self.assertEqual(plugin.compare_profile(out), [])
        # A block's instructions lost (sum under the exact count), one
        # counted more than 2% over, and lines of a region never closed.
        lines = [head] + [l.replace('insns=30', 'insns=29').replace('insns=100', 'insns=103')
                          for l in self.LINES[1:]]
        lines += ['kmt-count prof region=3 pc=ffff800080020000 insns=1', ex]
        errors = plugin.compare_profile(plugin.parse(lines))
        self.assertEqual(len(errors), 3, errors)
        self.assertIn('region 1: profile sums to 48 kernel instructions, the exact count is 49',
                      errors[0])
        self.assertIn('region 2: profile sums to 103', errors[1])
        self.assertIn('region(s) 3', errors[2])
        # Without profile=1 in the header (an old plugin or a missing
        # argument) nothing is compared.
        self.assertIn('did not run with profile=1',
                      plugin.compare_profile(plugin.parse(self.LINES + [ex]))[0])

    def test_qemu_args_profile(self):
        args = plugin.qemu_args('k.so', 'o.counts', profile=True, pcs=[0x10])
        self.assertEqual(args[1], 'k.so,profile=1,pc=10')
        self.assertNotIn('profile', plugin.qemu_args('k.so', 'o.counts')[1])

    def test_diff_largest_first(self):
        lines = plugin.profile_diff({'a': 100, 'b': 10}, {'a': 40, 'b': 12, 'c': 4}, ops=2)
        self.assertEqual([l.split()[0] for l in lines], ['a', 'c', 'b'])
        self.assertEqual(lines[0].split()[1:], ['50.0', '20.0', '-30.0'])
        with self.assertRaises(ValueError):
            plugin.profile_diff({'a': 1}, {'a': 2}, ops=0)


class AttributionTest(unittest.TestCase):
    def test_in_order(self):
        regions = [_region(1, insn=(10, 100)), _region(2, insn=(20, 200))]
        got = plugin.attribute(regions, [('getpid', 10), ('thread', 2)])
        self.assertEqual(got['getpid'][0], 10)
        self.assertIs(got['getpid'][1], regions[0])
        self.assertIs(got['thread'][1], regions[1])

    def test_count_mismatch(self):
        with self.assertRaisesRegex(log.StepError, '1 marked region.*2 benchmark'):
            plugin.attribute([_region(1)], [('getpid', 10), ('thread', 2)])

    def test_per_op_kernel_only(self):
        r = _region(1, insn=(1000, 9000), stg=(50, 40), dc_gva=(0, 500), stgp=(0, 10),
                    dc_gzva=(0, 30), stzg=(0, 20), dsb=(7, 4), isb=(3, 6), dmb=(1, 8),
                    tfsr_read=(0, 2))
        f = plugin.per_op(r, 10)
        self.assertEqual(f['plugin_insn_per_op'], 1000.0)
        self.assertEqual(f['plugin_insn_kernel_per_op'], 900.0)
        self.assertEqual(f['tag_stores_per_op'], 60.0)     # 40+20+10+500+30, kernel only
        self.assertEqual(f['tag_stores_stg_per_op'], 6.0)
        self.assertEqual(f['tag_stores_stgp_per_op'], 1.0)
        self.assertEqual(f['tag_stores_dc_gva_per_op'], 50.0)
        self.assertEqual(f['tag_stores_dc_gzva_per_op'], 3.0)
        self.assertEqual(f['barriers_per_op'], 1.0)
        self.assertEqual(f['dmb_per_op'], 0.8)
        self.assertEqual(f['tfsr_reads_per_op'], 0.2)

    def test_bench_records(self):
        parsed = {'getpid': {'ops': 4}, 'thread': {'ops': 2}}
        out = plugin.PluginOutput()
        out.regions = [_region(1, insn=(8, 800)), _region(2, dc_gva=(0, 1070), isb=(0, 4))]
        recs = bench.plugin_records('baseline', 'sync', parsed, out, 'x.log')
        by = {(r['benchmark'], r['metric']): r for r in recs}
        self.assertEqual(by[('getpid', 'plugin_insn_per_op')]['value'], 202.0)
        self.assertEqual(by[('thread', 'tag_stores_per_op')]['value'], 535.0)
        self.assertEqual(by[('thread', 'tag_stores_per_op')]['region_counts']['dc_gva'],
                         [0, 1070])
        self.assertEqual(by[('thread', 'barriers_per_op')]['value'], 2.0)


class CapturedBenchTest(unittest.TestCase):
    """A real plugin boot: the baseline kernel, kasan.mode=sync."""

    def test_figures(self):
        parsed = bench.parse_bench(_read('plugin-bench-sync.log'))
        out = plugin.parse(_read('plugin-bench-sync.counts'))
        self.assertEqual(out.exit['regions'], 6)
        recs = bench.plugin_records('baseline', 'sync', parsed, out, 'x.log')
        by = {(r['benchmark'], r['metric']): r['value'] for r in recs}
        # Part 1's target: a TFSR_EL1 read, a DSB and two ISBs per syscall.
        self.assertEqual(by[('getpid', 'tfsr_reads_per_op')], 1.0)
        self.assertEqual(by[('getpid', 'barriers_per_op')], 3.001)  # + timer ticks
        self.assertEqual(by[('getpid', 'tag_stores_per_op')], 0.168)
        # Part 2's target: the tags of a kernel stack, of page tables.
        self.assertEqual(by[('thread', 'tag_stores_dc_gva_per_op')], 561.738)
        self.assertEqual(by[('thread', 'tag_stores_stg_per_op')], 52.186)
        self.assertEqual(by[('fork64m', 'tag_stores_stg_per_op')], 917.633)
        self.assertEqual(by[('fork64m', 'tag_stores_dc_gzva_per_op')], 2787.0)


class SelftestTest(unittest.TestCase):
    def test_exact(self):
        expect, ok = plugin.parse_expectations(_read('plugin-tagtest.log'))
        self.assertTrue(ok)
        self.assertEqual(expect[1]['insn'], 49)
        self.assertEqual(expect[2], {'insn': 0})
        out = plugin.parse(_read('plugin-tagtest.counts'))
        calls, _ = plugin.parse_expectations(_read('plugin-tagtest.log'), 'called')
        self.assertEqual(calls, {3: {'__arm64_sys_getppid': 5}})
        self.assertEqual(plugin.compare(expect, out.regions, others=calls), [])
        self.assertEqual(plugin.compare_calls(calls, out, ['__arm64_sys_getppid']), [])
        # The system call region is not one of the exact user-space ones.
        self.assertEqual(plugin.compare(expect, out.regions), ['unexpected region(s) 3'])

    def test_pc_counts(self):
        out = plugin.parse(_read('plugin-tagtest.counts'))
        self.assertEqual(out.pcs, [0xffff80008004524c])
        self.assertEqual(out.pc_regions, {1: [0], 2: [0], 3: [5]})
        self.assertEqual(out.pc_exit, [6])
        self.assertEqual(len(out.regions), 3)

    def test_miscounted_calls_are_named(self):
        calls = {3: {'__arm64_sys_getppid': 5}}
        out = plugin.parse([l.replace('pcs region=3 counts=5', 'pcs region=3 counts=4')
                            for l in _read('plugin-tagtest.counts')])
        self.assertEqual(plugin.compare_calls(calls, out, ['__arm64_sys_getppid']),
                         ['region 3: __arm64_sys_getppid counted 4 time(s), called 5'])
        out = plugin.parse([l for l in _read('plugin-tagtest.counts')
                            if 'pcs region=3' not in l])
        self.assertEqual(plugin.compare_calls(calls, out, ['__arm64_sys_getppid']),
                         ['region 3: no pc= counts from the plugin'])

    def test_pc_arguments(self):
        args = plugin.qemu_args('k.so', 'out', pcs=[0xffff800080001000, 0x10])
        self.assertEqual(args[1], 'k.so,pc=ffff800080001000,pc=10')
        with self.assertRaises(log.StepError):
            plugin.qemu_args('k.so', 'out', pcs=list(range(1, 18)))

    def test_differences_are_named(self):
        expect, _ = plugin.parse_expectations(_read('plugin-tagtest.log'))
        out = plugin.parse([l.replace('stg=6,0', 'stg=5,0')
                            for l in _read('plugin-tagtest.counts')])
        self.assertEqual(plugin.compare(expect, out.regions, others={3: {}}),
                         ['region 1: stg counted 5 in user space, executed 6'])
        exact = plugin.parse(_read('plugin-tagtest.counts'))
        self.assertEqual(plugin.compare(expect, exact.regions[:1]),
                         ['region 2: not reported by the plugin'])

    def test_unfinished(self):
        _, ok = plugin.parse_expectations(_read('plugin-tagtest.log')[:4])
        self.assertFalse(ok)


class TableTest(unittest.TestCase):
    def test_plugin_table(self):
        recs = []
        for k, mode, ts, bar in [('baseline', 'off', 0.0, 3.0), ('patched', 'off', 0.0, 3.0),
                                 ('baseline', 'sync', 574.2, 12.5),
                                 ('patched', 'sync', 40.0, 9.0)]:
            recs.append({'benchmark': 'thread', 'metric': 'insn_per_op', 'kernel': k,
                         'kasan': mode, 'value': 1000.0})
            for metric, v in [('tag_stores_per_op', ts), ('barriers_per_op', bar),
                              ('tfsr_reads_per_op', 2.0 if k == 'baseline' else 0.0)]:
                recs.append({'benchmark': 'thread', 'metric': metric, 'kernel': k,
                             'kasan': mode, 'value': v})
        table = bench.markdown_table({'records': recs, 'base': '6.12', 'series_head': 'abc',
                                      'series_empty': False})
        self.assertIn('| thread | sync | 574 | 40.0 | 12.5 | 9.00 | 3.00 | 2.00 | 0.00 |',
                      table)
        self.assertIn('| thread | off | 0.00 | 0.00 | 3.00 | 3.00 | 3.00 |', table)


class HeaderTest(unittest.TestCase):
    def test_api_version(self):
        self.assertEqual(plugin.header_api_version('#define X 1\n#define QEMU_PLUGIN_VERSION 4\n'),
                         4)
        self.assertIsNone(plugin.header_api_version('nothing'))


CROSS_AS = paths.CROSS_COMPILE + 'as'
CROSS_OBJCOPY = paths.CROSS_COMPILE + 'objcopy'


@unittest.skipUnless(shutil.which('gcc') and shutil.which(CROSS_AS) and shutil.which(CROSS_OBJCOPY),
                     'needs gcc and the aarch64 cross binutils')
class DecoderTest(unittest.TestCase):
    """The plugin's decoder against the assembler's encodings: every tag
    store, barrier and TFSR_EL1 read form, and the look-alikes (LDG, LDGM,
    LDPSW, DC CGVAC, MSR TFSR_EL1, ...) that must not count."""

    def test_decode(self):
        src = os.path.join(FIXTURES, 'plugin-decode.s')
        want = []
        with open(src) as f:
            for line in f:
                m = re.match(r'^\s+\S.*//\s*(\w+)', line)
                if m:
                    want.append((line.split('//')[0].strip(), m.group(1)))
        with tempfile.TemporaryDirectory() as d:
            obj, binf, exe = (os.path.join(d, n) for n in ('t.o', 't.bin', 'decode'))
            subprocess.run([CROSS_AS, '-march=armv8.7-a+memtag', '-o', obj, src], check=True)
            subprocess.run([CROSS_OBJCOPY, '-O', 'binary', '-j', '.text', obj, binf],
                           check=True)
            subprocess.run(['gcc', '-O2', '-Wall', '-DKMT_DECODE_MAIN', '-o', exe,
                            plugin.SOURCE], check=True)
            with open(binf, 'rb') as f:
                data = f.read()
            words = struct.unpack('<%dI' % (len(data) // 4), data)
            out = subprocess.run([exe], input=''.join('%08x\n' % w for w in words),
                                 stdout=subprocess.PIPE, text=True, check=True).stdout
        got = [l.split()[1] for l in out.splitlines()]
        self.assertEqual(len(got), len(want))
        wrong = ['%s: %s, want %s' % (insn, g, w) for (insn, w), g in zip(want, got) if g != w]
        self.assertEqual(wrong, [])


class GuestProgramTest(unittest.TestCase):
    def test_tagtest_cflags(self):
        from kmt import build
        self.assertEqual(build.program_cflags(os.path.join(paths.GUEST, 'src', 'kmt-tagtest.c')),
                         ['-march=armv8.5-a+memtag'])
        self.assertEqual(build.program_cflags(os.path.join(paths.GUEST, 'src', 'kmt-bench.c')),
                         [])


if __name__ == '__main__':
    unittest.main()


class TaggedBytesTest(unittest.TestCase):
    BLOCKS = {'gm': 256, 'dcz': 64}

    def test_each_instruction_weighted_by_what_it_tags(self):
        counts = {'stg': 3, 'stzg': 1, 'st2g': 2, 'stz2g': 1, 'stgp': 1, 'stgm': 1,
                  'stzgm': 1, 'dc_gva': 1, 'dc_gzva': 2, 'dsb': 7}
        self.assertEqual(plugin.tagged_bytes(counts, self.BLOCKS),
                         16 * 5 + 32 * 3 + 256 * 2 + 64 * 3)

    def test_block_size_needed_only_when_used(self):
        from kmt import log
        self.assertEqual(plugin.tagged_bytes({'stg': 2, 'stgm': 0}, {}), 32)
        self.assertRaises(log.StepError, plugin.tagged_bytes, {'dc_gva': 1}, {'gm': 256})

    def test_per_op_reports_kernel_bytes_only(self):
        region = {'counts': {n: (0, 0) for n in plugin.COUNTERS}}
        region['counts'].update({'insn': (10, 20), 'stg': (4, 2), 'st2g': (0, 1)})
        fig = plugin.per_op(region, 2, self.BLOCKS)
        self.assertEqual(fig['tagged_bytes_per_op'], (2 * 16 + 32) / 2)
        self.assertNotIn('tagged_bytes_per_op', plugin.per_op(region, 2))


class TagBlocksTest(unittest.TestCase):
    def test_dczid_from_the_guest_and_gmid_from_the_machine(self):
        from kmt import bench
        self.assertEqual(bench.tag_blocks(['x', '# kmt-cpu dczid_bs=4'], 'mte'),
                         {'gm': 256, 'dcz': 64})
        self.assertEqual(bench.tag_blocks([], 'mte'), {'gm': 256})

    def test_cpu_line_is_not_a_benchmark(self):
        from kmt import bench
        lines = ['KMT-BEGIN bench', '# kmt-cpu dczid_bs=4',
                 '# kmt-bench getpid ops=10 insn_per_op=5.0 insn_mean=5.0 chunk=1 '
                 'ns_per_op=1.0', 'KMT-END bench rc=0']
        self.assertEqual(list(bench.parse_bench(lines)), ['getpid'])


class ContribPluginTest(unittest.TestCase):
    """The QEMU contrib plugin posting (patches/qemu) carries the plugin
    make plugin-compare builds."""

    def test_the_posting_creates_the_plugin(self):
        name, text = plugin.contrib_source()
        self.assertTrue(name.startswith('0002-'), name)
        self.assertIn('qemu_plugin_install', text)
        self.assertIn('SPDX-License-Identifier: GPL-2.0-or-later', text[:300])


class ContribTest(unittest.TestCase):
    """The QEMU contrib plugin of patches/qemu, read into the same
    PluginOutput: one boot (series-lean, kasan sync, the system call
    benchmarks, call chains of depth 24) counted by both plugins, as make
    plugin-compare left it."""

    def setUp(self):
        self.ref = plugin.parse(_read('plugin-entry-sync-kmt-count.counts'))
        self.new = plugin.parse_contrib(_read('plugin-entry-sync-contrib.counts'))

    def test_same_boot_same_figures(self):
        self.assertEqual(plugin.differences(self.ref, self.new), [])
        self.assertEqual(len(self.new.regions), 4)
        for a, b in zip(self.ref.regions, self.new.regions):
            self.assertEqual(plugin.per_op(a, 1000, {'gm': 256, 'dcz': 64}),
                             plugin.per_op(b, 1000, {'gm': 256, 'dcz': 64}))
        self.assertEqual(self.new.regions[0]['counts']['insn'], (362008, 5085024))
        self.assertEqual(self.new.regions[0]['counts']['tfsr_read'], (0, 0))
        self.assertEqual(sum(len(c) for c in self.new.chains.values()),
                         sum(len(c) for c in self.ref.chains.values()))

    def test_a_changed_count_is_named(self):
        lines = [l.replace('stg=263 ', 'stg=264 ', 1)
                 for l in _read('plugin-entry-sync-contrib.counts')]
        diffs = plugin.differences(self.ref, plugin.parse_contrib(lines))
        self.assertEqual(diffs, ['region 1: stg (0, 263) vs (0, 264)'])

    def test_a_changed_chain_is_named(self):
        lines = _read('plugin-entry-sync-contrib.counts')
        i = next(i for i, l in enumerate(lines) if l.startswith('callchain region=1 '))
        lines[i] = lines[i].replace(' count=', ' count=1', 1)
        diffs = plugin.differences(self.ref, plugin.parse_contrib(lines))
        self.assertEqual(len(diffs), 1)
        self.assertRegex(diffs[0], r'^region 1: call chains differ')

    def test_user_chains_ignored_and_exit_read(self):
        out = plugin.parse_contrib([
            'callchain region=1 space=user class=stg count=3 pcs=0x400000',
            'callchain region=1 space=kernel class=stg count=2 pcs=0xffff800080010000',
            'region=1 space=user insns=10 stg=0 mrs_tfsr_el1=0',
            'region=1 space=kernel insns=20 stg=2 mrs_tfsr_el1=1',
            'total space=user insns=11 stg=0 mrs_tfsr_el1=0',
            'total space=kernel insns=30 stg=2 mrs_tfsr_el1=1',
            'regions=1 unclosed=0 unmatched_ends=0 restarts=0 callchain_read_errors=0'])
        self.assertEqual(out.chains, {1: [('stg', 2, [0xffff800080010000])]})
        self.assertEqual(out.regions[0]['counts']['insn'], (10, 20))
        self.assertEqual(out.regions[0]['counts']['tfsr_read'], (0, 1))
        self.assertEqual(out.exit['counts']['insn'], (11, 30))
        self.assertEqual(out.exit['regions'], 1)

    def test_killed_run_is_an_error(self):
        lines = [l for l in _read('plugin-entry-sync-contrib.counts')
                 if not l.startswith('regions=')]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'x.counts')
            with open(path, 'w') as f:
                f.write('\n'.join(lines) + '\n')
            with self.assertRaisesRegex(log.StepError, 'no exit line'):
                plugin.read_output(path, contrib=True)
            open(path, 'w').close()
            with self.assertRaisesRegex(log.StepError, 'no output'):
                plugin.read_output(path, contrib=True)

    def test_qemu_args(self):
        self.assertEqual(plugin.contrib_qemu_args('/x/libmte.so', '/o/c', chains=24),
                         ['-plugin', '/x/libmte.so,mrs=tfsr_el1,callchain=24',
                          '-d', 'plugin', '-D', '/o/c'])

    def test_tables_name_the_plugin_that_counted(self):
        self.assertEqual(bench.plugin_name({}), 'kmt-count TCG plugin')
        name = bench.plugin_name({'plugin_check': {'result': 'identical'}})
        self.assertIn('contrib plugin mte of patches/qemu', name)
        self.assertIn('kmt-count on the same boot: identical', name)
