"""What every job of memplan.torch needs: PyTorch itself, imported on first
use, and running a graph's nodes on values."""

import memplan as _memplan


def torch_module():
    """PyTorch 2, imported now (memplan.torch needs torch.export)."""
    import torch  # noqa: PLC0415  (imported when first used)

    if not hasattr(torch, "export"):
        raise _memplan.Error(
            f"memplan.torch needs PyTorch 2 (torch.export); "
            f"this is torch {torch.__version__}"
        )
    return torch


def training_step_module(model, loss_fn, as_tuple):
    """The module of the training step loss_fn(model(*args)): the model as
    its submodule "model", the loss its output (in a 1-tuple when
    `as_tuple`, as torch.export's training trace takes it; bare for
    AOTAutograd's joint graph)."""
    torch = torch_module()

    class TrainingStep(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *args):
            loss = loss_fn(self.model(*args))
            return (loss,) if as_tuple else loss

    return TrainingStep()


def fetch_attr(module, target):
    value = module
    for part in target.split("."):
        value = getattr(value, part)
    return value


def node_args(node, env):
    from torch.fx.node import map_arg  # noqa: PLC0415

    return (
        map_arg(node.args, lambda n: env[n]),
        map_arg(node.kwargs, lambda n: env[n]),
    )


def flatten(value):
    """The leaves of nested tuples and lists, in order."""
    if isinstance(value, (tuple, list)):
        out = []
        for v in value:
            out.extend(flatten(v))
        return out
    return [value]


def returned(traced, flat):
    """What a run returns of the graph's flat outputs: the model's output
    structure (inference) or the gradients (training; the loss, last, is an
    output of the graph but not returned)."""
    from torch.utils import _pytree  # noqa: PLC0415

    flat = list(flat)
    return _pytree.tree_unflatten(
        flat[: traced.output_spec.num_leaves], traced.output_spec
    )


def storage_key(t):
    """Identifies a tensor's storage while it is alive (None: no bytes)."""
    storage = t.untyped_storage()
    if storage.nbytes() == 0:
        return None
    return storage.data_ptr()


def storage_nbytes(t):
    return t.untyped_storage().nbytes()


def extent_bytes(t):
    """Bytes from the tensor's first element to one past its last."""
    if t.numel() == 0:
        return 0
    last = sum((s - 1) * st for s, st in zip(t.shape, t.stride()) if s > 0)
    return (last + 1) * t.element_size()


def _check_input(traced, name, value):
    """ValueError unless input `name` has its traced shape and dtype."""
    torch = torch_module()
    t = traced.tensors.get(name)
    if t is None:
        return
    if (
        not isinstance(value, torch.Tensor)
        or tuple(value.shape) != t.shape
        or value.dtype != t.dtype
    ):
        got = (
            f"{tuple(value.shape)} {value.dtype}"
            if isinstance(value, torch.Tensor)
            else type(value).__name__
        )
        bound = [d for d in traced.dynamic_dims if d.input == name]
        note = "".join(
            f"; dimension {d.dim} ({d.symbol}) was bound to "
            f"{d.value} when traced"
            for d in bound
        )
        raise ValueError(
            f'input "{name}" is {got}, traced as ' f"{t.shape} {t.dtype}{note}"
        )


def placeholder_values(traced, inputs, state=None):
    """Every placeholder's value: fresh copies of the constants (so that
    in-place updates such as batch norm's running statistics do not leak from
    one run into the next) unless `state` has them, and the given inputs,
    checked against the traced shapes and dtypes."""
    torch = torch_module()
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    inputs = list(inputs)
    if len(inputs) != len(traced.input_names):
        raise ValueError(
            f"the traced graph takes {len(traced.input_names)} "
            f"inputs, got {len(inputs)}"
        )
    given = dict(zip(traced.input_names, inputs))
    for name, value in given.items():
        _check_input(traced, name, value)
    values = []
    for name in traced.placeholders:
        if name in given:
            values.append(given[name])
        elif state is not None and name in state:
            values.append(state[name])
        else:
            values.append(traced.constants[name].detach().clone())
    return values
