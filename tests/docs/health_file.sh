#!/usr/bin/env bash
# The health file is described once, in docs/REPORT.md's section "The
# health file", and the other docs link there:
#   health_file.sh SOURCE_DIR
# - that section names every line shim/fault.c writes into the file: the
#   marker (core/files.h's CT_HEALTH_MARKER), the reason, each "prime
#   suspect: " line and the "more prime suspects: see the report" line;
# - README.md, docs/DEPLOY.md and docs/DESIGN.md link to
#   REPORT.md#the-health-file; man/libcutaint.7 names docs/REPORT.md and
#   the section;
# - no other doc counts the file's lines ("two lines").
# Fails naming the doc and what it lacks.
set -uo pipefail
src=$1
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

section=$(awk '/^## The health file/ { on = 1; next } on && /^## / { exit } on' "$src/docs/REPORT.md")
[ -n "$section" ] || fail "docs/REPORT.md has no section '## The health file'"
marker=$(sed -n 's/^#define CT_HEALTH_MARKER "\(.*\)"$/\1/p' "$src/core/files.h")
[ -n "$marker" ] || fail "core/files.h defines no CT_HEALTH_MARKER"
grep -qF -- "$marker" <<<"$section" || fail "docs/REPORT.md, 'The health file', does not give the marker '$marker'"
grep -qF "reason" <<<"$section" || fail "docs/REPORT.md, 'The health file', does not name the reason"
for line in "prime suspect: " "more prime suspects: see the report"; do
    grep -qF -- "$line" "$src/shim/fault.c" || fail "shim/fault.c writes no '$line' line: update this check and the docs"
    grep -qF -- "$line" <<<"$section" || fail "docs/REPORT.md, 'The health file', does not describe the '$line' line"
done
for doc in README.md docs/DEPLOY.md docs/DESIGN.md; do
    grep -q 'REPORT.md#the-health-file' "$src/$doc" || fail "$doc does not link to docs/REPORT.md, 'The health file'"
done
if ! grep -q 'docs/REPORT.md' "$src/man/libcutaint.7" || ! grep -q 'section "The health file"' "$src/man/libcutaint.7"; then
    fail "man/libcutaint.7 does not point to docs/REPORT.md, section \"The health file\""
fi
for doc in README.md RELIABILITY.md "$src"/docs/*.md "$src"/man/*; do
    doc=${doc#"$src"/}
    [ "$doc" = docs/REPORT.md ] && continue
    ! grep -qiE 'health file (is|has) (two|2|three|3) lines' "$src/$doc" || fail "$doc counts the health file's lines"
done
grep -qiE 'It is two lines' <<<"$section" && fail "docs/REPORT.md still says the health file is two lines"
exit $status
