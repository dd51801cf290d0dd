#!/usr/bin/env bash
# The installed package as users meet it, after scripts/test.sh has built build/release:
#  1. `cmake --install` into build/install; the consumer project (consumer/) configured, built and
#     run against it with the CUDA toolkit hidden (a clean environment, /usr/local/cuda on no
#     search path, find_package(CUDAToolkit) disabled); ldd of the consumer must list no CUDA or
#     MPI library (both come in modules, loaded when asked for), and the consumer checks its own
#     /proc/self/maps.
#  2. The LibTorch compatibility package (compat/torch) in build/install: the LibTorch-style
#     programs of tests/libtorch configured with find_package(Torch), built and run (a CNN on the
#     MNIST loader, a GAN checkpointed and restored, a custom dataset).
#  3. The Debian packages (scripts/package.sh) installed with `apt-get install ./*.deb`; the
#     consumer built against them through CMake and through pkg-config, and run; `locus info` run
#     from /usr/bin (it loads the mpi module); the packages removed again.
set -euo pipefail
cd "$(dirname "$0")/.."
module_libraries='libcuda|libcublas|libcudart|libnccl|libcudnn|liblocus_cuda|liblocus_nccl|libmpi|libopen-pal|liblocus_mpi'
no_cuda_env=(env -i HOME="$HOME" PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8)
no_cuda_cmake=(--no-warn-unused-cli -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON -DCMAKE_IGNORE_PREFIX_PATH=/usr/local/cuda)

check_no_module_library() {  # $1: a program
  if ldd "$1" | grep -Ei "$module_libraries"; then
    echo "error: $1 needs a CUDA or MPI library (above), which only a module may load" >&2
    exit 1
  fi
}

# ---- 1. cmake --install, consumed without the CUDA toolkit --------------------------------------
rm -rf build/install build/consumer
cmake --install build/release --prefix "$PWD/build/install" | grep "Installed size" || true
"${no_cuda_env[@]}" cmake -S consumer -B build/consumer -G Ninja -DCMAKE_PREFIX_PATH="$PWD/build/install" \
  "${no_cuda_cmake[@]}" >/dev/null
"${no_cuda_env[@]}" cmake --build build/consumer >/dev/null
"${no_cuda_env[@]}" build/consumer/consumer
check_no_module_library build/consumer/consumer
check_no_module_library build/install/bin/locus
echo "consumer of build/install: built and ran without the CUDA toolkit; ldd lists no CUDA or MPI library"

# ---- 2. LibTorch programs through the compatibility package -------------------------------------
rm -rf build/libtorch-programs
mkdir -p build/libtorch-programs/checkpoints
"${no_cuda_env[@]}" cmake -S tests/libtorch -B build/libtorch-programs -G Ninja \
  -DCMAKE_PREFIX_PATH="$PWD/build/install/share/locus/torch" "${no_cuda_cmake[@]}" >/dev/null
"${no_cuda_env[@]}" cmake --build build/libtorch-programs >/dev/null
fashion=/usr/share/datasets/fashion-mnist
"${no_cuda_env[@]}" build/libtorch-programs/mnist_cnn "$fashion" 300 | tail -1
"${no_cuda_env[@]}" build/libtorch-programs/gan_checkpoint "$fashion" build/libtorch-programs/checkpoints 20 | tail -1
"${no_cuda_env[@]}" build/libtorch-programs/custom_dataset | tail -1
"${no_cuda_env[@]}" build/libtorch-programs/wgan_gp "$fashion" 20 | tail -1
echo "LibTorch programs (tests/libtorch): configured with find_package(Torch), built and ran"

# ---- 3. the Debian packages ------------------------------------------------------------------------
[ "${LOCUS_SKIP_DEBS:-0}" = 1 ] && exit 0
scripts/package.sh
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
packages=$(for deb in build/packages/*.deb; do dpkg-deb -f "$deb" Package; done | tr '\n' ' ')
trap '$sudo_cmd apt-get remove -y -qq $packages >/dev/null 2>&1 || true' EXIT
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends ./build/packages/*.deb >/dev/null
rm -rf build/consumer-deb
"${no_cuda_env[@]}" cmake -S consumer -B build/consumer-deb -G Ninja "${no_cuda_cmake[@]}" >/dev/null
"${no_cuda_env[@]}" cmake --build build/consumer-deb >/dev/null
"${no_cuda_env[@]}" build/consumer-deb/consumer
check_no_module_library build/consumer-deb/consumer
# shellcheck disable=SC2046
"${no_cuda_env[@]}" g++ -O1 -o build/consumer-deb/consumer_pkgconfig consumer/main.cpp $(pkg-config --cflags --libs locus)
"${no_cuda_env[@]}" build/consumer-deb/consumer_pkgconfig >/dev/null
check_no_module_library build/consumer-deb/consumer_pkgconfig
"${no_cuda_env[@]}" /usr/bin/locus info > build/consumer-deb/info.txt
sed -n '/Build/,$p' build/consumer-deb/info.txt | grep -E "CUDA backend|cuda:|nccl|mpi:"
if [ -n "$(ls build/packages/liblocus-mpi0_*.deb 2> /dev/null)" ] && ! grep -qxF "  mpi: available" build/consumer-deb/info.txt; then
  echo "error: liblocus-mpi0 is installed, but locus info cannot use mpi (above)" >&2
  exit 1
fi
check_no_module_library /usr/bin/locus
echo "Debian packages ($packages): installed, consumer built through CMake and pkg-config, ran"
