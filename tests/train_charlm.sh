#!/usr/bin/env bash
# `locus charlm` end to end on a small text: it trains and reports on cpu and on sim, the two
# give the same losses and the same checkpoint bytes (sim runs the CPU's kernels, fused attention
# and layer norm included), the validation loss falls, the checkpoint carries PyTorch's
# state_dict names and --load --steps 0 gives back the loss it was saved with; bad options are
# refused before anything runs.
set -euo pipefail
locus=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir data
# A few kilobytes of English-like text in two files without '.' in their names.
perl -e 'my @w = qw(the cat sat on a mat and the dog ran to it while a bird sang over the hill);
         srand(3); for my $f (qw(first second)) { open(my $h, ">", "data/$f") or die;
         for (1 .. 3000) { print $h $w[int(rand(@w))], (rand() < 0.1 ? "\n" : " ") } close $h }'
: > data/ignored.dat  # a name with '.' is not part of the corpus
sizes=(--layers 1 --d-model 16 --ff 32 --block-size 16 --batch-size 8 --val-windows 16 --warmup 5 --lr 3e-3)
run() {
  OMP_NUM_THREADS=1 "$locus" charlm --data data --device "$1" "${sizes[@]}" --heads 2 --steps 60 --eval-every 30 --sample 20 \
    --seed 4 --save "$1.safetensors"
}
cpu=$(run cpu)
sim=$(run sim)
echo "$cpu"
losses() { echo "$1" | grep -o 'val loss [0-9.]*'; }
[ "$(losses "$cpu" | wc -l)" = 2 ] || { echo "expected two validation lines"; exit 1; }
[ "$(losses "$cpu")" = "$(losses "$sim")" ] || { echo "cpu and sim differ"; echo "$sim"; exit 1; }
cmp cpu.safetensors sim.safetensors
first=$(losses "$cpu" | head -1 | awk '{print $3}')
last=$(echo "$cpu" | awk '/^val_loss/ {print $2}')
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a && b < 2.5) }' || { echo "the loss did not fall: $first -> $last"; exit 1; }
for key in tok_emb.weight pos_emb.weight encoder.layers.0.self_attn.in_proj_weight encoder.layers.0.linear2.bias ln_f.weight head.bias; do
  grep -q "\"$key\"" cpu.safetensors || { echo "missing $key in the checkpoint"; exit 1; }
done
reloaded=$("$locus" charlm --data data "${sizes[@]}" --heads 2 --steps 0 --sample 0 --load cpu.safetensors | awk '/^val_loss/ {print $2}')
[ "$reloaded" = "$last" ] || { echo "reloaded loss $reloaded, saved with $last"; exit 1; }
if "$locus" charlm --data data --heads 0 >out 2>&1; then echo "--heads 0 was accepted"; exit 1; fi
grep -q -- "--heads" out || { cat out; exit 1; }
if "$locus" charlm --data data "${sizes[@]}" --heads 3 --steps 1 >out 2>&1; then echo "--heads 3 with --d-model 16 was accepted"; exit 1; fi
grep -q "divisible" out || { cat out; exit 1; }
echo "ok"
