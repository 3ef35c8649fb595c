#!/usr/bin/env bash
# What the sandbox costs a test process, layer by layer, on a machine with a GPU: chapter 07's
# reference judged as the grader judges it (the judge, the runner in workbook-sandbox), its shared
# tests and its memcheck run, five times each: with the whole sandbox, with each layer left out
# (workbook-sandbox --skip), and with no sandbox. Its first run is in book/results/grading.md and
# experiments/sandbox_cost.csv (H200, 2026-12-02: at most about 60 ms a process, the namespaces).
#   bench/experiments/sandbox_cost.sh [out]      (after cmake --build --preset default)
# Output: <out>/sandbox_cost.csv (one row per run) and the medians on stdout.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mkdir -p "${1:-$root/build/experiments}" && cd "${1:-$root/build/experiments}" && pwd)
b=$root/build/default
judge=$b/grader/judge/judge
helper=$b/grader/sandbox/workbook-sandbox
slug=$(cd "$root/solutions" && ls -d 07_* | head -1)
runner=$b/grader/judge/reference_runner_$slug
for f in "$judge" "$helper" "$runner"; do [ -x "$f" ] || { echo "no $f: build first"; exit 2; }; done
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
# The grader's sanitized tests (judge/names.hpp, kSanitizedTests).
sanitized=$(python3 - "$root/grader/judge/names.hpp" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
print(":".join(re.findall(r'"([^"]+)"', re.search(r"kSanitizedTests\s*=\s*\{([^}]*)\}", text).group(1))))
PY
)
csv=$out/sandbox_cost.csv
echo "variant,part,run,wall_ms,ready_ms,tests_ms,end_ms" >"$csv"
ms() { sed -n "s/.*\[timing\] $1 \([0-9]*\) ms.*/\1/p" "$out/sandbox_cost.log" | head -1; }
for variant in whole no_namespaces no_landlock no_seccomp no_limits none; do
  case $variant in
    whole) sandbox=(--sandbox="$helper") ;;
    none) sandbox=() ;;
    *)
      wrapper=$out/sandbox-${variant#no_}.sh
      printf '#!/bin/sh\nexec "%s" --skip %s "$@"\n' "$helper" "${variant#no_}" >"$wrapper"
      chmod +x "$wrapper"
      sandbox=(--sandbox="$wrapper")
      ;;
  esac
  for part in shared memcheck; do
    if [ $part = shared ]; then extra=(--gtest_filter='-Bandwidth.*:HugeInput.*')
    else extra=(--wrap="$sanitizer" --wrap=--tool --wrap=memcheck --gtest_filter="$sanitized"); fi
    for run in 1 2 3 4 5; do
      start=$(date +%s%N)
      "$judge" --chapter="$slug" --subject=reference --runner="$runner" "${sandbox[@]}" "${extra[@]}" \
        >"$out/sandbox_cost.log" 2>&1 || { echo "$variant $part: the judge failed"; tail -5 "$out/sandbox_cost.log"; }
      wall=$((($(date +%s%N) - start) / 1000000))
      echo "$variant,$part,$run,$wall,$(ms 'ready to test after'),$(ms 'the tests took'),$(ms "the chapter's process ended")" >>"$csv"
    done
  done
done
python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"{'variant':<14} {'part':<9} {'wall ms':>8} {'ready ms':>9} (medians of 5)")
for key in dict.fromkeys((r["variant"], r["part"]) for r in rows):
    rs = [r for r in rows if (r["variant"], r["part"]) == key]
    def med(c):
        values = [float(r[c]) for r in rs if r[c]]
        return f"{statistics.median(values):.0f}" if values else "-"
    print(f"{key[0]:<14} {key[1]:<9} {med('wall_ms'):>8} {med('ready_ms'):>9}")
PY
