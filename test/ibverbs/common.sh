# SPDX-License-Identifier: BSD-3-Clause
# Shared by the ibverbs tests: sourced, not run.
#   IBV_LIB   the build directory holding libibverbs.so.1 (first argument)

IBV_LIB=${1:?usage: $0 BUILD/lib/ibverbs}
[ -e "$IBV_LIB/libibverbs.so.1" ] || { echo "FAIL: no $IBV_LIB/libibverbs.so.1"; exit 1; }
FAIL=0
fail() { echo "FAIL: $*"; FAIL=1; }
ok() { echo "ok: $*"; }

# The Debian packages the tests run (README.md, "Set-up"). Installed when
# missing and we may; never skipped silently.
need_pkgs() {
	local missing=()
	command -v ibv_devinfo >/dev/null || missing+=(ibverbs-utils)
	command -v ib_write_lat >/dev/null || missing+=(perftest)
	command -v qperf >/dev/null || missing+=(qperf)
	command -v ucx_perftest >/dev/null || missing+=(ucx-utils)
	[ ${#missing[@]} = 0 ] && return 0
	echo "installing ${missing[*]} (README.md set-up)"
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >/dev/null 2>&1
	fi
	command -v ibv_devinfo >/dev/null && command -v ib_write_lat >/dev/null &&
		command -v qperf >/dev/null && command -v ucx_perftest >/dev/null ||
		{ echo "FAIL: cannot install ${missing[*]}: run 'apt-get install -y ibverbs-utils perftest qperf ucx-utils'"; exit 1; }
}

# Run a verbs program on drnic's library.
ibv() { LD_LIBRARY_PATH="$IBV_LIB" "$@"; }

# UCX looks at a device only when /dev/infiniband/<its dev_name> is a
# character device: the set-up script's step makes it (root only).
ucx_dev_node() {
	[ -c /dev/infiniband/uverbs0 ] ||
		"$(dirname "${BASH_SOURCE[0]}")/../../devtools/setup.sh" devnode >/dev/null
	[ -c /dev/infiniband/uverbs0 ]
}
