#!/usr/bin/python3
"""Writes the PyTorch checkpoints that tests/serialize/pytorch_checkpoint_test.cpp loads, and
what the test compares them with, into tests/serialize/pytorch_checkpoints/.

Run with Debian's python3-torch (1.13):  /usr/bin/python3 tests/serialize/make_pytorch_checkpoints.py
The outputs are committed (a few KB), so the test needs no PyTorch. Every checkpoint is written
by torch.save itself; each *_expected.safetensors holds the same tensors, contiguous, written by
the small safetensors writer below (no safetensors package needed), so the C++ test compares
Locus's reading of torch's pickle with Locus's independent safetensors reader.
"""
import json
import os
import struct

import torch
from torch import nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pytorch_checkpoints")

DTYPE_NAMES = {
    torch.bool: "BOOL", torch.uint8: "U8", torch.int8: "I8", torch.int16: "I16", torch.int32: "I32",
    torch.int64: "I64", torch.float16: "F16", torch.bfloat16: "BF16", torch.float32: "F32", torch.float64: "F64",
}


def tensor_bytes(t):
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:  # NumPy has no bfloat16: the same bits as int16
        t = t.view(torch.int16)
    return t.numpy().tobytes()


def write_safetensors(tensors, path):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        data = tensor_bytes(t)
        header[name] = {"dtype": DTYPE_NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


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
    write_safetensors(flatten(obj), os.path.join(OUT, stem + "_expected.safetensors"))


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
    write_safetensors({"input": x, "output": y}, os.path.join(OUT, "sequential_forward.safetensors"))

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

    # torch < 1.6's format, which the loader refuses with advice.
    torch.save({"w": torch.ones(2)}, os.path.join(OUT, "legacy.pt"), _use_new_zipfile_serialization=False)


if __name__ == "__main__":
    main()
