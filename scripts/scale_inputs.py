#!/usr/bin/env python3
"""Writes the buffer CSVs of the scale limits (header id,lower,upper,size):

  overlapping N   N buffers all alive at once over [0, 10), sizes 1..977
                  (the hostile input of tests/hostile_inputs_test.py)
  distinct N      N buffers all alive over [0, 10), sizes 1..N (no two
                  interchangeable: exact's candidates at its first cell)
  staggered N     N buffers all alive at step N: start uniform in [0, N),
                  end in [N, 2N), size uniform in [1, 65536) (seed 2)
  uniform N       N random intervals, both ends uniform in [0, N), size
                  uniform in [1, 65536) (seed 1)
  intervals N     N random intervals like MiniMalloc's: start uniform in
                  [0, N), lifetime log-uniform in [1, 100], size log-uniform
                  in [1 KiB, 1 MiB] rounded up to 64 bytes (seed 1)

Usage: scale_inputs.py KIND N OUT.csv [SEED]
Then, e.g.: memplan plan OUT.csv --planner=exact --time-limit=1 --out=p.csv
"""

import math
import random
import sys


def overlapping(n, _rng):
    for i in range(n):
        yield i, 0, 10, i % 977 + 1


def distinct(n, _rng):
    for i in range(n):
        yield i, 0, 10, i + 1


def staggered(n, rng):
    for i in range(n):
        yield i, rng.randrange(n), n + rng.randrange(n), rng.randrange(
            1, 1 << 16
        )


def uniform(n, rng):
    for i in range(n):
        a, b = sorted((rng.randrange(n), rng.randrange(n)))
        yield i, a, b + 1, rng.randrange(1, 1 << 16)


def intervals(n, rng):
    for i in range(n):
        start = rng.randrange(n)
        length = max(1, int(math.exp(rng.uniform(0, math.log(100)))))
        size = int(math.exp(rng.uniform(math.log(1024), math.log(1 << 20))))
        yield i, start, start + length, (size + 63) // 64 * 64


def main():
    kinds = {
        "overlapping": overlapping,
        "distinct": distinct,
        "staggered": staggered,
        "uniform": uniform,
        "intervals": intervals,
    }
    if len(sys.argv) not in (4, 5) or sys.argv[1] not in kinds:
        sys.exit(__doc__)
    kind, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    seed = 2 if kind == "staggered" else 1
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) == 5 else seed)
    rows = kinds[kind](n, rng)
    with open(out, "w") as f:
        f.write("id,lower,upper,size\n")
        f.writelines(f"b{i},{lo},{hi},{size}\n" for i, lo, hi, size in rows)


if __name__ == "__main__":
    main()
