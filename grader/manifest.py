#!/usr/bin/env python3
"""grader/manifest.json for the project's Python and shell: one reader, as workbook's manifest.cpp is
the one for C++ (grader/judge/manifest.hpp). Its shape: grader/manifest.schema.json.

  python3 grader/manifest.py slugs [MANIFEST]              the chapters' slugs, in order, one a line
  python3 grader/manifest.py given HEADER [MANIFEST]       the slug of the first chapter given HEADER
"""
import json
import pathlib
import sys

PATH = pathlib.Path(__file__).resolve().parent / "manifest.json"


def load(path=PATH):
    """The manifest as JSON (a dict)."""
    return json.loads(pathlib.Path(path).read_text(encoding="utf-8"))


def chapters(path=PATH):
    """The chapters' entries, in the manifest's order."""
    return load(path)["chapters"]


def slugs(path=PATH):
    return [c["slug"] for c in chapters(path)]


def given(path=PATH):
    """Each chapter's given headers: slug -> list of "workbook/<header>"."""
    return {c["slug"]: c.get("given", []) for c in chapters(path)}


def main(argv):
    if len(argv) >= 1 and argv[0] == "slugs":
        print("\n".join(slugs(*argv[1:2])))
        return 0
    if len(argv) >= 2 and argv[0] == "given":
        found = [slug for slug, headers in given(*argv[2:3]).items() if argv[1] in headers]
        if not found:
            print(f"no chapter is given {argv[1]}", file=sys.stderr)
            return 1
        print(found[0])
        return 0
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
