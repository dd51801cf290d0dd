#!/usr/bin/env bash
# Run ON THE GPU MACHINE, in the repository root, with .gpu/pack.tar.xz carried from the build
# machine (scripts/gpu-pack.sh makes it: that image has nvcc and PyTorch but not Locus's
# Debian dependencies). Runs the whole test suite with the GPU tests enabled, every example on
# cuda, compute-sanitizer memcheck over the CUDA tests, the GPU benchmarks beside PyTorch's in
# the same call, `locus train --device cuda` and `locus bench`, and prints a short table last. Logs and JSON go to $OUT (or .gpu/out).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-.gpu/out}"
mkdir -p "$out"
pack=/tmp/locus-gpu
rm -rf "$pack" && mkdir -p "$pack"
tar -C "$pack" -xJf .gpu/pack.tar.xz || { echo "no .gpu/pack.tar.xz: run scripts/gpu-pack.sh here first"; exit 2; }

# cuBLAS 13 comes with the machine's CUDA toolkit or with PyTorch's wheels.
cublas_dirs=$(python3 - <<'PY' 2>/dev/null
import glob, os, site
dirs = ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"]
for sp in site.getsitepackages():
    dirs += glob.glob(os.path.join(sp, "nvidia", "*", "lib")) + glob.glob(os.path.join(sp, "nvidia", "cu13", "lib"))
print(":".join(d for d in dirs if glob.glob(os.path.join(d, "libcublas.so.13*"))))
PY
)
export LD_LIBRARY_PATH="$pack/lib:${cublas_dirs}:${LD_LIBRARY_PATH:-}"
export LOCUS_SIM_DEVICES=2

row() { printf '%-28s %s\n' "$1" "$2" >> "$out/summary.txt"; }
: > "$out/summary.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/gpu.txt" 2>&1
row "gpu" "$(head -1 "$out/gpu.txt")"

"$pack"/bin/locus info 2>&1 | tee "$out/info.txt"

# 1. The whole suite, GPU tests on (they skip only where the machine lacks what they need).
"$pack"/tests/locus_tests --gtest_output=xml:"$out/tests.xml" > "$out/tests.log" 2>&1
tests_rc=$?
tail -n 40 "$out/tests.log"
passed=$(grep -c '^\[       OK \]' "$out/tests.log")
failed=$(grep -c '^\[  FAILED  \] [A-Za-z]' "$out/tests.log")
skipped=$(grep -c '^\[  SKIPPED \] [A-Za-z].*(' "$out/tests.log")
row "tests" "$passed passed, $failed failed, $skipped skipped (rc $tests_rc)"
grep '^\[  SKIPPED \].*(' "$out/tests.log" | head -5

# 2. compute-sanitizer memcheck over the CUDA tests (value suites on cuda included).
if command -v compute-sanitizer >/dev/null; then
  compute-sanitizer --tool memcheck --error-exitcode 9 "$pack"/tests/locus_tests \
    --gtest_filter='Cuda*:*/cuda_0' > "$out/memcheck.log" 2>&1
  mc_rc=$?
  row "memcheck" "rc $mc_rc, $(grep -c 'Invalid\|Error' "$out/memcheck.log") error lines"
  tail -n 5 "$out/memcheck.log"
else
  row "memcheck" "compute-sanitizer not found"
fi

# 3. Every example on cuda.
ok=0; bad=""
for ex in "$pack"/examples/example_*; do
  if LOCUS_DEVICE=cuda "$ex" > "$out/$(basename "$ex").log" 2>&1; then ok=$((ok + 1)); else bad="$bad $(basename "$ex")"; fi
done
row "examples on cuda" "$ok ok${bad:+, failed:$bad}"

# 4. The main job on the GPU, and the tutorials' benchmark.
if ls "$pack"/data/*.gz >/dev/null 2>&1; then
  "$pack"/bin/locus train --device cuda --data "$pack"/data > "$out/train.log" 2>/dev/null
  row "locus train --device cuda" "rc $?, $(grep -h 'test accuracy:\|time per epoch' "$out/train.log" | tr '\n' ' ')"
else
  row "locus train --device cuda" "skipped: no dataset in the pack"
fi
"$pack"/bin/locus bench > "$out/bench_cli.txt" 2>&1
row "locus bench" "rc $?"
cat "$out/bench_cli.txt"

# 5. GPU benchmarks, Locus and PyTorch in the same call, then the ratios.
"$pack"/bench/locus_gpu_bench --json "$out/locus_gpu.json" > "$out/locus_bench.log" 2>&1
row "locus_gpu_bench" "rc $?"
PYTHONUNBUFFERED=1 python3 "$pack"/bench/torch_gpu_bench.py --json "$out/torch_gpu.json" > "$out/torch_bench.log" 2>&1
row "torch_gpu_bench" "rc $?"
python3 "$pack"/bench/compare.py torch="$out/torch_gpu.json" locus="$out/locus_gpu.json" --ratio --only gpu_ \
  > "$out/compare.txt" 2>&1

echo
echo "==== Locus GPU check ===="
cat "$out/compare.txt"
echo
cat "$out/summary.txt"
[ "$tests_rc" -eq 0 ] && [ -z "$bad" ]
