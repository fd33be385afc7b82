"""bench/remat_vs_torch.py on the transformer at two of torch's budgets:
torch's partition captured, joined into one graph, planned and verified,
its recompute counted; and the command's files and errors."""

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
            "--torch-only",
            f"--csv={out / 'table.csv'}",
            f"--json={out / 'table.json'}",
        ]
    )
    return points, sides, out


def test_partitions_plan_and_verify(run):
    points, sides, _ = run
    assert [p.budget for p in points] == [1.0, 0.0]
    assert sides == {}
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


def test_files(run):
    points, _, out = run
    with open(out / "table.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["torch_peak"]) for r in rows] == [p.peak for p in points]
    data = json.load(open(out / "table.json"))
    assert [r["torch_recompute_flops"] for r in data["rows"]] == [
        p.recompute_flops for p in points
    ]
    assert data["summary"] == []


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
