#!/usr/bin/env bash
# One process per GPU, as MPI or torchrun start them: K copies of multi_gpu, rank r on GPU r, meeting
# through NCCL's unique id in a file that rank 0 writes. Each rank's output in <dir>/rank<r>.txt;
# rank 0's is printed. Exits non-zero if any rank does.
#   bench/experiments/multi_gpu_ranks.sh <multi_gpu> <K> <dir> [multi_gpu options...]
set -uo pipefail
program=${1:?usage: multi_gpu_ranks.sh <multi_gpu> <K> <dir> [options]}
ranks=${2:?}
dir=${3:?}
shift 3
mkdir -p "$dir"
rm -f "$dir/nccl.id"
export NCCL_NVLS_ENABLE=0  # NVLink multicast off
pids=()
for ((r = 0; r < ranks; r++)); do
  "$program" --rank "$r" --ranks "$ranks" --id "$dir/nccl.id" "$@" >"$dir/rank$r.txt" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
cat "$dir/rank0.txt"
exit $status
