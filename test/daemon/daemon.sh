#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# drnicd (issue 17) as a user runs it: one daemon on this host, programs
# attached to it with DRNIC_DAEMON, drnic-ctl asking it what it serves.
#
#   daemon.sh DRNICD DRNIC_CTL DRNIC_PINGPONG DRNICD_PROBE [CASE...]
#
# Cases (by default all but dropin, dropkill, cm and twohosts, which meson runs as
# drnicd_verbs in suite ibverbs):
#   ctl       the control tool: devices, counters, an unknown device;
#             telemetry; malformed requests refused
#   objects   the native API through the daemon (drnicd_probe objects): MRs,
#             refusals, two QPs of one process over the engine's loopback
#   pingpong  two drnic-pingpong processes on one device (same GID, their
#             own QPNs): SEND ping-pong and a WRITE run, every byte checked
#   foreign   one process names another's objects (CM ids and channels
#             too): each request refused; both processes' objects freed
#             when they go (one by kill -9), its CM port free again
#   kill      a pair killed with SIGKILL mid-run while a second pair runs to
#             the end with its data verified; nothing left in the daemon
#   stuck     a program killed in the middle of a doorbell (drnicd_probe
#             stuck: a ring slot taken, never published): a pair started
#             afterwards runs to the end, its data verified
#   death     the daemon killed under an attached program: DEVICE_FATAL
#             wakes it, CQ and CM event waits and CQ polls fail with EIO, control calls
#             with EPIPE; nothing hangs
#   term      SIGTERM with a program attached: its objects freed, exit 0,
#             the socket and the hugepage files gone
#   dropin    unmodified verbs programs through drnic's drop-in libibverbs
#             ($DROPIN, a build's lib/ibverbs), no DRNIC_CONFIG: ibv_devices,
#             ibv_rc_pingpong -e -c, perftest's ib_write_bw, ib_read_lat,
#             ib_write_lat, qperf rc_lat, rc_rdma_write_lat and
#             rc_rdma_write_poll_lat,
#             ib_send_lat -e, ib_atomic_bw, ib_send_bw --use-srq, UD
#             ib_send_lat -e, UC ib_write_bw, ibv_xsrq_pingpong (XRC),
#             ucx_perftest over ud_verbs, four
#             ib_write_bw pairs at once
#   cm        the RDMA CM through the daemon (drop-in librdmacm, $DROPIN):
#             rping -V, ucmatose (10 connections), udaddy (SIDR),
#             rdma_server/rdma_client, cmtime, mckey, ib_write_bw -R; both
#             ends of each pair on the daemon's one device and port space
#   apicheck  test/ibverbs/ibv_api_check ($API_CHECK: verbs misuse, events,
#             ODP advice, XRC, two contexts) attached to a daemon of its own
#             with an IPv6 GID
#   dropkill  an ib_write_bw client killed with SIGKILL mid-run while an
#             ibv_rc_pingpong -c pair runs to the end
#   twohosts  two network namespaces joined by a veth pair, one daemon in
#             each on an af_packet link: ibv_rc_pingpong -e -c and
#             ib_write_bw between the namespaces' programs (the two daemons'
#             engines share CPU 1); two programs on A's daemon (its link's
#             hairpin: frames to its own MAC)
#
# Needs root and free hugepages (devtools/setup.sh hugepages); fails, never
# skips, without them. The engine runs on lcore 1 (the default
# configuration), the programs on CPU 0: on a 2-CPU machine two programs
# that both spin share CPU 0, so a ping-pong hand-off costs a scheduler time
# slice (milliseconds); these cases check what arrives, never how fast.
set -u

DRNICD=$(realpath "$1")
CTL=$(realpath "$2")
PP=$(realpath "$3")
PROBE=$(realpath "$4")
shift 4
CASES=${*:-ctl objects pingpong foreign kill stuck death term}
DROPIN=${DROPIN:-}

W=$(mktemp -d /tmp/drnicd-test.XXXXXX)
PREFIX=drnicdtest$$
SOCK=$W/drnicd.sock
FAILS=0
PIDS=()

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -f /dev/hugepages/${PREFIX}*map_* 2>/dev/null
	rm -rf /var/run/dpdk/${PREFIX}* 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT

. "$(dirname "$0")/common.sh"

if [ "$(id -u)" != 0 ]; then
	say "FAIL: needs root (hugepages shared between processes)"
	exit 1
fi

# ctl_has PATTERN: drnic-ctl list of the main daemon matches (grep -E).
ctl_has() { "$CTL" -s "$SOCK" list | grep -Eq "$1"; }

# Idle: no process attached; the device holds only its GSI agent's QP 1,
# with that QP's PD and MR (the connection manager's, in the daemon).
ctl_idle() {
	ctl_has 'device drnic0: engines 1, qp 1, mr 1, pd 1, link up' &&
		! ctl_has '^process '
}

counter() {   # counter NAME: the daemon's counter of that name
	"$CTL" -s "$SOCK" list | sed -n "s/.*[:,] $1 \([0-9]*\).*/\1/p"
}

case_ctl() {
	local out
	out=$("$CTL" -s "$SOCK" list) || fail "drnic-ctl list"
	grep -q "^drnicd pid $DPID, socket $SOCK, EAL prefix $PREFIX" <<<"$out" ||
		fail "drnic-ctl list: no daemon line: $out"
	grep -q 'device drnic0: engines 1, qp 1, mr 1, pd 1, link up' <<<"$out" ||
		fail "drnic-ctl list: no idle drnic0: $out"
	out=$("$CTL" -s "$SOCK" stats drnic0) || fail "drnic-ctl stats drnic0"
	grep -q '^stats drnic0 engine 0: loops' <<<"$out" || fail "drnic-ctl stats: $out"
	if out=$("$CTL" -s "$SOCK" stats nosuch 2>&1); then
		fail "drnic-ctl stats nosuch succeeded"
	fi
	grep -q 'no such device: nosuch' <<<"$out" || fail "drnic-ctl stats nosuch said: $out"
	if out=$("$CTL" -s "$W/none.sock" list 2>&1); then
		fail "drnic-ctl without a daemon succeeded"
	fi
	grep -q "$W/none.sock: No such file or directory" <<<"$out" ||
		fail "drnic-ctl without a daemon said: $out"
	# The same through DPDK telemetry (the daemon's file prefix).
	out=$(python3 - "/var/run/dpdk/$PREFIX/dpdk_telemetry.v2" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
json.loads(s.recv(16384))
for cmd in ("/drnicd/counters", "/drnicd/processes"):
    s.send(cmd.encode())
    print(json.dumps(json.loads(s.recv(65536))))
PY
	) || fail "telemetry: $out"
	grep -q '"/drnicd/counters": {"attached": [0-9]*, "detached_clean"' <<<"$out" ||
		fail "telemetry /drnicd/counters: $out"
	grep -q '"/drnicd/processes": {' <<<"$out" || fail "telemetry /drnicd/processes: $out"
	say "  telemetry: $(head -1 <<<"$out" | cut -c1-120)..."
	# Malformed requests: a short packet and an oversized one each close
	# their connection; the daemon serves on.
	out=$(python3 - "$SOCK" <<'PY'
import socket, sys
for size in (10, 70000):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 18)
    s.send(b"\xff" * size)
    s.settimeout(10)
    print("closed" if s.recv(100000) == b"" else "answered")
PY
	)
	[ "$(tr '\n' ' ' <<<"$out")" = "closed closed " ] || fail "malformed requests: $out"
	grep -q 'malformed request (10 bytes)' "$W/drnicd.log" || fail "no log of the malformed request"
	"$CTL" -s "$SOCK" list >/dev/null || fail "the daemon stopped serving after malformed requests"
}

case_objects() {
	local out
	out=$(DRNIC_DAEMON=$SOCK taskset -c 0 "$PROBE" objects 2>&1)
	local rc=$?
	grep -E '^(ok|FAIL):' <<<"$out" | sed 's/^/  /'
	[ $rc = 0 ] && grep -q 'probe: all ok' <<<"$out" || fail "probe objects (exit $rc): $out"
	wait_for ctl_idle || fail "objects: the daemon still holds something: $("$CTL" -s "$SOCK" list)"
}

# pair NAME PORT ARGS...: a drnic-pingpong server and client, both attached.
pair() {
	local name=$1 port=$2
	shift 2
	DRNIC_DAEMON=$SOCK taskset -c 0 "$PP" -p "$port" --timeout 120 "$@" >"$W/$name.server" 2>&1 &
	local spid=$!
	PIDS+=("$spid")
	wait_for listening "$port" || fail "$name: the server does not listen"
	DRNIC_DAEMON=$SOCK taskset -c 0 "$PP" -p "$port" --timeout 120 "$@" 127.0.0.1 \
		>"$W/$name.client" 2>&1
	pair_end "$name" "$name" "$spid" $?
}

case_pingpong() {
	local f
	if pair pp 18611 -n 200 -s 4096 -c --format drnic; then
		for f in "$W/pp.server" "$W/pp.client"; do
			grep -q 'data check: 200 messages of 4096 bytes verified' "$f" ||
				fail "pingpong: $(basename "$f") did not verify: $(cat "$f")"
		done
		say "  pingpong: 200 x 4096 B each way, verified on both sides"
		grep -q 'GID ::ffff:10.0.0.1' "$W/pp.client" || fail "pingpong: not the daemon's GID"
	fi
	# Sleeping on completion events (a channel's eventfd, passed to each
	# program by the daemon, written by its engine): no spinner on CPU 0.
	if pair ppe 18613 -n 500 -s 64 -e -c --format drnic; then
		grep -q 'data check: 500 messages of 64 bytes verified' "$W/ppe.client" ||
			fail "pingpong -e: did not verify: $(cat "$W/ppe.client")"
		say "  pingpong -e: 500 x 64 B, $(grep -o 'median [0-9.]* usec/iter' "$W/ppe.client")"
	fi
	if pair wbw 18612 -w -n 2000 -s 8192 --window 32; then
		grep -Eq 'verified|data check' "$W/wbw.server" ||
			fail "write run: server did not check: $(cat "$W/wbw.server")"
		say "  write run: $(grep -E 'verified|data check' "$W/wbw.server" | head -1)"
	fi
	wait_for ctl_idle || fail "pingpong: the daemon still holds something: $("$CTL" -s "$SOCK" list)"
}

need_dropin() {
	if [ -z "$DROPIN" ] || [ ! -e "$DROPIN/libibverbs.so.1" ]; then
		fail "no drop-in libibverbs (DROPIN=$DROPIN)"
		return 1
	fi
	local p
	for p in ibv_devices ibv_rc_pingpong ibv_xsrq_pingpong ib_write_bw ib_read_lat \
		ib_send_lat ib_atomic_bw ib_send_bw ib_write_lat qperf; do
		command -v "$p" >/dev/null || { fail "$p is not installed (ibverbs-utils, perftest)"; return 1; }
	done
}

# qperf's RC latencies, server and client on the daemon's device, path MTU
# 1024 (the default link's; qperf asks for 2048, which RTR refuses) (its AVs
# have no GRH: [ibverbs] peer_ipv4 names the daemon's own address).
dropin_qperf() {
	local qpid t out
	printf '[ibverbs]\npeer_ipv4 = 10.0.0.1\n' >"$W/qperf.ini"
	env LD_LIBRARY_PATH="$DROPIN" DRNIC_DAEMON="$SOCK" DRNIC_CONFIG="$W/qperf.ini" \
		taskset -c 0 timeout 120 qperf -lp 18628 >"$W/qperf.server" 2>&1 &
	qpid=$!
	PIDS+=("$qpid")
	wait_for listening 18628 || fail "qperf: no server"
	for t in rc_lat rc_rdma_write_lat rc_rdma_write_poll_lat; do
		out=$(env LD_LIBRARY_PATH="$DROPIN" DRNIC_DAEMON="$SOCK" DRNIC_CONFIG="$W/qperf.ini" \
			taskset -c 0 timeout 60 qperf -lp 18628 -t 1 -mt 1024 127.0.0.1 "$t" 2>&1)
		if grep -qE 'latency += +[0-9.]+ [mu]?s' <<<"$out"; then
			say "  qperf $t: $(grep -E 'latency +=' <<<"$out" | tr -s ' ')"
		else
			fail "qperf $t: $(tail -3 <<<"$out" | tr '\n' ' ')"
		fi
	done
	kill "$qpid" 2>/dev/null
	wait "$qpid" 2>/dev/null
}

case_dropin() {
	local out i
	need_dropin || return
	out=$(env -u DRNIC_CONFIG LD_LIBRARY_PATH="$DROPIN" DRNIC_DAEMON="$SOCK" ibv_devices 2>&1)
	grep -q 'drnic0' <<<"$out" || fail "ibv_devices does not list the daemon's drnic0: $out"
	if vpair rcpp 18631 ibv_rc_pingpong -g 0 -n 500 -e -c; then
		grep -q '500 iters in' "$W/rcpp.client" ||
			fail "ibv_rc_pingpong: $(cat "$W/rcpp.client")"
		say "  ibv_rc_pingpong -e -c: $(grep 'iters in' "$W/rcpp.client")"
	fi
	# perftest: the side that waits sleeps (on TCP or on CQ events), so the
	# two programs do not both spin on CPU 0.
	vpair wbw 18632 ib_write_bw -d drnic0 -x 0 -n 2000 &&
		say "  ib_write_bw 64 KiB: $(pt_result "$W/wbw.client")"
	vpair rlat 18633 ib_read_lat -d drnic0 -x 0 -n 500 &&
		say "  ib_read_lat 2 B: $(pt_result "$W/rlat.client")"
	# Both sides spin on CPU 0 here: a scheduler slice per hand-off.
	vpair wlat 18629 ib_write_lat -d drnic0 -x 0 -n 100 &&
		say "  ib_write_lat 2 B: $(pt_result "$W/wlat.client")"
	dropin_qperf
	vpair slat 18634 ib_send_lat -d drnic0 -x 0 -n 300 -e &&
		say "  ib_send_lat -e 2 B: $(pt_result "$W/slat.client")"
	vpair abw 18635 ib_atomic_bw -d drnic0 -x 0 -n 1000 &&
		say "  ib_atomic_bw: $(pt_result "$W/abw.client")"
	vpair srq 18636 ib_send_bw -d drnic0 -x 0 -n 2000 --use-srq &&
		say "  ib_send_bw --use-srq: $(pt_result "$W/srq.client")"
	vpair ud 18637 ib_send_lat -d drnic0 -x 0 -n 300 -c UD -e &&
		say "  ib_send_lat -c UD -e: $(pt_result "$W/ud.client")"
	vpair uc 18638 ib_write_bw -d drnic0 -x 0 -n 2000 -c UC &&
		say "  ib_write_bw -c UC: $(pt_result "$W/uc.client")"
	vpair xrc 18630 ibv_xsrq_pingpong -g 0 -n 200 &&
		say "  ibv_xsrq_pingpong: $(grep -c success "$W/xrc.client") x success"
	# UCX over UD (its rc_verbs finds no route: a loopback-link device has
	# no netdev behind its GID for UCX to ask, daemon or not).
	if command -v ucx_perftest >/dev/null; then
		vpair ucx 18639 env UCX_TLS=ud_verbs,self UCX_NET_DEVICES=drnic0:1 \
			ucx_perftest -t tag_bw -n 2000 -s 4096 &&
			say "  ucx_perftest tag_bw over ud_verbs: $(grep '^Final:' "$W/ucx.client" | tr -s ' ')"
	fi
	local four=()
	for i in 1 2 3 4; do
		vpair "wbw4.$i" $((18640 + i)) ib_write_bw -d drnic0 -x 0 -n 1000 -s 8192 &
		four+=($!)
	done
	wait_for ctl_has 'device drnic0: engines 1, qp 9,' ||
		say "  (the four pairs were never all connected at once)"
	wait "${four[@]}"
	for i in 1 2 3 4; do
		[ -n "$(pt_result "$W/wbw4.$i.client")" ] || fail "ib_write_bw pair $i: no result"
	done
	say "  four ib_write_bw pairs at once: $(for i in 1 2 3 4; do pt_result "$W/wbw4.$i.client" | cut -d' ' -f5; done | tr '\n' ' ')MB/s average each"
	wait_for ctl_idle || fail "dropin: the daemon still holds something: $("$CTL" -s "$SOCK" list)"
}

case_dropkill() {
	local kpid kspid before
	need_dropin || return
	before=$(counter 'reclaimed processes')
	# (No timeout(1) in front: SIGKILL must reach ib_write_bw itself; -D
	# bounds its run.)
	env -u DRNIC_CONFIG LD_LIBRARY_PATH="$DROPIN" DRNIC_DAEMON="$SOCK" taskset -c 0 \
		ib_write_bw -d drnic0 -x 0 -D 60 -p 18651 >"$W/kbw.server" 2>&1 &
	kspid=$!
	PIDS+=("$kspid")
	wait_for listening 18651 || fail "dropkill: ib_write_bw server does not listen"
	env -u DRNIC_CONFIG LD_LIBRARY_PATH="$DROPIN" DRNIC_DAEMON="$SOCK" taskset -c 0 \
		ib_write_bw -d drnic0 -x 0 -D 60 -p 18651 127.0.0.1 >"$W/kbw.client" 2>&1 &
	kpid=$!
	PIDS+=("$kpid")
	wait_for ctl_has 'device drnic0: engines 1, qp 3,' || fail "dropkill: ib_write_bw did not connect"
	# Long enough (about 2 s) to be running when the other pair is killed.
	(vpair kpp 18652 ibv_rc_pingpong -g 0 -n 20000 -e -c && echo ok >"$W/kpp.ok") &
	local ppid=$!
	wait_for ctl_has 'device drnic0: engines 1, qp 5,' || fail "dropkill: ibv_rc_pingpong did not connect"
	[ -e "$W/kpp.ok" ] && fail "dropkill: ibv_rc_pingpong ended before the kill"
	kill -9 "$kpid"
	wait "$kpid" 2>/dev/null
	kill -9 "$kspid" 2>/dev/null   # (it may have ended with its client)
	wait "$kspid" 2>/dev/null
	wait "$ppid"
	if [ -f "$W/kpp.ok" ] && grep -q '20000 iters in' "$W/kpp.client"; then
		say "  ibv_rc_pingpong -c ran to the end: $(grep 'iters in' "$W/kpp.client")"
	else
		fail "dropkill: ibv_rc_pingpong did not finish"
	fi
	wait_for ctl_idle || fail "dropkill: the daemon still holds something: $("$CTL" -s "$SOCK" list)"
	local after
	after=$(counter 'reclaimed processes')
	[ "$after" -ge $((before + 2)) ] ||
		fail "dropkill: reclaimed processes $before -> $after, expected both ib_write_bw"
	say "  reclaimed processes: $before -> $after"
}

case_twohosts() {
	need_dropin || return
	local NA=drnicdA$$ NB=drnicdB$$ VA=dva$$ VB=dvb$$ s
	skip() { fail "twohosts: $*"; return 1; }
	. "$(dirname "$0")/../common/netns.sh"
	TMP=$W netns_pair "$NA" "$VA" 10.233.0.1 "$NB" "$VB" 10.233.0.2 || return
	for s in A:$NA:$VA:10.233.0.11:02:00:00:33:00:11 B:$NB:$VB:10.233.0.12:02:00:00:33:00:12; do
		local side=${s%%:*} rest=${s#*:}
		local ns=${rest%%:*}; rest=${rest#*:}
		local ifc=${rest%%:*}; rest=${rest#*:}
		local ip=${rest%%:*} mac=${rest#*:}
		ip netns exec "$ns" "$DRNICD" -s "$W/$side.sock" --file-prefix "${PREFIX}$side" -m 256 \
			--set link=ethdev --set "link_args=dev=net_af_packet0,iface=$ifc,blocksz=65536,framesz=8192" \
			--set "ipv4=$ip" --set "mac=$mac" --set mtu=9000 >"$W/$side.log" 2>&1 &
		PIDS+=($!)
		eval "D$side=$!"
		wait_for "$CTL" -s "$W/$side.sock" list ||
			{ fail "twohosts: drnicd $side did not start: $(cat "$W/$side.log")"; return; }
	done
	# hpair NAME PORT PROG ARGS...: server in A, client in B (A's address);
	# with CNS=A the client is in A too (A's own address: one daemon,
	# two programs, on its af_packet link).
	hpair() {
		local name=$1 port=$2 cns=$NB csock=$W/B.sock
		[ "${CNS:-}" = A ] && cns=$NA csock=$W/A.sock
		shift 2
		ip netns exec "$NA" env -u DRNIC_CONFIG LD_LIBRARY_PATH="$DROPIN" \
			DRNIC_DAEMON="$W/A.sock" taskset -c 0 timeout 120 "$@" -p "$port" \
			>"$W/$name.server" 2>&1 &
		local spid=$!
		netns_wait_listen "$NA" "$port" || fail "$name: no server"
		ip netns exec "$cns" env -u DRNIC_CONFIG LD_LIBRARY_PATH="$DROPIN" \
			DRNIC_DAEMON="$csock" taskset -c 0 timeout 120 "$@" -p "$port" 10.233.0.1 \
			>"$W/$name.client" 2>&1
		pair_end "$name ($*)" "$name" "$spid" $?
	}
	hpair hrc 18661 ibv_rc_pingpong -g 0 -n 300 -e -c &&
		say "  ibv_rc_pingpong -e -c between the namespaces: $(grep 'iters in' "$W/hrc.client")"
	hpair hbw 18662 ib_write_bw -d drnic0 -x 0 -n 2000 &&
		say "  ib_write_bw between the namespaces: $(pt_result "$W/hbw.client")"
	grep -q 'GID ::ffff:10.233.0.11' "$W/hrc.client" || fail "twohosts: not A's GID: $(cat "$W/hrc.client")"
	# Two programs on A's daemon: frames to its own MAC go through the
	# link's hairpin, not the wire.
	local before after
	before=$("$CTL" -s "$W/A.sock" stats | sed -n 's/.* link: tx \([0-9]*\) .*/\1/p')
	CNS=A hpair hlo 18663 ibv_rc_pingpong -g 0 -n 300 -e -c &&
		say "  ibv_rc_pingpong -e -c, both on A's daemon: $(grep 'iters in' "$W/hlo.client")"
	CNS=A hpair hlobw 18664 ib_write_bw -d drnic0 -x 0 -n 2000 &&
		say "  ib_write_bw, both on A's daemon: $(pt_result "$W/hlobw.client")"
	grep -q 'remote address: .*GID ::ffff:10.233.0.11' "$W/hlo.client" ||
		fail "twohosts: A to A not on A's GID: $(cat "$W/hlo.client")"
	after=$("$CTL" -s "$W/A.sock" stats | sed -n 's/.* link: tx \([0-9]*\) .*/\1/p')
	[ "$after" -gt $((before + 2600)) ] || fail "twohosts: A's link counted $before -> $after frames"
	"$CTL" -s "$W/A.sock" stats | grep -E 'link' | sed 's/^/  A| /'
	kill -TERM "$DA" "$DB"
	wait "$DA" || fail "twohosts: drnicd A exit $?"
	wait "$DB" || fail "twohosts: drnicd B exit $?"
	rm -f /dev/hugepages/${PREFIX}Amap_* /dev/hugepages/${PREFIX}Bmap_*
	netns_teardown "$NA" "$NB" "$VA"
}

case_foreign() {
	local before out hpid
	local cmid
	before=$(counter 'reclaimed processes')
	cmid=$(counter 'reclaimed cm id')
	DRNIC_DAEMON=$SOCK taskset -c 0 "$PROBE" hold "$W/held" >"$W/hold.log" 2>&1 &
	hpid=$!
	PIDS+=("$hpid")
	wait_for test -s "$W/held" || { fail "hold: no objects: $(cat "$W/hold.log")"; return; }
	ctl_has "^process $hpid \(drnicd_probe\): requests [0-9]+, device 1, pd 1, buffer 1, mr 1, cq 1, qp 1, .*, xrcd 1, cm id 1, cm channel 1, doorbell ring 0$" ||
		fail "drnic-ctl does not show the holder's objects: $("$CTL" -s "$SOCK" list)"
	out=$(DRNIC_DAEMON=$SOCK taskset -c 0 "$PROBE" foreign "$W/held" 2>&1)
	local rc=$?
	grep -E '^(ok|FAIL):' <<<"$out" | sed 's/^/  /'
	[ $rc = 0 ] && grep -q 'probe: all ok' <<<"$out" || fail "probe foreign (exit $rc): $out"
	# The holder's objects are untouched by all that.
	ctl_has "^process $hpid \(drnicd_probe\): .* pd 1, buffer 1, mr 1, cq 1" ||
		fail "the holder lost objects: $("$CTL" -s "$SOCK" list)"
	kill -9 "$hpid"
	wait "$hpid" 2>/dev/null
	wait_for ctl_idle || fail "foreign: not reclaimed: $("$CTL" -s "$SOCK" list)"
	out=$(counter 'reclaimed processes')
	[ "$out" -ge $((before + 2)) ] ||
		fail "reclaimed processes $out, expected at least $((before + 2))"
	say "  reclaimed processes: $before -> $out"
	# The holder's listening CM id (and the probe's own) went with them.
	out=$(counter 'reclaimed cm id')
	[ "$out" -ge $((cmid + 2)) ] || fail "reclaimed cm id $cmid -> $out, expected +2"
	say "  reclaimed cm id: $cmid -> $out"
	# Its port is free again: a second holder listens there.
	DRNIC_DAEMON=$SOCK taskset -c 0 "$PROBE" hold "$W/held2" >"$W/hold2.log" 2>&1 &
	hpid=$!
	PIDS+=("$hpid")
	wait_for test -s "$W/held2" ||
		fail "the killed holder's CM port is not free: $(cat "$W/hold2.log")"
	kill -9 "$hpid"
	wait "$hpid" 2>/dev/null
	wait_for ctl_idle || fail "foreign: second holder not reclaimed: $("$CTL" -s "$SOCK" list)"
}

# cm_pair NAME WAIT "SERVER" "CLIENT": an RDMA CM program's server and
# client, both attached through the drop-in librdmacm; the client starts
# once the server's output has a line matching WAIT (default: the drop-in's
# rdma_listen line, DRNIC_IBV_DEBUG). A server that serves until stopped
# (PAIR_STOP=1) is stopped once the client is done.
cm_pair() {
	local name=$1 wait=${2:-'^drnic rdmacm: rdma_listen '} spid i rc
	env -u DRNIC_CONFIG LD_LIBRARY_PATH="$DROPIN" DRNIC_DAEMON="$SOCK" DRNIC_IBV_DEBUG=1 \
		taskset -c 0 timeout 120 $3 >"$W/$name.server" 2>&1 &
	spid=$!
	PIDS+=("$spid")
	for i in $(seq 300); do
		grep -qE "$wait" "$W/$name.server" 2>/dev/null && break
		sleep 0.1
	done
	grep -qE "$wait" "$W/$name.server" || fail "$name: the server never printed /$wait/"
	env -u DRNIC_CONFIG -u DRNIC_IBV_DEBUG LD_LIBRARY_PATH="$DROPIN" DRNIC_DAEMON="$SOCK" \
		taskset -c 0 timeout 120 $4 >"$W/$name.client" 2>&1
	rc=$?
	if [ "${PAIR_STOP:-0}" = 1 ]; then
		# Still serving (SIGTERM's 143) is what it should be.
		kill "$spid" 2>/dev/null
		wait "$spid"
		if [ $? != 143 ] || [ $rc != 0 ]; then
			fail "$name ($4): client exit $rc, or the server had ended before it was stopped"
			sed 's/^/  server| /' "$W/$name.server"
			sed 's/^/  client| /' "$W/$name.client"
			return 1
		fi
		return 0
	fi
	pair_end "$name ($4)" "$name" "$spid" $rc
}

# cm_has NAME FILE REGEX WHAT: the pair's FILE (server/client) has REGEX.
cm_has() {
	if grep -qE "$3" "$W/$1.$2"; then
		say "  $1: $4"
	else
		fail "$1: no /$3/ in its $2's output"
		sed 's/^/  | /' "$W/$1.$2" | tail -8
	fi
}

case_cm() {
	local ip=10.0.0.1 n before rbefore
	need_dropin || return
	for n in rping ucmatose udaddy rdma_server rdma_client cmtime mckey; do
		command -v $n >/dev/null || { fail "$n is not installed (rdmacm-utils)"; return; }
	done
	before=$(counter 'detached clean')
	rbefore=$(counter 'reclaimed processes')
	# Both ends of every pair on the daemon's one device, one address and
	# one port space: server and client are two processes on drnic0.
	if cm_pair rping "" "rping -s -a $ip -p 18661 -v -V -C 100" \
		"rping -c -a $ip -p 18661 -v -V -C 100"; then
		n=$(grep -c '^ping data: rdma-ping-' "$W/rping.client")
		[ "$n" = 100 ] && say "  rping: 100 pings, RDMA READ and WRITE, each checked (-V)" ||
			fail "rping: $n pings of 100 in the client's output"
	fi
	cm_pair ucmatose "" "ucmatose -b $ip -p 18662 -c 10 -C 50" \
		"ucmatose -s $ip -p 18662 -c 10 -C 50" &&
		cm_has ucmatose client '^test complete' "10 RC connections, 50 SENDs each way"
	cm_pair udaddy "" "udaddy -b $ip -c 2 -C 10" "udaddy -s $ip -c 2 -C 10" &&
		cm_has udaddy client '^test complete' "SIDR, UD SENDs both ways on 2 ids"
	cm_pair rdma_server "" "rdma_server -s $ip -p 18663" "rdma_client -s $ip -p 18663" &&
		cm_has rdma_server client '^rdma_client: end 0' "synchronous ids (rdma_create_ep)"
	PAIR_STOP=1 cm_pair cmtime "" "cmtime -b $ip -p 18664 -c 50" "cmtime -s $ip -p 18664 -c 50" &&
		cm_has cmtime client '^connect ' "50 connections: $(grep -E '^connect ' "$W/cmtime.client" | tr -s ' ')"
	cm_pair mckey '^receiving data transfers' "stdbuf -oL mckey -m 239.1.2.3 -b $ip -C 10" \
		"mckey -m 239.1.2.3 -s -b $ip -C 10" &&
		cm_has mckey server '^test complete' "10 multicast datagrams received"
	cm_pair wbwR "" "ib_write_bw -R -d drnic0 -p 18665 -n 1000" \
		"ib_write_bw -R -d drnic0 -p 18665 -n 1000 $ip" &&
		say "  ib_write_bw -R: $(pt_result "$W/wbwR.client")"
	wait_for ctl_idle || fail "cm: the daemon still holds something: $("$CTL" -s "$SOCK" list)"
	say "  processes detached clean: $before -> $(counter 'detached clean')," \
		"reclaimed: $rbefore -> $(counter 'reclaimed processes') (those that exit with ids)"
}

case_kill() {
	local apid aspid out before t0 t1
	before=$(counter 'reclaimed qp')
	# Pair A: long; its client is killed.
	DRNIC_DAEMON=$SOCK taskset -c 0 "$PP" -p 18621 --timeout 120 -n 1000000 -s 1024 \
		>"$W/a.server" 2>&1 &
	aspid=$!
	PIDS+=("$aspid")
	wait_for listening 18621 || fail "kill: pair A's server did not listen"
	DRNIC_DAEMON=$SOCK taskset -c 0 "$PP" -p 18621 --timeout 120 -n 1000000 -s 1024 127.0.0.1 \
		>"$W/a.client" 2>&1 &
	apid=$!
	PIDS+=("$apid")
	# (The programs' output is buffered: the daemon says when QPs exist.)
	wait_for ctl_has 'device drnic0: engines 1, qp 3,' || fail "kill: pair A did not connect"
	# Pair B, in the background so that A dies while B runs.
	(pair b 18622 -n 300 -s 4096 -c --format drnic && echo ok >"$W/b.ok") &
	local bpid=$!
	wait_for ctl_has 'device drnic0: engines 1, qp 5,' || fail "kill: pair B did not connect"
	"$CTL" -s "$SOCK" list | grep -E '^(device|process)' | sed 's/^/  ctl| /'
	[ -e "$W/b.ok" ] && fail "kill: pair B ended before the kill"
	kill -9 "$apid"
	t0=$(date +%s%N)
	wait "$apid" 2>/dev/null
	# Pair A's client is reclaimed: its QP goes (pair B and A's server keep theirs).
	wait_for ctl_has "reclaimed qp $((before + 1))\b" ||
		fail "kill: A's client not reclaimed: $("$CTL" -s "$SOCK" list)"
	t1=$(date +%s%N)
	say "  pair A's client killed; the daemon had reclaimed its objects $(( (t1 - t0) / 1000000 )) ms later (as seen by polling drnic-ctl)"
	wait "$bpid"
	if [ -f "$W/b.ok" ] && grep -q 'data check: 300 messages of 4096 bytes verified' "$W/b.client"; then
		say "  pair B ran to the end: 300 x 4096 B verified"
	else
		fail "kill: pair B did not finish with its data verified"
	fi
	kill -9 "$aspid" 2>/dev/null
	wait "$aspid" 2>/dev/null
	wait_for ctl_idle || fail "kill: the daemon still holds something: $("$CTL" -s "$SOCK" list)"
	out=$("$CTL" -s "$SOCK" list | grep '^counters')
	say "  $out"
}

case_apicheck() {
	local s4=$W/d4.sock p4=${PREFIX}d rc
	if [ -z "${API_CHECK:-}" ] || [ ! -x "$API_CHECK" ]; then
		fail "apicheck: no ibv_api_check (API_CHECK=${API_CHECK:-})"
		return
	fi
	# Its configuration's addresses (it writes its own DRNIC_CONFIG, which
	# an attached program takes only [ibverbs] from).
	start_daemon "$s4" "$p4" "$W/d4.log" --set ipv4=10.9.0.1 --set ipv6=fd00::9 || return
	local d4=$DPID
	env -u DRNIC_CONFIG DRNIC_DAEMON="$s4" taskset -c 0 timeout 120 "$API_CHECK" \
		>"$W/apicheck.log" 2>&1
	rc=$?
	if [ $rc = 0 ]; then
		say "  ibv_api_check attached: $(grep -c '^ok' "$W/apicheck.log") checks ok"
	else
		fail "apicheck: exit $rc"
		grep -v '^ok' "$W/apicheck.log" | sed 's/^/  | /' | tail -20
	fi
	kill -TERM "$d4"
	wait "$d4" || fail "apicheck: drnicd exit $?"
	rm -f /dev/hugepages/${p4}map_*
}

case_stuck() {
	local spid ppid rc
	DRNIC_DAEMON=$SOCK taskset -c 0 "$PROBE" stuck "$W/stuck" >"$W/stuck.log" 2>&1 &
	spid=$!
	PIDS+=("$spid")
	wait_for test -s "$W/stuck" || { fail "stuck: no QP: $(cat "$W/stuck.log")"; return; }
	say "  killed with $(cat "$W/stuck")"
	kill -9 "$spid"
	wait "$spid" 2>/dev/null
	# Another pair on the same engine: its posts must not wait for the
	# dead producer's slot (timeout(1): a post spinning for ever fails).
	DRNIC_DAEMON=$SOCK taskset -c 0 timeout 60 "$PP" -p 18681 -n 200 -s 4096 -c --format drnic \
		>"$W/st.server" 2>&1 &
	ppid=$!
	PIDS+=("$ppid")
	wait_for listening 18681 || fail "stuck: the server does not listen"
	DRNIC_DAEMON=$SOCK taskset -c 0 timeout 60 "$PP" -p 18681 -n 200 -s 4096 -c --format drnic \
		127.0.0.1 >"$W/st.client" 2>&1
	rc=$?
	if pair_end "stuck pair" st "$ppid" $rc &&
	   grep -q 'data check: 200 messages of 4096 bytes verified' "$W/st.client"; then
		say "  a pair after the kill: 200 x 4096 B each way, verified"
	else
		fail "stuck: the pair after the kill did not finish: $(tail -3 "$W/st.client")"
	fi
	wait_for ctl_idle || fail "stuck: the daemon still holds something: $("$CTL" -s "$SOCK" list)"
}

case_death() {
	local s2=$W/d2.sock p2=${PREFIX}b out opid
	start_daemon "$s2" "$p2" "$W/d2.log" || return
	local d2=$DPID
	DRNIC_DAEMON=$s2 taskset -c 0 timeout 60 "$PROBE" orphan "$W/orphan" >"$W/orphan.log" 2>&1 &
	opid=$!
	PIDS+=("$opid")
	wait_for test -e "$W/orphan" || { fail "orphan did not attach: $(cat "$W/orphan.log")"; return; }
	kill -9 "$d2"
	wait "$d2" 2>/dev/null
	# The probe sleeps until the death wakes it (timeout(1): if it never
	# does, exit 124 fails the case).
	wait "$opid"
	local rc=$?
	grep -E '^(ok|FAIL):' "$W/orphan.log" | sed 's/^/  /'
	[ $rc = 0 ] && grep -q 'probe: all ok' "$W/orphan.log" ||
		fail "orphan (exit $rc): $(cat "$W/orphan.log")"
	rm -f /dev/hugepages/${p2}map_*
}

case_term() {
	local s3=$W/d3.sock p3=${PREFIX}c hpid rc
	start_daemon "$s3" "$p3" "$W/d3.log" || return
	local d3=$DPID
	DRNIC_DAEMON=$s3 taskset -c 0 "$PROBE" hold "$W/held3" >"$W/hold3.log" 2>&1 &
	hpid=$!
	PIDS+=("$hpid")
	wait_for test -s "$W/held3" || { fail "term: holder did not attach"; return; }
	kill -TERM "$d3"
	wait "$d3"
	rc=$?
	[ $rc = 0 ] || fail "term: drnicd exit $rc"
	grep -q "pid $hpid (drnicd_probe) gone: freed 1 qp, 1 mr, 1 cq, 1 pd, 1 buffer, 1 cm id in [0-9.]* ms$" "$W/d3.log" ||
		fail "term: the holder's objects were not freed: $(cat "$W/d3.log")"
	[ -e "$s3" ] && fail "term: socket left behind"
	if ls /dev/hugepages/ 2>/dev/null | grep -q "^${p3}map_"; then
		fail "term: hugepage files left behind"
	fi
	say "  SIGTERM: $(grep -c . "$W/d3.log") log lines, exit $rc, socket and hugepage files gone"
	kill -9 "$hpid" 2>/dev/null
}

start_daemon "$SOCK" "$PREFIX" "$W/drnicd.log" || exit 1
MAIN_DPID=$DPID
for c in $CASES; do
	say "== $c"
	DPID=$MAIN_DPID
	"case_$c"
done
DPID=$MAIN_DPID
kill -TERM "$MAIN_DPID"
wait "$MAIN_DPID" || fail "drnicd exit status $?"
say "== daemon log"
sed 's/^/  | /' "$W/drnicd.log"
if [ $FAILS -ne 0 ]; then
	say "drnicd: $FAILS failure(s)"
	exit 1
fi
say "drnicd: all cases passed"
