#!/usr/bin/env python3
"""The longest functions of C++ sources, in lines.

A function's length runs from the line of its name to its closing brace,
both included. Lambdas and local classes count as part of the function that
holds them. A brace matcher, not a parser: it strips comments, string and
character literals first, and takes a '{' for a function body when the code
before it ends in a parameter list (possibly followed by qualifiers or a
constructor's initialiser list) whose name is not a control keyword.

  scripts/function_lengths.py [--top N] [--max LINES] FILE_OR_DIR...

With --max, exits 1 when a function is LINES lines or longer.
"""

import argparse
import os
import re
import sys

CONTROL = {"if", "for", "while", "switch", "catch", "return", "sizeof",
           "alignof", "decltype", "noexcept", "static_assert", "requires"}
QUALIFIERS = re.compile(
    r"(\s*(const|override|final|noexcept(\([^()]*\))?|mutable|volatile|&|&&"
    r"|->\s*[\w:<>,*&\s]+))*\s*$")


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
        elif c == 'R' and text.startswith('R"', i):
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
    if m and not re.search(r"[;{}]", code[m.start():]):
        code = code[:m.start() + 1]
    q = QUALIFIERS.search(code)
    code = code[:q.start()] if q else code
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
    if code[:m.start()].rstrip().endswith("]"):  # a lambda
        return None
    return m.group(1), m.start()


def functions(path):
    text = strip(open(path, encoding="utf-8").read())
    results = []
    stack = []  # per open brace: None, or (name, first line) of a function
    last = 0    # where the current statement began
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
                    results.append((end - entry[1] + 1, path, entry[1],
                                    entry[0]))
            last = i + 1
        elif c == ";":
            last = i + 1
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--max", type=int, default=0)
    args = parser.parse_args()
    files = []
    for p in args.paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files += [os.path.join(root, f) for f in sorted(names)
                          if f.endswith((".cc", ".h"))]
        else:
            files.append(p)
    found = sorted((f for path in sorted(files) for f in functions(path)),
                   key=lambda f: (-f[0], f[1], f[2]))
    for length, path, line, name in found[:args.top]:
        print(f"{length:5d}  {path}:{line}  {name}")
    if args.max and found and found[0][0] >= args.max:
        print(f"longest function: {found[0][0]} lines (limit: under "
              f"{args.max})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
