"""memplan's offline plans in TensorFlow Lite Micro's own runtime (the
tflite-micro package's interpreter): every int8 model of tests/data/tflite
planned by `memplan plan model.tflite --out=...`, in the model's op order
and reordered (--reorder=memory, --reorder=optimal), runs in TFLM with
outputs bit-identical to the original's, in no more arena than TFLM's own
plan; every planned model passes `memplan verify`, and an invalid offline
plan (all tensors at offset 0), which TFLM runs silently to a wrong result,
fails it naming two tensors that overlap. The kernel scratch memory memplan
plans for each operator is what TFLM's kernels request, measured in the
runtime on each operator cut out into a model of its own.

Runs in the project's .venv (scripts/install_deps.sh python installs
tflite-micro there); the helpers are scripts/tflite_table.py's."""

import importlib.util
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import memplan

_SCRIPT = (
    pathlib.Path(__file__).resolve().parents[2] / "scripts" / "tflite_table.py"
)
_spec = importlib.util.spec_from_file_location("tflite_table", _SCRIPT)
tt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tt)  # fails, saying what to install, without TFLM

TOOL = os.environ.get("MEMPLAN_TOOL")
PATHS = {path.stem: path for path in tt.model_paths()}
NAMES = sorted(PATHS)
SEED = 7


def test_the_models_are_all_there():
    assert NAMES == [
        "autoencoder",
        "branches",
        "ds_cnn",
        "mobilenet_vww",
        "resnet8",
        "transpose_conv",
        "unet",
    ]


def tool(*args):
    assert TOOL, "MEMPLAN_TOOL names the memplan tool"
    return subprocess.run(
        [TOOL, *map(str, args)], capture_output=True, text=True
    )


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    """{model: {variant: planned model bytes}}, made once."""
    assert TOOL, "MEMPLAN_TOOL names the memplan tool"
    out = tmp_path_factory.mktemp("planned")
    return {
        name: {
            variant: data
            for variant, (data, _) in tt.planned_models(
                TOOL, PATHS[name], out
            ).items()
        }
        for name in NAMES
    }


@pytest.fixture(scope="module")
def tflm_own():
    """TFLM's arena with its own plan, per model."""
    return {name: tt.tflm_arena(PATHS[name].read_bytes()) for name in NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_planned_models_compute_the_same_in_tflm(planned, name):
    data = PATHS[name].read_bytes()
    inputs = tt.random_inputs(data, SEED)
    expected = tt.tflm_outputs(data, inputs)
    assert expected
    for variant, model in planned[name].items():
        outputs = tt.tflm_outputs(model, inputs)
        assert len(outputs) == len(expected), variant
        for got, want in zip(outputs, expected):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.array_equal(got, want), f"{name} {variant}"


@pytest.mark.parametrize("name", NAMES)
def test_the_offline_plan_has_a_row_per_tensor(planned, name):
    data = PATHS[name].read_bytes()
    model = tt.unpack(data)
    tensors = model.subgraphs[0].tensors
    assert tt.offline_offsets(data) is None
    for variant, planned_model in planned[name].items():
        offsets = tt.offline_offsets(planned_model)
        assert offsets is not None, f"{name} {variant}: no offline plan"
        assert len(offsets) == len(tensors), variant
        for tensor, offset in zip(tensors, offsets):
            if tt.is_constant(model, tensor):
                assert offset == -1, (variant, tensor.name)
            else:
                assert offset == -1 or offset % tt.ALIGNMENT == 0, variant


@pytest.mark.parametrize("name", NAMES)
def test_reordering_keeps_the_operators(planned, name):
    ops = tt.op_types(PATHS[name].read_bytes())
    assert tt.op_types(planned[name]["planned"]) == ops
    for variant in ("memory", "optimal"):
        assert sorted(tt.op_types(planned[name][variant])) == sorted(ops)


@pytest.mark.parametrize("name", NAMES)
def test_tflm_needs_no_more_arena_with_memplans_plan(planned, tflm_own, name):
    own = tflm_own[name]
    used = {v: tt.tflm_arena(m) for v, m in planned[name].items()}
    for variant, arena in used.items():
        assert arena <= own, f"{name} {variant}: {arena} > TFLM's {own}"
    _, any_order, _ = tt.lower_bounds(TOOL, PATHS[name])
    # memplan's bound holds in TFLM's runtime too
    assert min(used.values()) >= any_order, (used, any_order)
    if any_order < own:
        assert min(used["memory"], used["optimal"]) < own, (used, own)


@pytest.mark.parametrize("name", NAMES)
def test_planned_models_verify(planned, name, tmp_path):
    for variant, model in planned[name].items():
        path = tmp_path / f"{variant}.tflite"
        path.write_bytes(model)
        result = tool("verify", path)
        assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("name", NAMES)
def test_an_invalid_offline_plan_is_caught(planned, name, tmp_path):
    model = planned[name]["planned"]
    zeros = [0 if o >= 0 else -1 for o in tt.offline_offsets(model)]
    bad = tt.with_offline_offsets(model, zeros)
    # TFLM trusts the plan: it runs, to a wrong result
    inputs = tt.random_inputs(model, SEED)
    wrong = tt.tflm_outputs(bad, inputs)
    right = tt.tflm_outputs(model, inputs)
    assert any(not np.array_equal(a, b) for a, b in zip(wrong, right))
    path = tmp_path / "zeros.tflite"
    path.write_bytes(bad)
    result = tool("verify", path)
    assert result.returncode == 1
    # the overlap, named: two tensors of the model alive at once on the
    # same bytes
    message = result.stderr
    assert "invalid offline plan" in message and "share bytes" in message
    names = [t.name.decode() for t in tt.unpack(model).subgraphs[0].tensors]
    assert sum(f'"{n}"' in message for n in names) == 2, message


@pytest.mark.parametrize("name", NAMES)
def test_the_scratch_memplan_plans_is_what_tflm_requests(name, tmp_path):
    graph_path = tmp_path / "graph.json"
    result = tool(
        "plan",
        PATHS[name],
        f"--out={tmp_path / 'plan.json'}",
        f"--graph-out={graph_path}",
    )
    assert result.returncode == 0, result.stderr
    graph = json.loads(graph_path.read_text())
    sizes = {tensor["name"]: tensor["size"] for tensor in graph["tensors"]}
    ops = graph["ops"]
    measured = 0
    for index, op, one, tensors in tt.single_op_models(
        PATHS[name].read_bytes()
    ):
        assert ops[index]["name"] == f"{index}_{op}"
        requested = tt.tflm_arena(one) - tensors
        scratch = ops[index].get("scratch", [])
        planned = sum(tt.aligned(sizes[s]) for s in scratch)
        assert planned == requested, f"{name} op {index} {op}: {scratch}"
        measured += 1
    assert measured == len(ops)
    # the Python reader plans the same scratch
    graph = memplan.read_tflite(PATHS[name].read_bytes())
    assert [op.name for op in graph.ops] == [op["name"] for op in ops]
    python_sizes = {t.name: t.size for t in graph.tensors}
    for op, expected in zip(graph.ops, ops):
        assert [python_sizes[s] for s in op.scratch] == [
            sizes[s] for s in expected.get("scratch", [])
        ], op.name


def test_the_table_reports_tflm_and_the_bounds(tmp_path):
    row = tt.row(TOOL, PATHS["transpose_conv"], tmp_path)
    assert row["any_order"] <= row["bound"] <= row["planned"] <= row["tflm"]
    text = tt.table([row])
    assert text.count("\n") == 2 and "| transpose_conv | 4 |" in text
