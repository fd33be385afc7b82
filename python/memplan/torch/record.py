"""Graph recording: the exported graph run once on the example inputs, every
value kept alive so that storage identity is meaningful, and the memplan
graph built from what the run sees (storages, views, in-place writes)."""

import operator
import os
import re

import memplan as _memplan
from memplan import _fx_rules

from memplan.torch._common import (
    extent_bytes,
    fetch_attr,
    flatten,
    node_args,
    storage_key,
    storage_nbytes,
    torch_module,
)
from memplan.torch.records import VIEWS_OP, OpRecord, TensorRecord, Traced


def record(
    module,
    placeholders,
    input_names,
    constants,
    example_inputs,
    training,
    name,
    output_spec,
):
    """Runs the graph once, keeping every value alive so that storage
    identity is meaningful, and builds the memplan graph from what it sees.
    Nodes without a tensor result (sizes, asserts) are bound to their
    values and leave the graph."""
    torch = torch_module()
    recorder = _Recorder(placeholders, input_names, constants)
    given = dict(zip(input_names, example_inputs))
    torch.manual_seed(0)
    output_value = None
    it = iter(placeholders)
    for node in module.graph.nodes:
        if node.op == "placeholder":
            recorder.placeholder(node, next(it), given)
        elif node.op == "get_attr":
            recorder.get_attr(node, fetch_attr(module, node.target))
        elif node.op == "call_function":
            recorder.call(node)
        elif node.op == "output":
            output_value = node.args[0]
    _drop_bound(module, recorder.bound)
    outputs = recorder.mark_outputs(output_value)
    graph = make_graph(name, recorder.tensors, recorder.ops)
    return Traced(
        graph=graph,
        module=module,
        tensors=recorder.tensors,
        ops=recorder.ops,
        placeholders=list(placeholders),
        input_names=list(input_names),
        constants=constants,
        outputs=outputs,
        output_spec=output_spec,
        training=training,
        names=recorder.names,
    )


def _drop_bound(module, bound):
    """Bound values replace their nodes: the graph keeps tensor ops only."""
    from torch.fx.node import map_arg  # noqa: PLC0415

    for node, value in bound:
        for user in list(node.users):
            user.args = map_arg(
                user.args,
                lambda n, node=node, value=value: value if n is node else n,
            )
            user.kwargs = map_arg(
                user.kwargs,
                lambda n, node=node, value=value: value if n is node else n,
            )
    for node, _ in reversed(bound):
        module.graph.erase_node(node)
    module.recompile()


def _unique(name, used):
    candidate, i = name, 1
    while candidate in used:
        candidate = f"{name}_{i}"
        i += 1
    used.add(candidate)
    return candidate


class _Recorder:
    """What one recording run has seen so far."""

    def __init__(self, placeholders, input_names, constants):
        self.input_names = input_names
        self.constants = constants
        self.tensors = {}
        self.ops = []
        self.env = {}  # node -> value
        self.names = {}  # node -> tensor name, or list of names (multi-output)
        self.owner = {}  # storage key -> root tensor name
        self.latest = {}  # root name -> newest tensor name of its group
        self.used_names = set(placeholders)
        self.bound = []  # nodes without a tensor result, with their value
        self.bound_nodes = set()

    def add_tensor(self, name, t, kind, root, size, producer):
        self.tensors[name] = TensorRecord(
            name=name,
            kind=kind,
            dtype=t.dtype,
            shape=tuple(t.shape),
            stride=tuple(t.stride()),
            storage_offset=t.storage_offset(),
            itemsize=t.element_size(),
            storage_bytes=storage_nbytes(t),
            size=size,
            root=root,
            producer=producer,
        )
        self.latest[root] = name

    def placeholder(self, node, pname, given):
        value = (
            given[pname] if pname in given else self.constants[pname].clone()
        ).detach()
        self.env[node] = value
        self.names[node] = pname
        kind = "input" if pname in self.input_names else "constant"
        key = storage_key(value)
        if key is not None:
            self.owner.setdefault(key, pname)
        self.add_tensor(pname, value, kind, pname, storage_nbytes(value), None)

    def get_attr(self, node, value):
        torch = torch_module()
        self.env[node] = value
        if isinstance(value, torch.Tensor):
            tname = _unique(node.name, self.used_names)
            self.names[node] = tname
            self.constants[tname] = value
            self.add_tensor(
                tname, value, "constant", tname, storage_nbytes(value), None
            )

    def call(self, node):
        torch = torch_module()
        args, kwargs = node_args(node, self.env)
        if node.target is operator.getitem:
            self.env[node] = args[0][args[1]]
            base = self.names.get(node.args[0])
            if isinstance(base, list):
                self.names[node] = base[node.args[1]]
            elif node.args[0] in self.bound_nodes:  # an item of a bound value
                self.bound.append((node, self.env[node]))
                self.bound_nodes.add(node)
            return
        value = node.target(*args, **kwargs)
        self.env[node] = value
        if not any(isinstance(v, torch.Tensor) for v in flatten(value)):
            self.bound.append((node, value))
            self.bound_nodes.add(node)
            return
        recording = _OpRecording(self, node, value)
        recording.cost = _fx_rules.flop_count(node, args, kwargs, value)
        self.ops.extend(recording.records())

    def mark_outputs(self, output_value):
        """The graph outputs' tensor names; activations among them become
        outputs."""
        outputs = []
        for leaf in flatten(output_value):
            if (
                hasattr(leaf, "op")
                and leaf in self.names
                and isinstance(self.names[leaf], str)
            ):
                tname = self.names[leaf]
                if tname not in outputs:
                    outputs.append(tname)
                if self.tensors[tname].kind == "activation":
                    self.tensors[tname].kind = "output"
        return outputs


class _OpRecording:
    """One op's results as tensors of the graph: new storages, views and
    in-place results of its inputs, and storages several results share."""

    def __init__(self, recorder, node, value):
        self.r = recorder
        self.node = node
        self.value = value
        self.index = len(recorder.ops)
        # Inputs: every tensor argument, first occurrence first.
        self.inputs = []
        self.arg_values = {}
        for arg in flatten(list(node.args) + list(node.kwargs.values())):
            if hasattr(arg, "op") and isinstance(recorder.names.get(arg), str):
                tname = recorder.names[arg]
                if tname not in self.arg_values:
                    self.inputs.append(tname)
                    self.arg_values[tname] = recorder.env[arg]
        self.outputs, self.alias, self.out_names = [], [], []
        self.views_op = None
        self.cost = None  # FLOPs, set by the recorder

    def records(self):
        """The op's OpRecord, and the VIEWS_OP step after it when results
        share a new storage."""
        torch = torch_module()
        r, node = self.r, self.node
        writes = written_inputs(node, r.names)
        leaves = flatten(self.value)
        multi = isinstance(self.value, (tuple, list))
        # Results sharing a storage no earlier tensor has (e.g. the q, k and
        # v of aten._transform_bias_rescale_qkv, three slices of one new
        # tensor): the storage becomes one tensor of its own, made by this
        # op, and the results views of it, made by a step of type VIEWS_OP
        # right after it (alias hints relate an output to an input only).
        new_keys = [
            storage_key(leaf)
            for leaf in leaves
            if isinstance(leaf, torch.Tensor)
        ]
        new_keys = [k for k in new_keys if k is not None and k not in r.owner]
        shared = {k for k in new_keys if new_keys.count(k) > 1}
        for k, leaf in enumerate(leaves):
            if not isinstance(leaf, torch.Tensor):
                self.out_names.append(None)
                continue
            tname = _unique(
                f"{node.name}.{k}" if multi else node.name, r.used_names
            )
            self.out_names.append(tname)
            key = storage_key(leaf)
            if key in shared:
                self._shared_result(tname, leaf, key)
            else:
                self._result(tname, leaf, key)
        r.names[node] = self.out_names if multi else self.out_names[0]
        op = OpRecord(
            name=node.name,
            type=str(node.target),
            node=node,
            inputs=self.inputs,
            outputs=self.outputs,
            alias=self.alias,
            writes=writes,
            out_names=self.out_names,
            pinned=_fx_rules.is_pinned(node),
            cost=self.cost,
            recomputable=not writes and _fx_rules.is_recomputable(node),
        )
        return [op] if self.views_op is None else [op, self.views_op]

    def _shared_result(self, tname, leaf, key):
        """A result in a new storage other results share: a view of the
        storage's tensor, made by the VIEWS_OP step."""
        r = self.r
        if self.views_op is None:
            self.views_op = OpRecord(
                name=_unique(f"{self.node.name}.views", r.used_names),
                type=VIEWS_OP,
                node=None,
                inputs=[],
                outputs=[],
                alias=[],
                writes=[],
                out_names=[],
                cost=0,  # it runs no code
            )
        views_op = self.views_op
        if key not in r.owner:  # the storage, made by this op
            storage = _unique(f"{self.node.name}.storage", r.used_names)
            r.owner[key] = storage
            nbytes = storage_nbytes(leaf)
            r.tensors[storage] = TensorRecord(
                name=storage,
                kind="activation",
                dtype=leaf.dtype,
                shape=(nbytes // leaf.element_size(),),
                stride=(1,),
                storage_offset=0,
                itemsize=leaf.element_size(),
                storage_bytes=nbytes,
                size=nbytes,
                root=storage,
                producer=self.index,
            )
            r.latest[storage] = storage
            self.outputs.append(storage)
            views_op.inputs.append(storage)
        storage = r.owner[key]
        # A view spans its base from the base's first byte (the storage's)
        # to its own last.
        last = leaf.storage_offset() * leaf.element_size() + extent_bytes(leaf)
        r.add_tensor(tname, leaf, "activation", storage, last, self.index + 1)
        views_op.outputs.append(tname)
        views_op.alias.append(
            (len(views_op.outputs) - 1, views_op.inputs.index(storage))
        )

    def _result(self, tname, leaf, key):
        """A result in a storage of its own, or in an existing one."""
        r = self.r
        root = r.owner.get(key) if key is not None else None
        if root is None:  # a new storage
            if key is not None:
                r.owner[key] = tname
            r.add_tensor(
                tname,
                leaf,
                "activation",
                tname,
                storage_nbytes(leaf),
                self.index,
            )
            self.outputs.append(tname)
            return
        # The result shares the bytes of an existing storage: a view or an
        # in-place write. It aliases the input living in that storage; when
        # no input does (an op returning a tensor it was not given), the
        # group's newest tensor becomes an input of the op.
        inputs = self.inputs
        j = next(
            (i for i, n in enumerate(inputs) if r.tensors[n].root == root), None
        )
        if j is None:
            inputs.append(r.latest[root])
            self.arg_values[r.latest[root]] = None
            j = len(inputs) - 1
        base = r.tensors[inputs[j]]
        first = base.storage_offset * base.itemsize
        last = leaf.storage_offset() * leaf.element_size() + extent_bytes(leaf)
        r.add_tensor(
            tname, leaf, "activation", root, max(0, last - first), self.index
        )
        r.tensors[tname].base = inputs[j]
        self.outputs.append(tname)
        self.alias.append((len(self.outputs) - 1, j))


def written_inputs(node, names):
    """Tensor names of the arguments the op's schema marks as written
    (_fx_rules.written_arguments), the graph's Op.writes. Core ATen is
    functional: in a traced graph these are the copy_ steps trace() adds
    for buffer and input mutations."""
    return [
        names[leaf]
        for leaf in _fx_rules.written_arguments(node)
        if isinstance(names.get(leaf), str)
    ]


def _write_indices(op):
    """The op's Op.writes: indices into its inputs, each once."""
    out = []
    for n in op.writes:
        j = op.inputs.index(n) if n in op.inputs else None
        if j is not None and j not in out:
            out.append(j)
    return out


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def _source_file(path):
    """A frame's file as the graph records it: from the package directory
    on for installed code ("torchvision/models/resnet.py"), relative to the
    working directory for a file under it, else as it is."""
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path[path.rindex(marker) + len(marker) :]
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def node_source(node):
    """Where an exported node comes from, as a graph tensor's "source": the
    qualified name of the innermost module (nn_module_stack) and the last
    frame of its stack trace outside PyTorch itself (the model's line);
    None when the node has neither."""
    meta = getattr(node, "meta", None) or {}
    source = {}
    stack = meta.get("nn_module_stack") or {}
    if stack:
        path = list(stack.values())[-1][0]
        if isinstance(path, str) and path:
            source["module"] = path
    frames = _FRAME.findall(meta.get("stack_trace") or "")
    own = [f for f in frames if "/torch/" not in f[0].replace(os.sep, "/")]
    if own or frames:
        file, line = (own or frames)[-1]
        source["file"] = _source_file(file)
        source["line"] = int(line)
    return source or None


def _sources(tensors, ops):
    """{tensor name: source} for the tensors an op of `ops` makes (a view
    step's results: the op before it)."""
    out = {}
    for t in tensors.values():
        if t.producer is None or t.producer >= len(ops):
            continue
        op = ops[t.producer]
        if op.node is None and t.producer > 0:
            op = ops[t.producer - 1]
        if op.node is not None:
            out[t.name] = node_source(op.node)
    return out


def make_graph(name, tensors, ops, sizes=None):
    """The memplan graph; `sizes` ({name: expression text}) gives the
    symbolic sizes (such tensors have no fixed shape). Tensors made by an
    op carry its module and source line ("source")."""
    mp = _memplan
    graph_tensors = []
    sources = _sources(tensors, ops)
    for t in tensors.values():
        dtype = str(t.dtype).replace("torch.", "")
        if sizes and isinstance(sizes.get(t.name), str):
            graph_tensors.append(
                mp.Tensor(
                    t.name,
                    sizes[t.name],
                    kind=t.kind,
                    alignment=t.itemsize,
                    dtype=dtype,
                )
            )
            continue
        graph_tensors.append(
            mp.Tensor(
                t.name,
                t.size,
                kind=t.kind,
                alignment=t.itemsize,
                shape=list(t.shape),
                dtype=dtype,
            )
        )
    for t in graph_tensors:
        if sources.get(t.name):
            t.source = sources[t.name]
    graph_ops = [
        mp.Op(
            o.name,
            o.inputs,
            o.outputs,
            type=o.type,
            alias=o.alias,
            writes=_write_indices(o),
            pinned=o.pinned,
            cost=o.cost,
            recomputable=o.recomputable,
        )
        for o in ops
    ]
    # Constants and inputs no op reads would only be planned as dead bytes.
    read = {n for o in ops for n in o.inputs}
    graph_tensors = [
        t
        for t in graph_tensors
        if t.kind not in ("constant", "input") or t.name in read
    ]
    return mp.Graph(name=name, tensors=graph_tensors, ops=graph_ops)
