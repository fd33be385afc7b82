"""The arena check: a traced graph run in a plan's op order with every
planned tensor's storage at its planned offset of one uint8 arena, each
live tensor's bytes checked to stay exactly as its own writers left them."""

import dataclasses
import operator

from memplan.torch._common import (
    fetch_attr,
    flatten,
    node_args,
    placeholder_values,
    returned,
    torch_module,
)
from memplan.torch.errors import ArenaError


@dataclasses.dataclass
class _Group:
    """The tensors living in one storage: one planned buffer."""

    root: str
    members: list
    start: int = 0  # arena byte of the storage's first byte
    nbytes: int = 0
    first: int = -1  # step of its first write (-1: before the first op)
    last_use: int = -1  # step of its last reader (len(ops): an output)
    planned: bool = False

    def span(self):
        return f"[{self.start}, {self.start + self.nbytes})"


def _groups(traced, plan, order):
    """The storage groups of `traced` with their place in the arena, checked
    against the plan: every tensor of a storage at the same place. Steps
    (first, last_use) count in `order`, the op order run."""
    placed = plan.tensors
    pool_base, total = {}, 0
    for pool, used in zip(plan.problem.pools, plan.pool_used):
        pool_base[pool.name] = total
        total += used
    groups = {}
    for t in traced.tensors.values():
        groups.setdefault(t.root, _Group(root=t.root, members=[]))
        groups[t.root].members.append(t.name)
    n_ops = len(traced.ops)
    step_of = {i: step for step, i in enumerate(order)}
    for step, i in enumerate(order):
        for n in traced.ops[i].inputs:
            g = groups[traced.tensors[n].root]
            g.last_use = max(g.last_use, step)
    for name in traced.outputs:
        groups[traced.tensors[name].root].last_use = n_ops
    for g in groups.values():
        root = traced.tensors[g.root]
        g.nbytes = root.storage_bytes
        g.first = -1 if root.producer is None else step_of[root.producer]
        where = {placed[m] for m in g.members if m in placed}
        in_plan = [m for m in g.members if m in placed]
        if not in_plan:
            continue
        if len(in_plan) != len(g.members) or len(where) != 1:
            raise ValueError(
                f"the plan does not keep the tensors of one storage together: "
                f"{', '.join(g.members)} (placed: "
                f"{', '.join(f'{m}={placed.get(m)}' for m in g.members)})"
            )
        pool, offset = where.pop()
        g.planned = True
        g.start = pool_base[pool] + offset
        buffer = plan.buffer(g.root)
        if buffer["size"] < g.nbytes:
            raise ValueError(
                f"the plan gives tensor \"{g.root}\" {buffer['size']} bytes, "
                f"its storage has {g.nbytes}"
            )
    return groups, total


def _plan_order(traced, plan):
    """The op order `plan` was made for (plan.op_order), checked against
    the traced ops."""
    n = len(traced.ops)
    order = list(getattr(plan, "op_order", None) or range(n))
    if sorted(order) != list(range(n)):
        more = (
            " (a rematerialized plan runs with graph=, its RematResult's "
            "graph)"
            if len(order) > n
            else ""
        )
        raise ValueError(
            f"the plan's op order has {len(order)} steps, not "
            f"a permutation of the {n} traced ops{more}"
        )
    return order


def run_in_arena(traced, plan, inputs, seed=0, state=None, graph=None):
    """Runs `traced` in the plan's op order (plan.op_order: the traced order
    unless the plan was made with `reorder`) with every tensor the plan
    places inside one uint8 arena at its planned offset (pools laid one
    after another), checking that each live tensor's bytes are exactly as
    its own writers left them: all of them before the first op and after
    the last, and after each op those it was given and those its results
    were copied onto (an op changes no other byte). Returns the outputs
    (copies, structured as the model's, or the gradients of a training
    step); raises ArenaError naming the overwritten tensor, the op that
    overwrote it and both byte ranges (arena bytes), and whether the plan's
    order differs from the traced one. `state` is Traced.run's: constants
    the plan leaves out of the arena (the default) are those tensors,
    updated by the graph's buffer writes.

    `graph`: the op list run, when it is not the traced one: the graph of a
    RematResult (rematerialize(), whose plan is `plan`), the traced ops
    with recomputed ops among them. A recomputed op runs its traced op's
    node again on the tensors the graph names, its results copied to the
    recomputed tensors' planned places, which the later ops the graph
    names read; its bytes are checked like any op's."""
    torch_module()
    if traced.dims:  # symbolic: recorded again at the inputs' sizes
        if graph is not None:
            raise ValueError(
                "a rematerialized graph runs at the sizes it was planned "
                "for: trace the model without symbolic=True"
            )
        traced = traced.bind(inputs)
    if graph is None:
        return _ArenaRun(traced, plan).run(inputs, seed, state)
    from memplan.torch.remat import rewrite  # noqa: PLC0415

    rewritten = rewrite(traced, graph)
    return _ArenaRun(rewritten.traced, plan, rewritten).run(inputs, seed, state)


class _ArenaRun:
    """One run of a traced graph inside the arena a plan lays out."""

    def __init__(self, traced, plan, rewritten=None):
        torch = torch_module()
        self.traced = traced
        # A rematerialized op list (remat.Rewrite): the copies' indices and
        # the recomputed tensors ops read in place of the traced ones.
        self.copies = rewritten.copies if rewritten else set()
        self.reads = rewritten.reads if rewritten else {}
        self.recomputed = {}  # recomputed tensor name -> its arena value
        self.order = _plan_order(traced, plan)
        self.reordered = self.order != list(range(len(self.order)))
        self.groups, total = _groups(traced, plan, self.order)
        self.size = total  # the plan's bytes, its pools one after another
        self.arena = torch.zeros(total + 64, dtype=torch.uint8)
        self.base_ptr = self.arena.data_ptr()
        self.typed = {}  # dtype -> the arena viewed as that dtype
        for g in self.groups.values():
            if g.planned and g.start + g.nbytes > total:
                raise ValueError(
                    f'tensor "{g.root}" at bytes {g.span()} '
                    f"lies outside the plan's {total} bytes"
                )
        self.snapshots = {}  # root -> the bytes its writers left (live)
        self.taken = []  # roots snapshotted since the last check
        self.env = {}  # fx node -> value

    def run(self, inputs, seed, state):
        torch = torch_module()
        traced = self.traced
        values = placeholder_values(traced, inputs, state)
        torch.manual_seed(seed)
        nodes = list(traced.module.graph.nodes)
        self._place_leaves(nodes, values)
        self._check(0, None, [])  # the inputs as placed
        for step, i in enumerate(self.order):
            op = traced.ops[i]
            if op.node is not None:  # a VIEWS_OP step changes no byte
                self._run_op(step, op, i)
        self._check(len(self.order), None, [])  # the outputs, every byte
        output = next(n for n in reversed(nodes) if n.op == "output")
        try:
            result = node_args(output, self.env)[0][0]
        except KeyError as e:
            raise ValueError(
                f'the graph\'s output needs "{e.args[0]}", '
                f"which the plan's op order never ran"
            ) from None
        copies = [
            v.clone() if isinstance(v, torch.Tensor) else v
            for v in flatten(result)
        ]
        return returned(traced, copies)

    def _orders_note(self, step):
        if not self.reordered:
            return ""
        order = self.order
        i = order[step] if step < len(order) else None
        where = (
            f': step {step} runs op "{self.traced.ops[i].name}", '
            f"traced at step {i}"
            if i is not None
            else ""
        )
        return (
            f" (the plan's op order differs from the traced order" f"{where})"
        )

    def _arena_tensor(self, name, shape, stride):
        torch = torch_module()
        t = self.traced.tensors[name]
        g = self.groups[t.root]
        if t.dtype not in self.typed:
            usable = (self.arena.numel() // t.itemsize) * t.itemsize
            self.typed[t.dtype] = self.arena[:usable].view(t.dtype)
        offset = g.start + t.storage_offset * t.itemsize
        if offset % t.itemsize:
            raise ValueError(
                f'tensor "{name}" ({t.dtype}) would start at '
                f"arena byte {offset}, not a multiple of "
                f"{t.itemsize}: plan with alignment"
            )
        return torch.as_strided(
            self.typed[t.dtype], shape, stride, offset // t.itemsize
        )

    @staticmethod
    def _storage_bytes(value, t, g, op):
        """The bytes of `value`'s storage that the traced storage of `t`
        held: from t.storage_offset elements before its first element.
        (aten.copy returns a new storage as large as its `self`'s, which in
        the arena is the whole arena: only the traced part is planned.)"""
        torch = torch_module()
        start = (value.storage_offset() - t.storage_offset) * t.itemsize
        whole = torch.empty(0, dtype=torch.uint8).set_(value.untyped_storage())
        if start < 0 or start + g.nbytes > whole.numel():
            raise ArenaError(
                f'op "{op.name}" ({op.type}) returned tensor "{t.name}" '
                f"at element {value.storage_offset()} of a storage of "
                f"{whole.numel()} bytes; traced at element "
                f"{t.storage_offset} of {g.nbytes}"
            )
        return whole[start : start + g.nbytes]

    def _snapshot(self, g):
        self.snapshots[g.root] = self.arena[
            g.start : g.start + g.nbytes
        ].clone()
        self.taken.append(g.root)

    # The state before step s is the state after step s - 1 (nothing runs in
    # between), so each state is compared once: after step s - 1, every
    # tensor read at step s - 1 or later, which includes all those step s
    # needs.
    def _check(self, step, op, wrote, given=None):
        """Every live group whose bytes were written must still hold them.
        An op changes no arena byte but those of the tensors it is given
        (`given`: their roots) and those its results are copied to (the
        groups snapshotted since the last check): after an op those groups
        and every live group overlapping the latter are compared; with
        given=None every live group is."""
        groups = self.groups
        for root in [r for r in self.snapshots if groups[r].last_use < step]:
            del self.snapshots[root]  # dead: its bytes may change
        spans = [
            (groups[r].start, groups[r].start + groups[r].nbytes)
            for r in self.taken
        ]
        self.taken.clear()
        if given is None:
            suspects = list(self.snapshots)
        else:
            suspects = [
                r
                for r, g in ((r, groups[r]) for r in self.snapshots)
                if r in given
                or any(s < g.start + g.nbytes and g.start < e for s, e in spans)
            ]
        for root in suspects:
            saved = self.snapshots[root]
            g = groups[root]
            now = self.arena[g.start : g.start + g.nbytes]
            if not _same_bytes(now, saved):
                first = int((now != saved).nonzero()[0]) + g.start
                raise ArenaError(self._changed(g, first, step, op, wrote))

    def _changed(self, g, first, step, op, wrote):
        """ArenaError's text: group `g`'s bytes changed (first changed byte
        `first`) at `step`, by `op` (None: before the first op or by the
        end of the run), which wrote `wrote`."""
        views = [m for m in g.members if m != g.root]
        who = f'tensor "{g.root}"' + (
            f" (with its views {', '.join(views[:5])}"
            f"{', ...' if len(views) > 5 else ''})"
            if views
            else ""
        )
        if op is None:
            when = (
                f"before op {step}"
                if step < len(self.order)
                else "by the end of the run"
            )
            return (
                f"{who} at arena bytes {g.span()} changed {when} (first "
                f"changed byte {first}){self._orders_note(step)}"
            )
        hits = [
            (n, s, e)
            for n, s, e in wrote
            if s < g.start + g.nbytes and g.start < e
        ]
        by = (
            "; ".join(
                f'wrote tensor "{n}" at arena bytes [{s}, {e})'
                for n, s, e in (hits or wrote)
            )
            or "wrote nothing planned"
        )
        ops = self.traced.ops
        needed = (
            f'read by op "{ops[self.order[g.last_use]].name}"'
            if g.last_use < len(ops)
            else "a graph output"
        )
        return (
            f"{who} at arena bytes {g.span()} (still {needed}) "
            f'was overwritten by op "{op.name}" ({op.type}), which '
            f"{by}; first changed byte {first}{self._orders_note(step)}"
        )

    def _place_input(self, name, value):
        g = self.groups[self.traced.tensors[name].root]
        if not g.planned:
            return value
        dst = self._arena_tensor(
            name, value.shape, self.traced.tensors[name].stride
        )
        dst.copy_(value)
        self._snapshot(g)
        return dst

    def _take_items(self, node):
        """The getitem nodes of `node`'s result, now that it exists."""
        for user in node.users:
            if user.op == "call_function" and user.target is operator.getitem:
                args, _ = node_args(user, self.env)
                self.env[user] = args[0][args[1]]
                self._take_items(user)

    def _place_leaves(self, nodes, values):
        """The placeholders' and attributes' values, the planned ones copied
        into the arena."""
        torch = torch_module()
        traced, env = self.traced, self.env
        it = iter(zip(traced.placeholders, values))
        for node in nodes:
            if node.op == "placeholder":
                name, value = next(it)
                env[node] = (
                    self._place_input(name, value)
                    if name in traced.tensors
                    else value
                )
            elif node.op == "get_attr":
                value = fetch_attr(traced.module, node.target)
                name = traced.names.get(node)
                if isinstance(value, torch.Tensor) and name in traced.tensors:
                    value = self._place_input(name, value.detach().clone())
                env[node] = value
                self._take_items(node)

    def _run_op(self, step, op, i):
        """Runs one op (traced.ops[i]) on arena tensors, puts its results in
        the arena and checks what it may have changed."""
        traced, node = self.traced, op.node
        env = self.env
        if i in self.reads:
            env = _Reading(env, traced.names, self.reads[i], self.recomputed)
        try:
            args, kwargs = node_args(node, env)
        except KeyError as e:
            raise ValueError(
                f'op "{op.name}" needs the result of "{e.args[0]}", which '
                f"the plan's op order has not run yet"
                f"{self._orders_note(step)}"
            ) from None
        args, kwargs = _arena_storage_offset(
            node, op, args, kwargs, self.groups, traced.tensors
        )
        value = node.target(*args, **kwargs)
        wrote = []
        for n in op.writes:
            g = self.groups[traced.tensors[n].root]
            if g.planned:
                self._snapshot(g)
                wrote.append((n, g.start, g.start + g.nbytes))
        placed_leaves = [
            self._place_result(step, op, leaf, name, wrote)
            for leaf, name in zip(flatten(value), op.out_names)
        ]
        if i in self.copies:  # a recomputed op: its results go by name
            for leaf, name in zip(placed_leaves, op.out_names):
                if name is not None:
                    self.recomputed[name] = leaf
        else:
            self.env[node] = _rebuild(value, iter(placed_leaves))
            self._take_items(node)
        self._check(
            step, op, wrote, {traced.tensors[n].root for n in op.inputs}
        )

    def _place_result(self, step, op, leaf, name, wrote):
        """Result `leaf` (tensor `name`) as it lives in the arena: a new
        storage's bytes copied to their place, a view or in-place result
        checked to be where it was traced."""
        if (
            name is None
            or not self.groups[self.traced.tensors[name].root].planned
        ):
            return leaf
        t = self.traced.tensors[name]
        g = self.groups[t.root]
        if t.root == name or t.root in op.outputs:
            # A new storage (the result's own, or one several results
            # share): its bytes go to the arena, once.
            if t.root not in (w[0] for w in wrote):
                self.arena[g.start : g.start + g.nbytes].copy_(
                    self._storage_bytes(leaf, t, g, op)
                )
                self._snapshot(g)
                wrote.append((t.root, g.start, g.start + g.nbytes))
            return self._arena_tensor(name, leaf.shape, leaf.stride())
        # A view or in-place result: already in the arena.
        want = self.base_ptr + g.start + t.storage_offset * t.itemsize
        if leaf.data_ptr() != want:
            raise ArenaError(
                f'op "{op.name}" ({op.type}) returned tensor '
                f'"{name}" at arena byte '
                f"{leaf.data_ptr() - self.base_ptr}, traced as a view "
                f"at byte {want - self.base_ptr}{self._orders_note(step)}"
            )
        return leaf


class _Reading:
    """The values an op of a rematerialized op list reads: the recomputed
    tensors it reads in place of traced ones (`reads`: traced name ->
    recomputed name), the run's values of fx nodes otherwise."""

    def __init__(self, env, names, reads, recomputed):
        self.env, self.names = env, names
        self.reads, self.recomputed = reads, recomputed

    def __getitem__(self, node):
        name = self.names.get(node)
        if isinstance(name, str) and name in self.reads:
            return self.recomputed[self.reads[name]]
        return self.env[node]


def _arena_storage_offset(node, op, args, kwargs, groups, tensors):
    """as_strided's storage_offset counts from the first element of its
    input's storage; in the arena that storage is the arena, so an explicit
    offset moves by where the input's storage starts in it."""
    torch = torch_module()
    aten = torch.ops.aten
    if node.target not in (aten.as_strided.default, aten.as_strided_.default):
        return args, kwargs
    if not op.inputs or not groups[tensors[op.inputs[0]].root].planned:
        return args, kwargs
    t = tensors[op.inputs[0]]
    shift = groups[t.root].start // t.itemsize
    if len(args) > 3 and args[3] is not None:
        args = (*args[:3], args[3] + shift, *args[4:])
    elif kwargs.get("storage_offset") is not None:
        kwargs = dict(kwargs, storage_offset=kwargs["storage_offset"] + shift)
    return args, kwargs


def _same_bytes(a, b):
    """a == b, byte for byte (uint8 tensors of one length); compared as int64
    where possible, which is several times faster."""
    torch = torch_module()
    n = (a.numel() // 8) * 8
    if n and (a.data_ptr() % 8 == 0) and (b.data_ptr() % 8 == 0):
        if not torch.equal(a[:n].view(torch.int64), b[:n].view(torch.int64)):
            return False
        return torch.equal(a[n:], b[n:])
    return torch.equal(a, b)


def _rebuild(value, leaves):
    """`value`'s structure of tuples and lists with the next leaves."""
    if isinstance(value, tuple):
        return tuple(_rebuild(v, leaves) for v in value)
    if isinstance(value, list):
        return [_rebuild(v, leaves) for v in value]
    return next(leaves)
