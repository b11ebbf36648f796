#!/usr/bin/env python3
"""Executes a notebook with nbclient, as CI does (`.ci/run`), and writes the executed copy.

    scripts/run_notebook.py examples/noise_and_cost.ipynb OUTDIR

The notebook runs in its own directory with LOGGOPS_NOTEBOOK_OUT=OUTDIR (where
examples/noise_and_cost.ipynb saves its figure as a PNG); OUTDIR/<name> is the notebook with its
outputs. A cell that raises fails the run (exit status 1) and prints the cell and its error.
"""

import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    path, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    os.environ["LOGGOPS_NOTEBOOK_OUT"] = str(out.resolve())
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=1800,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent.resolve())}},
    )
    start = time.monotonic()
    try:
        client.execute()
    except CellExecutionError as e:
        print(f"{path}: a cell failed:\n{e}", file=sys.stderr)
        return 1
    finally:
        nbformat.write(nb, out / path.name)
    print(f"{path}: executed {len(nb.cells)} cells in {time.monotonic() - start:.1f}s; wrote {out / path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
