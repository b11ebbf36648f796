#!/usr/bin/env python3
"""Markdown tables of `loggops-sim validate --format json` runs (VALIDATION.md, "Measured
collectives"). Usage: measured_md.py OUTDIR, with OUTDIR/<system>_barrier.json and
OUTDIR/<system>_collective.json as scripts/validation/measured.sh writes them."""
import json
import os
import sys

out = sys.argv[1]
systems = [("azure", "Azure HC44rs, 2022-04-01, profile calibration/paper/azure.h5"),
           ("daint_night", "Piz Daint, 2022-03-30 night (00:54), profile calibration/paper/daint.h5"),
           ("daint_afternoon", "Piz Daint, 2022-03-30 afternoon (16:28), profile calibration/paper/daint.h5")]


def us(ps):
    x = ps / 1e6
    if x >= 1000:
        return "%.0f" % x
    if x >= 100:
        return "%.1f" % x
    return "%.2f" % x


def ratio(r, tol):
    s = "%.2f" % r
    return s + ("*" if tol is not None and abs(r - 1) > tol + 1e-12 else "")


for key, title in systems:
    path = os.path.join(out, key + "_barrier.json")
    if not os.path.exists(path):
        continue
    new = json.load(open(path))
    old_path = os.path.join(out, key + "_collective.json")
    old = {b["benchmark"]: b for b in json.load(open(old_path))["benchmarks"]} if os.path.exists(old_path) else {}
    print("### %s\n" % title)
    print("| benchmark | meas mean | sim mean | × mean | meas p50 | sim p50 | × p50 | meas p95 | sim p95 | × p95 | meas p99 | sim p99 | × p99 | mean error | paper's comparison: mean error, × p50, × p95 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for b in new["benchmarks"]:
        o = old.get(b["benchmark"])
        err = 100 * (b["simulated_mean_ps"] - b["measured_mean_ps"]) / b["measured_mean_ps"]
        prev = ""
        if o:
            e = 100 * (o["simulated_mean_ps"] - o["measured_mean_ps"]) / o["measured_mean_ps"]
            prev = "%+.1f%%, %s, %s" % (e, ratio(o["ratio_p50"], 0.1), ratio(o["ratio_p95"], 0.2))
        name = b["benchmark"] + (" (paper)" if b["paper_cell"] else "")
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %+.1f%% | %s |" % (
            name, us(b["measured_mean_ps"]), us(b["simulated_mean_ps"]), ratio(b["ratio_mean"], 0.1),
            us(b["measured_p50_ps"]), us(b["simulated_p50_ps"]), ratio(b["ratio_p50"], 0.1),
            us(b["measured_p95_ps"]), us(b["simulated_p95_ps"]), ratio(b["ratio_p95"], 0.2),
            us(b["measured_p99_ps"]), us(b["simulated_p99_ps"]), ratio(b["ratio_p99"], None),
            err, prev))
    print("\nWith `--measure barrier` (default): %s\n" % new["summary"]["line"])
    if old:
        print("With `--measure collective` (the paper's comparison): %s\n" % json.load(open(old_path))["summary"]["line"])
