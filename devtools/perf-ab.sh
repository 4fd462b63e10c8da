#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# A/B two builds of drnic-perf in alternated pairs (A then B, then B then A,
# PAIRS times) and print, for each figure, the median, the better quartile
# (lower for times, higher for rates) and the best of each build, and how
# many pairs B won.
#
#   devtools/perf-ab.sh A/app/drnic-perf B/app/drnic-perf [PAIRS] [WHAT]
#
# WHAT (default "loop"):
#   loop  write latency (t_typical, us), 64 KiB bandwidth (MB/s), 64 B rate
#         (Mpps), as drnic-perf loopback measures them;
#   rate  the 64 B rate's engine time a WQE (ns; write_bw -s 64 -Q 128 -l 32
#         -t 512 -n 1000000 --stats): one engine serves both ends, so this is
#         the figure a change to the engine moves, with less of the
#         application's noise than the rate;
#   cold  the same for 16384 QPs with one WR each (write_bw -s 64 -q 16384
#         -t 1 -l 1 -Q 1 -n 60 -u 18 --stats: drnic-perf scale's cold view);
#   lat   write latency only (LAT_ITERS iterations, default 100000).
#
# Build the other commit in a worktree first:
#   git worktree add /tmp/base REV && meson setup /tmp/base/build /tmp/base &&
#   ninja -C /tmp/base/build app/drnic-perf
# This machine changes speed mode from minute to minute: prefer 20 pairs or
# more, and read the pairs won and the better quartile beside the median.
set -eu
a=$1 b=$2 pairs=${3:-10} what=${4:-loop}
iters=${LAT_ITERS:-100000}
case $what in loop | rate | cold | lat) ;; *) echo "perf-ab.sh: WHAT is loop, rate, cold or lat, not '$what'" >&2; exit 2 ;; esac
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# One run of build $1: the figures of $what, space-separated.
run() {
	case $what in
	loop)
		lat=$("$1" write_lat -n "$iters" 2>/dev/null | awk '/^ 2 /{print $5}')
		bw=$("$1" write_bw -s 65536 -n 20000 2>/dev/null | awk '/^ 65536 /{print $4}')
		rate=$("$1" write_bw -s 64 -n 500000 -Q 128 -l 32 2>/dev/null | awk '/^ 64 /{print $5}')
		echo "$lat $bw $rate" ;;
	lat)
		"$1" write_lat -n "$iters" 2>/dev/null | awk '/^ 2 /{print $5}' ;;
	rate | cold)
		if [ "$what" = rate ]; then
			set -- "$1" write_bw -s 64 -Q 128 -l 32 -t 512 -n 1000000 --stats
		else
			set -- "$1" write_bw -s 64 -q 16384 -t 1 -l 1 -Q 1 -n 60 -u 18 --stats
		fi
		"$@" 2>/dev/null | sed -n 's/.*stats perfa1 engine 0:.*(\([0-9.]*\) ns a WQE).*/\1/p' ;;
	esac
}

i=0
while [ $i -lt "$pairs" ]; do
	if [ $((i % 2)) -eq 0 ]; then order="A B"; else order="B A"; fi
	for v in $order; do
		if [ $v = A ]; then fig_A=$(run "$a"); else fig_B=$(run "$b"); fi
	done
	echo "pair $((i + 1)): A $fig_A  B $fig_B" | tee -a "$out"
	i=$((i + 1))
done
python3 - "$out" "$what" <<'PY'
import statistics, sys
names = {"loop": [("lat_us", False), ("bw_MBps", True), ("rate_Mpps", True)],
         "lat": [("lat_us", False)], "rate": [("engine_ns", False)],
         "cold": [("engine_ns", False)]}[sys.argv[2]]
pairs = []
for line in open(sys.argv[1]):
    f = line.split()
    ia, ib = f.index("A"), f.index("B")
    pairs.append((f[ia + 1:ib], f[ib + 1:]))
for k, (name, higher) in enumerate(names):
    got = [(float(a[k]), float(b[k])) for a, b in pairs if len(a) > k and len(b) > k]
    if not got:
        print(f"{name:10} no figures (a run failed)")
        continue
    won = sum(1 for x, y in got if (y > x if higher else y < x))
    def summary(xs):
        xs = sorted(xs, reverse=higher)
        return statistics.median(xs), xs[(len(xs) - 1) // 4], xs[0]
    ma, qa, ba = summary([x for x, _ in got])
    mb, qb, bb = summary([y for _, y in got])
    print(f"{name:10} A median {ma:.3f} quartile {qa:.3f} best {ba:.3f} | "
          f"B median {mb:.3f} quartile {qb:.3f} best {bb:.3f} | B won {won} of {len(got)}")
PY
