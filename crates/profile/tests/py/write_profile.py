#!/usr/bin/env python3
"""Write a noise profile with plain h5py, following crates/profile/SCHEMA.md, the way a user
would: Python ints and floats for attributes, plain `str` for strings, numpy arrays for
datasets. loggops-sim must load it (tests/h5py_interop.rs checks every value).

Usage: write_profile.py OUT.h5 LIBVER   (LIBVER: earliest or latest, h5py's file format bounds)
"""
import sys

import h5py
import numpy as np

out, libver = sys.argv[1], sys.argv[2]
with h5py.File(out, "w", libver=libver) as f:
    f.attrs["schema"] = "loggops-sim noise profile"
    f.attrs["schema_version"] = 3   # 2: the far bandwidth table has an exact tail; 3: mpi_progress
    f.attrs["mpi_progress"] = "polled"
    f.attrs["system"] = "handmade"
    f.attrs["description"] = "written by h5py – ünïcode"
    f.attrs["nodes_per_switch"] = 8

    near = f.create_group("near")
    near.attrs["L_ps"] = 2_000_000.0
    near.attrs["o_ps"] = 300_000          # an int where a number is expected
    near.attrs["g_ps"] = 100_000.5
    near.attrs["G_ps_per_byte"] = 80.25
    near.attrs["O_ps_per_byte"] = 0.0
    near.attrs["S_bytes"] = 65536
    near.attrs["bandwidth_block_bytes"] = 16 * 1024 * 1024
    lat = near.create_group("latency")
    lat["probs"] = np.array([0.0, 0.5, 0.99, 1.0])
    lat["values_ps"] = np.array([1.9e6, 2.0e6, 3.5e6, 9.0e6])
    bw = near.create_group("bandwidth")
    bw.create_dataset("samples_ps_per_byte", data=np.array([80.5, 81.0, 79.75], dtype=np.float32))

    far = f.create_group("far")
    for k, v in near.attrs.items():
        far.attrs[k] = v
    far.attrs["L_ps"] = 3_000_000.0
    flat = far.create_group("latency")
    flat.create_dataset("samples_ps", data=np.linspace(2.9e6, 4.0e6, 5000), compression="gzip")
    # A quantile table of 200 samples whose 2 largest are kept exactly (schema version 2). The
    # table ends at 1 - K/N (rounded twice; (N - K)/N is the exact form, both are accepted).
    fbw = far.create_group("bandwidth")
    fbw["probs"] = np.array([0.0, 0.5, 1 - 2 / 200])
    fbw["values_ps_per_byte"] = np.array([80.0, 81.0, 85.5])
    fbw["tail_ps_per_byte"] = np.array([90.0, 300.0])
    fbw.attrs["sample_count"] = 200

    os_noise = f.create_group("os_noise")
    t0 = os_noise.create_group("trace_0")
    t0["start_ps"] = np.array([10, 1_000_000, 2_000_000], dtype=np.uint64)
    t0["duration_ps"] = [5, 6, 7]       # a Python list: h5py stores int64
    t0.attrs["period_ps"] = 3_000_000
    t1 = os_noise.create_group("trace_1")
    t1["start_ps"] = np.zeros(0, dtype=np.uint64)
    t1["duration_ps"] = np.zeros(0, dtype=np.uint64)
    t1.attrs["period_ps"] = 1_000_000_000
    proc = os_noise.create_group("process")
    proc.attrs["rate_per_s"] = 250.0
    proc.create_group("duration")["samples_ps"] = np.array([1e6, 2e6])

    prices = f.create_group("prices")
    prices.attrs["on_demand_usd_per_node_hour"] = 3.888

    prov = f.create_group("provenance")
    prov.attrs["command"] = "python3 write_profile.py"
    prov.attrs["created"] = "2025-02-01"
    prov.attrs["tool_version"] = "h5py " + h5py.__version__
    prov.attrs.create("sources", ["a.txt", "b – c.txt"], dtype=h5py.string_dtype())
    prov.attrs["notes"] = "a single note as a scalar string"
