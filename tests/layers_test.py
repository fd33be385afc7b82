#!/usr/bin/env python3
"""Fails when a lower layer of the library uses a higher one.

Each folder of src/ (and planners/) is a layer and may use the layers listed
for it in ALLOWED (src/README.md explains them). The test sees:

  * includes of internal headers (src/<layer>/..., planners/...);
  * includes of public headers: memplan/X.h belongs to the one layer that
    defines what it declares, found from the definitions in src/ and
    planners/ (a header whose declarations two layers define is an error);
    header-only public headers are given a layer in HEADER_ONLY;
  * calls: a source that calls (or declares) a function defined in exactly
    one layer, that layer not one it may use, fails.

Umbrella headers (UMBRELLAS) only gather others: the library's own code does
not include them. Run from anywhere: python3 tests/layers_test.py (it first
checks itself on a small fixture tree).
"""
import pathlib
import re
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent

# layer -> the layers it may use (besides itself), bottom to top.
ALLOWED = {
    "base": set(),
    "dims": {"base"},
    "model": {"base", "dims"},
    "effort": {"base", "dims", "model"},
    "order": {"base", "dims", "model", "effort"},
    "symbolic": {"base", "dims", "model"},
    "placement": {"base", "dims", "model", "effort"},
    "formats": {"base", "dims", "model", "symbolic"},
    "workloads": {"base", "dims", "model", "symbolic"},
    "compose": {"base", "dims", "model", "effort", "placement", "symbolic"},
    "planners": {
        "base",
        "dims",
        "model",
        "effort",
        "placement",
        "order",
        "symbolic",
        "compose",
    },
    "planning": {
        "base",
        "dims",
        "model",
        "effort",
        "placement",
        "order",
        "symbolic",
        "compose",
        "planners",
        "formats",
        "load",
    },
    "remat": {"base", "dims", "model", "effort", "planning"},
    "load": {"base", "dims", "model", "effort", "order", "symbolic", "formats"},
    "report": {"base", "dims", "model", "formats", "compose"},
    "onnx": {"base", "dims", "model", "formats", "symbolic", "load"},
    "tflite": {"base", "dims", "model", "formats", "load"},
}

# Public headers that declare no function defined out of line: their layer.
HEADER_ONLY = {
    "memplan/types.h": "model",
    "memplan/placement.h": "placement",
}

# Public headers that only include others, for users; never included by
# the library itself.
UMBRELLAS = {"memplan/io.h"}

# A public header that still declares functions of a second layer, until
# they move to a header of their own: header -> that layer.
SPLIT_PENDING = {"memplan/symbolic.h": "planners"}

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', re.M)
NAME = re.compile(
    r"((?:\w+\s*::\s*)*(?:operator\s*(?:\(\)|[^\s\w(]+)|~?\w+))\s*\("
)
CALL = re.compile(r"(?<![\w.>:])(?:\w+::)*(\w+)\s*\(")
KEYWORDS = {
    "if",
    "for",
    "while",
    "switch",
    "return",
    "sizeof",
    "alignof",
    "decltype",
    "static_assert",
    "catch",
    "defined",
    "noexcept",
    "alignas",
    "typeid",
    "requires",
}


def strip(text):
    """The text without comments, strings and preprocessor lines; newlines
    kept, so that offsets map to the same lines."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif (
            c == "R"
            and text.startswith('R"', i)
            and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))
        ):
            k = text.find("(", i)
            end = ")" + text[i + 2 : k] + '"'
            j = text.find(end, k)
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        elif c == "#" and (i == 0 or text[i - 1] == "\n"):
            j = i
            while True:  # a directive and its continuation lines
                k = text.find("\n", j)
                if k < 0 or text[k - 1] != "\\":
                    break
                j = k + 1
            k = n if k < 0 else k
            out.append("\n" * text.count("\n", i, k))
            i = k
        else:
            out.append(c)
            i += 1
    return "".join(out)


def skip_block(text, i):
    """The index after the brace matching the one at text[i]."""
    depth = 0
    while i < len(text):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def function_name(head):
    """The (possibly qualified) name a declaration or definition head names,
    or None when it names no function."""
    head = re.sub(r"^\s*template\s*<[^;{]*?>\s*(?=[\w~])", "", head)
    m = NAME.search(head)
    if not m or "=" in head[: m.start()]:
        return None
    name = re.sub(r"\s+", "", m.group(1))
    last = name.split("::")[-1]
    if last in KEYWORDS or last.isupper() or re.match(r"^[A-Z0-9_]+$", last):
        return None
    if re.match(r"^\s*(using|typedef|enum|friend)\b", head):
        return None
    return name


def scan(text):
    """Namespace-scope items of stripped text: (kind, key, local, offset) with
    kind "def" (a function defined here), "decl" (declared) or "class"."""
    items = []
    stack = []  # namespace names ("" for an anonymous one)
    start = i = 0
    while i < len(text):
        c = text[i]
        if c in ";{}":
            head = text[start:i]
            ns = "::".join(s for s in stack if s)
            local = "" in stack or re.search(r"\bstatic\b", head) is not None
            if c == "}":
                if stack:
                    stack.pop()
                i += 1
            elif c == "{" and re.match(r"^\s*(inline\s+)?namespace\b", head):
                name = re.sub(r"^\s*(inline\s+)?namespace\s*", "", head)
                stack.extend(name.strip().split("::") if name.strip() else [""])
                i += 1
            elif c == "{" and (
                head.count("(") > head.count(")") or head.rstrip().endswith("=")
            ):
                i = skip_block(text, i)  # a default argument, an initializer
                continue
            elif c == "{" and re.match(r'^\s*extern\s*""\s*$', head):
                stack.append("extern")
                i += 1
            else:
                cls = re.match(
                    r"^\s*(?:template\s*<.*>\s*)?(?:class|struct)\s+"
                    r"(?:\[\[\w+\]\]\s*)?(\w+)\s*(?:final\s*)?"
                    r"(?::[^(]*)?$",
                    head,
                    re.S,
                )
                name = None if cls else function_name(head)
                if cls and c == "{":
                    items.append(("class", _key(ns, cls.group(1)), local, i))
                    body = text[i + 1 : skip_block(text, i) - 1]
                    items.extend(
                        ("member", key.split("::")[-1], True, i)
                        for kind, key, _, _ in scan(body)
                        if kind in ("def", "decl")
                    )
                elif name:
                    kind = "def" if c == "{" else "decl"
                    items.append(
                        (
                            kind,
                            _key(ns, name),
                            local,
                            start + len(head) - len(head.lstrip()),
                        )
                    )
                i = skip_block(text, i) if c == "{" else i + 1
            start = i
        else:
            i += 1
    return items


def _key(ns, name):
    ns = "::".join(s for s in ns.split("::") if s and s != "extern")
    return f"{ns}::{name}" if ns else name


def layer_of(rel):
    if rel.parts[0] == "planners":
        return "planners"
    if rel.parts[0] == "src" and len(rel.parts) > 2:
        return rel.parts[1]
    return None


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


class Tree:
    """The library's sources under `root`, read once."""

    def __init__(self, root, allowed):
        self.root = root
        self.allowed = allowed
        self.sources = sorted(
            p
            for d in ("src", "planners")
            if (root / d).is_dir()
            for p in (root / d).rglob("*")
            if p.suffix in (".h", ".cc", ".inc")
        )
        self.stripped = {p: strip(p.read_text()) for p in self.sources}
        self.defined_in = {}  # qualified key -> layers (non-local defs)
        self.class_in = {}  # qualified class -> layers defining a member
        self.free_in = {}  # simple name -> layers (exported free functions)
        unsure = set()  # names of members, of local functions: not checked
        for path, text in self.stripped.items():
            layer = layer_of(path.relative_to(root))
            unsure.update(re.findall(r"(?:\.|->)\s*(\w+)\s*\(", text))
            for kind, key, local, _ in scan(text):
                parts = key.split("::")
                if kind == "member":
                    unsure.add(key)
                if kind != "def":
                    continue
                if len(parts) > 1 and parts[-2][:1].isupper():
                    cls = "::".join(parts[:-1])
                    self.class_in.setdefault(cls, set()).add(layer)
                    unsure.add(parts[-1])
                elif local:
                    unsure.add(parts[-1])
                else:
                    self.free_in.setdefault(parts[-1], set()).add(layer)
                    self.defined_in.setdefault(key, set()).add(layer)
        for name in unsure:
            self.free_in.pop(name, None)

    def header_layers(self, errors):
        """memplan/X.h -> its layer, from the definitions."""
        layers = {}
        for path in sorted((self.root / "include").rglob("*.h")):
            header = str(path.relative_to(self.root / "include"))
            if header in UMBRELLAS:
                continue
            found = {}  # layer -> a declaration it defines
            for kind, key, _, _ in scan(strip(path.read_text())):
                where = (
                    self.defined_in.get(key, set())
                    if kind == "decl"
                    else self.class_in.get(key, set())
                )
                for layer in where:
                    found.setdefault(layer, key)
            pending = SPLIT_PENDING.get(header)
            if pending in found and len(found) > 1:
                del found[pending]
            if header in HEADER_ONLY:
                if found:
                    errors.append(
                        f"include/{header}: listed as header-only "
                        f'(layer "{HEADER_ONLY[header]}") but '
                        f"layer {sorted(found)} defines "
                        f"{sorted(found.values())[0]}"
                    )
                layers[header] = HEADER_ONLY[header]
            elif len(found) == 1:
                layers[header] = next(iter(found))
            elif not found:
                errors.append(
                    f"include/{header}: no layer defines what it "
                    "declares: add it to HEADER_ONLY (or "
                    "UMBRELLAS) in tests/layers_test.py"
                )
            else:
                named = ", ".join(
                    f'"{l}" ({k})' for l, k in sorted(found.items())
                )
                errors.append(
                    f"include/{header}: declares functions of "
                    f"several layers: {named}; split it"
                )
        return layers

    def include_layer(self, header, including_dir, headers):
        if header.startswith("memplan/planners/"):
            return "planners"
        if header.startswith("memplan/"):
            return headers.get(header)
        first = header.split("/")[0]
        if "/" in header and first in self.allowed:
            return first
        if "/" in header and (self.root / "planners" / first).is_dir():
            return "planners"  # a planner's own folder (planners/exact/...)
        if "/" not in header and (including_dir / header).exists():
            return None  # a file beside the includer: its own layer
        if "/" not in header and (self.root / "planners" / header).exists():
            return "planners"
        return None

    def check_includes(self, path, layer, headers, errors):
        rel = path.relative_to(self.root)
        for m in INCLUDE.finditer(path.read_text()):
            header = m.group(1)
            where = f"{rel}:{line_of(path.read_text(), m.start())}"
            if header in UMBRELLAS:
                errors.append(
                    f'{where}: includes the umbrella "{header}"; '
                    "include the headers it gathers"
                )
                continue
            target = self.include_layer(header, path.parent, headers)
            if target is None or target == layer:
                continue
            if target not in self.allowed[layer]:
                errors.append(
                    f'{where}: layer "{layer}" includes "{header}" of '
                    f'layer "{target}" (allowed: '
                    f"{sorted(self.allowed[layer]) or 'none'})"
                )

    def check_calls(self, path, layer, errors):
        rel = path.relative_to(self.root)
        text = self.stripped[path]
        for m in CALL.finditer(text):
            where = self.free_in.get(m.group(1))
            if not where or len(where) != 1:
                continue
            target = next(iter(where))
            if target != layer and target not in self.allowed[layer]:
                errors.append(
                    f'{rel}:{line_of(text, m.start())}: layer "{layer}" '
                    f"calls {m.group(1)}(), defined only in layer "
                    f'"{target}" (allowed: '
                    f"{sorted(self.allowed[layer]) or 'none'})"
                )

    def check(self):
        errors = []
        headers = self.header_layers(errors)
        for path in self.sources:
            rel = path.relative_to(self.root)
            layer = layer_of(rel)
            if layer is None:
                errors.append(
                    f"{rel}: not in a layer folder "
                    "(src/<layer>/ or planners/)"
                )
            elif layer not in self.allowed:
                errors.append(
                    f'{rel}: unknown layer "{layer}" (add it to '
                    "tests/layers_test.py and src/README.md)"
                )
            else:
                self.check_includes(path, layer, headers, errors)
                self.check_calls(path, layer, errors)
        self.check_public_includes(headers, errors)
        return errors, headers

    def check_public_includes(self, headers, errors):
        for path in sorted((self.root / "include").rglob("*.h")):
            header = str(path.relative_to(self.root / "include"))
            layer = headers.get(header)
            for m in INCLUDE.finditer(path.read_text()):
                inc = m.group(1)
                if not inc.startswith("memplan/"):
                    if inc.split("/")[0] in self.allowed:
                        errors.append(
                            f"include/{header}: a public header "
                            f'includes the internal "{inc}"'
                        )
                    continue
                target = headers.get(inc)
                if (
                    layer is None
                    or target is None
                    or target == layer
                    or target in self.allowed[layer]
                ):
                    continue
                errors.append(
                    f'include/{header}: of layer "{layer}", '
                    f'includes "{inc}" of layer "{target}"'
                )


def check_order(allowed):
    """Errors unless every layer's allowed layers are layers, and none of
    them may use it back (directly or through others)."""
    errors = []
    for layer, below in allowed.items():
        for other in sorted(below - set(allowed)):
            errors.append(
                f'ALLOWED: "{layer}" may use the unknown ' f'layer "{other}"'
            )

    def reaches(start, target, seen):
        for other in allowed.get(start, ()):
            if other == target or (
                other not in seen and reaches(other, target, seen | {other})
            ):
                return True
        return False

    for layer in allowed:
        if reaches(layer, layer, set()):
            errors.append(f'ALLOWED: layer "{layer}" is in a cycle')
    return errors


def self_test():
    """The checks catch an upward include, an upward call and a header of
    two layers, on a fixture tree; and pass a clean one."""
    files = {
        "include/memplan/low.h": "namespace memplan {\nint Low();\n}\n",
        "include/memplan/high.h": "namespace memplan {\nclass High { int Get(); };\n"
        "int HighFree(int x);\n}\n",
        "include/memplan/both.h": "namespace memplan {\nint Low2();\nint High2();\n}\n",
        "src/lo/low.cc": '#include "memplan/low.h"\nnamespace memplan {\n'
        "int Low() { return 1; }\nint Low2() { return 2; }\n"
        "}  // namespace memplan\n",
        "src/hi/high.cc": '#include "memplan/high.h"\n#include "lo/x.h"\n'
        "namespace memplan {\n"
        "int High::Get() { return Low(); }\n"
        "int HighFree(int x) { return x; }\n"
        "int High2() { return 3; }\n}\n",
        "src/lo/x.h": "// ok\n",
        "src/lo/bad.cc": '#include "memplan/high.h"\n#include "hi/y.h"\n'
        "namespace memplan {\nnamespace {\n"
        "int Local() { return 0; }\n}\n"
        "int Bad() {\n  // HighFree(1) in a comment\n"
        '  const char* s = "HighFree(2)";\n'
        "  return Local() + HighFree(3);\n}\n}\n",
        "src/hi/y.h": "// ok\n",
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        errors, headers = Tree(root, {"lo": set(), "hi": {"lo"}}).check()
    expected = [
        "include/memplan/both.h: declares functions of several layers: "
        '"hi" (memplan::High2), "lo" (memplan::Low2); split it',
        'src/lo/bad.cc:1: layer "lo" includes "memplan/high.h" of layer '
        '"hi" (allowed: none)',
        'src/lo/bad.cc:2: layer "lo" includes "hi/y.h" of layer "hi" '
        "(allowed: none)",
        'src/lo/bad.cc:10: layer "lo" calls HighFree(), defined only in '
        'layer "hi" (allowed: none)',
    ]
    problems = []
    if sorted(errors) != sorted(expected):
        problems.append(
            "self-test: expected\n  "
            + "\n  ".join(expected)
            + "\ngot\n  "
            + "\n  ".join(errors)
        )
    if headers != {"memplan/low.h": "lo", "memplan/high.h": "hi"}:
        problems.append(f"self-test: header layers {headers}")
    if check_order({"lo": {"hi"}, "hi": {"lo"}}) != [
        'ALLOWED: layer "lo" is in a cycle',
        'ALLOWED: layer "hi" is in a cycle',
    ]:
        problems.append("self-test: a cycle of layers went unseen")
    return problems


def main():
    problems = self_test() + check_order(ALLOWED)
    if problems:
        print("\n".join(problems))
        return 1
    tree = Tree(ROOT, ALLOWED)
    errors, headers = tree.check()
    for header, pending in SPLIT_PENDING.items():
        path = ROOT / "include" / header
        keys = {
            k
            for kind, k, _, _ in scan(strip(path.read_text()))
            if kind == "decl"
        }
        if not any(pending in tree.defined_in.get(k, ()) for k in keys):
            print(
                f"note: include/{header} no longer declares functions of "
                f'"{pending}": drop it from SPLIT_PENDING'
            )
    for e in errors:
        print(e)
    if "-v" in sys.argv:
        for header, layer in sorted(headers.items()):
            print(f"{header}: {layer}")
    print(
        f"layers: {len(tree.sources)} files and {len(headers)} public "
        f"headers checked, {len(errors)} violations"
    )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
