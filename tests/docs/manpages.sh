#!/usr/bin/env bash
# The manual pages in README.md and tools/cutaint/README.md are what
# `cutaint COMMAND --help` prints, word for word:
#   manpages.sh CUTAINT SOURCE_DIR
# Fails naming the page and showing the difference.
set -euo pipefail
tool=$1 src=$2
status=0
page() { # FILE HEADER: the first fenced block after the header line
    awk -v h="$2" '$0 == h { f = 1; next } f && /^```/ { if (++c == 2) exit; next } f && c == 1' "$1"
}
for doc in "README.md:### cutaint" "tools/cutaint/README.md:## cutaint"; do
    file=${doc%%:*} header=${doc#*:}
    for cmd in run report demo; do
        if ! diff -u <("$tool" "$cmd" --help) <(page "$src/$file" "$header $cmd") >&2; then
            echo "FAIL: $file, '$header $cmd' differs from 'cutaint $cmd --help' (- help, + $file)" >&2
            status=1
        fi
    done
done
[ "$status" -eq 0 ] && echo "ok: every manual page matches --help"
exit "$status"
