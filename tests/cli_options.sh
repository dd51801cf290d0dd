#!/usr/bin/env bash
# Every option of `locus train`, `locus bench` and `locus info` refuses nonsense before anything
# runs, with a message a shell user can act on (plain ranges, the devices this machine has, the
# missing directory) and exit status 2; a write that fails later is an error with status 1, never
# a silent success (Note [Option checks] in tools/locus/option_checks.cpp).
# tests/cli_options.sh LOCUS CASE, CASE one of train, bench, info, writes.
set -euo pipefail
locus="$1"
case_name="$2"
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export LOCUS_SIM_DEVICES=2

fail() { echo "FAIL: $*"; echo "--- stdout"; cat out 2>/dev/null || true; echo "--- stderr"; cat err 2>/dev/null || true; exit 1; }
# refused STATUS MESSAGE -- ARGS...: `locus ARGS...` exits with STATUS and MESSAGE is its first line on stderr.
refused() {
  local status="$1" message="$2"
  shift 3
  local rc=0
  "$locus" "$@" > out 2> err || rc=$?
  [ "$rc" = "$status" ] || fail "locus $*: exit status $rc, expected $status"
  [ "$(head -n 1 err)" = "$message" ] || fail "locus $*: stderr begins '$(head -n 1 err)', expected '$message'"
  echo "ok: locus $* -> $message"
}
# A dataset of 4 training and 2 test images, all black, in IDX files without compression.
tiny_mnist() {
  mkdir -p data
  for set in train:4 t10k:2; do
    perl -e 'print pack("N4", 0x803, $ARGV[0], 28, 28), "\0" x ($ARGV[0] * 784)' "${set#*:}" > "data/${set%:*}-images-idx3-ubyte"
    perl -e 'print pack("N2", 0x801, $ARGV[0]), pack("C*", map { $_ % 10 } 1 .. $ARGV[0])' "${set#*:}" > "data/${set%:*}-labels-idx1-ubyte"
  done
}
# The devices `locus info` lists, as the refusals name them: "cpu, cuda:0, sim:0 and sim:1".
devices_here() {
  "$locus" info | sed -n 's/^  \(cpu\|cuda:[0-9]*\|sim:[0-9]*\): .*/\1/p' | paste -sd, | sed 's/,/, /g; s/\(.*\), /\1 and /'
}

case "$case_name" in
train)
  refused 2 "--epochs: expected an integer from 1 to 100000, got '0'" -- train --epochs 0
  refused 2 "--epochs: expected an integer from 1 to 100000, got '-1'" -- train --epochs -1
  refused 2 "--epochs: expected an integer from 1 to 100000, got '2.5'" -- train --epochs 2.5
  refused 2 "--epochs: expected an integer from 1 to 100000, got '0x10'" -- train --epochs 0x10
  refused 2 "--batch-size: expected an integer from 1 to 1000000, got '0'" -- train --batch-size 0
  refused 2 "--batch-size: expected an integer from 1 to 1000000, got '99999999999999999999'" -- train --batch-size 99999999999999999999
  refused 2 "--lr: expected a number greater than 0, such as 0.001, got '0'" -- train --lr 0
  refused 2 "--lr: expected a number greater than 0, such as 0.001, got '-0.1'" -- train --lr -0.1
  refused 2 "--lr: expected a number greater than 0, such as 0.001, got 'nan'" -- train --lr nan
  refused 2 "--model: expected mlp or cnn, got 'resnet'" -- train --model resnet
  refused 2 "--optimizer: expected sgd, adam or adamw, got 'rmsprop'" -- train --optimizer rmsprop
  refused 2 "--scheduler: expected none, cosine, cosine-per-step or step, got 'linear'" -- train --scheduler linear
  refused 2 "--weight-decay: expected a number of 0 or more, such as 0.01, got '-0.1'" -- train --weight-decay -0.1
  refused 2 "--weight-decay: expected a number of 0 or more, such as 0.01, got 'nan'" -- train --weight-decay nan
  refused 2 "--weight-decay: expected a number of 0 or more, such as 0.01, got 'inf'" -- train --weight-decay inf
  refused 2 "--weight-decay: expected a number of 0 or more, such as 0.01, got 'abc'" -- train --weight-decay abc
  refused 2 "--seed: expected an integer from 0 to 18446744073709551615, got '-1'" -- train --seed -1
  refused 2 "--seed: expected an integer from 0 to 18446744073709551615, got '18446744073709551616'" -- train --seed 18446744073709551616
  refused 2 "--workers: expected an integer from 0 to 256, got '-1'" -- train --workers -1
  refused 2 "--workers: expected an integer from 0 to 256, got '1000'" -- train --workers 1000
  refused 2 "--amp: expected none, bf16 or fp16, got 'fp8'" -- train --amp fp8
  refused 2 "--nproc: expected an integer from 1 to 1024, got '0'" -- train --nproc 0
  refused 2 "--data: the directory '/nonexistent-locus-data' does not exist (install Debian's dataset-fashion-mnist, or pass the directory that holds the MNIST files)" -- train --data /nonexistent-locus-data
  refused 2 "--save: cannot write '/nonexistent-locus-dir/model.safetensors': the directory '/nonexistent-locus-dir' does not exist" -- train --save /nonexistent-locus-dir/model.safetensors
  refused 2 "--save: cannot write '$work': it is a directory" -- train --save "$work"
  refused 2 "--device: expected auto, cpu, cuda, cuda:N, sim or sim:N, got 'gpu'" -- train --device gpu
  here=$(devices_here)
  refused 2 "--device: sim:7 does not exist: this machine has 2 sim devices; the devices here are $here (--device auto picks the best)" -- train --device sim:7
  refused 2 "--device: mps cannot be used: MPS is not available (Apple silicon only); the devices here are $here (--device auto picks the best)" -- train --device mps
  reason=$("$locus" info | sed -n 's/^  cuda: not available: //p')
  if [ -n "$reason" ]; then
    refused 2 "--device: cuda:7 cannot be used: CUDA is not available ($reason); the devices here are $here (--device auto picks the best)" -- train --device cuda:7
  else
    count=$("$locus" info | grep -c '^  cuda:[0-9]*: ')
    refused 2 "--device: cuda:7 does not exist: this machine has $count CUDA device$([ "$count" = 1 ] || echo s); the devices here are $here (--device auto picks the best)" -- train --device cuda:7
  fi
  # Good values pass, in decimal: "010" is ten, not octal eight.
  tiny_mnist
  "$locus" train --data data --device sim:1 --epochs 01 --batch-size 2 --seed 010 --workers 0 --lr 1e-3 > out 2> err || fail "a good command line failed"
  grep -qxF "locus train: MLP 784-256-10 on sim:1, 1 epochs, batch 2, adam lr 0.001, seed 10" out || fail "the header line"
  grep -q "^epoch 1: lr 0.001, loss " out || fail "the epoch line's learning rate"
  # A schedule and a weight decay: named in the header, the rate of each epoch in its line.
  "$locus" train --data data --device cpu --epochs 2 --batch-size 2 --optimizer sgd --lr 0.1 --scheduler step \
    --weight-decay 0.001 > out 2> err || fail "a run with --scheduler step failed"
  grep -qxF "locus train: MLP 784-256-10 on cpu, 2 epochs, batch 2, sgd lr 0.1, weight decay 0.001, step schedule, seed 0" out ||
    fail "the header line with a schedule"
  grep -q "^epoch 1: lr 0.1, loss " out && grep -q "^epoch 2: lr 0.01, loss " out || fail "the step schedule's rates"
  "$locus" train --data data --device cpu --epochs 2 --batch-size 2 --scheduler cosine > out 2> err ||
    fail "a run with --scheduler cosine failed"
  grep -q "^epoch 1: lr 0.001, loss " out && grep -q "^epoch 2: lr 0.0005, loss " out || fail "the cosine schedule's rates"
  ;;
bench)
  refused 2 "--model: expected mlp or cnn, got 'resnet'" -- bench --model resnet
  refused 2 "--batch-sizes: expected an integer from 1 to 1000000, got '0'" -- bench --batch-sizes 0
  refused 2 "--batch-sizes: expected an integer from 1 to 1000000, got '-8'" -- bench --batch-sizes 8 -8
  refused 2 "--seconds: expected a number from 0.001 to 3600, got '0'" -- bench --seconds 0
  refused 2 "--seconds: expected a number from 0.001 to 3600, got 'inf'" -- bench --seconds inf
  refused 2 "--rounds: expected an integer from 1 to 1000, got '0'" -- bench --rounds 0
  refused 2 "--json: cannot write '/nonexistent-locus-dir/bench.json': the directory '/nonexistent-locus-dir' does not exist" -- bench --json /nonexistent-locus-dir/bench.json
  refused 2 "--json: cannot write '$work': it is a directory" -- bench --json "$work"
  ;;
info)
  # `locus info` takes no options but --help, and one .pt2 file to describe.
  refused 2 "The following argument was not expected: --device" -- info --device
  refused 2 "program: the file 'extra' does not exist" -- info extra
  refused 2 "program: '$work' is a directory, not a file" -- info "$work"
  refused 2 "The following argument was not expected: more" -- info "$here/export/data/mlp.pt2" more
  "$locus" info "$here/export/data/mlp.pt2" > out 2> err || fail "locus info mlp.pt2 failed"
  grep -qxF "  x: float32 [s77 in 1..64, 4]" out || fail "locus info mlp.pt2's input line"
  grep -qxF "  yes torch.ops.aten.linear.default" out || fail "locus info mlp.pt2's operator lines"
  printf 'PK' > damaged.pt2
  refused 1 "locus: cannot load 'damaged.pt2': it is not a readable zip archive (Not a zip archive); is the file truncated or damaged?" -- info damaged.pt2
  "$locus" info > out 2> err || fail "locus info failed"
  grep -qxF "  sim: 2 simulated device(s) (LOCUS_SIM_DEVICES / LOCUS_SIM_MEMORY)" out || fail "locus info's sim line"
  ;;
writes)
  # A write that fails after the checks passed (a full disk) is an error: status 1, a message.
  refused 1 "locus: cannot write the JSON to '/dev/full': No space left on device" -- bench --batch-sizes 8 --seconds 0.003 --rounds 1 --json /dev/full
  tiny_mnist
  # A file name that fits NAME_MAX while the checkpoint's temporary name beside it does not.
  name="$work/$(printf 'm%.0s' $(seq 240)).safetensors"
  rc=0
  "$locus" train --data data --device cpu --epochs 1 --batch-size 2 --save "$name" > out 2> err || rc=$?
  [ "$rc" = 1 ] || fail "a failed save: exit status $rc, expected 1"
  tail -n 1 err | grep -qE "^locus: cannot save to '$name': cannot create '$name\.tmp\.[0-9]+\.[0-9]+': File name too long$" ||
    fail "a failed save: stderr ends '$(tail -n 1 err)'"
  grep -q '^test accuracy: ' out || fail "the run did not finish before the save"
  echo "ok: a failed save exits with 1"
  ;;
*) echo "unknown case $case_name"; exit 1 ;;
esac
