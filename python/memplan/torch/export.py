"""Export: a model as the core ATen graph torch.export makes of it (a joint
forward and backward graph for a training step), its signature's
placeholders named and valued, its mutations turned into copy_ writes, then
recorded (memplan.torch.record) or made symbolic (memplan.torch.dims)."""

import re
import warnings

from memplan import _fx_rules

import memplan.torch.dims as _dims
import memplan.torch.record as _record
from memplan.torch._common import (
    flatten,
    torch_module,
    training_step_module,
)
from memplan.torch.errors import TraceError


def _default_loss(outputs):
    torch = torch_module()
    leaves = [
        o
        for o in flatten(outputs)
        if isinstance(o, torch.Tensor) and o.is_floating_point()
    ]
    if not leaves:
        raise ValueError(
            "training=True needs a floating-point output or a " "loss_fn"
        )
    return sum(o.float().pow(2).mean() for o in leaves)


def trace(
    model,
    example_inputs,
    training=False,
    loss_fn=None,
    name=None,
    dynamic_shapes=None,
    symbolic=False,
    functional=False,
):
    """A Traced of the core ATen graph torch.export makes of
    `model(*example_inputs)`.

    training=False: the forward pass; the outputs are the model's.
    training=True: one training step, forward, `loss_fn(output)` (default:
    the mean of the squared outputs) and backward, as one joint graph; the
    outputs are the gradients of the parameters that require them, in
    `model.named_parameters()` order (the loss is a graph output too, not
    returned by runs). The model's train()/eval() mode is used as it is
    (dropout, batch norm and its buffer updates); a training step's
    scaled dot product attention is exported on the math backend (torch's
    joint graph of the fused CPU kernel computes wrong gradients).
    `dynamic_shapes` is
    torch.export's; each dynamic dimension is bound to its example value
    (a warning, and Traced.dynamic_dims); with symbolic=True the graph
    keeps them as dims instead, named after the torch.export.Dim objects,
    with the ranges torch.export allows (Traced.dims), and its sizes are
    expressions in them. Raises TraceError naming the op when an output
    depends on tensor data, and with symbolic=True when a size is not a
    polynomial with non-negative integer coefficients in the dims.

    functional=True (with training=True): the step as torch.compile's
    AOTAutograd builds it for its partitioner instead (memplan.torch.joint):
    functionalized (no in-place op but the buffer updates), with Inductor's
    decompositions, dead code eliminated and common subexpressions merged;
    the start for rematerialize(). Fixed sizes only; torch.compile's caches
    are reset; a step torch.compile cannot compile as one graph is a
    TraceError.
    """
    torch = torch_module()
    if functional:
        return _trace_functional(
            model,
            example_inputs,
            training,
            loss_fn,
            name,
            dynamic_shapes,
            symbolic,
        )
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    name = name or type(model).__name__
    params = dict(model.named_parameters())
    grad_names = [n for n, p in params.items() if p.requires_grad]
    # Recording the graph seeds the RNG (dropout): the caller's is kept.
    if symbolic and dynamic_shapes is None:
        raise ValueError(
            "trace(..., symbolic=True) needs dynamic_shapes: "
            "the dimensions to keep symbolic"
        )
    with torch.random.fork_rng(devices=[]):
        ep = _export(
            model, example_inputs, training, loss_fn, name, dynamic_shapes
        )
        dim_names = (
            _dims.dim_names(model, example_inputs, dynamic_shapes)
            if symbolic
            else None
        )
        return _from_exported(
            ep, example_inputs, training, grad_names, name, dim_names
        )


def _trace_functional(
    model, example_inputs, training, loss_fn, name, dynamic_shapes, symbolic
):
    """trace(..., functional=True): memplan.torch.joint's trace."""
    torch = torch_module()
    from memplan.torch.joint import trace_joint  # noqa: PLC0415

    if not training:
        raise ValueError(
            "functional=True traces a training step: pass training=True"
        )
    if symbolic or dynamic_shapes is not None:
        raise ValueError(
            "functional=True traces fixed sizes: drop dynamic_shapes and "
            "symbolic"
        )
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    return trace_joint(
        model, tuple(example_inputs), loss_fn or _default_loss, name
    )


class _TrainingStep:
    """Builds the module exported for a training step: the model as the
    submodule "model" and the loss as its only output."""

    PREFIX = "model."

    @staticmethod
    def module(model, loss_fn):
        return training_step_module(
            model, loss_fn or _default_loss, as_tuple=True
        )


def _export(model, example_inputs, training, loss_fn, name, dynamic_shapes):
    """The model's ExportedProgram in core ATen (a joint forward and
    backward graph for training); data-dependent control flow is a
    TraceError."""
    torch = torch_module()
    from torch.fx.experimental.symbolic_shapes import (  # noqa: PLC0415
        GuardOnDataDependentSymNode,
    )

    module = _TrainingStep.module(model, loss_fn) if training else model
    if dynamic_shapes is not None and training:
        # The step's forward takes *args: the model's arguments, in order,
        # are its one varargs tuple.
        if isinstance(dynamic_shapes, dict):
            dynamic_shapes = dynamic_shapes.values()
        dynamic_shapes = (tuple(dynamic_shapes),)
    try:
        # A training step's attention runs on the math backend: torch's
        # joint graph pairs the decomposed forward of the fused CPU
        # attention with the fused kernel's backward, whose gradients are
        # then wrong (off by up to 8 on remat_models.transformer). The
        # math backend's forward and backward are ATen ops that agree
        # with eager autograd.
        with _attention_backend(torch, training):
            ep = torch.export.export(
                module, example_inputs, dynamic_shapes=dynamic_shapes
            )
            if training:
                from torch.export.experimental import (  # noqa: PLC0415
                    _export_forward_backward,
                )

                _check_all_parameters_used(ep, model, name)
                return _export_forward_backward(ep, joint_loss_index=0)
        return ep.run_decompositions()
    except GuardOnDataDependentSymNode as e:
        raise TraceError(
            _data_dependent_branch(
                name, str(e), str(getattr(e, "partial_fx_graph", "") or "")
            )
        ) from e


def _attention_backend(torch, training):
    """The context a model is exported in: scaled dot product attention
    on its math backend for a training step, as it is otherwise."""
    import contextlib  # noqa: PLC0415

    if not training:
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: PLC0415

    return sdpa_kernel(SDPBackend.MATH)


def _check_all_parameters_used(ep, model, name):
    """The joint graph needs a gradient for every parameter that requires
    one: a parameter the step never reads is a TraceError naming it."""
    from torch.export.graph_signature import InputKind  # noqa: PLC0415

    params = dict(model.named_parameters())
    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    for spec in ep.graph_signature.input_specs:
        if spec.kind != InputKind.PARAMETER:
            continue
        target = spec.target[len(_TrainingStep.PREFIX) :]
        if params[target].requires_grad and not nodes[spec.arg.name].users:
            raise TraceError(
                f'parameter "{target}" of {name} is not used by the '
                f"training step, so it has no gradient: set its "
                f"requires_grad to False"
            )


def _data_dependent_branch(model, message, graph):
    """TraceError's text for torch.export's "could not guard on
    data-dependent expression": the op whose value was branched on (the
    last symbolic value of the graph traced so far) and the model's line,
    as torch's message shows them."""
    ops = re.findall(r"(\w+): \"Sym\([^\n]*\" = torch\.ops\.([\w.]+)\(", graph)
    op = (
        f'on the result of op "{ops[-1][0]}" ({ops[-1][1]})'
        if ops
        else "on a tensor's value"
    )
    where = re.search(
        r"The following call raised this error:\n\s*(File "
        r"[^\n]*)\n\s*([^\n]*)",
        message,
    )
    at = (
        f" at {where.group(1).strip()}: `{where.group(2).strip()}`"
        if where
        else ""
    )
    expr = re.search(r"data-dependent expression ([^\n]*?) \(", message)
    return (
        f"{model} branches {op}{at}: data-dependent control flow "
        f"(torch.export could not decide "
        f"{expr.group(1) if expr else 'a condition on tensor data'}); a "
        f"plan needs one graph whose sizes are known before the run"
    )


def _check_static(ep, name):
    """TraceError for the first op whose output size or value depends on
    tensor data (an unbacked symbol) and for control-flow ops."""
    torch = torch_module()
    from torch.fx.experimental.symbolic_shapes import (  # noqa: PLC0415
        free_unbacked_symbols,
    )

    for node in ep.graph.nodes:
        if node.op != "call_function":
            continue
        if isinstance(node.target, torch._ops.HigherOrderOperator):
            raise TraceError(
                f'op "{node.name}" ({node.target}) of {name} runs a '
                f"subgraph chosen or repeated by tensor data (data-dependent "
                f"control flow); a plan needs one graph whose sizes are known "
                f"before the run"
            )
        symbols = free_unbacked_symbols(node.meta.get("val"))
        if symbols:
            what = (
                "value"
                if not any(
                    isinstance(v, torch.Tensor)
                    for v in flatten(node.meta.get("val"))
                )
                else "output size"
            )
            raise TraceError(
                f'op "{node.name}" ({node.target}) of {name}: its {what} '
                f"depends on tensor data (torch.export gives it the unbacked "
                f"symbol {', '.join(sorted(str(s) for s in symbols))}); a plan "
                f"needs every size before the run"
            )


def _alias_closure(node):
    """`node` and every node whose result may share its bytes: the results
    of ops whose schema returns an alias of an argument (view, expand,
    permute), transitively, and items taken of them."""
    seen, todo = [node], [node]
    while todo:
        for user in todo.pop().users:
            if _fx_rules.returns_view(user) and user not in seen:
                seen.append(user)
                todo.append(user)
    return seen


def _state_name(target, training):
    """A parameter's or buffer's name in the model (a training step's
    module holds the model as its submodule "model")."""
    prefix = _TrainingStep.PREFIX if training else ""
    return target[len(prefix) :] if target.startswith(prefix) else target


def _signature_inputs(ep, flat_inputs, training, name):
    """(placeholders, input_names, constants, by_arg): every placeholder's
    tensor name in order, the user inputs' names, the parameters' and
    buffers' values by name, and the tensor name of each placeholder."""
    from torch.export.graph_signature import InputKind  # noqa: PLC0415

    placeholders, input_names, constants, by_arg = [], [], {}, {}
    n_user = 0
    for spec in ep.graph_signature.input_specs:
        arg = spec.arg.name
        if spec.kind == InputKind.USER_INPUT:
            tname = f"input{n_user}" if len(flat_inputs) > 1 else "input"
            n_user += 1
            input_names.append(tname)
        elif spec.kind in (
            InputKind.PARAMETER,
            InputKind.BUFFER,
            InputKind.CONSTANT_TENSOR,
        ):
            tname = _state_name(spec.target, training)
            value = ep.state_dict.get(spec.target)
            if value is None:
                value = ep.constants[spec.target]
            constants[tname] = value.detach()
        else:
            raise TraceError(
                f'input "{arg}" of {name} is a {spec.kind.name} '
                f"({spec.target}), which memplan.torch does not "
                f"run"
            )
        placeholders.append(tname)
        by_arg[arg] = tname
    return placeholders, input_names, constants, by_arg


class _Outputs:
    """The exported program's outputs sorted by kind, its mutations turned
    into aten.copy_ writes in the graph being edited."""

    def __init__(self, ep, graph, outs, out_node, training, name):
        self.ep, self.graph, self.out_node = ep, graph, out_node
        self.training, self.name = training, name
        self.nodes = {n.name: n for n in graph.nodes}
        self.arg_of = {
            s.target: s.arg.name
            for s in ep.graph_signature.input_specs
            if s.target
        }
        self.returned, self.grads, self.loss = [], {}, None
        self.buffer_writes = {}  # written placeholder's tensor -> copy_ op
        self.written = []  # (placeholder node, copy_ node)
        for spec, value in zip(ep.graph_signature.output_specs, outs):
            self._sort(spec, value)

    def _sort(self, spec, value):
        from torch.export.graph_signature import OutputKind  # noqa: PLC0415

        if spec.kind in (
            OutputKind.BUFFER_MUTATION,
            OutputKind.USER_INPUT_MUTATION,
            OutputKind.PARAMETER_MUTATION,
        ):
            self._write(
                spec, value, spec.kind == OutputKind.USER_INPUT_MUTATION
            )
        elif spec.kind == OutputKind.GRADIENT_TO_PARAMETER:
            self.grads[_state_name(spec.target, self.training)] = value
        elif spec.kind == OutputKind.LOSS_OUTPUT:
            self.loss = value
        elif spec.kind == OutputKind.USER_OUTPUT:
            self.returned.append(value)
        else:
            raise TraceError(
                f'output "{spec.arg.name}" of {self.name} is '
                f"a {spec.kind.name}, which memplan.torch does "
                f"not run"
            )

    def _write(self, spec, value, user_input):
        """Buffers (and inputs) the program updates become writes: a copy_
        after the new value and every reader of the old bytes (the
        placeholder and its views)."""
        torch = torch_module()
        graph = self.graph
        target = self.nodes.get(
            spec.target if user_input else self.arg_of.get(spec.target)
        )
        if target is None or target.op != "placeholder":
            raise TraceError(
                f'{self.name} writes "{spec.target}" in place '
                f"({spec.kind.name}), which is none of its "
                f"graph's inputs"
            )
        order = {n: i for i, n in enumerate(graph.nodes)}
        readers = [
            u
            for n in _alias_closure(target)
            for u in n.users
            if u is not self.out_node
        ]
        after = max([value] + readers, key=order.get)
        with graph.inserting_after(after):
            write = graph.call_function(
                torch.ops.aten.copy_.default, (target, value)
            )
        self.written.append((target, write))

    def result(self, grad_names):
        """(the graph's outputs, the pytree spec of what a run returns)."""
        from torch.utils import _pytree  # noqa: PLC0415

        if not self.training:
            return tuple(self.returned), self.ep.call_spec.out_spec
        missing = [n for n in grad_names if n not in self.grads]
        if missing:
            raise TraceError(
                f"the training step of {self.name} has no "
                f'gradient for parameter "{missing[0]}"'
            )
        returned = [self.grads[n] for n in grad_names]
        spec = _pytree.tree_flatten(tuple(returned))[1]
        returned.append(self.loss)
        return tuple(returned), spec


def _from_exported(
    ep, example_inputs, training, grad_names, name, dim_names=None
):
    """Traced of an ExportedProgram: placeholders named and valued from the
    signature, mutations turned into copy_ writes, then recorded."""
    torch = torch_module()
    from torch.export.graph_signature import InputKind  # noqa: PLC0415

    _check_static(ep, name)
    # A copy of the graph to edit; the ExportedProgram stays as exported.
    graph = torch.fx.Graph()
    outs, _ = graph.graph_copy(ep.graph, {}, return_output_node=True)
    out_node = graph.output(outs)
    flat_inputs = list(example_inputs)
    user_specs = [
        s
        for s in ep.graph_signature.input_specs
        if s.kind == InputKind.USER_INPUT
    ]
    if len(user_specs) != len(flat_inputs):
        raise ValueError(
            f"{name} was exported with {len(user_specs)} tensor "
            f"inputs, {len(flat_inputs)} given"
        )
    placeholders, input_names, constants, by_arg = _signature_inputs(
        ep, flat_inputs, training, name
    )
    outputs = _Outputs(ep, graph, outs, out_node, training, name)
    buffer_writes = {
        by_arg[target.name]: write.name for target, write in outputs.written
    }
    returned, spec = outputs.result(grad_names)
    out_node.args = (returned,)
    graph.lint()
    module = torch.fx.GraphModule(ep.graph_module, graph)
    user_nodes = [
        n
        for n in graph.nodes
        if n.op == "placeholder" and n.name in {s.arg.name for s in user_specs}
    ]
    dynamic = _dims.dynamic_dims(ep, user_nodes, input_names, flat_inputs)
    if dim_names is not None:
        return _dims.symbolic(
            module,
            ep,
            dynamic,
            dim_names,
            placeholders,
            input_names,
            constants,
            example_inputs,
            training,
            name,
            spec,
            buffer_writes,
        )
    for d in dynamic:
        warnings.warn(
            f'memplan.torch: dimension {d.dim} of input "{d.input}" is '
            f"dynamic ({d.symbol}); it is bound to its example value "
            f"{d.value}: the plan holds for that size only",
            stacklevel=3,
        )
    traced = _record.record(
        module,
        placeholders,
        input_names,
        constants,
        example_inputs,
        training,
        name,
        spec,
    )
    traced.exported = ep
    traced.dynamic_dims = dynamic
    traced.buffer_writes = buffer_writes
    return traced
