#!/usr/bin/env python3
"""Writes the buffer CSVs of the scale limits (header id,lower,upper,size):

  overlapping N   N buffers all alive at once over [0, 10), sizes 1..977
                  (the hostile input of tests/hostile_inputs_test.py)
  intervals N     N random intervals like MiniMalloc's: start uniform in
                  [0, N), lifetime log-uniform in [1, 100], size log-uniform
                  in [1 KiB, 1 MiB] rounded up to 64 bytes (seeded)

Usage: scale_inputs.py KIND N OUT.csv [SEED]
Then, e.g.: memplan plan OUT.csv --planner=exact --time-limit=1 --out=p.csv
"""

import math
import random
import sys


def overlapping(n, _rng):
    for i in range(n):
        yield i, 0, 10, i % 977 + 1


def intervals(n, rng):
    for i in range(n):
        start = rng.randrange(n)
        length = max(1, int(math.exp(rng.uniform(0, math.log(100)))))
        size = int(math.exp(rng.uniform(math.log(1024), math.log(1 << 20))))
        yield i, start, start + length, (size + 63) // 64 * 64


def main():
    if len(sys.argv) not in (4, 5) or sys.argv[1] not in ("overlapping",
                                                           "intervals"):
        sys.exit(__doc__)
    kind, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) == 5 else 1)
    rows = {"overlapping": overlapping, "intervals": intervals}[kind](n, rng)
    with open(out, "w") as f:
        f.write("id,lower,upper,size\n")
        f.writelines(f"b{i},{lo},{hi},{size}\n" for i, lo, hi, size in rows)


if __name__ == "__main__":
    main()
