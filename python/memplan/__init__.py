"""memplan: static memory planning for compiled ML programs.

    import memplan
    graph = memplan.Graph(
        tensors=[memplan.Tensor("x", 1024, kind="input"),
                 memplan.Tensor("y", 1024, kind="output")],
        ops=[memplan.Op("relu", ["x"], ["y"])])
    plan = memplan.plan(graph, planner="greedy_by_size", alignment=64)
    plan.peak, plan.lower_bound, plan.offset("y"), plan.tensors

A graph is a `Graph` or a dict in the memplan-graph-v1 JSON layout; a
`Problem` (buffers with lifetimes, e.g. from `read_buffer_csv`) can be
planned as well. Every plan is checked by the library's verifier before it is
returned. Invalid input raises ValueError with the library's message; a plan
that does not fit raises CapacityError, one out of time TimeLimitError (both
memplan.Error).

A symbolic graph (Graph.dims {name: (min, max)}, sizes such as
Tensor("x", "256*seq")) is planned once for every value of its dims by
`plan_symbolic`, whose SymbolicPlan gives the ordinary plan at one value,
`plan.at(seq=N)`; a wrong dim or value raises DimError (a memplan.Error and a
ValueError).

`memplan.torch` (imported on use; it needs PyTorch) traces a PyTorch model
into a graph and runs it inside a planned arena.
"""

import collections as _collections
import json as _json
import math as _math
import os as _os
import warnings as _warnings

from memplan._memplan import (  # noqa: F401  (the public API)
    HAVE_ONNX,
    Buffer,
    CapacityError,
    DimError,
    Error,
    Graph,
    Op,
    PlanResult,
    Pool,
    SymbolicPlan,
    Problem,
    Tensor,
    TensorKind,
    TensorPlacement,
    TimeLimitError,
    __version__,
    bind_dims,
    default_planner,
    DEFAULT_MAX_INPUT_SIZE,
    MAX_NAME_BYTES,
    graph_from_json,
    graph_to_json,
    is_symbolic,
    planner_options,
    planners,
    report_html,
)
from memplan import _memplan

__all__ = [
    "Buffer",
    "CapacityError",
    "DEFAULT_MAX_INPUT_SIZE",
    "DimError",
    "Error",
    "Graph",
    "HAVE_ONNX",
    "LimitWarning",
    "MAX_NAME_BYTES",
    "Op",
    "PlanResult",
    "Pool",
    "Problem",
    "Tensor",
    "TensorKind",
    "SymbolicPlan",
    "TensorPlacement",
    "TimeLimitError",
    "bind_dims",
    "build_problem",
    "default_planner",
    "is_symbolic",
    "plan_symbolic",
    "lower_bound_over_orders",
    "optimal_op_order",
    "OptimalOrder",
    "graph_from_dict",
    "graph_to_dict",
    "graph_from_json",
    "graph_to_json",
    "plan",
    "planner_options",
    "planners",
    "read_buffer_csv",
    "read_graph",
    "read_onnx",
    "read_plan",
    "report_html",
    "verify",
    "write_buffer_csv",
    "write_graph",
    "write_plan",
]


class LimitWarning(UserWarning):
    """A time or work limit, not the problem, decided the plan: plan()
    warns with what the limit cut and what limit would give a whole greedy
    pass. The plan's counters say the same (cut_by_work_limit or
    cut_by_time_limit, pass_placed, packed, naive_plan)."""


def graph_from_dict(data):
    """A Graph from a dict in the memplan-graph-v1 layout (as json.load
    gives)."""
    if not isinstance(data, dict):
        raise TypeError(f"expected a dict, got {type(data).__name__}")
    if "format" not in data:  # as the tool rejects a graph file without it
        raise ValueError(
            'graph dict has no "format": a memplan-graph-v1 '
            'graph says so, {"format": "memplan-graph-v1", '
            '"tensors": [...], "ops": [...]}'
        )
    return graph_from_json(_json.dumps(data))


def graph_to_dict(graph):
    """The memplan-graph-v1 dict of a Graph."""
    return _json.loads(graph_to_json(graph))


Graph.from_dict = staticmethod(graph_from_dict)
Graph.to_dict = graph_to_dict
Graph.to_json = graph_to_json


def _input(graph):
    if isinstance(graph, dict):
        return graph_from_dict(graph)
    if isinstance(graph, (Graph, Problem)):
        return graph
    if hasattr(graph, "graph") and isinstance(graph.graph, Graph):
        return graph.graph  # e.g. a memplan.torch.Traced
    raise TypeError(
        "expected a memplan.Graph, a graph dict or a "
        f"memplan.Problem, got {type(graph).__name__}"
    )


def _size(value, what):
    """Bytes: an int, or text with a unit as the tool takes it ("512KiB")."""
    if isinstance(value, str):
        try:
            return _memplan._parse_byte_size(value)
        except ValueError as error:
            raise ValueError(f"{what}: {error}") from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f'{what} must be an int or a size such as "1MiB", '
            f"not {type(value).__name__}"
        )
    return value


def _seconds(value, what):
    """Seconds: a number, or a duration as the tool takes it ("500ms")."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return _memplan._parse_seconds(value)
        except ValueError as error:
            raise ValueError(f"{what}: {error}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"{what} must be a number of seconds or a duration "
            f'such as "500ms", not {type(value).__name__}'
        )
    if not _math.isfinite(value) or value < 0:
        raise ValueError(
            f"{what}={value!r} is not a finite, non-negative "
            "number of seconds"
        )
    return float(value)


def _pools(pools):
    if pools is None:
        return None
    out = []
    for p in pools:
        if isinstance(p, Pool):
            out.append(p)
        elif isinstance(p, dict):
            out.append(
                Pool(
                    p["name"],
                    _size(p.get("capacity", 0), "pool capacity"),
                    _size(p.get("alignment", 1), "pool alignment"),
                )
            )
        else:
            name, *sizes = p
            out.append(Pool(name, *(_size(v, "pool size") for v in sizes)))
    return out


def _check_plan_arguments(graph, progress):
    """What plan() refuses before planning: a graph with unbound dims, a
    progress that cannot be called."""
    if isinstance(graph, Graph) and is_symbolic(graph):
        dims = list(graph.dims) or ["(none declared)"]
        raise DimError(
            f'graph "{graph.name}" has symbolic dims '
            f"{', '.join(dims)}: bind them with "
            f"memplan.bind_dims(graph, {dims[0]}=N), or plan "
            f"every value at once with "
            f"memplan.plan_symbolic(graph)"
        )
    if progress is not None and not callable(progress):
        raise TypeError(
            f"memplan.plan: progress must be callable or None "
            f"(got {progress!r})"
        )


def plan(
    graph,
    planner=None,
    *,
    time_limit=None,
    work_limit=None,
    alignment=1,
    pools=None,
    capacity=0,
    plan_constants=False,
    plan_inputs=True,
    plan_outputs=True,
    seed=0,
    threads=1,
    options=None,
    reorder=None,
    progress=None,
):
    """Plans every tensor of `graph` and returns a verified PlanResult.

    planner: a name of `planners()` (None: `default_planner()`).
    time_limit: seconds of wall clock, or a duration such as "500ms" (None:
      none, so that the same input gives the same plan on any machine, idle
      or busy).
    work_limit: the counted effort of the search planners, in work units
      (about 40 million a second on a typical core; None: the library's
      default, 400 million, or 40 million per second of a time limit).
    alignment: default alignment of every buffer (a power of two). Sizes
      (alignment, capacity, a pool's) are ints or text with a unit, as the
      tool takes them: "64", "512KiB", "1M".
    pools: Pool objects, dicts or (name, capacity, alignment) tuples, fastest
      first (None: the graph's, else one unbounded pool).
    capacity: capacity of the single pool (0: unbounded).
    options: the planner's own options, {name: value} with bool, int, float
      or str values, e.g. {"symmetry": False, "start_share": 0.2} for
      "exact" (`planner_options(name)` lists a planner's; an unknown name or
      a bad value raises ValueError naming it).
    reorder: an op ordering of a graph before planning ("longest_path",
      "memory", "optimal", "window", "reverse_postorder"; None: the graph's
      own order), or "placed": the plan of the smallest peak among the
      graph's order and those of "memory", "window" and (up to 500 ops)
      "optimal"; plan.op_order tells the order.
    progress: None, or a callable progress(peak, planner) called each time
      the planner finds a plan smaller than any before (peak in bytes, the
      name of the planner or member of the default that found it), as it
      plans: for display; it cannot change the plan. An exception it raises
      is raised once the plan is made.
    A plan a time or work limit decided warns with LimitWarning.
    """
    graph = _input(graph)
    _check_plan_arguments(graph, progress)
    try:
        result = _memplan._plan(
            _input(graph),
            planner=planner or "",
            time_limit=_seconds(time_limit, "time_limit"),
            work_limit=work_limit,
            seed=seed,
            threads=threads,
            options=dict(options or {}),
            reorder=reorder or "",
            alignment=_size(alignment, "alignment"),
            pools=_pools(pools),
            capacity=_size(capacity, "capacity"),
            plan_constants=plan_constants,
            plan_inputs=plan_inputs,
            plan_outputs=plan_outputs,
            progress=progress,
        )
    except TypeError as error:
        if "incompatible function arguments" not in str(error):
            raise
        raise TypeError(
            "memplan.plan: an argument has the wrong type: planner and "
            "reorder are str, work_limit, seed and threads int, options a "
            "dict, plan_constants, plan_inputs and plan_outputs bool "
            f"(got planner={planner!r}, work_limit={work_limit!r}, "
            f"seed={seed!r}, threads={threads!r}, reorder={reorder!r})"
        ) from None
    return _warn_when_limited(result, time_limit, work_limit)


def _warn_when_limited(result, time_limit, work_limit):
    """`result`, after a LimitWarning when a time or work limit decided it
    (a greedy pass cut short, its rest packed; a search ended by the
    clock), saying what the limit cut and what a whole pass needs."""
    seconds = _seconds(time_limit, "time_limit")
    note = _memplan._limit_note(result, seconds, work_limit)
    if note:
        _warnings.warn(note, LimitWarning, stacklevel=3)
    return result


def plan_symbolic(
    graph,
    *,
    max_buckets=4,
    target_ratio=1.02,
    alignment=1,
    capacity=0,
    plan_inputs=True,
    plan_outputs=True,
    planner=None,
    time_limit=None,
    work_limit=None,
):
    """Plans a symbolic graph once for every value of its dims and returns a
    SymbolicPlan, proven over the whole ranges before it is returned.

    Each buffer's offset and the peak are expressions in the dims. One plan
    is kept when its peak stays within `target_ratio` of the lower bound at
    sample values of the ranges; otherwise the range of one dim is cut into
    at most `max_buckets` buckets, each with a plan of its own
    (plan.buckets; a bucket whose "steps" give {"seq": m} has its
    expressions in seq_div = seq // m and seq_mod = seq % m).
    plan.at(seq=N) is the ordinary PlanResult of the graph
    bound to N (the bucket holding N, evaluated), which
    memplan.verify(memplan.bind_dims(graph, seq=N), plan.at(seq=N)) checks;
    plan.peak(seq=N) its arena bytes; plan.verify() proves the plan again.
    One pool (unbounded, or `capacity` bytes), no constants planned (as
    plan()'s default). A graph without dims raises DimError: plan it with
    plan(). planner: "symbolic_search" (None: the default),
    "symbolic_greedy" or "upper_bound"; time_limit and work_limit bound the
    planning as plan()'s do.
    """
    graph = _input(graph)
    if not isinstance(graph, Graph):
        raise TypeError(
            "memplan.plan_symbolic: expected a memplan.Graph or a "
            f"graph dict, got {type(graph).__name__}"
        )
    if isinstance(max_buckets, bool) or not isinstance(max_buckets, int):
        raise TypeError(
            f"memplan.plan_symbolic: max_buckets must be an int "
            f"(got {max_buckets!r})"
        )
    return _memplan._plan_symbolic(
        graph,
        max_buckets=max_buckets,
        target_ratio=float(target_ratio),
        alignment=_size(alignment, "alignment"),
        capacity=_size(capacity, "capacity"),
        plan_inputs=plan_inputs,
        plan_outputs=plan_outputs,
        planner=planner or "",
        time_limit=_seconds(time_limit, "time_limit"),
        work_limit=work_limit,
    )


def build_problem(
    graph,
    *,
    alignment=1,
    pools=None,
    capacity=0,
    plan_constants=False,
    plan_inputs=True,
    plan_outputs=True,
):
    """The Problem (buffers, lifetimes, pools) the planners see for `graph`."""
    return _memplan._build_problem(
        _input(graph),
        alignment=_size(alignment, "alignment"),
        pools=_pools(pools),
        capacity=_size(capacity, "capacity"),
        plan_constants=plan_constants,
        plan_inputs=plan_inputs,
        plan_outputs=plan_outputs,
    )


def lower_bound_over_orders(
    graph,
    *,
    alignment=1,
    plan_constants=False,
    plan_inputs=True,
    plan_outputs=True,
    work_limit=0,
):
    """The lower bound over op orders of `graph`: no order of its ops that
    keeps its dependencies, writes, in-place merges and pinned ops (those
    reordering keeps) needs fewer bytes in one pool. Returns (bytes, op
    name where it is reached; "" when it is the graph outputs, all alive at
    the last step), or None when it would count more than `work_limit` work
    units (0: the default, 10**7; about 2 * ops * (ops + edges) / 1600, then
    at most 8e5 for a minimum cut per op on graphs of up to 8192 ops: the
    fewest bytes any order holds while that op runs)."""
    if work_limit < 0:
        raise ValueError(f"work_limit must be >= 0, got {work_limit}")
    graph = _input(graph)
    if not isinstance(graph, Graph):
        raise TypeError(
            "lower_bound_over_orders needs a graph (a Problem "
            "has no ops to order)"
        )
    return _memplan._lower_bound_over_orders(
        graph,
        alignment=_size(alignment, "alignment"),
        plan_constants=plan_constants,
        plan_inputs=plan_inputs,
        plan_outputs=plan_outputs,
        work_limit=work_limit,
    )


class OptimalOrder(
    _collections.namedtuple(
        "OptimalOrder", ["order", "peak", "bound", "proven", "work"]
    )
):
    """What optimal_op_order() knows of the order it found: `order` the op
    names in their new order, `peak` its lower bound in bytes (the most
    alive at one step), `bound` bytes no valid order needs fewer of,
    `proven` whether the two meet, `work` the work units the search
    counted."""

    __slots__ = ()


def optimal_op_order(
    graph,
    *,
    alignment=1,
    plan_constants=False,
    plan_inputs=True,
    plan_outputs=True,
    work_limit=0,
):
    """The order reorder="optimal" gives `graph`, with what is known of it,
    as an OptimalOrder: never worse than the graph's order or "memory"'s,
    proven optimal where the search finishes within `work_limit` work units
    (0: the default, 10**8; counted, not timed: the same graph gets the same
    order). Keeps what
    every ordering keeps (dependencies, writes, in-place merges)."""
    graph = _input(graph)
    if not isinstance(graph, Graph):
        raise TypeError(
            "optimal_op_order needs a graph (a Problem has no " "ops to order)"
        )
    if work_limit < 0:
        raise ValueError(f"work_limit must be >= 0, got {work_limit}")
    return OptimalOrder(
        *_memplan._optimal_op_order(
            graph,
            alignment=_size(alignment, "alignment"),
            plan_constants=plan_constants,
            plan_inputs=plan_inputs,
            plan_outputs=plan_outputs,
            work_limit=work_limit,
        )
    )


def verify(graph, plan):
    """Checks `plan` against `graph` (built with the plan's options) with the
    library's verifier; raises ValueError naming the offending buffers."""
    _memplan._verify(input=_input(graph), plan=plan)


def read_plan(
    path,
    input=None,
    *,
    alignment=None,
    pools=None,
    capacity=None,
    plan_constants=None,
    plan_inputs=None,
    plan_outputs=None,
    reorder=None,
    graph=None,
):
    """A plan file for `input` as a PlanResult: memplan-plan-v1 JSON (buffers
    matched by name), or a buffer CSV with an offset column (.csv, .csv.gz;
    rows matched by id). `input` is the path of the input file (a graph
    .json or .json.gz, a buffer CSV, an ONNX model) or a Graph, graph dict
    or Problem (`graph=` is its former name).

    The input's own declarations are the contract, as for `memplan verify`:
    when no build option is given here, the ones a JSON plan file records
    fill in what the input leaves open (a recorded pool that loosens one the
    input declares is a ValueError), and what they accept beyond the input
    (graph inputs left to the caller, an op ordering) is listed in
    `plan.notes`; otherwise the options given are used (defaults for the
    rest). A plan that records its input's hash is checked against the
    contents of an input given by path, as the tool does (a Graph object has
    no file contents to check)."""
    if input is None:
        if graph is None:
            raise TypeError("read_plan() needs the plan's input")
        input = graph
    elif graph is not None:
        raise TypeError("read_plan() takes input or graph, not both")
    if isinstance(input, (str, _os.PathLike)):
        input = _os.fspath(input)
    else:
        input = _input(input)
    given = [
        alignment,
        pools,
        capacity,
        plan_constants,
        plan_inputs,
        plan_outputs,
        reorder,
    ]
    recorded = all(v is None for v in given)
    return _memplan._read_plan(
        input,
        _os.fspath(path),
        recorded=recorded,
        reorder=reorder or "",
        alignment=1 if alignment is None else alignment,
        pools=_pools(pools),
        capacity=capacity or 0,
        plan_constants=bool(plan_constants),
        plan_inputs=plan_inputs is not False,
        plan_outputs=plan_outputs is not False,
    )


def _split_dims(dims):
    """`dims` of read_graph and read_onnx as (values, ranges): an int binds
    a dim, a (min, max) pair gives it a range (the tool's NAME=MIN:MAX)."""
    values, ranges = {}, {}
    for name, value in (dims or {}).items():
        if isinstance(value, (tuple, list)):
            if len(value) != 2 or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in value
            ):
                raise TypeError(
                    f"dims[{name!r}] = {value!r}: expected a "
                    f"value or a (min, max) pair of ints"
                )
            if value[0] > value[1]:
                raise ValueError(
                    f"dims[{name!r}] = {value!r}: the range's "
                    f"min {value[0]} is larger than its max "
                    f"{value[1]}"
                )
            ranges[name] = (value[0], value[1])
        else:
            values[name] = value
    return values, ranges


def read_graph(path, *, max_input_size=None, dims=None, **onnx_options):
    """A memplan-graph-v1 file (.json, or .json.gz through zlib), or an ONNX
    model (.onnx, through read_onnx with `onnx_options`). `dims` binds
    symbolic dimensions ({"seq": 128}, the tool's --dim): a graph JSON's
    "dims" (each value inside its range; the graph is then planned as any
    other) or an ONNX model's dim_params. A pair gives a range instead
    ({"seq": (1, 512)}, the tool's --dim seq=1:512): a graph JSON's dim is
    narrowed to it (inside its declared range), an ONNX model's dim_param
    stays a symbolic dim over it (read_onnx). A graph whose dims are not all
    bound cannot be planned: plan() raises memplan.Error naming them. A
    file holding more than `max_input_size` bytes once decompressed (None:
    the default, DEFAULT_MAX_INPUT_SIZE, 2 GiB) raises memplan.Error."""
    path = _os.fspath(path)
    if path.endswith(".onnx"):
        if dims is not None:
            onnx_options["dims"] = dims
        return read_onnx(path, **onnx_options)
    if onnx_options:
        raise TypeError("ONNX options apply to .onnx files only")
    values, ranges = _split_dims(dims)
    return _memplan.read_graph(
        path,
        max_input_size=_max_input_size(max_input_size),
        dims=values,
        dim_ranges=ranges,
    )


def read_onnx(
    source, *, dims=None, views="alias", inplace=None, data_inputs=-1
):
    """An ONNX model (a path, or the bytes of a ModelProto) as a Graph,
    imported as `memplan plan model.onnx` imports it: `dims` binds symbolic
    dimensions ({"batch": 8}, the tool's --dim) or, with a (min, max) pair,
    keeps one symbolic over that range ({"sequence": (1, 2048)}: the graph's
    sizes are then expressions in it, memplan/onnx.h says how they are
    found), `views` is "alias" or "copy" (--onnx-views), `inplace` in-place
    hints on element-wise ops (None: with views="alias"), `data_inputs` as
    --onnx-data-inputs. Raises memplan.Error when this module was built
    without ONNX support (memplan.HAVE_ONNX is False)."""
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source)
    else:
        source = _os.fspath(source)
    values, ranges = _split_dims(dims)
    return _memplan.read_onnx(
        source,
        dims=values,
        views=views,
        inplace=inplace,
        data_inputs=data_inputs,
        dim_ranges=ranges,
    )


def write_graph(graph, path):
    """Writes a memplan-graph-v1 file (gzipped when the name ends in .gz)."""
    _memplan.write_graph(graph=_input(graph), path=_os.fspath(path))


def read_buffer_csv(path, *, max_input_size=None):
    """A buffer CSV (id,lower,upper,size[,offset]) as (Problem, PlanResult or
    None when the file has no offset column); `max_input_size` as
    read_graph's."""
    return _memplan.read_buffer_csv(
        _os.fspath(path), max_input_size=_max_input_size(max_input_size)
    )


def _max_input_size(size):
    return (
        DEFAULT_MAX_INPUT_SIZE
        if size is None
        else _size(size, "max_input_size")
    )


def write_buffer_csv(problem_or_plan, path):
    """Writes a Problem's buffers as CSV; a PlanResult adds the offsets."""
    _memplan.write_buffer_csv(
        problem_or_plan=problem_or_plan, path=_os.fspath(path)
    )


_FORMATS = ("json", "csv", "c-header", "tflm-offline")


def write_plan(
    plan, path, *, format=None, input=None, name=None, prefix="MEMPLAN"
):
    """Writes `plan` as `memplan plan --out=PATH` does, in the format `format`
    names or else PATH's extension: "json" (.json: memplan-plan-v1, with
    every tensor's place for a graph, and the input's name, hash and build
    options when `input` is the path of the file planned), "csv" (.csv: the
    buffer CSV with offsets), "c-header" (.h: `name` is the include guard's,
    default the input's file name or the graph's name, `prefix` the
    macros') or "tflm-offline"
    (TFLite Micro's offline plan, binary). .json and .csv may end in .gz."""
    path = _os.fspath(path)
    if input is not None:
        input = _os.fspath(input)
    plain = path[:-3] if path.endswith(".gz") else path
    if format is None:
        if plain.endswith(".json"):
            format = "json"
        elif plain.endswith(".csv"):
            format = "csv"
        elif plain.endswith(".h"):
            format = "c-header"
        else:
            raise ValueError(
                f"{path}: unknown output format (expected .json, "
                ".csv, .h, each optionally .gz, or format=)"
            )
    if format == "json":
        data = plan.to_json(input=input).encode()
    elif format == "csv":
        data = plan.to_csv().encode()
    elif format == "c-header":
        if name is None:
            name = (
                _os.path.basename(input)
                if input
                else (
                    plan.graph.name
                    if plan.graph is not None
                    else plan.problem.name
                )
                or "plan"
            )
        data = plan.to_c_header(name, prefix).encode()
    elif format == "tflm-offline":
        data = plan.tflm_offline_bytes()
    else:
        raise ValueError(
            f"format={format!r}: unknown; valid: " + ", ".join(_FORMATS)
        )
    _memplan._write_file(path=path, data=data)
