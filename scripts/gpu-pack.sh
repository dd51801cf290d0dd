#!/usr/bin/env bash
# Run HERE (the build machine), before scripts/gpu-check.sh runs on the GPU machine.
# Builds Locus with the CUDA backend (the release build, which must find the toolkit: liblocus.so
# and the backend modules liblocus_cuda.so / liblocus_nccl.so beside it, Note [Backend modules]),
# gathers the binaries, the shared libraries they need that the GPU machine's image lacks
# (OpenBLAS and its Fortran runtime, oneDNN, Gloo; cuBLAS is there with the CUDA toolkit), and
# the PyTorch side of the benchmarks from ../shared/bench and Fashion-MNIST, into
# .gpu/pack.tar.xz (git-ignored).
# Then: device run with carry [".gpu"] and the command "scripts/gpu-check.sh".
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh gpu-pack
build=build/release
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,lib,tests,examples,bench,data}
cp "$build"/bin/locus "$stage"/bin/
cp "$build"/tests/locus_tests "$stage"/tests/
cp -r "$build"/tests/backend_module "$stage"/tests/  # the loader tests' stand-in modules
# Only the programs: CMake leaves an example_<name>.dir folder beside each.
find "$build"/examples -maxdepth 1 -type f -name 'example_*' -perm -u+x -exec cp {} "$stage"/examples/ \;
cp "$build"/bench/locus_gpu_bench "$stage"/bench/
cp -P "$build"/liblocus.so* "$stage"/lib/
cp "$build"/liblocus_cuda.so.* "$build"/liblocus_nccl.so.* "$stage"/lib/ 2>/dev/null || true
[ -f "$stage"/lib/liblocus_cuda.so.0 ] || { echo "error: no CUDA module in $build (was the CUDA toolkit found?)" >&2; exit 1; }
# Every non-system library the binaries load, except the CUDA ones the GPU machine provides
# (cuBLAS, cuDNN, NCCL, NVRTC: scripts/gpu-check.sh finds them there).
for f in "$stage"/bin/* "$stage"/tests/locus_tests "$stage"/tests/backend_module/*.so* "$stage"/lib/liblocus*.so*; do
  [ -f "$f" ] && ldd "$f" | awk '/=> \// {print $3}'
done | sort -u | grep -Ev '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so|libcublas|libcudart|libcudnn|libnccl|libnvrtc|libcuda\.' |
  while read -r lib; do cp -L "$lib" "$stage"/lib/; done
strip --strip-unneeded "$stage"/bin/* "$stage"/tests/* "$stage"/examples/* "$stage"/bench/* "$stage"/lib/* 2>/dev/null || true
shared=../shared/bench
[ -d "$shared" ] || shared=shared/bench
cp "$shared"/torch_gpu_bench.py "$shared"/compare.py "$stage"/bench/
cp bench/torch_amp_bench.py "$stage"/bench/
# Fashion-MNIST for `locus train --device cuda` (the GPU image has no Debian packages).
cp /usr/share/datasets/fashion-mnist/*.gz "$stage"/data/ 2>/dev/null || echo "warning: dataset-fashion-mnist not installed; locus train will be skipped there"
# The char-LM's text (~2.6 MB, the fortune files without '.' in their names).
mkdir -p "$stage"/data/fortunes
find /usr/share/games/fortunes -maxdepth 1 -type f ! -name '*.*' -exec cp {} "$stage"/data/fortunes/ \; 2>/dev/null
ls "$stage"/data/fortunes | grep -q . || echo "warning: fortunes not installed; locus charlm will be skipped there"
mkdir -p .gpu
tar -C "$stage" -cf - . | xz -T2 -6 > .gpu/pack.tar.xz
bytes=$(stat -c %s .gpu/pack.tar.xz)
echo "packed $(( bytes / 1048576 )) MiB into .gpu/pack.tar.xz (carry .gpu; the device tool carries at most 64 MiB)"
[ "$bytes" -lt $(( 64 * 1048576 )) ] || { echo "error: the pack is over 64 MiB" >&2; exit 1; }
