"""Where things live. Everything generated goes under the build directory
(default: build/ in the repository, overridable with KMT_BUILD); a base
other than the default (BASE=7.3, bases.py) keeps its tree, outputs, logs
and results in a directory of its own under it (build/7.3/)."""

import os
import sys

from . import bases

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(os.environ.get('KMT_BUILD', os.path.join(REPO, 'build')))
BASE_NAME = os.environ.get('KMT_BASE') or bases.DEFAULT
if BASE_NAME not in bases.BASES:
    sys.exit('error: unknown base %r (BASE=): one of %s'
             % (BASE_NAME, ', '.join(sorted(bases.BASES))))
BASE = bases.BASES[BASE_NAME]
BASE_BUILD = BUILD if BASE_NAME == bases.DEFAULT else os.path.join(BUILD, BASE_NAME)
SRC = os.path.join(BASE_BUILD, 'linux')       # git work tree: base + series
OUT = os.path.join(BASE_BUILD, 'out')         # O= build dirs, one per config
LOGS = os.path.join(BASE_BUILD, 'logs')
RESULTS = os.path.join(BASE_BUILD, 'results')
PKG = os.path.join(BASE_BUILD, 'pkg')         # a downloaded base package, unpacked
DEBS = os.path.join(BUILD, 'debs')            # arm64 packages for the guest
PATCHES = os.path.join(REPO, BASE.patch_dir)
CONFIGS = os.path.join(REPO, 'configs')
GUEST = os.path.join(REPO, 'guest')
EXPECTATIONS = os.path.join(PATCHES, 'expectations.txt')   # per base

SOURCE_PACKAGE = BASE.package
SOURCE_TARBALL = os.path.join(PKG if BASE.suite else '/', 'usr', 'src',
                              BASE.package + '.tar.xz')
ARCH = 'arm64'
CROSS_COMPILE = 'aarch64-linux-gnu-'
