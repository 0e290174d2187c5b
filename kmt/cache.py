"""Skip a step whose inputs did not change: one helper for every cached
step (the kernel configuration, the applied series, the QEMU plugin).

A step's key is a digest of everything it depends on (file contents,
command lines, names); the key is recorded in a stamp file next to what
the step produced, only after the step succeeded."""

import hashlib
import os


def key(*parts, files=()):
    """Digest of the parts (str or bytes) and of the files' contents."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b'\0')
    for f in files:
        with open(f, 'rb') as fh:
            h.update(fh.read())
        h.update(b'\0')
    return h.hexdigest()


def fresh(stamp_file, k, outputs=()):
    """True if the step last succeeded with key k and its outputs exist."""
    if not all(os.path.exists(o) for o in outputs):
        return False
    try:
        with open(stamp_file) as f:
            return f.read().strip() == k
    except OSError:
        return False


def invalidate(stamp_file):
    """Forget the step (before running it: a half-done step is not fresh)."""
    if os.path.exists(stamp_file):
        os.unlink(stamp_file)


def record(stamp_file, k):
    """The step succeeded with key k."""
    with open(stamp_file, 'w') as f:
        f.write(k + '\n')
