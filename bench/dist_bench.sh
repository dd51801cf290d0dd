#!/usr/bin/env bash
# Locus's process groups beside torch.distributed, both over Gloo, 2 ranks on loopback, one
# thread each, in the same run, ROUNDS rounds interleaved (the median of the rounds' medians is
# shown; two processes on two cores make single runs noisy); where Locus has MPI, a third column
# runs the same rows over Locus's mpi groups (`locus run --backend mpi`). torch.distributed's MPI
# backend is not compared: Debian's python3-torch is built without it (is_mpi_available() is False).
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
mpi=0
"$build"/bin/locus info | grep -qxF "  mpi: available" && command -v mpirun > /dev/null && mpi=1
for r in $(seq "$rounds"); do
  "$build"/bin/locus run --nproc-per-node 2 "$build"/bench/locus_dist_bench --json "$out/locus_$r.json" > "$out/locus.log"
  /usr/bin/python3 bench/torch_dist_bench.py --json "$out/torch_$r.json" > "$out/torch.log"
  if [ "$mpi" = 1 ]; then
    "$build"/bin/locus run --backend mpi --nproc-per-node 2 "$build"/bench/locus_dist_bench --backend mpi \
      --json "$out/locus_mpi_$r.json" > "$out/locus_mpi.log"
  fi
done
columns=(torch="$out/torch_*.json" locus="$out/locus_[0-9]*.json")
[ "$mpi" = 1 ] && columns+=(locus-mpi="$out/locus_mpi_*.json")
/usr/bin/python3 "$shared"/compare.py "${columns[@]}" --ratio
