"""The memplan module: graphs, plans by tensor name, verification, errors and
every file format, checked against the library's tool."""

import gzip
import json
import os
import pathlib
import re
import subprocess

import pytest

import memplan

DATA = pathlib.Path(
    os.environ.get(
        "MEMPLAN_DATA_DIR",
        pathlib.Path(__file__).resolve().parents[2] / "bench" / "data",
    )
)
TOOL = os.environ.get("MEMPLAN_TOOL")


def small_graph():
    return memplan.Graph(
        name="chain",
        tensors=[
            memplan.Tensor("x", 1000, kind="input"),
            memplan.Tensor("w", 64, kind="constant"),
            memplan.Tensor("a", 4000),
            memplan.Tensor("v", 4000),
            memplan.Tensor("b", 2000),
            memplan.Tensor("y", 500, kind="output"),
        ],
        ops=[
            memplan.Op("conv", ["x", "w"], ["a"], type="Conv"),
            memplan.Op("reshape", ["a"], ["v"], type="Reshape", alias=[(0, 0)]),
            memplan.Op("relu", ["v"], ["b"], type="Relu"),
            memplan.Op("pool", ["b"], ["y"], type="Pool"),
        ],
    )


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
    plan = memplan.plan(
        small_graph(),
        "first_fit",
        plan_constants=True,
        pools=[("fast", 5000, 16), ("slow", 0, 16)],
    )
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
    assert [t["name"] for t in data["tensors"]] == [
        "x",
        "w",
        "a",
        "v",
        "b",
        "y",
    ]
    # Without "format", as the tool rejects the same graph in a file.
    del data["format"]
    for call in (memplan.graph_from_dict, lambda d: memplan.plan(d, "naive")):
        with pytest.raises(ValueError, match='graph dict has no "format"'):
            call(data)


def test_writes_round_trip_and_are_checked():
    graph = small_graph()
    graph.ops = graph.ops + [
        memplan.Op(
            "relu_",
            ["b"],
            ["b2"],
            type="aten.relu_",
            alias=[(0, 0)],
            writes=[0],
        )
    ]
    graph.tensors = graph.tensors + [memplan.Tensor("b2", 2000)]
    assert graph.ops[-1].writes == [0]
    data = graph.to_dict()
    assert data["ops"][-1]["writes"] == [0]
    assert "writes" not in data["ops"][0]
    assert memplan.graph_from_dict(data) == graph
    memplan.plan(graph, "naive", reorder="memory")
    data["ops"][-1]["writes"] = [1]
    with pytest.raises(ValueError, match='op "relu_".*out of range'):
        memplan.graph_from_dict(data)
    ops = graph.ops
    ops[-1].writes = [0, 0]
    graph.ops = ops
    with pytest.raises(ValueError, match='op "relu_".*twice'):
        memplan.plan(graph, "naive")


def test_costs_and_recomputable_round_trip_and_are_checked():
    graph = small_graph()
    ops = graph.ops
    ops[0].cost = 2.5e6
    ops[0].recomputable = True
    ops[2] = memplan.Op("relu", ["v"], ["b"], cost=4000, recomputable=True)
    graph.ops = ops
    assert graph.ops[0].cost == 2.5e6 and graph.ops[1].cost is None
    assert [o.recomputable for o in graph.ops] == [True, False, True, False]
    data = graph.to_dict()
    assert data["ops"][0]["cost"] == 2500000
    assert data["ops"][2]["cost"] == 4000 and data["ops"][2]["recomputable"]
    assert "cost" not in data["ops"][1] and "recomputable" not in data["ops"][1]
    assert memplan.graph_from_dict(data) == graph
    # No plan changes for them: the same offsets as without.
    plan = memplan.plan(graph, "greedy_by_size")
    memplan.verify(graph, plan)
    assert plan.tensors == memplan.plan(small_graph(), "greedy_by_size").tensors
    for bad, message in (
        (-1, r'op "conv": "cost" is -1, not a non-negative finite number'),
        ("12", r'op "conv": "cost" must be a non-negative number'),
        (float("nan"), r"graph\['ops'\]\[0\]\['cost'\] = nan"),
    ):
        data["ops"][0]["cost"] = bad
        with pytest.raises(ValueError, match=message):
            memplan.graph_from_dict(data)
    data["ops"][0]["cost"] = 1
    data["ops"][0]["writes"] = [0]
    with pytest.raises(ValueError, match='op "conv" is "recomputable" but wr'):
        memplan.graph_from_dict(data)
    # A graph made in code is checked when it is planned.
    ops = graph.ops
    ops[2].cost = float("inf")
    graph.ops = ops
    with pytest.raises(ValueError, match='op "relu" has cost inf, not a no'):
        memplan.plan(graph, "naive")
    ops[2].cost = 1
    ops[2].writes = [0]
    graph.ops = ops
    with pytest.raises(ValueError, match='op "relu" is recomputable but wr'):
        memplan.plan(graph, "naive")


def training_chain():
    """Three layers forward then backward: f1..f3 make a1..a3, which
    b3..b1 read again (remat_test.cc's TrainingChain)."""

    def act(name, size=100, kind="activation"):
        return memplan.Tensor(name, size, kind=kind)

    tensors = [act("x", kind="input"), act("w", 8, "constant")]
    tensors += [act(n) for n in ("a1", "a2", "a3")] + [act("loss", 10)]
    tensors += [act(n) for n in ("g3", "g2", "g1")] + [act("gx", kind="output")]
    forward = [
        ("f1", ["x"], ["a1"], 5),
        ("f2", ["a1", "w"], ["a2"], 20),
        ("f3", ["a2"], ["a3"], 40),
        ("f4", ["a3"], ["loss"], 1),
    ]
    backward = [
        ("b4", ["loss"], ["g3"], 1),
        ("b3", ["g3", "a3"], ["g2"], 40),
        ("b2", ["g2", "a2"], ["g1"], 20),
        ("b1", ["g1", "a1", "x"], ["gx"], 5),
    ]
    ops = [
        memplan.Op(n, i, o, cost=c, recomputable=True) for n, i, o, c in forward
    ] + [memplan.Op(n, i, o, cost=c) for n, i, o, c in backward]
    return memplan.Graph(name="chain", tensors=tensors, ops=ops)


def test_rematerialize_fits_a_budget_by_running_ops_again():
    graph = training_chain()
    assert memplan.plan(graph).peak == 600
    result = memplan.rematerialize(graph, 500)
    assert isinstance(result, memplan.RematResult)
    assert result.peak_without == 600 and result.plan.peak <= 500
    assert result.recomputed and result.added_cost > 0
    ops = {op.name: op for op in result.graph.ops}
    for name in result.recomputed:
        assert name.split(".recompute")[0] in ops and name in ops
    assert result.added_cost == sum(ops[n].cost for n in result.recomputed)
    memplan.verify(result.graph, result.plan)
    assert result.plan.op_order == list(range(len(result.graph.ops)))
    assert "peak_without=600" in repr(result)
    # A budget as text, and one already met: the graph as given.
    same = memplan.rematerialize(graph, "1KiB")
    assert same.recomputed == [] and same.added_cost == 0
    assert same.graph == graph and same.plan.peak == 600


def test_rematerialize_errors_name_the_argument():
    graph = training_chain()
    with pytest.raises(ValueError, match=r"smallest peak found is (\d+) byt"):
        memplan.rematerialize(graph, 50)
    try:
        memplan.rematerialize(graph, 50)
    except ValueError as error:
        smallest = int(re.search(r"found is (\d+)", str(error)).group(1))
    assert memplan.rematerialize(graph, smallest).plan.peak == smallest
    with pytest.raises(ValueError, match="the budget is 0 bytes"):
        memplan.rematerialize(graph, 0)
    with pytest.raises(ValueError, match="budget: "):
        memplan.rematerialize(graph, "lots")
    with pytest.raises(TypeError, match="budget must be an int"):
        memplan.rematerialize(graph, 1.5)
    with pytest.raises(TypeError, match="a problem has no ops"):
        memplan.rematerialize(memplan.build_problem(graph), 500)
    with pytest.raises(ValueError, match="unknown planner|no planner"):
        memplan.rematerialize(graph, 500, planner="nonesuch")


def test_planners_listed():
    names = memplan.planners()
    for name in ("naive", "greedy_by_size", "best", "exact", "cp"):
        assert name in names and names[name]
    assert memplan.default_planner() in names


def test_progress_hears_smaller_plans_and_leaves_the_plan_alone():
    problem, _ = memplan.read_buffer_csv(DATA / "minimalloc" / "A.1048576.csv")
    seen = []
    plan = memplan.plan(
        problem, progress=lambda peak, who: seen.append((peak, who))
    )
    memplan.verify(problem, plan)
    assert plan.to_csv() == memplan.plan(problem).to_csv()
    # The greedy placements' first plan, then the search's, each smaller.
    assert len(seen) >= 2
    assert all(b[0] < a[0] for a, b in zip(seen, seen[1:]))
    assert seen[-1][0] == plan.peak
    assert all(isinstance(who, str) and who for _, who in seen)

    def stop(peak, who):
        raise KeyError("stop")

    with pytest.raises(KeyError, match="stop"):
        memplan.plan(problem, progress=stop)
    with pytest.raises(TypeError, match="progress must be callable"):
        memplan.plan(problem, progress=3)


def test_progress_true_shows_one_line_ending_with_why_it_stopped(capsys):
    problem, _ = memplan.read_buffer_csv(DATA / "minimalloc" / "A.1048576.csv")
    plan = memplan.plan(problem, progress=True)
    memplan.verify(problem, plan)
    assert plan.to_csv() == memplan.plan(problem).to_csv()
    shown = capsys.readouterr().err
    assert "memplan plan" in shown
    assert (
        f"best peak {plan.peak:,} bytes = 1.0000x lower bound (best); "
        "stopped: proven optimal" in shown
    )
    memplan.plan(problem, "greedy_by_size", progress=False)
    assert capsys.readouterr().err == ""
    with pytest.raises(TypeError, match="progress must be callable, True"):
        memplan.plan(problem, progress="yes")


def test_progress_line_is_rate_limited():
    import io

    from memplan import _progress

    now = [0.0]
    out = io.StringIO()  # not a terminal: a line every 5 s
    display = _progress.Display(
        "plan", file=out, clock=lambda: now[0], bar=False
    )
    for step in range(100):  # a smaller plan every 0.1 s for 10 s
        now[0] = step * 0.1
        display.improved(1000 - step, "exact")
    display.close("time limit")
    lines = out.getvalue().splitlines()
    assert lines == [
        "memplan plan:    0.0 s  best peak 1,000 bytes (exact)",
        "memplan plan:    5.0 s  best peak 950 bytes (exact)",
        "memplan plan:    9.9 s  best peak 901 bytes (exact); stopped: "
        "time limit",
    ]


def test_planner_options_by_name():
    problem, _ = memplan.read_buffer_csv(DATA / "minimalloc" / "A.1048576.csv")
    # 200000 nodes' work: a node of A's 154 buffers costs 154 // 4 + 32.
    plan = memplan.plan(
        problem,
        "exact",
        work_limit=200000 * 70,
        options={
            "symmetry": False,
            "restarts": False,
            "start_share": 0.25,
            "failure_cache_entries": 4096,
        },
    )
    memplan.verify(problem, plan)
    assert plan.counters["nodes"] > 0
    assert plan.counters["nodes"] <= 200000
    assert plan.counters["restarts"] == 0
    assert set(plan.counters) == {"nodes", "parts", "restarts", "searches"}
    # The same values as text are the same options.
    again = memplan.plan(
        problem,
        "exact",
        work_limit=200000 * 70,
        options={
            "symmetry": "false",
            "restarts": "false",
            "start_share": "0.25",
            "failure_cache_entries": "4096",
        },
    )
    assert again.counters == plan.counters
    names = [o["name"] for o in memplan.planner_options("exact")]
    assert "symmetry" in names and "start_share" in names
    assert memplan.planner_options("naive") == []
    with pytest.raises(ValueError, match='no option "bogus"'):
        memplan.plan(problem, "exact", options={"bogus": 1})
    with pytest.raises(ValueError, match="failure_cache_entries=1.5"):
        memplan.plan(problem, "exact", options={"failure_cache_entries": 1.5})
    with pytest.raises(ValueError, match="symmetry=2"):
        memplan.plan(problem, "exact", options={"symmetry": 2})
    with pytest.raises(TypeError, match="symmetry"):
        memplan.plan(problem, "exact", options={"symmetry": None})
    with pytest.raises(ValueError, match="no_such_planner"):
        memplan.planner_options("no_such_planner")


def test_counters_of_shared_objects():
    plan = memplan.plan(small_graph(), "caffe2_greedy")
    assert plan.counters["shared_objects"] > 0
    assert memplan.plan(small_graph(), "greedy_by_size").counters == {}


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


def test_sizes_and_durations_as_the_tool_takes_them():
    graph = small_graph()
    by_text = memplan.plan(
        graph,
        "greedy_by_size",
        alignment="64",
        capacity="1MiB",
        time_limit="500ms",
    )
    by_int = memplan.plan(
        graph, "greedy_by_size", alignment=64, capacity=1 << 20
    )
    assert by_text.tensors == by_int.tensors
    pooled = memplan.plan(graph, pools=[("fast", "1K"), ("slow", "1G", "64")])
    assert [
        (p.name, p.capacity, p.alignment) for p in pooled.problem.pools
    ] == [
        ("fast", 1 << 10, 1),
        ("slow", 1 << 30, 64),
    ]  # K and G are binary
    by_int = memplan.plan(graph, pools=[("fast", 1024), ("slow", 1 << 30, 64)])
    assert pooled.tensors == by_int.tensors
    assert pooled.peak >= pooled.lower_bound
    memplan.verify(graph, pooled)
    for bad in (float("nan"), float("inf"), -1.0, "soon", "-2s"):
        with pytest.raises(ValueError, match="time_limit"):
            memplan.plan(graph, time_limit=bad)
    with pytest.raises(ValueError, match="capacity.*unknown unit"):
        memplan.plan(graph, capacity="1Q")
    with pytest.raises(TypeError, match="alignment must be an int"):
        memplan.plan(graph, alignment=64.0)


def test_a_wrong_argument_type_names_the_public_function():
    with pytest.raises(TypeError) as error:
        memplan.plan(small_graph(), seed="one")
    assert "memplan.plan" in str(error.value)
    assert "_plan" not in str(error.value).replace("memplan.plan", "")


def _small_symbolic(max_seq=16):
    """x (64) -> h (64*seq) -> y (64), with seq in [0, max_seq]: 0 is a
    value of the range."""
    return memplan.Graph(
        name="sym",
        tensors=[
            memplan.Tensor("x", 64, kind="input"),
            memplan.Tensor("h", "64*seq"),
            memplan.Tensor("y", 64, kind="output"),
        ],
        ops=[
            memplan.Op("a", ["x"], ["h"]),
            memplan.Op("b", ["h", "x"], ["y"]),
        ],
        dims={"seq": (0, max_seq)},
    )


def test_graph_takes_dims_as_a_constructor_argument():
    graph = _small_symbolic()
    assert graph.dims == {"seq": (0, 16)}
    assert memplan.is_symbolic(graph)
    with pytest.raises(TypeError, match="dims must be a dict"):
        memplan.Graph(name="g", dims=[("seq", 1, 2)])


def test_bad_plan_arguments_raise_errors_naming_them():
    graph = small_graph()
    with pytest.raises(ValueError, match=r"seed=-1 is out of range"):
        memplan.plan(graph, seed=-1)
    with pytest.raises(ValueError, match=r"threads=0 is out of range"):
        memplan.plan(graph, threads=0)
    with pytest.raises(TypeError, match="seed must be an int, not float"):
        memplan.plan(graph, seed=1.5)
    with pytest.raises(TypeError, match=r"pools='p': expected a list"):
        memplan.plan(graph, pools="p")
    with pytest.raises(TypeError, match=r"pools: 'sram' is a str"):
        memplan.plan(graph, pools=["sram"])
    with pytest.raises(ValueError, match=r"option name '\\ud800' is not"):
        memplan.plan(graph, "exact", options={"\ud800": 1})
    with pytest.raises(ValueError, match=r"value '\\udc00' is not valid"):
        memplan.plan(graph, "exact", options={"symmetry": "\udc00"})
    with pytest.raises(ValueError, match=r'did you mean "symmetry"'):
        memplan.plan(graph, "exact", options={"symetry": False})
    with pytest.raises(ValueError, match=r'did you mean "greedy_by_size"'):
        memplan.plan(graph, "gredy")
    plan = memplan.plan(graph, seed=2**64 - 1, threads=2)  # the extremes
    memplan.verify(graph, plan)


def test_a_non_finite_number_in_a_graph_dict_is_named():
    data = small_graph().to_dict()
    data["tensors"][2]["size"] = float("nan")
    with pytest.raises(ValueError) as error:
        memplan.plan(data)
    message = str(error.value)
    assert "graph['tensors'][2]['size'] = nan" in message
    assert "malformed JSON" not in message
    data["tensors"][2]["size"] = object()
    with pytest.raises(ValueError, match=r"graph\['tensors'\]\[2\]\['size'\]"):
        memplan.plan(data)
    data["tensors"][2]["size"] = 4000
    data["ops"].append(data["ops"])  # a list that holds itself
    with pytest.raises(ValueError, match="graph dict: Circular reference"):
        memplan.plan(data)
    del data["format"]
    with pytest.raises(ValueError, match='"format": "memplan-graph-v1"'):
        memplan.plan(data)


def test_a_capacity_below_the_lower_bound_names_the_bound():
    graph = small_graph()
    bound = memplan.plan(graph).lower_bound
    with pytest.raises(memplan.CapacityError) as error:
        memplan.plan(graph, capacity=bound - 1)
    assert (
        "the smallest capacity that could work is the lower bound, "
        f"{bound} bytes (1 more)" in str(error.value)
    )
    plan = memplan.plan(graph, capacity=bound)
    memplan.verify(graph, plan)


def test_a_cycle_in_a_graph_is_named_as_one():
    graph = memplan.Graph(
        name="loop",
        tensors=[
            memplan.Tensor("x", 4, kind="input"),
            memplan.Tensor("a", 4),
            memplan.Tensor("b", 4, kind="output"),
        ],
        ops=[
            memplan.Op("f", ["x", "b"], ["a"]),
            memplan.Op("g", ["a"], ["b"]),
        ],
    )
    with pytest.raises(ValueError, match='ops "f" -> "g" -> "f" form a cycle'):
        memplan.plan(graph)


def test_symbolic_plan_values_and_bounds():
    graph = _small_symbolic()
    symbolic = memplan.plan_symbolic(graph, planner="symbolic_greedy")
    with pytest.raises(memplan.DimError, match=r"2\*\*70|out of range"):
        symbolic.at(seq=2**70)
    with pytest.raises(ValueError, match=r"dim name '\\ud800' is not valid"):
        symbolic.at(**{"\ud800": 1})
    # 0 is in the declared range: the plan there is made and verified.
    at_zero = symbolic.at(seq=0)
    memplan.verify(memplan.bind_dims(graph, seq=0), at_zero)
    for n in (0, 5, 16):
        at = symbolic.at(seq=n)
        assert symbolic.lower_bound_at(seq=n) == at.lower_bound
        assert symbolic.lower_bound_at(seq=n) <= symbolic.lower_bound(seq=n)
        assert (
            at.lower_bound
            == memplan.plan(memplan.bind_dims(graph, seq=n)).lower_bound
        )
    with pytest.raises(ValueError, match=r"dims\['seq'\] = 2\*\*70|out of"):
        memplan.read_graph(
            DATA / "symbolic" / "llama_decoder.json", dims={"seq": 2**70}
        )
    with pytest.raises(TypeError, match=r"dims\['seq'\] = 1.5: expected"):
        memplan.read_graph(
            DATA / "symbolic" / "llama_decoder.json", dims={"seq": 1.5}
        )
    assert "<table>" in symbolic._repr_html_()
    assert "seq in [0, 16]" in symbolic._repr_html_()


def test_plan_records_table_and_html():
    graph = small_graph()
    plan = memplan.plan(graph, "greedy_by_size", alignment=64)
    records = plan.to_records()
    assert [r["name"] for r in records] == [t.name for t in graph.tensors]
    by_name = {r["name"]: r for r in records}
    assert by_name["b"]["offset"] == plan.offset("b")
    assert by_name["b"]["end"] == plan.offset("b") + 2000
    assert by_name["b"]["pool"] == "default"
    assert by_name["w"]["planned"] is False and by_name["w"]["offset"] is None
    assert by_name["a"]["start_step"] == 0
    html = plan._repr_html_()
    assert "greedy_by_size" in html and f"{plan.peak:,}" in html
    assert "<td>a</td>" in html
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install pandas"):
            plan.to_pandas()
        return
    frame = plan.to_pandas()
    assert list(frame["name"]) == [t.name for t in graph.tensors]
    assert int(frame.set_index("name").loc["b", "offset"]) == plan.offset("b")


def test_compare_plans_with_each_planner_and_shows_a_table():
    graph = small_graph()
    naive = memplan.plan(graph, "naive")
    best = memplan.plan(graph, "greedy_by_size")
    assert best.peak < naive.peak
    comparison = memplan.compare(
        graph, ["naive", "greedy_by_size", "exact"], capacity=best.peak
    )
    for plan in comparison.plans.values():
        memplan.verify(graph, plan)
    rows = comparison.to_records()
    assert [r["planner"] for r in rows] == ["naive", "greedy_by_size", "exact"]
    assert rows[0]["peak"] is None and "fits in no" in rows[0]["error"]
    assert rows[1]["peak"] == best.peak and rows[1]["error"] is None
    assert rows[2]["ratio"] == rows[2]["peak"] / rows[2]["lower_bound"]
    html = comparison._repr_html_()
    assert "<td>greedy_by_size</td>" in html and f"{best.peak:,}" in html
    assert "<html" in comparison.report_html().lower()
    with pytest.raises(TypeError, match=r"planners='exact' must be a list"):
        memplan.compare(graph, "exact")
    everyone = memplan.compare(graph, work_limit=10**6)
    assert [r["planner"] for r in everyone.rows] == list(memplan.planners())


def test_to_pandas_without_pandas_says_how_to_install(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    plan = memplan.plan(small_graph())
    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match="pip install pandas"):
        plan.to_pandas()


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
        b["offset"] for b in plan.buffers
    ]
    assert csv_plan.peak == plan.peak
    csv_plan.verify()
    memplan.write_buffer_csv(problem, tmp_path / "q.csv")
    again, none = memplan.read_buffer_csv(tmp_path / "q.csv")
    assert none is None and len(again.buffers) == len(problem.buffers)
    with pytest.raises(FileNotFoundError):
        memplan.read_graph(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text(
        '{"format": "memplan-graph-v1", "tensors": 3}'
    )
    with pytest.raises(ValueError):
        memplan.read_graph(tmp_path / "bad.json")


SYMBOLIC_GRAPH = """{"format": "memplan-graph-v1", "name": "attn",
 "dims": {"seq": {"min": 1, "max": 2048}},
 "tensors": [{"name": "x", "size": "512*seq", "kind": "input"},
             {"name": "scores", "size": "32*seq*seq + 64"},
             {"name": "out", "size": 4096, "kind": "output"}],
 "ops": [{"name": "attend", "inputs": ["x"], "outputs": ["scores"]},
         {"name": "reduce", "inputs": ["scores"], "outputs": ["out"]}]}"""


def test_read_graph_binds_symbolic_dims(tmp_path):
    path = tmp_path / "attn.json"
    path.write_text(SYMBOLIC_GRAPH)
    graph = memplan.read_graph(path, dims={"seq": 3})
    sizes = {t.name: t.size for t in graph.tensors}
    assert sizes == {"x": 1536, "scores": 352, "out": 4096}
    plan = memplan.plan(graph, "greedy_by_size")
    memplan.verify(graph, plan)
    assert plan.lower_bound == 352 + 4096  # step 1: scores and out
    with pytest.raises(
        ValueError,
        match=r'dim "seq" is bound to 4096, ' r"outside its range \[1, 2048\]",
    ):
        memplan.read_graph(path, dims={"seq": 4096})
    with pytest.raises(
        ValueError,
        match='dim "len" is bound to 2 but the ' "graph declares no such dim",
    ):
        memplan.read_graph(path, dims={"len": 2})
    unbound = memplan.read_graph(path)
    with pytest.raises(ValueError, match="has symbolic dims seq: bind them"):
        memplan.plan(unbound, "greedy_by_size")


def test_read_graph_narrows_symbolic_dims(tmp_path):
    path = tmp_path / "attn.json"
    path.write_text(SYMBOLIC_GRAPH)
    narrowed = memplan.read_graph(path, dims={"seq": (1, 16)})
    with pytest.raises(ValueError, match="has symbolic dims seq: bind them"):
        memplan.plan(narrowed, "greedy_by_size")
    memplan.write_graph(narrowed, tmp_path / "narrowed.json")
    assert json.loads((tmp_path / "narrowed.json").read_text())["dims"] == {
        "seq": {"min": 1, "max": 16}
    }
    with pytest.raises(ValueError, match=r"outside its range \[1, 16\]"):
        memplan.read_graph(tmp_path / "narrowed.json", dims={"seq": 17})
    with pytest.raises(
        ValueError,
        match=r"range \[1, 4096\], which is not "
        r"inside its declared range \[1, 2048\]",
    ):
        memplan.read_graph(path, dims={"seq": (1, 4096)})
    with pytest.raises(ValueError, match="min 9 is larger than its max 2"):
        memplan.read_graph(path, dims={"seq": (9, 2)})
    with pytest.raises(TypeError, match="a value or a .min, max. pair"):
        memplan.read_graph(path, dims={"seq": (1, 2, 3)})
    with pytest.raises(
        ValueError,
        match='"len" is given a range, but the ' "graph declares no such dim",
    ):
        memplan.read_graph(path, dims={"len": (1, 2)})


def test_hostile_files_are_errors_naming_them(tmp_path):
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(ValueError, match="dir.json.*is a directory"):
        memplan.read_graph(tmp_path / "dir.json")
    (tmp_path / "text.json").write_text("hello")
    with pytest.raises(
        ValueError,
        match=r"text.json: malformed JSON at line 1, "
        r"column 1: syntax error",
    ) as info:
        memplan.read_graph(tmp_path / "text.json")
    assert "json.exception" not in str(info.value)
    path = tmp_path / "g.json"
    memplan.write_graph(memplan.read_graph(MODEL), path)
    with pytest.raises(memplan.Error, match="g.json.*more than 100 bytes"):
        memplan.read_graph(path, max_input_size=100)
    with pytest.raises(memplan.Error, match="more than 10 bytes"):
        memplan.read_buffer_csv(
            DATA / "minimalloc" / "input.12.csv", max_input_size=10
        )
    assert memplan.DEFAULT_MAX_INPUT_SIZE == 2 << 30
    assert memplan.MAX_NAME_BYTES == 64 << 10


def test_problem_from_csv_is_planned():
    problem, _ = memplan.read_buffer_csv(DATA / "minimalloc" / "input.12.csv")
    plan = memplan.plan(problem, "greedy_by_size")
    assert plan.lower_bound == problem.lower_bound
    assert len(plan.buffers) == len(problem.buffers)
    memplan.verify(problem, plan)


def tool(*args, check=True):
    assert TOOL, "MEMPLAN_TOOL names the built memplan tool"
    return subprocess.run(
        [TOOL, *map(str, args)], check=check, capture_output=True
    )


MODEL = DATA / "models" / "mobilenet_v3_small.json"


def unzipped(path):
    data = path.read_bytes()
    return gzip.decompress(data) if path.name.endswith(".gz") else data


@pytest.mark.parametrize("planner", ["greedy_by_size", "best", "exact"])
def test_same_plans_as_the_tool(tmp_path, planner):
    # The deterministic default (no time limit): the same plan, byte for
    # byte, as `memplan plan`, provenance included.
    graph = memplan.read_graph(MODEL)
    plan = memplan.plan(graph, planner, alignment=64)
    assert plan.planner == planner
    tool(
        "plan",
        MODEL,
        f"--planner={planner}",
        "--alignment=64",
        f"--out={tmp_path / 'tool.json'}",
    )
    memplan.write_plan(plan, tmp_path / "py.json", input=MODEL)
    assert (tmp_path / "py.json").read_bytes() == (
        tmp_path / "tool.json"
    ).read_bytes()
    # The tool checks the plan from what it records, without flags.
    assert b"valid" in tool("verify", tmp_path / "py.json").stdout


def test_every_output_format_as_the_tool(tmp_path):
    graph = memplan.read_graph(MODEL)
    plan = memplan.plan(graph, "greedy_by_size", alignment=64)
    for out, flags in [
        ("p.json.gz", []),
        ("p.csv", []),
        ("p.csv.gz", []),
        ("p.h", []),
        ("p.bin", ["--format=tflm-offline"]),
    ]:
        tool(
            "plan",
            MODEL,
            "--planner=greedy_by_size",
            "--alignment=64",
            f"--out={tmp_path / ('tool_' + out)}",
            *flags,
        )
        memplan.write_plan(
            plan,
            tmp_path / out,
            input=MODEL,
            format="tflm-offline" if flags else None,
        )
        assert unzipped(tmp_path / out) == unzipped(
            tmp_path / ("tool_" + out)
        ), out
    header = (tmp_path / "p.h").read_text()
    assert "#define MEMPLAN_ARENA_SIZE " + str(plan.peak) in header
    memplan.write_plan(plan, tmp_path / "q.h", prefix="NET")
    named = (tmp_path / "q.h").read_text()
    assert "MOBILENET_V3_SMALL_PLAN_H_" in named
    assert "#define NET_ARENA_SIZE " + str(plan.peak) in named
    offsets = plan.tflm_offline()
    assert offsets[:3] == [0, 0, len(graph.tensors)]
    assert offsets[3:] == [
        -1 if p.offset is None else p.offset for p in plan.placements
    ]
    assert (tmp_path / "p.bin").read_bytes() == plan.tflm_offline_bytes()
    with pytest.raises(ValueError, match="unknown"):
        memplan.write_plan(plan, tmp_path / "p.txt")
    with pytest.raises(ValueError, match="several pools|one arena"):
        memplan.plan(
            graph,
            "greedy_by_size",
            pools=[("fast", 600000, 64), ("slow", 0, 64)],
        ).tflm_offline()


def test_plan_files_read_back(tmp_path):
    graph = memplan.read_graph(REORDERED)
    plan = memplan.plan(graph, "best", alignment=64, reorder="longest_path")
    for name in ("p.json", "p.json.gz", "p.csv", "p.csv.gz"):
        memplan.write_plan(plan, tmp_path / name, input=REORDERED)
    # JSON records how it was built: no options needed to read it back.
    for name in ("p.json", "p.json.gz"):
        back = memplan.read_plan(tmp_path / name, graph)
        assert back.tensors == plan.tensors and back.peak == plan.peak
        assert back.op_order == plan.op_order
        memplan.verify(graph, back)
    # A CSV records offsets only: the options come from the caller.
    for name in ("p.csv", "p.csv.gz"):
        back = memplan.read_plan(
            tmp_path / name, graph, alignment=64, reorder="longest_path"
        )
        assert back.tensors == plan.tensors
        memplan.verify(graph, back)
    # A plan of other buffers names the first it lacks.
    problem, _ = memplan.read_buffer_csv(DATA / "minimalloc" / "input.12.csv")
    memplan.write_plan(memplan.plan(problem, "naive"), tmp_path / "o.csv")
    with pytest.raises(ValueError, match="o.csv"):
        memplan.read_plan(tmp_path / "o.csv", graph, alignment=64)


def test_reports_as_the_tool(tmp_path):
    graph = memplan.read_graph(MODEL)
    plan = memplan.plan(graph, "greedy_by_size", alignment=64)
    memplan.write_plan(plan, tmp_path / "p.json", input=MODEL)
    back = memplan.read_plan(tmp_path / "p.json", graph)
    text = tool(
        "report", MODEL, tmp_path / "p.json", "--alignment=64"
    ).stdout.decode()
    assert back.report_text() == text
    assert f"peak: {plan.peak} bytes" in text
    tool(
        "report",
        MODEL,
        tmp_path / "p.json",
        "--alignment=64",
        f"--html={tmp_path / 'tool.html'}",
    )
    page = memplan.report_html([back], title=MODEL.name)
    assert page == (tmp_path / "tool.html").read_text()
    assert back.report_html(MODEL.name) == page
    assert page.startswith("<!DOCTYPE html>") and "greedy_by_size" in page
    # Several plans side by side, and a planner without a plan.
    both = memplan.report_html(
        [plan, memplan.plan(graph, "naive", alignment=64)],
        title="two",
        failures=[("exact", "out of capacity")],
    )
    assert '"naive"' in both and "out of capacity" in both
    with pytest.raises(ValueError, match="same buffers"):
        memplan.report_html([plan, memplan.plan(small_graph())])

    def widest(text):
        return max(map(len, text.splitlines()))

    assert widest(plan.report_text(width=80)) < widest(text) <= 100


# inception_v3's branches run in another order under longest_path.
REORDERED = DATA / "models" / "inception_v3.json"


@pytest.mark.parametrize(
    "path,reorder", [(MODEL, None), (REORDERED, "longest_path")]
)
def test_results_by_tensor_name_as_graph_plan(tmp_path, path, reorder):
    # One TensorPlacement per tensor of the graph, in its order, as
    # GraphPlan gives them (the tool's plan file lists the same), and the
    # op order planned.
    graph = memplan.read_graph(path)
    plan = memplan.plan(graph, "greedy_by_size", alignment=64, reorder=reorder)
    flags = [f"--reorder={reorder}"] if reorder else []
    tool(
        "plan",
        path,
        "--planner=greedy_by_size",
        "--alignment=64",
        f"--out={tmp_path / 'p.json'}",
        f"--graph-out={tmp_path / 'g.json'}",
        *flags,
    )
    listed = json.loads((tmp_path / "p.json").read_text())["tensors"]
    assert (
        [p.name for p in plan.placements]
        == [t.name for t in graph.tensors]
        == [t["name"] for t in listed]
    )
    for p, t in zip(plan.placements, listed):
        assert p.planned == t.get("planned", True)
        assert (p.pool, p.offset) == (
            (t["pool"], t["offset"]) if p.planned else (None, None)
        )
        assert p == plan.find(p.name)
    planned_ops = [
        op.name for op in memplan.read_graph(tmp_path / "g.json").ops
    ]
    assert [graph.ops[i].name for i in plan.op_order] == planned_ops
    assert [op.name for op in plan.graph.ops] == planned_ops
    assert sorted(plan.op_order) == list(range(len(graph.ops)))
    assert (plan.op_order != list(range(len(graph.ops)))) == bool(reorder)
    memplan.verify(graph, plan)
    weight = next(t for t in graph.tensors if t.kind == "constant")
    p = plan.find(weight.name)
    assert not p.planned and p.buffer is None and p.kind == "constant"
    assert p.size == weight.size
    x = next(p for p in plan.placements if p.kind == "input")
    assert x.planned
    assert plan.buffers[x.buffer]["offset"] == x.offset == plan.offset(x.name)
    assert plan.find("no such tensor") is None


def test_placed_keeps_the_plan_of_the_smallest_placed_peak():
    # reorder="placed" plans the graph's own order and those of memory,
    # window and optimal, and keeps the smallest peak; verify() recomputes
    # the order chosen.
    graph = memplan.read_graph(DATA / "training" / "resnet18_train.json")
    placed = memplan.plan(graph, "greedy_by_size", reorder="placed")
    memplan.verify(graph, placed)
    assert sorted(placed.op_order) == list(range(len(graph.ops)))
    peaks = {}
    for name in [None, "memory", "window", "optimal"]:
        one = memplan.plan(graph, "greedy_by_size", reorder=name)
        memplan.verify(graph, one)
        peaks[name] = one.peak
        assert placed.peak <= one.peak
    assert placed.peak == min(peaks.values())
    assert placed.peak < peaks[None]  # an order other than the traced wins
    with pytest.raises(ValueError, match="no ops to reorder"):
        memplan.plan(memplan.build_problem(graph), reorder="placed")


def test_results_by_tensor_name_of_a_problem():
    # A problem has no graph: its buffers' tensors, each planned.
    problem, _ = memplan.read_buffer_csv(DATA / "minimalloc" / "input.12.csv")
    csv_plan = memplan.plan(problem, "greedy_by_size")
    assert csv_plan.graph is None and csv_plan.op_order == []
    assert [p.name for p in csv_plan.placements] == [
        b.name for b in problem.buffers
    ]
    assert all(p.planned for p in csv_plan.placements)
    with pytest.raises(ValueError, match="ordering"):
        memplan.plan(problem, reorder="memory")
    with pytest.raises(ValueError, match="no_such_order"):
        memplan.plan(small_graph(), reorder="no_such_order")


def test_work_limit():
    problem, _ = memplan.read_buffer_csv(DATA / "minimalloc" / "C.1048576.csv")
    small = memplan.plan(problem, "best", work_limit=1000)
    again = memplan.plan(problem, "best", work_limit=1000)
    assert small.buffers == again.buffers  # counted, not timed
    large = memplan.plan(problem, "best", work_limit=40_000_000)
    assert large.peak <= small.peak
    assert large.lower_bound <= large.peak
    with pytest.raises(ValueError, match="work_limit"):
        memplan.plan(problem, "best", work_limit=-1)


ONNX = DATA / "onnx" / "resnet18_opset13.onnx"


def test_onnx_as_the_tool(tmp_path):
    run = tool(
        "plan",
        ONNX,
        "--planner=greedy_by_size",
        "--alignment=64",
        f"--out={tmp_path / 'tool.json'}",
        f"--graph-out={tmp_path / 'g.json'}",
        check=False,
    )
    # The module reads ONNX exactly when the tool of its build does.
    assert memplan.HAVE_ONNX == (run.returncode == 0), run.stderr
    if not memplan.HAVE_ONNX:
        with pytest.raises(memplan.Error, match="without ONNX support"):
            memplan.read_onnx(ONNX)
        with pytest.raises(memplan.Error, match="without ONNX support"):
            memplan.read_graph(ONNX)
        return
    graph = memplan.read_graph(ONNX)
    assert (
        graph
        == memplan.read_onnx(ONNX)
        == memplan.read_graph(tmp_path / "g.json")
    )
    assert graph == memplan.read_onnx(ONNX.read_bytes())
    plan = memplan.plan(graph, "greedy_by_size", alignment=64)
    memplan.write_plan(plan, tmp_path / "py.json", input=ONNX)
    assert (tmp_path / "py.json").read_bytes() == (
        tmp_path / "tool.json"
    ).read_bytes()
    # The importer's options, as the tool's flags.
    tool(
        "plan",
        ONNX,
        "--onnx-views=copy",
        f"--out={tmp_path / 'c.json'}",
        f"--graph-out={tmp_path / 'c_g.json'}",
    )
    copy = memplan.read_onnx(ONNX, views="copy")
    assert copy == memplan.read_graph(tmp_path / "c_g.json")
    assert (
        sum(len(op.alias) for op in copy.ops)
        == 0
        < sum(len(op.alias) for op in graph.ops)
    )
    with pytest.raises(FileNotFoundError):
        memplan.read_onnx(tmp_path / "missing.onnx")
    with pytest.raises(ValueError, match="model|parse|ONNX"):
        memplan.read_onnx(b"not a model")
    with pytest.raises(ValueError, match="views"):
        memplan.read_onnx(ONNX, views="maybe")


TRANSFORMER = DATA / "onnx" / "transformer_encoder_opset17.onnx"


def test_onnx_dim_ranges(tmp_path):
    if not memplan.HAVE_ONNX:
        with pytest.raises(memplan.Error, match="without ONNX support"):
            memplan.read_onnx(TRANSFORMER, dims={"sequence": (1, 2048)})
        return
    graph = memplan.read_onnx(
        TRANSFORMER, dims={"batch": 1, "sequence": (1, 2048)}
    )
    assert graph.dims == {"sequence": (1, 2048)}
    with pytest.raises(
        memplan.DimError,
        match="has symbolic dims sequence: " "bind them with memplan.bind_dims",
    ):
        memplan.plan(graph, "greedy_by_size")
    # One plan for every sequence length, proven over the range.
    symbolic = memplan.plan_symbolic(graph, alignment=64)
    symbolic.verify()
    for n in (1, 7, 2048):
        memplan.verify(
            memplan.bind_dims(graph, sequence=n), symbolic.at(sequence=n)
        )
    # The symbolic graph, written and read back bound, is the model's
    # import at that value.
    memplan.write_graph(graph, tmp_path / "symbolic.json")
    written = json.loads((tmp_path / "symbolic.json").read_text())
    assert written["dims"] == {"sequence": {"min": 1, "max": 2048}}
    assert written["tensors"][0]["size"] == "256*sequence"
    for sequence in (1, 7, 2048):
        bound = memplan.read_graph(
            tmp_path / "symbolic.json", dims={"sequence": sequence}
        )
        imported = memplan.read_onnx(
            TRANSFORMER, dims={"batch": 1, "sequence": sequence}
        )
        assert [(t.name, t.size) for t in bound.tensors] == [
            (t.name, t.size) for t in imported.tensors
        ]
        assert bound.ops == imported.ops
        plan = memplan.plan(bound, "greedy_by_size")
        memplan.verify(bound, plan)
    with pytest.raises(
        ValueError,
        match='"sequence" has range \\[0, 8\\]; '
        "an ONNX dimension must be >= 1",
    ):
        memplan.read_onnx(TRANSFORMER, dims={"batch": 1, "sequence": (0, 8)})
    with pytest.raises(ValueError, match="min 9 is larger than its max 2"):
        memplan.read_onnx(TRANSFORMER, dims={"batch": 1, "sequence": (9, 2)})


def sram_graph(path, x_alignment=None):
    """x -> y -> z, 256 bytes each, in the declared pool "sram" of 1024
    bytes, written to `path`."""
    x = {"name": "x", "size": 256, "kind": "input"}
    if x_alignment:
        x["alignment"] = x_alignment
    path.write_text(
        json.dumps(
            {
                "format": "memplan-graph-v1",
                "name": "g",
                "pools": [{"name": "sram", "capacity": 1024}],
                "tensors": [
                    x,
                    {"name": "y", "size": 256},
                    {"name": "z", "size": 256, "kind": "output"},
                ],
                "ops": [
                    {
                        "name": "a",
                        "type": "A",
                        "inputs": ["x"],
                        "outputs": ["y"],
                    },
                    {
                        "name": "b",
                        "type": "B",
                        "inputs": ["y"],
                        "outputs": ["z"],
                    },
                ],
            }
        )
    )
    return memplan.read_graph(path)


def hand_plan(tmp_path, graph_path, build, buffers):
    """A plan file of `graph_path` (its hash as the tool records it) with
    the build `build` and the buffers `buffers`."""
    graph = memplan.read_graph(graph_path)
    memplan.write_plan(
        memplan.plan(graph, "naive"), tmp_path / "t.json", input=graph_path
    )
    data = json.loads((tmp_path / "t.json").read_text())
    data["build"] = build
    data["buffers"] = buffers
    data.pop("tensors")
    for claim in ("pools", "peak", "naive_total", "lower_bound"):
        data.pop(claim)
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(data))
    return path


def test_read_plan_checks_the_input_hash_as_the_tool(tmp_path):
    g = tmp_path / "g.json"
    graph = sram_graph(g)
    memplan.write_plan(
        memplan.plan(graph, "best"), tmp_path / "p.json", input=g
    )
    for given in (g, str(g)):
        back = memplan.read_plan(tmp_path / "p.json", input=given)
        memplan.verify(back.graph, back)
        assert back.notes == []
    recorded = json.loads((tmp_path / "p.json").read_text())["input"]["hash"]
    g.write_text(g.read_text() + "\n")  # the same graph, other contents
    with pytest.raises(ValueError, match="is a plan of another input") as e:
        memplan.read_plan(tmp_path / "p.json", input=g)
    assert recorded in str(e.value)
    assert "fnv1a64:" in str(e.value).replace(recorded, "")


def test_read_plan_keeps_the_capacity_the_graph_declares(tmp_path):
    g = tmp_path / "g.json"
    graph = sram_graph(g)
    plan = hand_plan(
        tmp_path,
        g,
        {"pools": [{"name": "sram", "capacity": 0, "alignment": 1}]},
        [
            {"name": "x", "pool": "sram", "offset": 0},
            {"name": "y", "pool": "sram", "offset": 5000},
            {"name": "z", "pool": "sram", "offset": 0},
        ],
    )
    for given in (graph, g):
        with pytest.raises(
            ValueError,
            match='plan records pool "sram" with '
            "capacity 0; the graph declares capacity 1024",
        ):
            memplan.read_plan(plan, input=given)


def test_read_plan_names_inputs_left_to_the_caller(tmp_path):
    g = tmp_path / "g.json"
    graph = sram_graph(g)
    plan = hand_plan(
        tmp_path,
        g,
        {"plan_inputs": False},
        [{"name": "y", "offset": 0}, {"name": "z", "offset": 256}],
    )
    for given in (graph, g):
        back = memplan.read_plan(plan, input=given)
        assert back.notes == [
            "graph inputs left to the caller, as the plan records"
        ]
        memplan.verify(graph, back)
    # Asked for a full plan, it is none.
    with pytest.raises(ValueError, match="places 2 buffers"):
        memplan.read_plan(plan, graph, plan_inputs=True)


def test_read_plan_keeps_a_tensors_own_alignment(tmp_path):
    g = tmp_path / "g.json"
    graph = sram_graph(g, x_alignment=64)
    low = hand_plan(
        tmp_path,
        g,
        {"alignment": 1},
        [
            {"name": "x", "offset": 32},
            {"name": "y", "offset": 512},
            {"name": "z", "offset": 0},
        ],
    )
    with pytest.raises(ValueError, match='"x"'):
        memplan.verify(graph, memplan.read_plan(low, graph))
    high = hand_plan(
        tmp_path,
        g,
        {"alignment": 128},
        [
            {"name": "x", "offset": 0},
            {"name": "y", "offset": 256},
            {"name": "z", "offset": 0},
        ],
    )
    back = memplan.read_plan(high, graph)
    assert back.notes == [
        "buffers aligned to 128, as the plan records "
        '(tensor "x" declares 64)'
    ]
    memplan.verify(graph, back)


def test_module_and_tool_report_the_project_version():
    cmake = (
        pathlib.Path(__file__).resolve().parents[2] / "CMakeLists.txt"
    ).read_text()
    version = re.search(r"project\(memplan VERSION ([0-9.]+)", cmake).group(1)
    assert memplan.__version__ == version
    assert tool("--version").stdout.decode() == f"memplan {version}\n"


def _interleaved_chains():
    """Two chains x -> a1 (1000 bytes) -> a2 and x -> b1 (1000) -> b2,
    joined into y, in the order a compiler interleaved them: fa1, fb1, fa2,
    fb2, join. That order holds both 1000-byte tensors at once."""

    def t(name, size, kind="activation"):
        return {"name": name, "size": size, "kind": kind}

    def op(name, inputs, outputs):
        return {"name": name, "type": "F", "inputs": inputs, "outputs": outputs}

    return {
        "format": "memplan-graph-v1",
        "tensors": [
            t("x", 10, "input"),
            t("a1", 1000),
            t("b1", 1000),
            t("a2", 1),
            t("b2", 1),
            t("y", 1, "output"),
        ],
        "ops": [
            op("fa1", ["x"], ["a1"]),
            op("fb1", ["x"], ["b1"]),
            op("fa2", ["a1"], ["a2"]),
            op("fb2", ["b1"], ["b2"]),
            op("join", ["a2", "b2"], ["y"]),
        ],
    }


def test_lower_bound_over_orders():
    # Two chains the compiler interleaved: its order holds both 1000-byte
    # tensors at once; no order needs less than x, one of them and a byte
    # (the best order's peak, found by the pair fa1, fb1).
    graph = _interleaved_chains()
    assert memplan.plan(graph, "naive").lower_bound == 2010
    assert memplan.lower_bound_over_orders(graph) == (1011, "fa1")
    # Aligned to 64, every order holds a1 and a2 at fa2 with x (fb1 not run
    # yet) or b2 (fb1 and fb2 run): the best order's peak.
    assert memplan.lower_bound_over_orders(graph, alignment=64) == (1152, "fa2")
    assert (
        memplan.plan(graph, "best", reorder="optimal", alignment=64).lower_bound
        == 1152
    )
    reordered = memplan.plan(graph, "best", reorder="memory")
    assert reordered.lower_bound >= 1010
    assert memplan.lower_bound_over_orders(graph, work_limit=1) is None
    with pytest.raises(TypeError, match="needs a graph"):
        memplan.lower_bound_over_orders(memplan.build_problem(graph))


def test_optimal_op_order():
    # The two interleaved chains: one chain after the other holds x, a1 and
    # a2 at fa2 (1011 bytes), proven by the bound over op orders without a
    # search; the order is by name.
    graph = _interleaved_chains()
    result = memplan.optimal_op_order(graph)
    assert isinstance(result, memplan.OptimalOrder)
    assert result.peak == 1011 and result.bound == 1011 and result.proven
    assert 0 < result.work < 1000  # the bound's work alone
    assert sorted(result.order) == ["fa1", "fa2", "fb1", "fb2", "join"]
    assert result.order.index("fa2") < result.order.index(
        "fb1"
    ) or result.order.index("fb2") < result.order.index("fa1")
    # The plan of reorder="optimal" runs the same order to the same bound.
    planned = memplan.plan(graph, "best", reorder="optimal")
    assert planned.lower_bound == 1011
    assert planned.reorder == "optimal"
    # "placed" says which ordering it chose: not the graph's own, which
    # holds both chains at once.
    placed = memplan.plan(graph, "best", reorder="placed")
    assert placed.reorder in ("memory", "window", "optimal")
    assert placed.lower_bound == 1011 and placed.peak == 1011
    memplan.verify(graph, placed)
    assert memplan.plan(graph, "best").reorder == ""
    # Alignment counts as the planner counts it; no work, no search.
    aligned = memplan.optimal_op_order(graph, alignment=64)
    assert aligned.peak == 64 + 1024 + 64 and aligned.proven
    # With little work the bound over op orders still proves the order the
    # search would start from.
    little = memplan.optimal_op_order(graph, work_limit=1000)
    assert little.work <= 1000 and little.peak == 1011 and little.proven
    assert little.bound == 1011
    with pytest.raises(TypeError, match="needs a graph"):
        memplan.optimal_op_order(memplan.build_problem(graph))
    with pytest.raises(ValueError, match="work_limit"):
        memplan.optimal_op_order(graph, work_limit=-1)


def test_pinned_ops_keep_their_order():
    # The same interleaved chains: the orderings run fb1 after fa2, to free
    # a1 before b1 is made, unless fa1, fb1 and fa2 are pinned (side
    # effects), which keeps them in the graph's order: a1 and b1 at once.
    def t(name, size, kind="activation"):
        return memplan.Tensor(name, size, kind=kind)

    graph = memplan.Graph(
        tensors=[
            t("x", 10, "input"),
            t("a1", 1000),
            t("b1", 1000),
            t("a2", 1),
            t("b2", 1),
            t("y", 1, "output"),
        ],
        ops=[
            memplan.Op("fa1", ["x"], ["a1"], pinned=True),
            memplan.Op("fb1", ["x"], ["b1"], pinned=True),
            memplan.Op("fa2", ["a1"], ["a2"], pinned=True),
            memplan.Op("fb2", ["b1"], ["b2"]),
            memplan.Op("join", ["a2", "b2"], ["y"]),
        ],
    )
    assert [o.pinned for o in graph.ops] == [True, True, True, False, False]
    data = memplan.graph_to_dict(graph)
    assert [o.get("pinned", False) for o in data["ops"]] == [
        True,
        True,
        True,
        False,
        False,
    ]
    assert memplan.graph_from_dict(data) == graph
    free = memplan.graph_from_dict(data)
    for o in free.ops:
        o.pinned = False
    for ordering in ("memory", "optimal"):
        unpinned = memplan.plan(free, "naive", reorder=ordering)
        assert unpinned.op_order.index(2) < unpinned.op_order.index(1)
        assert unpinned.lower_bound == 1011
        pinned = memplan.plan(graph, "naive", reorder=ordering)
        assert (
            pinned.op_order.index(0)
            < pinned.op_order.index(1)
            < pinned.op_order.index(2)
        )
        assert pinned.lower_bound == 2010
    assert memplan.lower_bound_over_orders(graph)[0] == 2010
    with pytest.raises(ValueError, match='op "fb1".*"pinned"'):
        data["ops"][1]["pinned"] = 1
        memplan.graph_from_dict(data)


def test_an_order_cut_by_a_limit_verifies(tmp_path):
    # A work limit cuts the optimal search short: its order is not the one
    # "optimal" gives by default, and verify() checks the plan in the order
    # it records, as does the tool with the plan file.
    path = DATA / "order" / "darts_seed1.json"
    graph = memplan.read_graph(path)
    plan = memplan.plan(
        graph, "greedy_by_size", reorder="optimal", work_limit=20000
    )
    default = memplan.plan(graph, "greedy_by_size", reorder="optimal")
    assert plan.op_order != default.op_order
    memplan.verify(graph, plan)
    out = tmp_path / "cut.json"
    memplan.write_plan(plan, out, input=path)
    recorded = json.loads(out.read_text())["build"]["op_order"]
    assert recorded == [graph.ops[i].name for i in plan.op_order]
    if TOOL:
        tool("verify", path, out)
