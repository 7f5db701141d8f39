#!/usr/bin/env bash
# The Kubernetes recipe (deploy/kubernetes/inference-pod.yaml), as far as a
# machine without a cluster can check it:
#   kubernetes.sh SRC_DIR SHIM CLIENT FAKECUDA_DIR
# - the YAML parses (python3-yaml) into a Pod whose container preloads the
#   library from a mounted volume, writes %p reports and metrics onto
#   volumes, names a health file with %p and probes it with an exec
#   liveness probe;
# - that probe, run with the pod's environment (paths moved into a temporary
#   directory), passes for a healthy process and fails once a process lost
#   its context - and the probe's own sh, loading the shim, leaves nothing.
# Skipped (77) without a python3 that has yaml.
set -euo pipefail
src=$1 shim=$2 client=$3 fakecuda=$4
# shellcheck source=tests/integration/python_with.sh
. "$(dirname "$0")/../integration/python_with.sh"
python=$(python_with yaml) || { echo "skipped: no python3 with yaml (Debian package python3-yaml)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Structure, and the container's environment and probe as shell words.
"$python" - "$src/deploy/kubernetes/inference-pod.yaml" "$work" <<'PY'
import os, shlex, sys, yaml
path, work = sys.argv[1], sys.argv[2]
pod = yaml.safe_load(open(path))
def need(cond, why):
    if not cond:
        sys.exit(f"FAIL: {path}: {why}")
need(pod.get("kind") == "Pod" and pod.get("apiVersion") == "v1", "not a v1 Pod")
spec = pod["spec"]
volumes = {v["name"]: v for v in spec["volumes"]}
(c,) = spec["containers"]
mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
env = {}
for e in c["env"]:
    need("value" in e or "valueFrom" in e, f"env {e['name']} has no value")
    if "value" in e:
        # Kubernetes expands $(VAR) of variables defined before.
        v = e["value"]
        for k, old in env.items():
            v = v.replace(f"$({k})", old)
        need("$(" not in v, f"{e['name']} uses a variable not defined before it")
        env[e["name"]] = v
    else:
        env[e["name"]] = "pod-0"
def on_volume(p):
    return any(p.startswith(m.rstrip("/") + "/") and mounts[m] in volumes for m in mounts)
need(env.get("LD_PRELOAD", "").endswith("libcutaint.so") and on_volume(env["LD_PRELOAD"]),
     "LD_PRELOAD must name libcutaint.so on a mounted volume")
for var in ("CUTAINT_REPORT", "CUTAINT_METRICS_FILE"):
    need("%p" in env.get(var, ""), f"{var} needs %p: one file per process")
    need(on_volume(env[var]), f"{var} must be on a volume, to outlive the container")
need("%p" in env.get("CUTAINT_HEALTH_FILE", ""), "CUTAINT_HEALTH_FILE needs %p (multi-process pods)")
need(not on_volume(env["CUTAINT_HEALTH_FILE"]), "the health file must not outlive a restarted container")
probe = c["livenessProbe"]["exec"]["command"]
need(any("cutaint-health" in w for w in probe), "the liveness probe must look at the health files")
for init in spec.get("initContainers", []):
    for m in init.get("volumeMounts", []):
        need(m["name"] in volumes, f"init container mounts unknown volume {m['name']}")
# For the shell below: the pod's paths moved into the work directory.
def moved(v):
    for pod_path, here in (("/tmp/cutaint-health", "tmp/cutaint-health"), ("/var/log/cutaint", "log"),
                           ("/var/lib/node_exporter/textfile", "textfile")):
        if v.startswith(pod_path) or f" {pod_path}" in v:
            return v.replace(pod_path, f"{work}/{here}")
    return v
with open(f"{work}/env.sh", "w") as f:
    for var in ("CUTAINT_REPORT", "CUTAINT_METRICS_FILE", "CUTAINT_HEALTH_FILE", "CUTAINT_ON_CONTEXT_LOSS"):
        f.write(f"export {var}={shlex.quote(moved(env[var]))}\n")
    f.write("probe=(" + " ".join(shlex.quote(moved(w)) for w in probe) + ")\n")
PY
mkdir -p "$work/log" "$work/textfile" "$work/tmp"
probe=()
# shellcheck source=/dev/null
. "$work/env.sh"
export LD_PRELOAD=$shim LD_LIBRARY_PATH=$fakecuda
fail() { echo "FAIL: $*"; exit 1; }

"${probe[@]}" || fail "the probe fails before anything happened"
left=$(find "$work/log" "$work/textfile" "$work/tmp" -mindepth 1)
[ -z "$left" ] || fail "the probe's sh left files: $left"
"$client" happy >/dev/null 2>&1 || fail "a healthy client failed"
"${probe[@]}" || fail "the probe fails for a healthy process"
status=0
"$client" crash >/dev/null 2>&1 || status=$?
[ "$status" -eq 70 ] || fail "a lost context exited $status, not 70"
! "${probe[@]}" || fail "the probe passes after a process lost its context"
ls "$work"/log/pod-0-*.jsonl >/dev/null || fail "no per-process report on the reports volume"
ls "$work"/textfile/cutaint-pod-0-*.prom >/dev/null || fail "no per-process metrics file"
echo "ok: the pod spec parses; its probe passes while healthy and fails after a lost context"
