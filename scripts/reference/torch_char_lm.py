#!/usr/bin/env python3
"""The PyTorch side of Locus's character-level language model: a small pre-norm Transformer
trained on the fortune files in PyTorch 1.13, with safetensors checkpoints that go both ways
with Locus's save()/load().

Data: the corpus is every regular file (not a symlink) directly in --data (default
/usr/share/games/fortunes, Debian's `fortunes` package) whose name has no '.', sorted by name
(Python's str sort), read as bytes and concatenated in that order. The vocabulary is the sorted
distinct byte values of the whole corpus; a byte's token id is its rank there, V the vocabulary
size. Split: n_train = len(corpus) * 9 // 10, train = corpus[:n_train], validation =
corpus[n_train:].

Batches: B rows (--batch-size) of T tokens (--block-size). A splitmix64 generator, state = seed:
next() = { state = (state + 0x9E3779B97F4A7C15) mod 2^64; z = state;
z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) mod 2^64; z = ((z ^ (z >> 27)) * 0x94D049BB133111EB)
mod 2^64; return z ^ (z >> 31) }. Each training step draws B starts, row by row,
start = next() % (n_train - T); x = train[start:start+T], y = train[start+1:start+T+1] (int64
token ids). The one generator runs through the whole training run (nothing else draws from it).

Validation: windows at starts 0, T, 2T, ... while start + T + 1 <= len(validation), at most
--val-windows of them, in consecutive batches of B (the last may be smaller); eval mode, no grad.
The loss is the mean cross entropy over every predicted position of every window, in nats per
character: each batch's summed cross entropy (float32, reduction='sum') is added up in double and
divided by windows * T. Bits per character = loss / ln 2.

Model (state_dict names and order are what Locus's model uses):

    tok_emb  nn.Embedding(V, d_model)
    pos_emb  nn.Embedding(T, d_model)
    encoder  nn.TransformerEncoder(nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=ff,
                 dropout=dropout, activation='gelu', batch_first=True, norm_first=True),
                 num_layers=layers, enable_nested_tensor=False)
    ln_f     nn.LayerNorm(d_model)
    head     nn.Linear(d_model, V)

    forward(idx [B, t]): x = tok_emb(idx) + pos_emb(arange(t))
                         x = encoder(x, mask=nn.Transformer.generate_square_subsequent_mask(t))
                         return head(ln_f(x))          # logits [B, t, V]

The mask is the float causal mask (0 on and below the diagonal, -inf above) on the model's device
and dtype, added to the attention scores. Each encoder layer (norm_first) is
x = x + dropout1(self_attn(norm1(x))); x = x + dropout2(linear2(dropout(gelu(linear1(norm2(x))))))
with exact (erf) GELU, LayerNorm eps 1e-5, attention softmax(q k^T / sqrt(d_model / heads) + mask)
with dropout on the attention weights (training only), heads concatenated, then out_proj; the
encoder has no final norm of its own (ln_f is the model's). Keys per layer i, in order:
encoder.layers.i.self_attn.{in_proj_weight [3d, d] (q, k, v rows), in_proj_bias [3d],
out_proj.weight, out_proj.bias}, linear1.{weight [ff, d], bias}, linear2.{weight [d, ff], bias},
norm1.{weight, bias}, norm2.{weight, bias}; before them tok_emb.weight, pos_emb.weight, after
them ln_f.{weight, bias}, head.{weight, bias}.

Initialisation: torch.manual_seed(seed) right before the model is built, then PyTorch's defaults:
embeddings N(0, 1); in_proj_weight xavier_uniform, in_proj_bias and out_proj.bias 0; every other
Linear weight and bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)); LayerNorms 1 and 0. Draws happen in
this order: tok_emb, pos_emb, out_proj.weight, out_proj.bias (then zeroed), in_proj_weight,
linear1.weight, linear1.bias, linear2.weight, linear2.bias, head.weight, head.bias. The encoder
layer is built once and deep-copied `layers` times, so every layer starts with the same weights.

Recipe: AdamW(lr, betas (0.9, 0.999), eps 1e-8, weight_decay 0.01) over model.parameters() (all
of them decay: embeddings, biases, LayerNorms). The learning rate at step s (0-based) of S, with
W warmup steps: lr * (s + 1) / W while s < W, then lr * (0.1 + 0.9 * 0.5 * (1 + cos(pi * p)))
with p = (s - W) / max(1, S - W); every param group gets it before that step's optimizer.step().
A step: model.train(); logits = model(x); loss = cross_entropy(logits.view(-1, V), y.view(-1));
zero_grad; backward; clip_grad_norm_(model.parameters(), 1.0); step.

    torch_char_lm.py                                   # 600 steps, the default recipe
    torch_char_lm.py --steps 30 --layers 1 --d-model 32 --heads 2 --ff 64 --block-size 32 --save t.safetensors
    torch_char_lm.py --load locus.safetensors --steps 0   # evaluate a Locus checkpoint

Output: a first line `corpus N bytes, n_train N, vocab V, parameters P`; after every
--eval-every steps and after the last one,
`step S: train loss X.XXXX, val loss Y.YYYY (Z.ZZZZ bits/char), E.EE s` (S: steps done, X: that
step's training loss, E: training seconds since the start, evaluations not counted); with
--sample N > 0, a line `sample:` and then N sampled characters (decoded as UTF-8 with
errors='replace', followed by a newline); last, always, one machine-readable line
`val_loss 1.234567` (the final validation loss in nats, 6 decimals). With --steps 0 there are no
step lines: the model (as built, or as loaded) is only evaluated, and sampled if --sample > 0.

--load puts a safetensors state_dict into the model strictly (every key, no other) after it is
built and before training. --save writes model.state_dict() (state_dict order, float32, every
key) after training. --sample generates from the prompt "\\n" (the token of byte 10; token 0 if
the corpus has no byte 10) in eval mode, no grad: at each step the last <= T tokens go in, the
last position's logits through softmax, one token drawn by torch.multinomial with a
torch.Generator seeded with seed.

Safetensors is written and read by hand, in safetensors_io.py (next to this script; its docstring
has the layout and what Locus's reader insists on).
"""

import argparse
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import load_safetensors, save_safetensors  # noqa: E402

DEFAULT_DATA = '/usr/share/games/fortunes'
MASK64 = (1 << 64) - 1


class CharLM(nn.Module):
    """Token and position embeddings, a pre-norm TransformerEncoder, a final LayerNorm, a head."""

    def __init__(self, vocab, block_size, d_model, heads, layers, ff, dropout):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, d_model)
        self.pos_emb = nn.Embedding(block_size, d_model)
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=ff, dropout=dropout, activation='gelu',
                                       batch_first=True, norm_first=True),
            num_layers=layers, enable_nested_tensor=False)
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(t, device=idx.device))
        mask = nn.Transformer.generate_square_subsequent_mask(t).to(device=x.device, dtype=x.dtype)
        x = self.encoder(x, mask=mask)
        return self.head(self.ln_f(x))


# ---------------------------------------------------------------------------------------------
# Data

def read_corpus(data_dir):
    """The files' bytes, concatenated in name order (regular files, no symlinks, no '.' in the name)."""
    try:
        names = sorted(os.listdir(data_dir))
    except OSError as e:
        sys.exit('torch_char_lm.py: cannot list %s (%s); the fortune files come with '
                 '`apt-get install fortunes`' % (data_dir, e.strerror))
    paths = [os.path.join(data_dir, n) for n in names if '.' not in n]
    paths = [p for p in paths if not os.path.islink(p) and os.path.isfile(p)]
    if not paths:
        sys.exit("torch_char_lm.py: no corpus files in %s (regular files whose names have no '.'); "
                 'the fortune files come with `apt-get install fortunes`' % data_dir)
    parts = []
    for p in paths:
        with open(p, 'rb') as f:
            parts.append(f.read())
    return b''.join(parts)


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)


def training_batch(train, rng, batch_size, block_size):
    """x, y [B, T] int64: B starts drawn row by row, start = next() % (n_train - T)."""
    starts = [rng.next() % (len(train) - block_size) for _ in range(batch_size)]
    x = torch.stack([train[s:s + block_size] for s in starts])
    y = torch.stack([train[s + 1:s + block_size + 1] for s in starts])
    return x, y


def validation_starts(n_val, block_size, max_windows):
    starts, s = [], 0
    while s + block_size + 1 <= n_val and len(starts) < max_windows:
        starts.append(s)
        s += block_size
    return starts


def evaluate(model, val, starts, batch_size, block_size, vocab):
    """Mean cross entropy (nats per character) over every position of every window."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(starts), batch_size):
            batch = starts[i:i + batch_size]
            x = torch.stack([val[s:s + block_size] for s in batch])
            y = torch.stack([val[s + 1:s + block_size + 1] for s in batch])
            logits = model(x)
            total += F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1), reduction='sum').item()
            count += y.numel()
    model.train(was_training)
    return total / count


def learning_rate(step, steps, warmup, lr):
    if step < warmup:
        return lr * (step + 1) / warmup
    p = (step - warmup) / max(1, steps - warmup)
    return lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * p)))


def sample(model, count, prompt, block_size, seed):
    """`count` token ids drawn one at a time after `prompt`, eval mode, no grad."""
    generator = torch.Generator()
    generator.manual_seed(seed)
    model.eval()
    ids = [prompt]
    with torch.no_grad():
        for _ in range(count):
            context = torch.tensor([ids[-block_size:]], dtype=torch.int64)
            probs = torch.softmax(model(context)[0, -1], dim=-1)
            ids.append(int(torch.multinomial(probs, 1, generator=generator)))
    return ids[1:]


# ---------------------------------------------------------------------------------------------

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--data', default=DEFAULT_DATA, help='directory with the corpus files (default: %(default)s)')
    p.add_argument('--steps', type=int, default=600, help='optimizer steps (0: evaluate only)')
    p.add_argument('--warmup', type=int, default=100, help='linear warmup steps')
    p.add_argument('--lr', type=float, default=1e-3, help='peak learning rate')
    p.add_argument('--batch-size', type=int, default=32)
    p.add_argument('--block-size', type=int, default=128, help='context length T')
    p.add_argument('--d-model', type=int, default=128)
    p.add_argument('--heads', type=int, default=4)
    p.add_argument('--layers', type=int, default=4)
    p.add_argument('--ff', type=int, default=512, help='feed-forward width')
    p.add_argument('--dropout', type=float, default=0.1)
    p.add_argument('--eval-every', type=int, default=200, help='evaluate every this many steps (and after the last)')
    p.add_argument('--val-windows', type=int, default=256, help='at most this many validation windows')
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--threads', type=int, default=None, help="torch.set_num_threads (default: PyTorch's)")
    p.add_argument('--load', help='start from this safetensors state_dict (with --steps 0: evaluate it)')
    p.add_argument('--save', help='write the trained state_dict here (safetensors)')
    p.add_argument('--sample', type=int, default=200, help='characters to sample after training (0: none)')
    args = p.parse_args()
    for name in ('batch_size', 'block_size', 'd_model', 'heads', 'layers', 'ff', 'eval_every', 'val_windows'):
        if getattr(args, name) < 1:
            p.error('--%s must be >= 1' % name.replace('_', '-'))
    for name in ('steps', 'warmup', 'sample', 'seed'):
        if getattr(args, name) < 0:
            p.error('--%s must be >= 0' % name)
    if args.d_model % args.heads:
        p.error('--d-model (%d) must be a multiple of --heads (%d)' % (args.d_model, args.heads))
    if not 0 <= args.dropout < 1:
        p.error('--dropout must be in [0, 1)')
    if args.threads is not None:
        if args.threads < 1:
            p.error('--threads must be >= 1')
        torch.set_num_threads(args.threads)

    corpus = read_corpus(args.data)
    raw = np.frombuffer(corpus, dtype=np.uint8)
    vocab_bytes = np.unique(raw)  # sorted
    V = len(vocab_bytes)
    rank = np.zeros(256, dtype=np.int64)
    rank[vocab_bytes] = np.arange(V, dtype=np.int64)
    tokens = torch.from_numpy(rank[raw])
    n_train = len(corpus) * 9 // 10
    train, val = tokens[:n_train], tokens[n_train:]
    T, B = args.block_size, args.batch_size
    if n_train - T < 1:
        sys.exit('torch_char_lm.py: %d training bytes leave no window of %d + 1' % (n_train, T))
    val_starts = validation_starts(len(val), T, args.val_windows)
    if not val_starts:
        sys.exit('torch_char_lm.py: %d validation bytes leave no window of %d + 1' % (len(val), T))

    torch.manual_seed(args.seed)
    model = CharLM(V, T, args.d_model, args.heads, args.layers, args.ff, args.dropout)
    if args.load:
        state, _ = load_safetensors(args.load)
        model.load_state_dict(state, strict=True)
    print('corpus %d bytes, n_train %d, vocab %d, parameters %d'
          % (len(corpus), n_train, V, sum(q.numel() for q in model.parameters())), flush=True)

    val_loss = None
    if args.steps > 0:
        rng = SplitMix64(args.seed)
        opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
        seconds = 0.0
        for step in range(args.steps):
            t0 = time.perf_counter()
            lr = learning_rate(step, args.steps, args.warmup, args.lr)
            for group in opt.param_groups:
                group['lr'] = lr
            x, y = training_batch(train, rng, B, T)
            model.train()
            logits = model(x)
            loss = F.cross_entropy(logits.view(-1, V), y.view(-1))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            train_loss = loss.item()
            seconds += time.perf_counter() - t0
            done = step + 1
            if done % args.eval_every == 0 or done == args.steps:
                val_loss = evaluate(model, val, val_starts, B, T, V)
                print('step %d: train loss %.4f, val loss %.4f (%.4f bits/char), %.2f s'
                      % (done, train_loss, val_loss, val_loss / math.log(2), seconds), flush=True)
    if val_loss is None:
        val_loss = evaluate(model, val, val_starts, B, T, V)

    model.eval()
    if args.save:
        save_safetensors(model.state_dict(), args.save, metadata={'format': 'pt'})
    if args.sample > 0:
        prompt = int(rank[10]) if 10 in vocab_bytes else 0
        ids = sample(model, args.sample, prompt, T, args.seed)
        text = bytes(vocab_bytes[ids].tolist()).decode('utf-8', errors='replace')
        print('sample:', flush=True)
        sys.stdout.buffer.write(text.encode('utf-8') + b'\n')  # UTF-8 whatever the locale
        sys.stdout.buffer.flush()
    print('val_loss %.6f' % val_loss, flush=True)


if __name__ == '__main__':
    main()
