#!/usr/bin/env bash
# `locus bench` at its smallest: every device's row shows the median and range of its rounds, a
# speedup (or "within noise"), and the JSON carries the rounds, the ranges and the speedups.
set -euo pipefail
locus="$1"
json=$(mktemp)
trap 'rm -f "$json"' EXIT
out=$("$locus" bench --batch-sizes 8 --seconds 0.03 --rounds 3 --json "$json")
echo "$out"
echo "$out" | grep -q '^median (min-max) ms of 3 rounds, interleaved across devices'
echo "$out" | grep -qE '^cpu +8 +[0-9.]+ \([0-9.]+-[0-9.]+\) +[0-9.]+ \([0-9.]+-[0-9.]+\) +[0-9]+  1\.00x$'
echo "$out" | grep -qE '^sim:0 +8 +[0-9.]+ \([0-9.]+-[0-9.]+\) +[0-9.]+ \([0-9.]+-[0-9.]+\) +[0-9]+  (~[0-9.]+x \(within noise\)|[0-9.]+x)$'
cat "$json"
for key in '"rounds": 3, "rows"' '"device": "sim:0", "batch": 8, "rounds": 3' '"forward_ms_min"' '"train_step_ms_max"' \
           '"speedup_vs_cpu_min"' '"within_noise": '; do
  grep -qF "$key" "$json" || { echo "missing $key in the JSON"; exit 1; }
done
# Nonsense options are refused, not run.
if "$locus" bench --rounds 0 2>/dev/null; then echo "--rounds 0 was accepted"; exit 1; fi
