#!/bin/sh
# run-guest.sh LIBMTE.so [REFERENCE.so]: the plugin's own test on a tiny
# bare-metal guest (mte-guest.S, whose comments say what it executes).
#
# Builds the guest with aarch64-linux-gnu-gcc, runs it under
# qemu-system-aarch64 -M virt,mte=on -cpu max with the plugin in two
# configurations and compares the output with expected-guest-*.txt, which
# hold the counts the guest's code executes (counted by hand: region 1 has
# 35 lower-half instructions, region 2 one lower-half and 13 upper-half
# ones, region 3 two after its restart, then one unmatched end marker and
# a region marked with HINT #0x72/#0x73 holding 3). With REFERENCE.so
# (the project's plugin, build/plugin/libkmt-count.so) it also runs the
# guest under that one and compares the two with compare.py. The plugin
# must be built against the qemu-plugin.h of the qemu-system-aarch64 run.
set -eu

die() {
    echo "run-guest.sh: FAILED: $*" >&2
    exit 1
}

[ $# -ge 1 ] || die "usage: $0 LIBMTE.so [REFERENCE.so]"
PLUGIN=$(realpath "$1")
REF=${2:+$(realpath "$2")}
HERE=$(cd "$(dirname "$0")" && pwd)
QEMU=${QEMU:-qemu-system-aarch64}
TMP=$(mktemp -d -t mte-guest.XXXXXX)
trap 'rm -rf "$TMP"' EXIT INT TERM

aarch64-linux-gnu-gcc -nostdlib -static -no-pie -Wl,-Ttext=0x40080000 \
    -Wl,--build-id=none -o "$TMP/mte-guest.elf" "$HERE/mte-guest.S" ||
    die "cannot build the guest"

run() {
    timeout 120 "$QEMU" -M virt,mte=on -cpu max -smp 1 -display none \
        -monitor none -serial none -semihosting \
        -kernel "$TMP/mte-guest.elf" -plugin "$1" -d plugin -D "$2" ||
        die "the guest failed under $1 (exit $?)"
}

run "$PLUGIN,mrs=tfsr_el1,msr=gcr_el1,mrs=gcr_el1,callchain=8" "$TMP/default.txt"
diff -u "$HERE/expected-guest-default.txt" "$TMP/default.txt" ||
    die "counts differ from expected-guest-default.txt"
echo "ok: regions, restart, unmatched end, call chains, mrs=/msr="

run "$PLUGIN,start=0x72,end=0x73,split=off" "$TMP/markers.txt"
diff -u "$HERE/expected-guest-markers.txt" "$TMP/markers.txt" ||
    die "counts differ from expected-guest-markers.txt"
echo "ok: start=0x72,end=0x73,split=off"

if [ -n "$REF" ]; then
    run "$REF,chains=8" "$TMP/reference.txt"
    python3 "$HERE/compare.py" "$TMP/reference.txt" "$TMP/default.txt" ||
        die "the reference plugin counts otherwise"
fi
echo "run-guest.sh: OK"
