# SPDX-License-Identifier: BSD-3-Clause
# Two "hosts" on one machine, for the multi-process tests: sourced, not run.
# The sourcing script defines skip() (exit 77 with the reason) and $TMP.

# netns_pair NS1 IF1 IP1 NS2 IF2 IP2: namespaces NS1 and NS2 joined by a
# veth pair (IF1 in NS1 with IP1/24, IF2 in NS2 with IP2/24), MTU 9000,
# loopback up. Skips with the reason when any of it cannot be made (not
# root, no namespaces, no veth).
netns_pair() {
	local ns1=$1 if1=$2 ip1=$3 ns2=$4 if2=$5 ip2=$6 x

	[ "$(id -u)" = 0 ] || skip "needs root for network namespaces (uid $(id -u))"
	command -v ip >/dev/null || skip "no iproute2 'ip' command"
	ip netns add "$ns1" 2>"$TMP/err" || skip "cannot create a network namespace: $(cat "$TMP/err")"
	ip netns add "$ns2" || skip "cannot create a second network namespace"
	ip link add "$if1" type veth peer name "$if2" 2>"$TMP/err" ||
		skip "cannot create a veth pair: $(cat "$TMP/err")"
	ip link set "$if1" netns "$ns1" && ip link set "$if2" netns "$ns2" ||
		skip "cannot move veth ends"
	for x in "$ns1 $if1 $ip1" "$ns2 $if2 $ip2"; do
		set -- $x
		ip -n "$1" link set lo up
		ip -n "$1" link set "$2" mtu 9000 up
		ip -n "$1" addr add "$3/24" dev "$2"
	done
}

# netns_mac NS IF: the MAC address of IF in NS.
netns_mac() {
	ip -n "$1" -o link show "$2" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p'
}

# netns_teardown NS1 NS2 IF1 [PID...]: stop the processes, then remove the
# namespaces and the veth pair netns_pair made (quietly: parts may be gone).
netns_teardown() {
	local ns1=$1 ns2=$2 if1=$3 p

	shift 3
	for p in "$@"; do kill "$p" 2>/dev/null; done
	for p in "$@"; do wait "$p" 2>/dev/null; done
	ip netns del "$ns1" 2>/dev/null
	ip netns del "$ns2" 2>/dev/null
	ip link del "$if1" 2>/dev/null
}

# netns_wait_listen NS PORT: until something listens on TCP PORT in NS (an
# empty NS: this namespace); 1 when nothing does within 10 s.
netns_wait_listen() {
	local i
	for i in $(seq 100); do
		if [ -n "$1" ]; then
			ip netns exec "$1" ss -ltn 2>/dev/null | grep -q ":$2 " && return 0
		else
			ss -ltn 2>/dev/null | grep -q ":$2 " && return 0
		fi
		sleep 0.1
	done
	return 1
}

# netns_bridge BRNS HUB NS:IF:IP...: one Linux bridge (br0) in its own
# namespace BRNS and, for each NS:IF:IP, a namespace NS whose veth IF (IP/24,
# MTU 9000) is a port of it (the peer end, IF with "b" appended, sits in
# BRNS). HUB=1 makes the bridge forget every MAC at once (ageing_time 0):
# it floods every frame to every port, as a hub or a mirror port does, so
# a third host sees the other two's traffic. Skips with the reason when any
# of it cannot be made. Remove it all with netns_del BRNS NS...
netns_bridge() {
	local brns=$1 hub=$2 x ns ifc ip
	shift 2

	[ "$(id -u)" = 0 ] || skip "needs root for network namespaces (uid $(id -u))"
	command -v ip >/dev/null || skip "no iproute2 'ip' command"
	ip netns add "$brns" 2>"$TMP/err" || skip "cannot create a network namespace: $(cat "$TMP/err")"
	ip -n "$brns" link add br0 type bridge 2>"$TMP/err" ||
		skip "cannot create a bridge: $(cat "$TMP/err")"
	if [ "$hub" = 1 ]; then
		ip -n "$brns" link set br0 type bridge ageing_time 0 ||
			skip "cannot set the bridge's ageing time to 0"
	fi
	ip -n "$brns" link set br0 mtu 9000 up
	for x in "$@"; do
		IFS=: read -r ns ifc ip <<<"$x"
		ip netns add "$ns" || skip "cannot create network namespace $ns"
		ip link add "$ifc" type veth peer name "${ifc}b" 2>"$TMP/err" ||
			skip "cannot create a veth pair: $(cat "$TMP/err")"
		ip link set "$ifc" netns "$ns" && ip link set "${ifc}b" netns "$brns" ||
			skip "cannot move veth ends"
		ip -n "$brns" link set "${ifc}b" mtu 9000 master br0 up || skip "cannot add a bridge port"
		ip -n "$ns" link set lo up
		ip -n "$ns" link set "$ifc" mtu 9000 up
		ip -n "$ns" addr add "$ip/24" dev "$ifc"
	done
}

# netns_del NS...: remove namespaces (and the veths in them), quietly.
netns_del() {
	local ns
	for ns in "$@"; do ip netns del "$ns" 2>/dev/null; done
}

# netns_wait_log FILE PATTERN [SECONDS]: until a line of FILE matches the
# extended regex PATTERN; 1 when none does within SECONDS (10).
netns_wait_log() {
	local i
	for i in $(seq $((${3:-10} * 20))); do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}
