"""The memplan module: graphs, plans by tensor name, verification, errors and
every file format, checked against the library's tool."""

import json
import os
import pathlib
import subprocess

import pytest

import memplan

DATA = pathlib.Path(os.environ.get(
    "MEMPLAN_DATA_DIR",
    pathlib.Path(__file__).resolve().parents[2] / "bench" / "data"))
TOOL = os.environ.get("MEMPLAN_TOOL")


def small_graph():
    return memplan.Graph(
        name="chain",
        tensors=[memplan.Tensor("x", 1000, kind="input"),
                 memplan.Tensor("w", 64, kind="constant"),
                 memplan.Tensor("a", 4000),
                 memplan.Tensor("v", 4000),
                 memplan.Tensor("b", 2000),
                 memplan.Tensor("y", 500, kind="output")],
        ops=[memplan.Op("conv", ["x", "w"], ["a"], type="Conv"),
             memplan.Op("reshape", ["a"], ["v"], type="Reshape",
                        alias=[(0, 0)]),
             memplan.Op("relu", ["v"], ["b"], type="Relu"),
             memplan.Op("pool", ["b"], ["y"], type="Pool")])


def test_plan_by_tensor_name():
    plan = memplan.plan(small_graph(), "greedy_by_size", alignment=64)
    assert plan.planner == "greedy_by_size"
    # x, a+v (a view shares its base's buffer), b, y.
    assert len(plan.buffers) == 4
    assert plan.offset("a") == plan.offset("v")
    assert set(plan.tensors) == {"x", "a", "v", "b", "y"}
    assert plan.tensors["b"] == ("default", plan.offset("b"))
    assert all(off % 64 == 0 for _, off in plan.tensors.values())
    # conv: x (1024) and a (4032) alive together; relu: a and b.
    assert plan.lower_bound == 4032 + 2048
    assert plan.peak >= plan.lower_bound
    assert plan.naive_total == 1024 + 4032 + 2048 + 512
    assert plan.pool("y") == "default"
    memplan.verify(small_graph(), plan)
    plan.verify()
    with pytest.raises(KeyError, match="w"):
        plan.offset("w")  # a constant, not planned by default


def test_plan_constants_and_pools():
    plan = memplan.plan(small_graph(), "first_fit", plan_constants=True,
                        pools=[("fast", 5000, 16), ("slow", 0, 16)])
    assert "w" in plan.tensors
    assert {p.name for p in plan.problem.pools} == {"fast", "slow"}
    assert plan.pool("a") in ("fast", "slow")
    memplan.verify(small_graph(), plan)


def test_graph_dict_round_trip():
    graph = small_graph()
    data = graph.to_dict()
    assert data["format"] == "memplan-graph-v1"
    assert memplan.graph_from_dict(data) == graph
    assert memplan.plan(data, "naive").peak == memplan.plan(graph, "naive").peak
    assert [t["name"] for t in data["tensors"]] == ["x", "w", "a", "v", "b", "y"]


def test_planners_listed():
    names = memplan.planners()
    for name in ("naive", "greedy_by_size", "best", "exact", "cp"):
        assert name in names and names[name]
    assert memplan.default_planner() in names


def test_invalid_input_is_value_error():
    graph = small_graph()
    graph.ops = graph.ops + [memplan.Op("late", ["nowhere"], [])]
    with pytest.raises(ValueError, match="nowhere"):
        memplan.plan(graph)
    with pytest.raises(ValueError, match="no_such_planner"):
        memplan.plan(small_graph(), "no_such_planner")
    with pytest.raises(ValueError, match="power of two"):
        memplan.plan(small_graph(), alignment=3)
    with pytest.raises(ValueError, match="kind"):
        memplan.Tensor("t", 1, kind="weights")
    with pytest.raises(TypeError):
        memplan.plan(42)


def test_capacity_and_time_errors_are_told_apart():
    with pytest.raises(memplan.CapacityError) as info:
        memplan.plan(small_graph(), "greedy_by_size", capacity=5000)
    assert isinstance(info.value, memplan.Error)
    assert not isinstance(info.value, memplan.TimeLimitError)
    # MiniMalloc's instance E fits 1048576 bytes, but not in no time.
    problem, _ = memplan.read_buffer_csv(DATA / "minimalloc" / "E.1048576.csv")
    with pytest.raises(memplan.TimeLimitError) as info:
        memplan.plan(problem, "exact", capacity=1048576, time_limit=0)
    assert isinstance(info.value, memplan.Error)
    assert not isinstance(info.value, memplan.CapacityError)


def test_moved_buffer_fails_verification():
    plan = memplan.plan(small_graph(), "greedy_by_size")
    bad = plan.moved("b", plan.offset("a"))
    assert bad.offset("b") == plan.offset("a")
    with pytest.raises(ValueError, match=r'"a".*"b"|"b".*"a"'):
        memplan.verify(small_graph(), bad)
    with pytest.raises(ValueError):
        bad.verify()


def test_file_formats(tmp_path):
    graph = memplan.read_graph(DATA / "models" / "resnet18.json")
    assert len(graph.ops) > 10
    for name in ("g.json", "g.json.gz"):
        memplan.write_graph(graph, tmp_path / name)
        assert memplan.read_graph(tmp_path / name) == graph
    plan = memplan.plan(graph, "greedy_by_size", alignment=64)
    memplan.write_plan(plan, tmp_path / "p.json")
    text = json.loads((tmp_path / "p.json").read_text())
    assert text["format"] == "memplan-plan-v1" and text["peak"] == plan.peak
    back = memplan.read_plan(tmp_path / "p.json", graph, alignment=64)
    assert back.tensors == plan.tensors and back.peak == plan.peak
    memplan.verify(graph, back)
    # Buffer CSV with offsets: the same placement, buffer by buffer.
    memplan.write_plan(plan, tmp_path / "p.csv")
    problem, csv_plan = memplan.read_buffer_csv(tmp_path / "p.csv")
    assert [b["offset"] for b in csv_plan.buffers] == [
        b["offset"] for b in plan.buffers]
    assert csv_plan.peak == plan.peak
    csv_plan.verify()
    memplan.write_buffer_csv(problem, tmp_path / "q.csv")
    again, none = memplan.read_buffer_csv(tmp_path / "q.csv")
    assert none is None and len(again.buffers) == len(problem.buffers)
    with pytest.raises(FileNotFoundError):
        memplan.read_graph(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text('{"format": "memplan-graph-v1", "tensors": 3}')
    with pytest.raises(ValueError):
        memplan.read_graph(tmp_path / "bad.json")


def test_problem_from_csv_is_planned():
    problem, _ = memplan.read_buffer_csv(DATA / "minimalloc" / "input.12.csv")
    plan = memplan.plan(problem, "greedy_by_size")
    assert plan.lower_bound == problem.lower_bound
    assert len(plan.buffers) == len(problem.buffers)
    memplan.verify(problem, plan)


def tool_plan(graph_path, planner, out, *flags):
    assert TOOL, "MEMPLAN_TOOL names the built memplan tool"
    subprocess.run([TOOL, "plan", str(graph_path), f"--planner={planner}",
                    f"--out={out}", *flags], check=True, capture_output=True)
    return json.loads(pathlib.Path(out).read_text())


@pytest.mark.parametrize("planner", ["greedy_by_size", "best", "exact"])
def test_same_plans_as_the_tool(tmp_path, planner):
    path = DATA / "models" / "mobilenet_v3_small.json"
    graph = memplan.read_graph(path)
    plan = memplan.plan(graph, planner, alignment=64, time_limit=30)
    tool = tool_plan(path, planner, tmp_path / "p.json", "--alignment=64",
                     "--time-limit=30")
    assert tool["peak"] == plan.peak
    assert {b["name"]: b["offset"] for b in tool["buffers"]} == {
        b["name"]: b["offset"] for b in plan.buffers}
