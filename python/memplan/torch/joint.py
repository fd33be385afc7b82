"""The training step as AOTAutograd's joint graph: trace(...,
training=True, functional=True).

torch.compile (a backend of AOTAutograd's, no code generated) compiles the
step, forward and loss, with Inductor's decompositions and the min-cut
partitioner, which this module wraps: the graph its partition function
receives, functionalized (no in-place op: batch norm's running statistics
are new values, the ReLUs out of place), decomposed, its dead code
eliminated and its common subexpressions merged, is copied, and the
forward and backward compilers record the tensors the partition ran on.
That graph is then recorded as trace(..., training=True) records a step:
the parameters and buffers constants, the model's inputs and the loss's
tangent inputs (the tangent, 1, fed by every run), the gradients outputs,
each buffer update written in place by an aten.copy_ after the last reader
of the old value. bench/remat_vs_torch.py captures torch's partitions with
capture() at each activation_memory_budget."""

import dataclasses

from memplan.torch import record as _record
from memplan.torch._common import torch_module, training_step_module
from memplan.torch.errors import TraceError

_FALLBACK = (
    "memplan.torch.trace(model, inputs, training=True) without "
    "functional=True records the step through torch.export instead"
)


@dataclasses.dataclass
class Captured:
    """What torch.compile's partition of one training step ran: the
    forward and backward graphs with the tensors each was called with."""

    forward: object  # torch.fx.GraphModule
    backward: object
    forward_args: list
    backward_args: list
    mutated: list  # forward placeholders whose new value it returns first
    user_inputs: list  # positions of the model's inputs among the forward's
    joint: object = None  # the joint graph the partitioner started from
    num_fwd_outputs: int = 0  # the joint's outputs before the gradients
    # Per forward placeholder, the model's parameter or buffer it is (its
    # name in model.named_parameters() or named_buffers()), else None.
    state_names: list = None


def _boxed(gm, into, key):
    """A compiled function for AOTAutograd that records the tensors it is
    called with (once) and runs the graph as it is."""
    torch = torch_module()

    def run(args):
        if key not in into:
            into[key + "_ptrs"] = [
                a.data_ptr() if isinstance(a, torch.Tensor) else None
                for a in args
            ]
            into[key] = [
                a.detach().clone() if isinstance(a, torch.Tensor) else a
                for a in args
            ]
        return gm(*args)

    run._boxed_call = True
    return run


class _KeptState:
    """The model's buffers and the gradients of its parameters and inputs
    as they were: the compiled step run for the capture updates them, and
    they are put back."""

    def __init__(self, model, inputs):
        torch = torch_module()
        self.buffers = [(b, b.detach().clone()) for b in model.buffers()]
        self.grads = [
            (t, t.grad)
            for t in list(model.parameters()) + list(inputs)
            if isinstance(t, torch.Tensor) and t.requires_grad
        ]

    def restore(self):
        torch = torch_module()
        with torch.no_grad():
            for b, value in self.buffers:
                b.copy_(value)
        for t, grad in self.grads:
            t.grad = grad


def _compile_and_run(model, inputs, loss_fn, budget, seen, name):
    """Runs the training step once compiled by torch.compile with the
    capturing backend; TraceError when torch cannot compile it as one
    graph."""
    torch = torch_module()
    from torch._dynamo.backends.common import (  # noqa: PLC0415
        aot_autograd,
    )
    from torch._functorch.partitioners import (  # noqa: PLC0415
        min_cut_rematerialization_partition,
    )

    # Some of Inductor's decompositions (max_pool2d's) look up its
    # lowerings, which torch.compile imports before them.
    import torch._inductor.lowering  # noqa: F401, PLC0415
    from torch._inductor.decomposition import (  # noqa: PLC0415
        select_decomp_table,
    )

    def partition(joint_module, joint_inputs, **kwargs):
        parts = min_cut_rematerialization_partition(
            joint_module, joint_inputs, **kwargs
        )
        # A copy of the functionalized, decomposed joint graph as the
        # partitioner split it: it has replaced the module's graph by the
        # graph with dead code eliminated and common subexpressions merged
        # (torch._functorch.config.cse), before choosing what to save.
        graph = torch.fx.Graph()
        graph.output(graph.graph_copy(joint_module.graph, {}))
        seen["joint"] = torch.fx.GraphModule(joint_module, graph)
        seen["num_fwd_outputs"] = kwargs["num_fwd_outputs"]
        return parts

    def forward_compiler(gm, example_inputs):
        seen["forward"] = gm
        meta = torch._guards.TracingContext.get().fw_metadata
        seen["mutated"] = list(meta.mutated_inp_runtime_indices)
        return _boxed(gm, seen, "forward_args")

    def backward_compiler(gm, example_inputs):
        seen["backward"] = gm
        return _boxed(gm, seen, "backward_args")

    backend = aot_autograd(
        fw_compiler=forward_compiler,
        bw_compiler=backward_compiler,
        partition_fn=partition,
        decompositions=select_decomp_table(),
    )
    torch._dynamo.reset()
    step = torch.compile(
        training_step_module(model, loss_fn, as_tuple=False),
        backend=backend,
        fullgraph=True,
    )
    try:
        with torch._functorch.config.patch(activation_memory_budget=budget):
            with torch.random.fork_rng(devices=[]):
                step(*inputs).backward()
    except Exception as e:  # torch.compile's errors have many types
        first = (str(e).strip().splitlines() or [""])[0]
        raise TraceError(
            f"torch.compile could not compile the training step of {name} "
            f"as one joint graph ({type(e).__name__}: {first}); {_FALLBACK}"
        ) from e
    finally:
        torch._dynamo.reset()


def capture(model, inputs, loss_fn, budget=1.0, name=None):
    """The joint graph of the training step `loss_fn(model(*inputs))` and
    the forward and backward graphs torch.compile's min-cut partitioner
    makes of it at activation_memory_budget `budget`, with the tensors they
    ran on. The model's buffers and gradients are left as they were;
    torch.compile's caches are reset (torch._dynamo.reset())."""
    torch = torch_module()
    name = name or type(model).__name__
    inputs = tuple(inputs)
    if not any(p.requires_grad for p in model.parameters()):
        raise ValueError(
            f"{name} has no parameter that requires a gradient: a training "
            f"step needs one"
        )
    seen = {}
    kept = _KeptState(model, inputs)
    try:
        _compile_and_run(model, inputs, loss_fn, budget, seen, name)
    finally:
        kept.restore()
    for key in ("joint", "forward", "backward", "forward_args"):
        if key not in seen:
            raise TraceError(
                f"torch.compile did not partition the training step of "
                f"{name} (no {key} graph was compiled); {_FALLBACK}"
            )
    state = dict(model.named_parameters())
    state.update(model.named_buffers())
    by_ptr = {t.data_ptr(): n for n, t in state.items()}
    state_names = [by_ptr.get(p) for p in seen["forward_args_ptrs"]]
    tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
    ptrs = {t.data_ptr() for t in tensors}
    user = [i for i, p in enumerate(seen["forward_args_ptrs"]) if p in ptrs]
    if len(user) != len(tensors) or len(tensors) != len(inputs):
        raise TraceError(
            f"the forward graph of {name} takes {len(user)} of the model's "
            f"{len(inputs)} inputs as they were given: cannot tell its "
            f"inputs from its parameters (give tensors only); {_FALLBACK}"
        )
    return Captured(
        forward=seen["forward"],
        backward=seen["backward"],
        forward_args=seen["forward_args"],
        backward_args=seen.get("backward_args", []),
        mutated=seen["mutated"],
        user_inputs=user,
        joint=seen["joint"],
        num_fwd_outputs=seen["num_fwd_outputs"],
        state_names=state_names,
    )


def write_mutations(cap, graph, placeholders, outputs):
    """Each buffer the step updates (batch norm's running statistics) is
    written in place, as memplan.torch does: aten.copy_(buffer, new value)
    right after the later of the new value's op and the old value's last
    reader. Returns {index of the placeholder: the copy_ node}."""
    torch = torch_module()
    order = {n: i for i, n in enumerate(graph.nodes)}
    writes = {}
    for k, index in enumerate(cap.mutated):
        old, new = placeholders[index], outputs[k]
        shapes = [
            tuple(getattr(n.meta.get("val"), "shape", ())) for n in (old, new)
        ]
        if shapes[0] != shapes[1]:
            raise TraceError(
                f"the forward graph's mutated input {index} ({old.name}, "
                f"shape {shapes[0]}) and its new value {new.name} (shape "
                f"{shapes[1]}) differ: cannot write it in place"
            )
        after = max([new, *old.users], key=lambda n: order[n])
        with graph.inserting_after(after):
            writes[index] = graph.call_function(
                torch.ops.aten.copy_.default, (old, new)
            )
        order = {n: i for i, n in enumerate(graph.nodes)}
    return writes


def _ancestors(nodes):
    torch = torch_module()
    seen, stack = set(), [n for n in nodes if isinstance(n, torch.fx.Node)]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack += node.all_input_nodes
    return seen


@dataclasses.dataclass
class JointRecord:
    """A recorded joint graph: the Traced, and the names of its ops that
    the loss and the buffers' new values need (the forward pass)."""

    traced: object  # memplan.torch's Traced
    forward_ops: set


def _placeholder_names(cap, primals, tangents):
    """The tensor name of each placeholder: the parameter's or buffer's
    name, "input" (or input0, input1, ...) for the model's inputs,
    "tangent" (tangent0, ...) for the loss's gradient; the node's name for
    any other."""
    names, used = {}, set()
    for i, node in enumerate(primals):
        state = cap.state_names[i] if i < len(cap.state_names) else None
        if state is not None and state not in used:
            names[node] = state
    several = len(cap.user_inputs) > 1
    for k, i in enumerate(cap.user_inputs):
        names[primals[i]] = f"input{k}" if several else "input"
    for k, node in enumerate(tangents):
        names[node] = f"tangent{k}" if len(tangents) > 1 else "tangent"
    out = []
    for node in primals + tangents:
        name = names.get(node)
        if name is None or name in used:
            name = node.name
        used.add(name)
        out.append(name)
    return out


def _values(cap, placeholders, name):
    """{placeholder node name: the tensor the partition ran on}."""
    fw_names = [
        n.name for n in cap.forward.graph.nodes if n.op == "placeholder"
    ]
    values = dict(zip(fw_names, cap.forward_args))
    bw_names = [
        n.name for n in cap.backward.graph.nodes if n.op == "placeholder"
    ]
    values.update(
        (n, a)
        for n, a in zip(bw_names, cap.backward_args)
        if n.startswith("tangents")
    )
    missing = [n.name for n in placeholders if n.name not in values]
    if missing:
        raise TraceError(
            f"the joint graph of {name} reads {', '.join(missing)}, which "
            f"neither partitioned graph was called with; {_FALLBACK}"
        )
    return values


def _gradients(cap, grads, grad_names, name):
    """The gradient nodes of the parameters `grad_names`, in that order
    (the joint's gradients are by placeholder)."""
    by_name = {
        cap.state_names[i]: n
        for i, n in enumerate(grads)
        if n is not None and i < len(cap.state_names)
    }
    missing = [n for n in grad_names if n not in by_name]
    if missing:
        raise TraceError(
            f'parameter "{missing[0]}" of {name} has no gradient in the '
            f"training step (is it used?): set its requires_grad to False"
        )
    return [by_name[n] for n in grad_names]


def record_joint(cap, name, grad_names):
    """The captured joint graph (before any partition) recorded as
    trace(..., training=True) records a step: the parameters and buffers
    constants, the model's inputs and the tangent inputs (the tangent,
    the loss's gradient, fed from the constants: runs take the model's
    inputs only), the gradients of the parameters `grad_names` the
    returned outputs, then the loss, the buffer updates written in
    place."""
    torch = torch_module()
    graph = torch.fx.Graph()
    graph.output(graph.graph_copy(cap.joint.graph, {}))
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    primals = [n for n in placeholders if not n.name.startswith("tangents")]
    tangents = [n for n in placeholders if n.name.startswith("tangents")]
    out = graph.output_node()
    outputs = list(out.args[0])
    forward_outputs = outputs[: cap.num_fwd_outputs]
    grads = _gradients(
        cap, outputs[cap.num_fwd_outputs :], list(grad_names), name
    )
    forward_nodes = {
        n.name for n in _ancestors(forward_outputs) if n.op == "call_function"
    }
    graph.erase_node(out)
    writes = write_mutations(cap, graph, primals, forward_outputs)
    user_outputs = forward_outputs[len(cap.mutated) :]
    graph.output(tuple(grads + user_outputs))
    module = torch.fx.GraphModule(torch.nn.Module(), graph)
    values = _values(cap, placeholders, name)
    names = _placeholder_names(cap, primals, tangents)
    tensor_of = dict(zip([n.name for n in primals + tangents], names))
    input_names = [names[i] for i in cap.user_inputs]
    tangent_names = names[len(primals) :]
    traced = _record.record(
        module,
        names,
        input_names + tangent_names,
        {
            tensor_of[n.name]: values[n.name]
            for n in placeholders
            if tensor_of[n.name] not in input_names + tangent_names
        },
        [values[n.name] for n in [primals[i] for i in cap.user_inputs]]
        + [values[n.name] for n in tangents],
        True,
        name,
        torch.utils._pytree.tree_flatten(tuple(grads))[1],
    )
    # The tangent (1, the loss's gradient) is in the arena like an input,
    # and every run feeds it as a constant.
    traced.input_names = input_names
    for n in tangents:
        traced.constants[tensor_of[n.name]] = values[n.name]
    traced.buffer_writes = {names[i]: node.name for i, node in writes.items()}
    return JointRecord(traced=traced, forward_ops=forward_nodes)


def trace_joint(model, example_inputs, loss_fn, name=None):
    """trace(model, example_inputs, training=True, loss_fn=loss_fn,
    functional=True): the Traced of AOTAutograd's joint graph."""
    name = name or type(model).__name__
    grad_names = [n for n, p in model.named_parameters() if p.requires_grad]
    cap = capture(model, example_inputs, loss_fn, name=name)
    return record_joint(cap, name, grad_names).traced
