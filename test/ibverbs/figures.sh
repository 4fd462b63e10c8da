#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Issue 6's figures (a benchmark, not a timed test: nothing here asserts on
# time). What the drop-in libibverbs.so.1 costs against drnic's own tools, in
# one run, on one link: two network namespaces joined by a veth pair, a
# net_af_packet port on each end (blocksz=65536, framesz=8192, MTU 9000),
# inline progress, one engine:
#   drop-in     Debian's perftest ib_write_lat / ib_write_bw through
#               build/lib/ibverbs (the progress helper as configured by
#               default: it sleeps on the link's receive wake-up);
#   drnic-perf  app/perf's write_lat / write_bw, client and server, pinned to
#               CPU 0 / CPU 1 (drnic-perf's own inline loop, no helper);
#   nap         the drop-in again with `progress_wait = nap` (the helper
#               before the receive wake-up), for reference.
# Same message sizes and iteration counts for all. Each case runs FIG_RUNS
# times; the table shows the median of the runs' figures (latency:
# t_typical, itself a median; bandwidth: BW average) and the ratios
# drop-in / drnic-perf and nap / drnic-perf (latency: above 1 is slower;
# bandwidth: below 1 is slower).
#
# Issue 15's UD and UC latency, a second table on the same link in the same
# run, FIG_LAT_SIZE bytes, FIG_LAT_ITERS messages, the three interleaved
# FIG_RUNS times:
#   qperf       Debian's qperf ud_lat / uc_lat through the drop-in (one
#               qperf server for all runs, -m as the others, -t
#               FIG_QPERF_TIME seconds: its -n does not apply to these
#               tests; -cp1: it polls its CQs as the others do); its
#               figure is the average half round trip (it prints no median);
#   perftest    ib_send_lat -c UD / -c UC through the drop-in (t_typical);
#   drnic-perf  send_lat -c UD / -c UC, pinned as above (t_typical).
# Medians of the runs, ratios qperf / drnic-perf and perftest / drnic-perf.
#
# Usage: figures.sh BUILD/lib/ibverbs PATH/TO/drnic-perf
# Environment: FIG_RUNS (5), FIG_LAT_ITERS (5000), FIG_BW_ITERS (50000),
# FIG_LAT_SIZE (2), FIG_BW_SIZE (65536), FIG_NAP (1: also the nap rows),
# FIG_ROWS ("write_lat write_bw ud_lat uc_lat": the rows to measure),
# FIG_QPERF_TIME (2: seconds of each qperf run),
# FIG_KEEP=1 keeps the logs. Exit: 0 (figures printed), 1 (a run failed),
# 77 (skipped: not root, no namespaces).
set -u
. "$(dirname "$0")/common.sh"
PERF=${2:?usage: $0 BUILD/lib/ibverbs drnic-perf}
RUNS=${FIG_RUNS:-5}
LAT_N=${FIG_LAT_ITERS:-5000}
BW_N=${FIG_BW_ITERS:-50000}
LAT_S=${FIG_LAT_SIZE:-2}
BW_S=${FIG_BW_SIZE:-65536}
NAP=${FIG_NAP:-1}
ROWS=${FIG_ROWS:-write_lat write_bw ud_lat uc_lat}
QP_TIME=${FIG_QPERF_TIME:-2}
TAG=$$
NSS=dibfS$TAG NSC=dibfC$TAG VS=dbfs$TAG VC=dbfc$TAG
TMP=$(mktemp -d /tmp/drnic-ibvfig.XXXXXX)
PIDS=()

skip() { echo "SKIP: $*"; exit 77; }
. "$(dirname "$0")/../common/netns.sh"
cleanup() {
	netns_teardown "$NSS" "$NSC" "$VS" "${PIDS[@]}"
	rm -rf /var/run/dpdk/dibf*"$TAG"* 2>/dev/null
	[ "${FIG_KEEP:-0}" = 1 ] && echo "logs kept in $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

[ -x "$PERF" ] || skip "no drnic-perf at $PERF"
[ "$(id -u)" = 0 ] || skip "needs root for network namespaces (uid $(id -u))"
need_pkgs
netns_pair "$NSS" "$VS" 10.232.0.2 "$NSC" "$VC" 10.232.0.1

AFP="blocksz=65536,framesz=8192"
# mkcfg SIDE IFACE MY_IP PEER_IP MAC [IBVERBS_KEY...]: the drop-in's file.
mkcfg() {
	local side=$1 ifc=$2 me=$3 peer=$4 mac=$5 k
	shift 5
	{
		printf '[eal]\nlcores = 0\nfile_prefix = dibf%s%s\n[ibverbs]\npeer_ipv4 = %s\n' \
			"$side" "$TAG" "$peer"
		for k in "$@"; do echo "$k"; done
		printf '[device]\nname = drnic0\nprogress = inline\nengines = 1\nlink = ethdev\n'
		printf 'link_args = dev=net_af_packet0,iface=%s,%s,ipv4=%s\n' "$ifc" "$AFP" "$me"
		printf 'mac = %s\nipv4 = %s\nmtu = 9000\n' "$mac" "$me"
	} >"$TMP/$side.ini"
}
mkcfg S "$VS" 10.232.0.12 10.232.0.11 02:00:00:33:00:12
mkcfg C "$VC" 10.232.0.11 10.232.0.12 02:00:00:33:00:11
mkcfg SN "$VS" 10.232.0.12 10.232.0.11 02:00:00:33:00:12 "progress_wait = nap"
mkcfg CN "$VC" 10.232.0.11 10.232.0.12 02:00:00:33:00:11 "progress_wait = nap"
# qperf's server lives through all its runs: an EAL file prefix of its own.
mkcfg QS "$VS" 10.232.0.12 10.232.0.11 02:00:00:33:00:12
mkcfg QC "$VC" 10.232.0.11 10.232.0.12 02:00:00:33:00:11

PORT=$((21000 + TAG % 10000))
# run_pair NAME SERVER_CMD... -- CLIENT_CMD... : both must exit 0; the
# client's output is in $TMP/NAME.c. Why a pair failed goes to stderr, and
# to $TMP/NAME.why instead when RUN_PAIR_QUIET=1 (a try that may be made
# again: its caller says what became of it).
run_pair() {
	local name=$1 scmd=() spid rs rc
	shift
	while [ "$1" != -- ]; do scmd+=("$1"); shift; done
	shift
	ip netns exec "$NSS" timeout 120 "${scmd[@]}" >"$TMP/$name.s" 2>&1 &
	spid=$!
	PIDS+=($spid)
	: >"$TMP/$name.why"
	netns_wait_listen "$NSS" "$PORT" ||
		echo "FAIL: $name: server not listening on $PORT" >>"$TMP/$name.why"
	ip netns exec "$NSC" timeout 120 "$@" >"$TMP/$name.c" 2>&1
	rc=$?
	wait "$spid"
	rs=$?
	if [ "$rs" != 0 ] || [ "$rc" != 0 ]; then
		{
			echo "FAIL: $name: exit server $rs client $rc"
			grep -v "^EAL\|^TELEMETRY" "$TMP/$name.s" | tail -5 | sed 's/^/  server| /'
			grep -v "^EAL\|^TELEMETRY" "$TMP/$name.c" | tail -5 | sed 's/^/  client| /'
		} >>"$TMP/$name.why"
	fi
	[ "${RUN_PAIR_QUIET:-0}" = 1 ] || cat "$TMP/$name.why" >&2
	[ "$rs" = 0 ] && [ "$rc" = 0 ]
}

# The figure on the line after the "#bytes" header: perftest and
# drnic-perf print the same columns (latency: t_typical is column 5;
# bandwidth: BW average is column 4).
figure() {  # FILE lat|bw
	local col=5
	[ "$2" = bw ] && col=4
	grep -A1 "#bytes" "$1" | tail -1 | awk -v c=$col '{ print $c }'
}

# dropin NAME SIDE_S SIDE_C PROG ARGS... -> figure on stdout ("-" on failure).
# Before its report perftest times its TSC against gettimeofday() and gives
# up when the two disagree ("Correlation coefficient r^2: ... < 0.9", "Can't
# produce a report", exit 1; the server then fails to read its peer): on
# this 2-CPU VM the host's scheduling does that now and then, whatever the
# device (a CI run, 2026-12-07: the nap row's 64 KiB write_bw). Such a run is
# made again, twice at most, and said so; any other failure is a failure.
dropin() {
	local name=$1 cs=$2 cc=$3 prog=$4 kind=lat try
	shift 4
	case $prog in *_bw) kind=bw ;; esac
	for try in 1 2 3; do
		PORT=$((PORT + 1))
		if RUN_PAIR_QUIET=1 run_pair "$name" env DRNIC_CONFIG="$TMP/$cs.ini" \
			DRNIC_IBV_DEBUG=1 LD_LIBRARY_PATH="$IBV_LIB" "$prog" "$@" -p $PORT -- \
			env DRNIC_CONFIG="$TMP/$cc.ini" DRNIC_IBV_DEBUG=1 LD_LIBRARY_PATH="$IBV_LIB" \
			"$prog" "$@" -p $PORT 10.232.0.2; then
			figure "$TMP/$name.c" $kind
			return
		fi
		if [ "$try" -lt 3 ] && grep -q "Can't produce a report" "$TMP/$name.c"; then
			echo "NOTE: $name: perftest's own clock estimate failed" \
			     "($(grep -o 'r^2: [0-9.]*' "$TMP/$name.c" | head -1) < 0.9): run again" >&2
			continue
		fi
		cat "$TMP/$name.why" >&2
		break
	done
	echo -
}

# own NAME TEST ARGS... -> drnic-perf's figure
own() {
	local name=$1 test=$2 kind=lat
	shift 2
	case $test in *_bw) kind=bw ;; esac
	PORT=$((PORT + 1))
	local com=(--inline --set engines=1 --set link=ethdev --set mtu=9000 -p $PORT
		   --timeout 60 "$@")
	run_pair "$name" "$PERF" "$test" --app-lcore 1 --file-prefix "dibfPS$TAG" \
		--set mac=02:00:00:33:00:12 --set ipv4=10.232.0.12 \
		--set "link_args=dev=net_af_packet0,iface=$VS,$AFP" "${com[@]}" -- \
		"$PERF" "$test" --app-lcore 0 --file-prefix "dibfPC$TAG" \
		--set mac=02:00:00:33:00:11 --set ipv4=10.232.0.11 \
		--set "link_args=dev=net_af_packet0,iface=$VC,$AFP" "${com[@]}" 10.232.0.2 ||
		{ echo -; return; }
	figure "$TMP/$name.c" $kind
}

median() {  # numbers (or "-") -> their median, "-" when none
	printf '%s\n' "$@" | grep -E '^[0-9.]+$' | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }

FAILED=0
# row TEST SIZE ITERS: the three cases interleaved, FIG_RUNS times.
row() {
	local test=$1 size=$2 iters=$3 r d=() o=() n=() v
	for r in $(seq "$RUNS"); do
		v=$(dropin "d.$test.$r" S C "ib_$test" -s "$size" -n "$iters"); d+=("$v")
		[ "$v" = - ] && FAILED=1
		v=$(own "o.$test.$r" "$test" -s "$size" -n "$iters"); o+=("$v")
		[ "$v" = - ] && FAILED=1
		if [ "$NAP" = 1 ]; then
			v=$(dropin "n.$test.$r" SN CN "ib_$test" -s "$size" -n "$iters"); n+=("$v")
			[ "$v" = - ] && FAILED=1
		fi
	done
	local md mo mn
	md=$(median "${d[@]}") mo=$(median "${o[@]}") mn=$(median "${n[@]:-}")
	printf "$FMT" "$test" "$size" "$iters" "$md" "$mo" "$(ratio "$md" "$mo")" \
		"$mn" "$(ratio "$mn" "$mo")" >>"$TMP/table"
	echo "  $test runs: drop-in ${d[*]} | drnic-perf ${o[*]} | nap ${n[*]:-}" >>"$TMP/runs"
}

# One qperf server for every qperf run (each opens the device again).
QP_PORT=$((PORT + 5000))
qperf_server() {
	ip netns exec "$NSS" env DRNIC_CONFIG="$TMP/QS.ini" LD_LIBRARY_PATH="$IBV_LIB" \
		timeout 3600 qperf -lp $QP_PORT >"$TMP/qperf.s" 2>&1 &
	PIDS+=($!)
	netns_wait_listen "$NSS" $QP_PORT ||
		{ echo "FAIL: qperf server not listening on $QP_PORT" >&2; FAILED=1; }
}
# qperf_lat NAME TEST -> its latency in usec ("-" on failure)
qperf_lat() {
	local name=$1 test=$2
	ip netns exec "$NSC" env DRNIC_CONFIG="$TMP/QC.ini" LD_LIBRARY_PATH="$IBV_LIB" \
		timeout 120 qperf 10.232.0.2 -lp $QP_PORT -to 30 -cp1 -m "$LAT_S" -t "$QP_TIME" \
		"$test" >"$TMP/$name.c" 2>&1
	awk '$1 == "latency" && $2 == "=" {
		u = $4; v = $3
		if (u == "ns") v /= 1000; else if (u == "ms") v *= 1000; else if (u == "sec") v *= 1e6
		printf "%.2f\n", v; found = 1 }
	     END { if (!found) print "-" }' "$TMP/$name.c"
}

# lat_row UD|UC: qperf, perftest through the drop-in and drnic-perf, FIG_RUNS times.
lat_row() {
	local t=$1 lt q=() p=() o=() r v
	lt=$(echo "$t" | tr 'A-Z' 'a-z')_lat
	for r in $(seq "$RUNS"); do
		v=$(qperf_lat "q.$lt.$r" "$lt"); q+=("$v")
		[ "$v" = - ] && { FAILED=1; echo "FAIL: qperf $lt: $(tail -2 "$TMP/q.$lt.$r.c")" >&2; }
		v=$(dropin "p.$lt.$r" S C ib_send_lat -c "$t" -s "$LAT_S" -n "$LAT_N"); p+=("$v")
		[ "$v" = - ] && FAILED=1
		v=$(own "o.$lt.$r" send_lat -c "$t" -s "$LAT_S" -n "$LAT_N"); o+=("$v")
		[ "$v" = - ] && FAILED=1
	done
	local mq mp mo
	mq=$(median "${q[@]}") mp=$(median "${p[@]}") mo=$(median "${o[@]}")
	printf "$FMT2" "$lt" "$LAT_S" "$LAT_N" "$mq" "$(ratio "$mq" "$mo")" "$mp" \
		"$(ratio "$mp" "$mo")" "$mo" >>"$TMP/table2"
	echo "  $lt runs: qperf ${q[*]} | perftest ${p[*]} | drnic-perf ${o[*]}" >>"$TMP/runs2"
}

FMT="%-10s %6s %6s | %10s %10s %7s | %10s %7s\n"
printf "$FMT" test bytes iters drop-in drnic-perf ratio nap ratio >"$TMP/table"
FMT2="%-10s %6s %6s | %10s %7s | %10s %7s | %10s\n"
printf "$FMT2" test bytes iters qperf ratio perftest ratio drnic-perf >"$TMP/table2"
: >"$TMP/runs"
: >"$TMP/runs2"
case " $ROWS " in *" ud_lat "* | *" uc_lat "*) qperf_server ;; esac
for r in $ROWS; do
	case $r in
	write_lat) row write_lat "$LAT_S" "$LAT_N" ;;
	write_bw) row write_bw "$BW_S" "$BW_N" ;;
	ud_lat) lat_row UD ;;
	uc_lat) lat_row UC ;;
	*) echo "FAIL: FIG_ROWS: no row $r" >&2; FAILED=1 ;;
	esac
done

echo "af_packet over veth between two namespaces, inline progress, MTU 9000;"
echo "medians of $RUNS runs; latency: t_typical usec (lower is better); bandwidth:"
echo "BW average MB/sec (higher is better); ratio = figure / drnic-perf's"
if [ "$(wc -l <"$TMP/table")" -gt 1 ]; then
	cat "$TMP/table"
	cat "$TMP/runs"
fi
if [ "$(wc -l <"$TMP/table2")" -gt 1 ]; then
	echo "UD and UC SEND latency, half round trip usec (qperf: its average over"
	echo "${QP_TIME} s, -cp1; perftest ib_send_lat -c UD|UC and drnic-perf send_lat"
	echo "-c UD|UC: t_typical of iters); ratio = figure / drnic-perf's"
	cat "$TMP/table2"
	cat "$TMP/runs2"
fi
# The helper's mode, as the drop-in's first run reported it.
grep -h "progress helper: blocking\|progress helper: napping" "$TMP/d.write_lat.1.c" 2>/dev/null | head -1
exit $FAILED
