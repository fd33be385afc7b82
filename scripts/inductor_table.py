#!/usr/bin/env python3
"""Inductor's own memory planning and memplan's side by side, per model.

Each model is compiled twice by torch.compile with
torch._inductor.config.memory_planning=True: once with Inductor's own
planner, once inside memplan.inductor.planning(). Printed as markdown: the
bytes of every pool of the compiled graphs (summed over the graphs of a
model: forward and backward for a training step) with Inductor's planner and
with memplan, the lower bound of the same live ranges (the most bytes live at
one step), and the compile time (the first call) with each. The
GPT-like decoder is compiled once with a dynamic sequence length and run at
each listed length: its pool bytes there against the lower bound at that
length. Outputs are checked against eager at every run.

    PYTHONPATH=build/python .venv/bin/python scripts/inductor_table.py
    ... --models resnet50,decoder   # some of them
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
    plan_s = sum(g.plan_seconds for g in s_mp.graphs)
    pools = sum(len(g.pools) for g in s_mp.graphs)
    optimal = "yes" if all(g.proven_optimal for g in s_mp.graphs) else "no"
    lb = max(lb, 1)
    return (
        f"| {name} | {len(s_mp.graphs)} | {pools} | {ind:,} | {mp:,} | "
        f"{lb:,} | {ind / lb:.3f} | {mp / lb:.3f} | {optimal} | {t_ind:.1f} | "
        f"{t_mp:.1f} | {plan_s:.2f} ({100 * plan_s / t_ind:.1f} %) | {len(s_mp.fallbacks)} |"
    )


def decoder_rows():
    entry = models.DECODER
    torch._dynamo.reset()
    model, _ = entry.make()
    rows = []
    with mi.planning() as session:
        start = time.perf_counter()
        compiled = entry.compile(model)
        for n in models.DECODER_SIZES:
            x = models.decoder_input(n)
            before = len(session.graphs)
            out = compiled(x)
            models.assert_close(out, model(x))
            graphs = session.graphs[before:] or [
                g for g in session.graphs if g.symbols
            ]
            record = graphs[-1] if n != 1 else session.graphs[-1]
            values = {name: n for name in record.symbols}
            mp, ind, lb = record.at(values)
            rows.append(
                f"| decoder, seq {n} | {'static' if not record.symbols else 'symbolic'} | "
                f"{ind:,} | {mp:,} | {lb:,} | {ind / lb:.3f} | "
                f"{mp / lb:.3f} |"
            )
        seconds = time.perf_counter() - start
    return rows, seconds, session


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
    print(
        "| model | graphs | pools | Inductor's planner (bytes) | memplan "
        "(bytes) | lower bound | Inductor / LB | memplan / LB | memplan's "
        "proven optimal | compile s, "
        "Inductor | compile s, memplan | of it memplan's planning s (% of Inductor's compile) | "
        "fallbacks |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    for name in args.models.split(","):
        if name:
            print(static_row(name, models.STATIC[name]), flush=True)
    if not args.no_decoder:
        rows, seconds, session = decoder_rows()
        print(
            "\n| decoder (dynamic seq) | plan | Inductor's planner (bytes, "
            "planned at the hint) | memplan (bytes) | lower bound | "
            "Inductor / LB | memplan / LB |"
        )
        print("|---|---|---:|---:|---:|---:|---:|")
        for row in rows:
            print(row)
        print(
            f"\ndecoder: {len(session.graphs)} graphs, "
            f"{len(session.fallbacks)} fallbacks, all sizes run in "
            f"{seconds:.1f} s (compiles included), of it memplan's planning "
            f"{sum(g.plan_seconds for g in session.graphs):.2f} s"
        )
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
