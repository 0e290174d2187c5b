"""Configure (merge_config.sh + verification), build the kernel Image and
the kselftests, and pack the guest initramfs."""

import gzip
import os
import re
import shutil
import subprocess

from . import cache, log, paths, source, targets

KERNEL_ENV = {
    'ARCH': paths.ARCH,
    # Fixed build identity: reproducible images, better ccache hits.
    'KBUILD_BUILD_USER': 'kmt', 'KBUILD_BUILD_HOST': 'kmt',
    'KBUILD_BUILD_TIMESTAMP': '2000-01-01', 'KBUILD_BUILD_VERSION': '1',
}


FIXED_MTIME = 946684800  # 2000-01-01, as KBUILD_BUILD_TIMESTAMP


def jobs():
    return str(os.cpu_count() or 2)


def _ccache():
    """'ccache ' to put before the compiler, or '' (none, or KMT_NO_CCACHE)."""
    if shutil.which('ccache') and not os.environ.get('KMT_NO_CCACHE'):
        return 'ccache '
    return ''


def cross_compile():
    return _ccache() + paths.CROSS_COMPILE


def llvm(cfg=None):
    """make LLVM= for a clang config: its own version (KernelConfig.
    llvm_version) where it needs a newer LLVM than the base's, else the
    base's (Base.llvm)."""
    return (cfg is not None and cfg.llvm_version) or paths.BASE.llvm


def clang(cfg=None):
    """The clang of a config's LLVM=: clang, or clang-19 for LLVM=-19."""
    version = llvm(cfg)
    return 'clang' + ('' if version == '1' else version)


def make_args(out, cfg=None):
    """make with the output directory and the toolchain of a config: GCC
    (the cross compiler, through ccache), or clang and the LLVM tools
    (LLVM=1, or the base's version suffix; CROSS_COMPILE then only names
    the target)."""
    args = ['make', '-j' + jobs(), 'O=' + out, 'ARCH=' + paths.ARCH]
    if cfg is not None and cfg.llvm:
        return args + ['LLVM=' + llvm(cfg), 'CC=' + _ccache() + clang(cfg),
                       'CROSS_COMPILE=' + paths.CROSS_COMPILE]
    return args + ['CROSS_COMPILE=' + cross_compile()]


def toolchain_env(cfg):
    """Environment for merge_config.sh: it runs the compiler to probe
    options (CC_IS_CLANG, CC_HAVE_SHADOW_CALL_STACK, ...)."""
    env = dict(KERNEL_ENV, CROSS_COMPILE=paths.CROSS_COMPILE)
    if cfg.llvm:
        env.update(LLVM=llvm(cfg), CC=clang(cfg))
    return env


def out_dir(cfg_name, tree='series'):
    return os.path.join(paths.OUT, '%s-%s' % (tree, cfg_name))


# ---- configuration -----------------------------------------------------

_SET = re.compile(r'^(CONFIG_[A-Za-z0-9_]+)=(.*)$')
_UNSET = re.compile(r'^# (CONFIG_[A-Za-z0-9_]+) is not set$')


def parse_config(lines):
    """{CONFIG_X: value} with 'n' for '# CONFIG_X is not set'."""
    values = {}
    for line in lines:
        line = line.strip()
        m = _SET.match(line)
        if m:
            values[m.group(1)] = m.group(2)
            continue
        m = _UNSET.match(line)
        if m:
            values[m.group(1)] = 'n'
    return values


def requested(fragments):
    """The options requested by the fragments, later ones winning."""
    want = {}
    for frag in fragments:
        with open(frag) as f:
            want.update(parse_config(f))
    return want


def config_mismatches(want, have):
    """Options whose final value differs from the request, as
    (option, requested, actual). An option absent from .config is 'n'."""
    bad = []
    for opt, val in sorted(want.items()):
        got = have.get(opt, 'n')
        if got != val:
            bad.append((opt, val, got))
    return bad


def fragment_paths(cfg, tree='series', series_tests=None):
    """The config fragments; the series' own test options (series_fragments)
    unless building the base (series_tests=False forces them off, e.g. for
    an empty series; a tuple of suite names: only the fragments those
    suites need)."""
    if series_tests is None:
        series_tests = tree != 'base'
    if isinstance(series_tests, tuple):
        # The suites a part of the series carries (a prefix of it, say).
        has = series_tests
    else:
        has = targets.series_carries(paths.BASE) if series_tests else ()
    series = tuple(f for f in cfg.series_fragments if targets.SERIES_FRAGMENT_NEEDS[f] in has)
    names = cfg.fragments + series + paths.BASE.fragments
    return [os.path.join(paths.CONFIGS, f) for f in names]


def configure(cfg, src, out, logfile, tree='series', series_tests=None):
    frags = fragment_paths(cfg, tree, series_tests)
    stamp = cache.key(cfg.base, ('llvm' + llvm(cfg)) if cfg.llvm else 'gcc', files=frags)
    stamp_file = os.path.join(out, '.kmt-config-stamp')
    dot_config = os.path.join(out, '.config')
    if cache.fresh(stamp_file, stamp, outputs=(dot_config,)):
        log.info('config %s up to date' % cfg.name)
        return
    os.makedirs(out, exist_ok=True)
    cache.invalidate(stamp_file)
    env = toolchain_env(cfg)
    merge = [os.path.join(src, 'scripts/kconfig/merge_config.sh'), '-O', out]
    if cfg.base == 'allnoconfig':
        cmd = merge + ['-n'] + frags
    else:
        cmd = merge + [os.path.join('arch', paths.ARCH, 'configs', cfg.base)] + frags
    log.run(cmd, logfile=logfile, cwd=src, env=env)
    with open(dot_config) as f:
        lines = f.read().splitlines()
    have = parse_config(lines)
    want = requested(frags)
    for opt, why in paths.BASE.gone:
        if opt in want:
            if any(re.match(r'(# )?%s[= ]' % opt, l) for l in lines):
                raise log.StepError('config %s: %s is listed as gone from base %s (%s), '
                                    'but the kernel still has it: fix kmt/bases.py'
                                    % (cfg.name, opt, paths.BASE_NAME, why))
            log.info('config %s: %s not checked: base %s has no such option (%s)'
                     % (cfg.name, opt, paths.BASE_NAME, why))
            del want[opt]
    bad = config_mismatches(want, have)
    if bad:
        raise log.StepError(
            'config %s: %d requested option(s) did not end up set (missing '
            'dependency or wrong name; merge_config.sh output in %s):\n%s'
            % (cfg.name, len(bad), logfile,
               '\n'.join('    %s: requested %s, got %s' % b for b in bad)))
    cache.record(stamp_file, stamp)


# ---- kernel and kselftests ----------------------------------------------

def build_kernel(cfg, src, out, logfile, tree='series', series_tests=None):
    configure(cfg, src, out, logfile, tree, series_tests)
    goals = ['Image'] + (['modules'] if cfg.modules else [])
    log.run(make_args(out, cfg) + goals, logfile=logfile, cwd=src, env=KERNEL_ENV)
    image = os.path.join(out, 'arch', paths.ARCH, 'boot', 'Image')
    if not os.path.exists(image):
        raise log.StepError('no Image after the build (log: %s)' % logfile)
    return image


def install_modules(cfg, src, out, logfile):
    """modules_install (stripped, depmod run) into OUT/modroot; returns its
    lib/modules directory for the initramfs, or None without modules."""
    if not cfg.modules:
        return None
    root = os.path.join(out, 'modroot')
    shutil.rmtree(root, ignore_errors=True)
    log.run(make_args(out, cfg) + ['INSTALL_MOD_PATH=' + root, 'INSTALL_MOD_STRIP=1',
                                   'modules_install'],
            logfile=logfile, cwd=src, env=KERNEL_ENV)
    moddir = os.path.join(root, 'lib', 'modules')
    if not os.path.isdir(moddir):
        raise log.StepError('modules_install left no lib/modules (log: %s)' % logfile)
    return moddir


def kselftest_make_vars():
    """TARGETS= and the <COLLECTION>_SUBTARGETS= of the kselftest suites
    (targets.SUITES), e.g. TARGETS=arm64 lkdtm, ARM64_SUBTARGETS=mte."""
    collections, subs = targets.kselftest_build()
    args = ['TARGETS=' + ' '.join(collections)]
    for coll in collections:
        if subs.get(coll):
            args.append('%s_SUBTARGETS=%s' % (coll.upper().replace('-', '_'),
                                              ' '.join(subs[coll])))
    return args


def build_kselftests(src, out, logfile):
    """Cross-build and install the kselftests the suites use; returns the
    install directory (holding run_kselftest.sh)."""
    inst = os.path.join(out, 'kselftest', 'kselftest_install')
    log.run(make_args(out) + kselftest_make_vars() + ['kselftest-install'],
            logfile=logfile, cwd=src, env=KERNEL_ENV)
    if not os.path.exists(os.path.join(inst, 'run_kselftest.sh')):
        raise log.StepError('kselftest install has no run_kselftest.sh (log: %s)' % logfile)
    mte = os.path.join(inst, 'arm64')
    if not any(n.startswith('check_') for n in os.listdir(mte)):
        raise log.StepError('no arm64 mte kselftest was built (does %sgcc support '
                            '+memtag?); log: %s' % (paths.CROSS_COMPILE, logfile))
    return inst


# ---- guest userspace ------------------------------------------------------

# arm64 packages unpacked into the initramfs: busybox for the shell and
# tools, GNU coreutils (lkdtm's run.sh uses mktemp --tmpdir and
# comm --nocheck-order, which busybox lacks) and the shared libraries that
# coreutils and the kselftests link against.
GUEST_DEBS = ['busybox-static', 'coreutils', 'libc6', 'libacl1', 'libattr1',
              'libselinux1', 'libpcre2-8-0', 'libgmp10']


def fetch_debs(logfile):
    os.makedirs(paths.DEBS, exist_ok=True)
    have = os.listdir(paths.DEBS)
    missing = [p for p in GUEST_DEBS
               if not any(d.startswith(p + '_') and d.endswith('_arm64.deb') for d in have)]
    if missing:
        log.run(['apt-get', 'download'] + ['%s:arm64' % p for p in missing],
                logfile=logfile, cwd=paths.DEBS)
    return sorted(os.path.join(paths.DEBS, d) for d in os.listdir(paths.DEBS)
                  if d.endswith('_arm64.deb'))


def program_cflags(srcf):
    """Extra compiler flags a guest program asks for in its first lines
    (a '// kmt-cflags: ...' comment, e.g. -march=armv8.5-a+memtag)."""
    with open(srcf) as f:
        for _, line in zip(range(10), f):
            m = re.match(r'\s*(?://|/?\*)\s*kmt-cflags:(.*)$', line)
            if m:
                return m.group(1).replace('*/', '').split()
    return []


def guest_programs(out_dir_, logfile):
    """Cross-build the in-guest C programs in guest/ (static)."""
    srcdir = os.path.join(paths.GUEST, 'src')
    built = []
    if not os.path.isdir(srcdir):
        return built
    os.makedirs(out_dir_, exist_ok=True)
    for name in sorted(os.listdir(srcdir)):
        if not name.endswith('.c'):
            continue
        exe = os.path.join(out_dir_, name[:-2])
        srcf = os.path.join(srcdir, name)
        if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(srcf):
            log.run([paths.CROSS_COMPILE + 'gcc', '-O2', '-static', '-Wall'] +
                    program_cflags(srcf) + ['-o', exe, srcf], logfile=logfile, quiet=True)
        built.append(exe)
    return built


def make_initramfs(kselftest_dir, out, logfile, modules_dir=None):
    """Pack busybox, coreutils, libraries, the kselftests, the kernel's
    modules (if any) and the init script into a gzip'ed newc cpio archive
    (booted with -initrd)."""
    root = os.path.join(out, 'initramfs')
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    stage = os.path.join(out, 'debs-unpacked')
    shutil.rmtree(stage, ignore_errors=True)
    for deb in fetch_debs(logfile):
        log.run(['dpkg-deb', '-x', deb, stage], logfile=logfile, quiet=True)
    for d in ('bin', 'sbin', 'usr/bin', 'usr/sbin', 'lib', 'proc', 'sys', 'dev',
              'tmp', 'root', 'etc', 'mnt', 'kselftest'):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    # Libraries (Debian bookworm: not usr-merged inside the packages).
    shutil.copytree(os.path.join(stage, 'lib'), os.path.join(root, 'lib'),
                    dirs_exist_ok=True, symlinks=True)
    for d in ('lib', 'libexec'):
        if os.path.isdir(os.path.join(stage, 'usr', d)):
            shutil.copytree(os.path.join(stage, 'usr', d), os.path.join(root, 'usr', d),
                            dirs_exist_ok=True, symlinks=True)
    # GNU coreutils first in PATH (/usr/bin), busybox applets in /bin.
    for d in ('bin', 'usr/bin'):
        sd = os.path.join(stage, d)
        if os.path.isdir(sd):
            for n in os.listdir(sd):
                if n != 'busybox':
                    shutil.copy2(os.path.join(sd, n), os.path.join(root, 'usr', 'bin', n),
                                 follow_symlinks=False)
    shutil.copy2(os.path.join(stage, 'bin', 'busybox'), os.path.join(root, 'bin', 'busybox'))
    os.symlink('busybox', os.path.join(root, 'bin', 'sh'))
    shutil.copy2(os.path.join(paths.GUEST, 'init'), os.path.join(root, 'init'))
    os.chmod(os.path.join(root, 'init'), 0o755)
    shutil.copytree(kselftest_dir, os.path.join(root, 'kselftest'), dirs_exist_ok=True,
                    symlinks=True)
    for exe in guest_programs(os.path.join(out, 'guest-bin'), logfile):
        shutil.copy2(exe, os.path.join(root, 'usr', 'bin'))
    if modules_dir:
        shutil.copytree(modules_dir, os.path.join(root, 'lib', 'modules'),
                        dirs_exist_ok=True, symlinks=True)
    cpio = os.path.join(out, 'initramfs.cpio.gz')
    # Reproducible: the same inputs give the same bytes (sorted names, one
    # fixed mtime, renumbered inodes, no gzip timestamp), so two kernels
    # built from the same tree boot the same userspace, byte for byte,
    # and exact counts can be compared.
    names = []
    for d, dirs, fnames in os.walk(root):
        for n in dirs + fnames:
            path = os.path.join(d, n)
            names.append(os.path.relpath(path, root))
            os.utime(path, (FIXED_MTIME, FIXED_MTIME), follow_symlinks=False)
    files = ''.join('./%s\n' % n for n in sorted(names)).encode()
    data = subprocess.run(['cpio', '--quiet', '-o', '-H', 'newc', '--owner=0:0',
                           '--reproducible'],
                          cwd=root, input=files, check=True,
                          stdout=subprocess.PIPE).stdout
    with open(cpio, 'wb') as raw, \
            gzip.GzipFile(fileobj=raw, mode='wb', compresslevel=1, mtime=0) as f:
        f.write(data)
    log.info('initramfs %s (%.1f MB)' % (cpio, os.path.getsize(cpio) / 1e6))
    return cpio


def kselftest_out(cfg, src, out, tree, logfile):
    """Where the kselftests of a config are built. User space is always
    built with the GCC cross toolchain. For a clang kernel that happens in
    an output directory of its own (configured with allnoconfig): running
    the kernel's kselftest target with GCC in the clang build directory
    would make kconfig resync .config for the other compiler."""
    if not cfg.llvm:
        return out
    ks_out = os.path.join(paths.OUT, '%s-kselftest-gcc' % tree)
    if not os.path.exists(os.path.join(ks_out, '.config')):
        os.makedirs(ks_out, exist_ok=True)
        log.run(make_args(ks_out) + ['allnoconfig'], logfile=logfile, cwd=src,
                env=KERNEL_ENV)
    return ks_out


def build_all(cfg_name, src=paths.SRC, tree='series', series_tests=None):
    """Kernel Image, kselftests and initramfs for one config; returns
    (image, initramfs)."""
    cfg = targets.CONFIGS[cfg_name]
    out = out_dir(cfg_name, tree)
    logfile = os.path.join(paths.LOGS, 'build-%s-%s.log' % (tree, cfg_name))
    os.makedirs(paths.LOGS, exist_ok=True)
    # Shared use of the tree: no other kmt run changes its checkout meanwhile.
    with source.tree_lock(src, what='build %s' % cfg_name):
        with log.phase('build %s kernel (%s + %s), log %s' % (
                cfg_name, cfg.base, ' '.join(cfg.fragments), os.path.relpath(logfile))):
            image = build_kernel(cfg, src, out, logfile, tree, series_tests)
            modules = install_modules(cfg, src, out, logfile)
        with log.phase('build kselftests (%s)' % ' '.join(kselftest_make_vars())):
            ksft = build_kselftests(src, kselftest_out(cfg, src, out, tree, logfile), logfile)
        with log.phase('initramfs'):
            initrd = make_initramfs(ksft, out, logfile, modules)
    return image, initrd
