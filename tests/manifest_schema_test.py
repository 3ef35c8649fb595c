#!/usr/bin/env python3
"""grader/manifest.json against its schema, grader/manifest.schema.json, and the schema against two
broken manifests it must refuse.

  tests/manifest_schema_test.py <source dir>

Needs jsonschema (Debian: python3-jsonschema; pip install jsonschema): without it the test is skipped,
except on CI (CI=true), where it fails: tests/jsonschema_or_skip.py.
"""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from jsonschema_or_skip import jsonschema_or_skip  # noqa: E402

jsonschema = jsonschema_or_skip("manifest schema")

src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
sys.path.insert(0, str(src / "grader"))
import manifest as manifest_reader  # noqa: E402  grader/manifest.py
manifest = manifest_reader.load(src / "grader" / "manifest.json")
schema = json.loads((src / "grader" / "manifest.schema.json").read_text(encoding="utf-8"))
validator = jsonschema.Draft7Validator(schema)
problems = [f"grader/manifest.json at {'/'.join(map(str, e.path)) or '(top)'}: {e.message}"
            for e in sorted(validator.iter_errors(manifest), key=lambda e: list(e.path))]
broken = json.loads(json.dumps(manifest))
broken["chapters"][0]["kind"] = "fast"
broken["chapters"][1]["given"] = ["../solutions/07_vectorized/kernel.cu"]
if len(list(validator.iter_errors(broken))) < 2:
    problems.append("grader/manifest.schema.json accepts a chapter of kind \"fast\" or a given file outside the harness")
for p in problems:
    print("PROBLEM:", p)
print("manifest schema:", f"{len(problems)} problems" if problems else "grader/manifest.json matches its schema")
sys.exit(1 if problems else 0)
