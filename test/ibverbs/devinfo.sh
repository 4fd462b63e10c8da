#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# ibv_devices / ibv_devinfo through drnic's libibverbs.so.1 (suite 'ibverbs'),
# and `ldd -r` of every verbs program: nothing may be missing.
#
# Usage: devinfo.sh BUILD/lib/ibverbs BUILD/test/ibverbs/ibv_cq_check
set -u
. "$(dirname "$0")/common.sh"
need_pkgs
TMP=$(mktemp -d /tmp/drnic-ibv.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# 1. Every binary resolves every symbol, with its version, against our libs.
for b in /usr/bin/ib_write_lat /usr/bin/ib_write_bw /usr/bin/ib_send_lat /usr/bin/ib_send_bw \
	 /usr/bin/ib_read_lat /usr/bin/ib_read_bw /usr/bin/ib_atomic_lat /usr/bin/ib_atomic_bw \
	 /usr/bin/ibv_devices /usr/bin/ibv_devinfo /usr/bin/ibv_rc_pingpong \
	 /usr/bin/ibv_uc_pingpong /usr/bin/ibv_ud_pingpong /usr/bin/ibv_srq_pingpong; do
	[ -x "$b" ] || { fail "$b missing"; continue; }
	out=$(ibv ldd -r "$b" 2>&1)
	if echo "$out" | grep -qE "undefined symbol|not found|version .* not found"; then
		fail "ldd -r $b: $(echo "$out" | grep -E 'undefined|not found' | head -3)"
	elif ! echo "$out" | grep -q "libibverbs.so.1 => $IBV_LIB"; then
		fail "ldd $b does not pick $IBV_LIB/libibverbs.so.1"
	fi
done
[ $FAIL = 0 ] && ok "ldd -r: every symbol resolved for perftest and ibverbs-utils"

# 2. Default configuration (no DRNIC_CONFIG): the loopback link.
unset DRNIC_CONFIG DRNIC_VENDOR_ID DRNIC_VENDOR_PART_ID
ibv timeout 30 ibv_devices >"$TMP/devices" 2>&1 || fail "ibv_devices exit $?"
grep -qE "^\s+drnic0\s+000000fffe000001$" "$TMP/devices" ||
	fail "ibv_devices: no drnic0 with GUID 000000fffe000001: $(cat "$TMP/devices")"
ibv timeout 30 ibv_devinfo -v >"$TMP/devinfo" 2>&1 || fail "ibv_devinfo -v exit $?"
expect() {
	grep -qP "$1" "$TMP/devinfo" && ok "devinfo: $2" || fail "devinfo: $2 (no /$1/)"
}
expect '^hca_id:\tdrnic0$' "hca_id drnic0"
expect '^\t\t\tstate:\t\t\tPORT_ACTIVE \(4\)$' "port ACTIVE"
expect '^\t\t\tlink_layer:\t\tEthernet$' "Ethernet link layer"
expect '^\t\t\tmax_mtu:\t\t4096 \(5\)$' "max_mtu 4096"
expect '^\t\t\tactive_mtu:\t\t1024 \(3\)$' "active_mtu 1024 (Ethernet MTU 1500)"
expect '^\t\t\tGID\[  0\]:\t\t::ffff:10\.0\.0\.1, RoCE v2$' "GID 0 ::ffff:10.0.0.1 RoCE v2"
expect '^\tvendor_part_id:\t\t\t3356$' "unknown part id (0x0d1c)"
expect '^\tnode_guid:\t\t\t0000:00ff:fe00:0001$' "node GUID from the MAC"
expect '^\t\t\tphys_state:\t\tLINK_UP \(5\)$' "phys_state LINK_UP"

# 3. A configuration file: MTU 9000, two addresses, a ConnectX-5 id.
cat >"$TMP/cfg.ini" <<EOC
[ibverbs]
vendor_id = 0x02c9
vendor_part_id = 4119
[device]
name = drnic7
mtu = 9000
mac = 02:00:00:00:07:01
ipv4 = 10.7.0.1
ipv6 = fd00::7
EOC
DRNIC_CONFIG="$TMP/cfg.ini" ibv timeout 30 ibv_devinfo -v >"$TMP/devinfo" 2>&1 ||
	fail "ibv_devinfo (config) exit $?"
expect '^hca_id:\tdrnic7$' "configured name"
expect '^\tvendor_id:\t\t\t0x02c9$' "configured vendor id"
expect '^\tvendor_part_id:\t\t\t4119$' "configured part id"
expect '^\t\t\tactive_mtu:\t\t4096 \(5\)$' "active_mtu 4096 (Ethernet MTU 9000)"
expect '^\t\t\tGID\[  0\]:\t\t::ffff:10\.7\.0\.1, RoCE v2$' "GID 0 IPv4-mapped"
expect '^\t\t\tGID\[  1\]:\t\tfd00::7, RoCE v2$' "GID 1 IPv6"
DRNIC_CONFIG="$TMP/cfg.ini" DRNIC_VENDOR_PART_ID=4123 ibv timeout 30 ibv_devinfo >"$TMP/devinfo" 2>&1
expect '^\tvendor_part_id:\t\t\t4123$' "DRNIC_VENDOR_PART_ID overrides"

# 4. CQ sizes as a verbs program sees them (our own check program).
CQCHECK=${2:-}
if [ -z "$CQCHECK" ]; then
	fail "no ibv_cq_check program given (second argument)"
elif ibv timeout 30 "$CQCHECK" >"$TMP/cq" 2>&1; then
	ok "CQ sizes: $(grep -c '^ok' "$TMP/cq") checks (create_cq rounds up as ConnectX's provider)"
else
	fail "CQ sizes: $(grep -E '^FAIL|rror' "$TMP/cq" | head -3)"
fi

# bad_config TAG LINE: ibv_devinfo with "[ibverbs] LINE" must fail, saying
# "bad key or value: LINE" (the key and its value, not a silent default).
bad_config() {
	local tag=$1 line=$2
	printf '[ibverbs]\n%s\n' "$line" >"$TMP/$tag.ini"
	if DRNIC_CONFIG="$TMP/$tag.ini" ibv timeout 30 ibv_devinfo >"$TMP/$tag" 2>&1; then
		fail "ibv_devinfo accepted '$line'"
	else
		grep -qF "bad key or value: $line" "$TMP/$tag" && ok "'$line' refused with its key" ||
			fail "'$line': $(cat "$TMP/$tag")"
	fi
}

# 5. A bad configuration is an error, naming the key: a bad number, a bad
# word, a value out of range (the helper's adaptive look: above 1 s).
bad_config bad1 "vendor_part_id = x"
bad_config bad2 "progress_wait = sometimes"
bad_config bad3 "progress_spin_max_us = 2000000"

# bad_device_config TAG LINE WHY: the same in [device], where the helper's
# keys belong now (drnic_config_load: one table); the error says why.
bad_device_config() {
	local tag=$1 line=$2 why=$3
	printf '[device]\n%s\n' "$line" >"$TMP/$tag.ini"
	if DRNIC_CONFIG="$TMP/$tag.ini" ibv timeout 30 ibv_devinfo >"$TMP/$tag" 2>&1; then
		fail "ibv_devinfo accepted [device] '$line'"
	else
		grep -qF "bad key or value: $line ($why)" "$TMP/$tag" &&
			ok "[device] '$line' refused: $why" || fail "[device] '$line': $(cat "$TMP/$tag")"
	fi
}
bad_device_config bad4 "progress_linger_us = 5000" "out of range 0..1000"
bad_device_config bad5 "progress_rt = sometimes" "expected auto, on or off"
bad_config bad6 "progress_spin_us = 2x"
grep -qF "(not a number)" "$TMP/bad6" && ok "[ibverbs] 'progress_spin_us = 2x': not a number" ||
	fail "[ibverbs] 'progress_spin_us = 2x' without its reason: $(cat "$TMP/bad6")"

# 6. A value in range is taken, in [ibverbs] (where the keys were first) and
# in [device]: the helper's figures say so (DRNIC_IBV_DEBUG).
for sec in ibverbs device; do
	printf '[%s]\nprogress_spin_max_us = 50\nprogress_sleep_us = 7\n' $sec >"$TMP/spin.ini"
	DRNIC_IBV_DEBUG=1 DRNIC_CONFIG="$TMP/spin.ini" ibv timeout 30 ibv_devinfo >"$TMP/spin" 2>&1 &&
		grep -q "PORT_ACTIVE" "$TMP/spin" &&
		grep -q "progress helper: napping 7 us" "$TMP/spin" &&
		ok "[$sec] progress_spin_max_us = 50, progress_sleep_us = 7 taken" ||
		fail "[$sec] progress_sleep_us = 7: $(grep -v '^EAL' "$TMP/spin" | tail -3)"
done

[ $FAIL = 0 ] && echo PASS || echo FAILED
exit $FAIL
