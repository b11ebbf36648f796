#!/usr/bin/env bash
# "Your own application" (README.md) end to end, on a schedule this repository writes itself:
# an explicit GOAL file with calc in ns ticks, as Schedgen writes a liballprof trace, then a
# noiseless run, LogGOPSim's view of the same file, and a noise study.
# Usage, from a fresh clone:  examples/own_application/run.sh [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-target/release/loggops-sim}
[ -x "$BIN" ] || cargo build --release
OUT=${1:-$(mktemp -d)}
mkdir -p "$OUT"
APP=$OUT/app.goal

echo "== 1. The 'trace': explicit GOAL text, 16 ranks, calc in ticks of 1 ns"
"$BIN" gen --goal examples/own_application/app.schedule --nodes 16 -o "$APP"
grep -m2 ': calc' "$APP"   # l1: calc 1234000 = 1.234 ms

echo "== 2. Noiseless, LogGOPSim's default parameters read as ns"
"$BIN" --goal "$APP"

echo "== 3. What LogGOPSim prints on the same file (integer ticks = ns here)"
"$BIN" --compat loggopsim -b --goal "$APP"

echo "== 4. AWS noise: the four noise modes, 100 repetitions each"
"$BIN" --goal "$APP" --noise calibration/aws.h5 --noise-mode none,os,net,os+net --reps 100 -q

echo "== 5. The same as JSON (times in integer ps, the tick as tick_ps)"
"$BIN" --goal "$APP" --noise calibration/aws.h5 --reps 100 -q --format json --output "$OUT/aws.json"
grep -m1 tick_ps "$OUT/aws.json"
echo "files in $OUT"
