#!/usr/bin/python3
"""Writes the PyTorch checkpoints that tests/serialize/pytorch_checkpoint_test.cpp and
tests/nn/rnn_test.cpp load, and what the tests compare them with, into
tests/serialize/pytorch_checkpoints/.

Run with Debian's python3-torch (1.13):  /usr/bin/python3 tests/serialize/make_pytorch_checkpoints.py
The outputs are committed (a few KB), so the test needs no PyTorch. Every checkpoint is written
by torch.save itself; each *_expected.safetensors holds the same tensors, contiguous, written by
scripts/reference/safetensors_io.py (no safetensors package needed), so the C++ test compares
Locus's reading of torch's pickle with Locus's independent safetensors reader.
"""
import os
import sys
import zipfile

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "reference"))
from safetensors_io import save_safetensors  # noqa: E402  (the reference scripts' writer)

OUT = os.path.join(HERE, "pytorch_checkpoints")


def flatten(d, prefix=""):
    """The tensors of a nested dict under dotted names, as locus::load returns them."""
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flatten(v, prefix + k + "."))
        elif isinstance(v, torch.Tensor):
            out[prefix + k] = v
    return out


def save_pair(obj, stem):
    torch.save(obj, os.path.join(OUT, stem + ".pt"))
    save_safetensors(flatten(obj), os.path.join(OUT, stem + "_expected.safetensors"))


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)

    # The model of the load_state_dict test; a few training-mode batches give BatchNorm running
    # statistics other than 0 and 1, and num_batches_tracked 3.
    model = nn.Sequential(nn.Linear(4, 5), nn.BatchNorm1d(5), nn.ReLU(), nn.Linear(5, 3))
    with torch.no_grad():
        for _ in range(3):
            model(torch.randn(8, 4))
    model.eval()
    x = torch.randn(6, 4)
    with torch.no_grad():
        y = model(x)
    save_pair(model.state_dict(), "sequential")
    save_safetensors({"input": x, "output": y}, os.path.join(OUT, "sequential_forward.safetensors"))

    # One entry per dtype and per kind of view.
    base = torch.arange(12, dtype=torch.float32)
    shared = torch.randn(10)
    tensors = {
        "float16": torch.randn(2, 3).half(),
        "bfloat16": torch.randn(3).bfloat16(),
        "float64": torch.randn(2, 2, dtype=torch.float64),
        "int32": torch.tensor([-7, 0, 2**31 - 1], dtype=torch.int32),
        "int64": torch.tensor([-(2**40), 5], dtype=torch.int64),
        "int16": torch.tensor([-300, 300], dtype=torch.int16),
        "int8": torch.tensor([-128, 127], dtype=torch.int8),
        "uint8": torch.tensor([0, 200, 255], dtype=torch.uint8),
        "bool": torch.tensor([True, False, True]),
        "transposed": torch.randn(3, 4).t(),       # strides (1, 4)
        "offset_view": base.view(3, 4)[1:, 2:],    # storage offset 6, strides (4, 1)
        "shared_a": shared[:6].view(2, 3),         # two entries in one storage
        "shared_b": shared[4:],
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 3),
        "parameter": nn.Parameter(torch.randn(2)),  # _rebuild_parameter
    }
    save_pair(tensors, "dtypes")

    # A training checkpoint: the state_dict under "model" beside numbers, a string and a list.
    small = nn.Linear(2, 2)
    save_pair({"model": small.state_dict(), "epoch": 3, "name": "x", "losses": [0.5, 0.25], "best": None}, "nested")

    # The same archive with its members deflated (torch stores them; other zip tools may not).
    with zipfile.ZipFile(os.path.join(OUT, "nested.pt")) as stored, \
            zipfile.ZipFile(os.path.join(OUT, "nested_deflated.pt"), "w", zipfile.ZIP_DEFLATED) as deflated:
        for info in stored.infolist():
            deflated.writestr(info.filename, stored.read(info.filename))

    # torch < 1.6's format, which the loader refuses with advice.
    torch.save({"w": torch.ones(2)}, os.path.join(OUT, "legacy.pt"), _use_new_zipfile_serialization=False)

    # An LSTM's state_dict (two layers, bidirectional, projections: every kind of parameter name)
    # after a few SGD steps, and its forward on a batch with given states, for tests/nn/rnn_test.cpp.
    torch.manual_seed(41)
    lstm = nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    opt = torch.optim.SGD(lstm.parameters(), lr=0.5)
    for _ in range(3):
        opt.zero_grad()
        lstm(torch.randn(4, 2, 3))[0].pow(2).sum().backward()
        opt.step()
    x, h0, c0 = torch.randn(6, 2, 3), torch.randn(4, 2, 2), torch.randn(4, 2, 5)
    with torch.no_grad():
        y, (h, c) = lstm(x, (h0, c0))
    torch.save(lstm.state_dict(), os.path.join(OUT, "lstm.pt"))
    save_safetensors({"input": x, "h0": h0, "c0": c0, "output": y, "h_n": h, "c_n": c},
                     os.path.join(OUT, "lstm_forward.safetensors"))


if __name__ == "__main__":
    main()
