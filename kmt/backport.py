"""Backports as the stable rules want them, with the upstream changelog
taken from the sender's own mainline clone.

A patch of a series that is a mainline commit backported starts its body
with `commit <40-hex id> upstream.`. This repository does not store that
commit's changelog (it is other people's text): between the commit line
and the backport note it keeps only a placeholder and the upstream
trailers (so that checkpatch finds the author's sign-off). Before sending,
`make backport-messages LINUX_GIT=<mainline clone>` (fill_series below)
rewrites each such message from `git show -s <id>` in that clone, as
`git cherry-pick -x` would carry it:

    commit <id> upstream.

    <upstream changelog, its trailers included>
    [ <base> backport notes: what the older base forces ]
    Signed-off-by: <sender>

The notes (`[ ... ]`) and the sender's trailers are kept as they are. It
refuses, changing nothing, when an id is not in the clone, when the
patch's subject or author is not the commit's, or when a trailer the
patch stores would be lost (it is not upstream's).
"""

import email.header
import email.utils
import os
import re
import subprocess

from . import identity, log

COMMIT_LINE = re.compile(r'^commit ([0-9a-f]{40}) upstream\.$')
TRAILER = re.compile(r'^[A-Z][A-Za-z-]*: \S')
SUBJECT_PREFIX = re.compile(r'^\[[^]]*PATCH[^]]*\]\s*')
# What the repository keeps where the upstream changelog goes.
PLACEHOLDER = ('(The upstream changelog is not kept in this repository: '
               'fill it in with make backport-messages LINUX_GIT=<a mainline clone>.)')


class Patch:
    """One git format-patch file, split where a message rewrite needs it:
    the mbox header lines, the message body lines and the rest (from the
    '---' line on: diffstat and diff, never touched)."""

    def __init__(self, text):
        head, sep, rest = text.partition('\n---\n')
        if not sep or not text.startswith('From '):
            raise log.StepError('not a git format-patch file (no "From <sha>" line '
                                'or no "---" line)')
        hdr, sep2, body = head.partition('\n\n')
        if not sep2:
            raise log.StepError('no blank line after the mail header')
        self.header = hdr.split('\n')
        self.body = body.split('\n')
        self.rest = sep + rest

    def text(self):
        return '\n'.join(self.header) + '\n\n' + '\n'.join(self.body) + self.rest

    def field(self, name):
        """A header field, unfolded and decoded (RFC 2047)."""
        out = None
        for line in self.header:
            if out is not None and line[:1] in (' ', '\t'):
                out += line
                continue
            if out is not None:
                break
            if line.lower().startswith(name.lower() + ':'):
                out = line[len(name) + 1:].strip()
        if out is None:
            return None
        return str(email.header.make_header(email.header.decode_header(out)))

    def set_field(self, name, value):
        for i, line in enumerate(self.header):
            if line.lower().startswith(name.lower() + ':'):
                self.header[i] = '%s: %s' % (name, value)
                return
        raise log.StepError('no %s: header' % name)

    def subject(self):
        return SUBJECT_PREFIX.sub('', self.field('Subject') or '').strip()

    def upstream_id(self):
        """The id of `commit <id> upstream.`, the first body line, or None."""
        first = next((l for l in self.body if l.strip()), '')
        m = COMMIT_LINE.match(first.strip())
        return m.group(1) if m else None


def split_body(body):
    """A backport's body lines as (upstream part, notes, sender's part):
    the lines after the commit line up to the first line that opens a
    `[ ... ]` note, the notes (up to the last line closing one), and the
    sender's trailers after them. A body without a note: every line is
    the upstream part and the sender's part is empty (rewrite() takes the
    sender's trailers off its end)."""
    lines = list(body)
    while lines and not lines[0].strip():
        lines.pop(0)
    lines = lines[1:]                      # the commit line
    start = next((i for i, l in enumerate(lines) if l.startswith('[')), None)
    if start is None:
        return lines, [], []
    last = len(lines) - 1
    while last > start and (not lines[last].strip() or TRAILER.match(lines[last])):
        last -= 1
    if not lines[last].rstrip().endswith(']'):
        raise log.StepError('a backport note opens with "[" but no "]" closes it before '
                            'the sender\'s trailers')
    return lines[:start], lines[start:last + 1], lines[last + 1:]


def trailers(lines):
    """The trailer lines among lines (Name-Of-Tag: value)."""
    return [l.strip() for l in lines if TRAILER.match(l.strip()) and
            not l.startswith('[')]


def upstream_commit(linux_git, cid):
    """The commit's message (subject and body) and author from the clone;
    StepError when the clone does not have it."""
    def git(*args):
        return subprocess.run(['git', '-C', linux_git] + list(args),
                              capture_output=True, text=True)
    if git('cat-file', '-e', cid + '^{commit}').returncode != 0:
        raise log.StepError('commit %s is not in %s: fetch mainline there (git fetch) '
                            'or correct the id' % (cid, linux_git))
    out = git('show', '-s', '--format=%an <%ae>%x00%aD%x00%B', cid)
    if out.returncode != 0:
        raise log.StepError('git show %s in %s failed: %s' % (cid, linux_git,
                                                               out.stderr.strip()))
    author, date, msg = out.stdout.split('\x00', 2)
    msg_lines = msg.rstrip('\n').split('\n')
    subject = msg_lines[0].strip()
    body = msg_lines[1:]
    while body and not body[0].strip():
        body.pop(0)
    return {'id': cid, 'author': author, 'date': date.strip(), 'subject': subject,
            'body': body}


def rewrite(text, up, name='patch'):
    """The patch text with its message taken from up (upstream_commit());
    StepError (naming the patch) where the patch is not that commit."""
    p = Patch(text)
    cid = p.upstream_id()
    if cid != up['id']:
        raise log.StepError('%s: its first body line is not "commit %s upstream."'
                            % (name, up['id']))
    if p.subject() != up['subject']:
        raise log.StepError('%s: subject %r is not the upstream subject %r of %s'
                            % (name, p.subject(), up['subject'], cid[:12]))
    author = p.field('From')
    if email.utils.parseaddr(author) != email.utils.parseaddr(up['author']):
        raise log.StepError('%s: author %s is not the upstream author %s of %s'
                            % (name, author, up['author'], cid[:12]))
    ours, notes, sender = split_body(p.body)
    up_trailers = trailers(up['body'])
    if not notes:
        # No note: the sender's trailers are those at the end that are not
        # upstream's.
        cut = len(ours)
        while cut and (not ours[cut - 1].strip() or
                       (TRAILER.match(ours[cut - 1].strip()) and
                        ours[cut - 1].strip() not in up_trailers)):
            cut -= 1
        ours, sender = ours[:cut], [l for l in ours[cut:] if l.strip()]
    lost = [t for t in trailers(ours) if t not in up_trailers]
    if lost:
        raise log.StepError('%s: these trailers stand before the backport note but are '
                            'not in %s, and would be lost: %s (put them after the note)'
                            % (name, cid[:12], '; '.join(lost)))
    while sender and not sender[0].strip():
        sender.pop(0)
    body = ['commit %s upstream.' % cid, ''] + list(up['body'])
    while body and not body[-1].strip():
        body.pop()
    body += notes + sender
    p.body = body
    if p.field('Date') != up['date']:
        p.set_field('Date', up['date'])
    return p.text()


def backports(patch_dir):
    """(name, upstream id) of every patch of patch_dir carrying a commit
    line, in file order."""
    out = []
    for name in sorted(n for n in os.listdir(patch_dir) if n.endswith('.patch')):
        with open(os.path.join(patch_dir, name)) as f:
            text = f.read()
        if name.startswith('0000-'):
            continue
        cid = Patch(text).upstream_id()
        if cid:
            out.append((name, cid))
    return out


def fill_series(linux_git, patch_dir, dry_run=False):
    """Rewrite every backport of patch_dir from linux_git. Everything is
    checked first; nothing is written unless every backport passes.
    Returns [(name, id, changed)]."""
    if not os.path.isdir(linux_git):
        raise log.StepError('LINUX_GIT=%s is not a directory' % linux_git)
    if subprocess.run(['git', '-C', linux_git, 'rev-parse', '--git-dir'],
                      capture_output=True).returncode != 0:
        raise log.StepError('LINUX_GIT=%s is not a git repository' % linux_git)
    todo = []
    for name, cid in backports(patch_dir):
        path = os.path.join(patch_dir, name)
        with open(path) as f:
            text = f.read()
        new = rewrite(text, upstream_commit(linux_git, cid), name)
        todo.append((name, cid, path, new, new != text))
    if not todo:
        raise log.StepError('no patch in %s carries "commit <id> upstream."' % patch_dir)
    if not dry_run:
        for _, _, path, new, changed in todo:
            if changed:
                with open(path, 'w') as f:
                    f.write(new)
    return [(name, cid, changed) for name, cid, _, _, changed in todo]


def stored_form_problems(text, name='patch'):
    """What is wrong with a backport as this repository keeps it: it must
    carry the placeholder instead of an upstream changelog, and the
    upstream author as From:. Returns a list of messages (empty: fine)."""
    p = Patch(text)
    if not p.upstream_id():
        return []
    out = []
    ours, notes, sender = split_body(p.body)
    prose = [l for l in ours if l.strip() and not TRAILER.match(l.strip())]
    if ' '.join(l.strip() for l in prose) != PLACEHOLDER:
        out.append('%s: between the commit line and the backport note it keeps text other '
                   'than the placeholder and upstream trailers (the upstream changelog is '
                   'filled in by make backport-messages, never stored)' % name)
    if identity.PLACEHOLDER in (p.field('From') or ''):
        out.append('%s: a backport keeps its upstream author as From:' % name)
    return out
