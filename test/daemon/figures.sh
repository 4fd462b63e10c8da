#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Issue 17's figures: what drnicd costs against drnic-perf in embedded mode,
# on the same link (loopback, the engine on lcore 1, the program on CPU 0),
# in the same run. A benchmark: it prints figures and fails only when a
# program fails, never on a time.
#
#   figures.sh DRNICD DRNIC_CTL DRNICD_PROBE DRNIC_PERF DROPIN_DIR [ROUNDS]
#
# Each round (10 by default) runs, alternated: drnic-perf write_lat,
# read_lat and atomic_bw in one process (no daemon running), then the same
# through a daemon and the drop-in libibverbs: ib_write_lat, ib_read_lat,
# ib_atomic_bw, and qperf rc_rdma_write_poll_lat when qperf is installed.
# Then: the floors (drnic-perf floors), the cost of attaching (drnicd_probe
# attach, five times), of registering 1 GiB of malloc()ed memory
# (drnicd_probe reg 1024), and of a SIGKILL in the middle of a bandwidth
# test: the time until the daemon has released the process's objects and
# its counters. Medians and worst of the rounds.
#
# On a 2-CPU machine ib_write_lat and rc_rdma_write_poll_lat put two
# spinning programs on CPU 0 (the engine has CPU 1): each hand-off waits
# for the scheduler. ib_read_lat and ib_atomic_bw have one spinning side.
set -u

DRNICD=$(realpath "$1")
CTL=$(realpath "$2")
PROBE=$(realpath "$3")
PERF=$(realpath "$4")
DROPIN=$(realpath "$5")
ROUNDS=${6:-10}

W=$(mktemp -d /tmp/drnicd-fig.XXXXXX)
PREFIX=drnicdfig$$
SOCK=$W/drnicd.sock
DPID=
FAILS=0

cleanup() {
	[ -n "$DPID" ] && kill -9 "$DPID" 2>/dev/null
	pkill -9 -f "ib_write_bw -d drnic0 -x 0 -D 30 -p 18691" 2>/dev/null
	wait 2>/dev/null
	rm -f /dev/hugepages/${PREFIX}map_* 2>/dev/null
	rm -rf /var/run/dpdk/${PREFIX} "$W"
}
trap cleanup EXIT
PIDS=()
. "$(dirname "$0")/common.sh"

# MTU 9000: a 4096-byte path MTU, as drnic-perf's loopback uses (and qperf
# asks for 2048).
start() { start_daemon "$SOCK" "$PREFIX" "$W/drnicd.log" --set mtu=9000 || exit 1; }
stop_daemon() {
	kill -TERM "$DPID"
	wait "$DPID" || fail "drnicd exit $?"
	DPID=
}

# perftest's (and drnic-perf's) result line, field N.
field() { grep -A1 '#bytes' "$1" | tail -1 | awk -v n="$2" '{print $n}'; }

# qperf's AVs have no GRH: [ibverbs] peer_ipv4 names the destination (the
# daemon's own address: both programs are on its device).
printf '[ibverbs]\npeer_ipv4 = 10.0.0.1\n' >"$W/qperf.ini"
qperf_lat() {   # qperf TEST through the daemon; its latency in us
	env DRNIC_CONFIG="$W/qperf.ini" LD_LIBRARY_PATH="$DROPIN" DRNIC_DAEMON="$SOCK" taskset -c 0 \
		timeout 60 qperf -lp 18690 >"$W/qperf.server" 2>&1 &
	local spid=$!
	wait_for listening 18690 || fail "qperf: no server"
	env DRNIC_CONFIG="$W/qperf.ini" LD_LIBRARY_PATH="$DROPIN" DRNIC_DAEMON="$SOCK" taskset -c 0 \
		timeout 60 qperf -lp 18690 -t 2 127.0.0.1 "$1" >"$W/qperf.client" 2>&1 ||
		{ cat "$W/qperf.client" "$W/qperf.server" >&2; return; }
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	# "latency  =  12.6 us" or "ms"
	awk '/latency/ { v = $3; if ($4 == "ms") v *= 1000; if ($4 == "sec") v *= 1e6; print v }' \
		"$W/qperf.client"
}

declare -A R
add() { R[$1]="${R[$1]:-} $2"; }

have_qperf=0
command -v qperf >/dev/null && have_qperf=1

for r in $(seq "$ROUNDS"); do
	# Embedded: one process, its own device and engine (no daemon running).
	"$PERF" write_lat -n 1000 >"$W/e.wl" 2>&1 || fail "drnic-perf write_lat"
	"$PERF" read_lat -n 1000 >"$W/e.rl" 2>&1 || fail "drnic-perf read_lat"
	"$PERF" atomic_bw -n 20000 >"$W/e.ab" 2>&1 || fail "drnic-perf atomic_bw"
	add e.write_lat "$(field "$W/e.wl" 5)"
	add e.read_lat "$(field "$W/e.rl" 5)"
	add e.atomic_bw "$(field "$W/e.ab" 5)"
	# Through the daemon.
	start
	vpair wl 18681 ib_write_lat -d drnic0 -x 0 -n 200
	vpair rl 18682 ib_read_lat -d drnic0 -x 0 -n 1000
	vpair ab 18683 ib_atomic_bw -d drnic0 -x 0 -n 20000
	add d.ib_write_lat "$(field "$W/wl.client" 5)"
	add d.ib_read_lat "$(field "$W/rl.client" 5)"
	add d.ib_atomic_bw "$(field "$W/ab.client" 5)"
	if [ $have_qperf = 1 ]; then
		q=$(qperf_lat rc_rdma_write_poll_lat)
		[ -n "$q" ] || fail "qperf rc_rdma_write_poll_lat: no result"
		add d.qperf_rc_rdma_write_poll_lat "$q"
	fi
	stop_daemon
	echo "round $r: embedded write_lat $(field "$W/e.wl" 5) us, read_lat $(field "$W/e.rl" 5) us, atomic_bw $(field "$W/e.ab" 5) Mpps;" \
		"daemon ib_write_lat $(field "$W/wl.client" 5) us, ib_read_lat $(field "$W/rl.client" 5) us, ib_atomic_bw $(field "$W/ab.client" 5) Mpps"
done

# median and worst ("worst": the largest latency, the smallest rate).
stat() {
	python3 - "$1" "$2" <<'EOF'
import statistics, sys
def num(x):
    try:
        return float(x)
    except ValueError:
        return None
v = [num(x) for x in sys.argv[2].split() if num(x) is not None]
if not v:
    print("%-34s no result" % sys.argv[1]); sys.exit()
rate = sys.argv[1].endswith("_bw")
worst = min(v) if rate else max(v)
print("%-34s median %10.3f  worst %10.3f  %s  (%d runs)" % (sys.argv[1], statistics.median(v), worst,
      "Mpps" if rate else "us", len(v)))
EOF
}
echo
echo "== the same link, alternated rounds: embedded drnic-perf against the daemon"
for k in e.write_lat e.read_lat e.atomic_bw d.ib_write_lat d.ib_read_lat d.ib_atomic_bw \
	 d.qperf_rc_rdma_write_poll_lat; do
	[ -n "${R[$k]:-}" ] && stat "$k" "${R[$k]}"
done
python3 - "${R[e.read_lat]}" "${R[d.ib_read_lat]}" "${R[e.atomic_bw]}" "${R[d.ib_atomic_bw]}" \
	"${R[e.write_lat]}" "${R[d.ib_write_lat]}" <<'EOF'
import statistics, sys
f = [[float(x) for x in a.split()] for a in sys.argv[1:]]
print("ratio: ib_read_lat worst / drnic-perf read_lat median    %.2fx" % (max(f[1]) / statistics.median(f[0])))
print("ratio: drnic-perf atomic_bw median / ib_atomic_bw worst  %.2fx" % (statistics.median(f[2]) / min(f[3])))
print("ratio: ib_write_lat worst / drnic-perf write_lat median  %.2fx (two spinners on one CPU)" % (max(f[5]) / statistics.median(f[4])))
EOF

echo
echo "== floors (this run)"
"$PERF" floors 2>&1 | grep '^floor:'

start
echo
echo "== attach (EAL as a secondary, device open), five processes"
for i in 1 2 3 4 5; do
	DRNIC_DAEMON=$SOCK taskset -c 0 "$PROBE" attach || fail "probe attach"
done
echo
echo "== 1 GiB of malloc()ed memory registered"
DRNIC_DAEMON=$SOCK taskset -c 0 "$PROBE" reg 1024 | grep -v '^ok:' || fail "probe reg"

echo
echo "== SIGKILL in the middle of ib_write_bw -D 30"
env -u DRNIC_CONFIG LD_LIBRARY_PATH="$DROPIN" DRNIC_DAEMON="$SOCK" taskset -c 0 \
	ib_write_bw -d drnic0 -x 0 -D 30 -p 18691 >"$W/k.server" 2>&1 &
ks=$!
wait_for listening 18691 || fail "kill: no server"
env -u DRNIC_CONFIG LD_LIBRARY_PATH="$DROPIN" DRNIC_DAEMON="$SOCK" taskset -c 0 \
	ib_write_bw -d drnic0 -x 0 -D 30 -p 18691 127.0.0.1 >"$W/k.client" 2>&1 &
kc=$!
wait_for sh -c "'$CTL' -s '$SOCK' list | grep -q 'device drnic0: engines 1, qp 3,'"
sleep 2   # mid-run: the test has been sending for two seconds
"$CTL" -s "$SOCK" list | grep -E '^(device|process)'
kill -9 "$kc" "$ks"
wait "$kc" "$ks" 2>/dev/null
wait_for sh -c "'$CTL' -s '$SOCK' list | grep -q 'device drnic0: engines 1, qp 1, mr 1, pd 1'" ||
	fail "kill: not all released"
"$CTL" -s "$SOCK" list | grep -E '^(device|counters)'
stop_daemon
grep -E 'gone: freed' "$W/drnicd.log"
[ $FAILS = 0 ] || { echo "figures: $FAILS failure(s)"; exit 1; }
