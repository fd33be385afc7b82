"""memplan.executorch in ExecuTorch: models exported to .pte with memplan's
memory planning pass and with ExecuTorch's default, both run by
executorch.runtime on the same inputs; their outputs must be equal to each
other and close to eager PyTorch, and memplan's arenas no larger than the
default's. Also: two mem_id arenas planned as two memplan pools, storage
shared through `storage_base` kept, memplan inside ExecuTorch's algorithm
suite, memplan's storage check (and ExecuTorch's Verifier, on request)
catching a plan that overlaps live specs.
Random weights, small inputs (the models of scripts/executorch_table.py)."""

import copy
import importlib.util
import itertools
import pathlib

import pytest
import torch
from executorch.exir.error import InternalError
from executorch.exir.memory_planning import (
    MemoryPlanningAlgorithmSuite,
    _is_inplace_node,
    _is_out_var_node,
    collect_specs_from_nodes,
    greedy,
)
from executorch.exir.passes import MemoryPlanningPass
from executorch.exir.tensor import TensorSpec

import memplan
import memplan.executorch as met

_SCRIPT = (
    pathlib.Path(__file__).resolve().parents[2]
    / "scripts"
    / "executorch_table.py"
)
_spec = importlib.util.spec_from_file_location("executorch_table", _SCRIPT)
table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(table)

IMAGE = 32  # pixels a side for the torchvision models
torch.set_num_threads(1)


def eager(model, inputs):
    with torch.no_grad():
        return table._outputs(copy.deepcopy(model)(*inputs))


def check_outputs(planned, default, model, inputs):
    ours, theirs = table.run(planned, inputs), table.run(default, inputs)
    assert len(ours) == len(theirs) > 0
    for a, b in zip(ours, theirs):
        assert torch.equal(a, b)
    assert table.close(ours, eager(model, inputs)) < 1e-4


def check_arenas(planned, default, mp):
    """memplan's arenas: as ExecuTorch records them, at or above memplan's
    lower bound, no larger than the default's and smaller wherever the
    default's is above the bound."""
    ours, theirs = table.arena_sizes(planned), table.arena_sizes(default)
    assert len(ours) == len(theirs) and ours[0] == 0
    for mem_id in range(1, len(ours)):
        arena = mp.algorithm.arenas[mem_id]
        assert ours[mem_id] == arena.size
        assert table.lower_bound(arena) <= ours[mem_id] <= theirs[mem_id]
        if theirs[mem_id] > table.lower_bound(arena):
            assert ours[mem_id] < theirs[mem_id]
    return ours, theirs


@pytest.mark.parametrize(
    "name",
    [
        "resnet18",
        "mobilenet_v3_small",
        "transformer_encoder_4l",
        "llama_kv_cache_2048",
    ],
)
def test_model_runs_with_memplan_plan(name):
    model, inputs = table.MODELS[name](IMAGE)
    mp = met.memory_planning_pass()
    planned = table.export(model, inputs, mp)
    default = table.export(model, inputs, None)
    ours, theirs = check_arenas(planned, default, mp)
    check_outputs(planned, default, model, inputs)
    if name == "llama_kv_cache_2048":
        # The KV cache (2 layers x K, V of 4 x 2048 x 32 floats) lives
        # throughout; memplan packs the rest at the lower bound.
        arena = mp.algorithm.arenas[1]
        assert ours[1] == table.lower_bound(arena)
        assert ours[1] >= 4 * 2 * 4 * 2048 * 32 * 4


def test_inputs_and_outputs_left_to_the_caller():
    model, inputs = table.MODELS["transformer_encoder_4l"](IMAGE)
    options = {"alloc_graph_input": False, "alloc_graph_output": False}
    mp = met.memory_planning_pass(**options)
    planned = table.export(model, inputs, mp)
    default = table.export(model, inputs, MemoryPlanningPass(**options))
    check_arenas(planned, default, mp)
    everything = met.memory_planning_pass()
    table.export(model, inputs, everything)
    assert (
        mp.algorithm.arenas[1].specs == everything.algorithm.arenas[1].specs - 2
    )  # the input, the output
    check_outputs(planned, default, model, inputs)


def test_plan_is_deterministic():
    model, inputs = table.MODELS["mobilenet_v3_small"](IMAGE)
    first, second = met.memory_planning_pass(), met.memory_planning_pass()
    a = table.export(model, inputs, first)
    b = table.export(model, inputs, second)
    assert table.arena_sizes(a) == table.arena_sizes(b)
    assert a.buffer == b.buffer


def test_two_mem_id_arenas_are_two_memplan_pools():
    model, inputs = table.MODELS["resnet18"](IMAGE)
    tag = table.every_other_result_to_arena_2
    mp = table.with_pool_pass(met.memory_planning_pass(), tag)
    planned = table.export(model, inputs, mp)
    default = table.export(
        model, inputs, table.with_pool_pass(MemoryPlanningPass(), tag)
    )
    ours, theirs = check_arenas(planned, default, mp)
    assert len(ours) == 3 and ours[1] > 0 and ours[2] > 0
    assert sorted(mp.algorithm.arenas) == [1, 2]
    for mem_id, arena in mp.algorithm.arenas.items():
        assert [p.name for p in arena.graph.pools] == [f"mem_id_{mem_id}"]
        assert arena.specs > 0
    # Both arenas as one memplan graph (the bench input): every spec stays
    # in its arena's pool.
    graph = table.program_graph("resnet18", mp.algorithm.arenas)
    plan = memplan.plan(graph, "best")
    for mem_id, arena in mp.algorithm.arenas.items():
        for tensor in arena.graph.tensors:
            assert plan.pool(tensor.name) == f"mem_id_{mem_id}"
    check_outputs(planned, default, model, inputs)


class Branchy(torch.nn.Module):
    """torch.cond: ExecuTorch plans each branch as a submodule and reserves
    its bytes at the start of the arena."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a, self.b = torch.nn.Linear(64, 64), torch.nn.Linear(64, 64)

    def forward(self, x, flag):
        h = torch.relu(self.a(x))
        y = torch.cond(
            flag.sum() > 0,
            lambda h: torch.sigmoid(self.b(h)) * 2,
            lambda h: torch.tanh(self.b(h)) + 1,
            (h,),
        )
        return y + h


def test_control_flow_submodules_keep_their_reserved_bytes():
    model = Branchy().eval()
    inputs = (torch.randn(8, 64), torch.ones(1))
    mp = met.memory_planning_pass()
    planned = table.export(model, inputs, mp)
    default = table.export(model, inputs, None)
    ours, _ = check_arenas(planned, default, mp)
    arena = mp.algorithm.arenas[1]
    assert arena.reserved > 0 and ours[1] == arena.reserved + arena.peak
    for flag in (torch.ones(1), -torch.ones(1)):  # both branches run
        check_outputs(planned, default, model, (inputs[0], flag))


class ReluInPlace(met.MemplanPlanningPass):
    """relu.out writing over its input where relu is the input's only
    reader: the result's storage_base is the input
    (`_share_alloc_with_arg_idx`, as ExecuTorch's backends mark it)."""

    shared = []

    def run(self, graph_module, graph_signature=None):
        _share_relu_inputs(graph_module, self.shared)
        return super().run(graph_module, graph_signature)


class ReluInPlaceDefault(MemoryPlanningPass):
    shared = []

    def run(self, graph_module, graph_signature=None):
        _share_relu_inputs(graph_module, self.shared)
        return super().run(graph_module, graph_signature)


def _share_relu_inputs(graph_module, shared):
    shared.clear()
    for node in graph_module.graph.nodes:
        if not (_is_out_var_node(node) and "relu" in str(node.target)):
            continue
        source = node.args[0]
        if len(source.users) == 1 and isinstance(
            source.meta.get("spec"), TensorSpec
        ):
            node.meta["_share_alloc_with_arg_idx"] = 0
            shared.append((node.meta["spec"], source.meta["spec"]))
    assert shared


def test_storage_base_specs_share_their_base_bytes():
    model, inputs = table.MODELS["resnet18"](IMAGE)
    mp = ReluInPlace(met.algorithm())
    planned = table.export(model, inputs, mp)
    default = table.export(model, inputs, ReluInPlaceDefault())
    check_arenas(planned, default, mp)
    for spec, base in ReluInPlace.shared:
        assert spec.storage_base is base
        assert (spec.mem_id, spec.mem_offset) == (base.mem_id, base.mem_offset)
    check_outputs(planned, default, model, inputs)


def test_memplan_in_executorch_algorithm_suite():
    """The suite keeps the smallest of its algorithms' plans; two memplan
    planners in one suite are two entries."""
    model, inputs = table.MODELS["llama_kv_cache_2048"](IMAGE)
    simple, best = met.algorithm("greedy_by_size"), met.algorithm("best")
    assert simple.__name__ != best.__name__
    suite = MemoryPlanningPass(
        memory_planning_algo=MemoryPlanningAlgorithmSuite(
            [greedy, simple, best]
        )
    )
    together = table.export(model, inputs, suite)
    alone = table.export(model, inputs, met.memory_planning_pass())
    assert table.arena_sizes(together) == table.arena_sizes(alone)
    assert best.arenas[1].size == table.arena_sizes(together)[1]
    assert best.arenas[1].size <= simple.arenas[1].size


class OverlappingAlgorithm(met.MemplanAlgorithm):
    """Places the largest spec on top of one it lives with."""

    def __call__(
        self,
        alignment,
        specs,
        graph_module,
        graph_signature=None,
        extra_padding=0,
    ):
        result = super().__call__(
            alignment, specs, graph_module, graph_signature, extra_padding
        )
        ordered = sorted(result.spec_dict, key=lambda s: -s.allocated_memory)
        big = ordered[0]
        for other in ordered[1:]:
            if (
                other.allocated_memory
                and other.storage_base is None
                and other.lifetime[0] <= big.lifetime[1]
                and big.lifetime[0] <= other.lifetime[1]
            ):
                result.spec_dict[other].mem_offset = result.spec_dict[
                    big
                ].mem_offset
                result.spec_dict[other].mem_obj_id = result.spec_dict[
                    big
                ].mem_obj_id
                return result
        raise AssertionError("no spec lives with the largest")


def test_both_verifiers_catch_a_forged_overlap():
    """A plan that puts two live specs on the same bytes: memplan's check
    (the default) names both, ExecuTorch's (verify="executorch") too."""
    model, inputs = table.MODELS["transformer_encoder_4l"](IMAGE)
    with pytest.raises(
        ValueError,
        match=r"storage overlap in mem_id 1: .* and .* share bytes while "
        r"both live",
    ):
        table.export(
            model, inputs, met.MemplanPlanningPass(OverlappingAlgorithm())
        )
    with pytest.raises(InternalError, match="storage overlap"):
        table.export(
            model,
            inputs,
            met.MemplanPlanningPass(
                OverlappingAlgorithm(), verify="executorch"
            ),
        )


class OutsideAlgorithm(met.MemplanAlgorithm):
    """Moves the last spec past the end of its arena."""

    def __call__(self, alignment, specs, graph_module, *args):
        result = super().__call__(alignment, specs, graph_module, *args)
        spec = next(s for s in reversed(specs) if s.allocated_memory)
        result.spec_dict[spec].mem_offset = result.bufsizes[1]
        return result


def tiny_model():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)
    ).eval()
    return model, (torch.randn(2, 16),)


def test_memplan_verifier_catches_a_spec_outside_its_arena():
    model, inputs = tiny_model()
    with pytest.raises(ValueError, match="ends past its arena's"):
        table.export(model, inputs, met.MemplanPlanningPass(OutsideAlgorithm()))


def test_default_pass_skips_the_quadratic_check(monkeypatch):
    """The default verification is memplan's (it counts the specs it
    checked); ExecuTorch's pairwise check runs only when asked for."""
    calls = []

    def quadratic(self, *args, **kwargs):
        calls.append(self)
        raise AssertionError("verify_storage_reuse called")

    checked = []
    verify_storage = met.verify_storage

    def counted(*args, **kwargs):
        checked.append(verify_storage(*args, **kwargs))
        return checked[-1]

    monkeypatch.setattr(
        "executorch.exir.memory_planning.Verifier.verify_storage_reuse",
        quadratic,
    )
    monkeypatch.setattr(met, "verify_storage", counted)
    model, inputs = tiny_model()
    planned = table.export(model, inputs, met.memory_planning_pass())
    default = table.export(model, inputs, None)
    assert table.arena_sizes(planned) == table.arena_sizes(default)
    assert not calls and checked and checked[0] >= 4  # x, 2 hidden, y
    with pytest.raises(AssertionError, match="verify_storage_reuse called"):
        table.export(
            model, inputs, met.memory_planning_pass(verify="executorch")
        )
    assert calls


def test_arena_graph_keeps_executorch_lifetimes():
    specs = []
    for shape, lifetime in [
        ((4,), [0, 2]),
        ((8,), [1, 1]),
        ((2,), [3, 5]),
        ((0,), [2, 4]),
    ]:
        spec = TensorSpec(torch.float32, torch.Size(shape))
        spec.lifetime = lifetime
        spec.realign(16)
        specs.append(spec)
    graph = met.arena_graph(specs, 1, 16)
    problem = memplan.build_problem(graph)
    lifetimes = {b.name: (b.start, b.end, b.size) for b in problem.buffers}
    assert lifetimes == {
        "m1_spec0": (0, 3, 16),
        "m1_spec1": (1, 2, 32),
        "m1_spec2": (3, 6, 16),
    }  # spec3 holds no byte


def test_arena_graph_is_the_graph_built_tensor_by_tensor():
    """arena_graph() builds its graph in one call; it is the graph of one
    memplan Tensor per spec with bytes and one Op per node."""
    specs = []
    for shape, dtype, lifetime in [
        ((4, 3), torch.float32, [0, 2]),
        ((8,), torch.int64, [2, 2]),
        ((0,), torch.float32, [1, 3]),
        ((5,), torch.uint8, [1, 4]),
        ((2, 2), torch.float16, [0, 4]),
    ]:
        spec = TensorSpec(dtype, torch.Size(shape))
        spec.lifetime = lifetime
        spec.realign(16)
        specs.append(spec)
    names = {0: "m2_spec0", 1: "m2_spec1", 3: "m2_spec3", 4: "m2_spec4"}
    tensors = [
        memplan.Tensor(
            names[i],
            specs[i].allocated_memory,
            alignment=16,
            shape=list(specs[i].shape),
            dtype=str(specs[i].dtype).replace("torch.", ""),
        )
        for i in names
    ]
    outputs = {0: ["m2_spec0", "m2_spec4"], 1: ["m2_spec3"], 2: ["m2_spec1"]}
    inputs = {2: ["m2_spec0"], 4: ["m2_spec3", "m2_spec4"]}
    expected = memplan.Graph(
        name="mem_id_2",
        tensors=tensors,
        ops=[
            memplan.Op(f"node{t}", inputs.get(t, []), outputs.get(t, []))
            for t in range(5)
        ],
        pools=[memplan.Pool("mem_id_2", 0, 16)],
    )
    assert met.arena_graph(specs, 2, 16) == expected
    empty = met.arena_graph(specs[2:3], 1, 16)
    assert not empty.tensors and not empty.ops
    specs[1].lifetime = [3, 2]
    with pytest.raises(ValueError, match="no valid lifetime"):
        met.arena_graph(specs, 2, 16)


class Planned(met.MemplanPlanningPass):
    """memplan's pass that keeps the graphs it planned."""

    def __init__(self):
        super().__init__(met.algorithm())
        self.planned = []

    def run(self, graph_module, graph_signature=None):
        result = super().run(graph_module, graph_signature)
        self.planned.append((graph_module, graph_signature))
        return result


def test_storage_check_checks_the_specs_executorch_verifier_does():
    """verify_storage() collects the specs ExecuTorch's Verifier collects,
    for each choice of the specs left out (a model with in-place writes to
    mutable buffers, graph inputs and outputs)."""
    model, inputs = table.MODELS["llama_kv_cache_2048"](IMAGE)
    planned = Planned()
    table.export(model, inputs, planned)
    graph_module, signature = planned.planned[-1]
    nodes = graph_module.graph.nodes
    assert any(_is_inplace_node(node) for node in nodes)
    for left_out in itertools.product([False, True], repeat=3):
        options = dict(
            zip(
                (
                    "ignore_graph_input",
                    "ignore_graph_output",
                    "ignore_mutable_buffers",
                ),
                left_out,
            )
        )
        expected = list(
            collect_specs_from_nodes(
                nodes,
                signature,
                ignore_const=True,
                ignore_out_var_node=False,
                dedup=True,
                do_assertion=False,
                **options,
            )
        )
        assert met._specs_to_check(nodes, signature, **options) == expected
    assert met.verify_storage(graph_module, signature) == len(
        met._specs_to_check(
            nodes,
            None,
            ignore_graph_input=False,
            ignore_graph_output=False,
            ignore_mutable_buffers=False,
        )
    )


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="no_such_planner"):
        met.memory_planning_pass("no_such_planner")
    with pytest.raises(TypeError, match="speed"):
        met.memory_planning_pass(speed=3)
    mp = met.memory_planning_pass(
        "greedy_by_size", alloc_graph_input=False, work_limit=1000
    )
    assert mp.alloc_graph_input is False
    assert mp.algorithm.planner == "greedy_by_size"
    assert mp.algorithm.plan_options == {"work_limit": 1000}
    assert mp.verify == "memplan"
    assert met.memory_planning_pass(verify=False).verify == "none"
    assert met.memory_planning_pass(verify=True).verify == "memplan"


@pytest.mark.parametrize(
    "options, error, message",
    [
        (
            {"alignment": 0},
            ValueError,
            "alignment=0; it must be a power of two",
        ),
        ({"alignment": 24}, ValueError, "alignment=24"),
        ({"verify": "fast"}, ValueError, "verify='fast'; valid: 'memplan'"),
        ({"work_limit": -1}, ValueError, "work_limit=-1"),
        ({"threads": 0}, ValueError, "threads=0"),
        ({"time_limit": -2}, ValueError, "time_limit"),
        ({"options": 3}, TypeError, "options must be a dict"),
        ({"alloc_graph_input": "no"}, TypeError, "alloc_graph_input='no'"),
    ],
)
def test_bad_arguments_fail_when_the_pass_is_built(options, error, message):
    with pytest.raises(error, match=message):
        met.memory_planning_pass(**options)
