#!/bin/sh
# boot-compare.sh LIBMTE.so [OUTDIR]: boot the project's arm64 kernels
# under QEMU TCG the way the project measures them (virt,mte=on, -cpu max,
# one vCPU, -icount shift=0, -seed 1), once with the project's plugin
# (build/plugin/libkmt-count.so) and once with the contrib plugin
# LIBMTE.so (built against the installed QEMU's qemu-plugin.h), and
# compare their counts with compare.py. Run from the top of the project
# after the kernels, the initramfs and the plugin are built. Three pairs
# of boots, a few seconds to a minute each:
#   selftest:    base-lean, kasan=off, the exact-count user-space test
#   entry-sync:  series-lean, kasan.mode=sync, system call benchmarks,
#                call chains of depth 24
#   entry-async: base-lean, kasan.mode=async, the same benchmarks
set -eu

die() {
    echo "boot-compare.sh: FAILED: $*" >&2
    exit 1
}

[ $# -ge 1 ] || die "usage: $0 LIBMTE.so [OUTDIR]"
MTE=$(realpath "$1")
OUT=${2:-$(mktemp -d -t mte-boots.XXXXXX)}
HERE=$(cd "$(dirname "$0")" && pwd)
REF=build/plugin/libkmt-count.so
INITRD=build/out/series-lean/initramfs.cpio.gz
if [ ! -f "$REF" ] || [ ! -f "$INITRD" ]; then
    die "run from the top of the project, with the plugin and kernels built"
fi
mkdir -p "$OUT"

boot() {    # NAME IMAGE APPEND PLUGIN_ARG
    timeout 900 qemu-system-aarch64 -machine virt,mte=on,gic-version=3 \
        -cpu max -smp 1 -m 1024 -kernel "$2" -initrd "$INITRD" \
        -append "console=ttyAMA0 log_buf_len=1M panic=-1 rdinit=/init $3" \
        -display none -monitor none -serial stdio -nic none -no-reboot \
        -icount shift=0,sleep=off -seed 1 \
        -plugin "$4" -d plugin -D "$OUT/$1.counts" \
        > "$OUT/$1.log" 2>&1 < /dev/null || die "boot $1 failed ($OUT/$1.log)"
    grep -q KMT-DONE "$OUT/$1.log" || die "boot $1 did not finish"
}

pair() {    # NAME IMAGE APPEND REFERENCE_ARGS CONTRIB_ARGS
    boot "$1-reference" "$2" "$3" "$REF$4"
    boot "$1-contrib" "$2" "$3" "$MTE$5"
    echo "== $1"
    python3 "$HERE/compare.py" "$OUT/$1-reference.counts" \
        "$OUT/$1-contrib.counts" > "$OUT/$1.compare" ||
        { cat "$OUT/$1.compare"; die "$1: the counts differ"; }
    tail -2 "$OUT/$1.compare"
}

BASE=build/out/base-lean/arch/arm64/boot/Image
SERIES=build/out/series-lean/arch/arm64/boot/Image
BENCH="kunit.enable=0 kmt.bench=-t kmt.benchprog=entry-bench"
pair selftest "$BASE" "kasan=off kunit.enable=0 kmt.tagtest=1" "" \
    ",mrs=tfsr_el1"
pair entry-sync "$SERIES" "kasan.mode=sync $BENCH" ",chains=24" \
    ",mrs=tfsr_el1,callchain=24"
pair entry-async "$BASE" "kasan.mode=async $BENCH" ",chains=24" \
    ",mrs=tfsr_el1,callchain=24"
echo "boot-compare.sh: OK (outputs in $OUT)"
