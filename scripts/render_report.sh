#!/usr/bin/env bash
# Renders an HTML report (or an SVG plot) in headless Chromium and saves a screenshot, to look
# at what a person will see. Needs Debian's `chromium` (apt-get install chromium).
# Usage: scripts/render_report.sh FILE.html|FILE.svg OUT.png [WIDTH [HEIGHT]]
set -euo pipefail
in=${1:?usage: scripts/render_report.sh FILE.html|FILE.svg OUT.png [WIDTH [HEIGHT]]}
out=${2:?usage: scripts/render_report.sh FILE.html|FILE.svg OUT.png [WIDTH [HEIGHT]]}
width=${3:-1400}
height=${4:-3000}
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "render_report.sh: chromium not found (apt-get install chromium)" >&2; exit 2; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
abs_in=$(cd "$(dirname "$in")" && pwd)/$(basename "$in")
case "$out" in /*) abs_out=$out ;; *) abs_out=$PWD/$out ;; esac
# No network: the report must render from the file alone.
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars --window-size="$width,$height" \
  --screenshot="$abs_out" "file://$abs_in" 2>/dev/null
[ -s "$abs_out" ] || { echo "render_report.sh: no screenshot written" >&2; exit 1; }
echo "$abs_out"
