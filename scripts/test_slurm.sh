#!/usr/bin/env bash
# Sharded sweeps on a real Slurm: starts a one-node cluster on localhost (munged, slurmctld and
# slurmd, all in a temporary state directory, talking over loopback), submits
# examples/slurm/sweep.sbatch as a job array and merge.sbatch after it (examples/slurm/submit.sh,
# as a user would), waits, and checks that the merged JSON, CSV and samples are byte for byte
# those of the same sweep run on this machine in one process. Stops what it started and removes
# the state directory on exit, whatever happens.
#
# Installs Debian's slurm-wlm and munge (apt-get) when slurmctld is missing; needs root for that
# and for running the daemons as root (its own slurm.conf sets SlurmUser=root), and says SKIPPED
# (exit status 0) without. Takes about 10 s once installed (the sweep is small: the point is the
# plumbing); .ci/run runs it.
#
# Usage: scripts/test_slurm.sh    Environment: BIN (default: the newer of target/release and
# target/debug/loggops-sim), TASKS (array size, default 4), KEEP=1 keeps the state directory.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  echo "test_slurm.sh: installing slurm-wlm and munge from Debian" >&2
  if [ "$(id -u)" != 0 ]; then
    echo "test_slurm.sh: SKIPPED: slurm-wlm is not installed and installing it needs root" >&2
    exit 0
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y --no-install-recommends slurm-wlm munge >/dev/null &&
    ! { apt-get update >/dev/null && apt-get install -y --no-install-recommends slurm-wlm munge >/dev/null; }; then
    echo "test_slurm.sh: SKIPPED: apt-get could not install slurm-wlm and munge" >&2
    exit 0
  fi
fi
if [ "$(id -u)" != 0 ]; then
  echo "test_slurm.sh: SKIPPED: its daemons run as root (SlurmUser=root); run it as root" >&2
  exit 0
fi

BIN=${BIN:-}
if [ -z "$BIN" ]; then
  # The newest build of this checkout.
  b=$(ls -t target/release/loggops-sim target/debug/loggops-sim 2>/dev/null | head -1 || true)
  [ -n "$b" ] || { cargo build --quiet; b=target/debug/loggops-sim; }
  BIN=$root/$b
fi
TASKS=${TASKS:-4}

state=$(mktemp -d /tmp/loggops-slurm.XXXXXX)
pids=()
cleanup() {
  local rc=$?
  # Only the processes this script started, by their ids (newest first).
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[i]}" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
  if [ "${KEEP:-0}" = 1 ] || [ $rc != 0 ]; then
    echo "test_slurm.sh: state and logs kept in $state" >&2
  else
    rm -rf "$state"
  fi
  exit $rc
}
trap cleanup EXIT INT TERM
fail() {
  echo "test_slurm.sh: $*" >&2
  for f in "$state"/log/*.log "$state"/work/slurm-*.out; do
    [ -s "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }
  done
  exit 1
}

mkdir -p "$state"/{munge,log,ctld,spool,work}
chmod 755 "$state" "$state/munge"

# munge: a fresh key, its own socket.
dd if=/dev/urandom of="$state/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$state/munge/munge.key"
sock=$state/munge/munge.socket
munged --foreground --force --socket="$sock" --key-file="$state/munge/munge.key" \
  --pid-file="$state/munge/munged.pid" --seed-file="$state/munge/munged.seed" \
  --log-file="$state/log/munged.log" >"$state/log/munged.stdout" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "munged did not start"

# Ports nobody listens on: two of the unprivileged range, picked per run.
port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 20000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}
ctld_port=$(port)
slurmd_port=$(port)
while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(port); done
host=$(hostname -s)
cpus=$(nproc)
mem_mb=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
cat > "$state/slurm.conf" <<CONF
ClusterName=loggops-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$state/slurm.conf

slurmctld -D -i -f "$SLURM_CONF" >"$state/log/slurmctld.stdout" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >"$state/log/slurmd.stdout" 2>&1 &
pids+=($!)
ready=
for _ in $(seq 150); do
  if sinfo -h -N -o '%t' 2>/dev/null | grep -Eq '^(idle|mix|alloc)'; then ready=1; break; fi
  sleep 0.2
done
[ -n "$ready" ] || fail "the node did not come up: $(sinfo -N 2>&1 | tail -2)"

# A small sweep with a fixed repetition count, so the tasks share every cell's repetitions.
args="--goal $root/goal/dissemination_16B.goal,$root/goal/paper_pipelinedring_512MiB.goal \
--nodes 4,16,64 --noise $root/calibration/aws.h5,$root/calibration/daint.h5 \
--noise-mode none,os,os+net --reps 20 --seed 7"
cd "$state/work"
export LOGGOPS_ARGS=$args LOGGOPS_BIN=$BIN LOGGOPS_OUT=$state/work/shards LOGGOPS_RESULT=$state/work/result
ids=$(TASKS=$TASKS "$root/examples/slurm/submit.sh" --cpus-per-task=1 --time=00:10:00)
echo "test_slurm.sh: submitted: $ids" >&2
merge_id=$(echo "$ids" | sed -n 's/.*merge job \([0-9]*\).*/\1/p')
[ -n "$merge_id" ] || fail "no merge job id in: $ids"
done_=
for _ in $(seq 900); do
  state_of=$(scontrol show job "$merge_id" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  scontrol show job "$merge_id" 2>/dev/null | grep -q 'Reason=DependencyNeverSatisfied' &&
    fail "an array task failed, so the merge job will never run"
  case "$state_of" in
    COMPLETED) done_=1; break ;;
    FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | DEADLINE)
      fail "the merge job ended $state_of" ;;
  esac
  sleep 0.2
done
[ -n "$done_" ] || fail "the jobs did not finish in 3 minutes: $(squeue 2>&1 | tail -5)"
n=$(ls shards/shard-*.json | wc -l)
[ "$n" = "$TASKS" ] || fail "$n shard files for $TASKS tasks"

# The same sweep in one process on this machine.
read -r -a words <<< "$args"
"$BIN" "${words[@]}" -q --format json --output single.json --samples single.samples.csv
"$BIN" "${words[@]}" -q --format csv --output single.csv
for pair in "single.json result/result.json" "single.csv result/result.csv" \
  "single.samples.csv result/samples.csv"; do
  read -r a b <<< "$pair"
  cmp "$a" "$b" || fail "$b differs from the single-machine $a"
done
[ -s result/report.html ] || fail "no report"
echo "test_slurm.sh: $TASKS array tasks on Slurm $(sinfo -V | cut -d' ' -f2), merged: JSON, CSV and samples identical to one process"
