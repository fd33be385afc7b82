"""The progress shown by plan(progress=True) and plan_symbolic(progress=True):
a tqdm bar when tqdm is installed (a widget in a notebook), else one line on
stderr, rewritten in place on a terminal and written every 5 s elsewhere.
It shows the elapsed time, the best peak so far and its planner, or the
stage of a symbolic plan, and ends saying why the run stopped."""

import sys as _sys
import time as _time

# The line's rate limits, as the command line's (docs/cli.md).
_REDRAW_SECONDS = 0.1
_LINES_SECONDS = 5.0


def stop_reason(result):
    """Why the plan of a PlanResult stopped: "proven optimal", "at the lower
    bound", or "done" (the planner's own end, or its limits)."""
    if result.proven_optimal:
        return "proven optimal"
    if len(result.pool_used) == 1 and result.peak == result.lower_bound:
        return "at the lower bound"
    return "done"


def _tqdm():
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm


class Display:
    """What progress=True shows for one call; `what` names the call. `file`
    (default stderr), `clock` and `bar` (False: no tqdm bar) are for tests."""

    def __init__(self, what, *, file=None, clock=_time.monotonic, bar=True):
        self._file = file if file is not None else _sys.stderr
        self._clock = clock
        self._start = clock()
        self._what = what
        self._text = "no plan yet"
        self._last = None
        tqdm = _tqdm() if bar else None
        self._bar = None
        if tqdm is not None:
            self._bar = tqdm(
                desc=f"memplan {what}",
                bar_format="{desc}: {elapsed} {postfix}",
                file=self._file,
                mininterval=_REDRAW_SECONDS,
                leave=True,
            )
        self._in_place = bool(getattr(self._file, "isatty", lambda: False)())

    def improved(self, peak, planner):
        """For plan(): a plan smaller than any before, found by `planner`."""
        self._show(f"best peak {peak:,} bytes ({planner})")

    def stage(self, line):
        """For plan_symbolic(): the stage the planning reached."""
        self._show(line)

    def close(self, reason, text=None):
        """The final line: `text` (else the last shown) and `reason`."""
        if text is not None:
            self._text = text
        final = f"{self._text}; stopped: {reason}"
        if self._bar is not None:
            self._bar.set_postfix_str(final, refresh=True)
            self._bar.close()
            return
        end = "\r\033[K" if self._in_place else ""
        self._file.write(f"{end}{self._line(final)}\n")
        self._file.flush()

    def _line(self, text):
        elapsed = self._clock() - self._start
        return f"memplan {self._what}: {elapsed:6.1f} s  {text}"

    def _show(self, text):
        self._text = text
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=False)
            self._bar.update(0)  # redraws at most every _REDRAW_SECONDS
            return
        now = self._clock()
        every = _REDRAW_SECONDS if self._in_place else _LINES_SECONDS
        if self._last is not None and now - self._last < every:
            return
        self._last = now
        if self._in_place:
            self._file.write(f"\r\033[K{self._line(text)}")
        else:
            self._file.write(f"{self._line(text)}\n")
        self._file.flush()
