"""What trace() records: the tensors and ops of a traced graph as they were
at trace time, the dynamic dimensions, and the Traced that holds them with
the memplan graph and the exported graph to run."""

import dataclasses
import typing

import memplan as _memplan

from memplan.torch._common import (
    fetch_attr,
    node_args,
    placeholder_values,
    returned,
    torch_module,
)
from memplan.torch.errors import TraceError


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
    cost: typing.Optional[int] = None  # FLOPs of one run (Op.cost)
    recomputable: bool = False  # pure: may run again (Op.recomputable)


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
        torch = torch_module()
        if isinstance(inputs, torch.Tensor):
            inputs = (inputs,)
        given = dict(zip(self.input_names, inputs))
        values = {}
        for d in self.dynamic_dims:
            value = given.get(d.input)
            if not isinstance(value, torch.Tensor) or value.dim() <= d.dim:
                raise ValueError(
                    f'input "{d.input}" needs a dimension '
                    f"{d.dim} (dim {d.name})"
                )
            size = int(value.shape[d.dim])
            if values.setdefault(d.name, size) != size:
                raise _memplan.DimError(
                    f"dim {d.name} is {values[d.name]} and {size} in the "
                    f'inputs (dimension {d.dim} of "{d.input}")'
                )
        for name, (lo, hi) in self.dims.items():
            if name in values and not lo <= values[name] <= hi:
                raise _memplan.DimError(
                    f'dim "{name}" is {values[name]} in the inputs, outside '
                    f"its range [{lo}, {hi}]"
                )
        return values

    def bind(self, inputs):
        """A symbolic trace at the inputs' sizes: an ordinary Traced,
        recorded again from the exported graph on these inputs (one run),
        whose every tensor must have the size its expression gives at
        these values (TraceError otherwise). A concrete trace is returned
        as it is."""
        torch = torch_module()
        if not self.dims:
            return self
        if isinstance(inputs, torch.Tensor):
            inputs = (inputs,)
        inputs = tuple(inputs)
        values = self.dim_values(inputs)
        from memplan.torch.dims import copy_module  # noqa: PLC0415
        from memplan.torch.record import record  # noqa: PLC0415

        with torch.random.fork_rng(devices=[]):
            bound = record(
                copy_module(self.source),
                self.placeholders,
                self.input_names,
                dict(self.constants),
                inputs,
                self.training,
                self.graph.name,
                self.output_spec,
            )
        expected = {
            t.name: t.size
            for t in _memplan.bind_dims(self.graph, **values).tensors
        }
        got = {t.name: t.size for t in bound.graph.tensors}
        if set(expected) != set(got):
            raise TraceError(
                f"{self.graph.name} at {values} has tensors "
                f"{sorted(set(got) ^ set(expected))[:5]} where the symbolic "
                f"graph has not (or the reverse)"
            )
        for name, size in got.items():
            if size != expected[name] and not (
                name in self.widened and size <= expected[name]
            ):
                symbolic = next(
                    t.symbolic_size
                    for t in self.graph.tensors
                    if t.name == name
                )
                raise TraceError(
                    f'tensor "{name}" of {self.graph.name} has {size} bytes '
                    f"at {values}; its size {symbolic} gives {expected[name]}"
                )
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
        torch = torch_module()
        if self.dims:
            return self.bind(inputs).run(inputs, seed, state)
        values = placeholder_values(self, inputs, state)
        torch.manual_seed(seed)
        env = {}
        it = iter(values)
        for node in self.module.graph.nodes:
            if node.op == "placeholder":
                env[node] = next(it)
            elif node.op == "get_attr":
                env[node] = fetch_attr(self.module, node.target)
            elif node.op == "call_function":
                args, kwargs = node_args(node, env)
                env[node] = node.target(*args, **kwargs)
            elif node.op == "output":
                return returned(self, node_args(node, env)[0][0])
        raise _memplan.Error("the traced graph has no output")
