#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# drnic against Linux Soft-RoCE (suite 'interop'). Boots Debian's kernel with
# rdma_rxe under qemu (TCG) on a bridge, joins drnic to that L2 segment with a
# net_af_packet port on a veth (rig.sh), and runs the cases below. Every case
# is captured with tcpdump on the bridge end of drnic's veth (af_packet's
# qdisc bypass hides drnic's own frames from a capture on its end): every
# RoCEv2 ICRC must verify (roce_flows.py, and ../shared's roce_pcap_check.py
# where present) and tshark must decode every frame.
#
# Usage: interop.sh DRNIC_PINGPONG IBVERBS_DIR VERBS_HOST VERBS_VM [CASE...]
#   cases (default: all, in this order):
#     pingpong   ibv_rc_pingpong (rxe) <-> drnic-pingpong, both roles, sizes
#                1024/4096/65536 at path MTU 1024 and 4096; with ARP checks
#     ibverbs    Debian's ibv_rc_pingpong, ibv_uc_pingpong, ibv_srq_pingpong and
#                ibv_ud_pingpong on drnic's libibverbs.so.1 <-> rxe,
#                both roles, -c on both sides
#     perftest   ib_write_lat, ib_write_bw, ib_send_lat, ib_read_lat
#     recovery   frames lost both ways (drnic's injector: fault_dir=tx, then
#                fault_dir=rx); both stacks retransmit
#     verbs      SEND, SEND_WITH_IMM, WRITE, WRITE_WITH_IMM, READ, CMP_SWAP,
#                FETCH_ADD between a drnic QP and an rxe QP, and a type 2
#                memory window bound on one side, written through and
#                invalidated (SEND_WITH_INV) by the other
#     uxd        UD and UC both ways (uxd_peer.c on both sides, drnic's through
#                the drop-in): GRH area, WC fields, bytes; one packet lost by
#                drnic's injector loses exactly its UC message
#     cm         the RDMA CM: rping -V, ucmatose, udaddy on drnic's librdmacm
#                <-> rxe's kernel CM, both roles; REJ to no listener; a lost
#                REQ either way resent
# Environment: DRNIC_INTEROP_DIR (cache, default /var/tmp/drnic-interop),
#   DRNIC_INTEROP_KEEP=1 (leave the VM and network up), DRNIC_ROCE_PCAP_CHECK.
# Exit: 0 pass, 1 fail, 77 skip (not root, no qemu/network/image: says why).
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PP=${1:?usage: $0 DRNIC_PINGPONG IBVERBS_DIR VERBS_HOST VERBS_VM [CASE...]}
IBV_DIR=${2:?} VHOST=${3:?} VVM=${4:?}
# The UD/UC peer is built beside the rxe side's verbs peer.
UXD=$(dirname "$VVM")/interop-uxd
shift 4
CASES=${*:-pingpong ibverbs perftest recovery verbs uxd cm}
. "$HERE/rig.sh"

T0=$SECONDS
FAIL=0
SUMMARY=()
TMP=$(mktemp -d /tmp/drnic-interop.XXXXXX)
PIDS=()
TCPDUMP=
CHECKER=${DRNIC_ROCE_PCAP_CHECK:-/work/shared/tools/roce_pcap_check.py}

fail() { echo "FAIL: $*"; FAIL=1; CASE_OK=0; }
ok() { echo "ok: $*"; }
skip() { echo "SKIP: $*"; exit 77; }

cleanup() {
	local p
	[ -n "$TCPDUMP" ] && kill "$TCPDUMP" 2>/dev/null
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ "${DRNIC_INTEROP_KEEP:-0}" = 1 ]; then
		echo "kept: VM pid $RIG_QEMU_PID, network $RIG_BR; logs in $TMP"
		return
	fi
	rig_stop
	rig_net_down
	rm -rf "$TMP" /var/run/dpdk/dint$$* 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ------------------------------------------------------------ the machine
[ "$(id -u)" = 0 ] || skip "needs root (bridge, tap, veth, qemu)"
for x in "$PP" "$VHOST" "$VVM"; do [ -x "$x" ] || { echo "FAIL: no program $x"; exit 1; }; done
[ -e "$IBV_DIR/libibverbs.so.1" ] || { echo "FAIL: no $IBV_DIR/libibverbs.so.1"; exit 1; }
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v tcpdump >/dev/null || need+=(tcpdump)
command -v tshark >/dev/null || need+=(tshark)
command -v ibv_rc_pingpong >/dev/null || need+=(ibverbs-utils)
command -v ib_write_lat >/dev/null || need+=(perftest)
if [ ${#need[@]} -gt 0 ]; then
	echo "installing ${need[*]}"
	DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq --no-install-recommends \
		"${need[@]}" >"$TMP/apt.log" 2>&1 ||
		{ DEBIAN_FRONTEND=noninteractive timeout 600 apt-get update -qq >/dev/null 2>&1
		  DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq \
			--no-install-recommends "${need[@]}" >"$TMP/apt.log" 2>&1; } ||
		skip "cannot install ${need[*]}: $(tail -2 "$TMP/apt.log")"
fi

# Image: cached under $RIG_DIR, keyed by the recipe's hash.
IMG=$RIG_DIR/img-$(sha256sum "$HERE/rxe_image.sh" | cut -c1-16)
t=$SECONDS
"$HERE/rxe_image.sh" "$IMG"
rc=$?
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || { echo "FAIL: building the VM image ($IMG)"; exit 1; }
T_IMAGE=$((SECONDS - t))
for old in "$RIG_DIR"/img-*; do   # images of older recipes
	[ "$old" = "$IMG" ] || rm -rf "$old"
done
echo "image $IMG: kernel $(cat "$IMG/kernel-version") (${T_IMAGE} s)"

rig_net_up 2>"$TMP/net.err" || skip "cannot create the bridge/tap/veth: $(cat "$TMP/net.err")"
t=$SECONDS
rig_boot "$IMG"
rc=$?
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || exit 1
T_BOOT=$((SECONDS - t))
vm 'rdma link show; ibv_devinfo -d rxe0 | grep -E "state|active_mtu"; echo gid1 $(cat /sys/class/infiniband/rxe0/ports/1/gids/1) $(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/1)'
GID1=$(vm cat /sys/class/infiniband/rxe0/ports/1/gids/1)
[ "$GID1" = "0000:0000:0000:0000:0000:ffff:0a4f:000a" ] || fail "rxe0 GID index 1 is $GID1, not ::ffff:$RIG_VM_IP"

# ------------------------------------------------------------ helpers
PORT=$((19000 + $$ % 1000))
LINK="dev=net_af_packet0,iface=$RIG_VETH,blocksz=65536,framesz=8192,qpairs=1,ipv4=$RIG_DRNIC_IP"

# drnic_pp LOG [--link-extra ,K=V] ARGS...: drnic-pingpong on the veth.
drnic_pp() {
	local log=$1 extra=
	shift
	if [ "${1:-}" = --link-extra ]; then extra=$2; shift 2; fi
	timeout 150 "$PP" --lcores 1 --file-prefix "dint$$" --timeout 120 \
		--set progress=inline --set engines=1 --set link=ethdev --set "mtu=$RIG_MTU" \
		--set "mac=$RIG_DRNIC_MAC" --set "ipv4=$RIG_DRNIC_IP" --set "link_args=$LINK$extra" \
		"$@" >"$log" 2>&1
}

# ibv LOG PROGRAM ARGS...: a Debian verbs program on drnic's libibverbs.so.1
cat >"$TMP/drnic.ini" <<EOF
[eal]
lcores = 1
file_prefix = dint$$
[ibverbs]
peer_ipv4 = $RIG_VM_IP
[device]
name = drnic0
progress = inline
engines = 1
link = ethdev
link_args = $LINK
mac = $RIG_DRNIC_MAC
ipv4 = $RIG_DRNIC_IP
mtu = $RIG_MTU
EOF
ibv() {
	local log=$1
	shift
	DRNIC_CONFIG=$TMP/drnic.ini LD_LIBRARY_PATH=$IBV_DIR timeout 150 "$@" >"$log" 2>&1
}

host_listening() { # PORT
	local i
	for i in $(seq 150); do ss -ltn | grep -q ":$1 " && return 0; sleep 0.2; done
	return 1
}
vm_listening() { # PORT
	local i
	for i in $(seq 60); do vm "ss -ltn | grep -q ':$1 '" && return 0; sleep 0.5; done
	return 1
}

# pair NAME SERVER_SIDE(vm|host) 'VM command' HOST_FUNCTION ARGS...: the
# server starts first, then the client; both must exit 0. Logs NAME.vm and
# NAME.host in $TMP.
pair() {
	local name=$1 side=$2 vcmd=$3 rs rc spid
	shift 3
	PORT=$((PORT + 1))
	vcmd=${vcmd//@PORT@/$PORT}
	if [ "$side" = vm ]; then
		vm "timeout 150 $vcmd" >"$TMP/$name.vm" 2>&1 &
		spid=$!
		vm_listening $PORT || fail "$name: no server in the VM on port $PORT"
		"$@" -p $PORT "$RIG_VM_IP"
		rc=$?
	else
		"$@" -p $PORT &
		spid=$!
		host_listening $PORT || fail "$name: no drnic server on port $PORT"
		vm "timeout 150 $vcmd $RIG_HOST_IP" >"$TMP/$name.vm" 2>&1
		rc=$?
	fi
	wait $spid
	rs=$?
	echo "  $name: server ($side) exit $rs, client exit $rc"
	if [ $rs != 0 ] || [ $rc != 0 ]; then
		fail "$name: exit server $rs client $rc"
		sed 's/^/    vm| /' "$TMP/$name.vm" | tail -6
		grep -hv '^EAL\|TELEMETRY' "$TMP/$name.host" 2>/dev/null | sed 's/^/    drnic| /' | tail -6
		return 1
	fi
	return 0
}

cap_start() { # NAME
	CAP=$TMP/$1.pcap
	# --immediate-mode: without it libpcap hands frames over a ring block
	# at a time, up to its 1 s timeout late, and cap_check's "stopped
	# growing" would stop tcpdump before the last block (a lost REQ's
	# resend and all that followed went missing so).
	tcpdump -i "$RIG_VETH_BR" -s 0 -U --immediate-mode -w "$CAP" 'arp or udp port 4791' \
		>"$TMP/$1.tcpdump" 2>&1 &
	TCPDUMP=$!
	local i
	for i in $(seq 50); do grep -q listening "$TMP/$1.tcpdump" && break; sleep 0.1; done
}
# cap_check MIN_ROCE: stop the capture; tshark decodes every frame (RoCE or
# ARP, nothing malformed), at least MIN_ROCE RoCE frames, every ICRC valid.
cap_check() {
	local min=$1 total roce other bad res size last=-1 same=0 i
	# tcpdump may still lag behind a busy machine: stop it once the file
	# has stopped growing (SIGINT makes it drop what it has not read)
	for i in $(seq 100); do
		size=$(stat -c %s "$CAP" 2>/dev/null || echo 0)
		if [ "$size" = "$last" ]; then
			same=$((same + 1))
			[ $same -ge 3 ] && break
		else
			same=0 last=$size
		fi
		sleep 0.2
	done
	kill -INT "$TCPDUMP" 2>/dev/null
	wait "$TCPDUMP" 2>/dev/null
	TCPDUMP=
	local ts=(tshark -r "$CAP" --disable-protocol rpcordma -T fields -e frame.number)
	total=$("${ts[@]}" 2>/dev/null | wc -l)
	roce=$("${ts[@]}" -Y infiniband 2>/dev/null | wc -l)
	other=$("${ts[@]}" -Y '!(infiniband || arp)' 2>/dev/null | wc -l)
	bad=$("${ts[@]}" -Y '_ws.malformed || _ws.expert.severity >= 8388608' 2>/dev/null | wc -l)
	local flows bad_icrc
	flows=$(python3 "$HERE/roce_flows.py" "$CAP" "$RIG_DRNIC_MAC=drnic" "$RIG_VM_MAC=rxe")
	if [ -r "$CHECKER" ]; then
		res=$(python3 "$CHECKER" "$CAP" 2>&1 | grep -o "{'rocev2.*}" | head -1)
	else
		res="(no $CHECKER)"
	fi
	echo "  capture $(basename "$CAP"): $total frames, $roce RoCE, $other undecoded, $bad malformed; ICRC $res"
	echo "$flows" | sed 's/^/    /'
	[ "$total" -gt 0 ] && [ "$other" = 0 ] && [ "$bad" = 0 ] && [ "$roce" -ge "$min" ] ||
		fail "capture $CAP: $total frames, $roce RoCE (>= $min?), $other undecoded, $bad malformed"
	bad_icrc=$(echo "$flows" | sed -n 's/.* icrc_bad=\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
	[ "$bad_icrc" = 0 ] && [ "$(echo "$flows" | sed -n 's/.* icrc_ok=\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')" = "$roce" ] ||
		fail "capture $CAP: $bad_icrc bad ICRCs (roce_flows.py), tshark RoCE $roce"
	if [ -r "$CHECKER" ]; then
		python3 -c "import ast,sys; d=ast.literal_eval(sys.argv[1]); sys.exit(0 if d.get('rocev2',0)==$roce and d.get('icrc_ok',0)==$roce and not d.get('icrc_bad') else 1)" "$res" ||
			fail "capture $CAP: not every ICRC valid ($res, tshark RoCE $roce)"
	fi
}
retrans_of() { # WHO: retransmitted requests of drnic|rxe in the last capture
	python3 "$HERE/roce_flows.py" "$CAP" "$RIG_DRNIC_MAC=drnic" "$RIG_VM_MAC=rxe" |
		sed -n "s/^$1 .*retrans=\([0-9]*\).*/\1/p"
}

case_begin() { CASE=$1; CASE_OK=1; CASE_T=$SECONDS; echo "=== $1"; }
case_end() {
	local r=PASS
	[ $CASE_OK = 1 ] || r=FAIL
	SUMMARY+=("$(printf '%-10s %s (%d s)' "$CASE" "$r" $((SECONDS - CASE_T)))")
}

# ------------------------------------------------------------ cases
case_pingpong() {
	case_begin pingpong
	local m s n name
	vm "ip neigh flush dev eth0 to $RIG_DRNIC_IP" 2>/dev/null
	cap_start pingpong
	local runs=0
	for m in 1024 4096; do
		for s in 1024 4096 65536; do
			n=50; [ $s = 65536 ] && n=10
			name=pp.m$m.s$s
			# rxe serves, drnic is the client and checks every echoed byte
			pair "$name.rxe-srv" vm "ibv_rc_pingpong -d rxe0 -g 1 -m $m -s $s -n $n -p @PORT@" \
				drnic_pp "$TMP/$name.rxe-srv.host" -g 0 -m $m -s $s -n $n -c &&
			grep -q "data check: $n messages of $s bytes verified" "$TMP/$name.rxe-srv.host" &&
			grep -q "^$n iters in" "$TMP/$name.rxe-srv.vm" ||
				fail "$name.rxe-srv: no '$n iters' / drnic data check"
			# drnic serves, rxe is the client
			pair "$name.drnic-srv" host "ibv_rc_pingpong -d rxe0 -g 1 -m $m -s $s -n $n -p @PORT@" \
				drnic_pp "$TMP/$name.drnic-srv.host" -g 0 -m $m -s $s -n $n &&
			grep -q "^$n iters in" "$TMP/$name.drnic-srv.vm" &&
			grep -q "^$n iters in" "$TMP/$name.drnic-srv.host" ||
				fail "$name.drnic-srv: no '$n iters' line on both sides"
			runs=$((runs + 1))
		done
	done
	grep -h "usec/iter" "$TMP"/pp.m*.rxe-srv.host | head -1 | sed 's/^/  e.g. drnic client: /'
	# ARP: the VM's kernel resolved drnic's address (no static entry), and
	# drnic resolved the VM's (its request and the VM's reply are captured).
	local neigh
	neigh=$(vm "ip neigh show $RIG_DRNIC_IP")
	echo "  VM neighbour entry: $neigh"
	case "$neigh" in
	*"lladdr $RIG_DRNIC_MAC"*) ok "arp: rxe's kernel resolved drnic $RIG_DRNIC_IP to $RIG_DRNIC_MAC" ;;
	*) fail "arp: VM has no entry $RIG_DRNIC_IP -> $RIG_DRNIC_MAC ($neigh)" ;;
	esac
	vm "ip neigh show nud permanent" | grep -q . && fail "arp: static entries in the VM"
	local ts=(tshark -r "$CAP" -T fields -e frame.number)
	local dreq drep vreq vrep
	dreq=$("${ts[@]}" -Y "arp.opcode==1 && arp.src.hw_mac==$RIG_DRNIC_MAC && arp.dst.proto_ipv4==$RIG_VM_IP" 2>/dev/null | wc -l)
	vrep=$("${ts[@]}" -Y "arp.opcode==2 && arp.src.hw_mac==$RIG_VM_MAC && arp.dst.hw_mac==$RIG_DRNIC_MAC" 2>/dev/null | wc -l)
	vreq=$("${ts[@]}" -Y "arp.opcode==1 && arp.src.hw_mac==$RIG_VM_MAC && arp.dst.proto_ipv4==$RIG_DRNIC_IP" 2>/dev/null | wc -l)
	drep=$("${ts[@]}" -Y "arp.opcode==2 && arp.src.hw_mac==$RIG_DRNIC_MAC && arp.src.proto_ipv4==$RIG_DRNIC_IP" 2>/dev/null | wc -l)
	echo "  ARP on the wire: drnic asked for $RIG_VM_IP $dreq x, rxe replied $vrep x; rxe asked for $RIG_DRNIC_IP $vreq x, drnic replied $drep x"
	[ "$dreq" -ge 1 ] && [ "$vrep" -ge 1 ] && ok "arp: drnic resolved rxe's $RIG_VM_IP" ||
		fail "arp: no drnic request / rxe reply for $RIG_VM_IP in the capture"
	# (requests made while no drnic process runs, between the runs, go unanswered)
	[ "$vreq" = 0 ] || [ "$drep" -ge 1 ] || fail "arp: rxe asked $vreq x, drnic never replied"
	cap_check $((runs * 2 * 2 * 10))
	case_end
}

case_ibverbs() {
	case_begin ibverbs
	cap_start ibverbs
	local s m n=50
	for s in 4096 65536; do
		m=1024; [ $s = 65536 ] && m=4096
		[ $s = 65536 ] && n=10
		pair ibv.s$s.rxe-srv vm "ibv_rc_pingpong -d rxe0 -g 1 -m $m -s $s -n $n -c -p @PORT@" \
			ibv "$TMP/ibv.s$s.rxe-srv.host" ibv_rc_pingpong -g 0 -m $m -s $s -n $n -c
		pair ibv.s$s.drnic-srv host "ibv_rc_pingpong -d rxe0 -g 1 -m $m -s $s -n $n -c -p @PORT@" \
			ibv "$TMP/ibv.s$s.drnic-srv.host" ibv_rc_pingpong -g 0 -m $m -s $s -n $n -c
	done
	# UC (SENDs, no ACKs), an SRQ (16 RC QPs on one SRQ each side) and UD
	# (datagrams of 1024 bytes through address handles; one packet each,
	# so no -m).
	local p o
	for p in ibv_uc_pingpong ibv_srq_pingpong ibv_ud_pingpong; do
		o="-m 1024 -s 4096"
		[ $p = ibv_ud_pingpong ] && o="-s 1024"
		pair ibv.$p.rxe-srv vm "$p -d rxe0 -g 1 $o -n 50 -c -p @PORT@" \
			ibv "$TMP/ibv.$p.rxe-srv.host" $p -g 0 $o -n 50 -c
		pair ibv.$p.drnic-srv host "$p -d rxe0 -g 1 $o -n 50 -c -p @PORT@" \
			ibv "$TMP/ibv.$p.drnic-srv.host" $p -g 0 $o -n 50 -c
	done
	local f
	for f in "$TMP"/ibv.*.vm "$TMP"/ibv.*.host; do
		grep -q "iters in" "$f" || fail "$(basename "$f"): no 'iters' line"
		grep -q "invalid data" "$f" && fail "$(basename "$f"): $(grep -m1 'invalid data' "$f")"
	done
	[ $CASE_OK = 1 ] && ok "ibv_rc_pingpong, ibv_uc_pingpong, ibv_srq_pingpong and ibv_ud_pingpong -c on" \
		"drnic's libibverbs <-> rxe: both roles, no invalid data"
	cap_check 40
	case_end
}

case_perftest() {
	case_begin perftest
	cap_start perftest
	local p line
	# perftest sets the requester's max_rd_atomic to the PEER's outstanding
	# reads: rxe offers 128, drnic's limit (max_qp_rd_atom) is 16, so the
	# rxe side is told -o 16 (a ConnectX would refuse 128 as well).
	for p in ib_write_lat ib_write_bw ib_send_lat ib_read_lat; do
		local o=
		[ $p = ib_read_lat ] && o="-o 16"
		pair "perf.$p" vm "$p -d rxe0 -x 1 -n 50 $o -p @PORT@" \
			ibv "$TMP/perf.$p.host" "$p" -x 0 -n 50 || continue
		line=$(grep -A1 '#bytes' "$TMP/perf.$p.host" | tail -1)
		echo "  $p (drnic client): $line"
		[ -n "$line" ] || fail "perf.$p: no result line on the drnic side"
	done
	cap_check 200
	case_end
}

case_recovery() {
	case_begin recovery
	local r
	# 1. drnic's injector drops 20% of what drnic sends: its requests
	#    (drnic retransmits) and its ACKs / READ and atomic responses (rxe
	#    retransmits; drnic answers the duplicates, replaying READ and atomic
	#    responses).
	cap_start recovery.drnic-drop
	verbs_run rec.drnic-drop 3 ",fault_drop=0.2,fault_seed=11"
	cap_check 150
	r=$(retrans_of drnic)
	[ "${r:-0}" -ge 1 ] && ok "drnic retransmitted $r request packets its injector lost" ||
		fail "rec.drnic-drop: no drnic retransmission in the capture"
	r=$(retrans_of rxe)
	[ "${r:-0}" -ge 1 ] && ok "rxe retransmitted $r request packets (drnic's answers lost)" ||
		fail "rec.drnic-drop: no rxe retransmission in the capture"
	# 2. drnic loses 1 in 8 of the frames it receives (its own injector,
	#    fault_dir=rx; the capture on the bridge still shows them): rxe
	#    retransmits its lost requests, drnic its requests whose answers
	#    were lost.
	cap_start recovery.rxe-lost
	verbs_run rec.rxe-lost 3 ",fault_dir=rx,fault_drop=0.125,fault_seed=13"
	local fl
	fl=$(grep -m1 '^drnic faults:' "$TMP/rec.rxe-lost.host")
	echo "  $fl"
	r=$(sed -n 's/.*rx dropped \([0-9]*\).*/\1/p' <<<"$fl")
	[ "${r:-0}" -ge 1 ] && ok "drnic's receive injector dropped $r frames" ||
		fail "rec.rxe-lost: drnic's receive injector dropped nothing ($fl)"
	case "$fl" in
	*"tx dropped 0,"*) ;;
	*) fail "rec.rxe-lost: transmit faults with fault_dir=rx ($fl)" ;;
	esac
	cap_check 150
	r=$(retrans_of rxe)
	[ "${r:-0}" -ge 1 ] && ok "rxe retransmitted $r request packets drnic lost" ||
		fail "rec.rxe-lost: no rxe retransmission in the capture"
	r=$(retrans_of drnic)
	[ "${r:-0}" -ge 1 ] && ok "drnic retransmitted $r request packets (rxe's answers lost)" ||
		fail "rec.rxe-lost: no drnic retransmission in the capture"
	case_end
}

# verbs_run NAME ROUNDS [LINK_EXTRA]: the verbs peers (verbs_peer.h), drnic
# on the host, rxe in the VM; both must pass every step.
verbs_run() {
	local name=$1 rounds=$2 extra=${3:-} spid rs rc
	vm_put "$VVM" /tmp/verbs_peer || fail "cannot copy $VVM into the VM"
	PORT=$((PORT + 1))
	timeout 150 "$VHOST" --port $PORT --ip "$RIG_DRNIC_IP" --link "$LINK$extra" \
		--mtu "$RIG_MTU" --mac "$RIG_DRNIC_MAC" --prefix "dint$$" --rounds "$rounds" \
		>"$TMP/$name.host" 2>&1 &
	spid=$!
	host_listening $PORT || fail "$name: drnic side not listening"
	if [ "$name" = verbs ]; then
		# ARP while drnic waits: a broadcast request, then unicast ones (as
		# the kernel's neighbour probes are), each answered by drnic.
		vm "arping -c 3 -w 20 -I eth0 $RIG_DRNIC_IP" >"$TMP/arping.log" 2>&1
		grep -q "Received 3 response" "$TMP/arping.log" &&
			ok "arp: drnic answered broadcast and unicast requests ($(grep -c 'Unicast reply' "$TMP/arping.log") replies)" ||
			{ fail "arp: arping from the VM"; sed 's/^/    /' "$TMP/arping.log"; }
	fi
	vm "timeout 150 /tmp/verbs_peer -d rxe0 -g 1 -r $rounds -p $PORT $RIG_HOST_IP" >"$TMP/$name.vm" 2>&1
	rc=$?
	wait $spid
	rs=$?
	echo "  $name: drnic exit $rs, rxe exit $rc; $(grep -c ' ok' "$TMP/$name.vm") checks ok on the rxe side, $(grep -c ' ok' "$TMP/$name.host") on drnic's"
	if [ $rs != 0 ] || [ $rc != 0 ] || grep -q FAIL "$TMP/$name.vm" "$TMP/$name.host"; then
		fail "$name: exit drnic $rs rxe $rc"
		grep -h FAIL "$TMP/$name.vm" "$TMP/$name.host" | head -5 | sed 's/^/    /'
		return 1
	fi
	return 0
}

case_verbs() {
	case_begin verbs
	cap_start verbs
	verbs_run verbs 1 && sed 's/^/    rxe| /' "$TMP/verbs.vm"
	local ureq urep
	ureq=$(tshark -r "$CAP" -Y "arp.opcode==1 && eth.dst==$RIG_DRNIC_MAC" 2>/dev/null | wc -l)
	urep=$(tshark -r "$CAP" -Y "arp.opcode==2 && eth.src==$RIG_DRNIC_MAC && arp.dst.hw_mac==$RIG_VM_MAC" 2>/dev/null | wc -l)
	echo "  ARP: $ureq unicast requests to drnic, $urep replies from drnic"
	[ "$ureq" -ge 1 ] && [ "$urep" -ge 3 ] || fail "arp: unicast requests $ureq, drnic replies $urep"
	cap_check 60
	case_end
}

# UD and UC (uxd_peer.c, one libibverbs program for both sides): UD
# datagrams both ways with every WC field and the GRH area checked on each
# side, UC SEND_WITH_IMM and WRITE_WITH_IMM both ways; then drnic's injector
# loses exactly one packet of UC message 1, on its way out and on its way in,
# and the receiver must miss exactly that message, every other one exact.
case_uxd() {
	case_begin uxd
	cap_start uxd
	local m
	vm_put "$UXD" /tmp/uxd_peer || fail "cannot copy $UXD into the VM"
	for m in ud uc; do
		pair uxd.$m.rxe-srv vm "/tmp/uxd_peer -m $m -d rxe0 -g 1 -p @PORT@" \
			ibv "$TMP/uxd.$m.rxe-srv.host" "$UXD" -m $m -g 0
		pair uxd.$m.drnic-srv host "/tmp/uxd_peer -m $m -d rxe0 -g 1 -p @PORT@" \
			ibv "$TMP/uxd.$m.drnic-srv.host" "$UXD" -m $m -g 0
	done
	# drnic sends, its injector loses the 4th RoCE frame (the FIRST of UC
	# message 1, a WRITE): rxe must miss exactly message 1. (rxe of Linux
	# 6.1 loses every later message too when a MIDDLE is lost instead: its
	# UC responder keeps the cut message's opcode and refuses each FIRST
	# after it; noted in the design notes.)
	sed "s|^link_args = .*|&,fault_drop_nth=4|" "$TMP/drnic.ini" >"$TMP/drnic-lossy.ini"
	pair uxd.uc.lost-tx vm "/tmp/uxd_peer -m uc -d rxe0 -g 1 -x 1 -p @PORT@" \
		ibv_lossy "$TMP/uxd.uc.lost-tx.host" "$UXD" -m uc -g 0
	# rxe sends, drnic's receive injector loses the 5th RoCE frame (a MIDDLE
	# of message 1): drnic must drop exactly message 1 and take the rest.
	sed "s|^link_args = .*|&,fault_dir=rx,fault_drop_nth=5|" "$TMP/drnic.ini" >"$TMP/drnic-lossy.ini"
	pair uxd.uc.lost-rx vm "/tmp/uxd_peer -m uc -d rxe0 -g 1 -p @PORT@" \
		ibv_lossy "$TMP/uxd.uc.lost-rx.host" "$UXD" -m uc -g 0 -x 1
	local f
	for f in "$TMP"/uxd.*.vm "$TMP"/uxd.*.host; do
		grep -q "side: PASS" "$f" || fail "$(basename "$f"): $(grep -m1 'FAIL\|BAD\|failed' "$f")"
	done
	grep -q "missing: 1 (expected 1 missing)" "$TMP/uxd.uc.lost-tx.vm" ||
		fail "uxd.uc.lost-tx: rxe did not miss exactly message 1: $(grep recv "$TMP/uxd.uc.lost-tx.vm")"
	grep -q "missing: 1 (expected 1 missing)" "$TMP/uxd.uc.lost-rx.host" ||
		fail "uxd.uc.lost-rx: drnic did not miss exactly message 1: $(grep recv "$TMP/uxd.uc.lost-rx.host")"
	[ $CASE_OK = 1 ] && ok "UD and UC both ways between drnic's libibverbs and rxe (GRH area," \
		"WC fields, bytes); one lost packet lost exactly its UC message, either way"
	cap_check 100
	case_end
}

# The RDMA CM: Debian's rdmacm-utils on drnic's librdmacm.so.1 against the
# same programs on rxe's kernel CM, both roles; then a REQ to a port nobody
# listens on (REJ, reason 8: invalid service ID) and lost CM MADs (drnic's
# injector loses the first RoCE frame out, then the first in: the REQ; the
# side that sent it resends it after its CM response timeout).
vm_cm_listening() { # PORT: the VM's kernel has a listening cm_id there
	local i
	for i in $(seq 60); do
		vm "rdma resource show cm_id" 2>/dev/null | grep -q "LISTEN.*:$1\( \|$\)" && return 0
		sleep 0.5
	done
	return 1
}
host_cm_listening() { # LOG PORT: drnic's librdmacm logged its rdma_listen
	local i
	for i in $(seq 150); do
		grep -q "rdma_listen .*:$2\$" "$1" 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}
# cm_pair NAME SIDE(vm|host) 'SERVER COMMAND' 'CLIENT COMMAND' [LISTEN_PORT]:
# @SRV@ is the server's address, @PORT@ a fresh port; both must exit 0.
cm_pair() {
	local name=$1 side=$2 scmd=$3 ccmd=$4 lport=${5:-} spid rs rc srv
	PORT=$((PORT + 1))
	lport=${lport:-$PORT}
	if [ "$side" = vm ]; then srv=$RIG_VM_IP; else srv=$RIG_DRNIC_IP; fi
	scmd=${scmd//@PORT@/$PORT}; scmd=${scmd//@SRV@/$srv}
	ccmd=${ccmd//@PORT@/$PORT}; ccmd=${ccmd//@SRV@/$srv}
	if [ "$side" = vm ]; then
		vm "timeout 150 $scmd" >"$TMP/$name.vm" 2>&1 &
		spid=$!
		vm_cm_listening "$lport" || fail "$name: no listener in the VM on port $lport"
		ibv_cm "$TMP/$name.host" $ccmd
		rc=$?
	else
		ibv_cm "$TMP/$name.host" $scmd &
		spid=$!
		host_cm_listening "$TMP/$name.host" "$lport" || fail "$name: drnic never listened on $lport"
		vm "timeout 150 $ccmd" >"$TMP/$name.vm" 2>&1
		rc=$?
	fi
	wait $spid
	rs=$?
	echo "  $name: server ($side) exit $rs, client exit $rc"
	if [ $rs != 0 ] || [ $rc != 0 ]; then
		fail "$name: exit server $rs client $rc"
		sed 's/^/    vm| /' "$TMP/$name.vm" | tail -6
		grep -hv '^EAL\|TELEMETRY' "$TMP/$name.host" 2>/dev/null | sed 's/^/    drnic| /' | tail -6
		return 1
	fi
	return 0
}
ibv_cm() { # LOG PROGRAM ARGS...: a Debian RDMA CM program on drnic's drop-ins
	local log=$1
	shift
	DRNIC_CONFIG=${CM_INI:-$TMP/drnic.ini} DRNIC_IBV_DEBUG=1 LD_LIBRARY_PATH=$IBV_DIR \
		timeout 150 "$@" >"$log" 2>&1
}
cm_reqs() { # WHO: CM REQs sent by drnic|rxe in the last capture
	local mac=$RIG_DRNIC_MAC
	[ "$1" = rxe ] && mac=$RIG_VM_MAC
	tshark -r "$CAP" -T fields -e frame.number \
		-Y "eth.src==$mac && infiniband.mad.attributeid==0x0010" 2>/dev/null | wc -l
}

case_cm() {
	case_begin cm
	cap_start cm
	local s c n
	# rping: 100 pings with data validation, both roles
	cm_pair cm.rping.rxe-srv vm "rping -s -a @SRV@ -p @PORT@ -C 100 -V" \
		"rping -c -a @SRV@ -p @PORT@ -C 100 -v -V"
	cm_pair cm.rping.drnic-srv host "rping -s -a @SRV@ -p @PORT@ -C 100 -V" \
		"rping -c -a @SRV@ -p @PORT@ -C 100 -v -V"
	for f in "$TMP/cm.rping.rxe-srv.host" "$TMP/cm.rping.drnic-srv.vm"; do
		n=$(grep -c "^ping data: rdma-ping-" "$f")
		[ "$n" = 100 ] || fail "$(basename "$f"): $n of 100 pings echoed"
	done
	# ucmatose (RC, 2 connections, 10 messages each) and udaddy (UD via SIDR)
	cm_pair cm.ucmatose.rxe-srv vm "ucmatose -p @PORT@ -c 2 -C 10" \
		"ucmatose -s @SRV@ -p @PORT@ -c 2 -C 10"
	cm_pair cm.ucmatose.drnic-srv host "ucmatose -p @PORT@ -c 2 -C 10" \
		"ucmatose -s @SRV@ -p @PORT@ -c 2 -C 10"
	cm_pair cm.udaddy.rxe-srv vm "udaddy -c 2 -C 10" "udaddy -s @SRV@ -c 2 -C 10" 7174
	cm_pair cm.udaddy.drnic-srv host "udaddy -c 2 -C 10" "udaddy -s @SRV@ -c 2 -C 10" 7174
	for f in "$TMP"/cm.ucmatose.* "$TMP"/cm.udaddy.*; do
		grep -q "test complete" "$f" || fail "$(basename "$f"): no 'test complete'"
	done
	# No listener on that port: REJ with reason 8, either way.
	PORT=$((PORT + 1))
	ibv_cm "$TMP/cm.nolisten.host" rping -c -a "$RIG_VM_IP" -p $PORT -C 1
	grep -q "RDMA_CM_EVENT_REJECTED, error 8" "$TMP/cm.nolisten.host" &&
		ok "cm: drnic's REQ to a port rxe does not listen on: REJECTED, reason 8" ||
		fail "cm: no 'REJECTED, error 8' from rxe: $(grep -m1 -i 'event\|error' "$TMP/cm.nolisten.host")"
	# drnic listens on PORT, rxe asks for PORT + 100
	PORT=$((PORT + 1))
	ibv_cm "$TMP/cm.nolisten.drnic.host" rping -s -a "$RIG_DRNIC_IP" -p $PORT -C 1 &
	local spid=$!
	host_cm_listening "$TMP/cm.nolisten.drnic.host" $PORT || fail "cm.nolisten: drnic never listened"
	vm "timeout 60 rping -c -a $RIG_DRNIC_IP -p $((PORT + 100)) -C 1" >"$TMP/cm.nolisten.drnic.vm" 2>&1
	grep -q "RDMA_CM_EVENT_REJECTED, error 8" "$TMP/cm.nolisten.drnic.vm" &&
		ok "cm: rxe's REQ to a port drnic does not listen on: REJECTED, reason 8" ||
		fail "cm: no 'REJECTED, error 8' from drnic: $(grep -m1 -i 'event\|error' "$TMP/cm.nolisten.drnic.vm")"
	pkill -f "rping -s -a $RIG_DRNIC_IP -p $PORT" 2>/dev/null   # it saw no client
	wait $spid 2>/dev/null
	cap_check 40
	# Lost MADs: drnic's first frame out (its REQ), then its first frame in
	# (rxe's REQ) are lost; the sender's CM resends the REQ after its CM
	# response timeout (drnic's own counters say so; rxe's resent REQ is
	# on the wire before drnic's link loses it).
	cap_start cm-lost
	sed "s|^link_args = .*|&,fault_drop_nth=1|" "$TMP/drnic.ini" >"$TMP/drnic-cmlossy.ini"
	CM_INI=$TMP/drnic-cmlossy.ini cm_pair cm.lost-tx vm "rping -s -a @SRV@ -p @PORT@ -C 10 -V" \
		"rping -c -a @SRV@ -p @PORT@ -C 10 -v -V"
	sed "s|^link_args = .*|&,fault_dir=rx,fault_drop_nth=1|" "$TMP/drnic.ini" >"$TMP/drnic-cmlossy.ini"
	CM_INI=$TMP/drnic-cmlossy.ini cm_pair cm.lost-rx host "rping -s -a @SRV@ -p @PORT@ -C 10 -V" \
		"rping -c -a @SRV@ -p @PORT@ -C 10 -v -V"
	cap_check 20
	s=$(sed -n 's/.*drnic rdmacm: .* REQ rx [0-9]* tx \([0-9]*\), retransmits \([0-9]*\).*/\1 \2/p' \
		"$TMP/cm.lost-tx.host")
	c=$(cm_reqs rxe)
	echo "  drnic's REQs sent, retransmits: ${s:-none}; rxe's REQs on the wire: $c"
	[ "${s#* }" = 1 ] && ok "cm: drnic's lost REQ resent once, connected" ||
		fail "cm: drnic's lost REQ: REQs sent and retransmits '${s:-none}' (1 retransmit expected)"
	[ "$c" = 2 ] && ok "cm: rxe's REQ lost in drnic resent once, connected" ||
		fail "cm: rxe's REQ lost in drnic: $c REQs on the wire (2 expected)"
	[ $CASE_OK = 1 ] && ok "rping -V, ucmatose and udaddy both ways between drnic's librdmacm and rxe's CM"
	case_end
}

ibv_lossy() {
	local log=$1
	shift
	DRNIC_CONFIG=$TMP/drnic-lossy.ini LD_LIBRARY_PATH=$IBV_DIR timeout 150 "$@" >"$log" 2>&1
}

for c in $CASES; do
	case $c in
	pingpong|ibverbs|perftest|recovery|verbs|uxd|cm) "case_$c" ;;
	*) echo "FAIL: unknown case $c"; FAIL=1 ;;
	esac
done

echo "=== summary (image ${T_IMAGE} s, boot ${T_BOOT} s, total $((SECONDS - T0)) s)"
printf '  %s\n' "${SUMMARY[@]}"
[ $FAIL = 0 ] && echo PASS || echo FAILED
exit $FAIL
