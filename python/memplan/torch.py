"""memplan.torch: a PyTorch 2 model as a memplan graph, and its plan proven
by running the model inside one arena laid out by the plan.

    import torch, torchvision, memplan, memplan.torch as mt
    model = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 64, 64)
    traced = mt.trace(model, (x,))
    plan = memplan.plan(traced.graph, "greedy_by_size", alignment=64)
    outputs = mt.run_in_arena(traced, plan, (x,))  # raises if a byte is lost

trace() exports the model with torch.export.export and decomposes it to the
core ATen opset (ExportedProgram.run_decompositions); with training=True it
exports one training step, forward, loss and backward, as one joint graph
(torch.export.experimental._export_forward_backward) whose outputs are the
parameters' gradients. The graph signature says which placeholders are
parameters and buffers (constants) and which are the user's inputs. The
graph is then run once on the example inputs, in order, and every tensor is
sized by its storage; a result sharing an earlier tensor's storage (a view)
becomes an alias hint, sized as the bytes of its base that it spans (from
the base's first byte to the view's last).

Core ATen is functional: a buffer update (batch norm's running statistics
and num_batches_tracked in a training step) or a write to an input is a
"mutation" output of the signature. trace() turns each into an
aten.copy_(buffer, new value) step placed right after the last op that needs
the old value, so the graph writes the buffer in place; the arguments an
op's schema marks as written (`alias_info.is_write`: copy_'s `self`) become
the op's `writes`, which keep every op ordering from moving a reader of
those bytes across the write. Ops that draw from the random generator
(dropout; their schema's tag `nondeterministic_seeded`) and those torch.fx
keeps for their side effects are pinned (Op.pinned): every op ordering
keeps them in their traced order, so a reordered run draws the same
numbers. Results of one op that share a new storage
(aten._transform_bias_rescale_qkv's q, k and v) become one tensor for the
storage, made by the op, and views of it, made by a step of type VIEWS_OP
("memplan.views") right after the op.

Sizes are those of the example inputs. A dimension exported as dynamic
(`dynamic_shapes=`) is bound to its example value, with a warning and a
DynamicDim in Traced.dynamic_dims: the plan holds for that size only; unless
trace(..., symbolic=True): then the graph is symbolic (docs/symbolic.md).
Each dynamic dimension becomes a dim of the graph named after its
torch.export.Dim, with the range torch.export allows
(ExportedProgram.range_constraints), and each size the polynomial that the
exported program's symbolic shapes give (storage bytes, and for a view the
bytes of its base it spans, or the base's size when that span is a
difference such as `256*seq - 64`); a size that is not a polynomial with
non-negative integer coefficients (floor division, max, a negative term) is
a TraceError naming the op and the expression. memplan.plan_symbolic plans
it once for the whole range, and run_in_arena(traced, plan.at(seq=N),
inputs) runs it at size N: Traced.bind(inputs) records the program again at
the inputs' sizes and checks that every tensor has the size its expression
gives there. An op
whose output size or value depends on tensor data (aten.nonzero, .item())
and data-dependent control flow (an `if` on a tensor, torch.cond) raise
TraceError naming the op.

run_in_arena() executes the traced graph in the plan's op order
(plan.op_order) with every planned tensor's storage at its planned offset of
one uint8 arena: an op reads its inputs from the arena, a view or in-place op
works on the arena itself, and every new result is copied into the arena at
its planned place. Each live tensor's bytes must stay exactly as its own
writers left them: all of them are compared before the first op and after
the last, and after each op those the op was given and those its results
were copied onto (an op can change no other byte); otherwise it raises
ArenaError naming the overwritten tensor, the op that overwrote it and both
byte ranges.

PyTorch (2.x, with torch.export) is imported when these functions are first
called, not by `import memplan`.
"""

import dataclasses
import operator
import re
import typing
import warnings

import memplan as _memplan


class ArenaError(_memplan.Error):
    """A planned tensor's bytes changed while it was still needed."""


class TraceError(_memplan.Error):
    """The model cannot become one graph of known sizes: an op whose output
    depends on tensor data, or data-dependent control flow."""


# The type of the step trace() adds after an op whose results share a new
# storage: it reads the storage and makes the results, views of it. It runs
# no code.
VIEWS_OP = "memplan.views"


@dataclasses.dataclass
class TensorRecord:
    """One tensor of a traced graph, as it was at trace time."""
    name: str
    kind: str  # "input", "constant", "activation" or "output"
    dtype: typing.Any
    shape: tuple
    stride: tuple
    storage_offset: int  # elements from the start of its storage
    itemsize: int
    storage_bytes: int  # bytes of its storage (the group's buffer)
    size: int  # bytes planned: the storage (a root) or the span (a view)
    root: str  # the tensor whose storage it lives in (itself for a root)
    producer: typing.Optional[int] = None  # op index, None for inputs/constants
    base: typing.Optional[str] = None  # a view: the input whose bytes it spans


@dataclasses.dataclass
class OpRecord:
    """One ATen op of a traced graph, or a VIEWS_OP step (node None)."""
    name: str
    type: str
    node: typing.Any  # the torch.fx node; None for a VIEWS_OP step
    inputs: list  # tensor names read (first occurrence order)
    outputs: list  # tensor names made (new storages and aliases)
    alias: list  # (output index, input index): output shares that input's bytes
    writes: list  # input tensor names the op writes (its schema says so)
    out_names: list  # per flattened result: tensor name or None (not a tensor)
    pinned: bool = False  # a side effect: its order among such ops is kept


@dataclasses.dataclass
class DynamicDim:
    """A dimension exported as dynamic, bound to its example value."""
    input: str  # the input's tensor name
    dim: int
    symbol: str  # torch.export's symbol, e.g. "s77"
    value: int  # the example's size, the one planned
    min: typing.Optional[int] = None  # the range torch.export allows
    max: typing.Optional[int] = None
    name: typing.Optional[str] = None  # symbolic=True: the graph's dim


@dataclasses.dataclass
class Traced:
    """What trace() returns: the memplan graph and how to run it."""
    graph: typing.Any  # memplan.Graph
    module: typing.Any  # torch.fx.GraphModule: the exported graph, as run
    tensors: dict  # name -> TensorRecord
    ops: list  # OpRecord, in execution order
    placeholders: list  # tensor name of every placeholder, in order
    input_names: list  # the example inputs' tensor names, in order
    constants: dict  # name -> the parameter or buffer tensor
    outputs: list  # tensor names of the graph's outputs, flattened
    output_spec: typing.Any  # pytree spec: what run() returns of the outputs
    training: bool
    names: dict  # fx node -> tensor name (a list for multi-output ops)
    exported: typing.Any = None  # the torch.export.ExportedProgram
    dynamic_dims: list = dataclasses.field(default_factory=list)  # DynamicDim
    buffer_writes: dict = dataclasses.field(default_factory=dict)
    # ^ name of a buffer (or input) the graph writes -> the copy_ op writing it
    # symbolic=True: {dim: (min, max)} of the graph; `module` is then the
    # exported graph with its sizes still computed from the inputs, and
    # `tensors` are as recorded at the example inputs.
    dims: dict = dataclasses.field(default_factory=dict)
    values: dict = dataclasses.field(default_factory=dict)
    # ^ a Traced bound by bind(): the dims' values it was recorded at
    source: typing.Any = None
    # ^ symbolic=True: the exported graph with its sizes unbound, which
    #   bind() records again (`module` is bound to the example's sizes)
    widened: set = dataclasses.field(default_factory=set)
    # ^ symbolic=True: views sized as their base (their own span is not a
    #   sum of non-negative terms), no smaller than their span

    def dim_values(self, inputs):
        """{dim: value} of a symbolic trace at these inputs (each dynamic
        dimension's size), checked against the dims' ranges."""
        torch = _torch()
        if isinstance(inputs, torch.Tensor):
            inputs = (inputs,)
        given = dict(zip(self.input_names, inputs))
        values = {}
        for d in self.dynamic_dims:
            value = given.get(d.input)
            if not isinstance(value, torch.Tensor) or value.dim() <= d.dim:
                raise ValueError(f"input \"{d.input}\" needs a dimension "
                                 f"{d.dim} (dim {d.name})")
            size = int(value.shape[d.dim])
            if values.setdefault(d.name, size) != size:
                raise _memplan.DimError(
                    f"dim {d.name} is {values[d.name]} and {size} in the "
                    f"inputs (dimension {d.dim} of \"{d.input}\")")
        for name, (lo, hi) in self.dims.items():
            if name in values and not lo <= values[name] <= hi:
                raise _memplan.DimError(
                    f"dim \"{name}\" is {values[name]} in the inputs, outside "
                    f"its range [{lo}, {hi}]")
        return values

    def bind(self, inputs):
        """A symbolic trace at the inputs' sizes: an ordinary Traced,
        recorded again from the exported graph on these inputs (one run),
        whose every tensor must have the size its expression gives at
        these values (TraceError otherwise). A concrete trace is returned
        as it is."""
        torch = _torch()
        if not self.dims:
            return self
        if isinstance(inputs, torch.Tensor):
            inputs = (inputs,)
        inputs = tuple(inputs)
        values = self.dim_values(inputs)
        with torch.random.fork_rng(devices=[]):
            bound = _record(_copy_module(self.source), self.placeholders,
                            self.input_names, dict(self.constants), inputs,
                            self.training, self.graph.name, self.output_spec)
        expected = {t.name: t.size for t in
                    _memplan.bind_dims(self.graph, **values).tensors}
        got = {t.name: t.size for t in bound.graph.tensors}
        if set(expected) != set(got):
            raise TraceError(
                f"{self.graph.name} at {values} has tensors "
                f"{sorted(set(got) ^ set(expected))[:5]} where the symbolic "
                f"graph has not (or the reverse)")
        for name, size in got.items():
            if size != expected[name] and not (
                    name in self.widened and size <= expected[name]):
                symbolic = next(t.symbolic_size for t in self.graph.tensors
                                if t.name == name)
                raise TraceError(
                    f"tensor \"{name}\" of {self.graph.name} has {size} bytes "
                    f"at {values}; its size {symbolic} gives {expected[name]}")
        bound.exported = self.exported
        bound.buffer_writes = dict(self.buffer_writes)
        bound.values = values
        return bound

    def run(self, inputs, seed=0, state=None):
        """An ordinary run of the traced graph (torch's own memory), with
        the RNG seeded first; returns the outputs. `state` ({name: tensor},
        e.g. copies of `constants`) gives constants in place of fresh
        copies: the graph's buffer writes update those tensors. A symbolic
        trace runs at the inputs' sizes (bind())."""
        torch = _torch()
        if self.dims:
            return self.bind(inputs).run(inputs, seed, state)
        values = _placeholder_values(self, inputs, state)
        torch.manual_seed(seed)
        env = {}
        it = iter(values)
        for node in self.module.graph.nodes:
            if node.op == "placeholder":
                env[node] = next(it)
            elif node.op == "get_attr":
                env[node] = _fetch_attr(self.module, node.target)
            elif node.op == "call_function":
                args, kwargs = _node_args(node, env)
                env[node] = node.target(*args, **kwargs)
            elif node.op == "output":
                return _returned(self, _node_args(node, env)[0][0])
        raise _memplan.Error("the traced graph has no output")


def _torch():
    import torch  # noqa: PLC0415  (imported when first used)
    if not hasattr(torch, "export"):
        raise _memplan.Error(f"memplan.torch needs PyTorch 2 (torch.export); "
                             f"this is torch {torch.__version__}")
    return torch


def _fetch_attr(module, target):
    value = module
    for part in target.split("."):
        value = getattr(value, part)
    return value


def _node_args(node, env):
    from torch.fx.node import map_arg  # noqa: PLC0415
    return (map_arg(node.args, lambda n: env[n]),
            map_arg(node.kwargs, lambda n: env[n]))


def _flatten(value):
    """The leaves of nested tuples and lists, in order."""
    if isinstance(value, (tuple, list)):
        out = []
        for v in value:
            out.extend(_flatten(v))
        return out
    return [value]


def _returned(traced, flat):
    """What a run returns of the graph's flat outputs: the model's output
    structure (inference) or the gradients (training; the loss, last, is an
    output of the graph but not returned)."""
    from torch.utils import _pytree  # noqa: PLC0415
    flat = list(flat)
    return _pytree.tree_unflatten(flat[:traced.output_spec.num_leaves],
                                  traced.output_spec)


def _storage_key(t):
    """Identifies a tensor's storage while it is alive (None: no bytes)."""
    storage = t.untyped_storage()
    if storage.nbytes() == 0:
        return None
    return storage.data_ptr()


def _storage_nbytes(t):
    return t.untyped_storage().nbytes()


def _extent_bytes(t):
    """Bytes from the tensor's first element to one past its last."""
    if t.numel() == 0:
        return 0
    last = sum((s - 1) * st for s, st in zip(t.shape, t.stride()) if s > 0)
    return (last + 1) * t.element_size()


def _placeholder_values(traced, inputs, state=None):
    """Every placeholder's value: fresh copies of the constants (so that
    in-place updates such as batch norm's running statistics do not leak from
    one run into the next) unless `state` has them, and the given inputs,
    checked against the traced shapes and dtypes."""
    torch = _torch()
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    inputs = list(inputs)
    if len(inputs) != len(traced.input_names):
        raise ValueError(f"the traced graph takes {len(traced.input_names)} "
                         f"inputs, got {len(inputs)}")
    given = dict(zip(traced.input_names, inputs))
    for name, value in given.items():
        t = traced.tensors.get(name)
        if t is None:
            continue
        if not isinstance(value, torch.Tensor) or \
                tuple(value.shape) != t.shape or value.dtype != t.dtype:
            got = (f"{tuple(value.shape)} {value.dtype}"
                   if isinstance(value, torch.Tensor) else type(value).__name__)
            bound = [d for d in traced.dynamic_dims if d.input == name]
            note = "".join(f"; dimension {d.dim} ({d.symbol}) was bound to "
                           f"{d.value} when traced" for d in bound)
            raise ValueError(f"input \"{name}\" is {got}, traced as "
                             f"{t.shape} {t.dtype}{note}")
    values = []
    for name in traced.placeholders:
        if name in given:
            values.append(given[name])
        elif state is not None and name in state:
            values.append(state[name])
        else:
            values.append(traced.constants[name].detach().clone())
    return values


def _default_loss(outputs):
    torch = _torch()
    leaves = [o for o in _flatten(outputs)
              if isinstance(o, torch.Tensor) and o.is_floating_point()]
    if not leaves:
        raise ValueError("training=True needs a floating-point output or a "
                         "loss_fn")
    return sum(o.float().pow(2).mean() for o in leaves)


def trace(model, example_inputs, training=False, loss_fn=None, name=None,
          dynamic_shapes=None, symbolic=False):
    """A Traced of the core ATen graph torch.export makes of
    `model(*example_inputs)`.

    training=False: the forward pass; the outputs are the model's.
    training=True: one training step, forward, `loss_fn(output)` (default:
    the mean of the squared outputs) and backward, as one joint graph; the
    outputs are the gradients of the parameters that require them, in
    `model.named_parameters()` order (the loss is a graph output too, not
    returned by runs). The model's train()/eval() mode is used as it is
    (dropout, batch norm and its buffer updates). `dynamic_shapes` is
    torch.export's; each dynamic dimension is bound to its example value
    (a warning, and Traced.dynamic_dims); with symbolic=True the graph
    keeps them as dims instead, named after the torch.export.Dim objects,
    with the ranges torch.export allows (Traced.dims), and its sizes are
    expressions in them. Raises TraceError naming the op when an output
    depends on tensor data, and with symbolic=True when a size is not a
    polynomial with non-negative integer coefficients in the dims.
    """
    torch = _torch()
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    name = name or type(model).__name__
    params = dict(model.named_parameters())
    grad_names = [n for n, p in params.items() if p.requires_grad]
    # Recording the graph seeds the RNG (dropout): the caller's is kept.
    if symbolic and dynamic_shapes is None:
        raise ValueError("trace(..., symbolic=True) needs dynamic_shapes: "
                         "the dimensions to keep symbolic")
    with torch.random.fork_rng(devices=[]):
        ep = _export(model, example_inputs, training, loss_fn, name,
                     dynamic_shapes)
        dim_names = (_dim_names(model, example_inputs, dynamic_shapes)
                     if symbolic else None)
        return _from_exported(ep, example_inputs, training, grad_names, name,
                              dim_names)


class _TrainingStep:
    """Builds the module exported for a training step: the model as the
    submodule "model" and the loss as its only output."""

    PREFIX = "model."

    @staticmethod
    def module(model, loss_fn):
        torch = _torch()

        class TrainingStep(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, *args):
                return ((loss_fn or _default_loss)(self.model(*args)),)

        return TrainingStep()


def _export(model, example_inputs, training, loss_fn, name, dynamic_shapes):
    """The model's ExportedProgram in core ATen (a joint forward and
    backward graph for training); data-dependent control flow is a
    TraceError."""
    torch = _torch()
    from torch.fx.experimental.symbolic_shapes import (  # noqa: PLC0415
        GuardOnDataDependentSymNode)
    module = _TrainingStep.module(model, loss_fn) if training else model
    if dynamic_shapes is not None and training:
        # The step's forward takes *args: the model's arguments, in order,
        # are its one varargs tuple.
        if isinstance(dynamic_shapes, dict):
            dynamic_shapes = dynamic_shapes.values()
        dynamic_shapes = (tuple(dynamic_shapes),)
    try:
        ep = torch.export.export(module, example_inputs,
                                 dynamic_shapes=dynamic_shapes)
        if training:
            from torch.export.experimental import (  # noqa: PLC0415
                _export_forward_backward)
            _check_all_parameters_used(ep, model, name)
            return _export_forward_backward(ep, joint_loss_index=0)
        return ep.run_decompositions()
    except GuardOnDataDependentSymNode as e:
        raise TraceError(_data_dependent_branch(
            name, str(e), str(getattr(e, "partial_fx_graph", "") or ""))) \
            from e


def _check_all_parameters_used(ep, model, name):
    """The joint graph needs a gradient for every parameter that requires
    one: a parameter the step never reads is a TraceError naming it."""
    from torch.export.graph_signature import InputKind  # noqa: PLC0415
    params = dict(model.named_parameters())
    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    for spec in ep.graph_signature.input_specs:
        if spec.kind != InputKind.PARAMETER:
            continue
        target = spec.target[len(_TrainingStep.PREFIX):]
        if params[target].requires_grad and not nodes[spec.arg.name].users:
            raise TraceError(
                f"parameter \"{target}\" of {name} is not used by the "
                f"training step, so it has no gradient: set its "
                f"requires_grad to False")


def _data_dependent_branch(model, message, graph):
    """TraceError's text for torch.export's "could not guard on
    data-dependent expression": the op whose value was branched on (the
    last symbolic value of the graph traced so far) and the model's line,
    as torch's message shows them."""
    ops = re.findall(r"(\w+): \"Sym\([^\n]*\" = torch\.ops\.([\w.]+)\(",
                     graph)
    op = (f"on the result of op \"{ops[-1][0]}\" ({ops[-1][1]})" if ops
          else "on a tensor's value")
    where = re.search(r"The following call raised this error:\n\s*(File "
                      r"[^\n]*)\n\s*([^\n]*)", message)
    at = f" at {where.group(1).strip()}: `{where.group(2).strip()}`" \
        if where else ""
    expr = re.search(r"data-dependent expression ([^\n]*?) \(", message)
    return (f"{model} branches {op}{at}: data-dependent control flow "
            f"(torch.export could not decide "
            f"{expr.group(1) if expr else 'a condition on tensor data'}); a "
            f"plan needs one graph whose sizes are known before the run")


def _check_static(ep, name):
    """TraceError for the first op whose output size or value depends on
    tensor data (an unbacked symbol) and for control-flow ops."""
    torch = _torch()
    from torch.fx.experimental.symbolic_shapes import (  # noqa: PLC0415
        free_unbacked_symbols)
    for node in ep.graph.nodes:
        if node.op != "call_function":
            continue
        if isinstance(node.target, torch._ops.HigherOrderOperator):
            raise TraceError(
                f"op \"{node.name}\" ({node.target}) of {name} runs a "
                f"subgraph chosen or repeated by tensor data (data-dependent "
                f"control flow); a plan needs one graph whose sizes are known "
                f"before the run")
        symbols = free_unbacked_symbols(node.meta.get("val"))
        if symbols:
            what = "value" if not any(
                isinstance(v, torch.Tensor)
                for v in _flatten(node.meta.get("val"))) else "output size"
            raise TraceError(
                f"op \"{node.name}\" ({node.target}) of {name}: its {what} "
                f"depends on tensor data (torch.export gives it the unbacked "
                f"symbol {', '.join(sorted(str(s) for s in symbols))}); a plan "
                f"needs every size before the run")


def _dynamic_dims(ep, user_nodes, input_names, example_inputs):
    """The dynamic dimensions of the user inputs, bound to example values."""
    torch = _torch()
    dims = []
    for node, tname, example in zip(user_nodes, input_names, example_inputs):
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            continue
        for d, size in enumerate(val.shape):
            if not isinstance(size, torch.SymInt):
                continue
            expr = size.node.expr
            bound = ep.range_constraints.get(expr)
            lo = int(bound.lower) if bound is not None else None
            hi = bound.upper if bound is not None else None
            try:  # torch's int_oo when unbounded: no int
                hi = int(hi) if hi is not None and hi.is_finite else None
            except (TypeError, AttributeError, OverflowError):
                hi = None
            dims.append(DynamicDim(input=tname, dim=d, symbol=str(expr),
                                   value=int(example.shape[d]), min=lo,
                                   max=hi))
    return dims


def _dim_names(model, example_inputs, dynamic_shapes):
    """Per example input, {dimension: the torch.export.Dim's name} of its
    dynamic_shapes entry (by the forward's parameter names for a dict)."""
    import inspect  # noqa: PLC0415
    if isinstance(dynamic_shapes, dict):
        try:
            order = list(inspect.signature(model.forward).bind(
                *example_inputs).arguments)
        except (TypeError, ValueError):
            order = list(dynamic_shapes)
        specs = [dynamic_shapes.get(n) for n in order]
    else:
        specs = list(dynamic_shapes)
    out = []
    for spec in specs:
        items = spec.items() if isinstance(spec, dict) else \
            enumerate(spec or ())
        out.append({d: dim.__name__ for d, dim in items
                    if isinstance(getattr(dim, "__name__", None), str) and
                    dim.__name__.isidentifier()})
    return out


def _copy_module(module):
    """A GraphModule of a copy of `module`'s graph (node names and meta
    kept), to record without changing `module`."""
    torch = _torch()
    graph = torch.fx.Graph()
    graph.output(graph.graph_copy(module.graph, {}))
    return torch.fx.GraphModule(module, graph)


def _sym(value):
    """A size, stride or offset of a fake tensor as a sympy expression."""
    torch = _torch()
    import sympy  # noqa: PLC0415
    if isinstance(value, torch.SymInt):
        return value.node.expr
    return sympy.Integer(int(value))


def _last_byte(v):
    """One past the last byte of fake tensor `v`, from its storage's first:
    (storage_offset + extent) * itemsize; symbolic sizes count as >= 1."""
    import sympy  # noqa: PLC0415
    sizes = [_sym(x) for x in v.shape]
    if any(x.is_Integer and x == 0 for x in sizes):
        return sympy.Integer(0)
    extent = 1 + sum(((x - 1) * _sym(st) for x, st in zip(sizes, v.stride())),
                     sympy.Integer(0))
    return (_sym(v.storage_offset()) + extent) * v.element_size()


def _dim_expression(expr, dim_of, what):
    """memplan's text of sympy `expr` in torch's symbols, with each symbol
    renamed by dim_of; TraceError naming `what` unless it is a polynomial
    with non-negative integer coefficients."""
    import sympy  # noqa: PLC0415
    expr = sympy.expand(expr)
    free = sorted(expr.free_symbols, key=str)
    shown = expr.subs({f: sympy.Symbol(dim_of.get(str(f), str(f)))
                       for f in free})
    unknown = [str(f) for f in free if str(f) not in dim_of]
    if unknown:
        raise TraceError(f"{what}: its size {shown} uses the symbol "
                         f"{', '.join(unknown)}, which is no dynamic "
                         f"dimension of the inputs")
    if not free:
        if not expr.is_Integer or expr < 0:
            raise TraceError(f"{what}: its size is {expr}")
        return int(expr)
    if not expr.is_polynomial(*free):
        raise TraceError(f"{what}: its size {shown} is not a polynomial in "
                         f"the dims (floor division, max, ...); memplan "
                         f"sizes are polynomials with integer coefficients")
    terms = []
    for monom, coeff in sympy.Poly(expr, *free).terms():
        if not coeff.is_Integer or coeff < 0:
            raise TraceError(f"{what}: its size {shown} has the term "
                             f"{coeff} (not a non-negative integer "
                             f"coefficient); memplan sizes are sums of "
                             f"non-negative terms")
        terms.append("*".join([str(int(coeff))] + [
            dim_of[str(g)] for g, p in zip(free, monom) for _ in range(p)]))
    return " + ".join(terms)


def _symbolic(module, ep, dynamic, dim_names, placeholders, input_names,
              constants, example_inputs, training, name, spec,
              buffer_writes):
    """The symbolic Traced: recorded at the example, each size the
    polynomial the exported program's fake tensors give, in dims named
    after the user's torch.export.Dim objects."""
    dim_of, dims = {}, {}
    for d in dynamic:
        if not d.symbol.isidentifier():
            continue  # derived (2*seq): an expression in a root dim
        names = dim_names[input_names.index(d.input)] \
            if input_names.index(d.input) < len(dim_names) else {}
        d.name = dim_of.setdefault(d.symbol, names.get(d.dim, d.symbol))
        if d.max is None:
            raise TraceError(
                f"dimension {d.dim} of input \"{d.input}\" (dim {d.name}) "
                f"has no upper bound: give it one, torch.export.Dim("
                f"\"{d.name}\", min=..., max=...)")
        dims[d.name] = (d.min, d.max)
    recorded = _record(_copy_module(module), placeholders, input_names,
                       dict(constants), example_inputs, training, name, spec)
    fake = {}  # tensor name -> its fake value (node.meta["val"])
    for node, tname in recorded.names.items():
        val = node.meta.get("val")
        if val is None:
            continue
        if isinstance(tname, list):
            for leaf, n in zip(_flatten(val), tname):
                if n is not None:
                    fake[n] = leaf
        else:
            fake[tname] = val
    values = {d.symbol: d.value for d in dynamic if d.name is not None}
    sizes, widened = {}, set()
    for t in recorded.tensors.values():
        producer = (f"op \"{recorded.ops[t.producer].name}\"" if
                    t.producer is not None and t.producer < len(recorded.ops)
                    else "an input")
        what = f"tensor \"{t.name}\" of {name} (made by {producer})"
        members = [m for m in recorded.tensors.values() if m.root == t.name]
        if t.name in fake and t.root == t.name:
            expr = _sym(fake[t.name].untyped_storage().nbytes())
        elif t.root == t.name:  # a storage several results share
            leaf = next((fake[m.name] for m in members if m.name in fake),
                        None)
            if leaf is None:
                sizes[t.name] = t.size
                continue
            expr = _sym(leaf.untyped_storage().nbytes())
        elif t.name in fake:
            # As recorded: from the base's first byte (the storage's for a
            # view of a shared storage) to the view's last.
            first = 0
            if t.base is not None:
                base = recorded.tensors[t.base]
                first = (_sym(fake[t.base].storage_offset())
                         if t.base in fake else base.storage_offset) \
                    * base.itemsize
            expr = _last_byte(fake[t.name]) - first
        else:
            sizes[t.name] = t.size
            continue
        try:
            text = _dim_expression(expr, dim_of, what)
        except TraceError:
            if t.base is None or t.base not in sizes:
                raise
            # A view ending before its base's last byte (x[..., :half]):
            # its span is a difference; the base's size holds it.
            sizes[t.name] = sizes[t.base]
            widened.add(t.name)
            continue
        at_example = expr.subs({f: values[str(f)]
                                for f in expr.free_symbols})
        if int(at_example) != t.size:
            raise TraceError(f"{what}: its size {text} is {at_example} at "
                             f"the example, which has {t.size} bytes")
        sizes[t.name] = text
    graph = _make_graph(name, recorded.tensors, recorded.ops, sizes)
    graph.dims = dims
    recorded.graph = graph
    recorded.exported = ep
    recorded.dynamic_dims = [d for d in dynamic if d.name is not None]
    recorded.buffer_writes = buffer_writes
    recorded.dims = dims
    recorded.source = module
    recorded.widened = widened
    return recorded


def _alias_closure(node):
    """`node` and every node whose result may share its bytes: the results
    of ops whose schema returns an alias of an argument (view, expand,
    permute), transitively, and items taken of them."""
    seen, todo = [node], [node]
    while todo:
        for user in todo.pop().users:
            schema = getattr(user.target, "_schema", None)
            views = user.target is operator.getitem or (
                schema is not None and any(
                    r.alias_info is not None and not r.alias_info.is_write
                    for r in schema.returns))
            if views and user not in seen:
                seen.append(user)
                todo.append(user)
    return seen


def _from_exported(ep, example_inputs, training, grad_names, name,
                   dim_names=None):
    """Traced of an ExportedProgram: placeholders named and valued from the
    signature, mutations turned into copy_ writes, then recorded."""
    torch = _torch()
    from torch.export.graph_signature import (  # noqa: PLC0415
        InputKind, OutputKind)
    from torch.utils import _pytree  # noqa: PLC0415
    _check_static(ep, name)
    sig = ep.graph_signature
    prefix = _TrainingStep.PREFIX if training else ""

    def state_name(target):
        return target[len(prefix):] if target.startswith(prefix) else target

    # A copy of the graph to edit; the ExportedProgram stays as exported.
    graph = torch.fx.Graph()
    outs, _ = graph.graph_copy(ep.graph, {}, return_output_node=True)
    out_node = graph.output(outs)
    nodes = {n.name: n for n in graph.nodes}
    flat_inputs = list(example_inputs)
    user_specs = [s for s in sig.input_specs if s.kind == InputKind.USER_INPUT]
    if len(user_specs) != len(flat_inputs):
        raise ValueError(f"{name} was exported with {len(user_specs)} tensor "
                         f"inputs, {len(flat_inputs)} given")
    placeholders, input_names, constants, by_arg = [], [], {}, {}
    n_user = 0
    for spec in sig.input_specs:
        arg = spec.arg.name
        if spec.kind == InputKind.USER_INPUT:
            tname = f"input{n_user}" if len(flat_inputs) > 1 else "input"
            n_user += 1
            input_names.append(tname)
        elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER,
                           InputKind.CONSTANT_TENSOR):
            tname = state_name(spec.target)
            value = ep.state_dict.get(spec.target)
            if value is None:
                value = ep.constants[spec.target]
            constants[tname] = value.detach()
        else:
            raise TraceError(f"input \"{arg}\" of {name} is a {spec.kind.name} "
                             f"({spec.target}), which memplan.torch does not "
                             f"run")
        placeholders.append(tname)
        by_arg[arg] = tname
    # Mutations: buffers (and inputs) the program updates become writes.
    order = {n: i for i, n in enumerate(graph.nodes)}
    returned, grads, loss, buffer_writes = [], {}, None, {}
    arg_of = {s.target: s.arg.name for s in sig.input_specs if s.target}
    for spec, value in zip(sig.output_specs, outs):
        if spec.kind in (OutputKind.BUFFER_MUTATION,
                         OutputKind.USER_INPUT_MUTATION,
                         OutputKind.PARAMETER_MUTATION):
            target = nodes.get(
                spec.target if spec.kind == OutputKind.USER_INPUT_MUTATION
                else arg_of.get(spec.target))
            if target is None or target.op != "placeholder":
                raise TraceError(f"{name} writes \"{spec.target}\" in place "
                                 f"({spec.kind.name}), which is none of its "
                                 f"graph's inputs")
            # After the new value and every reader of the old bytes (the
            # placeholder and its views).
            readers = [u for n in _alias_closure(target) for u in n.users
                       if u is not out_node]
            after = max([value] + readers, key=order.get)
            with graph.inserting_after(after):
                write = graph.call_function(torch.ops.aten.copy_.default,
                                            (target, value))
            order = {n: i for i, n in enumerate(graph.nodes)}
            buffer_writes[by_arg[target.name]] = write.name
        elif spec.kind == OutputKind.GRADIENT_TO_PARAMETER:
            grads[state_name(spec.target)] = value
        elif spec.kind == OutputKind.LOSS_OUTPUT:
            loss = value
        elif spec.kind == OutputKind.USER_OUTPUT:
            returned.append(value)
        else:
            raise TraceError(f"output \"{spec.arg.name}\" of {name} is a "
                             f"{spec.kind.name}, which memplan.torch does not "
                             f"run")
    if training:
        missing = [n for n in grad_names if n not in grads]
        if missing:
            raise TraceError(f"the training step of {name} has no gradient "
                             f"for parameter \"{missing[0]}\"")
        returned = [grads[n] for n in grad_names]
        spec = _pytree.tree_flatten(tuple(returned))[1]
        returned.append(loss)
    else:
        spec = ep.call_spec.out_spec
    out_node.args = (tuple(returned),)
    graph.lint()
    module = torch.fx.GraphModule(ep.graph_module, graph)
    user_nodes = [n for n in graph.nodes if n.op == "placeholder" and
                  n.name in {s.arg.name for s in user_specs}]
    dynamic = _dynamic_dims(ep, user_nodes, input_names, flat_inputs)
    if dim_names is not None:
        return _symbolic(module, ep, dynamic, dim_names, placeholders,
                         input_names, constants, example_inputs, training,
                         name, spec, buffer_writes)
    for d in dynamic:
        warnings.warn(
            f"memplan.torch: dimension {d.dim} of input \"{d.input}\" is "
            f"dynamic ({d.symbol}); it is bound to its example value "
            f"{d.value}: the plan holds for that size only", stacklevel=3)
    traced = _record(module, placeholders, input_names, constants,
                     example_inputs, training, name, spec)
    traced.exported = ep
    traced.dynamic_dims = dynamic
    traced.buffer_writes = buffer_writes
    return traced


def _record(module, placeholders, input_names, constants, example_inputs,
            training, name, output_spec):
    """Runs the graph once, keeping every value alive so that storage
    identity is meaningful, and builds the memplan graph from what it sees.
    Nodes without a tensor result (sizes, asserts) are bound to their
    values and leave the graph."""
    torch = _torch()
    from torch.fx.node import map_arg  # noqa: PLC0415
    tensors = {}
    ops = []
    env = {}  # node -> value
    names = {}  # node -> tensor name, or list of names (multi-output)
    owner = {}  # storage key -> root tensor name
    latest = {}  # root name -> newest tensor name of its group
    used_names = set(placeholders)
    bound = []  # nodes without a tensor result, with their value
    bound_nodes = set()

    def add_tensor(name, t, kind, root, size, producer):
        tensors[name] = TensorRecord(
            name=name, kind=kind, dtype=t.dtype, shape=tuple(t.shape),
            stride=tuple(t.stride()), storage_offset=t.storage_offset(),
            itemsize=t.element_size(), storage_bytes=_storage_nbytes(t),
            size=size, root=root, producer=producer)
        latest[root] = name

    given = dict(zip(input_names, example_inputs))
    torch.manual_seed(0)
    output_value = None
    it = iter(placeholders)
    for node in module.graph.nodes:
        if node.op == "placeholder":
            pname = next(it)
            value = (given[pname] if pname in given else
                     constants[pname].clone()).detach()
            env[node] = value
            names[node] = pname
            kind = "input" if pname in input_names else "constant"
            key = _storage_key(value)
            if key is not None:
                owner.setdefault(key, pname)
            add_tensor(pname, value, kind, pname, _storage_nbytes(value), None)
        elif node.op == "get_attr":
            value = _fetch_attr(module, node.target)
            env[node] = value
            if isinstance(value, torch.Tensor):
                tname = _unique(node.name, used_names)
                names[node] = tname
                constants[tname] = value
                add_tensor(tname, value, "constant", tname,
                           _storage_nbytes(value), None)
        elif node.op == "call_function":
            args, kwargs = _node_args(node, env)
            if node.target is operator.getitem:
                env[node] = args[0][args[1]]
                base = names.get(node.args[0])
                if isinstance(base, list):
                    names[node] = base[node.args[1]]
                elif node.args[0] in bound_nodes:  # an item of a bound value
                    bound.append((node, env[node]))
                    bound_nodes.add(node)
                continue
            value = node.target(*args, **kwargs)
            env[node] = value
            if not any(isinstance(v, torch.Tensor) for v in _flatten(value)):
                bound.append((node, value))
                bound_nodes.add(node)
                continue
            ops.extend(_record_op(node, value, env, names, tensors, owner,
                                  latest, used_names, add_tensor, len(ops)))
        elif node.op == "output":
            output_value = node.args[0]
    # Bound values replace their nodes: the graph keeps tensor ops only.
    for node, value in bound:
        for user in list(node.users):
            user.args = map_arg(user.args,
                                lambda n, node=node, value=value:
                                value if n is node else n)
            user.kwargs = map_arg(user.kwargs,
                                  lambda n, node=node, value=value:
                                  value if n is node else n)
    for node, _ in reversed(bound):
        module.graph.erase_node(node)
    module.recompile()
    # Graph outputs.
    outputs = []
    for leaf in _flatten(output_value):
        if hasattr(leaf, "op") and leaf in names and isinstance(
                names[leaf], str):
            tname = names[leaf]
            if tname not in outputs:
                outputs.append(tname)
            if tensors[tname].kind == "activation":
                tensors[tname].kind = "output"
    graph = _make_graph(name, tensors, ops)
    return Traced(graph=graph, module=module, tensors=tensors, ops=ops,
                  placeholders=list(placeholders),
                  input_names=list(input_names), constants=constants,
                  outputs=outputs, output_spec=output_spec,
                  training=training, names=names)


def _unique(name, used):
    candidate, i = name, 1
    while candidate in used:
        candidate = f"{name}_{i}"
        i += 1
    used.add(candidate)
    return candidate


def _record_op(node, value, env, names, tensors, owner, latest, used_names,
               add_tensor, index):
    torch = _torch()
    op_name = node.name
    # Inputs: every tensor argument, first occurrence first.
    inputs = []
    arg_values = {}
    for arg in _flatten(list(node.args) + list(node.kwargs.values())):
        if hasattr(arg, "op") and isinstance(names.get(arg), str):
            tname = names[arg]
            if tname not in arg_values:
                inputs.append(tname)
                arg_values[tname] = env[arg]
    writes = _written_inputs(node, names)
    outputs, alias, out_names = [], [], []
    leaves = _flatten(value)
    multi = isinstance(value, (tuple, list))
    # Results sharing a storage no earlier tensor has (e.g. the q, k and v of
    # aten._transform_bias_rescale_qkv, three slices of one new tensor): the
    # storage becomes one tensor of its own, made by this op, and the results
    # views of it, made by a step of type VIEWS_OP right after it (alias
    # hints relate an output to an input only).
    new_keys = [_storage_key(leaf) for leaf in leaves
                if isinstance(leaf, torch.Tensor)]
    new_keys = [k for k in new_keys if k is not None and k not in owner]
    shared = {k for k in new_keys if new_keys.count(k) > 1}
    views_op = None
    for k, leaf in enumerate(leaves):
        if not isinstance(leaf, torch.Tensor):
            out_names.append(None)
            continue
        tname = _unique(f"{op_name}.{k}" if multi else op_name, used_names)
        out_names.append(tname)
        key = _storage_key(leaf)
        if key in shared:
            if views_op is None:
                views_op = OpRecord(
                    name=_unique(f"{op_name}.views", used_names),
                    type=VIEWS_OP, node=None, inputs=[], outputs=[],
                    alias=[], writes=[], out_names=[])
            if key not in owner:  # the storage, made by this op
                storage = _unique(f"{op_name}.storage", used_names)
                owner[key] = storage
                nbytes = _storage_nbytes(leaf)
                tensors[storage] = TensorRecord(
                    name=storage, kind="activation", dtype=leaf.dtype,
                    shape=(nbytes // leaf.element_size(),), stride=(1,),
                    storage_offset=0, itemsize=leaf.element_size(),
                    storage_bytes=nbytes, size=nbytes, root=storage,
                    producer=index)
                latest[storage] = storage
                outputs.append(storage)
                views_op.inputs.append(storage)
            storage = owner[key]
            # A view spans its base from the base's first byte (the
            # storage's) to its own last.
            last = leaf.storage_offset() * leaf.element_size() + \
                _extent_bytes(leaf)
            add_tensor(tname, leaf, "activation", storage, last, index + 1)
            views_op.outputs.append(tname)
            views_op.alias.append((len(views_op.outputs) - 1,
                                   views_op.inputs.index(storage)))
            continue
        root = owner.get(key) if key is not None else None
        if root is None:  # a new storage
            if key is not None:
                owner[key] = tname
            add_tensor(tname, leaf, "activation", tname, _storage_nbytes(leaf),
                       index)
            outputs.append(tname)
            continue
        # The result shares the bytes of an existing storage: a view or an
        # in-place write. It aliases the input living in that storage; when
        # no input does (an op returning a tensor it was not given), the
        # group's newest tensor becomes an input of the op.
        j = next((i for i, n in enumerate(inputs)
                  if tensors[n].root == root), None)
        if j is None:
            inputs.append(latest[root])
            arg_values[latest[root]] = None
            j = len(inputs) - 1
        base = tensors[inputs[j]]
        first = base.storage_offset * base.itemsize
        last = leaf.storage_offset() * leaf.element_size() + _extent_bytes(leaf)
        add_tensor(tname, leaf, "activation", root, max(0, last - first), index)
        tensors[tname].base = inputs[j]
        outputs.append(tname)
        alias.append((len(outputs) - 1, j))
    names[node] = out_names if multi else out_names[0]
    record = OpRecord(name=op_name, type=str(node.target), node=node,
                      inputs=inputs, outputs=outputs, alias=alias,
                      writes=writes, out_names=out_names,
                      pinned=_side_effect(node))
    return [record] if views_op is None else [record, views_op]


def _written_inputs(node, names):
    """Tensor names of the arguments the op's schema marks as written
    (alias_info.is_write: `self` of copy_ and of any in-place op, an `out=`
    argument), the graph's Op.writes. Core ATen is functional: in a traced
    graph these are the copy_ steps trace() adds for buffer and input
    mutations."""
    schema = getattr(node.target, "_schema", None)
    if schema is None:
        return []
    written = []
    for i, arg in enumerate(schema.arguments):
        if arg.alias_info is None or not arg.alias_info.is_write:
            continue
        if i < len(node.args):
            value = node.args[i]
        else:
            value = node.kwargs.get(arg.name)
        for leaf in _flatten(value):
            if hasattr(leaf, "op") and isinstance(names.get(leaf), str):
                written.append(names[leaf])
    return written


def _side_effect(node):
    """Whether the op has an effect beyond its results that its place among
    other such ops decides: a draw from the random generator (its schema's
    tag nondeterministic_seeded: dropout, rand, bernoulli), or a function
    torch.fx keeps for its side effects (asserts, profiler ranges). Such
    ops become pinned in the graph, so that a reordered run draws the same
    random numbers in the same order. Writes to a tensor are Op.writes."""
    torch = _torch()
    from torch.fx.node import _side_effectful_functions  # noqa: PLC0415
    if node.target in _side_effectful_functions:
        return True
    tags = getattr(node.target, "tags", ())
    return torch.Tag.nondeterministic_seeded in tags


def _write_indices(op):
    """The op's Op.writes: indices into its inputs, each once."""
    out = []
    for n in op.writes:
        j = op.inputs.index(n) if n in op.inputs else None
        if j is not None and j not in out:
            out.append(j)
    return out


def _make_graph(name, tensors, ops, sizes=None):
    """The memplan graph; `sizes` ({name: expression text}) gives the
    symbolic sizes (such tensors have no fixed shape)."""
    mp = _memplan
    graph_tensors = []
    for t in tensors.values():
        dtype = str(t.dtype).replace("torch.", "")
        if sizes and isinstance(sizes.get(t.name), str):
            graph_tensors.append(mp.Tensor(
                t.name, sizes[t.name], kind=t.kind, alignment=t.itemsize,
                dtype=dtype))
            continue
        graph_tensors.append(mp.Tensor(
            t.name, t.size, kind=t.kind, alignment=t.itemsize,
            shape=list(t.shape), dtype=dtype))
    graph_ops = [mp.Op(o.name, o.inputs, o.outputs, type=o.type,
                       alias=o.alias, writes=_write_indices(o),
                       pinned=o.pinned) for o in ops]
    # Constants and inputs no op reads would only be planned as dead bytes.
    read = {n for o in ops for n in o.inputs}
    graph_tensors = [t for t in graph_tensors
                     if t.kind not in ("constant", "input") or t.name in read]
    return mp.Graph(name=name, tensors=graph_tensors, ops=graph_ops)


@dataclasses.dataclass
class _Group:
    """The tensors living in one storage: one planned buffer."""
    root: str
    members: list
    start: int = 0  # arena byte of the storage's first byte
    nbytes: int = 0
    first: int = -1  # step of its first write (-1: before the first op)
    last_use: int = -1  # step of its last reader (len(ops): an output)
    planned: bool = False

    def span(self):
        return f"[{self.start}, {self.start + self.nbytes})"


def _groups(traced, plan, order):
    """The storage groups of `traced` with their place in the arena, checked
    against the plan: every tensor of a storage at the same place. Steps
    (first, last_use) count in `order`, the op order run."""
    placed = plan.tensors
    pool_base, total = {}, 0
    for pool, used in zip(plan.problem.pools, plan.pool_used):
        pool_base[pool.name] = total
        total += used
    groups = {}
    for t in traced.tensors.values():
        groups.setdefault(t.root, _Group(root=t.root, members=[]))
        groups[t.root].members.append(t.name)
    n_ops = len(traced.ops)
    step_of = {i: step for step, i in enumerate(order)}
    for step, i in enumerate(order):
        for n in traced.ops[i].inputs:
            g = groups[traced.tensors[n].root]
            g.last_use = max(g.last_use, step)
    for name in traced.outputs:
        groups[traced.tensors[name].root].last_use = n_ops
    for g in groups.values():
        root = traced.tensors[g.root]
        g.nbytes = root.storage_bytes
        g.first = -1 if root.producer is None else step_of[root.producer]
        where = {placed[m] for m in g.members if m in placed}
        in_plan = [m for m in g.members if m in placed]
        if not in_plan:
            continue
        if len(in_plan) != len(g.members) or len(where) != 1:
            raise ValueError(
                f"the plan does not keep the tensors of one storage together: "
                f"{', '.join(g.members)} (placed: "
                f"{', '.join(f'{m}={placed.get(m)}' for m in g.members)})")
        pool, offset = where.pop()
        g.planned = True
        g.start = pool_base[pool] + offset
        buffer = plan.buffer(g.root)
        if buffer["size"] < g.nbytes:
            raise ValueError(
                f"the plan gives tensor \"{g.root}\" {buffer['size']} bytes, "
                f"its storage has {g.nbytes}")
    return groups, total


def _plan_order(traced, plan):
    """The op order `plan` was made for (plan.op_order), checked against
    the traced ops."""
    n = len(traced.ops)
    order = list(getattr(plan, "op_order", None) or range(n))
    if sorted(order) != list(range(n)):
        raise ValueError(f"the plan's op order has {len(order)} steps, not "
                         f"a permutation of the {n} traced ops")
    return order


def run_in_arena(traced, plan, inputs, seed=0, state=None):
    """Runs `traced` in the plan's op order (plan.op_order: the traced order
    unless the plan was made with `reorder`) with every tensor the plan
    places inside one uint8 arena at its planned offset (pools laid one
    after another), checking that each live tensor's bytes are exactly as
    its own writers left them: all of them before the first op and after
    the last, and after each op those it was given and those its results
    were copied onto (an op changes no other byte). Returns the outputs
    (copies, structured as the model's, or the gradients of a training
    step); raises ArenaError naming the overwritten tensor, the op that
    overwrote it and both byte ranges (arena bytes), and whether the plan's
    order differs from the traced one. `state` is Traced.run's: constants
    the plan leaves out of the arena (the default) are those tensors,
    updated by the graph's buffer writes."""
    torch = _torch()
    if traced.dims:  # symbolic: recorded again at the inputs' sizes
        traced = traced.bind(inputs)
    order = _plan_order(traced, plan)
    reordered = order != list(range(len(order)))
    groups, total = _groups(traced, plan, order)
    arena = torch.zeros(total + 64, dtype=torch.uint8)
    base_ptr = arena.data_ptr()
    typed = {}
    for g in groups.values():
        if g.planned and g.start + g.nbytes > total:
            raise ValueError(f"tensor \"{g.root}\" at bytes {g.span()} lies "
                             f"outside the plan's {total} bytes")

    def orders_note(step):
        if not reordered:
            return ""
        i = order[step] if step < len(order) else None
        where = (f": step {step} runs op \"{traced.ops[i].name}\", traced "
                 f"at step {i}" if i is not None else "")
        return (f" (the plan's op order differs from the traced order"
                f"{where})")

    def arena_tensor(name, shape, stride):
        t = traced.tensors[name]
        g = groups[t.root]
        if t.dtype not in typed:
            usable = (arena.numel() // t.itemsize) * t.itemsize
            typed[t.dtype] = arena[:usable].view(t.dtype)
        offset = g.start + t.storage_offset * t.itemsize
        if offset % t.itemsize:
            raise ValueError(f"tensor \"{name}\" ({t.dtype}) would start at "
                             f"arena byte {offset}, not a multiple of "
                             f"{t.itemsize}: plan with alignment")
        return torch.as_strided(typed[t.dtype], shape, stride,
                                offset // t.itemsize)

    def storage_bytes(value, t, g, op):
        """The bytes of `value`'s storage that the traced storage of `t`
        held: from t.storage_offset elements before its first element.
        (aten.copy returns a new storage as large as its `self`'s, which in
        the arena is the whole arena: only the traced part is planned.)"""
        start = (value.storage_offset() - t.storage_offset) * t.itemsize
        whole = torch.empty(0, dtype=torch.uint8).set_(value.untyped_storage())
        if start < 0 or start + g.nbytes > whole.numel():
            raise ArenaError(
                f"op \"{op.name}\" ({op.type}) returned tensor \"{t.name}\" "
                f"at element {value.storage_offset()} of a storage of "
                f"{whole.numel()} bytes; traced at element "
                f"{t.storage_offset} of {g.nbytes}")
        return whole[start:start + g.nbytes]

    snapshots = {}  # root -> the bytes its writers left (live groups)
    taken = []  # roots snapshotted since the last check

    def snapshot(g):
        snapshots[g.root] = arena[g.start:g.start + g.nbytes].clone()
        taken.append(g.root)

    # The state before step s is the state after step s - 1 (nothing runs in
    # between), so each state is compared once: after step s - 1, every
    # tensor read at step s - 1 or later, which includes all those step s
    # needs.
    def check(step, op, wrote, given=None):
        """Every live group whose bytes were written must still hold them.
        An op changes no arena byte but those of the tensors it is given
        (`given`: their roots) and those its results are copied to (the
        groups snapshotted since the last check): after an op those groups
        and every live group overlapping the latter are compared; with
        given=None every live group is."""
        for root in [r for r in snapshots if groups[r].last_use < step]:
            del snapshots[root]  # dead: its bytes may change
        spans = [(groups[r].start, groups[r].start + groups[r].nbytes)
                 for r in taken]
        taken.clear()
        if given is None:
            suspects = list(snapshots)
        else:
            suspects = [r for r, g in ((r, groups[r]) for r in snapshots)
                        if r in given or any(
                            s < g.start + g.nbytes and g.start < e
                            for s, e in spans)]
        for root in suspects:
            saved = snapshots[root]
            g = groups[root]
            now = arena[g.start:g.start + g.nbytes]
            if _same_bytes(now, saved):
                continue
            first = int((now != saved).nonzero()[0]) + g.start
            views = [m for m in g.members if m != g.root]
            who = f"tensor \"{g.root}\"" + (
                f" (with its views {', '.join(views[:5])}"
                f"{', ...' if len(views) > 5 else ''})" if views else "")
            if op is None:
                when = (f"before op {step}" if step < len(order)
                        else "by the end of the run")
                raise ArenaError(f"{who} at arena bytes {g.span()} changed "
                                 f"{when} (first changed byte "
                                 f"{first}){orders_note(step)}")
            hits = [(n, s, e) for n, s, e in wrote
                    if s < g.start + g.nbytes and g.start < e]
            by = "; ".join(f"wrote tensor \"{n}\" at arena bytes [{s}, {e})"
                           for n, s, e in (hits or wrote)) or "wrote nothing planned"
            needed = (f"read by op \"{traced.ops[order[g.last_use]].name}\""
                      if g.last_use < len(traced.ops) else "a graph output")
            raise ArenaError(
                f"{who} at arena bytes {g.span()} (still {needed}) "
                f"was overwritten by op \"{op.name}\" ({op.type}), which "
                f"{by}; first changed byte {first}{orders_note(step)}")

    values = _placeholder_values(traced, inputs, state)
    torch.manual_seed(seed)
    env = {}
    it = iter(zip(traced.placeholders, values))

    def place_input(name, value):
        g = groups[traced.tensors[name].root]
        if not g.planned:
            return value
        dst = arena_tensor(name, value.shape, traced.tensors[name].stride)
        dst.copy_(value)
        snapshot(g)
        return dst

    def take_items(node):
        """The getitem nodes of `node`'s result, now that it exists."""
        for user in node.users:
            if user.op == "call_function" and user.target is operator.getitem:
                args, _ = _node_args(user, env)
                env[user] = args[0][args[1]]
                take_items(user)

    nodes = list(traced.module.graph.nodes)
    for node in nodes:
        if node.op == "placeholder":
            name, value = next(it)
            env[node] = place_input(name, value) if name in traced.tensors \
                else value
        elif node.op == "get_attr":
            value = _fetch_attr(traced.module, node.target)
            name = traced.names.get(node)
            if isinstance(value, torch.Tensor) and name in traced.tensors:
                value = place_input(name, value.detach().clone())
            env[node] = value
            take_items(node)
    check(0, None, [])  # the inputs as placed
    for step, i in enumerate(order):
        op = traced.ops[i]
        node = op.node
        if node is None:
            continue  # a VIEWS_OP step changes no byte
        try:
            args, kwargs = _node_args(node, env)
        except KeyError as e:
            raise ValueError(
                f"op \"{op.name}\" needs the result of \"{e.args[0]}\", which "
                f"the plan's op order has not run yet{orders_note(step)}") \
                from None
        args, kwargs = _arena_storage_offset(node, op, args, kwargs, groups,
                                             traced.tensors)
        value = node.target(*args, **kwargs)
        wrote = []
        for n in op.writes:
            g = groups[traced.tensors[n].root]
            if g.planned:
                snapshot(g)
                wrote.append((n, g.start, g.start + g.nbytes))
        leaves = _flatten(value)
        placed_leaves = []
        for leaf, name in zip(leaves, op.out_names):
            if name is None or not groups[traced.tensors[name].root].planned:
                placed_leaves.append(leaf)
                continue
            t = traced.tensors[name]
            g = groups[t.root]
            if t.root == name or t.root in op.outputs:
                # A new storage (the result's own, or one several results
                # share): its bytes go to the arena, once.
                if t.root not in (w[0] for w in wrote):
                    arena[g.start:g.start + g.nbytes].copy_(
                        storage_bytes(leaf, t, g, op))
                    snapshot(g)
                    wrote.append((t.root, g.start, g.start + g.nbytes))
                leaf = arena_tensor(name, leaf.shape, leaf.stride())
            else:  # a view or in-place result: already in the arena
                want = base_ptr + g.start + t.storage_offset * t.itemsize
                if leaf.data_ptr() != want:
                    raise ArenaError(
                        f"op \"{op.name}\" ({op.type}) returned tensor "
                        f"\"{name}\" at arena byte "
                        f"{leaf.data_ptr() - base_ptr}, traced as a view "
                        f"at byte {want - base_ptr}{orders_note(step)}")
            placed_leaves.append(leaf)
        env[node] = _rebuild(value, iter(placed_leaves))
        take_items(node)
        check(step, op, wrote,
              {traced.tensors[n].root for n in op.inputs})
    check(len(order), None, [])  # the outputs, and every byte once more
    output = next(n for n in reversed(nodes) if n.op == "output")
    try:
        result = _node_args(output, env)[0][0]
    except KeyError as e:
        raise ValueError(f"the graph's output needs \"{e.args[0]}\", which "
                         f"the plan's op order never ran") from None
    copies = [v.clone() if isinstance(v, torch.Tensor) else v
              for v in _flatten(result)]
    return _returned(traced, copies)


def _arena_storage_offset(node, op, args, kwargs, groups, tensors):
    """as_strided's storage_offset counts from the first element of its
    input's storage; in the arena that storage is the arena, so an explicit
    offset moves by where the input's storage starts in it."""
    torch = _torch()
    aten = torch.ops.aten
    if node.target not in (aten.as_strided.default, aten.as_strided_.default):
        return args, kwargs
    if not op.inputs or not groups[tensors[op.inputs[0]].root].planned:
        return args, kwargs
    t = tensors[op.inputs[0]]
    shift = groups[t.root].start // t.itemsize
    if len(args) > 3 and args[3] is not None:
        args = (*args[:3], args[3] + shift, *args[4:])
    elif kwargs.get("storage_offset") is not None:
        kwargs = dict(kwargs, storage_offset=kwargs["storage_offset"] + shift)
    return args, kwargs


def _same_bytes(a, b):
    """a == b, byte for byte (uint8 tensors of one length); compared as int64
    where possible, which is several times faster."""
    torch = _torch()
    n = (a.numel() // 8) * 8
    if n and (a.data_ptr() % 8 == 0) and (b.data_ptr() % 8 == 0):
        if not torch.equal(a[:n].view(torch.int64), b[:n].view(torch.int64)):
            return False
        return torch.equal(a[n:], b[n:])
    return torch.equal(a, b)


def _rebuild(value, leaves):
    """`value`'s structure of tuples and lists with the next leaves."""
    if isinstance(value, tuple):
        return tuple(_rebuild(v, leaves) for v in value)
    if isinstance(value, list):
        return [_rebuild(v, leaves) for v in value]
    return next(leaves)


def pytorch_peak(traced, inputs, seed=0):
    """Bytes PyTorch's CPU allocator holds at most while running `traced`
    eagerly (each value freed after its last use, as eager mode does),
    counting the inputs and not the constants: the same tensors a plan
    places, plus whatever workspace the kernels allocate. Measured with the
    profiler's memory events; None when they are unavailable."""
    torch = _torch()
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415
    values = _placeholder_values(traced, inputs)
    last_use = {}
    nodes = list(traced.module.graph.nodes)
    for i, node in enumerate(nodes):
        for arg in _flatten(list(node.args) + list(node.kwargs.values())):
            if hasattr(arg, "op"):
                last_use[arg] = i
    input_bytes = sum(_storage_nbytes(v) for v, n in
                      zip(values, traced.placeholders)
                      if n in traced.input_names)
    torch.manual_seed(seed)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        env = {}
        it = iter(values)
        for i, node in enumerate(nodes):
            if node.op == "placeholder":
                env[node] = next(it)
            elif node.op == "get_attr":
                env[node] = _fetch_attr(traced.module, node.target)
            elif node.op == "call_function":
                args, kwargs = _node_args(node, env)
                env[node] = node.target(*args, **kwargs)
                del args, kwargs
            elif node.op == "output":
                break
            for arg in _flatten(list(node.args) + list(node.kwargs.values())):
                if hasattr(arg, "op") and last_use.get(arg) == i and \
                        arg.op == "call_function":
                    env.pop(arg, None)
        del env
    try:
        events = [e for e in prof.profiler.kineto_results.events()
                  if e.name() == "[memory]"]
    except AttributeError:
        return None
    if not events:
        return None
    events.sort(key=lambda e: e.start_ns())
    now = peak = 0
    for e in events:
        now += e.nbytes()
        peak = max(peak, now)
    return input_bytes + peak


def report(traced, plan=None, inputs=None, seed=0):
    """What the trace and plan amount to, as a dict: ops, tensors, alias
    hints (views and in-place writes), tensors merged into another's buffer,
    buffers, and with a plan its peak, lower bound and naive total; with
    inputs also PyTorch's own peak for the same step (pytorch_peak())."""
    out = {
        "name": traced.graph.name,
        "ops": len(traced.ops),
        "tensors": len(traced.graph.tensors),
        "alias_hints": sum(len(o.alias) for o in traced.ops),
        "constants": sum(1 for t in traced.graph.tensors
                         if t.kind == "constant"),
    }
    if plan is not None:
        buffers = plan.buffers
        out.update({
            "planner": plan.planner,
            "buffers": len(buffers),
            "views_merged": sum(len(b["tensors"]) - 1 for b in buffers),
            "peak": plan.peak,
            "lower_bound": plan.lower_bound,
            "naive_total": plan.naive_total,
            "proven_optimal": plan.proven_optimal,
        })
    if inputs is not None:
        out["pytorch_peak"] = pytorch_peak(traced, inputs, seed)
    return out


def format_report(info):
    """report()'s dict as a few lines of text."""
    lines = [f"{info['name']}: {info['ops']} ops, {info['tensors']} tensors "
             f"({info['constants']} constants), {info['alias_hints']} alias "
             f"hints (views and in-place writes)"]
    if "peak" in info:
        lines.append(
            f"{info['planner']}: {info['buffers']} buffers "
            f"({info['views_merged']} tensors merged into another's buffer), "
            f"peak {info['peak']} bytes, lower bound {info['lower_bound']}, "
            f"naive total {info['naive_total']}"
            f"{', proven optimal' if info['proven_optimal'] else ''}")
    if info.get("pytorch_peak"):
        ratio = (f" (plan: {info['peak'] / info['pytorch_peak']:.2f}x)"
                 if "peak" in info else "")
        lines.append(f"PyTorch's allocator peak for the same step: "
                     f"{info['pytorch_peak']} bytes{ratio}")
    return "\n".join(lines)
