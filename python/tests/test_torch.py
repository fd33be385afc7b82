"""memplan.torch on real models: each traced, planned with greedy_by_size,
best and exact, run inside the planned arena and compared with an ordinary
run of the same traced graph; a plan with a buffer moved onto a live one is
caught; planning here gives the tool's plans."""

import functools
import sys
import json
import os
import pathlib
import subprocess

import pytest
import torch
import torchvision

import memplan
import memplan.torch as mt

TOOL = os.environ.get("MEMPLAN_TOOL")
PLANNERS = ["greedy_by_size", "best", "exact"]
ALIGNMENT = 64
# Planned without a time limit: best and exact stop at the library's counted
# work limit, so that the plans do not depend on the machine's load (and are
# the tool's, byte for byte).

torch.set_num_threads(1)


def transformer():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(
        d_model=32, nhead=4, dim_feedforward=64, dropout=0.1,
        batch_first=False)  # (sequence, batch, feature): the decomposed path
    return torch.nn.TransformerEncoder(layer, num_layers=2,
                                       enable_nested_tensor=False)


class FusedQkvAttention(torch.nn.Module):
    """Self-attention whose q, k and v come from ATen's fused
    _transform_bias_rescale_qkv (what PyTorch's fast attention path calls):
    three results that are slices of one new tensor."""

    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim, bias=False)
        self.qkv_bias = torch.nn.Parameter(torch.randn(3 * dim))
        self.out = torch.nn.Linear(dim, dim)

    def forward(self, x):  # (batch, sequence, dim)
        q, k, v = torch._transform_bias_rescale_qkv(
            self.qkv(x), self.qkv_bias, self.heads)  # (batch, heads, seq, d)
        weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
        return self.out((weights @ v).transpose(1, 2).reshape(x.shape))


def cross_entropy(output):
    target = torch.arange(output.shape[0]) % output.shape[1]
    return torch.nn.functional.cross_entropy(output, target)


MODELS = {
    "resnet18": lambda: (torchvision.models.resnet18(num_classes=10).eval(),
                         torch.randn(1, 3, 64, 64), False, None),
    "mobilenet_v3_small": lambda: (
        torchvision.models.mobilenet_v3_small(num_classes=10).eval(),
        torch.randn(1, 3, 64, 64), False, None),
    "resnet18_train": lambda: (
        torchvision.models.resnet18(num_classes=10).train(),
        torch.randn(2, 3, 32, 32), True, cross_entropy),
    "transformer": lambda: (transformer().eval(), torch.randn(16, 2, 32),
                            False, None),
    "transformer_train": lambda: (transformer().train(),
                                  torch.randn(16, 2, 32), True, None),
    "fused_qkv_attention": lambda: (FusedQkvAttention().eval(),
                                    torch.randn(2, 16, 32), False, None),
}


@functools.lru_cache(maxsize=None)
def traced(name):
    torch.manual_seed(0)
    model, x, training, loss = MODELS[name]()
    return mt.trace(model, (x,), training=training, loss_fn=loss,
                    name=name), x


@functools.lru_cache(maxsize=None)
def planned(name, planner):
    t, _ = traced(name)
    return memplan.plan(t.graph, planner, alignment=ALIGNMENT)


@functools.lru_cache(maxsize=None)
def reference(name):
    t, x = traced(name)
    return t.run((x,), seed=7)


def same(a, b):
    a, b = mt._flatten(a), mt._flatten(b)
    return len(a) == len(b) and all(torch.equal(u, v) for u, v in zip(a, b))


@pytest.mark.parametrize("name", list(MODELS))
def test_trace(name):
    t, x = traced(name)
    graph = t.graph
    kinds = {tensor.name: tensor.kind for tensor in graph.tensors}
    assert list(kinds.values()).count("input") == 1
    assert len(t.ops) == len(graph.ops) > 20
    assert all(o.type.startswith("aten.") or o.type == mt.VIEWS_OP
               for o in graph.ops)
    n_views = sum(len(o.alias) for o in graph.ops)
    assert n_views > 0
    # Views and in-place results live in an earlier tensor's storage and span
    # no more of it than their base.
    sizes = {tensor.name: tensor.size for tensor in graph.tensors}
    for op in graph.ops:
        for out, inp in op.alias:
            view, base = t.tensors[op.outputs[out]], t.tensors[op.inputs[inp]]
            assert view.root == base.root
            assert sizes[view.name] <= t.tensors[base.root].storage_bytes
    outputs = [n for n, k in kinds.items() if k == "output"]
    if t.training:
        # One gradient per parameter, each shaped as its parameter.
        model, *_ = MODELS[name]()
        params = [p for p in model.parameters() if p.requires_grad]
        grads = t.run((x,), seed=7)
        assert len(grads) == len(params)
        assert [g.shape for g in grads] == [p.shape for p in params]
        assert len(outputs) == len(params)
        assert "aten.convolution_backward.default" in {
            o.type for o in graph.ops} or name.startswith("transformer")
    else:
        assert len(outputs) == 1
    # A tensor's storage bytes cover its elements.
    for rec in t.tensors.values():
        assert rec.size >= 0 and rec.storage_bytes >= rec.size or \
            rec.root != rec.name


@pytest.mark.parametrize("planner", PLANNERS)
@pytest.mark.parametrize("name", list(MODELS))
def test_run_in_arena(name, planner):
    t, x = traced(name)
    plan = planned(name, planner)
    memplan.verify(t.graph, plan)
    assert plan.lower_bound <= plan.peak < plan.naive_total
    out = mt.run_in_arena(t, plan, (x,), seed=7)
    assert same(out, reference(name))
    if planner == "exact":
        # exact never does worse than the heuristics it starts from.
        assert plan.peak <= planned(name, "greedy_by_size").peak
        assert plan.peak <= planned(name, "best").peak


def test_results_sharing_a_new_storage():
    # q, k and v of _transform_bias_rescale_qkv are three slices of one new
    # tensor: one buffer for that storage, made by the op, and the three
    # results views of it, made by the VIEWS_OP step right after it.
    t, x = traced("fused_qkv_attention")
    [i] = [i for i, o in enumerate(t.ops)
           if o.type == "aten._transform_bias_rescale_qkv.default"]
    op, views = t.ops[i], t.ops[i + 1]
    assert views.type == mt.VIEWS_OP and views.node is None
    [storage] = views.inputs
    assert storage in op.outputs and op.alias == []
    assert views.alias == [(0, 0), (1, 0), (2, 0)]
    q, k, v = (t.tensors[n] for n in views.outputs)
    base = t.tensors[storage]
    assert base.root == storage and q.root == k.root == v.root == storage
    third = base.storage_bytes // 3
    assert third == 2 * 4 * 16 * 8 * 4  # batch, heads, sequence, d, float
    # DESIGN.md's view rule: from the base's first byte to the view's last.
    sizes = {tensor.name: tensor.size for tensor in t.graph.tensors}
    assert sizes[storage] == 3 * third
    assert [sizes[n] for n in views.outputs] == [third, 2 * third, 3 * third]
    # The next ops read q, k and v by their own names.
    readers = {n for o in t.ops[i + 2:] for n in o.inputs}
    assert set(views.outputs) <= readers
    for planner in PLANNERS:
        plan = planned("fused_qkv_attention", planner)
        buffer = plan.buffer(storage)
        assert set(buffer["tensors"]) >= {storage, *views.outputs}
        assert buffer["size"] >= 3 * third
        assert all(plan.offset(n) == plan.offset(storage)
                   for n in views.outputs)
    # Overwriting the storage while v is still to be read is caught.
    plan = planned("fused_qkv_attention", "greedy_by_size")
    later = [b for b in plan.buffers if b["start"] > i + 1 and
             b["start"] + 1 < plan.buffer(storage)["end"]]
    assert later, "no buffer written while the storage is alive"
    bad = plan.moved(later[0]["name"], plan.offset(storage))
    with pytest.raises(mt.ArenaError, match=f'tensor "{storage}"'):
        mt.run_in_arena(t, bad, (x,), seed=7)


@pytest.mark.parametrize("name", ["resnet18", "transformer_train"])
def test_moved_buffer_is_caught_and_named(name):
    t, x = traced(name)
    plan = planned(name, "greedy_by_size")
    n_ops = len(t.ops)
    buffers = plan.buffers
    # A buffer written while a larger one is alive and read after that op.
    victim, mover = None, None
    for b in sorted(buffers, key=lambda b: -b["size"]):
        for a in buffers:
            if a is b or not 0 < a["size"] <= b["size"] or a["start"] == 0:
                continue
            if b["start"] < a["start"] and a["start"] + 1 < min(b["end"], n_ops):
                victim, mover = b, a
                break
        if victim:
            break
    assert victim, "no live buffer to overwrite"
    bad = plan.moved(mover["name"], victim["offset"])
    with pytest.raises(ValueError):
        memplan.verify(t.graph, bad)
    writer = t.ops[mover["start"]]
    with pytest.raises(mt.ArenaError) as info:
        mt.run_in_arena(t, bad, (x,), seed=7)
    message = str(info.value)
    assert f'tensor "{victim["name"]}"' in message
    assert f'op "{writer.name}"' in message
    vs = victim["offset"]
    assert f"[{vs}, {vs + t.tensors[victim['name']].storage_bytes})" in message
    assert f'"{mover["name"]}" at arena bytes [{vs}, ' in message


@pytest.mark.parametrize("name", list(MODELS))
def test_same_plans_as_the_tool(tmp_path, name):
    assert TOOL, "MEMPLAN_TOOL names the built memplan tool"
    t, _ = traced(name)
    path = tmp_path / f"{name}.json"
    memplan.write_graph(t.graph, path)
    for planner in PLANNERS:
        out = tmp_path / f"{planner}.json"
        subprocess.run([TOOL, "plan", str(path), f"--planner={planner}",
                        f"--alignment={ALIGNMENT}", f"--out={out}"],
                       check=True, capture_output=True)
        plan = planned(name, planner)
        memplan.write_plan(plan, tmp_path / "py.json", input=path)
        assert (tmp_path / "py.json").read_bytes() == out.read_bytes(), planner
        tool = json.loads(out.read_text())
        assert tool["peak"] == plan.peak, planner


def tiny_efficientnet():
    """efficientnet_b0's blocks at a few channels: batch norm, in-place SiLU
    and squeeze-excitation, where a training step clones each batch-norm
    output that an in-place SiLU then overwrites; a head with in-place ReLU
    and Hardtanh. No dropout: the random draws stay in one order."""
    from torchvision.models.efficientnet import EfficientNet, MBConvConfig
    torch.manual_seed(0)
    blocks = [(1, 3, 1, 8, 8, 1), (4, 3, 2, 8, 16, 2), (4, 5, 2, 16, 24, 2)]
    setting = [MBConvConfig(e, k, s, i, o, n, width_mult=1.0, depth_mult=1.0)
               for e, k, s, i, o, n in blocks]
    model = EfficientNet(setting, dropout=0.0, stochastic_depth_prob=0.0,
                         last_channel=32)
    nn = torch.nn
    model.classifier = nn.Sequential(nn.ReLU(inplace=True), nn.Linear(32, 16),
                                     nn.Hardtanh(inplace=True),
                                     nn.Linear(16, 10))
    return model.train()


def test_reordered_training_step_with_in_place_writes(tmp_path):
    model = tiny_efficientnet()
    x = torch.randn(2, 3, 16, 16)
    t = mt.trace(model, (x,), training=True, loss_fn=cross_entropy)
    # The schema's write marks become Op.writes: the in-place activations,
    # and add_ on batch norm's num_batches_tracked (a constant).
    written = {o.type: o for o in t.graph.ops if o.writes}
    for op in ("silu_", "hardtanh_", "relu_", "add_"):
        assert any(k.startswith(f"aten.{op}.") for k in written), op
    for o, record in zip(t.graph.ops, t.ops):
        assert [o.inputs[j] for j in o.writes] == list(
            dict.fromkeys(record.writes))
    plan = memplan.plan(t.graph, "greedy_by_size", alignment=ALIGNMENT,
                        reorder="memory")
    order = plan.op_order
    assert order != list(range(len(t.ops)))  # actually reordered
    memplan.verify(t.graph, plan)
    # Every reader of a written storage stays on its side of the writer.
    step = {i: s for s, i in enumerate(order)}
    for w, op in enumerate(t.ops):
        roots = {t.tensors[n].root for n in op.writes}
        for r, reader in enumerate(t.ops):
            if r != w and roots & {t.tensors[n].root for n in reader.inputs}:
                assert (r < w) == (step[r] < step[w]), (reader.name, op.name)
    out = mt.run_in_arena(t, plan, (x,), seed=7)
    assert same(out, t.run((x,), seed=7))
    assert same(out, mt.run_in_arena(
        t, memplan.plan(t.graph, "greedy_by_size", alignment=ALIGNMENT),
        (x,), seed=7))
    # A broken plan in a changed order says so.
    n_ops = len(t.ops)
    buffers = plan.buffers
    pairs = [(b, a) for b in buffers for a in buffers
             if a is not b and 0 < a["size"] <= b["size"] and a["start"] > 0
             and b["start"] < a["start"] and
             a["start"] + 1 < min(b["end"], n_ops)]
    assert pairs, "no live buffer to overwrite"
    victim, mover = max(pairs, key=lambda p: (p[0]["size"], p[1]["size"]))
    with pytest.raises(mt.ArenaError,
                       match="op order differs from the traced order"):
        mt.run_in_arena(t, plan.moved(mover["name"], victim["offset"]),
                        (x,), seed=7)
    # The tool's reordered graph keeps the writes.
    if TOOL:
        path, out_path = tmp_path / "g.json", tmp_path / "reordered.json"
        memplan.write_graph(t.graph, path)
        subprocess.run([TOOL, "plan", str(path), "--planner=greedy_by_size",
                        "--reorder=memory", f"--alignment={ALIGNMENT}",
                        f"--graph-out={out_path}"],
                       check=True, capture_output=True)
        back = memplan.read_graph(out_path)
        assert [o.name for o in back.ops] == [t.ops[i].name for i in order]
        by_name = {o.name: o for o in t.graph.ops}
        assert all(o == by_name[o.name] for o in back.ops)


def test_report():
    t, x = traced("resnet18")
    plan = planned("resnet18", "greedy_by_size")
    info = mt.report(t, plan, (x,))
    assert info["ops"] == len(t.ops)
    assert info["buffers"] == len(plan.buffers)
    assert info["views_merged"] == sum(len(b["tensors"]) - 1
                                       for b in plan.buffers) > 0
    assert info["peak"] == plan.peak
    # PyTorch's allocator held at least the inputs and the output.
    assert info["pytorch_peak"] is None or info["pytorch_peak"] > x.numel() * 4
    text = mt.format_report(info)
    assert "resnet18" in text and str(plan.peak) in text


def test_import_memplan_does_not_import_torch():
    code = ("import sys, memplan; assert 'torch' not in sys.modules; "
            "import memplan.torch; assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
