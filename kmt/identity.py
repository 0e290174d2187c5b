"""Put a submitter's own identity on the series: `make signoff NAME=...
EMAIL=...` rewrites the author (From:) and the sign-off of every patch in
patches/, so that the series can be posted under the submitter's name
(Documentation/process/submitting-patches.rst: the sender signs off)."""

import os
import re

from . import log, paths

# The identity the series is kept under in this repository.
PLACEHOLDER = 'MTE Series Team <mte-series@example.org>'

_IDENT = re.compile(r'^[^<>\n]+ <[^<>@\s]+@[^<>@\s]+>$')


def check_identity(ident):
    if not _IDENT.match(ident) or ident == PLACEHOLDER:
        raise log.StepError('identity must look like "Full Name <user@example.com>" '
                            '(and not the placeholder): got %r' % ident)


def sign(text, ident, old=PLACEHOLDER):
    """One patch (mbox text) with ident as its author and signer. The old
    identity's From: and Signed-off-by: lines become ident's; a sign-off
    chain that already ends with ident is left alone, and a patch without
    ident's sign-off gets one at the end of its chain. Other people's tags
    are kept as they are."""
    check_identity(ident)
    head, sep, rest = text.partition('\n---\n')
    if not sep:
        raise log.StepError('not a git format-patch file (no "---" line)')
    head = re.sub(r'^From: %s$' % re.escape(old), 'From: ' + ident, head, flags=re.M)
    head = re.sub(r'^Signed-off-by: %s$' % re.escape(old), 'Signed-off-by: ' + ident,
                  head, flags=re.M)
    # Drop a duplicate sign-off the substitution may have made.
    lines = head.split('\n')
    out = []
    for l in lines:
        if l == 'Signed-off-by: ' + ident and out and out[-1] == l:
            continue
        out.append(l)
    head = '\n'.join(out)
    if not re.search(r'^Signed-off-by: %s$' % re.escape(ident), head, flags=re.M):
        if not re.search(r'^Subject: \[PATCH 0+/', head, flags=re.M):
            head = head.rstrip('\n') + '\n' + 'Signed-off-by: ' + ident
    return head + sep + rest


def patch_files(patch_dir):
    """The patch files of patch_dir and of its postings (postings/NAME/,
    kmt/postings.py), relative to patch_dir."""
    names = sorted(n for n in os.listdir(patch_dir) if n.endswith('.patch'))
    top = os.path.join(patch_dir, 'postings')
    if os.path.isdir(top):
        for d in sorted(os.listdir(top)):
            sub = os.path.join(top, d)
            if os.path.isdir(sub):
                names += sorted(os.path.join('postings', d, n) for n in os.listdir(sub)
                                if n.endswith('.patch'))
    return names


def sign_series(ident, patch_dir=paths.PATCHES, dry_run=False):
    """Rewrite every patch of patch_dir and of its postings (dry_run: only
    say which would change); returns the names changed."""
    check_identity(ident)
    changed = []
    for name in patch_files(patch_dir):
        path = os.path.join(patch_dir, name)
        with open(path) as f:
            text = f.read()
        new = sign(text, ident)
        if new != text:
            if not dry_run:
                with open(path, 'w') as f:
                    f.write(new)
            changed.append(name)
    return changed
