"""`import loggops_sim`: the same numbers and messages as the CLI for the same flags, paths as
str or pathlib.Path, the GIL released while simulating, Ctrl-C stopping a sweep (issue 45).

Every comparison is exact: the module and the binary are built from the same checkout
(conftest.py) and must give the same values, column for column."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import loggops_sim as ls
from conftest import ROOT, run_cli

DISS = "goal/dissemination_16B.goal"
AWS = "calibration/aws.h5"
DAINT = "calibration/paper/daint.h5"


def cli_frame(text: str) -> pd.DataFrame:
    """The CLI's CSV as the module reads it (exact floats: pandas 3's default)."""
    exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
    return pd.read_csv(
        io.StringIO(text),
        keep_default_na=False,
        na_values=[""],
        dtype={"workload": str, "system": str, "noise_mode": str},
        **exact,
    )


def same(a: object, b: object) -> bool:
    if isinstance(a, float) and math.isnan(a):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return a == b


def test_acceptance_sweep_mean_ps_is_the_clis(cli: Path) -> None:
    """The issue's acceptance call, against `--format json` for the same flags."""
    cells = ls.sweep(goal=DISS, noise=AWS, nodes=[64], noise_mode=["os+net"], reps=50, seed=3)
    out = run_cli(
        cli, "--goal", DISS, "--noise", AWS, "--nodes", "64", "--noise-mode", "os+net",
        "--reps", "50", "--seed", "3", "--format", "json",
    )
    doc = json.loads(out.stdout)
    assert len(cells) == len(doc["cells"]) == 1
    row, cell = cells.iloc[0], doc["cells"][0]
    assert cells["mean_ps"].dtype.kind == "i"
    assert int(row["mean_ps"]) == cell["mean_ps"]
    assert (row["nodes"], row["noise_mode"], row["n"]) == (64, "os+net", 50)
    # Every statistic of the cell, not only the mean.
    for key in cells.columns:
        if key in cell:
            assert same(row[key].item() if hasattr(row[key], "item") else row[key], cell[key]), key


def test_sweep_and_samples_are_the_clis_csv(cli: Path, tmp_path: Path) -> None:
    flags = [
        "--goal", DISS, "--noise", AWS, "--nodes", "4,16", "--noise-mode", "none,os,net,os+net",
        "--reps", "20", "--seed", "7",
    ]
    samples_file = tmp_path / "samples.csv"
    out = run_cli(cli, *flags, "--format", "csv", "--samples", str(samples_file))
    run = ls.run(DISS, noise=AWS, nodes=[4, 16], noise_mode=["none", "os", "net", "os+net"],
                 reps=20, seed=7)
    pd.testing.assert_frame_equal(run.cells, cli_frame(out.stdout))
    pd.testing.assert_frame_equal(run.samples, cli_frame(samples_file.read_text()))
    assert run.complete
    assert len(run.samples) == 2 * (1 + 3 * 20)
    # The result records the CLI command that makes it.
    assert run.command.startswith("loggops-sim --goal=goal/dissemination_16B.goal")
    again = run_cli(cli, *run.command.split()[1:], "--format", "csv")
    pd.testing.assert_frame_equal(run.cells, cli_frame(again.stdout))
    # sweep() and samples() are run()'s parts.
    pd.testing.assert_frame_equal(
        ls.samples(DISS, noise=AWS, nodes=[4, 16], noise_mode=["none", "os", "net", "os+net"],
                   reps=20, seed=7),
        run.samples,
    )


def test_noiseless_sweep_with_parameters(cli: Path) -> None:
    cells = ls.sweep("goal/ring_512MiB.goal", nodes=[8, 16], L="3us", G=0.01, S="64KiB")
    out = run_cli(cli, "--goal", "goal/ring_512MiB.goal", "--nodes", "8,16", "-L", "3us",
                  "-G", "0.01", "-S", "64KiB", "--format", "csv")
    pd.testing.assert_frame_equal(cells, cli_frame(out.stdout))
    assert list(cells["system"]) == ["flags", "flags"]
    assert list(cells["L_near_ps"]) == [3_000_000, 3_000_000]


def test_rank_parametric_params(cli: Path, tmp_path: Path) -> None:
    sched = tmp_path / "app.goal"
    sched.write_text("loggops-schedule 1\nparam work = 5us\ncalc ${work}\ndissemination 16B\n")
    cells = ls.sweep(sched, nodes=8, work="7us")
    out = run_cli(cli, "--goal", str(sched), "--nodes", "8", "--param", "work=7us",
                  "--format", "csv")
    pd.testing.assert_frame_equal(cells, cli_frame(out.stdout))


def test_paths_as_str_and_pathlib() -> None:
    as_str = ls.sweep(DISS, noise=AWS, nodes=4, reps=5)
    as_path = ls.sweep(Path(DISS), noise=[Path(AWS)], nodes=[4], reps=5)
    absolute = ls.sweep(ROOT / DISS, noise=ROOT / AWS, nodes=4, reps=5)
    pd.testing.assert_frame_equal(as_str, as_path)
    cols = [c for c in as_str.columns if c not in ("profile", "workload_path")]
    pd.testing.assert_frame_equal(as_str[cols], absolute[cols])
    assert absolute["profile"].iloc[0] == str(ROOT / AWS)
    with pytest.raises(TypeError, match="goal: expected a path"):
        ls.sweep([DISS, 3], nodes=4)  # type: ignore[list-item]


def test_threads_do_not_change_the_answer() -> None:
    one = ls.run(DISS, noise=AWS, nodes=[64], reps=16, threads=1)
    two = ls.run(DISS, noise=AWS, nodes=[64], reps=16, threads=2)
    pd.testing.assert_frame_equal(one.samples, two.samples)


def cli_error(cli: Path, *args: str) -> str:
    out = run_cli(cli, *args, check=False)
    assert out.returncode == 2, out
    return out.stderr.splitlines()[0]


@pytest.mark.parametrize(
    "call,flags",
    [
        # A file that is not there.
        (lambda: ls.sweep("goal/missing.goal", nodes=4), ["--goal", "goal/missing.goal", "--nodes", "4"]),
        # A flag that does not apply.
        (lambda: ls.sweep(DISS, nodes=4, seed=3), ["--goal", DISS, "--nodes", "4", "--seed", "3"]),
        # A value clap refuses.
        (lambda: ls.sweep(DISS, noise=AWS, nodes=4, reps=0), ["--goal", DISS, "--noise", AWS, "--nodes", "4", "--reps", "0"]),
        # A value the run refuses.
        (lambda: ls.sweep(DISS, noise=AWS, nodes=4, noise_mode="loud"), ["--goal", DISS, "--noise", AWS, "--nodes", "4", "--noise-mode", "loud"]),
        (lambda: ls.sweep(DISS, nodes=4, L="2.5 parsecs"), ["--goal", DISS, "--nodes", "4", "-L", "2.5 parsecs"]),
        (lambda: ls.profile("calibration/README.md"), ["profile", "show", "calibration/README.md"]),
        (lambda: ls.validate("calibration/README.md", AWS), ["validate", "calibration/README.md", "--noise", AWS]),
    ],
)
def test_errors_carry_the_clis_message(cli: Path, call, flags) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ls.LoggopsError) as e:
        call()
    expected = cli_error(cli, *flags)
    assert expected.startswith("error: ")
    assert str(e.value) == expected[len("error: "):]


def test_located_errors_name_file_line_and_column(cli: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.goal"
    bad.write_text("num_ranks 2\nrank 0 {\n  l1: send 8b to 1 tag 0\n  l2: calc x\n}\n")
    with pytest.raises(ls.LoggopsError) as e:
        ls.sweep(bad)
    message = str(e.value)
    assert message.startswith(f"{bad}:4:"), message
    assert message == run_cli(cli, "--goal", str(bad), check=False).stderr.rstrip("\n")


def test_a_schedule_that_does_not_complete(cli: Path, tmp_path: Path) -> None:
    stuck = tmp_path / "stuck.goal"
    stuck.write_text("num_ranks 2\nrank 0 {\n  l1: recv 8b from 1 tag 0\n}\nrank 1 {\n}\n")
    with pytest.raises(ls.LoggopsError) as e:
        ls.sweep(stuck)
    out = run_cli(cli, "--goal", str(stuck), check=False)
    assert out.returncode == 1
    assert "error: " + str(e.value) + "\n" == out.stderr
    assert "was never matched" in str(e.value)


def test_critical_path_is_the_clis(cli: Path, tmp_path: Path) -> None:
    for flags, kw in [
        (["--nodes", "16,64"], dict(nodes=[16, 64], sensitivity=True)),
        (["--nodes", "16", "--noise", AWS, "--reps", "12", "--noise-mode", "none,os+net"],
         dict(nodes=16, noise=AWS, reps=12, noise_mode=["none", "os+net"])),
    ]:
        sens = ["--sensitivity"] if kw.get("sensitivity") else []
        report = tmp_path / "cp.csv"
        run_cli(cli, "--goal", DISS, *flags, *sens, f"--critical-path={report}",
                "--format", "csv", "--output", str(tmp_path / "out.csv"))
        frame = ls.critical_path(DISS, **kw)  # type: ignore[arg-type]
        pd.testing.assert_frame_equal(frame, cli_frame(report.read_text()))
    assert "part" in frame.columns and "p95_inflation_share" in frame.columns


def measured_file(dir: Path) -> Path:
    """A measured 4-rank 16 B dissemination (the paper's benchmark format), 40 iterations."""
    path = dir / "nwaydissemination_nocompute_4_16.csv"
    rows = ["#MessageSize Rank0Time(us) Rank1Time(us) Rank2Time(us) Rank3Time(us)"]
    for i in range(40):
        rows.append(f"16 {9 + i % 5 * 0.5} {9.5 + i % 3} 10.25 {8 + i % 7 * 0.25}")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_validate_is_the_clis(cli: Path, tmp_path: Path) -> None:
    path = measured_file(tmp_path)
    frame = ls.validate(path, Path(AWS), reps=30, seed=2, measure="collective")
    out = run_cli(cli, "validate", str(path), "--noise", AWS, "--reps", "30", "--seed", "2",
                  "--measure", "collective", "--format", "csv")
    expected = cli_frame(out.stdout)
    pd.testing.assert_frame_equal(frame, expected.astype({"benchmark": str, "pattern": str}))
    assert frame["benchmark"].iloc[0] == "nwaydissemination_nocompute_4_16"


def test_validate_returns_the_progress_evidence(cli: Path, tmp_path: Path) -> None:
    # 16 MiB dissemination with its calcs, measured at 37 ms (two calcs and two transfers one
    # after the other): the measurement favours the polled rule.
    path = tmp_path / "nwaydissemination_4_16777216.csv"
    rows = ["#MessageSize Rank0Time(us) Rank1Time(us) Rank2Time(us) Rank3Time(us)"]
    rows += [f"16777216 {37000 + i}.0 37000.0 37000.0 37000.0" for i in range(5)]
    path.write_text("\n".join(rows) + "\n")
    frame = ls.validate(path, DAINT, reps=16)
    out = run_cli(cli, "validate", str(path), "--noise", DAINT, "--reps", "16", "--format", "json", "-q")
    settings = json.loads(out.stdout)["settings"]
    assert frame.attrs["settings"] == settings
    evidence = settings["mpi_progress_evidence"]
    assert evidence["simulated"] == "async" and evidence["favours"] == "polled", evidence
    # Given the rule, no evidence is gathered.
    polled = ls.validate(path, DAINT, reps=16, mpi_progress="polled")
    assert polled.attrs["settings"]["mpi_progress"] == "polled"
    assert polled.attrs["settings"]["mpi_progress_evidence"] is None


def test_profile_is_what_profile_show_prints(cli: Path) -> None:
    import hashlib

    p = ls.profile(Path(AWS))
    text = run_cli(cli, "profile", "show", AWS).stdout
    data = (ROOT / AWS).read_bytes()
    assert p["sha256"] == hashlib.sha256(data).hexdigest()
    assert p["size_bytes"] == len(data)
    assert f"{p['size_bytes']} bytes, sha256 {p['sha256']}" in text
    assert text.startswith(f"{AWS}: noise profile of system `{p['system']}`")
    assert f"ranks r / {p['nodes_per_switch']} share a switch" in text
    assert len(p["os_noise"]["traces"]) == text.count("  trace ")
    q = p["near"]["latency_ps"]["quantiles"]
    names = ["min", "p1", "p5", "p25", "p50", "p75", "p95", "p99", "p99.9", "max"]
    assert set(q) == set(names)
    assert [q[n] for n in names] == sorted(q[n] for n in names)
    # The base parameters are the ones a sweep with this profile simulates.
    cells = ls.sweep(DISS, noise=AWS, nodes=4, noise_mode="none")
    assert cells["L_near_ps"].iloc[0] == round(p["near"]["params"]["L_ps"])
    assert p["prices"]["on_demand_usd_per_node_hour"] == cells["on_demand_usd_per_node_hour"].iloc[0]


def test_the_gil_is_released_while_simulating() -> None:
    """Another Python thread runs while a sweep simulates: the sweep still runs when the main
    thread next gets the GIL."""
    done = threading.Event()
    errors: list[BaseException] = []

    def work() -> None:
        try:
            ls.sweep(DISS, noise=AWS, nodes=[1024], reps=400, threads=1)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
        done.set()

    t = threading.Thread(target=work)
    t.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.005)
    t.join()
    assert not errors, errors
    # With the GIL held for the whole sweep, this thread would not have run until it ended.
    assert ticks >= 10, ticks


# The start of both interrupt scripts: Ctrl-C (SIGINT) after one second. Each installs Python's
# own SIGINT handler: a process started in the background by a shell without job control (as CI
# runners may start the tests) inherits SIGINT ignored, and Python then leaves it ignored.
CTRL_C_AFTER_1S = (
    "import os, signal, threading, json, loggops_sim as ls\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
)

INTERRUPT = CTRL_C_AFTER_1S + r"""
try:
    ls.sweep("goal/dissemination_16B.goal", noise="calibration/aws.h5", nodes=[1024],
             noise_mode=["os+net"], reps=100000, seed=1, threads=2)
    print(json.dumps({"raised": False}))
except KeyboardInterrupt as e:
    run = e.partial
    n = int(run.samples.shape[0])
    # The next call in the same process runs in full.
    after = ls.sweep("goal/dissemination_16B.goal", noise="calibration/aws.h5", nodes=[4], reps=5)
    print(json.dumps({"raised": True, "complete": run.complete, "n": n,
                      "partial": bool(run.cells["partial"].all()),
                      "status": run.result["status"], "after": int(after["n"].iloc[0])}))
"""


def test_ctrl_c_stops_a_sweep_and_keeps_what_finished() -> None:
    out = subprocess.run(
        [sys.executable, "-c", INTERRUPT], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["raised"], "the sweep ran to its end instead of stopping"
    assert r["complete"] is False and r["status"] == "interrupted" and r["partial"]
    # Stopped long before its 100000 repetitions.
    assert 0 <= r["n"] < 100000
    assert r["after"] == 5


def test_interrupting_validate_raises_keyboard_interrupt(tmp_path: Path) -> None:
    path = measured_file(tmp_path)
    script = (
        CTRL_C_AFTER_1S + "try:\n"
        f"    ls.validate({str(path)!r}, 'calibration/aws.h5', reps=10**9, threads=1)\n"
        "    print('ran to the end')\n"
        "except KeyboardInterrupt as e:\n"
        "    print('interrupted', len(e.partial), 'benchmark' in e.partial.columns,\n"
        "          e.partial.attrs['settings']['reps'])\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    # The one benchmark was in progress: the partial table has its columns and no row, and
    # the settings it was made with.
    assert out.stdout.strip() == f"interrupted 0 True {10**9}", out.stderr


def test_documented_and_typed() -> None:
    import inspect

    for f in (ls.run, ls.sweep, ls.samples, ls.critical_path, ls.validate, ls.profile):
        assert f.__doc__ and len(f.__doc__) > 200, f.__name__
        sig = inspect.signature(f)
        assert sig.return_annotation is not inspect.Signature.empty, f.__name__
    assert ls.__version__
    stub = Path(ls.__file__).with_name("_native.pyi")
    assert stub.is_file() and Path(ls.__file__).with_name("py.typed").is_file()
