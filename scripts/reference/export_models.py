#!/usr/bin/env python3
"""Reference files for Locus's import of torch.export programs (locus::load_exported).

Exports small versions of five kinds of model with torch.export (dynamic batch dimension,
`torch.export.save`) and writes, beside each `<name>.pt2`, a `<name>.safetensors` with what
PyTorch computes running the exported program (`torch.export.load(...).module()`), and a
`<name>_core.pt2` of the same program decomposed to core ATen (`run_decompositions()`), whose
results are the same:

    input.<k>, input2.<k>     the example inputs, and a second batch of another size
    output.<k>, output2.<k>   the program's outputs for them
    loss_weight.<k>           fixed weights; loss = sum_k (output.<k> * loss_weight.<k>).sum()
    loss                      that loss (float64 scalar)
    grad.<parameter name>     d loss / d parameter, for every parameter (state_dict names)
    buffer.<buffer name>      every buffer after the forward (running statistics)

The models (all float32 but the token inputs):
    mlp          Linear-ReLU-Linear, exported in eval mode
    cnn_train    Conv-BatchNorm-ReLU-MaxPool, Conv-BatchNorm-ReLU, AdaptiveAvgPool, Linear;
                 exported in training mode (batch statistics; running statistics updated)
    cnn_eval     the same with Dropout(0.25) before the Linear, exported in eval mode
    resblock     a residual block written with in-place ops (relu_, out += identity), eval mode
    gpt          token and position embeddings, two pre-norm blocks with causal
                 scaled_dot_product_attention, the output layer tied to the token embedding;
                 eval mode
    charlm       nn.TransformerEncoder over embeddings with a causal mask; eval mode

and, program only, `derived_dims.pt2`: Linear(4, 4) of cat([x, x]) plus y for x [b, 4] and
y [2b, 4] (b a Dim in [2, 64], y's batch the derived dimension 2*b), whose second input's size
is an expression of a symbol.

Debian's python3-torch (1.13) has no torch.export: the script re-runs itself in a virtual
environment it creates (default ~/.cache/locus/torch-export-venv, or --venv) with
torch==2.15.0 and numpy from PyPI. Usage: scripts/reference/export_models.py [--out DIR]
(default tests/export/data).
"""

import argparse
import os
import subprocess
import sys

TORCH = "torch==2.15.0"


def ensure_torch(venv):
    try:
        import torch  # noqa: F401
        if hasattr(torch, "export") and tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 5):
            return
    except ImportError:
        pass
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        subprocess.check_call([sys.executable, "-m", "venv", venv])
        subprocess.check_call([python, "-m", "pip", "install", "-q", TORCH, "numpy"])
    os.execv(python, [python] + sys.argv)


def main():
    parser = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, "..", "..", "tests", "export", "data"))
    parser.add_argument("--venv", default=os.path.expanduser("~/.cache/locus/torch-export-venv"))
    args = parser.parse_args()
    ensure_torch(args.venv)

    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.export import Dim

    sys.path.insert(0, here)
    from safetensors_io import save_safetensors
    import gpt_model

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 8)
            self.fc2 = nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))

    class CNN(nn.Module):
        def __init__(self, p):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(4)
            self.conv2 = nn.Conv2d(4, 8, 3)
            self.bn2 = nn.BatchNorm2d(8)
            self.drop = nn.Dropout(p)
            self.fc = nn.Linear(8, 5)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
            x = F.relu(self.bn2(self.conv2(x)))
            x = F.adaptive_avg_pool2d(x, 1).flatten(1)
            return self.fc(self.drop(x))

    class ResBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 3, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(3)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(3, 3, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(3)

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            out += identity
            return self.relu(out)

    def GPT():
        return gpt_model.GPT(vocab=20, d=16, T=8, layers=2, heads=2)

    class CharLM(nn.Module):
        def __init__(self, vocab=20, d=16, T=8):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.pos = nn.Parameter(torch.randn(1, T, d) * 0.1)
            layer = nn.TransformerEncoderLayer(d, 2, 32, dropout=0.1, batch_first=True)
            self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.out = nn.Linear(d, vocab)

        def forward(self, idx):
            T = idx.shape[1]
            mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
            return self.out(self.enc(self.emb(idx) + self.pos[:, :T], mask=mask, is_causal=True))

    def images(n, c, s):
        return torch.randn(n, c, s, s)

    def tokens(n):
        return torch.randint(0, 20, (n, 8))

    cases = [
        ("mlp", MLP, False, lambda n: (torch.randn(n, 4),)),
        ("cnn_train", lambda: CNN(0.0), True, lambda n: (images(n, 1, 8),)),
        ("cnn_eval", lambda: CNN(0.25), False, lambda n: (images(n, 1, 8),)),
        ("resblock", ResBlock, False, lambda n: (images(n, 3, 6),)),
        ("gpt", GPT, False, lambda n: (tokens(n),)),
        ("charlm", CharLM, False, lambda n: (tokens(n),)),
    ]
    os.makedirs(args.out, exist_ok=True)
    for index, (name, make, train, example) in enumerate(cases):
        torch.manual_seed(100 + index)
        model = make()
        model.train(train)
        if not train:  # give the batch norms running statistics other than the initial ones
            with torch.no_grad():
                for m in model.modules():
                    if isinstance(m, nn.BatchNorm2d):
                        m.running_mean.uniform_(-0.5, 0.5)
                        m.running_var.uniform_(0.5, 1.5)
        inputs, inputs2 = example(3), example(5)
        program = torch.export.export(model, inputs, dynamic_shapes=tuple({0: Dim("batch", min=1, max=64)} for _ in inputs))
        path = os.path.join(args.out, name + ".pt2")
        torch.export.save(program, path)
        # The same program decomposed to core ATen (run_decompositions), which computes the same.
        torch.export.save(program.run_decompositions(), os.path.join(args.out, name + "_core.pt2"))
        module = torch.export.load(path).module()
        out = {}
        for k, t in enumerate(inputs):
            out[f"input.{k}"] = t
        for k, t in enumerate(inputs2):
            out[f"input2.{k}"] = t
        params = dict(module.named_parameters())
        results = module(*inputs)
        results = results if isinstance(results, (tuple, list)) else (results,)
        loss = torch.zeros((), dtype=torch.float64)
        for k, r in enumerate(results):
            weight = torch.randn(r.shape)
            out[f"output.{k}"] = r.detach()
            out[f"loss_weight.{k}"] = weight
            loss = loss + (r * weight).sum().double()
        loss.backward()
        out["loss"] = loss.detach()
        for pname, p in program.state_dict.items():
            if pname in params and params[pname].grad is not None:
                out[f"grad.{pname}"] = params[pname].grad
        for bname, b in module.named_buffers():
            out[f"buffer.{bname}"] = b.detach().clone()
        with torch.no_grad():
            results2 = module(*inputs2)
        results2 = results2 if isinstance(results2, (tuple, list)) else (results2,)
        for k, r in enumerate(results2):
            out[f"output2.{k}"] = r
        save_safetensors(out, os.path.join(args.out, name + ".safetensors"),
                         {"torch": torch.__version__, "mode": "train" if train else "eval"})
        print(f"{name}: {os.path.getsize(path)} + {os.path.getsize(os.path.join(args.out, name + '.safetensors'))} bytes")

    class Derived(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x, y):
            return self.lin(torch.cat([x, x])) + y

    torch.manual_seed(200)
    b = Dim("b", min=2, max=64)
    program = torch.export.export(Derived().eval(), (torch.randn(3, 4), torch.randn(6, 4)),
                                  dynamic_shapes={"x": {0: b}, "y": {0: 2 * b}})
    path = os.path.join(args.out, "derived_dims.pt2")
    torch.export.save(program, path)
    print(f"derived_dims: {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
