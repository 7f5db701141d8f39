#!/usr/bin/env bash
# Passes when fakecuda's libcuda.so.1 ($2) exports every function the CUDA
# Toolkit's stub libcuda.so ($1) exports; skipped (77) without the stub.
set -euo pipefail
stub=$1 lib=$2
if [ ! -f "$stub" ]; then
    echo "skipped: no stub libcuda.so at $stub (the toolkit's lib64/stubs)"
    exit 77
fi
exported() { nm -D --defined-only "$1" | awk '$2 ~ /^[TtWw]$/ {print $3}' | sort -u; }
missing=$(comm -23 <(exported "$stub") <(exported "$lib"))
echo "stub exports $(exported "$stub" | wc -l) functions; fakecuda $(exported "$lib" | grep -c '^cu')"
if [ -n "$missing" ]; then
    echo "fakecuda lacks: $(echo "$missing" | tr "\n" " ")"
    exit 1
fi
