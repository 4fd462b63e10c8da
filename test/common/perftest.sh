# SPDX-License-Identifier: BSD-3-Clause
# perftest's result table, as perftest and drnic-perf print it: sourced, not
# run. The sourcing script defines ok() and fail().

# perftest_figure NAME FILE lat|bw [ITERS]: the line after the "#bytes"
# header of FILE must carry a sane figure (latency: t_typical, column 5;
# bandwidth: BW average, column 4; a positive number below 1e7) and, when
# ITERS is given, that many iterations (column 2).
perftest_figure() {
	local name=$1 f=$2 kind=$3 iters=${4:-} line v n what
	line=$(grep -A1 "#bytes" "$f" | tail -1)
	n=$(echo "$line" | awk '{print $2}')
	if [ "$kind" = lat ]; then
		v=$(echo "$line" | awk '{print $5}'); what="t_typical $v usec"
	else
		v=$(echo "$line" | awk '{print $4}'); what="BW average $v MB/s"
	fi
	if ! awk -v v="$v" 'BEGIN { exit !(v + 0 > 0 && v + 0 < 1e7) }'; then
		fail "$name: no sane figure in '$line'"
	elif [ -n "$iters" ] && [ "$n" != "$iters" ]; then
		fail "$name: $n iterations reported, $iters asked for: '$line'"
	else
		ok "$name: $what ($n iterations)"
	fi
}
