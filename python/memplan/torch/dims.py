"""Symbolic dims: the dynamic dimensions torch.export gives the inputs, and
for trace(..., symbolic=True) each tensor's size as the polynomial in the
dims that the exported program's symbolic shapes give (docs/symbolic.md)."""

import memplan.torch.record as _record
from memplan.torch._common import flatten, torch_module
from memplan.torch.errors import TraceError
from memplan.torch.records import DynamicDim


def dynamic_dims(ep, user_nodes, input_names, example_inputs):
    """The dynamic dimensions of the user inputs, bound to example values."""
    torch = torch_module()
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
            dims.append(
                DynamicDim(
                    input=tname,
                    dim=d,
                    symbol=str(expr),
                    value=int(example.shape[d]),
                    min=lo,
                    max=hi,
                )
            )
    return dims


def dim_names(model, example_inputs, dynamic_shapes):
    """Per example input, {dimension: the torch.export.Dim's name} of its
    dynamic_shapes entry (by the forward's parameter names for a dict)."""
    import inspect  # noqa: PLC0415

    if isinstance(dynamic_shapes, dict):
        try:
            order = list(
                inspect.signature(model.forward).bind(*example_inputs).arguments
            )
        except (TypeError, ValueError):
            order = list(dynamic_shapes)
        specs = [dynamic_shapes.get(n) for n in order]
    else:
        specs = list(dynamic_shapes)
    out = []
    for spec in specs:
        items = (
            spec.items() if isinstance(spec, dict) else enumerate(spec or ())
        )
        out.append(
            {
                d: dim.__name__
                for d, dim in items
                if isinstance(getattr(dim, "__name__", None), str)
                and dim.__name__.isidentifier()
            }
        )
    return out


def copy_module(module):
    """A GraphModule of a copy of `module`'s graph (node names and meta
    kept), to record without changing `module`."""
    torch = torch_module()
    graph = torch.fx.Graph()
    graph.output(graph.graph_copy(module.graph, {}))
    return torch.fx.GraphModule(module, graph)


def _sym(value):
    """A size, stride or offset of a fake tensor as a sympy expression."""
    torch = torch_module()
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
    extent = 1 + sum(
        ((x - 1) * _sym(st) for x, st in zip(sizes, v.stride())),
        sympy.Integer(0),
    )
    return (_sym(v.storage_offset()) + extent) * v.element_size()


def _dim_expression(expr, dim_of, what):
    """memplan's text of sympy `expr` in torch's symbols, with each symbol
    renamed by dim_of; TraceError naming `what` unless it is a polynomial
    with non-negative integer coefficients."""
    import sympy  # noqa: PLC0415

    expr = sympy.expand(expr)
    free = sorted(expr.free_symbols, key=str)
    shown = expr.subs(
        {f: sympy.Symbol(dim_of.get(str(f), str(f))) for f in free}
    )
    unknown = [str(f) for f in free if str(f) not in dim_of]
    if unknown:
        raise TraceError(
            f"{what}: its size {shown} uses the symbol "
            f"{', '.join(unknown)}, which is no dynamic "
            f"dimension of the inputs"
        )
    if not free:
        if not expr.is_Integer or expr < 0:
            raise TraceError(f"{what}: its size is {expr}")
        return int(expr)
    if not expr.is_polynomial(*free):
        raise TraceError(
            f"{what}: its size {shown} is not a polynomial in "
            f"the dims (floor division, max, ...); memplan "
            f"sizes are polynomials with integer coefficients"
        )
    terms = []
    for monom, coeff in sympy.Poly(expr, *free).terms():
        if not coeff.is_Integer or coeff < 0:
            raise TraceError(
                f"{what}: its size {shown} has the term "
                f"{coeff} (not a non-negative integer "
                f"coefficient); memplan sizes are sums of "
                f"non-negative terms"
            )
        terms.append(
            "*".join(
                [str(int(coeff))]
                + [
                    dim_of[str(g)]
                    for g, p in zip(free, monom)
                    for _ in range(p)
                ]
            )
        )
    return " + ".join(terms)


def _symbolic_dims(dynamic, dim_names, input_names):
    """({torch symbol: dim name}, {dim name: (min, max)}): each root
    dynamic dimension named after the user's torch.export.Dim; sets
    DynamicDim.name."""
    dim_of, dims = {}, {}
    for d in dynamic:
        if not d.symbol.isidentifier():
            continue  # derived (2*seq): an expression in a root dim
        names = (
            dim_names[input_names.index(d.input)]
            if input_names.index(d.input) < len(dim_names)
            else {}
        )
        d.name = dim_of.setdefault(d.symbol, names.get(d.dim, d.symbol))
        if d.max is None:
            raise TraceError(
                f'dimension {d.dim} of input "{d.input}" (dim {d.name}) '
                f"has no upper bound: give it one, torch.export.Dim("
                f'"{d.name}", min=..., max=...)'
            )
        dims[d.name] = (d.min, d.max)
    return dim_of, dims


def _fake_values(recorded):
    """Tensor name -> its fake value (node.meta["val"])."""
    fake = {}
    for node, tname in recorded.names.items():
        val = node.meta.get("val")
        if val is None:
            continue
        if isinstance(tname, list):
            for leaf, n in zip(flatten(val), tname):
                if n is not None:
                    fake[n] = leaf
        else:
            fake[tname] = val
    return fake


def _size_expression(t, recorded, fake):
    """The sympy expression of tensor record `t`'s planned size, or None
    when the fake values give none (its recorded size is kept)."""
    members = [m for m in recorded.tensors.values() if m.root == t.name]
    if t.name in fake and t.root == t.name:
        return _sym(fake[t.name].untyped_storage().nbytes())
    if t.root == t.name:  # a storage several results share
        leaf = next((fake[m.name] for m in members if m.name in fake), None)
        if leaf is None:
            return None
        return _sym(leaf.untyped_storage().nbytes())
    if t.name not in fake:
        return None
    # As recorded: from the base's first byte (the storage's for a view of
    # a shared storage) to the view's last.
    first = 0
    if t.base is not None:
        base = recorded.tensors[t.base]
        first = (
            _sym(fake[t.base].storage_offset())
            if t.base in fake
            else base.storage_offset
        ) * base.itemsize
    return _last_byte(fake[t.name]) - first


def _symbolic_sizes(recorded, dynamic, dim_of, name):
    """({tensor: size text, or bytes where fixed}, the widened views)."""
    fake = _fake_values(recorded)
    values = {d.symbol: d.value for d in dynamic if d.name is not None}
    sizes, widened = {}, set()
    for t in recorded.tensors.values():
        producer = (
            f'op "{recorded.ops[t.producer].name}"'
            if t.producer is not None and t.producer < len(recorded.ops)
            else "an input"
        )
        what = f'tensor "{t.name}" of {name} (made by {producer})'
        expr = _size_expression(t, recorded, fake)
        if expr is None:
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
        at_example = expr.subs({f: values[str(f)] for f in expr.free_symbols})
        if int(at_example) != t.size:
            raise TraceError(
                f"{what}: its size {text} is {at_example} at "
                f"the example, which has {t.size} bytes"
            )
        sizes[t.name] = text
    return sizes, widened


def symbolic(
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
):
    """The symbolic Traced: recorded at the example, each size the
    polynomial the exported program's fake tensors give, in dims named
    after the user's torch.export.Dim objects."""
    dim_of, dims = _symbolic_dims(dynamic, dim_names, input_names)
    recorded = _record.record(
        copy_module(module),
        placeholders,
        input_names,
        dict(constants),
        example_inputs,
        training,
        name,
        spec,
    )
    sizes, widened = _symbolic_sizes(recorded, dynamic, dim_of, name)
    graph = _record.make_graph(name, recorded.tensors, recorded.ops, sizes)
    graph.dims = dims
    recorded.graph = graph
    recorded.exported = ep
    recorded.dynamic_dims = [d for d in dynamic if d.name is not None]
    recorded.buffer_writes = buffer_writes
    recorded.dims = dims
    recorded.source = module
    recorded.widened = widened
    return recorded
