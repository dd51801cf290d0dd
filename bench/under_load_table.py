#!/usr/bin/env python3
"""The table of bench/under_load.sh: for each load and MLP row, Locus (default environment),
Locus on one thread, LibTorch (default environment) and, when present, the previous build, as
the median over rounds of each run's median (ms); then Locus / one thread (target <= 1.3) and
LibTorch / Locus (> 1: Locus ahead)."""
import glob
import json
import statistics
import sys

ROWS = ["mlp_fwd_nograd_b64", "mlp_fwd_nograd_b512", "mlp_train_step_sgd_b64", "mlp_train_step_adam_b64",
        "mlp_train_step_sgd_b512", "mlp_train_step_adam_b512"]


def medians(pattern):
    runs = {}
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            for r in json.load(f)["results"]:
                runs.setdefault(r["name"], []).append(r["median"])
    return {name: statistics.median(v) for name, v in runs.items()}


def main(out, loads):
    print("| load | row | Locus ms | Locus 1 thread ms | LibTorch ms | before ms | Locus / 1 thread | LibTorch / Locus |")
    print("|---|---|---|---|---|---|---|---|")
    for load in loads:
        locus = medians(f"{out}/locus_load{load}_r*.json")
        one = medians(f"{out}/locus1_load{load}_r*.json")
        torch = medians(f"{out}/libtorch_load{load}_r*.json")
        before = medians(f"{out}/before_load{load}_r*.json")
        for row in ROWS:
            if row not in locus:
                continue
            l, o, t, b = locus[row], one.get(row), torch.get(row), before.get(row)
            cell = lambda v: f"{v:.3f}" if v is not None else "-"
            ratio = lambda a, c: f"{a / c:.2f}x" if a is not None and c else "-"
            print(f"| {load} | {row} | {cell(l)} | {cell(o)} | {cell(t)} | {cell(b)} | {ratio(l, o)} | {ratio(t, l)} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
