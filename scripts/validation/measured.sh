#!/usr/bin/env bash
# Runs `loggops-sim validate` on the measured collectives of ../shared/measured (VALIDATION.md,
# "Measured collectives") and prints the tables. Usage: scripts/validation/measured.sh [OUTDIR]
# Each run writes OUTDIR/<system>_<measure>.json; OUTDIR/commands.txt has the exact commands.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-out-measured}
S=${SHARED:-../shared}
BIN=${BIN:-target/release/loggops-sim}
[ -x "$BIN" ] || cargo build --release
mkdir -p "$OUT"
: > "$OUT/commands.txt"
run() { # name measured-dir profile measure [extra flags]
  local name=$1 dir=$2 profile=$3 measure=$4
  shift 4
  local cmd=("$BIN" validate "$S/measured/$dir" --noise "$profile" --measure "$measure" \
    --reps 1000 --seed 1 --format json -q "$@" --output "$OUT/${name}_${measure}.json")
  echo "${cmd[*]}" >> "$OUT/commands.txt"
  "${cmd[@]}"
}
for m in collective barrier; do
  run azure azure_hc44rs_2022_04_01_11_12_04 calibration/paper/azure.h5 "$m"
  run daint_night daint_2022_03_30_00_54_29 calibration/paper/daint.h5 "$m"
  run daint_afternoon daint_2022_03_30_16_28_06 calibration/paper/daint.h5 "$m"
done
python3 scripts/validation/measured_md.py "$OUT"
