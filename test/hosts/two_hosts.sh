#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Two drnic "hosts" on one machine (suite 'hosts'):
#  1. two network namespaces joined by a veth pair; in each a drnic-pingpong
#     process with a net_af_packet port on its veth end (blocksz=65536,
#     framesz=8192), inline progress, its own EAL file prefix and CPU. The TCP
#     exchange goes through the kernel stack over the same veth: the veth ends
#     carry kernel addresses (10.231.0.1/.2), drnic answers for its own RoCE
#     addresses (10.231.0.11/.12) on the same segment. The kernel of one
#     namespace resolves drnic's address of the other by ARP (drnic answers).
#     Then: a ping-pong with every byte checked, and a WRITE bandwidth run
#     with every byte checked by the server.
#  2. the same two runs over memif between two processes (bsize=8192).
#
# Usage: two_hosts.sh PATH/TO/drnic-pingpong
# Exit: 0 pass, 1 fail, 77 skip (not root, no namespaces, no veth).
set -u

PP=${1:?usage: $0 path/to/drnic-pingpong}
TAG=$$
NSA=drnA$TAG NSB=drnB$TAG
VA=dva$TAG VB=dvb$TAG
TMP=$(mktemp -d /tmp/drnic-hosts.XXXXXX)
PIDS=()
FAIL=0

skip() { echo "SKIP: $*"; exit 77; }
. "$(dirname "$0")/../common/netns.sh"
fail() { echo "FAIL: $*"; FAIL=1; }

cleanup() {
	netns_teardown "$NSA" "$NSB" "$VA" "${PIDS[@]}"
	rm -f /dev/hugepages/drnhA"$TAG"* /dev/hugepages/drnhB"$TAG"* \
	      /dev/hugepages/drnhC"$TAG"* /dev/hugepages/drnhD"$TAG"* 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

[ -x "$PP" ] || skip "no drnic-pingpong at $PP"
netns_pair "$NSA" "$VA" 10.231.0.1 "$NSB" "$VB" 10.231.0.2
MACA=$(netns_mac "$NSA" "$VA")
MACB=$(netns_mac "$NSB" "$VB")

# run NAME NS CPU PREFIX ARGS... : start drnic-pingpong in the background.
run() {
	local name=$1 ns=$2 cpu=$3 prefix=$4
	shift 4
	local cmd=(timeout 50 "$PP" --lcores "$cpu" --file-prefix "$prefix" --timeout 40
		   --set progress=inline --set engines=1 --set link=ethdev --set mtu=9000 "$@")
	if [ -n "$ns" ]; then cmd=(ip netns exec "$ns" "${cmd[@]}"); fi
	"${cmd[@]}" >"$TMP/$name.log" 2>&1 &
	PIDS+=($!)
	LAST=$!
}

# pair CASE SERVER_NS CLIENT_NS HOST SERVER_LINK CLIENT_LINK MODE_ARGS...
pair() {
	local case=$1 sns=$2 cns=$3 host=$4 slink=$5 clink=$6 port=$7
	shift 7
	local rs rc
	run "$case.server" "$sns" 1 "drnhB$TAG" --set mac=02:00:00:31:00:12 \
		--set ipv4=10.231.0.12 --set "link_args=$slink" -p "$port" "$@"
	local spid=$LAST
	netns_wait_listen "$sns" "$port" || fail "$case: server not listening"
	if [ "$case" = afp.pingpong ]; then
		# The kernel of namespace A resolves drnic B's address by ARP.
		ip netns exec "$NSA" bash -c "echo x > /dev/udp/10.231.0.12/9" 2>/dev/null
		sleep 0.5
		local n
		n=$(ip -n "$NSA" neigh show 10.231.0.12)
		echo "kernel neighbour entry in $NSA: $n"
		case "$n" in
		*"lladdr $MACB"*) echo "ok: the kernel resolved drnic's 10.231.0.12 to $MACB" ;;
		*) fail "$case: the kernel did not resolve drnic's address by ARP ($n)" ;;
		esac
	fi
	run "$case.client" "$cns" 0 "drnhA$TAG" --set mac=02:00:00:31:00:11 \
		--set ipv4=10.231.0.11 --set "link_args=$clink" -p "$port" "$@" "$host"
	local cpid=$LAST
	wait "$cpid"; rc=$?
	wait "$spid"; rs=$?
	echo "--- $case: server exit $rs, client exit $rc"
	sed 's/^/  server| /' "$TMP/$case.server.log" | grep -v "^  server| EAL\|TELEMETRY"
	sed 's/^/  client| /' "$TMP/$case.client.log" | grep -v "^  client| EAL\|TELEMETRY"
	[ "$rs" = 0 ] && [ "$rc" = 0 ] || fail "$case: exit status server $rs client $rc"
}

# check_capture FILE MIN: the pcapng mirror of a link: tshark reads every
# frame and decodes it as RoCE, ARP or ICMPv6 with nothing malformed; at
# least MIN RoCE frames, every ICRC valid (roce_pcap_check.py reads classic
# pcap: converted with editcap).
CHECKER=${DRNIC_ROCE_PCAP_CHECK:-/work/shared/tools/roce_pcap_check.py}
check_capture() {
	local f=$1 min=$2 total roce other bad res
	[ -s "$f" ] || { fail "no capture file $f"; return; }
	if ! command -v tshark >/dev/null; then
		echo "no tshark: capture check of $f skipped"
		return
	fi
	local ts=(tshark -r "$f" --disable-protocol rpcordma -T fields -e frame.number)
	total=$("${ts[@]}" 2>/dev/null | wc -l)
	roce=$("${ts[@]}" -Y infiniband 2>/dev/null | wc -l)
	other=$("${ts[@]}" -Y '!(infiniband || arp || icmpv6)' 2>/dev/null | wc -l)
	bad=$("${ts[@]}" -Y '_ws.malformed || _ws.expert.severity >= 8388608' 2>/dev/null | wc -l)
	echo "capture $(basename "$f"): $total frames, $roce RoCE, $other undecoded, $bad malformed"
	[ "$total" -gt 0 ] && [ "$other" = 0 ] && [ "$bad" = 0 ] && [ "$roce" -ge "$min" ] ||
		fail "capture $f: tshark does not decode every frame ($total frames, $roce RoCE >= $min?, $other other, $bad malformed)"
	if [ ! -r "$CHECKER" ] || ! command -v editcap >/dev/null; then
		echo "no $CHECKER or editcap: ICRC check of $f skipped"
		return
	fi
	editcap -F pcap "$f" "$f.pcap" || { fail "editcap $f"; return; }
	res=$(python3 "$CHECKER" "$f.pcap" | grep -o "{'rocev2.*}" | head -1)
	echo "  roce_pcap_check: $res"
	python3 -c "import ast,sys; d=ast.literal_eval(sys.argv[1]); sys.exit(0 if d.get('rocev2',0)==$roce and d.get('icrc_ok',0)==$roce and not d.get('icrc_bad') else 1)" "$res" ||
		fail "capture $f: not every ICRC valid ($res, tshark RoCE $roce)"
}

# check_dst_mac FILE SRC DST MIN: at least MIN RoCE frames from MAC SRC in
# FILE, every one of them to MAC DST.
check_dst_mac() {
	local f=$1 src=$2 dst=$3 min=$4 all to
	command -v tshark >/dev/null || { echo "no tshark: MAC check of $f skipped"; return; }
	[ -s "$f" ] || { fail "no capture file $f"; return; }
	all=$(tshark -r "$f" -Y "infiniband && eth.src == $src" -T fields -e eth.dst 2>/dev/null |
		wc -l)
	to=$(tshark -r "$f" -Y "infiniband && eth.src == $src && eth.dst == $dst" -T fields \
		-e eth.dst 2>/dev/null | wc -l)
	echo "capture $(basename "$f"): $all RoCE frames from $src, $to of them to $dst"
	[ "$all" -ge "$min" ] && [ "$to" = "$all" ] ||
		fail "capture $f: $all RoCE frames from $src (>= $min?), only $to to $dst"
}

AFP="blocksz=65536,framesz=8192,qpairs=1"
SLINK="dev=net_af_packet0,iface=$VB,$AFP,ipv4=10.231.0.12"
CLINK="dev=net_af_packet0,iface=$VA,$AFP,ipv4=10.231.0.11"
N=500
# Both sides mirror the ping-pong into pcapng files (capture= of lib/link).
pair afp.pingpong "$NSB" "$NSA" 10.231.0.2 "$SLINK,capture=$TMP/afp.server.pcapng" \
	"$CLINK,capture=$TMP/afp.client.pcapng" 18515 -s 4096 -n $N -m 4096 -c
grep -q "data check: $N messages of 4096 bytes verified" "$TMP/afp.pingpong.server.log" &&
grep -q "data check: $N messages of 4096 bytes verified" "$TMP/afp.pingpong.client.log" ||
	fail "afp.pingpong: data not verified on both sides"
# N messages each way, each seen leaving one side and arriving at the other.
check_capture "$TMP/afp.server.pcapng" $((2 * N))
check_capture "$TMP/afp.client.pcapng" $((2 * N))
# The WRITE run gives its RoCE addresses only in the device's configuration
# (--set ipv4=, no ipv4= in link_args): the link must answer ARP for them and
# resolve the peer from them, so every frame goes to the peer's MAC.
pair afp.write "$NSB" "$NSA" 10.231.0.2 "dev=net_af_packet0,iface=$VB,$AFP" \
	"dev=net_af_packet0,iface=$VA,$AFP,capture=$TMP/afp.write.client.pcapng" 18516 \
	-w -s 65536 -n $N -m 4096
grep -q "write check: $N writes of 65536 bytes" "$TMP/afp.write.server.log" ||
	fail "afp.write: server did not verify the data"
check_dst_mac "$TMP/afp.write.client.pcapng" "$MACA" "$MACB" $((16 * N))

# memif: two processes in one namespace (A), TCP on its loopback.
ip -n "$NSA" link set lo up
MS="$TMP/memif.sock"
SLINK="dev=net_memif0,role=server,socket=$MS,bsize=8192,ipv4=10.231.0.12"
CLINK="dev=net_memif0,role=client,socket=$MS,bsize=8192,ipv4=10.231.0.11"
pair memif.pingpong "$NSA" "$NSA" 127.0.0.1 "$SLINK" "$CLINK" 18517 -s 4096 -n $N -m 4096 -c
grep -q "data check: $N messages of 4096 bytes verified" "$TMP/memif.pingpong.client.log" ||
	fail "memif.pingpong: data not verified"
pair memif.write "$NSA" "$NSA" 127.0.0.1 "$SLINK" "$CLINK" 18518 -w -s 65536 -n $N -m 4096
grep -q "write check: $N writes of 65536 bytes" "$TMP/memif.write.server.log" ||
	fail "memif.write: server did not verify the data"

[ $FAIL = 0 ] && echo "PASS" || echo "FAILED"
exit $FAIL
