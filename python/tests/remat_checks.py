"""The cases and checks of a rematerialized training step that
test_remat.py (the torch.export trace) and test_remat_joint.py
(AOTAutograd's joint graph) share: the rewrite fits its budget, is verified and runs no op with writes
twice; run in one arena of its plan's size, it gives eager PyTorch's
gradients and buffer updates."""

import re

import torch

import memplan
import memplan.torch as mt
from memplan.torch import arena as arena_module

ALIGNMENT = 64
# model -> (plan_outputs, budgets as fractions of the peak without
# recomputation)
CASES = {
    "cnn_bn": (False, (0.9, 0.75, 0.6)),
    "transformer": (True, (0.9, 0.75, 0.6)),
    "unet": (True, (0.9, 0.75, 0.6)),
}


def check_rewrite(traced, result, budget, peak_without):
    """The rewrite `result` of `traced` fits `budget` (below the peak
    without recomputation), is verified, and each op it runs again copies
    a recomputable traced op that writes nothing; every buffer update runs
    once. Returns the rewritten graph's ops by name."""
    assert result.peak_without == peak_without
    assert result.plan.peak <= budget < result.peak_without
    assert result.recomputed and result.added_cost > 0
    memplan.verify(result.graph, result.plan)
    ops = {op.name: op for op in result.graph.ops}
    traced_ops = {op.name: op for op in traced.ops}
    for copied in result.recomputed:
        original = traced_ops[re.sub(r"\.recompute(_\d+)?$", "", copied)]
        assert not ops[copied].writes and not original.writes
        assert original.recomputable
    names = [op.name for op in result.graph.ops]
    for writer in traced.buffer_writes.values():
        assert names.count(writer) == 1
    assert len(names) == len(traced.ops) + len(result.recomputed)
    return ops


def check_run_in_arena(traced, result, inputs, grads, buffers, monkeypatch):
    """run_in_arena of the rewrite lays out one arena of the plan's size and
    gives `grads` (eager's gradients) and `buffers` (eager's buffers after
    the step, each moved by it)."""
    sizes = []
    init = arena_module._ArenaRun.__init__

    def recording(self, *args, **kwargs):
        init(self, *args, **kwargs)
        sizes.append(self.size)
        assert self.arena.numel() >= self.size

    monkeypatch.setattr(arena_module._ArenaRun, "__init__", recording)
    state = {n: c.clone() for n, c in traced.constants.items()}
    out = mt.run_in_arena(
        traced, result.plan, inputs, state=state, graph=result.graph
    )
    assert sizes == [result.plan.peak]
    torch.testing.assert_close(out, tuple(grads))
    for n, value in buffers.items():
        assert not torch.equal(value, traced.constants[n])  # the step moved it
        torch.testing.assert_close(state[n], value)
