#!/usr/bin/env bash
# Install what building and testing cutaint needs, if it is missing.
# Debian/Ubuntu packages only; the CUDA Toolkit headers must already be there
# (cutaint uses cuda.h only: it never links the driver).  Then the pinned
# Python clients of requirements-python.txt into .venv-python/ (pip, PyPI;
# PyTorch's requirements-torch.txt into .venv-torch/ with CUTAINT_TORCH=1):
# a failure there is one warning, and the tests that need them are skipped.
set -euo pipefail

packages=(meson ninja-build gcc pkg-config uthash-dev libcriterion-dev libiberty-dev libzstd-dev
          graphviz valgrind python3 python3-venv shellcheck cppcheck clang-format clang libclang-rt-14-dev groff-base
          ffmpeg nettle-dev prometheus python3-prometheus-client python3-yaml systemd)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cuda_include=${CUDA_INCLUDE:-/usr/local/cuda/include}
if [ ! -f "$cuda_include/cuda.h" ]; then
    echo "setup: the CUDA Toolkit headers are absent ($cuda_include/cuda.h not found)." >&2
    echo "setup: install the CUDA Toolkit (headers are enough) or set CUDA_INCLUDE=DIR." >&2
    exit 1
fi

# The Python clients (tests/python/, docs/PYTHON.md): a virtual environment
# per requirements file, remade only when that file changed (its copy in
# the environment says what was installed).  PyTorch's (3 GB of wheels,
# requirements-torch.txt into .venv-torch/) only when CUTAINT_TORCH=1, as
# .ci/run sets it: the README's test command stays small.
repo=$(cd "$(dirname "$0")/.." && pwd)

python_clients() { # requirements-file venv-dir
    local requirements=$repo/$1 venv=$repo/$2
    cmp -s "$requirements" "$venv/$1" && return 0
    echo "setup: installing the Python clients of $1 into $2/"
    rm -rf "$venv"
    if python3 -m venv "$venv" &&
        "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check -r "$requirements"; then
        cp "$requirements" "$venv/$1"
    else
        echo "setup: warning: the Python clients of $1 did not install; their tests will be skipped" >&2
    fi
}

python_clients requirements-python.txt .venv-python
if [ "${CUTAINT_TORCH:-0}" = 1 ]; then
    python_clients requirements-torch.txt .venv-torch
fi
