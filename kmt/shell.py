"""make shell CELL=NAME: boot the kernel and initramfs of a cell with a
shell on the console, to look at a failure by hand: the same QEMU machine,
kasan mode and kernel parameters as the cell's boot, the suites only when
asked for (they run first, then the shell starts). Exiting the shell
powers the guest off; Ctrl-A x quits QEMU. With a gdb stub, QEMU waits
for gdb on localhost:1234 before the kernel runs (the vmlinux in the
cell's build directory has its symbols)."""

import os
import subprocess

from . import bootspec, build, log, paths, postproof, source


def command(cell, image, initrd, gdb=False, suites=False):
    spec = bootspec.for_cell(cell, image, initrd)
    if not suites:
        spec = spec.replace(suites=(), modules=())
    spec = spec.replace(cmdline=spec.cmdline + ('kmt.shell=1',))
    cmd = bootspec.qemu_command(spec)
    # The console multiplexed with QEMU's monitor (Ctrl-A c; Ctrl-A x
    # quits): Ctrl-C goes to the guest's shell, not to QEMU.
    cmd[cmd.index('-serial') + 1] = 'mon:stdio'
    if gdb:
        cmd += ['-s', '-S']
    return cmd


def run(cell_name, gdb=False, suites=False, apply=True):
    cell = postproof.find_cell(cell_name)
    with log.phase('kernel tree'):
        tag = source.ensure_base()
        if apply:
            source.apply_series(tag=tag)
        else:
            source.check_tree_as_is(tag)
    image, initrd = build.build_all(cell.config, series_tests=not source.tree_is_base(tag))
    cmd = command(cell, image, initrd, gdb=gdb, suites=suites)
    log.show_cmd(cmd, paths.REPO)
    out = image[:-len('/arch/arm64/boot/Image')]
    print('kmt: shell on cell %s: exit the shell to power off, Ctrl-A x to quit QEMU%s'
          % (cell.name, '; QEMU waits for gdb on localhost:1234 (symbols: %s)'
             % os.path.join(out, 'vmlinux') if gdb else ''), flush=True)
    return subprocess.run(cmd).returncode
