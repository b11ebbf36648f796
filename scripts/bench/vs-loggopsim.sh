#!/usr/bin/env bash
# loggops-sim against a locally built LogGOPSim on the same inputs: whole-process CPU (user +
# system, from wait4) and peak RSS of each command, in interleaved rounds (reference and
# loggops-sim alternate, so a change in the shared machine's speed hits both alike). Prints, per
# case, the median CPU and peak RSS of each command and the ratio reference / loggops-sim.
#
# Usage: LOGGOPSIM=/path/to/LogGOPSim TXT2BIN=/path/to/txt2bin \
#          scripts/bench/vs-loggopsim.sh WORKDIR [collectives] [apps] [text] [startup]
#   WORKDIR   holds the inputs; missing ones are written there (`loggops-sim gen`, the shared
#             application traces of ../shared/apps unpacked with xz, and TXT2BIN for the .bin)
#   sets      collectives: dissemination 16 B at 16384 ranks, ring allreduce 16 MiB at 1024 and
#                          2048 ranks, both simulators reading the same .bin
#             apps:        the shared application traces (.bin), both reading the same file
#             text:        loggops-sim reading the GOAL text against TXT2BIN + LogGOPSim
#             startup:     a one-rank, one-calc file (start-up CPU and RSS)
#             (default: all four)
# Environment: LOGGOPSIM, TXT2BIN (required; this repository neither contains nor builds
#   LogGOPSim: build spcl/LogGOPSim yourself), SIM (default target/release/loggops-sim),
#   SHARED (default ../shared), ROUNDS (override every case's round count).
# Needs python3 (posix_spawn, wait4), GNU time at /usr/bin/time, and xz. It only reports: no
# timing is asserted anywhere.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${1:?usage: vs-loggopsim.sh WORKDIR [collectives] [apps] [text] [startup]}
shift
SETS=${*:-collectives apps text startup}
LGS=${LOGGOPSIM:?set LOGGOPSIM to a locally built LogGOPSim binary}
T2B=${TXT2BIN:?set TXT2BIN to LogGOPSim\'s txt2bin}
SIM=${SIM:-$ROOT/target/release/loggops-sim}
SHARED=${SHARED:-$ROOT/../shared}
[ -x "$SIM" ] || { echo "no $SIM: run cargo build --release first" >&2; exit 2; }
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
RES=$WORK/cpu.txt
RSS=$WORK/rss.txt
: >"$RES"
: >"$RSS"

# inputs ---------------------------------------------------------------------------------------
bin_of() { # NAME: NAME.goal -> NAME.bin with txt2bin, once
  [ -s "$WORK/$1.bin" ] || "$T2B" -i "$WORK/$1.goal" -o "$WORK/$1.bin" >/dev/null
}
gen() { # NAME collective nodes size
  [ -s "$WORK/$1.goal" ] || "$SIM" gen "$2" --nodes "$3" --size "$4" -o "$WORK/$1.goal" >/dev/null
  bin_of "$1"
}
app() { # NAME (a folder of ../shared/apps)
  if [ ! -s "$WORK/$1.goal" ]; then
    [ -f "$SHARED/apps/$1/$1.goal.xz" ] || { echo "skip $1: no $SHARED/apps/$1" >&2; return 1; }
    xz -dc "$SHARED/apps/$1/$1.goal.xz" >"$WORK/$1.goal"
  fi
  bin_of "$1"
}

# CPU of one run: LABEL CMD... -> "LABEL cpu_ms" appended to results.txt: the child's user +
# system time from wait4 (what /usr/bin/time reads) in microseconds, since GNU time prints it in
# 10 ms steps, too coarse for the application traces. posix_spawn, not fork, so that the
# Python parent's page tables are not copied into the measured CPU.
cpu() {
  local label=$1
  shift
  python3 -c '
import os, sys
null = os.open(os.devnull, os.O_WRONLY)
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, null, 1)])
_, status, ru = os.wait4(pid, 0)
if status != 0:
    sys.exit("exit status %d: %s" % (status, " ".join(sys.argv[2:])))
print("%s %.3f" % (sys.argv[1], (ru.ru_utime + ru.ru_stime) * 1000))
' "$label" "$@" >>"$RES"
}
# Peak RSS of one run, from /usr/bin/time in kB (a child spawned by Python would report
# Python's own peak: Linux keeps the larger of the pre-exec and post-exec peaks).
rss() {
  local label=$1
  shift
  /usr/bin/time -f '%M' -o "$WORK/.rss" "$@" >/dev/null
  echo "$label $(cat "$WORK/.rss")" >>"$RSS"
}

# CASE ROUNDS REF_LABEL 'REF_CMD' LABEL 'CMD' [...]: interleaved rounds, then medians. Each CMD is
# shell words (quoted paths), run directly, not through a shell, unless it says `sh -c`.
run_case() {
  local name=$1 rounds=${ROUNDS:-$2}
  shift 2
  local -a pairs=("$@")
  for ((i = 0; i < ${#pairs[@]}; i += 2)); do # one run each for peak RSS, also warming the cache
    eval "set -- ${pairs[i + 1]}"
    rss "$name/${pairs[i]}" "$@"
  done
  for ((r = 0; r < rounds; r++)); do
    for ((i = 0; i < ${#pairs[@]}; i += 2)); do
      eval "set -- ${pairs[i + 1]}"
      cpu "$name/${pairs[i]}" "$@"
    done
  done
  local ref_label="$name/${pairs[0]}"
  local ref
  ref=$(median "$ref_label" 2)
  for ((i = 0; i < ${#pairs[@]}; i += 2)); do
    local l="$name/${pairs[i]}" cpu rss
    cpu=$(median "$l" 2)
    rss=$(awk -v l="$l" '$1 == l { print $2 / 1000 }' "$RSS")
    printf '%-34s CPU median %9.2f ms [%s]  peak RSS %7.1f MB  ref/this %5.2fx  (%d rounds)\n' \
      "$l" "$cpu" "$(range "$l")" "$rss" \
      "$(awk -v a="$ref" -v b="$cpu" 'BEGIN { print a / b }')" "$rounds"
  done
}
median() { # LABEL COLUMN (of cpu.txt)
  awk -v l="$1" -v c="$2" '$1 == l { print $c }' "$RES" | sort -g |
    awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
range() { awk -v l="$1" '$1 == l { printf "%.1f\n", $2 }' "$RES" | sort -g | sed -n '1p;$p' | paste -sd- ; }

echo "# $(date -u '+%F %T UTC'); $(uptime | sed 's/.*load/load/'); loggops-sim $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "# CPU = user + system of the whole process (ms); ratio = reference median / this median"
for set in $SETS; do
  case $set in
  collectives)
    gen diss16k dissemination 16384 16
    gen ring1k allreduce_ring 1024 16MiB
    gen ring2k allreduce_ring 2048 16MiB
    for f in diss16k:7 ring1k:5 ring2k:3; do
      n=${f%:*}
      run_case "$n.bin" "${f#*:}" LogGOPSim "'$LGS' -f '$WORK/$n.bin'" \
        loggops-sim "'$SIM' --goal '$WORK/$n.bin'" \
        loggops-sim-compat "'$SIM' --compat loggopsim --goal '$WORK/$n.bin'"
    done
    ;;
  apps)
    for n in npb_cg_S_p8 lulesh_p27_s10_i20 npb_mg_W_p16 npb_sp_S_p9 npb_lu_S_p8; do
      app "$n" || continue
      run_case "$n.bin" 11 LogGOPSim "'$LGS' -f '$WORK/$n.bin'" \
        loggops-sim "'$SIM' --goal '$WORK/$n.bin'"
    done
    ;;
  text)
    for n in npb_cg_S_p8 lulesh_p27_s10_i20 npb_mg_W_p16; do
      app "$n" || continue
      run_case "$n.goal" 11 txt2bin+LogGOPSim \
        "sh -c \"'$T2B' -i '$WORK/$n.goal' -o '$WORK/.t.bin' >/dev/null && '$LGS' -f '$WORK/.t.bin'\"" \
        loggops-sim "'$SIM' --goal '$WORK/$n.goal'"
    done
    gen diss16k dissemination 16384 16
    run_case diss16k.goal 5 txt2bin+LogGOPSim \
      "sh -c \"'$T2B' -i '$WORK/diss16k.goal' -o '$WORK/.t.bin' >/dev/null && '$LGS' -f '$WORK/.t.bin'\"" \
      loggops-sim "'$SIM' --goal '$WORK/diss16k.goal'"
    rm -f "$WORK/.t.bin"
    ;;
  startup)
    printf 'num_ranks 1\nrank 0 {\nl1: calc 5\n}\n' >"$WORK/one.goal"
    bin_of one
    run_case one.bin 21 LogGOPSim "'$LGS' -f '$WORK/one.bin'" loggops-sim "'$SIM' --goal '$WORK/one.bin'"
    ;;
  *) echo "unknown set $set" >&2; exit 2 ;;
  esac
done
echo "# done $(date -u '+%F %T UTC'); $(uptime | sed 's/.*load/load/')"
