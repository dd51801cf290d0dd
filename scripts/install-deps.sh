#!/usr/bin/env bash
# Installs what Locus needs to build and test on Debian 12 (bookworm). Idempotent; quick
# when everything is already there. Set LOCUS_WITH_TORCH=1 to add PyTorch and LibTorch for the benchmarks.
set -euo pipefail
packages=(cmake ninja-build g++ ccache libopenblas-openmp-dev libgtest-dev libbenchmark-dev libcli11-dev zlib1g-dev
          dataset-fashion-mnist libgloo-dev)
# bfloat16 products on the CPU (autocast): oneDNN's matmul; OpenBLAS has no bfloat16 GEMM here.
packages+=(libdnnl-dev)
# The Debian packages and their check (scripts/package.sh, scripts/check-install.sh): cpack's
# dpkg-shlibdeps needs dpkg-dev and file; the consumer is also built through pkg-config.
packages+=(dpkg-dev file pkg-config)
# The fuzz targets (tests/fuzz, the fuzz preset): clang with libFuzzer and LLVM's OpenMP.
packages+=(clang libclang-rt-14-dev libomp-14-dev)
# The two-node launcher test: a Redis store on 127.0.0.1 (the server only; nothing starts it as a service).
packages+=(redis-server)
# The DLPack consumer test: NumPy reading Locus tensors through a test-only Python module.
packages+=(pybind11-dev python3-dev python3-numpy)
[ "${LOCUS_WITH_TORCH:-0}" = 1 ] && packages+=(python3-torch libtorch-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  echo "installing: ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
