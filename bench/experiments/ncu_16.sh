#!/usr/bin/env bash
# Nsight Compute on chapter 16's reference, on a machine with a GPU: the bf16 sum, ArgMax and
# mean/variance kernels (reduce_any_kernel) at 2^27 and 2^28 elements, with the GPU's clocks left
# as they are (`--clock-control none`: ncu would otherwise lock them at base), one launch each.
# Writes to <out> (default build/experiments/ncu_16): <op>_<log2>.ncu-rep, its raw and details
# pages as CSV (<op>_<log2>_raw.csv, _details.csv), the details as text, the per-opcode counts,
# ncu-version.txt, clocks.txt (nvidia-smi before and after), device.txt, and
# ncu_16_any_operator.csv (bench/experiments/ncu_16.py), the file the lesson's figures come from:
#   bench/experiments/ncu_16.sh [out]
#   cp <out>/ncu_16_any_operator.csv book/results/experiments/
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mkdir -p "${1:-$root/build/experiments/ncu_16}" && cd "${1:-$root/build/experiments/ncu_16}" && pwd)
nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ncu=${NCU:-$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || true)}
[ -x "$ncu" ] || { echo "no ncu (Nsight Compute): put it on PATH or set NCU" >&2; exit 2; }
# generic_ops, built as bench/experiments/run builds it.
flags=(-O3 -std=c++17 -arch=native -I "$root/harness" -I "$root/grader" -I "$root/bench/experiments")
"$nvcc" "${flags[@]}" -DWORKBOOK_SUBJECT='"reference"' -DWORKBOOK_CHAPTER='"16_any_operator"' \
  -c "$root/solutions/16_any_operator/kernel.cu" -o "$out/16_any_operator.o"
"$nvcc" "${flags[@]}" "$root/bench/experiments/generic_ops.cu" "$root/grader/runner/registry.cpp" \
  "$out/16_any_operator.o" -o "$out/generic_ops"
"$ncu" --version >"$out/ncu-version.txt"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$nvcc" --version | tail -2
  date -u +%F
} >"$out/device.txt"
query=(--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv)
nvidia-smi "${query[@]}" >"$out/clocks.txt"
sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats
          --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis)
metrics='regex:sm__inst_executed_pipe_.*pct_of_peak_sustained_active,regex:sm__pipe_.*cycles_active.avg.pct_of_peak_sustained_active'
metrics+=',sm__cycles_elapsed.avg.per_second,dram__cycles_elapsed.avg.per_second,smsp__inst_executed.sum'
metrics+=',regex:smsp__inst_executed_op_.*sum'
# generic_ops times each operator with 3 warm-ups and 30 timed calls, one reduce_any_kernel launch
# each, in the order sum, max, min, argmax, argmin, dot, mean/variance: the last timed call of the
# operator at position k is launch 33 k + 32.
order=(sum max min argmax argmin dot meanvar)
profile() {  # profile <log2> <skip> <report> [ncu options]
  local log2=$1 skip=$2 rep=$3
  shift 3
  "$ncu" --clock-control none -k regex:reduce_any_kernel --launch-skip "$skip" --launch-count 1 \
    "${sections[@]}" "$@" -f -o "$rep" "$out/generic_ops" "$log2" bfloat16
}
for log2 in 27 28; do
  for op in sum argmax meanvar; do
    for k in "${!order[@]}"; do if [ "${order[$k]}" = "$op" ]; then skip=$((33 * k + 32)); fi; done
    rep=$out/${op}_$log2
    rm -f "$rep.ncu-rep"
    # Without the extra metrics if this ncu does not know one of them.
    profile "$log2" "$skip" "$rep" --metrics "$metrics" >"$rep.log" 2>&1 || [ -f "$rep.ncu-rep" ] ||
      profile "$log2" "$skip" "$rep" >>"$rep.log" 2>&1 || true
    [ -f "$rep.ncu-rep" ] || { tail -20 "$rep.log"; exit 1; }
    "$ncu" -i "$rep.ncu-rep" --csv --page details >"${rep}_details.csv"
    "$ncu" -i "$rep.ncu-rep" --csv --page raw >"${rep}_raw.csv"
    "$ncu" -i "$rep.ncu-rep" --page details --print-details all >"${rep}_details.txt"
    "$ncu" -i "$rep.ncu-rep" --csv --page raw --print-metric-instances values \
      --metrics sass__inst_executed_per_opcode >"${rep}_opcodes.csv"
  done
done
nvidia-smi "${query[@]}" | tail -n +2 >>"$out/clocks.txt"
# The same program's own timing at 2^28 (no profiler), for comparison.
"$out/generic_ops" 28 bfloat16 >"$out/generic_ops_28_bf16.txt" 2>&1
python3 "$root/bench/experiments/ncu_16.py" "$out" >"$out/ncu_16_any_operator.csv"
echo "ncu_16: $out/ncu_16_any_operator.csv"
