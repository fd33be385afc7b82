#!/usr/bin/env python3
"""Hostile inputs through the `memplan` tool: each must end in a plan or an
error naming the input (exit status 1 or 2, the file's name on stderr), never
in a signal, an abort or a timeout, and within a memory limit.

Usage: hostile_inputs_test.py MEMPLAN [CASE...]
       hostile_inputs_test.py --chain N FILE   (writes the N-op chain graph,
                                                e.g. to time `memplan stats`)

The inputs are made here, at test time, in a temporary directory: compressed
bombs, whitespace floods, huge steps and names, deep nesting, a 10^6-op
chain, 10^5 buffers that all overlap, a symlink to /dev/zero, a directory.

Memory: each case runs under `ulimit -v` (RLIMIT_AS) of 2 GiB. Not under
AddressSanitizer: its allocator reserves terabytes of address space at start,
and it reports running out of memory as an error of its own rather than
throwing std::bad_alloc, so there the limit is skipped (the cases still run,
with their time limit), and the bombs and floods are 4 times smaller.

The peak resident memory of each case is printed (the child's own, from
wait4); `stats` and `plan` of the 10^6-op chain (the default planner, the
plan JSON to stdout) must each stay within 1 GB. Memory, unlike time, does
not vary with the machine's load, so the bound is checked on the whole
chain, whose two runs take about 12 s of CPU. Not under AddressSanitizer,
whose shadow memory and quarantine are not the tool's.
"""

import gzip
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import zlib

MEMORY_LIMIT = 2 << 30
TIME_LIMIT = 120  # seconds per case: "ends", on a loaded machine under ASan
MIB = 1 << 20
CHAIN_RSS_LIMIT = 10**9  # bytes: the 10^6-op chain's stats and plan


def write_gzip_of(path, chunk, count, head=b"", tail=b""):
    """`path`: gzip of head + chunk * count + tail, made a chunk at a time."""
    z = zlib.compressobj(1, zlib.DEFLATED, 31)
    with open(path, "wb") as f:
        f.write(z.compress(head))
        for _ in range(count):
            f.write(z.compress(chunk))
        f.write(z.compress(tail))
        f.write(z.flush())


def chain_graph(n):
    """A graph of n ops, each reading the previous one's output."""
    parts = [
        '{"format": "memplan-graph-v1", "name": "chain", "tensors": [',
        '{"name": "t0", "size": 64, "kind": "input"}',
    ]
    for i in range(1, n + 1):
        kind = "output" if i == n else "activation"
        parts.append(f',{{"name": "t{i}", "size": 64, "kind": "{kind}"}}')
    parts.append('], "ops": [')
    parts.append(
        ",".join(
            f'{{"name": "op{i}", "type": "Relu", "inputs": ["t{i - 1}"], '
            f'"outputs": ["t{i}"]}}'
            for i in range(1, n + 1)
        )
    )
    parts.append("]}\n")
    return "".join(parts)


SMALL_GRAPH = chain_graph(3)


def make_cases(d, scale):
    """(name, arguments, input path, substring stderr must hold or None).
    The bombs and floods are `scale` times smaller (under ASan, to keep the
    suite within minutes)."""

    def path(name):
        return os.path.join(d, name)

    return (
        bomb_cases(path, scale)
        + huge_cases(path, scale)
        + not_a_graph_cases(path, scale)
    )


def bomb_cases(path, scale):
    """Compressed bombs and whitespace floods."""
    cases = []
    # Compressed bombs: 1 MB that decompresses to 1 GiB (within the default
    # limit, so read and refused by the parser), and one above a lower limit.
    p = path("zeros.json.gz")
    write_gzip_of(p, bytes(MIB), 1024 // scale)
    cases.append(("gzip_bomb_json", ["stats", p], p, "byte 0 is 0x00"))
    p = path("zeros.csv.gz")
    write_gzip_of(p, bytes(MIB), 256)
    cases.append(("gzip_bomb_csv", ["stats", p], p, "byte 0 is 0x00"))
    p = path("over_limit.json.gz")
    write_gzip_of(p, b" " * MIB, 256, tail=SMALL_GRAPH.encode())
    cases.append(
        (
            "gzip_over_limit",
            ["stats", p, "--max-input-size=64MiB"],
            p,
            "decompresses to more than 67108864 bytes",
        )
    )
    # Whitespace floods before a valid graph: compressed (1 GiB) and plain.
    p = path("flood.json.gz")
    write_gzip_of(p, b" " * MIB, 1024 // scale, tail=SMALL_GRAPH.encode())
    cases.append(("whitespace_flood_gz", ["stats", p], p, None))
    p = path("flood.json")
    with open(p, "wb") as f:
        for _ in range(256 // scale):
            f.write(b"\n" * MIB)
        f.write(SMALL_GRAPH.encode())
    cases.append(
        (
            "file_over_limit",
            ["stats", p, "--max-input-size=1MiB"],
            p,
            "more than 1048576 bytes",
        )
    )
    cases.append(("whitespace_flood", ["stats", p], p, None))
    return cases


def huge_cases(path, scale):
    """Huge steps, sizes and names, deep nesting, 10^6 ops, 10^5 buffers."""
    cases = []
    # Huge steps and sizes.
    p = path("huge_steps.csv")
    with open(p, "w") as f:
        f.write("id,lower,upper,size\n")
        f.write("a,0,9223372036854775807,1\n")
        f.write(
            "b,9223372036854775806,9223372036854775807," "9223372036854775807\n"
        )
        f.write("c,4611686018427387904,9223372036854775807,1024\n")
    cases.append(("huge_steps", ["plan", p], p, None))
    # Huge names: 200 MB of one tensor name, and of one CSV id.
    p = path("huge_name.json")
    with open(p, "w") as f:
        f.write('{"format": "memplan-graph-v1", "tensors": [{"name": "')
        for _ in range(200):
            f.write("n" * MIB)
        f.write('", "size": 1}], "ops": []}\n')
    cases.append(("huge_name_json", ["stats", p], p, "longer than the limit"))
    p = path("huge_name.csv.gz")
    write_gzip_of(
        p, b"n" * MIB, 200, head=b"id,lower,upper,size\n", tail=b",0,1,1\n"
    )
    cases.append(("huge_name_csv", ["stats", p], p, "longer than the limit"))
    # 10^6 nested arrays, and objects.
    p = path("deep_arrays.json")
    with open(p, "w") as f:
        f.write("[" * 10**6 + "]" * 10**6)
    cases.append(("deep_arrays", ["stats", p], p, "nested deeper"))
    p = path("deep_objects.json")
    with open(p, "w") as f:
        f.write('{"a":' * 10**6 + "1" + "}" * 10**6)
    cases.append(("deep_objects", ["stats", p], p, "nested deeper"))
    # A chain of 10^6 ops (about 120 MB): read and built, linearly.
    p = path("chain.json")
    with open(p, "w") as f:
        f.write(chain_graph(10**6))
    cases.append(("chain_1e6_ops", ["stats", p], p, None, CHAIN_RSS_LIMIT))
    if scale == 1:  # under ASan, whose memory is not the tool's: stats only
        cases.append(
            (
                "chain_1e6_ops_plan",
                ["plan", p],
                p,
                "peak 128 bytes, 0.00% of naive total 64000064",
                CHAIN_RSS_LIMIT,
            )
        )
    # 10^5 buffers alive at once, with a fast planner.
    p = path("overlapping.csv")
    with open(p, "w") as f:
        f.write("id,lower,upper,size\n")
        f.writelines(f"b{i},0,10,{i % 977 + 1}\n" for i in range(10**5))
    cases.append(
        (
            "overlapping_1e5",
            [
                "plan",
                p,
                "--planner=greedy_by_size",
                "--out=" + path("overlapping.plan.csv"),
            ],
            p,
            None,
        )
    )
    return cases


def not_a_graph_cases(path, scale):
    """Files that are not files, text that is not JSON, a plan that is a
    bomb."""
    cases = []
    # Files that are not files.
    p = path("zero.json")
    os.symlink("/dev/zero", p)
    cases.append(("symlink_dev_zero", ["stats", p], p, "not a file"))
    p = path("zero.json.gz")
    os.symlink("/dev/zero", p)
    cases.append(("symlink_dev_zero_gz", ["stats", p], p, "not a file"))
    p = path("dir.json")
    os.mkdir(p)
    cases.append(("directory", ["stats", p], p, "is a directory"))
    p = path("nothing.json")
    cases.append(("missing", ["stats", p], p, "cannot open"))
    # Not JSON at all: one message, with the position once.
    p = path("text.json")
    with open(p, "w") as f:
        f.write("hello\n")
    cases.append(("not_json", ["stats", p], p, "malformed JSON at line 1"))
    # A plan file that is a bomb, given to verify.
    p = path("small.json")
    with open(p, "w") as f:
        f.write(SMALL_GRAPH)
    plan = path("bomb.plan.json.gz")
    write_gzip_of(plan, bytes(MIB), 512 // scale)
    cases.append(("plan_bomb", ["verify", p, plan], plan, "byte 0 is 0x00"))
    return cases


def asan_build(binary):
    with open(binary, "rb") as f:
        return b"__asan_init" in f.read()


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_measured(command, asan):
    """Runs `command` for at most TIME_LIMIT seconds: its exit status (None
    when it was stopped at the limit), its stdout's first 64 bytes, its
    stderr and its own peak resident memory in bytes."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(
            command,
            stdout=out,
            stderr=err,
            preexec_fn=None if asan else limit_memory,
        )
        stopped = []
        timer = threading.Timer(
            TIME_LIMIT, lambda: stopped.append(child.kill())
        )
        timer.start()
        try:
            _, status, usage = os.wait4(child.pid, 0)
        finally:
            timer.cancel()
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (
            None if stopped else child.returncode,
            out.read(64),
            err.read().decode("utf-8", "replace"),
            usage.ru_maxrss * 1024,  # Linux: KiB
        )


def run_case(binary, case, asan):
    name, args, input_path, expect = case[:4]
    rss_limit = case[4] if len(case) > 4 else None
    start = time.monotonic()
    returncode, stdout, stderr, rss = run_measured([binary] + args, asan)
    if returncode is None:
        return f"{name}: did not end within {TIME_LIMIT} s"
    seconds = time.monotonic() - start
    print(
        f"{name}: exit {returncode} in {seconds:.1f} s, peak RSS "
        f"{rss / 1e6:.0f} MB: {stderr.strip()[:300]}",
        flush=True,
    )
    if returncode < 0:
        return f"{name}: killed by signal {-returncode}"
    if returncode not in (0, 1, 2):
        return f"{name}: exit status {returncode}"
    if returncode != 0 and input_path not in stderr:
        return f"{name}: the error does not name {input_path}"
    if len(stderr) > 4096:
        return f"{name}: {len(stderr)} bytes on stderr"
    if expect is not None and expect not in stderr:
        return f'{name}: stderr lacks "{expect}"'
    to_stdout = not any(a.startswith("--out=") for a in args)
    if args[0] == "plan" and returncode == 0 and to_stdout:
        if not stdout.startswith(b'{\n"format":"memplan-plan-v1"'):
            return f"{name}: stdout is not a plan: {stdout!r}"
    if rss_limit is not None and not asan and rss > rss_limit:
        return (
            f"{name}: peak RSS {rss / 1e6:.0f} MB, over the "
            f"{rss_limit / 1e6:.0f} MB limit"
        )
    return None


def main():
    if sys.argv[1] == "--chain":
        with open(sys.argv[3], "w") as f:
            f.write(chain_graph(int(sys.argv[2])))
        return 0
    binary = os.path.abspath(sys.argv[1])
    only = set(sys.argv[2:])
    asan = asan_build(binary)
    if asan:
        print(
            "AddressSanitizer build: no ulimit -v (ASan reserves address "
            "space and reports running out itself); time limits only"
        )
    failures = []
    with tempfile.TemporaryDirectory(prefix="memplan_hostile_") as d:
        cases = make_cases(d, 4 if asan else 1)
        last_use = {case[2]: i for i, case in enumerate(cases)}
        for i, case in enumerate(cases):
            name, input_path = case[0], case[2]
            if not only or name in only:
                failure = run_case(binary, case, asan)
                if failure is not None:
                    failures.append(failure)
            # Free the disk of the big inputs as soon as they are done.
            if (
                last_use[input_path] == i
                and os.path.isfile(input_path)
                and not os.path.islink(input_path)
                and os.path.getsize(input_path) > 64 * MIB
            ):
                os.remove(input_path)
    for failure in failures:
        print("FAILED", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
