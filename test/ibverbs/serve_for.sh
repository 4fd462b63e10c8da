#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# serve_for.sh SECONDS COMMAND...: run a server that serves until killed
# (cmtime's) for SECONDS; exit 0 when it was still serving then or ended
# well, its own status otherwise.
secs=$1
shift
timeout "$secs" "$@"
rc=$?
[ $rc = 124 ] && exit 0
exit $rc
