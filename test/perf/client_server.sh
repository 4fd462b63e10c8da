#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# drnic-perf as two processes, server and client, the way perftest is run
# (suite 'hosts'): a net_memif link between them (bsize=8192, MTU 9000),
# inline progress, each process on its own CPU and EAL file prefix, the
# connection exchange over TCP on 127.0.0.1. Every test of the eight with a
# small -n (iterations reported as asked, a sane figure; the client checks
# the bytes that came back, the server the bytes that landed), then -D on
# both sides for the four tests where each side keeps running until the
# other says stop (write/send, latency/bandwidth), several QPs, a size
# sweep, and --json on the client.
#
# Usage: client_server.sh PATH/TO/drnic-perf
# Exit: 0 pass, 1 fail, 77 skip (not root: hugepages and memif sockets).
set -u

PERF=${1:?usage: $0 path/to/drnic-perf}
TAG=$$
TMP=$(mktemp -d /tmp/drnic-perf-cs.XXXXXX)
SOCK="$TMP/memif.sock"
PORT=$((22000 + TAG % 10000))
FAIL=0
PIDS=()

ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; FAIL=1; }
skip() { echo "SKIP: $*"; exit 77; }
. "$(dirname "$0")/../common/netns.sh"
. "$(dirname "$0")/../common/perftest.sh"

cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	[ "${CS_KEEP:-0}" = 1 ] && echo "logs kept in $TMP" || rm -rf "$TMP"
	rm -rf /var/run/dpdk/dpcs?"$TAG"*
}
trap cleanup EXIT
trap 'exit 1' INT TERM

[ -x "$PERF" ] || skip "no drnic-perf at $PERF"
[ "$(id -u)" = 0 ] || skip "needs root for hugepages and the memif socket (uid $(id -u))"

# side ROLE LCORE PREFIX IP MAC: drnic-perf's options for one end.
side() {
	echo --inline --app-lcore "$2" --file-prefix "$3" --set engines=1 --set link=ethdev \
		--set mtu=9000 --set mac="$5" --set ipv4="$4" \
		--set "link_args=dev=net_memif0,role=$1,socket=$SOCK,bsize=8192" --timeout 60
}
SRV=$(side server 1 "dpcsS$TAG" 10.235.0.12 02:00:00:35:00:12)
CLI=$(side client 0 "dpcsC$TAG" 10.235.0.11 02:00:00:35:00:11)

# server_stacks NAME PID: the client is done; a server still running 30 s
# later (it tears down within a second) has its threads' stacks printed
# before its timeout kills it, so that a hang in teardown can be told apart
# from one in the test (a memif teardown once hung here in CI). PID is the
# timeout(1) wrapping drnic-perf: the stacks are its child's.
server_stacks() {
	local k p
	for k in $(seq 300); do
		kill -0 "$2" 2>/dev/null || return 0
		sleep 0.1
	done
	p=$(pgrep -P "$2" | head -1)
	[ -n "$p" ] || p=$2
	echo "$1: server $p still running 30 s after its client; its threads:"
	if command -v gdb >/dev/null; then
		gdb -p "$p" -batch -ex "thread apply all bt" 2>/dev/null | grep -E '^(#|Thread)' |
			sed 's/^/  stack| /' | head -120
	else
		for k in /proc/"$p"/task/*; do
			echo "  stack| task ${k##*/} $(cat "$k/comm" 2>/dev/null): $(cat "$k/wchan" 2>/dev/null)"
		done
	fi
}

# pair NAME TEST ARGS... : server and client; both must exit 0. The client's
# output is in $TMP/NAME.c (stdout) and $TMP/NAME.ce (stderr).
pair() {
	local name=$1 test=$2 spid rs rc
	shift 2
	PORT=$((PORT + 1))
	# shellcheck disable=SC2086
	timeout 90 "$PERF" "$test" $SRV -p $PORT --server "$@" >"$TMP/$name.s" 2>&1 &
	spid=$!
	PIDS+=($spid)
	netns_wait_listen "" $PORT || fail "$name: server not listening on $PORT"
	# shellcheck disable=SC2086
	timeout 90 "$PERF" "$test" $CLI -p $PORT "$@" 127.0.0.1 >"$TMP/$name.c" 2>"$TMP/$name.ce"
	rc=$?
	server_stacks "$name" $spid
	wait $spid
	rs=$?
	if [ $rs != 0 ] || [ $rc != 0 ]; then
		fail "$name: drnic-perf $test $*: exit server $rs client $rc"
		grep -v "^EAL\|^TELEMETRY" "$TMP/$name.s" | sed 's/^/  server| /' | tail -8
		cat "$TMP/$name.c" "$TMP/$name.ce" | grep -v "^EAL\|^TELEMETRY" |
			sed 's/^/  client| /' | tail -8
		return 1
	fi
	return 0
}

# run NAME TEST ITERS ARGS...: the client's table has a sane figure and ITERS
# iterations ("" for -D, where the count is whatever the time allowed).
run() {
	local name=$1 test=$2 iters=$3 kind=bw
	shift 3
	pair "$name" "$test" "$@" || return
	case $test in *_lat) kind=lat ;; esac
	perftest_figure "$name: $test $*" "$TMP/$name.c" $kind "$iters"
}

N=300
for t in write_lat send_lat read_lat atomic_lat write_bw send_bw read_bw atomic_bw; do
	run "$t" "$t" $N -n $N
done
# The send_bw server reports what it received, as perftest's does.
perftest_figure "send_bw server" "$TMP/send_bw.s" bw $N
run write_bw.s4k write_bw $N -n $N -s 4096 -q 2
run send_lat.s1k send_lat $N -n $N -s 1024
run read_bw.q4 read_bw $N -n $N -q 4 -s 8192

# -D on both sides: the client keeps the time and tells the server when it
# is up; at least a few hundred messages must have gone in a second.
for t in write_lat send_lat write_bw send_bw; do
	run "$t.D" "$t" "" -D 1 || continue
	n=$(grep -A1 "#bytes" "$TMP/$t.D.c" | tail -1 | awk '{print $2}')
	[ "${n:-0}" -ge 100 ] && ok "$t -D 1: $n iterations" ||
		fail "$t -D 1: only ${n:-no} iterations"
	# send_bw: the server received every message the client completed.
	[ "$t" = send_bw ] && perftest_figure "send_bw -D 1 server" "$TMP/$t.D.s" bw "$n"
done

# UC and UD (-c), as perftest's: UC's SEND and WRITE, UD's SEND (one
# datagram per message, the GRH room in every receive buffer), -D with the
# UD flag (repeated until the peer has it), the receiver's own count,
# an SRQ on the receiving end; UD refuses WRITE and sizes above the MTU.
run send_lat.uc send_lat $N -n $N -c UC
run write_lat.uc write_lat $N -n $N -c UC
run send_bw.uc send_bw $N -n $N -c UC -s 4096
run write_bw.uc write_bw $N -n $N -c UC -s 8192 -q 2
run send_lat.ud send_lat $N -n $N -c UD
run send_lat.ud.s send_lat $N -n $N -c UD -s 4096
run send_bw.ud send_bw $N -n $N -c UD -s 1024 -q 2
# The UD server reports what it took: all of them (300 a QP, fewer than its
# 512 receives a QP, on a link that loses nothing).
perftest_figure "send_bw -c UD server" "$TMP/send_bw.ud.s" bw $((N * 2))
run send_lat.ud.D send_lat "" -c UD -D 1
run send_bw.srq send_bw $N -n $N --srq -q 4 -s 64
for bad in "write_lat -c UD" "send_lat -c UD -s 8192"; do
	# Refused before it listens: no client needed.
	# shellcheck disable=SC2086
	out=$(timeout 60 "$PERF" $bad $SRV -p $((PORT + 1)) --server 2>&1)
	if [ $? != 0 ] && echo "$out" | grep -q "UD has SEND only\|above the port's MTU"; then
		ok "$bad refused: $(echo "$out" | grep -m1 'UD')"
	else
		fail "$bad not refused: $(echo "$out" | tail -2)"
	fi
done

# A size sweep: one line per size, 2 B to 64 KiB.
if pair write_bw.all write_bw -a -n 50; then
	lines=$(awk '/#bytes/ { on = 1; next } on && $1 ~ /^[0-9]+$/ { n++ } END { print n + 0 }' \
		"$TMP/write_bw.all.c")
	[ "$lines" -ge 16 ] && ok "write_bw -a: $lines sizes" ||
		fail "write_bw -a: $lines result lines"
fi

# --json on the client: one document on stdout, the figure in it.
if pair send_bw.json send_bw -n $N --json; then
	python3 - "$TMP/send_bw.json.c" $N <<'PY' && ok "send_bw --json: one document, $N messages" ||
import json, sys
d = json.load(open(sys.argv[1]))
b = d["bandwidth"]
assert len(b) == 1 and b[0]["test"] == "send_bw" and b[0]["iterations"] == int(sys.argv[2])
assert b[0]["bw_avg_MBps"] > 0 and b[0]["msg_rate_Mpps"] > 0
PY
		fail "send_bw --json: $(head -c 300 "$TMP/send_bw.json.c")"
fi

[ $FAIL = 0 ] && echo PASS || echo FAILED
exit $FAIL
