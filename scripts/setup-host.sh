#!/usr/bin/env bash
# Install what the tooling needs on a Debian 12 (bookworm) host, when missing.
#
# Everything comes from Debian's archive: the cross toolchain, the kernel
# source, the kernel build dependencies, QEMU 10 from bookworm-backports (the
# stock QEMU 7.2 reports false KASAN bugs with MTE) and arm64 userspace
# packages for the guest. Apt sources for backports (and deb-src) are derived
# from the machine's own configuration; no host name is written here.
#
# Usage: setup-host.sh [--check]   (--check: only report what is missing)
set -euo pipefail

HOST_PKGS=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross linux-source-6.12
	   flex bison bc libssl-dev libelf-dev cpio xz-utils kmod ccache
	   python3 python3-matplotlib git make rsync sparse
	   python3-sphinx python3-sphinx-rtd-theme
	   python3-ply python3-git)	# checkpatch: scripts/spdxcheck.py
# The QEMU plugin (plugin/kmt-count.c) builds against glib's headers.
HOST_PKGS+=(libglib2.0-dev pkg-config)
# The clang cell of make check builds the kernel with LLVM=1 (clang 14).
HOST_PKGS+=(clang lld llvm)
# The asm gate (kmt/asmcheck.py) compiles the series' atomics with GCC,
# clang 14 and clang-19: clang 14 lacks asm flag outputs for arm64 and
# assembled an out-of-range branch silently, clang-19 has both right.
HOST_PKGS+=(clang-19 lld-19 llvm-19)
# What the chosen base needs besides (kmt/bases.py host_packages, e.g.
# clang-19 for 7.3's clang cells), given by kmt.
# shellcheck disable=SC2206
HOST_PKGS+=(${KMT_HOST_PKGS:-})
# LAVA's job schema, to validate the exported jobs (make lava, tooling tests);
# jinja2 renders make lava-run's device from lava-server's templates.
HOST_PKGS+=(lava-common python3-jinja2)
QEMU_MIN_MAJOR=10

log() { printf '[setup %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

missing_pkgs() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || echo "$p"
	done
}

qemu_ok() {
	local q v
	# qemu-system-x86_64: make bench's refcount_t benchmark on x86_64.
	for q in qemu-system-aarch64 qemu-system-x86_64; do
		command -v $q >/dev/null || return 1
		v=$($q --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
		[ -n "$v" ] && [ "$v" -ge "$QEMU_MIN_MAJOR" ] || return 1
	done
}

# The plugin API header (qemu-plugin.h) ships only in QEMU's source: apt
# must offer the source package of exactly the installed qemu-system-arm.
qemu_src_ok() {
	local v
	v=$(dpkg-query -W -f='${Version}' qemu-system-arm 2>/dev/null) || return 1
	apt-cache showsrc qemu 2>/dev/null | grep -xF "Version: $v" >/dev/null
}

# The archive URI of the main Debian suite, read from the machine's apt config.
debian_uri() {
	local f uri
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		uri=$(awk '
			/^[[:space:]]*$/ { if (s ~ /(^| )bookworm( |$)/ && u != "") { print u; exit } s=""; u=""; next }
			/^URIs:/   { u=$2 }
			/^Suites:/ { s=$0; sub(/^Suites:[[:space:]]*/, "", s) }
			END { if (s ~ /(^| )bookworm( |$)/ && u != "") print u }' "$f" | head -1)
		[ -n "$uri" ] && { echo "$uri"; return; }
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		uri=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' "$f")
		[ -n "$uri" ] && { echo "$uri"; return; }
	done
	return 1
}

BACKPORTS_FILE=/etc/apt/sources.list.d/kernel-mte-backports.sources

add_backports() {
	if [ -f "$BACKPORTS_FILE" ]; then
		if ! grep -q '^Types:.*deb-src' "$BACKPORTS_FILE"; then
			log "adding deb-src to $BACKPORTS_FILE"
			sed -i 's/^Types:.*/Types: deb deb-src/' "$BACKPORTS_FILE"
		fi
		return 0
	fi
	local uri
	uri=$(debian_uri) || die "cannot find the bookworm archive URI in /etc/apt; add bookworm-backports by hand"
	log "adding bookworm-backports (same archive as bookworm) in $BACKPORTS_FILE"
	cat > "$BACKPORTS_FILE" <<SRC
Types: deb deb-src
URIs: $uri
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	NEED_UPDATE=1
}

check_only=0
[ "${1:-}" = --check ] && check_only=1

missing=$(missing_pkgs "${HOST_PKGS[@]}")
qemu_missing=0; qemu_ok || qemu_missing=1
arm64=0; dpkg --print-foreign-architectures | grep -qx arm64 && arm64=1
qemu_src=1; qemu_src_ok || qemu_src=0

if [ -z "$missing" ] && [ $qemu_missing = 0 ] && [ $arm64 = 1 ] && [ $qemu_src = 1 ]; then
	log "host ready: $(qemu-system-aarch64 --version | head -1)"
	exit 0
fi
if [ $check_only = 1 ]; then
	[ -n "$missing" ] && log "missing packages: $(echo $missing)"
	[ $qemu_missing = 1 ] && log "missing: qemu-system-aarch64 / qemu-system-x86_64 >= $QEMU_MIN_MAJOR (bookworm-backports)"
	[ $arm64 = 0 ] && log "missing: dpkg foreign architecture arm64"
	[ $qemu_src = 0 ] && log "missing: deb-src entry offering the installed QEMU's source (bookworm-backports)"
	exit 1
fi
[ "$(id -u)" = 0 ] || die "installing packages needs root (missing: $missing${qemu_missing:+ qemu})"

export DEBIAN_FRONTEND=noninteractive
NEED_UPDATE=1
[ $arm64 = 1 ] || { log "dpkg --add-architecture arm64"; dpkg --add-architecture arm64; }
{ [ $qemu_missing = 1 ] || [ $qemu_src = 0 ]; } && add_backports
if [ "$NEED_UPDATE" = 1 ]; then
	log "apt-get update"
	apt-get update -qq || die "apt-get update failed"
fi
if [ -n "$missing" ]; then
	log "installing: $(echo $missing)"
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
		die "apt-get install failed for: $(echo $missing)"
fi
# Also when apt no longer offers the installed version's source (the
# archive keeps only the newest): binary and source must match.
if [ $qemu_missing = 1 ] || ! qemu_src_ok; then
	log "installing qemu-system-arm and qemu-system-x86 from bookworm-backports"
	apt-get install -y -qq --no-install-recommends -t bookworm-backports \
		qemu-system-arm qemu-system-x86 >/dev/null ||
		die "cannot install qemu-system-arm and qemu-system-x86 from bookworm-backports"
	qemu_ok || die "qemu-system-aarch64 / qemu-system-x86_64 $QEMU_MIN_MAJOR+ still not available"
	qemu_src_ok || log "warning: apt offers no source package for the installed QEMU; the plugin (make bench) cannot be built"
fi
log "host ready: $(qemu-system-aarch64 --version | head -1)"
