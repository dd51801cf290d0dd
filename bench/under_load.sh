#!/usr/bin/env bash
# The MLP rows under load: Locus and LibTorch side by side while 0, 1 and 2 busy neighbour
# processes (`while :; do :; done`) share the cores, default environment on both sides, beside
# Locus on one thread (OMP_NUM_THREADS=1) under the same load. ROUNDS rounds interleaved; the
# table (bench/under_load_table.py) gives the median of the rounds' medians:
#   bench/under_load.sh [BUILD_DIR (default build/release)] [ROUNDS (default 2)] [LOADS (default "0 1 2")]
# BEFORE=path/to/locus_cpu_bench adds a column from another build (the previous commit's) run
# in the same rounds. Needs libtorch-dev (scripts/install-deps.sh with LOCUS_WITH_TORCH=1);
# ~1 min per round and load.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
rounds=${2:-2}
loads=${3:-"0 1 2"}
shared=../shared/bench
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
"$shared/build_libtorch_bench.sh" /tmp/locus-bench/build > "$out/libtorch_build.log" 2>&1 ||
  { cat "$out/libtorch_build.log"; exit 1; }
libtorch=/tmp/locus-bench/build/libtorch_bench
neighbours=()
stop_neighbours() { [ ${#neighbours[@]} -eq 0 ] || kill "${neighbours[@]}" 2> /dev/null || true; neighbours=(); }
trap stop_neighbours EXIT
for load in $loads; do
  for _ in $(seq "$load"); do
    bash -c 'while :; do :; done' &
    neighbours+=($!)
  done
  for r in $(seq "$rounds"); do
    "$build"/bench/locus_cpu_bench --only mlp --json "$out/locus_load${load}_r$r.json" > /dev/null
    OMP_NUM_THREADS=1 "$build"/bench/locus_cpu_bench --only mlp --json "$out/locus1_load${load}_r$r.json" > /dev/null
    "$libtorch" --only mlp --json "$out/libtorch_load${load}_r$r.json" > /dev/null 2>&1
    if [ -n "${BEFORE:-}" ]; then
      "$BEFORE" --only mlp --json "$out/before_load${load}_r$r.json" > /dev/null
    fi
  done
  stop_neighbours
done
python3 bench/under_load_table.py "$out" $loads
echo "JSON files: $out"
