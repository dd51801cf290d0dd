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
# PyTorch's zip checkpoints (`locus::load` of a torch.save file) and torch.export's .pt2
# programs (`locus::load_exported`): libzip reads the archive, nlohmann-json the program.
packages+=(libzip-dev nlohmann-json3-dev)
# The sanitizer builds and their fuzz targets (the sanitize and tsan presets): clang with its
# sanitizer runtimes, libFuzzer and LLVM's OpenMP.
packages+=(clang libclang-rt-14-dev libomp-14-dev)
# The character-level language model's text (`locus charlm`, examples/char_lm.cpp): ~2.6 MB of
# quotes in /usr/share/games/fortunes.
packages+=(fortunes)
# The two-node launcher test: a Redis store on 127.0.0.1 (the server only; nothing starts it as a service).
packages+=(redis-server)
# MPI process groups (init_process_group("mpi"), `locus run --backend mpi`): Open MPI's headers and
# library, and its mpirun.
packages+=(libopenmpi-dev openmpi-bin)
# The DLPack consumer test: NumPy reading Locus tensors through a test-only Python module.
packages+=(pybind11-dev python3-dev python3-numpy)
[ "${LOCUS_WITH_TORCH:-0}" = 1 ] && packages+=(python3-torch libtorch-dev)
# cuDNN's graph API (the CUDA convolutions): NVIDIA's cudnn-frontend headers come from its PyPI
# wheel, fetched with pip (below), only where the CUDA toolkit carries cuDNN.
cuda_include=/usr/local/cuda/include
[ -f "$cuda_include/cudnn.h" ] && packages+=(python3-pip)
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

# cudnn-frontend, header-only: the pinned wheel's include/ unpacked into third_party/cudnn-frontend
# (git-ignored), where CMake looks for it. Nothing is installed into Python. Version 1.32.0 builds
# against the toolkit's cuDNN 9.19 and runs on any cuDNN 9 from 9.0 on.
cudnn_frontend_version=1.32.0
cudnn_frontend_sha256=c6006556017a4d1c914c52a556c71b1267f2d6a0500f742e7b4edef539878df0
frontend_dir="$(cd "$(dirname "$0")/.." && pwd)/third_party/cudnn-frontend"
if [ -f "$cuda_include/cudnn.h" ] && [ "$(cat "$frontend_dir/VERSION" 2>/dev/null)" != "$cudnn_frontend_version" ]; then
  wheel_dir=$(mktemp -d)
  trap 'rm -rf "$wheel_dir"' EXIT
  echo "fetching nvidia-cudnn-frontend $cudnn_frontend_version (headers for the cuDNN convolutions)"
  if python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
       --python-version 3.11 --implementation cp --abi cp311 -d "$wheel_dir" \
       "nvidia-cudnn-frontend==$cudnn_frontend_version"; then
    wheel=$(ls "$wheel_dir"/*.whl)
    echo "$cudnn_frontend_sha256  $wheel" | sha256sum --check --quiet
    rm -rf "$frontend_dir"
    python3 - "$wheel" "$frontend_dir" <<'PY'
import sys, zipfile
wheel, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    z.extractall(dest, [n for n in z.namelist() if n.startswith("include/")])
PY
    echo "$cudnn_frontend_version" > "$frontend_dir/VERSION"
  else
    echo "warning: could not fetch nvidia-cudnn-frontend; CUDA convolutions will take the general path (im2col + cuBLAS)" >&2
  fi
fi
