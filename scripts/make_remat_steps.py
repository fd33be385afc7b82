#!/usr/bin/env python3
"""Writes bench/data/remat/: training steps whose ops carry "cost" (FLOPs)
and "recomputable", for rematerialization (docs/remat.md), and their README.

    .venv/bin/python scripts/make_remat_steps.py [OUT_DIR]

Deterministic, as scripts/make_training_steps.py (whose networks and loss
it uses): seed 0, random weights, nothing downloaded. memplan.torch.trace
with training=True fills each op's cost and whether it may be recomputed.
The benchmark sweeps each (`memplan_bench --memplan_targets
--benchmark_filter=BM_target_remat_`).
"""

import argparse
import os
import sys

import torch

import memplan
import memplan.torch as mt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_training_steps as steps  # noqa: E402

NAMES = ["efficientnet_b0_train_b8"]

README = """# Training steps with op costs, for rematerialization

Made by `scripts/make_remat_steps.py` (PyTorch {torch}; the networks and
loss of `scripts/make_training_steps.py`, traced by `memplan.torch.trace`
with `training=True`, which gives each op its FLOPs as `"cost"` and marks
the ops that may run again `"recomputable"`). The benchmark sweeps each
from the peak without recomputation down to the smallest peak reached
(`memplan_bench --memplan_targets --benchmark_filter=BM_target_remat_`):
at most 2 s of CPU per budget.

| graph | ops | recomputable | total cost (FLOPs) | peak without recomputation (bytes) | file |
|---|---:|---:|---:|---:|---|
{rows}
"""


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "out_dir",
        nargs="?",
        default=os.path.join(here, "..", "bench", "data", "remat"),
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.out_dir, exist_ok=True)
    rows = []
    for name in NAMES:
        torch.manual_seed(0)
        model, x = steps.GRAPHS[name][1]()
        traced = mt.trace(
            model, (x,), training=True, loss_fn=steps.cross_entropy, name=name
        )
        path = os.path.join(args.out_dir, name + ".json.gz")
        memplan.write_graph(traced.graph, path)
        graph = memplan.read_graph(path)
        ops = graph.ops
        cost = sum(op.cost or 0 for op in ops)
        peak = memplan.plan(graph).peak
        rows.append(
            f"| {name} | {len(ops)} | "
            f"{sum(1 for op in ops if op.recomputable)} | {cost:.4g} | "
            f"{peak} | `{os.path.basename(path)}` "
            f"({os.path.getsize(path) // 1024} KiB) |"
        )
        print(name, len(ops), flush=True)
    with open(os.path.join(args.out_dir, "README.md"), "w") as f:
        f.write(
            README.format(
                torch=torch.__version__.split("+")[0], rows="\n".join(rows)
            )
        )


if __name__ == "__main__":
    main()
