#!/usr/bin/env python3
"""Writes the small synthetic captures of calibration/example (deterministic; no real
measurement): one 1000-row Netgauge ping-pong run of 1-byte messages (lat.txt), one of
16 MiB messages (bw.txt), and one selfish-detour run (osnoise.txt), in the formats the
cloud_noise Netgauge fork writes. `loggops-sim calibrate --help` uses them in its example.

    python3 calibration/example/make.py
"""
import math
import os
import random

here = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(20240601)


def pingpong(path, size, median_us, sigma, rows=1000):
    with open(path, "w") as f:
        f.write("#size\trtt\n")
        for i in range(rows):
            # Warm-up rows are slower, then a log-normal body with a rare long tail.
            v = median_us * math.exp(rng.gauss(0.0, sigma))
            if i < 21:
                v *= 1.5
            if rng.random() < 0.005:
                v *= 5 + 20 * rng.random()
            f.write(f"{size}\t{v:.6f}\n")


def selfish(path, detours=200):
    pre = (
        "# Benchmark Method: selfish\n# Compute-Cycle Duration: 1000 usec\n"
        f"# Number of Cycles/Detours: {2 * detours + 2}\n# Sysname : Linux\n# Nodename: demo\n"
        "# Release : 6\n# Version : #1\n# Machine : x86_64\n# Selfish Benchmark\n"
        "# Minimal cycle length [ns]: 40.50 \n"
        "# Number of iterations (recorded+unrecorded): 100000000 \n"
        "# Threshold: [% minimal cycle length]: 900 \n# \n# Time [ns]\tselfish duration [ns]\n"
    )
    t = 0.0
    total = 0.0
    with open(path, "w") as f:
        f.write(pre)
        for _ in range(detours):
            t += rng.expovariate(1 / 5e6)  # one detour every 5 ms on average
            d = 400 + rng.expovariate(1 / 1500)
            if rng.random() < 0.02:
                d += 50_000 * rng.random()
            f.write(f"{t:.2f}\t{d:.2f}\n")
            total += d
            t += d
        period = t / 1e9 + 0.01
        f.write(f"# CPU overhead due to noise: {100 * total / (period * 1e9):.2f}%\n")
        f.write(f"# Measurement period: {period:.2f} s\n")


pingpong(os.path.join(here, "lat.txt"), 1, 1.8, 0.05)
pingpong(os.path.join(here, "bw.txt"), 16777216, 1400.0, 0.02)
selfish(os.path.join(here, "osnoise.txt"))
