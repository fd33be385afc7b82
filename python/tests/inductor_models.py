"""The models memplan.inductor is proven on (test_inductor.py) and measured
on (scripts/inductor_table.py): small inputs, random weights, seeded."""

import dataclasses

import torch
import torchvision

DECODER_MAX = 1024
DECODER_SIZES = (1, 7, 64, 500, DECODER_MAX)


def assert_close(actual, expected):
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-4)


@dataclasses.dataclass
class Entry:
    build: object  # () -> (model, inputs)
    training: bool = False

    def make(self):
        torch.manual_seed(0)
        return self.build()

    def run(self, model, inputs, compiled=True):
        fn = torch.compile(model) if compiled else model
        if not self.training:
            with torch.no_grad():
                return fn(*inputs)
        model.zero_grad(set_to_none=True)
        loss = fn(*inputs).square().mean()
        loss.backward()
        return [loss.detach()] + [p.grad for p in model.parameters()]

    def eager(self):
        model, inputs = self.make()
        return self.run(model, inputs, compiled=False)


def vision(name):
    def build():
        model = getattr(torchvision.models, name)(weights=None).eval()
        return model, (torch.randn(1, 3, 64, 64),)

    return build


def gelu(x):
    return torch.nn.functional.gelu(x)


def encoder():
    # A Python activation keeps the layers off PyTorch's fused fast path, so
    # that Inductor compiles (and pools) the encoder's own ops.
    layer = torch.nn.TransformerEncoderLayer(
        d_model=64,
        nhead=4,
        dim_feedforward=128,
        dropout=0.0,
        activation=gelu,
        batch_first=True,
    )
    model = torch.nn.TransformerEncoder(
        layer, num_layers=2, enable_nested_tensor=False
    ).eval()
    return model, (torch.randn(2, 32, 64),)


class InPlace(torch.nn.Module):
    """In-place ops on intermediates: relu_, mul_, add_, a slice written."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(64, 256)
        self.b = torch.nn.Linear(256, 64)

    def forward(self, x):
        y = self.a(x)
        y.relu_()
        y.mul_(2.0)
        y[:, :64].add_(x)
        z = self.b(y)
        z.sigmoid_()
        return z.add_(x)


def inplace():
    return InPlace().eval(), (torch.randn(16, 64),)


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1),
            torch.nn.BatchNorm2d(16),
            torch.nn.ReLU(),
            torch.nn.Conv2d(16, 32, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1),
        )
        self.head = torch.nn.Linear(32, 10)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def training():
    return SmallCnn().train(), (torch.randn(4, 3, 32, 32),)


class Block(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(d, 4 * d),
            torch.nn.GELU(),
            torch.nn.Linear(4 * d, d),
        )

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (
            t.view(b, n, self.heads, d // self.heads).transpose(1, 2)
            for t in (q, k, v)
        )
        scores = (q @ k.transpose(-2, -1)) * (d // self.heads) ** -0.5
        mask = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (scores @ v).transpose(1, 2).reshape(b, n, d)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


class Decoder(torch.nn.Module):
    """GPT-like: token and position embeddings, causal blocks, a head."""

    def __init__(self, vocab=128, d=64, heads=4, layers=2):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, d)
        self.pos = torch.nn.Embedding(DECODER_MAX, d)
        self.blocks = torch.nn.Sequential(
            *[Block(d, heads) for _ in range(layers)]
        )
        self.ln = torch.nn.LayerNorm(d)
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, idx):
        n = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(n, device=idx.device))
        return self.head(self.ln(self.blocks(x)))


def decoder_input(n):
    gen = torch.Generator().manual_seed(n)
    return torch.randint(0, 128, (1, n), generator=gen)


def decoder():
    return Decoder().eval(), (decoder_input(64),)


class DecoderEntry(Entry):
    def compile(self, model):
        compiled = torch.compile(model, dynamic=True)

        def call(x):
            if x.shape[1] > 1:
                torch._dynamo.mark_dynamic(x, 1, min=2, max=DECODER_MAX)
            with torch.no_grad():
                return compiled(x)

        return call


STATIC = {
    "resnet50": Entry(vision("resnet50")),
    "mobilenet_v3_large": Entry(vision("mobilenet_v3_large")),
    "efficientnet_b0": Entry(vision("efficientnet_b0")),
    "densenet121": Entry(vision("densenet121")),
    "transformer_encoder": Entry(encoder),
    "inplace": Entry(inplace),
    "training_step": Entry(training, training=True),
}
DECODER = DecoderEntry(decoder)
