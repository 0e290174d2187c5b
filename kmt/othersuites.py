"""Other in-tree KUnit suites under KASAN HW_TAGS: slub's, kfence's and
the lib ones (string, usercopy, fortify, overflow, stackinit, ...),
which the matrix does not run, booted in each KASAN mode.

kunit.py (tools/testing/kunit/kunit.py of the kernel tree with the
series) builds one arm64 kernel: KASAN HW_TAGS as the kasan suite's
kunitconfig has it, without the kasan suite, plus every suite of SUITES
whose Kconfig symbol the base has (a suite the base lacks is listed as
such, not run). It boots it once per mode of MODES on the MTE
qemu_config (kunit/qemu_configs/arm64_mte.py), kasan=off first, so that
a failure in a tag check mode only is told from one that is not MTE's.
kasan_multi_shot is on, so that every KASAN report shows; a KASAN
report during a KUnit case fails that case (mm/kasan/report.c), and one
outside any case, an oops, a WARNING or a panic in the log fails the
mode's run.

Each case that fails is run again on its own, three times, with QEMU
seeds and -icount (what makes HW_TAGS draw other tags), and the result
says how many of those passed: a tag collision passes in most, a bug in
none. A failure is a pass of this run only where EXPECTED names it (the
suite, the case, the modes) with its root cause; any other, a suite
missing from a mode's results or a mode with no results is a failure.

`python3 -m kmt othersuites` (KMT_BASE=7.3 for 7.3) runs it;
`python3 -m kmt othersuites readme` writes its table into
docs/other-suites.md from the last run (build/results/other-suites.json)."""

import dataclasses
import datetime
import json
import os
import re
import shutil
from typing import Tuple

from . import bootspec, build, kunitpy, log, paths, postproof, results, source

NAME = 'other-suites'
OUT_NAME = 'kunitpy-other-suites'
TIMEOUT_S = 2400
RERUN_SEEDS = (1, 2, 3)

# The kernel: KASAN HW_TAGS with the options of the kasan suite's
# kunitconfig (kunit/kunitconfigs/kasan_hw_tags.kunitconfig) but not the
# suite itself; TRACEPOINTS (through FTRACE) for the kfence suite, which
# reads its reports from the console tracepoint, as the kasan suite does.
BASE_CONFIG = (
    'CONFIG_KUNIT=y',
    'CONFIG_ARM64_MTE=y',
    'CONFIG_KASAN=y',
    'CONFIG_KASAN_HW_TAGS=y',
    'CONFIG_KASAN_VMALLOC=y',
    'CONFIG_VMAP_STACK=y',
    'CONFIG_FTRACE=y',
    'CONFIG_ENABLE_DEFAULT_TRACERS=y',
)


@dataclasses.dataclass(frozen=True)
class Suite:
    name: str                      # the KUnit suite's name (kunit_suite.name)
    config: str                    # its Kconfig symbol, without CONFIG_
    needs: Tuple[str, ...] = ()    # what it depends on that the kernel lacks
    what: str = ''                 # what it checks that tag checks can meet


SUITES = (
    Suite('slub_test', 'SLUB_KUNIT_TEST', ('SLUB_DEBUG',),
          'slab redzones and free pointers, krealloc and kmalloc sizes'),
    Suite('kfence', 'KFENCE_KUNIT_TEST', ('KFENCE',),
          'KFENCE objects, which KASAN does not tag, beside tagged slab memory'),
    Suite('string', 'STRING_KUNIT_TEST', (),
          'the str*() and mem*() word loops over tagged buffers'),
    Suite('string_helpers', 'STRING_HELPERS_KUNIT_TEST'),
    Suite('memcpy', 'MEMCPY_KUNIT_TEST', (), 'memcpy(), memmove() and memset() on tagged memory'),
    Suite('usercopy', 'USERCOPY_KUNIT_TEST', (),
          'copy_{to,from}_user(), strncpy_from_user() and friends, kernel side tagged'),
    Suite('fortify', 'FORTIFY_KUNIT_TEST', ('FORTIFY_SOURCE',),
          'the object sizes fortify computes for tagged kmalloc memory'),
    Suite('overflow', 'OVERFLOW_KUNIT_TEST', (), 'the allocation size helpers'),
    Suite('stackinit', 'STACKINIT_KUNIT_TEST', (), 'stack variable initialisation'),
    Suite('printf', 'PRINTF_KUNIT_TEST', (), '%p of tagged pointers'),
    Suite('scanf', 'SCANF_KUNIT_TEST'),
    Suite('seq_buf', 'SEQ_BUF_KUNIT_TEST'),
)

# name, kernel arguments. kasan=off first: the same kernel, tag checks off.
MODES = (
    ('off', ('kasan=off',)),
    ('sync', ('kasan.mode=sync', 'kasan_multi_shot')),
    ('async', ('kasan.mode=async', 'kasan_multi_shot')),
    ('asymm', ('kasan.mode=asymm', 'kasan_multi_shot')),
)
MODE_NAMES = tuple(m for m, _ in MODES)

# Failures with their root cause, per base: {base: ((suite, case, modes,
# why), ...)}.
TAG_MODES = ('sync', 'async', 'asymm')
# Every case of the kfence suite (mm/kfence/kfence_test.c): it fails as a
# whole, so every case has the same cause.
KFENCE_CASES = (
    'test_out_of_bounds_read', 'test_out_of_bounds_read-memcache',
    'test_out_of_bounds_write', 'test_out_of_bounds_write-memcache',
    'test_use_after_free_read', 'test_use_after_free_read-memcache',
    'test_double_free', 'test_double_free-memcache',
    'test_invalid_addr_free', 'test_invalid_addr_free-memcache',
    'test_corruption', 'test_corruption-memcache', 'test_free_bulk',
    'test_free_bulk-memcache', 'test_kmalloc_aligned_oob_read',
    'test_kmalloc_aligned_oob_write', 'test_shrink_memcache',
    'test_memcache_ctor', 'test_invalid_access', 'test_gfpzero',
    'test_memcache_typesafe_by_rcu', 'test_krealloc', 'test_memcache_alloc_bulk',
    'test_init_on_free', 'test_init_on_free-memcache',
)
KFENCE_OFF = ('KFENCE turns itself off when KASAN HW_TAGS is enabled ("kfence: disabled '
              'as KASAN HW tags are enabled", kfence_alloc_pool_and_metadata() in '
              'mm/kfence/core.c), and the suite\'s test_init() then returns -EINVAL ("failed '
              'to initialize: -22", mm/kfence/kfence_test.c): a failure c40c6e593bf9 wants '
              'for KFENCE off otherwise, where KFENCE is off by design here and the suite '
              'should skip; a test bug, not MTE\'s, fixed for mainline by the 7.3 posting '
              'kfence-hwtags (Cc: stable); 0 of 3 seeded reruns pass')
SLUB_REDZONE = ('writes the object\'s redzone through its tagged pointer inside '
                'kasan_disable_current(), which only the generic and software tag modes '
                'honour (report_suppressed_sw() in mm/kasan/report.c): HW_TAGS reports the '
                'store, the run\'s only KASAN reports, both inside these two cases; a test '
                'bug, not MTE\'s (writing through kasan_reset_tag() would be unchecked in '
                'both tag-based modes), fixed for mainline by the 7.3 posting '
                'slub-kunit-hwtags; 0 of 3 seeded reruns pass')
_HW_TAGS_TEST_BUGS = tuple(('kfence', c, TAG_MODES, KFENCE_OFF) for c in KFENCE_CASES) + (
    ('slub_test', 'test_clobber_zone', TAG_MODES, SLUB_REDZONE),
    ('slub_test', 'test_clobber_redzone_free', TAG_MODES, SLUB_REDZONE),
)
# 7.3's kfence suite has two cases more, failing the same way.
KFENCE_CASES_7_3 = ('test_use_after_free_read_nofault',
                    'test_use_after_free_read_nofault-memcache')
# New in 7.x: reads the krealloc()ed object's redzone (p[40..63] of a
# 40-byte object) the same way.
SLUB_KREALLOC = ('reads the redzone of a krealloc()ed object (p[i] up to 63 of a 40-byte '
                 'object) through its tagged pointer inside kasan_disable_current(), which '
                 'HW_TAGS does not honour (report_suppressed_sw() in mm/kasan/report.c): '
                 'a test bug, not MTE\'s; it fails alone in sync mode too ("BUG: KASAN: '
                 'slab-out-of-bounds in test_krealloc_redzone_zeroing", run on its own '
                 'with kunit.py): in the whole run\'s sync mode it passes only because '
                 'test_clobber_zone\'s synchronous fault had turned tag checks off on that '
                 'CPU (do_tag_recovery() in arch/arm64/mm/fault.c clears SCTLR_EL1.TCF), '
                 'which asymm mode, where the clobbers are stores and so asynchronous, does '
                 'not do; 0 of 3 seeded reruns pass')
# 7.3 carries the fixes of all three (the 7.3 postings kfence-hwtags and
# slub-kunit-hwtags): nothing is expected to fail there. 6.12 gets the
# kfence one through stable (Cc: stable) and keeps the slub ones (kept out
# of stable: test-only).
EXPECTED = {
    '6.12': _HW_TAGS_TEST_BUGS,
    '7.3': (),
}

# What in a mode's log fails its run although every case passed.
_LOG_PROBLEMS = (
    ('kasan', re.compile(r'BUG: KASAN: ')),
    ('oops', re.compile(r'Internal error: |Unable to handle kernel ')),
    ('warning', re.compile(r'WARNING: CPU: \d+ PID: \d+ at ')),
    ('panic', re.compile(r'Kernel panic - not syncing')),
)


def kconfig_symbols(src=None):
    """Every symbol a Kconfig file of the tree defines."""
    src = src or paths.SRC
    found = set()
    pat = re.compile(r'^\s*(?:menu)?config\s+([A-Za-z0-9_]+)\s*$')
    for top, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if not d.startswith('.')]
        for f in files:
            if f.startswith('Kconfig'):
                with open(os.path.join(top, f), errors='replace') as fh:
                    for line in fh:
                        m = pat.match(line)
                        if m:
                            found.add(m.group(1))
    return found


def select(symbols):
    """(suites the base has, suites it lacks) of SUITES, for the set of
    Kconfig symbols the tree defines."""
    have, lack = [], []
    for s in SUITES:
        (have if s.config in symbols and all(n in symbols for n in s.needs) else
         lack).append(s)
    return have, lack


def kunitconfig(suites):
    lines = ['# Written by kmt othersuites: the other in-tree suites under KASAN HW_TAGS.']
    lines += list(BASE_CONFIG)
    for s in suites:
        lines += ['CONFIG_%s=y' % n for n in s.needs]
        lines.append('CONFIG_%s=y' % s.config)
    return '\n'.join(lines) + '\n'


def common_args(build_dir, config_file):
    return (['--arch=arm64', '--build_dir=' + build_dir,
             '--qemu_config=' + kunitpy.QEMU_CONFIG] +
            postproof.kunit_compiler_args('arm64', shutil.which('ccache') is not None) +
            ['--kunitconfig=' + config_file])


def build_command(build_dir, config_file):
    return (['python3', 'tools/testing/kunit/kunit.py', 'build'] +
            common_args(build_dir, config_file) + ['--jobs=%s' % build.jobs()])


def exec_command(build_dir, config_file, mode_args, json_file, test_filter=None,
                 extra_qemu=(), extra_kernel_args=()):
    """kunit.py exec of every suite the kernel has (or test_filter), with
    the matrix's two vCPUs."""
    return (['python3', 'tools/testing/kunit/kunit.py', 'exec'] +
            common_args(build_dir, config_file) +
            ['--timeout=%d' % TIMEOUT_S, '--json=' + json_file] +
            ['--qemu_args=' + a for a in ('-smp 2',) + tuple(extra_qemu)] +
            ['--kernel_args=' + a for a in tuple(mode_args) + tuple(extra_kernel_args)] +
            ([test_filter] if test_filter else []))


# A KTAP result line of a case (four columns in: inside its suite), or
# the start of a suite, with the log's timestamp taken off.
_STAMP = re.compile(r'^\[\s*\d+\.\d+\]\s?')
_CASE_RESULT = re.compile(r'^ {4}(?:not )?ok \d+ (\S+)')
_SUBTEST = re.compile(r'^ {4}# Subtest: (\S+)')


def log_problems(lines):
    """[(kind, line, case)] of what in a kernel log fails a run; case is
    "suite.case" for a problem printed while that case ran (before its
    result line), '' outside any case."""
    out = []
    suite, pending = '', []
    for line in lines:
        bare = _STAMP.sub('', line.rstrip('\n'))
        m = _SUBTEST.match(bare)
        if m:
            suite = m.group(1)
            out += [(k, l, '') for k, l in pending]
            pending = []
            continue
        m = _CASE_RESULT.match(bare)
        if m and suite:
            out += [(k, l, '%s.%s' % (suite, m.group(1))) for k, l in pending]
            pending = []
            continue
        if bare.startswith('ok ') or bare.startswith('not ok '):
            suite = ''
        for kind, pat in _LOG_PROBLEMS:
            if pat.search(line):
                if suite:
                    pending.append((kind, line.strip()))
                else:
                    out.append((kind, line.strip(), ''))
                break
    return out + [(k, l, '') for k, l in pending]


def expected_for(base):
    """{(suite, case): (modes, why)} of EXPECTED[base], every entry with
    its reason."""
    out = {}
    for suite, case, modes, why in EXPECTED.get(base, ()):
        if not why.strip():
            raise log.StepError('othersuites.EXPECTED[%s]: %s.%s has no reason' % (
                base, suite, case))
        bad = [m for m in modes if m not in MODE_NAMES]
        if bad:
            raise log.StepError('othersuites.EXPECTED[%s]: %s.%s: no mode %s' % (
                base, suite, case, ', '.join(bad)))
        out[(suite, case)] = (tuple(modes), why)
    return out


def _explained_report(problem, mode, expected):
    """A KASAN report printed inside a case EXPECTED names for this mode."""
    case = problem[2] if len(problem) > 2 else ''
    if problem[0] != 'kasan' or not case:
        return False
    modes, _ = expected.get(tuple(case.split('.', 1)), ((), ''))
    return mode in modes


def judge(data, base):
    """The tests of one run (data: what run() writes): one per suite and
    mode, failed where a case failed that EXPECTED does not name for that
    mode, where the suite is missing, or where the mode's log has a
    problem; and one per EXPECTED entry that no longer fails (a stale
    reason is a failure too)."""
    expected = expected_for(base)
    tests = []
    seen_failing = set()
    for mode in MODE_NAMES:
        got = data['modes'].get(mode)
        for suite in data['suites']:
            name = '%s/%s' % (mode, suite)
            if got is None or got.get('statuses') is None:
                tests.append(results.test(NAME, name, results.FAIL,
                                          'kunit.py reported no results in mode %s' % mode))
                continue
            cases = got['statuses'].get(suite)
            if cases is None:
                tests.append(results.test(NAME, name, results.FAIL,
                                          'suite %s is not in the results of mode %s'
                                          % (suite, mode)))
                continue
            why = []
            for case, st in sorted(cases.items()):
                if st != results.FAIL:
                    continue
                exp = expected.get((suite, case))
                if exp and mode in exp[0]:
                    seen_failing.add((suite, case, mode))
                    continue
                rerun = got.get('reruns', {}).get('%s.%s' % (suite, case))
                why.append('%s fails%s' % (case, '' if rerun is None else
                                           ' (alone: passed %d of %d seeded reruns)'
                                           % (rerun, len(RERUN_SEEDS))))
            # A KASAN report inside a case EXPECTED names for this mode is
            # how that case fails, not a problem of its own.
            problems = [p for p in got.get('problems', ())
                        if not _explained_report(p, mode, expected)]
            if problems and suite == data['suites'][0]:
                why += ['%s in the log: %s' % (p[0], p[1]) for p in problems[:3]]
            tests.append(results.test(NAME, name, results.FAIL if why else results.PASS,
                                      '; '.join(why) or kunitpy.summary(cases)))
    for (suite, case), (modes, why) in sorted(expected.items()):
        for mode in modes:
            if (suite, case, mode) not in seen_failing:
                tests.append(results.test(NAME, 'expected/%s.%s/%s' % (suite, case, mode),
                                          results.FAIL,
                                          'EXPECTED says it fails (%s); it did not' % why))
    return tests


def markdown(data):
    """The docs/other-suites.md table of one run."""
    rows = ['Base %s%s, series commit %s, run %s. Cases per mode: passed / '
            'failed / skipped.' % (data['base'],
                                   ' (%s)' % data['tag'] if data.get('tag') else '',
                                   (data.get('series_head') or '?')[:12], data['date']),
            '',
            '| suite | Kconfig | ' + ' | '.join(MODE_NAMES) + ' |',
            '|---|---|' + '---|' * len(MODE_NAMES)]
    failures = []
    for suite in data['suites']:
        cells = []
        for mode in MODE_NAMES:
            st = ((data['modes'].get(mode) or {}).get('statuses') or {}).get(suite)
            if st is None:
                cells.append('no result')
                continue
            n = [sum(1 for v in st.values() if v == k)
                 for k in (results.PASS, results.FAIL, results.SKIP)]
            cells.append('%d / %d / %d' % tuple(n))
            for case, v in sorted(st.items()):
                if v == results.FAIL:
                    rerun = (data['modes'][mode].get('reruns') or {}).get(
                        '%s.%s' % (suite, case))
                    failures.append((suite, case, mode, rerun))
        cfg = next((s.config for s in SUITES if s.name == suite), '?')
        rows.append('| %s | %s | %s |' % (suite, cfg, ' | '.join(cells)))
    for s in data.get('absent', ()):
        rows.append('| %s | %s | %s |' % (s, next(x.config for x in SUITES if x.name == s),
                                          ' | '.join(['not in this base'] * len(MODE_NAMES))))
    rows.append('')
    problems = [(m, p[0], p[1], p[2] if len(p) > 2 else '') for m in MODE_NAMES
                for p in (data['modes'].get(m) or {}).get('problems', ())]
    try:
        expected = expected_for(data['base'])
    except log.StepError:
        expected = {}
    if failures:
        rows.append('Failing cases (alone: how many of %d seeded reruns of the case on its '
                    'own passed):' % len(RERUN_SEEDS))
        rows.append('')
        # The failures EXPECTED explains, one line per suite and reason;
        # any other, one line per case and mode.
        grouped = {}
        for suite, case, mode, rerun in failures:
            exp = expected.get((suite, case))
            if exp and mode in exp[0]:
                g = grouped.setdefault((suite, exp[1]), ({}, set()))
                g[0].setdefault(case, []).append(mode)
                g[1].add(rerun)
                continue
            rows.append('- %s.%s in %s%s' % (
                suite, case, mode, '' if rerun is None else
                ' (alone: %d of %d passed)' % (rerun, len(RERUN_SEEDS))))
        for (suite, why), (cases, reruns) in grouped.items():
            modes = sorted({m for ms in cases.values() for m in ms}, key=MODE_NAMES.index)
            runs = sorted(r for r in reruns if r is not None)
            rows.append('- %s: %d case%s (%s) in %s%s: %s' % (
                suite, len(cases), '' if len(cases) == 1 else 's', ', '.join(sorted(cases)),
                ', '.join(modes), '' if not runs else ' (alone: %s of %d passed)' % (
                    '-'.join(str(x) for x in sorted({runs[0], runs[-1]})), len(RERUN_SEEDS)),
                why))
    else:
        rows.append('No case failed in any mode.')
    rows.append('')
    if problems:
        rows.append('In the logs:')
        rows.append('')
        rows += ['- %s: %s%s: `%s`' % (m, k, ' (in %s)' % c if c else '', l)
                 for m, k, l, c in problems]
    else:
        rows.append('No KASAN report, oops, WARNING or panic in any mode\'s log.')
    return '\n'.join(rows) + '\n'


def _statuses(json_data, suites):
    if not json_data:
        return None
    return {s: kunitpy.case_statuses(json_data, s) for s in suites
            if kunitpy.case_statuses(json_data, s) is not None}


def run():
    """Build, boot each mode, rerun failing cases; write
    build/results/other-suites.json; return (data, tests)."""
    symbols = kconfig_symbols()
    have, lack = select(symbols)
    if not have:
        raise log.StepError('none of the suites of kmt/othersuites.py is in this tree')
    out_dir = os.path.join(paths.RESULTS, NAME)
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(paths.LOGS, exist_ok=True)
    # kunit.py makes the build directory, not its parents.
    os.makedirs(paths.OUT, exist_ok=True)
    build_dir = os.path.join(paths.OUT, OUT_NAME)
    config_file = os.path.join(paths.OUT, NAME + '.kunitconfig')
    with open(config_file, 'w') as f:
        f.write(kunitconfig(have))
    logfile = os.path.join(paths.LOGS, NAME + '.log')
    open(logfile, 'w').close()
    rel_log = os.path.relpath(logfile, paths.REPO)
    env = dict(os.environ, PATH=os.path.join(kunitpy.KUNIT_DIR, 'bin') + ':' +
               os.environ['PATH'])
    names = [s.name for s in have]
    data = {'base': paths.BASE_NAME, 'date': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
            'series_head': source.git(['rev-parse', 'HEAD']).stdout.strip(),
            'suites': names, 'absent': [s.name for s in lack], 'modes': {}}
    log.info('suites: %s; not in this base: %s' % (', '.join(names),
                                                   ', '.join(data['absent']) or 'none'))
    with log.phase('kunit.py build (arm64, KASAN HW_TAGS + %d suites), log %s'
                   % (len(have), rel_log)):
        rc = kunitpy._run(build_command(build_dir, config_file), logfile, env)
    if rc != 0:
        raise log.StepError('kunit.py build failed (rc %d), log %s' % (rc, rel_log))
    test_log = os.path.join(build_dir, 'test.log')
    for mode, args in MODES:
        json_file = os.path.join(out_dir, mode + '.kunit.json')
        with log.phase('kunit.py exec, %s (%s)' % (mode, ' '.join(args))):
            rc = kunitpy._run(exec_command(build_dir, config_file, args, json_file),
                              logfile, env, json_file)
        statuses = _statuses(kunitpy._load(json_file), names)
        lines = []
        if os.path.exists(test_log):
            shutil.copy(test_log, os.path.join(out_dir, mode + '.log'))
            with open(test_log, errors='replace') as f:
                lines = f.read().splitlines()
        entry = {'rc': rc, 'statuses': statuses, 'problems': log_problems(lines),
                 'reruns': {}}
        for suite, cases in sorted((statuses or {}).items()):
            for case, st in sorted(cases.items()):
                if st != results.FAIL:
                    continue
                passes = 0
                for seed in RERUN_SEEDS:
                    jf = os.path.join(out_dir, '%s-%s.%s-seed%d.kunit.json'
                                      % (mode, suite, case, seed))
                    kunitpy._run(exec_command(
                        build_dir, config_file, args, jf, '%s.%s' % (suite, case),
                        ('-icount shift=0,sleep=off -seed %d' % seed,),
                        (bootspec.rerun_param(seed),)), logfile, env, jf)
                    again = kunitpy.case_statuses(kunitpy._load(jf) or {}, suite) or {}
                    passes += again.get(case) == results.PASS
                entry['reruns']['%s.%s' % (suite, case)] = passes
        data['modes'][mode] = entry
        log.info('%s: %s' % (mode, '; '.join(
            '%s %s' % (s, kunitpy.summary(c)) for s, c in sorted((statuses or {}).items()))
            or 'no results (rc %d)' % rc))
    with open(os.path.join(paths.RESULTS, NAME + '.json'), 'w') as f:
        json.dump(data, f, indent=1, sort_keys=True)
    return data, judge(data, paths.BASE_NAME)


def record():
    """The matrix record of a run (for ALL=1 make check)."""
    try:
        data, tests = run()
    except log.StepError as e:
        return results.record(NAME, [NAME], 'off,sync,async,asymm', [],
                              [results.problem('build', str(e))],
                              os.path.relpath(os.path.join(paths.LOGS, NAME + '.log'),
                                              paths.REPO))
    del data
    return results.record(NAME, [NAME], 'off,sync,async,asymm', tests, [],
                          os.path.relpath(os.path.join(paths.LOGS, NAME + '.log'),
                                          paths.REPO))


def last():
    """The last run, its log problems read again from the mode logs it
    kept (so that a run made before log_problems() named the case a
    report was printed in reads as one made now)."""
    data = kunitpy._load(os.path.join(paths.RESULTS, NAME + '.json'))
    for mode, entry in ((data or {}).get('modes') or {}).items():
        path = os.path.join(paths.RESULTS, NAME, mode + '.log')
        if os.path.exists(path):
            with open(path, errors='replace') as f:
                entry['problems'] = log_problems(f.read().splitlines())
    return data
