"""The errors of memplan.torch."""

import memplan as _memplan


class ArenaError(_memplan.Error):
    """A planned tensor's bytes changed while it was still needed."""


class TraceError(_memplan.Error):
    """The model cannot become one graph of known sizes: an op whose output
    depends on tensor data, or data-dependent control flow."""
