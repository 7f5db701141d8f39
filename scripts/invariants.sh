#!/usr/bin/env bash
# scripts/invariants.sh [-u] [PATH...]: for each C file (default: every
# tracked *.c and *.h) whose opening comment states invariants, how many it
# states and how many asserts back them.  A stated invariant is a bullet
# ("- ...") of the comment's "Invariant(s)" section, or the section's own
# sentence where it has no bullets.  The asserts counted are the file's
# assert( and _Static_assert( calls (an invariant of the build is backed
# at compile time); for a header, those of its .c twin too (a header
# states what its implementation keeps), and for a file whose opening
# comment has an "Asserted in: a.c, b.c." line, those files' too (a
# header without a twin, kept by other files).  Prints one line per file
# (invariants, asserts, path), then the totals; -u lists only the files
# whose invariants have no assert behind them.  (An assert per invariant
# is not required - one check may keep several - so the last figure only
# says where to look.)  Reading only; exit 0.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
unbacked_only=0
if [ "${1:-}" = -u ]; then
    unbacked_only=1
    shift
fi
if (($#)); then
    files=("$@")
else
    mapfile -t files < <(git ls-files '*.c' '*.h' | grep -v '^tests/')
fi

# The number of invariants the opening comment of $1 states (0: none).
stated() {
    awk '
        NR == 1 && !/^\/\*/ { exit }
        { line = $0 }
        in_section && /^ \* [A-Z][a-z]+( [a-z]+)*:/ && !/Invariant/ { in_section = 0 }
        /Invariants?( [^:]*)?:/ { in_section = 1; sentence = 1; bullets = 0 }
        in_section && /^ \* +- / { bullets++ }
        /\*\// { exit }
        END { if (sentence) print (bullets ? bullets : 1); else print 0 }
    ' "$1"
}

assert_call='(^|[^A-Za-z0-9_])(_Static_|static_)?assert\('

# The assert( calls of $1 (and of its .c twin when $1 is a header).
asserts() {
    local n twin
    n=$(grep -cE "$assert_call" "$1" || true)
    twin=${1%.h}.c
    if [[ $1 == *.h && -f $twin ]]; then
        n=$((n + $(grep -cE "$assert_call" "$twin" || true)))
    fi
    local keeper keepers
    mapfile -t keepers < <(awk '/\*\//{exit} /Asserted in:/{sub(/.*Asserted in:/, ""); n = split($0, w, /[ ,]+/);
        for (i = 1; i <= n; i++) if (w[i] ~ /\.c\.?$/) { sub(/\.$/, "", w[i]); print w[i] } }' "$1")
    for keeper in "${keepers[@]}"; do
        keeper=$(dirname "$1")/$keeper
        [ -f "$keeper" ] && n=$((n + $(grep -cE "$assert_call" "$keeper" || true)))
    done
    echo "$n"
}

with=0 unbacked=0 fewer=0 total_stated=0
for f in "${files[@]}"; do
    s=$(stated "$f")
    ((s > 0)) || continue
    a=$(asserts "$f")
    with=$((with + 1))
    total_stated=$((total_stated + s))
    ((a > 0)) || unbacked=$((unbacked + 1))
    ((a >= s)) || fewer=$((fewer + 1))
    if ((!unbacked_only || a == 0)); then
        printf '%3d %3d  %s\n' "$s" "$a" "$f"
    fi
done
echo "files stating invariants: $with; invariants stated: $total_stated; files with none backed by an assert: $unbacked; files with fewer asserts than invariants: $fewer"
