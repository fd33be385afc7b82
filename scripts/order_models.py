"""Networks whose op order matters, built deterministically with torch.nn:
irregularly wired ones (RandWire-, NASNet- and DARTS-style cells, each
wired from a seed) and a U-Net. Random weights, nothing downloaded. Used by
scripts/make_order_graphs.py (bench/data/order) and, at a tiny size, by
python/tests/test_reordered_execution.py.

Every cell computes its nodes in index order, as the Python code of such a
network does, so a tracer records them in that order: the order a memory
scheduler may improve on.
"""

import random

import torch
from torch import nn


class SepConv(nn.Module):
    """ReLU, depthwise k x k, pointwise 1 x 1, batch norm (NAS cells' op)."""

    def __init__(self, channels, kernel=3, stride=1, dilation=1):
        super().__init__()
        pad = dilation * (kernel - 1) // 2
        self.op = nn.Sequential(
            nn.ReLU(),
            nn.Conv2d(
                channels,
                channels,
                kernel,
                stride,
                pad,
                dilation=dilation,
                groups=channels,
                bias=False,
            ),
            nn.Conv2d(channels, channels, 1, bias=False),
            nn.BatchNorm2d(channels),
        )

    def forward(self, x):
        return self.op(x)


# ---------------------------------------------------------------------------
# RandWire (Xie et al. 2019): a Watts-Strogatz small world per stage.


def watts_strogatz(nodes, k, p, rng):
    """Predecessor lists of a WS(nodes, k, p) graph made acyclic by pointing
    every edge from the lower index to the higher."""
    edges = set()
    for i in range(nodes):
        for d in range(1, k // 2 + 1):
            a, b = i, (i + d) % nodes
            free = any(
                c != a and (min(a, c), max(a, c)) not in edges
                for c in range(nodes)
            )
            if rng.random() < p and free:
                b = rng.randrange(nodes)
                while b == a or (min(a, b), max(a, b)) in edges:
                    b = rng.randrange(nodes)
            edges.add((min(a, b), max(a, b)))
    pred = [[] for _ in range(nodes)]
    for a, b in sorted(edges):
        pred[b].append(a)
    return pred


class RandWireStage(nn.Module):
    """One stage: a node sums its predecessors with learnt positive weights
    (sigmoid), then ReLU, separable conv, batch norm. Nodes without a
    predecessor read the stage input (stride 2); the output is the mean of
    the nodes without a successor."""

    def __init__(self, c_in, c_out, nodes, rng, k=4, p=0.75):
        super().__init__()
        self.pred = watts_strogatz(nodes, k, p, rng)
        succ = {a for ps in self.pred for a in ps}
        self.sinks = [i for i in range(nodes) if i not in succ]
        # A node without predecessors has no weight to learn.
        self.weights = nn.ParameterList(
            [
                nn.Parameter(
                    torch.zeros(max(1, len(ps))), requires_grad=bool(ps)
                )
                for ps in self.pred
            ]
        )
        self.ops = nn.ModuleList()
        for ps in self.pred:
            first = not ps
            self.ops.append(
                nn.Sequential(
                    nn.ReLU(),
                    nn.Conv2d(
                        c_in if first else c_out,
                        c_in if first else c_out,
                        3,
                        2 if first else 1,
                        1,
                        groups=c_in if first else c_out,
                        bias=False,
                    ),
                    nn.Conv2d(c_in if first else c_out, c_out, 1, bias=False),
                    nn.BatchNorm2d(c_out),
                )
            )

    def forward(self, x):
        out = []
        for i, ps in enumerate(self.pred):
            if not ps:
                y = x
            else:
                w = torch.sigmoid(self.weights[i])
                y = out[ps[0]] * w[0]
                for j, p in enumerate(ps[1:], 1):
                    y = y + out[p] * w[j]
            out.append(self.ops[i](y))
        y = out[self.sinks[0]]
        for s in self.sinks[1:]:
            y = y + out[s]
        return y / len(self.sinks)


class RandWire(nn.Module):
    """RandWire's small regime: a stem, then `stages` random stages of
    `nodes` nodes, channels doubling per stage; a classifier."""

    def __init__(self, seed, stages=3, nodes=32, channels=16, classes=10):
        super().__init__()
        rng = random.Random(seed)
        self.stem = nn.Sequential(
            nn.Conv2d(3, channels, 3, 2, 1, bias=False),
            nn.BatchNorm2d(channels),
        )
        blocks, c = [], channels
        for s in range(stages):
            blocks.append(RandWireStage(c, channels << (s + 1), nodes, rng))
            c = channels << (s + 1)
        self.stages = nn.Sequential(*blocks)
        self.head = nn.Sequential(
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(c, classes),
        )

    def forward(self, x):
        return self.head(self.stages(self.stem(x)))


# ---------------------------------------------------------------------------
# NASNet- and DARTS-style cells: two inputs (the previous two cells'
# outputs), intermediate nodes each the sum of two ops on earlier nodes,
# the output the concatenation of intermediate nodes. Genotypes drawn from
# the seed (random search over the space, as NAS baselines do).

NASNET_OPS = ["sep3", "sep5", "avg3", "max3", "skip"]
DARTS_OPS = ["sep3", "sep5", "dil3", "dil5", "avg3", "max3", "skip"]


def make_op(name, channels, stride):
    if name == "sep3":
        return SepConv(channels, 3, stride)
    if name == "sep5":
        return SepConv(channels, 5, stride)
    if name == "dil3":
        return SepConv(channels, 3, stride, dilation=2)
    if name == "dil5":
        return SepConv(channels, 5, stride, dilation=2)
    if name == "avg3":
        return nn.AvgPool2d(3, stride, 1, count_include_pad=False)
    if name == "max3":
        return nn.MaxPool2d(3, stride, 1)
    if name == "skip":
        if stride == 1:
            return nn.Identity()
        return nn.Sequential(
            nn.ReLU(),
            nn.Conv2d(channels, channels, 1, stride, bias=False),
            nn.BatchNorm2d(channels),
        )
    raise ValueError(name)


def random_genotype(rng, ops, nodes, style):
    """Per intermediate node two (op, input) pairs. NASNet: inputs any
    earlier state, the output concatenates the states nobody used. DARTS:
    two distinct earlier states, the output concatenates every intermediate
    node."""
    genotype = []
    for n in range(nodes):
        states = n + 2
        if style == "darts":
            inputs = rng.sample(range(states), 2)
        else:
            inputs = [rng.randrange(states), rng.randrange(states)]
        genotype.append([(rng.choice(ops), i) for i in inputs])
    if style == "darts":
        concat = list(range(2, nodes + 2))
    else:
        used = {i for pairs in genotype for _, i in pairs}
        concat = [s for s in range(2, nodes + 2) if s not in used]
    return genotype, concat


class ReLUConvBN(nn.Module):
    def __init__(self, c_in, c_out, stride=1):
        super().__init__()
        self.op = nn.Sequential(
            nn.ReLU(),
            nn.Conv2d(c_in, c_out, 1, stride, bias=False),
            nn.BatchNorm2d(c_out),
        )

    def forward(self, x):
        return self.op(x)


class Cell(nn.Module):
    def __init__(
        self, genotype, concat, c_pp, c_p, channels, reduction, reduction_prev
    ):
        super().__init__()
        self.pre0 = ReLUConvBN(c_pp, channels, 2 if reduction_prev else 1)
        self.pre1 = ReLUConvBN(c_p, channels)
        self.genotype, self.concat = genotype, concat
        self.ops = nn.ModuleList()
        for pairs in genotype:
            for name, i in pairs:
                self.ops.append(
                    make_op(name, channels, 2 if reduction and i < 2 else 1)
                )

    def forward(self, s0, s1):
        states = [self.pre0(s0), self.pre1(s1)]
        k = 0
        for pairs in self.genotype:
            (_, a), (_, b) = pairs
            h = self.ops[k](states[a]) + self.ops[k + 1](states[b])
            k += 2
            states.append(h)
        return torch.cat([states[i] for i in self.concat], dim=1)


class CellNetwork(nn.Module):
    """A stem and `cells` cells (reduction at a third and two thirds), the
    normal and the reduction genotype drawn from `seed`."""

    def __init__(
        self, seed, style, cells=5, channels=8, nodes=None, classes=10
    ):
        super().__init__()
        rng = random.Random(seed)
        ops = DARTS_OPS if style == "darts" else NASNET_OPS
        nodes = nodes or (4 if style == "darts" else 5)
        normal = random_genotype(rng, ops, nodes, style)
        reduce = random_genotype(rng, ops, nodes, style)
        c_stem = 3 * channels
        self.stem = nn.Sequential(
            nn.Conv2d(3, c_stem, 3, 1, 1, bias=False), nn.BatchNorm2d(c_stem)
        )
        c_pp, c_p, c = c_stem, c_stem, channels
        self.cells = nn.ModuleList()
        reduction_prev = False
        for i in range(cells):
            reduction = i in (cells // 3, 2 * cells // 3) and cells >= 3
            if reduction:
                c *= 2
            genotype, concat = reduce if reduction else normal
            self.cells.append(
                Cell(genotype, concat, c_pp, c_p, c, reduction, reduction_prev)
            )
            reduction_prev = reduction
            c_pp, c_p = c_p, c * len(concat)
        self.head = nn.Sequential(
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c_p, classes)
        )

    def forward(self, x):
        s0 = s1 = self.stem(x)
        for cell in self.cells:
            s0, s1 = s1, cell(s0, s1)
        return self.head(s1)


# ---------------------------------------------------------------------------
# U-Net (Ronneberger et al. 2015): skip connections held across the
# encoder and decoder.


def double_conv(c_in, c_out):
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, padding=1, bias=False),
        nn.BatchNorm2d(c_out),
        nn.ReLU(),
        nn.Conv2d(c_out, c_out, 3, padding=1, bias=False),
        nn.BatchNorm2d(c_out),
        nn.ReLU(),
    )


class UNet(nn.Module):
    def __init__(self, channels=16, depth=4, classes=2):
        super().__init__()
        self.down = nn.ModuleList()
        c_in = 3
        for d in range(depth):
            self.down.append(double_conv(c_in, channels << d))
            c_in = channels << d
        self.bottom = double_conv(c_in, c_in * 2)
        self.up = nn.ModuleList()
        self.merge = nn.ModuleList()
        c = c_in * 2
        for d in reversed(range(depth)):
            self.up.append(nn.ConvTranspose2d(c, channels << d, 2, 2))
            self.merge.append(double_conv(2 * (channels << d), channels << d))
            c = channels << d
        self.out = nn.Conv2d(c, classes, 1)

    def forward(self, x):
        skips = []
        for block in self.down:
            x = block(x)
            skips.append(x)
            x = nn.functional.max_pool2d(x, 2)
        x = self.bottom(x)
        for up, merge, skip in zip(self.up, self.merge, reversed(skips)):
            x = merge(torch.cat([up(x), skip], dim=1))
        return self.out(x)


def irregular(kind, seed, **sizes):
    """The irregularly wired network `kind` ("randwire", "nasnet",
    "darts") of `seed`, weights seeded too, in eval mode."""
    torch.manual_seed(seed)
    if kind == "randwire":
        model = RandWire(seed, **sizes)
    else:
        model = CellNetwork(seed, kind, **sizes)
    return model.eval()
