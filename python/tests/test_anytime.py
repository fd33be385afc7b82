"""A plan a time or work limit decided says so: a LimitWarning and the
plan's counters. Work limits only: nothing here reads a clock."""

import os
import pathlib
import warnings

import pytest

import memplan

DATA = pathlib.Path(
    os.environ.get(
        "MEMPLAN_DATA_DIR",
        pathlib.Path(__file__).resolve().parents[2] / "bench" / "data",
    )
)


@pytest.fixture(scope="module")
def trace():
    problem, _ = memplan.read_buffer_csv(DATA / "traces" / "tiny_bert.csv")
    return problem


def test_a_cut_pass_warns_and_counts(trace):
    with pytest.warns(memplan.LimitWarning) as caught:
        plan = memplan.plan(trace, work_limit=20000)
    assert plan.counters["cut_by_work_limit"] == 1
    assert plan.counters["pass_placed"] + plan.counters["packed"] == len(
        trace.buffers
    )
    message = str(caught[0].message)
    assert "the work limit (20000 work units) cut the greedy pass" in message
    assert "; a whole greedy pass costs about " in message
    assert plan.peak < plan.naive_total // 4


def test_a_plan_without_a_pass_says_what_limit_gives_one(trace):
    with pytest.warns(memplan.LimitWarning, match="pays for no greedy pass"):
        plan = memplan.plan(trace, planner="greedy_by_size", work_limit=1)
    assert plan.counters["packed"] == len(trace.buffers)
    assert "naive_plan" not in plan.counters


def test_a_whole_plan_does_not_warn(trace):
    with warnings.catch_warnings():
        warnings.simplefilter("error", memplan.LimitWarning)
        plan = memplan.plan(trace, planner="greedy_by_size")
    assert "cut_by_work_limit" not in plan.counters


def test_a_capacity_below_the_lower_bound_says_the_smallest(trace):
    lower_bound = memplan.plan(trace, planner="greedy_by_size").lower_bound
    with pytest.raises(memplan.CapacityError) as error:
        memplan.plan(trace, capacity=lower_bound - 1)
    assert (
        "the smallest capacity that could work is the lower bound, "
        f"{lower_bound} bytes" in str(error.value)
    )
