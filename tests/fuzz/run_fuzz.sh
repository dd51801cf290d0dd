#!/usr/bin/env bash
# Runs one fuzz target for SECONDS on a copy of its committed corpus (new inputs go to the copy):
#   run_fuzz.sh FUZZER CORPUS_DIR SECONDS [extra libFuzzer flags]
# Exit status: libFuzzer's (non-zero on a crash, leak or timeout; the reproducer is printed).
set -euo pipefail
fuzzer=$1 corpus=$2 seconds=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$corpus"/. "$work"/
cd "$work"
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$@" "$work" 2>&1 | tail -n 25
exit "${PIPESTATUS[0]}"
