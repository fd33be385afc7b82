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

`memplan.torch` (imported on use; it needs PyTorch) traces a PyTorch model
into a graph and runs it inside a planned arena.
"""

import json as _json
import os as _os

from memplan._memplan import (  # noqa: F401  (the public API)
    Buffer,
    CapacityError,
    Error,
    Graph,
    Op,
    PlanResult,
    Pool,
    Problem,
    Tensor,
    TensorKind,
    TimeLimitError,
    default_planner,
    graph_from_json,
    graph_to_json,
    planners,
)
from memplan import _memplan

__all__ = [
    "Buffer", "CapacityError", "Error", "Graph", "Op", "PlanResult", "Pool",
    "Problem", "Tensor", "TensorKind", "TimeLimitError", "build_problem",
    "default_planner", "graph_from_dict", "graph_to_dict", "graph_from_json",
    "graph_to_json", "plan", "planners", "read_buffer_csv", "read_graph",
    "read_plan", "verify", "write_buffer_csv", "write_graph", "write_plan",
]


def graph_from_dict(data):
    """A Graph from a dict in the memplan-graph-v1 layout (as json.load gives)."""
    if not isinstance(data, dict):
        raise TypeError(f"expected a dict, got {type(data).__name__}")
    data = dict(data)
    data.setdefault("format", "memplan-graph-v1")
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
    raise TypeError("expected a memplan.Graph, a graph dict or a "
                    f"memplan.Problem, got {type(graph).__name__}")


def _pools(pools):
    if pools is None:
        return None
    out = []
    for p in pools:
        if isinstance(p, Pool):
            out.append(p)
        elif isinstance(p, dict):
            out.append(Pool(p["name"], p.get("capacity", 0),
                            p.get("alignment", 1)))
        else:
            out.append(Pool(*p))
    return out


def plan(graph, planner=None, *, time_limit=None, alignment=1, pools=None,
         capacity=0, plan_constants=False, plan_inputs=True,
         plan_outputs=True, seed=0, threads=1, node_limit=None):
    """Plans every tensor of `graph` and returns a verified PlanResult.

    planner: a name of `planners()` (None: `default_planner()`).
    time_limit: seconds (None: the library's default).
    alignment: default alignment of every buffer (a power of two).
    pools: Pool objects, dicts or (name, capacity, alignment) tuples, fastest
      first (None: the graph's, else one unbounded pool).
    capacity: capacity of the single pool (0: unbounded).
    node_limit: search nodes of the `exact` planner (None: no limit but time).
    """
    return _memplan._plan(
        _input(graph), planner or "", time_limit, seed, threads, node_limit,
        alignment, _pools(pools), capacity, plan_constants, plan_inputs,
        plan_outputs)


def build_problem(graph, *, alignment=1, pools=None, capacity=0,
                  plan_constants=False, plan_inputs=True, plan_outputs=True):
    """The Problem (buffers, lifetimes, pools) the planners see for `graph`."""
    return _memplan._build_problem(
        _input(graph), alignment, _pools(pools), capacity, plan_constants,
        plan_inputs, plan_outputs)


def verify(graph, plan):
    """Checks `plan` against `graph` (built with the plan's options) with the
    library's verifier; raises ValueError naming the offending buffers."""
    _memplan._verify(_input(graph), plan)


def read_plan(path, graph, *, alignment=1, pools=None, capacity=0,
              plan_constants=False, plan_inputs=True, plan_outputs=True):
    """A memplan-plan-v1 file as a PlanResult for `graph` (buffers matched by
    name), built with the given options (those the plan was made with)."""
    return _memplan._read_plan(
        _input(graph), _os.fspath(path), alignment, _pools(pools), capacity,
        plan_constants, plan_inputs, plan_outputs)


def read_graph(path):
    """A memplan-graph-v1 file (.json, or .json.gz through zlib)."""
    return _memplan.read_graph(_os.fspath(path))


def write_graph(graph, path):
    """Writes a memplan-graph-v1 file (gzipped when the name ends in .gz)."""
    _memplan.write_graph(_input(graph), _os.fspath(path))


def read_buffer_csv(path):
    """A buffer CSV (id,lower,upper,size[,offset]) as (Problem, PlanResult or
    None when the file has no offset column)."""
    return _memplan.read_buffer_csv(_os.fspath(path))


def write_buffer_csv(problem_or_plan, path):
    """Writes a Problem's buffers as CSV; a PlanResult adds the offsets."""
    _memplan.write_buffer_csv(problem_or_plan, _os.fspath(path))


def write_plan(plan, path):
    """Writes a plan as memplan-plan-v1 JSON, or as the buffer CSV with
    offsets when the name ends in .csv (.gz: gzipped), as the tool does."""
    _memplan.write_plan(plan, _os.fspath(path))
