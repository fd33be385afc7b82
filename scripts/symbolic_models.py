"""The models of the symbolic execution check
(python/tests/test_symbolic_execution.py) and of bench/data/symbolic/
(scripts/make_symbolic_graphs.py): a transformer
encoder and a small Llama-style decoder, random weights from a fixed seed,
traced with a dynamic sequence length in [1, 2048]."""

import math

import torch

MAX_SEQ = 2048
D_MODEL = 64
HEADS = 2
LAYERS = 2
VOCAB = 256


class Encoder(torch.nn.Module):
    """torch.nn.TransformerEncoder, 2 layers of width 64, batch first."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(
            D_MODEL,
            HEADS,
            dim_feedforward=2 * D_MODEL,
            dropout=0.0,
            batch_first=True,
        )
        self.encoder = torch.nn.TransformerEncoder(
            layer, LAYERS, enable_nested_tensor=False
        )

    def forward(self, x):
        return self.encoder(x)


class RMSNorm(torch.nn.Module):
    def __init__(self, width, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(width))
        self.eps = eps

    def forward(self, x):
        return (
            x
            * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
            * self.weight
        )


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(torch.nn.Module):
    """Causal self-attention with rotary position embedding."""

    def __init__(self):
        super().__init__()
        self.head = D_MODEL // HEADS
        self.q = torch.nn.Linear(D_MODEL, D_MODEL, bias=False)
        self.k = torch.nn.Linear(D_MODEL, D_MODEL, bias=False)
        self.v = torch.nn.Linear(D_MODEL, D_MODEL, bias=False)
        self.o = torch.nn.Linear(D_MODEL, D_MODEL, bias=False)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape

        def heads(t):
            return t.view(b, s, HEADS, self.head).transpose(1, 2)

        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head)
        mask = torch.full((s, s), float("-inf")).triu(1)
        weights = torch.softmax(scores + mask, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(b, s, D_MODEL)
        return self.o(out)

    def step(self, x, cos, sin, k_cache, v_cache):
        """One new token x (1, 1, D_MODEL) at position `past` (the caches'
        length) attending to the caches and itself; returns the output and
        the caches grown by one."""

        def heads(t):
            return t.view(1, 1, HEADS, self.head).transpose(1, 2)

        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        keys = torch.cat((k_cache, k), dim=2)
        values = torch.cat((v_cache, v), dim=2)
        scores = q @ keys.transpose(-2, -1) / math.sqrt(self.head)
        out = (torch.softmax(scores, dim=-1) @ values).transpose(1, 2)
        return self.o(out.reshape(1, 1, D_MODEL)), keys, values


class SwiGLU(torch.nn.Module):
    def __init__(self):
        super().__init__()
        hidden = 3 * D_MODEL
        self.gate = torch.nn.Linear(D_MODEL, hidden, bias=False)
        self.up = torch.nn.Linear(D_MODEL, hidden, bias=False)
        self.down = torch.nn.Linear(hidden, D_MODEL, bias=False)

    def forward(self, x):
        return self.down(torch.nn.functional.silu(self.gate(x)) * self.up(x))


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attention_norm = RMSNorm(D_MODEL)
        self.attention = Attention()
        self.mlp_norm = RMSNorm(D_MODEL)
        self.mlp = SwiGLU()

    def forward(self, x, cos, sin):
        x = x + self.attention(self.attention_norm(x), cos, sin)
        return x + self.mlp(self.mlp_norm(x))

    def step(self, x, cos, sin, k_cache, v_cache):
        h, keys, values = self.attention.step(
            self.attention_norm(x), cos, sin, k_cache, v_cache
        )
        x = x + h
        return x + self.mlp(self.mlp_norm(x)), keys, values


class LlamaDecoder(torch.nn.Module):
    """Token ids (1, seq) -> logits (1, seq, VOCAB): embedding, LAYERS
    blocks (RMSNorm, rotary causal attention, SwiGLU MLP), RMSNorm, head."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, D_MODEL)
        self.blocks = torch.nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = RMSNorm(D_MODEL)
        self.head = torch.nn.Linear(D_MODEL, VOCAB, bias=False)
        half = D_MODEL // HEADS // 2
        inverse = 1.0 / (10000 ** (torch.arange(half).float() / half))
        angles = torch.outer(torch.arange(MAX_SEQ).float(), inverse)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())

    def forward(self, tokens):
        s = tokens.shape[1]
        cos, sin = self.cos[:s], self.sin[:s]
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.head(self.norm(x))


class LlamaDecoderStep(torch.nn.Module):
    """One decoding step of LlamaDecoder with a KV cache: token (1, 1) at
    position `cache` and the caches (LAYERS, 1, HEADS, cache, D_MODEL //
    HEADS) of keys and values -> logits (1, 1, VOCAB) and the caches grown
    to cache + 1."""

    def __init__(self, decoder):
        super().__init__()
        self.decoder = decoder

    def forward(self, token, k_cache, v_cache):
        d = self.decoder
        past = k_cache.shape[3]
        cos, sin = d.cos[past : past + 1], d.sin[past : past + 1]
        x = d.embed(token)
        keys, values = [], []
        for i, block in enumerate(d.blocks):
            x, k, v = block.step(x, cos, sin, k_cache[i], v_cache[i])
            keys.append(k)
            values.append(v)
        return (d.head(d.norm(x)), torch.stack(keys), torch.stack(values))


def encoder():
    torch.manual_seed(0)
    return Encoder().eval()


def llama_decoder():
    torch.manual_seed(0)
    return LlamaDecoder().eval()


def llama_decoder_step():
    return LlamaDecoderStep(llama_decoder()).eval()


def kv_inputs(cache, seed=1):
    """A token and random caches of length `cache`."""
    generator = torch.Generator().manual_seed(seed)
    shape = (LAYERS, 1, HEADS, cache, D_MODEL // HEADS)
    return (
        torch.randint(0, VOCAB, (1, 1), generator=generator),
        torch.randn(shape, generator=generator),
        torch.randn(shape, generator=generator),
    )


def encoder_input(seq, seed=1):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(1, seq, D_MODEL, generator=generator)


def llama_input(seq, seed=1):
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, VOCAB, (1, seq), generator=generator)


def trace_encoder(mt, example_seq=64):
    """The encoder traced with seq in [1, MAX_SEQ], symbolic."""
    seq = torch.export.Dim("seq", min=1, max=MAX_SEQ)
    return mt.trace(
        encoder(),
        (encoder_input(example_seq),),
        name="transformer_encoder",
        dynamic_shapes={"x": {1: seq}},
        symbolic=True,
    )


def trace_llama(mt, example_seq=64):
    seq = torch.export.Dim("seq", min=1, max=MAX_SEQ)
    return mt.trace(
        llama_decoder(),
        (llama_input(example_seq),),
        name="llama_decoder",
        dynamic_shapes={"tokens": {1: seq}},
        symbolic=True,
    )


def trace_llama_kv(mt, example_cache=64):
    """The decoding step traced with the cache length in [1, MAX_SEQ - 1]
    (the new token's position indexes the rotary tables)."""
    cache = torch.export.Dim("cache", min=1, max=MAX_SEQ - 1)
    return mt.trace(
        llama_decoder_step(),
        kv_inputs(example_cache),
        name="llama_decoder_kv",
        dynamic_shapes={
            "token": None,
            "k_cache": {3: cache},
            "v_cache": {3: cache},
        },
        symbolic=True,
    )
