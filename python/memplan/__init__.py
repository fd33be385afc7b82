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
    HAVE_TFLITE,
    Buffer,
    CapacityError,
    DimError,
    Error,
    Graph,
    Op,
    PlanResult,
    Pool,
    RematResult,
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
from memplan import _progress

__all__ = [
    "Buffer",
    "CapacityError",
    "DEFAULT_MAX_INPUT_SIZE",
    "DimError",
    "Error",
    "Graph",
    "HAVE_ONNX",
    "HAVE_TFLITE",
    "LimitWarning",
    "MAX_NAME_BYTES",
    "Op",
    "PlanResult",
    "Pool",
    "Problem",
    "RematResult",
    "Tensor",
    "TensorKind",
    "SymbolicPlan",
    "TensorPlacement",
    "TimeLimitError",
    "bind_dims",
    "build_problem",
    "compare",
    "Comparison",
    "cmake_dir",
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
    "read_tflite",
    "read_plan",
    "rematerialize",
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
    try:
        text = _json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as error:
        found = _bad_json_value(data, "graph", set())
        if found is None:  # e.g. a list that holds itself
            raise ValueError(f"graph dict: {error}") from None
        where, value = found
        raise ValueError(
            f"graph dict: {where} = {value!r} is not a JSON value: sizes "
            "and other numbers are finite ints or floats, names str"
        ) from None
    return graph_from_json(text)


def _bad_json_value(value, where, seen):
    """(path, value) of the first value of `value` that JSON cannot hold
    (nan, inf, an object of another type), e.g. ("graph['tensors'][0]
    ['size']", nan); None when there is none (`seen`: the ids of the
    containers on the way, so that one holding itself ends the search)."""
    if isinstance(value, float) and not _math.isfinite(value):
        return where, value
    if isinstance(value, (dict, list, tuple)):
        if id(value) in seen:
            return None
        seen.add(id(value))
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                return f"{where} key", key
            found = _bad_json_value(item, f"{where}[{key!r}]", seen)
            if found is not None:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = _bad_json_value(item, f"{where}[{i}]", seen)
            if found is not None:
                return found
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return None
    return where, value


def graph_to_dict(graph):
    """The memplan-graph-v1 dict of a Graph."""
    return _json.loads(graph_to_json(graph))


_graph_init = Graph.__init__


def _graph_init_with_dims(self, *args, dims=None, **kwargs):
    """Graph(name=, tensors=, ops=, pools=, conflicts=, dims=): `dims`
    {name: (min, max)} declares the dims the tensors' symbolic sizes use,
    as setting graph.dims does."""
    _graph_init(self, *args, **kwargs)
    if dims is not None:
        if not isinstance(dims, dict):
            raise TypeError(
                "Graph: dims must be a dict {name: (min, max)}, not "
                f"{type(dims).__name__}"
            )
        self.dims = dims


_graph_init_with_dims.__doc__ = (
    (_graph_init.__doc__ or "") + "\n" + _graph_init_with_dims.__doc__
)
Graph.__init__ = _graph_init_with_dims
Graph.from_dict = staticmethod(graph_from_dict)


_RECORD_FIELDS = (
    "name",
    "kind",
    "size",
    "planned",
    "buffer",
    "pool",
    "offset",
    "end",
    "start_step",
    "end_step",
)


def _plan_records(plan):
    """One dict per tensor of the plan (plan.placements), in the graph's
    order: name, kind, size (the tensor's bytes), planned, buffer (its
    index), pool (name), offset, end (offset + size) and start_step,
    end_step (its buffer's lifetime, [start_step, end_step)); the place and
    steps are None for a tensor not planned."""
    buffers = plan.buffers
    records = []
    for p in plan.placements:
        b = buffers[p.buffer] if p.planned else None
        records.append(
            {
                "name": p.name,
                "kind": p.kind,
                "size": p.size,
                "planned": p.planned,
                "buffer": p.buffer,
                "pool": p.pool,
                "offset": p.offset,
                "end": p.offset + p.size if p.planned else None,
                "start_step": b["start"] if b else None,
                "end_step": b["end"] if b else None,
            }
        )
    return records


def _plan_to_pandas(plan):
    """plan.to_records() as a pandas DataFrame, one row per tensor (pandas
    is optional: ImportError says how to install it)."""
    try:
        import pandas
    except ImportError:
        raise ImportError(
            "plan.to_pandas() needs pandas: pip install pandas "
            "(plan.to_records() gives the same rows as dicts)"
        ) from None
    return pandas.DataFrame(plan.to_records(), columns=list(_RECORD_FIELDS))


def _html_table(header, rows):
    import html

    cells = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(f"<td>{html.escape(str(v))}</td>" for v in row)
        + "</tr>"
        for row in rows
    )
    return (
        f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"
    )


def _plan_repr_html(plan, max_rows=20):
    """A notebook's view of a plan: its figures, then its largest tensors."""
    import html

    ratio = plan.peak / plan.lower_bound if plan.lower_bound else 1.0
    head = (
        f"<p><b>memplan plan</b> by {html.escape(plan.planner)}: peak "
        f"{plan.peak:,} bytes, {ratio:.4f}x the lower bound "
        f"{plan.lower_bound:,}, naive total {plan.naive_total:,}"
        f"{', proven optimal' if plan.proven_optimal else ''}</p>"
    )
    records = [r for r in plan.to_records() if r["planned"]]
    records.sort(key=lambda r: (-r["size"], r["name"]))
    shown = records[:max_rows]
    table = _html_table(
        ["tensor", "kind", "size", "pool", "offset", "steps"],
        [
            [
                r["name"],
                r["kind"],
                f"{r['size']:,}",
                r["pool"],
                f"{r['offset']:,}",
                f"[{r['start_step']}, {r['end_step']})",
            ]
            for r in shown
        ],
    )
    more = len(records) - len(shown)
    tail = (
        f"<p>… {more:,} more planned tensors (plan.to_pandas() has all)</p>"
        if more > 0
        else ""
    )
    return f"<div>{head}{table}{tail}</div>"


def _symbolic_repr_html(plan):
    """A notebook's view of a symbolic plan: its dims and buckets."""
    dims = ", ".join(
        f"{n} in [{lo}, {hi}]" for n, (lo, hi) in plan.dims.items()
    )
    rows = [
        [
            ", ".join(
                f"{n} in [{lo}, {hi}]" for n, (lo, hi) in b["dims"].items()
            ),
            b["peak"],
        ]
        for b in plan.buckets
    ]
    import html

    return (
        f"<div><p><b>memplan symbolic plan</b> over {html.escape(dims)}: "
        f"{len(rows)} bucket(s)</p>"
        f"{_html_table(['bucket', 'peak'], rows)}</div>"
    )


PlanResult.to_records = _plan_records
PlanResult.to_pandas = _plan_to_pandas
PlanResult._repr_html_ = _plan_repr_html
SymbolicPlan._repr_html_ = _symbolic_repr_html
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
    if isinstance(pools, (str, bytes, dict, Pool)):
        raise TypeError(
            f"pools={pools!r}: expected a list of pools, fastest first, each "
            "a Pool, a dict or a (name, capacity, alignment) tuple, e.g. "
            'pools=[("sram", "256KiB"), ("dram", 0)]'
        )
    out = []
    for p in pools:
        if isinstance(p, (str, bytes)):
            raise TypeError(
                f"pools: {p!r} is a str, not a pool: write ({p!r}, "
                "CAPACITY) or memplan.Pool(name, capacity)"
            )
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
    _check_progress("plan", progress)


def _check_progress(call, progress):
    if progress is None or isinstance(progress, bool) or callable(progress):
        return
    raise TypeError(
        f"memplan.{call}: progress must be callable, True, False or None "
        f"(got {progress!r})"
    )


def _check_int(value, name, low, high):
    """TypeError unless `value` is an int (not a bool), ValueError unless
    low <= value <= high; both name the argument."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"memplan.plan: {name} must be an int, not "
            f"{type(value).__name__} ({value!r})"
        )
    if not low <= value <= high:
        top = "2**64 - 1" if high == 2**64 - 1 else f"{high:,}"
        raise ValueError(
            f"memplan.plan: {name}={value!r} is out of range: give an int "
            f"from {low} to {top}"
        )


def _check_solve_arguments(seed, threads, work_limit, options):
    """TypeError or ValueError naming the first of plan()'s search arguments
    that is not what it takes."""
    _check_int(seed, "seed", 0, 2**64 - 1)
    _check_int(threads, "threads", 1, 2**31 - 1)
    if work_limit is not None:
        _check_int(work_limit, "work_limit", 0, 2**63 - 1)
    if options is not None and not isinstance(options, dict):
        raise TypeError(
            "memplan.plan: options must be a dict {name: value}, not "
            f"{type(options).__name__}"
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
      is raised once the plan is made. True: a tqdm bar when tqdm is
      installed (else a line on stderr) with the best peak so far, ending
      with the plan's ratio to the lower bound and why it stopped
      ("proven optimal", "at the lower bound" or "done").
    A plan a time or work limit decided warns with LimitWarning.
    """
    arguments = {
        name: value
        for name, value in locals().items()
        if name not in ("graph", "planner", "progress")
    }
    graph = _input(graph)
    _check_plan_arguments(graph, progress)
    _check_solve_arguments(seed, threads, work_limit, options)
    if progress is True:
        return _plan_with_display(
            lambda shown: plan(graph, planner, progress=shown, **arguments)
        )
    try:
        result = _memplan._plan(
            _input(graph),
            planner=planner or "",
            progress=progress or None,
            **_module_arguments(**arguments),
        )
    except TypeError as error:
        if "incompatible function arguments" not in str(error):
            raise
        raise _wrong_plan_argument(planner, **arguments) from None
    return _warn_when_limited(result, time_limit, work_limit)


def _module_arguments(
    time_limit, options, reorder, alignment, pools, capacity, **rest
):
    """plan()'s keyword arguments as the module takes them: sizes and
    durations read, pools made Pool objects."""
    return dict(
        rest,
        time_limit=_seconds(time_limit, "time_limit"),
        options=dict(options or {}),
        reorder=reorder or "",
        alignment=_size(alignment, "alignment"),
        pools=_pools(pools),
        capacity=_size(capacity, "capacity"),
    )


def _wrong_plan_argument(planner, work_limit, seed, threads, reorder, **_):
    """plan()'s TypeError for arguments the module refused by type."""
    return TypeError(
        "memplan.plan: an argument has the wrong type: planner and "
        "reorder are str, work_limit, seed and threads int, options a "
        "dict, plan_constants, plan_inputs and plan_outputs bool "
        f"(got planner={planner!r}, work_limit={work_limit!r}, "
        f"seed={seed!r}, threads={threads!r}, reorder={reorder!r})"
    )


def _plan_with_display(run):
    """plan(progress=True): run(improved) with a progress display, which
    ends with the plan's ratio to the lower bound and why the run stopped."""
    display = _progress.Display("plan")
    try:
        result = run(display.improved)
    except BaseException:
        display.close("failed")
        raise
    ratio = (
        f" = {result.peak / result.lower_bound:.4f}x lower bound"
        if result.lower_bound > 0 and len(result.pool_used) == 1
        else ""
    )
    display.close(
        _progress.stop_reason(result),
        f"best peak {result.peak:,} bytes{ratio} ({result.planner})",
    )
    return result


def _warn_when_limited(result, time_limit, work_limit):
    """`result`, after a LimitWarning when a time or work limit decided it
    (a greedy pass cut short, its rest packed; a search ended by the
    clock), saying what the limit cut and what a whole pass needs."""
    seconds = _seconds(time_limit, "time_limit")
    note = _memplan._limit_note(result, seconds, work_limit)
    if note:
        _warnings.warn(note, LimitWarning, stacklevel=3)
    return result


def _remat_graph(graph, exact):
    """rematerialize()'s graph, its arguments checked."""
    graph = _input(graph)
    if not isinstance(graph, Graph):
        raise TypeError(
            "memplan.rematerialize: expected a memplan.Graph (a problem "
            "has no ops to run again)"
        )
    _check_plan_arguments(graph, None)
    if not isinstance(exact, bool):
        raise TypeError(
            "memplan.rematerialize: exact must be True or False, not "
            f"{type(exact).__name__} ({exact!r})"
        )
    return graph


def rematerialize(
    graph,
    budget,
    *,
    exact=False,
    planner=None,
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
):
    """Fits a training step into `budget` bytes by running chosen ops again
    (DESIGN.md, "Op costs and recomputation"); returns a RematResult.

    budget: the peak to reach, in bytes: an int or a size such as "512KiB".
    The graph's ops that may be recomputed (Op.recomputable: no writes, no
    randomness) are, when their outputs are read, left unread over a
    stretch of steps and read again, run a second time (a copy named after
    the op with ".recompute") before the later reader, which then reads the
    copy's outputs; the earlier outputs are freed in between. A greedy
    search picks the recomputations of the most bytes freed per unit of
    Op.cost until the plan's peak is at most the budget.

    exact=True searches instead for the least added cost, by branch and
    bound (for graphs of up to about 60 ops): result.proven is True when it
    proved that no rewrite of its stage model (ops run again at the steps
    of the graph's own op order where their outputs are read) fits the
    budget at a smaller cost; False when the limits ran out first (raise
    work_limit), and always for the heuristic. work_limit (plan()'s
    default when None) and time_limit bound the whole search; when they
    run out before any rewrite within the budget is found, the error says
    so.

    result.graph is the rewritten graph, result.plan its verified plan (in
    the graph's own order; `verify(result.graph, result.plan)` checks it
    again), result.added_cost the sum of the recomputed ops' costs,
    result.peak_without the peak of the graph as given and
    result.recomputed the inserted ops' names. A graph that already fits
    comes back as it is (nothing recomputed).

    The other arguments are plan()'s (no reorder: the graph's own order is
    planned). A budget no recomputation found reaches raises ValueError
    giving the smallest peak found.
    """
    graph = _remat_graph(graph, exact)
    _check_solve_arguments(seed, threads, work_limit, options)
    arguments = _module_arguments(
        time_limit=time_limit,
        options=options,
        reorder=None,
        alignment=alignment,
        pools=pools,
        capacity=capacity,
        work_limit=work_limit,
        plan_constants=plan_constants,
        plan_inputs=plan_inputs,
        plan_outputs=plan_outputs,
        seed=seed,
        threads=threads,
    )
    del arguments["reorder"]
    return _memplan._rematerialize(
        graph,
        _size(budget, "budget"),
        planner=planner or "",
        exact=exact,
        **arguments,
    )


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
    progress=None,
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
    planning as plan()'s do. progress: None, a callable progress(stage)
    told each stage of the planning as a line of text (it cannot change the
    plan; an exception it raises is raised once the plan is made), or True:
    a tqdm bar (else a line on stderr) showing the stage, ending with the
    buckets kept.
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
    _check_progress("plan_symbolic", progress)
    display = _progress.Display("plan_symbolic") if progress is True else None
    try:
        result = _memplan._plan_symbolic(
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
            progress=display.stage if display else (progress or None),
        )
    except BaseException:
        if display:
            display.close("failed")
        raise
    if display:
        buckets = len(result.buckets)
        display.close(
            "done", f"{buckets} bucket{'' if buckets == 1 else 's'} planned"
        )
    return result


def cmake_dir():
    """The CMake directory of the C++ package that `pip install` put beside
    this one (memplan::memplan, its headers and static libraries), for a
    C++ project of the same environment: cmake -Dmemplan_DIR=... then
    find_package(memplan CONFIG). None where there is none (a build tree,
    or a package installed by `cmake --install`, whose prefix has it)."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    for libdir in ("lib", "lib64"):
        path = _os.path.join(here, libdir, "cmake", "memplan")
        if _os.path.isfile(_os.path.join(path, "memplanConfig.cmake")):
            return path
    return None


class Comparison:
    """Plans of one graph by several planners, as compare() makes them:
    `plans` {planner: PlanResult} of those that planned, `failures`
    {planner: message} of those that did not, `rows` one dict per planner
    (planner, peak, lower_bound, ratio, naive_total, proven_optimal,
    wall_time in seconds, error), in the order asked. to_records() gives the
    rows, to_pandas() a DataFrame of them, report_html() the comparison
    page of `memplan report --planners=... --html`; a notebook shows the
    rows as a table."""

    def __init__(self, plans, failures, order):
        self.plans = plans
        self.failures = failures
        self.rows = []
        for name in order:
            p = plans.get(name)
            self.rows.append(
                {
                    "planner": name,
                    "peak": p.peak if p else None,
                    "lower_bound": p.lower_bound if p else None,
                    "ratio": (
                        p.peak / p.lower_bound
                        if p and p.lower_bound
                        else (1.0 if p else None)
                    ),
                    "naive_total": p.naive_total if p else None,
                    "proven_optimal": p.proven_optimal if p else None,
                    "wall_time": p.wall_time if p else None,
                    "error": failures.get(name),
                }
            )

    def to_records(self):
        return [dict(row) for row in self.rows]

    def to_pandas(self):
        try:
            import pandas
        except ImportError:
            raise ImportError(
                "Comparison.to_pandas() needs pandas: pip install pandas "
                "(to_records() gives the same rows as dicts)"
            ) from None
        return pandas.DataFrame(self.to_records())

    def report_html(self, title=""):
        return report_html(
            list(self.plans.values()),
            title=title,
            failures=sorted(self.failures.items()),
        )

    def _repr_html_(self):
        rows = [
            [
                r["planner"],
                "" if r["peak"] is None else f"{r['peak']:,}",
                "" if r["ratio"] is None else f"{r['ratio']:.4f}x",
                "" if r["proven_optimal"] is None else r["proven_optimal"],
                "" if r["wall_time"] is None else f"{r['wall_time']:.3f} s",
                r["error"] or "",
            ]
            for r in self.rows
        ]
        header = ["planner", "peak", "x lower bound", "proven", "time", "error"]
        return (
            "<div><p><b>memplan comparison</b> of "
            f"{len(self.rows)} planner(s)</p>"
            f"{_html_table(header, rows)}</div>"
        )

    def __repr__(self):
        return (
            "Comparison("
            + ", ".join(
                f"{r['planner']}: {r['peak'] if r['error'] is None else 'failed'}"
                for r in self.rows
            )
            + ")"
        )


_planners = planners  # compare() takes a list of the same name


def compare(graph, planners=None, **plan_arguments):
    """Plans `graph` with each planner of `planners` (None: every one of
    planners()) and the same plan() arguments, as `memplan compare`, and
    returns a Comparison. A planner that fails with memplan.Error (out of
    capacity or time) gets a row saying why; a bad argument raises at
    once."""
    if isinstance(planners, str):
        raise TypeError(
            f"memplan.compare: planners={planners!r} must be a list of "
            f"names, e.g. [{planners!r}]"
        )
    names = list(planners) if planners is not None else list(_planners())
    if not names:
        raise ValueError("memplan.compare: planners names no planner")
    graph = _input(graph)
    plans, failures = {}, {}
    for name in names:
        try:
            plans[name] = plan(graph, name, **plan_arguments)
        except Error as error:
            failures[name] = str(error)
    return Comparison(plans, failures, names)


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


def _check_dim(name, value):
    """TypeError or ValueError naming dims[name] when the name is no text
    or a value no int64."""
    if not isinstance(name, str):
        raise TypeError(f"dims: the keys are dim names (str), not {name!r}")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            f"dims: the dim name {name!r} is not valid text (it has a lone "
            "surrogate, which has no UTF-8): use a plain string"
        ) from None
    ends = value if isinstance(value, (tuple, list)) else [value]
    for v in ends:
        if isinstance(v, int) and not isinstance(v, bool) and v >= 2**63:
            raise ValueError(
                f"dims[{name!r}] = {value!r} is out of range: a dim's "
                "values are at most 2**63 - 1"
            )
    if not isinstance(value, (tuple, list)) and (
        isinstance(value, bool) or not isinstance(value, int)
    ):
        raise TypeError(
            f"dims[{name!r}] = {value!r}: expected an int or a (min, max) "
            "pair of ints"
        )


def _split_dims(dims):
    """`dims` of read_graph and read_onnx as (values, ranges): an int binds
    a dim, a (min, max) pair gives it a range (the tool's NAME=MIN:MAX)."""
    values, ranges = {}, {}
    for name, value in (dims or {}).items():
        _check_dim(name, value)
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
    if path.endswith(".tflite"):
        if dims is not None or onnx_options:
            raise TypeError("a .tflite model takes no dims or ONNX options")
        return read_tflite(path)
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


def read_tflite(source):
    """Subgraph 0 of a TensorFlow Lite model (a path, or the model's bytes)
    as a Graph, read as `memplan plan model.tflite` reads it: tensors in
    flatbuffer order with TFLM's sizes and 16-byte alignment, constants and
    variable tensors left to TFLM, kernel scratch as scratch tensors
    (docs/tflite.md). A bad file raises ValueError naming what is wrong
    (NotImplementedError for what memplan does not plan: control flow,
    string tensors), a missing one FileNotFoundError; a module built without
    TFLite support raises memplan.Error (memplan.HAVE_TFLITE is False)."""
    if isinstance(source, (bytes, bytearray)):
        return _memplan.read_tflite(bytes(source))
    return _memplan.read_tflite(_os.fspath(source))


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
