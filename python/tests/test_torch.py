"""memplan.torch on real models exported by torch.export: each traced,
planned with greedy_by_size, best and exact, run inside the planned arena and
compared bit for bit with an ordinary run of the same traced graph, and to
float32 tolerance with the model run eagerly; a plan with a buffer moved onto
a live one is caught; a reordered training step keeps its buffer writes;
data-dependent ops are errors naming the op; planning here gives the tool's
plans."""

import copy
import functools
import sys
import json
import os
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
        d_model=32, nhead=4, dim_feedforward=64, dropout=0.1, batch_first=False
    )
    return torch.nn.TransformerEncoder(
        layer, num_layers=2, enable_nested_tensor=False
    )


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
            self.qkv(x), self.qkv_bias, self.heads
        )  # (batch, heads, seq, d)
        weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
        return self.out((weights @ v).transpose(1, 2).reshape(x.shape))


def cross_entropy(output):
    target = torch.arange(output.shape[0]) % output.shape[1]
    return torch.nn.functional.cross_entropy(output, target)


def vision(name, **kwargs):
    return lambda: (
        getattr(torchvision.models, name)(num_classes=10, **kwargs).eval(),
        torch.randn(1, 3, 64, 64),
        False,
        None,
    )


# name -> () -> (model, example input, training, loss_fn)
MODELS = {
    "resnet18": vision("resnet18"),
    "mobilenet_v2": vision("mobilenet_v2"),
    "efficientnet_b0": vision("efficientnet_b0"),
    "googlenet": vision("googlenet", aux_logits=False, init_weights=True),
    "transformer": lambda: (
        transformer().eval(),
        torch.randn(16, 2, 32),
        False,
        None,
    ),
    "fused_qkv_attention": lambda: (
        FusedQkvAttention().eval(),
        torch.randn(2, 16, 32),
        False,
        None,
    ),
    # Training steps: batch norm updates its buffers, dropout draws.
    "mobilenet_v2_train": lambda: (
        torchvision.models.mobilenet_v2(num_classes=10).train(),
        torch.randn(2, 3, 32, 32),
        True,
        cross_entropy,
    ),
    "transformer_train": lambda: (
        transformer().train(),
        torch.randn(16, 2, 32),
        True,
        None,
    ),
}


@functools.lru_cache(maxsize=None)
def traced(name):
    torch.manual_seed(0)
    model, x, training, loss = MODELS[name]()
    return mt.trace(model, (x,), training=training, loss_fn=loss, name=name), x


def make_plan(graph, planner, **options):
    """memplan.plan, checked by the verifier."""
    result = memplan.plan(graph, planner, alignment=ALIGNMENT, **options)
    memplan.verify(graph, result)
    return result


@functools.lru_cache(maxsize=None)
def planned(name, planner):
    t, _ = traced(name)
    return make_plan(t.graph, planner)


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
    assert t.input_names == ["input"] and t.dynamic_dims == []
    assert len(t.ops) == len(graph.ops) > 20
    assert all(
        o.type.startswith("aten.") or o.type == mt.VIEWS_OP for o in graph.ops
    )
    n_views = sum(len(o.alias) for o in graph.ops)
    assert n_views > 0
    # Views live in an earlier tensor's storage and span no more of it than
    # their base.
    sizes = {tensor.name: tensor.size for tensor in graph.tensors}
    for op in graph.ops:
        for out, inp in op.alias:
            view, base = t.tensors[op.outputs[out]], t.tensors[op.inputs[inp]]
            assert view.root == base.root
            assert sizes[view.name] <= t.tensors[base.root].storage_bytes
    # Parameters and buffers are the constants, named as the model names
    # them.
    model, *_ = MODELS[name]()
    state = dict(model.named_parameters()) | dict(model.named_buffers())
    assert set(t.constants) <= set(state)
    assert {n for n, k in kinds.items() if k == "constant"} <= set(state)
    for n in t.constants:
        assert t.tensors[n].shape == tuple(state[n].shape)
        assert t.tensors[n].storage_bytes == state[n].untyped_storage().nbytes()
    outputs = [n for n, k in kinds.items() if k == "output"]
    if t.training:
        # One gradient per parameter, each shaped as its parameter, and the
        # loss.
        params = [p for p in model.parameters() if p.requires_grad]
        grads = t.run((x,), seed=7)
        assert len(grads) == len(params)
        assert [g.shape for g in grads] == [p.shape for p in params]
        assert len(outputs) == len(params) + 1
        assert t.outputs[-1] in outputs and t.tensors[t.outputs[-1]].shape == ()
        assert "aten.convolution_backward.default" in {
            o.type for o in graph.ops
        } or name.startswith("transformer")
    else:
        assert len(outputs) == 1
    # Every buffer the step updates is written in place by one copy_, and
    # nothing else writes.
    buffers = {n for n, _ in model.named_buffers()}
    writers = [o for o in t.ops if o.writes]
    assert {w for o in writers for w in o.writes} == set(t.buffer_writes)
    assert all(
        o.type == "aten.copy_.default" and len(o.writes) == 1 for o in writers
    )
    if name == "mobilenet_v2_train":
        assert set(t.buffer_writes) == buffers  # running stats, counts
    else:
        assert t.buffer_writes == {}
    # A tensor's storage bytes cover its elements.
    for rec in t.tensors.values():
        assert (
            rec.size >= 0
            and rec.storage_bytes >= rec.size
            or rec.root != rec.name
        )


@pytest.mark.parametrize("name", [n for n in MODELS if "train" not in n])
def test_traced_graph_computes_the_model(name):
    # The core ATen graph decomposes some ops (layer norm, softmax's
    # backward, batch norm) into others: float32 rounding may differ from
    # eager mode in the last bits, not more.
    t, x = traced(name)
    torch.manual_seed(0)  # the weights traced() had
    model, x_again, *_ = MODELS[name]()
    assert torch.equal(x, x_again)
    with torch.no_grad():
        eager = model(x)
    torch.testing.assert_close(reference(name), eager)


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
    [i] = [
        i
        for i, o in enumerate(t.ops)
        if o.type == "aten._transform_bias_rescale_qkv.default"
    ]
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
    readers = {n for o in t.ops[i + 2 :] for n in o.inputs}
    assert set(views.outputs) <= readers
    for planner in PLANNERS:
        plan = planned("fused_qkv_attention", planner)
        buffer = plan.buffer(storage)
        assert set(buffer["tensors"]) >= {storage, *views.outputs}
        assert buffer["size"] >= 3 * third
        assert all(
            plan.offset(n) == plan.offset(storage) for n in views.outputs
        )
    # Overwriting the storage while v is still to be read is caught.
    plan = planned("fused_qkv_attention", "greedy_by_size")
    later = [
        b
        for b in plan.buffers
        if b["start"] > i + 1 and b["start"] + 1 < plan.buffer(storage)["end"]
    ]
    assert later, "no buffer written while the storage is alive"
    bad = plan.moved(later[0]["name"], plan.offset(storage))
    with pytest.raises(mt.ArenaError, match=f'tensor "{storage}"'):
        mt.run_in_arena(t, bad, (x,), seed=7)


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2_train"])
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
            if b["start"] < a["start"] and a["start"] + 1 < min(
                b["end"], n_ops
            ):
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
        subprocess.run(
            [
                TOOL,
                "plan",
                str(path),
                f"--planner={planner}",
                f"--alignment={ALIGNMENT}",
                f"--out={out}",
            ],
            check=True,
            capture_output=True,
        )
        plan = planned(name, planner)
        memplan.write_plan(plan, tmp_path / "py.json", input=path)
        assert (tmp_path / "py.json").read_bytes() == out.read_bytes(), planner
        tool = json.loads(out.read_text())
        assert tool["peak"] == plan.peak, planner


def tiny_efficientnet():
    """efficientnet_b0's blocks at a few channels: batch norm (whose
    running statistics a training step updates), SiLU and
    squeeze-excitation; a head with ReLU and Hardtanh. No dropout: the
    random draws stay in one order."""
    from torchvision.models.efficientnet import EfficientNet, MBConvConfig

    torch.manual_seed(0)
    blocks = [(1, 3, 1, 8, 8, 1), (4, 3, 2, 8, 16, 2), (4, 5, 2, 16, 24, 2)]
    setting = [
        MBConvConfig(e, k, s, i, o, n, width_mult=1.0, depth_mult=1.0)
        for e, k, s, i, o, n in blocks
    ]
    model = EfficientNet(
        setting, dropout=0.0, stochastic_depth_prob=0.0, last_channel=32
    )
    nn = torch.nn
    model.classifier = nn.Sequential(
        nn.ReLU(inplace=True),
        nn.Linear(32, 16),
        nn.Hardtanh(inplace=True),
        nn.Linear(16, 10),
    )
    return model.train()


@functools.lru_cache(maxsize=None)
def tiny_step():
    model = tiny_efficientnet()
    before = copy.deepcopy(model.state_dict())
    x = torch.randn(2, 3, 16, 16)
    t = mt.trace(model, (x,), training=True, loss_fn=cross_entropy)
    # Tracing leaves the model as it was.
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())
    return model, x, t


def test_training_step_computes_the_models_gradients_and_buffers():
    # The joint graph's backward is ATen's decomposed one: gradients and
    # the updated running statistics agree with eager autograd to float32
    # tolerance. The buffer writes (copy_ into each running_mean,
    # running_var and num_batches_tracked) land in the given state.
    model, x, t = tiny_step()
    eager = copy.deepcopy(model)
    params = [p for p in eager.parameters() if p.requires_grad]
    grads = torch.autograd.grad(cross_entropy(eager(x)), params)
    state = {n: c.clone() for n, c in t.constants.items()}
    out = mt.run_in_arena(
        t, make_plan(t.graph, "greedy_by_size"), (x,), seed=7, state=state
    )
    torch.testing.assert_close(out, tuple(grads))
    buffers = dict(eager.named_buffers())
    assert set(t.buffer_writes) == set(buffers)
    for n, value in buffers.items():
        assert not torch.equal(value, t.constants[n])  # the step changed it
        torch.testing.assert_close(state[n], value)
    assert same(out, t.run((x,), seed=7))


def test_attention_training_step_gradients_equal_eager():
    # torch's joint graph of the fused CPU attention pairs its decomposed
    # forward with the fused backward (gradients off by up to 8 here);
    # trace(training=True) exports attention on the math backend, whose
    # gradients agree with eager autograd.
    sys.path.insert(0, os.path.dirname(__file__))
    import remat_models  # noqa: PLC0415

    torch.manual_seed(0)
    model = remat_models.LanguageModel(d=32, heads=2, layers=1).train()
    x = torch.randint(0, remat_models.VOCAB, (2, 16))
    loss_fn = remat_models.cross_entropy
    t = mt.trace(model, (x,), training=True, loss_fn=loss_fn)
    assert not [o for o in t.graph.ops if "flash" in o.name]
    eager = copy.deepcopy(model)
    params = [p for p in eager.parameters() if p.requires_grad]
    grads = torch.autograd.grad(loss_fn(eager(x)), params)
    torch.testing.assert_close(t.run((x,)), tuple(grads))
    plan = make_plan(t.graph, "best")
    torch.testing.assert_close(mt.run_in_arena(t, plan, (x,)), tuple(grads))


def dropout_cnn():
    """A small CNN with batch norm (whose running statistics a training
    step updates) and dropout (a random draw)."""
    nn = torch.nn
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.Dropout(0.1),
        nn.Conv2d(8, 16, 3, stride=2, padding=1),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(16, 10),
    ).train()


def test_training_step_carries_flops_and_recomputable_ops():
    from torch.utils.flop_counter import FlopCounterMode, flop_registry

    model = dropout_cnn()
    x = torch.randn(2, 3, 16, 16)
    t = mt.trace(model, (x,), training=True, loss_fn=cross_entropy)
    eager = copy.deepcopy(model)
    params = [p for p in eager.parameters() if p.requires_grad]
    with FlopCounterMode(display=False) as counter:
        torch.autograd.grad(cross_entropy(eager(x)), params)
    step = counter.get_total_flops()
    ops = t.graph.ops
    assert [o.name for o in ops] == [r.name for r in t.ops]
    assert all(o.cost is not None and o.cost >= 0 for o in ops)

    # The ops FlopCounterMode has a formula for cost what it counts for the
    # whole step; the others one per element they make.
    def counted(r):
        packet = getattr(getattr(r.node, "target", None), "overloadpacket", 0)
        return packet in flop_registry

    assert sum(o.cost for o, r in zip(ops, t.ops) if counted(r)) == step
    assert step < sum(o.cost for o in ops) < 1.2 * step
    convs = [o for o in ops if o.type.startswith("aten.convolution")]
    assert len(convs) == 4 and all(o.recomputable and o.cost > 0 for o in convs)
    # Batch norm's running statistics are written (copy_), dropout draws:
    # neither is run again.
    writes = [o for o in ops if o.writes]
    assert len(writes) == len(t.buffer_writes) == 6
    assert not any(o.recomputable for o in writes)
    draws = [o for o in ops if o.pinned]
    assert [o.type for o in draws] == ["aten.native_dropout.default"]
    assert not draws[0].recomputable
    assert sum(o.recomputable for o in ops) == len(ops) - 7
    # They round-trip, and change no plan.
    data = t.graph.to_dict()
    assert memplan.graph_from_dict(data) == t.graph
    for o in data["ops"]:
        del o["cost"]
        o.pop("recomputable", None)
    bare = memplan.graph_from_dict(data)
    assert not any(o.recomputable or o.cost is not None for o in bare.ops)
    plan = make_plan(t.graph, "greedy_by_size")
    assert plan.tensors == make_plan(bare, "greedy_by_size").tensors


class Branches(torch.nn.Module):
    """Two wide branches whose first halves the model runs before either
    second half: a memory-aware order interleaves them. Batch norm in
    training mode: each step updates its buffers."""

    def __init__(self):
        super().__init__()
        nn = torch.nn

        def wide():
            return nn.Sequential(
                nn.Conv2d(4, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU()
            )

        def narrow():
            return nn.Sequential(nn.Conv2d(32, 4, 1), nn.BatchNorm2d(4))

        self.a1, self.b1, self.a2, self.b2 = wide(), wide(), narrow(), narrow()

    def forward(self, x):
        a, b = self.a1(x), self.b1(x)
        return self.a2(a) + self.b2(b)


def _assert_broken_reordered_plan_is_caught(t, plan, x):
    """A broken plan in a changed order says so."""
    n_ops = len(t.ops)
    buffers = plan.buffers
    pairs = [
        (b, a)
        for b in buffers
        for a in buffers
        if a is not b
        and 0 < a["size"] <= b["size"]
        and a["start"] > 0
        and b["start"] < a["start"]
        and a["start"] + 1 < min(b["end"], n_ops)
    ]
    assert pairs, "no live buffer to overwrite"
    victim, mover = max(pairs, key=lambda p: (p[0]["size"], p[1]["size"]))
    with pytest.raises(
        mt.ArenaError, match="op order differs from the traced order"
    ):
        mt.run_in_arena(
            t, plan.moved(mover["name"], victim["offset"]), (x,), seed=7
        )


def _assert_tool_reorder_keeps_writes(t, order, tmp_path):
    """The tool's reordered graph keeps the writes."""
    if TOOL:
        path, out_path = tmp_path / "g.json", tmp_path / "reordered.json"
        memplan.write_graph(t.graph, path)
        subprocess.run(
            [
                TOOL,
                "plan",
                str(path),
                "--planner=greedy_by_size",
                "--reorder=memory",
                f"--alignment={ALIGNMENT}",
                f"--graph-out={out_path}",
            ],
            check=True,
            capture_output=True,
        )
        back = memplan.read_graph(out_path)
        assert [o.name for o in back.ops] == [t.ops[i].name for i in order]
        by_name = {o.name: o for o in t.graph.ops}
        assert all(o == by_name[o.name] for o in back.ops)


def test_reordered_training_step_with_in_place_writes(tmp_path):
    torch.manual_seed(0)
    x = torch.randn(2, 4, 16, 16)
    t = mt.trace(Branches().train(), (x,), training=True)
    # The buffer updates are the graph's in-place writes: copy_ into a
    # constant, after the op that reads its old value.
    written = [o for o in t.graph.ops if o.writes]
    assert written and all(o.type == "aten.copy_.default" for o in written)
    for o, record in zip(t.graph.ops, t.ops):
        assert [o.inputs[j] for j in o.writes] == list(
            dict.fromkeys(record.writes)
        )
    for buffer, op_name in t.buffer_writes.items():
        step = next(i for i, o in enumerate(t.ops) if o.name == op_name)
        assert t.ops[step].writes == [buffer]
        assert t.tensors[buffer].kind == "constant"
        assert any(buffer in o.inputs for o in t.ops[:step])
    plan = make_plan(t.graph, "greedy_by_size", reorder="memory")
    order = plan.op_order
    assert order != list(range(len(t.ops)))  # actually reordered
    memplan.verify(t.graph, plan)
    assert plan.peak < make_plan(t.graph, "greedy_by_size").peak
    # Every reader of a written storage stays on its side of the writer.
    step = {i: s for s, i in enumerate(order)}
    moved = 0
    for w, op in enumerate(t.ops):
        roots = {t.tensors[n].root for n in op.writes}
        for r, reader in enumerate(t.ops):
            if r != w and roots & {t.tensors[n].root for n in reader.inputs}:
                assert (r < w) == (step[r] < step[w]), (reader.name, op.name)
        moved += bool(roots) and step[w] != w
    assert moved > 0  # some writer runs at another step
    state = {n: c.clone() for n, c in t.constants.items()}
    out = mt.run_in_arena(t, plan, (x,), seed=7, state=state)
    ordinary = {n: c.clone() for n, c in t.constants.items()}
    assert same(out, t.run((x,), seed=7, state=ordinary))
    assert all(torch.equal(state[n], ordinary[n]) for n in state)
    assert same(
        out,
        mt.run_in_arena(t, make_plan(t.graph, "greedy_by_size"), (x,), seed=7),
    )
    _assert_broken_reordered_plan_is_caught(t, plan, x)
    _assert_tool_reorder_keeps_writes(t, order, tmp_path)


class InPlace(torch.nn.Module):
    """Writes a buffer and its input in place."""

    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        self.calls.add_(1)
        y = x.relu()
        x.mul_(2)
        return y + x + self.calls


def test_buffer_and_input_mutations_are_writes():
    x = torch.randn(3, 4)
    t = mt.trace(InPlace(), (x.clone(),))
    assert set(t.buffer_writes) == {"calls", "input"}
    by_name = {o.name: o for o in t.ops}
    steps = {o.name: i for i, o in enumerate(t.ops)}
    for target, op_name in t.buffer_writes.items():
        op = by_name[op_name]
        assert op.type == "aten.copy_.default" and op.writes == [target]
        assert op.alias == [(0, 0)] and op.inputs[0] == target
        # After every other reader of the old bytes.
        readers = [
            steps[o.name] for o in t.ops if target in o.inputs and o is not op
        ]
        assert readers and max(readers) < steps[op_name]
    relu = next(o for o in t.ops if o.type == "aten.relu.default")
    assert steps[relu.name] < steps[t.buffer_writes["input"]]
    for planner in PLANNERS:
        plan = make_plan(t.graph, planner)
        memplan.verify(t.graph, plan)
        state = {n: c.clone() for n, c in t.constants.items()}
        given = x.clone()
        out = mt.run_in_arena(t, plan, (given,), state=state)
        model, eager_x = InPlace(), x.clone()
        assert torch.equal(out, model(eager_x))
        assert torch.equal(state["calls"], model.calls)  # 1: written once
        assert torch.equal(given, x)  # the arena's copy of it was written
    ordinary = x.clone()
    assert torch.equal(t.run((ordinary,)), out)
    assert torch.equal(ordinary, eager_x)  # as the model writes its input


class ReluPlusInput(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) + x


def test_undeclared_write_to_an_input_is_caught():
    # An op writes only what it is given and where its results go: made to
    # write its input in place without saying so, relu overwrites the
    # input that add still reads, and the run names both.
    x = torch.randn(4, 8)
    t = mt.trace(ReluPlusInput(), (x,))
    plan = make_plan(t.graph, "greedy_by_size")
    assert same(mt.run_in_arena(t, plan, (x,)), t.run((x,)))
    [relu] = [o for o in t.ops if o.type == "aten.relu.default"]
    relu.node.target = torch.ops.aten.relu_.default
    with pytest.raises(
        mt.ArenaError,
        match=r'tensor "input" at arena bytes '
        r'\[\d+, \d+\) \(still read by op "add"\) was '
        r'overwritten by op "relu"',
    ):
        mt.run_in_arena(t, plan, (x,))


class StridedWindows(torch.nn.Module):
    """as_strided on an intermediate, with a storage offset: overlapping
    windows of a computed tensor."""

    def forward(self, x):  # (16,)
        y = torch.relu(x) + 1
        w = torch.as_strided(y, (4, 6), (2, 1), 3)
        return w.sum(1) * 2


def test_as_strided_offset_counts_from_its_storage():
    x = torch.randn(16)
    t = mt.trace(StridedWindows(), (x,))
    [op] = [o for o in t.ops if o.type == "aten.as_strided.default"]
    assert op.alias == [(0, 0)]
    view = t.tensors[op.outputs[0]]
    assert view.storage_offset == 3
    assert view.size == (3 + 3 * 2 + 5 + 1) * 4  # to the view's last byte
    for planner in PLANNERS:
        plan = make_plan(t.graph, planner)
        memplan.verify(t.graph, plan)
        assert same(mt.run_in_arena(t, plan, (x,)), t.run((x,)))
    torch.testing.assert_close(t.run((x,)), StridedWindows()(x))


class NonZero(torch.nn.Module):
    def forward(self, x):
        return torch.nonzero(x > 0).float().sum() + x.sum()


class Item(torch.nn.Module):
    def forward(self, x):
        return x * x.sum().int().item()


class Branch(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x + 1


class Cond(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: x * 2, lambda x: x + 1, (x,))


@pytest.mark.parametrize(
    "model,message",
    [
        (
            NonZero,
            r'op "nonzero" \(aten\.nonzero\.default\) of NonZero: its '
            r"output size depends on tensor data \(torch.export gives it the "
            r"unbacked symbol u\d+\)",
        ),
        (
            Item,
            r'op "_local_scalar_dense" \(aten\._local_scalar_dense\.default\) '
            r"of Item: its value depends on tensor data",
        ),
        (
            Branch,
            r'Branch branches on the result of op "item" '
            r"\(aten\.item\.default\) at File .*test_torch\.py\S*, line \d+, in "
            r"forward: `if x.sum\(\) > 0:`: data-dependent control flow",
        ),
        (
            Cond,
            r'op "cond" \(cond\) of Cond runs a subgraph chosen or repeated '
            r"by tensor data \(data-dependent control flow\)",
        ),
    ],
)
def test_data_dependent_op_is_an_error_naming_it(model, message):
    # Without the error the graph would be bound to the example's data (how
    # many elements are nonzero, which branch ran) and fail, or compute the
    # wrong thing, on other inputs.
    with pytest.raises(mt.TraceError, match=message):
        mt.trace(model(), (torch.randn(4, 5),))


class Unused(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.used = torch.nn.Linear(4, 4)
        self.unused = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.used(x)


def test_training_step_names_a_parameter_without_gradient():
    model, x = Unused(), torch.randn(2, 4)
    with pytest.raises(
        mt.TraceError,
        match=r'parameter "unused.weight" of '
        r"Unused is not used by the training step",
    ):
        mt.trace(model, (x,), training=True)
    model.unused.requires_grad_(False)
    t = mt.trace(model, (x,), training=True)
    grads = t.run((x,))
    assert [g.shape for g in grads] == [(4, 4), (4,)]
    # The default loss, mean(y ** 2) over 8 elements: d/db = sum_b 2y / 8.
    with torch.no_grad():
        torch.testing.assert_close(grads[1], (2 * model(x) / 8).sum(0))


class SmallConv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.norm = torch.nn.BatchNorm2d(4)

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x))).flatten(1)


@pytest.mark.parametrize("training", [False, True])
def test_dynamic_dimension_is_bound_to_its_example_and_reported(training):
    torch.manual_seed(0)
    model, x = SmallConv().train(training), torch.randn(2, 3, 8, 8)
    batch = torch.export.Dim("batch", min=2, max=8)
    with pytest.warns(
        UserWarning,
        match=r'dimension 0 of input "input" is '
        r"dynamic \(s\d+\); it is bound to its example value "
        r"2: the plan holds for that size only",
    ):
        t = mt.trace(
            model, (x,), training=training, dynamic_shapes={"x": {0: batch}}
        )
    [d] = t.dynamic_dims
    assert (d.input, d.dim, d.value, d.min, d.max) == ("input", 0, 2, 2, 8)
    assert d.symbol.startswith("s")
    # Sizes are the example's.
    assert t.tensors["input"].shape == (2, 3, 8, 8)
    assert all(
        isinstance(n, int)
        for r in t.tensors.values()
        for n in r.shape + r.stride
    )
    if not training:
        assert t.tensors[t.outputs[0]].shape == (2, 4 * 8 * 8)
    plan = make_plan(t.graph, "best")
    memplan.verify(t.graph, plan)
    out = mt.run_in_arena(t, plan, (x,))
    assert same(out, t.run((x,)))
    if training:
        assert [g.shape for g in out] == [p.shape for p in model.parameters()]
    else:
        torch.testing.assert_close(out, model(x))
    # Another batch size is not the traced graph's.
    with pytest.raises(
        ValueError,
        match=r'input "input" is \(3, 3, 8, 8\) '
        r"torch.float32, traced as \(2, 3, 8, 8\) "
        r"torch.float32; dimension 0 \(s\d+\) was bound to 2",
    ):
        mt.run_in_arena(t, plan, (torch.randn(3, 3, 8, 8),))


def test_report():
    t, x = traced("resnet18")
    plan = planned("resnet18", "greedy_by_size")
    info = mt.report(t, plan, (x,))
    assert info["ops"] == len(t.ops)
    assert info["buffers"] == len(plan.buffers)
    assert (
        info["views_merged"]
        == sum(len(b["tensors"]) - 1 for b in plan.buffers)
        > 0
    )
    assert info["peak"] == plan.peak
    # PyTorch's allocator held at least the inputs and the output.
    assert info["pytorch_peak"] is None or info["pytorch_peak"] > x.numel() * 4
    text = mt.format_report(info)
    assert "resnet18" in text and str(plan.peak) in text


def test_traced_tensors_carry_their_module_and_source_line():
    t, _ = traced("resnet18")
    sources = {
        x.name: x.source for x in t.graph.tensors if x.source is not None
    }
    made = [x for x in t.graph.tensors if x.kind in ("activation", "output")]
    # Every tensor an op of the model makes knows its module and line.
    assert len(sources) == len(made) > 0
    modules = {s.get("module") for s in sources.values()}
    assert "layer1.0.conv1" in modules and "fc" in modules
    conv = next(s for s in sources.values() if s.get("module") == "conv1")
    # The model's line, not PyTorch's own frames.
    assert conv["file"].startswith("torchvision/models/resnet.py")
    assert conv["line"] > 0
    # Written in the graph JSON, read back, and shown by the reports.
    text = memplan.graph_to_json(t.graph)
    assert '"source":{"file":"torchvision/models/resnet.py"' in text
    back = memplan.graph_from_json(text)
    assert [x.source for x in back.tensors] == [
        x.source for x in t.graph.tensors
    ]
    report = planned("resnet18", "greedy_by_size").report_text()
    assert "convolution  <- conv1 at resnet.py:" in report


def test_tensor_source_is_checked():
    tensor = memplan.Tensor("x", 4)
    assert tensor.source is None
    tensor.source = {"module": "m", "line": 3}
    assert tensor.source == {"module": "m", "file": "", "line": 3}
    with pytest.raises(ValueError, match='unknown key "lines"'):
        tensor.source = {"lines": 3}
    with pytest.raises(ValueError, match="line"):
        tensor.source = {"line": -1}
    with pytest.raises(ValueError, match="line"):
        tensor.source = {"line": 2**70}
    with pytest.raises(TypeError, match="must be a dict"):
        tensor.source = "model.py"


def test_report_is_quiet_on_a_machine_without_gpu():
    # The profiler printed "ERROR: ... gpuGetDeviceCount failed" here.
    code = (
        "import torch, memplan, memplan.torch as mt\n"
        "m = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())\n"
        "x = torch.randn(2, 8)\n"
        "t = mt.trace(m, (x,))\n"
        "plan = memplan.plan(t.graph, 'greedy_by_size')\n"
        "info = mt.report(t, plan, (x,))\n"
        "assert info['pytorch_peak'] is None or info['pytorch_peak'] > 0\n"
        "print('ok')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "KINETO_LOG_LEVEL"}
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"
    assert "gpuGetDeviceCount" not in result.stderr, result.stderr
    assert "ERROR" not in result.stderr, result.stderr


def test_import_memplan_does_not_import_torch():
    code = (
        "import sys, memplan; assert 'torch' not in sys.modules; "
        "import memplan.torch; assert 'torch' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
