"""Where things live. Everything generated goes under the build directory
(default: build/ in the repository, overridable with KMT_BUILD)."""

import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(os.environ.get('KMT_BUILD', os.path.join(REPO, 'build')))
SRC = os.path.join(BUILD, 'linux')            # git work tree: base + series
BASE_SRC = os.path.join(BUILD, 'linux-base')  # git worktree at the base (bench)
OUT = os.path.join(BUILD, 'out')              # O= build dirs, one per config
LOGS = os.path.join(BUILD, 'logs')
RESULTS = os.path.join(BUILD, 'results')
DEBS = os.path.join(BUILD, 'debs')            # arm64 packages for the guest
PATCHES = os.path.join(REPO, 'patches')
CONFIGS = os.path.join(REPO, 'configs')
GUEST = os.path.join(REPO, 'guest')
EXPECTATIONS = os.path.join(REPO, 'expectations.txt')

SOURCE_PACKAGE = 'linux-source-6.12'
SOURCE_TARBALL = '/usr/src/linux-source-6.12.tar.xz'
ARCH = 'arm64'
CROSS_COMPILE = 'aarch64-linux-gnu-'
