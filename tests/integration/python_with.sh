# python_with.sh - sourced by tests that need a Debian python module: the
# machine's first python3 may be another build (pyenv's) without Debian's
# python3-* packages, which /usr/bin/python3 has.
# shellcheck shell=bash
# python_with MODULE: prints the first python3 that imports MODULE; fails
# (prints nothing) when none does.
python_with() {
    local candidate
    for candidate in python3 /usr/bin/python3; do
        if command -v "$candidate" >/dev/null && "$candidate" -c "import $1" 2>/dev/null; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}
