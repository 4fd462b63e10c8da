#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run a libFuzzer target for a bounded number of executions over a seed corpus.
#
#   run_fuzz.sh TARGET SEED_DIR RUNS ARTIFACT_DIR [LIBFUZZER_FLAG...]
#
# New inputs go to a scratch directory that is removed afterwards, so every run
# starts from the same seeds with the same random seed. A crashing input is
# kept in ARTIFACT_DIR and the exit status is non-zero.
set -eu
target=$1 seeds=$2 runs=$3 artifacts=$4
shift 4

if [ ! -d "$seeds" ]; then
    echo "run_fuzz: no seed corpus at $seeds (it is built by ninja)" >&2
    exit 1
fi
mkdir -p "$artifacts"
work=$(mktemp -d "${TMPDIR:-/tmp}/drnic-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
echo "run_fuzz: $(basename "$target"): $runs runs over $(ls "$seeds" | wc -l) seeds"
"$target" -runs="$runs" -seed=1 -max_len=9100 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$@" "$work" "$seeds"
