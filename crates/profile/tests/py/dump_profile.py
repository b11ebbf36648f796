#!/usr/bin/env python3
"""Read a loggops-sim noise profile with h5py and print every value as one flat JSON object.

Usage: dump_profile.py PROFILE.h5

Keys are `<group>@<attribute>` for attributes (the root group is `/`) and the absolute path
for datasets. Checks what a file written by loggops-sim must satisfy for h5py users: every
string attribute comes back as `str` (variable-length UTF-8), numeric datasets are 1-D
float64 or uint64, numeric attributes are numpy scalars, the schema attributes are right,
every exact tail (schema version 2) is consistent with its table, `mpi_progress` (schema
version 3) is "async" or "polled", every idle table (`<placement>/after_idle`, schema
version 4) has levels in increasing idle time with positive factors, and spot capacity in
/prices (schema version 5) is only in files of version 5 or later, with non-negative numbers
and string source and date, bandwidth levels (`<placement>/bandwidth_levels`, schema
version 6) hold positive factors, and a latency by size (`<placement>/latency_by_size`, schema
version 7) holds strictly increasing sizes and as many finite extra latencies of at least 0,
and the days' weights and kinds (schema version 8) are shares in (0, 1) on every day or none,
adding up to less than 1, and `episode` or absent, and the clock (schema version 9) is both
`clock_resolution_ps` and `clock_read_ps` or neither, float64 at least 0. Exits with status 1
and a message on stderr when a check fails.
"""
import json
import sys

import h5py
import numpy as np


def fail(msg):
    print(f"dump_profile.py: {msg}", file=sys.stderr)
    sys.exit(1)


def attr_value(where, value):
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        fail(f"{where} is bytes {value!r}, expected str (variable-length UTF-8)")
    if isinstance(value, np.ndarray):
        if value.dtype.kind != "O" or value.ndim != 1:
            fail(f"{where} is an array of {value.dtype} with shape {value.shape}, "
                 "expected a 1-D array of variable-length strings")
        out = []
        for i, s in enumerate(value):
            if not isinstance(s, str):
                fail(f"{where}[{i}] is {type(s).__name__}, expected str")
            out.append(s)
        return out
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.integer):
        return int(value)
    fail(f"{where} has unexpected type {type(value).__name__}")


def main():
    if len(sys.argv) != 2:
        fail("usage: dump_profile.py PROFILE.h5")
    out = {}
    with h5py.File(sys.argv[1], "r") as f:
        if f.attrs.get("schema") != "loggops-sim noise profile":
            fail(f"root attribute schema is {f.attrs.get('schema')!r}")
        version = f.attrs.get("schema_version")
        if not isinstance(version, np.integer) or int(version) not in range(1, 10):
            fail(f"root attribute schema_version is {version!r}, expected integer 1 to 9")
        clock = [k for k in ("clock_resolution_ps", "clock_read_ps") if k in f.attrs]
        if clock:
            # Schema version 9: the clock benchmarks time themselves with.
            if int(version) < 9:
                fail(f"root attribute {clock[0]} in a schema_version {int(version)} file")
            if len(clock) != 2:
                fail(f"root attribute {clock[0]} without its partner")
            for k in clock:
                v = f.attrs[k]
                if not isinstance(v, np.floating) or not float(v) >= 0.0:
                    fail(f"root attribute {k} is {v!r}, expected a float64 at least 0")
        if "days" in f:
            # Schema version 8: weighted days and latency episodes.
            days = [f["days"][k] for k in sorted(f["days"].keys())]
            weights = [d.attrs["weight"] for d in days if "weight" in d.attrs]
            kinds = [d.attrs["kind"] for d in days if "kind" in d.attrs]
            if (weights or kinds) and int(version) < 8:
                fail(f"/days has weights or kinds in a schema_version {int(version)} file")
            if weights and len(weights) != len(days):
                fail("/days: some days have a weight and some do not")
            if any(not (0 < float(w) < 1) for w in weights) or sum(map(float, weights)) >= 1:
                fail(f"/days: weights {weights} are not shares in (0, 1) adding up to less than 1")
            if any(k != "episode" for k in kinds):
                fail(f"/days: kinds {kinds}, expected 'episode'")
        if "prices" in f:
            # Schema version 5: spot capacity.
            pa = f["prices"].attrs
            for k in ("spot_usd_per_node_hour", "spot_interruptions_per_node_hour"):
                if k in pa:
                    if int(version) < 5:
                        fail(f"/prices@{k} in a schema_version {int(version)} file")
                    if not isinstance(pa[k], np.floating) or not float(pa[k]) >= 0.0:
                        fail(f"/prices@{k} is {pa[k]!r}, expected a float64 at least 0")
            for k in ("spot_source", "spot_date"):
                if k in pa:
                    if int(version) < 5:
                        fail(f"/prices@{k} in a schema_version {int(version)} file")
                    if not isinstance(pa[k], str):
                        fail(f"/prices@{k} is {pa[k]!r}, expected str")
        if "mpi_progress" in f.attrs:
            # Schema version 3: how rendezvous messages progress during computation.
            progress = f.attrs["mpi_progress"]
            if progress not in ("async", "polled"):
                fail(f"root attribute mpi_progress is {progress!r}, expected 'async' or 'polled'")
            if int(version) < 3:
                fail(f"root attribute mpi_progress in a schema_version {int(version)} file")

        def visit_attrs(name, obj):
            for k, v in obj.attrs.items():
                key = f"{name}@{k}"
                out[key] = attr_value(key, v)

        def visit(name, obj):
            path = "/" + name
            if isinstance(obj, h5py.Dataset):
                if obj.ndim != 1:
                    fail(f"{path} has shape {obj.shape}, expected 1-D")
                if obj.dtype not in (np.dtype("float64"), np.dtype("uint64")):
                    fail(f"{path} has dtype {obj.dtype}, expected float64 or uint64")
                out[path] = obj[()].tolist()
            visit_attrs(path, obj)

        def check_tail(name, obj):
            # An exact tail (schema version 2): `tail_<unit>` next to `probs`/`values_<unit>`,
            # `sample_count` = N on the group, and the table ends at probability (N - K)/N.
            if not isinstance(obj, h5py.Group):
                return
            tails = [k for k in obj.keys() if k.startswith("tail_")]
            if not tails:
                return
            where = "/" + name
            if int(version) < 2:
                fail(f"{where} has an exact tail in a schema_version {int(version)} file")
            n = obj.attrs.get("sample_count")
            if not isinstance(n, np.integer):
                fail(f"{where}@sample_count is {n!r}, expected an integer")
            tail = obj[tails[0]][()]
            probs = obj["probs"][()]
            k = len(tail)
            if not 0 < k < int(n):
                fail(f"{where}: {k} tail samples of sample_count {int(n)}")
            if abs(probs[-1] - (int(n) - k) / int(n)) > max(1e-6 / int(n), 4 * np.finfo(float).eps):
                fail(f"{where}/probs ends at {probs[-1]!r}, expected (N - K)/N = {(int(n) - k) / int(n)!r}")
            unit = tails[0][len("tail_"):]
            if tail[0] < obj["values_" + unit][-1] or np.any(np.diff(tail) < 0):
                fail(f"{where}/{tails[0]} does not continue values_{unit} in increasing order")

        def group_since(name, obj, leaf, since, what):
            # The path of a group called `leaf` (None for anything else), which needs schema
            # version `since` or later.
            if not isinstance(obj, h5py.Group) or name.split("/")[-1] != leaf:
                return None
            where = "/" + name
            if int(version) < since:
                fail(f"{where} ({what}) in a schema_version {int(version)} file")
            return where

        def check_idle_table(name, obj):
            # An idle table (schema version 4): level_0, level_1, ... with from_ps strictly
            # increasing, per_byte_factor > 0, an optional `latency` distribution.
            where = group_since(name, obj, "after_idle", 4, "an idle table")
            if where is None:
                return
            levels = sorted(obj.keys(), key=lambda k: int(k[len("level_"):]))
            if not levels or levels != [f"level_{k}" for k in range(len(levels))]:
                fail(f"{where} has groups {list(obj.keys())}, expected level_0, level_1, ...")
            last = -1.0
            for k in levels:
                a = obj[k].attrs
                frm = float(a["from_ps"])
                factor = float(a.get("per_byte_factor", 1.0))
                if not frm > last:
                    fail(f"{where}/{k}@from_ps {frm} is not above the previous level's {last}")
                if not factor > 0:
                    fail(f"{where}/{k}@per_byte_factor is {factor}, expected above 0")
                last = frm

        def check_levels(name, obj):
            # Bandwidth levels (schema version 6): a distribution of positive factors.
            where = group_since(name, obj, "bandwidth_levels", 6, "bandwidth levels")
            if where is None:
                return
            values = [obj[k][()] for k in obj.keys() if k.endswith("_factor")]
            if not values:
                fail(f"{where} has no values_factor or samples_factor dataset")
            if any(np.any(~(v > 0)) for v in values):
                fail(f"{where}: a level is not above 0")

        def check_by_size(name, obj):
            # The latency by size (schema version 7): size_bytes strictly increasing, extra_ps
            # as long, finite and at least 0.
            where = group_since(name, obj, "latency_by_size", 7, "a latency by size")
            if where is None:
                return
            sizes, extra = obj["size_bytes"][()], obj["extra_ps"][()]
            if len(sizes) != len(extra):
                fail(f"{where}: {len(sizes)} sizes but {len(extra)} extra latencies")
            if np.any(np.diff(sizes.astype(np.int64)) <= 0):
                fail(f"{where}/size_bytes is not strictly increasing")
            if not np.all(np.isfinite(extra) & (extra >= 0)):
                fail(f"{where}/extra_ps holds a value that is not a time of at least 0")

        visit_attrs("/", f)
        f.visititems(visit)
        f.visititems(check_tail)
        f.visititems(check_idle_table)
        f.visititems(check_levels)
        f.visititems(check_by_size)
    for required in ("/near", "/provenance"):
        if not any(k == required or k.startswith(required + "@") for k in out):
            fail(f"missing group {required}")
    json.dump(out, sys.stdout, sort_keys=True, indent=1, ensure_ascii=False)
    print()


if __name__ == "__main__":
    main()
