#!/usr/bin/env bash
# Submits sweep.sbatch as a job array of TASKS tasks (default 8) and merge.sbatch after it
# (afterok: only when every task succeeded). Extra arguments go to both sbatch calls (e.g.
# --partition=NAME, --account=NAME). Prints the two job ids.
# Usage: examples/slurm/submit.sh [sbatch options...]   Environment: TASKS, and LOGGOPS_ARGS,
# LOGGOPS_BIN, LOGGOPS_OUT, LOGGOPS_RESULT as the two scripts read them.
set -euo pipefail
here=$(dirname "$0")
TASKS=${TASKS:-8}
array=$(sbatch --parsable --array="1-$TASKS" "$@" "$here/sweep.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterok:$array" "$@" "$here/merge.sbatch")
merge=${merge%%;*}
echo "array job $array ($TASKS tasks), merge job $merge"
