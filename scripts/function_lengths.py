#!/usr/bin/env python3
"""The longest functions of C++ and Python sources, in lines.

C++ (.cc, .h): a function's length runs from the line of its name to its
closing brace, both included. Lambdas and local classes count as part of the
function that holds them. A brace matcher, not a parser: it strips comments,
string and character literals first, and takes a '{' for a function body
when the code before it ends in a parameter list (possibly followed by
qualifiers or a constructor's initialiser list) whose name is not a control
keyword.

Python (.py): a function's length runs from its `def` line (decorators not
counted) to its last line, both included, as `ast` reports them. Nested
functions count as part of the function that holds them and are not listed
on their own; methods are listed as Class.method.

  scripts/function_lengths.py [--top N] [--max LINES] [--allow FILE]
                              FILE_OR_DIR...

With --max, exits 1 when a function is LINES lines or longer, unless the
allowlist FILE names it: one "path name" per line (path relative to the
repository root, name as listed, e.g. "src/a.cc Foo::Bar"; '#' starts a
comment). The allowed functions are reported, and so are entries that no
longer match a long function, so that the list only shrinks.
"""

import argparse
import ast
import os
import re
import sys

CONTROL = {
    "if",
    "for",
    "while",
    "switch",
    "catch",
    "return",
    "sizeof",
    "alignof",
    "decltype",
    "noexcept",
    "static_assert",
    "requires",
}
QUALIFIERS = re.compile(
    r"(\s*(const|override|final|noexcept(\([^()]*\))?|mutable|volatile|&|&&"
    r"|->\s*[\w:<>,*&\s]+))*\s*$"
)


def strip(text):
    """Comments and literals become blanks; newlines are kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            # A digit separator (1'000) is not a character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum():
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def function_name(before):
    """The name of the function whose body opens after `before`, or None."""
    code = before.rstrip()
    # A constructor's initialiser list: "Name(args) : a_(x), b_{y}".
    m = re.search(r"\)\s*:\s*[\w:]+\s*[({][\s\S]*$", code)
    if m and not re.search(r"[;{}]", code[m.start() :]):
        code = code[: m.start() + 1]
    q = QUALIFIERS.search(code)
    code = code[: q.start()] if q else code
    if not code.endswith(")"):
        return None
    depth, i = 0, len(code) - 1
    while i >= 0:
        if code[i] == ")":
            depth += 1
        elif code[i] == "(":
            depth -= 1
            if depth == 0:
                break
        i -= 1
    m = re.search(r"(~?[\w:]+|operator\s*\S+)\s*$", code[:i])
    if not m or m.group(1).split("::")[-1] in CONTROL:
        return None
    if code[: m.start()].rstrip().endswith("]"):  # a lambda
        return None
    return m.group(1), m.start()


def functions(path):
    text = strip(open(path, encoding="utf-8").read())
    results = []
    stack = []  # per open brace: None, or (name, first line) of a function
    last = 0  # where the current statement began
    in_function = 0
    for i, c in enumerate(text):
        if c == "{":
            entry = None
            if in_function == 0:
                found = function_name(text[last:i])
                if found:
                    name, offset = found
                    entry = (name, text.count("\n", 0, last + offset) + 1)
            if entry:
                in_function += 1
            elif in_function:
                in_function += 1
            stack.append(entry if entry else ("", 0) if in_function else None)
            last = i + 1
        elif c == "}":
            entry = stack.pop() if stack else None
            if in_function:
                in_function -= 1
                if entry and entry[0]:
                    end = text.count("\n", 0, i) + 1
                    results.append(
                        (end - entry[1] + 1, path, entry[1], entry[0])
                    )
            last = i + 1
        elif c == ";":
            last = i + 1
    return results


def python_functions(path):
    """(length, path, line, name) of each outermost def of a Python file."""
    tree = ast.parse(open(path, encoding="utf-8").read(), filename=path)
    results = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                results.append(
                    (
                        child.end_lineno - child.lineno + 1,
                        path,
                        child.lineno,
                        prefix + child.name,
                    )
                )
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            elif not isinstance(child, ast.Lambda):
                visit(child, prefix)

    visit(tree, "")
    return results


SOURCE_SUFFIXES = (".cc", ".h", ".py")
SKIPPED_DIRS = {".venv", "data", "__pycache__", "build"}


def source_files(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                dirs[:] = sorted(
                    d
                    for d in dirs
                    if d not in SKIPPED_DIRS
                    and not d.startswith((".", "build"))
                )
                files += [
                    os.path.join(root, f)
                    for f in sorted(names)
                    if f.endswith(SOURCE_SUFFIXES)
                ]
        else:
            files.append(p)
    return files


def read_allowlist(path):
    """The (path, name) pairs of an allowlist file."""
    allowed = set()
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if line:
            file, name = line.split(None, 1)
            allowed.add((os.path.normpath(file), name.strip()))
    return allowed


def relative(path, root):
    return os.path.normpath(os.path.relpath(os.path.abspath(path), root))


def gate(found, limit, allowed, root, scanned):
    """1 when a function of `limit` lines or more is not allowed."""
    long_ones = [f for f in found if f[0] >= limit]
    held, over = [], []
    for f in long_ones:
        key = (relative(f[1], root), f[3])
        (held if key in allowed else over).append(f)
    if held:
        print(f"allowed for now: {len(held)}", file=sys.stderr)
        for length, path, line, name in held:
            print(f"  {length:5d}  {path}:{line}  {name}", file=sys.stderr)
    matched = {(relative(f[1], root), f[3]) for f in held}
    for file, name in sorted(allowed - matched):
        if file not in scanned:
            continue
        print(
            f"allowlist entry no longer needed: {file} {name}", file=sys.stderr
        )
    for length, path, line, name in over:
        print(
            f"{path}:{line}: {name} is {length} lines (limit: under "
            f"{limit}; split it)",
            file=sys.stderr,
        )
    return 1 if over else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--max", type=int, default=0)
    parser.add_argument("--allow", help="allowlist file (see above)")
    parser.add_argument(
        "--root",
        default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
        help="the directory allowlist paths are relative to",
    )
    args = parser.parse_args()
    found = []
    files = sorted(source_files(args.paths))
    for path in files:
        found += (
            python_functions(path) if path.endswith(".py") else functions(path)
        )
    found.sort(key=lambda f: (-f[0], f[1], f[2]))
    for length, path, line, name in found[: args.top]:
        print(f"{length:5d}  {path}:{line}  {name}")
    if not args.max:
        return 0
    allowed = read_allowlist(args.allow) if args.allow else set()
    root = os.path.abspath(args.root)
    scanned = {relative(path, root) for path in files}
    return gate(found, args.max, allowed, root, scanned)


if __name__ == "__main__":
    sys.exit(main())
