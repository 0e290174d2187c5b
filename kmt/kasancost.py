"""What KASAN HW_TAGS still costs over kasan=off, by cause: the kmt-count
plugin's flat kernel profile (profile=1) of one kernel booted kasan=off
and in a KASAN mode, per function and operation, the difference sorted
into named causes by a table of functions (CAUSES), each with what it
detects.

The two boots run the same Image, so a function's instructions differ
only because KASAN runs (its own functions, the checks and the tag
stores inlined into the allocators) or because kasan=off takes another
path (memory initialised by memset() or clear_page() where KASAN's tag
stores initialise it). A function no rule names is 'other'; a cause's
share is only stated where, for that benchmark and mode, the named
causes cover COVER_PCT percent of the absolute per-function differences
(what 'other' holds beyond that is the part not yet understood).

HW_TAGS inlines kasan_poison() and kasan_unpoison() (mm/kasan/kasan.h)
into their callers, so the function a tag store runs in already says
which hook asked for it: __kasan_slab_alloc() for a slab object,
__kasan_unpoison_pages() for pages, and so on.
"""

import fnmatch

COVER_PCT = 90.0

# (cause, what it detects, function name patterns (fnmatch)). First match
# wins; a name is the System.map symbol without compiler suffixes.
CAUSES = (
    ('slab object tagging at alloc',
     'out-of-bounds and use-after-free accesses to slab objects (the new tag)',
     ('__kasan_slab_alloc', '__kasan_kmalloc', '__kasan_kmalloc_large', '__kasan_krealloc',
      '__kasan_unpoison_new_object', '__kasan_mempool_unpoison_*', 'kasan_unpoison_object_data')),
    ('slab object poisoning at free',
     'use-after-free and double-free of slab objects (the free tag, the free checks)',
     ('__kasan_slab_free', '__kasan_slab_pre_free', '__kasan_kfree_large',
      '__kasan_poison_new_object', '__kasan_mempool_poison_*', 'check_slab_allocation',
      'poison_slab_object', '__kasan_poison_object_data', 'kasan_poison_object_data')),
    ('slab page tagging',
     'accesses to a new slab page outside its objects, and to its objects '
     'before they are allocated (their first tags)',
     ('__kasan_poison_slab', '__kasan_init_slab_obj', 'kasan_init_slab_obj')),
    ('page tagging at alloc',
     'out-of-bounds and use-after-free accesses to pages (the new tag; with '
     'kasan.page_alloc.sample, only the sampled allocations)',
     ('__kasan_unpoison_pages', 'kasan_unpoison_pages', 'post_alloc_hook',
      'kasan_sample_page_alloc', 'tag_clear_highpage', 'clear_highpage_kasan_tagged')),
    ('page poisoning at free',
     'use-after-free of pages (the free tag)',
     ('__kasan_poison_pages', 'kasan_poison_pages', 'free_pages_prepare',
      '__free_pages_prepare', 'free_unref_page_prepare')),
    ('vmalloc tagging',
     'out-of-bounds and use-after-free accesses to vmalloc memory',
     ('__kasan_unpoison_vmalloc', '__kasan_poison_vmalloc', 'kasan_unpoison_vmalloc',
      'kasan_poison_vmalloc')),
    ('range tagging',
     'accesses outside a range the caller unpoisons (e.g. a reused stack, ksize())',
     ('__kasan_unpoison_range', 'kasan_unpoison_range')),
    ('tag checks on user copies and strings',
     'the explicit checks of accesses HW_TAGS cannot see (none in HW_TAGS: its '
     'checks are the hardware\'s)',
     ('__kasan_check_*', 'kasan_check_range', 'kasan_byte_accessible')),
    ('allocation and free stack traces',
     'nothing by itself: the allocation and free stacks a report prints '
     '(kasan.stacktrace=off, which Android boots with, turns it off)',
     ('kasan_save_*', 'save_stack_info', 'kasan_set_track', 'stack_trace_save*',
      'stack_trace_consume_entry', 'arch_stack_walk', 'arch_kunwind_consume_entry',
      'kunwind_*', 'do_kunwind', 'stack_depot_*', '__stack_depot_*', 'depot_*',
      'find_stack', 'filter_irq_stacks', 'in_irqentry_text')),
    ('report path',
     'nothing by itself: it runs once a tag check fails',
     ('kasan_report*', 'kasan_report_async', 'report_*', 'kasan_print_*',
      'print_report', 'complete_report_info')),
    ('exception entry and exit, context switch',
     'tag check faults of asynchronous and asymmetric mode (TFSR_EL1), '
     'the kernel tag exclusion (GCR_EL1)',
     ('el0t_64_*', 'el1h_64_*', 'el0_svc*', 'el0_da', 'el1_da', 'el1_abort',
      'ret_to_user', 'ret_to_kernel', 'enter_from_kernel_mode', 'exit_to_kernel_mode',
      'enter_from_user_mode', 'exit_to_user_mode*', 'arm64_enter_*', 'arm64_exit_*',
      'mte_check_tfsr_*', 'mte_thread_switch', '__switch_to', 'cpu_switch_to',
      'mte_disable_tco_entry', 'mte_suspend_exit', 'mte_cpu_setup')),
    ('memory initialised by memset() or clear_page() instead',
     'nothing: with KASAN on, the tag stores initialise the memory (STZG, DC GZVA) '
     'and this work is not done (a negative difference)',
     ('memset', '__memset', 'clear_page', '__pi_memset', '__pi_clear_page',
      'clear_highpage', 'kernel_init_pages', 'init_page_*')),
)
# Where the flat profile keeps its blocks (each block's start, length and
# instructions executed), a function no rule names is split further, by
# instruction address: what only the KASAN boot executed (its hooks' call
# sites, which HW_TAGS inlines behind kasan_enabled() into the allocators:
# the static branch, the arguments, the call and what follows it), what
# only the kasan=off boot executed (the other side of those branches, e.g.
# the memset() call where KASAN's tag stores initialise instead), and the
# rest (what both executed, a different number of times), which stays
# 'other'.
HOOK_SITES = 'code only KASAN runs in other functions (its inlined hooks, tagged addresses)'
OFF_SITES = 'code only kasan=off runs (the other side of those branches)'
BLOCK_CAUSES = (
    (HOOK_SITES, 'what the hooks they call detect (the causes above): these are the '
                 'instructions around the calls'),
    (OFF_SITES, 'nothing: the path kasan=off takes instead (a negative difference)'),
)
# With KASAN HW_TAGS enabled, arch_slab_minalign() is the MTE granule
# (16 bytes) instead of 8, so many caches hold fewer objects per slab:
# the allocators' slow paths (a free that misses the CPU slab, a new
# slab's objects set up, a buddy merge) run more often for the same
# operations. Measured against a reference kernel booted kasan=off whose
# arch_slab_minalign() is 16 bytes too (layout=): of a function no rule
# names, the part of its difference that the reference shows as well.
LAYOUT = 'slab layout: objects aligned to the 16-byte tag granule'
LAYOUT_DETECTS = ('what the per-object tags detect: two objects in one 16-byte granule '
                  'could not carry different tags')
OTHER = 'other'
CAUSE_NAMES = tuple(c for c, _, _ in CAUSES) + tuple(c for c, _ in BLOCK_CAUSES) + (LAYOUT,
                                                                                   OTHER)
DETECTS = dict([(c, d) for c, d, _ in CAUSES] + list(BLOCK_CAUSES) + [(LAYOUT, LAYOUT_DETECTS)])


def cause_of(name):
    for cause, _, patterns in CAUSES:
        if any(fnmatch.fnmatchcase(name, p) for p in patterns):
            return cause
    return OTHER


def executions(blocks):
    """{instruction address: executions} of one function's blocks
    [[start (hex), instructions in the block, instructions executed]]: a
    block's executions spread over its instructions (4 bytes each)."""
    out = {}
    for start, n, insns in blocks:
        pc, runs = int(start, 16), insns / n
        for i in range(n):
            out[pc + 4 * i] = out.get(pc + 4 * i, 0) + runs
    return out


def split_blocks(off_blocks, on_blocks):
    """(instructions executed only by on, only by off) of one function:
    the instructions one boot executed and the other never did, whatever
    blocks QEMU cut them into in each."""
    off, on = executions(off_blocks), executions(on_blocks)
    only_on = sum(r for pc, r in on.items() if pc not in off)
    only_off = sum(r for pc, r in off.items() if pc not in on)
    return round(only_on, 3), round(only_off, 3)


def layout_differences(off, reference, ops):
    """{function: per op} of a reference kernel booted kasan=off with the
    KASAN slab layout (LAYOUT) against the kernel booted kasan=off, for
    attribute()'s layout=."""
    if ops <= 0:
        raise ValueError('layout_differences: ops must be positive, got %r' % ops)
    return {fn: (reference.get(fn, 0) - off.get(fn, 0)) / ops
            for fn in set(off) | set(reference)
            if reference.get(fn, 0) != off.get(fn, 0)}


def attribute(off, on, ops, off_blocks=None, on_blocks=None, layout=None):
    """{'gap': instructions per op (on - off), 'causes': {cause: per op},
    'functions': {cause: [(function, per op)], largest first},
    'covered_pct': named share of the absolute per-function differences}.
    off, on: {function: kernel instructions} of one region each;
    off_blocks, on_blocks: {function: [[block start (hex), its length,
    instructions executed]]} of the same regions (plugin.profile_by_block()),
    to split the functions no rule names (HOOK_SITES, OFF_SITES); layout:
    layout_differences() of the same benchmark, to name the part of those
    functions' differences that the slab layout alone gives (LAYOUT)."""
    if ops <= 0:
        raise ValueError('attribute: ops must be positive, got %r' % ops)
    causes = {c: 0.0 for c in CAUSE_NAMES}
    functions = {c: [] for c in CAUSE_NAMES}
    absolute = {c: 0.0 for c in CAUSE_NAMES}

    def add(c, name, d):
        if not d:
            return
        causes[c] += d
        absolute[c] += abs(d)
        functions[c].append((name, round(d, 3)))
    for fn in set(off) | set(on):
        d = (on.get(fn, 0) - off.get(fn, 0)) / ops
        if not d:
            continue
        c = cause_of(fn)
        if c == OTHER and off_blocks is not None and on_blocks is not None:
            only_on, only_off = split_blocks(off_blocks.get(fn, ()), on_blocks.get(fn, ()))
            add(HOOK_SITES, fn, only_on / ops)
            add(OFF_SITES, fn, -only_off / ops)
            d -= (only_on - only_off) / ops
            if abs(d) < 1e-9:
                continue
        if c == OTHER and layout and layout.get(fn) and (layout[fn] > 0) == (d > 0):
            # The part the layout alone gives, no more than this difference.
            part = min(d, layout[fn], key=abs)
            add(LAYOUT, fn, part)
            d -= part
            if abs(d) < 1e-9:
                continue
        add(c, fn, d)
    for c in functions:
        functions[c].sort(key=lambda fd: (-abs(fd[1]), fd[0]))
    total_abs = sum(absolute.values())
    covered = 100.0 if not total_abs else 100.0 * (total_abs - absolute[OTHER]) / total_abs
    return {'gap': round(sum(causes.values()), 3),
            'causes': {c: round(v, 3) for c, v in causes.items() if v},
            'functions': {c: f for c, f in functions.items() if f},
            'covered_pct': round(covered, 1)}


def _per_function(a):
    """{(cause, function): per op} of an attribute() result."""
    return {(c, fn): d for c, fns in a['functions'].items() for fn, d in fns}


def agreement(a, again):
    """The part of two boots' attribute() results that both show, per
    function: the smaller difference where both have the same sign, none
    where they differ (a timer tick's work, deferred work that fell into
    one boot's window only). {'gap': its sum, 'covered_pct': the named
    share of it, as in attribute()}."""
    one, two = _per_function(a), _per_function(again)
    named = other = gap = 0.0
    for fn in set(one) & set(two):
        d1, d2 = one[fn], two[fn]
        if (d1 > 0) != (d2 > 0):
            continue
        d = min(d1, d2, key=abs)
        gap += d
        if fn[0] == OTHER:
            other += abs(d)
        else:
            named += abs(d)
    total = named + other
    return {'gap': round(gap, 3),
            'covered_pct': round(100.0 if not total else 100.0 * named / total, 1)}


def markdown(rows, top=3, result=None):
    """The table of rows [(benchmark, mode, attribute() result, repeat)];
    repeat: the largest move of the gap between the two boots of each
    kernel, in percent, or None if not repeated. result: the run's JSON,
    for the line that says what was measured."""
    out = ['| benchmark | mode | KASAN - kasan=off (insns/op) | repeat | named | '
           'in both boots: gap, named | ' + ' | '.join(CAUSE_NAMES) + ' |',
           '|---|---|---|---|---|---|' + '---|' * len(CAUSE_NAMES)]
    for b, mode, a, rep in rows:
        cells = []
        for c in CAUSE_NAMES:
            v = a['causes'].get(c)
            cells.append('%+.1f' % v if v else '')
        both = a.get('both_boots')
        out.append('| %s | %s | %+.1f | %s | %.0f%% | %s | %s |' % (
            b, mode, a['gap'], '-' if rep is None else '%.2f%%' % rep, a['covered_pct'],
            '%+.1f, %.0f%%' % (both['gap'], both['covered_pct']) if both else '-',
            ' | '.join(cells)))
    out.append('')
    out.append('Largest functions of each cause (insns/op, first row of each benchmark):')
    out.append('')
    seen = set()
    for b, mode, a, _ in rows:
        if b in seen:
            continue
        seen.add(b)
        parts = []
        for c in CAUSE_NAMES:
            fns = a['functions'].get(c)
            if fns:
                parts.append('%s: %s' % (c, ', '.join('%s %+.1f' % fd for fd in fns[:top])))
        out.append('- %s (%s): %s' % (b, mode, '; '.join(parts) or 'no difference'))
    out.append('')
    out.append('What each cause detects:')
    out.append('')
    out += ['- %s: %s' % (c, DETECTS[c]) for c in CAUSE_NAMES if c in DETECTS]
    if result:
        out += ['', 'Base %s, series %s, kernel %s, booted with %s; %s.' % (
            result.get('base'), (result.get('series_head') or '')[:12], result.get('config'),
            ' '.join(result.get('cmdline') or ()) or 'no extra options',
            ', '.join('%s=%d' % kv for kv in (result.get('ops') or {}).items()))]
    return '\n'.join(out) + '\n'
