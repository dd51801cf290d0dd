#!/usr/bin/env bash
# `locus train` with the same seed twice on the CPU must give the same losses and accuracy.
# Exit 77 (skipped) when Fashion-MNIST is not installed.
set -euo pipefail
locus="$1"
[ -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] || { echo "no dataset-fashion-mnist"; exit 77; }
run() { "$locus" train --device cpu --epochs 1 --batch-size 128 --seed 3 2>/dev/null | grep -o 'loss [0-9.]*, test accuracy [0-9.]*%'; }
a=$(run)
b=$(run)
echo "first:  $a"
echo "second: $b"
[ -n "$a" ] && [ "$a" = "$b" ]
