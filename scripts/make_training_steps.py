#!/usr/bin/env python3
"""Writes bench/data/training_steps/: training steps at the sizes they are
trained at, traced with memplan.torch, and their README.

    .venv/bin/python scripts/make_training_steps.py [OUT_DIR] [--only NAME ...]
    .venv/bin/python scripts/make_training_steps.py --readme  (README alone)

Deterministic: every network is built from seed 0 (torchvision with
weights=None, two transformer stacks of torch.nn modules), random weights,
nothing downloaded. Each graph is written gzipped (NAME.json.gz). The
benchmark times the default planner on each (`memplan_bench
--memplan_targets --benchmark_filter=BM_target_best_training_`).
"""

import argparse
import os

import torch
import torchvision

import memplan
import memplan.torch as mt

VOCAB = 8000
SEQ = 128


def cross_entropy(output):
    output = output.reshape(-1, output.shape[-1])
    target = torch.arange(output.shape[0]) % output.shape[1]
    return torch.nn.functional.cross_entropy(output, target)


class LanguageModel(torch.nn.Module):
    """Token and position embeddings, 12 encoder layers of width 768 (12
    heads, GELU, dropout 0.1), a final layer norm and a linear head:
    GPT-2 small's shape with a causal mask and pre-norm layers, BERT
    base's without (post-norm)."""

    def __init__(self, causal, d=768, heads=12, layers=12):
        super().__init__()
        self.causal = causal
        self.tok = torch.nn.Embedding(VOCAB, d)
        self.pos = torch.nn.Parameter(torch.zeros(SEQ, d))
        layer = torch.nn.TransformerEncoderLayer(
            d,
            heads,
            4 * d,
            dropout=0.1,
            batch_first=True,
            norm_first=causal,
            activation="gelu",
        )
        self.enc = torch.nn.TransformerEncoder(
            layer, layers, enable_nested_tensor=False
        )
        self.norm = torch.nn.LayerNorm(d)
        self.head = torch.nn.Linear(d, VOCAB)

    def forward(self, x):
        h = self.tok(x) + self.pos[: x.shape[1]]
        mask = None
        if self.causal:
            mask = torch.nn.Transformer.generate_square_subsequent_mask(
                x.shape[1]
            )
        h = self.enc(h, mask=mask, is_causal=self.causal)
        return self.head(self.norm(h))


def vision(name):
    return (
        f"torchvision {name}(weights=None), 8x3x224x224",
        lambda: (
            getattr(torchvision.models, name)(weights=None).train(),
            torch.randn(8, 3, 224, 224),
        ),
    )


def language(causal):
    what = "GPT-2 small" if causal else "BERT base"
    return (
        f"{what}-shaped encoder stack (LanguageModel), vocabulary {VOCAB}, "
        f"8x{SEQ} tokens",
        lambda: (
            LanguageModel(causal).train(),
            torch.randint(0, VOCAB, (8, SEQ)),
        ),
    )


# name -> (what, () -> (model, example input))
GRAPHS = {
    f"{model}_train_b8": vision(model)
    for model in (
        "densenet121",
        "efficientnet_b0",
        "mobilenet_v2",
        "convnext_tiny",
        "swin_t",
    )
}
GRAPHS["tx_gpt_small_train"] = language(True)
GRAPHS["tx_bert_base_train"] = language(False)

README = """# Training steps at the sizes they are trained at

Made by `scripts/make_training_steps.py` (PyTorch {torch}, torchvision
{torchvision}; `memplan.torch.trace` with `training=True`: forward,
cross-entropy over every output position, backward, the gradients of every
parameter; train mode, float32, CPU), deterministically: seed 0, random
weights, nothing downloaded. The default planner must plan each in at most
0.1 s of CPU (`memplan_bench --memplan_targets
--benchmark_filter=BM_target_best_training_`, which also times the
training steps of `../training/` and `../order/`).

| graph | ops | tensors | lower bound (bytes) | file | network |
|---|---:|---:|---:|---|---|
{rows}
"""


def path_of(out_dir, name):
    return os.path.join(out_dir, name + ".json.gz")


def make(name, out_dir):
    torch.manual_seed(0)
    model, x = GRAPHS[name][1]()
    traced = mt.trace(
        model, (x,), training=True, loss_fn=cross_entropy, name=name
    )
    memplan.write_graph(traced.graph, path_of(out_dir, name))
    print(name, len(traced.graph.ops), flush=True)


def write_readme(out_dir):
    rows = []
    for name, (what, _) in GRAPHS.items():
        path = path_of(out_dir, name)
        if not os.path.exists(path):
            continue
        graph = memplan.read_graph(path)
        bound = memplan.plan(graph, "naive").lower_bound
        rows.append(
            f"| {name} | {len(graph.ops)} | {len(graph.tensors)} | {bound} | "
            f"`{os.path.basename(path)}` ({os.path.getsize(path) // 1024} "
            f"KiB) | {what} |"
        )
    with open(os.path.join(out_dir, "README.md"), "w") as f:
        f.write(
            README.format(
                torch=torch.__version__.split("+")[0],
                torchvision=torchvision.__version__.split("+")[0],
                rows="\n".join(rows),
            )
        )


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "out_dir",
        nargs="?",
        default=os.path.join(here, "..", "bench", "data", "training_steps"),
    )
    parser.add_argument("--only", nargs="*", choices=list(GRAPHS))
    parser.add_argument("--readme", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.out_dir, exist_ok=True)
    if not args.readme:
        for name in args.only or list(GRAPHS):
            make(name, args.out_dir)
    write_readme(args.out_dir)


if __name__ == "__main__":
    main()
