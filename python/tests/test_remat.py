"""Rematerialized training steps proven by execution: the CNN with batch
norm, the transformer and the U-Net of remat_models.py, each fitted by
memplan.rematerialize into three budgets below its peak, run with
run_in_arena in one arena of the plan's size (every tensor at its planned
offset, the recomputed ones included), give eager PyTorch's gradients and
updated batch-norm statistics.

The budgets are fractions of the peak without recomputation that the
greedy reaches. The CNN (resnet18) is planned with its gradients left to
the caller (plan_outputs=False): with them in the arena its peak is
mostly the 45 MB of gradients, which no recomputation lowers. The
transformer's activations are read back through views (reshape,
transpose, expand), which are run again with the op they view; it
reaches 0.56 of its peak, the U-Net 0.49 and the CNN 0.46."""

import copy
import functools
import re

import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

import memplan
import memplan.torch as mt
import remat_checks
from remat_checks import ALIGNMENT, CASES
import remat_models

torch.set_num_threads(1)


@functools.lru_cache(maxsize=None)
def step(name):
    """(traced training step, example inputs, eager gradients, eager
    buffers after the step), once per model."""
    model, inputs, loss_fn = remat_models.MODELS[name]()
    eager = copy.deepcopy(model)
    params = [p for p in eager.parameters() if p.requires_grad]
    grads = torch.autograd.grad(loss_fn(eager(*inputs)), params)
    # The math attention: torch's joint graph of the CPU flash attention
    # pairs its decomposed forward with the fused backward, whose gradients
    # differ from eager's.
    with sdpa_kernel(SDPBackend.MATH):
        traced = mt.trace(model, inputs, training=True, loss_fn=loss_fn)
    buffers = {n: b.detach().clone() for n, b in eager.named_buffers()}
    return traced, inputs, grads, buffers


@functools.lru_cache(maxsize=None)
def peak_without(name):
    traced = step(name)[0]
    plan_outputs = CASES[name][0]
    plan = memplan.plan(
        traced.graph, alignment=ALIGNMENT, plan_outputs=plan_outputs
    )
    return plan.peak


@pytest.mark.parametrize(
    "name,fraction",
    [(name, f) for name, (_, fractions) in CASES.items() for f in fractions],
)
def test_rematerialized_step_gives_eager_gradients(name, fraction, monkeypatch):
    traced, inputs, grads, buffers = step(name)
    plan_outputs = CASES[name][0]
    budget = int(peak_without(name) * fraction)
    result = mt.rematerialize(
        traced, budget, alignment=ALIGNMENT, plan_outputs=plan_outputs
    )
    ops = remat_checks.check_rewrite(traced, result, budget, peak_without(name))
    if name == "transformer":
        # Its activations are read through views, run again with them.
        assert any(ops[copied].alias for copied in result.recomputed)
    remat_checks.check_run_in_arena(
        traced, result, inputs, grads, buffers, monkeypatch
    )


def test_infeasible_budget_gives_the_smallest_found():
    traced = step("unet")[0]
    with pytest.raises(ValueError, match="smallest peak found is") as error:
        mt.rematerialize(traced, 1000, alignment=ALIGNMENT)
    smallest = int(re.search(r"found is (\d+) bytes", str(error.value))[1])
    assert smallest < peak_without("unet")
    result = mt.rematerialize(traced, smallest, alignment=ALIGNMENT)
    assert result.plan.peak == smallest


def test_arena_needs_the_rewritten_graph():
    traced, inputs, _, _ = step("unet")
    budget = int(peak_without("unet") * 0.9)
    result = mt.rematerialize(traced, budget, alignment=ALIGNMENT)
    with pytest.raises(ValueError, match="runs with graph="):
        mt.run_in_arena(traced, result.plan, inputs)
    # A graph whose recomputed op reads a tensor its original does not.
    graph = result.graph
    ops = graph.ops
    k = next(i for i, op in enumerate(ops) if op.name in result.recomputed)
    ops[k].inputs = [traced.input_names[0]] * len(ops[k].inputs)
    graph.ops = ops
    with pytest.raises(ValueError, match="not a rematerialization"):
        mt.run_in_arena(traced, result.plan, inputs, graph=graph)
