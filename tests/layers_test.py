#!/usr/bin/env python3
"""The parts include only the parts below them.

  tests/layers_test.py <source dir>

  grader/ (the command line)  ->  grader/judge/  ->  grader/sandbox/, grader/runner/  ->  harness/

Every `#include "..."` of a C++ or CUDA file in those folders, resolved as the compilers do (the
including file's folder, then the include roots grader/ and harness/), must name a file of the same
part or of a part below; the references in solutions/ include harness/ only. An include that
resolves to nothing in the project, or goes up or sideways, fails the test with the file, the line
and the edge.
"""
import pathlib
import re
import sys

# Part -> the parts it may include (besides itself).
BELOW = {
    "grader": {"judge", "sandbox", "runner", "harness"},
    "judge": {"sandbox", "runner", "harness"},
    "sandbox": set(),
    "runner": {"harness"},
    "harness": set(),
    "solutions": {"harness"},
}
SOURCES = {".cpp", ".hpp", ".cu", ".cuh", ".h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def part_of(root, path):
    rel = path.relative_to(root).parts
    if rel[0] == "grader":
        return rel[1] if len(rel) > 2 and rel[1] in ("judge", "sandbox", "runner") else "grader"
    if rel[0] in ("harness", "solutions"):
        return rel[0]
    return None


def main(root):
    root = pathlib.Path(root).resolve()
    roots = [root / "grader", root / "harness"]
    problems, edges = [], 0
    for top in ("grader", "harness", "solutions"):
        for path in sorted((root / top).rglob("*")):
            if path.suffix not in SOURCES or not path.is_file():
                continue
            here = part_of(root, path)
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = next((c.resolve() for c in [path.parent / m.group(1)] + [r / m.group(1) for r in roots]
                               if c.is_file()), None)
                where = f"{path.relative_to(root)}:{number}: #include \"{m.group(1)}\""
                if target is None or root not in target.parents:
                    problems.append(f"{where}: not a file of the project")
                    continue
                there = part_of(root, target)
                edges += 1
                if there != here and there not in BELOW[here]:
                    problems.append(f"{where}: {here} includes {there} ({target.relative_to(root)}); "
                                    f"{here} may include only {sorted(BELOW[here]) or 'nothing else'}")
    for p in problems:
        print(p)
    print(f"{edges} includes checked, {len(problems)} crossing the layers")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
