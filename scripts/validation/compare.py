#!/usr/bin/env python3
"""Compares loggops-sim results (scripts/validation/run.sh OUTDIR) with the paper's per-cell
summaries (../shared/reference/paper/sim_summary_shared.csv) for Alps and Azure HPC.

Usage: python3 scripts/validation/compare.py OUTDIR [SUMMARY_CSV]

Prints one markdown table per system and collective. `none` cells pass when our time (integer
ps) is within 50 ps of the paper's value (µs with 4 decimals, i.e. equal after rounding);
noisy cells pass when the median is within 5 % and the p95 within 15 %. The column
"paper-n band" is the 2.5–97.5 % range of the statistic over 2000 subsamples of the paper's
n drawn (with replacement) from our repetitions: if the paper's value lies inside, the
difference is within the paper's own sampling error. Standard library only.
"""
import csv
import glob
import os
import random
import sys

WORKLOADS = {
    "dissemination_16B": ("nwaydissemination_nocompute", "16"),
    "paper_dissemination_128KiB": ("nwaydissemination_nocompute", "131072"),
    "paper_pipelinedring_16MiB": ("pipelinedring", "16777216"),
    "paper_pipelinedring_512MiB": ("pipelinedring", "536870912"),
}
SYSTEMS = {"alps": ("Alps", "HPC (Metal)"), "azure": ("Azure", "HPC")}
SIZE_NAME = {"16": "16 B", "131072": "128 KiB", "16777216": "16 MiB", "536870912": "512 MiB"}
COLL_NAME = {"nwaydissemination_nocompute": "dissemination", "pipelinedring": "pipelined ring"}
MODE_ORDER = {"none": 0, "os": 1, "net": 2, "os+net": 3}


def quantile(sorted_xs, p):
    """Hyndman & Fan type 7 (numpy/pandas default)."""
    n = len(sorted_xs)
    h = (n - 1) * p
    lo = int(h)
    hi = min(lo + 1, n - 1)
    return sorted_xs[lo] + (h - lo) * (sorted_xs[hi] - sorted_xs[lo])


def us(ps):
    """ps as µs with about 4 significant digits (whole µs from 1000 µs on)."""
    v = ps / 1e6
    return f"{v:.0f}" if v >= 1000 else f"{v:.4g}"


def band(xs, n, p, rng, rounds=2000):
    vals = sorted(quantile(sorted(rng.choices(xs, k=n)), p) for _ in range(rounds))
    return vals[int(0.025 * rounds)], vals[int(0.975 * rounds) - 1]


def main():
    out = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    summary = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        here, "../../../shared/reference/paper/sim_summary_shared.csv")
    ours = {}  # (coll, size, provider, nodes, mode) -> (cell row, job name)
    samples = {}
    for path in sorted(glob.glob(os.path.join(out, "*.csv"))):
        job = os.path.basename(path)[:-4]
        if job.endswith(".samples"):
            with open(path) as f:
                for r in csv.DictReader(f):
                    coll, size = WORKLOADS[r["workload"]]
                    key = (coll, size, SYSTEMS[r["system"]][0], r["nodes"], r["noise_mode"])
                    samples.setdefault(key, []).append(int(r["time_ps"]))
            continue
        with open(path) as f:
            for r in csv.DictReader(f):
                coll, size = WORKLOADS[r["workload"]]
                key = (coll, size, SYSTEMS[r["system"]][0], r["nodes"], r["noise_mode"])
                ours[key] = (r, job)
    rng = random.Random(1)
    tables = {}
    totals = {"pass": 0, "fail": 0, "missing": 0}
    with open(summary) as f:
        for p in csv.DictReader(f):
            prov = p["Provider"]
            if (prov, p["Instance Type"]) not in SYSTEMS.values() or p["n"] == "0":
                continue
            key = (p["Collective"], p["Message Size"], prov, p["Nodes"], p["Noise"])
            tables.setdefault(key[:3], []).append((p, ours.get(key), samples.get(key, [])))
    for (coll, size, prov), rows in tables.items():
        print(f"\n### {prov}: {COLL_NAME[coll]}, {SIZE_NAME[size]}\n")
        print("| nodes | noise | paper n | paper median µs | ours median µs | ratio | paper p95 µs "
              "| ours p95 µs | ratio | paper-n band (median; p95) | ours n | job | result |")
        print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---|")
        rows.sort(key=lambda t: (int(t[0]["Nodes"]), MODE_ORDER[t[0]["Noise"]]))
        for p, o, xs in rows:
            nodes, mode = p["Nodes"], p["Noise"]
            if o is None:
                totals["missing"] += 1
                print(f"| {nodes} | {mode} | {p['n']} | {p['p50']} | — | | {p['p95']} | — | | | | | not run |")
                continue
            r, job = o
            med, p95 = float(r["median_ps"]), float(r["p95_ps"])
            if mode == "none":
                paper_ps = round(float(p["p50"]) * 1e6)
                ok = abs(med - paper_ps) <= 50
                result = f"exact (Δ {int(med - paper_ps):+d} ps vs 4-decimal µs)" if ok else \
                    f"**FAIL** (Δ {int(med - paper_ps):+d} ps)"
                print(f"| {nodes} | none | {p['n']} | {p['p50']} | {med / 1e6:.6f} | | | | | | 1 | {job} | {result} |")
            else:
                rm, rp = med / 1e6 / float(p["p50"]), p95 / 1e6 / float(p["p95"])
                ok = abs(rm - 1) <= 0.05 and abs(rp - 1) <= 0.15
                bands = ""
                if xs:
                    n = int(p["n"])
                    bm = band(xs, n, 0.5, rng)
                    bp = band(xs, n, 0.95, rng)
                    bands = f"{us(bm[0])}–{us(bm[1])}; {us(bp[0])}–{us(bp[1])}"
                fails = []
                if abs(rm - 1) > 0.05:
                    fails.append("median")
                if abs(rp - 1) > 0.15:
                    fails.append("p95")
                result = "pass" if ok else "**FAIL** (" + ", ".join(fails) + ")"
                print(f"| {nodes} | {mode} | {p['n']} | {p['p50']} | {med / 1e6:.4f} | {rm:.3f} | {p['p95']} "
                      f"| {p95 / 1e6:.4f} | {rp:.3f} | {bands} | {r['n']} | {job} | {result} |")
            totals["pass" if ok else "fail"] += 1
    print(f"\ncells: {totals['pass']} pass, {totals['fail']} fail, {totals['missing']} not run")


if __name__ == "__main__":
    main()
