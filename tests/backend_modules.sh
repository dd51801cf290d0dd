#!/usr/bin/env bash
# The CUDA module as `locus info` meets it (Note [Backend modules]), on a machine without a GPU:
#  - no driver: the module is not loaded, and the process maps no CUDA library;
#  - a driver (the CUDA toolkit's stub libcuda, which fails every call): the module is found
#    beside liblocus, loaded, and its runtime gives the driver's story;
#  - liblocus copied where no module is: "not installed", naming where it looked;
#  - the stub driver with the test suite's error-message tests: cuda is listed among the
#    devices that implement an op once its kernels are in the process.
# tests/backend_modules.sh LOCUS LIBLOCUS LOCUS_TESTS STUB_LIBCUDA; exit 77 (skip) without the
# CUDA module or the stub.
set -euo pipefail
locus="$1" liblocus="$2" tests="$3" stub="$4"
module="$(dirname "$liblocus")/liblocus_cuda.so.0"
[ -f "$module" ] && [ -f "$stub" ] || { echo "no CUDA module ($module) or stub driver ($stub): skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
expect_line() {  # PATTERN FILE
  grep -qF -- "$1" "$2" || { cat "$2"; fail "expected a line with: $1"; }
  echo "ok: $1"
}
export LOCUS_SIM_DEVICES=2

# The export tables (Note [Export table]): a module's own function is its one entry point; the
# core exports no backend's internals.
strong=$(nm -D --defined-only "$module" | awk '$2 == "T" {print $3}' | sort | tr '\n' ' ')
[ "$strong" = "locus_module_entry " ] || fail "liblocus_cuda exports functions: $strong"
echo "ok: liblocus_cuda.so.0 exports only locus_module_entry"
if nm -DC --defined-only "$liblocus" | grep -E "locus::(cuda_backend|sim_backend)::|\(anonymous namespace\)"; then
  fail "liblocus exports a backend's internals (above)"
fi
echo "ok: liblocus exports $(nm -D --defined-only "$liblocus" | awk '$2 == "T"' | wc -l) functions, none of a backend's internals"

# No driver (this machine, or LD_LIBRARY_PATH without one): nothing of CUDA in the process.
"$locus" info > "$work/none.txt"
if grep -q "no NVIDIA driver found" "$work/none.txt"; then
  expect_line "cuda: not available: no NVIDIA driver found (libcuda.so.1 could not be loaded)" "$work/none.txt"
fi

# A driver that is present but fails: the module loads and its runtime says why.
mkdir -p "$work/driver"
cp "$stub" "$work/driver/libcuda.so.1"
LD_LIBRARY_PATH="$work/driver" "$locus" info > "$work/stub.txt"
expect_line "cuda: not available: CUDA initialisation failed: CUDA driver is a stub library" "$work/stub.txt"
expect_line "nccl: not available: NCCL needs cuda devices, and cuda is not available: CUDA initialisation failed" "$work/stub.txt"

# liblocus where no module is installed.
mkdir -p "$work/lonely"
cp -L "$liblocus" "$work/lonely/liblocus.so.0"
LD_LIBRARY_PATH="$work/lonely:$work/driver" "$locus" info > "$work/lonely.txt"
expect_line "cuda: not available: the cuda backend module (liblocus_cuda.so.0) is not installed: looked in $work/lonely (LOCUS_BACKEND_PATH adds directories)" "$work/lonely.txt"
# ... and LOCUS_BACKEND_PATH pointing at the build's modules brings it back.
LOCUS_BACKEND_PATH="$(dirname "$module")" LD_LIBRARY_PATH="$work/lonely:$work/driver" "$locus" info > "$work/path.txt"
expect_line "cuda: not available: CUDA initialisation failed: CUDA driver is a stub library" "$work/path.txt"

# The tests whose messages list the devices implementing an op, with the module loaded.
LD_LIBRARY_PATH="$work/driver" "$tests" --gtest_brief=1 \
  --gtest_filter='PublicOpErrors.*:Fallback.*:BackendModule.*:DeviceErrors.*:Cuda*' > "$work/tests.txt" 2>&1 ||
  { tail -50 "$work/tests.txt"; fail "the tests with the stub driver"; }
echo "ok: $(grep -E '^\[  PASSED  \]' "$work/tests.txt") with the stub driver"
