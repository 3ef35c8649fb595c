#!/usr/bin/env bash
# Fetches CCCL headers newer than the toolkit's (the nvidia-cuda-cccl wheel from PyPI: header-only)
# into <dir> and prints their include folder, for WORKBOOK_CCCL_INCLUDE: the benchmark then adds
# CUB's reproducible gpu_to_gpu sum (CCCL 3.1 and later).
#   bench/fetch_cccl.sh <dir> [wheel]     a wheel already downloaded (no network) is unpacked as is
#   export WORKBOOK_CCCL_INCLUDE=$(bench/fetch_cccl.sh build/cccl)
# (nvidia-cuda-cccl-cu12, CUDA 12.9's, holds CCCL 2.8: too old for gpu_to_gpu; CMake then says so.)
set -euo pipefail
dir=${1:?usage: bench/fetch_cccl.sh <dir> [wheel]}
wheel=${2:-}
mkdir -p "$dir"
if [ -z "$wheel" ]; then
  # The version the book's figures were measured with (CCCL 3.5); WORKBOOK_CCCL_WHEEL overrides it.
  python3 -m pip download -q --no-deps --dest "$dir" "${WORKBOOK_CCCL_WHEEL:-nvidia-cuda-cccl==13.3.5.0.6}" >&2
  wheel=$(ls -t "$dir"/nvidia_cuda_cccl*.whl | head -1)  # nvidia_cuda_cccl-... or nvidia_cuda_cccl_cu12-...
fi
python3 -m zipfile -e "$wheel" "$dir/unpacked"
version=$(find "$dir/unpacked" -path '*/cub/version.cuh' | head -1)
[ -n "$version" ] || { echo "fetch_cccl: no cub/version.cuh in $wheel" >&2; exit 1; }
cd "$(dirname "$version")/.." && pwd
