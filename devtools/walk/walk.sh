#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# The walk of one RDMA WRITE with immediate from drnic_post_send() to both
# CQEs: the files and functions of drnic it runs (walk.c says how).
#
#   devtools/walk/walk.sh [SOURCE_TREE]    default: this tree
#
# Builds SOURCE_TREE at -O0 with -finstrument-functions in a scratch
# directory (WALK_BUILD, default /tmp/drnic-walk-<tree name>), runs the
# traced WRITE, and prints each file with the functions it ran in, then the
# totals. Pass another tree (a `git worktree` of an older commit) to compare.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "${1:-$here/../..}" && pwd)
out=${WALK_BUILD:-/tmp/drnic-walk-$(basename "$src")}

if [ ! -f "$out/build.ninja" ]; then
	meson setup "$out" "$src" --buildtype=debug -Dtests=false \
		-Dc_args=-finstrument-functions >/dev/null
fi
ninja -C "$out" libdrnic.a >/dev/null
# The public headers: the build's copies (older trees: each library's directory).
incs="-I$out/lib"
for d in "$src"/lib/*/; do incs="$incs -I$d"; done
cc -O0 -no-pie -o "$out/walk" "$here/walk.c" $incs $(pkg-config --cflags libdpdk) \
	-Wl,--whole-archive "$out/libdrnic.a" -Wl,--no-whole-archive \
	$(pkg-config --libs libdpdk) -lisal -lnuma -lpthread -lm
DRNIC_EAL_ARGS="${DRNIC_EAL_ARGS:-}" "$out/walk" > "$out/walk.addrs" 2>"$out/walk.log" || {
	cat "$out/walk.log" >&2
	exit 1
}
addr2line -f -e "$out/walk" < "$out/walk.addrs" | paste - - | python3 -c '
import os, sys
src = sys.argv[1] + "/"
files, names = {}, set()
for line in sys.stdin:
    fn, loc = line.split()
    path = os.path.normpath(loc.rsplit(":", 1)[0])
    if not path.startswith(src) or fn in names:
        continue     # DPDK and libc; a static inline copy seen already
    names.add(fn)
    files.setdefault(path[len(src):], []).append(fn)
for f, fns in files.items():
    print("%-34s %s" % (f, " ".join(fns)))
libs = {}
for f, fns in files.items():
    d = os.path.dirname(f)
    n, k = libs.get(d, (0, 0))
    libs[d] = (n + len(fns), k + 1)
print()
for d, (n, k) in sorted(libs.items()):
    print("%-34s %3d functions in %d files" % (d, n, k))
print("%-34s %3d functions in %d files" % ("all", len(names), len(files)))
' "$src"
