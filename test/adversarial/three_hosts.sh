#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Two drnic hosts and an attacker on one bridge (suite 'adversarial'; issue
# 13, defect 1, end to end).
#
# Three network namespaces on one Linux bridge, run as a hub (it floods every
# frame to every port, as a mirror port would), so the third host sees the
# others' traffic:
#  - B, the server: drnic-pingpong -w --steps, a net_af_packet port on its
#    veth (inline progress, its own EAL file prefix); its MR of 3 slots has
#    guard zones on both sides, and it reports every slot and both guards;
#  - A, the real client: the same program, one operation at a time: WRITE 0,
#    1, 2 into B's slots 0, 1, 2, a READ of slot 2 back, and a probe WRITE
#    just past B's MR that B must refuse; it prints each completion's status;
#  - C, the attacker (attacker.py, Debian's python3 with python3-scapy): it
#    sniffs the hub to learn QPNs, PSNs, the rkey and the address, and
#    injects RC frames with valid ICRCs (scapy's RoCE layer) between A's
#    operations: a WRITE from its own MAC and IP, a WRITE to a wrong
#    destination IP, one over IPv6 to the IPv4 QP, one with a wrong P_Key,
#    a forged READ response (while B is frozen, so A's READ waits
#    unanswered), a forged ACK for a PSN far ahead. (A WRITE with A's own
#    IP and the PSN B expects is not refused: RoCE has no authentication,
#    and drnic, as rxe, does not compare source MACs, which routers
#    rewrite; see doc/design-notes.md.)
# Asserted, as a user sees it: B's slots hold exactly A's bytes and the
# guards are untouched; every WR of A completes with its right status
# (success, and "remote access error" for the probe: no success for a lost
# or refused message); the READ returns A's bytes; the drop counters
# printed by both hosts name the attacks (ATTACK_COUNTER below); every
# injected frame, captured on C's bridge port, has a valid ICRC
# (../shared/tools/roce_pcap_check.py).
#
# Usage: three_hosts.sh PATH/TO/drnic-pingpong
# DRNIC_ADV_DRY=1: the same run with an attacker that only sniffs (sends
# nothing): every assertion about A's and B's data and statuses must hold,
# which checks the harness itself; counters and ICRCs are not checked.
# Exit: 0 pass, 1 fail, 77 skip (not root, no namespaces or bridge, no scapy,
# no tcpdump).
set -u

# ---- Counter names: the one place to align with the engine's drop names ----
# ATTACK_COUNTER[attack]="HOST NAME": the attack must raise the engine drop
# counter NAME of HOST (A: the real client, B: the server), as
# drnic_device_stats_print() prints it (", NAME N" on a "stats ... engine"
# line); attacks sharing a counter add up (at least that many drops).
declare -A ATTACK_COUNTER=(
	[own_write]="B bad_addr"
	[wrong_dst_ip]="B bad_addr"
	[ipv6]="B bad_addr"
	[bad_pkey]="B bad_pkey"
	[forged_read]="A bad_addr"
	[ghost_ack]="A ghost_resp"
)
# ---------------------------------------------------------------------------

PP=${1:?usage: $0 path/to/drnic-pingpong}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3            # Debian's, with python3-scapy (not a pyenv one)
CHECKER=${DRNIC_ROCE_PCAP_CHECK:-$HERE/../../../shared/tools/roce_pcap_check.py}
TAG=$$
NSA=advA$TAG NSB=advB$TAG NSC=advC$TAG NSBR=advR$TAG
VA=ava$TAG VB=avb$TAG VC=avc$TAG
TMP=$(mktemp -d /tmp/drnic-adv.XXXXXX)
STEPS=$TMP/steps
PIDS=()
FAIL=0
N=3                            # A's WRITEs; then the READ (op 3), the probe (op 4)

skip() { echo "SKIP: $*"; exit 77; }
. "$HERE/../common/netns.sh"
fail() { echo "FAIL: $*"; FAIL=1; }

cleanup() {
	local p
	exec 7>&- 2>/dev/null
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	netns_del "$NSA" "$NSB" "$NSC" "$NSBR"
	rm -f /dev/hugepages/advA"$TAG"* /dev/hugepages/advB"$TAG"* 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

[ -x "$PP" ] || skip "no drnic-pingpong at $PP"
"$PY" -c 'import scapy.contrib.roce' 2>/dev/null ||
	skip "$PY cannot import scapy.contrib.roce (install python3-scapy)"
command -v tcpdump >/dev/null || skip "no tcpdump to capture the injected frames"
[ -r "$CHECKER" ] || skip "no $CHECKER to check the injected frames' ICRCs"
mkdir -p "$STEPS"
netns_bridge "$NSBR" 1 "$NSA:$VA:10.232.0.1" "$NSB:$VB:10.232.0.2" "$NSC:$VC:10.232.0.3"

# The injected frames: everything C sends that reaches the bridge.
ip netns exec "$NSBR" tcpdump -i "${VC}b" -Q in --immediate-mode -U -w "$TMP/injected.pcap" \
	udp dst port 4791 2>"$TMP/tcpdump.log" &
TCPDUMP=$!
PIDS+=($TCPDUMP)
netns_wait_log "$TMP/tcpdump.log" "listening on" || fail "tcpdump did not start"

# host NAME NS CPU IP ARGS...: drnic-pingpong in the background.
host() {
	local name=$1 ns=$2 cpu=$3 ip=$4 ifc=$5
	shift 5
	ip netns exec "$ns" timeout 50 "$PP" --lcores "$cpu" --file-prefix "adv$name$TAG" \
		--timeout 40 --set progress=inline --set engines=1 --set link=ethdev \
		--set mtu=9000 --set ipv4="$ip" \
		--set "link_args=dev=net_af_packet0,iface=$ifc,blocksz=65536,framesz=8192,qpairs=1" \
		-p 18600 -w --steps "$STEPS" -s 64 -n $N -m 1024 -u 18 --stats "$@" \
		>"$TMP/$name.log" 2>&1 &
	PIDS+=($!)
	LAST=$!
}

host B "$NSB" 1 10.232.0.12 "$VB"
SPID=$LAST
netns_wait_listen "$NSB" 18600 || fail "server not listening"

mkfifo "$TMP/attacker.in"
DRY=()
[ "${DRNIC_ADV_DRY:-0}" = 1 ] && DRY=(--dry)
ip netns exec "$NSC" "$PY" "$HERE/attacker.py" "$VC" 10.232.0.3 "${DRY[@]}" \
	<"$TMP/attacker.in" >"$TMP/attacker.log" 2>&1 &
PIDS+=($!)
APID=$!
exec 7>"$TMP/attacker.in"
netns_wait_log "$TMP/attacker.log" "^sniffing on" 20 || fail "attacker did not start"

host A "$NSA" 0 10.232.0.11 "$VA" 10.232.0.2
CPID=$LAST

# attack CMD [N]: C runs CMD (A has had N requests completed) and answers.
attack() {
	echo "$*" >&7
	netns_wait_log "$TMP/attacker.log" "^(done|error) $1" 20 || fail "attacker: no answer to $1"
}
# op I: let A run operation I and wait for its completion.
op() {
	netns_wait_log "$TMP/A.log" "^op $1: waiting" 20 || fail "client not waiting for op $1"
	touch "$STEPS/op.$1"
	netns_wait_log "$TMP/A.log" "^wr $1 " 20 || fail "client: op $1 did not complete"
}

op 0
attack learn 1
# The issue's case: C's WRITE at the PSN B expects, then A's next WRITE.
attack own_write 1
op 1
attack wrong_dst_ip 2
attack ipv6 2
attack bad_pkey 2
op 2
# B runs no engine while frozen: A's READ waits, C answers it first.
touch "$STEPS/freeze"
netns_wait_log "$TMP/B.log" "^server: frozen" || fail "server did not freeze"
echo forged_read >&7
netns_wait_log "$TMP/attacker.log" "^armed forged_read" || fail "attacker not armed"
netns_wait_log "$TMP/A.log" "^op 3: waiting" 20 || fail "client not waiting for op 3"
touch "$STEPS/op.3"
netns_wait_log "$TMP/attacker.log" "^(done|error) forged_read" 30 || fail "attacker: no forged_read"
rm -f "$STEPS/freeze"
netns_wait_log "$TMP/B.log" "^server: thawed" || fail "server did not thaw"
netns_wait_log "$TMP/A.log" "^wr 3 " 20 || fail "client: the READ did not complete"
attack ghost_ack 4
op 4
echo quit >&7
exec 7>&-
netns_wait_log "$TMP/attacker.log" "^sent [0-9]+ frames" 20 || fail "attacker did not finish"
wait "$CPID"; RC=$?
wait "$SPID"; RS=$?
wait "$APID"
# Stop the capture once it holds every frame C sent (or after 5 s).
SENT=$(sed -n 's/^sent \([0-9]*\) frames$/\1/p' "$TMP/attacker.log")
for i in $(seq 100); do
	[ "$(tcpdump -r "$TMP/injected.pcap" 2>/dev/null | wc -l)" -ge "${SENT:-0}" ] && break
	sleep 0.05
done
kill -INT "$TCPDUMP" 2>/dev/null
wait "$TCPDUMP"

echo "--- server exit $RS, client exit $RC"
for f in B A attacker; do
	sed "s/^/  $f| /" "$TMP/$f.log" | grep -v "| EAL\|| TELEMETRY"
done

# expect LOG REGEX WHAT: a line of LOG matches REGEX.
expect() { grep -Eq -- "$2" "$TMP/$1.log" || fail "$3"; }
for k in 0 1 2; do
	expect A "^wr $k write: success$" "A's WRITE $k did not complete with success"
	expect B "^slot $k: ok$" "B's slot $k does not hold A's WRITE $k"
done
expect B "^guards: ok$" "B's guard zones were touched"
expect A "^wr 3 read: success$" "A's READ did not complete with success"
expect A "^read check: ok$" "A's READ did not return the bytes A wrote"
expect A "^wr 4 probe: remote access error$" \
	"A's probe past B's MR did not complete with remote access error"
for a in "${!ATTACK_COUNTER[@]}"; do
	expect attacker "^done $a" "the attacker did not run $a"
done

if [ ${#DRY[@]} -gt 0 ]; then
	echo "dry run: counters and ICRCs not checked"
	[ $FAIL = 0 ] && echo "PASS" || echo "FAILED"
	exit $FAIL
fi

# counter LOG NAME: NAME's engine drops in LOG, summed over engines.
counter() {
	grep '^stats .* engine [0-9]*:' "$TMP/$1.log" | grep -o ", $2 [0-9]*" |
		awk '{ n += $NF } END { print n + 0 }'
}
declare -A NEED
for a in "${!ATTACK_COUNTER[@]}"; do
	k=${ATTACK_COUNTER[$a]}
	NEED[$k]=$((${NEED[$k]:-0} + 1))
done
for k in "${!NEED[@]}"; do
	read -r h name <<<"$k"
	n=$(counter "$h" "$name")
	echo "counter: $h's engine drop '$name' = $n (the attacks need at least ${NEED[$k]})"
	[ "$n" -ge "${NEED[$k]}" ] || fail "$h's engine counter '$name' is $n, expected at least ${NEED[$k]}"
done

# Every frame C sent has a valid ICRC (an independent checker).
RES=$("$PY" "$CHECKER" "$TMP/injected.pcap" | grep -o "{'rocev2.*}" | head -1)
echo "injected frames: the attacker sent ${SENT:-?}; roce_pcap_check: $RES"
"$PY" -c "import ast,sys; d=ast.literal_eval(sys.argv[1]); n=int(sys.argv[2]); sys.exit(0 if n > 0 and d.get('rocev2',0)==n and d.get('icrc_ok',0)==n and not d.get('icrc_bad') else 1)" \
	"${RES:-{\}}" "${SENT:-0}" || fail "not every injected frame was captured with a valid ICRC ($RES, $SENT sent)"

[ $FAIL = 0 ] && echo "PASS" || echo "FAILED"
exit $FAIL
