#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Issue 4's figures (a benchmark, not a timed test: nothing here asserts on
# time). In one run, for each frame size:
#  - af_packet: two processes in two network namespaces joined by a veth pair
#    (blocksz=65536, framesz=8192), one CPU each:
#      raw     drnic-portpp: frames of the size bounced back, no RDMA;
#      WRITE   drnic-pingpong --write-lat (ib_write_lat-style WRITE ping-pong);
#      SEND    drnic-pingpong (ibv_rc_pingpong-style SEND ping-pong);
#  - memif: the same three between two processes (bsize=8192).
# The raw frame is as big as drnic's WRITE frame of the payload (Ethernet +
# IPv4 + UDP + BTH + RETH + payload + ICRC = payload + 74 bytes) and, like
# it, an IPv4/UDP datagram to port 4791 between drnic's two addresses
# (drnic-portpp --ip): over af_packet the kernel's IP input sees every frame
# either way (frames of the test ethertype it dropped at once, and the floor
# came out 1.6-2.7 us a round trip short of the port's cost). Prints the
# median round trips and the ratios drnic / raw (aim over af_packet: WRITE
# within 1.5x of raw), and drnic WRITE against raw+ACK: the raw ping-pong
# sending, as an RC responder does, an ACK-sized frame in a burst of its own
# on every receipt (what the protocol's frame pattern costs on this port).
#
# Usage: figures.sh PATH/TO/drnic-pingpong PATH/TO/drnic-portpp
# Environment: FIG_ITERS (default 5000), FIG_SIZES (payload bytes, default
# "64 4096"). Exit: 0 (figures printed), 1 (a run failed), 77 (skipped: not
# root, no namespaces).
set -u

PP=${1:?usage: $0 drnic-pingpong drnic-portpp}
PORTPP=${2:?usage: $0 drnic-pingpong drnic-portpp}
ITERS=${FIG_ITERS:-5000}
SIZES=${FIG_SIZES:-64 4096}
TAG=$$
NSA=drfA$TAG NSB=drfB$TAG
VA=dfa$TAG VB=dfb$TAG
# drnic's addresses on the client (A) and server (B) side; the raw floor's
# frames go between the same two.
IPA=10.232.0.11 IPB=10.232.0.12
TMP=$(mktemp -d /tmp/drnic-figures.XXXXXX)
PIDS=()
FAIL=0

skip() { echo "SKIP: $*"; exit 77; }
. "$(dirname "$0")/../common/netns.sh"
fail() { echo "FAIL: $*"; FAIL=1; }

cleanup() {
	netns_teardown "$NSA" "$NSB" "$VA" "${PIDS[@]}"
	rm -f /dev/hugepages/drf?"$TAG"* 2>/dev/null
	[ "${FIG_KEEP:-0}" = 1 ] && echo "logs kept in $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

[ -x "$PP" ] || skip "no drnic-pingpong at $PP"
[ -x "$PORTPP" ] || skip "no drnic-portpp at $PORTPP"
netns_pair "$NSA" "$VA" 10.232.0.1 "$NSB" "$VB" 10.232.0.2
MACB=$(netns_mac "$NSB" "$VB")

# bg NAME NS CMD...: run in the background (namespace NS, or none).
bg() {
	local name=$1 ns=$2
	shift 2
	if [ -n "$ns" ]; then set -- ip netns exec "$ns" "$@"; fi
	"$@" >"$TMP/$name.log" 2>&1 &
	PIDS+=($!)
	LAST=$!
}

# raw CASE SERVER_NS CLIENT_NS SDEV CDEV SIZE [--acks] -> median (us) on stdout
raw() {
	local case=$1 sns=$2 cns=$3 sdev=$4 cdev=$5 size=$6 spid rs rc
	shift 6
	bg "$case.s" "$sns" timeout 60 "$PORTPP" --server --dev "$sdev" --lcores 1 \
		--file-prefix "drfS$TAG" --timeout 10 --ip "$IPA,$IPB" "$@"
	spid=$LAST
	sleep 0.5
	bg "$case.c" "$cns" timeout 60 "$PORTPP" --client --dev "$cdev" --lcores 0 \
		--file-prefix "drfC$TAG" --size "$size" --iters "$ITERS" --warmup 500 \
		--dst "$MACB" --timeout 10 --ip "$IPA,$IPB" "$@"
	wait "$LAST"; rc=$?
	wait "$spid"; rs=$?
	[ "$rs" = 0 ] && [ "$rc" = 0 ] || { fail "$case: exit server $rs client $rc" >&2; cat "$TMP/$case.s.log" "$TMP/$case.c.log" >&2; echo "-"; return; }
	sed -n 's/.*median \([0-9.]*\) us.*/\1/p' "$TMP/$case.c.log"
}

# rdma CASE SERVER_NS CLIENT_NS HOST SLINK CLINK PORT ARGS... -> median (us)
rdma() {
	local case=$1 sns=$2 cns=$3 host=$4 slink=$5 clink=$6 port=$7 spid rs rc
	shift 7
	local com=(--timeout 40 --set progress=inline --set engines=1 --set link=ethdev
		   --set mtu=9000 -p "$port" -m 4096 -n "$ITERS" "$@")
	bg "$case.s" "$sns" timeout 60 "$PP" --lcores 1 --file-prefix "drfS$TAG" \
		--set mac=02:00:00:32:00:12 --set ipv4=$IPB --set "link_args=$slink" "${com[@]}"
	spid=$LAST
	netns_wait_listen "$sns" "$port" || fail "$case: server not listening" >&2
	bg "$case.c" "$cns" timeout 60 "$PP" --lcores 0 --file-prefix "drfC$TAG" \
		--set mac=02:00:00:32:00:11 --set ipv4=$IPA --set "link_args=$clink" \
		"${com[@]}" "$host"
	wait "$LAST"; rc=$?
	wait "$spid"; rs=$?
	[ "$rs" = 0 ] && [ "$rc" = 0 ] || { fail "$case: exit server $rs client $rc" >&2; cat "$TMP/$case.s.log" "$TMP/$case.c.log" >&2; echo "-"; return; }
	sed -n 's/^median \([0-9.]*\) usec.*/\1/p' "$TMP/$case.c.log"
}

# A run that failed printed "-" from its subshell (where fail() cannot set
# FAIL): the script fails for it here.
failed_any() { local v; for v; do [ "$v" = - ] && FAIL=1; done; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }

AFP="blocksz=65536,framesz=8192,qpairs=1"
MS="$TMP/memif.sock"
port=18600
hdr="%-9s %7s %6s | %7s %8s %6s | %8s %6s | %9s %6s\n"
printf "\n$hdr" port payload frame "raw us" "WRITE us" ratio "SEND us" ratio "raw+ACK us" ratio > "$TMP/table"
for s in $SIZES; do
	frame=$((s + 74))
	[ "$frame" -ge 60 ] || frame=60
	# af_packet over veth between the namespaces
	r=$(raw "afp.raw.$s" "$NSB" "$NSA" "net_af_packet0,iface=$VB,$AFP" \
		"net_af_packet0,iface=$VA,$AFP" "$frame")
	SL="dev=net_af_packet0,iface=$VB,$AFP"
	CL="dev=net_af_packet0,iface=$VA,$AFP"
	w=$(rdma "afp.write.$s" "$NSB" "$NSA" 10.232.0.2 "$SL" "$CL" $((port++)) -s "$s" --write-lat)
	p=$(rdma "afp.send.$s" "$NSB" "$NSA" 10.232.0.2 "$SL" "$CL" $((port++)) -s "$s")
	a=$(raw "afp.rawack.$s" "$NSB" "$NSA" "net_af_packet0,iface=$VB,$AFP" \
		"net_af_packet0,iface=$VA,$AFP" "$frame" --acks)
	failed_any "$r" "$w" "$p" "$a"
	printf "$hdr" af_packet "$s" "$frame" "$r" "$w" "$(ratio "$w" "$r")" "$p" \
		"$(ratio "$p" "$r")" "$a" "$(ratio "$w" "$a")" >> "$TMP/table"
	# memif between two processes (namespace A)
	rm -f "$MS"
	r=$(raw "memif.raw.$s" "$NSA" "$NSA" "net_memif0,role=server,socket=$MS,bsize=8192" \
		"net_memif0,role=client,socket=$MS,bsize=8192" "$frame")
	rm -f "$MS"
	SL="dev=net_memif0,role=server,socket=$MS,bsize=8192"
	CL="dev=net_memif0,role=client,socket=$MS,bsize=8192"
	w=$(rdma "memif.write.$s" "$NSA" "$NSA" 127.0.0.1 "$SL" "$CL" $((port++)) -s "$s" --write-lat)
	rm -f "$MS"
	p=$(rdma "memif.send.$s" "$NSA" "$NSA" 127.0.0.1 "$SL" "$CL" $((port++)) -s "$s")
	rm -f "$MS"
	a=$(raw "memif.rawack.$s" "$NSA" "$NSA" "net_memif0,role=server,socket=$MS,bsize=8192" \
		"net_memif0,role=client,socket=$MS,bsize=8192" "$frame" --acks)
	failed_any "$r" "$w" "$p" "$a"
	printf "$hdr" memif "$s" "$frame" "$r" "$w" "$(ratio "$w" "$r")" "$p" \
		"$(ratio "$p" "$r")" "$a" "$(ratio "$w" "$a")" >> "$TMP/table"
done
echo "median round trips, $ITERS iterations each (drnic: inline progress, path MTU 4096, one CPU per side)"
echo "ratios: WRITE and SEND against raw; the last: WRITE against raw+ACK (raw with an"
echo "ACK-sized frame sent in its own burst on every receipt, RC's frame pattern)"
cat "$TMP/table"
exit $FAIL
