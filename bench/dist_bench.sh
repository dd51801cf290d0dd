#!/usr/bin/env bash
# Locus's process groups beside torch.distributed, both over Gloo, 2 ranks on loopback, one
# thread each, in the same run, ROUNDS rounds interleaved (the median of the rounds' medians is
# shown; two processes on two cores make single runs noisy):
#   bench/dist_bench.sh [BUILD_DIR (default build/release)] [ROUNDS (default 3)]
# Needs Debian's python3-torch (scripts/install-deps.sh with LOCUS_WITH_TORCH=1).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OMP_NUM_THREADS=1
shared=../shared/bench
[ -f "$shared/compare.py" ] || { echo "no $shared/compare.py"; exit 2; }
rounds=${2:-3}
for r in $(seq "$rounds"); do
  "$build"/bin/locus run --nproc-per-node 2 "$build"/bench/locus_dist_bench --json "$out/locus_$r.json" > "$out/locus.log"
  /usr/bin/python3 bench/torch_dist_bench.py --json "$out/torch_$r.json" > "$out/torch.log"
done
/usr/bin/python3 "$shared"/compare.py torch="$out/torch_*.json" locus="$out/locus_*.json" --ratio
