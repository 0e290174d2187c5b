"""The tooling's own tests (tests/), run in an interpreter of their own:
python3 -m kmt.selftest LOGFILE JSONFILE writes unittest's verbose log and
the outcome (tests run, failed and skipped ones) as JSON. make check runs
it with the default base's layout (no KMT_BASE), whatever BASE it checks:
the tests pin that layout."""

import contextlib
import json
import os
import sys
import unittest


def main(logfile, out):
    from . import paths
    suite = unittest.defaultTestLoader.discover(os.path.join(paths.REPO, 'tests'),
                                                top_level_dir=paths.REPO)
    with open(logfile, 'w') as f, contextlib.redirect_stdout(f), \
            contextlib.redirect_stderr(f):
        res = unittest.TextTestRunner(stream=f, verbosity=2).run(suite)
    outcome = {'run': res.testsRun,
               'failed': [t.id() for t, _ in res.failures + res.errors],
               'skipped': [[t.id(), reason] for t, reason in res.skipped]}
    with open(out, 'w') as f:
        json.dump(outcome, f)
    return 0


if __name__ == '__main__':
    sys.exit(main(*sys.argv[1:3]))
