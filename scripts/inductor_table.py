#!/usr/bin/env python3
"""Inductor's own memory planning and memplan's side by side, per model.

Each model is compiled twice by torch.compile with
torch._inductor.config.memory_planning=True: once with Inductor's own
planner, once inside memplan.inductor.planning(). Printed as markdown: the
bytes of every pool of the compiled graphs (summed over the graphs of a
model: forward and backward for a training step) with Inductor's planner and
with memplan, the lower bound of the same live ranges (the most bytes live at
one step), the bound of those ranges with the output pools Inductor's
memory_pool gives (each output in a pool of its own for the whole call: no
plan of these pools is smaller), whether memplan's bytes are proven the
fewest (at that bound), and the compile time (the first call) with each. The
GPT-like decoder is compiled once with a dynamic sequence length and run at
each listed length: its pool bytes there against the lower bound at that
length, with Inductor's default memory_pool ("intermediates": the logits in a
pool of their own) and with "combined" (one pool). Outputs are checked
against eager at every run.

    PYTHONPATH=build/python .venv/bin/python scripts/inductor_table.py
    ... --models resnet50      # some of the static models (and the decoder)
    ... --models=              # the decoder alone
"""

import argparse
import os
import sys
import time
import warnings

import torch
import torchvision

sys.path.insert(
    0, os.path.join(os.path.dirname(__file__), "..", "python", "tests")
)
import inductor_models as models  # noqa: E402

import memplan.inductor as mi  # noqa: E402

torch.set_num_threads(1)


def first_call(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def compile_run(entry, use_memplan):
    """The model compiled and called once; (output, seconds, session).
    (The C++ kernels are compiled once, by a first compile before both.)"""
    torch._dynamo.reset()
    model, inputs = entry.make()
    if use_memplan:
        with mi.planning() as session:
            out, seconds = first_call(lambda: entry.run(model, inputs))
        return out, seconds, session
    # Inductor's own planner under the same settings, its graphs recorded.
    with mi.planning(None) as session:
        out, seconds = first_call(lambda: entry.run(model, inputs))
    return out, seconds, session


def static_row(name, entry):
    eager = entry.eager()
    compile_run(entry, False)  # warm: kernels built, imports done
    ref, t_ind, s_ind = compile_run(entry, False)
    out, t_mp, s_mp = compile_run(entry, True)
    models.assert_close(out, eager)
    models.assert_close(out, ref)
    ind = sum(g.inductor_nbytes for g in s_ind.graphs)
    mp = sum(g.nbytes for g in s_mp.graphs)
    lb = sum(g.lower_bound for g in s_mp.graphs)
    bound = sum(g.pool_bound for g in s_mp.graphs)
    plan_s = sum(g.plan_seconds for g in s_mp.graphs)
    pools = sum(len(g.pools) for g in s_mp.graphs)
    optimal = "yes" if all(g.proven_optimal for g in s_mp.graphs) else "no"
    lb = max(lb, 1)
    return (
        f"| {name} | {len(s_mp.graphs)} | {pools} | {ind:,} | {mp:,} | "
        f"{lb:,} | {bound:,} | {ind / lb:.3f} | {mp / lb:.3f} | {optimal} | "
        f"{t_ind:.1f} | "
        f"{t_mp:.1f} | {plan_s:.2f} ({100 * plan_s / t_ind:.1f} %) | {len(s_mp.fallbacks)} |"
    )


def decoder_run(planner, memory_pool="intermediates", **options):
    """The decoder compiled once with a dynamic sequence length and run at
    each listed length, under Inductor's memory_pool setting: (records by
    length, seconds, session)."""
    entry = models.DECODER
    torch._dynamo.reset()
    model, _ = entry.make()
    records = {}
    with torch._inductor.config.patch(memory_pool=memory_pool):
        with mi.planning(planner, **options) as session:
            start = time.perf_counter()
            compiled = entry.compile(model)
            for n in models.DECODER_SIZES:
                x = models.decoder_input(n)
                before = len(session.graphs)
                out = compiled(x)
                models.assert_close(out, model(x))
                new = session.graphs[before:]
                records[n] = new[-1] if new else records[max(records)]
            seconds = time.perf_counter() - start
    return records, seconds, session


# (memory_pool, symbolic planner): Inductor's default layout (each output
# in a pool of its own) with both planners, and one pool for everything.
DECODER_RUNS = (
    ("intermediates", "symbolic_greedy"),
    ("intermediates", "symbolic_search"),
    ("combined", "symbolic_greedy"),
)


def decoder_rows():
    decoder_run(None)  # warm: kernels built
    own_seconds = {}
    for pool in sorted({pool for pool, _ in DECODER_RUNS}):
        _, own_seconds[pool], _ = decoder_run(None, pool)
    rows = []
    for pool, planner in DECODER_RUNS:
        records, seconds, session = decoder_run(
            "best", pool, symbolic_planner=planner
        )
        for n, record in records.items():
            mp, ind, lb = record.at({name: n for name in record.symbols})
            kind = planner if record.symbols else "static"
            rows.append(
                f"| decoder, seq {n} | {pool} | {kind} | {ind:,} | {mp:,} | "
                f"{lb:,} | {ind / lb:.3f} | {mp / lb:.3f} |"
            )
        plan_s = sum(g.plan_seconds for g in session.graphs)
        own = own_seconds[pool]
        rows.append(
            f"| {pool}, {planner}: {len(session.graphs)} graphs, "
            f"{len(session.fallbacks)} fallbacks | | compiling and running "
            f"every length: {own:.1f} s with Inductor's planner, "
            f"{seconds:.1f} s with memplan | memplan's planning "
            f"{plan_s:.2f} s ({100 * plan_s / own:.1f} %) | | | | |"
        )
    return rows


def print_static_header():
    print(
        "| model | graphs | pools | Inductor's planner (bytes) | memplan "
        "(bytes) | lower bound | bound with these output pools | Inductor "
        "/ LB | memplan / LB | memplan's proven optimal | compile s, "
        "Inductor | compile s, memplan | of it memplan's planning s (% of Inductor's compile) | "
        "fallbacks |"
    )
    print(
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(models.STATIC))
    parser.add_argument("--no-decoder", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("error", mi.FallbackWarning)
    load = os.getloadavg()[0]
    print(
        f"torch {torch.__version__}, torchvision {torchvision.__version__}, "
        f"{os.cpu_count()} cores, load average {load:.1f} at the start\n"
    )
    names = [name for name in args.models.split(",") if name]
    if names:
        print_static_header()
    for name in names:
        print(static_row(name, models.STATIC[name]), flush=True)
    if not args.no_decoder:
        rows = decoder_rows()
        print(
            "\n| decoder (dynamic seq) | memory_pool | plan | Inductor's "
            "planner (bytes, planned at the hint) | memplan (bytes) | lower "
            "bound | Inductor / LB | memplan / LB |"
        )
        print("|---|---|---|---:|---:|---:|---:|---:|")
        for row in rows:
            print(row)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
