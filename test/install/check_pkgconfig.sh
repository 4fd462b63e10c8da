#!/usr/bin/env bash
# Installs the build into a scratch directory and builds a user's program
# with nothing but `pkg-config drnic`, then runs it.
set -euo pipefail
build=$1 src=$2
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --no-rebuild --destdir "$dest" >/dev/null
pc=$(dirname "$(find "$dest" -name drnic.pc | head -1)")
# Point our .pc at the scratch prefix (only ours: libdpdk stays where apt put it).
sed -i "s|^prefix=|prefix=$dest|" "$pc/drnic.pc"
export PKG_CONFIG_PATH=$pc
flags=$(pkg-config --cflags --libs drnic)
libdir=$(dirname "$pc")
# The shared library exports the public API and nothing else.
internal=$(nm -D --defined-only "$libdir/libdrnic.so" | awk '$3 !~ /^drnic_/ && $2 != "A" {print $3}')
if [ -n "$internal" ]; then
	echo "FAIL: libdrnic.so exports $(echo "$internal" | wc -l) symbols outside drnic_*:" \
		$(echo "$internal" | head -5)
	exit 1
fi
cc -Wall -Wextra -Werror -o "$dest/hello_drnic" "$src" $flags
LD_LIBRARY_PATH=$libdir "$dest/hello_drnic"
