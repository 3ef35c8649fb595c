#!/usr/bin/env bash
# Chapter 15's claim: its exact sum needs subnormals kept, and the chapters' flags keep them. This
# builds chapter 15's reference with -ftz=true in place of -ftz=false (a copy of the tree, the
# chapters' tests only) and runs its Accuracy tests, whose inputs include one of subnormals only:
# that one must fail, and the others pass. Output: <out>/flush_to_zero.txt.
#   bench/experiments/flush_to_zero.sh [out]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mkdir -p "${1:-$root/build/experiments}" && cd "${1:-$root/build/experiments}" && pwd)
# The chapter whose kernel.cu is given the exact accumulator (workbook/reproducible.cuh): chapter 15.
slug=$(python3 "$root/grader/manifest.py" given workbook/reproducible.cuh)
copy=$out/ftz-tree
rm -rf "$copy" && mkdir -p "$copy"
tar -C "$root" --exclude=./.git --exclude=./build -cf - . | tar -xf - -C "$copy"
sed -i 's/set(WORKBOOK_IEEE_CUDA_FLAGS -ftz=false/set(WORKBOOK_IEEE_CUDA_FLAGS -ftz=true/' "$copy/CMakeLists.txt"
grep -q 'WORKBOOK_IEEE_CUDA_FLAGS -ftz=true' "$copy/CMakeLists.txt" || { echo "the flags line was not found"; exit 2; }
cmake -S "$copy" -B "$copy/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWORKBOOK_CHAPTERS_ONLY=ON >"$out/ftz-configure.log" 2>&1 &&
  cmake --build "$copy/build" --target "reference_$slug" >"$out/ftz-build.log" 2>&1 ||
  { tail -20 "$out/ftz-build.log"; exit 2; }
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}" --version | tail -1
  date -u +%F
  echo "chapter $slug's reference built with -ftz=true -prec-div=true -prec-sqrt=true:"
  "$copy/build/grader/judge/reference_$slug" --chapter="$slug" --subject=reference \
    --gtest_filter='Accuracy.*' 2>&1 | grep -E '^\[ +(OK|FAILED) +\]|Failure|expected|got|case' | head -60
} | tee "$out/flush_to_zero.txt"
