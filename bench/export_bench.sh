#!/usr/bin/env bash
# Programs exported from PyTorch: Locus (load_exported) beside PyTorch eager and torch.compile
# running the same .pt2 files, in the same run, ROUNDS rounds interleaved (compare.py shows the
# median of the rounds' medians and the ratios against eager):
#   bench/export_bench.sh [BUILD_DIR (default build/release)] [ROUNDS (default 3)]
# Debian's torch 1.13 has no torch.export: the PyTorch side runs in a virtual environment this
# script creates (~/.cache/locus/torch-export-venv, or LOCUS_TORCH_VENV) with torch 2.15 from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
rounds=${2:-3}
venv=${LOCUS_TORCH_VENV:-$HOME/.cache/locus/torch-export-venv}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q torch==2.15.0 numpy
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
shared=../shared/bench
[ -f "$shared/compare.py" ] || { echo "no $shared/compare.py"; exit 2; }
"$venv/bin/python" bench/torch_export_bench.py --models "$out" --export 2> /dev/null
for r in $(seq "$rounds"); do
  "$build"/bench/locus_export_bench --models "$out" --json "$out/locus_$r.json" > "$out/locus.log"
  "$venv/bin/python" bench/torch_export_bench.py --models "$out" --json "$out/torch_$r.json" > "$out/torch.log" 2> /dev/null
  "$venv/bin/python" bench/torch_export_bench.py --models "$out" --json "$out/compiled_$r.json" --compile \
    > "$out/compiled.log" 2> /dev/null
done
/usr/bin/python3 "$shared"/compare.py torch="$out/torch_*.json" torch_compile="$out/compiled_*.json" \
  locus="$out/locus_*.json" --ratio
