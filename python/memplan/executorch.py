"""memplan as ExecuTorch's memory planner.

    from executorch.exir import ExecutorchBackendConfig
    import memplan.executorch
    config = ExecutorchBackendConfig(
        memory_planning_pass=memplan.executorch.memory_planning_pass())
    program = edge_program.to_executorch(config)

`memory_planning_pass(planner="best", **options)` is an ExecuTorch
`MemoryPlanningPass` whose algorithm is memplan; `algorithm(...)` is that
algorithm alone, for a `MemoryPlanningAlgorithmSuite` of your own.

What ExecuTorch decides stays ExecuTorch's; memplan only places:
- the TensorSpecs ExecuTorch hands its algorithms (its `apply_algo` picks
  them: graph inputs, outputs and mutable buffers as the pass's
  `alloc_*` options say; one spec for every node that shares it: views
  through `memory.view`, out-variant `alloc` nodes, in-place ATen ops);
- their lifetimes as ExecuTorch computes them (`update_all_tensors_lifetime`:
  node indices, both ends included, a storage base stretched over its
  dependents), kept exactly: spec lifetime [a, b] is memplan lifetime
  [a, b + 1), one memplan op per graph node;
- their sizes as ExecuTorch computes them (`allocated_memory` after
  `realign(alignment)`), and the alignment as the pool's;
- every `mem_id` arena as its own memplan pool, planned on its own (arenas
  share no address), after the bytes ExecuTorch reserves at its start for
  control-flow submodules (`input_mem_buffer_sizes`) and with its
  `extra_padding` at the end, as `greedy` does;
- storage sharing as ExecuTorch resolves it (`_resolve_storage_base_specs`):
  a spec with a `storage_base` (a result a pass marked with
  `_share_alloc_with_arg_idx`) is not planned; it lives at its base's
  offset plus `storage_base_offset`, in its base's arena.

The placement is written back as ExecuTorch's algorithms write it (a
`MemoryAlgoResult` the suite copies into `mem_id`, `mem_offset` and
`mem_obj_id`; `mem_obj_id` numbers the groups of specs whose byte ranges
overlap, directly or through others, which is what ExecuTorch's Verifier
checks it against). memplan's verifier checks every arena's plan, and the
pass checks the planned graph's storage as well (`verify_storage`: the rules
of ExecuTorch's `Verifier.verify_storage_reuse` in O(n log n); `verify=
"executorch"` runs ExecuTorch's own, which compares every pair of specs).

Deterministic: no wall-clock limit unless one is given (`time_limit=`); the
search planners stop at memplan's counted `work_limit`.

A reordered program: `reorder(edge_program, ordering)` puts the nodes of an
EdgeProgramManager's graphs in the order a memplan op ordering chooses
(`"memory"`, `"optimal"`, ...), before `to_executorch()`. ExecuTorch emits
the instructions and computes the lifetimes it plans in graph order, so the
program then runs in that order, and the memory planning pass (memplan's or
ExecuTorch's own) plans the new lifetimes. The ordering keeps every data
dependency, every write an op's schema declares (`alias_info.is_write`)
on its side of each reader, and ops with side effects (random draws,
asserts) in their order.
"""

import bisect as _bisect
import dataclasses as _dataclasses

import memplan as _memplan
from memplan import _fx_rules
from memplan._memplan import _lifetime_graph

from executorch.exir.memory_planning import (
    MemoryAlgoResult as _MemoryAlgoResult,
    MemoryPlanningAlgorithmSuite as _Suite,
    SpecAllocResult as _SpecAllocResult,
    Verifier as _Verifier,
    _get_mutable_buffer_specs,
    _is_inplace_node,
    _is_mutable_buffer,
    get_graph_input_tensors as _get_graph_input_tensors,
    get_graph_output_tensors as _get_graph_output_tensors,
    get_node_tensor_specs as _get_node_tensor_specs,
)
from executorch.exir.passes.memory_planning_pass import (
    MemoryPlanningPass as _MemoryPlanningPass,
)
from executorch.exir.schema import TensorShapeDynamism as _Dynamism
from executorch.exir.tensor import ALIGNMENT

_DYNAMIC_UNBOUND = _Dynamism.DYNAMIC_UNBOUND

__all__ = [
    "ALIGNMENT",
    "Arena",
    "MemplanAlgorithm",
    "MemplanPlanningPass",
    "algorithm",
    "arena_graph",
    "graph_of",
    "memory_planning_pass",
    "reorder",
    "verify_storage",
]

# Keyword arguments of ExecuTorch's MemoryPlanningPass; every other option of
# memory_planning_pass() goes to memplan.plan().
_PASS_OPTIONS = (
    "alloc_graph_input",
    "alloc_graph_output",
    "alloc_mutable_buffers",
    "share_mutable_buffers",
    "allow_lifetime_and_storage_overlap",
)
_PLAN_OPTIONS = ("time_limit", "work_limit", "seed", "threads", "options")


@_dataclasses.dataclass
class Arena:
    """One `mem_id` arena as memplan planned it (bytes).

    size: the arena's bytes as ExecuTorch records them in
      `non_const_buffer_sizes[mem_id]` (reserved + peak + padding).
    peak, lower_bound, naive_total: memplan's figures for the planned specs.
    reserved: bytes ExecuTorch keeps at the arena's start for control-flow
      submodules; padding: its `extra_padding` at the end.
    graph: the memplan graph that was planned (one op per graph node).
    """

    mem_id: int
    size: int
    peak: int
    lower_bound: int
    naive_total: int
    reserved: int
    padding: int
    specs: int
    planner: str
    graph: object = _dataclasses.field(repr=False, default=None)


def _spec_name(mem_id, index):
    return f"m{mem_id}_spec{index}"


_DTYPE_NAMES = {}


def _dtype_name(dtype):
    """ "float32" for torch.float32 (cached: str() of a dtype is slow)."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = str(dtype).replace("torch.", "")
    return name


def arena_graph(specs, mem_id, alignment):
    """The memplan Graph of the root specs of one arena: tensor
    `m<mem_id>_spec<i>` is specs[i] with its `allocated_memory`, produced
    by op `node<a>` and last read by op `node<b>` for its lifetime [a, b],
    so that memplan's lifetime is exactly [a, b + 1). Specs of size 0 are
    left out (they hold no byte).
    """
    return _arena_graph(
        specs, [spec.allocated_memory for spec in specs], mem_id, alignment
    )


def _arena_graph(specs, sizes, mem_id, alignment):
    """arena_graph() with the specs' `allocated_memory` given (sizes[i] of
    specs[i]), built by one call into the module."""
    names, kept, starts, ends, shapes, dtypes = [], [], [], [], [], []
    for i, spec in enumerate(specs):
        start, end = spec.lifetime
        if start is None or end is None or start > end:
            raise ValueError(
                f"memplan.executorch: {spec} (mem_id {mem_id}) has no valid "
                f"lifetime: {spec.lifetime}"
            )
        size = sizes[i]
        if size == 0:
            continue
        names.append(_spec_name(mem_id, i))
        kept.append(size)
        starts.append(start)
        ends.append(end)
        shapes.append(list(spec.shape))
        dtypes.append(_dtype_name(spec.dtype))
    return _lifetime_graph(
        name=f"mem_id_{mem_id}",
        names=names,
        sizes=kept,
        starts=starts,
        ends=ends,
        shapes=shapes,
        dtypes=dtypes,
        alignment=alignment,
        pool=_memplan.Pool(f"mem_id_{mem_id}", 0, alignment),
        op_prefix="node",
    )


def _root(spec):
    """The spec that owns `spec`'s bytes and `spec`'s offset in it."""
    offset, seen = 0, {id(spec)}
    while spec.storage_base is not None:
        if spec.storage_base_offset < 0:
            raise ValueError(
                f"memplan.executorch: {spec} has a negative "
                f"storage_base_offset {spec.storage_base_offset}"
            )
        offset += spec.storage_base_offset
        spec = spec.storage_base
        if id(spec) in seen:
            raise ValueError(
                "memplan.executorch: circular storage_base chain "
                f"through {spec}"
            )
        seen.add(id(spec))
    return spec, offset


class MemplanAlgorithm:
    """An ExecuTorch memory planning algorithm (the signature of `greedy` and
    `naive`: (alignment, specs, graph_module, graph_signature,
    extra_padding) -> MemoryAlgoResult) that places the specs with memplan.

    `arenas` holds the last call's `Arena`s, by mem_id (ExecuTorch calls
    the algorithm once per graph: control-flow submodules first, then the
    method's graph). Its `__name__`, the key ExecuTorch's suite files its
    result under, is `memplan_<planner>`."""

    def __init__(self, planner="best", **plan_options):
        _check_options(plan_options, _PLAN_OPTIONS)
        _check_plan_values(plan_options)
        if planner not in _memplan.planners():
            raise ValueError(
                f"memplan.executorch: unknown planner "
                f"{planner!r}; valid: " + ", ".join(_memplan.planners())
            )
        self.__name__ = f"memplan_{planner}"
        self.planner = planner
        self.plan_options = plan_options
        self.arenas = {}

    def __repr__(self):
        return f"memplan.executorch.algorithm({self.planner!r})"

    def __call__(
        self,
        alignment,
        specs,
        graph_module,
        graph_signature=None,
        extra_padding=0,
    ):
        result = _MemoryAlgoResult({}, [])
        # allocated_memory computes from shape and dtype at each read:
        # read once per spec (realign returns it).
        nbytes = {}
        roots, dependents = {}, []
        for spec in specs:
            nbytes[spec] = spec.realign(alignment)
            mem_id = 1 if spec.mem_id is None else spec.mem_id
            result.spec_dict[spec] = _SpecAllocResult(mem_id, 0, 0)
            if spec.storage_base is None:
                roots.setdefault(mem_id, []).append(spec)
            else:
                dependents.append(spec)
        reserved = getattr(graph_module, "input_mem_buffer_sizes", None) or []
        self.arenas = {}
        sizes = [0, 0]
        for mem_id in sorted(roots):
            arena = self._plan_arena(
                mem_id,
                roots[mem_id],
                nbytes,
                alignment,
                reserved[mem_id] if mem_id < len(reserved) else 0,
                extra_padding,
                result,
            )
            self.arenas[mem_id] = arena
            sizes.extend([0] * (mem_id + 1 - len(sizes)))
            sizes[mem_id] = arena.size
        for spec in dependents:
            self._place_dependent(spec, nbytes, result)
        _number_objects(result, nbytes)
        result.bufsizes = sizes
        return result

    def _plan_arena(
        self, mem_id, specs, nbytes, alignment, reserved, padding, result
    ):
        graph = _arena_graph(
            specs, [nbytes[spec] for spec in specs], mem_id, alignment
        )
        if graph.tensors:
            plan = _memplan.plan(
                graph, self.planner, alignment=alignment, **self.plan_options
            )
            placed = plan.tensors
            peak, lower, naive = (plan.peak, plan.lower_bound, plan.naive_total)
        else:
            placed, peak, lower, naive = {}, 0, 0, 0
        spec_dict = result.spec_dict
        for i, spec in enumerate(specs):
            _, offset = placed.get(_spec_name(mem_id, i), (None, 0))
            spec_dict[spec].mem_offset = reserved + offset
        return Arena(
            mem_id=mem_id,
            size=reserved + peak + padding,
            peak=peak,
            lower_bound=lower,
            naive_total=naive,
            reserved=reserved,
            padding=padding,
            specs=len(specs),
            planner=self.planner,
            graph=graph,
        )

    @staticmethod
    def _place_dependent(spec, nbytes, result):
        root, offset = _root(spec)
        if root not in result.spec_dict:
            raise ValueError(
                f"memplan.executorch: {spec} shares the storage of {root}, "
                "which is not among the specs to plan (a graph input or "
                "output left to the caller?)"
            )
        if offset + nbytes[spec] > nbytes[root]:
            raise ValueError(
                f"memplan.executorch: {spec} ({nbytes[spec]} bytes "
                f"at +{offset}) does not fit in its storage base {root} "
                f"({nbytes[root]} bytes)"
            )
        base = result.spec_dict[root]
        mine = result.spec_dict[spec]
        mine.mem_id = base.mem_id
        mine.mem_offset = base.mem_offset + offset
        if mine.mem_offset % spec.alignment:
            raise ValueError(
                f"memplan.executorch: {spec} at offset {mine.mem_offset} in "
                f"its storage base breaks its alignment {spec.alignment}"
            )


def _check_options(options, valid):
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise TypeError(
            f"memplan.executorch: unknown option(s) "
            f"{', '.join(unknown)}; valid: " + ", ".join(valid)
        )


def _check_int(options, name, low, high=None):
    value = options.get(name)
    if value is None:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < low
        or (high is not None and value > high)
    ):
        valid = f"{low} to {high}" if high is not None else f">= {low}"
        raise ValueError(
            f"memplan.executorch: {name}={value!r}; it must be an int, "
            f"{valid}"
        )


def _check_plan_values(options):
    """The values of memplan.plan's options, checked when the pass is built
    rather than when it first plans."""
    _memplan._seconds(
        options.get("time_limit"), "memplan.executorch: time_limit"
    )
    _check_int(options, "work_limit", 0)
    _check_int(options, "seed", 0)
    _check_int(options, "threads", 1, 1024)
    extra = options.get("options")
    if extra is not None and not isinstance(extra, dict):
        raise TypeError(
            "memplan.executorch: options must be a dict of the planner's "
            f"options ({{name: value}}), not {type(extra).__name__}"
        )


def _check_pass_values(options):
    for name in _PASS_OPTIONS:
        if name in options and not isinstance(options[name], bool):
            raise TypeError(
                f"memplan.executorch: {name}={options[name]!r}; it must be "
                "True or False"
            )


def _number_objects(result, nbytes):
    """Sets mem_obj_id: one id per group of specs (in one arena) whose byte
    ranges chain into each other, so that two specs share bytes exactly when
    ExecuTorch's Verifier expects them to share an id. nbytes: {spec:
    allocated_memory}."""
    by_arena = {}
    for spec, place in result.spec_dict.items():
        by_arena.setdefault(place.mem_id, []).append(
            (place.mem_offset, -nbytes[spec], place)
        )
    for entries in by_arena.values():
        entries.sort(key=_offset_then_size)
        obj, end, empty = -1, None, []
        for offset, minus_size, place in entries:
            if minus_size == 0:  # holds no byte: shares with nothing
                empty.append(place)
                continue
            if end is None or offset >= end:
                obj += 1
                end = offset
            place.mem_obj_id = obj
            end = max(end, offset - minus_size)
        for place in empty:
            obj += 1
            place.mem_obj_id = obj


def _offset_then_size(entry):
    return entry[0], entry[1]


def verify_storage(
    graph_module,
    graph_signature=None,
    *,
    alloc_graph_input=True,
    alloc_graph_output=True,
    alloc_mutable_buffers=True,
    allow_lifetime_and_storage_overlap=False,
):
    """Checks the planned storage of `graph_module` (after a memory planning
    pass) in O(n log n) for its n specs: the specs ExecuTorch's
    `Verifier.verify_storage_reuse` checks (the same `alloc_*` options), with
    the same rules, without comparing every pair:

    - every spec with bytes lies inside its arena: `mem_id` names one of
      `graph_module.meta["non_const_buffer_sizes"]` and
      `0 <= mem_offset <= mem_offset + allocated_memory <= size`;
    - no two specs whose lifetimes overlap (node indices, both ends
      included) share a byte of one arena, unless one is in the other's
      `storage_base` chain (a dependent lies inside its base's bytes), or
      `allow_lifetime_and_storage_overlap`;
    - specs that share bytes share `mem_obj_id` (or all have none).

    Raises ValueError naming the specs; returns the number of specs checked.
    Quadratic only within the specs that share one storage base."""
    # The signature only tells graph inputs and mutable buffers apart, which
    # matters only when they are left out (and costs a scan of the
    # signature per node).
    needs_signature = not (alloc_graph_input and alloc_mutable_buffers)
    specs = _specs_to_check(
        graph_module.graph.nodes,
        graph_signature if needs_signature else None,
        ignore_graph_input=not alloc_graph_input,
        ignore_graph_output=not alloc_graph_output,
        ignore_mutable_buffers=not alloc_mutable_buffers,
    )
    sizes = list(graph_module.meta.get("non_const_buffer_sizes") or [])
    arenas, nbytes = {}, {}  # allocated_memory computes; read it once
    for spec in specs:
        nbytes[spec] = _check_inside_arena(spec, sizes)
        if nbytes[spec]:
            arenas.setdefault(spec.mem_id, []).append(spec)
    if len({spec.mem_obj_id is None for spec in specs}) > 1:
        raise ValueError(
            "memplan.executorch: the plan gives some specs a mem_obj_id and "
            "others none"
        )
    for mem_id, members in arenas.items():
        _check_object_ids(mem_id, members, nbytes)
        if not allow_lifetime_and_storage_overlap:
            _check_no_live_overlap(mem_id, members, nbytes)
    return len(specs)


def _specs_to_check(
    nodes,
    graph_signature,
    *,
    ignore_graph_input,
    ignore_graph_output,
    ignore_mutable_buffers,
):
    """The specs ExecuTorch's Verifier checks: those of
    `collect_specs_from_nodes(nodes, graph_signature, ignore_*,
    ignore_const=True, ignore_out_var_node=False, dedup=True)`, in its
    order, with the same filters, except that whether a node is an in-place
    op (whose results are its input's specs, left to the input's node) is
    asked once per op rather than once per node, and that nothing is
    changed: ExecuTorch's collection also aliases an in-place op's result
    specs to its input's, which its planning did already."""
    graph_inputs = (
        _get_graph_input_tensors(nodes, graph_signature)
        if ignore_graph_input
        else ()
    )
    graph_outputs = (
        _get_graph_output_tensors(nodes) if ignore_graph_output else ()
    )
    mutable = (
        _get_mutable_buffer_specs(nodes, graph_signature)
        if ignore_mutable_buffers
        else ()
    )
    inplace, seen, specs = {}, set(), []
    for node in nodes:
        if node.op == "get_attr":
            continue
        node_specs = _get_node_tensor_specs(node)
        if not node_specs:
            continue
        if node.op == "call_function":
            is_inplace = inplace.get(node.target)
            if is_inplace is None:
                is_inplace = inplace[node.target] = _is_inplace_node(node)
            if is_inplace:
                continue
        if ignore_mutable_buffers and _is_mutable_buffer(node, graph_signature):
            continue
        for spec in node_specs:
            if (
                spec is None
                or spec in seen
                or spec.shape_dynamism == _DYNAMIC_UNBOUND
                or spec in graph_inputs
                or spec in graph_outputs
                or spec in mutable
                or (
                    spec.const
                    and not node.meta.get("weight_has_gradient", False)
                )
            ):
                continue
            seen.add(spec)
            specs.append(spec)
    return specs


def _describe(spec):
    return (
        f"{spec} (mem_id {spec.mem_id}, bytes [{spec.mem_offset}, "
        f"{spec.mem_offset + spec.allocated_memory}), lifetime "
        f"{list(spec.lifetime)})"
    )


def _check_inside_arena(spec, sizes):
    """Checks `spec`'s place in its arena; returns its bytes."""
    offset, size = spec.mem_offset, spec.allocated_memory
    if not isinstance(offset, int) or offset < 0:
        raise ValueError(
            f"memplan.executorch: {spec} has no valid mem_offset ({offset}): "
            "was it planned?"
        )
    if not size:
        return 0
    mem_id = spec.mem_id
    if not isinstance(mem_id, int) or not 0 < mem_id < len(sizes):
        raise ValueError(
            f"memplan.executorch: {spec} is in mem_id {mem_id}, which is not "
            f"an arena of the plan (non_const_buffer_sizes {sizes})"
        )
    if offset + size > sizes[mem_id]:
        raise ValueError(
            f"memplan.executorch: {_describe(spec)} ends past its arena's "
            f"{sizes[mem_id]} bytes"
        )
    start, end = spec.lifetime
    if start is None or end is None:
        raise ValueError(
            f"memplan.executorch: {spec} has no valid lifetime: "
            f"{spec.lifetime}"
        )
    return size


def _check_object_ids(mem_id, specs, nbytes):
    """Specs whose bytes chain into each other share one mem_obj_id."""
    specs = sorted(specs, key=lambda s: s.mem_offset)
    first, end = None, None
    for spec in specs:
        if end is None or spec.mem_offset >= end:
            first, end = spec, spec.mem_offset
        elif spec.mem_obj_id != first.mem_obj_id:
            raise ValueError(
                f"memplan.executorch: {_describe(spec)} shares bytes of "
                f"mem_id {mem_id} with {first} (through the specs between) "
                f"but has mem_obj_id {spec.mem_obj_id}, not "
                f"{first.mem_obj_id}"
            )
        end = max(end, spec.mem_offset + nbytes[spec])


def _storage_groups(specs):
    """{root: [specs whose storage_base chain ends at root]} (the root
    included when it is among `specs`)."""
    groups = {}
    for spec in specs:
        if spec.storage_base is None:  # most specs
            groups.setdefault(spec, []).append(spec)
            continue
        root, seen = spec, {id(spec)}
        while root.storage_base is not None:
            root = root.storage_base
            if id(root) in seen:
                raise ValueError(
                    "memplan.executorch: circular storage_base chain "
                    f"through {root}"
                )
            seen.add(id(root))
        groups.setdefault(root, []).append(spec)
    return groups


def _overlap(a, b):
    """Whether specs a and b share a byte while both live."""
    return (
        a.lifetime[0] <= b.lifetime[1]
        and b.lifetime[0] <= a.lifetime[1]
        and a.mem_offset < b.mem_offset + b.allocated_memory
        and b.mem_offset < a.mem_offset + a.allocated_memory
    )


def _chained(a, b):
    """Whether a is in b's storage_base chain or b in a's."""
    for x, y in ((a, b), (b, a)):
        while x is not None:
            if x is y:
                return True
            x = x.storage_base
    return False


def _live_overlap_error(mem_id, a, b):
    return ValueError(
        f"memplan.executorch: storage overlap in mem_id {mem_id}: "
        f"{_describe(a)} and {_describe(b)} share bytes while both live"
    )


def _check_group(mem_id, root, members, nbytes):
    """One storage group: its specs lie inside the root's bytes, and
    specs outside each other's chain do not share a live byte. Returns
    the group's extent: (first node, last node, offset, end, members)."""
    if len(members) == 1 and members[0] is root:  # most specs
        start, end = root.lifetime
        return (
            start,
            end,
            root.mem_offset,
            root.mem_offset + nbytes[root],
            members,
        )
    low = root.mem_offset
    if not isinstance(low, int) or low < 0 or root.mem_id != mem_id:
        raise ValueError(
            f"memplan.executorch: the storage base {root} of "
            f"{members[0]} is not planned in mem_id {mem_id}"
        )
    high = low + root.allocated_memory
    for spec in members:
        if spec.mem_offset < low or (
            spec.mem_offset + spec.allocated_memory > high
        ):
            raise ValueError(
                f"memplan.executorch: {_describe(spec)} lies outside its "
                f"storage base {_describe(root)}"
            )
    for i, a in enumerate(members):
        for b in members[i + 1 :]:
            if _overlap(a, b) and not _chained(a, b):
                raise _live_overlap_error(mem_id, a, b)
    first = min(spec.lifetime[0] for spec in members)
    last = max(spec.lifetime[1] for spec in members)
    return first, last, low, high, members


def _groups_error(mem_id, one, other):
    """The error for two storage groups whose extents meet: a pair of
    their specs that shares a live byte (the bases' extents, which hold
    their dependents', otherwise)."""
    for a in one:
        for b in other:
            if _overlap(a, b):
                return _live_overlap_error(mem_id, a, b)
    return ValueError(
        f"memplan.executorch: storage overlap in mem_id {mem_id}: the "
        f"storage of {_describe(one[0])} and of {_describe(other[0])} (with "
        "the specs based on them) share bytes while both live"
    )


def _check_no_live_overlap(mem_id, specs, nbytes):
    """No two storage groups of one arena share a byte while both live: a
    sweep over the nodes keeps the live groups' byte ranges sorted and
    disjoint, and each new one is compared with its neighbours."""
    extents = [
        _check_group(mem_id, root, members, nbytes)
        for root, members in _storage_groups(specs).items()
    ]
    events = sorted(
        [(e[0], 1, i) for i, e in enumerate(extents)]
        + [(e[1] + 1, 0, i) for i, e in enumerate(extents)]
    )
    live = []  # (offset, end, index), sorted: disjoint byte ranges
    for _, kind, i in events:
        low, high = extents[i][2], extents[i][3]
        at = _bisect.bisect_left(live, (low, high, i))
        if kind == 0:
            live.pop(at)
            continue
        for j in (at - 1, at):
            if 0 <= j < len(live):
                other = extents[live[j][2]]
                if other[2] < high and low < other[3]:
                    raise _groups_error(mem_id, other[4], extents[i][4])
        live.insert(at, (low, high, i))


_VERIFY = ("memplan", "executorch", "both", "none")


def _check_verify(verify):
    """The verification `verify` names ("memplan", "executorch", "both",
    "none"; True is "memplan", False "none")."""
    if verify is True:
        return "memplan"
    if verify is False or verify is None:
        return "none"
    if verify not in _VERIFY:
        raise ValueError(
            f"memplan.executorch: verify={verify!r}; valid: "
            + ", ".join(repr(v) for v in _VERIFY)
            + " (or True, False)"
        )
    return verify


def _check_alignment(alignment):
    if (
        isinstance(alignment, bool)
        or not isinstance(alignment, int)
        or alignment <= 0
        or alignment & (alignment - 1)
    ):
        raise ValueError(
            f"memplan.executorch: alignment={alignment!r}; it must be a "
            "power of two (bytes), e.g. 16, ExecuTorch's default"
        )


class MemplanPlanningPass(_MemoryPlanningPass):
    """ExecuTorch's MemoryPlanningPass with memplan as its algorithm, that
    also checks the planned storage of every graph (`verify`): "memplan"
    (the default) runs verify_storage(), O(n log n) in the specs;
    "executorch" ExecuTorch's Verifier.verify_storage_reuse(), which
    compares every pair of specs (ExecuTorch runs it for its `greedy`
    only); "both"; "none" (memplan's verifier still checks every arena's
    plan as it is made). `algorithm` is the MemplanAlgorithm; its `arenas`
    describe the last graph planned."""

    def __init__(self, algorithm, *, verify="memplan", **pass_options):
        self.algorithm = algorithm
        self.verify = _check_verify(verify)
        _check_alignment(pass_options.get("alignment", ALIGNMENT))
        super().__init__(
            memory_planning_algo=_Suite(algo_list=[algorithm]), **pass_options
        )

    def run(self, graph_module, graph_signature=None):
        result = super().run(graph_module, graph_signature)
        mutable = self.alloc_mutable_buffers and not self.share_mutable_buffers
        if self.verify in ("memplan", "both"):
            verify_storage(
                graph_module,
                graph_signature,
                alloc_graph_input=self.alloc_graph_input,
                alloc_graph_output=self.alloc_graph_output,
                alloc_mutable_buffers=mutable,
                allow_lifetime_and_storage_overlap=(
                    self.allow_lifetime_and_storage_overlap
                ),
            )
        if self.verify in ("executorch", "both"):
            _Verifier(
                graph_module,
                self.alloc_graph_input,
                self.alloc_graph_output,
                mutable,
                graph_signature,
            ).verify_storage_reuse(self.allow_lifetime_and_storage_overlap)
        return result


def algorithm(planner="best", **options):
    """A MemplanAlgorithm: memplan's `planner` (a name of memplan.planners())
    as an ExecuTorch memory planning algorithm, for
    `MemoryPlanningAlgorithmSuite(algo_list=[...])`. `options` go to
    memplan.plan: time_limit, work_limit, seed, threads, options."""
    return MemplanAlgorithm(planner, **options)


def memory_planning_pass(
    planner="best", *, alignment=ALIGNMENT, verify="memplan", **options
):
    """An ExecuTorch MemoryPlanningPass that plans with memplan's `planner`.

    alignment: of every planned tensor, a power of two (ExecuTorch's
      default, 16 bytes).
    verify: how the planned graph's storage is checked after planning:
      "memplan" (verify_storage(), O(n log n) in the specs), "executorch"
      (ExecuTorch's Verifier.verify_storage_reuse(), which compares every
      pair of specs), "both" or "none" (memplan's verifier checks every
      arena's plan either way). True is "memplan", False "none".
    alloc_graph_input, alloc_graph_output, alloc_mutable_buffers,
      share_mutable_buffers, allow_lifetime_and_storage_overlap: as
      ExecuTorch's MemoryPlanningPass takes them.
    time_limit, work_limit, seed, threads, options: as memplan.plan takes
      them (no time limit by default: the same program gives the same plan).
    """
    _check_options(options, _PASS_OPTIONS + _PLAN_OPTIONS)
    pass_options = {k: options.pop(k) for k in _PASS_OPTIONS if k in options}
    _check_pass_values(pass_options)
    return MemplanPlanningPass(
        algorithm(planner, **options),
        verify=verify,
        alignment=alignment,
        **pass_options,
    )


def _tensor_bytes(value):
    """Bytes of a node's value (a FakeTensor in node.meta["val"]); 0 for a
    value that is no tensor."""
    import torch  # noqa: PLC0415  (ExecuTorch imports it anyway)

    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    return 0


def graph_of(graph_module, graph_signature=None):
    """The memplan Graph of an FX graph of ExecuTorch's edge dialect, for
    ordering its nodes: one op per call_function node (a getitem is part of
    the node it reads), one tensor per value (sized from node.meta["val"];
    a value that is no tensor weighs 0 bytes but keeps its users after it).
    Parameters, buffers and constants (`graph_signature`) are constants;
    other placeholders are inputs; the output node's values outputs. A
    result whose schema says it aliases an argument is an alias hint of
    that argument; an argument the schema writes is in the op's `writes`; a
    random draw or a side effect makes the op pinned (memplan._fx_rules,
    as memplan.torch). Returns (graph, nodes): nodes[i] is the FX node of
    op i."""
    import operator  # noqa: PLC0415

    constants = set()
    if graph_signature is not None:
        constants.update(graph_signature.inputs_to_parameters)
        constants.update(graph_signature.inputs_to_buffers)
        constants.update(
            getattr(graph_signature, "inputs_to_lifted_tensor_constants", {})
        )
    edge = _EdgeGraph()
    output_names = []
    for node in graph_module.graph.nodes:
        if node.op in ("placeholder", "get_attr"):
            kind = (
                "constant"
                if node.op == "get_attr" or node.name in constants
                else "input"
            )
            edge.names[node] = edge.add(
                node.name, _tensor_bytes(node.meta.get("val")), kind
            )
        elif node.op == "call_function" and node.target is operator.getitem:
            base = edge.names.get(node.args[0])
            if isinstance(base, list):
                edge.names[node] = base[node.args[1]]
            else:
                raise ValueError(
                    f"memplan.executorch: getitem node "
                    f'"{node.name}" of a value that is not '
                    f"a tuple result"
                )
        elif node.op == "call_function":
            edge.add_op(node)
        elif node.op == "output":
            output_names.extend(
                edge.names[leaf]
                for leaf in _leaves(node.args)
                if edge.named(leaf)
            )
    for name in output_names:
        if edge.tensors[name].kind == "activation":
            edge.tensors[name].kind = "output"
    graph = _memplan.Graph(
        name="edge", tensors=list(edge.tensors.values()), ops=edge.ops
    )
    return graph, edge.nodes


def _leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    return [value]


class _EdgeGraph:
    """graph_of()'s graph as it is built: tensors by name, ops and their FX
    nodes, and each node's tensor name (a list for a tuple result)."""

    def __init__(self):
        self.tensors, self.ops, self.nodes, self.names = {}, [], [], {}

    def add(self, name, size, kind="activation"):
        self.tensors[name] = _memplan.Tensor(name, size, kind=kind)
        return name

    def named(self, value):
        """Whether `value` is an FX node with one tensor name."""
        return _fx_rules.is_node(value) and isinstance(
            self.names.get(value), str
        )

    def add_op(self, node):
        """The op of call_function `node` and its results."""
        inputs = []
        for arg in _leaves(list(node.args) + list(node.kwargs.values())):
            if _fx_rules.is_node(arg) and arg in self.names:
                name = self.names[arg]
                for n in name if isinstance(name, list) else [name]:
                    if n not in inputs:
                        inputs.append(n)
        value = node.meta.get("val")
        if isinstance(value, (tuple, list)):
            outputs = [
                self.add(f"{node.name}.{k}", _tensor_bytes(v))
                for k, v in enumerate(value)
            ]
            self.names[node] = outputs
        else:
            outputs = [self.add(node.name, _tensor_bytes(value))]
            self.names[node] = outputs[0]
        alias = []
        for k, argument in _fx_rules.aliased_results(node, len(outputs)):
            if not inputs:
                continue
            j = (
                inputs.index(self.names[argument])
                if self.named(argument)
                else 0
            )
            self.tensors[outputs[k]].size = self.tensors[inputs[j]].size
            alias.append((k, j))
        writes = []
        for leaf in _fx_rules.written_arguments(node):
            if self.named(leaf):
                j = inputs.index(self.names[leaf])
                if j not in writes:
                    writes.append(j)
        self.ops.append(
            _memplan.Op(
                node.name,
                inputs,
                outputs,
                type=str(node.target),
                alias=alias,
                writes=writes,
                pinned=_fx_rules.is_pinned(node),
            )
        )
        self.nodes.append(node)


def reorder(edge_program, ordering="memory", **build_options):
    """Puts the nodes of every method of `edge_program` (an
    EdgeProgramManager, before to_executorch) in the order memplan's
    `ordering` chooses for graph_of() of its graph, in place, and returns
    {method: op order} (order[k]: the index, among the graph's call_function
    nodes in their old order, of the one now at step k). `build_options`
    (alignment, plan_constants, ...) are memplan.plan's."""
    import operator  # noqa: PLC0415

    orders = {}
    for method in edge_program.methods:
        program = edge_program.exported_program(method)
        gm = program.graph_module
        graph, nodes = graph_of(gm, program.graph_signature)
        if not nodes:
            orders[method] = []
            continue
        order = _memplan.plan(
            graph, "naive", reorder=ordering, **build_options
        ).op_order
        output = next(n for n in gm.graph.nodes if n.op == "output")
        for i in order:
            node = nodes[i]
            items = [
                u
                for u in node.users
                if u.op == "call_function" and u.target is operator.getitem
            ]
            output.prepend(node)
            for item in items:
                output.prepend(item)
        gm.graph.lint()
        gm.recompile()
        orders[method] = list(order)
    return orders
