#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# drnic's drop-in librdmacm.so.1 (suite 'ibverbs'): its ABI is rdma-core
# 44's, and every Debian program and plug-in linked to librdmacm loads on
# it (`ldd -r`: no undefined symbol, no missing version).
#
# 1. The version nodes RDMACM_1.0 ... 1.3 and the symbols in each are the
#    system library's (objdump -T, default versions).
# 2. `ldd -r` with LD_LIBRARY_PATH=BUILD/lib/ibverbs of every binary in
#    /usr/bin that needs librdmacm.so.1 (rdmacm-utils, perftest, qperf,
#    qemu ...) and of UCX's rdmacm module: both drop-ins picked, nothing
#    undefined.
# 3. librdmacm.so.1 needs no drnic library but the drop-in libibverbs.so.1
#    (one copy of drnic per process).
#
# Usage: rdmacm_abi.sh BUILD/lib/ibverbs
set -u
. "$(dirname "$0")/common.sh"
need_pkgs
SYS=/usr/lib/x86_64-linux-gnu/librdmacm.so.1
OURS=$IBV_LIB/librdmacm.so.1
[ -e "$OURS" ] || { echo "FAIL: no $OURS"; exit 1; }
if [ ! -e "$SYS" ] || ! command -v rping >/dev/null; then
	echo "installing rdmacm-utils librdmacm1 (README.md set-up)"
	[ "$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y rdmacm-utils librdmacm1 >/dev/null 2>&1
	[ -e "$SYS" ] && command -v rping >/dev/null ||
		{ echo "FAIL: run 'apt-get install -y rdmacm-utils librdmacm1'"; exit 1; }
fi

# 1. Version nodes and symbols.
syms() {  # the defined, versioned symbols of a library: "VERSION NAME"
	objdump -T "$1" | awk 'NF >= 2 && $0 !~ /\*UND\*/ && $(NF-1) ~ /^RDMACM_/ && $NF !~ /^RDMACM_/ \
		{print $(NF-1), $NF}' | sort
}
d=$(diff <(syms "$SYS") <(syms "$OURS"))
[ -z "$d" ] && ok "exports: $(syms "$OURS" | wc -l) symbols in RDMACM_1.0-1.3, as $SYS" ||
	fail "exports differ from $SYS (< system, > ours): $(echo "$d" | head -5 | tr '\n' ' ')"
vdefs() { objdump -p "$1" | sed -n '/Version definitions/,/^$/p' | awk 'NR>1'; }
[ "$(vdefs "$SYS")" = "$(vdefs "$OURS")" ] && ok "version nodes and their parents as $SYS" ||
	fail "version definitions differ: $(vdefs "$OURS" | tr '\n' ' ')"

# 2. Every program and plug-in that needs librdmacm.so.1.
n=0
for b in /usr/bin/* $(ls /usr/lib/x86_64-linux-gnu/ucx/libuct_rdmacm.so* 2>/dev/null | head -1); do
	[ -f "$b" ] || continue
	objdump -p "$b" 2>/dev/null | grep -q "NEEDED *librdmacm.so.1" || continue
	n=$((n + 1))
	out=$(ibv ldd -r "$b" 2>&1)
	if echo "$out" | grep -qE "undefined symbol|not found"; then
		fail "ldd -r $b: $(echo "$out" | grep -E 'undefined|not found' | head -3)"
	elif ! echo "$out" | grep -q "librdmacm.so.1 => $IBV_LIB/librdmacm.so.1" ||
	     ! echo "$out" | grep -q "libibverbs.so.1 => $IBV_LIB/libibverbs.so.1"; then
		fail "ldd $b does not pick the drop-ins in $IBV_LIB"
	fi
done
[ $n -ge 20 ] || fail "only $n programs need librdmacm.so.1 (rdmacm-utils, perftest, qperf?)"
[ $FAIL = 0 ] && ok "ldd -r: every symbol resolved for the $n programs and plug-ins using librdmacm"

# 3. One copy of drnic: the drop-in libibverbs is its only drnic library.
need=$(objdump -p "$OURS" | awk '/NEEDED/ {print $2}' | sort | tr '\n' ' ')
[ "$need" = "libc.so.6 libibverbs.so.1 " ] && ok "librdmacm.so.1 needs $need" ||
	fail "librdmacm.so.1 needs $need (want libibverbs.so.1 and libc only)"

[ $FAIL = 0 ] && echo PASS || echo FAILED
exit $FAIL
