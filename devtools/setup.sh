#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# drnic set-up for a Debian 12 machine. Both commands of the README are this
# script; it is safe to run again and again.
#
#   devtools/setup.sh run    install what is missing, reserve hugepages, build,
#                            then run the main job on the embedded default
#   devtools/setup.sh test   the same set-up, then every test suite
#                            (.ci/run runs exactly this)
#   devtools/setup.sh interop   the same set-up, then only the rdma_rxe interop suite
#   devtools/setup.sh deps|hugepages|build   one step only
#
# Environment: DRNIC_BUILD (build dir, default ./build), DRNIC_HUGEPAGES
# (2 MiB pages to reserve, default 1024), DRNIC_NO_HUGE=1 (never use them),
# DRNIC_SKIP_ASAN=1 (test: skip the sanitizer build), DRNIC_SKIP_INTEROP=1
# (test: skip the rdma_rxe VM suite).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${DRNIC_BUILD:-$ROOT/build}
ASAN_BUILD=${DRNIC_ASAN_BUILD:-$ROOT/build-asan}
PAGES=${DRNIC_HUGEPAGES:-1024}

# Everything the project builds, tests and benchmarks with, from Debian's archive.
PACKAGES=(
	dpdk dpdk-dev libdpdk-dev libnuma-dev libisal-dev libcunit1-dev zlib1g-dev
	libibverbs-dev meson ninja-build pkg-config python3-pyelftools gcc
	clang libclang-rt-14-dev libhugetlbfs-bin tshark iproute2
	ibverbs-utils perftest qperf ucx-utils gnuplot-nox sockperf
	rdmacm-utils librdmacm-dev
	qemu-system-x86 qemu-utils mmdebstrap tcpdump python3-scapy
)

say() { printf '[setup] %s\n' "$*"; }
is_root() { [ "$(id -u)" -eq 0 ]; }

step_deps() {
	local missing=() p
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
			|| missing+=("$p")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		say "packages: all ${#PACKAGES[@]} present"
		return 0
	fi
	if ! is_root; then
		say "packages missing: ${missing[*]}"
		say "not root: cannot install them; run as root or: sudo apt-get install ${missing[*]}"
		return 1
	fi
	say "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
	say "packages installed"
}

free_hugepages() { awk '/^HugePages_Free:/ {print $2}' /proc/meminfo; }
hugetlbfs_mounted() { grep -q ' hugetlbfs ' /proc/mounts; }

step_hugepages() {
	local total
	if [ "${DRNIC_NO_HUGE:-0}" != 0 ]; then
		say "hugepages: DRNIC_NO_HUGE is set; running with --no-huge"
		return 0
	fi
	if ! is_root; then
		say "hugepages: not root, cannot reserve or mount; $(free_hugepages) free," \
			"$(hugetlbfs_mounted && echo mounted || echo 'no hugetlbfs mounted')"
		say "hugepages: programs fall back to --no-huge when these are not enough"
		return 0
	fi
	total=$(cat /proc/sys/vm/nr_hugepages)
	if [ "$total" -lt "$PAGES" ]; then
		echo "$PAGES" > /proc/sys/vm/nr_hugepages 2>/dev/null || true
		total=$(cat /proc/sys/vm/nr_hugepages)
	fi
	if ! hugetlbfs_mounted; then
		mkdir -p /dev/hugepages
		mount -t hugetlbfs -o pagesize=2M nodev /dev/hugepages 2>/dev/null || true
	fi
	if [ "$total" -gt 0 ] && hugetlbfs_mounted; then
		say "hugepages: $total x 2 MiB reserved ($(free_hugepages) free), hugetlbfs mounted"
	else
		say "hugepages: this machine does not allow them ($total reserved," \
			"$(hugetlbfs_mounted && echo mounted || echo 'mount refused')); running with --no-huge"
	fi
}

# UCX uses a verbs device only when /dev/infiniband/<dev_name> is a character
# device (it never opens it); without RDMA kernel modules there is none. The
# drop-in's first device is uverbs0: make it with /dev/null's numbers (an
# existing node is left alone). lib/ibverbs/README.md says why.
step_devnode() {
	[ -c /dev/infiniband/uverbs0 ] && return 0
	if ! is_root; then
		say "/dev/infiniband/uverbs0: not root, cannot make it (UCX will not see drnic)"
		return 0
	fi
	mkdir -p /dev/infiniband && mknod -m 0666 /dev/infiniband/uverbs0 c 1 3 &&
		say "made /dev/infiniband/uverbs0 (for UCX; a /dev/null alias)" ||
		say "/dev/infiniband/uverbs0: mknod refused (UCX will not see drnic)"
}

# The steps run in an && list, where set -e does not stop a function at a
# failed command: each failure returns by hand.
step_build() {
	if [ ! -f "$BUILD/build.ninja" ]; then
		meson setup "$BUILD" "$ROOT" >/dev/null || { say "meson setup failed"; return 1; }
	fi
	ninja -C "$BUILD" >/dev/null || { say "build failed (ninja -C $BUILD)"; return 1; }
	say "built in $BUILD"
}

# The sanitizer build: clang, ASan + UBSan, with the libFuzzer targets.
step_build_asan() {
	if [ ! -f "$ASAN_BUILD/build.ninja" ]; then
		CC=clang meson setup "$ASAN_BUILD" "$ROOT" -Dfuzz=true -Db_lto=false \
			-Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized \
			>/dev/null || { say "meson setup (ASan) failed"; return 1; }
	fi
	ninja -C "$ASAN_BUILD" >/dev/null || { say "build failed (ninja -C $ASAN_BUILD)"; return 1; }
	say "built with ASan+UBSan in $ASAN_BUILD"
}

step_main() {
	say "main job: drnic-perf loopback (one engine lcore, the loopback link):"
	say "RDMA WRITE latency 2 B and bandwidth 64 KiB beside the same-run floors"
	"$BUILD/app/drnic-perf" loopback
}

# Runs `meson test` in build dir $1 with the remaining arguments, and adds its
# results to the totals. A failed suite does not stop the others.
PASSED=0 FAILED=0 SKIPPED=0
run_suites() {
	local dir=$1 counts rc=0
	shift
	rm -f "$dir/meson-logs/testlog.json"
	meson test -C "$dir" --no-rebuild --print-errorlogs "$@" || rc=$?
	if [ -f "$dir/meson-logs/testlog.json" ]; then
		counts=$(python3 - "$dir/meson-logs/testlog.json" <<'PY'
import json, sys
p = f = s = 0
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    if r in ("OK", "EXPECTEDFAIL"): p += 1
    elif r == "SKIP": s += 1
    else: f += 1
print(p, f, s)
PY
)
		read -r p f s <<<"$counts"
		PASSED=$((PASSED + p)) FAILED=$((FAILED + f)) SKIPPED=$((SKIPPED + s))
	elif [ "$rc" -ne 0 ]; then
		FAILED=$((FAILED + 1))
	fi
}

step_test() {
	local t0=$SECONDS
	say "tests: unit, fast, soak, hosts, adversarial, ibverbs, interop and perf suites; then unit," \
		"adversarial and fuzz under ASan+UBSan"
	run_suites "$BUILD" --suite unit --suite fast --suite soak --suite hosts --suite adversarial \
		--suite ibverbs
	if [ "${DRNIC_SKIP_INTEROP:-0}" = 0 ]; then
		say "interop: drnic against Linux Soft-RoCE (rdma_rxe) in a qemu VM;" \
			"the first run builds the VM image (2-4 min, cached in /var/tmp/drnic-interop)"
		run_suites "$BUILD" --suite interop
	fi
	run_suites "$BUILD" --suite perf --verbose
	if [ "${DRNIC_SKIP_ASAN:-0}" = 0 ]; then
		# The adversarial suite again: its misuse cases (dereg and free under
		# in-flight WRs) must leave no sanitizer report. UBSan's reports fail
		# the test too (by default it prints and goes on).
		if step_build_asan; then
			UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
				run_suites "$ASAN_BUILD" --suite unit --suite adversarial --suite fuzz
		else
			FAILED=$((FAILED + 1))
		fi
	fi
	say "tests took $((SECONDS - t0)) s"
	echo "total: $PASSED passed, $FAILED failed, $SKIPPED skipped"
	[ "$FAILED" -eq 0 ]
}

case "${1:-run}" in
deps) step_deps ;;
hugepages) step_hugepages ;;
devnode) step_devnode ;;
build) step_deps && step_build ;;
run) step_deps && step_hugepages && step_devnode && step_build && step_main ;;
test) step_deps && step_hugepages && step_devnode && step_build && step_test ;;
interop)
	step_deps && step_hugepages && step_build
	run_suites "$BUILD" --suite interop
	echo "total: $PASSED passed, $FAILED failed, $SKIPPED skipped"
	[ "$FAILED" -eq 0 ]
	;;
*)
	echo "usage: $0 run|test|interop|deps|hugepages|devnode|build" >&2
	exit 2
	;;
esac
