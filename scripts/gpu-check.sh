#!/usr/bin/env bash
# Run ON THE GPU MACHINE, in the repository root, with .gpu/pack.tar.xz carried from the build
# machine (scripts/gpu-pack.sh makes it: that image has nvcc and PyTorch but not Locus's
# Debian dependencies).
#
#   scripts/gpu-check.sh [stage...]     stages: tests memcheck run bench (default: all four)
#
# The device tool gives one call at most 600 s, brings back at most 8 files and the last
# 12,000 characters of output, so the work is split into stages that fit one call each
# (`tests memcheck` in one call, `run bench` in the next is the usual split), every log goes
# into one archive ($OUT/gpu-logs-<stages>.tar.gz), and the last lines printed are the short
# table and then the names of the tests that failed.
#   tests     the whole suite with the GPU tests on (`locus info` first)
#   memcheck  compute-sanitizer memcheck over the CUDA tests (value suites on cuda included),
#             without the test that runs out of memory on purpose
#   run       every example on cuda, `locus train --device cuda`, `locus bench`
#   bench     the GPU benchmarks, Locus's and PyTorch's in the same call, then the ratios
set -uo pipefail
cd "$(dirname "$0")/.."
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(tests memcheck run bench)
out="${OUT:-.gpu/out}"
logs="$out/logs"
mkdir -p "$logs"
pack=/tmp/locus-gpu
if [ ! -x "$pack/tests/locus_tests" ]; then
  rm -rf "$pack" && mkdir -p "$pack"
  tar -C "$pack" -xJf .gpu/pack.tar.xz || { echo "no .gpu/pack.tar.xz: run scripts/gpu-pack.sh here first"; exit 2; }
fi

# cuBLAS 13, cuDNN 9 and NCCL 2 come with the machine's CUDA toolkit or with PyTorch's wheels (NCCL's
# 200 MB and cuDNN's 1 GB would not fit the pack). Only Locus's own binaries see these paths: PyTorch must load
# its own copies, not the pack's.
cublas_dirs=$(python3 - <<'PY' 2>/dev/null
import glob, os, site
dirs = ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"]
for sp in site.getsitepackages():
    dirs += glob.glob(os.path.join(sp, "nvidia", "*", "lib")) + glob.glob(os.path.join(sp, "nvidia", "cu13", "lib"))
print(":".join(d for d in dirs if any(glob.glob(os.path.join(d, lib)) for lib in ("libcublas.so.13*", "libnccl.so.2*", "libcudnn.so.9*", "libnvrtc.so.13*"))))
PY
)
# liblocus.so and the CUDA and NCCL modules beside it in $pack/lib (Note [Backend modules]).
locus_env() {
  LD_LIBRARY_PATH="$pack/lib:${cublas_dirs}:${LD_LIBRARY_PATH:-}" LOCUS_SIM_DEVICES=2 \
    LOCUS_TEST_MODULES="$pack/tests/backend_module" "$@"
}

summary="$out/summary.txt"
row() { printf '%-28s %s\n' "$1" "$2" >> "$summary"; }
: > "$summary"
failed_names=""
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$logs/gpu.txt" 2>&1
row "gpu" "$(head -1 "$logs/gpu.txt")"

find_sanitizer() {
  command -v compute-sanitizer && return
  local c
  for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer \
           /opt/nvidia/*/compute-sanitizer /usr/local/cuda-*/bin/compute-sanitizer; do
    [ -x "$c" ] && { echo "$c"; return; }
  done
  find / -xdev -name compute-sanitizer -type f -perm -u+x 2>/dev/null | head -1
}

stage_tests() {
  locus_env "$pack"/bin/locus info > "$logs/info.txt" 2>&1
  # The CUDA backend comes from its module (Note [Backend modules]): loaded, or why not.
  row "locus info: cuda" "$(grep -m1 '^  cuda:' "$logs/info.txt" | sed 's/^  cuda: //')"
  locus_env timeout 420 "$pack"/tests/locus_tests --gtest_output=xml:"$logs/tests.xml" > "$logs/tests.log" 2>&1
  local rc=$?
  local passed failed skipped
  passed=$(grep -c '^\[       OK \]' "$logs/tests.log")
  failed=$(grep -c '^\[  FAILED  \] [A-Za-z]' "$logs/tests.log")
  skipped=$(grep -c '^\[  SKIPPED \] [A-Za-z].*(' "$logs/tests.log")
  row "tests" "$passed passed, $failed failed, $skipped skipped (rc $rc)"
  # The failing assertions, briefly, before the table; their names come last.
  grep -B1 -A6 'Failure$' "$logs/tests.log" | head -n 120
  failed_names+=$(grep '^\[  FAILED  \] [A-Za-z].*(' "$logs/tests.log" | sed 's/^/tests: /')$'\n'
  [ "$rc" -eq 124 ] && failed_names+="tests: timed out; last test started: $(grep '^\[ RUN' "$logs/tests.log" | tail -1)"$'\n'
}

stage_memcheck() {
  local cs
  cs=$(find_sanitizer)
  if [ -z "$cs" ]; then row "memcheck" "compute-sanitizer not found"; return; fi
  # The deliberate out-of-memory test makes cudaMalloc fail on purpose: not a memcheck finding.
  locus_env timeout 240 "$cs" --tool memcheck --error-exitcode 9 "$pack"/tests/locus_tests \
    --gtest_filter='Cuda*:*/cuda_0:-*Oom*:*OutOfMemory*' > "$logs/memcheck.log" 2>&1
  local rc=$?
  row "memcheck" "rc $rc, $(grep -c '^========= Invalid\|^========= Program hit' "$logs/memcheck.log") findings"
  grep -m 20 -A4 '^========= Invalid\|^========= Program hit' "$logs/memcheck.log"
  failed_names+=$(grep '^\[  FAILED  \] [A-Za-z].*(' "$logs/memcheck.log" | sed 's/^/memcheck: /')$'\n'
}

stage_run() {
  local ok=0 bad="" ex
  for ex in "$pack"/examples/example_*; do
    if LOCUS_DEVICE=cuda LOCUS_FORTUNES="$pack/data/fortunes/fortunes" locus_env timeout 120 "$ex" > "$logs/$(basename "$ex").log" 2>&1; then ok=$((ok + 1))
    else bad="$bad $(basename "$ex")"; tail -n 5 "$logs/$(basename "$ex").log"; fi
  done
  row "examples on cuda" "$ok ok${bad:+, failed:$bad}"
  [ -n "$bad" ] && failed_names+="examples:$bad"$'\n'
  if ls "$pack"/data/*.gz >/dev/null 2>&1; then
    locus_env timeout 240 "$pack"/bin/locus train --device cuda --data "$pack"/data > "$logs/train.log" 2>&1
    row "locus train --device cuda" "rc $?, $(grep -h 'test accuracy:\|time per epoch' "$logs/train.log" | tr '\n' ' ')"
    local amp
    for amp in fp16 bf16; do
      locus_env timeout 240 "$pack"/bin/locus train --device cuda --amp "$amp" --data "$pack"/data > "$logs/train_$amp.log" 2>&1
      row "locus train --device cuda --amp $amp" "rc $?, $(grep -h 'test accuracy:\|time per epoch' "$logs/train_$amp.log" | tr '\n' ' ')"
    done
    # DDP over NCCL as `locus train` runs it under the launcher: as many ranks as GPUs.
    local gpus
    gpus=$(nvidia-smi -L | wc -l)
    locus_env timeout 240 "$pack"/bin/locus run --nproc-per-node "$gpus" "$pack"/bin/locus train --device cuda --epochs 3 \
      --data "$pack"/data > "$logs/train_ddp.log" 2>&1
    row "locus train, $gpus rank(s), nccl" "rc $?, $(grep -h 'over nccl\|test accuracy:' "$logs/train_ddp.log" | sed 's/^\[rank0\]: //' | tr '\n' ' ')"
  else
    row "locus train --device cuda" "skipped: no dataset in the pack"
  fi
  if ls "$pack"/data/fortunes/fortunes >/dev/null 2>&1; then
    locus_env timeout 240 "$pack"/bin/locus charlm --device cuda --data "$pack"/data/fortunes --steps 200 --sample 80 \
      > "$logs/charlm.log" 2>&1
    row "locus charlm --device cuda (200 steps)" "rc $?, $(grep -h '^step 200\|time per step' "$logs/charlm.log" | tr '\n' ' ')"
  else
    row "locus charlm --device cuda" "skipped: no fortunes in the pack"
  fi
  locus_env timeout 120 "$pack"/bin/locus bench > "$logs/bench_cli.txt" 2>&1
  row "locus bench" "rc $?"
  cat "$logs/bench_cli.txt"
}

stage_bench() {
  locus_env timeout 240 "$pack"/bench/locus_gpu_bench --json "$logs/locus_gpu.json" > "$logs/locus_bench.log" 2>&1
  row "locus_gpu_bench" "rc $?"
  PYTHONUNBUFFERED=1 timeout 240 python3 "$pack"/bench/torch_gpu_bench.py --only copy,ew,mm,transfer,alloc,overhead,mlp --json "$logs/torch_gpu.json" > "$logs/torch_bench.log" 2>&1
  row "torch_gpu_bench" "rc $?"
  # The opt-in groups (cnn, attention) on both sides, each with its own time budget.
  locus_env timeout 240 "$pack"/bench/locus_gpu_bench --only cnn,attention --json "$logs/locus_gpu_cnn_attention.json" \
    > "$logs/locus_bench_cnn_attention.log" 2>&1
  row "locus_gpu_bench --only cnn,attention" "rc $?"
  PYTHONUNBUFFERED=1 timeout 240 python3 "$pack"/bench/torch_gpu_bench.py --only cnn,attention \
    --json "$logs/torch_gpu_cnn_attention.json" > "$logs/torch_bench_cnn_attention.log" 2>&1
  row "torch_gpu_bench --only cnn,attention" "rc $?"
  PYTHONUNBUFFERED=1 timeout 120 python3 "$pack"/bench/torch_amp_bench.py --device cuda --json "$logs/torch_gpu_amp.json" \
    > "$logs/torch_amp_bench.log" 2>&1
  row "torch_amp_bench (autocast)" "rc $?"
  python3 "$pack"/bench/compare.py torch="$logs/torch_gpu*.json" locus="$logs/locus_gpu*.json" --ratio --only gpu_ \
    > "$out/compare.txt" 2>&1
  cp "$out/compare.txt" "$logs/"
}

for s in "${stages[@]}"; do
  case "$s" in
    tests|memcheck|run|bench) "stage_$s" ;;
    *) echo "unknown stage '$s' (tests memcheck run bench)"; exit 2 ;;
  esac
done

tag=$(IFS=-; echo "${stages[*]}")
tar -C "$out" -czf "$out/gpu-logs-$tag.tar.gz" logs summary.txt && rm -rf "$logs"
echo
echo "==== Locus GPU check ($tag) ===="
[ -f "$out/compare.txt" ] && cat "$out/compare.txt"
cat "$summary"
failed_names=$(printf '%s' "$failed_names" | sed '/^$/d')
if [ -n "$failed_names" ]; then
  echo "---- failed ----"
  echo "$failed_names"
  exit 1
fi
