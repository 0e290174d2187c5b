"""A boot as a LAVA job: the same BootSpec that drives the local QEMU run,
rendered for LAVA's qemu device type (or a template for another device).

LAVA runs a job's QEMU from the device's context (arch, machine, cpu,
memory, extra options) and deploys the kernel and the initramfs to tmpfs;
the kernel command line travels in the kernel's image_arg, as tuxrun
does. The guest runs its own init (no shell to log in to), so the results
come from test monitors that cut the console into parts: the KUnit part
(until KMT-KUNIT-DONE) and one part per kselftest suite (KMT-BEGIN ..
KMT-END). The patterns report passes and failures; skipped cases carry a
'# SKIP' directive the patterns leave out, so skips are taken from the
console log LAVA keeps, which kmt parses as it parses a local log.

A job is JSON text, which is valid YAML (what lavacli and lava-run read).
"""

import json
import math
import os

from . import bootspec, targets

DEVICE_TYPES = ('qemu',)
# The end of a result line: any '# directive' but SKIP (a failure with
# '# exit=1' or '# TIMEOUT 45 seconds' is still a failure; skips are left
# out, as LAVA's monitors cannot report them), then the line end as LAVA
# sees it: it reads QEMU's serial console through a pty, so the guest's
# CRLF arrives as CR CR LF.
LINE_END = r'(?: #(?! SKIP)[^\r\n]*)?\r*\n'
# KUnit case lines (indented under their suite: '    ok 3 name');
# '(?P<result>...)' and '(?P<test_case_id>...)' are LAVA's.
KUNIT_PATTERN = r'\s{2,}(?P<result>ok|not ok) \d+ (?P<test_case_id>[^\s#]+)' + LINE_END
# kselftest results as run_kselftest.sh prints them.
KSELFTEST_PATTERN = (r'(?P<result>ok|not ok) \d+ selftests: \S+: '
                     r'(?P<test_case_id>[^\s#]+)' + LINE_END)
FIXUP = {'ok': 'pass', 'not ok': 'fail'}
# kmt-bench's figure lines: the first figure (insn_per_op on an
# exact-count boot, ns_per_op on a wall-time boot) as LAVA's measurement.
BENCH_PATTERN = (r'# kmt-bench (?P<test_case_id>\S+) ops=\d+ '
                 r'(?P<units>insn_per_op|ns_per_op)=(?P<measurement>[0-9.]+)[^\r\n]*\r*\n')


def _minutes(seconds):
    return {'minutes': max(1, int(math.ceil(seconds / 60.0)))}


def bench_arg(spec):
    """The kmt.bench= argument of a benchmark boot, or None."""
    return next((a[len('kmt.bench='):] for a in spec.cmdline if a.startswith('kmt.bench=')),
                None)


def monitors(spec):
    """The test monitors of a boot, in console order."""
    suites = [targets.SUITES[s] for s in spec.suites]
    out = []
    if bench_arg(spec) is not None:
        out.append({'name': 'kmt-bench', 'start': 'KMT-BEGIN bench', 'end': 'KMT-END bench',
                    'pattern': BENCH_PATTERN})
    if any(s.kind == 'kunit' for s in suites) or spec.kunit_filter:
        out.append({'name': 'kunit', 'start': 'KTAP version 1', 'end': 'KMT-KUNIT-DONE',
                    'pattern': KUNIT_PATTERN, 'fixupdict': dict(FIXUP)})
    if not spec.kunit_filter:
        for s in suites:
            if s.kind == 'kselftest':
                out.append({'name': s.name, 'start': 'KMT-BEGIN %s' % s.name,
                            'end': 'KMT-END %s' % s.name, 'pattern': KSELFTEST_PATTERN,
                            'fixupdict': dict(FIXUP)})
    return out


def qemu_options(spec):
    """What the qemu device type's context needs beyond arch, machine, cpu
    and memory: the rest of the local QEMU command but the kernel, the
    initramfs and the console (LAVA adds its own)."""
    machine = targets.MACHINES[spec.machine]
    opts = ['-smp %d' % (spec.smp or machine.smp), '-nic none', '-no-reboot']
    if spec.icount:
        opts.append('-icount shift=0,sleep=off')
    if spec.seed is not None:
        opts.append('-seed %d' % spec.seed)
    opts += list(machine.extra) + list(spec.qemu_extra)
    return opts


def job(spec, image_url, initrd_url, device_type='qemu'):
    """The LAVA job definition (a dict) of one boot."""
    if device_type not in DEVICE_TYPES:
        raise ValueError('device type %s: one of %s' % (device_type, ', '.join(DEVICE_TYPES)))
    machine = targets.MACHINES[spec.machine]
    test_timeout = _minutes(spec.timeout_s)
    return {
        'job_name': 'kmt %s' % spec.name,
        'device_type': device_type,
        'visibility': 'public',
        'priority': 'medium',
        # lava-run waits between two console lines of a monitor as long as
        # the boot action's timeout, and for a monitor's start line as long
        # as the lava-test-monitor connection timeout; a suite may be silent
        # for minutes (the mte kselftests print their TAP at the end).
        'timeouts': {'job': {'minutes': 2 * test_timeout['minutes'] + 10},
                     'action': test_timeout,
                     'connection': {'minutes': 2},
                     'connections': {'lava-test-monitor': dict(test_timeout)}},
        'context': {'arch': 'arm64', 'machine': machine.machine, 'cpu': machine.cpu,
                    'memory': machine.mem_mb, 'extra_options': qemu_options(spec)},
        'actions': [
            {'deploy': {'to': 'tmpfs', 'timeout': {'minutes': 5}, 'images': {
                'kernel': {'image_arg': '-kernel {kernel} -append "%s"'
                                        % bootspec.kernel_cmdline(spec),
                           'url': image_url},
                'initrd': {'image_arg': '-initrd {initrd}', 'url': initrd_url}}}},
            {'boot': {'method': 'qemu', 'media': 'tmpfs', 'timeout': dict(test_timeout)}},
            {'test': {'timeout': test_timeout, 'monitors': monitors(spec)}},
        ],
    }


def debian_module(name):
    """A module of Debian's python3 (e.g. lava_common.schemas, jinja2), also
    from another Python of the same version; None when it is not there."""
    import importlib
    import sys
    try:
        return importlib.import_module(name)
    except ImportError:
        pass
    debian = '/usr/lib/python3/dist-packages'
    if os.path.isdir(debian) and debian not in sys.path:
        sys.path.append(debian)
        try:
            return importlib.import_module(name)
        except ImportError:
            return None
    return None


def lava_common():
    """LAVA's own lava_common package (Debian's lava-common), also from a
    Python other than Debian's; None when it is not installed."""
    return debian_module('lava_common.schemas')


def validate(data):
    """Raise if LAVA's schema rejects the job (strict, as the server does)."""
    schemas = lava_common()
    if schemas is None:
        raise RuntimeError('lava-common is not installed (scripts/setup-host.sh installs it)')
    schemas.validate(data, strict=True)


def export(matrix, out_dir, url_base=None, device_type='qemu', cells=None):
    """One job per cell of matrix, validated, as out_dir/<cell>.yaml; the
    images are the matrix's build outputs, by file:// URL or under url_base
    (where a lab can download them). Returns the files written."""
    from . import build, paths
    written = []
    for c in targets.MATRICES[matrix]:
        if cells and c.name not in cells:
            continue
        out = build.out_dir(c.config)
        image = os.path.join(out, 'arch', paths.ARCH, 'boot', 'Image')
        initrd = os.path.join(out, 'initramfs.cpio.gz')

        def url(p):
            if url_base:
                return url_base.rstrip('/') + '/' + os.path.relpath(p, paths.BUILD)
            return 'file://' + p
        spec = bootspec.for_cell(c, image, initrd)
        data = job(spec, url(image), url(initrd), device_type)
        validate(data)
        path = os.path.join(out_dir, c.name + '.yaml')
        write(path, data)
        written.append(path)
    return written


def export_bench(plan_name, out_dir, url_base=None, device_type='qemu'):
    """One job per boot of make bench's plan (the plugin's boots aside: a
    lab's device has no TCG plugin), as out_dir/<nn>-<boot>.yaml, in the
    local run's order (baseline and patched interleaved). Returns the
    files written."""
    from . import bench, build, paths
    images = {}
    for k, tree in (('baseline', 'base'), ('patched', 'series')):
        out = build.out_dir('lean', tree)
        images[k] = (os.path.join(out, 'arch', paths.ARCH, 'boot', 'Image'),
                     os.path.join(build.out_dir('lean', 'series'), 'initramfs.cpio.gz'))

    def url(p):
        if url_base:
            return url_base.rstrip('/') + '/' + os.path.relpath(p, paths.BUILD)
        return 'file://' + p
    written = []
    for n, (_, _, _, spec) in enumerate(bench.plan_boots(plan_name, images), 1):
        data = job(spec, url(spec.image), url(spec.initrd), device_type)
        validate(data)
        path = os.path.join(out_dir, '%02d-%s.yaml' % (n, spec.name))
        write(path, data)
        written.append(path)
    return written


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        json.dump(data, f, indent=2, sort_keys=False)
        f.write('\n')
