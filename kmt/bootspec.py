"""One boot as plain data.

A BootSpec says everything about one boot of a guest: the kernel and
initramfs, the QEMU machine, the kasan mode, what the guest runs (KUnit
suites, kselftest suites, modules to load, extra kernel parameters) and how
(vCPUs, -icount, -seed, a TCG plugin, the timeout). Matrix cells, seeded
reruns, benchmark boots, the refcount benchmark and the plugin's self-test
all describe their boots this way; kernel_cmdline() and qemu_command()
render a spec for a local QEMU (qemu.run boots it), and the same fields are
what a lab job would be rendered from.
"""

import dataclasses
import os
from dataclasses import dataclass
from typing import Optional, Tuple

from . import targets

QEMU = 'qemu-system-aarch64'
# log_buf_len: the kasan suite prints some 500 KB of reports within
# seconds; with the lean configs' 128 KiB buffer the serial console can fall
# behind far enough that printk drops records, KTAP result lines included
# (seen on 7.3 in asymm mode: "** 13 printk messages dropped **", and one
# case of 77 never reported).
BASE_CMDLINE = ('console=ttyAMA0', 'log_buf_len=1M', 'panic=-1', 'rdinit=/init')
DEFAULT_TIMEOUT_S = 900
# A matrix cell's guest prints as it goes (KTAP lines, kselftest results,
# kernel reports); this long without a console line is a hang. Benchmark
# boots may run silent loops for longer, so they have no such limit.
CELL_SILENCE_S = 300


@dataclass(frozen=True)
class BootSpec:
    name: str                        # what boots, for logs and job names
    image: str
    initrd: str
    machine: str                     # targets.MACHINES
    kasan: str = 'off'               # targets.KASAN_MODES
    suites: Tuple[str, ...] = ()     # targets.SUITES the guest runs
    modules: Tuple[str, ...] = ()    # modules the guest loads first (kmt.modules)
    kunit_filter: str = ''           # run only these KUnit cases (no kselftests)
    cmdline: Tuple[str, ...] = ()    # further kernel parameters
    smp: int = 0                     # vCPUs; 0: the machine's
    icount: bool = False             # -icount shift=0 (exact, deterministic counts)
    seed: Optional[int] = None       # QEMU -seed (the guest's random numbers)
    rerun: int = 0                   # a rerun's number: kmt.rerun= (rerun_param)
    qemu_extra: Tuple[str, ...] = () # further QEMU arguments (a TCG plugin)
    timeout_s: int = DEFAULT_TIMEOUT_S
    silence_s: int = 0               # no console output this long: hung (0: no limit)
    logfile: str = ''
    system_map: str = ''             # to name where the CPUs were when a boot hung

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)


def cell_modules(cell):
    """The modules a cell's guest loads: one per suite built as a module,
    in suite order (none when the config builds its suites in)."""
    cfg = targets.CONFIGS.get(cell.config)
    mods = []
    if cfg is not None and cfg.modules:
        for s in cell.suites:
            m = targets.SUITES[s].module
            if m and m not in mods:
                mods.append(m)
    return tuple(mods)


def system_map(image):
    """The System.map of the build that produced image (O=.../arch/arm64/boot/Image)."""
    return os.path.normpath(os.path.join(os.path.dirname(image), os.pardir, os.pardir,
                                         os.pardir, 'System.map'))


def for_cell(cell, image, initrd, logfile='', **changes):
    """The boot of a matrix cell (changes: e.g. a rerun's filter and seed)."""
    spec = BootSpec(name=cell.name, image=image, initrd=initrd, machine=cell.machine,
                    kasan=cell.kasan, suites=tuple(cell.suites), modules=cell_modules(cell),
                    cmdline=tuple(cell.cmdline), timeout_s=cell.timeout_s,
                    silence_s=CELL_SILENCE_S, logfile=logfile, system_map=system_map(image))
    return spec.replace(**changes) if changes else spec


def rerun_param(n):
    """The kernel parameter of rerun n (1, 2, ...): n's digits n times,
    a command line of another length for every rerun.

    HW_TAGS tags come from IRG, whose LFSR mte_cpu_setup() seeds from the
    counter. Under -icount the counter is the instruction count so far,
    which QEMU's -seed does not change: reruns that differed only in -seed
    drew the same tags, so a tag collision in one was one in all. The
    kernel parses its command line before it enables MTE, so a longer one
    moves the counter, and the seed, at that point. Nothing reads the
    parameter (a dotted name of no module is ignored)."""
    return 'kmt.rerun=' + str(n) * n


def kernel_cmdline(spec):
    args = list(BASE_CMDLINE) + list(targets.KASAN_MODES[spec.kasan])
    suites = [targets.SUITES[s] for s in spec.suites]
    kunit = [s for s in suites if s.kind == 'kunit']
    if spec.kunit_filter:
        args += ['kunit.enable=1', 'kunit.filter_glob=' + spec.kunit_filter]
        ksft = []
    else:
        ksft = [s for s in suites if s.kind == 'kselftest']
        if len(kunit) == 1:
            args += ['kunit.enable=1', 'kunit.filter_glob=' + kunit[0].select]
        elif kunit:
            # Several suites, each in its own module: no filter needed.
            args.append('kunit.enable=1')
        else:
            args.append('kunit.enable=0')
    if spec.modules:
        args.append('kmt.modules=' + ','.join(spec.modules))
    if ksft:
        args.append('kmt.suites=' + ','.join('%s=%s' % (s.name, s.select) for s in ksft))
    running = ksft + (kunit if not spec.kunit_filter else [])
    for s in running:
        args += [a for a in s.cmdline if a not in args]
    return ' '.join(args + list(spec.cmdline) + ([rerun_param(spec.rerun)] if spec.rerun else []))


def qemu_command(spec):
    machine = targets.MACHINES[spec.machine]
    cmd = [QEMU, '-machine', machine.machine, '-cpu', machine.cpu,
           '-smp', str(spec.smp or machine.smp), '-m', str(machine.mem_mb),
           '-kernel', spec.image, '-initrd', spec.initrd, '-append', kernel_cmdline(spec),
           '-display', 'none', '-monitor', 'none', '-serial', 'stdio',
           '-nic', 'none', '-no-reboot']
    if spec.icount:
        cmd += ['-icount', 'shift=0,sleep=off']
    if spec.seed is not None:
        cmd += ['-seed', str(spec.seed)]
    return cmd + list(machine.extra) + list(spec.qemu_extra)
