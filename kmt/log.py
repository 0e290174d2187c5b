"""Timestamped progress, per-phase durations and command logging."""

import contextlib
import os
import subprocess
import sys
import time

_T0 = time.monotonic()
_PHASES = []          # (name, seconds, status)


class StepError(Exception):
    """A step failed; the message says what and where its log is."""


def _stamp():
    el = time.monotonic() - _T0
    return '%02d:%02d' % (el // 60, el % 60)


def info(msg):
    print('[%s] %s' % (_stamp(), msg), flush=True)


def warn(msg):
    print('[%s] warning: %s' % (_stamp(), msg), file=sys.stderr, flush=True)


@contextlib.contextmanager
def phase(name):
    """Time a phase; the summary at the end lists every phase."""
    info('== %s' % name)
    start = time.monotonic()
    status = 'ok'
    try:
        yield
    except BaseException:
        status = 'FAILED'
        raise
    finally:
        dur = time.monotonic() - start
        _PHASES.append((name, dur, status))
        info('== %s: %s in %.1fs' % (name, status, dur))


def phases():
    """Every phase so far and the total, as records for the results files."""
    out = [{'name': n, 'seconds': round(d, 1), 'status': s} for n, d, s in _PHASES]
    return out + [{'name': 'total', 'seconds': round(time.monotonic() - _T0, 1),
                   'status': '-'}]


def summary():
    if not _PHASES:
        return
    print('\nPhase durations:')
    for name, dur, status in _PHASES:
        print('  %-44s %8.1fs  %s' % (name, dur, status))
    print('  %-44s %8.1fs' % ('total', time.monotonic() - _T0))


def show_cmd(cmd, cwd=None):
    text = ' '.join(_quote(c) for c in cmd)
    if cwd:
        text = '(cd %s && %s)' % (_quote(str(cwd)), text)
    info('$ ' + text)


def _quote(s):
    s = str(s)
    if s and all(c.isalnum() or c in '-_./=:,+@%' for c in s):
        return s
    return "'" + s.replace("'", "'\\''") + "'"


def run(cmd, logfile=None, cwd=None, env=None, check=True, quiet=False,
        heartbeat=30, timeout=None):
    """Run a command, print it first; with logfile, output goes there and a
    heartbeat line shows progress (last log line) while it runs."""
    cmd = [str(c) for c in cmd]
    if not quiet:
        show_cmd(cmd, cwd)
    full_env = None
    if env:
        full_env = dict(os.environ)
        full_env.update(env)
    if logfile is None:
        rc = subprocess.call(cmd, cwd=cwd, env=full_env, timeout=timeout)
    else:
        os.makedirs(os.path.dirname(str(logfile)), exist_ok=True)
        with open(logfile, 'ab') as lf:
            lf.write(('$ %s\n' % ' '.join(cmd)).encode())
            lf.flush()
            proc = subprocess.Popen(cmd, cwd=cwd, env=full_env, stdout=lf,
                                    stderr=subprocess.STDOUT)
            start = time.monotonic()
            last = start
            while True:
                try:
                    rc = proc.wait(timeout=1)
                    break
                except subprocess.TimeoutExpired:
                    pass
                now = time.monotonic()
                if timeout and now - start > timeout:
                    proc.kill()
                    proc.wait()
                    raise StepError('timed out after %ds: %s (log: %s)'
                                    % (timeout, cmd[0], logfile))
                if heartbeat and now - last >= heartbeat:
                    last = now
                    info('   ... %ds, %s' % (now - start, _last_line(logfile)))
    if check and rc != 0:
        where = ' (log: %s)' % logfile if logfile else ''
        tail = ''
        if logfile:
            tail = '\n' + _tail(logfile, 25)
        raise StepError('command failed with exit code %d: %s%s%s'
                        % (rc, ' '.join(cmd[:6]), where, tail))
    return rc


def _last_line(path, width=100):
    try:
        with open(path, 'rb') as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 4096))
            lines = f.read().decode(errors='replace').strip().splitlines()
        return lines[-1][:width] if lines else ''
    except OSError:
        return ''


def _tail(path, n):
    with open(path, 'rb') as f:
        f.seek(0, 2)
        f.seek(max(0, f.tell() - 16384))
        lines = f.read().decode(errors='replace').splitlines()
    return '\n'.join('    | ' + l for l in lines[-n:])
