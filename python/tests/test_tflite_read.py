"""memplan.read_tflite: a TFLite model made here with the flatbuffers
package (TFLite's schema by field index), read, planned and verified."""

import flatbuffers
import pytest

import memplan

pytestmark = pytest.mark.skipif(
    not memplan.HAVE_TFLITE, reason="built without memplan::tflite"
)

INT8, INT32 = 9, 2
MEAN, RESHAPE = 40, 22


def _table(b, fields):
    """A table of (slot, kind, value) fields; kind: "u" offset, "i" int32,
    "b" int8."""
    b.StartObject(max((slot for slot, _, _ in fields), default=-1) + 1)
    for slot, kind, value in fields:
        if kind == "u":
            b.PrependUOffsetTRelativeSlot(slot, value, 0)
        elif kind == "i":
            b.PrependInt32Slot(slot, value, -1)
        else:
            b.PrependInt8Slot(slot, value, -1)
    return b.EndObject()


def _vector(b, kind, values):
    prepend = {
        "u": b.PrependUOffsetTRelative,
        "i": b.PrependInt32,
        "B": b.PrependUint8,
    }[kind]
    b.StartVector(4 if kind != "B" else 1, len(values), 4)
    for value in reversed(values):
        prepend(value)
    return b.EndVector()


def small_model():
    """input [1,4,4,8] -> MEAN(axis) -> [1,8] -> RESHAPE -> output [8]."""
    b = flatbuffers.Builder(1024)
    tensors = []
    for name, shape, kind, buffer in [
        ("input", [1, 4, 4, 8], INT8, 0),
        ("axis", [2], INT32, 1),
        ("mean", [1, 8], INT8, 0),
        ("shape", [1], INT32, 2),
        ("output", [8], INT8, 0),
    ]:
        n = b.CreateString(name)
        s = _vector(b, "i", shape)
        tensors.append(
            _table(
                b, [(0, "u", s), (1, "b", kind), (2, "i", buffer), (3, "u", n)]
            )
        )
    ops = []
    for code, inputs, outputs in [(0, [0, 1], [2]), (1, [2, 3], [4])]:
        i = _vector(b, "i", inputs)
        o = _vector(b, "i", outputs)
        ops.append(_table(b, [(0, "i", code), (1, "u", i), (2, "u", o)]))
    sub = _table(
        b,
        [
            (0, "u", _vector(b, "u", tensors)),
            (1, "u", _vector(b, "i", [0])),
            (2, "u", _vector(b, "i", [4])),
            (3, "u", _vector(b, "u", ops)),
        ],
    )
    codes = [
        _table(b, [(0, "b", op), (2, "i", 1), (3, "i", op)])
        for op in (MEAN, RESHAPE)
    ]
    buffers = [_table(b, [])]
    for data in ([1, 0, 0, 0, 2, 0, 0, 0], [8, 0, 0, 0]):
        buffers.append(_table(b, [(0, "u", _vector(b, "B", data))]))
    model = _table(
        b,
        [
            (0, "i", 3),
            (1, "u", _vector(b, "u", codes)),
            (2, "u", _vector(b, "u", [sub])),
            (4, "u", _vector(b, "u", buffers)),
        ],
    )
    b.Finish(model, file_identifier=b"TFL3")
    return bytes(b.Output())


def test_read_tflite_plans_as_tflm(tmp_path):
    path = tmp_path / "small.tflite"
    path.write_bytes(small_model())
    graph = memplan.read_tflite(path)
    assert graph == memplan.read_tflite(path.read_bytes())
    assert graph == memplan.read_graph(path)
    names = [t.name for t in graph.tensors]
    # Flatbuffer order, then MEAN's scratch: int32 accumulators, the input
    # rank and the axis elements.
    assert names[:5] == ["input", "axis", "mean", "shape", "output"]
    sizes = {t.name: t.size for t in graph.tensors}
    assert sizes["input"] == 128 and sizes["axis"] == 8
    assert [t.size for t in graph.tensors[5:]] == [32, 16, 8]
    kinds = {t.name: t.kind for t in graph.tensors}
    assert kinds["axis"] == "constant" and kinds["output"] == "output"
    assert all(t.alignment == 16 for t in graph.tensors)
    assert [op.type for op in graph.ops] == ["MEAN", "RESHAPE"]
    result = memplan.plan(graph, alignment=16)
    memplan.verify(graph, result)
    # input, mean (RESHAPE's output shares it) and the scratch at MEAN.
    assert result.peak == 128 + 16 + 32 + 16 + 16


def test_read_tflite_bad_files_raise(tmp_path):
    good = small_model()
    with pytest.raises(ValueError, match="too short"):
        memplan.read_tflite(good[:4])
    with pytest.raises(ValueError, match="TFL3"):
        memplan.read_tflite(good[:4] + b"XXXX" + good[8:])
    with pytest.raises(ValueError, match="verifier"):
        memplan.read_tflite(good[: len(good) // 2])
    with pytest.raises(FileNotFoundError):
        memplan.read_tflite(tmp_path / "missing.tflite")
