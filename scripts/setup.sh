#!/usr/bin/env bash
# Install what building and testing cutaint needs, if it is missing.
# Debian/Ubuntu packages only; the CUDA Toolkit headers must already be there
# (cutaint uses cuda.h only: it never links the driver).  Then the pinned
# Python clients of requirements-python.txt into .venv-python/ (pip, PyPI):
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
# of their own, remade only when requirements-python.txt changed (its copy
# in the environment says what was installed).
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=$repo/.venv-python
if ! cmp -s "$repo/requirements-python.txt" "$venv/requirements-python.txt"; then
    echo "setup: installing the Python clients of requirements-python.txt into .venv-python/"
    rm -rf "$venv"
    if python3 -m venv "$venv" &&
        "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check -r "$repo/requirements-python.txt"; then
        cp "$repo/requirements-python.txt" "$venv/requirements-python.txt"
    else
        echo "setup: warning: the Python clients did not install; their tests will be skipped" >&2
    fi
fi
