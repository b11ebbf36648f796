#!/usr/bin/env bash
# Rebuilds the shipped profiles from the paper's captures in ../shared (read-only, not in the
# repo) with the paper's Different Racks parameters and prices. Usage: calibration/make.sh
set -euo pipefail
cd "$(dirname "$0")/.."
S=${SHARED:-../shared}
C=$S/captures/cloud_noise
BIN=${BIN:-target/release/loggops-sim}
[ -x "$BIN" ] || cargo build --release
one() { # name dir provider instance price_system price_class description [note]
  local name=$1 dir=$2 provider=$3 instance=$4 psys=$5 pclass=$6 desc=$7 note=${8:-}
  "$BIN" calibrate --system "$name" --description "$desc" \
    --latency "$C/$dir/ng_netnoise_mpi_lat.out.xz" --bandwidth "$C/$dir/ng_netnoise_mpi_bw.out.xz" \
    --os-noise "$C/$dir/ng_osnoise.out.xz" --loggp "$C/$dir/ng_loggp.out" \
    --params-table "$S/reference/paper/loggp_params.csv" --provider "$provider" --instance "$instance" \
    --placement "Different Racks" \
    --prices-table "$S/paper/systems.csv" --price-system "$psys" --price-class "$pclass" \
    ${note:+--note "$note"} \
    --report "calibration/reports/$name.txt" -o "calibration/$name.h5"
}
mkdir -p calibration/reports
one daint    daint_hpcmetal_DRday     Daint    "HPC (Metal)"    daint    hpc-metal "Piz Daint, Cray XC50 (Aries), different racks, day"
one alps     alps_hpcmetal_DRday      Alps     "HPC (Metal)"    alps     hpc-metal "Alps, HPE Cray EX (Slingshot), different racks, day"
one azure    azure_hpc_hc44rs_day     Azure    "HPC"            azure    hpc       "Azure HC44rs (100 Gb/s InfiniBand), day"
one azure200 azure_hpc200_hbv2_day    Azure    "HPC (200 Gb/s)" azure    hpc-200   "Azure HB120rs_v2 (200 Gb/s InfiniBand), day"
one aws      aws_hpcmetal_c5n_SRnight AWS      "HPC (Metal)"    aws      hpc-metal "AWS c5n.metal (EFA 100 Gb/s)" \
  "substitute captures: same rack, night (the paper's different-racks run is missing upstream)"
one gcp      gcp_hpc_c2_SRday         GCP      "HPC"            gcp      hpc       "GCP c2-standard-60 TIER_1 (100 Gb/s)" \
  "substitute captures: same rack, day (the paper's different-racks run is missing upstream)"
one deepest  deepest_hpcmetal_0505    DEEP-EST "HPC (Metal)"    deep-est hpc-metal "DEEP-EST (InfiniBand EDR)" \
  "substitute captures: the closest surviving DEEP-EST run (the paper's run is missing upstream)"
one oracle   oracle_normal_SRday      Oracle   "HPC (Metal)"    oracle   hpc-metal "Oracle BM.Optimized3.36 (RoCEv2 100 Gb/s), parameters; noise shapes from a VM.Optimized3.Flex normal instance" \
  "substitute captures: Oracle normal instance (VM.Optimized3.Flex), same rack, day; the paper's HPC run is missing upstream"
ls -la calibration/*.h5
