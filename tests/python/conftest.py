"""Fixtures of the Python module's tests: the repository root (tests run from it, as the CLI's
examples do) and the `loggops-sim` binary built from the same checkout, whose output the
module must reproduce."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.fixture(scope="package")
def cli() -> Path:
    """The CLI: $LOGGOPS_SIM, else `cargo build --release` of this checkout (a no-op when it is
    up to date, as in CI after the release tests)."""
    given = os.environ.get("LOGGOPS_SIM")
    if given:
        return Path(given)
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--bin", "loggops-sim"],
        cwd=ROOT,
        check=True,
    )
    return ROOT / "target" / "release" / "loggops-sim"


def run_cli(cli: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Runs the CLI in the repository root and returns what it printed."""
    out = subprocess.run(
        [str(cli), *args], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if check and out.returncode != 0:
        raise AssertionError(f"loggops-sim {' '.join(args)} failed:\n{out.stderr}")
    return out
