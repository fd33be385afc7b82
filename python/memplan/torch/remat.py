"""Rematerialized training steps: memplan.rematerialize on a traced graph,
and the traced op list rewritten as its result's graph says, so that
run_in_arena runs the recomputed ops.

A recomputed op of the rewritten graph (named after a traced op with the
suffix ".recompute", or ".recompute_2" ... for a second copy) runs the
traced op's fx node again, reading the tensors the rewritten graph names
(the traced ones, or recomputed versions of them) and making new tensors
(its outputs' names with the suffix) in their own places of the arena;
every later op that the rewritten graph has read a recomputed tensor reads
it instead of the traced one."""

import dataclasses
import re

import memplan as _memplan

_COPY = re.compile(r"^(?P<op>.+)\.recompute(?:_[0-9]+)?$")


def rematerialize(traced, budget, *, exact=False, **plan_options):
    """memplan.rematerialize(traced.graph, budget, exact=exact,
    **plan_options): the training step `traced` (trace(...,
    training=True), best with functional=True) fitted into `budget` bytes by running chosen ops again
    (exact=True: the least added cost, proven on small steps; see
    result.proven). Run it with
    run_in_arena(traced, result.plan, inputs, graph=result.graph)."""
    if traced.dims:
        raise ValueError(
            "rematerialize plans fixed sizes: trace the model without "
            "symbolic=True"
        )
    return _memplan.rematerialize(
        traced.graph, budget, exact=exact, **plan_options
    )


@dataclasses.dataclass
class Rewrite:
    """The traced graph with the rewritten op list: `traced` (ops and
    tensors as the rewritten graph has them), the ops that are copies
    (indices into traced.ops) and, per op reading a recomputed tensor,
    {traced input name: the tensor it reads}."""

    traced: object
    copies: set
    reads: dict


def _mismatch(graph, detail):
    return ValueError(
        f'graph "{graph.name}" is not a rematerialization of the traced '
        f"graph: {detail} (pass the graph of the RematResult whose plan "
        f"runs)"
    )


def _copy_of(traced_ops, index, graph_op, graph):
    """The traced op a recomputed op of the graph copies, checked to be
    one that may run again."""
    m = _COPY.match(graph_op.name)
    if m is None or m.group("op") not in index:
        raise _mismatch(graph, f'op "{graph_op.name}" is not a traced op')
    orig = traced_ops[index[m.group("op")]]
    if orig.node is None or orig.writes or not orig.recomputable:
        raise _mismatch(
            graph,
            f'op "{graph_op.name}" runs op "{orig.name}" again, which may '
            f"not be recomputed"
            + (f" (it writes {', '.join(orig.writes)})" if orig.writes else ""),
        )
    if len(graph_op.inputs) != len(orig.inputs) or len(graph_op.outputs) != len(
        orig.outputs
    ):
        raise _mismatch(
            graph,
            f'op "{graph_op.name}" has {len(graph_op.inputs)} inputs and '
            f'{len(graph_op.outputs)} outputs, op "{orig.name}" '
            f"{len(orig.inputs)} and {len(orig.outputs)}",
        )
    return orig


def _renamed_inputs(graph, graph_op, orig, origin):
    """{traced input: tensor read} of one op of the graph, each tensor read
    the traced one or a recomputed version of it."""
    rename = {}
    for was, now in zip(orig.inputs, graph_op.inputs):
        if now == was:
            continue
        if origin.get(now) != was:
            raise _mismatch(
                graph,
                f'op "{graph_op.name}" reads "{now}" where the traced op '
                f'"{orig.name}" reads "{was}"',
            )
        rename[was] = now
    return rename


def _made_again(graph, graph_op, orig, j, traced, tensors, origin, was, now, k):
    """The record of tensor `now`, output j of recomputed op `graph_op`,
    standing in for traced tensor `was`: a new storage where `was` is
    one, or a view of the recomputed storage the copy reads where `was`
    is a view (the copy of a view op run again with its producer)."""
    if now in traced.tensors or now in tensors:
        raise _mismatch(graph, f'op "{graph_op.name}" makes "{now}" again')
    t = traced.tensors[was]
    if t.root == was:
        return dataclasses.replace(
            t, name=now, kind="activation", root=now, producer=k, base=None
        )
    read = [graph_op.inputs[i] for o, i in orig.alias if o == j]
    bases = [tensors.get(r) for r in read]
    if (
        len(read) != 1
        or bases[0] is None
        or origin.get(bases[0].root) != t.root
    ):
        raise _mismatch(
            graph,
            f'op "{graph_op.name}" makes "{now}" in place of "{was}", a '
            f"view, without reading a recomputed tensor of its storage",
        )
    return dataclasses.replace(
        t,
        name=now,
        kind="activation",
        root=bases[0].root,
        producer=k,
        base=read[0],
    )


def _reroot(orig, graph_op, tensors, rerooted):
    """A traced view op reading a recomputed tensor (or a view of one)
    makes a view of the recomputed storage: `rerooted` gets its outputs'
    storage and base."""
    for o, i in orig.alias:
        read = graph_op.inputs[i]
        if read in rerooted:
            rerooted[orig.outputs[o]] = (rerooted[read][0], read)
        elif read in tensors:
            rerooted[orig.outputs[o]] = (tensors[read].root, read)


def rewrite(traced, graph):
    """The Rewrite of `traced` whose op list is `graph`'s: the traced ops
    in their order with recomputed ops among them. ValueError when `graph`
    is not such a rewrite (an unknown op, the traced ops missing or out of
    order, a copy of an op that writes or draws random numbers)."""
    index = {op.name: i for i, op in enumerate(traced.ops)}
    ops, copies, reads = [], set(), {}
    tensors = {}
    origin = {}  # recomputed tensor -> the traced tensor it stands in for
    new_index = {}  # traced op index -> its index in the rewritten list
    rerooted = {}  # traced view -> (recomputed storage, base) it views
    for k, graph_op in enumerate(graph.ops):
        if graph_op.name in index:
            orig = traced.ops[index[graph_op.name]]
            if len(new_index) != index[graph_op.name]:
                raise _mismatch(graph, f'op "{orig.name}" is out of order')
            if list(graph_op.outputs) != list(orig.outputs) or len(
                graph_op.inputs
            ) != len(orig.inputs):
                raise _mismatch(
                    graph, f'op "{orig.name}" has other inputs or outputs'
                )
            new_index[index[orig.name]] = k
            rename = _renamed_inputs(graph, graph_op, orig, origin)
            _reroot(orig, graph_op, tensors, rerooted)
            ops.append(dataclasses.replace(orig, inputs=list(graph_op.inputs)))
        else:
            orig = _copy_of(traced.ops, index, graph_op, graph)
            rename = _renamed_inputs(graph, graph_op, orig, origin)
            made = dict(zip(orig.outputs, graph_op.outputs))
            for j, (was, now) in enumerate(made.items()):
                tensors[now] = _made_again(
                    graph,
                    graph_op,
                    orig,
                    j,
                    traced,
                    tensors,
                    origin,
                    was,
                    now,
                    k,
                )
                origin[now] = was
            copies.add(k)
            ops.append(
                dataclasses.replace(
                    orig,
                    name=graph_op.name,
                    inputs=list(graph_op.inputs),
                    outputs=list(graph_op.outputs),
                    out_names=[made.get(n, n) for n in orig.out_names],
                    writes=[],
                )
            )
        if rename:
            reads[k] = rename
    if len(new_index) != len(traced.ops):
        missing = next(
            op.name for i, op in enumerate(traced.ops) if i not in new_index
        )
        raise _mismatch(graph, f'traced op "{missing}" is missing')
    for name, t in traced.tensors.items():
        producer = None if t.producer is None else new_index[t.producer]
        tensors[name] = dataclasses.replace(t, producer=producer)
        if name in rerooted:
            root, base = rerooted[name]
            tensors[name] = dataclasses.replace(
                tensors[name], root=root, base=base
            )
    rewritten = dataclasses.replace(
        traced, graph=graph, ops=ops, tensors=tensors
    )
    return Rewrite(traced=rewritten, copies=copies, reads=reads)
