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

# qemu: LAVA's qemu device type with the project's MTE machine (run here by
# make lava-run). fvp and u-boot are templates for a lab, schema-checked
# but not run here: FVP Base RevC with MTE enabled (LAVA's fvp device type,
# the model in a docker image), and a board with MTE that boots a kernel
# and an initramfs over TFTP from U-Boot (its device type is the lab's).
DEVICE_TYPES = ('qemu', 'fvp', 'u-boot')
# FVP Base RevC: what turns MTE on (FEAT_MTE2 in the core, tag storage in
# the DRAM model), and where TF-A's preloaded-BL33 build expects the
# kernel, the DTB and the initramfs; {BL1} etc. are the deployed images.
FVP_MTE_ARGUMENTS = (
    '-C cluster0.NUM_CORES=1', '-C cluster1.NUM_CORES=0',
    '-C cluster0.has_arm_v8-5=1', '-C cluster0.memory_tagging_support_level=3',
    '-C bp.dram_metadata.is_enabled=1', '-C bp.dram_size=4',
    '-C bp.secureflashloader.fname={BL1}', '-C bp.flashloader0.fname={FIP}',
    '--data cluster0.cpu0={KERNEL}@0x80080000', '--data cluster0.cpu0={DTB}@0x82000000',
    '--data cluster0.cpu0={RAMDISK}@0x84000000',
    '-C bp.terminal_0.start_telnet=1', '-C bp.vis.disable_visualisation=1',
    '-C pctl.startup=0.0.0.0', '-C bp.pl011_uart0.untimed_fifos=1')
FVP_MODEL = '/opt/model/FVP_Base_RevC-2xAEMvA/models/Linux64_GCC-9.3/FVP_Base_RevC-2xAEMvA'
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


def hardware_cmdline(spec):
    """The kernel command line on a lab's device: the local one without the
    console (the device's own setup names its serial port)."""
    return ' '.join(a for a in bootspec.kernel_cmdline(spec).split()
                    if not a.startswith('console='))


def template_actions(spec, image_url, initrd_url, device_type, firmware_url, test_timeout):
    """deploy + boot for the fvp and u-boot templates."""
    base = (firmware_url or 'https://example.invalid/firmware').rstrip('/')
    if device_type == 'fvp':
        images = {'bl1': {'url': base + '/bl1.bin'}, 'fip': {'url': base + '/fip.bin'},
                  'dtb': {'url': base + '/fvp-base-revc.dtb'},
                  'kernel': {'url': image_url}, 'ramdisk': {'url': initrd_url}}
        return [
            {'deploy': {'to': 'fvp', 'timeout': {'minutes': 5}, 'images': images}},
            {'boot': {'method': 'fvp', 'timeout': dict(test_timeout),
                      'docker': {'name': 'fvp:base-revc', 'local': True},
                      'image': FVP_MODEL, 'license_variable': 'ARMLMD_LICENSE_FILE=',
                      'console_string': r'terminal_0: Listening for serial connection on port '
                                        r'(?P<PORT>\d+)',
                      'arguments': list(FVP_MTE_ARGUMENTS),
                      'prompts': ['Run /init as init process']}}]
    return [
        {'deploy': {'to': 'tftp', 'timeout': {'minutes': 5},
                    'kernel': {'url': image_url, 'type': 'image'},
                    'ramdisk': {'url': initrd_url},
                    'dtb': {'url': base + '/board.dtb'}}},
        {'boot': {'method': 'u-boot', 'commands': 'ramdisk', 'timeout': dict(test_timeout),
                  'prompts': ['Run /init as init process']}}]


def job(spec, image_url, initrd_url, device_type='qemu', firmware_url=None,
        device_type_name=None):
    """The LAVA job definition (a dict) of one boot. device_type: qemu, or
    one of the lab templates fvp and u-boot (firmware_url: where the lab
    keeps bl1.bin, fip.bin and fvp-base-revc.dtb, or the board's
    board.dtb; device_type_name: the lab's name of the device type)."""
    if device_type not in DEVICE_TYPES:
        raise ValueError('device type %s: one of %s' % (device_type, ', '.join(DEVICE_TYPES)))
    machine = targets.MACHINES[spec.machine]
    test_timeout = _minutes(spec.timeout_s)
    data = {
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
    }
    test = {'test': {'timeout': test_timeout, 'monitors': monitors(spec)}}
    if device_type != 'qemu':
        data['device_type'] = device_type_name or ('fvp' if device_type == 'fvp' else
                                                   'mte-board')
        # U-Boot adds extra_kernel_args to its bootargs; on the FVP the
        # DTB's /chosen/bootargs must carry the same (metadata says it).
        data['context'] = {'extra_kernel_args': hardware_cmdline(spec)}
        data['metadata'] = {'kernel_cmdline': hardware_cmdline(spec),
                            'kmt_boot': spec.name, 'kmt_machine': spec.machine}
        data['actions'] = template_actions(spec, image_url, initrd_url, device_type,
                                           firmware_url, test_timeout) + [test]
        return data
    data['context'] = {'arch': 'arm64', 'machine': machine.machine, 'cpu': machine.cpu,
                       'memory': machine.mem_mb, 'extra_options': qemu_options(spec)}
    data['actions'] = [
        {'deploy': {'to': 'tmpfs', 'timeout': {'minutes': 5}, 'images': {
            'kernel': {'image_arg': '-kernel {kernel} -append "%s"'
                                    % bootspec.kernel_cmdline(spec),
                       'url': image_url},
            'initrd': {'image_arg': '-initrd {initrd}', 'url': initrd_url}}}},
        {'boot': {'method': 'qemu', 'media': 'tmpfs', 'timeout': dict(test_timeout)}},
        test,
    ]
    return data


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


def export(matrix, out_dir, url_base=None, device_type='qemu', cells=None, firmware_url=None,
           device_type_name=None):
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
        data = job(spec, url(image), url(initrd), device_type, firmware_url, device_type_name)
        validate(data)
        path = os.path.join(out_dir, c.name + '.yaml')
        write(path, data)
        written.append(path)
    return written


def export_bench(plan_name, out_dir, url_base=None, device_type='qemu', firmware_url=None,
                 device_type_name=None):
    """One job per boot of make bench's plan (the plugin's boots aside: a
    lab's device has no TCG plugin), as out_dir/<nn>-<boot>.yaml, in the
    local run's order (baseline and patched interleaved). Returns the
    files written."""
    from . import bench, paths
    images = bench.built_images(bench.PLANS[plan_name].get('config', 'lean'))

    def url(p):
        if url_base:
            return url_base.rstrip('/') + '/' + os.path.relpath(p, paths.BUILD)
        return 'file://' + p
    written = []
    for n, (_, _, _, spec) in enumerate(bench.plan_boots(plan_name, images), 1):
        data = job(spec, url(spec.image), url(spec.initrd), device_type, firmware_url,
                   device_type_name)
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
