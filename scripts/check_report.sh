#!/usr/bin/env bash
# Renders a real HTML report in headless Chromium (Debian's `chromium`) and checks what a
# browser sees: a small sweep (two workloads, two systems, two node counts, noiseless and noisy)
# is written with --report, the page must reference nothing outside itself, Chromium's DOM must
# hold the settings, the results table, the three plots and the column guide, and the
# screenshot (written to OUTDIR/report.png for a person to look at) must not be blank.
#
# Usage: scripts/check_report.sh [OUTDIR]   (default: a temporary directory, removed after)
#   BIN: the loggops-sim binary (default target/release/loggops-sim, else target/debug/...).
# Exits 0 with a message when Chromium is not installed (apt-get install chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "check_report.sh: skipped, chromium not found (apt-get install chromium)" >&2
  exit 0
fi
BIN=${BIN:-}
if [ -z "$BIN" ]; then
  for b in target/release/loggops-sim target/debug/loggops-sim; do
    [ -x "$b" ] && { BIN=$b; break; }
  done
fi
[ -n "$BIN" ] || { cargo build --quiet; BIN=target/debug/loggops-sim; }

profile=$(mktemp -d)
tmp_out=
if [ -n "${1:-}" ]; then
  out=$1
  mkdir -p "$out"
else
  out=$(mktemp -d)
  tmp_out=$out
fi
trap 'rm -rf "$profile" $tmp_out' EXIT
fail() { echo "check_report.sh: $*" >&2; exit 1; }

"$BIN" --goal goal/dissemination_16B.goal,goal/paper_pipelinedring_512MiB.goal --nodes 4,16 \
  --noise calibration/aws.h5,calibration/daint.h5 --noise-mode none,os,os+net --reps 24 -q \
  --report "$out/report.html" --output "$out/table.txt"

# Self-contained: no scripts, style sheets, images or fonts from elsewhere.
if grep -Eo '(src|href)="[^"#][^"]*"|url\([^)]*\)|@import' "$out/report.html" | grep -q .; then
  fail "the report loads something from outside itself: $(grep -Eo '(src|href)="[^"#][^"]*"|url\([^)]*\)|@import' "$out/report.html" | head -3)"
fi

flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --user-data-dir="$profile" --hide-scrollbars)
page="file://$(cd "$out" && pwd)/report.html"
"$browser" "${flags[@]}" --dump-dom "$page" 2>/dev/null > "$out/dom.html"
for want in '<h2>Run</h2>' '<h2>Systems</h2>' '<h2>Results</h2>' '<h2>Plots</h2>' \
  '<h2>Columns</h2>' '<h2>Provenance of the profiles</h2>' 'queued' 'calibration/aws.h5' \
  'calibration/daint.h5' 'x-mean' 'cost+'; do
  grep -qF -- "$want" "$out/dom.html" || fail "the rendered page lacks $want"
done
svgs=$(grep -o '<svg' "$out/dom.html" | wc -l)
[ "$svgs" -ge 3 ] || fail "the rendered page has $svgs plots, expected 3 (runtime, cost, ECDF)"

"$browser" "${flags[@]}" --window-size=1400,4000 --screenshot="$(cd "$out" && pwd)/report.png" \
  "$page" 2>/dev/null
[ -s "$out/report.png" ] || fail "no screenshot written"
# A blank page compresses to a few kB; a rendered report with tables and plots to far more.
size=$(stat -c %s "$out/report.png")
[ "$size" -gt 100000 ] || fail "the screenshot is $size bytes: blank?"
echo "check_report.sh: rendered $page ($svgs plots); screenshot $out/report.png ($size bytes)"
