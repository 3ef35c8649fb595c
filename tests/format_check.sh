#!/usr/bin/env bash
# The project's own C++ and CUDA as .clang-format lays it out: grader/, bench/ and tests/ (not the
# learners' files: chapters/, solutions/, tests/submissions/, nor the headers they include, which
# lessons quote line for line).
#   tests/format_check.sh [source dir]          fails, naming each file that differs
#   tests/format_check.sh [source dir] --fix    formats them in place
# Exits 77 (CTest: skipped) where clang-format is not installed (Debian: apt-get install clang-format).
set -uo pipefail
cd "${1:-$(dirname "$0")/..}" || exit 2
fix=0; [ "${2:-}" = --fix ] && fix=1
tool=$(command -v clang-format || true)
[ -n "$tool" ] || { echo "format: not checked: clang-format is not installed"; exit 77; }
mapfile -t files < <(find grader bench tests -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) \
                       -not -path 'tests/submissions/*' | sort)
if [ $fix -eq 1 ]; then
  "$tool" -i "${files[@]}" && echo "format: ${#files[@]} files formatted"
  exit
fi
bad=0
for f in "${files[@]}"; do
  "$tool" --dry-run --Werror "$f" >/dev/null 2>&1 || { echo "not formatted: $f (tests/format_check.sh . --fix)"; bad=$((bad + 1)); }
done
echo "format: ${#files[@]} files, $bad not as .clang-format lays them out ($("$tool" --version | head -1))"
[ $bad -eq 0 ]
