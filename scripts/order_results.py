#!/usr/bin/env python3
"""Runs the op orderings on the graphs of bench/data/order (one run each,
`memplan_bench --memplan_order_targets`, benchmarks BM_order_*_order_*)
and writes bench/order_results.md: per graph the lower bound of each
order (the most bytes alive at one op, which every placement of that order
needs), its ratio to the traced order's, whether `optimal` proved its order and its time, beside the lower
bound over all op orders; geometric means per set.

    python3 scripts/order_results.py [--bench build-release/bench/memplan_bench]
"""

import argparse
import datetime
import json
import math
import os
import subprocess

ORDERINGS = ["traced", "reverse_postorder", "memory", "window", "optimal"]
SETS = [
    ("irregular", "irregularly wired (RandWire, NASNet, DARTS-style)"),
    ("inference", "other inference graphs"),
    ("training", "training steps"),
]


def geomean(values):
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values))


def run(bench, data_dir):
    out = subprocess.run(
        [
            bench,
            "--memplan_order_targets",
            f"--memplan_data_dir={data_dir}",
            "--benchmark_filter=BM_order_.*_order_",
            "--benchmark_format=json",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    results = {}
    for b in json.loads(out.stdout)["benchmarks"]:
        name = b["name"].split("/")[0]
        rest = name[len("BM_order_") :]
        ordering = next(o for o in ORDERINGS if rest.startswith(o + "_order_"))
        graph = rest[len(ordering + "_order_") :]
        results[(graph, ordering)] = b
    return results


def header_lines(load):
    """The page's title, its introduction and the table's header."""
    return [
        "# Op orderings on graphs where the order matters",
        "",
        f"`python3 scripts/order_results.py` ({datetime.date.today()}, "
        f"{os.cpu_count()} CPUs, load average {load[0]:.1f} at the start): "
        "`memplan_bench --memplan_order_targets`, one run per row, on the "
        "traced PyTorch graphs of `bench/data/order` (made by "
        "`scripts/make_order_graphs.py`; see its README). Bytes are the "
        "lower bound of the order: the most bytes alive at one op, which "
        "every placement of that order needs. *x traced* is that over the "
        "traced order's. "
        "*any order* is `LowerBoundOverOrders()`: no order that keeps the "
        "data dependencies, writes, in-place merges and pinned ops needs "
        "fewer bytes. `optimal`'s time is its search (its default work, "
        "then beams, after `memory`'s and `window`'s orders, the lowest of "
        "which it starts from); *proven*: its order is optimal.",
        "",
        "| graph | set | ops | traced | reverse_postorder | x traced | "
        "memory | x traced | window | x traced | optimal | x traced | "
        "proven | optimal ms | any order | x traced |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"
        "---:|---:|",
    ]


def graph_row(g, row, ratios, placed):
    """The table's row of graph `g` (its results by ordering in `row`);
    adds its ratios to `ratios` and its placed peaks to `placed`."""
    name = g["name"]
    traced = row["traced"]["traced"]
    cells = [name, g["set"], str(int(row["traced"]["ops"])), str(int(traced))]
    for o in ORDERINGS:
        placed.append((name, o, row[o].get("placed", -1), row[o]["peak"]))
    for o in ORDERINGS[1:]:
        peak = row[o]["peak"]
        ratio = peak / traced
        ratios.setdefault((g["set"], o), []).append(ratio)
        cells += [str(int(peak)), f"{ratio:.3f}"]
        if o == "optimal":
            cells += [
                "yes" if row[o].get("proven") else "no",
                f"{row[o]['real_time']:.0f}",
            ]
    any_order = row["traced"]["any_order"]
    if any_order > 0:
        ratios.setdefault((g["set"], "any"), []).append(any_order / traced)
        cells += [str(int(any_order)), f"{any_order / traced:.3f}"]
    else:
        cells += ["-", "-"]
    return "| " + " | ".join(cells) + " |"


def means_lines(ratios):
    """The geometric means of the ratios per set."""
    lines = [
        "",
        "Geometric means of *x traced*:",
        "",
        "| set | graphs | reverse_postorder | memory | window | optimal | "
        "any order |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for key, label in SETS:
        if (key, "optimal") not in ratios:
            continue
        cells = [label, str(len(ratios[(key, "optimal")]))]
        for o in ORDERINGS[1:] + ["any"]:
            v = ratios.get((key, o))
            cells.append(f"{geomean(v):.3f}" if v else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def placed_lines(placed):
    """How many orders the default planner placed at their lower bound, and
    the ones above it."""
    above = [p for p in placed if p[2] != p[3]]
    lines = [
        "",
        f"Placed: the default planner (`PlanMemory`, verified) placed "
        f"{len(placed) - len(above)} of the {len(placed)} orders above at "
        f"their lower bound" + (", every one." if not above else "; above it:"),
    ]
    if above:
        lines += [
            "",
            "| graph | ordering | placed | lower bound |",
            "|---|---|---:|---:|",
        ]
        lines += [
            f"| {n} | {o} | {int(p)} | {int(b)} |" for n, o, p, b in above
        ]
    return lines


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--bench",
        default=os.path.join(root, "build-release", "bench", "memplan_bench"),
    )
    parser.add_argument("--data", default=os.path.join(root, "bench", "data"))
    parser.add_argument(
        "--out", default=os.path.join(root, "bench", "order_results.md")
    )
    args = parser.parse_args()
    with open(os.path.join(args.data, "order", "summary.jsonl")) as f:
        graphs = [json.loads(line) for line in f]
    load = os.getloadavg()
    results = run(args.bench, args.data)

    lines = header_lines(load)
    ratios = {}
    placed = []  # (graph, ordering, placed peak, order's bound)
    for g in graphs:
        row = {o: results.get((g["name"], o)) for o in ORDERINGS}
        if any(r is None for r in row.values()):
            continue
        lines.append(graph_row(g, row, ratios, placed))
    lines += means_lines(ratios)
    lines += placed_lines(placed)
    lines.append("")
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
