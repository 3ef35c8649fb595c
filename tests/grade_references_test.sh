#!/usr/bin/env bash
# solutions/ handed in as a class's one submission (a folder holding a chapters/ tree): an
# instructor's first check. Every reference is a file a learner could hand in, so nothing is
# refused; with a GPU every chapter passes with full marks, without one every chapter is built,
# checked and not graded (exit 3).
#   grade_references_test.sh <grader> <source dir> <work dir>
set -uo pipefail
grader=$1 source=$2 work=$3
rm -rf "$work" && mkdir -p "$work/class/references"
cp -r "$source/solutions" "$work/class/references/chapters"
"$grader" --submissions "$work/class" --out "$work/grades" >"$work/grade.txt" 2>&1
rc=$?
python3 - "$work/grades/references/report.json" "$rc" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
rc = int(sys.argv[2])
chapters = report["chapters"]
# A chapter this machine cannot run (chapter 17 on one GPU or without NCCL, 13 and 14 before sm_90) is
# skipped, its points not counted.
skipped = [f'{c["slug"]} ({c["status_text"]})' for c in chapters if c["status"] == "skipped"]
if report["graded"]:
    # Every other chapter gets full marks; one that does not says why (its status, points, detail).
    bad = [f'{c["slug"]}: {c["status"]}, {c["points"]}/{c["max_points"]}'
           + (f' ({" ".join(c.get("detail", "").split())[:600]})' if c.get("detail") else "") for c in chapters
           if (c["status"] != "passed" or c["points"] != c["max_points"])
           and not (c["status"] == "skipped" and c["points"] == 0)]
    ok = not bad and rc == 0
    label, good = "references as a submission:", "full marks in every chapter"
else:
    # Every chapter the build can make (not chapter 17 without NCCL) is built and checked.
    bad = [f'{c["slug"]}: {c["status"]}' for c in chapters
           if c["status"] != "no_gpu" and not (c["status"] == "skipped" and "NCCL" in c["status_text"])]
    ok = not bad and rc == 3
    label, good = "references as a submission, no GPU:", "every chapter built and checked"
print(label, (good + (f", skipped here: {', '.join(skipped)}" if skipped else "")) if ok
      else "; ".join(bad) + f" (exit {rc})")
sys.exit(0 if ok else 1)
PY
status=$?
[ $status -eq 0 ] || tail -30 "$work/grade.txt"
exit $status
