#!/usr/bin/env python3
"""torch.distributed (gloo) beside bench/locus_dist_bench.cpp: the same rows, repeat counts and
method (warm-up, a barrier before each of 9 samples, rank 0 times and writes the JSON).
Two processes over loopback, one thread each:
    /usr/bin/python3 bench/torch_dist_bench.py --json torch_dist.json
"""
import argparse
import json
import os
import socket
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

SAMPLES = 9


def samples(reps, body):
    body()
    out = []
    for _ in range(SAMPLES):
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(reps):
            body()
        out.append((time.perf_counter() - t0) / reps)
    return out


def row(name, unit, values, note):
    v = sorted(values)
    m = len(v) // 2
    med = v[m] if len(v) % 2 else 0.5 * (v[m - 1] + v[m])
    return {"name": name, "unit": unit, "median": med, "min": v[0], "max": v[-1], "n": len(v), "note": note}


def mlp():
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))


def rank_main(rank, world, port, path, only):
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    rows = []
    if "all_reduce" in only:
        for nbytes in [1 << 10, 16 << 10, 256 << 10, 4 << 20, 64 << 20]:
            t = torch.ones(nbytes // 4)
            reps = min(max((256 << 20) // nbytes, 3), 500)
            s = [nbytes / v / 1e9 for v in samples(reps, lambda: dist.all_reduce(t))]
            name = f"{nbytes >> 20}M" if nbytes >= 1 << 20 else f"{nbytes >> 10}K"
            rows.append(row("dist_all_reduce_" + name, "GB/s", s, "2 ranks, float32 sum, tensor bytes / time"))
    if "ddp" in only:
        torch.manual_seed(0)
        x, y = torch.randn(64, 784), torch.randint(0, 10, (64,))
        single = mlp()
        single_opt = torch.optim.SGD(single.parameters(), lr=0.01)
        loss_fn = nn.CrossEntropyLoss()

        def single_step():
            single_opt.zero_grad()
            loss_fn(single(x), y).backward()
            single_opt.step()

        alone = [v * 1e3 for v in samples(100, single_step)]
        model = mlp()
        ddp = nn.parallel.DistributedDataParallel(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)

        def ddp_step():
            opt.zero_grad()
            loss_fn(ddp(x), y).backward()
            opt.step()

        together = [v * 1e3 for v in samples(100, ddp_step)]
        rows.append(row("dist_mlp_step_single_b64", "ms", alone, "one process's SGD step, no group"))
        rows.append(row("dist_mlp_step_ddp_b64", "ms", together, "2 ranks, DDP, batch 64 each"))
        rows.append(row("dist_mlp_ddp_overhead_b64", "ms", [b - a for a, b in zip(alone, together)],
                        "DDP step minus the plain step, sample by sample"))
    if rank == 0:
        for r in rows:
            print(f"{r['name']:<34} {r['median']:12.3f} {r['unit']:<8} (min {r['min']:.3f}, max {r['max']:.3f})")
        if path:
            with open(path, "w") as f:
                json.dump({"impl": "torch", "meta": {"ranks": world, "backend": "gloo", "torch": torch.__version__},
                           "results": rows}, f)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--json")
    p.add_argument("--only", default="all_reduce,ddp")
    a = p.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(rank_main, args=(2, port, a.json, a.only.split(",")), nprocs=2)


if __name__ == "__main__":
    main()
