#!/usr/bin/env bash
# Mixed precision on the CPU: Locus's MLP step under AutocastGuard(kCPU, kBFloat16) beside
# torch.autocast("cpu", torch.bfloat16) of Debian's PyTorch, 2 threads each, ROUNDS rounds
# interleaved (the median of the rounds' medians is shown):
#   bench/amp_bench.sh [BUILD_DIR (default build/release)] [ROUNDS (default 3)]
# Needs Debian's python3-torch (scripts/install-deps.sh with LOCUS_WITH_TORCH=1).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
rounds=${2:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE
shared=../shared/bench
[ -f "$shared/compare.py" ] || { echo "no $shared/compare.py"; exit 2; }
for r in $(seq "$rounds"); do
  "$build"/bench/locus_cpu_bench --only amp,mlp --json "$out/locus_$r.json" > "$out/locus.log"
  /usr/bin/python3 bench/torch_amp_bench.py --device cpu --json "$out/torch_$r.json" > "$out/torch.log"
done
/usr/bin/python3 "$shared"/compare.py torch="$out/torch_*.json" locus="$out/locus_*.json" --ratio 2>&1 | grep -E "name|mlp_(amp_bf16_)?train_step_sgd|---"
