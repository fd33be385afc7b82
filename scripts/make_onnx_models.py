#!/usr/bin/python3
"""Builds the ONNX test models in bench/data/onnx (run by hand; the outputs
are committed).

Needs Debian's python3-torch (1.13), python3-torchvision (0.14) and
python3-onnx (1.12), which made the committed models and which nothing else
of the project uses (apt-get install python3-torch python3-torchvision
python3-onnx): run it with /usr/bin/python3 from the repository root:

    /usr/bin/python3 scripts/make_onnx_models.py

Weights are random (nothing is downloaded) and stripped: every floating-point
initializer of more than 16 elements keeps its name, type and dims but its
data is marked as held in an external file that is not shipped
(`<model>.weights`), so the files stay small and remain valid models; a
planner needs only the dims. Small integer initializers (shape constants)
keep their data: shape inference reads them.
"""

import io
import os
import sys

import onnx
import torch
import torchvision

OUT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "bench", "data", "onnx"
)


def strip_weights(model, weights_file):
    for init in model.graph.initializer:
        elements = 1
        for d in init.dims:
            elements *= d
        floating = init.data_type in (
            onnx.TensorProto.FLOAT,
            onnx.TensorProto.FLOAT16,
            onnx.TensorProto.DOUBLE,
            onnx.TensorProto.BFLOAT16,
        )
        if not floating or elements <= 16:
            continue
        init.ClearField("raw_data")
        init.ClearField("float_data")
        init.ClearField("double_data")
        init.ClearField("int32_data")
        init.data_location = onnx.TensorProto.EXTERNAL
        del init.external_data[:]
        for key, value in (
            ("location", weights_file),
            ("offset", "0"),
            ("length", str(elements * 4)),
        ):
            entry = init.external_data.add()
            entry.key = key
            entry.value = value
    return model


def export(
    module,
    args,
    name,
    opset,
    input_names,
    output_names,
    dynamic_axes=None,
    doc="",
):
    torch.manual_seed(0)
    buffer = io.BytesIO()
    torch.onnx.export(
        module.eval(),
        args,
        buffer,
        opset_version=opset,
        input_names=input_names,
        output_names=output_names,
        dynamic_axes=dynamic_axes,
        do_constant_folding=True,
    )
    model = onnx.load_from_string(buffer.getvalue())
    strip_weights(model, name + ".weights")
    model.doc_string = doc
    path = os.path.join(OUT, name + ".onnx")
    onnx.save(model, path)
    print(
        f"{path}: {len(model.graph.node)} nodes, opset {opset}, "
        f"{os.path.getsize(path)} bytes"
    )


class Views(torch.nn.Module):
    """Convolutions joined by views: Reshape, Flatten, Squeeze, Unsqueeze."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8 * 16 * 16, 10)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        y = y.reshape(1, 8, 256).reshape(1, 8, 16, 16)
        y = torch.relu(self.conv2(y)) + y
        z = torch.flatten(y, 1)
        z = self.fc(z).unsqueeze(0).squeeze(0)
        return torch.sigmoid(z)


class DataDependent(torch.nn.Module):
    """nonzero(): its output's length depends on the data, not on shapes."""

    def forward(self, x):
        y = torch.relu(x)
        return torch.nonzero(y).float() * 2.0


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(
        d_model=64, nhead=4, dim_feedforward=128, dropout=0.0, batch_first=True
    )
    encoder = torch.nn.TransformerEncoder(layer, num_layers=2)
    tokens = torch.randn(2, 10, 64)
    for opset in (13, 14, 15, 16, 17):
        export(
            encoder,
            (tokens,),
            f"transformer_encoder_opset{opset}",
            opset,
            ["tokens"],
            ["encoded"],
            {
                "tokens": {0: "batch", 1: "sequence"},
                "encoded": {0: "batch", 1: "sequence"},
            },
            "torch.nn.TransformerEncoder: 2 layers, d_model 64, 4 heads, "
            "feed-forward 128, batch_first; symbolic batch and sequence",
        )
    image = torch.randn(1, 3, 64, 64)
    resnet = torchvision.models.resnet18(weights=None, num_classes=10)
    for opset in (13, 14, 15, 16, 17):
        export(
            resnet,
            (image,),
            f"resnet18_opset{opset}",
            opset,
            ["image"],
            ["logits"],
            None,
            "torchvision resnet18(weights=None, num_classes=10), 1x3x64x64",
        )
    mobilenet = torchvision.models.mobilenet_v3_small(
        weights=None, num_classes=10
    )
    export(
        mobilenet,
        (image,),
        "mobilenet_v3_small_opset17",
        17,
        ["image"],
        ["logits"],
        {"image": {0: "batch"}, "logits": {0: "batch"}},
        "torchvision mobilenet_v3_small(weights=None, num_classes=10), "
        "batch x3x64x64, symbolic batch",
    )
    export(
        Views(),
        (torch.randn(1, 3, 16, 16),),
        "views",
        13,
        ["x"],
        ["y"],
        None,
        "convolutions joined by Reshape, Flatten, Squeeze, Unsqueeze",
    )
    export(
        DataDependent(),
        (torch.randn(4, 4),),
        "nonzero",
        13,
        ["x"],
        ["y"],
        None,
        "NonZero: an output shape that inference cannot resolve",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
