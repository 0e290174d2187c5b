"""make postings-prove: each posting proves its change alone. For every
proof of postings.toml, the named KUnit test must fail on the base as it
ships and pass on the base with only that posting applied (branch
posting/NAME, written by make postings), in the same configuration:

  cell      a cell of the matrix (targets.py), built and booted by kmt as
            make check does, with no expectations applied; a timeout,
            panic or missing result is a failure of that run
  kunit.py  tools/testing/kunit/kunit.py run in the kernel tree (as a
            reviewer runs it), --arch and --kconfig_add from the proof,
            its JSON (KernelCI's kunit format) kept

Both kernels are built in one out dir per proof, so the second build only
recompiles what the posting changes. Results: RESULTS/postings/NAME.json
and a line per proof for the README."""

import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile

from . import attrib, bench, bootspec, build, log, matrix, paths, plugin, qemu, results, source, targets

PROOF_RESULTS = os.path.join(paths.RESULTS, 'postings')
# A copy of each posting's last proof and measure records in the
# repository (patches/<base>/proofs/), so that the README's table and a
# posting's figures outlive the machine that ran them.
KEPT_RESULTS = os.path.join(paths.PATCHES, 'proofs')
KUNIT_DIR = os.path.join(paths.REPO, 'kunit')
REPORT_KINDS = {kind for kind, _ in results.REPORTS}
# kunit.py (7.3) starts QEMU with "-accel kvm -accel hvf -accel tcg"; an
# x86_64 guest under nested KVM on these hosts printed nothing, so the
# proof's qemu_config names a QEMU wrapper (kunit/bin) that leaves only tcg.
KUNIT_QEMU_CONFIGS = {'x86_64': os.path.join(KUNIT_DIR, 'qemu_configs', 'x86_64_tcg.py'),
                      'arm64': os.path.join(KUNIT_DIR, 'qemu_configs', 'arm64_mte.py')}


def find_cell(name):
    for cells in targets.MATRICES.values():
        for c in cells:
            if c.name == name:
                return c
    raise log.StepError('no cell %s in targets.py (make cells lists them)' % name)


def outcome(tests, problems, test):
    """'pass', 'fail' or 'missing' for SUITE/CASE in one run's tests; a run
    with a panic, timeout or other problem does not pass."""
    suite, case = test.split('/', 1)
    found = [t for t in tests if t['suite'] == suite and t['name'] == case]
    if not found:
        return 'missing'
    # A kernel report the suite does not expect (a KASAN report from a
    # kselftest, say), a panic, a timeout: the run fails, whatever the
    # test printed.
    if any(p['kind'] in ('panic', 'timeout', 'qemu') or p['kind'] in REPORT_KINDS
           for p in problems):
        return 'fail'
    return 'pass' if all(t['status'] == results.PASS for t in found) else 'fail'


def proof_cell(proof):
    """The proof's cell, running only the suite that holds its test (the
    cell's configuration, machine, KASAN mode and command line)."""
    cell = find_cell(proof.cell)
    suite = proof.test.split('/', 1)[0]
    if suite not in cell.suites:
        raise log.StepError('cell %s does not run suite %s (proof of %s)'
                            % (cell.name, suite, proof.test))
    return dataclasses.replace(cell, suites=(suite,))


def run_cell_proof(posting, proof, ref, state):
    cell = proof_cell(proof)
    switch_to(ref)
    image, initrd = build.build_all(cell.config, tree='proof', series_tests=False)
    rec = matrix.run_cell('proof-%s-%s' % (posting.name, state), cell, image, initrd, [])
    return {'result': outcome(rec['tests'], rec['problems'], proof.test),
            'counts': count(rec['tests']), 'problems': [p['text'][:200] for p in rec['problems']],
            'log': rec['log'], 'detail': next((t['detail'] for t in rec['tests']
                                               if '%s/%s' % (t['suite'], t['name']) == proof.test),
                                              '')}


def count(tests):
    """{status: number} of one run (an expected failure counts as a failure:
    a proof applies no expectations)."""
    n = {}
    for t in tests:
        st = 'fail' if t['status'] == results.XFAIL else t['status']
        n[st] = n.get(st, 0) + 1
    return n


def kunit_command(proof, build_dir, kunitconfig, json_file):
    cmd = ['python3', 'tools/testing/kunit/kunit.py', 'run', '--arch=' + proof.arch,
           '--build_dir=' + build_dir, '--kunitconfig=' + kunitconfig,
           '--qemu_config=' + KUNIT_QEMU_CONFIGS[proof.arch], '--jobs=%s' % build.jobs(),
           '--timeout=1500', '--json=' + json_file]
    cmd += ['--kernel_args=' + a for a in proof.kernel_args]
    return cmd + [proof.test.split('/')[0]]


def kunit_compiler_args(arch, ccache):
    """kunit.py's compiler options: the cross compiler for arm64, and the C
    compiler through ccache where there is one (each git am or checkout
    touches every file, so without it a proof rebuilds the whole kernel at
    full cost)."""
    if arch == 'arm64':
        # Only CC through ccache: CROSS_COMPILE also names AR, and kunit.py's
        # compile_commands.json target passes $(AR) as one word.
        return ['--cross_compile=' + paths.CROSS_COMPILE] + (
            ['--make_options=CC=ccache %sgcc' % paths.CROSS_COMPILE] if ccache else [])
    return ['--make_options=CC=ccache gcc'] if ccache else []


def kunit_build_dir(proof):
    """One build directory per arch and configuration, shared by the
    postings and states that use it: switching the checkout rebuilds only
    what changed."""
    key = hashlib.sha1('\n'.join(sorted(proof.kconfig)).encode()).hexdigest()[:8]
    return os.path.join(paths.OUT, 'kunitpy-%s-%s' % (proof.arch, key))


def kunit_json_outcome(data, test):
    """'pass'/'fail'/'missing' for SUITE/CASE in kunit.py's --json output
    (KernelCI kunit format: test_cases with name and status). A
    parameterized case is a sub-group of its suite with one test case per
    parameter: it passes when every parameter passes."""
    suite, case = test.split('/', 1)
    stack = [data]
    while stack:
        node = stack.pop()
        if node.get('name') == suite:
            for c in node.get('test_cases', ()):
                if c.get('name') == case:
                    return {'PASS': 'pass', 'SKIP': 'skip'}.get(c.get('status'), 'fail')
            for g in node.get('sub_groups', ()):
                if g.get('name') == case:
                    params = g.get('test_cases', ())
                    if not params:
                        return 'missing'
                    got = {c.get('status') for c in params}
                    return {frozenset({'PASS'}): 'pass', frozenset({'SKIP'}): 'skip'}.get(
                        frozenset(got), 'fail')
        stack.extend(node.get('sub_groups', ()))
    return 'missing'


def run_kunit_proof(posting, proof, ref, state):
    build_dir = kunit_build_dir(proof)
    name = os.path.basename(build_dir)
    os.makedirs(build_dir, exist_ok=True)
    kunitconfig = os.path.join(build_dir, '.kunitconfig-proof')
    with open(kunitconfig, 'w') as f:
        f.write('CONFIG_KUNIT=y\n' + ''.join(k + '\n' for k in proof.kconfig))
    os.makedirs(PROOF_RESULTS, exist_ok=True)
    json_file = os.path.join(PROOF_RESULTS, '%s-%s%s-%s.kunit.json' % (
        posting.name, proof.arch, ''.join('-' + a.replace('=', '-') for a in proof.kernel_args),
        state))
    logfile = os.path.join(paths.LOGS, 'postings',
                           os.path.basename(json_file)[:-len('.kunit.json')] + '.log')
    os.makedirs(os.path.dirname(logfile), exist_ok=True)
    env = dict(os.environ, PATH=os.path.join(KUNIT_DIR, 'bin') + ':' + os.environ['PATH'])
    if proof.arch == 'arm64':
        env['CROSS_COMPILE'] = paths.CROSS_COMPILE
    cmd = kunit_command(proof, build_dir, kunitconfig, json_file)
    cmd[4:4] = kunit_compiler_args(proof.arch, shutil.which('ccache') is not None)
    switch_to(ref)
    with log.phase('kunit.py %s on %s (%s), log %s' % (
            proof.arch, ref, state, os.path.relpath(logfile, paths.REPO))):
        log.show_cmd(cmd, paths.SRC)
        with open(logfile, 'w') as lf:
            res = subprocess.run(cmd, cwd=paths.SRC, env=env, stdout=lf,
                                 stderr=subprocess.STDOUT, text=True)
    try:
        with open(json_file) as f:
            data = json.load(f)
        got = kunit_json_outcome(data, proof.test)
    except (OSError, ValueError):
        got = 'missing'
    return {'result': got, 'exit_code': res.returncode,
            'log': os.path.relpath(logfile, paths.REPO),
            'json': os.path.relpath(json_file, paths.REPO)}


RUNNERS = {'cell': run_cell_proof, 'kunit.py': run_kunit_proof}

# What a measure reports per benchmark operation (plugin.per_op names):
# exact on one vCPU for what the posting changes (tag stores), and the
# kernel's instructions, quoted only where two runs agree.
MEASURED = ('tag_stores_per_op', 'tagged_bytes_per_op', 'plugin_insn_kernel_per_op')
MEASURE_RUNS = 2


def run_measure(posting, m, ref, state, run):
    """One plugin boot of the cell's kernel built from ref: kmt-bench's
    benchmarks on one vCPU with -icount (run 2 and later with the timer
    phase moved), the calls of m.calls counted over the whole boot."""
    cell = find_cell(m.cell)
    switch_to(ref)
    image, initrd = build.build_all(cell.config, tree='proof', series_tests=False)
    syms = attrib.Symbols.load(bootspec.system_map(image))
    missing = [c for c in m.calls if syms.address(c) is None]
    if missing:
        raise log.StepError('%s: %s not in the System.map of %s (inlined?)'
                            % (posting.name, ', '.join(missing), image))
    so = plugin.build()
    name = '%s-measure-%s-%s-%d' % (posting.name, cell.name, state, run)
    logfile = os.path.join(paths.LOGS, 'postings', name + '.log')
    counts = logfile[:-len('.log')] + '.counts'
    os.makedirs(os.path.dirname(logfile), exist_ok=True)
    if os.path.exists(counts):
        os.unlink(counts)
    # Run 1 as is; the others with the timer phase moved (kmt-bench -s):
    # the same kernel booted twice the same way counts the same, so only
    # a moved phase can show a figure that does not repeat.
    shift = '' if run == 1 else '-s,%d,' % (bench.PHASE_SHIFT_LOOPS * (run - 1))
    spec = bench.boot_spec(name, image, initrd, cell.kasan, shift + ','.join(m.bench), True,
                           'measure', time_only=True, machine=cell.machine,
                           logfile=logfile)
    spec = spec.replace(qemu_extra=tuple(plugin.qemu_args(
        so, counts, pcs=[syms.address(c) for c in m.calls])))
    with log.phase('measure %s on %s (%s, run %d), log %s' % (
            posting.name, ref, cell.name, run, os.path.relpath(logfile, paths.REPO))):
        res = qemu.run(spec, echo=False)
        res.check()
    parsed = bench.parse_bench(res.lines)
    out = plugin.read_output(counts, res.lines)
    out.blocks = bench.tag_blocks(res.lines, cell.machine)
    regions = plugin.attribute(out.regions, [(b, v['ops']) for b, v in parsed.items()])
    per = {}
    for b, (ops, region) in regions.items():
        figs = plugin.per_op(region, ops, out.blocks)
        per[b] = {k: figs[k] for k in MEASURED}
        per[b]['ops'] = ops
    return {'bench': per, 'calls': dict(zip(m.calls, out.pc_exit or [])),
            'log': os.path.relpath(logfile, paths.REPO)}


def repeated(runs):
    """The figures of several runs of one kernel (the timer phase moved
    between them): each value where every run is within bench.REPEAT_PCT
    percent of the first, None where one is not (not a measurement)."""
    def same(v, w):
        if v is None or w is None:
            return False
        return abs(w - v) <= abs(v) * bench.REPEAT_PCT / 100.0

    first = runs[0]
    bench_ = {}
    for b, figs in first['bench'].items():
        bench_[b] = {k: (v if all(same(v, r['bench'].get(b, {}).get(k)) for r in runs) else None)
                     for k, v in figs.items()}
    calls = {c: (v if all(same(v, r['calls'].get(c)) for r in runs) else None)
             for c, v in first['calls'].items()}
    return {'bench': bench_, 'calls': calls}


def measure_lines(posting, m, base, after):
    """Readable lines: base -> posting for every figure that repeats."""
    def fmt(v):
        return 'differs between runs' if v is None else ('%g' % v)
    lines = ['%s: %s (cell %s)' % (posting.name, m.what, m.cell)]
    for b in base['bench']:
        for k in MEASURED:
            lines.append('  %s %s: %s -> %s' % (b, k, fmt(base['bench'][b].get(k)),
                                               fmt(after['bench'].get(b, {}).get(k))))
    for c in base['calls']:
        lines.append('  calls of %s over the boot: %s -> %s'
                     % (c, fmt(base['calls'][c]), fmt(after['calls'].get(c))))
    return lines


def measure_all(postings_, tag):
    """Every measure of the postings: MEASURE_RUNS boots of the base and
    of the posting each. Results RESULTS/postings/NAME-measure.json."""
    os.makedirs(PROOF_RESULTS, exist_ok=True)
    for p in postings_:
        if not p.measures:
            log.info('%s: no measure listed' % p.name)
            continue
        recs = []
        with source.checked_out(tag):
            for m in p.measures:
                got = {}
                for state, ref in (('base', tag), ('posting', 'posting/' + p.name)):
                    runs = [run_measure(p, m, ref, state, i + 1) for i in range(MEASURE_RUNS)]
                    got[state] = {'runs': runs, 'repeated': repeated(runs)}
                for line in measure_lines(p, m, got['base']['repeated'],
                                          got['posting']['repeated']):
                    log.info(line)
                recs.append({'what': m.what, 'cell': m.cell, 'bench': list(m.bench),
                             'calls': list(m.calls), **got})
        write_result(p.name + '-measure',
                     {'posting': p.name, 'base': source.base_version(),
                      'branch_head': source.git(['rev-parse', 'posting/' + p.name])
                      .stdout.strip(), 'measures': recs})
    return 0


def switch_to(ref):
    """Check ref out in the kernel tree, which prove_all() holds: git
    changes only the files that differ, so a build after it recompiles
    only what the posting changes (going back to the series in between
    would touch every file the series changes)."""
    source.git(['checkout', '-q', ref])


def test_alone_branch(posting):
    """posting/NAME-test-alone: the posting with its first patch (the fix)
    reverted, so that only its test is applied. Made in a worktree of its
    own, so that the kernel tree's checkout is not touched."""
    branch = 'posting/%s-test-alone' % posting.name
    head = 'posting/' + posting.name
    first = source.git(['rev-list', '--reverse', '%s~%d..%s' % (head, len(posting.commits),
                                                                head)]).stdout.split()[0]
    with tempfile.TemporaryDirectory() as tmp:
        wt = os.path.join(tmp, 'wt')
        source.git(['worktree', 'add', '-q', '--detach', wt, head])
        try:
            source.git(['revert', '--no-edit', first], cwd=wt, env=source._GIT_ENV)
            source.git(['branch', '-f', branch, 'HEAD'], cwd=wt)
        finally:
            source.git(['worktree', 'remove', '--force', wt], check=False)
    return branch


def short(proof):
    """describe() for a table: the cell, or kunit.py's arch, KASAN mode and
    kernel arguments."""
    if proof.runner == 'cell':
        return 'cell ' + proof.cell
    modes = [k.split('=')[0][len('CONFIG_'):] for k in proof.kconfig
             if k.startswith('CONFIG_KASAN_') and 'KUNIT' not in k]
    return 'kunit.py %s %s%s' % (proof.arch, ','.join(modes),
                                 ''.join(' ' + a for a in proof.kernel_args))


def describe(proof):
    if proof.runner == 'cell':
        return 'cell %s' % proof.cell
    return 'kunit.py --arch=%s %s' % (proof.arch, ' '.join(
        ['--kconfig_add ' + k for k in proof.kconfig] +
        ['--kernel_args ' + a for a in proof.kernel_args]))


def selected(proof, runners=None, cells=None):
    """Whether a proof is run: runners, only those of these runners;
    cells, of the cell proofs only those on these cells."""
    if runners and proof.runner not in runners:
        return False
    return not (cells and proof.runner == 'cell' and proof.cell not in cells)


def prove(posting, tag, runners=None, save=None, cells=None):
    """Each proof of posting (runners: only those run by these runners;
    cells: of the cell proofs, only those on these cells), base then
    posting; returns the records, passing them to save() after each proof
    (a run cut short keeps what it proved)."""
    out = []
    for proof in posting.proofs:
        if not selected(proof, runners, cells):
            continue
        runner = RUNNERS[proof.runner]
        if proof.before == 'test-alone':
            before = runner(posting, proof, test_alone_branch(posting), 'test-alone')
        else:
            before = runner(posting, proof, tag, 'base')
        after = runner(posting, proof, 'posting/' + posting.name, 'posting')
        ok = proven(proof, before['result'], after['result'])
        out.append({'test': proof.test, 'how': describe(proof), 'before': proof.before,
                    'after': proof.after,
                    'base': before,
                    'posting': after, 'proven': ok})
        log.info('%s: %s on %s: %s %s, with the posting %s: %s'
                 % (posting.name, proof.test, describe(proof),
                    'base' if proof.before == 'base' else 'its test alone',
                    before['result'].upper(),
                    after['result'].upper(), 'proven' if ok else 'NOT PROVEN'))
        if save:
            save(out)
    return out


def proven(proof, before, after):
    """The test failed without the posting and did what the proof names
    (pass, or skip) with it."""
    return proven_as(proof.after, before, after)


def proven_as(expected_after, before, after):
    """proven() for a stored record, which keeps the proof's after."""
    return before == 'fail' and after == expected_after


def record_key(rec):
    """What identifies a proof record: its test, how it ran, its before."""
    return (rec['test'], rec['how'], rec.get('before', 'base'))


def proof_key(proof):
    """record_key() of the records a proof of postings.toml writes."""
    return (proof.test, describe(proof), proof.before)


def merged(old, new, listed=None):
    """The proof records of an earlier run, with those run again replaced
    and, given listed (the record keys of the posting's proofs today),
    those of proofs no longer listed dropped."""
    fresh = {record_key(r) for r in new}
    return [r for r in old if record_key(r) not in fresh and
            (listed is None or record_key(r) in listed)] + list(new)


def prove_all(postings, tag, runners=None, cells=None):
    os.makedirs(PROOF_RESULTS, exist_ok=True)
    bad = 0
    for p in postings:
        if not p.proofs:
            log.info('%s: no proof listed (%s)' % (p.name, p.kind))
            continue
        if source.git(['rev-parse', '-q', '--verify', 'posting/' + p.name],
                      check=False).returncode != 0:
            raise log.StepError('no branch posting/%s in %s: make postings first'
                                % (p.name, paths.SRC))
        head = source.git(['rev-parse', 'posting/' + p.name]).stdout.strip()
        earlier = load_result(p.name) or {}
        kept = earlier.get('proofs', []) if earlier.get('branch_head') == head else []

        def save(recs, name=p.name, kept=kept, head=head,
                 listed=frozenset(proof_key(pr) for pr in p.proofs)):
            write_result(name, {'posting': name, 'base': source.base_version(),
                                'branch_head': head, 'proofs': merged(kept, recs, listed)})
        with source.checked_out(tag):
            recs = prove(p, tag, runners, save, cells)
        bad += sum(1 for r in recs if not r['proven'])
    return 1 if bad else 0


def rescore(postings_):
    """The kunit.py proofs of the last run judged again from the JSON they
    kept (after a change to how a result is read), without running
    anything; rewrites RESULTS/postings/NAME.json. Returns 1 if a proof
    is not proven."""
    bad = 0
    for p in postings_:
        path = os.path.join(PROOF_RESULTS, p.name + '.json')
        if not os.path.exists(path):
            # Only the runs of this machine have their JSON here: a record
            # kept in the repository is left as it was judged.
            continue
        with open(path) as f:
            res = json.load(f)
        for rec in res['proofs']:
            for state in ('base', 'posting'):
                run = rec[state]
                if 'json' not in run:
                    continue
                try:
                    with open(os.path.join(paths.REPO, run['json'])) as f:
                        run['result'] = kunit_json_outcome(json.load(f), rec['test'])
                except (OSError, ValueError):
                    log.warn('%s: %s (%s): its JSON %s is gone, left as judged: %s'
                             % (p.name, rec['test'], state, run['json'], run['result']))
            rec['proven'] = proven_as(rec.get('after', 'pass'), rec['base']['result'],
                                      rec['posting']['result'])
            bad += not rec['proven']
            log.info('%s: %s on %s: %s %s, with the posting %s: %s (judged again from %s)'
                     % (p.name, rec['test'], rec['how'],
                        'base' if rec.get('before', 'base') == 'base' else 'its test alone',
                        rec['base']['result'].upper(), rec['posting']['result'].upper(),
                        'proven' if rec['proven'] else 'NOT PROVEN',
                        rec['posting'].get('json', 'its cell log')))
        write_result(p.name, res)
    return 1 if bad else 0


def write_result(stem, data):
    """RESULTS/postings/STEM.json, and its copy in KEPT_RESULTS."""
    for d in (PROOF_RESULTS, KEPT_RESULTS):
        results.write_json(os.path.join(d, stem + '.json'), data)


def load_result(name, suffix=''):
    """RESULTS/postings/NAME.json (the proofs; suffix '-measure': the
    measures) as last written here, else the copy kept in the repository,
    or None."""
    for d in (PROOF_RESULTS, KEPT_RESULTS):
        path = os.path.join(d, name + suffix + '.json')
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
    return None


def why_failed(run):
    """' (the kernel report)' when a run failed by a kernel report rather
    than by the test's own verdict, '' otherwise."""
    if run.get('result') != 'fail' or not run.get('problems'):
        return ''
    text = re.sub(r'^\[\s*[0-9.]+\]\s*', '', run['problems'][0])
    return ' (%s)' % text.replace('|', '/')[:80]


def _num(v):
    """A per-operation figure for a table: 2 decimals below 1000, whole
    numbers above (no exponent)."""
    return ('%.2f' % v).rstrip('0').rstrip('.') if abs(v) < 1000 else '%d' % round(v)


def measured_lines(posting):
    """The README's lines for a posting's measures as last run: base ->
    posting for each figure that repeated over the runs."""
    res = load_result(posting.name, '-measure') or {}
    out = []
    for m in posting.measures:
        rec = next((r for r in res.get('measures', ()) if r['what'] == m.what
                    and r['cell'] == m.cell), None)
        if rec is None:
            out.append('measured (%s, cell %s): not run yet' % (m.what, m.cell))
            continue
        base, after = rec['base']['repeated'], rec['posting']['repeated']
        figs = []
        # A measure of calls is about them; the tag stores of its
        # benchmarks are another measure's business.
        for b in sorted(base['bench']) if not m.calls else ():
            for k, label in (('plugin_insn_kernel_per_op', 'kernel instructions/op'),
                             ('tag_stores_per_op', 'tag stores/op'),
                             ('tagged_bytes_per_op', 'tagged bytes/op')):
                x, y = base['bench'][b].get(k), after['bench'].get(b, {}).get(k)
                if x is not None and y is not None:
                    figs.append('%s %s %s -> %s' % (b, label, _num(x), _num(y)))
        for c in m.calls:
            x, y = base['calls'].get(c), after['calls'].get(c)
            figs.append('%s() calls over the boot %s -> %s' % (
                c, 'differ between runs' if x is None else x,
                'differ between runs' if y is None else y))
        out.append('measured (cell %s, %d runs each): %s' % (
            m.cell, len(rec['base']['runs']), '; '.join(figs)))
    return out


def _old_rows(old_table):
    """{posting name: its proof column} of the table as the page has it."""
    rows = {}
    for line in (old_table or '').splitlines():
        m = re.match(r'^\| `([^`]+)`: .*? \| \w+ \| \d+ \| (.*) \| [^|]*\|$', line)
        if m:
            rows[m.group(1)] = m.group(2)
    return rows


def markdown(postings_, old_table=None):
    """The README's table of the postings: what each is, its proofs as last
    run (make postings-prove) and whether it is ready to send. A posting
    with no proof or measure record here (none run on this machine, none
    kept in the repository) keeps its proof column from old_table."""
    old = _old_rows(old_table)
    rows = ['| posting | kind | patches | proof (7.3.4 as shipped -> with only the posting) '
            '| status |', '|---|---|---:|---|---|']
    for p in postings_:
        res = load_result(p.name)
        if res is None and load_result(p.name, '-measure') is None and p.name in old:
            rows.append('| `%s`: %s | %s | %d | %s | %s |' % (
                p.name, p.what, p.kind, len(p.commits), old[p.name], p.status))
            continue
        proofs = []
        for pr in p.proofs:
            rec = next((r for r in (res or {}).get('proofs', ())
                        if r['test'] == pr.test and r['how'] == describe(pr)), None)
            if rec is None:
                proofs.append('%s on %s: not run yet' % (pr.test, short(pr)))
            else:
                proofs.append('%s on %s: %s%s%s -> %s' % (
                    pr.test, short(pr),
                    '' if pr.before == 'base' else '(its test alone) ',
                    rec['base']['result'].upper(), why_failed(rec['base']),
                    rec['posting']['result'].upper()))
        proofs += measured_lines(p)
        rows.append('| `%s`: %s | %s | %d | %s | %s |' % (
            p.name, p.what, p.kind, len(p.commits), '<br>'.join(proofs) or 'none',
            p.status))
    return '\n'.join(rows) + '\n'
