"""The series' generic code built where the kernel test robot builds it:
x86_64 with the host's gcc and 32-bit arm with Debian's
gcc-arm-linux-gnueabihf, W=1, on the C files the series touches and on
users of the generic headers it changes, before and after the series.

A file passes when it compiles with the series and has no warning the
base does not have; a file that neither tree builds in a configuration
(its subsystem is off there: kernel/scs.c without SHADOW_CALL_STACK) is
skipped with that reason, one that only the series fails to build fails.
The configurations are configs/x86_64-*.config fragments merged onto
x86_64_defconfig and configs/arm-check.config onto multi_v7_defconfig
(scripts/kconfig/merge_config.sh).

bisect_gate() does the same at every prefix of the series (make
series-check ALL=1, gate bisect-cross): one out dir per configuration,
each prefix an incremental build of the files its commits have touched
so far, reconfigured when a prefix changes a Kconfig file."""

import collections
import dataclasses
import os
import subprocess

from . import build, diag, log, paths, refbench, results, source

@dataclasses.dataclass(frozen=True)
class Arch:
    name: str              # ARCH=
    defconfig: str         # what the fragments are merged onto
    cross: str = ''        # CROSS_COMPILE= ('': the host's gcc)
    package: str = ''      # the Debian package of that compiler


ARCHES = {a.name: a for a in (
    Arch('x86_64', 'arch/x86/configs/x86_64_defconfig'),
    Arch('arm', 'arch/arm/configs/multi_v7_defconfig', 'arm-linux-gnueabihf-',
         'gcc-arm-linux-gnueabihf'),
)}

# Configurations: (name, fragments merged onto the arch's defconfig, arch).
CONFIGS = (
    ('x86_64-defconfig', ('x86_64-check.config',), 'x86_64'),
    ('x86_64-kasan', ('x86_64-check.config', 'x86_64-kasan.config'), 'x86_64'),
    ('arm-multi_v7', ('arm-check.config',), 'arm'),
)
# Which of them make check runs (the others: make series-check ALL=1).
QUICK_CONFIGS = ('x86_64-defconfig',)
# Which of them bisect_gate() builds at every prefix of the series.
BISECT_CONFIGS = tuple(c[0] for c in CONFIGS)

# Objects that include a generic header the series changes, compiled on
# its behalf (a header is not compiled by itself). The header must be in
# their preprocessed source: checked, so a list that stops including it
# fails instead of passing emptily.
HEADER_USERS = {
    'include/linux/refcount.h': ('lib/refcount.c', 'kernel/cred.c', 'kernel/fork.c'),
    'include/linux/gfp_types.h': ('mm/page_alloc.c', 'mm/vmalloc.c'),
    'include/linux/thread_info.h': ('kernel/fork.c',),
}
# The same for headers whose users are per architecture.
ARCH_HEADER_USERS = {
    'x86_64': {'include/asm-generic/pgalloc.h': ('arch/x86/mm/pgtable.c',)},
    'arm': {'include/asm-generic/pgalloc.h': ('arch/arm/mm/pgd.c',)},
}


def config_arch(name):
    """The Arch of configuration name."""
    return ARCHES[{c[0]: c[2] for c in CONFIGS}[name]]


def packages(configs):
    """The host packages the compilers of configs need."""
    return sorted({config_arch(n).package for n in configs} - {''})


def arch_env(arch):
    """The environment of a build for arch: the fixed build identity, and
    its CROSS_COMPILE (none: the host's own compiler)."""
    env = refbench.x86_env()
    env['ARCH'] = arch.name
    if arch.cross:
        env['CROSS_COMPILE'] = arch.cross
    return env


def touched(tag, pattern):
    out = source.git(['diff', '--name-only', '--diff-filter=AM', tag, 'HEAD', '--',
                      pattern]).stdout
    return [f for f in out.split() if f]


def files_to_build(tag, arch='x86_64'):
    """The series' C files outside arch/ (arm64's own files do not build
    here) and the header users of HEADER_USERS (and ARCH_HEADER_USERS of
    arch) for the headers it changes, each once: {file: why}."""
    out = collections.OrderedDict()
    for f in touched(tag, '*.c'):
        if not f.startswith('arch/'):
            out[f] = 'changed by the series'
    users = dict(HEADER_USERS, **ARCH_HEADER_USERS.get(arch, {}))
    for h in touched(tag, '*.h'):
        for f in users.get(h, ()):
            out.setdefault(f, 'includes %s' % h)
    return out


def configure(name, fragments, out, logfile):
    arch = config_arch(name)
    env = arch_env(arch)
    os.makedirs(out, exist_ok=True)
    frags = [os.path.join(paths.CONFIGS, f) for f in fragments]
    log.run([os.path.join(paths.SRC, 'scripts/kconfig/merge_config.sh'), '-m', '-O', out,
             os.path.join(paths.SRC, arch.defconfig)] + frags,
            logfile=logfile, cwd=paths.SRC, env=env, quiet=True)
    log.run(['make', 'O=' + out, 'ARCH=' + arch.name, 'olddefconfig'], logfile=logfile,
            cwd=paths.SRC, env=env, quiet=True)
    with open(os.path.join(out, '.config')) as f:
        have = build.parse_config(f)
    # Options of the series' own tests do not exist before it: only the
    # others must hold on the base.
    want = build.requested(frags)
    bad = [b for b in build.config_mismatches(want, have)
           if not b[0].startswith('CONFIG_REFCOUNT_KUNIT')]
    if bad:
        raise log.StepError('%s: %s' % (name, ', '.join('%s=%s (got %s)' % b for b in bad)))


def compile_files(out, files, logfile, arch=ARCHES['x86_64']):
    """{file: diagnostics} with W=1 (None: does not compile), and {file:
    preprocessed text} for the header check."""
    env = arch_env(arch)
    cc = ('ccache ' if build._ccache() else '') + arch.cross + 'gcc'
    found, pre = {}, {}
    for f in files:
        if not os.path.exists(os.path.join(paths.SRC, f)):
            found[f] = None
            continue
        base = f[:-2]
        cmd = ['make', '-j' + build.jobs(), 'O=' + out, 'ARCH=' + arch.name, 'CC=' + cc,
               'W=1', base + '.o', base + '.i']
        log.show_cmd(cmd, paths.SRC)
        res = subprocess.run(cmd, cwd=paths.SRC, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        with open(logfile, 'a') as lf:
            lf.write('$ %s\n%s' % (' '.join(cmd), res.stdout))
        if res.returncode != 0:
            found[f] = None
            continue
        found[f] = diag.own_diagnostics(diag.diagnostics(res.stdout), f)
        try:
            with open(os.path.join(out, base + '.i'), errors='replace') as p:
                pre[f] = p.read()
        except OSError:
            pre[f] = ''
    return found, pre


def first_error(logfile, f):
    """The first error line about f in the log, for the record."""
    try:
        with open(logfile, errors='replace') as lf:
            for line in lf:
                if 'error' in line and f.split('/')[-1][:-2] in line:
                    return line.strip()[:200]
    except OSError:
        pass
    return 'see the log'


def includes(pre, header):
    """Whether preprocessed text names header in a line marker."""
    return ('"%s"' % header) in pre or ('/%s"' % header) in pre


def verdicts(name, files, before, after, pre, logfile, suite='x86_64'):
    """One test per file of files ({file: why}) from the W=1 diagnostics
    of the base (before) and the series (after; None: did not compile),
    in suite (the gate's name)."""
    tests = []
    for f, why in files.items():
        test = '%s %s' % (name, f)
        if after.get(f) is None:
            if f in before and before[f] is None:
                tests.append(results.test(suite, test, results.SKIP,
                                          'not built in %s, before or after the series'
                                          % name))
            else:
                tests.append(results.test(suite, test, results.FAIL,
                                          'does not compile with the series: %s'
                                          % first_error(logfile, f)))
            continue
        header = why[len('includes '):] if why.startswith('includes ') else None
        if header and not includes(pre.get(f, ''), header):
            tests.append(results.test(suite, test, results.FAIL,
                                      '%s no longer includes %s: HEADER_USERS needs '
                                      'another user' % (f, header)))
            continue
        new = sorted((after[f] - (before.get(f) or collections.Counter())).elements())
        tests.append(results.test(suite, test, results.PASS if not new else results.FAIL,
                                  '%s; no new W=1 warning' % why if not new else
                                  '%d new W=1 warning(s): %s' % (len(new), '; '.join(
                                      '%s: %s' % (k, m) for _, k, m in new[:3]))))
        log.info('%s %s %s: %s' % (suite, name, f, 'no new warning' if not new else
                                        '%d NEW' % len(new)))
    return tests


def selected(configs):
    """(name, fragments, Arch) of the CONFIGS named in configs, in order."""
    return [(n, f, config_arch(n)) for n, f, _ in CONFIGS if n in configs]


def fresh_log(what):
    """The gate's log file, emptied."""
    logfile = os.path.join(paths.LOGS, 'series-%s.log' % what)
    if os.path.exists(logfile):
        os.remove(logfile)
    return logfile


def base_diagnostics(tag, name, fragments, files, logfile):
    """{file: diagnostics} of the base for those of files it has, built in
    configuration name (its own out dir)."""
    in_base = [f for f in files if source.git(
        ['cat-file', '-e', '%s:%s' % (tag, f)], check=False).returncode == 0]
    with source.checked_out(tag):
        out = build.out_dir(name, 'base')
        configure(name, fragments, out, logfile)
        before, _ = compile_files(out, in_base, logfile, config_arch(name))
    return before


def gate(tag, configs=QUICK_CONFIGS, suite='x86_64'):
    """One test per (configuration, file), in suite (the gate's name)."""
    logfile = fresh_log('+'.join(configs))
    tests = []
    for name, fragments, arch in selected(configs):
        files = files_to_build(tag, arch.name)
        with log.phase('%s W=1: %s, %d files, base then series' % (arch.name, name, len(files))):
            before = base_diagnostics(tag, name, fragments, files, logfile)
            out = build.out_dir(name, 'series')
            configure(name, fragments, out, logfile)
            after, pre = compile_files(out, list(files), logfile, arch)
        tests += verdicts(name, files, before, after, pre, logfile, suite)
    return tests, logfile


def prefix_test(name, prefix, file_tests, suite='bisect-cross'):
    """One test for a prefix in configuration name from the per-file
    tests of verdicts(): it fails if any file fails (naming the first),
    skips if no file of it builds there (none touched yet, or all off in
    that configuration), else passes."""
    test = '%s %s' % (name, prefix)
    failed = [t for t in file_tests if t['status'] == results.FAIL]
    if failed:
        return results.test(suite, test, results.FAIL, '%d of %d file(s) failed, first %s'
                            % (len(failed), len(file_tests),
                               '%s: %s' % (failed[0]['name'].split(' ', 1)[1],
                                           failed[0]['detail'])))
    built = [t for t in file_tests if t['status'] == results.PASS]
    if not built:
        return results.test(suite, test, results.SKIP,
                            'no file of this prefix is built in %s' % name
                            if file_tests else 'touches no generic file yet')
    return results.test(suite, test, results.PASS, '%d file(s) built, no new W=1 warning: %s'
                        % (len(built), ' '.join(t['name'].split(' ', 1)[1] for t in built)))


def kconfig_changed(prev, sha):
    """Whether the commits prev..sha change a Kconfig file (prev None: the
    first prefix, always configured)."""
    if prev is None:
        return True
    out = source.git(['diff', '--name-only', prev, sha]).stdout.split()
    return any(os.path.basename(f).startswith('Kconfig') for f in out)


def bisect_gate(tag, commits, configs=BISECT_CONFIGS, suite='bisect-cross'):
    """For each configuration of configs, every prefix of the series
    (commits: (sha, subject), oldest first): the files files_to_build()
    names at that prefix compile W=1 with no warning the base does not
    have. One test per (configuration, prefix)."""
    logfile = fresh_log('bisect-cross')
    tests = []
    for name, fragments, arch in selected(configs):
        everything = files_to_build(tag, arch.name)
        with log.phase('%s W=1: %s, the base' % (arch.name, name)):
            before = base_diagnostics(tag, name, fragments, everything, logfile)
        out = build.out_dir(name, 'bisect')
        with source.checked_out(tag):
            prev = None
            for i, (sha, subject) in enumerate(commits, 1):
                source.git(['checkout', '-q', sha])
                prefix = '%d/%d %s' % (i, len(commits), subject)
                files = files_to_build(tag, arch.name)
                with log.phase('%s W=1: %s at %s (%d files)' % (arch.name, name, prefix,
                                                                 len(files))):
                    if files:
                        if kconfig_changed(prev, sha):
                            configure(name, fragments, out, logfile)
                        prev = sha
                    after, pre = compile_files(out, list(files), logfile, arch)
                file_tests = verdicts(name, files, before, after, pre, logfile, suite)
                tests.append(prefix_test(name, prefix, file_tests, suite))
    return tests, logfile
