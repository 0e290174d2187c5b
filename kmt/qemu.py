"""Boot a kernel under QEMU with a host-side timeout; the full serial log
goes to a file, condensed progress to the terminal."""

import os
import queue
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time

from . import attrib, bootspec, log

# Console lines worth echoing while a boot runs.
_PROGRESS = re.compile(r'KMT-(BEGIN|END|DONE|ERROR)|# Subtest:|'
                       r'^(\[[ 0-9.]+\] )?(not )?ok \d+ |not ok \d+ |'
                       r'Kernel panic|# kmt-bench ')


class BootResult:
    """What one boot left: the console lines, how QEMU ended, how long it
    took. One policy for every caller: a boot that timed out or whose QEMU
    failed has a `failure` (a sentence); check() turns it into an error."""

    def __init__(self, spec, cmd):
        self.spec = spec
        self.cmd = cmd
        self.logfile = spec.logfile
        self.lines = []
        self.exit_code = None
        self.timed_out = False       # hung: the timeout or the silence limit
        self.hang = ''               # how it hung and where the CPUs were
        self.duration = 0.0

    @property
    def failure(self):
        if self.timed_out:
            return '%s: %s (log %s)' % (self.spec.name, self.hang, self.logfile)
        if self.exit_code not in (0, None):
            return ('%s: QEMU exited with code %d: %s (log %s)'
                    % (self.spec.name, self.exit_code,
                       self.lines[-1] if self.lines else '', self.logfile))
        return None

    def check(self):
        """Raise StepError if the boot failed (callers that cannot go on)."""
        if self.failure:
            raise log.StepError(self.failure)
        return self


def monitor_command(cmd, sock):
    """cmd with the QEMU monitor on a UNIX socket instead of none, so that
    a hung guest's CPU registers can be read before it is killed."""
    cmd = list(cmd)
    if '-monitor' in cmd:
        cmd[cmd.index('-monitor') + 1] = 'unix:%s,server,nowait' % sock
    return cmd


def monitor_query(sock, command, timeout=10):
    """Send one HMP command; returns what QEMU answered ('' if it did not)."""
    out = b''
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(2)
            s.connect(sock)
            end = time.monotonic() + timeout
            s.sendall(command.encode() + b'\n')
            while time.monotonic() < end:
                try:
                    data = s.recv(65536)
                except socket.timeout:
                    if b'PC=' in out:
                        break
                    continue
                if not data:
                    break
                out += data
    except OSError:
        pass
    return out.decode('utf-8', errors='replace')


_CPU = re.compile(r'CPU#(\d+)')
_PC = re.compile(r'\bPC=([0-9a-fA-F]+)')


def cpu_pcs(text):
    """[(cpu, pc)] from the output of 'info registers -a'."""
    pcs, cpu = [], None
    for line in text.splitlines():
        m = _CPU.search(line)
        if m:
            cpu = int(m.group(1))
        m = _PC.search(line)
        if m and cpu is not None:
            pcs.append((cpu, int(m.group(1), 16)))
            cpu = None
    return pcs


def where(pcs, system_map=''):
    """'CPU0 at cpu_do_idle+0x8, CPU1 at ...' (addresses if no System.map)."""
    syms = None
    if system_map and os.path.exists(system_map):
        syms = attrib.Symbols.load(system_map)
    out = []
    for cpu, pc in pcs:
        found = syms.locate(pc) if syms is not None else None
        out.append('CPU%d at %s' % (cpu, '%s+0x%x' % found if found else hex(pc)))
    return ', '.join(out)


def run(spec, echo=True):
    """Boot spec under QEMU until it exits, spec.timeout_s passes or (with
    spec.silence_s) the console stays silent that long; a hung guest's CPUs
    are located through the QEMU monitor before it is killed. The console
    goes to spec.logfile. Never raises for the boot's own outcome: see
    BootResult.failure."""
    if not spec.logfile:
        raise ValueError('boot %s has no log file' % spec.name)
    logfile, timeout_s = spec.logfile, spec.timeout_s
    mondir = tempfile.mkdtemp(prefix='kmt-mon-')
    sock = os.path.join(mondir, 'monitor.sock')
    cmd = monitor_command(bootspec.qemu_command(spec), sock)
    res = BootResult(spec, cmd)
    log.show_cmd(cmd)
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
    last_echo = last_line = start
    with open(logfile, 'w') as lf:
        lf.write('# %s\n' % ' '.join(cmd))
        while True:
            now = time.monotonic()
            if now - start >= timeout_s:
                res.hang = 'timed out after %ds' % timeout_s
            elif spec.silence_s and now - last_line >= spec.silence_s:
                res.hang = ('no console output for %ds (after %ds)'
                            % (spec.silence_s, now - start))
            if res.hang:
                res.timed_out = True
                pcs = cpu_pcs(monitor_query(sock, 'info registers -a'))
                if pcs:
                    res.hang += '; ' + where(pcs, spec.system_map)
                proc.kill()
                break
            try:
                line = lines.get(timeout=5)
            except queue.Empty:
                now = time.monotonic()
                if echo and now - last_echo > 30:
                    log.info('   ... %ds, still running' % (now - start))
                    last_echo = now
                continue
            if line is None:
                break
            last_line = time.monotonic()
            res.lines.append(line)
            lf.write(line + '\n')
            lf.flush()
            if echo and _PROGRESS.search(line):
                log.info('   | ' + line[:150])
                last_echo = time.monotonic()
    proc.wait()
    t.join(timeout=5)
    shutil.rmtree(mondir, ignore_errors=True)
    res.exit_code = proc.returncode
    res.duration = time.monotonic() - start
    if res.timed_out:
        msg = 'KMT-HOST: hung: %s; QEMU killed' % res.hang
        res.lines.append(msg)
        with open(logfile, 'a') as lf:
            lf.write(msg + '\n')
    return res
