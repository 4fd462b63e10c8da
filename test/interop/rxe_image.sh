#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The Soft-RoCE peer's disk for the interop suite: a Debian root filesystem
# (mmdebstrap, minbase, from the host's own apt sources) with Debian's kernel,
# rdma-core, ibverbs-utils and perftest, and a tiny PID 1 that brings up
# eth0 and rdma_rxe (rxe0) and starts sshd.
#
#   rxe_image.sh DIR    build into DIR (rootfs.img, vmlinuz, initrd.img,
#                       id_ed25519[.pub], kernel-version, then DONE);
#                       nothing to do when DIR/DONE exists.
#
# The caller (interop.sh) names DIR after a hash of this file, so a changed
# recipe builds a new image and an unchanged one is reused.
# Exit: 0 built (or present), 1 failure, 77 the machine cannot build it.
set -euo pipefail

SELF=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
if [ "${1:-}" != --hook ]; then
	OUT=${1:?usage: $0 OUTDIR}
	[ -e "$OUT/DONE" ] && exit 0
fi
[ "$(id -u)" = 0 ] || { echo "SKIP: building the VM image needs root"; exit 77; }

# Guest packages. mmdebstrap's minbase has no init: rxe-init below is PID 1.
GUEST_PKGS=(linux-image-amd64 initramfs-tools zstd kmod iproute2 procps
	openssh-server rdma-core ibverbs-providers ibverbs-utils perftest iputils-arping
	rdmacm-utils)

# ---- customize hook (mmdebstrap runs "$0 --hook ROOT" with OUT exported)
hook() {
	local R=$1 v
	install -d -m 700 "$R/root/.ssh"
	install -m 600 "$OUT/id_ed25519.pub" "$R/root/.ssh/authorized_keys"
	echo rxepeer >"$R/etc/hostname"
	printf '127.0.0.1 localhost rxepeer\n' >"$R/etc/hosts"
	printf '/dev/vda / ext4 rw,noatime 0 0\n' >"$R/etc/fstab"
	printf 'PermitRootLogin prohibit-password\nUseDNS no\nPrintMotd no\n' \
		>"$R/etc/ssh/sshd_config.d/interop.conf"
	# PID 1: kernel command line carries di.ip=A.B.C.D/NN and di.mtu=N.
	cat >"$R/sbin/rxe-init" <<'EOF'
#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
mount -t proc proc /proc; mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null; mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts; mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run; mount -t tmpfs tmpfs /tmp; mount -o remount,rw /
mkdir -p /run/sshd
say() { echo "rxe-init: $*" >/dev/ttyS0; }
kv() { tr ' ' '\n' </proc/cmdline | sed -n "s/^$1=//p"; }
IP=$(kv di.ip); MTU=$(kv di.mtu)
modprobe virtio_net; modprobe virtio_rng 2>/dev/null
i=0; while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done
sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip link set lo up; ip link set eth0 mtu "$MTU" up; ip addr add "$IP" dev eth0
modprobe ib_uverbs && modprobe rdma_ucm && modprobe rdma_rxe &&
	rdma link add rxe0 type rxe netdev eth0 ||
	say "FAILED rdma_rxe"
i=0; until grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null || [ $i -ge 300 ]; do
	sleep 0.1; i=$((i+1)); done
/usr/sbin/sshd
say "UP $(uname -r) eth0 $IP mtu $MTU rxe0 $(cat /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null)"
while :; do sleep 3600; done
EOF
	chmod 755 "$R/sbin/rxe-init"
	# initrd: just enough to mount /dev/vda
	printf 'MODULES=list\nCOMPRESS=zstd\n' >"$R/etc/initramfs-tools/conf.d/interop.conf"
	printf '%s\n' virtio_pci virtio_blk ext4 crc32c_generic >>"$R/etc/initramfs-tools/modules"
	chroot "$R" update-initramfs -u -k all >/dev/null
	v=$(ls "$R"/boot/vmlinuz-* | sort -V | tail -1)
	v=${v##*/vmlinuz-}
	cp "$R/boot/vmlinuz-$v" "$OUT/vmlinuz"
	cp "$R/boot/initrd.img-$v" "$OUT/initrd.img"
	echo "$v" >"$OUT/kernel-version"
	rm -f "$R/etc/apt/sources.list" "$R"/etc/apt/sources.list.d/*
	rm -rf "$R"/var/lib/apt/lists/* "$R"/var/cache/apt/*
}
if [ "${1:-}" = --hook ]; then hook "$2"; exit 0; fi

# ---- host tools
HOST_PKGS=(mmdebstrap e2fsprogs openssh-client debian-archive-keyring)
missing=()
for p in "${HOST_PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	timeout 600 apt-get update -qq || true
	timeout 900 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		{ echo "SKIP: cannot install ${missing[*]}"; exit 77; }
fi

# ---- the host's apt sources for this release's main component, one-line form
CODENAME=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$CODENAME" ] || { echo "SKIP: no VERSION_CODENAME in /etc/os-release"; exit 77; }
sources() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] && grep -E '^[[:space:]]*deb[[:space:]]' "$f" | sed -E 's/^[[:space:]]*//'
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		# deb822 stanzas -> "deb [signed-by=K] URI SUITE main"
		python3 - "$f" <<'PY'
import sys
for st in open(sys.argv[1]).read().split("\n\n"):
    d = {}
    for line in st.splitlines():
        if line.startswith("#") or line[:1].isspace() or ":" not in line:
            continue
        k, v = line.split(":", 1)
        d[k.strip().lower()] = v.split()
    if "deb" not in d.get("types", []) or d.get("enabled", ["yes"])[0].lower() == "no":
        continue
    sb = "[signed-by=%s] " % d["signed-by"][0] if d.get("signed-by") else ""
    for u in d.get("uris", []):
        for s in d.get("suites", []):
            print("deb %s%s %s %s" % (sb, u, s, " ".join(d.get("components", []))))
PY
	done
}
mapfile -t MIRRORS < <(sources | awk -v c="$CODENAME" '
	$0 ~ /(^| )main( |$)/ {
		u = 2
		if ($2 ~ /^\[/) { while (u <= NF && $u !~ /\]$/) u++; u++ }
		s = $(u + 1)
		if (s == c || s == c "-updates" || s == c "-security") {
			line = $1; for (i = 2; i <= u + 1; i++) line = line " " $i
			print line " main" } }' | sort -u)
[ ${#MIRRORS[@]} -gt 0 ] || { echo "SKIP: no '$CODENAME main' apt source on this host"; exit 77; }

# ---- build
t0=$(date +%s)
mkdir -p "$OUT"
rm -rf "$OUT/root" "$OUT"/*.tmp
[ -f "$OUT/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C drnic-interop -f "$OUT/id_ed25519"
echo "mmdebstrap $CODENAME (${#MIRRORS[@]} sources from the host's apt configuration)"
export OUT
if ! timeout 1500 mmdebstrap --mode=root --variant=minbase --quiet \
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
	--aptopt='Acquire::Check-Valid-Until "false"' --aptopt='Acquire::Check-Date "false"' \
	--include="$(IFS=,; echo "${GUEST_PKGS[*]}")" \
	--customize-hook="'$SELF' --hook \"\$1\"" \
	"$CODENAME" "$OUT/root" "${MIRRORS[@]}"; then
	rm -rf "$OUT/root"
	echo "FAIL: mmdebstrap could not build the root filesystem"
	exit 1
fi
t1=$(date +%s)
truncate -s 1536M "$OUT/rootfs.img.tmp"
mkfs.ext4 -q -F -L rxepeer -d "$OUT/root" "$OUT/rootfs.img.tmp"
mv "$OUT/rootfs.img.tmp" "$OUT/rootfs.img"
rm -rf "$OUT/root"
t2=$(date +%s)
echo "image: kernel $(cat "$OUT/kernel-version"), $(du -h "$OUT/rootfs.img" | cut -f1) used;" \
	"mmdebstrap $((t1 - t0)) s, mkfs $((t2 - t1)) s"
touch "$OUT/DONE"
