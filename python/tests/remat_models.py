"""The three training steps rematerialization is proven and measured on:
a CNN with batch norm, a transformer and a U-Net, small enough that a
training step runs in a second on a CPU, and large enough that
activations, not weights and gradients, make most of the peak of the
transformer and the U-Net. Random weights from seed 0,
nothing downloaded, no dropout (the random draws stay in one order).

Each factory returns (model, example_inputs, loss_fn), the model in
train() mode."""

import torch
import torchvision

VOCAB = 256
SEQ = 128


def cross_entropy(output):
    output = output.reshape(-1, output.shape[-1])
    target = torch.arange(output.shape[0]) % output.shape[1]
    return torch.nn.functional.cross_entropy(output, target)


def mean_square(output):
    return output.float().pow(2).mean()


def cnn_bn():
    """torchvision's resnet18 (batch norm, whose running statistics the
    step updates) on 4 images of 96x96."""
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None, num_classes=10)
    x = torch.randn(4, 3, 96, 96)
    return model.train(), (x,), cross_entropy


class LanguageModel(torch.nn.Module):
    """Token and position embeddings, 2 pre-norm causal encoder layers of
    width 64 (4 heads, GELU), a final layer norm and a linear head."""

    def __init__(self, d=64, heads=4, layers=2):
        super().__init__()
        self.tok = torch.nn.Embedding(VOCAB, d)
        self.pos = torch.nn.Parameter(torch.zeros(SEQ, d))
        layer = torch.nn.TransformerEncoderLayer(
            d,
            heads,
            4 * d,
            dropout=0.0,
            batch_first=True,
            norm_first=True,
            activation="gelu",
        )
        self.enc = torch.nn.TransformerEncoder(
            layer, layers, enable_nested_tensor=False
        )
        self.norm = torch.nn.LayerNorm(d)
        self.head = torch.nn.Linear(d, VOCAB)

    def forward(self, x):
        mask = torch.nn.Transformer.generate_square_subsequent_mask(x.shape[1])
        h = self.tok(x) + self.pos[: x.shape[1]]
        return self.head(self.norm(self.enc(h, mask=mask, is_causal=True)))


def transformer():
    """LanguageModel on 8 sequences of 128 tokens: the attention scores,
    not the weights, make most of its peak."""
    torch.manual_seed(0)
    model = LanguageModel()
    x = torch.randint(0, VOCAB, (8, SEQ))
    return model.train(), (x,), cross_entropy


def _conv_block(cin, cout):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class UNet(torch.nn.Module):
    """Three levels (8, 16, 32 channels) and a 64-channel bottom: two 3x3
    convolutions with batch norm per level, max pooling down, transposed
    convolutions up, the skip connections concatenated."""

    def __init__(self, channels=(8, 16, 32, 64), cin=3, cout=2):
        super().__init__()
        nn = torch.nn
        self.down = nn.ModuleList()
        c = cin
        for w in channels[:-1]:
            self.down.append(_conv_block(c, w))
            c = w
        self.bottom = _conv_block(c, channels[-1])
        self.up = nn.ModuleList()
        self.merge = nn.ModuleList()
        c = channels[-1]
        for w in reversed(channels[:-1]):
            self.up.append(nn.ConvTranspose2d(c, w, 2, stride=2))
            self.merge.append(_conv_block(2 * w, w))
            c = w
        self.head = nn.Conv2d(c, cout, 1)

    def forward(self, x):
        skips = []
        for block in self.down:
            x = block(x)
            skips.append(x)
            x = torch.nn.functional.max_pool2d(x, 2)
        x = self.bottom(x)
        for up, merge, skip in zip(self.up, self.merge, reversed(skips)):
            x = merge(torch.cat([up(x), skip], dim=1))
        return self.head(x)


def unet():
    """UNet on 2 images of 64x64."""
    torch.manual_seed(0)
    model = UNet()
    x = torch.randn(2, 3, 64, 64)
    return model.train(), (x,), mean_square


MODELS = {"cnn_bn": cnn_bn, "transformer": transformer, "unet": unet}
