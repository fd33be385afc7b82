"""memplan.rematerialize(..., exact=True): the least added cost, proven by
the exact search on small graphs, never above the heuristic's, its plan
verified; its arguments checked; and memplan.torch.rematerialize passing
it through to a step that runs in one arena with eager's gradients."""

import re

import pytest

import memplan


def chain(layers=8):
    """`layers` layers of 100 bytes forward, then backward, each backward
    op reading its layer's input (remat_tool_test.cc's chain)."""
    tensors = [memplan.Tensor("x", 100, kind="input")]
    ops = []
    last = "x"
    for i in range(1, layers + 1):
        tensors.append(memplan.Tensor(f"a{i}", 100))
        ops.append(
            memplan.Op(f"f{i}", [last], [f"a{i}"], cost=10, recomputable=True)
        )
        last = f"a{i}"
    loss = f"g{layers + 1}"
    tensors.append(memplan.Tensor(loss, 100))
    ops.append(memplan.Op("loss", [last], [loss], cost=20))
    for i in range(layers, 0, -1):
        out = f"g{i}" if i > 1 else "gx"
        kind = "activation" if i > 1 else "output"
        tensors.append(memplan.Tensor(out, 100, kind=kind))
        read = f"a{i - 1}" if i > 1 else "x"
        ops.append(memplan.Op(f"b{i}", [f"g{i + 1}", read], [out], cost=20))
    return memplan.Graph(name="chain", tensors=tensors, ops=ops)


@pytest.mark.parametrize("budget", [900, 700, 500])
def test_exact_proves_a_cost_no_higher_than_the_heuristics(budget):
    graph = chain()
    exact = memplan.rematerialize(graph, budget, exact=True)
    heuristic = memplan.rematerialize(graph, budget)
    assert exact.proven and not heuristic.proven
    assert exact.peak_without == 1000 and exact.plan.peak <= budget
    assert 0 < exact.added_cost <= heuristic.added_cost
    memplan.verify(exact.graph, exact.plan)
    ops = {op.name: op for op in exact.graph.ops}
    assert exact.added_cost == sum(ops[n].cost for n in exact.recomputed)
    for name in exact.recomputed:
        assert re.sub(r"\.recompute(_\d+)?$", "", name) in ops
    assert " proven>" in repr(exact) and " proven" not in repr(heuristic)


def test_exact_on_a_graph_that_fits_is_the_graph_proven():
    graph = chain()
    same = memplan.rematerialize(graph, "1KiB", exact=True)
    assert same.proven and same.recomputed == [] and same.added_cost == 0
    assert same.graph == graph
    memplan.verify(same.graph, same.plan)


def test_exact_gives_the_heuristics_rewrite_outside_its_model_unproven():
    """b1 reads x and a1 again: the heuristic's chain runs f1 twice, which
    the search's model leaves out (examples/remat_example.cc's step)."""
    tensors = [memplan.Tensor("x", 1000, kind="input")]
    tensors += [memplan.Tensor(n, 1000) for n in ("a1", "a2", "a3", "g3", "g2")]
    tensors += [memplan.Tensor("loss", 4)]
    tensors += [memplan.Tensor("gx", 1000, kind="output")]
    chain_ops = [("f1", "x", "a1"), ("f2", "a1", "a2"), ("f3", "a2", "a3")]
    ops = [
        memplan.Op(n, [i], [o], cost=2, recomputable=True)
        for n, i, o in chain_ops + [("head", "a3", "loss")]
    ]
    ops += [
        memplan.Op("b3", ["loss", "a3"], ["g3"]),
        memplan.Op("b2", ["g3", "a2"], ["g2"]),
        memplan.Op("b1", ["g2", "a1", "x"], ["gx"]),
    ]
    graph = memplan.Graph(name="tiny", tensors=tensors, ops=ops)
    exact = memplan.rematerialize(graph, 4000, exact=True)
    heuristic = memplan.rematerialize(graph, 4000)
    assert not exact.proven and exact.plan.peak <= 4000
    assert exact.added_cost == heuristic.added_cost
    memplan.verify(exact.graph, exact.plan)


def test_exact_limits_leave_it_unproven_or_raise():
    graph = chain(41)  # 83 ops
    result = memplan.rematerialize(graph, 1500, exact=True, work_limit=2000000)
    assert not result.proven and result.plan.peak <= 1500
    memplan.verify(result.graph, result.plan)
    with pytest.raises(memplan.CapacityError, match="spent its limits"):
        memplan.rematerialize(graph, 1500, exact=True, work_limit=100000)


def test_exact_arguments_are_checked():
    graph = chain()
    with pytest.raises(ValueError, match=r"into 100 bytes \(proven\): the sm"):
        memplan.rematerialize(graph, 100, exact=True)
    with pytest.raises(TypeError, match="exact must be True or False"):
        memplan.rematerialize(graph, 700, exact="yes")
    with pytest.raises(TypeError, match="exact must be True or False"):
        memplan.rematerialize(graph, 700, exact=1)
    with pytest.raises(ValueError, match="work_limit"):
        memplan.rematerialize(graph, 700, exact=True, work_limit=-1)
    with pytest.raises(TypeError, match="work_limit"):
        memplan.rematerialize(graph, 700, exact=True, work_limit=1.5)
    with pytest.raises(ValueError, match="time_limit"):
        memplan.rematerialize(graph, 700, exact=True, time_limit="soon")
    with pytest.raises(ValueError, match="the budget is 0 bytes"):
        memplan.rematerialize(graph, 0, exact=True)


def mlp_step(bias):
    """A traced training step of a 3-hidden-layer MLP (ReLU, width 64, a
    batch of 64), its input and eager PyTorch's gradients."""
    torch = pytest.importorskip("torch")
    import memplan.torch as mt

    torch.manual_seed(0)
    layers = [torch.nn.Linear(16, 64, bias=bias), torch.nn.ReLU()]
    for _ in range(2):
        layers += [torch.nn.Linear(64, 64, bias=bias), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(64, 4, bias=bias))
    x = torch.randn(64, 16)

    def loss_fn(out):
        return out.square().mean()

    grads = torch.autograd.grad(loss_fn(model(x)), list(model.parameters()))
    return mt.trace(model, (x,), training=True, loss_fn=loss_fn), x, grads


def test_torch_exact_step_runs_with_eager_gradients():
    torch = pytest.importorskip("torch")
    import memplan.torch as mt

    traced, x, grads = mlp_step(bias=True)
    assert len(traced.graph.ops) == 64
    peak = memplan.plan(traced.graph).peak
    result = mt.rematerialize(traced, int(peak * 0.9), exact=True)
    assert result.plan.peak <= int(peak * 0.9)
    assert result.recomputed
    heuristic = mt.rematerialize(traced, int(peak * 0.9))
    assert result.added_cost <= heuristic.added_cost
    memplan.verify(result.graph, result.plan)
    out = mt.run_in_arena(traced, result.plan, (x,), graph=result.graph)
    torch.testing.assert_close(out, tuple(grads))


def test_torch_exact_proves_a_step_read_through_views_at_five_budgets():
    """A traced MLP step of 56 ops reads each saved activation through a
    view (alias): the exact mode runs the activation's op again with its
    view, proves the least cost at five budgets within the default work
    limit (a few thousand work units each, docs/remat.md), and the
    rewritten step runs in one arena with eager's gradients."""
    torch = pytest.importorskip("torch")
    import memplan.torch as mt

    traced, x, grads = mlp_step(bias=False)
    assert len(traced.graph.ops) == 56
    # The arena holds the step's own tensors: weights and gradients are the
    # caller's.
    options = dict(plan_inputs=False, plan_outputs=False)
    peak = memplan.plan(traced.graph, **options).peak
    for fraction in (0.95, 0.9, 0.85, 0.8, 0.78):
        budget = int(peak * fraction)
        result = mt.rematerialize(traced, budget, exact=True, **options)
        assert result.proven, fraction
        assert 0 < result.added_cost and result.plan.peak <= budget
        memplan.verify(result.graph, result.plan)
        views = [n for n in result.recomputed if n.startswith("alias")]
        assert views, result.recomputed
        heuristic = mt.rematerialize(traced, budget, **options)
        assert result.added_cost <= heuristic.added_cost
        out = mt.run_in_arena(traced, result.plan, (x,), graph=result.graph)
        torch.testing.assert_close(out, tuple(grads))
