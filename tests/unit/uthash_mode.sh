#!/usr/bin/env bash
# uthash_mode.sh SRCROOT - no uthash table in cutaint runs in uthash's fatal
# out-of-memory mode, which calls exit(-1) inside the host program:
# - core/ct_hash.h is the only file that includes <uthash.h>, and it sets
#   HASH_NONFATAL_OOM before it does;
# - every HASH_ADD* is checked with ct_hash_added() within the next 3 lines.
set -euo pipefail
root=$1
cd "$root"
status=0
mapfile -t sources < <(find core shim tools tests -name '*.[ch]' | sort)

includers=$(grep -l '#include <uthash.h>' "${sources[@]}" || true)
if [ "$includers" != "core/ct_hash.h" ]; then
    echo "uthash.h must be included by core/ct_hash.h alone; included by: ${includers:-nothing}"
    status=1
fi
if ! grep -B20 '#include <uthash.h>' core/ct_hash.h | grep -q '#define HASH_NONFATAL_OOM 1'; then
    echo "core/ct_hash.h does not set HASH_NONFATAL_OOM before including uthash.h"
    status=1
fi

for f in "${sources[@]}"; do
    # HASH_ADD* calls (not macro definitions), each needing a check after it.
    awk -v file="$f" '
        /HASH_ADD[A-Z_]*\(/ && !/#define/ { pending = NR; line = $0; next }
        pending && /ct_hash_added\(/ { pending = 0 }
        pending && NR > pending + 3 { printf "%s:%d: unchecked insert: %s\n", file, pending, line; bad = 1; pending = 0 }
        END { if (pending) { printf "%s:%d: unchecked insert: %s\n", file, pending, line; bad = 1 } exit bad }
    ' "$f" || status=1
done
[ "$status" -eq 0 ] && echo "ok: one uthash header, non-fatal, every insert checked"
exit "$status"
