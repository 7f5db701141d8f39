#!/usr/bin/env bash
# scripts/format.sh [--check]: the C and CUDA sources under .clang-format -
# every tracked *.c, *.h, *.cu, *.cuh and *.cpp (the *.def tables are
# aligned by hand and left alone).  --check changes nothing and fails,
# naming each file, where a file does not follow it (what CI runs).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cu' '*.cuh' '*.cpp')
if [ "${1:-}" = --check ]; then
    bad=()
    for f in "${files[@]}"; do
        clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
    done
    if ((${#bad[@]})); then
        echo "format: ${#bad[@]} file(s) do not follow .clang-format (bash scripts/format.sh fixes them):"
        printf '  %s\n' "${bad[@]}"
        exit 1
    fi
    echo "format: ${#files[@]} files follow .clang-format"
else
    clang-format -i "${files[@]}"
fi
