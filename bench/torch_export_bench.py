#!/usr/bin/env python3
"""PyTorch's side of bench/export_bench.sh: exports the two models the rows run (a CIFAR-sized
ResNet-18 and a GPT of 4 blocks) with torch.export in training mode, and times PyTorch eager
running the same exported programs (`torch.export.load(path).module()`), with the method of
../shared/bench (two warm-up calls, a calibrated repeat count, the median of 15 samples):

    export_resnet18_fwd_b32          ms  forward without grad, batch 32 of 3x32x32, eval mode
    export_resnet18_train_step_b32   ms  zero_grad, forward, cross_entropy, backward, SGD step
    export_gpt_fwd_b8x128            ms  forward without grad, 8 sequences of 128 tokens, eval mode
    export_gpt_train_step_b8x128     ms  the training step, next-token cross_entropy
    export_load_resnet18             ms  torch.export.load of the 45 MB file and .module()

    python bench/torch_export_bench.py --models DIR --export    # writes DIR/resnet18.pt2, DIR/gpt.pt2
    python bench/torch_export_bench.py --models DIR --json torch.json
    python bench/torch_export_bench.py --models DIR --json compiled.json --compile
Needs PyTorch >= 2.5 (bench/export_bench.sh runs it in a virtual environment it creates).
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "reference"))
import gpt_model  # noqa: E402  (the GPT shared with the reference export)

SAMPLES = 15


def timed(body, target=0.05):
    body()
    body()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            body()
        dt = time.perf_counter() - t0
        if dt >= target or n >= 1 << 20:
            break
        n = max(n * 2, int(n * target / dt * 1.1)) if dt > 1e-4 else n * 10
    out = []
    for _ in range(SAMPLES):
        t0 = time.perf_counter()
        for _ in range(n):
            body()
        out.append((time.perf_counter() - t0) / n * 1e3)
    return out


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class ResNet18(nn.Module):
    """torchvision's resnet18 layout (state_dict names included) with a 3x3 stem for 32x32 inputs."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        widths, cin = [64, 128, 256, 512], 64
        for i, w in enumerate(widths):
            stride = 1 if i == 0 else 2
            setattr(self, f"layer{i + 1}", nn.Sequential(BasicBlock(cin, w, stride), BasicBlock(w, w, 1)))
            cin = w
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def GPT():
    return gpt_model.GPT(vocab=512, d=256, T=128, layers=4, heads=4)


def inputs():
    torch.manual_seed(0)
    return {"resnet18": (torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))),
            "gpt": (torch.randint(0, 512, (8, 128)), torch.randint(0, 512, (8, 128)))}


def export(models):
    torch.manual_seed(0)
    data = inputs()
    for name, model in (("resnet18", ResNet18()), ("gpt", GPT())):
        model.train()
        x = data[name][0]
        program = torch.export.export(model, (x,), dynamic_shapes=({0: torch.export.Dim("batch", min=1, max=256)},))
        torch.export.save(program, os.path.join(models, name + ".pt2"))


def bench(models, json_path, compiled=False):
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    data = inputs()
    rows = []

    def record(name, samples, note):
        samples = sorted(samples)
        mid = len(samples) // 2
        median = samples[mid] if len(samples) % 2 else 0.5 * (samples[mid - 1] + samples[mid])
        rows.append({"name": name, "unit": "ms", "median": median, "min": samples[0], "max": samples[-1],
                     "n": len(samples), "note": note})
        print(f"{name:34s} {median:12.3f} ms")

    path = os.path.join(models, "resnet18.pt2")
    if not compiled:  # the load row is the same program either way
        loads = []
        for _ in range(5):
            t0 = time.perf_counter()
            torch.export.load(path).module()
            loads.append((time.perf_counter() - t0) * 1e3)
        record("export_load_resnet18", loads, f"torch.export.load + module() of {os.path.getsize(path) >> 20} MB")
    how = "torch.compile of the exported program" if compiled else "PyTorch eager running the exported program"
    for name, tag in (("resnet18", "resnet18_fwd_b32"), ("gpt", "gpt_fwd_b8x128")):
        m = torch.export.load(os.path.join(models, name + ".pt2")).module()
        run = torch.compile(m) if compiled else m  # compiled on the first calls, before timing
        x, y = data[name]
        opt = torch.optim.SGD(m.parameters(), lr=0.01)

        def step():
            opt.zero_grad()
            out = run(x)
            F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1)).backward()
            opt.step()

        record("export_" + tag.replace("fwd", "train_step"), timed(step), how)
        # Eval mode for the forward rows: the unlifted module cannot switch, so the export's own
        # train-mode graph runs under no_grad (batch statistics, as Locus's row in train mode).
        with torch.no_grad():
            record("export_" + tag, timed(lambda: run(x)), how + ", no grad")
    with open(json_path, "w") as f:
        json.dump({"impl": "torch.compile" if compiled else "torch",
                   "meta": {"torch": torch.__version__, "threads": torch.get_num_threads(), "compiled": compiled},
                   "results": rows}, f)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", required=True)
    p.add_argument("--export", action="store_true")
    p.add_argument("--json")
    p.add_argument("--compile", action="store_true", help="run the programs through torch.compile (PyTorch's best "
                   "configuration; same row names: write another JSON file)")
    a = p.parse_args()
    if a.export:
        export(a.models)
    if a.json:
        bench(a.models, a.json, a.compile)


if __name__ == "__main__":
    main()
