#!/usr/bin/env python3
"""Writes bench/data/symbolic/: symbolic graphs traced from PyTorch with a
dynamic sequence (or cache) length, and their README's table of sizes.

    .venv/bin/python scripts/make_symbolic_graphs.py [OUT_DIR]
                     [--only NAME ...]

The models are scripts/symbolic_models.py's (random weights from a fixed
seed, nothing downloaded), traced by memplan.torch.trace(...,
symbolic=True): torch.export with a torch.export.Dim, each size the
polynomial of the exported program's symbolic shapes. Deterministic: the
same PyTorch gives the same files. Each graph is checked before it is
written: planned with memplan.plan_symbolic, proven over its range, and
run in the arena of plan.at() at the range's ends with outputs equal to an
ordinary run of the traced program.
"""

import argparse
import importlib.util
import os
import pathlib

import torch

import memplan
import memplan.torch as mt

_SCRIPT = pathlib.Path(__file__).resolve().parent / "symbolic_models.py"
_spec = importlib.util.spec_from_file_location("symbolic_models", _SCRIPT)
sm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sm)

# name -> (trace, the dim, inputs at a value of it)
GRAPHS = {
    "transformer_encoder": (
        sm.trace_encoder,
        "seq",
        lambda n: (sm.encoder_input(n),),
    ),
    "llama_decoder": (sm.trace_llama, "seq", lambda n: (sm.llama_input(n),)),
    "llama_decoder_kv": (sm.trace_llama_kv, "cache", sm.kv_inputs),
}


def check(traced, dim, inputs):
    """Planned, proven, and run at the range's ends; the plan's peak and
    lower bound at a few values, for the README."""
    plan = memplan.plan_symbolic(traced, alignment=64)
    plan.verify()
    lo, hi = traced.dims[dim]
    for value in (lo, hi):
        x = inputs(value)
        at = plan.at(**{dim: value})
        memplan.verify(memplan.bind_dims(traced.graph, **{dim: value}), at)
        out = mt.run_in_arena(traced, at, x)
        ref = traced.run(x)
        for a, b in zip(
            out if isinstance(out, tuple) else (out,),
            ref if isinstance(ref, tuple) else (ref,),
        ):
            if not torch.equal(a, b):
                raise SystemExit(
                    f"{traced.graph.name}: the arena's outputs "
                    f"differ from an ordinary run at "
                    f"{dim}={value}"
                )
    return plan


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "out",
        nargs="?",
        default=str(
            pathlib.Path(__file__).resolve().parents[1]
            / "bench"
            / "data"
            / "symbolic"
        ),
    )
    parser.add_argument("--only", nargs="*", choices=sorted(GRAPHS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    for name in args.only or GRAPHS:
        trace, dim, inputs = GRAPHS[name]
        traced = trace(mt)
        plan = check(traced, dim, inputs)
        path = os.path.join(args.out, f"{name}.json")
        memplan.write_graph(traced.graph, path)
        lo, hi = traced.dims[dim]
        ratios = ", ".join(
            f"{v}: {plan.peak(**{dim: v}) / plan.lower_bound(**{dim: v}):.3f}"
            for v in (lo, 7, 64, 500, hi)
        )
        print(
            f"{name}: {len(traced.graph.tensors)} tensors, "
            f"{len(traced.graph.ops)} ops, {dim} in [{lo}, {hi}], "
            f"{len(plan.buckets)} buckets; peak / lower bound at {ratios}"
        )


if __name__ == "__main__":
    main()
