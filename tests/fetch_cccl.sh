#!/usr/bin/env bash
# Fetches CCCL headers newer than the toolkit's (the nvidia-cuda-cccl wheel from PyPI: header-only)
# into <dir> and prints their include folder, for WORKBOOK_CCCL_INCLUDE: the benchmark then adds
# CUB's reproducible gpu_to_gpu sum (CCCL 3.1 and later).
#   tests/fetch_cccl.sh <dir> [wheel]     a wheel already downloaded (no network) is unpacked as is
#   export WORKBOOK_CCCL_INCLUDE=$(tests/fetch_cccl.sh build/cccl)
# With CUDA 12.x, WORKBOOK_CCCL_WHEEL=nvidia-cuda-cccl-cu12 (the same headers under nvidia/cu12).
set -euo pipefail
dir=${1:?usage: tests/fetch_cccl.sh <dir> [wheel]}
wheel=${2:-}
mkdir -p "$dir"
if [ -z "$wheel" ]; then
  # The version the book's figures were measured with (CCCL 3.5); WORKBOOK_CCCL_WHEEL overrides it.
  python3 -m pip download -q --no-deps --dest "$dir" "${WORKBOOK_CCCL_WHEEL:-nvidia-cuda-cccl==13.3.5.0.6}" >&2
  wheel=$(ls -t "$dir"/nvidia_cuda_cccl-*.whl | head -1)
fi
python3 -m zipfile -e "$wheel" "$dir/unpacked"
version=$(find "$dir/unpacked" -path '*/cub/version.cuh' | head -1)
[ -n "$version" ] || { echo "fetch_cccl: no cub/version.cuh in $wheel" >&2; exit 1; }
cd "$(dirname "$version")/.." && pwd
