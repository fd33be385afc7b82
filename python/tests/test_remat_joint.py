"""Training steps traced from AOTAutograd's joint graph
(memplan.torch.trace(..., training=True, functional=True)), rematerialized
and proven by execution: the CNN with batch norm, the transformer and the
U-Net of remat_models.py, each fitted by memplan.torch.rematerialize into
three budgets below its peak, run with run_in_arena in one arena of the
plan's size, give eager PyTorch's gradients and updated batch-norm
statistics; and the errors of the functional trace.

As in test_remat.py, the budgets are fractions of the peak without
recomputation, and the CNN is planned with its gradients left to the
caller (plan_outputs=False)."""

import copy
import functools
import re

import pytest
import torch

import memplan
import memplan.torch as mt
import remat_checks
from remat_checks import ALIGNMENT, CASES
import remat_models

torch.set_num_threads(1)


@functools.lru_cache(maxsize=None)
def step(name):
    """(functional trace, example inputs, eager gradients, eager buffers
    after the step), once per model; the trace leaves the model as it
    was."""
    model, inputs, loss_fn = remat_models.MODELS[name]()
    eager = copy.deepcopy(model)
    params = [p for p in eager.parameters() if p.requires_grad]
    grads = torch.autograd.grad(loss_fn(eager(*inputs)), params)
    before = {n: b.clone() for n, b in model.named_buffers()}
    traced = mt.trace(
        model, inputs, training=True, loss_fn=loss_fn, functional=True
    )
    # torch.compile ran the step to capture it: its buffer updates and
    # gradients were undone.
    for n, b in model.named_buffers():
        assert torch.equal(b, before[n]), n
    assert all(p.grad is None for p in model.parameters())
    buffers = {n: b.detach().clone() for n, b in eager.named_buffers()}
    return traced, inputs, grads, buffers


@functools.lru_cache(maxsize=None)
def peak_without(name):
    traced = step(name)[0]
    plan = memplan.plan(
        traced.graph, alignment=ALIGNMENT, plan_outputs=CASES[name][0]
    )
    memplan.verify(traced.graph, plan)
    return plan.peak


@pytest.mark.parametrize("name", list(CASES))
def test_the_functional_step_writes_only_buffers(name):
    """Functionalized: the only ops that write are the buffer updates (no
    in-place ReLU), each run once; the tangent is fed, not given."""
    traced = step(name)[0]
    assert traced.training and traced.input_names == ["input"]
    writers = [op.name for op in traced.ops if op.writes]
    assert sorted(writers) == sorted(traced.buffer_writes.values())
    if name != "transformer":  # batch norm's running statistics
        assert writers
    assert all(
        op.type == "aten.copy_.default" for op in traced.ops if op.writes
    )
    assert not any(
        op.type.startswith(("aten.relu_", "aten.threshold_"))
        for op in traced.ops
    )
    model = remat_models.MODELS[name]()[0]
    assert set(traced.buffer_writes) == {n for n, _ in model.named_buffers()}


@pytest.mark.parametrize(
    "name,fraction",
    [(name, f) for name, (_, fractions) in CASES.items() for f in fractions],
)
def test_rematerialized_joint_step_gives_eager_gradients(
    name, fraction, monkeypatch
):
    traced, inputs, grads, buffers = step(name)
    plan_outputs = CASES[name][0]
    budget = int(peak_without(name) * fraction)
    result = mt.rematerialize(
        traced, budget, alignment=ALIGNMENT, plan_outputs=plan_outputs
    )
    remat_checks.check_rewrite(traced, result, budget, peak_without(name))
    # Functionalized: the buffer updates are the only writers.
    writers = [op.name for op in result.graph.ops if op.writes]
    assert sorted(writers) == sorted(traced.buffer_writes.values())
    remat_checks.check_run_in_arena(
        traced, result, inputs, grads, buffers, monkeypatch
    )


def test_an_ordinary_run_gives_eager_gradients_and_statistics():
    """Traced.run (torch's own memory) of the functional step: the model's
    inputs only, the gradients in named_parameters() order."""
    traced, inputs, grads, buffers = step("unet")
    state = {n: c.clone() for n, c in traced.constants.items()}
    torch.testing.assert_close(traced.run(inputs, state=state), tuple(grads))
    for n, value in buffers.items():
        torch.testing.assert_close(state[n], value)
    with pytest.raises(ValueError, match="takes 1 inputs, got 2"):
        traced.run(list(inputs) + [torch.ones(())])


def test_infeasible_budget_gives_the_smallest_found():
    traced = step("unet")[0]
    with pytest.raises(ValueError, match="smallest peak found is") as error:
        mt.rematerialize(traced, 1000, alignment=ALIGNMENT)
    smallest = int(re.search(r"found is (\d+) bytes", str(error.value))[1])
    assert smallest < peak_without("unet")


def test_the_joint_start_saves_less_and_recomputes_less():
    """On the transformer, the functional trace's peak without
    recomputation is below the torch.export trace's, and at 0.75 of the
    latter's peak it fits for less added cost (docs/remat.md)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    joint = step("transformer")[0]
    model, inputs, loss_fn = remat_models.transformer()
    with sdpa_kernel(SDPBackend.MATH):
        exported = mt.trace(model, inputs, training=True, loss_fn=loss_fn)
    peak = memplan.plan(exported.graph, alignment=ALIGNMENT).peak
    assert peak_without("transformer") < peak
    budget = int(0.75 * peak)
    fitted = [
        mt.rematerialize(t, budget, alignment=ALIGNMENT)
        for t in (joint, exported)
    ]
    for result in fitted:
        memplan.verify(result.graph, result.plan)
        assert result.plan.peak <= budget
    assert 0 < fitted[0].added_cost < fitted[1].added_cost / 4


class _Breaks(torch.nn.Module):
    """A model torch.compile cannot compile as one graph, which torch.export
    traces."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)
        torch._dynamo.graph_break()
        return y.relu()


def test_a_step_torch_compile_cannot_compile_names_the_fallback():
    model, x = _Breaks(), torch.randn(2, 8)
    with pytest.raises(mt.TraceError) as error:
        mt.trace(model, (x,), training=True, functional=True)
    message = str(error.value)
    assert "torch.compile could not compile the training step of _Breaks" in (
        message
    )
    assert "graph_break" in message
    assert "trace(model, inputs, training=True) without functional=True" in (
        message
    )
    assert all(p.grad is None for p in model.parameters())
    # The fallback it names traces the step.
    traced = mt.trace(model, (x,), training=True)
    plan = memplan.plan(traced.graph)
    memplan.verify(traced.graph, plan)


def test_functional_needs_a_fixed_size_training_step():
    model, x = torch.nn.Linear(4, 4), torch.randn(2, 4)
    with pytest.raises(ValueError, match="pass training=True"):
        mt.trace(model, (x,), functional=True)
    with pytest.raises(ValueError, match="drop dynamic_shapes"):
        mt.trace(
            model,
            (x,),
            training=True,
            functional=True,
            dynamic_shapes=({0: torch.export.Dim("batch")},),
        )
    model.requires_grad_(False)
    with pytest.raises(ValueError, match="no parameter that requires"):
        mt.trace(model, (x,), training=True, functional=True)
