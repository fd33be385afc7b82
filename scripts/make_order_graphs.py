#!/usr/bin/env python3
"""Writes bench/data/order/: PyTorch graphs whose op order matters, traced
with memplan.torch, and their README.

    .venv/bin/python scripts/make_order_graphs.py [OUT_DIR] [--only NAME ...]

Deterministic: every network is built from a seed (scripts/order_models.py
for the irregularly wired ones and the U-Net; torchvision with
weights=None for the rest), random weights, nothing downloaded. A graph
whose JSON exceeds 1 MB is written gzipped (NAME.json.gz).
"""

import argparse
import json
import os
import sys
import time

import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import order_models  # noqa: E402

import memplan  # noqa: E402
import memplan.torch as mt  # noqa: E402

GZIP_ABOVE = 1 << 20


def cross_entropy(output):
    target = torch.arange(output.shape[0]) % output.shape[1]
    return torch.nn.functional.cross_entropy(output, target)


def vision(name, **kwargs):
    torch.manual_seed(0)
    return getattr(torchvision.models, name)(weights=None, **kwargs)


# name -> (set, what, () -> (model, example input, training))
GRAPHS = {}
for seed in (1, 2, 3):
    GRAPHS[f"randwire_seed{seed}"] = (
        "irregular",
        f"RandWire, WS(32, 4, 0.75) x 3 stages, 32-128 channels, seed "
        f"{seed}, 1x3x64x64",
        lambda seed=seed: (
            order_models.irregular("randwire", seed),
            torch.randn(1, 3, 64, 64),
            False,
        ),
    )
for seed in (1, 2, 3):
    GRAPHS[f"nasnet_seed{seed}"] = (
        "irregular",
        f"NASNet-style cells (5 nodes, random genotype), 5 cells, 16 "
        f"channels, seed {seed}, 1x3x32x32",
        lambda seed=seed: (
            order_models.irregular("nasnet", seed, channels=16),
            torch.randn(1, 3, 32, 32),
            False,
        ),
    )
for seed in (1, 2, 3):
    GRAPHS[f"darts_seed{seed}"] = (
        "irregular",
        f"DARTS-style cells (4 nodes, random genotype), 8 cells, 16 "
        f"channels, seed {seed}, 1x3x32x32",
        lambda seed=seed: (
            order_models.irregular("darts", seed, cells=8, channels=16),
            torch.randn(1, 3, 32, 32),
            False,
        ),
    )
GRAPHS["unet"] = (
    "inference",
    "U-Net, depth 4, 16-256 channels, 1x3x128x128",
    lambda: (
        (torch.manual_seed(0), order_models.UNet().eval())[1],
        torch.randn(1, 3, 128, 128),
        False,
    ),
)
GRAPHS["googlenet"] = (
    "inference",
    "torchvision googlenet(weights=None, aux_logits=False), " "1x3x224x224",
    lambda: (
        vision("googlenet", aux_logits=False, init_weights=True).eval(),
        torch.randn(1, 3, 224, 224),
        False,
    ),
)
GRAPHS["inception_v3"] = (
    "inference",
    "torchvision inception_v3(weights=None, aux_logits=False), " "1x3x299x299",
    lambda: (
        vision("inception_v3", aux_logits=False, init_weights=True).eval(),
        torch.randn(1, 3, 299, 299),
        False,
    ),
)
# At 64x64 the gradients alive at the last step are most of a training
# step's peak; at the resolution the models are trained at (224x224) the
# activations outweigh them.
STEPS = [
    (model, 64, "")
    for model in ("mobilenet_v2", "resnet18", "convnext_tiny", "swin_t")
] + [(model, 224, "_224") for model in ("convnext_tiny", "swin_t")]
for model, side, suffix in STEPS:
    GRAPHS[f"{model}_step{suffix}"] = (
        "training",
        f"torchvision {model}(weights=None, num_classes=10), one "
        "training step (forward, cross-entropy, backward; train mode), "
        f"2x3x{side}x{side}",
        lambda model=model, side=side: (
            vision(model, num_classes=10).train(),
            torch.randn(2, 3, side, side),
            True,
        ),
    )


def make(name, out_dir):
    group, what, build = GRAPHS[name]
    torch.manual_seed(0)
    model, x, training = build()
    start = time.perf_counter()
    traced = mt.trace(
        model,
        (x,),
        training=training,
        name=name,
        loss_fn=cross_entropy if training else None,
    )
    graph = traced.graph
    text = memplan.graph_to_json(graph)
    path = os.path.join(out_dir, name + ".json")
    for stale in (path, path + ".gz"):
        if os.path.exists(stale):
            os.remove(stale)
    if len(text) > GZIP_ABOVE:
        path += ".gz"
    memplan.write_graph(graph, path)
    traced_bound = memplan.plan(graph, "naive").lower_bound
    any_order = memplan.lower_bound_over_orders(graph)
    row = {
        "name": name,
        "set": group,
        "what": what,
        "file": os.path.basename(path),
        "ops": len(graph.ops),
        "tensors": len(graph.tensors),
        "pinned": sum(1 for o in graph.ops if o.pinned),
        "writes": sum(1 for o in graph.ops if o.writes),
        "traced": traced_bound,
        "any_order": any_order[0] if any_order else None,
        "bytes": os.path.getsize(path),
        "seconds": round(time.perf_counter() - start, 1),
    }
    print(json.dumps(row), flush=True)
    return row


README = """# Graphs where the op order matters

Made by `scripts/make_order_graphs.py` (PyTorch {torch}, torchvision
{torchvision}; `memplan.torch.trace`, core ATen via torch.export, float32,
CPU), deterministically: each network is built from a seed, weights are
random, nothing is downloaded. The irregularly wired networks and the
U-Net are defined in `scripts/order_models.py`:

- **RandWire-style** (Xie et al. 2019): per stage a Watts-Strogatz
  small-world graph WS(32, 4, 0.75) drawn from the seed, made acyclic from
  the lower index to the higher; a node sums its predecessors with
  sigmoid weights, then ReLU, a separable convolution and batch norm; nodes
  without a predecessor read the stage input at stride 2, the stage output
  is the mean of the nodes without a successor.
- **NASNet-style** (Zoph et al. 2018): cells of two inputs (the previous
  two cells) and 5 nodes, each the sum of two ops (separable 3x3 / 5x5,
  average / max pooling, identity) on earlier states, the cell output the
  concatenation of the unused states; the normal and reduction genotypes
  drawn from the seed (random search over the space); reductions at a
  third and two thirds of the cells.
- **DARTS-style** (Liu et al. 2019): as NASNet's, with 4 nodes each reading
  two distinct earlier states, DARTS's op set (adding dilated separable
  convolutions) and every node concatenated.
- **U-Net** (Ronneberger et al. 2015): depth 4, the encoder's activations
  held until the decoder concatenates them.
- googlenet, inception_v3 (inference) and four training steps (forward,
  cross-entropy, backward: the gradients of every parameter; train mode, so
  batch norm's running statistics are the graph's in-place `writes`, and
  the random draws of dropout and stochastic depth are `pinned` ops).

Ops are in the traced order (the order the Python code ran them). Graphs
over 1 MB of JSON are gzipped. The sizes, with the lower bound of the
traced order (most bytes alive at one op) and the lower bound over all op
orders (`memplan.lower_bound_over_orders`), in bytes:

| graph | set | ops | tensors | pinned | writes | traced | any order | file | network |
|---|---|---:|---:|---:|---:|---:|---:|---|---|
{rows}

The benchmark (`memplan_bench --memplan_order_targets`, tabulated by
`scripts/order_results.py` into `bench/order_results.md`) orders each
graph with every scheduler. {count} graphs, {total:.1f} MB in all;
{seconds:.0f} s to make them (wall clock, on a shared two-core machine).
"""


def write_readme(out_dir, rows):
    lines = []
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['set']} | {r['ops']} | {r['tensors']} | "
            f"{r['pinned']} | {r['writes']} | {r['traced']} | "
            f"{r['any_order'] if r['any_order'] is not None else '-'} | "
            f"`{r['file']}` ({r['bytes'] // 1024} KiB) | {r['what']} |"
        )
    with open(os.path.join(out_dir, "README.md"), "w") as f:
        f.write(
            README.format(
                torch=torch.__version__.split("+")[0],
                torchvision=torchvision.__version__.split("+")[0],
                rows="\n".join(lines),
                count=len(rows),
                total=sum(r["bytes"] for r in rows) / 1e6,
                seconds=sum(r["seconds"] for r in rows),
            )
        )


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "out_dir",
        nargs="?",
        default=os.path.join(here, "..", "bench", "data", "order"),
    )
    parser.add_argument("--only", nargs="*", choices=list(GRAPHS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.out_dir, exist_ok=True)
    # One line per graph made so far, so that --only redoes a few.
    index_path = os.path.join(args.out_dir, "summary.jsonl")
    rows = {}
    if os.path.exists(index_path):
        with open(index_path) as f:
            rows = {r["name"]: r for r in map(json.loads, f)}
    for name in args.only or list(GRAPHS):
        rows[name] = make(name, args.out_dir)
    ordered = [rows[n] for n in GRAPHS if n in rows]
    with open(index_path, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in ordered)
    write_readme(args.out_dir, ordered)


if __name__ == "__main__":
    main()
