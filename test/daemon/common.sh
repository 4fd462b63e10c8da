# SPDX-License-Identifier: BSD-3-Clause
# What test/daemon/daemon.sh and figures.sh share: sourced, not run. The
# sourcing script sets DRNICD, CTL, W (its directory), SOCK (its daemon's
# socket), DROPIN (the drop-in libibverbs), FAILS=0 and PIDS=().

say() { printf '%s\n' "$*"; }
fail() {
	say "FAIL: $*"
	FAILS=$((FAILS + 1))
}

# wait_for CMD...: until it succeeds, 30 s at most (a poll, not a sleep
# standing in for an event: each try checks the state itself).
wait_for() {
	local i
	for i in $(seq 300); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

listening() { ss -Hltn "sport = :$1" | grep -q .; }

# start_daemon SOCKET PREFIX LOG [ARGS...]: a daemon, up when its socket
# answers (its pid in DPID).
start_daemon() {
	"$DRNICD" -s "$1" --file-prefix "$2" -m 256 "${@:4}" >"$3" 2>&1 &
	DPID=$!
	PIDS+=("$DPID")
	if ! wait_for "$CTL" -s "$1" list; then
		fail "drnicd did not start:"
		sed 's/^/  | /' "$3"
		return 1
	fi
}

# pair_end WHAT NAME SERVER_PID CLIENT_EXIT: wait for the server; both must
# have exited 0, else fail and show W/NAME.server and W/NAME.client.
pair_end() {
	local src
	wait "$3"
	src=$?
	if [ "$4" != 0 ] || [ $src != 0 ]; then
		fail "$1: client exit $4, server exit $src"
		sed 's/^/  server| /' "$W/$2.server"
		sed 's/^/  client| /' "$W/$2.client"
		return 1
	fi
}

# vpair NAME PORT PROG ARGS...: an unmodified verbs program as server and
# client (-p PORT; the client names 127.0.0.1), both attached through the
# drop-in libibverbs, no configuration file.
vpair() {
	local name=$1 port=$2
	shift 2
	env -u DRNIC_CONFIG LD_LIBRARY_PATH="$DROPIN" DRNIC_DAEMON="$SOCK" taskset -c 0 \
		timeout 120 "$@" -p "$port" >"$W/$name.server" 2>&1 &
	local spid=$!
	PIDS+=("$spid")
	wait_for listening "$port" || fail "$name: the server does not listen"
	env -u DRNIC_CONFIG LD_LIBRARY_PATH="$DROPIN" DRNIC_DAEMON="$SOCK" taskset -c 0 \
		timeout 120 "$@" -p "$port" 127.0.0.1 >"$W/$name.client" 2>&1
	pair_end "$name ($*)" "$name" "$spid" $?
}

# perftest's result line (the one after its "#bytes" header).
pt_result() { grep -A1 '#bytes' "$1" | tail -1 | tr -s ' \t' ' '; }

