"""memplan's offline plans in TensorFlow Lite Micro's own runtime: for every
int8 model of tests/data/tflite, the arena TFLM uses with its own plan, with
memplan's plan (model.planned.tflite, `memplan plan --out`), with memplan's
reordered plans (`--reorder=memory` and `--reorder=optimal`), the lower
bounds `memplan stats` proves in the model's op order and over all op
orders, and the CPU time of reading, planning and writing a model. Prints
a markdown table (README.md, docs/tflite.md):

    .venv/bin/python scripts/tflite_table.py [--tool=.venv/bin/memplan]

Runs in the project's .venv (scripts/install_deps.sh python), which has
TFLM's interpreter (the tflite-micro package). TFLM's "arena" here is the
part of the arena its memory planner lays out (tensors and kernel scratch,
"Arena allocation head" of its RecordingMicroAllocator); the rest (the
persistent "tail": TFLM's own structures) is the same whatever the plan.

python/tests/test_tflite.py uses the helpers below.
"""

import argparse
import copy
import os
import pathlib
import re
import resource
import subprocess
import sys
import tempfile

import numpy as np

try:
    import flatbuffers
    from tflite_micro.python.tflite_micro import runtime
except ImportError as error:
    raise ImportError(
        f"{error}: TFLM's interpreter (the tflite-micro package) is missing;"
        " run `bash scripts/install_deps.sh python`, which installs it into"
        " .venv, and use .venv/bin/python"
    ) from error

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODELS = ROOT / "tests" / "data" / "tflite"
ARENA = 4 << 20  # bytes: room for every model, with any plan
ALIGNMENT = 16  # TFLM's arena alignment
OFFLINE = b"OfflineMemoryAllocation"
schema = runtime.schema_fb
OPCODES = {v: k for k, v in vars(schema.BuiltinOperator).items() if k.isupper()}
TYPE_BYTES = {
    schema.TensorType.INT8: 1,
    schema.TensorType.UINT8: 1,
    schema.TensorType.BOOL: 1,
    schema.TensorType.INT16: 2,
    schema.TensorType.FLOAT16: 2,
    schema.TensorType.INT32: 4,
    schema.TensorType.FLOAT32: 4,
    schema.TensorType.INT64: 8,
}


def model_paths():
    return sorted(MODELS.glob("*.tflite"))


def aligned(size):
    return -(-size // ALIGNMENT) * ALIGNMENT


# --- The flatbuffer, through the schema's object API ---------------------


def unpack(data):
    return runtime.convert_bytearray_to_object(bytearray(data))


def pack(model):
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def opcode(model, op):
    code = model.operatorCodes[op.opcodeIndex]
    return OPCODES[runtime.get_builtin_code_from_operator_code(code)]


def op_types(data):
    model = unpack(data)
    return [opcode(model, op) for op in model.subgraphs[0].operators]


def tensor_bytes(tensor):
    shape = [] if tensor.shape is None else list(tensor.shape)
    return int(np.prod(shape, dtype=np.int64)) * TYPE_BYTES[tensor.type]


def is_constant(model, tensor):
    data = model.buffers[tensor.buffer].data
    return data is not None and len(data) > 0


def offline_offsets(data):
    """The offsets of the model's OfflineMemoryAllocation metadata, one per
    tensor of subgraph 0 (-1: planned by TFLM); None when it has none."""
    model = unpack(data)
    for entry in model.metadata or []:
        if entry.name == OFFLINE:
            raw = model.buffers[entry.buffer].data
            words = np.frombuffer(bytes(raw), dtype="<i4")
            assert list(words[:2]) == [1, 0], words[:3]
            assert words[2] == len(words) - 3, (words[2], len(words))
            return [int(w) for w in words[3:]]
    return None


def with_offline_offsets(data, offsets):
    """The model with `offsets` as its OfflineMemoryAllocation metadata
    (replacing any), written with the schema's object API."""
    model = unpack(data)
    words = np.array([1, 0, len(offsets), *offsets], dtype="<i4")
    buffer = schema.BufferT()
    buffer.data = np.frombuffer(words.tobytes(), dtype=np.uint8)
    model.buffers.append(buffer)
    entry = schema.MetadataT()
    entry.name = OFFLINE
    entry.buffer = len(model.buffers) - 1
    kept = [m for m in model.metadata or [] if m.name != OFFLINE]
    model.metadata = kept + [entry]
    return pack(model)


def single_op_models(data):
    """Every operator of subgraph 0 cut out into a model of its own: yields
    (index, opcode, model bytes, the 16-byte-aligned bytes of its arena
    tensors, all live at once in a one-operator model)."""
    model = unpack(data)
    graph = model.subgraphs[0]
    for index, op in enumerate(graph.operators):
        used = [i for i in [*op.inputs, *op.outputs] if i >= 0]
        keep = sorted(set(used))
        remap = {old: new for new, old in enumerate(keep)}
        one = copy.deepcopy(model)
        sub = one.subgraphs[0]
        sub.tensors = [copy.deepcopy(graph.tensors[i]) for i in keep]
        cut = copy.deepcopy(op)
        cut.inputs = np.array(
            [remap.get(i, -1) for i in op.inputs], dtype=np.int32
        )
        cut.outputs = np.array([remap[i] for i in op.outputs], dtype=np.int32)
        sub.operators = [cut]
        arena = [i for i in keep if not is_constant(model, graph.tensors[i])]
        sub.inputs = np.array(
            [remap[i] for i in arena if i not in op.outputs], dtype=np.int32
        )
        sub.outputs = cut.outputs
        one.metadata = [m for m in one.metadata or [] if m.name != OFFLINE]
        tensors = sum(aligned(tensor_bytes(graph.tensors[i])) for i in arena)
        yield index, opcode(model, op), pack(one), tensors


# --- TFLM's interpreter ---------------------------------------------------


def _captured(action):
    """What `action` writes to file descriptors 1 and 2 (TFLM prints from
    C++, past Python's sys.stdout)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            action()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        sink.seek(0)
        return sink.read().decode(errors="replace")


def interpreter(data):
    return runtime.Interpreter.from_bytes(bytes(data), arena_size=ARENA)


def tflm_arena(data):
    """The bytes TFLM's memory planner lays out for the model (tensors and
    kernel scratch): "Arena allocation head" of print_allocations."""
    tflm = interpreter(data)
    text = _captured(tflm.print_allocations)
    match = re.search(r"Arena allocation head (\d+) bytes", text)
    assert match, f"TFLM printed no arena head:\n{text}"
    return int(match.group(1))


def random_inputs(data, seed):
    """Random values of the model's input types, over their whole range."""
    tflm = interpreter(data)
    rng = np.random.default_rng(seed)
    inputs = []
    for index in range(len(unpack(data).subgraphs[0].inputs)):
        details = tflm.get_input_details(index)
        info = np.iinfo(details["dtype"])
        inputs.append(
            rng.integers(
                info.min,
                info.max,
                details["shape"],
                dtype=details["dtype"],
                endpoint=True,
            )
        )
    return inputs


def tflm_outputs(data, inputs, invocations=2):
    """The model's outputs in TFLM for `inputs`, from the last of
    `invocations` runs (a second run finds the arena as the first left
    it)."""
    tflm = interpreter(data)
    for _ in range(invocations):
        for index, value in enumerate(inputs):
            tflm.set_input(value, index)
        tflm.invoke()
    count = len(unpack(data).subgraphs[0].outputs)
    return [np.array(tflm.get_output(index)) for index in range(count)]


# --- memplan --------------------------------------------------------------


def default_tool():
    return os.environ.get("MEMPLAN_TOOL") or str(
        pathlib.Path(sys.executable).parent / "memplan"
    )


def run_tool(tool, *args):
    """Runs the memplan tool; returns (stdout, CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(
        [tool, *map(str, args)], capture_output=True, text=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (
        after.ru_stime - before.ru_stime
    )
    assert result.returncode == 0, (
        f"memplan {' '.join(map(str, args))} failed"
        f" ({result.returncode}):\n{result.stdout}{result.stderr}"
    )
    return result.stdout, cpu


VARIANTS = {
    "planned": [],
    "memory": ["--reorder=memory"],
    "optimal": ["--reorder=optimal"],
}


def planned_models(tool, path, out_dir):
    """memplan's planned models of `path`: {variant: (bytes, CPU seconds of
    reading, planning and writing)}."""
    out_dir = pathlib.Path(out_dir)
    models = {}
    for variant, flags in VARIANTS.items():
        out = out_dir / f"{path.stem}.{variant}.tflite"
        _, cpu = run_tool(tool, "plan", path, f"--out={out}", *flags)
        models[variant] = out.read_bytes(), cpu
    return models


def lower_bounds(tool, path):
    """(the lower bound in the model's op order; the least peak over all op
    orders where memplan proves it, else its bound over all orders; whether
    proven), from memplan stats."""
    text, _ = run_tool(tool, "stats", path)
    in_order = re.search(r"^lower bound: (\d+)", text, re.M)
    assert in_order, text
    text, _ = run_tool(tool, "stats", path, "--reorder=optimal")
    optimal = re.search(r"proven optimal, (\d+) bytes", text)
    any_order = re.search(r"any op order: at least (\d+)", text)
    assert optimal or any_order, text
    best = optimal or any_order
    return int(in_order.group(1)), int(best.group(1)), bool(optimal)


def row(tool, path, out_dir):
    data = path.read_bytes()
    models = planned_models(tool, path, out_dir)
    in_order, any_order, proven = lower_bounds(tool, path)
    return {
        "model": path.stem,
        "ops": len(op_types(data)),
        "tflm": tflm_arena(data),
        **{v: tflm_arena(m) for v, (m, _) in models.items()},
        "bound": in_order,
        "any_order": any_order,
        "proven": proven,
        "ms": 1000 * models["planned"][1],
        "ms_optimal": 1000 * models["optimal"][1],
    }


def versus(arena, own):
    """An arena, and how it compares with TFLM's own plan."""
    if arena == own:
        return f"{arena}"
    return f"{arena} ({100 * (arena - own) / own:+.1f} %)"


def table(rows):
    lines = [
        "| model | ops | TFLM's own plan | memplan's plan | "
        "--reorder=memory | --reorder=optimal | bound, model's order | "
        "bound, any order | read+plan+write |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        own = r["tflm"]
        proven = "" if r["proven"] else " (bound)"
        lines.append(
            f"| {r['model']} | {r['ops']} | {own} | "
            f"{versus(r['planned'], own)} | {versus(r['memory'], own)} | "
            f"{versus(r['optimal'], own)} | {r['bound']} | "
            f"{r['any_order']}{proven} | "
            f"{r['ms']:.0f} ms ({r['ms_optimal']:.0f} ms optimal) |"
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tool", default=default_tool())
    parser.add_argument("models", nargs="*", type=pathlib.Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as out_dir:
        rows = [
            row(args.tool, p, out_dir) for p in args.models or model_paths()
        ]
    print(
        "TFLM's arena (bytes of tensors and kernel scratch) for each plan,"
        " memplan's lower bounds, and the CPU time of"
        " `memplan plan model.tflite --out=...`:\n"
    )
    print(table(rows))


if __name__ == "__main__":
    main()
