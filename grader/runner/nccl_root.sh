#!/usr/bin/env bash
# Prints the folder holding NCCL's include/nccl.h and lib/libnccl.so.2: $WORKBOOK_NCCL_ROOT, else
# the nvidia-nccl wheel of python3's packages (pip install nvidia-nccl-cu13, or -cu12 for CUDA 12),
# else nothing, with exit status 1.
set -uo pipefail
for root in "${WORKBOOK_NCCL_ROOT:-}" \
            "$(python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null)"; do
  if [ -n "$root" ] && [ -f "$root/include/nccl.h" ] && [ -e "$root/lib/libnccl.so.2" ]; then
    echo "$root"
    exit 0
  fi
done
exit 1
