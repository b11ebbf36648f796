#!/usr/bin/env bash
# The paper's Figs. 14-17 ("Noise in the Clouds", De Sensi et al.) for the eight shipped systems
# (calibration/*.h5: Daint, Alps, DEEP-EST, AWS, Azure HC44rs, Azure HB120rs_v2 (200 Gb/s), GCP,
# Oracle), each a one-file HTML report with boxplots of the runtime per node count (Figs. 14, 15)
# and the cost increase over the noiseless run against nodes (Figs. 16, 17):
#
#   * the 16 B dissemination (goal/dissemination_16B.goal, Schedgen's nwaydissemination without
#     compute, as the paper ran it) at 4, 64, 1024 and 16384 nodes;
#   * the 512 MiB pipelined ring (goal/paper_pipelinedring_512MiB.goal, one pass with segments of
#     D/P bytes, as the paper ran it) at 4, 16, 64, 256 and 1024 nodes;
#
# each in the four noise modes none, os, net, os+net, with --reps auto (32 repetitions, doubled up
# to the paper's 1000 until the cell is precise) and the paper's rules (rendezvous pays 3L, G per
# 16 MiB block: the defaults with --noise). The cost panels price the collective alone; the
# paper's Figs. 16 and 17 add a DGEMM before it (goal/dgemm128_dissemination_128KiB.goal,
# goal/dgemm8192_ring_512MiB.goal: set WITH_DGEMM=1 to run those too).
#
# One difference is on purpose: loggops-sim uses each system's far parameters for messages across
# switches in every mode, while the paper's simulator used the near ones in its none and os runs
# (VALIDATION.md, "Noiseless cells"), so for Alps, Daint, AWS and Oracle the noiseless baselines
# here are those of a Different Racks placement.
#
# Usage: examples/paper_figures.sh OUTDIR
#   Environment: BIN (default target/release/loggops-sim, built if missing), SEED (1),
#   DISS_NODES (4,64,1024,16384), RING_NODES (4,16,64,256,1024), REPS (auto), WITH_DGEMM (0).
# Writes OUTDIR/index.html, and per workload OUTDIR/<workload>.html (the report), .json (every
# repetition), .samples.csv and .runtime.png, .cost.png (the plots), and OUTDIR/times.txt (wall time per run).
# Wall time on two cores: see README.md ("The paper's figures").
set -euo pipefail
out=${1:?usage: examples/paper_figures.sh OUTDIR}
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/loggops-sim}
[ -x "$BIN" ] || cargo build --release
SEED=${SEED:-1}
REPS=${REPS:-auto}
DISS_NODES=${DISS_NODES:-4,64,1024,16384}
RING_NODES=${RING_NODES:-4,16,64,256,1024}
mkdir -p "$out"
: > "$out/times.txt"

run() { # name goal nodes
  local name=$1 goal=$2 nodes=$3 start end
  start=$(date +%s)
  echo "== $name: $goal at $nodes nodes, 8 systems, 4 noise modes, --reps $REPS" >&2
  "$BIN" --goal "$goal" --nodes "$nodes" --noise calibration/ \
    --noise-mode none,os,net,os+net --reps "$REPS" --seed "$SEED" \
    --format json --output "$out/$name.json" --samples "$out/$name.samples.csv" \
    --plot "runtime=$out/$name.runtime.png" --plot "cost=$out/$name.cost.png" \
    --report "$out/$name.html"
  end=$(date +%s)
  echo "$name $((end - start)) s" | tee -a "$out/times.txt" >&2
}

run fig14_dissemination_16B goal/dissemination_16B.goal "$DISS_NODES"
run fig15_pipelinedring_512MiB goal/paper_pipelinedring_512MiB.goal "$RING_NODES"
if [ "${WITH_DGEMM:-0}" = 1 ]; then
  run fig16_dgemm128_dissemination_128KiB goal/dgemm128_dissemination_128KiB.goal "$DISS_NODES"
  run fig17_dgemm8192_ring_512MiB goal/dgemm8192_ring_512MiB.goal "$RING_NODES"
fi

{
  echo '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
  echo '<title>loggops-sim: the paper'"'"'s Figs. 14-17</title>'
  echo '<style>body{font-family:sans-serif;max-width:50em;margin:2em auto;line-height:1.5}</style>'
  echo '</head><body><h1>The paper'"'"'s Figs. 14-17, simulated by loggops-sim</h1><ul>'
  for f in "$out"/fig*.html; do
    b=$(basename "$f")
    echo "<li><a href=\"$b\">$b</a></li>"
  done
  echo '</ul><p>Wall times (two cores):</p><pre>'
  cat "$out/times.txt"
  echo '</pre></body></html>'
} > "$out/index.html"
echo "wrote $out/index.html" >&2
