#!/usr/bin/env python3
"""The PyTorch side of `locus train --model cnn`: the same CNN, data and recipe in PyTorch 1.13,
and safetensors checkpoints that go both ways with Locus's save()/load().

Model: tools/locus/cnn.h's nn.Sequential, index for index, so the state_dict names are the same
(0.weight, 1.running_mean, 1.num_batches_tracked, 4.weight, ...). Recipe: torch.manual_seed(seed)
before the model is built, Adam lr 1e-3, CosineAnnealingLR over epochs * steps_per_epoch stepped
after every optimizer step, batch 64, a new shuffle each epoch (DataLoader with a generator
seeded with seed), cross entropy. Evaluation: eval mode, no grad, batches of 1000.

    torch_train_cnn.py                                   # 5 epochs, the default recipe
    torch_train_cnn.py --epochs 1 --max-steps 300 --save torch.safetensors
    torch_train_cnn.py --load locus.safetensors --epochs 0   # evaluate a Locus checkpoint

--logits PATH writes the final evaluation's logits (float32 [10000, 10], key `logits`) as
safetensors, for a per-image comparison with Locus.

Output: `epoch E: test accuracy XX.XX%, T.TT s` per epoch (T: that epoch's training time), then
one machine-readable line `accuracy 0.912300` (correct / test-set size, 6 decimals). With
--epochs 0 there are no epoch lines, only the accuracy line.

--load puts a checkpoint's weights and buffers into the model (strictly: every key, no other)
before training; with --epochs 0 the model is only evaluated.

Safetensors is written and read by hand, in safetensors_io.py (next to this script; its docstring
has the layout and what Locus's reader insists on).
"""

import argparse
import gzip
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import load_safetensors, save_safetensors  # noqa: E402

DEFAULT_DATA = '/usr/share/datasets/fashion-mnist'


def make_cnn():
    """tools/locus/cnn.h's make_cnn(), index for index."""
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Dropout(0.3), nn.Linear(128, 10))


# ---------------------------------------------------------------------------------------------
# Data

def idx_path(data_dir, stem):
    for name in (stem, stem + '.gz'):
        path = os.path.join(data_dir, name)
        if os.path.exists(path):
            return path
    sys.exit('torch_train_cnn.py: neither %s nor %s.gz in %s' % (stem, stem, data_dir))


def read_idx(path):
    """An IDX file (gzip or raw) as a numpy array of its dtype and shape."""
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rb') as f:
        data = f.read()
    zero, type_code, ndim = struct.unpack('>HBB', data[:4])
    if zero != 0:
        sys.exit('torch_train_cnn.py: %s is not an IDX file' % path)
    dtype = {0x08: '>u1', 0x09: '>i1', 0x0B: '>i2', 0x0C: '>i4', 0x0D: '>f4', 0x0E: '>f8'}[type_code]
    shape = struct.unpack('>' + 'I' * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=dtype, offset=4 + 4 * ndim, count=int(np.prod(shape))).reshape(shape)


def load_split(data_dir, train):
    prefix = 'train' if train else 't10k'
    images = read_idx(idx_path(data_dir, prefix + '-images-idx3-ubyte'))
    labels = read_idx(idx_path(data_dir, prefix + '-labels-idx1-ubyte'))
    x = torch.from_numpy(images.astype(np.float32) / np.float32(255)).reshape(-1, 1, 28, 28)
    y = torch.from_numpy(labels.astype(np.int64))
    return x, y


# ---------------------------------------------------------------------------------------------
# Training and evaluation

def evaluate(model, x, y):
    """(correct argmax predictions, examples, logits [N, 10]): eval mode, no grad, batches of 1000."""
    was_training = model.training
    model.eval()
    correct, logits = 0, []
    with torch.no_grad():
        for i in range(0, len(x), 1000):
            out = model(x[i:i + 1000])
            correct += int((out.argmax(1) == y[i:i + 1000]).sum())
            logits.append(out)
    model.train(was_training)
    return correct, len(x), torch.cat(logits)


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--epochs', type=int, default=5, help='passes over the training set (0: evaluate only)')
    p.add_argument('--max-steps', type=int, default=None,
                   help='stop training after this many optimizer steps in all (the cosine T_max stays '
                        'epochs * steps_per_epoch)')
    p.add_argument('--save', help='write the trained state_dict here (safetensors)')
    p.add_argument('--load', help='start from this safetensors state_dict (with --epochs 0: evaluate it)')
    p.add_argument('--logits', help="write the final model's test-set logits here (safetensors, key 'logits', "
                                    'float32 [10000, 10])')
    p.add_argument('--data', default=DEFAULT_DATA, help='directory with the Fashion-MNIST IDX files')
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--threads', type=int, default=2)
    args = p.parse_args()
    if args.epochs < 0:
        p.error('--epochs must be >= 0')
    if args.max_steps is not None and args.max_steps < 0:
        p.error('--max-steps must be >= 0')

    torch.set_num_threads(args.threads)
    test_x, test_y = load_split(args.data, train=False)

    torch.manual_seed(args.seed)
    model = make_cnn()
    if args.load:
        state, _ = load_safetensors(args.load)
        model.load_state_dict(state, strict=True)

    if args.epochs > 0:
        train_x, train_y = load_split(args.data, train=True)
        generator = torch.Generator()
        generator.manual_seed(args.seed)
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(train_x, train_y), batch_size=64,
                                             shuffle=True, generator=generator)
        steps_per_epoch = len(loader)  # ceil(60000 / 64) = 938
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs * steps_per_epoch)
        loss_fn = nn.CrossEntropyLoss()
        steps = 0
        for epoch in range(1, args.epochs + 1):
            model.train()
            t0 = time.perf_counter()
            for xb, yb in loader:
                if args.max_steps is not None and steps >= args.max_steps:
                    break
                opt.zero_grad()
                loss = loss_fn(model(xb), yb)
                loss.backward()
                opt.step()
                sched.step()
                steps += 1
            dt = time.perf_counter() - t0
            correct, total, _ = evaluate(model, test_x, test_y)
            print('epoch %d: test accuracy %.2f%%, %.2f s' % (epoch, 100.0 * correct / total, dt), flush=True)
            if args.max_steps is not None and steps >= args.max_steps:
                break

    model.eval()
    if args.save:
        save_safetensors(model.state_dict(), args.save, metadata={'format': 'pt'})
    correct, total, logits = evaluate(model, test_x, test_y)
    if args.logits:
        save_safetensors({'logits': logits}, args.logits)
    print('accuracy %.6f' % (correct / total), flush=True)


if __name__ == '__main__':
    main()
