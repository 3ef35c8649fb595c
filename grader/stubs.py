#!/usr/bin/env python3
"""The stubs as the project ships them, for `grader/grade reset` and `status` (which tells an
untouched stub from an edited one) in any copy of the project, with or without git history.

grader/stubs.json holds each chapter's chapters/<slug>/kernel.cu as shipped; it is written from
the stubs here and checked against them where the tree is the project's own (CI checks a fresh
clone of main; a student's edits are none of its business).

  python3 grader/stubs.py --write   after changing a stub
  python3 grader/stubs.py --check   exit 1, naming the chapter, where a stub and stubs.json differ
"""
import argparse
import json
import pathlib
import sys

import manifest  # grader/manifest.py, beside this script

ROOT = pathlib.Path(__file__).resolve().parent.parent
STORE = ROOT / "grader" / "stubs.json"


def shipped():
    return {slug: (ROOT / "chapters" / slug / "kernel.cu").read_text(encoding="utf-8") for slug in manifest.slugs()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write grader/stubs.json from chapters/")
    parser.add_argument("--check", action="store_true", help="check grader/stubs.json against chapters/")
    args = parser.parse_args()
    stubs = shipped()
    document = {"about": "The stubs as shipped (chapters/<slug>/kernel.cu), for grader/grade reset and status; "
                         "written by grader/stubs.py --write, checked by grader/stubs.py --check in CI.",
                "stubs": stubs}
    if args.write:
        STORE.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {STORE.relative_to(ROOT)}: {len(stubs)} stubs")
        return 0
    stored = json.loads(STORE.read_text(encoding="utf-8")).get("stubs", {})
    problems = [f"{slug}: chapters/{slug}/kernel.cu and grader/stubs.json differ"
                for slug in sorted(set(stubs) | set(stored)) if stubs.get(slug) != stored.get(slug)]
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print("after changing a stub: python3 grader/stubs.py --write", file=sys.stderr)
        return 1
    print(f"grader/stubs.json holds the {len(stubs)} stubs as shipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
