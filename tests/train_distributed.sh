#!/usr/bin/env bash
# `locus train --nproc 2` (two ranks of DDP over Gloo, the global batch split between them) must
# reach the accuracy of one process with the same global batch, report once (rank 0) and save
# one checkpoint; `--shard full` (fully sharded) must train as DDP does and save the whole
# weights in the same names, and when one of its ranks is killed the other is stopped within
# seconds. Exit 77 (skipped) without Fashion-MNIST or Gloo.
set -euo pipefail
locus="$1"
[ -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] || { echo "no dataset-fashion-mnist"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
common=(--device cpu --batch-size 128 --seed 3 --optimizer sgd --lr 0.05)
flags=("${common[@]}" --epochs 2)
"$locus" train "${flags[@]}" 2>/dev/null > "$work/one"
rc=0
"$locus" train "${flags[@]}" --nproc 2 --save "$work/model.safetensors" 2>"$work/err" > "$work/two" || rc=$?
if [ "$rc" != 0 ] && grep -q "'gloo' is not built" "$work/err"; then exit 77; fi
[ "$rc" = 0 ] || { cat "$work/two" "$work/err"; exit 1; }
cat "$work/one" "$work/two"
accuracy() { sed -n 's/.*test accuracy: \([0-9.]*\)%.*/\1/p' "$1"; }
one=$(accuracy "$work/one")
two=$(accuracy "$work/two")
[ -n "$one" ] && [ -n "$two" ] || { echo "no accuracy line"; exit 1; }
grep -qxF "[rank0]: distributed: 2 ranks over gloo, 64 examples per rank and step" "$work/two"
[ "$(grep -c 'test accuracy:' "$work/two")" = 1 ] || { echo "more than one rank reported"; exit 1; }
grep -q '^\[rank1\]' "$work/two" && { echo "rank 1 printed"; exit 1; }
[ -s "$work/model.safetensors" ] || { echo "no checkpoint"; exit 1; }
# Different shuffles, the same statistics: within 1.5 points after two epochs.
awk -v a="$one" -v b="$two" 'BEGIN { d = a - b; if (d < 0) d = -d; print "one process " a "%, two ranks " b "%"; exit !(d <= 1.5) }'
# Fully sharded: the same steps as DDP (the same shuffle, the gradients averaged the same way),
# so the same accuracy to the printed digit, and a checkpoint of the whole weights.
"$locus" train "${flags[@]}" --nproc 2 --shard full --save "$work/sharded.safetensors" 2>"$work/err" > "$work/sharded" ||
  { cat "$work/sharded" "$work/err"; exit 1; }
cat "$work/sharded"
grep -qxF "[rank0]: distributed: 2 ranks over gloo, 64 examples per rank and step, fully sharded (parameters, gradients, optimizer state)" "$work/sharded"
sharded=$(accuracy "$work/sharded")
[ "$sharded" = "$two" ] || { echo "fully sharded reached $sharded%, DDP $two%"; exit 1; }
[ "$(stat -c %s "$work/sharded.safetensors")" = "$(stat -c %s "$work/model.safetensors")" ] || { echo "the sharded checkpoint differs in size"; exit 1; }
"$locus" train "${flags[@]}" --shard full 2>"$work/err" && { echo "--shard with one process was accepted"; exit 1; }
grep -q "shards over several processes: add --nproc N" "$work/err"
# A rank that dies mid-epoch of sharded training stops the other within seconds, named, as DDP's
# ranks are: rank 0 is inside a collective with rank 1 when it dies, and either Gloo's closed
# connection or the launcher ends it; the user sees the launcher's account either way.
children_of() {  # PID: the processes whose parent it is, read from /proc (no procps needed)
  local stat fields
  for stat in /proc/[0-9]*/stat; do
    fields=$(sed 's/.*) //' "$stat" 2> /dev/null) || continue
    [ "$(echo "$fields" | cut -d' ' -f2)" = "$1" ] && basename "$(dirname "$stat")"
  done
  return 0
}
"$locus" train "${common[@]}" --epochs 20 --nproc 2 --shard full > "$work/out" 2> "$work/err" &
launcher=$!
for _ in $(seq 600); do grep -q "epoch 1/20" "$work/err" && break; sleep 0.05; done
victim=""
for child in $(children_of "$launcher"); do
  tr '\0' '\n' < "/proc/$child/environ" 2> /dev/null | grep -qx RANK=1 && victim=$child
done
[ -n "$victim" ] || { kill "$launcher" 2> /dev/null; cat "$work/err"; echo "rank 1 not found among the launcher's children"; exit 1; }
t0=$(date +%s%N)
kill -KILL "$victim"
rc=0
wait "$launcher" || rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
echo "rank 1 killed mid-epoch: the launcher ended with status $rc after $ms ms"
[ "$rc" = 137 ] || { cat "$work/err"; echo "exit status $rc, expected 137"; exit 1; }
[ "$ms" -lt 10000 ] || { echo "the other rank took $ms ms to stop"; exit 1; }
grep -qF "locus run: rank 1 (pid $victim) failed: killed by SIGKILL; stopped 1 other rank" "$work/err" ||
  { cat "$work/err"; exit 1; }
