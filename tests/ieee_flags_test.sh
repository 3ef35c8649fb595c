#!/usr/bin/env bash
# The flags every chapter is compiled with keep IEEE single precision even after --use_fast_math
# (contract.hpp, Floating point). A probe with an add, a comparison, a division and a square root
# is compiled to PTX with --use_fast_math alone, which must flush and approximate (so the probe
# can see it), and with --use_fast_math followed by the chapters' flags, which must do neither.
#   ieee_flags_test.sh <nvcc> <work dir> <the chapters' flags...>
set -u
nvcc=$1 work=$2
shift 2
mkdir -p "$work"
cat >"$work/probe.cu" <<'CU'
__global__ void probe(float* x) {
  x[0] = x[1] < x[2] ? (x[1] + x[2]) / x[3] : sqrtf(x[4]);
}
CU
ptx() { "$nvcc" -arch=compute_80 -ptx "$@" "$work/probe.cu" -o - ; }
failed=0
fast=$(ptx --use_fast_math) || { echo "FAIL: nvcc could not compile the probe"; exit 1; }
if ! grep -q '\.ftz' <<<"$fast" || ! grep -q 'approx' <<<"$fast"; then
  echo "FAIL: the probe cannot tell: --use_fast_math alone shows no .ftz or no approx instruction"
  failed=1
fi
ieee=$(ptx --use_fast_math "$@") || { echo "FAIL: nvcc rejected the chapters' flags: $*"; exit 1; }
if grep -E '\.ftz|approx' <<<"$ieee"; then
  echo "FAIL: --use_fast_math then [$*] still flushes or approximates (lines above)"
  failed=1
fi
grep -q 'div\.rn\.f32' <<<"$ieee" && grep -q 'sqrt\.rn\.f32' <<<"$ieee" ||
  { echo "FAIL: no correctly rounded div.rn.f32 and sqrt.rn.f32 with [$*]"; failed=1; }
[ $failed = 0 ] && echo "PASS: [$*] keeps subnormals and IEEE division and square root after --use_fast_math"
exit $failed
