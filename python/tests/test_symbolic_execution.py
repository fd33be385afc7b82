"""One plan for every sequence length, proven by execution: a transformer
encoder and a small Llama-style decoder (scripts/symbolic_models.py)
traced once by torch.export with seq in [1, 2048] (trace(...,
symbolic=True)), planned once (plan_symbolic), and run inside the arena of
plan.at(seq=N) at N = 1, 7, 64, 333, 500 and 2048 (333 lies between the
steps of a bucket counted in steps). Each plan.at(N) passes
memplan.verify for the graph bound to N; run_in_arena checks every live
tensor's bytes after every op; its outputs are bit-equal to an ordinary
run of the same traced program (same ops, torch's own memory) and within
float32 rounding of the model's eager run (whose kernels differ: the
encoder's fused fast path, the decompositions of core ATen). The decoder's
KV-cache decoding step runs the same way with the cache length as the
dim."""

import importlib.util
import pathlib

import pytest
import torch

import memplan
import memplan.torch as mt

_SCRIPT = (
    pathlib.Path(__file__).resolve().parents[2]
    / "scripts"
    / "symbolic_models.py"
)
_spec = importlib.util.spec_from_file_location("symbolic_models", _SCRIPT)
sm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sm)

SIZES = [1, 7, 64, 333, 500, 2048]
ALIGNMENT = 64

torch.set_num_threads(1)


@pytest.fixture(scope="module", params=["encoder", "llama"])
def case(request):
    """(model, make_input, traced, plan), traced and planned once."""
    if request.param == "encoder":
        model, make_input = sm.encoder(), sm.encoder_input
        traced = sm.trace_encoder(mt)
    else:
        model, make_input = sm.llama_decoder(), sm.llama_input
        traced = sm.trace_llama(mt)
    plan = memplan.plan_symbolic(traced, max_buckets=4, alignment=ALIGNMENT)
    return model, make_input, traced, plan


def test_traced_graph_is_symbolic_in_the_users_dim(case):
    _, _, traced, plan = case
    assert traced.dims == {"seq": (1, sm.MAX_SEQ)}
    assert traced.graph.dims == {"seq": (1, sm.MAX_SEQ)}
    assert plan.dims == {"seq": (1, sm.MAX_SEQ)}
    [dim] = traced.dynamic_dims
    assert (
        dim.name == "seq"
        and dim.dim == 1
        and (dim.min, dim.max) == (1, sm.MAX_SEQ)
    )
    sizes = {t.name: t.symbolic_size for t in traced.graph.tensors}
    assert "seq" in sizes[traced.input_names[0]]
    # Attention scores grow as seq*seq, the rest as seq or not at all.
    assert any("seq*seq" in (s or "") for s in sizes.values())
    assert all(
        t.symbolic_size is None
        for t in traced.graph.tensors
        if t.kind == "constant"
    )
    plan.verify()
    assert 1 <= len(plan.buckets) <= 4
    # The scores (8*seq*seq bytes) and masks are not a multiple of 64 at
    # every seq: the buckets above the smallest count seq in steps.
    assert any(b["steps"] for b in plan.buckets)


@pytest.mark.parametrize("seq", SIZES)
def test_runs_in_the_arena_of_one_plan_at_every_size(case, seq):
    model, make_input, traced, plan = case
    x = make_input(seq)
    at = plan.at(seq=seq)
    bound = memplan.bind_dims(traced.graph, seq=seq)
    memplan.verify(bound, at)
    assert at.peak <= plan.peak(seq=seq)
    assert (
        at.lower_bound
        == memplan.build_problem(bound, alignment=ALIGNMENT).lower_bound
    )
    out = mt.run_in_arena(traced, at, (x,))
    assert out.shape[1] == seq
    assert torch.equal(out, traced.run((x,)))
    with torch.no_grad():
        eager = model(x)
    torch.testing.assert_close(out, eager, rtol=1e-5, atol=1e-5)


def test_bind_records_the_sizes_its_expressions_give(case):
    _, make_input, traced, _ = case
    bound = traced.bind((make_input(3),))
    assert bound.values == {"seq": 3} and not bound.dims
    expected = {
        t.name: t.size for t in memplan.bind_dims(traced.graph, seq=3).tensors
    }
    for t in bound.graph.tensors:
        if t.name in traced.widened:
            assert t.size <= expected[t.name]
        else:
            assert t.size == expected[t.name], t.name


def test_a_plan_moved_onto_a_live_tensor_is_caught(case):
    """The arena check is real: plan.at(seq=64) with one buffer moved onto
    a larger one alive across its writer fails the verifier and, at run
    time, names the overwritten tensor."""
    _, make_input, traced, plan = case
    at = plan.at(seq=64)
    n_ops = len(at.op_order)
    buffers = at.buffers
    victim, mover = None, None
    for b in sorted(buffers, key=lambda b: -b["size"]):
        for a in buffers:
            if a is b or not 0 < a["size"] <= b["size"] or a["start"] == 0:
                continue
            if b["start"] < a["start"] and a["start"] + 1 < min(
                b["end"], n_ops
            ):
                victim, mover = b, a
                break
        if victim:
            break
    assert victim, "no live buffer to overwrite"
    bad = at.moved(mover["name"], victim["offset"])
    with pytest.raises(ValueError):
        memplan.verify(memplan.bind_dims(traced.graph, seq=64), bad)
    with pytest.raises(mt.ArenaError, match=f'tensor "{victim["name"]}"'):
        mt.run_in_arena(traced, bad, (make_input(64),))


def test_values_outside_the_range_are_errors_naming_the_dim(case):
    _, make_input, traced, plan = case
    with pytest.raises(memplan.DimError, match=r'"seq".*2049.*\[1, 2048\]'):
        traced.bind((make_input(2049),))
    with pytest.raises(memplan.DimError, match=r'"seq".*0.*\[1, 2048\]'):
        plan.at(seq=0)


class Halves(torch.nn.Module):
    def forward(self, x):
        return x[:, ::2] * 2


def test_sizes_that_are_not_polynomials_are_trace_errors():
    # x[:, ::2] is (seq + 1) // 2 long (torch.export needs seq >= 3 here).
    seq = torch.export.Dim("seq", min=3, max=64)
    with pytest.raises(
        mt.TraceError,
        match=r'tensor "mul" of Halves \(made '
        r'by op "mul"\): its size .*\(seq \+ 1\)//2.* is not '
        r"a polynomial",
    ):
        mt.trace(
            Halves(),
            (torch.randn(1, 8),),
            dynamic_shapes={"x": {1: seq}},
            symbolic=True,
        )
    with pytest.raises(
        ValueError, match=r"symbolic=True\) needs dynamic_shapes"
    ):
        mt.trace(Halves(), (torch.randn(1, 8),), symbolic=True)


def test_an_unbounded_dim_is_a_trace_error():
    seq = torch.export.Dim("seq", min=1)
    with pytest.raises(mt.TraceError, match=r"dim seq.*no upper bound"):
        mt.trace(
            sm.Encoder().eval(),
            (sm.encoder_input(8),),
            dynamic_shapes={"x": {1: seq}},
            symbolic=True,
        )


def test_kv_cache_decoding_step_runs_at_every_cache_length():
    """The decoding step with the cache length as the dim (the caches are
    inputs of that length, the outputs one longer): one plan, run at the
    range's ends and inside it."""
    traced = sm.trace_llama_kv(mt)
    assert traced.dims == {"cache": (1, sm.MAX_SEQ - 1)}
    assert {d.input for d in traced.dynamic_dims} == {"input1", "input2"}
    plan = memplan.plan_symbolic(traced, alignment=ALIGNMENT)
    plan.verify()
    step = sm.llama_decoder_step()
    for cache in (1, 7, 500, sm.MAX_SEQ - 1):
        inputs = sm.kv_inputs(cache)
        at = plan.at(cache=cache)
        memplan.verify(memplan.bind_dims(traced.graph, cache=cache), at)
        out = mt.run_in_arena(traced, at, inputs)
        assert out[1].shape[3] == cache + 1
        for a, b in zip(out, traced.run(inputs)):
            assert torch.equal(a, b)
        with torch.no_grad():
            eager = step(*inputs)
        for a, b in zip(out, eager):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
