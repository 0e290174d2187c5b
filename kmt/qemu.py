"""Boot a kernel under QEMU with a host-side timeout; the full serial log
goes to a file, condensed progress to the terminal."""

import os
import queue
import re
import subprocess
import threading
import time

from . import log, targets

QEMU = 'qemu-system-aarch64'
BASE_CMDLINE = ('console=ttyAMA0', 'panic=-1', 'rdinit=/init')

# Console lines worth echoing while a boot runs.
_PROGRESS = re.compile(r'KMT-(BEGIN|END|DONE|ERROR)|# Subtest:|'
                       r'^(\[[ 0-9.]+\] )?(not )?ok \d+ |not ok \d+ |'
                       r'Kernel panic|# kmt-bench ')


def kernel_cmdline(cell, kunit_filter=None, extra=()):
    args = list(BASE_CMDLINE) + list(targets.KASAN_MODES[cell.kasan])
    suites = [targets.SUITES[s] for s in cell.suites]
    kunit = [s for s in suites if s.kind == 'kunit']
    cfg = targets.CONFIGS.get(cell.config)
    # Suites built as modules: the guest loads them (kmt.modules) first.
    modules = []
    if cfg is not None and cfg.modules:
        for s in suites:
            if s.module and s.module not in modules:
                modules.append(s.module)
    if kunit_filter:
        args += ['kunit.enable=1', 'kunit.filter_glob=' + kunit_filter]
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
    if modules:
        args.append('kmt.modules=' + ','.join(modules))
    if ksft:
        args.append('kmt.suites=' + ','.join('%s=%s' % (s.name, s.select) for s in ksft))
    return ' '.join(args + list(cell.cmdline) + list(extra))


def qemu_command(machine, image, initrd, cmdline, icount=False, seed=None, smp=None):
    cmd = [QEMU, '-machine', machine.machine, '-cpu', machine.cpu,
           '-smp', str(smp or machine.smp), '-m', str(machine.mem_mb),
           '-kernel', image, '-initrd', initrd, '-append', cmdline,
           '-display', 'none', '-monitor', 'none', '-serial', 'stdio',
           '-nic', 'none', '-no-reboot']
    if icount:
        cmd += ['-icount', 'shift=0,sleep=off']
    if seed is not None:
        cmd += ['-seed', str(seed)]
    return cmd + list(machine.extra)


class BootResult:
    def __init__(self, cmd, logfile):
        self.cmd = cmd
        self.logfile = logfile
        self.lines = []
        self.exit_code = None
        self.timed_out = False
        self.duration = 0.0


def boot(cmd, logfile, timeout_s, echo=True):
    """Run QEMU until it exits or timeout_s passes (then kill it)."""
    res = BootResult(cmd, logfile)
    log.show_cmd(cmd)
    if log.DRY_RUN:
        return res
    os.makedirs(os.path.dirname(logfile), exist_ok=True)
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    lines = queue.Queue()

    def reader():
        for raw in proc.stdout:
            lines.put(raw.decode('utf-8', errors='replace').replace('\r', '').rstrip('\n'))
        lines.put(None)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    last_echo = start
    with open(logfile, 'w') as lf:
        lf.write('# %s\n' % ' '.join(cmd))
        while True:
            remaining = timeout_s - (time.monotonic() - start)
            if remaining <= 0:
                res.timed_out = True
                proc.kill()
                break
            try:
                line = lines.get(timeout=min(remaining, 5))
            except queue.Empty:
                now = time.monotonic()
                if echo and now - last_echo > 30:
                    log.info('   ... %ds, still running' % (now - start))
                    last_echo = now
                continue
            if line is None:
                break
            res.lines.append(line)
            lf.write(line + '\n')
            lf.flush()
            if echo and _PROGRESS.search(line):
                log.info('   | ' + line[:150])
                last_echo = time.monotonic()
    proc.wait()
    t.join(timeout=5)
    res.exit_code = proc.returncode
    res.duration = time.monotonic() - start
    if res.timed_out:
        msg = 'KMT-HOST: timed out after %ds, QEMU killed' % timeout_s
        res.lines.append(msg)
        with open(logfile, 'a') as lf:
            lf.write(msg + '\n')
    return res
