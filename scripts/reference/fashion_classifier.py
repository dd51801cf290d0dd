#!/usr/bin/env python3
"""The PyTorch side of examples/finetune_exported.cpp: a small Fashion-MNIST classifier trained
briefly in PyTorch and exported with torch.export, and the way back.

    fashion_classifier.py export [--out examples/data/fashion_classifier.pt2]
        trains FashionNet for 300 steps (batch 64, SGD 0.05, momentum 0.9) on the first 20,000
        training images and saves torch.export.export(model.train(), (x,), batch dynamic) with
        torch.export.save. The example fine-tunes that program in Locus.
    fashion_classifier.py check FINETUNED.safetensors
        loads the state_dict Locus saved after fine-tuning into the original Python FashionNet
        (load_state_dict, strict: the names are PyTorch's) and prints its test accuracy.

Data: Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist), pixels / 255.
torch.export needs PyTorch >= 2.5: as export_models.py, the script re-runs itself in a virtual
environment it creates (~/.cache/locus/torch-export-venv, --venv) with torch from PyPI.
"""

import argparse
import gzip
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(name):
    with gzip.open(os.path.join(DATA, name + ".gz"), "rb") as f:
        raw = f.read()
    dims = raw[3]
    shape = struct.unpack(">" + "I" * dims, raw[4:4 + 4 * dims])
    import numpy as np
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["export", "check"])
    parser.add_argument("path", nargs="?")
    parser.add_argument("--out", default=os.path.join(HERE, "..", "..", "examples", "data", "fashion_classifier.pt2"))
    parser.add_argument("--venv", default=os.path.expanduser("~/.cache/locus/torch-export-venv"))
    args = parser.parse_args()
    sys.path.insert(0, HERE)
    from export_models import ensure_torch
    ensure_torch(args.venv)

    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class FashionNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(8)
            self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
            self.bn2 = nn.BatchNorm2d(16)
            self.drop = nn.Dropout(0.1)
            self.fc = nn.Linear(16 * 7 * 7, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
            x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
            return self.fc(self.drop(x.flatten(1)))

    def images(prefix):
        x = torch.from_numpy(read_idx(prefix + "-images-idx3-ubyte").copy()).float().div(255).unsqueeze(1)
        y = torch.from_numpy(read_idx(prefix + "-labels-idx1-ubyte").copy()).long()
        return x, y

    if args.command == "export":
        torch.manual_seed(0)
        x, y = images("train")
        x, y = x[:20000], y[:20000]
        model = FashionNet()
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        for step in range(300):
            idx = torch.randint(0, len(x), (64,))
            opt.zero_grad()
            F.cross_entropy(model(x[idx]), y[idx]).backward()
            opt.step()
        model.train()
        program = torch.export.export(model, (x[:64].clone(),), dynamic_shapes=({0: torch.export.Dim("batch", min=1, max=1024)},))
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        torch.export.save(program, args.out)
        print(f"saved {args.out} ({os.path.getsize(args.out)} bytes)")
        return

    from safetensors_io import load_safetensors
    state, _ = load_safetensors(args.path)
    model = FashionNet()
    model.load_state_dict(state)
    model.eval()
    x, y = images("t10k")
    with torch.no_grad():
        accuracy = (model(x).argmax(1) == y).float().mean().item()
    print(f"PyTorch's FashionNet with Locus's fine-tuned weights: test accuracy {accuracy:.4f}")


if __name__ == "__main__":
    main()
