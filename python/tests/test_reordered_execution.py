"""Reordered plans executed in their own order: a training step and an
irregularly wired network (tiny versions of bench/data/order's,
scripts/order_models.py) traced with memplan.torch, planned in another op
order and run in the arena in that order (run_in_arena runs plan.op_order),
their outputs and gradients bit-equal to the traced order's; and ExecuTorch
programs whose nodes memplan.executorch.reorder() put in a new order, run
by ExecuTorch's runtime, equal to the traced order's program."""

import importlib.util
import pathlib

import torch

import memplan
import memplan.torch as mt

_SCRIPT = (
    pathlib.Path(__file__).resolve().parents[2] / "scripts" / "order_models.py"
)
_spec = importlib.util.spec_from_file_location("order_models", _SCRIPT)
models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(models)

ALIGNMENT = 64
torch.set_num_threads(1)


def make_plan(graph, **options):
    plan = memplan.plan(graph, "greedy_by_size", alignment=ALIGNMENT, **options)
    memplan.verify(graph, plan)
    return plan


def same(a, b):
    a, b = mt._flatten(a), mt._flatten(b)
    return len(a) == len(b) and all(torch.equal(u, v) for u, v in zip(a, b))


def tiny_randwire():
    return models.irregular("randwire", 3, stages=2, nodes=8, channels=4)


class DropoutHead(torch.nn.Module):
    """A one-stage RandWire-style network whose features go through two
    dropout branches: two random draws, pinned in their order."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.body = models.RandWireStage(3, 4, 4, models.random.Random(2))
        self.left = torch.nn.Sequential(
            torch.nn.Dropout(0.5), torch.nn.Linear(4 * 64, 10)
        )
        self.right = torch.nn.Sequential(
            torch.nn.Dropout(0.5), torch.nn.Linear(4 * 64, 10)
        )

    def forward(self, x):
        y = self.body(x).flatten(1)
        return self.left(y) + self.right(y)


def check_reordered_run(t, x, ordering):
    """Plans `t` in the traced order and in `ordering`'s, runs both in the
    arena and returns (traced plan, reordered plan); outputs (gradients of
    a training step) and written buffers bit-equal to an ordinary run."""
    traced_plan = make_plan(t.graph)
    plan = make_plan(t.graph, reorder=ordering)
    order = plan.op_order
    assert order != list(range(len(t.ops)))  # actually reordered
    assert plan.lower_bound < traced_plan.lower_bound
    # Pinned ops (random draws) keep their traced order.
    pinned = [i for i, o in enumerate(t.graph.ops) if o.pinned]
    assert [i for i in order if i in set(pinned)] == pinned
    ordinary_state = {n: c.clone() for n, c in t.constants.items()}
    expected = t.run((x,), seed=7, state=ordinary_state)
    arena_state = {n: c.clone() for n, c in t.constants.items()}
    out = mt.run_in_arena(t, plan, (x,), seed=7, state=arena_state)
    assert same(out, expected)
    assert all(
        torch.equal(arena_state[n], ordinary_state[n]) for n in arena_state
    )
    assert same(out, mt.run_in_arena(t, traced_plan, (x,), seed=7))
    return traced_plan, plan


def test_reordered_irregular_network_runs_bit_equal():
    torch.manual_seed(0)
    x = torch.randn(1, 3, 32, 32)
    t = mt.trace(tiny_randwire(), (x,))
    check_reordered_run(t, x, "optimal")


def assert_writes_kept(t, plan):
    """Every reader of a written storage stays on its side of the writer."""
    step = {i: s for s, i in enumerate(plan.op_order)}
    for w, op in enumerate(t.ops):
        roots = {t.tensors[n].root for n in op.writes}
        for r, reader in enumerate(t.ops):
            if r != w and roots & {t.tensors[n].root for n in reader.inputs}:
                assert (r < w) == (step[r] < step[w]), (reader.name, op.name)


def training_step():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 16, 16)
    t = mt.trace(DropoutHead().train(), (x,), training=True)
    assert sum(o.pinned for o in t.graph.ops) >= 2  # the two dropouts
    assert any(o.writes for o in t.graph.ops)  # batch norm's statistics
    return t, x


def test_reordered_training_step_runs_bit_equal():
    t, x = training_step()
    _, plan = check_reordered_run(t, x, "memory")
    assert_writes_kept(t, plan)


def test_window_reordered_training_step_runs_bit_equal():
    """ "window" moves the ops making gradients (graph outputs) towards the
    end: a lower bound than "memory"'s, and the same outputs, gradients and
    written statistics."""
    t, x = training_step()
    _, plan = check_reordered_run(t, x, "window")
    assert_writes_kept(t, plan)
    assert plan.lower_bound < make_plan(t.graph, reorder="memory").lower_bound


def test_random_draws_are_pinned_in_the_graph():
    """trace() pins the ops that draw random numbers (dropout), and only
    them here; the pins survive graph JSON."""
    torch.manual_seed(0)
    x = torch.randn(2, 3, 16, 16)
    t = mt.trace(DropoutHead().train(), (x,), training=True)
    pinned = [o for o in t.graph.ops if o.pinned]
    assert pinned and all(
        "dropout" in o.type or "bernoulli" in o.type or "rand" in o.type
        for o in pinned
    )
    back = memplan.graph_from_json(memplan.graph_to_json(t.graph))
    assert [o.pinned for o in back.ops] == [o.pinned for o in t.graph.ops]


# ExecuTorch -------------------------------------------------------------


def _executorch():
    from executorch.exir import ExecutorchBackendConfig, to_edge
    from executorch.runtime import Runtime
    import memplan.executorch as met

    return ExecutorchBackendConfig, to_edge, Runtime, met


def test_executorch_runs_a_reordered_program_in_its_order():
    config, to_edge, runtime, met = _executorch()
    model = tiny_randwire()
    x = torch.randn(1, 3, 32, 32)

    def program(ordering):
        with torch.no_grad():
            edge = to_edge(torch.export.export(model, (x,)))
        before = [
            n.name
            for n in edge.exported_program().graph.nodes
            if n.op == "call_function"
        ]
        order = met.reorder(edge, ordering)["forward"] if ordering else None
        after = [
            n.name
            for n in edge.exported_program().graph.nodes
            if n.op == "call_function"
        ]
        mp = met.memory_planning_pass()
        return (
            edge.to_executorch(config(memory_planning_pass=mp)),
            mp,
            before,
            order,
            after,
        )

    traced, traced_mp, before, _, _ = program(None)
    reordered, mp, before2, order, after = program("optimal")
    assert before == before2
    assert order != list(range(len(order)))
    ops = [
        n for n in before if not n.startswith("getitem")
    ]  # getitems follow their node
    assert [n for n in after if not n.startswith("getitem")] == [
        ops[i] for i in order
    ]
    # ExecuTorch planned the new order's lifetimes: a smaller arena.
    assert mp.algorithm.arenas[1].size < traced_mp.algorithm.arenas[1].size

    def run(p):
        method = runtime.get().load_program(p.buffer).load_method("forward")
        return [t.clone() for t in method.execute([x])]

    ours, theirs = run(reordered), run(traced)
    assert len(ours) == len(theirs) == 1
    assert torch.equal(ours[0], theirs[0])
    with torch.no_grad():
        assert torch.allclose(ours[0], model(x), rtol=1e-4, atol=1e-5)


def test_executorch_graph_keeps_writes_and_pins():
    """graph_of() declares what an ordering must keep: an argument the
    schema writes, and a random draw pinned."""
    _, _, _, met = _executorch()
    import torch.fx

    g = torch.fx.Graph()
    x = g.placeholder("x")
    x.meta["val"] = torch.empty(4)
    a = g.call_function(torch.ops.aten.relu.default, (x,))
    a.meta["val"] = torch.empty(4)
    b = g.call_function(torch.ops.aten.add_.Tensor, (a, x))
    b.meta["val"] = torch.empty(4)
    r = g.call_function(torch.ops.aten.rand_like.default, (x,))
    r.meta["val"] = torch.empty(4)
    g.output((b, r))
    graph, nodes = met.graph_of(torch.fx.GraphModule(torch.nn.Module(), g))
    assert nodes == [a, b, r]
    add = graph.ops[1]
    assert add.writes == [0] and add.alias == [(0, 0)]
    assert graph.ops[2].pinned and not graph.ops[0].pinned
    memplan.build_problem(graph)  # a valid graph
