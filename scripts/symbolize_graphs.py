#!/usr/bin/env python3
"""Turns bundled graphs traced at one sequence length into symbolic graphs.

Each tensor whose shape has the traced sequence length as a dim gets that
dim replaced by the symbolic dim `seq`, and its size becomes the product of
its shape and its dtype's width as an expression ("2048*seq*seq"). Each
size is checked: at the traced length it must equal the bundled size
exactly, else the graph is refused (no file is written for it), naming the
tensor. Tensors without a shape, or whose shape does not hold the traced
length, keep their size. The output is deterministic (sorted keys, fixed
formatting).

    python3 scripts/symbolize_graphs.py [OUT_DIR]

writes OUT_DIR (default bench/data/symbolic_bundled) and its README.md.
"""

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (bundled graph, traced sequence length, range of seq). The length must
# not collide with another dim of the model: the encoder has d_model 512, 8
# heads, feed-forward 2048, traced at seq 128; the decoder's KV caches are
# 2048 long. The README lists every other dim of each graph.
GRAPHS = [
    ("bench/data/models/transformer_encoder_6l.json", 128, (1, 2048)),
    ("bench/data/executorch/llama_kv_cache_2048.json", 2048, (1, 2048)),
]

WIDTH = {
    "float32": 4,
    "float16": 2,
    "bfloat16": 2,
    "int64": 8,
    "int32": 4,
    "int16": 2,
    "int8": 1,
    "uint8": 1,
    "bool": 1,
    "float64": 8,
}


class Refused(Exception):
    pass


def symbolize_tensor(t, length):
    shape = t.get("shape")
    if not isinstance(shape, list) or length not in shape:
        return t
    dtype = t.get("dtype")
    if dtype not in WIDTH:
        raise Refused(f'tensor "{t["name"]}": unknown dtype {dtype!r}')
    constant = WIDTH[dtype]
    power = 0
    for d in shape:
        if not isinstance(d, int):
            raise Refused(
                f'tensor "{t["name"]}": shape {shape} is not integral'
            )
        if d == length:
            power += 1
        else:
            constant *= d
    if constant * length**power != t["size"]:
        raise Refused(
            f'tensor "{t["name"]}": shape {shape} of {dtype} gives '
            f"{constant * length ** power} bytes at seq={length}, the graph "
            f'says {t["size"]}'
        )
    out = dict(t)
    out["shape"] = ["seq" if d == length else d for d in shape]
    out["size"] = "*".join([str(constant)] + ["seq"] * power)
    return out


def symbolize(path, length, lo, hi):
    with open(os.path.join(ROOT, path)) as f:
        g = json.load(f)
    if "dims" in g:
        raise Refused("the graph already has dims")
    out = dict(g)
    out["name"] = g["name"] + "_seq"
    out["dims"] = {"seq": {"min": lo, "max": hi}}
    out["source"] = (
        f"{path} made symbolic by scripts/symbolize_graphs.py: "
        f"dims of {length} are seq. " + g.get("source", "")
    )
    out["tensors"] = [symbolize_tensor(t, length) for t in g["tensors"]]
    changed = sum(1 for a, b in zip(g["tensors"], out["tensors"]) if a is not b)
    others = sorted(
        {
            d
            for t in out["tensors"]
            for d in t.get("shape") or []
            if isinstance(d, int)
        }
    )
    return out, changed, len(g["tensors"]), others


def main():
    out_dir = (
        sys.argv[1]
        if len(sys.argv) > 1
        else os.path.join(ROOT, "bench/data/symbolic_bundled")
    )
    os.makedirs(out_dir, exist_ok=True)
    lines = [
        "# Bundled graphs made symbolic",
        "",
        "Written by `python3 scripts/symbolize_graphs.py` from the bundled "
        "graphs below: in every tensor whose shape holds the traced sequence "
        "length, that dim becomes `seq` and the size the product of the "
        "shape and the dtype's width. Each such size equals the bundled size "
        "at the traced length (checked; a graph with a mismatch is refused). "
        "A dim that holds the length only as a factor (a flattened "
        "`seq*d`) is not recognised and keeps its traced size; in the two "
        "graphs below no tensor's size changes other than through a dim "
        "equal to the length.",
        "",
        "| file | from | traced at | seq range | tensors symbolic | the "
        "other dims of the shapes |",
        "|---|---|---:|---|---:|---|",
    ]
    status = 0
    for path, length, (lo, hi) in GRAPHS:
        try:
            g, changed, total, others = symbolize(path, length, lo, hi)
        except Refused as e:
            print(f"{path}: refused: {e}", file=sys.stderr)
            status = 1
            continue
        name = g["name"] + ".json"
        with open(os.path.join(out_dir, name), "w") as f:
            json.dump(g, f, indent=1, sort_keys=True)
            f.write("\n")
        lines.append(
            f"| {name} | `{path}` | {length} | [{lo}, {hi}] | "
            f"{changed} of {total} | "
            f"{', '.join(map(str, others))} |"
        )
        print(f"{name}: {changed} of {total} tensors symbolic")
    with open(os.path.join(out_dir, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
