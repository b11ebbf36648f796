#!/usr/bin/env bash
# Runs every cell of the paper's sim_summary_shared.csv for Alps and Azure HPC (HC44rs) with
# loggops-sim and writes one result CSV and one samples CSV per job to OUTDIR.
# Usage: scripts/validation/run.sh OUTDIR [cheap|expensive|all] [REPS]
#   cheap:     every cell except dissemination at 16384 ranks and the 512 MiB ring at 1024 ranks
#   expensive: those two (about 8 and 15 minutes per noisy cell at 1000 reps on 2 cores)
# Then: python3 scripts/validation/compare.py OUTDIR  (markdown tables, pass/fail)
#
# Alps note: the paper's simulator ignores its scalar far parameters (--LogGOPS_G_far), so its
# `none` and `os` cells use the Same Rack G (79 ps/B) for every message; its `net` and
# `os+net` cells draw far messages from the Different Racks files (median 92 ps/B). Hence the
# Alps `none`/`os` jobs pass `-G 79ps` (see VALIDATION.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: run.sh OUTDIR [cheap|expensive|all] [REPS]}
TIER=${2:-all}
REPS=${3:-1000}
SEED=${SEED:-1}
BIN=${BIN:-target/release/loggops-sim}
[ -x "$BIN" ] || cargo build --release
mkdir -p "$OUT"

job() { # name goal nodes profile modes [extra flags...]
  local name=$1 goal=$2 nodes=$3 profile=$4 modes=$5
  shift 5
  local cmd=("$BIN" --goal "goal/$goal.goal" --nodes "$nodes" --noise "calibration/$profile.h5"
    --noise-mode "$modes" --model loggopsim --reps "$REPS" --seed "$SEED" --format csv -q
    --samples "$OUT/$name.samples.csv" --output "$OUT/$name.csv" "$@")
  echo "${cmd[*]}" >"$OUT/$name.cmd"
  echo "binary sha256 $(sha256sum "$BIN" | cut -c1-16), built $(date -r "$BIN" -u +%FT%TZ); repo $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')" >>"$OUT/$name.cmd"
  local t0=$SECONDS
  "${cmd[@]}"
  echo "$name: $((SECONDS - t0)) s" | tee -a "$OUT/walltimes.txt"
}

# Both systems: the four noise modes on the paper's at-scale rank counts.
four() { # tag goal nodes
  local tag=$1 goal=$2 nodes=$3
  job "alps_${tag}_near" "$goal" "$nodes" alps none,os -G 79ps
  job "alps_${tag}_net" "$goal" "$nodes" alps net,os+net
  job "azure_${tag}" "$goal" "$nodes" azure none,os,net,os+net
}

if [ "$TIER" = cheap ] || [ "$TIER" = all ]; then
  four diss16B dissemination_16B 4,64,1024
  four diss128KiB paper_dissemination_128KiB 4,64,1024
  four ring512MiB paper_pipelinedring_512MiB 4,16,64,256
  # The validation-campaign cells (os+net only).
  job alps_diss16B_small dissemination_16B 8,16,32 alps os+net
  job azure_diss16B_small dissemination_16B 8,16,32,128 azure os+net
  job alps_ring16MiB paper_pipelinedring_16MiB 4,8,16,32 alps os+net
  job azure_ring16MiB paper_pipelinedring_16MiB 4,8,16,32,128 azure os+net
fi
if [ "$TIER" = expensive ] || [ "$TIER" = all ]; then
  four diss16B_16K dissemination_16B 16384
  four diss128KiB_16K paper_dissemination_128KiB 16384
  four ring512MiB_1K paper_pipelinedring_512MiB 1024
fi
