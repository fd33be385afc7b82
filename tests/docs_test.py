#!/usr/bin/env python3
"""Runs every fenced code block of README.md and docs/**/*.md, as doctest does.

Each page's blocks run in order, in a scratch directory of that page where
the repository's top-level folders are visible under their own names
(symlinks), so that `memplan plan bench/data/models/resnet50.json
--out=plan.json` works as written and writes nothing into the repository.

- `sh`, `bash`, `shell`: the block is one `bash -e -o pipefail` script.
  `console`: the lines after `$ ` (with their `\\` continuations) are the
  script; the other lines are output, shown to the reader, not compared.
  `memplan` on PATH is the tool under test (--memplan), `python` and
  `python3` the project's interpreter (--python), `.venv` its environment.
- `python`: one interpreter per page (--python); the page's blocks run in
  it in order and share their globals, so a block may use what an earlier
  one on the page defined.
- `cpp`, `cmake`: the block must be a contiguous excerpt (or the whole) of
  a file that the build compiles and ctest runs: a program under
  examples/ or the install test's consumer project under tests/consumer/.
  Indentation may differ by a common amount; the text must be the file's.
- `c`: compiled with `cc -std=c99 -fsyntax-only`.
- `text`, `json`, `csv`: output or notation, not run.

A fence without a language is an error: every block says what it is. A
block that is not meant to run says so, and why, on the line right above
its fence: `<!-- not run: needs a GPU -->`. The test counts and lists
those. A failure names the page, the line and the block, and shows its
output.

Usage: docs_test.py --memplan=PATH [--python=PATH] [--root=DIR]
                    [--page=README.md] [--list] [--verbose]
Without --python, the python blocks and the shell blocks that call python
are skipped, and counted as such.
"""

import argparse
import dataclasses
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time

SHELL = {"sh", "bash", "shell", "console"}
PYTHON = {"python", "python3", "py"}
EXCERPT = {
    "cpp": ("examples", "tests/consumer"),
    "cmake": ("examples", "tests/consumer"),
}
EXCERPT_SUFFIXES = {
    "cpp": (".cc", ".cpp", ".h"),
    "cmake": ("CMakeLists.txt", ".cmake"),
}
C = {"c"}
NOT_RUN = {"text", "json", "csv", "diff"}
MARKER = re.compile(r"^\s*<!--\s*not run:\s*(.+?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)\s*$")
BLOCK_TIMEOUT_S = 300
OUTPUT_TAIL = 4000


@dataclasses.dataclass
class Block:
    page: str
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    skip_reason: str = ""

    def where(self):
        return f"{self.page}:{self.line} ({self.lang or 'no language'})"


def extract_blocks(page, text):
    """The fenced blocks of a Markdown page, with their not-run markers."""
    blocks, errors = [], []
    lines = text.split("\n")
    i = 0
    last_text = ""  # the last non-blank line before the current one
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            if lines[i].strip():
                last_text = lines[i]
            i += 1
            continue
        indent, fence, lang = match.groups()
        start = i
        body = []
        i += 1
        while i < len(lines):
            close = lines[i].strip()
            if close.startswith(fence[0] * len(fence)) and not close.strip(
                fence[0]
            ):
                break
            body.append(
                lines[i][len(indent) :]
                if lines[i].startswith(indent)
                else lines[i].lstrip()
            )
            i += 1
        else:
            errors.append(f"{page}:{start + 1}: code block never closed")
        marker = MARKER.match(last_text)
        block = Block(
            page,
            start + 1,
            lang.lower(),
            "\n".join(body) + "\n",
            marker.group(1) if marker else "",
        )
        if not block.lang:
            errors.append(
                f"{block.where()}: a code block without a language; "
                "name one (text for output) so readers and this test "
                "know what it is"
            )
        blocks.append(block)
        last_text = ""
        i += 1
    return blocks, errors


def pages(root):
    found = ["README.md"]
    for dirpath, _, files in os.walk(os.path.join(root, "docs")):
        for name in sorted(files):
            if name.endswith(".md"):
                found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(set(found), key=lambda p: (p != "README.md", p))


def console_script(text):
    """The commands of a console block: lines after '$ ' and continuations."""
    commands, continuing = [], False
    for line in text.splitlines():
        if continuing:
            commands.append(line)
        elif line.startswith("$ "):
            commands.append(line[2:])
        else:
            continue
        continuing = line.rstrip().endswith("\\")
    return "\n".join(commands) + "\n"


def calls_python(script):
    for line in script.splitlines():
        code = line.split("#", 1)[0]
        if re.search(r"(^|[\s/;|&(])(python3?|\.venv/bin/\w+)\b", code):
            return True
    return False


def tail(text):
    text = text.rstrip()
    if len(text) > OUTPUT_TAIL:
        text = "...\n" + text[-OUTPUT_TAIL:]
    return textwrap.indent(text, "    | ") if text else "    (no output)"


def show_block(block):
    return textwrap.indent(block.text.rstrip(), "    > ")


class Scratch:
    """A page's working directory and the PATH its commands see."""

    def __init__(self, root, memplan, python):
        self.base = tempfile.mkdtemp(prefix="memplan-docs-")
        self.dir = os.path.join(self.base, "work")
        self.bin = os.path.join(self.base, "bin")
        os.mkdir(self.dir)
        os.mkdir(self.bin)
        for name in sorted(os.listdir(root)):
            if name.startswith("."):
                continue
            os.symlink(os.path.join(root, name), os.path.join(self.dir, name))
        venv = None
        if python:
            venv = os.path.dirname(os.path.dirname(os.path.abspath(python)))
        elif os.path.isdir(os.path.join(root, ".venv")):
            venv = os.path.join(root, ".venv")
        if venv:
            os.symlink(venv, os.path.join(self.dir, ".venv"))
        os.symlink(os.path.abspath(memplan), os.path.join(self.bin, "memplan"))
        if python:
            # A wrapper, not a symlink: a venv's interpreter finds its
            # environment from the path it was started by.
            for name in ("python", "python3"):
                path = os.path.join(self.bin, name)
                with open(path, "w") as f:
                    f.write(
                        f'#!/bin/sh\nexec "{os.path.abspath(python)}" "$@"\n'
                    )
                os.chmod(path, 0o755)
        self.env = dict(os.environ)
        self.env["PATH"] = self.bin + os.pathsep + os.environ.get("PATH", "")
        self.env["PYTHONDONTWRITEBYTECODE"] = "1"
        self.env["PS4"] = "$ "
        self.env.pop("PYTHONPATH", None)

    def close(self):
        shutil.rmtree(self.base, ignore_errors=True)


DRIVER = r"""
import json, os, sys, traceback
control = os.fdopen(int(sys.argv[1]), "w")
namespace = {"__name__": "__main__"}
saved = os.dup(1), os.dup(2)
for request in sys.stdin:
  request = json.loads(request)
  log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
  sys.stdout.flush(); sys.stderr.flush()
  os.dup2(log, 1); os.dup2(log, 2)
  ok, message = True, ""
  try:
    exec(compile(request["code"], request["name"], "exec"), namespace)
  except BaseException:
    ok, message = False, traceback.format_exc()
  sys.stdout.flush(); sys.stderr.flush()
  os.dup2(saved[0], 1); os.dup2(saved[1], 2); os.close(log)
  control.write(json.dumps({"ok": ok, "traceback": message}) + "\n")
  control.flush()
"""


class PythonSession:
    """One interpreter for a page, its blocks run in order in one namespace."""

    def __init__(self, python, scratch):
        self.scratch = scratch
        read_end, write_end = os.pipe()
        self.control = os.fdopen(read_end, "r")
        self.proc = subprocess.Popen(
            [python, "-c", DRIVER, str(write_end)],
            cwd=scratch.dir,
            env=scratch.env,
            stdin=subprocess.PIPE,
            text=True,
            pass_fds=(write_end,),
        )
        os.close(write_end)

    def run(self, block, timeout):
        log = os.path.join(self.scratch.base, "python.log")
        name = f"{block.page}:{block.line}"
        try:
            self.proc.stdin.write(
                json.dumps({"code": block.text, "name": name, "log": log})
                + "\n"
            )
            self.proc.stdin.flush()
        except BrokenPipeError:
            return False, "(the interpreter exited)"
        ready, _, _ = select.select([self.control], [], [], timeout)
        answer = self.control.readline() if ready else ""
        output = open(log).read() if os.path.exists(log) else ""
        if not ready:
            self.close()
            return False, output + f"\n(timed out after {timeout} s)"
        if not answer:
            return False, output + "\n(the interpreter exited)"
        answer = json.loads(answer)
        return answer["ok"], output + answer["traceback"]

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.control.close()


def run_shell(block, scratch, timeout):
    script = (
        console_script(block.text) if block.lang == "console" else block.text
    )
    try:
        # -x with PS4 shows each command before its output, so that a failure
        # shows which command of the block failed.
        proc = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-x", "-c", script],
            cwd=scratch.dir,
            env=scratch.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        return False, out + f"\n(timed out after {timeout} s)"
    return proc.returncode == 0, proc.stdout + (
        f"\n(exit status {proc.returncode})" if proc.returncode else ""
    )


def excerpt_files(root, lang):
    files = []
    for folder in EXCERPT[lang]:
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for name in sorted(names):
                if name.endswith(EXCERPT_SUFFIXES[lang]):
                    files.append(os.path.join(dirpath, name))
    return files


def normalized(lines):
    return textwrap.dedent("\n".join(l.rstrip() for l in lines)).split("\n")


def registered(path, root):
    """Whether the build compiles the program the block quotes."""
    rel = os.path.relpath(path, root)
    if not rel.startswith("examples/"):
        return True, rel  # tests/consumer: the install tests build it
    with open(os.path.join(root, "CMakeLists.txt")) as f:
        if rel in f.read():
            return True, rel
    return False, (
        f"the block quotes {rel}, which CMakeLists.txt does not "
        "build: add it with add_executable and add_test"
    )


def check_excerpt(block, root):
    want = block.text.rstrip("\n").split("\n")
    while want and not want[0].strip():
        want.pop(0)
    if not want:
        return False, "an empty block"
    want = normalized(want)
    candidates = excerpt_files(root, block.lang)
    for path in candidates:
        with open(path) as f:
            have = f.read().split("\n")
        for start, line in enumerate(have):
            if line.strip() != want[0].strip():
                continue
            if normalized(have[start : start + len(want)]) == want:
                return registered(path, root)
    names = ", ".join(os.path.relpath(p, root) for p in candidates)
    return False, (
        "the block is not a contiguous excerpt of any of: "
        + names
        + "\n(copy it from the program, or change the program and "
        "the page together)"
    )


def run_c(block, scratch, timeout):
    source = os.path.join(scratch.base, "block.c")
    with open(source, "w") as f:
        f.write(block.text)
    cc = shutil.which("cc") or shutil.which("gcc")
    proc = subprocess.run(
        [cc, "-std=c99", "-Wall", "-Werror", "-fsyntax-only", source],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
    )
    return proc.returncode == 0, proc.stdout


def run_page(page, blocks, args, counts, failures, skipped):
    scratch = Scratch(args.root, args.memplan, args.python)
    session = None
    try:
        for block in blocks:
            lang = block.lang
            if lang in NOT_RUN or not lang:
                counts["output"] += 1
                continue
            if block.skip_reason:
                skipped.append(f"{block.where()}: {block.skip_reason}")
                continue
            started = time.monotonic()
            if lang in SHELL:
                script = (
                    console_script(block.text)
                    if lang == "console"
                    else block.text
                )
                if not args.python and calls_python(script):
                    skipped.append(
                        f"{block.where()}: calls python; no --python given"
                    )
                    continue
                ok, output = run_shell(block, scratch, args.timeout)
            elif lang in PYTHON:
                if not args.python:
                    skipped.append(f"{block.where()}: no --python given")
                    continue
                if session is None:
                    session = PythonSession(args.python, scratch)
                ok, output = session.run(block, args.timeout)
                if session.proc.poll() is not None:
                    session.close()
                    session = None
            elif lang in EXCERPT:
                ok, output = check_excerpt(block, args.root)
                if ok:
                    output = "excerpt of " + output
            elif lang in C:
                ok, output = run_c(block, scratch, args.timeout)
            else:
                ok, output = False, (
                    f"unknown language {lang!r}: use one of "
                    f"{sorted(SHELL | PYTHON | set(EXCERPT) | C)} "
                    f"to run it, or {sorted(NOT_RUN)} for output"
                )
            seconds = time.monotonic() - started
            counts["run"] += 1
            if args.verbose:
                print(
                    f"  {'ok  ' if ok else 'FAIL'} {block.where()} "
                    f"{seconds:.1f} s",
                    flush=True,
                )
            if not ok:
                failures.append(
                    f"{block.where()}: the block failed\n"
                    f"{show_block(block)}\n  output:\n{tail(output)}"
                )
    finally:
        if session is not None:
            session.close()
        scratch.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--root", default=os.path.dirname(here))
    parser.add_argument("--memplan", required=True, help="the memplan tool")
    parser.add_argument(
        "--python",
        default="",
        help="the project's interpreter, memplan installed",
    )
    parser.add_argument(
        "--page",
        action="append",
        default=[],
        help="only these pages (repeatable)",
    )
    parser.add_argument(
        "--timeout", type=int, default=BLOCK_TIMEOUT_S, help="seconds per block"
    )
    parser.add_argument(
        "--list", action="store_true", help="list the blocks, run nothing"
    )
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    args.root = os.path.abspath(args.root)
    if not os.access(args.memplan, os.X_OK):
        sys.exit(f"--memplan={args.memplan}: not an executable")
    if args.python and not os.access(args.python, os.X_OK):
        sys.exit(f"--python={args.python}: not an executable")

    counts = {"run": 0, "output": 0}
    failures, skipped, errors = [], [], []
    started = time.monotonic()
    for page in args.page or pages(args.root):
        with open(os.path.join(args.root, page)) as f:
            blocks, page_errors = extract_blocks(page, f.read())
        errors += page_errors
        if args.list:
            for b in blocks:
                mark = f"  (not run: {b.skip_reason})" if b.skip_reason else ""
                print(f"{b.where()}{mark}")
            continue
        print(f"{page}: {len(blocks)} blocks", flush=True)
        run_page(page, blocks, args, counts, failures, skipped)
    if args.list:
        return 1 if errors else 0

    print(
        f"\n{counts['run']} blocks run, {len(failures)} failed; "
        f"{counts['output']} output blocks (text, json, csv) not run; "
        f"{len(skipped)} not run, each saying why:"
    )
    for line in skipped:
        print(f"  {line}")
    print(f"{time.monotonic() - started:.0f} s")
    for message in errors + failures:
        print(f"\nFAIL {message}")
    return 1 if errors or failures else 0


if __name__ == "__main__":
    sys.exit(main())
