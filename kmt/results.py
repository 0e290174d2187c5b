"""Read a boot's console log: test results through the kernel's own KTAP
parser (tools/testing/kunit/kunit_parser.py), kernel reports (panic, oops,
BUG, WARNING, KASAN) outside the suites that provoke them on purpose,
timeouts and missing results."""

import dataclasses
import enum
import fnmatch
import inspect
import io
import json
import os
import re
import subprocess
import sys

from . import log, paths, targets

# The version of the JSON files kmt writes (check.json, run.json, the
# per-cell files, bench results.json); bumped when a field changes meaning.
SCHEMA_VERSION = 2


def write_json(path, data):
    """The one writer of kmt's result files: schema version, sorted keys."""
    os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
    with open(path, 'w') as f:
        json.dump(dict(data, schema=SCHEMA_VERSION), f, indent=1, sort_keys=True)
        f.write('\n')


class Status(str, enum.Enum):
    """A test's outcome (a str: it compares and serialises as its value)."""
    PASS = 'pass'
    FAIL = 'fail'
    SKIP = 'skip'
    XFAIL = 'xfail'     # a known failure of the base, with its reason

    def __str__(self):
        return self.value


PASS, FAIL, SKIP, XFAIL = Status.PASS, Status.FAIL, Status.SKIP, Status.XFAIL

# What can go wrong besides a failed test: a kernel report (a kind of
# REPORTS, below) or what the tooling itself notices.
TOOL_PROBLEMS = ('timeout', 'missing', 'module', 'qemu', 'unexpected-pass', 'bench',
                 'gate', 'machine', 'build')


@dataclasses.dataclass(frozen=True)
class TestResult:
    suite: str
    name: str
    status: Status
    detail: str = ''
    # A probabilistic failure's seeded reruns: {'passed', 'runs', 'logs'}.
    reruns: dict = None

    def __post_init__(self):
        object.__setattr__(self, 'status', Status(self.status))

    def as_dict(self):
        d = {'suite': self.suite, 'name': self.name, 'status': self.status.value,
             'detail': self.detail}
        if self.reruns is not None:
            d['reruns'] = self.reruns
        return d


@dataclasses.dataclass(frozen=True)
class Problem:
    kind: str
    text: str
    line: int = 0       # line of the console log, 0: none

    def __post_init__(self):
        if self.kind not in TOOL_PROBLEMS and self.kind not in dict(REPORTS):
            raise ValueError('unknown problem kind %r' % self.kind)

    def as_dict(self):
        return {'kind': self.kind, 'line': self.line, 'text': self.text}


@dataclasses.dataclass(frozen=True)
class Record:
    """One row of a results file: a matrix cell, the tooling tests, the
    benchmark smoke run or a series gate. `extra` holds what only some
    rows have (a cell's machine, QEMU command, exit code, duration)."""
    cell: str
    suites: tuple
    kasan: str
    tests: tuple = ()
    problems: tuple = ()
    log: str = '-'
    extra: tuple = ()   # (key, value) pairs

    def as_dict(self):
        d = dict(self.extra)
        d.update({'cell': self.cell, 'suites': list(self.suites), 'kasan': self.kasan,
                  'tests': [_as_dict(t, TestResult) for t in self.tests],
                  'problems': [_as_dict(p, Problem) for p in self.problems],
                  'log': self.log})
        return d


def _as_dict(x, cls):
    """A TestResult/Problem, or the dict of one (checked by making one)."""
    if isinstance(x, cls):
        return x.as_dict()
    return cls(**x).as_dict()


def test(suite, name, status, detail=''):
    """One test result, as stored in a record."""
    return TestResult(suite, name, status, detail).as_dict()


def problem(kind, text, line=0):
    """One problem, as stored in a record."""
    return Problem(kind, text, line).as_dict()


def record(cell, suites, kasan, tests=(), problems=(), log_path='-', **extra):
    """One row of a results file, every field checked."""
    return Record(cell, tuple(suites), kasan, tuple(tests), tuple(problems), log_path,
                  tuple(extra.items())).as_dict()

_parser = None


def kunit_parser():
    """The kernel's KTAP parser, from the kernel tree (or, before the tree is
    unpacked, from the source tarball)."""
    global _parser
    if _parser is not None:
        return _parser
    # kunit_json: kunit.py's --json format, written next to each record.
    modules = ('kunit_parser', 'kunit_printer', 'kunit_json')

    def complete(d):
        return all(os.path.exists(os.path.join(d, m + '.py')) for m in modules)
    d = os.path.join(paths.SRC, 'tools', 'testing', 'kunit')
    if not complete(d):
        d = os.path.join(paths.BASE_BUILD, 'kunit-parser')   # the base's own parser
        if not complete(d):
            os.makedirs(d, exist_ok=True)
            members = ['%s/tools/testing/kunit/%s.py' % (paths.SOURCE_PACKAGE, m)
                       for m in modules]
            log.info('extracting the KTAP parser from %s' % paths.SOURCE_TARBALL)
            subprocess.run(['tar', '-xf', paths.SOURCE_TARBALL, '-C', d,
                            '--strip-components=4'] + members, check=True)
    sys.path.insert(0, d)
    import kunit_parser as kp  # pylint: disable=import-outside-toplevel
    import kunit_printer
    # Keep the parser's own pretty-printing off the terminal: 6.12's parser
    # prints to the module's stdout printer, newer ones (7.3) take a printer.
    kp.stdout = quiet_printer(kunit_printer)
    _parser = kp
    return kp


def quiet_printer(kunit_printer):
    """A kunit_printer.Printer that prints nothing: Printer(output) in
    6.12, Printer(print=False, output=...) since."""
    params = inspect.signature(kunit_printer.Printer).parameters
    if 'print' in params:
        return kunit_printer.Printer(print=False, output=io.StringIO())
    return kunit_printer.Printer(io.StringIO())


def parse_ktap(lines):
    kp = kunit_parser()
    if 'printer' in inspect.signature(kp.parse_run_tests).parameters:
        return kp.parse_run_tests(lines, kp.stdout)
    return kp.parse_run_tests(lines)


_TOP_KTAP = re.compile(r'^(\[[ 0-9.]+\] )?K?TAP version \d+')
_SUB_KTAP = re.compile(r'^(\[[ 0-9.]+\] )?    K?TAP version \d+')
_TOP_PLAN = re.compile(r'^(\[[ 0-9.]+\] )?1\.\.(\d+)')
_TOP_RESULT = re.compile(r'^(\[[ 0-9.]+\] )?(not )?ok \d+ ')


def ktap_documents(lines):
    """Split a console log into its top-level KTAP documents. Built-in KUnit
    prints one at boot; every module with KUnit suites prints its own when
    it is loaded, and the parser reads only the first document it meets.
    Before Linux 6.6 a module's suites print with no top-level header of
    their own, after a document whose plan is complete (the boot's empty
    one, or the previous module's): such a suite starts a document of its
    own, which gets the header of a document with one suite."""
    starts = []
    planned, seen = None, 0
    for i, l in enumerate(lines):
        if _TOP_KTAP.match(l):
            starts.append((i, False))
            planned, seen = None, 0
        elif _SUB_KTAP.match(l) and planned is not None and seen >= planned:
            starts.append((i, True))
            planned, seen = 1, 0
        elif _TOP_PLAN.match(l):
            planned = int(_TOP_PLAN.match(l).group(2))
        elif _TOP_RESULT.match(l):
            seen += 1
    if not starts:
        return [lines]
    bounds = [a for a, _ in starts] + [len(lines)]
    docs = []
    for (a, bare), b in zip(starts, bounds[1:]):
        # The parser takes the timestamp of the header for every line.
        stamp = _SUB_KTAP.match(lines[a]).group(1) or '' if bare else ''
        docs.append(([stamp + 'KTAP version 1', stamp + '1..1'] if bare else []) + lines[a:b])
    return docs


def status_of(test):
    kp = kunit_parser()
    st = test.status
    if st == kp.TestStatus.SUCCESS and test.counts.errors == 0:
        return PASS
    if st == kp.TestStatus.SKIPPED and test.counts.errors == 0:
        return SKIP
    return FAIL


# ---- kernel reports -----------------------------------------------------

# (kind, pattern) in order: the first match names the kind.
REPORTS = [
    ('panic', re.compile(r'Kernel panic - not syncing')),
    ('kasan', re.compile(r'BUG: KASAN: ')),
    ('oops', re.compile(r'Internal error: |Unable to handle kernel |\bOops\b')),
    ('stall', re.compile(r'rcu: INFO: .*stall|soft lockup|hung_task')),
    ('bug', re.compile(r'\bBUG: |kernel BUG at ')),
    ('warning', re.compile(r'\bWARNING: ')),
]


def report_kind(line):
    for kind, pat in REPORTS:
        if pat.search(line):
            return kind
    return None


def suite_windows(lines, suites):
    """{suite name: [(first, last) line index ranges]} while each suite ran."""
    win = {}
    for s in suites:
        if s.kind == 'kunit':
            start = None
            begin = re.compile(r'# Subtest: %s$' % re.escape(s.select))
            end = re.compile(r'(^|\] )(not )?ok \d+ %s( #.*)?$' % re.escape(s.select))
            for i, l in enumerate(lines):
                if start is None and begin.search(l):
                    start = i
                elif start is not None and end.search(l):
                    win.setdefault(s.name, []).append((start, i))
                    start = None
            if start is not None:
                win.setdefault(s.name, []).append((start, len(lines) - 1))
        else:
            start = None
            for i, l in enumerate(lines):
                if l.startswith('KMT-BEGIN %s' % s.name):
                    start = i
                elif start is not None and l.startswith('KMT-END %s ' % s.name):
                    win.setdefault(s.name, []).append((start, i))
                    start = None
            if start is not None:
                win.setdefault(s.name, []).append((start, len(lines) - 1))
    return win


def kernel_reports(lines, suites):
    """Reports not provoked on purpose: [(line number, kind, text)].
    A panic is never expected."""
    win = suite_windows(lines, suites)
    bad = []
    for i, l in enumerate(lines):
        kind = report_kind(l)
        if kind is None:
            continue
        allowed = False
        if kind != 'panic':
            for s in suites:
                if kind in s.expected_reports and any(a <= i <= b for a, b in win.get(s.name, ())):
                    allowed = True
        if not allowed:
            bad.append((i + 1, kind, l.strip()))
    return bad


# ---- results per suite ----------------------------------------------------

def _kselftest_block(lines, name):
    out, inside = [], False
    for l in lines:
        if l.startswith('KMT-BEGIN %s' % name):
            inside, out = True, []
        elif inside and l.startswith('KMT-END %s ' % name):
            return out, l
        elif inside and (l.startswith('KMT-ERROR') or not l.startswith('KMT-')):
            out.append(l)
    return (out if inside else None), None


def _test_logs(lines, name):
    """{test: lines} from the KMT-LOG blocks of a kselftest suite."""
    logs, cur = {}, None
    for l in lines:
        m = re.match(r'KMT-LOG-BEGIN (\S+) (\S+)$', l)
        if m:
            cur = m.group(2) if m.group(1) == name else None
            if cur:
                logs[cur] = []
        elif l.startswith('KMT-LOG-END'):
            cur = None
        elif cur is not None:
            logs[cur].append(l)
    return logs


def _sub_counts(test_lines):
    """Pass/fail/skip counts of a kselftest program's own KTAP output."""
    if not any(re.match(r'(not )?ok \d+', l) for l in test_lines):
        return None
    t = parse_ktap(test_lines)
    c = {PASS: 0, FAIL: 0, SKIP: 0}
    for sub in t.subtests:
        c[status_of(sub)] += 1
    return c


_SKIP = re.compile(r'(?:^|\]\s+|^\s*)ok \d+ (?:selftests: \S+: )?(\S+) # SKIP\s*(.*)$')
_PLAN_SKIP = re.compile(r'^1\.\.0 # SKIP\s*(.*)$')


def skip_reasons(lines):
    """{test name: reason} from KTAP '# SKIP reason' directives, and for
    kselftest programs that skip as a whole, the '1..0 # SKIP' of their log."""
    reasons, cur = {}, None
    for l in lines:
        m = re.match(r'KMT-LOG-BEGIN \S+ \S+:(\S+)$', l)
        if m:
            cur = os.path.basename(m.group(1))
            continue
        if l.startswith('KMT-LOG-END'):
            cur = None
            continue
        m = _PLAN_SKIP.match(l.strip()) or re.match(r'Skipp(?:ing|ed):? (.+)$', l.strip())
        if m and cur and m.group(1):
            reasons[cur] = m.group(1)
            continue
        m = _SKIP.search(l)
        if m and m.group(2) and m.group(1) not in reasons:
            reasons[m.group(1)] = m.group(2)
    return reasons


_DROPPED = re.compile(r'\*\* \d+ printk messages dropped \*\*')


_PRINTK_TIME = re.compile(r'\[\s*\d+\.\d+\] ')


# printk (7.3) prints this, then the console line a more urgent message
# (a WARN) interrupted, again.
REPLAY_MARKER = '** replaying previous printk message **'


def kernel_lines(lines):
    """The kernel's own lines of a console log, when printk prints
    timestamps: user space's lines (the guest init's KMT-* markers, the
    kselftests' output) are left out, and a kernel line that the console
    printed right after a user line without a newline is split off it.
    The kernel may print behind user space: a KASAN report is printed from
    a deferred context, so a module's KUnit results can follow the init's
    next marker. Without timestamps: the lines up to the first KMT-BEGIN
    or KMT-DONE marker."""
    if not any(_PRINTK_TIME.match(l) for l in lines[:200]):
        for i, l in enumerate(lines):
            if l.startswith('KMT-BEGIN') or l.startswith('KMT-DONE'):
                return lines[:i]
        return lines
    out = []
    replay = False
    for l in lines:
        if l.strip() == REPLAY_MARKER:
            replay = True
            continue
        m = _PRINTK_TIME.search(l)
        if m:
            line = l[m.start():]
            # After the marker printk prints the interrupted line again,
            # with its own timestamp: keep it once.
            if not (replay and out and out[-1] == line):
                out.append(line)
            replay = False
    return out


def kunit_json(lines, suites, arch='arm64', config='', build_dir=''):
    """The KUnit results of one boot in the kernel's own kunit_json format
    (what kunit.py --json writes and KernelCI reads): one group per KUnit
    suite of the cell that reported, whichever KTAP document (built in, or
    a module's) it was in. None if the cell ran no KUnit suite."""
    kp = kunit_parser()
    import kunit_json  # pylint: disable=import-outside-toplevel
    wanted = [s.select for s in suites if s.kind == 'kunit']
    if not wanted:
        return None
    root = kp.Test()
    root.name = 'main'
    root.status = kp.TestStatus.SUCCESS
    for doc in ktap_documents(kernel_lines(lines)):
        for t in parse_ktap(doc).subtests:
            if t.name in wanted:
                root.subtests.append(t)
                root.counts.add_subtest_counts(t.counts)
    meta = kunit_json.Metadata(arch=arch, def_config=config, build_dir=build_dir)
    return kunit_json.get_json_result(root, meta)


def suite_results(lines, suite):
    """[(test name, status, detail)] for one suite, or an error string."""
    if suite.kind == 'kunit':
        klines = kernel_lines(lines)
        found = []
        for doc in ktap_documents(klines):
            found += [t for t in parse_ktap(doc).subtests if t.name == suite.select]
        if not found:
            return 'KUnit suite %s never reported a result' % suite.select
        t = found[0]
        named = [c for c in t.subtests if c.name]
        if not named:
            return 'KUnit suite %s ran no test case' % suite.select
        if len(named) < len(t.subtests) or (t.expected_count or 0) > len(named):
            dropped = any(_DROPPED.search(l) for l in lines)
            return 'KUnit suite %s: %d of %d cases reported (%s)' % (
                suite.select, len(named), max(len(t.subtests), t.expected_count or 0),
                'printk dropped console messages' if dropped else 'crash?')
        return [(c.name, status_of(c), '') for c in named]
    block, end = _kselftest_block(lines, suite.name)
    if block is None:
        return 'kselftest suite %s never started' % suite.name
    if end is None:
        return 'kselftest suite %s never finished' % suite.name
    errors = [l for l in block if l.startswith('KMT-ERROR')]
    if errors:
        return errors[0]
    top = parse_ktap(block)
    logs = _test_logs(lines, suite.name)
    res = []
    named = [t for t in top.subtests if t.name]
    if len(named) < len(top.subtests):
        return 'kselftest suite %s: %d of %d tests reported' % (
            suite.name, len(named), len(top.subtests))
    for t in named:
        name = t.name.split(': ')[-1].strip()
        st = status_of(t)
        detail = ''
        sub = None
        for key, tl in logs.items():
            if os.path.basename(key.split(':', 1)[-1]) == name:
                sub = _sub_counts(tl)
        if sub:
            detail = '%d/%d subtests passed, %d skipped' % (
                sub[PASS], sum(sub.values()), sub[SKIP])
            if st == PASS and sub[FAIL]:
                st = FAIL
        res.append((name, st, detail))
    if not res:
        return 'kselftest suite %s ran no test' % suite.name
    if top.expected_count and len(res) < top.expected_count:
        return 'kselftest suite %s: %d of %d tests reported' % (
            suite.name, len(res), top.expected_count)
    return res


def analyze(lines, cell, timed_out=False):
    """Everything one boot tells: {'tests': [...], 'problems': [...]}."""
    suites = [targets.SUITES[s] for s in cell.suites]
    problems = []
    tests = []
    if timed_out:
        problems.append(problem('timeout', lines[-1] if lines else ''))
    for n, kind, text in kernel_reports(lines, suites):
        problems.append(problem(kind, text, n))
    for s in suites:
        r = suite_results(lines, s)
        if isinstance(r, str):
            problems.append(problem('missing', r))
            tests.append(test(s.name, '(suite)', FAIL, r))
            continue
        reasons = skip_reasons(lines)
        for name, st, detail in r:
            if st == SKIP and not detail:
                detail = reasons.get(name, '')
            tests.append(test(s.name, name, st, detail))
    for i, l in enumerate(lines):
        m = re.match(r'KMT-MODULE (\S+) rc=(\d+)', l)
        if m and m.group(2) != '0':
            problems.append(problem('module', 'modprobe %s failed (rc=%s)' % m.groups(),
                                    i + 1))
    if not timed_out and not any(l.startswith('KMT-DONE') for l in lines):
        problems.append(problem('missing', 'init never finished (no KMT-DONE)'))
    machine = targets.MACHINES[cell.machine]
    shapes = ([('machine ' + machine.name, e) for e in machine.boot_expect]
              + [('cell ' + cell.name, e) for e in cell.boot_expect])
    for who, (pattern, what) in shapes:
        if not any(re.search(pattern, l) for l in lines):
            problems.append(problem('machine', '%s: the boot log does not show %s (/%s/)'
                                    % (who, what, pattern)))
    return {'tests': tests, 'problems': problems}


# ---- expectations -----------------------------------------------------------

def annotated_lines(path):
    """(line number, body, comment) of each line of a data file whose lines
    are 'BODY # COMMENT' (comment-only and blank lines skipped); nothing
    when the file does not exist."""
    if not os.path.exists(path):
        return
    with open(path) as f:
        for n, line in enumerate(f, 1):
            body, _, comment = line.partition('#')
            if body.strip():
                yield n, body.strip(), comment


def load_expectations(path=paths.EXPECTATIONS):
    """Known failures of the base: 'CELL-GLOB SUITE/TEST-GLOB fail # reason'.
    A reason is required."""
    exp = []
    for n, body, reason in annotated_lines(path):
        parts = body.split()
        if len(parts) != 3 or parts[2] != 'fail' or '/' not in parts[1]:
            raise log.StepError('%s:%d: expected "CELL SUITE/TEST fail # reason"' % (path, n))
        if not reason.strip():
            raise log.StepError('%s:%d: an expected failure needs a reason' % (path, n))
        suite, test = parts[1].split('/', 1)
        exp.append({'cell': parts[0], 'suite': suite, 'test': test,
                    'reason': reason.strip()})
    return exp


def apply_expectations(cell_name, tests, expectations):
    """Mark expected failures; an expected failure that passed is an error."""
    problems = []
    for t in tests:
        for e in expectations:
            if (fnmatch.fnmatch(cell_name, e['cell']) and e['suite'] == t['suite']
                    and fnmatch.fnmatch(t['name'], e['test'])):
                if t['status'] == FAIL:
                    t['status'] = XFAIL
                    t['detail'] = 'expected failure: ' + e['reason']
                elif t['status'] == PASS:
                    problems.append(problem(
                        'unexpected-pass', '%s/%s passed but expectations.txt says it fails '
                        '(%s): update the file' % (t['suite'], t['name'], e['reason'])))
    return problems
