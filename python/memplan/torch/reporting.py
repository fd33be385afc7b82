"""The report: what a trace and its plan amount to, and PyTorch's own peak
for the same step to compare with."""

import contextlib
import os

from memplan.torch._common import (
    fetch_attr,
    flatten,
    node_args,
    placeholder_values,
    storage_nbytes,
    torch_module,
)


@contextlib.contextmanager
def _quiet_kineto():
    """The profiler's own log (Kineto's) at its quietest while it runs:
    on a machine without a GPU it otherwise prints "ERROR: ...
    gpuGetDeviceCount failed" and trace start/stop lines to stderr, about
    nothing the CPU profile needs. A KINETO_LOG_LEVEL the user set is
    kept."""
    if "KINETO_LOG_LEVEL" in os.environ:
        yield
        return
    os.environ["KINETO_LOG_LEVEL"] = "6"
    try:
        yield
    finally:
        os.environ.pop("KINETO_LOG_LEVEL", None)


def pytorch_peak(traced, inputs, seed=0):
    """Bytes PyTorch's CPU allocator holds at most while running `traced`
    eagerly (each value freed after its last use, as eager mode does),
    counting the inputs and not the constants: the same tensors a plan
    places, plus whatever workspace the kernels allocate. Measured with the
    profiler's memory events; None when they are unavailable."""
    torch = torch_module()
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    values = placeholder_values(traced, inputs)
    last_use = {}
    nodes = list(traced.module.graph.nodes)
    for i, node in enumerate(nodes):
        for arg in flatten(list(node.args) + list(node.kwargs.values())):
            if hasattr(arg, "op"):
                last_use[arg] = i
    input_bytes = sum(
        storage_nbytes(v)
        for v, n in zip(values, traced.placeholders)
        if n in traced.input_names
    )
    torch.manual_seed(seed)
    with _quiet_kineto(), profile(
        activities=[ProfilerActivity.CPU], profile_memory=True
    ) as prof:
        env = {}
        it = iter(values)
        for i, node in enumerate(nodes):
            if node.op == "placeholder":
                env[node] = next(it)
            elif node.op == "get_attr":
                env[node] = fetch_attr(traced.module, node.target)
            elif node.op == "call_function":
                args, kwargs = node_args(node, env)
                env[node] = node.target(*args, **kwargs)
                del args, kwargs
            elif node.op == "output":
                break
            for arg in flatten(list(node.args) + list(node.kwargs.values())):
                if (
                    hasattr(arg, "op")
                    and last_use.get(arg) == i
                    and arg.op == "call_function"
                ):
                    env.pop(arg, None)
        del env
    try:
        events = [
            e
            for e in prof.profiler.kineto_results.events()
            if e.name() == "[memory]"
        ]
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
        "constants": sum(
            1 for t in traced.graph.tensors if t.kind == "constant"
        ),
    }
    if plan is not None:
        buffers = plan.buffers
        out.update(
            {
                "planner": plan.planner,
                "buffers": len(buffers),
                "views_merged": sum(len(b["tensors"]) - 1 for b in buffers),
                "peak": plan.peak,
                "lower_bound": plan.lower_bound,
                "naive_total": plan.naive_total,
                "proven_optimal": plan.proven_optimal,
            }
        )
    if inputs is not None:
        out["pytorch_peak"] = pytorch_peak(traced, inputs, seed)
    return out


def format_report(info):
    """report()'s dict as a few lines of text."""
    lines = [
        f"{info['name']}: {info['ops']} ops, {info['tensors']} tensors "
        f"({info['constants']} constants), {info['alias_hints']} alias "
        f"hints (views and in-place writes)"
    ]
    if "peak" in info:
        lines.append(
            f"{info['planner']}: {info['buffers']} buffers "
            f"({info['views_merged']} tensors merged into another's buffer), "
            f"peak {info['peak']} bytes, lower bound {info['lower_bound']}, "
            f"naive total {info['naive_total']}"
            f"{', proven optimal' if info['proven_optimal'] else ''}"
        )
    if info.get("pytorch_peak"):
        ratio = (
            f" (plan: {info['peak'] / info['pytorch_peak']:.2f}x)"
            if "peak" in info
            else ""
        )
        lines.append(
            f"PyTorch's allocator peak for the same step: "
            f"{info['pytorch_peak']} bytes{ratio}"
        )
    return "\n".join(lines)
