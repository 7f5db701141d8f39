#!/usr/bin/env bash
# Checks a CUTAINT_METRICS_FILE with real Prometheus parsers:
#   metrics_check.sh FILE [EXPECT...]
# - Debian's promtool (package prometheus): `promtool check metrics`, the
#   parser and linter Prometheus itself uses;
# - python3-prometheus-client's text parser: every family has HELP and a
#   TYPE, and each EXPECT holds: 'NAME VALUE' or 'NAME{LABEL=VALUE;...} VALUE',
#   a sample of that name whose labels include those, with that value
#   (label values here may not contain ';' or '=').
# Exit 0 all good, 1 a check failed (the reason on stderr), 77 no parser to
# run (scripts/setup.sh installs both).
set -euo pipefail
file=$1; shift
checked=0
if command -v promtool >/dev/null; then
    promtool check metrics <"$file" >&2 || { echo "FAIL: promtool check metrics rejects $file" >&2; exit 1; }
    checked=1
fi
# shellcheck source=tests/integration/python_with.sh
. "$(dirname "$0")/python_with.sh"
if ! python=$(python_with prometheus_client); then
    [ "$checked" -eq 1 ] && [ $# -eq 0 ] && exit 0
    echo "skipped: no python3 with prometheus_client (Debian package python3-prometheus-client)" >&2
    exit 77
fi
"$python" - "$file" "$@" <<'PY'
import re, sys
from prometheus_client.parser import text_string_to_metric_families

path, expects = sys.argv[1], sys.argv[2:]
text = open(path, encoding="utf-8").read()
families = list(text_string_to_metric_families(text))
samples = [s for f in families for s in f.samples]
ok = True
for f in families:
    if f.type == "unknown" or not f.documentation:
        print(f"FAIL: {f.name} lacks TYPE or HELP", file=sys.stderr)
        ok = False
for e in expects:
    m = re.fullmatch(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)", e)
    if not m:
        sys.exit(f"bad expectation: {e}")
    name, labels, value = m.group(1), m.group(2), float(m.group(3))
    want = dict(kv.split("=", 1) for kv in labels.split(";")) if labels else {}
    hits = [s for s in samples if s.name == name and all(s.labels.get(k) == v for k, v in want.items())]
    if not any(s.value == value for s in hits):
        print(f"FAIL: want {e}; have {[(s.labels, s.value) for s in hits] or 'no such sample'}", file=sys.stderr)
        ok = False
sys.exit(0 if ok else 1)
PY
