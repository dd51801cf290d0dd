#!/usr/bin/env bash
# `locus train --model cnn` end to end on a small synthetic IDX dataset: it trains and reports on
# cpu and on sim, the two give the same numbers and the same checkpoint bytes (sim runs the CPU's
# kernels, oneDNN's convolution included), and the checkpoint carries PyTorch's state_dict names.
set -euo pipefail
locus=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir data
# 96 training and 32 test images whose pixels depend on the image and the position.
for set in train:96 t10k:32; do
  n="${set#*:}"
  perl -e 'my $n = $ARGV[0]; print pack("N4", 0x803, $n, 28, 28);
           for my $i (0 .. $n - 1) { print pack("C*", map { ($i * 37 + $_ * ($i % 10 + 1)) % 256 } 0 .. 783) }' "$n" \
    > "data/${set%:*}-images-idx3-ubyte"
  perl -e 'print pack("N2", 0x801, $ARGV[0]), pack("C*", map { $_ % 10 } 0 .. $ARGV[0] - 1)' "$n" > "data/${set%:*}-labels-idx1-ubyte"
done
# One thread for both runs: oneDNN splits the weight gradient's reduction by the team size,
# which Locus lowers while neighbours keep the cores busy (Note [Thread budget]), so two runs
# compare bit for bit only at a fixed team size.
run() {
  OMP_NUM_THREADS=1 "$locus" train --model cnn --data data --device "$1" --epochs 2 --batch-size 16 --seed 5 --save "$1.safetensors" 2>/dev/null |
    grep -o 'epoch [0-9]: lr [0-9.e-]*, loss [0-9.]*, test accuracy [0-9.]*%'
}
cpu=$(run cpu)
sim=$(run sim)
echo "cpu: $cpu"
echo "sim: $sim"
[ "$(echo "$cpu" | wc -l)" = 2 ] || { echo "expected two epoch lines"; exit 1; }
[ "$cpu" = "$sim" ] || { echo "cpu and sim differ"; exit 1; }
cmp cpu.safetensors sim.safetensors
# The header names the tensors as torch.nn.Sequential does, buffers included.
for key in 0.weight 1.running_mean 1.num_batches_tracked 4.weight 9.weight 12.bias; do
  grep -q "\"$key\"" cpu.safetensors || { echo "missing $key in the checkpoint"; exit 1; }
done
echo "ok"
