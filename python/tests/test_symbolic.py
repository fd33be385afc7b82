"""Symbolic graphs in Python: Graph.dims and Tensor.symbolic_size, a plan
made once for a whole range (plan_symbolic), its buckets, and plan.at(N), an
ordinary plan that the verifier accepts for the graph bound to N, at every
N of a small range; errors name the dim and the value."""

import json

import pytest

import memplan


def attention_like(max_seq=64, layers=2):
    """Per layer: x (64*seq) -> scores (16*seq*seq) -> y (64*seq), plus a
    constant-sized weight-like scratch: one family linear, one quadratic."""
    tensors = [memplan.Tensor("x0", "64*seq", kind="input")]
    ops = []
    for i in range(layers):
        last = i == layers - 1
        tensors += [
            memplan.Tensor(f"s{i}", "16*seq*seq"),
            memplan.Tensor(f"w{i}", 4096),
            memplan.Tensor(
                f"x{i + 1}", "64*seq", kind="output" if last else "activation"
            ),
        ]
        ops += [
            memplan.Op(f"score{i}", [f"x{i}"], [f"s{i}", f"w{i}"]),
            memplan.Op(f"mix{i}", [f"s{i}", f"x{i}", f"w{i}"], [f"x{i + 1}"]),
        ]
    graph = memplan.Graph(name="attn", tensors=tensors, ops=ops)
    graph.dims = {"seq": (1, max_seq)}
    return graph


def test_graph_dims_and_symbolic_sizes_round_trip():
    graph = attention_like()
    assert graph.dims == {"seq": (1, 64)}
    assert memplan.is_symbolic(graph)
    s0 = next(t for t in graph.tensors if t.name == "s0")
    assert s0.symbolic_size == "16*seq*seq" and s0.size == 0
    w0 = next(t for t in graph.tensors if t.name == "w0")
    assert w0.symbolic_size is None and w0.size == 4096
    data = graph.to_dict()
    assert data["dims"] == {"seq": {"min": 1, "max": 64}}
    assert {t["name"]: t["size"] for t in data["tensors"]}["s0"] == "16*seq*seq"
    again = memplan.graph_from_dict(json.loads(json.dumps(data)))
    assert again == graph
    # Set on a tensor of a concrete graph, and removed again.
    t = memplan.Tensor("t", 128)
    t.symbolic_size = "8*batch + 8"
    assert t.symbolic_size == "8*batch + 8" and t.size == 0
    t.symbolic_size = None
    assert t.symbolic_size is None
    plain = memplan.Graph(name="plain", tensors=[memplan.Tensor("a", 8)])
    assert plain.dims == {} and not memplan.is_symbolic(plain)


def test_bind_dims_gives_the_concrete_graph():
    bound = memplan.bind_dims(attention_like(), seq=5)
    assert bound.dims == {} and not memplan.is_symbolic(bound)
    sizes = {t.name: t.size for t in bound.tensors}
    assert sizes["s0"] == 16 * 25 and sizes["x1"] == 64 * 5
    assert sizes["w0"] == 4096
    plan = memplan.plan(bound, "greedy_by_size", alignment=64)
    memplan.verify(bound, plan)


def test_plan_of_a_symbolic_graph_points_to_plan_symbolic():
    with pytest.raises(
        memplan.DimError, match=r"dims seq: bind.*seq=N.*plan_symbolic"
    ):
        memplan.plan(attention_like())


@pytest.mark.parametrize("max_buckets", [1, 4])
def test_plan_at_every_value_is_an_ordinary_verified_plan(max_buckets):
    graph = attention_like(max_seq=64)
    plan = memplan.plan_symbolic(graph, max_buckets=max_buckets, alignment=64)
    assert isinstance(plan, memplan.SymbolicPlan)
    assert plan.dims == {"seq": (1, 64)}
    plan.verify()
    buckets = plan.buckets
    assert 1 <= len(buckets) <= max_buckets
    # The buckets cover [1, 64] in order, without gaps.
    ranges = [b["dims"]["seq"] for b in buckets]
    assert ranges[0][0] == 1 and ranges[-1][1] == 64
    for (_, hi), (lo, _) in zip(ranges, ranges[1:]):
        assert lo == hi + 1
    buffers = {b["name"] for b in plan.buffers}
    whole = {b["name"]: b["size"] for b in plan.buffers}
    tensor_size = {
        t.name: t.symbolic_size or str(t.size) for t in graph.tensors
    }
    for b in buckets:
        assert set(b["offsets"]) == buffers
        assert "seq" in b["peak"]
        # Each bucket's sizes are reserved over its own range: aligned,
        # exact at its lower end, never above the whole range's reserve.
        # A bucket counted in steps of m has its expressions in seq_div =
        # seq // m and seq_mod = seq % m; its sizes are exact where both
        # are least.
        assert set(b["sizes"]) == buffers
        assert set(b["steps"]) <= {"seq"}
        step = b["steps"].get("seq", 1)
        lo, hi = b["dims"]["seq"]
        least = lo if step == 1 else lo // step * step
        for name, size in b["sizes"].items():
            exact = evaluate(tensor_size[name], {"seq": least})
            assert evaluate(size, taken(b, least)) == (exact + 63) // 64 * 64
            for seq in range(lo, hi + 1):
                reserve = evaluate(size, taken(b, seq))
                assert reserve % 64 == 0
                assert reserve >= evaluate(tensor_size[name], {"seq": seq})
                if step == 1:
                    assert reserve <= evaluate(whole[name], {"seq": seq})
    for seq in range(1, 65):
        at = plan.at(seq=seq)
        assert isinstance(at, memplan.PlanResult)
        bound = memplan.bind_dims(graph, seq=seq)
        memplan.verify(bound, at)
        assert plan.peak(seq=seq) >= at.peak
        assert at.peak >= plan.lower_bound(seq=seq)
        # Every tensor of the bound graph is placed at its bucket's offset.
        bucket = plan.bucket(seq=seq)
        assert lo_hi_holds(bucket["dims"]["seq"], seq)
        for name, (_, offset) in at.tensors.items():
            if name in bucket["offsets"]:
                assert offset == evaluate(
                    bucket["offsets"][name], taken(bucket, seq)
                )
    # The quadratic scores and the linear activations both fit near the
    # bound at the range's ends.
    assert plan.peak(seq=64) <= 1.05 * plan.lower_bound(seq=64)
    assert plan.peak(seq=1) <= 1.05 * plan.lower_bound(seq=1)


def taken(bucket, seq):
    """The values a bucket's expressions take for seq: seq itself, or for a
    bucket in steps of m, seq_div = seq // m and seq_mod = seq % m."""
    step = bucket["steps"].get("seq", 1)
    if step == 1:
        return {"seq": seq}
    return {"seq_div": seq // step, "seq_mod": seq % step}


def lo_hi_holds(range_, value):
    return range_[0] <= value <= range_[1]


def evaluate(expression, values):
    """A DimExpr text ("32*seq*seq - 32*seq + 64") at values ({"seq": 5}),
    read here independently of the library."""
    total = 0
    for sign, term in split_terms(expression):
        value = 1
        for factor in term.split("*"):
            factor = factor.strip()
            value *= values[factor] if factor in values else int(factor)
        total += sign * value
    return total


def split_terms(expression):
    expression = expression.replace(" ", "")
    terms, sign, current = [], 1, ""
    for ch in expression:
        if ch in "+-" and current:
            terms.append((sign, current))
            sign, current = (1 if ch == "+" else -1), ""
        elif ch == "-" and not current:
            sign = -sign
        else:
            current += ch
    terms.append((sign, current))
    return terms


def test_bad_values_are_dim_errors_naming_them():
    plan = memplan.plan_symbolic(attention_like(), alignment=64)
    cases = [
        ({"seq": 0}, r'"seq".*0.*\[1, 64\]'),
        ({"seq": 65}, r'"seq".*65.*\[1, 64\]'),
        ({}, r'no value for dim "seq"'),
        ({"seq": 3, "batch": 2}, r'"batch"'),
        ({"seq": "8"}, r'"seq".*int'),
    ]
    for values, message in cases:
        for call in (plan.at, plan.peak, plan.lower_bound):
            with pytest.raises(memplan.DimError, match=message) as caught:
                call(**values)
            assert isinstance(caught.value, memplan.Error)
            assert isinstance(caught.value, ValueError)
    with pytest.raises(memplan.DimError, match='"seq".*\\[9, 2\\]'):
        attention_like().dims = {"seq": (9, 2)}
    with pytest.raises(memplan.DimError, match='tensor "y".*"4\\*seq\\+"'):
        memplan.Tensor("y", "4*seq+")
    with pytest.raises(memplan.DimError, match='"seq".*outside'):
        memplan.bind_dims(attention_like(), seq=100)


def test_undeclared_dim_and_concrete_graph_are_refused():
    graph = attention_like()
    graph.dims = {"batch": (1, 4)}  # the sizes use seq, undeclared now
    with pytest.raises(memplan.DimError, match="seq"):
        memplan.plan_symbolic(graph)
    plain = memplan.Graph(
        name="plain",
        tensors=[
            memplan.Tensor("a", 8, kind="input"),
            memplan.Tensor("b", 8, kind="output"),
        ],
        ops=[memplan.Op("f", ["a"], ["b"])],
    )
    with pytest.raises(memplan.DimError, match="no symbolic dims"):
        memplan.plan_symbolic(plain)
    with pytest.raises(memplan.DimError, match="max_buckets"):
        memplan.plan_symbolic(attention_like(), max_buckets=0)


def test_plan_symbolic_by_planner_name_within_limits():
    graph = attention_like(max_seq=2048, layers=4)
    baseline = memplan.plan_symbolic(graph, alignment=64, planner="upper_bound")
    baseline.verify()
    assert [b["planner"] for b in baseline.buckets] == ["upper_bound"]
    for limits in (
        {"time_limit": 0.001},
        {"time_limit": "1ms"},
        {"work_limit": 1},
    ):
        plan = memplan.plan_symbolic(graph, alignment=64, **limits)
        plan.verify()
        assert plan.peak(seq=2048) <= baseline.peak(seq=2048) * 2
    with pytest.raises(
        ValueError,
        match="valid symbolic planners: " "symbolic_search, symbolic_greedy",
    ):
        memplan.plan_symbolic(graph, planner="first_fit")
    with pytest.raises(ValueError, match="time_limit"):
        memplan.plan_symbolic(graph, time_limit=-1)


def test_plan_symbolic_progress_tells_the_stages(capsys):
    graph = attention_like(max_seq=64, layers=1)
    quiet = memplan.plan_symbolic(graph, planner="symbolic_greedy")
    stages = []
    told = memplan.plan_symbolic(
        graph, planner="symbolic_greedy", progress=stages.append
    )
    told.verify()
    assert told.buckets == quiet.buckets
    assert stages[0] == "symbolic_greedy: one plan of the whole range"
    assert any("worst sampled peak/LB" in line for line in stages)

    memplan.plan_symbolic(graph, planner="symbolic_greedy", progress=True)
    shown = capsys.readouterr().err
    assert "memplan plan_symbolic" in shown
    assert f"{len(quiet.buckets)} bucket" in shown
    assert "stopped: done" in shown

    def stop(line):
        raise KeyError("stop")

    with pytest.raises(KeyError, match="stop"):
        memplan.plan_symbolic(graph, progress=stop)
    with pytest.raises(TypeError, match="progress must be callable"):
        memplan.plan_symbolic(graph, progress=3)
