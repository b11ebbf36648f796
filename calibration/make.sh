#!/usr/bin/env bash
# Rebuilds the shipped profiles from the paper's captures in ../shared (read-only, not in the
# repo). Usage: calibration/make.sh
#   calibration/NAME.h5        the default: `--calibration captures`, closed against the captures
#                              (simulating each capture's own ping-pong reproduces it); the fit
#                              reports in calibration/reports/ print the closure table
#   calibration/paper/NAME.h5  the paper's variant: the paper's Different Racks parameters
#                              (`--params-table`), captured shapes pinned to them
set -euo pipefail
cd "$(dirname "$0")/.."
S=${SHARED:-../shared}
C=$S/captures/cloud_noise
BIN=${BIN:-target/release/loggops-sim}
[ -x "$BIN" ] || cargo build --release
mkdir -p calibration/reports calibration/paper/reports
# MPI progress during computation, where measured collectives show it (VALIDATION.md, "Progress
# during computation"): Piz Daint's MPI advances rendezvous messages only inside MPI calls, Azure
# HC44rs's asynchronously; the other systems have no evidence and carry no attribute.
progress_of() { case $1 in daint) echo polled ;; azure) echo async ;; esac; }
# name dir provider instance price_system price_class eager_threshold stripes day description [note]
one() {
  local name=$1 dir=$2 provider=$3 instance=$4 psys=$5 pclass=$6 s=$7 stripes=$8 day=$9 desc=${10} note=${11:-}
  local progress; progress=$(progress_of "$name")
  local common=(--system "$name" --description "$desc"
    --latency "$C/$dir/ng_netnoise_mpi_lat.out.xz" --bandwidth "$C/$dir/ng_netnoise_mpi_bw.out.xz"
    --os-noise "$C/$dir/ng_osnoise.out.xz" --loggp "$C/$dir/ng_loggp.out"
    --prices-table "$S/paper/systems.csv" --price-system "$psys" --price-class "$pclass"
    ${note:+--note "$note"})
  # The MPI's eager threshold S is the paper's (its loggp_params.csv); the bandwidth messages
  # were striped over NET_NOISE_CONC connections (the artifact's benchmarks/conf/*.sh).
  "$BIN" calibrate "${common[@]}" --set-S "$s" --bandwidth-stripes "$stripes" --day "$day" \
    ${progress:+--mpi-progress "$progress"} \
    --report "calibration/reports/$name.txt" -o "calibration/$name.h5"
  [ "${PAPER:-1}" = 1 ] || return 0
  "$BIN" calibrate "${common[@]}" --calibration paper-table \
    --params-table "$S/reference/paper/loggp_params.csv" --provider "$provider" --instance "$instance" \
    --placement "Different Racks" \
    --report "calibration/paper/reports/$name.txt" -o "calibration/paper/$name.h5"
}
one daint    daint_hpcmetal_DRday     Daint    "HPC (Metal)"    daint    hpc-metal 4096  1  2022-05-19 "Piz Daint, Cray XC50 (Aries), different racks, day"
one alps     alps_hpcmetal_DRday      Alps     "HPC (Metal)"    alps     hpc-metal 4096  1  2022-07-14 "Alps, HPE Cray EX (Slingshot), different racks, day"
one azure    azure_hpc_hc44rs_day     Azure    "HPC"            azure    hpc       4096  1  2022-03-18 "Azure HC44rs (100 Gb/s InfiniBand), day"
one azure200 azure_hpc200_hbv2_day    Azure    "HPC (200 Gb/s)" azure    hpc-200   4096  1  2022-03-25 "Azure HB120rs_v2 (200 Gb/s InfiniBand), day"
one aws      aws_hpcmetal_c5n_SRnight AWS      "HPC (Metal)"    aws      hpc-metal 65536 16 2022-03-22 "AWS c5n.metal (EFA 100 Gb/s)" \
  "substitute captures: same rack, night (the paper's different-racks run is missing upstream)"
one gcp      gcp_hpc_c2_SRday         GCP      "HPC"            gcp      hpc       65536 8  2022-06-08 "GCP c2-standard-60 TIER_1 (100 Gb/s)" \
  "substitute captures: same rack, day (the paper's different-racks run is missing upstream)"
one deepest  deepest_hpcmetal_0505    DEEP-EST "HPC (Metal)"    deep-est hpc-metal 4096  1  2022-05-05 "DEEP-EST (InfiniBand EDR)" \
  "substitute captures: the closest surviving DEEP-EST run (the paper's run is missing upstream)"
one oracle   oracle_normal_SRday      Oracle   "HPC (Metal)"    oracle   hpc-metal 4096  16 2022-07-08 "Oracle BM.Optimized3.36 (RoCEv2 100 Gb/s), parameters; noise shapes from a VM.Optimized3.Flex normal instance" \
  "substitute captures: Oracle normal instance (VM.Optimized3.Flex), same rack, day; the paper's HPC run is missing upstream"
ls -la calibration/*.h5 calibration/paper/*.h5
