#!/usr/bin/env python3
"""Writes a copy of a shipped profile whose latency and bandwidth distributions are the paper's
own noise files, rebuilt from the same captures the way its driver converted them, as raw
samples (uniform bootstrap, like its simulator). Use it with `--absolute-latency`, so that
loggops-sim draws exactly these integers:

  python3 scripts/validation/paper_profile.py calibration/paper/alps.h5 \
      ../shared/captures/cloud_noise/alps_hpcmetal_DRday 1900000 79 1900000 92 /tmp/alps_paper.h5
  loggops-sim --goal ... --noise /tmp/alps_paper.h5 --absolute-latency --noise-mode net,os+net

The conversion (facts from CLOUD_NOISE.md §1.2 and §1.8): data rows with index % 1000 <= 20
dropped; latency L = int(rtt_us * 1e6) ps; bandwidth G = int(int(rtt_us * 1e6) / size) ps/B
(integer ps/B); each file scaled by param / median and truncated to an integer. The rtt column is
used as it is (only the shape matters). The far files are the same capture scaled to the far
parameters. OS noise and base parameters are left as in the input profile.

Needs numpy and h5py (a validation aid, not part of the build).
"""
import lzma
import shutil
import sys

import h5py
import numpy as np


def load(path):
    opener = lzma.open if path.endswith(".xz") else open
    sizes, rtts = [], []
    with opener(path, "rt") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            a, b = line.split()[:2]
            sizes.append(int(float(a)))
            rtts.append(float(b))
    sizes, rtts = np.array(sizes), np.array(rtts)
    keep = (np.arange(len(rtts)) % 1000) > 20
    return sizes[keep], rtts[keep]


def scaled(x, param):
    # pandas: x * (param / float(median)) then astype(int) (truncation toward zero)
    return np.trunc(x * (param / float(np.median(x)))).astype(np.int64)


def main():
    src, capdir, l_near, g_near, l_far, g_far, dst = sys.argv[1:8]
    _, lat = load(capdir + "/ng_netnoise_mpi_lat.out.xz")
    size, bw = load(capdir + "/ng_netnoise_mpi_bw.out.xz")
    lat_ps = np.trunc(lat * 1e6).astype(np.int64)
    g_int = np.trunc(np.trunc(bw * 1e6) / size).astype(np.int64)
    shutil.copyfile(src, dst)
    with h5py.File(dst, "r+") as f:
        for place, l, g in (("near", l_near, g_near), ("far", l_far, g_far)):
            if place not in f:
                f.copy("near", "far")
                f["far"].attrs["L_ps"] = float(l)
                f["far"].attrs["G_ps_per_byte"] = float(g)
            for grp, vals, name in (("latency", scaled(lat_ps, float(l)), "samples_ps"),
                                    ("bandwidth", scaled(g_int, float(g)), "samples_ps_per_byte")):
                path = f"{place}/{grp}"
                if path in f:
                    del f[path]
                f.create_group(path).create_dataset(name, data=vals.astype(np.float64))
            print(f"{place}: L median {np.median(scaled(lat_ps, float(l)))} ps, "
                  f"G values {dict(zip(*np.unique(scaled(g_int, float(g)), return_counts=True)))}")


if __name__ == "__main__":
    main()
