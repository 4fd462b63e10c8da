#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# A/B two builds of drnic-perf, runs alternated (A then B, PAIRS times), and
# print the medians: write latency (t_typical), 64 KiB bandwidth, 64 B rate.
#
#   devtools/perf-ab.sh A/app/drnic-perf B/app/drnic-perf [PAIRS] [LAT_ITERS]
#
# Build the other commit in a worktree first:
#   git worktree add /tmp/base REV && meson setup /tmp/base/build /tmp/base &&
#   ninja -C /tmp/base/build app/drnic-perf
# This machine changes speed mode from minute to minute: compare figures of
# one run only, and prefer many pairs. LAT_ITERS 200000 gave the tightest
# spread (default 50000).
set -eu
a=$1 b=$2 pairs=${3:-7} iters=${4:-50000}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
i=0
while [ $i -lt "$pairs" ]; do
	for v in A B; do
		bin=$a
		[ $v = B ] && bin=$b
		lat=$("$bin" write_lat -n "$iters" 2>/dev/null | awk '/^ 2 /{print $5}')
		bw=$("$bin" write_bw -s 65536 -n 20000 2>/dev/null | awk '/^ 65536 /{print $4}')
		rate=$("$bin" write_bw -s 64 -n 500000 -Q 128 -l 32 2>/dev/null | awk '/^ 64 /{print $5}')
		echo "$v $lat $bw $rate" | tee -a "$out"
	done
	i=$((i + 1))
done
python3 - "$out" <<'PY'
import statistics, sys
d = {}
for line in open(sys.argv[1]):
    v, *xs = line.split()
    for k, x in zip(("lat_us", "bw_MBps", "rate_Mpps"), xs):
        d.setdefault((v, k), []).append(float(x))
for k in ("lat_us", "bw_MBps", "rate_Mpps"):
    a, b = statistics.median(d[("A", k)]), statistics.median(d[("B", k)])
    print(f"{k:10} A {a:10.3f}  B {b:10.3f}  B/A {b / a:.3f}  ({len(d[('A', k)])} pairs)")
PY
