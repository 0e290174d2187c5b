"""Boot a kernel under QEMU with a host-side timeout; the full serial log
goes to a file, condensed progress to the terminal."""

import os
import queue
import re
import subprocess
import threading
import time

from . import bootspec, log

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
        self.timed_out = False
        self.duration = 0.0

    @property
    def failure(self):
        if self.timed_out:
            return ('%s: timed out after %ds, QEMU killed (log %s)'
                    % (self.spec.name, self.spec.timeout_s, self.logfile))
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


def run(spec, echo=True):
    """Boot spec under QEMU until it exits or spec.timeout_s passes (then
    kill it); the console goes to spec.logfile. Never raises for the boot's
    own outcome: see BootResult.failure."""
    if not spec.logfile:
        raise ValueError('boot %s has no log file' % spec.name)
    cmd = bootspec.qemu_command(spec)
    logfile, timeout_s = spec.logfile, spec.timeout_s
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
