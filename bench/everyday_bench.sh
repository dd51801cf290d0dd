#!/usr/bin/env bash
# The everyday ops (sort, topk, cumsum, scatters, bmm, einsum, the Adam step with parameter
# groups) in Locus beside LibTorch 1.13, the same bodies in the same rounds, interleaved, 2
# threads each, in LibTorch's best configuration (OMP_WAIT_POLICY=PASSIVE, ../shared/bench's
# "passive"); the median of the rounds' medians is shown, with ratios (>1: Locus is faster):
#   bench/everyday_bench.sh [BUILD_DIR (default build/release)] [ROUNDS (default 3)]
# Needs Debian's libtorch-dev (scripts/install-deps.sh with LOCUS_WITH_TORCH=1).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
rounds=${2:-3}
lt_build=build/libtorch-bench
cmake -S bench/libtorch -B "$lt_build" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$lt_build" > /dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE
shared=../shared/bench
[ -f "$shared/compare.py" ] || { echo "no $shared/compare.py"; exit 2; }
for r in $(seq "$rounds"); do
  "$lt_build"/libtorch_everyday_bench --json "$out/libtorch_$r.json" > "$out/libtorch.log"
  "$build"/bench/locus_cpu_bench --only everyday --json "$out/locus_$r.json" > "$out/locus.log"
done
python3 "$shared"/compare.py libtorch="$out/libtorch_*.json" locus="$out/locus_*.json" --ratio
