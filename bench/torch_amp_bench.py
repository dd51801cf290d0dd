#!/usr/bin/python3
"""torch_amp_bench.py - PyTorch's side of the mixed-precision benchmarks (bench/amp_bench.sh,
scripts/gpu-check.sh). The MLP of ../shared/bench (784-256-10, SGD lr 0.01, cross entropy), one
training step under torch.autocast, with the method of ../shared/bench/torch_cpu_bench.py
(2 warm-up calls, repeat count calibrated to >= 100 ms a sample, median of 15 samples).

    /usr/bin/python3 bench/torch_amp_bench.py --device cpu --json torch_amp.json
    python3 bench/torch_amp_bench.py --device cuda --json torch_amp_gpu.json

Rows: cpu  mlp_train_step_sgd_b{64,512} (float32) and mlp_amp_bf16_train_step_sgd_b{64,512};
      cuda gpu_mlp_train_step_sgd_b{512,4096} (float32) and
           gpu_mlp_amp_{fp16,bf16}_train_step_sgd_b{512,4096} (fp16 with GradScaler).
"""
import argparse
import contextlib
import json
import statistics
import time

import torch
import torch.nn as nn

RESULTS = []


def run(name, body, sync, samples=15, target_s=0.1):
    body(1), body(1)
    sync()
    n = 1
    while True:
        t0 = time.perf_counter()
        body(n)
        sync()
        dt = time.perf_counter() - t0
        if dt >= target_s or n >= 1 << 20:
            break
        n = max(n * 2, int(n * target_s / max(dt, 1e-9) * 1.1)) if dt > 1e-4 else n * 10
    vals = []
    for _ in range(samples):
        sync()
        t0 = time.perf_counter()
        body(n)
        sync()
        vals.append((time.perf_counter() - t0) / n * 1e3)
    r = {"name": name, "unit": "ms", "median": statistics.median(vals), "min": min(vals), "max": max(vals),
         "n": samples, "note": ""}
    RESULTS.append(r)
    print(f"{name:40s} {r['median']:10.3f} ms (min {r['min']:.3f}, max {r['max']:.3f})", flush=True)


def step_fn(device, batch, dtype):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(batch, 784, device=device)
    y = torch.randint(0, 10, (batch,), device=device)
    scaler = torch.cuda.amp.GradScaler(enabled=dtype == torch.float16) if device == "cuda" else None

    def body(n):
        for _ in range(n):
            opt.zero_grad()
            with torch.autocast(device_type=device, dtype=dtype) if dtype else contextlib.nullcontext():
                loss = nn.functional.cross_entropy(model(x), y)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
    return body


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json", default="")
    a = p.parse_args()
    if a.device == "cpu":
        torch.set_num_threads(a.threads)
        sync = lambda: None
        for b in (64, 512):
            run(f"mlp_train_step_sgd_b{b}", step_fn("cpu", b, None), sync)
            run(f"mlp_amp_bf16_train_step_sgd_b{b}", step_fn("cpu", b, torch.bfloat16), sync)
    else:
        sync = torch.cuda.synchronize
        for b in (512, 4096):
            run(f"gpu_mlp_train_step_sgd_b{b}", step_fn("cuda", b, None), sync, samples=11)
            for name, dt in (("fp16", torch.float16), ("bf16", torch.bfloat16)):
                run(f"gpu_mlp_amp_{name}_train_step_sgd_b{b}", step_fn("cuda", b, dt), sync, samples=11)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"impl": "torch-python", "meta": {"torch": torch.__version__, "device": a.device}, "results": RESULTS}, f)


if __name__ == "__main__":
    main()
