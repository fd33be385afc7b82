#!/usr/bin/env python3
"""memplan's rematerialization side by side with torch's
activation_memory_budget, on the training steps of
python/tests/remat_models.py (docs/remat_vs_torch.md).

torch's side: each model's training step (forward and loss) compiled by
torch.compile with AOTAutograd's min-cut partitioner, Inductor's
decompositions, at each `torch._functorch.config.activation_memory_budget`;
the forward and backward graphs it partitions are captured (no code is
generated) and joined into one memplan graph: the forward's ops, then the
backward's, the backward reading the saved tensors where the forward made
them. That graph is planned by memplan's default planner and the plan
verified: its peak is the bytes torch's partition needs in one arena. The
recompute FLOPs are the costs (Op.cost, memplan.torch's FLOPs) of the
forward ops the backward graph runs again, and separately those of them
torch.utils.flop_counter has a formula for (matmuls, convolutions,
attention).

memplan's side starts from the same graph as torch's partitioner: the
functionalized, decomposed joint forward and backward graph AOTAutograd
hands to the partition function (recorded before the partitioner runs,
the same treatment of parameters, inputs, tangents, gradients and buffer
updates as torch's partition), rematerialized by memplan.rematerialize at
each of torch's peaks in bytes: the added FLOPs and their ratio to torch's.
Then the smallest peak memplan reaches with recompute of at most a third
of the forward's FLOPs, against torch's peak at budget 0.0.

    PYTHONPATH=build/python .venv/bin/python bench/remat_vs_torch.py \\
        --csv remat_vs_torch.csv --json remat_vs_torch.json
    ... --models transformer --budgets 1.0,0.0 --torch-only
"""

import argparse
import csv
import dataclasses
import json
import os
import sys
import time
import warnings

import torch

sys.path.insert(
    0, os.path.join(os.path.dirname(__file__), "..", "python", "tests")
)
import remat_models  # noqa: E402

import memplan  # noqa: E402
from memplan.torch import joint as _joint  # noqa: E402
from memplan.torch import record as _record  # noqa: E402

BUDGETS = (1.0, 0.8, 0.6, 0.4, 0.2, 0.0)
# The target of issue 44: memplan's smallest peak with recompute of at most
# this share of the forward's FLOPs.
FORWARD_SHARE = 1 / 3


@dataclasses.dataclass
class TorchPoint:
    """torch's partition at one activation_memory_budget, as memplan
    measures it."""

    model: str
    budget: float
    peak: int  # bytes of memplan's verified plan of the joint graph
    lower_bound: int  # the most bytes live at one step of that graph
    recompute_flops: int  # Op.cost of the recomputed forward ops
    recompute_counted: int  # of them, the ops FlopCounterMode counts
    recomputed: int  # forward ops the backward runs again
    forward_flops: int  # Op.cost of the forward graph's ops
    total_flops: int  # Op.cost of both graphs' ops
    saved_bytes: int  # storages the forward saves for the backward
    graph: object = dataclasses.field(repr=False, default=None)
    plan: object = dataclasses.field(repr=False, default=None)
    joint: object = dataclasses.field(repr=False, default=None)  # JointStep
    joint_flops: int = None  # Op.cost of the joint graph's ops


def capture(make, budget):
    """The forward and backward graphs torch.compile's min-cut partitioner
    makes of the training step of `make()` (a remat_models factory) at
    activation_memory_budget `budget`, the tensors they ran on, and the
    joint graph it started from (memplan.torch.joint.capture)."""
    model, inputs, loss_fn = make()
    return _joint.capture(
        model,
        inputs,
        loss_fn,
        budget,
        name=getattr(make, "__name__", None),
    )


def _is_backward(node):
    return node.meta.get("partitioner_tag") in (
        "is_backward",
        "must_be_in_backward",
    )


@dataclasses.dataclass
class Joint:
    """The forward and backward graphs as one module: what memplan plans."""

    module: object  # torch.fx.GraphModule
    placeholders: list
    input_names: list
    constants: dict
    example_inputs: list
    forward_ops: set  # names of the joint's nodes from the forward graph
    recomputed: list  # names of its nodes the backward runs again
    saved: list  # its nodes the forward saves for the backward


def _copy_forward(cap, graph):
    """The forward graph's nodes copied into `graph`; {old: new} and its
    outputs (new nodes)."""
    env = {}
    for node in cap.forward.graph.nodes:
        if node.op == "placeholder":
            env[node] = graph.placeholder(node.name)
            env[node].meta = dict(node.meta)
        elif node.op == "call_function":
            env[node] = graph.node_copy(node, lambda n: env[n])
        elif node.op == "output":
            outputs = [
                env[n] if isinstance(n, torch.fx.Node) else n
                for n in node.args[0]
            ]
        else:
            raise RuntimeError(
                f"forward node {node.name} is a {node.op}: not supported"
            )
    return env, outputs


def _copy_backward(cap, graph, saved):
    """The backward graph's nodes copied into `graph` after the forward's,
    its saved-tensor placeholders bound to `saved` (new nodes, in order);
    (tangent placeholders, recomputed node names, gradient nodes)."""
    env, tangents, recomputed, grads = {}, [], [], []
    bw_placeholders = [
        n for n in cap.backward.graph.nodes if n.op == "placeholder"
    ]
    bound = [n for n in bw_placeholders if not n.name.startswith("tangents")]
    if len(bound) != len(saved):
        raise RuntimeError(
            f"the backward graph reads {len(bound)} saved values, the "
            f"forward saves {len(saved)}"
        )
    env.update(zip(bound, saved))
    # The tangents join the forward's placeholders, after them.
    first_op = next(n for n in graph.nodes if n.op != "placeholder")
    for node in cap.backward.graph.nodes:
        if node.op == "placeholder" and node not in env:
            with graph.inserting_before(first_op):
                env[node] = graph.placeholder(node.name)
            env[node].meta = dict(node.meta)
            tangents.append(env[node])
        elif node.op == "call_function":
            env[node] = graph.node_copy(node, lambda n: env[n])
            if not _is_backward(node):
                recomputed.append(env[node].name)
        elif node.op == "output":
            grads = [
                env[n] for n in node.args[0] if isinstance(n, torch.fx.Node)
            ]
    return tangents, recomputed, grads


_write_mutations = _joint.write_mutations


def joint(cap):
    """The captured forward and backward graphs as one module: the
    forward's ops, then the backward's reading the forward's saved tensors;
    the model's inputs and the backward's tangents are the inputs (in the
    arena), the parameters and buffers constants (not)."""
    graph = torch.fx.Graph()
    env, outputs = _copy_forward(cap, graph)
    forward_ops = {
        new.name for old, new in env.items() if old.op == "call_function"
    }
    placeholders = [
        env[n] for n in cap.forward.graph.nodes if n.op == "placeholder"
    ]
    n_saved = sum(
        1
        for n in cap.backward.graph.nodes
        if n.op == "placeholder" and not n.name.startswith("tangents")
    )
    user_outputs = outputs[len(cap.mutated) : len(outputs) - n_saved]
    saved = outputs[len(outputs) - n_saved :]
    tangents, recomputed, grads = _copy_backward(cap, graph, saved)
    _write_mutations(cap, graph, placeholders, outputs)
    graph.output(tuple(user_outputs + grads))
    module = torch.fx.GraphModule(torch.nn.Module(), graph)
    names = [n.name for n in module.graph.nodes if n.op == "placeholder"]
    values = dict(zip([p.name for p in placeholders], cap.forward_args), **{})
    tangent_values = [
        a
        for a, n in zip(cap.backward_args, cap.backward.graph.nodes)
        if n.name.startswith("tangents")
    ]
    values.update(zip([t.name for t in tangents], tangent_values))
    input_names = [placeholders[i].name for i in cap.user_inputs]
    input_names += [t.name for t in tangents]
    return Joint(
        module=module,
        placeholders=names,
        input_names=input_names,
        constants={n: values[n] for n in names if n not in input_names},
        example_inputs=[values[n] for n in input_names],
        forward_ops=forward_ops,
        recomputed=recomputed,
        saved=[n.name for n in saved if isinstance(n, torch.fx.Node)],
    )


@dataclasses.dataclass
class JointStep:
    """The joint forward and backward graph the partitioner starts from,
    recorded as memplan.torch records a training step: what memplan's side
    rematerializes."""

    traced: object  # memplan.torch's Traced
    forward_flops: int  # Op.cost of the ops the forward outputs need
    total_flops: int  # Op.cost of all its ops
    # The parameter (model.named_parameters()) of each gradient output,
    # in the order of the outputs (the loss after them).
    grad_names: list


def joint_step(name, cap):
    """The functionalized, decomposed joint graph AOTAutograd gave the
    partitioner (before any partition: no budget), recorded as
    memplan.torch.trace(..., functional=True) records it
    (memplan.torch.joint.record_joint): the parameters and buffers
    constants, the model's inputs and the tangent inputs, the gradients
    outputs, the buffer updates written in place."""
    model = remat_models.MODELS[name]()[0]
    grad_names = [n for n, p in model.named_parameters() if p.requires_grad]
    record = _joint.record_joint(cap, f"{name}_joint", grad_names)
    traced = record.traced
    forward = sum(
        o.cost or 0 for o in traced.ops if o.name in record.forward_ops
    )
    return JointStep(
        traced=traced,
        forward_flops=forward,
        total_flops=sum(o.cost or 0 for o in traced.ops),
        grad_names=grad_names,
    )


def _counted(op):
    """Whether torch.utils.flop_counter has a formula for the op."""
    from torch.utils.flop_counter import flop_registry

    packet = getattr(getattr(op.node, "target", None), "overloadpacket", None)
    return packet is not None and packet in flop_registry


def _saved_bytes(traced, saved):
    """The bytes of the storages of the saved tensors that the arena holds
    (activations: the parameters and the model's inputs are not counted),
    each storage once: what activation_memory_budget budgets."""
    by_node = {
        node.name: tname
        for node, tname in traced.names.items()
        if isinstance(tname, str)
    }
    tensors = traced.tensors
    roots = {
        tensors[by_node[n]].root
        for n in saved
        if n in by_node and by_node[n] in tensors
    }
    return sum(
        tensors[r].size
        for r in roots
        if tensors[r].kind in ("activation", "output")
    )


def torch_point(name, budget, planner=None, with_joint=False):
    """torch's partition of model `name` at `budget`, planned by memplan;
    with the joint graph it started from when `with_joint`."""
    cap = capture(remat_models.MODELS[name], budget)
    j = joint(cap)
    traced = _record.record(
        j.module,
        j.placeholders,
        j.input_names,
        dict(j.constants),
        j.example_inputs,
        True,
        f"{name}_torch_{budget}",
        None,
    )
    plan = memplan.plan(traced.graph, planner)
    memplan.verify(traced.graph, plan)
    recomputed = set(j.recomputed)
    again = [o for o in traced.ops if o.name in recomputed]
    return TorchPoint(
        model=name,
        budget=budget,
        peak=plan.peak,
        lower_bound=plan.lower_bound,
        recompute_flops=sum(o.cost or 0 for o in again),
        recompute_counted=sum(o.cost or 0 for o in again if _counted(o)),
        recomputed=len(again),
        forward_flops=sum(
            o.cost or 0 for o in traced.ops if o.name in j.forward_ops
        ),
        total_flops=sum(o.cost or 0 for o in traced.ops),
        saved_bytes=_saved_bytes(traced, j.saved),
        graph=traced.graph,
        plan=plan,
        joint=joint_step(name, cap) if with_joint else None,
    )


def _rematerialize_api():
    """memplan.rematerialize, or a clear error when this memplan has none."""
    api = getattr(memplan, "rematerialize", None)
    if api is None:
        raise SystemExit(
            "memplan.rematerialize is missing from this build of memplan "
            f"({memplan.__file__}): build the memplan_python target of a "
            "checkout with rematerialization, or run with --torch-only for "
            "torch's side alone"
        )
    return api


@dataclasses.dataclass
class MemplanPoint:
    """memplan's rematerialization of its own trace at one budget."""

    budget: int  # bytes asked for
    peak: int = None  # bytes of the verified plan; None: not reached
    added_flops: float = None
    error: str = ""  # why no plan meets the budget
    result: object = dataclasses.field(repr=False, default=None)


@dataclasses.dataclass
class MemplanSide:
    model: str
    peak_without: int  # memplan's plan of its trace, nothing recomputed
    forward_flops: int  # Op.cost of the trace's forward pass and loss
    points: list  # MemplanPoint per torch budget, in order
    smallest: MemplanPoint  # least peak with added <= FORWARD_SHARE


def _remat(api, graph, budget):
    """memplan.rematerialize at `budget`, its plan verified; a MemplanPoint
    with the error when no plan meets the budget."""
    try:
        result = api(graph, budget)
    except ValueError as error:
        return MemplanPoint(budget=budget, error=str(error))
    memplan.verify(result.graph, result.plan)
    if result.plan.peak > budget:
        raise RuntimeError(
            f"memplan.rematerialize({graph.name}, {budget}) returned a plan "
            f"of {result.plan.peak} bytes, above the budget"
        )
    return MemplanPoint(
        budget=budget,
        peak=result.plan.peak,
        added_flops=result.added_cost,
        result=result,
    )


def _smallest(api, graph, peak_without, max_added, steps):
    """The least peak found with added cost <= max_added: a bisection over
    budgets from 0 to peak_without (`steps` plans)."""
    best = MemplanPoint(budget=peak_without, peak=peak_without, added_flops=0)
    low, high = 0, peak_without
    for _ in range(steps):
        if high - low <= 1:
            break
        middle = (low + high) // 2
        point = _remat(api, graph, middle)
        if point.peak is not None and point.added_flops <= max_added:
            best = point
            high = point.peak
        else:
            low = middle
    return best


def memplan_side(name, torch_points, steps=12):
    """memplan's side for model `name`: the joint graph torch's
    partitioner started from (joint_step), rematerialized at each of
    torch's peaks, and its smallest peak with recompute of at most
    FORWARD_SHARE of the forward's FLOPs."""
    api = _rematerialize_api()
    joint = next(p.joint for p in torch_points if p.joint is not None)
    graph = joint.traced.graph
    own = memplan.plan(graph)
    memplan.verify(graph, own)
    forward = joint.forward_flops
    points = [_remat(api, graph, p.peak) for p in torch_points]
    smallest = _smallest(api, graph, own.peak, forward * FORWARD_SHARE, steps)
    return MemplanSide(
        model=name,
        peak_without=own.peak,
        forward_flops=forward,
        points=points,
        smallest=smallest,
    )


def _flops(n):
    return "" if n is None else f"{n:,.0f}"


def _mb(n):
    return "" if n is None else f"{n / 1e6:.3f}"


def _ratio(a, b):
    if a is None or b is None:
        return ""
    if b == 0:
        return "1.00" if a == 0 else "inf"
    shown = f"{a / b:.2f}"
    if shown == "1.00" and a != b:
        # Which side of 1 it is on: the target is at most 1.
        return f"{a / b:.5f}"
    return shown


def _rows(torch_points, sides):
    """One row per model and budget: torch's side, and memplan's when
    measured."""
    rows = []
    for p in torch_points:
        row = {
            "model": p.model,
            "budget": p.budget,
            "torch_peak": p.peak,
            "torch_saved_bytes": p.saved_bytes,
            "torch_recompute_flops": p.recompute_flops,
            "torch_recompute_counted_flops": p.recompute_counted,
            "torch_recomputed_ops": p.recomputed,
            "torch_forward_flops": p.forward_flops,
            # Both graphs' FLOPs less the joint graph's: the recompute
            # less the ops the partition moved to the backward (which
            # memplan's rewrite, keeping every op, counts as recomputed).
            "torch_net_added_flops": (
                None if p.joint_flops is None else p.total_flops - p.joint_flops
            ),
        }
        side = sides.get(p.model)
        if side is not None:
            budgets = [q for q in torch_points if q.model == p.model]
            m = side.points[budgets.index(p)]
            row.update(
                memplan_peak=m.peak,
                memplan_added_flops=m.added_flops,
                ratio=_ratio(m.added_flops, p.recompute_flops),
                memplan_error=m.error,
            )
        rows.append(row)
    return rows


def _summary(torch_points, sides):
    out = []
    for name, side in sides.items():
        mine = [p for p in torch_points if p.model == name]
        at_one = next((p for p in mine if p.budget == 1.0), None)
        at_zero = next((p for p in mine if p.budget == 0.0), None)
        out.append(
            {
                "model": name,
                "memplan_peak_without": side.peak_without,
                "torch_peak_at_1": at_one and at_one.peak,
                "memplan_forward_flops": side.forward_flops,
                "memplan_smallest_peak": side.smallest.peak,
                "memplan_smallest_added_flops": side.smallest.added_flops,
                "torch_peak_at_0": at_zero and at_zero.peak,
                "torch_smallest_peak": min(p.peak for p in mine),
                "ratio_to_torch_at_0": _ratio(
                    side.smallest.peak, at_zero and at_zero.peak
                ),
            }
        )
    return out


def _markdown(rows, summary):
    """The rows as a markdown table (memplan's columns when measured), and
    the summary as a second one."""
    lines = [
        "| model | budget | torch peak MB | saved MB | torch recompute "
        "FLOPs | of them counted | torch net added FLOPs |"
        + (" memplan added FLOPs | memplan/torch |" if summary else ""),
        "|---|---:|---:|---:|---:|---:|---:|"
        + ("---:|---:|" if summary else ""),
    ]
    for r in rows:
        line = (
            f"| {r['model']} | {r['budget']:.1f} | {_mb(r['torch_peak'])} "
            f"| {_mb(r['torch_saved_bytes'])} "
            f"| {r['torch_recompute_flops']:,} "
            f"| {r['torch_recompute_counted_flops']:,} "
            f"| {_flops(r['torch_net_added_flops'])} |"
        )
        if summary:
            added = r.get("memplan_added_flops")
            line += (
                f" {'' if added is None else f'{added:,.0f}'}"
                f"{'(no plan)' if r.get('memplan_error') else ''} "
                f"| {r.get('ratio', '')} |"
            )
        lines.append(line)
    if summary:
        lines += [
            "",
            "| model | memplan peak, no recompute, MB | torch peak at 1.0 MB "
            "| memplan smallest peak MB (added / forward FLOPs) "
            "| torch peak at 0.0 MB | ratio | torch smallest MB |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for s in summary:
            share = (
                s["memplan_smallest_added_flops"] / s["memplan_forward_flops"]
                if s["memplan_forward_flops"]
                else 0
            )
            lines.append(
                f"| {s['model']} | {_mb(s['memplan_peak_without'])} "
                f"| {_mb(s['torch_peak_at_1'])} "
                f"| {_mb(s['memplan_smallest_peak'])} ({share:.2f}) "
                f"| {_mb(s['torch_peak_at_0'])} "
                f"| {s['ratio_to_torch_at_0']} "
                f"| {_mb(s['torch_smallest_peak'])} |"
            )
    return "\n".join(lines)


def measure(models, budgets, torch_only=False, steps=12):
    """torch's side of each model at each budget, and memplan's unless
    `torch_only`: (TorchPoint list, {model: MemplanSide})."""
    torch_points, sides = [], {}
    for name in models:
        mine = []
        for budget in budgets:
            mine.append(torch_point(name, budget, with_joint=not mine))
            print(
                f"{name} at {budget}: peak {mine[-1].peak:,} bytes",
                file=sys.stderr,
            )
        for p in mine:
            p.joint_flops = mine[0].joint.total_flops
        torch_points += mine
        if not torch_only:
            sides[name] = memplan_side(name, mine, steps)
    return torch_points, sides


def main(argv=None):
    """The command: prints the tables, writes --csv and --json; returns
    (TorchPoint list, {model: MemplanSide})."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models",
        default=",".join(remat_models.MODELS),
        help="comma-separated models of python/tests/remat_models.py",
    )
    parser.add_argument(
        "--budgets",
        default=",".join(str(b) for b in BUDGETS),
        help="torch's activation_memory_budget values",
    )
    parser.add_argument("--csv", help="write the rows as CSV here")
    parser.add_argument("--json", help="write rows and summary as JSON here")
    parser.add_argument(
        "--torch-only",
        action="store_true",
        help="torch's side alone (no memplan.rematerialize needed)",
    )
    parser.add_argument(
        "--steps",
        type=int,
        default=12,
        help="plans of the bisection for memplan's smallest peak",
    )
    args = parser.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in remat_models.MODELS]
    if unknown:
        parser.error(
            f"unknown model {unknown[0]!r}: one of "
            f"{', '.join(remat_models.MODELS)}"
        )
    try:
        budgets = [float(b) for b in args.budgets.split(",") if b]
    except ValueError:
        parser.error(f"--budgets={args.budgets}: numbers from 0 to 1")
    if not budgets or any(not 0 <= b <= 1 for b in budgets):
        parser.error(f"--budgets={args.budgets}: numbers from 0 to 1")
    if not args.torch_only:
        _rematerialize_api()  # fail before the long part
    start = time.process_time()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            torch_points, sides = measure(
                models, budgets, args.torch_only, args.steps
            )
    finally:
        torch.set_num_threads(threads)
    rows = _rows(torch_points, sides)
    summary = _summary(torch_points, sides)
    print(_markdown(rows, summary))
    print(
        f"\n({time.process_time() - start:.0f} s CPU, "
        f"torch {torch.__version__})"
    )
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(
                f, fieldnames=list(rows[-1]), extrasaction="ignore"
            )
            writer.writeheader()
            writer.writerows(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "summary": summary}, f, indent=1)
    return torch_points, sides


if __name__ == "__main__":
    main()
