#!/usr/bin/env python3
"""Two pools (256 KiB fast + DRAM) on the bundled models and training graphs:
the bytes each planner keeps in the fast pool, side by side.

For every input: the heuristics (once each: their plans do not depend on the
clock), the default planner (best), exact and cpsat, each without a time
limit (the default counted work), CPU time the median of RUNS runs. Prints a
markdown table: the best heuristic's fast-pool bytes, best's, exact's and
cpsat's (proven or not, CPU seconds), and whether exact and cpsat keep at
least the best heuristic's bytes in the fast pool.

Usage: python3 scripts/pools_report.py TOOL [RUNS] [INPUT...]
  TOOL: a built memplan binary (with cpsat for its column).
"""

import glob
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

POOLS = ["--pool=fast:256KiB:64", "--pool=dram:0:64"]
HEURISTICS = [
    "greedy_by_size",
    "first_fit",
    "position_greedy",
    "caffe2_greedy",
    "caffe2_dp",
    "hill_climb",
]
SEARCHES = ["best", "exact", "cpsat"]


def plan(tool, path, planner, out):
    """Runs `memplan plan`; returns (fast bytes, proven, cpu seconds) or
    (None, error, cpu seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run(
        [tool, "plan", path, "--planner=" + planner, "--out=" + out] + POOLS,
        capture_output=True,
        text=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (
        after.ru_stime - before.ru_stime
    )
    if run.returncode != 0:
        return None, run.stderr.strip().splitlines()[-1:], cpu
    with open(out) as f:
        p = json.load(f)
    fast = sum(b["size"] for b in p["buffers"] if b["pool"] == "fast")
    return fast, bool(p["proven_optimal"]), cpu


def main():
    tool = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    inputs = sys.argv[3:] or sorted(
        glob.glob("bench/data/models/*.json")
    ) + sorted(glob.glob("bench/data/training/*.json"))
    print(
        "| input | best heuristic | fast bytes | best (default) | exact | "
        "exact s | cpsat | cpsat s | exact, cpsat >= heuristic |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "plan.json")
        for path in inputs:
            name = os.path.basename(path)
            best_h, best_name = -1, "-"
            for h in HEURISTICS:
                fast, _, _ = plan(tool, path, h, out)
                if fast is not None and fast > best_h:
                    best_h, best_name = fast, h
            cells = {}
            for s in SEARCHES:
                results = [plan(tool, path, s, out) for _ in range(runs)]
                fast, proven, _ = results[0]
                cpu = statistics.median(r[2] for r in results)
                if fast is None:
                    cells[s] = ("failed", "", cpu, None)
                else:
                    # best's proven_optimal is about its peak, not the spill.
                    proven = proven and s != "best"
                    cells[s] = (
                        str(fast) + (" proven" if proven else ""),
                        "",
                        cpu,
                        fast,
                    )
            ok = [
                cells[s][3] is not None and cells[s][3] >= best_h
                for s in ("exact", "cpsat")
            ]
            print(
                "| %s | %s | %d | %s | %s | %.2f | %s | %.2f | %s |"
                % (
                    name,
                    best_name,
                    best_h,
                    cells["best"][0],
                    cells["exact"][0],
                    cells["exact"][2],
                    cells["cpsat"][0],
                    cells["cpsat"][2],
                    ", ".join("yes" if o else "NO" for o in ok),
                )
            )
            sys.stdout.flush()


if __name__ == "__main__":
    main()
