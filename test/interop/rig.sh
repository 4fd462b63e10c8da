# SPDX-License-Identifier: BSD-3-Clause
#
# The interop rig: one L2 segment with a Soft-RoCE VM and a drnic attach
# point. Sourced by interop.sh (and usable by hand: see README.md).
#
#   di0br (bridge, 10.79.0.1/24: the host's TCP/ssh address)
#    |-- di0tap -- qemu (TCG) -- eth0 10.79.0.10, rxe0 (rdma_rxe)
#    '-- di0hb ==veth== di0h   <- drnic's net_af_packet port; drnic is
#                                 10.79.0.2 and answers ARP itself
#
# The kernel is kept off di0h (no address, arp off, IPv6 off), so only
# drnic speaks there. Capture on di0hb: it carries exactly drnic's frames both
# ways (a capture on di0h misses what drnic sends: net_af_packet transmits
# with PACKET_QDISC_BYPASS, which skips the kernel's capture taps).

RIG_DIR=${DRNIC_INTEROP_DIR:-/var/tmp/drnic-interop}
RIG_BR=di0br RIG_TAP=di0tap RIG_VETH=di0h RIG_VETH_BR=di0hb
RIG_HOST_IP=10.79.0.1 RIG_DRNIC_IP=10.79.0.2 RIG_VM_IP=10.79.0.10
RIG_BR_MAC=02:79:00:00:00:01 RIG_DRNIC_MAC=02:79:00:00:00:02 RIG_VM_MAC=52:54:00:79:00:10
# One MTU on every port: rxe's active MTU is then 4096, so paths of 1024 and
# 4096 both run on one boot; drnic's af_packet port takes it (framesz 8192).
RIG_MTU=${DRNIC_INTEROP_MTU:-4500}
RIG_RUN=$RIG_DIR/run
RIG_QEMU_PID=

rig_quiet_if() { sysctl -qw "net.ipv6.conf.$1.disable_ipv6=1" 2>/dev/null || true; }

# A VM left behind by an interrupted run: its pid file names it, and its
# command line says it is ours.
rig_reap() {
	local old
	old=$(cat "$RIG_RUN/qemu.pid" 2>/dev/null)
	if [ -n "$old" ] && tr '\0' ' ' </proc/"$old"/cmdline 2>/dev/null | grep -q -- '-name drnic-interop '; then
		kill "$old"
		sleep 1
	fi
	rm -f "$RIG_RUN/qemu.pid"
}

# rig_net_up: returns non-zero with a message when the machine cannot make it.
rig_net_up() {
	rig_reap
	rig_net_down
	ip link add "$RIG_BR" type bridge stp_state 0 forward_delay 0 || return 1
	ip link set "$RIG_BR" address "$RIG_BR_MAC" mtu "$RIG_MTU" || return 1
	rig_quiet_if "$RIG_BR"
	ip addr add "$RIG_HOST_IP/24" dev "$RIG_BR" || return 1
	ip link set "$RIG_BR" up || return 1
	ip tuntap add dev "$RIG_TAP" mode tap || return 1
	rig_quiet_if "$RIG_TAP"
	ip link set "$RIG_TAP" mtu "$RIG_MTU" master "$RIG_BR" up || return 1
	ip link add "$RIG_VETH" address "$RIG_DRNIC_MAC" mtu "$RIG_MTU" type veth \
		peer name "$RIG_VETH_BR" mtu "$RIG_MTU" || return 1
	rig_quiet_if "$RIG_VETH"
	rig_quiet_if "$RIG_VETH_BR"
	ip link set "$RIG_VETH_BR" master "$RIG_BR" up || return 1
	ip link set "$RIG_VETH" arp off up || return 1
	# bridged frames must not go through the host's iptables
	for f in /proc/sys/net/bridge/bridge-nf-call-iptables /proc/sys/net/bridge/bridge-nf-call-ip6tables; do
		[ -w "$f" ] && echo 0 >"$f"
	done
	return 0
}

rig_net_down() {
	ip link del "$RIG_VETH" 2>/dev/null
	ip link del "$RIG_TAP" 2>/dev/null
	ip link del "$RIG_BR" 2>/dev/null
	return 0
}

RIG_SSH_OPTS=(-o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
	-o LogLevel=ERROR -o ConnectTimeout=10 -o ServerAliveInterval=15 -o BatchMode=yes)

# vm CMD: run a shell command in the VM (exit status preserved).
vm() { ssh -i "$RIG_IMG/id_ed25519" "${RIG_SSH_OPTS[@]}" root@"$RIG_VM_IP" "$@"; }
# vm_put FILE DEST: copy a file into the VM (its disk is a throw-away snapshot).
vm_put() { vm "cat > '$2' && chmod +x '$2'" <"$1"; }

# rig_boot IMGDIR: qemu under TCG with Debian's kernel; waits for rxe0 ACTIVE
# and ssh. Returns 0 ready, 77 qemu cannot run here (message printed), 1 failure.
rig_boot() {
	RIG_IMG=$1
	mkdir -p "$RIG_RUN"
	local log=$RIG_RUN/console.log err=$RIG_RUN/qemu.err t0=$SECONDS
	rm -f "$log" "$err" "$RIG_RUN/qemu.pid"
	qemu-system-x86_64 -name drnic-interop -machine q35,accel="${DRNIC_INTEROP_ACCEL:-tcg}" \
		-cpu max -smp 1 -m 1024 -nodefaults -no-user-config -display none -no-reboot \
		-kernel "$RIG_IMG/vmlinuz" -initrd "$RIG_IMG/initrd.img" \
		-append "console=ttyS0 root=/dev/vda rw quiet loglevel=4 net.ifnames=0 init=/sbin/rxe-init di.ip=$RIG_VM_IP/24 di.mtu=$RIG_MTU" \
		-drive "file=$RIG_IMG/rootfs.img,format=raw,if=virtio,snapshot=on,cache=unsafe" \
		-netdev "tap,id=n0,ifname=$RIG_TAP,script=no,downscript=no,vhost=off" \
		-device "virtio-net-pci,netdev=n0,mac=$RIG_VM_MAC" -device virtio-rng-pci \
		-serial "file:$log" -pidfile "$RIG_RUN/qemu.pid" -daemonize 2>"$err"
	if [ ! -s "$RIG_RUN/qemu.pid" ]; then
		echo "SKIP: qemu cannot start here: $(head -3 "$err")"
		return 77
	fi
	RIG_QEMU_PID=$(cat "$RIG_RUN/qemu.pid")
	local deadline=$((SECONDS + ${DRNIC_INTEROP_BOOT_TIMEOUT:-360}))
	until grep -qa 'rxe-init: UP' "$log" 2>/dev/null; do
		if ! kill -0 "$RIG_QEMU_PID" 2>/dev/null; then
			echo "FAIL: qemu exited during boot; console:"; tail -20 "$log"; return 1
		fi
		[ $SECONDS -lt $deadline ] || { echo "FAIL: no rxe0 after $((SECONDS - t0)) s; console:"; tail -20 "$log"; return 1; }
		sleep 1
	done
	RIG_T_RXE=$((SECONDS - t0))
	grep -a 'rxe-init: ' "$log" | tr -d '\r' | tail -1
	grep -qa 'rxe-init: UP.*ACTIVE' "$log" || { echo "FAIL: rxe0 not ACTIVE"; return 1; }
	until vm true 2>/dev/null; do
		[ $SECONDS -lt $deadline ] || { echo "FAIL: no ssh into the VM"; return 1; }
		sleep 1
	done
	RIG_T_SSH=$((SECONDS - t0))
	echo "VM ready: rxe0 ACTIVE after ${RIG_T_RXE} s, ssh after ${RIG_T_SSH} s (TCG)"
	return 0
}

rig_stop() {
	[ -n "$RIG_QEMU_PID" ] || return 0
	kill "$RIG_QEMU_PID" 2>/dev/null
	local i
	for i in $(seq 50); do kill -0 "$RIG_QEMU_PID" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$RIG_QEMU_PID" 2>/dev/null
	RIG_QEMU_PID=
}
