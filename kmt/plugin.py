"""kmt-count, the QEMU TCG plugin (plugin/kmt-count.c): build it against
the plugin API header of the installed QEMU, run it, parse its output.

The plugin counts, between the HINT #0x70 / #0x71 markers a guest program
executes, every instruction and the MTE tag stores, barriers and TFSR_EL1
reads among them, user (EL0) and kernel (EL1) apart. Regions are numbered
in the order they end; kmt-bench prints one result line per region it
marks, in the same order, which is how a region is attributed to a
benchmark (see attribute()). Counts are system-wide (all vCPUs); the
benchmarks run on one vCPU, where they are exact.

The API header (include/qemu/qemu-plugin.h) ships only in QEMU's source:
it comes from the orig tarball of Debian's source package for exactly the
installed qemu-system-arm version (apt-get source --download-only; needs a
deb-src entry, which scripts/setup-host.sh adds)."""

import glob
import os
import re
import shutil
import subprocess

from . import attrib, bootspec, cache, log, paths, qemu, source

SOURCE = os.path.join(paths.REPO, 'plugin', 'kmt-count.c')
DIR = os.path.join(paths.BUILD, 'plugin')
QEMU_BINARY_PACKAGE = 'qemu-system-arm'
QEMU_SOURCE_PACKAGE = 'qemu'
CFLAGS = ['-O2', '-Wall', '-shared', '-fPIC']

# Counter names, in the plugin's order; each is a (user, kernel) pair.
# tb and tb_xpage count only with tbpages=1 (translation blocks executed,
# and those entered from a block on another page).
COUNTERS = ('insn', 'stg', 'stzg', 'st2g', 'stz2g', 'stgm', 'stzgm', 'stgp',
            'dc_gva', 'dc_gzva', 'dsb', 'isb', 'dmb', 'tfsr_read', 'tb', 'tb_xpage')
# How the counters add up to the figures make bench reports.
CLASSES = {
    'stg': ('stg', 'stzg', 'st2g', 'stz2g', 'stgm', 'stzgm'),   # the STG family
    'stgp': ('stgp',),
    'dc_gva': ('dc_gva',),
    'dc_gzva': ('dc_gzva',),
}
TAG_STORES = tuple(c for cls in CLASSES.values() for c in cls)
# Bytes of memory one instruction tags (16-byte granules): STG/STZG and
# STGP one granule, ST2G/STZ2G two; STGM/STZGM one GMID_EL1 block and
# DC GVA/GZVA one DCZID_EL0 block, whose sizes depend on the CPU ('gm',
# 'dcz' in tagged_bytes()).
TAG_BYTES = {'stg': 16, 'stzg': 16, 'stgp': 16, 'st2g': 32, 'stz2g': 32,
             'stgm': 'gm', 'stzgm': 'gm', 'dc_gva': 'dcz', 'dc_gzva': 'dcz'}


def tagged_bytes(kernel_counts, blocks):
    """Bytes of memory the kernel's tag stores tagged: {counter: count}
    weighted by TAG_BYTES, with blocks = {'gm': bytes, 'dcz': bytes}.
    What the hardware pays for, which a count of instructions hides."""
    total = 0
    for name, n in kernel_counts.items():
        size = TAG_BYTES.get(name)
        if size is None or not n:
            continue
        if not isinstance(size, int):
            if not blocks.get(size):
                raise log.StepError('%d %s tag stores but no %s block size' % (n, name, size))
            size = blocks[size]
        total += n * size
    return total
BARRIERS = ('dsb', 'isb')   # DMB is counted and reported apart


# ---- the API header --------------------------------------------------------

def installed_qemu_version():
    res = subprocess.run(['dpkg-query', '-W', '-f=${Version}', QEMU_BINARY_PACKAGE],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if res.returncode != 0 or not res.stdout.strip():
        raise log.StepError('%s is not installed (run scripts/setup-host.sh): the plugin '
                            'is built for the installed QEMU' % QEMU_BINARY_PACKAGE)
    return res.stdout.strip()


def header_api_version(text):
    m = re.search(r'^#define QEMU_PLUGIN_VERSION (\d+)', text, re.M)
    return int(m.group(1)) if m else None


def _safe(version):
    return re.sub(r'[^0-9A-Za-z.+-]', '_', version)


def fetch_header(version=None):
    """The directory holding qemu-plugin.h of the installed QEMU (cached
    per QEMU version under build/plugin)."""
    version = version or installed_qemu_version()
    hdir = os.path.join(DIR, 'qemu-' + _safe(version))
    hdr = os.path.join(hdir, 'qemu-plugin.h')
    if os.path.exists(hdr):
        return hdir
    logfile = os.path.join(paths.LOGS, 'plugin-build.log')
    with log.phase('QEMU plugin API header (Debian source package %s %s)'
                   % (QEMU_SOURCE_PACKAGE, version)):
        show = subprocess.run(['apt-cache', 'showsrc', QEMU_SOURCE_PACKAGE],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if 'Version: %s\n' % version not in show.stdout:
            raise log.StepError(
                'apt knows no source package %s %s (the installed %s): the plugin API '
                'header comes from it. Run scripts/setup-host.sh (it adds deb-src to the '
                'backports source and runs apt-get update).'
                % (QEMU_SOURCE_PACKAGE, version, QEMU_BINARY_PACKAGE))
        tmp = os.path.join(DIR, 'download')
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        # Only the orig tarball matters; the .dsc and Debian tarball may
        # be missing from the mirror (apt-get then exits non-zero).
        log.run(['apt-get', 'source', '--download-only',
                 '%s=%s' % (QEMU_SOURCE_PACKAGE, version)],
                logfile=logfile, cwd=tmp, check=False)
        orig = glob.glob(os.path.join(tmp, '%s_*.orig.tar.*' % QEMU_SOURCE_PACKAGE))
        if not orig:
            raise log.StepError('apt-get source %s=%s fetched no orig tarball (log: %s)'
                                % (QEMU_SOURCE_PACKAGE, version, logfile))
        log.run(['tar', '-xf', orig[0], '-C', tmp, '--wildcards', '--no-anchored',
                 'include/qemu/qemu-plugin.h'], logfile=logfile, quiet=True)
        found = glob.glob(os.path.join(tmp, '*', 'include', 'qemu', 'qemu-plugin.h'))
        if not found:
            raise log.StepError('%s has no include/qemu/qemu-plugin.h' % orig[0])
        with open(found[0]) as f:
            api = header_api_version(f.read())
        if api is None:
            raise log.StepError('no QEMU_PLUGIN_VERSION in %s' % found[0])
        os.makedirs(hdir, exist_ok=True)
        shutil.copy2(found[0], hdr + '.tmp')
        os.rename(hdr + '.tmp', hdr)
        shutil.rmtree(tmp, ignore_errors=True)
        log.info('qemu-plugin.h: plugin API version %d, from %s' % (
            api, os.path.basename(orig[0])))
    return hdir


# ---- the plugin --------------------------------------------------------------

def glib_cflags():
    try:
        res = subprocess.run(['pkg-config', '--cflags', 'glib-2.0'], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    except FileNotFoundError:
        raise log.StepError('pkg-config is missing (run scripts/setup-host.sh)') from None
    if res.returncode != 0:
        raise log.StepError('pkg-config finds no glib-2.0 (libglib2.0-dev; run '
                            'scripts/setup-host.sh): %s' % res.stderr.strip())
    return res.stdout.split()


def _compile(src, so, cflags, what):
    """gcc src into the shared object so against the installed QEMU's plugin
    header, again only when the source, the header or the flags changed."""
    hdir = fetch_header()
    cmd = ['gcc'] + cflags + glib_cflags() + ['-I', hdir, '-o', so + '.tmp', src]
    k = cache.key(' '.join(cmd), files=(src, os.path.join(hdir, 'qemu-plugin.h')))
    stamp = so + '.stamp'
    if cache.fresh(stamp, k, outputs=(so,)):
        return so
    with log.phase(what):
        cache.invalidate(stamp)
        log.run(cmd, logfile=os.path.join(paths.LOGS, 'plugin-build.log'))
        os.rename(so + '.tmp', so)
        cache.record(stamp, k)
    return so


def build():
    """Build plugin/kmt-count.c into build/plugin/libkmt-count.so, again
    only when the source, the header or the flags changed."""
    return _compile(SOURCE, os.path.join(DIR, 'libkmt-count.so'), CFLAGS,
                    'build the QEMU plugin %s' % os.path.relpath(SOURCE, paths.REPO))


# ---- the QEMU contrib plugin posting (patches/qemu) ----------------------------

CONTRIB_DIR = os.path.join(paths.REPO, 'patches', 'qemu')
CONTRIB_FILE = 'contrib/plugins/mte.c'
# The flags QEMU's meson build gives a contrib plugin (with -Werror), as
# patches/qemu/check.sh compiles it.
CONTRIB_CFLAGS = ['-std=gnu11', '-O2', '-Wall', '-Werror', '-fPIC', '-shared', '-D_GNU_SOURCE',
                  '-Wmissing-prototypes', '-Wstrict-prototypes', '-Wold-style-definition',
                  '-Wredundant-decls', '-Wundef', '-Wvla', '-Wwrite-strings']


def contrib_source():
    """(patch file, text of contrib/plugins/mte.c) as the posting creates it;
    StepError when no patch of patches/qemu does."""
    for name in sorted(os.listdir(CONTRIB_DIR)):
        if not re.match(r'\d{4}-.*\.patch$', name) or name.startswith('0000-'):
            continue
        with open(os.path.join(CONTRIB_DIR, name)) as f:
            text = source.new_file_of(f.read(), CONTRIB_FILE)
        if text is not None:
            return name, text
    raise log.StepError('no patch of %s creates %s'
                        % (os.path.relpath(CONTRIB_DIR, paths.REPO), CONTRIB_FILE))


def build_contrib():
    """The posting's contrib plugin, built against the installed QEMU's
    plugin header (build/plugin/libmte.so), again only when it changed."""
    name, text = contrib_source()
    src = os.path.join(DIR, 'mte.c')
    os.makedirs(DIR, exist_ok=True)
    with open(src + '.tmp', 'w') as f:
        f.write(text)
    os.replace(src + '.tmp', src)
    return _compile(src, os.path.join(DIR, 'libmte.so'), CONTRIB_CFLAGS,
                    'build the QEMU contrib plugin of patches/qemu/%s' % name)


MAX_PCS = 16     # pc= arguments the plugin takes


def qemu_args(so, outfile, chains=0, tbpages=False, pcs=(), profile=False):
    """QEMU options loading the plugin; its output goes to outfile. With
    chains=DEPTH it also records each kernel tag store's call chain; with
    tbpages, it counts translation blocks and page-crossing transitions;
    pcs: kernel addresses whose executions it counts (a function's
    address: its calls); profile: the kernel instructions per block start
    inside each region (profile_by_function())."""
    if len(pcs) > MAX_PCS:
        raise log.StepError('the plugin counts at most %d addresses, %d asked for'
                            % (MAX_PCS, len(pcs)))
    arg = so + (',chains=%d' % chains if chains else '') + (',tbpages=1' if tbpages else '')
    arg += ',profile=1' if profile else ''
    arg += ''.join(',pc=%x' % pc for pc in pcs)
    return ['-plugin', arg, '-d', 'plugin', '-D', outfile]


# ---- its output ----------------------------------------------------------------

_LINE = re.compile(r'^kmt-count (.*)$')


class PluginOutput:
    def __init__(self):
        self.header = None      # {'version':, 'api':, 'vcpus':, 'counters': [...], 'profile':}
        self.regions = []       # [{'region': n, 'vcpu':, 'end_vcpu':, 'counts': {...}}]
        self.exit = None        # {'regions': n, 'open':, ..., 'counts': {...}}
        self.chains = {}        # {region: [(class, count, [pc, ...])]} (chains=DEPTH)
        self.blocks = None      # {'gm', 'dcz'}: bytes one STGM / DC GVA tags (the guest's)
        self.pcs = []           # the pc= addresses, in the order counted
        self.pc_regions = {}    # {region: [executions of each address]}
        self.pc_exit = None     # [executions of each address over the whole run]
        self.profile = {}       # {region: {block pc: kernel instructions}} (profile=1)
        self.profile_blocks = {}  # {region: [(block pc, its length, instructions)]}


def _counts(fields):
    out = {}
    for k, v in fields.items():
        if ',' in v:
            u, kern = v.split(',')
            out[k] = (int(u), int(kern))
    return out


def parse(lines):
    """Parse the plugin's lines (other lines are ignored)."""
    out = PluginOutput()
    for line in lines:
        m = _LINE.match(line.strip())
        if not m:
            continue
        fields = {}
        for tok in m.group(1).split():
            if '=' in tok:
                k, v = tok.split('=', 1)
                fields[k] = v
        if m.group(1).startswith('prof '):
            region, pc, insns = int(fields['region']), int(fields['pc'], 16), int(fields['insns'])
            per = out.profile.setdefault(region, {})
            per[pc] = per.get(pc, 0) + insns
            if 'n' in fields:
                out.profile_blocks.setdefault(region, []).append((pc, int(fields['n']), insns))
        elif m.group(1).startswith('pcs '):
            counts = [int(c) for c in fields.get('counts', '').split(',') if c]
            if 'region' in fields:
                out.pc_regions[int(fields['region'])] = counts
            else:
                out.pc_exit = counts
        elif m.group(1).startswith('chain '):
            pcs = [int(p, 16) for p in fields['pcs'].split(',') if p]
            out.chains.setdefault(int(fields['region']), []).append(
                (fields['class'], int(fields['count']), pcs))
        elif 'version' in fields:
            out.header = {'version': int(fields['version']), 'api': int(fields['api']),
                          'vcpus': int(fields['vcpus']),
                          'counters': fields.get('counters', '').split(','),
                          'profile': int(fields.get('profile', 0))}
            out.pcs = [int(p, 16) for p in fields.get('pcs', '').split(',') if p]
        elif 'region' in fields:
            out.regions.append({'region': int(fields['region']), 'vcpu': int(fields['vcpu']),
                                'end_vcpu': int(fields['end_vcpu']),
                                'counts': _counts(fields)})
        elif m.group(1).startswith('exit'):
            out.exit = {k: int(fields[k]) for k in ('regions', 'open', 'stray_ends',
                                                     'nested_begins', 'chain_read_errors',
                                                     'prof_blocks')
                        if k in fields}
            out.exit['counts'] = _counts(fields)
    return out


def profile_by_function(out, symbols, regions=None):
    """{function: kernel instructions} over the given regions (all if
    None) of a profile=1 run: the flat profile that says where two runs'
    counts part (a function's compiler suffixes dropped)."""
    total = {}
    for region, blocks in out.profile.items():
        if regions is not None and region not in regions:
            continue
        for pc, insns in blocks.items():
            name = symbols.name(pc)
            total[name] = total.get(name, 0) + insns
    return total


def profile_by_block(out, symbols, regions=None):
    """{function: [[block start (hex), its instructions, instructions
    executed]]} over the given regions (all if None) of a profile=1 run:
    where in a function two runs' counts part (kasancost.split_blocks()
    spreads each block's executions over its instructions, so that two
    runs compare whatever blocks QEMU cut)."""
    total = {}
    for region, blocks in out.profile_blocks.items():
        if regions is not None and region not in regions:
            continue
        for pc, n, insns in blocks:
            total.setdefault(symbols.name(pc), []).append(['%x' % pc, n, insns])
    return total


def profile_diff(a, b, ops=1, top=20):
    """Lines naming the functions whose instructions per operation differ
    most between two profiles ({function: instructions})."""
    if ops <= 0:
        raise ValueError('profile_diff: ops must be positive, got %r' % ops)
    names = sorted(set(a) | set(b), key=lambda n: (-abs(b.get(n, 0) - a.get(n, 0)), n))
    return ['%-40s %12.1f %12.1f %+11.1f' % (n, a.get(n, 0) / ops, b.get(n, 0) / ops,
                                             (b.get(n, 0) - a.get(n, 0)) / ops)
            for n in names[:top]]


# ---- the contrib plugin's output (patches/qemu: contrib/plugins/mte.c) --------
#
# Its lines: "region=N space=user|kernel insns=.. stg=.. ..." and "total
# space=..." (one line per exception level), "callchain region=N
# space=kernel class=C count=N pcs=0x..,..", and a closing
# "regions=N unclosed=N unmatched_ends=N restarts=N callchain_read_errors=N".
# parse_contrib() reads them into the PluginOutput that parse() gives for
# kmt-count's, so that make bench counts the same figures from either.

# Its counter names that kmt-count spells otherwise.
CONTRIB_NAMES = {'insns': 'insn', 'mrs_tfsr_el1': 'tfsr_read'}
# kmt-count's counters the contrib plugin has no counterpart of (its
# tbpages=1 mode); parse_contrib() reports them as zero.
CONTRIB_ABSENT = ('tb', 'tb_xpage')


def contrib_qemu_args(so, outfile, chains=0):
    """QEMU options loading the contrib plugin the way make bench loads
    kmt-count: TFSR_EL1 reads counted, and with chains=DEPTH each kernel
    tag store's call chain."""
    arg = so + ',mrs=tfsr_el1' + (',callchain=%d' % chains if chains else '')
    return ['-plugin', arg, '-d', 'plugin', '-D', outfile]


def parse_contrib(lines):
    """The contrib plugin's lines as a PluginOutput (other lines ignored):
    counts as (user, kernel) pairs under kmt-count's names, the kernel's
    call chains (kmt-count records no others), and the exit line's
    checks."""
    out = PluginOutput()
    regions = {}
    order = []
    for line in lines:
        t = line.split()
        if not t:
            continue
        f = dict(x.split('=', 1) for x in t if '=' in x)
        if t[0] == 'callchain':
            if f.get('space') != 'kernel':
                continue
            out.chains.setdefault(int(f['region']), []).append(
                (f['class'], int(f['count']), [int(p, 16) for p in f['pcs'].split(',') if p]))
        elif (t[0].startswith('region=') or t[0] == 'total') and 'space' in f:
            key = 'total' if t[0] == 'total' else int(f['region'])
            if key not in regions:
                regions[key] = {n: (0, 0) for n in CONTRIB_ABSENT}
                order.append(key)
            side = {'user': 0, 'kernel': 1}[f['space']]
            for k, v in f.items():
                if k in ('region', 'space'):
                    continue
                name = CONTRIB_NAMES.get(k, k)
                pair = list(regions[key].get(name, (0, 0)))
                pair[side] = int(v)
                regions[key][name] = tuple(pair)
        elif t[0].startswith('regions=') and 'unclosed' in f:
            out.exit = {'regions': int(f['regions']), 'open': int(f['unclosed']),
                        'stray_ends': int(f['unmatched_ends']),
                        'chain_read_errors': int(f.get('callchain_read_errors', 0))}
    for key in order:
        if key == 'total':
            if out.exit is not None:
                out.exit['counts'] = regions[key]
            continue
        # The contrib plugin does not say on which vCPU a region began and
        # ended: the benchmarks run on one.
        out.regions.append({'region': key, 'vcpu': None, 'end_vcpu': None,
                            'counts': regions[key]})
    if regions or out.exit is not None:
        out.header = {'version': 0, 'api': 0, 'vcpus': None, 'profile': 0, 'plugin': 'mte',
                      'counters': sorted(set(n for r in regions.values() for n in r))}
    if out.exit is not None:
        out.exit.setdefault('counts', {})
    return out


def read_output(path, console_lines=(), contrib=False):
    """Parse the plugin output file (contrib: the contrib plugin's); a
    missing or headless file means QEMU did not load the plugin (the
    console log says why)."""
    lines = []
    if os.path.exists(path):
        with open(path, errors='replace') as f:
            lines = f.read().splitlines()
    out = parse_contrib(lines) if contrib else parse(lines)
    if out.header is None:
        why = [l for l in console_lines if 'plugin' in l.lower() or 'kmt-count' in l]
        hint = ''
        if any('API version' in l or 'plugin API' in l for l in why):
            hint = (' (the plugin is built against the qemu-plugin.h of the installed '
                    'qemu-system-arm, cached per version in %s: was QEMU changed '
                    'behind dpkg\'s back?)' % os.path.relpath(DIR, paths.REPO))
        raise log.StepError('the QEMU plugin produced no output in %s%s%s' % (
            path, (': ' + ' | '.join(why[:3])) if why else '', hint))
    if out.exit is None:
        raise log.StepError('the QEMU plugin output %s has no exit line (QEMU killed?)' % path)
    return out


def differences(ref, new):
    """What two PluginOutputs of one boot disagree on (kmt-count's ref, the
    contrib plugin's new): the number of regions, each counter both have
    in each region and over the whole run, and each region's kernel call
    chains (as a multiset). [] when they agree."""
    out = []
    if len(ref.regions) != len(new.regions):
        out.append('%d regions vs %d' % (len(ref.regions), len(new.regions)))
    pairs = list(zip(ref.regions, new.regions))
    pairs.append(({'region': 'whole run', 'counts': (ref.exit or {}).get('counts', {})},
                  {'region': 'whole run', 'counts': (new.exit or {}).get('counts', {})}))
    for a, b in pairs:
        for name in sorted(set(a['counts']) & set(b['counts'])):
            if name in CONTRIB_ABSENT:
                continue
            if a['counts'][name] != b['counts'][name]:
                out.append('region %s: %s %s vs %s' % (a['region'], name, a['counts'][name],
                                                       b['counts'][name]))

    def chains(o, region):
        got = {}
        for cls, count, pcs in o.chains.get(region, []):
            key = (cls, tuple(pcs))
            got[key] = got.get(key, 0) + count
        return got
    for r in sorted(set(ref.chains) | set(new.chains)):
        a, b = chains(ref, r), chains(new, r)
        if a != b:
            out.append('region %s: call chains differ (%d vs %d chains, %d vs %d tag stores)'
                       % (r, len(a), len(b), sum(a.values()), sum(b.values())))
    return out


def attribute(regions, bench_lines):
    """Pair region n with the n-th benchmark result, in order.
    bench_lines: [(name, ops)] as kmt-bench printed them (one region per
    benchmark). Returns {name: (ops, region)}; raises StepError when the
    numbers differ."""
    if len(regions) != len(bench_lines):
        raise log.StepError('the plugin saw %d marked region(s) but the guest reported %d '
                            'benchmark(s): cannot attribute the counts'
                            % (len(regions), len(bench_lines)))
    out = {}
    for r, (name, ops) in zip(regions, bench_lines):
        out[name] = (ops, r)
    return out


def per_op(region, ops, blocks=None):
    """The figures make bench reports for one region of ops operations.
    Tag stores, barriers and TFSR_EL1 reads are counted in the kernel
    (EL1) only: the benchmark programs store no tags, and their only
    barriers are the ISBs of the vDSO clock reads between chunks."""
    c = region['counts']

    def kern(names):
        return sum(c.get(n, (0, 0))[1] for n in names)
    fig = {
        'plugin_insn_per_op': sum(c['insn']) / ops,
        'plugin_insn_user_per_op': c['insn'][0] / ops,
        'plugin_insn_kernel_per_op': c['insn'][1] / ops,
        'tag_stores_per_op': kern(TAG_STORES) / ops,
        'barriers_per_op': kern(BARRIERS) / ops,
        'dsb_per_op': kern(('dsb',)) / ops,
        'isb_per_op': kern(('isb',)) / ops,
        'dmb_per_op': kern(('dmb',)) / ops,
        'tfsr_reads_per_op': kern(('tfsr_read',)) / ops,
    }
    for cls, names in CLASSES.items():
        fig['tag_stores_%s_per_op' % cls] = kern(names) / ops
    if blocks is not None:
        fig['tagged_bytes_per_op'] = tagged_bytes(
            {n: c.get(n, (0, 0))[1] for n in TAG_STORES}, blocks) / ops
    return {k: round(v, 3) for k, v in fig.items()}


# ---- the exact-count self-test ------------------------------------------------

SELFTEST_TIMEOUT_S = 300
_EXPECT = re.compile(r'^# kmt-tagtest (\S+) region=(\d+) ((?:\w+=\d+ ?)+)$')


def parse_expectations(lines, kind='executed'):
    """{region number: {counter: expected user count}} from the lines
    kmt-tagtest prints, and whether it finished ('ok' line). With
    kind='called': {region: {kernel function: expected calls}}."""
    exp, ok = {}, False
    for line in lines:
        m = _EXPECT.match(line.strip())
        if m and m.group(1) == kind:
            exp[int(m.group(2))] = {k: int(v) for k, v in
                                    (kv.split('=') for kv in m.group(3).split())}
        if re.match(r'^ok \d+ kmt-tagtest', line.strip()):
            ok = True
    return exp, ok


def compare(expect, regions, others=()):
    """Differences between what kmt-tagtest executed (user space) and what
    the plugin counted, as readable strings (empty: exact match). others:
    regions checked otherwise (compare_calls())."""
    errors = []
    by = {r['region']: r for r in regions}
    for n, want in sorted(expect.items()):
        r = by.get(n)
        if r is None:
            errors.append('region %d: not reported by the plugin' % n)
            continue
        for name in COUNTERS:
            got = r['counts'].get(name, (0, 0))[0]
            w = want.get(name, 0)
            if got != w:
                errors.append('region %d: %s counted %d in user space, executed %d'
                              % (n, name, got, w))
    extra = sorted(set(by) - set(expect) - set(others))
    if extra:
        errors.append('unexpected region(s) %s' % ', '.join(map(str, extra)))
    return errors


def compare_calls(expect, out, symbols):
    """Differences between the calls kmt-tagtest made ({region: {function:
    calls}}) and the plugin's pc= counts (out.pc_regions, in the order of
    symbols)."""
    errors = []
    for n, want in sorted(expect.items()):
        got = out.pc_regions.get(n)
        if got is None:
            errors.append('region %d: no pc= counts from the plugin' % n)
            continue
        for name, calls in sorted(want.items()):
            i = symbols.index(name)
            if got[i] != calls:
                errors.append('region %d: %s counted %d time(s), called %d'
                              % (n, name, got[i], calls))
    return errors


PROFILE_SLACK = 0.02    # profile=1 counts a block left early whole


def compare_profile(out, slack=PROFILE_SLACK):
    """Differences between each region's exact kernel instruction count
    and the sum of its profile=1 lines: every block counted is counted
    whole, so the sum is at least the exact count and at most slack
    above it."""
    errors = []
    if not out.header or not out.header.get('profile'):
        return ['the plugin did not run with profile=1 (header %r)' % (out.header,)]
    if not out.exit.get('prof_blocks'):
        errors.append('the plugin recorded no kernel block (exit prof_blocks=%r)'
                      % out.exit.get('prof_blocks'))
    for r in out.regions:
        exact = r['counts'].get('insn', (0, 0))[1]
        got = sum(out.profile.get(r['region'], {}).values())
        if got < exact or got > exact * (1 + slack):
            errors.append('region %d: profile sums to %d kernel instructions, the exact '
                          'count is %d (at most %d%% more allowed)'
                          % (r['region'], got, exact, round(slack * 100)))
    extra = sorted(set(out.profile) - {r['region'] for r in out.regions})
    if extra:
        errors.append('profile lines for region(s) %s the plugin never closed'
                      % ', '.join(map(str, extra)))
    return errors


def selftest(image, initrd, logdir, tag='selftest'):
    """Boot kmt-tagtest under the plugin (one vCPU, kasan=off) and compare
    the counts with what it executed, and the profile=1 sums with the
    exact kernel counts. Returns (errors, logfile)."""
    so = build()
    logfile = os.path.join(logdir, 'plugin-%s.log' % tag)
    outfile = os.path.join(logdir, 'plugin-%s.counts' % tag)
    if os.path.exists(outfile):
        os.unlink(outfile)
    syms = attrib.Symbols.load(bootspec.system_map(image))
    called = ['__arm64_sys_getppid']
    if any(syms.address(s) is None for s in called):
        return ['%s not in the System.map of %s' % (', '.join(called), image)], ''
    spec = bootspec.BootSpec(name='plugin-' + tag, image=image, initrd=initrd,
                             machine='mte', kasan='off', cmdline=('kmt.tagtest=1',),
                             smp=1, icount=True, seed=1,
                             qemu_extra=tuple(qemu_args(so, outfile,
                                                        pcs=[syms.address(s) for s in called],
                                                        profile=True)),
                             timeout_s=SELFTEST_TIMEOUT_S, logfile=logfile)
    res = qemu.run(spec, echo=False)
    if res.failure:
        return ['the self-test boot failed: ' + res.failure], logfile
    expect, ok = parse_expectations(res.lines)
    if not ok or not expect:
        return ['kmt-tagtest did not run to completion (log %s)' % logfile], logfile
    calls, _ = parse_expectations(res.lines, 'called')
    if not calls:
        return ['kmt-tagtest printed no system call region (log %s)' % logfile], logfile
    out = read_output(outfile, res.lines)
    errors = compare(expect, out.regions, others=calls)
    errors += compare_calls(calls, out, called)
    errors += compare_profile(out)
    return errors, logfile
