#!/usr/bin/env bash
# The Slurm + torchrun recipe (deploy/slurm/train.sbatch), run on this
# machine with stand-ins for srun, scontrol and torchrun (which start the
# given command on one node, and N copies of the training program with
# RANK set, as they would):
#   slurm.sh SRC_DIR CUTAINT CLIENT FAKECUDA_DIR
# Rank 0 reads bytes a failed launch never wrote; rank 1 loses its context.
# - one report per rank, none from the launchers;
# - rank 1 leaves at once (CUTAINT_ON_CONTEXT_LOSS=exit: no later call) with 70;
# - the job fails, and `cutaint report` merges both ranks into one tree.
set -euo pipefail
src=$1 tool=$2 client=$3 fakecuda=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$work/bin"

cat >"$work/bin/srun" <<'SH'
#!/usr/bin/env bash
while [ "${1:-}" != "${1#--}" ]; do shift; done
SLURMD_NODENAME=node1 exec "$@"
SH
cat >"$work/bin/scontrol" <<'SH'
#!/usr/bin/env bash
echo node1
SH
cat >"$work/bin/torchrun" <<'SH'
#!/usr/bin/env bash
n=1
while [ "${1:-}" != "${1#--}" ]; do
    case $1 in --nproc-per-node=*) n=${1#*=} ;; esac
    shift
done
pids=()
for ((rank = 0; rank < n; rank++)); do RANK=$rank "$@" & pids+=($!); done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
exit "$status"
SH
cat >"$work/bin/train" <<SH
#!/usr/bin/env bash
case \$RANK in
    0) exec "$client" two_hops ;;
    *) exec "$client" crash ;;
esac
SH
chmod +x "$work/bin"/*

status=0
env PATH="$work/bin:$PATH" LD_LIBRARY_PATH="$fakecuda" CUTAINT="$tool" CUTAINT_REPORTS="$work/reports" \
    GPUS_PER_NODE=2 SLURM_JOB_ID=42 bash "$src/deploy/slurm/train.sbatch" train >"$work/out" 2>&1 || status=$?
cat "$work/out"
[ "$status" -eq 70 ] || fail "the job exited $status, want 70 (the dead rank's)"
reports=("$work"/reports/rank-node1-*.jsonl)
[ "${#reports[@]}" -eq 2 ] || fail "want one report per rank, have: ${reports[*]}"
grep -q '^sync again:' "$work/out" && fail "the dead rank ran on after its context was lost"
grep -q 'overall: 2 processes' "$work/out" || fail "cutaint report did not merge both ranks"
grep -qi 'context lost' "$work/out" || fail "the merged tree does not show the lost context"
echo "ok: one report per rank, the dead rank left at once with 70, cutaint report merged them"
