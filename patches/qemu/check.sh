#!/bin/sh
# check.sh QEMU_GIT_TREE: check the QEMU posting in this directory.
#
# In a scratch clone of QEMU_GIT_TREE (bare or not; it must hold the
# base commit named in the cover letter), apply the patches on the base
# commit with git am, compile every contrib plugin they add or change as
# QEMU's meson build does (gcc, and clang when installed, with -Werror and
# QEMU's warning flags, against include/plugins of that tree and, when
# QEMU_PLUGIN_HEADER_DIR names a directory holding another qemu-plugin.h,
# against that one too), check that meson.build lists the new plugins,
# run scripts/checkpatch.pl on the patches and check their To/Cc against
# scripts/get_maintainer.pl. Exits non-zero, saying why, on any failure.
set -eu

die() {
    echo "check.sh: FAILED: $*" >&2
    exit 1
}

[ $# -eq 1 ] || die "usage: $0 QEMU_GIT_TREE"
TREE=$1
HERE=$(cd "$(dirname "$0")" && pwd)
COVER=$HERE/0000-cover-letter.patch
[ -f "$COVER" ] || die "no cover letter in $HERE"
PATCHES=$(ls "$HERE"/[0-9][0-9][0-9][1-9]-*.patch)
[ -n "$PATCHES" ] || die "no patches in $HERE"
BASE=$(sed -n 's/^base-commit: \([0-9a-f]\{40\}\)$/\1/p' "$COVER")
[ -n "$BASE" ] || die "the cover letter names no base-commit"
git -C "$TREE" cat-file -e "$BASE^{commit}" 2>/dev/null ||
    die "$TREE does not have the base commit $BASE"

SCRATCH=$(mktemp -d -t qemu-posting-check.XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT INT TERM
SRC=$SCRATCH/qemu
BUILD=$SCRATCH/build
mkdir -p "$BUILD"

echo "== apply on $BASE"
git clone -q --shared --no-checkout "$TREE" "$SRC" || die "git clone"
git -C "$SRC" checkout -q --detach "$BASE" || die "checkout of $BASE"
# shellcheck disable=SC2086
git -C "$SRC" -c user.name=check -c user.email=check@localhost \
    am -q $PATCHES || die "git am: the patches do not apply on $BASE"
git -C "$SRC" log --format='   %h %s' "$BASE..HEAD"

echo "== compile the contrib plugins the posting touches"
CHANGED=$(git -C "$SRC" diff --name-only --diff-filter=AM "$BASE" HEAD -- \
          'contrib/plugins/*.c')
[ -n "$CHANGED" ] || die "the posting changes no contrib/plugins/*.c"
for f in $(git -C "$SRC" diff --name-only --diff-filter=A "$BASE" HEAD -- \
           'contrib/plugins/*.c'); do
    grep -q "^'$(basename "$f")',\$" "$SRC/contrib/plugins/meson.build" ||
        die "contrib/plugins/meson.build does not list $(basename "$f")"
done

# The flags meson gives contrib plugins (meson.build: c_std=gnu11,
# warning_level=1, --enable-werror, qemu_common_flags, warn_flags)
COMMON="-std=gnu11 -O2 -g -Wall -Werror -fPIC -shared -D_GNU_SOURCE
 -D_FILE_OFFSET_BITS=64 -D_LARGEFILE_SOURCE -fno-strict-aliasing
 -fno-common -fwrapv -fstack-protector-strong -Wempty-body -Wendif-labels
 -Wexpansion-to-defined -Wformat-security -Wformat-y2k -Wignored-qualifiers
 -Winit-self -Wmissing-format-attribute -Wmissing-prototypes
 -Wnested-externs -Wold-style-definition -Wredundant-decls -Wstrict-prototypes
 -Wtype-limits -Wundef -Wvla -Wwrite-strings -Wno-missing-include-dirs
 -Wno-psabi -Wno-shift-negative-value"
GCC_ONLY="-Wimplicit-fallthrough=2 -Wold-style-declaration -Wshadow=local"
CLANG_ONLY="-Wno-initializer-overrides -Wno-string-plus-int
 -Wno-tautological-type-limit-compare -Wno-typedef-redefinition
 -Wno-gnu-variable-sized-type-not-at-end -Wthread-safety"
GLIB_CFLAGS=$(pkg-config --cflags glib-2.0) || die "pkg-config glib-2.0"
GLIB_LIBS=$(pkg-config --libs glib-2.0)

HEADERS=$SRC/include/plugins
if [ -n "${QEMU_PLUGIN_HEADER_DIR:-}" ]; then
    [ -f "$QEMU_PLUGIN_HEADER_DIR/qemu-plugin.h" ] ||
        die "no qemu-plugin.h in QEMU_PLUGIN_HEADER_DIR=$QEMU_PLUGIN_HEADER_DIR"
    HEADERS="$HEADERS $QEMU_PLUGIN_HEADER_DIR"
fi
COMPILERS=gcc
command -v clang >/dev/null 2>&1 && COMPILERS="$COMPILERS clang"
n=0
for cc in $COMPILERS; do
    if [ "$cc" = gcc ]; then extra=$GCC_ONLY; else extra=$CLANG_ONLY; fi
    for inc in $HEADERS; do
        api=$(sed -n 's/^#define QEMU_PLUGIN_VERSION \([0-9]*\)/\1/p' \
              "$inc/qemu-plugin.h")
        for f in $CHANGED; do
            n=$((n + 1))
            out=$BUILD/$n-lib$(basename "$f" .c).so
            # shellcheck disable=SC2086
            $cc $COMMON $extra -I "$inc" $GLIB_CFLAGS -o "$out" "$SRC/$f" \
                $GLIB_LIBS ||
                die "$cc: $f does not build against $inc/qemu-plugin.h"
            nm -D "$out" | grep -q ' qemu_plugin_install$' ||
                die "$out exports no qemu_plugin_install"
            echo "   ok: $cc, plugin API $api header: $f"
        done
    done
done

echo "== checkpatch"
# shellcheck disable=SC2086
(cd "$SRC" && ./scripts/checkpatch.pl $PATCHES) > "$BUILD/checkpatch.txt" 2>&1 ||
    { cat "$BUILD/checkpatch.txt"; die "checkpatch.pl exited non-zero"; }
sed 's/^/   /' "$BUILD/checkpatch.txt"
grep -q '^ERROR' "$BUILD/checkpatch.txt" && die "checkpatch reports errors"
# The one warning allowed: a new file under contrib/plugins/, which the
# "TCG Plugins" entry of MAINTAINERS already covers.
warnings=$(grep -c '^WARNING' "$BUILD/checkpatch.txt" || true)
allowed=$(grep -c '^WARNING: added, moved or deleted file(s):' \
          "$BUILD/checkpatch.txt" || true)
[ "$warnings" -eq "$allowed" ] || die "checkpatch reports other warnings"
grep -q '^F:[[:space:]]*contrib/plugins/$' "$SRC/MAINTAINERS" ||
    die "MAINTAINERS no longer covers contrib/plugins/"

echo "== recipients"
for p in $PATCHES; do
    (cd "$SRC" && ./scripts/get_maintainer.pl --no-rolestats "$p") |
    while IFS= read -r who; do
        addr=$(echo "$who" | sed 's/.*<\(.*\)>.*/\1/')
        sed -n '/^To:/,/^$/p' "$p" | grep -qF "$addr" ||
            die "$(basename "$p"): $addr (get_maintainer.pl) not in To/Cc"
    done
done
echo "   To/Cc of every patch hold what get_maintainer.pl lists"

echo "check.sh: OK: applies on $BASE, builds, checkpatch has no errors"
