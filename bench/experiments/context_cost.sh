#!/usr/bin/env bash
# What a CUDA context costs to make, on a machine with a GPU: alone, beside $LOAD (8) processes that
# make and drop contexts, and beside $LOAD that allocate, fill and free 512 MiB over and over (what
# a class's test processes do to one another: which of the two slows a context);
# with the driver's defaults, with CUDA_DEVICE_MAX_CONNECTIONS=1 (fewer hardware queues a context
# sets up), and under the Multi-Process Service where its control daemon starts for this user. Each
# way, ten probes one after the other, and the same probe's start under compute-sanitizer memcheck.
# For the grading cost (book/results/grading.md: a context beside a class's test processes took
# five times as long as alone).
#   bench/experiments/context_cost.sh [out]
# Output: <out>/context_cost.csv (a row per probe) and the medians on stdout.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mkdir -p "${1:-$root/build/experiments}" && cd "${1:-$root/build/experiments}" && pwd)
load=${LOAD:-8} runs=${RUNS:-10}
probe=$out/context_cost
nvcc -O2 -std=c++17 -o "$probe" "$root/bench/experiments/context_cost.cu" || exit 2
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
csv=$out/context_cost.csv
echo "way,load,run,context_ms,alloc_ms,free_ms,memcheck_wall_ms" >"$csv"  # load: none, contexts or memory
now_ms() { date +%s%3N; }

measure() {  # measure <way> <load: none, contexts or memory>
  local way=$1 kind=$2 pids=() i line t0 wall k=$load
  [ "$kind" = none ] && k=0
  for ((i = 0; i < k; i++)); do "$probe" "$kind" 600 >/dev/null 2>&1 & pids+=($!); done
  ((k > 0)) && sleep 2
  for ((i = 1; i <= runs; i++)); do
    line=$("$probe" probe 2>>"$out/context_cost.err") || line="- - -"
    t0=$(now_ms)
    "$sanitizer" --tool memcheck "$probe" probe >/dev/null 2>>"$out/context_cost.err" && wall=$(($(now_ms) - t0)) || wall=-
    echo "$way,$kind,$i,${line// /,},$wall" >>"$csv"
  done
  ((k > 0)) && kill "${pids[@]}" 2>/dev/null
  wait 2>/dev/null
}

for kind in none contexts memory; do measure defaults $kind; done
for kind in none contexts memory; do CUDA_DEVICE_MAX_CONNECTIONS=1 measure max_connections_1 $kind; done
if command -v nvidia-cuda-mps-control >/dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY=$out/mps-pipe CUDA_MPS_LOG_DIRECTORY=$out/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d; then
    for kind in none contexts memory; do measure mps $kind; done
    echo quit | nvidia-cuda-mps-control
  else
    echo "the MPS control daemon did not start for this user: no mps rows"
  fi
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
else
  echo "no nvidia-cuda-mps-control: no mps rows"
fi
python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def median(way, load, column):
    v = [float(r[column]) for r in rows if r["way"] == way and r["load"] == load and r[column] not in ("-", "")]
    return f"{statistics.median(v):.0f}" if v else "-"
print(f"{'way':18} {'load':>8} {'context ms':>10} {'alloc ms':>8} {'free ms':>7} {'memcheck ms':>11}  (medians)")
for way, load in dict.fromkeys((r["way"], r["load"]) for r in rows):
    print(f"{way:18} {load:>8} {median(way, load, 'context_ms'):>10} {median(way, load, 'alloc_ms'):>8} "
          f"{median(way, load, 'free_ms'):>7} {median(way, load, 'memcheck_wall_ms'):>11}")
PY
