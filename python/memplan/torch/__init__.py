"""memplan.torch: a PyTorch 2 model as a memplan graph, and its plan proven
by running the model inside one arena laid out by the plan.

    import torch, torchvision, memplan, memplan.torch as mt
    model = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 64, 64)
    traced = mt.trace(model, (x,))
    plan = memplan.plan(traced.graph, "greedy_by_size", alignment=64)
    outputs = mt.run_in_arena(traced, plan, (x,))  # raises if a byte is lost

trace() exports the model with torch.export.export and decomposes it to the
core ATen opset (ExportedProgram.run_decompositions); with training=True it
exports one training step, forward, loss and backward, as one joint graph
(torch.export.experimental._export_forward_backward) whose outputs are the
parameters' gradients. The graph signature says which placeholders are
parameters and buffers (constants) and which are the user's inputs. The
graph is then run once on the example inputs, in order, and every tensor is
sized by its storage; a result sharing an earlier tensor's storage (a view)
becomes an alias hint, sized as the bytes of its base that it spans (from
the base's first byte to the view's last).

Core ATen is functional: a buffer update (batch norm's running statistics
and num_batches_tracked in a training step) or a write to an input is a
"mutation" output of the signature. trace() turns each into an
aten.copy_(buffer, new value) step placed right after the last op that needs
the old value, so the graph writes the buffer in place; the arguments an
op's schema marks as written (`alias_info.is_write`: copy_'s `self`) become
the op's `writes`, which keep every op ordering from moving a reader of
those bytes across the write. Ops that draw from the random generator
(dropout; their schema's tag `nondeterministic_seeded`) and those torch.fx
keeps for their side effects are pinned (Op.pinned): every op ordering
keeps them in their traced order, so a reordered run draws the same
numbers. Results of one op that share a new storage
(aten._transform_bias_rescale_qkv's q, k and v) become one tensor for the
storage, made by the op, and views of it, made by a step of type VIEWS_OP
("memplan.views") right after the op.

Sizes are those of the example inputs. A dimension exported as dynamic
(`dynamic_shapes=`) is bound to its example value, with a warning and a
DynamicDim in Traced.dynamic_dims: the plan holds for that size only; unless
trace(..., symbolic=True): then the graph is symbolic (docs/symbolic.md).
Each dynamic dimension becomes a dim of the graph named after its
torch.export.Dim, with the range torch.export allows
(ExportedProgram.range_constraints), and each size the polynomial that the
exported program's symbolic shapes give (storage bytes, and for a view the
bytes of its base it spans, or the base's size when that span is a
difference such as `256*seq - 64`); a size that is not a polynomial with
non-negative integer coefficients (floor division, max, a negative term) is
a TraceError naming the op and the expression. memplan.plan_symbolic plans
it once for the whole range, and run_in_arena(traced, plan.at(seq=N),
inputs) runs it at size N: Traced.bind(inputs) records the program again at
the inputs' sizes and checks that every tensor has the size its expression
gives there. An op
whose output size or value depends on tensor data (aten.nonzero, .item())
and data-dependent control flow (an `if` on a tensor, torch.cond) raise
TraceError naming the op.

run_in_arena() executes the traced graph in the plan's op order
(plan.op_order) with every planned tensor's storage at its planned offset of
one uint8 arena: an op reads its inputs from the arena, a view or in-place op
works on the arena itself, and every new result is copied into the arena at
its planned place. Each live tensor's bytes must stay exactly as its own
writers left them: all of them are compared before the first op and after
the last, and after each op those the op was given and those its results
were copied onto (an op can change no other byte); otherwise it raises
ArenaError naming the overwritten tensor, the op that overwrote it and both
byte ranges.

rematerialize() fits a training step into a budget in bytes by running
chosen ops again (memplan.rematerialize on its graph); run_in_arena(traced,
result.plan, inputs, graph=result.graph) runs the rewritten op list, each
recomputed op the traced node run again into its own planned place
(docs/python.md). Its start is best trace(..., training=True,
functional=True): the step as the joint graph torch.compile's AOTAutograd
gives its partitioner (functionalized: no in-place ReLU, which could never
run again; Inductor's decompositions), captured by compiling the step once
with a backend that generates no code (memplan.torch.joint).

PyTorch (2.x, with torch.export) is imported when these functions are first
called, not by `import memplan`.

The jobs live in modules of this package: export (trace()), joint
(trace(..., functional=True)), record (the graph recording), dims (symbolic dims), records (what a trace holds),
arena (run_in_arena()), remat (rematerialize() and the rewritten op list)
and reporting (report()); the FX rules they share with
memplan.executorch (written arguments, aliases, pinned ops) are
memplan._fx_rules.
"""

# The tests compare outputs leaf by leaf with it.
from memplan.torch._common import flatten as _flatten  # noqa: F401
from memplan.torch.arena import run_in_arena
from memplan.torch.errors import ArenaError, TraceError
from memplan.torch.export import trace
from memplan.torch.records import (
    VIEWS_OP,
    DynamicDim,
    OpRecord,
    TensorRecord,
    Traced,
)
from memplan.torch.remat import rematerialize
from memplan.torch.reporting import format_report, pytorch_peak, report

__all__ = [
    "VIEWS_OP",
    "ArenaError",
    "DynamicDim",
    "OpRecord",
    "TensorRecord",
    "TraceError",
    "Traced",
    "format_report",
    "pytorch_peak",
    "rematerialize",
    "report",
    "run_in_arena",
    "trace",
]
