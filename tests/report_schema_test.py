#!/usr/bin/env python3
"""Reports the grader wrote, against grader/report.schema.json; and the schema against broken reports.

  tests/report_schema_test.py <source dir> <report.json or folder>...

A folder stands for the reports of the grader tests' work folders in it (<folder>/grader-*/report.json:
CTest runs this after those tests, FIXTURES_REQUIRED). At least one report must be found. Needs jsonschema (Debian:
python3-jsonschema; pip install jsonschema): without it the test is skipped (never
passed), except on CI (CI=true), where it fails: tests/jsonschema_or_skip.py.
"""
import copy
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from jsonschema_or_skip import jsonschema_or_skip  # noqa: E402

jsonschema = jsonschema_or_skip("report schema")

src = pathlib.Path(sys.argv[1])
schema = json.loads((src / "grader" / "report.schema.json").read_text(encoding="utf-8"))
jsonschema.Draft7Validator.check_schema(schema)
validator = jsonschema.Draft7Validator(schema)
reports = []
for arg in sys.argv[2:]:
    p = pathlib.Path(arg)
    reports += sorted(p.glob("grader-*/report.json")) if p.is_dir() else [p] if p.is_file() else []
problems = []
if not reports:
    problems.append(f"no report found in {sys.argv[2:]}: nothing checked")
for path in reports:
    doc = json.loads(path.read_text(encoding="utf-8"))
    for e in sorted(validator.iter_errors(doc), key=lambda e: list(e.path))[:5]:
        problems.append(f"{path} at {'/'.join(map(str, e.path)) or '(top)'}: {e.message}")
    # The schema refuses what no grader writes: a status word it does not know, a field it lacks.
    if doc.get("chapters"):
        wrong = copy.deepcopy(doc)
        wrong["chapters"][0]["status"] = "PASSED"
        del wrong["chapters"][0]["points"]
        if len(list(validator.iter_errors(wrong))) < 2:
            problems.append(f"{path}: the schema accepts a status 'PASSED' or a chapter without points")
for p in problems:
    print("PROBLEM:", p)
print(f"report schema: {len(reports)} reports checked, {len(problems)} problems")
sys.exit(1 if problems else 0)
