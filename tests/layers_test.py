#!/usr/bin/env python3
"""Fails when a lower layer of the library includes a higher one.

Each folder of src/ (and planners/) may include the internal headers of the
folders listed for it below (src/README.md explains the layers), and the
public headers (memplan/...). Public headers include no internal header.
Run from anywhere: python3 tests/layers_test.py
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# folder -> the internal folders it may include (besides itself).
ALLOWED = {
    "base": set(),
    "model": {"base"},
    "order": {"base", "model"},
    "symbolic": {"base", "model"},
    "formats": {"base", "model"},
    "load": {"base", "model", "formats"},
    "placement": {"base", "model"},
    "planning": {"base", "model", "placement", "order", "symbolic"},
    "report": {"base", "model", "formats", "planning"},
    "onnx": {"base", "model", "formats", "symbolic"},
    "workloads": {"base", "model"},
    "planners": {"base", "model", "placement", "planning", "order",
                 "symbolic"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    rel = path.relative_to(ROOT)
    if rel.parts[0] == "planners":
        return "planners"
    if rel.parts[0] == "src" and len(rel.parts) > 2:
        return rel.parts[1]
    return None


def included_layer(header, including_dir):
    """The internal layer a quoted include names, or None when public/local."""
    first = header.split("/")[0]
    if "/" in header and first in ALLOWED:
        return first
    if "/" in header and (ROOT / "planners" / first).is_dir():
        return "planners"  # a planner's own folder (planners/exact/...)
    if "/" not in header and (including_dir / header).exists():
        return None  # a file beside the includer: its own layer
    if "/" not in header and (ROOT / "planners" / header).exists():
        return "planners"
    return None


def main():
    errors = []
    sources = [p for d in ("src", "planners") for p in (ROOT / d).rglob("*")
               if p.suffix in (".h", ".cc", ".inc")]
    for path in sorted(sources):
        layer = layer_of(path)
        if layer is None:
            errors.append(f"{path.relative_to(ROOT)}: not in a layer folder "
                          "(src/<layer>/ or planners/)")
            continue
        if layer not in ALLOWED:
            errors.append(f"{path.relative_to(ROOT)}: unknown layer "
                          f"\"{layer}\" (add it to tests/layers_test.py "
                          "and src/README.md)")
            continue
        for header in INCLUDE.findall(path.read_text()):
            target = included_layer(header, path.parent)
            if target is None or target == layer:
                continue
            if target not in ALLOWED[layer]:
                errors.append(f"{path.relative_to(ROOT)}: layer \"{layer}\" "
                              f"includes \"{header}\" of layer \"{target}\" "
                              f"(allowed: {sorted(ALLOWED[layer]) or 'none'})")
    for path in sorted((ROOT / "include").rglob("*.h")):
        for header in INCLUDE.findall(path.read_text()):
            if not header.startswith("memplan/") and header.split("/")[0] in ALLOWED:
                errors.append(f"{path.relative_to(ROOT)}: a public header "
                              f"includes the internal \"{header}\"")
    for e in errors:
        print(e)
    checked = len(sources)
    print(f"layers: {checked} files checked, {len(errors)} violations")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
