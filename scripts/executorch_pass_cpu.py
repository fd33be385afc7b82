#!/usr/bin/env python3
"""The CPU time of memplan's memory planning pass next to ExecuTorch's
default pass, on the programs of scripts/executorch_table.py: each model is
exported and lowered once; just before its memory planning, copies of the
graph (the very input either pass would plan) are planned by ExecuTorch's
default `MemoryPlanningPass()`, by memplan's `memory_planning_pass()` and by
memplan's with ExecuTorch's pairwise check (`verify="executorch"`), in
turns, `--repeats` times each; the CPU time of each pass's `run` (process
time: planning, writing the plan back, checking it) is the median of its
turns. One markdown row per model:

  model | specs | ExecuTorch default | memplan | ratio | memplan,
  verify="executorch" | memplan's arenas | ExecuTorch's arenas

Usage (PYTHONPATH holding the memplan module; PyTorch, torchvision and
ExecuTorch installed):
  python scripts/executorch_pass_cpu.py [--models a,b,...] [--image-size N]
                                        [--repeats N]
It exits with status 1 when memplan's arenas differ from the ones
bench/data/executorch/summary.csv records (the table's), for a model there.
"""

import argparse
import copy
import csv
import importlib.util
import os
import pathlib
import statistics
import sys
import time

import torch
from executorch.exir.memory_planning import collect_specs_from_nodes
from executorch.exir.passes import MemoryPlanningPass

import memplan.executorch as met

_HERE = pathlib.Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location(
    "executorch_table", _HERE / "executorch_table.py"
)
table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(table)

PASSES = {
    "default": MemoryPlanningPass,
    "memplan": met.memory_planning_pass,
    "memplan_et_verify": lambda: met.memory_planning_pass(verify="executorch"),
}


def recorded_arenas(path):
    """{model: [arena bytes, by mem_id from 1]} of summary.csv."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            out.setdefault(row["model"], []).append(int(row["memplan_best"]))
    return out


class Measured(MemoryPlanningPass):
    """ExecuTorch's default pass, that first times every pass of PASSES on
    copies of the graph it is given."""

    def __init__(self, tag, repeats):
        super().__init__()
        self.tag, self.repeats = tag, repeats
        self.seconds = {name: [] for name in PASSES}
        self.arenas, self.specs = {}, 0

    def run(self, graph_module, graph_signature=None):
        for _ in range(self.repeats):
            for name, make in PASSES.items():
                gm = copy.deepcopy(graph_module)
                if self.tag:
                    self.tag(gm)
                planning = make()
                start = time.process_time()
                planning.run(gm, graph_signature)
                self.seconds[name].append(time.process_time() - start)
                self.arenas[name] = list(gm.meta["non_const_buffer_sizes"])
                if name == "memplan":
                    self.specs = sum(
                        1
                        for _ in collect_specs_from_nodes(
                            gm.graph.nodes,
                            graph_signature,
                            ignore_out_var_node=False,
                            do_assertion=False,
                        )
                    )
        if self.tag:
            self.tag(graph_module)
        return super().run(graph_module, graph_signature)


def measure(name, image_size, repeats):
    model, inputs = table.MODELS[name](image_size)
    measured = Measured(table.POOL_PASSES.get(name), repeats)
    table.export(model, inputs, measured)
    seconds = {k: statistics.median(v) for k, v in measured.seconds.items()}
    return seconds, measured.arenas, measured.specs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(table.MODELS))
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--summary",
        default=str(_HERE.parent / "bench/data/executorch/summary.csv"),
        help="the table's arenas, to compare memplan's with",
    )
    args = parser.parse_args(argv)
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in table.MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}")
    torch.set_num_threads(1)
    recorded = recorded_arenas(args.summary)
    print(
        "| model | specs | ExecuTorch default | memplan | ratio | memplan, "
        "verify=\"executorch\" | memplan's arenas | ExecuTorch's arenas |"
    )
    print("|---|---:|---:|---:|---:|---:|---|---|")
    status = 0
    for name in names:
        seconds, arenas, specs = measure(name, args.image_size, args.repeats)
        ours = arenas["memplan"][1:]
        if name in recorded and ours != recorded[name]:
            print(
                f"{name}: memplan's arenas {ours} differ from the table's "
                f"{recorded[name]}",
                file=sys.stderr,
            )
            status = 1
        print(
            f"| {name} | {specs} | {seconds['default'] * 1e3:.0f} ms | "
            f"{seconds['memplan'] * 1e3:.0f} ms | "
            f"{seconds['memplan'] / seconds['default']:.2f} | "
            f"{seconds['memplan_et_verify'] * 1e3:.0f} ms | "
            f"{', '.join(f'{b:,}' for b in ours)} | "
            f"{', '.join(f'{b:,}' for b in arenas['default'][1:])} |",
            flush=True,
        )
    return status


if __name__ == "__main__":
    sys.exit(main())
