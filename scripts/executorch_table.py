#!/usr/bin/env python3
"""memplan in ExecuTorch, measured: every model below is exported to .pte
three times (memplan's pass, ExecuTorch's default greedy, ExecuTorch's naive
algorithm), the memplan and default programs are run in ExecuTorch's runtime
on the same inputs, and one markdown table row per model and memory arena
is printed:

  model | arena | memplan | ExecuTorch greedy | naive | lower bound | outputs equal

(bytes of `execution_plan[0].non_const_buffer_sizes[arena]`; the lower bound
is memplan's for the same specs: the most bytes alive at one node).

Usage (PYTHONPATH holding the memplan module; PyTorch, torchvision and
ExecuTorch installed):
  python scripts/executorch_table.py [--models a,b,...] [--image-size N]
                                     [--bench-data DIR]
It exits with status 1 when two programs' outputs differ, an output is
further than 1e-3 (relative) from eager PyTorch, or an arena of memplan's is
larger than ExecuTorch's greedy one, or not smaller while greedy's is above
the lower bound.
--bench-data writes each model's specs as a memplan graph (one op per graph
node, one pool per arena) with ExecuTorch's bytes beside them (summary.csv),
so that `memplan compare` runs memplan's planners on the same specs.
Weights are random; nothing is downloaded.
"""

import argparse
import copy
import csv
import gzip
import json
import math
import os
import sys

import torch
import torchvision
from torch import nn

import memplan
import memplan.executorch as met
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir.memory_planning import (
    MemoryPlanningAlgorithmSuite,
    _is_out_var_node,
    naive,
)
from executorch.exir.passes import MemoryPlanningPass
from executorch.exir.tensor import TensorSpec
from executorch.runtime import Runtime

CONTEXT = 2048  # the KV-cache model's context


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return (
            x
            * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
            * self.weight
        )


def _rotate(x, cos, sin):  # rotary embedding, rotate-half form
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


class CachedAttention(nn.Module):
    """Multi-head attention with a KV cache: mutable buffers of the whole
    context, written in place at `input_pos` and read in full."""

    def __init__(self, dim, heads, context):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        shape = (1, heads, context, self.head_dim)
        self.register_buffer("k_cache", torch.zeros(shape))
        self.register_buffer("v_cache", torch.zeros(shape))

    def forward(self, x, cos, sin, input_pos, mask):
        steps = x.shape[1]
        split = (1, steps, self.heads, self.head_dim)
        q = self.wq(x).view(split).transpose(1, 2)
        k = self.wk(x).view(split).transpose(1, 2)
        v = self.wv(x).view(split).transpose(1, 2)
        q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
        self.k_cache[:, :, input_pos] = k
        self.v_cache[:, :, input_pos] = v
        scores = q @ self.k_cache.transpose(2, 3) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(~mask, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ self.v_cache
        return self.wo(out.transpose(1, 2).reshape(x.shape))


class DecoderLayer(nn.Module):
    def __init__(self, dim, heads, hidden, context):
        super().__init__()
        self.attention_norm = RMSNorm(dim)
        self.attention = CachedAttention(dim, heads, context)
        self.ffn_norm = RMSNorm(dim)
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, h, cos, sin, input_pos, mask):
        h = h + self.attention(
            self.attention_norm(h), cos, sin, input_pos, mask
        )
        x = self.ffn_norm(h)
        return h + self.w2(nn.functional.silu(self.w1(x)) * self.w3(x))


class LlamaDecoder(nn.Module):
    """A Llama-style decoder (RMSNorm, rotary embeddings, SwiGLU) with a KV
    cache of `context` positions: forward(tokens [1, S], input_pos [S])
    writes the S new positions into every layer's cache and returns the
    logits of the S tokens."""

    def __init__(
        self, vocab=512, dim=128, layers=2, heads=4, hidden=352, context=CONTEXT
    ):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(
            DecoderLayer(dim, heads, hidden, context) for _ in range(layers)
        )
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)
        head_dim = dim // heads
        freqs = 1.0 / (10000 ** (torch.arange(0, head_dim, 2) / head_dim))
        angles = torch.outer(torch.arange(context).float(), freqs)
        angles = torch.cat([angles, angles], dim=-1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)
        self.register_buffer(
            "positions", torch.arange(context), persistent=False
        )

    def forward(self, tokens, input_pos):
        cos, sin = self.cos[input_pos], self.sin[input_pos]
        mask = self.positions[None, :] <= input_pos[:, None]
        h = self.embedding(tokens)
        for layer in self.layers:
            h = layer(h, cos, sin, input_pos, mask)
        return self.output(self.norm(h))


def _vision(name, **kwargs):
    def build(size):
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None, **kwargs)
        return model.eval(), (torch.randn(1, 3, size, size),)

    return build


def _vit(size):
    torch.manual_seed(0)
    size = max(32, size // 16 * 16)
    model = torchvision.models.VisionTransformer(
        image_size=size,
        patch_size=16,
        num_layers=4,
        num_heads=4,
        hidden_dim=128,
        mlp_dim=512,
        num_classes=1000,
    )
    # torchvision starts the head at zero: outputs would be all zeros.
    nn.init.normal_(model.heads.head.weight, std=0.02)
    return model.eval(), (torch.randn(1, 3, size, size),)


def _transformer_encoder(size):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(
        d_model=128, nhead=4, dim_feedforward=512, dropout=0.0, batch_first=True
    )
    model = nn.TransformerEncoder(
        layer, num_layers=4, enable_nested_tensor=False
    )
    seq = 128 if size >= 128 else 32
    return model.eval(), (torch.randn(1, seq, 128),)


def _llama(size):
    del size  # the context is fixed; four tokens at positions 0..3
    torch.manual_seed(0)
    model = LlamaDecoder().eval()
    tokens = torch.randint(0, 512, (1, 4))
    return model, (tokens, torch.arange(4))


class _SmallLstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(64, 128, num_layers=2, batch_first=True)
        self.head = nn.Linear(128, 10)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def every_other_result_to_arena_2(graph_module):
    """A custom pool pass: the result of every other out-variant op goes to
    mem_id 2 (ExecuTorch keeps a mem_id set before memory planning)."""
    tagged = 0
    for i, node in enumerate(
        n for n in graph_module.graph.nodes if _is_out_var_node(n)
    ):
        spec = node.meta.get("spec")
        if i % 2 and isinstance(spec, TensorSpec) and not spec.const:
            spec.mem_id = 2
            tagged += 1
    assert tagged > 0, "no result to move to mem_id 2"


def with_pool_pass(memory_planning_pass, tag):
    """`memory_planning_pass` running `tag(graph_module)` (a custom pool
    pass that sets spec.mem_id) just before it plans."""
    plan = memory_planning_pass.run

    def run(graph_module, graph_signature=None):
        tag(graph_module)
        return plan(graph_module, graph_signature)

    memory_planning_pass.run = run
    return memory_planning_pass


# name -> build(image_size) -> (eval model, example inputs)
MODELS = {
    "resnet18": _vision("resnet18"),
    "mobilenet_v2": _vision("mobilenet_v2"),
    "mobilenet_v3_small": _vision("mobilenet_v3_small"),
    "efficientnet_b0": _vision("efficientnet_b0"),
    "googlenet": _vision("googlenet", aux_logits=False, init_weights=True),
    "densenet121": _vision("densenet121"),
    "squeezenet1_1": _vision("squeezenet1_1"),
    "shufflenet_v2_x0_5": _vision("shufflenet_v2_x0_5"),
    "vit_4l": _vit,
    "transformer_encoder_4l": _transformer_encoder,
    "llama_kv_cache_2048": _llama,
    "resnet18_two_arenas": _vision("resnet18"),
}
# name -> custom pool pass run before planning, for every planner alike
POOL_PASSES = {"resnet18_two_arenas": every_other_result_to_arena_2}


def export(model, inputs, memory_planning_pass):
    """The ExecutorchProgramManager of `model` planned by the given pass
    (None: ExecuTorch's default)."""
    with torch.no_grad():  # a KV cache written in place needs no autograd
        edge = to_edge(torch.export.export(model, inputs))
    if memory_planning_pass is None:
        memory_planning_pass = MemoryPlanningPass()
    return edge.to_executorch(
        ExecutorchBackendConfig(memory_planning_pass=memory_planning_pass)
    )


def naive_pass():
    return MemoryPlanningPass(
        memory_planning_algo=MemoryPlanningAlgorithmSuite(algo_list=[naive])
    )


def arena_sizes(program):
    """non_const_buffer_sizes of the program's first execution plan."""
    return list(
        program.executorch_program.execution_plan[0].non_const_buffer_sizes
    )


def run(program, inputs):
    """The outputs of `program` run by ExecuTorch's runtime."""
    method = Runtime.get().load_program(program.buffer).load_method("forward")
    return [t.clone() for t in method.execute(list(inputs))]


def _outputs(value):
    if isinstance(value, torch.Tensor):
        return [value]
    return [t for v in value for t in _outputs(v)]


def close(actual, expected):
    """Largest difference relative to the largest magnitude, over outputs
    (torchvision's initialisation leaves some classifiers' logits near
    1e-14: no absolute floor)."""
    worst = 0.0
    for a, e in zip(actual, expected):
        scale = float(e.abs().max()) or 1.0
        worst = max(worst, float((a - e).abs().max()) / scale)
    return worst


def measure(name, build, image_size, bench_data=None, with_naive=True):
    """One model: its programs, arenas and outputs, as a dict."""
    model, inputs = build(image_size)
    with torch.no_grad():
        eager = _outputs(copy.deepcopy(model)(*inputs))
    tag = POOL_PASSES.get(name)

    def tagged(memory_planning_pass):
        return (
            memory_planning_pass
            if tag is None
            else with_pool_pass(memory_planning_pass, tag)
        )

    mp = met.memory_planning_pass()
    planned = export(model, inputs, tagged(mp))
    default = export(model, inputs, tagged(MemoryPlanningPass()))
    naive, naive_error = None, None
    if with_naive:
        try:
            naive = arena_sizes(export(model, inputs, tagged(naive_pass())))
        except Exception as error:  # ExecuTorch's naive refuses some specs
            naive_error = str(error).splitlines()[0][:80]
    ours, theirs = run(planned, inputs), run(default, inputs)
    result = {
        "model": name,
        "memplan": arena_sizes(planned),
        "greedy": arena_sizes(default),
        "naive": naive,
        "naive_error": naive_error,
        "arenas": dict(mp.algorithm.arenas),
        "equal": len(ours) == len(theirs)
        and all(torch.equal(a, b) for a, b in zip(ours, theirs)),
        "eager_error": close(ours, eager),
    }
    if bench_data:
        write_bench_input(name, mp.algorithm.arenas, bench_data)
    return result


def lower_bound(arena):
    return arena.reserved + arena.lower_bound + arena.padding


def rows(result):
    """(model, arena, memplan, greedy, naive, lower bound, equal) per arena."""
    out = []
    for mem_id in range(1, len(result["greedy"])):
        arena = result["arenas"].get(mem_id)
        naive = (
            result["naive"][mem_id] if result["naive"] is not None else "fails"
        )
        out.append(
            (
                result["model"],
                mem_id,
                result["memplan"][mem_id],
                result["greedy"][mem_id],
                naive,
                lower_bound(arena) if arena else 0,
                "yes" if result["equal"] else "NO",
            )
        )
    return out


def markdown(results):
    lines = [
        "| model | arena | memplan | ExecuTorch greedy | naive | "
        "lower bound | outputs equal |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for result in results:
        for row in rows(result):
            lines.append(
                "| "
                + " | ".join(
                    f"{v:,}" if isinstance(v, int) and i >= 2 else str(v)
                    for i, v in enumerate(row)
                )
                + " |"
            )
    return "\n".join(lines)


def program_graph(name, arenas):
    """All arenas of a program as one memplan graph, one pool per arena."""
    tensors, pools, ops = [], [], {}
    for mem_id in sorted(arenas):
        graph = arenas[mem_id].graph
        pools.extend(graph.pools)
        for t in graph.tensors:
            t.pools = [graph.pools[0].name]
            tensors.append(t)
        for step, op in enumerate(graph.ops):
            inputs, outputs = ops.setdefault(step, ([], []))
            inputs.extend(op.inputs)
            outputs.extend(op.outputs)
    return memplan.Graph(
        name=name,
        tensors=tensors,
        pools=pools,
        ops=[memplan.Op(f"node{s}", *ops[s]) for s in sorted(ops)],
    )


def write_bench_input(name, arenas, directory):
    os.makedirs(directory, exist_ok=True)
    graph = program_graph(name, arenas)
    data = graph.to_dict()
    data["source"] = (
        f"ExecuTorch {_executorch_version()} TensorSpecs of "
        f"{name} (scripts/executorch_table.py): one op per "
        "graph node, one pool per mem_id arena, sizes aligned "
        "to 16 bytes"
    )
    text = graph_json_text(data)
    path = os.path.join(directory, f"{name}.json")
    if len(text) > 2_000_000:
        with gzip.open(path + ".gz", "wt") as f:
            f.write(text)
    else:
        with open(path, "w") as f:
            f.write(text + "\n")


def graph_json_text(data):
    """memplan-graph-v1 text as bench/data keeps it: compact, one tensor
    and one op a line."""

    def dump(value):
        return json.dumps(value, separators=(",", ":"))

    head = [
        f"{dump(k)}:{dump(v)},"
        for k, v in data.items()
        if k not in ("tensors", "ops")
    ]
    return "\n".join(
        [
            "{",
            *head,
            '"tensors":[',
            ",\n".join(dump(t) for t in data["tensors"]),
            "],",
            '"ops":[',
            ",\n".join(dump(op) for op in data["ops"]),
            "]",
            "}",
        ]
    )


def write_summary(results, directory):
    with open(os.path.join(directory, "summary.csv"), "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(
            [
                "model",
                "arena",
                "specs",
                "memplan_best",
                "executorch_greedy",
                "executorch_naive",
                "lower_bound",
                "outputs_equal",
            ]
        )
        for result in results:
            for row in rows(result):
                arena = result["arenas"].get(row[1])
                out.writerow(
                    [row[0], row[1], arena.specs if arena else 0, *row[2:]]
                )


def _executorch_version():
    from importlib.metadata import version

    return version("executorch")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models",
        default=",".join(MODELS),
        help="comma-separated, of: " + ", ".join(MODELS),
    )
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument(
        "--bench-data",
        default=None,
        help="directory for the specs as memplan inputs",
    )
    args = parser.parse_args(argv)
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}")
    torch.set_num_threads(1)
    results = []
    for name in names:
        print(f"{name} ...", file=sys.stderr, flush=True)
        results.append(
            measure(name, MODELS[name], args.image_size, args.bench_data)
        )
        r = results[-1]
        print(
            f"  memplan {r['memplan']} greedy {r['greedy']} naive "
            f"{r['naive'] or r['naive_error']} equal {r['equal']} "
            f"eager {r['eager_error']:.2e}",
            file=sys.stderr,
            flush=True,
        )
    if args.bench_data:
        write_summary(results, args.bench_data)
    print(markdown(results))
    bad = [
        r["model"]
        for r in results
        if not r["equal"]
        or r["eager_error"] > 1e-3
        or any(row[2] > row[3] or row[5] < row[3] == row[2] for row in rows(r))
    ]
    if bad:
        print("not met on: " + ", ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
