"""memplan as torch.compile's memory planner (Inductor's pooled buffers).

    import memplan.inductor
    with memplan.inductor.planning() as session:
        compiled = torch.compile(model)
        compiled(x)                 # compiled here: pools planned by memplan
    session.graphs                  # what was planned, graph by graph

With `torch._inductor.config.memory_planning` Inductor's wrapper code
allocates its intermediate buffers from pools; `MemoryPlanner` joins the
buffers that reuse each other's storage into groups (`BufferGroup`), gives
each group a live range (`compute_live_ranges`) and places the groups in
pools (`allocate_groups`). This module replaces that last step only: each
pool (the kinds of `config.memory_pool`: "intermediates", "outputs" or
"combined") is planned by memplan, its plan checked by memplan's verifier and
the offsets written back checked again against Inductor's live ranges.
Static sizes get integer offsets from `memplan.plan`; sizes that are
expressions of Inductor's shape symbols get one symbolic plan over the
symbols' ranges (`memplan.plan_symbolic`), written back as sympy
expressions. Whatever cannot be planned this way falls back to Inductor's
own planner with one `FallbackWarning` naming why. See docs/inductor.md.
"""

import contextlib
import dataclasses
import inspect
import re
import time
import warnings

import memplan

__all__ = [
    "DEFAULT_SYMBOLIC_WORK_LIMIT",
    "DEFAULT_UNBOUNDED_MAX",
    "FallbackWarning",
    "GraphRecord",
    "PoolRecord",
    "Session",
    "install",
    "installed",
    "planning",
    "uninstall",
]

# A shape symbol without an upper bound is planned up to this value; above
# it the wrapper code lays the pool's buffers side by side (no reuse), so the
# code stays correct at every size.
DEFAULT_UNBOUNDED_MAX = 4096

# The work limit of a symbolic search (memplan.plan_symbolic's units): on
# the decoder of the tests it finds the plan of the library's default.
DEFAULT_SYMBOLIC_WORK_LIMIT = 2_000_000

_SYMBOLIC_PLANNERS = ("symbolic_greedy", "symbolic_search", "upper_bound")
_ALIGN = 64  # Inductor's ALIGN_BYTES: every offset a multiple of it
_SAMPLES = 6  # values of each symbol at which written-back offsets are checked


class FallbackWarning(UserWarning):
    """memplan did not plan a graph (or could not hook into Inductor):
    Inductor's own memory planner planned it; the message says why."""


class _Unsupported(Exception):
    """What memplan.inductor cannot plan; its text names the item."""


@dataclasses.dataclass
class PoolRecord:
    """One pool memplan planned: its kind, groups and bytes."""

    kind: str  # "intermediates", "outputs", "combined" or "output"
    groups: int
    nbytes: object  # int, or a sympy expression of the shape symbols
    planner: str  # the memplan planner, or "" for a pool of one group


@dataclasses.dataclass
class GraphRecord:
    """What happened to one graph's pools.

    fallback: None when memplan planned the pools, else why Inductor's own
    planner did. nbytes, inductor_nbytes and lower_bound are the sums over
    the graph's pools (memplan's, Inductor's own at the size hints of the
    symbols, and the most bytes live at one step: no placement of the same
    live ranges needs fewer). pool_bound (static graphs): no placement
    needs fewer bytes with the output pools Inductor's memory_pool gives
    (_pool_bound); proven_optimal: nbytes is at it, or memplan proved its
    plan of a single pool optimal. For a symbolic graph they are sympy
    expressions (`inductor_nbytes` is what Inductor's own plan allocates at
    each size, `lower_bound` a function of the symbols' values:
    `record.lower_bound_at({symbol_name: value})`).
    """

    groups: int = 0
    pools: list = dataclasses.field(default_factory=list)
    symbols: dict = dataclasses.field(default_factory=dict)  # name: (lo, hi)
    capped: list = dataclasses.field(default_factory=list)
    nbytes: object = 0
    inductor_nbytes: object = 0
    lower_bound: int = 0
    pool_bound: int = 0  # static: the fewest bytes with these output pools
    plan_seconds: float = 0.0
    proven_optimal: bool = True  # nbytes proven the fewest (static graphs)
    fallback: str = None
    _sizes: list = dataclasses.field(default_factory=list, repr=False)
    _ranges: list = dataclasses.field(default_factory=list, repr=False)

    @property
    def planned(self):
        return self.fallback is None

    def at(self, values):
        """(nbytes, inductor_nbytes, lower_bound) at {symbol name: value}."""
        return (
            _evaluate(self.nbytes, values),
            _evaluate(self.inductor_nbytes, values),
            self.lower_bound_at(values),
        )

    def lower_bound_at(self, values):
        if not self.symbols:
            return self.lower_bound
        sizes = [_evaluate(s, values) for s in self._sizes]
        return _peak_of_live_sum(sizes, self._ranges)


class Session:
    """The options of one `planning()` or `install()`, and what was planned:
    `graphs` (one GraphRecord per graph Inductor compiled meanwhile),
    `planned` (those memplan planned) and `fallbacks` (the others)."""

    def __init__(
        self,
        planner,
        options,
        training,
        max_buckets,
        unbounded_max,
        work_limit,
        time_limit,
        symbolic_work_limit=None,
        symbolic_planner="symbolic_greedy",
    ):
        self.planner = planner
        self.options = dict(options or {})
        self.training = training
        self.max_buckets = max_buckets
        self.unbounded_max = unbounded_max
        self.work_limit = work_limit
        self.symbolic_work_limit = symbolic_work_limit
        self.symbolic_planner = symbolic_planner
        self.time_limit = time_limit
        self.graphs = []
        self.hooked = False

    @property
    def planned(self):
        return [g for g in self.graphs if g.planned]

    @property
    def fallbacks(self):
        return [g for g in self.graphs if not g.planned]

    def __repr__(self):
        return (
            f"memplan.inductor.Session(planner={self.planner!r}, "
            f"{len(self.planned)} graphs planned, "
            f"{len(self.fallbacks)} fallbacks)"
        )


_active = None  # the Session in use, one at a time
_restore = []  # undo functions of the active session


def _validate(planner, max_buckets, unbounded_max):
    if planner is not None and planner not in memplan.planners():
        raise ValueError(
            f"memplan.inductor: unknown planner {planner!r}; one of "
            f"{', '.join(memplan.planners())}"
        )
    if isinstance(max_buckets, bool) or not isinstance(max_buckets, int):
        raise TypeError(
            f"memplan.inductor: max_buckets must be an int "
            f"(got {max_buckets!r})"
        )
    if max_buckets < 1:
        raise ValueError(
            f"memplan.inductor: max_buckets must be >= 1 "
            f"(got {max_buckets})"
        )
    if (
        isinstance(unbounded_max, bool)
        or not isinstance(unbounded_max, int)
        or unbounded_max < 1
    ):
        raise ValueError(
            f"memplan.inductor: unbounded_max must be an int "
            f">= 1 (got {unbounded_max!r})"
        )


def install(
    planner="best",
    *,
    options=None,
    training=True,
    max_buckets=4,
    unbounded_max=DEFAULT_UNBOUNDED_MAX,
    work_limit=None,
    time_limit=None,
    symbolic_planner="symbolic_greedy",
    symbolic_work_limit=DEFAULT_SYMBOLIC_WORK_LIMIT,
):
    """Makes every later torch.compile plan Inductor's pools with memplan,
    until `uninstall()`; returns the Session recording what was planned.

    planner: a name of memplan.planners() for static sizes ("best"), or
    None: Inductor's own planner plans (under the same settings) and the
    graphs are recorded, for comparison;
    options, work_limit and time_limit go to memplan.plan (the planner's
    options and limits). training: plan the graphs of a training step too
    (Inductor's own planning skips them). max_buckets: of a symbolic plan,
    see memplan.plan_symbolic; symbolic_planner: its planner
    ("symbolic_greedy", fast; "symbolic_search" finds smaller plans in a
    second or so a graph, within symbolic_work_limit). unbounded_max: the value a shape symbol
    without an upper bound is planned up to (above it the buffers of a pool
    lie side by side). Sets `memory_planning=True` and turns off Inductor's
    FX graph and AOT autograd caches (a cached graph would skip planning);
    `uninstall()` restores all of it.
    """
    global _active
    if _active is not None:
        raise RuntimeError(
            "memplan.inductor: planning is already active; leave it (or "
            "call memplan.inductor.uninstall()) before starting another"
        )
    _validate(planner, max_buckets, unbounded_max)
    if symbolic_planner not in _SYMBOLIC_PLANNERS:
        raise ValueError(
            f"memplan.inductor: unknown symbolic_planner "
            f"{symbolic_planner!r}; one of {', '.join(_SYMBOLIC_PLANNERS)}"
        )
    session = Session(
        planner,
        options,
        training,
        max_buckets,
        unbounded_max,
        work_limit,
        time_limit,
        symbolic_work_limit,
        symbolic_planner,
    )
    try:
        _restore.extend(_configure())
        problem = _hook_problem()
        if problem is None:
            _restore.extend(_hook(training))
            session.hooked = True
    except BaseException:
        uninstall()
        raise
    if problem is not None:
        warnings.warn(
            f"memplan.inductor: {problem}; Inductor's own memory planner "
            f"plans the pools",
            FallbackWarning,
            stacklevel=2,
        )
    _active = session
    return session


def uninstall():
    """Restores Inductor's planner and configuration as they were before
    `install()`; nothing when planning is not active."""
    global _active
    while _restore:
        _restore.pop()()
    _active = None


def installed():
    """The active Session, or None."""
    return _active


@contextlib.contextmanager
def planning(planner="best", **kwargs):
    """`install(planner, **kwargs)` for the `with` block; yields the
    Session. Graphs compiled inside the block (torch.compile compiles on the
    first call) are planned by memplan; everything is restored on exit."""
    session = install(planner, **kwargs)
    try:
        yield session
    finally:
        uninstall()


def _configure():
    """Turns memory planning on and the caches off; returns the undo."""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    undo = []
    settings = [
        (inductor_config, "memory_planning", True),
        (inductor_config, "fx_graph_cache", False),
        (inductor_config, "fx_graph_remote_cache", False),
        (functorch_config, "enable_autograd_cache", False),
        (functorch_config, "enable_remote_autograd_cache", False),
    ]
    for module, name, value in settings:
        if not hasattr(module, name):
            continue
        old = getattr(module, name)
        setattr(module, name, value)
        undo.append(lambda m=module, n=name, v=old: setattr(m, n, v))
    return undo


def _parameters(function):
    return list(inspect.signature(function).parameters)


def _hook_problem():
    """None when Inductor has what the hook needs, else what is missing."""
    try:
        from torch._inductor.codegen import memory_planning as mp
        from torch._inductor.codegen import wrapper
    except ImportError as error:
        return f"cannot import Inductor's memory planning ({error})"
    needed = {
        "MemoryPlanner": ("allocate_groups", "plan"),
        "BufferGroup": ("make_allocation", "sym_nbytes"),
        "AllocationPool": ("finalize", "codegen_create"),
        "AllocationPools": ("allocate", "allocate_output", "finalize"),
        "Allocation": ("finalize",),
        "AllocationTreeNode": ("finalize",),
        "LiveRanges": ("overlaps",),
        "TemporalSplit": (),
    }
    for name, methods in needed.items():
        cls = getattr(mp, name, None)
        if cls is None:
            return (
                f"torch._inductor.codegen.memory_planning has no {name} "
                f"(changed in this torch version)"
            )
        for method in methods:
            if not callable(getattr(cls, method, None)):
                return f"Inductor's {name} has no {method}() (changed)"
    if _parameters(mp.MemoryPlanner.allocate_groups) != ["self"]:
        return (
            f"Inductor's MemoryPlanner.allocate_groups takes "
            f"{_parameters(mp.MemoryPlanner.allocate_groups)}, not (self)"
            f" (changed)"
        )
    passes = getattr(
        wrapper.PythonWrapperCodegen, "run_wrapper_ir_passes", None
    )
    if passes is None or _parameters(passes) != ["self", "is_inference"]:
        return (
            "Inductor's PythonWrapperCodegen.run_wrapper_ir_passes is "
            "missing or changed"
        )
    return None


def _hook(training):
    """Replaces MemoryPlanner.allocate_groups (and, for training, lets
    training graphs reach the memory planner); returns the undo."""
    from torch._inductor.codegen import memory_planning as mp
    from torch._inductor.codegen import wrapper

    original = mp.MemoryPlanner.allocate_groups

    def allocate_groups(planner_self):
        session = _active
        if session is None:
            return original(planner_self)
        return _allocate(session, planner_self, original)

    undo = []
    mp.MemoryPlanner.allocate_groups = allocate_groups
    undo.append(lambda: setattr(mp.MemoryPlanner, "allocate_groups", original))
    if training:
        cls = wrapper.PythonWrapperCodegen
        passes = cls.__dict__["run_wrapper_ir_passes"]

        def run_wrapper_ir_passes(self, is_inference):
            return passes(self, True)

        cls.run_wrapper_ir_passes = run_wrapper_ir_passes
        undo.append(lambda: setattr(cls, "run_wrapper_ir_passes", passes))
    return undo


def _allocate(session, planner_self, original):
    """allocate_groups by memplan, or Inductor's own with one warning."""
    record = GraphRecord()
    start = time.perf_counter()
    if session.planner is None:  # Inductor's own, recorded
        result = original(planner_self)
        record.plan_seconds = time.perf_counter() - start
        groups = _groups(planner_self)
        record.groups = len(groups)
        _record(record, groups, [], any(not g.nbytes.is_number for g in groups))
        record.nbytes = record.inductor_nbytes
        record.proven_optimal = False
        session.graphs.append(record)
        return result
    try:
        layout = _plan_graph(session, planner_self, record)
    except Exception as error:  # never a crash: Inductor plans instead
        reason = (
            str(error)
            if isinstance(error, _Unsupported)
            else (f"{type(error).__name__}: {error}")
        )
        record.fallback = reason
        record.plan_seconds = time.perf_counter() - start
        session.graphs.append(record)
        warnings.warn(
            f"memplan.inductor: {reason}; Inductor's own memory planner "
            f"plans this graph",
            FallbackWarning,
            stacklevel=2,
        )
        return original(planner_self)
    _apply(planner_self, layout)
    record.plan_seconds = time.perf_counter() - start
    session.graphs.append(record)
    return None


# ---------------------------------------------------------------------------
# Sizes, ranges and pools


def _round_up(n):
    return -(-int(n) // _ALIGN) * _ALIGN


def _evaluate(expr, values):
    if isinstance(expr, int):
        return expr
    import sympy

    subs = {s: sympy.Integer(values[s.name]) for s in expr.free_symbols}
    result = expr.xreplace(subs)  # FloorDiv, Min, ... evaluate on numbers
    if not result.is_number:
        result = sympy.simplify(expr.subs(subs))
    return int(result)


def _peak_of_live_sum(sizes, ranges):
    """Largest sum of sizes live at one time step ([begin, end) ranges,
    an empty one counted at its begin): a lower bound of any placement."""
    events = []
    for size, (begin, end) in zip(sizes, ranges):
        events.append((begin, 1, size))
        events.append((max(end, begin + 1), 0, -size))
    live = peak = 0
    for _, _, delta in sorted(events):
        live += delta
        peak = max(peak, live)
    return peak


def _conflict(a, b):
    """Inductor's rule: two groups may share bytes unless their live ranges
    [begin, end) overlap (an empty range counts as [begin, begin + 1))."""
    a_end = max(a[1], a[0] + 1)
    b_end = max(b[1], b[0] + 1)
    return a[0] < b_end and b[0] < a_end


@dataclasses.dataclass
class _Group:
    group: object
    name: str
    nbytes: object  # sympy expression (Integer when static)
    begin: int
    end: int
    device: object
    is_output: bool


def _groups(planner_self):
    """Inductor's groups with their sizes and live ranges, untouched."""
    import sympy
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

    out = []
    for group in planner_self.buffer_groups:
        name = group.node.get_name()
        nbytes = sympy.sympify(group.sym_nbytes())
        if free_unbacked_symbols(nbytes):
            raise _Unsupported(
                f"buffer {name} has a data-dependent size {nbytes}"
            )
        begin, end = group.live_range.begin, group.live_range.end
        if not (isinstance(begin, int) and isinstance(end, int)):
            raise _Unsupported(f"buffer {name} has no live range")
        out.append(
            _Group(
                group,
                name,
                nbytes,
                begin,
                end,
                group.node.get_device(),
                bool(group.is_output),
            )
        )
    return out


def _pool_kinds(groups, memory_pool):
    """Groups by pool as config.memory_pool lays them out: [(kind, [g])]."""
    if memory_pool not in ("intermediates", "outputs", "combined"):
        raise _Unsupported(
            f"torch._inductor.config.memory_pool={memory_pool!r} is not "
            f'planned by memplan ("intermediates", "outputs" or '
            f'"combined" are)'
        )
    pools = {}
    for g in groups:
        if memory_pool == "combined" or not g.is_output:
            key = (
                str(g.device),
                memory_pool if memory_pool == "combined" else "intermediates",
            )
        elif memory_pool == "outputs":
            key = (str(g.device), "outputs")
        else:
            key = (str(g.device), "output", g.name)
        pools.setdefault(key, []).append(g)
    return [(key[1], members) for key, members in pools.items()]


def _graph_for(members):
    """A memplan graph whose ops are Inductor's time steps: group i is made
    by step begin and last read by step end - 1."""
    last = max(max(g.end, g.begin + 1) for g in members)
    produced = [[] for _ in range(last + 1)]
    read = [[] for _ in range(last + 1)]
    for i, g in enumerate(members):
        produced[g.begin].append(f"g{i}")
        end = max(g.end, g.begin + 1)
        if end - 1 > g.begin:
            read[end - 1].append(f"g{i}")
    ops = [
        memplan.Op(f"t{t}", read[t], produced[t])
        for t in range(last + 1)
        if read[t] or produced[t]
    ]
    return ops


# ---------------------------------------------------------------------------
# Static pools


def _plan_static(session, members, name, fixed):
    """One memplan problem for a device's groups: the output pools first
    (fixed: [(pool name, capacity, {member index: offset})], the outputs at
    Inductor's places), then "main" for the intermediates; an intermediate
    may go into an output pool's bytes before its outputs exist, within the
    output pool's exact size (a pool that an intermediate would make larger
    is closed to them and the problem planned again). Returns
    ([(pool name, [member index], [offset], bytes)], proven optimal)."""
    sizes = [max(1, int(g.nbytes)) for g in members]
    capacity = {pool: cap for pool, cap, _ in fixed}
    closed = set()
    while True:
        plan = _solve_static(session, members, name, fixed, sizes, closed)
        by_pool = {}
        for i in range(len(members)):
            by_pool.setdefault(plan.pool(f"g{i}"), []).append(i)
        grown = {
            pool
            for pool, index in by_pool.items()
            if pool in capacity
            and max(plan.offset(f"g{i}") + sizes[i] for i in index)
            > capacity[pool]
        }
        if not grown:
            break
        closed |= grown
    ranges = [(g.begin, g.end) for g in members]
    out = []
    for pool in [pool for pool, _, _ in fixed] + ["main"]:
        index = by_pool.get(pool, [])
        if not index:
            continue
        offsets = [plan.offset(f"g{i}") for i in index]
        # Pools end at their last byte used, as Inductor's do.
        nbytes = max(o + sizes[i] for o, i in zip(offsets, index))
        _check_static(
            [members[i] for i in index],
            offsets,
            [sizes[i] for i in index],
            [ranges[i] for i in index],
            nbytes,
        )
        out.append((pool, index, offsets, max(nbytes, capacity.get(pool, 0))))
    return out, plan.proven_optimal


def _solve_static(session, members, name, fixed, sizes, closed):
    """memplan's verified plan of the groups, the pools in `closed` open to
    their own outputs only."""
    fixed_at = {
        i: (pool, off) for pool, _, places in fixed for i, off in places.items()
    }
    order = [pool for pool, _, _ in fixed if pool not in closed] + ["main"]
    tensors = []
    for i, size in enumerate(sizes):
        if i in fixed_at:
            pool, off = fixed_at[i]
            tensors.append(
                memplan.Tensor(f"g{i}", size, pools=[pool], fixed=(pool, off))
            )
        else:
            tensors.append(memplan.Tensor(f"g{i}", size, pools=order))
    graph = memplan.Graph(name=name, tensors=tensors, ops=_graph_for(members))
    pools = [(pool, _round_up(capacity), _ALIGN) for pool, capacity, _ in fixed]
    pools.append(("main", 0, _ALIGN))
    plan = memplan.plan(
        graph,
        session.planner,
        alignment=_ALIGN,
        pools=pools,
        options=session.options,
        work_limit=session.work_limit,
        time_limit=session.time_limit,
    )
    memplan.verify(graph, plan)
    return plan


def _check_static(members, offsets, sizes, ranges, pool_bytes):
    """The offsets written back, against Inductor's own live ranges."""
    order = sorted(range(len(members)), key=lambda i: offsets[i])
    for i in range(len(members)):
        if offsets[i] % _ALIGN or offsets[i] + sizes[i] > pool_bytes:
            raise _Unsupported(
                f"memplan's offset {offsets[i]} of "
                f"{members[i].name} is outside its pool"
            )
    for x, i in enumerate(order):
        for j in order[x + 1 :]:
            if offsets[j] >= offsets[i] + sizes[i]:
                break
            if _conflict(ranges[i], ranges[j]):
                raise _Unsupported(
                    f"memplan's plan puts {members[i].name} and "
                    f"{members[j].name}, both live at once, in the same "
                    f"bytes"
                )


# ---------------------------------------------------------------------------
# Symbolic pools

_TERM = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _polynomial(g, symbols):
    """The group's size as memplan's polynomial text (no '-': negative terms
    of Inductor's storage size dropped, an upper bound at values >= 0), and
    the same as a sympy expression."""
    import sympy

    expr = sympy.expand(g.nbytes)
    try:
        poly = sympy.Poly(expr, *symbols)
    except sympy.PolynomialError:
        poly = None
    if poly is None or not all(c.is_integer for c in poly.coeffs()):
        raise _Unsupported(
            f"the size of buffer {g.name}, {g.nbytes}, is not a polynomial "
            f"with integer coefficients of the shape symbols"
        )
    terms, text = [], []
    for monomial, coeff in poly.terms():
        if coeff <= 0:
            continue
        factors = [str(int(coeff))]
        for sym, power in zip(symbols, monomial):
            factors += [sym.name] * power
        text.append("*".join(factors))
        terms.append(
            int(coeff) * sympy.Mul(*[s**p for s, p in zip(symbols, monomial)])
        )
    if not text:
        return "1", sympy.Integer(1)
    return " + ".join(text), sympy.Add(*terms)


def _symbol_ranges(session, symbols, record):
    from torch._inductor.virtualized import V

    shape_env = V.graph.sizevars.shape_env
    ranges = {}
    for sym in symbols:
        if not _TERM.match(sym.name):
            raise _Unsupported(f"shape symbol {sym.name} is not a name")
        vr = shape_env.var_to_range.get(sym)
        if vr is None:
            raise _Unsupported(f"shape symbol {sym.name} has no value range")
        lo = vr.lower
        lo = int(lo) if lo.is_finite else 0
        lo = max(lo, 0)
        hi = vr.upper
        if hi.is_finite and int(hi) <= session.unbounded_max:
            hi = int(hi)
        else:
            hi = max(session.unbounded_max, lo)
            if sym.name not in record.capped:
                record.capped.append(sym.name)
        ranges[sym.name] = (lo, hi)
    return ranges


def _parse(text, symbols, steps):
    """A bucket's expression text to sympy: dims as Inductor's symbols,
    name_div / name_mod as FloorDiv / ModularIndexing of them."""
    import sympy
    from torch.utils._sympy.functions import FloorDiv, ModularIndexing

    names = {}
    for sym in symbols:
        names[sym.name] = sym
        m = steps.get(sym.name)
        if m:
            names[f"{sym.name}_div"] = FloorDiv(sym, sympy.Integer(m))
            names[f"{sym.name}_mod"] = ModularIndexing(
                sym, sympy.Integer(1), sympy.Integer(m)
            )
    return sympy.sympify(text, locals=names)


def _indicator(sym, cut):
    """1 when sym >= cut, else 0 (sym >= 0, cut >= 1), as wrapper code can
    print it."""
    import sympy
    from torch.utils._sympy.functions import FloorDiv, Min

    return Min(sympy.Integer(1), FloorDiv(sym, sympy.Integer(cut)))


def _plan_symbolic(session, members, name, record):
    import sympy

    symbols = sorted(
        set().union(*(g.nbytes.free_symbols for g in members)),
        key=lambda s: s.name,
    )
    ranges = _symbol_ranges(session, symbols, record)
    texts, reserves = [], []
    for g in members:
        text, reserve = _polynomial(g, symbols)
        texts.append(text)
        reserves.append(reserve)
    tensors = [memplan.Tensor(f"g{i}", t) for i, t in enumerate(texts)]
    graph = memplan.Graph(name=name, tensors=tensors, ops=_graph_for(members))
    graph.dims = {s.name: ranges[s.name] for s in symbols}
    plan = memplan.plan_symbolic(
        graph,
        max_buckets=session.max_buckets,
        alignment=_ALIGN,
        work_limit=session.symbolic_work_limit,
        time_limit=session.time_limit,
        planner=session.symbolic_planner,
    )
    plan.verify()
    offsets, peak = _select_buckets(plan, symbols, len(members))
    capped = [s for s in symbols if s.name in record.capped]
    if capped:
        # Above the cap: each buffer after the one before it, rounded up.
        hit = sympy.Integer(0)
        for s in capped:
            hit = hit + _indicator(s, ranges[s.name][1] + 1)
        from torch.utils._sympy.functions import Min

        hit = Min(sympy.Integer(1), hit)
        naive, total = [], sympy.Integer(0)
        for reserve in reserves:
            naive.append(total)
            total = total + _rounded(reserve, symbols)
        offsets = [o + hit * (n - o) for o, n in zip(offsets, naive)]
        peak = peak + hit * (total - peak)
    _check_symbolic(members, offsets, peak, symbols, ranges, record.capped)
    return offsets, peak, ranges


def _rounded(reserve, symbols):
    """A polynomial >= reserve, a multiple of 64 at every value >= 0."""
    import sympy

    poly = sympy.Poly(reserve, *symbols)
    out = sympy.Integer(0)
    for monomial, coeff in poly.terms():
        term = sympy.Mul(*[s**p for s, p in zip(symbols, monomial)])
        out += _round_up(int(coeff)) * term
    return out


def _select_buckets(plan, symbols, count):
    """Offsets and peak over all buckets: the bucket's own where the cut
    symbol lies in its range (a sum of steps that wrapper code evaluates)."""
    buckets = plan.buckets
    by_name = {s.name: s for s in symbols}
    offsets = peak = None
    previous = None
    for bucket in buckets:
        steps = bucket.get("steps", {})
        own = [
            _parse(bucket["offsets"][f"g{i}"], symbols, steps)
            for i in range(count)
        ]
        own_peak = _parse(bucket["peak"], symbols, steps)
        if previous is None:
            offsets, peak = own, own_peak
        else:
            cut = [
                n
                for n, (lo, _) in bucket["dims"].items()
                if lo != previous["dims"][n][0]
            ]
            if len(cut) != 1:
                raise _Unsupported("memplan's buckets cut more than one dim")
            hit = _indicator(by_name[cut[0]], bucket["dims"][cut[0]][0])
            offsets = [o + hit * (n - o) for o, n in zip(offsets, own)]
            peak = peak + hit * (own_peak - peak)
        previous = bucket
    return offsets, peak


def _sample_values(ranges, hints, beyond):
    """Values of each symbol at which the written-back plan is checked: the
    ends of its range, the size hint, values between, and past the end for
    the symbols in `beyond` (capped: the code must hold there too)."""
    out = []
    for name, (lo, hi) in ranges.items():
        values = {lo, hi, hints.get(name, lo)}
        for k in range(_SAMPLES):
            values.add(lo + (hi - lo) * k // max(1, _SAMPLES - 1) + k % 3)
        top = hi
        if name in beyond:
            values |= {hi + 1, 2 * hi + 3}
            top = 2 * hi + 3
        out.append(sorted(v for v in values if max(lo, 0) <= v <= top))
    points = []
    for k in range(max(len(v) for v in out)):
        points.append(
            {name: values[k % len(values)] for name, values in zip(ranges, out)}
        )
    return points


def _check_symbolic(members, offsets, peak, symbols, ranges, beyond=()):
    from torch._inductor.virtualized import V

    hints = {}
    for s in symbols:
        try:
            hints[s.name] = int(V.graph.sizevars.size_hint(s))
        except Exception:  # no hint: the range's ends are checked anyway
            pass
    ranges_live = [(g.begin, g.end) for g in members]
    for values in _sample_values(ranges, hints, beyond):
        offs = [_evaluate(o, values) for o in offsets]
        sizes = [max(1, _evaluate(g.nbytes, values)) for g in members]
        pool = _evaluate(peak, values)
        try:
            _check_static(members, offs, sizes, ranges_live, pool)
        except _Unsupported as error:
            raise _Unsupported(f"{error} at {values}") from None


# ---------------------------------------------------------------------------
# Inductor's own plan, for the record


def _inductor_bytes(groups):
    """What Inductor's own planner allocates for the same groups: its
    allocation of fresh copies (the groups are not touched)."""
    import sympy
    from torch._inductor import config
    from torch._inductor.codegen import memory_planning as mp
    from torch._inductor.virtualized import V

    pools = mp.AllocationPools()
    blocks = []
    for g in groups:
        hint = V.graph.sizevars.optimization_hint(g.nbytes, fallback=64)
        blocks.append(
            (
                g,
                mp.Allocation(
                    g.group.node,
                    mp.LiveRange(g.begin, g.end),
                    size_hint=hint,
                    symbolic_size=g.nbytes,
                ),
            )
        )
    outputs = [
        b for g, b in blocks if g.is_output and config.memory_pool != "combined"
    ]
    inter = [
        b
        for g, b in blocks
        if not (g.is_output and config.memory_pool != "combined")
    ]
    for b in sorted(outputs, key=lambda x: (x.size_hint, -len(x.live_range))):
        pools.allocate_output(b)
    for b in sorted(inter, key=lambda x: (-x.size_hint, -len(x.live_range))):
        pools.allocate(b)
    total = sympy.Integer(0)
    for pool in (p for ps in pools.device_to_pools.values() for p in ps):
        total = total + pool.root.get_symbolic_size()
    return int(total) if total.is_number else total


# ---------------------------------------------------------------------------
# The whole graph


def _plan_graph(session, planner_self, record):
    """Every pool of the graph planned and checked; nothing of Inductor's
    changed yet. Returns [(kind, members, offsets, nbytes, planner)]."""
    from torch._inductor import config

    groups = _groups(planner_self)
    record.groups = len(groups)
    symbolic = any(not g.nbytes.is_number for g in groups)
    kinds = _pool_kinds(groups, config.memory_pool)
    if symbolic:
        layout = _plan_symbolic_pools(session, kinds, record)
        record.proven_optimal = False
    else:
        layout = []
        devices = {}
        for kind, members in kinds:
            devices.setdefault(str(members[0].device), []).append(
                (kind, members)
            )
        for index, device_kinds in enumerate(devices.values()):
            layout += _plan_static_device(
                session, device_kinds, f"inductor_pools{index}", record
            )
    _record(record, groups, layout, symbolic)
    return layout


def _plan_static_device(session, kinds, name, record):
    """A device's pools, static sizes: the output pools as Inductor lays
    them out (each output at the start of its own pool, or all outputs side
    by side in one), the rest planned by memplan around them."""
    import sympy

    members, fixed, kind_of = [], [], {}
    for kind, group in kinds:
        if kind in ("output", "outputs"):
            places, end, capacity = {}, 0, 0
            for g in sorted(group, key=lambda g: int(g.nbytes)):
                places[len(members)] = end
                capacity = end + max(1, int(g.nbytes))
                end = _round_up(capacity)
                members.append(g)
            pool = f"out{len(fixed)}"
            fixed.append((pool, capacity, places))  # capacity: exact
            kind_of[pool] = kind
        else:
            members += group
            kind_of["main"] = kind
    if len(members) == 1:
        record.pool_bound += int(members[0].nbytes)
        return [
            (kinds[0][0], members, [sympy.Integer(0)], members[0].nbytes, "")
        ]
    layout = []
    pools, optimal = _plan_static(session, members, name, fixed)
    bound = _pool_bound(members, fixed)
    record.pool_bound += bound
    total = sum(int(nbytes) for _, _, _, nbytes in pools)
    # memplan's own proof holds for one pool; with output pools the bound
    # of those pools decides.
    proven = total <= bound or (optimal and not fixed)
    record.proven_optimal = record.proven_optimal and proven
    for pool, index, offsets, nbytes in pools:
        if len(index) == 1 and pool != "main":
            nbytes = members[index[0]].nbytes  # the output's own pool
        layout.append(
            (
                kind_of[pool],
                [members[i] for i in index],
                [sympy.Integer(o) for o in offsets],
                nbytes,
                session.planner,
            )
        )
    return layout


def _pool_bound(members, fixed):
    """The fewest bytes any placement of a device's groups needs with the
    output pools as fixed ([(pool, capacity, {member index: offset})], as
    _plan_static takes them): the output pools' bytes, plus the most bytes
    of intermediates live at one step beyond what the output pools can hold
    at that step. An output pool holds, while its outputs there are live,
    only the bytes they leave free, and only intermediates no larger than
    what the outputs live with them leave of it. Alignment is ignored (a
    bound all the same)."""
    sizes = [max(1, int(g.nbytes)) for g in members]
    ranges = [(g.begin, g.end) for g in members]
    owner = {i: pool for pool, _, places in fixed for i in places}
    room = {}  # (pool, intermediate): the most of the pool it may use
    for pool, capacity, places in fixed:
        for i in range(len(members)):
            if i not in owner:
                room[pool, i] = capacity - sum(
                    sizes[o] for o in places if _conflict(ranges[i], ranges[o])
                )
    main = 0
    for t in sorted({begin for begin, _ in ranges}):
        live = [i for i, (b, e) in enumerate(ranges) if b <= t < max(e, b + 1)]
        rest = sum(sizes[i] for i in live if i not in owner)
        held = 0
        for pool, capacity, places in fixed:
            free = capacity - sum(sizes[o] for o in live if o in places)
            fits = sum(
                sizes[i]
                for i in live
                if i not in owner and sizes[i] <= room[pool, i]
            )
            held += max(0, min(free, fits))
        main = max(main, rest - held)
    return sum(capacity for _, capacity, _ in fixed) + main


def _plan_symbolic_pools(session, kinds, record):
    """A graph's pools when some sizes are symbolic. memplan's symbolic
    plans have one pool, so the intermediates that fit in an output's own
    pool before the output exists are put there first (_absorb), and the
    rest planned by plan_symbolic."""
    import sympy

    outputs = [(k, m) for k, m in kinds if k == "output"]
    others = [(k, m) for k, m in kinds if k != "output"]
    layout = []
    for index, (kind, members) in enumerate(others):
        if kind == "intermediates" and outputs:
            members, absorbed = _absorb(members, outputs, record, session)
            layout += absorbed
        if not members:
            continue
        if len(members) == 1:
            layout.append(
                (kind, members, [sympy.Integer(0)], members[0].nbytes, "")
            )
        elif all(g.nbytes.is_number for g in members):
            pools, _ = _plan_static(
                session, members, f"inductor_pool{index}", []
            )
            for _, idx, offsets, nbytes in pools:
                layout.append(
                    (
                        kind,
                        [members[i] for i in idx],
                        [sympy.Integer(o) for o in offsets],
                        nbytes,
                        session.planner,
                    )
                )
        else:
            offsets, nbytes, ranges = _plan_symbolic(
                session, members, f"inductor_pool{index}", record
            )
            record.symbols.update(ranges)
            layout.append((kind, members, offsets, nbytes, "symbolic"))
    done = {
        id(m[0]) for _, m, _, _, _ in layout if len(m) > 1 and m[0].is_output
    }
    for kind, members in outputs:
        if id(members[0]) not in done:
            layout.append(
                (kind, members, [sympy.Integer(0)], members[0].nbytes, "")
            )
    return layout


def _coefficients(expr, symbols):
    """{monomial: integer coefficient} of a polynomial of the symbols."""
    import sympy

    if not symbols:
        return {(): int(expr)}
    poly = sympy.Poly(sympy.expand(expr), *symbols)
    return {m: int(c) for m, c in poly.terms()}


def _dominates(big, small):
    """Every coefficient of big at least small's: big >= small at every
    value >= 0 of the symbols."""
    return all(big.get(m, 0) >= c for m, c in small.items()) and all(
        c >= 0 or m in small for m, c in big.items()
    )


def _coefficient_max(a, b):
    return {m: max(a.get(m, 0), b.get(m, 0)) for m in set(a) | set(b)}


def _coefficient_sum(a, b):
    return {m: a.get(m, 0) + b.get(m, 0) for m in set(a) | set(b)}


def _next_absorbed(left, placed, out, capacity, sizes, hint):
    """The largest intermediate live where the others' bytes (at the size
    hints) peak that fits in the output's pool before the output, and its
    offset there; (None, None) when none does."""
    early = [g for g in left if max(g.end, g.begin + 1) <= out.begin]
    if not early:
        return None, None
    steps = sorted({g.begin for g in left})
    live = {
        t: sum(
            hint[id(g)] for g in left if g.begin <= t < max(g.end, g.begin + 1)
        )
        for t in steps
    }
    top = max(live.values())
    peaks = [t for t in steps if live[t] >= top]
    for g in early:  # left is sorted largest first
        if not any(g.begin <= t < max(g.end, g.begin + 1) for t in peaks):
            continue
        offset = {}
        for p, p_offset in placed:
            if _conflict((g.begin, g.end), (p.begin, p.end)):
                offset = _coefficient_max(
                    offset, _coefficient_sum(p_offset, sizes[id(p)])
                )
        if _dominates(capacity, _coefficient_sum(offset, sizes[id(g)])):
            return g, offset
    return None, None


def _absorb(members, outputs, record, session):
    """Intermediates placed in an output's own pool, in the bytes and time
    before the output exists (as Inductor's own planner does): each at the
    coefficient-wise largest end of those placed there that it meets in
    time, kept when it ends within the output's size at every value
    (coefficient-wise). The choice is made at several values of the symbols
    (the size hint, the ends of the ranges, values between); the one whose
    remaining intermediates have the smallest worst lower-bound ratio over
    those values is kept. Returns (the rest, layout entries)."""
    import sympy

    symbols = sorted(
        set().union(
            *(
                g.nbytes.free_symbols
                for g in members + [m[0] for _, m in outputs]
            )
        ),
        key=lambda s: s.name,
    )
    ranges = _symbol_ranges(session, symbols, record)
    sizes = {}
    for g in members:
        _, reserve = _polynomial(g, symbols)
        sizes[id(g)] = _coefficients(_rounded(reserve, symbols), symbols)
    points = _absorb_points(symbols, ranges)
    everything = members + [m[0] for _, m in outputs]
    values = [
        {id(g): _evaluate(g.nbytes, p) for g in everything} for p in points
    ]
    best = None
    for point in values:
        left, layout = _absorb_at(members, outputs, symbols, sizes, point)
        score = max(_absorb_score(left, everything, at) for at in values)
        if best is None or score < best[0]:
            best = (score, left, layout)
    _, left, layout = best
    for _, pool, offsets, nbytes, _ in layout:
        _check_symbolic(
            pool,
            offsets,
            nbytes,
            symbols,
            {x.name: ranges[x.name] for x in symbols},
            record.capped,
        )
        record.symbols.update({x.name: ranges[x.name] for x in symbols})
    return left, layout


def _absorb_points(symbols, ranges):
    """Values of the symbols at which absorptions are chosen and scored."""
    from torch._inductor.virtualized import V

    points = []
    for k in range(6):
        point = {}
        for x in symbols:
            lo, hi = ranges[x.name]
            lo = max(lo, 1)
            point[x.name] = int(round(lo * (hi / lo) ** (k / 5)))
        points.append(point)
    try:
        points.append(
            {x.name: int(V.graph.sizevars.size_hint(x)) for x in symbols}
        )
    except Exception:  # no hint: the other values suffice
        pass
    return points


def _absorb_score(left, everything, at):
    """(the remaining intermediates' bound + the output pools) / the bound
    of everything, at one value of the symbols (`at`: each group's bytes
    there)."""
    lower = _peak_of_live_sum(
        [at[id(g)] for g in everything], [(g.begin, g.end) for g in everything]
    )
    rest = _peak_of_live_sum(
        [at[id(g)] for g in left], [(g.begin, g.end) for g in left]
    )
    pools = sum(at[id(g)] for g in everything if g.is_output)
    return (rest + pools) / max(lower, 1)


def _absorb_at(members, outputs, symbols, sizes, point):
    """The absorption chosen at one value of the symbols (`point`: each
    group's bytes there)."""
    import sympy

    hint = point
    left = sorted(members, key=lambda g: -hint[id(g)])
    layout = []
    for _, (out,) in sorted(outputs, key=lambda o: -point[id(o[1][0])]):
        capacity = _coefficients(out.nbytes, symbols)
        placed = []  # (group, offset coefficients)
        while True:
            g, offset = _next_absorbed(left, placed, out, capacity, sizes, hint)
            if g is None:
                break
            placed.append((g, offset))
            left = [x for x in left if x is not g]
        pool = [out] + [g for g, _ in placed]
        offsets = [sympy.Integer(0)] + [
            sympy.Add(
                *[
                    c * sympy.Mul(*[x**k for x, k in zip(symbols, m)])
                    for m, c in off.items()
                ]
            )
            for _, off in placed
        ]
        if placed:
            layout.append(("output", pool, offsets, out.nbytes, "symbolic"))
    order = {id(g): i for i, g in enumerate(members)}
    return sorted(left, key=lambda g: order[id(g)]), layout


def _record(record, groups, layout, symbolic):
    import sympy

    total = sympy.Integer(0)
    for kind, members, _, nbytes, planner in layout:
        total = total + nbytes
        record.pools.append(
            PoolRecord(
                kind,
                len(members),
                int(nbytes) if sympy.sympify(nbytes).is_number else nbytes,
                planner,
            )
        )
    record.nbytes = int(total) if total.is_number else total
    record.inductor_nbytes = _inductor_bytes(groups)
    record._sizes = [
        int(g.nbytes) if g.nbytes.is_number else g.nbytes for g in groups
    ]
    record._ranges = [(g.begin, g.end) for g in groups]
    if not symbolic:
        record.lower_bound = _peak_of_live_sum(record._sizes, record._ranges)


def _apply(planner_self, layout):
    """Inductor's allocations and pools, at memplan's offsets."""
    import sympy
    from torch._inductor.codegen import memory_planning as mp
    from torch._inductor.virtualized import V

    for _, members, _, _, _ in layout:
        for g in members:
            g.group.make_allocation()
    for _, members, offsets, nbytes, _ in layout:
        allocations = [g.group.allocation for g in members]
        for a in allocations:
            a.mark_allocated()
        nbytes = sympy.sympify(nbytes)
        hint = V.graph.sizevars.optimization_hint(nbytes, fallback=64)
        root = _PlannedRoot(allocations, list(offsets), nbytes, hint)
        pool = mp.AllocationPool(members[0].device, root, can_expand=False)
        planner_self.pools.get_pools(allocations[0]).append(pool)
    planner_self.pools.finalize()


def _planned_root_class():
    from torch._inductor.codegen import memory_planning as mp

    class PlannedRoot(mp.AllocationTreeNode):
        """A pool's allocations at memplan's offsets."""

        def __init__(self, allocations, offsets, nbytes, hint):
            self.allocations = allocations
            self.offsets = offsets
            self.nbytes = nbytes
            self.hint = hint

        def get_live_ranges(self):
            return mp.LiveRanges(a.live_range for a in self.allocations)

        def get_size_hint(self):
            return self.hint

        def get_symbolic_size(self):
            return self.nbytes

        def finalize(self, pool, offset):
            for a, o in zip(self.allocations, self.offsets):
                a.finalize(pool, offset + o)
            return self

    return PlannedRoot


def _PlannedRoot(*args):
    global _planned_root
    if _planned_root is None:
        _planned_root = _planned_root_class()
    return _planned_root(*args)


_planned_root = None
