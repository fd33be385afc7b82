"""What an op of a torch.fx graph does to its arguments, as the op's schema
and torch.fx say it: which arguments it writes, which argument a result
aliases, whether its place among other ops is pinned, whether running it
again gives the same results, and what it costs. memplan.torch (a traced
model) and memplan.executorch (an edge program) both build their graphs'
Op.writes, alias hints and Op.pinned from these rules; memplan.torch its
Op.recomputable and Op.cost too.

PyTorch is imported when a rule is first used, not by `import memplan`.
"""

import operator


def _schema(node):
    return getattr(node.target, "_schema", None)


def _leaves(value):
    """The leaves of nested tuples, lists and dicts, in order."""
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    return [value]


def _argument(node, i, argument):
    """The value `node` passes for argument i (`argument`) of its schema."""
    if i < len(node.args):
        return node.args[i]
    return node.kwargs.get(argument.name)


def is_node(value):
    """Whether `value` is a torch.fx node (an argument that is a value of
    the graph, not a constant)."""
    return hasattr(value, "op")


def written_arguments(node):
    """The graph nodes passed for the arguments the op's schema marks as
    written (alias_info.is_write: `self` of copy_ and of any in-place op, an
    `out=` argument), in argument order: the op's Op.writes."""
    schema = _schema(node)
    if schema is None:
        return []
    written = []
    for i, argument in enumerate(schema.arguments):
        if argument.alias_info is None or not argument.alias_info.is_write:
            continue
        written.extend(
            leaf
            for leaf in _leaves(_argument(node, i, argument))
            if is_node(leaf)
        )
    return written


def aliased_results(node, count):
    """(k, value) for each of the op's first `count` results whose schema
    says it aliases an argument: `value` is what the node passes for the
    argument carrying the same alias set (None when no argument does;
    views and in-place ops alias their first tensor argument)."""
    schema = _schema(node)
    if schema is None:
        return []
    out = []
    for k, ret in enumerate(schema.returns[:count]):
        if ret.alias_info is None:
            continue
        value = None
        for i, argument in enumerate(schema.arguments):
            if (
                argument.alias_info is not None
                and argument.alias_info.before_set == ret.alias_info.before_set
            ):
                value = _argument(node, i, argument)
                break
        out.append((k, value))
    return out


def returns_view(node):
    """Whether the op's result may share the bytes of its argument without
    writing them: an item taken of a tuple, or an op whose schema returns
    an alias of an argument (view, expand, permute)."""
    if node.target is operator.getitem:
        return True
    schema = _schema(node)
    return schema is not None and any(
        r.alias_info is not None and not r.alias_info.is_write
        for r in schema.returns
    )


def is_pinned(node):
    """Whether the op has an effect beyond its results that its place among
    other such ops decides: a draw from the random generator (its schema's
    tag nondeterministic_seeded: dropout, rand, bernoulli), or a function
    torch.fx keeps for its side effects (asserts, profiler ranges). Such
    ops become pinned in the graph, so that a reordered run draws the same
    random numbers in the same order. Writes to a tensor are Op.writes."""
    import torch  # noqa: PLC0415  (imported when first used)
    from torch.fx.node import _side_effectful_functions  # noqa: PLC0415

    if node.target in _side_effectful_functions:
        return True
    return torch.Tag.nondeterministic_seeded in getattr(node.target, "tags", ())


def is_recomputable(node):
    """Whether running the op again on the same inputs gives the same
    results (Op.recomputable): an ATen op (its schema known) that writes no
    argument (no in-place update, no copy_ into a buffer, no out=) and is
    not pinned (no random draw, no side effect)."""
    schema = _schema(node)
    if schema is None or node.target is operator.getitem:
        return False
    if any(
        argument.alias_info is not None and argument.alias_info.is_write
        for argument in schema.arguments
    ):
        return False
    return not is_pinned(node)


def flop_count(node, args, kwargs, value):
    """The FLOPs of one run of the op on these arguments (Op.cost): the
    formula torch.utils.flop_counter.FlopCounterMode counts for its ATen
    op (matmuls, convolutions, attention, their backward ops); an op it
    has no formula for costs one FLOP per element of its tensor results
    that are not views of its arguments (elementwise work). None when the
    op is not an ATen op."""
    import torch  # noqa: PLC0415
    from torch.utils.flop_counter import flop_registry  # noqa: PLC0415

    packet = getattr(node.target, "overloadpacket", None)
    if packet is None or _schema(node) is None:
        return None
    formula = flop_registry.get(packet)
    if formula is not None:
        return int(formula(*args, **kwargs, out_val=value))
    if returns_view(node):
        return 0
    return sum(
        leaf.numel()
        for leaf in _leaves(value)
        if isinstance(leaf, torch.Tensor)
    )
