"""bench/remat_vs_torch.py on the transformer at two of torch's budgets:
torch's partition captured, joined into one graph, planned and verified,
its recompute counted; the joint graph the partitioner started from,
rematerialized by memplan at torch's peaks and run in one arena; and the
command's files and errors."""

import csv
import json
import os
import sys

import pytest

import memplan

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import remat_vs_torch as rvt  # noqa: E402


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("remat_vs_torch")
    points, sides = rvt.main(
        [
            "--models=transformer",
            "--budgets=1.0,0.0",
            "--steps=6",
            f"--csv={out / 'table.csv'}",
            f"--json={out / 'table.json'}",
        ]
    )
    return points, sides, out


def test_partitions_plan_and_verify(run):
    points, sides, _ = run
    assert [p.budget for p in points] == [1.0, 0.0]
    assert list(sides) == ["transformer"]
    for p in points:
        memplan.verify(p.graph, p.plan)
        assert p.peak == p.plan.peak
        assert 0 < p.lower_bound <= p.peak
        # Every planned tensor is placed inside the peak.
        placed = [t for t in p.plan.placements if t.planned]
        assert placed
        for t in placed:
            assert t.offset + t.size <= p.peak


def test_budget_zero_saves_no_activation_and_recomputes_the_forward(run):
    at_one, at_zero = run[0]
    assert at_one.saved_bytes > 0
    assert at_zero.saved_bytes == 0
    # At 1.0 the min-cut partitioner recomputes only cheap elementwise ops:
    # no matmul; at 0.0 every matmul of the forward.
    assert at_one.recompute_flops >= 0
    assert at_one.recompute_counted == 0
    assert at_zero.recompute_counted > 0
    assert at_zero.recompute_flops > at_one.recompute_flops
    assert at_zero.recompute_flops <= at_zero.forward_flops
    assert at_zero.recompute_flops > 0.9 * at_zero.forward_flops
    assert 0 < at_one.recomputed < at_zero.recomputed


def test_the_joint_graph_is_the_partitions_step(run):
    at_one = run[0][0]
    joint = at_one.joint.traced
    plan = memplan.plan(joint.graph)
    memplan.verify(joint.graph, plan)

    # The same inputs (the tokens and the loss's tangent), the same
    # outputs (the loss and the gradients), each of the same size.
    def sizes(graph, kind):
        return sorted(t.size for t in graph.tensors if t.kind == kind)

    for kind in ("input", "output"):
        assert sizes(joint.graph, kind) == sizes(at_one.graph, kind)
    # The partition runs every op of the joint graph, and the recomputed
    # ones again: its FLOPs are the joint's and torch's recompute.
    assert at_one.total_flops == at_one.joint_flops + at_one.recompute_flops
    assert 0 < at_one.joint.forward_flops < at_one.joint_flops


def test_memplan_reaches_torchs_peaks_for_less(run):
    points, sides, _ = run
    side = sides["transformer"]
    for p, m in zip(points, side.points):
        assert m.error == ""
        assert m.budget == p.peak
        memplan.verify(m.result.graph, m.result.plan)
        assert m.peak == m.result.plan.peak <= p.peak
        # The target: no more recompute than torch at its peak.
        assert m.added_flops == m.result.added_cost
        assert m.added_flops <= p.recompute_flops
    at_one = points[0]
    assert side.peak_without > at_one.peak
    assert side.points[0].added_flops > 0
    smallest = side.smallest
    assert smallest.peak < at_one.peak
    assert smallest.added_flops <= side.forward_flops * rvt.FORWARD_SHARE
    memplan.verify(smallest.result.graph, smallest.result.plan)


def test_memplans_rewrite_of_the_joint_graph_runs_in_its_arena(run):
    """The rewrite at torch's budget-1.0 peak, run in one arena of the
    planned size (every byte checked), gives eager PyTorch's gradients."""
    import torch
    from memplan.torch import run_in_arena

    joint = run[0][0].joint
    result = run[1]["transformer"].points[0].result
    assert result.recomputed
    model, inputs, loss_fn = rvt.remat_models.transformer()
    # The loss's tangent is fed by the traced step: the model's inputs.
    assert joint.traced.input_names == ["input"]
    out = run_in_arena(joint.traced, result.plan, inputs, graph=result.graph)
    loss = loss_fn(model(*inputs))
    loss.backward()
    params = dict(model.named_parameters())
    assert joint.grad_names == list(params)
    torch.testing.assert_close(out, tuple(p.grad for p in params.values()))
    # The loss is the graph's last output, not returned.
    last = joint.traced.tensors[joint.traced.outputs[-1]]
    assert last.shape == () and len(out) == len(joint.traced.outputs) - 1


def test_files(run):
    points, sides, out = run
    with open(out / "table.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["torch_peak"]) for r in rows] == [p.peak for p in points]
    data = json.load(open(out / "table.json"))
    assert [r["torch_recompute_flops"] for r in data["rows"]] == [
        p.recompute_flops for p in points
    ]
    assert [r["memplan_added_flops"] for r in data["rows"]] == [
        m.added_flops for m in sides["transformer"].points
    ]
    (summary,) = data["summary"]
    assert (
        summary["memplan_smallest_peak"] == sides["transformer"].smallest.peak
    )
    assert summary["torch_peak_at_0"] == points[1].peak


def test_memplan_side_needs_rematerialize(monkeypatch):
    monkeypatch.delattr(memplan, "rematerialize", raising=False)
    with pytest.raises(SystemExit, match="memplan.rematerialize is missing"):
        rvt.main(["--models=transformer", "--budgets=1.0"])


@pytest.mark.parametrize(
    "argument", ["--models=resnet", "--budgets=1.5", "--budgets=x"]
)
def test_bad_arguments(argument, capsys):
    with pytest.raises(SystemExit):
        rvt.main([argument, "--torch-only"])
    assert argument.split("=")[1] in capsys.readouterr().err
