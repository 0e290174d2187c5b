"""What the kernel's tag stores tag: the kmt-count plugin's call chains
(chains=DEPTH) symbolized with the kernel's System.map and sorted into
uses by a table of rules.

A chain is [tag-store PC, LR, return addresses up the frame records], so
its first frames are KASAN and allocator internals and the frames above
them say who asked for the memory. Rules are data: a use, the functions
any one of which must be in the chain (the owner), and the functions any
one of which must be in it too (the tagging path), checked in order.
"""

import bisect
import collections
import re

# (use, owner functions, tagging-path functions). First match wins.
RULES = (
    # A slab page freed by the slab allocator is slab's, whoever called
    # kfree(): 6.1's deferred vfree() (free_work(), below) kfree()s the
    # vm_struct and the pages array, and may free a whole slab page there.
    ('slab', ('__free_slab', 'discard_slab'), ('__kasan_poison_pages',)),
    # Kernel stacks: the cached-stack reuse path re-tags with
    # kasan_unpoison_range() from copy_process() (alloc_thread_stack_node
    # is inlined there); a new stack is tagged by kasan_unpoison_vmalloc().
    ('stack', ('copy_process',), ('__kasan_unpoison_range', '__kasan_unpoison_vmalloc')),
    ('stack', ('thread_stack_free_rcu', 'thread_stack_delayed_free', 'free_thread_stack',
               'release_task_stack', 'put_task_stack'),
     ('__kasan_poison_pages', '__kasan_poison_vmalloc')),
    # A stack that does not fit the cache is freed by vfree() from an RCU
    # callback, which hands it to delayed_vfree_work() (vfree_atomic), so
    # the chain no longer names the stack. In these benchmarks nothing
    # else is vfree()d from interrupt context (the other vfree_atomic()
    # users: netlink mmap rings, shadow call stacks (off in the lean
    # config), x86 LDTs); a mistake here fails the check, it cannot hide.
    # Linux 6.1 calls that work function free_work().
    ('stack', ('delayed_vfree_work', 'free_work'), ('__kasan_poison_pages',)),
    # Page-table pages, allocated by the generic helpers and arm64's pgd
    # code, freed through the RCU table batch or directly.
    ('page_table', ('__pte_alloc', '__pte_alloc_kernel', '__pmd_alloc', '__pud_alloc',
                    '__p4d_alloc', 'pgd_alloc', 'pte_alloc_one'), ('post_alloc_hook',)),
    # The mmu_gather's own batch pages, which hold the pointers to pages
    # and tables to free (not page tables; tagged by design): allocated
    # with __get_free_page() and freed with free_page(), also from the RCU
    # callback that frees the tables of a batch.
    # (__tlb_remove_page_size() before folios, Linux 6.1.)
    ('mmu_gather_batch', ('__tlb_remove_folio_pages_size', '__tlb_remove_page_size',
                          'tlb_batch_list_free',
                          'tlb_finish_mmu', 'tlb_remove_table', 'tlb_remove_table_rcu'),
     ('get_free_pages_noprof', '__get_free_pages', 'free_pages')),
    # The tables themselves are freed with a folio put.
    ('page_table', ('tlb_remove_table_rcu', 'tlb_remove_table', 'tlb_remove_table_one',
                    'free_pgd_range', 'free_pgtables', 'pgd_free'),
     ('__kasan_poison_pages',)),
    # Slab objects and the slab pages behind them (tagged by design); the
    # object hooks of a new slab were __kasan_(un)poison_object_data()
    # before 6.5 (Linux 6.1).
    ('slab', ('new_slab', '__kasan_slab_alloc', '__kasan_slab_free', '__kasan_kmalloc',
              '__kasan_unpoison_new_object', '__kasan_poison_new_object',
              '__kasan_unpoison_object_data', '__kasan_poison_object_data',
              '__kasan_poison_slab', 'discard_slab', '__free_slab', 'kfree', 'kmem_cache_free'),
     ()),
)
# Uses the series must leave with no tag store at all.
UNTAGGED = ('stack', 'page_table')
USES = tuple(dict.fromkeys(r[0] for r in RULES)) + ('other',)

# Frames that are part of tagging or allocating, skipped when naming the
# owner of an 'other' chain.
_INTERNAL = re.compile(r'^(_*kasan|_*kmalloc|kmem_cache_|_*slab|new_slab|setup_object|'
                       r'post_alloc_hook|prep_new_page|get_page_from_freelist|_*alloc_pages|'
                       r'_*get_free_pages|_*free_pages|free_unref|_*folio_put|kfree|mte_|'
                       r'__vmalloc|vmalloc|vm_area_alloc|__get_vm_area|alloc_vmap_area)')


class Symbols:
    """Function names from a System.map (text symbols only)."""

    def __init__(self, lines):
        syms = []
        for line in lines:
            parts = line.split()
            if len(parts) >= 3 and parts[1] in 'tTwW':
                syms.append((int(parts[0], 16), parts[2]))
        syms.sort()
        self.addrs = [a for a, _ in syms]
        self.names = [n for _, n in syms]

    @classmethod
    def load(cls, path):
        with open(path) as f:
            return cls(f)

    def address(self, name):
        """The address of text symbol name (the first, if several), or None."""
        for a, n in zip(self.addrs, self.names):
            if n == name:
                return a
        return None

    def locate(self, addr):
        """(symbol, offset) of the text symbol holding addr, or None."""
        i = bisect.bisect_right(self.addrs, addr) - 1
        if i < 0:
            return None
        return self.names[i], addr - self.addrs[i]

    def name(self, addr):
        found = self.locate(addr)
        if found is None:
            return '0x%x' % addr
        # Strip compiler suffixes: foo.constprop.0 and foo.isra.0 are foo.
        return found[0].split('.')[0]


# Interrupt entry: the frames above it belong to whatever the interrupt
# interrupted (the frame records chain through the exception), not to the
# code that asked for the memory.
IRQ_ENTRY = ('el1_interrupt', 'el0_interrupt', 'el1h_64_irq_handler', 'el1h_64_fiq_handler',
             'el0t_64_irq_handler', 'el0t_64_fiq_handler')


def own_frames(frames):
    """The chain up to the first interrupt entry (exclusive)."""
    for i, f in enumerate(frames):
        if f in IRQ_ENTRY:
            return frames[:i]
    return frames


def classify(frames):
    """The use of one symbolized chain (innermost frame first)."""
    present = set(own_frames(frames))
    for use, owners, via in RULES:
        if present.intersection(owners) and (not via or present.intersection(via)):
            return use
    return 'other'


def owner(frames):
    """The first frame that is not tagging or allocating memory."""
    frames = own_frames(frames)
    for f in frames[1:]:
        if not _INTERNAL.match(f):
            return f
    return frames[-1] if frames else '?'


def attribute(chains, symbols):
    """chains: [(class, count, [pc, ...])] of one region.
    Returns ({use: count}, {(use, owner): count})."""
    by_use = collections.Counter()
    by_owner = collections.Counter()
    for _, count, pcs in chains:
        frames = [symbols.name(pc) for pc in pcs]
        use = classify(frames)
        by_use[use] += count
        by_owner[(use, owner(frames))] += count
    return dict(by_use), dict(by_owner)
