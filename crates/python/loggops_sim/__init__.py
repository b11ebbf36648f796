"""loggops-sim from Python: how much slower, and how much more expensive, does a parallel job
get at scale because of network and OS noise?

Each function runs what the ``loggops-sim`` command line runs for the same flags and returns
what it writes, as pandas DataFrames (the columns of its CSV outputs) and dicts::

    import loggops_sim as ls

    cells = ls.sweep("goal/dissemination_16B.goal", noise="calibration/aws.h5",
                     nodes=[64, 1024], noise_mode=["none", "os+net"], reps=100, seed=3)
    cells[["nodes", "noise_mode", "n", "mean_ps", "inflation_mean", "cost_increase_pct_mean"]]

- :func:`sweep` -- one row per cell, the columns of ``--format csv`` (``mean_ps``, ...);
- :func:`samples` -- one row per repetition, the columns of ``--samples FILE``;
- :func:`run` -- both, and the ``--format json`` document (plan, settings, provenance);
- :func:`critical_path` -- the critical-path attribution of ``--critical-path``;
- :func:`validate` -- ``loggops-sim validate``: simulated against measured collectives;
- :func:`profile` -- ``loggops-sim profile show``: what a noise profile holds.

Arguments mirror the command line's flags (``noise_mode`` is ``--noise-mode``, ``L`` is
``-L``); ``None`` leaves a flag out, so the CLI's defaults and checks apply (``seed`` without
``noise`` is refused, as ``--seed`` is). Times and sizes are given as the CLI takes them:
strings with units (``"2.5us"``, ``"0.1ns"`` per byte, ``"64KiB"``), or numbers (a bare number
is ns, as on the command line). Paths are ``str`` or :class:`os.PathLike`
(:class:`pathlib.Path`); relative ones are relative to the current directory. Results are
integer picoseconds in columns ending ``_ps``.

The simulation runs with the GIL released, on all cores by default (``threads``; results
never depend on it). Ctrl-C (or a notebook's interrupt) stops a call as it stops the CLI: no
new repetition starts and those in progress finish; :class:`KeyboardInterrupt` is then raised,
and for :func:`run`, :func:`sweep`, :func:`samples` and :func:`critical_path` its ``partial``
attribute holds a :class:`Run` of what finished (``complete`` false). Errors raise
:class:`LoggopsError` with the CLI's message (with file, line and column where it names
them). Calls run one at a time in a process.
"""

from __future__ import annotations

import functools
import inspect
import io
import json
import numbers
import operator
import os
from dataclasses import dataclass
from decimal import Decimal
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Literal,
    Mapping,
    Optional,
    ParamSpec,
    Sequence,
    Union,
)

import pandas as pd

from . import _native
from ._native import LoggopsError

__all__ = [
    "LoggopsError",
    "Run",
    "critical_path",
    "profile",
    "run",
    "samples",
    "sweep",
    "validate",
]

__version__: str = _native.__version__

StrPath = Union[str, "os.PathLike[str]"]
"""A path: ``str`` or :class:`os.PathLike` (e.g. :class:`pathlib.Path`)."""
Paths = Union[StrPath, Sequence[StrPath]]
"""One path or several (files, globs such as ``"calibration/a*.h5"``, or directories)."""
Quantity = Union[str, int, float]
"""A time, per-byte cost or size as the CLI takes it: ``"2.5us"``, ``"64KiB"``; a bare number
is ns (bytes for sizes)."""
Reps = Union[int, Literal["auto"]]
P = ParamSpec("P")
Model = Literal["queued", "loggopsim"]

_LABELS = {"workload": str, "system": str, "noise_mode": str}


@dataclass(frozen=True)
class Run:
    """A sweep's results, as the CLI writes them.

    Attributes:
        cells: one row per cell (workload, system, nodes, noise mode), the columns of
            ``--format csv``; see :func:`sweep`.
        samples: one row per repetition, the columns of ``--samples FILE``; see
            :func:`samples`.
        result: the ``--format json`` document: ``plan`` (workloads with their SHA-256,
            systems with their profiles' hashes and parameters, settings), ``cells`` with every
            repetition's time, ``command`` (the CLI command that makes this result), ``status``,
            ``verdicts`` and ``differences`` (noise modes and node counts compared, paired by
            repetition: ``result["differences"]``).
        complete: false when Ctrl-C stopped the sweep (then cells and samples hold what
            finished; ``partial`` is true in the rows of cells cut short).
        critical_path: with :func:`critical_path`, its DataFrame; else ``None``.
    """

    cells: pd.DataFrame
    samples: pd.DataFrame
    result: Dict[str, Any]
    complete: bool
    critical_path: Optional[pd.DataFrame] = None

    @property
    def command(self) -> str:
        """The ``loggops-sim`` command line that makes the same result."""
        return str(self.result["command"])


# pandas 3 parses floats exactly by default (and deprecates the option); pandas 2 needs it.
_EXACT: Dict[str, Any] = (
    {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
)


def _frame(text: str, labels: Mapping[str, type] = _LABELS) -> pd.DataFrame:
    """A CSV of the CLI as ``pandas.read_csv`` reads it (floats exactly, only empty fields
    missing)."""
    return pd.read_csv(
        io.StringIO(text), keep_default_na=False, na_values=[""], dtype=dict(labels), **_EXACT
    )


def _paths(value: Optional[Paths], what: str) -> List[str]:
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        value = [value]
    out = []
    for p in value:
        if not isinstance(p, (str, os.PathLike)):
            raise TypeError(f"{what}: expected a path (str or os.PathLike), got {type(p).__name__}")
        out.append(os.fspath(p))
    return out


def _ints(value: Union[int, Sequence[int], None], what: str) -> List[int]:
    if value is None:
        return []
    if isinstance(value, numbers.Integral):
        items: List[Any] = [value]
    elif isinstance(value, Iterable):
        items = list(value)
    else:
        raise TypeError(f"{what}: expected a whole number or a list of them, got {type(value).__name__}")
    out: List[int] = []
    for v in items:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{what}: expected whole numbers, got {type(v).__name__}")
        out.append(operator.index(v))
    return out


def _strs(value: Union[str, Sequence[str], None]) -> List[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def _quantity(value: Optional[Quantity], what: str) -> Optional[str]:
    """A number as the CLI reads it (no exponent: ``1e-05`` becomes ``0.00001``)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{what}: expected a number or a string with a unit, got a bool")
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format(Decimal(repr(value)), "f")
    raise TypeError(f"{what}: expected a number or a string with a unit, got {type(value).__name__}")


def _sweep_request(
    goal: Paths,
    noise: Optional[Paths],
    nodes: Union[int, Sequence[int], None],
    noise_mode: Union[str, Sequence[str], None],
    reps: Optional[Reps],
    seed: Optional[int],
    model: Optional[str],
    threads: Optional[int],
    L: Optional[Quantity],
    o: Optional[Quantity],
    g: Optional[Quantity],
    G: Optional[Quantity],
    O: Optional[Quantity],
    S: Optional[Quantity],
    tick: Optional[Quantity],
    order: Optional[str],
    rndv_3l: Optional[bool],
    absolute_latency: bool,
    cosched: bool,
    nodes_per_switch: Optional[int],
    force_large: bool,
    progress: bool,
    params: Mapping[str, Quantity],
) -> Dict[str, Any]:
    return {
        "goal": _paths(goal, "goal"),
        "noise": _paths(noise, "noise"),
        "nodes": _ints(nodes, "nodes"),
        "noise_mode": _strs(noise_mode),
        "reps": None if reps is None else str(reps),
        "seed": None if seed is None else _ints(seed, "seed")[0],
        "model": model,
        "threads": threads,
        "L": _quantity(L, "L"),
        "o": _quantity(o, "o"),
        "g": _quantity(g, "g"),
        "G": _quantity(G, "G"),
        "O": _quantity(O, "O"),
        "S": _quantity(S, "S"),
        "tick": _quantity(tick, "tick"),
        "order": order,
        "rndv_3l": rndv_3l,
        "absolute_latency": absolute_latency,
        "cosched": cosched,
        "nodes_per_switch": nodes_per_switch,
        "force_large": force_large,
        "progress": progress,
        "params": [(k, _quantity(v, k)) for k, v in params.items()],
    }


def _run(out: Mapping[str, Any]) -> Run:
    cp = out.get("critical_path_csv")
    return Run(
        cells=_frame(out["cells_csv"]),
        samples=_frame(out["samples_csv"]),
        result=json.loads(out["json"]),
        complete=bool(out["complete"]),
        critical_path=None if cp is None else _frame(cp),
    )


def _native_sweep(request: Dict[str, Any], critical_path: bool = False, sensitivity: bool = False) -> Run:
    try:
        out = _native.sweep(request, critical_path, sensitivity)
    except KeyboardInterrupt as e:
        partial = getattr(e, "partial", None)
        if isinstance(partial, dict):
            e.partial = _run(partial)  # type: ignore[attr-defined]
        raise
    return _run(out)


def run(
    goal: Paths,
    noise: Optional[Paths] = None,
    nodes: Union[int, Sequence[int], None] = None,
    noise_mode: Union[str, Sequence[str], None] = None,
    reps: Optional[Reps] = None,
    seed: Optional[int] = None,
    model: Optional[Model] = None,
    threads: Optional[int] = None,
    *,
    L: Optional[Quantity] = None,
    o: Optional[Quantity] = None,
    g: Optional[Quantity] = None,
    G: Optional[Quantity] = None,
    O: Optional[Quantity] = None,  # noqa: E741 (the CLI's -O)
    S: Optional[Quantity] = None,
    tick: Optional[Quantity] = None,
    order: Optional[Literal["stable", "libstdcxx"]] = None,
    rndv_3l: Optional[bool] = None,
    absolute_latency: bool = False,
    cosched: bool = False,
    nodes_per_switch: Optional[int] = None,
    force_large: bool = False,
    progress: bool = False,
    **params: Quantity,
) -> Run:
    """Runs a sweep, ``loggops-sim --goal GOAL ...``: every workload x system x node count x
    noise mode, and returns its cells, its repetitions and the JSON result (:class:`Run`).

    Args:
        goal: schedules (``--goal``): explicit GOAL text, LogGOPSim binary GOAL, or
            rank-parametric schedules; several paths, a glob or a directory run side by side
            (the ``workload`` column).
        noise: noise profiles (``--noise``, HDF5), e.g. ``"calibration/aws.h5"``; several run
            side by side (the ``system`` column). Without one the run is noiseless, with the
            LogGOPS parameters of ``L`` ... ``S`` (LogGOPSim's defaults read as ns).
        nodes: rank counts (``--nodes``), e.g. ``[4, 64, 1024]``; binds a rank-parametric
            schedule, must equal an explicit file's rank count.
        noise_mode: ``"none"``, ``"os"``, ``"net"``, ``"os+net"`` or a list of them
            (``--noise-mode``); by default what the profiles hold.
        reps: Monte-Carlo repetitions per cell (``--reps``): a number, or ``"auto"`` (the
            default with noise: 32, doubled up to 1000 until the cell is precise).
        seed: master seed (``--seed``, default 1); a repetition's result depends only on the
            inputs, the seed and its index.
        model: ``"queued"`` (the default with noise) or ``"loggopsim"`` (``--model``).
        threads: worker threads (``--threads``, default all cores); results never depend
            on it.
        L, o, g, G, O, S: LogGOPS parameters (``-L`` ...): they replace the profile's (for every
            profile) or LogGOPSim's defaults.
        tick: what a plain calc number of an explicit GOAL file is (``--tick``, default
            ``"1ns"``; ``"1ps"`` for the paper's files).
        order: ``"stable"`` or ``"libstdcxx"`` (``--order``).
        rndv_3l: rendezvous messages pay 3L (``--rndv-3l``).
        absolute_latency: draw latencies as the profile stores them (``--absolute-latency``).
        cosched: co-scheduled OS noise (``--cosched``).
        nodes_per_switch: ranks per switch (``--nodes-per-switch``).
        force_large: run even when the up-front estimate says it is too large
            (``--force-large``).
        progress: draw the CLI's progress bar on stderr (on a terminal only).
        **params: parameters of a rank-parametric schedule (``--param NAME=VALUE``), e.g.
            ``dgemm="21us"``.

    Raises:
        LoggopsError: the CLI's error message.
        KeyboardInterrupt: Ctrl-C; ``partial`` holds the :class:`Run` of what finished.
    """
    request = _sweep_request(
        goal, noise, nodes, noise_mode, reps, seed, model, threads, L, o, g, G, O, S, tick,
        order, rndv_3l, absolute_latency, cosched, nodes_per_switch, force_large, progress,
        params,
    )
    return _native_sweep(request)


def _part(run: Callable[P, Run], part: str, name: str, doc: str) -> Callable[P, pd.DataFrame]:
    """``run`` returning one of its DataFrames: the same parameters, its own name and doc."""

    @functools.wraps(run)
    def call(*args: P.args, **kwargs: P.kwargs) -> pd.DataFrame:
        frame: pd.DataFrame = getattr(run(*args, **kwargs), part)
        return frame

    call.__name__ = call.__qualname__ = name
    call.__doc__ = doc
    call.__signature__ = inspect.signature(run).replace(  # type: ignore[attr-defined]
        return_annotation=pd.DataFrame
    )
    return call


sweep = _part(
    run,
    "cells",
    "sweep",
    """Runs a sweep and returns one row per cell: ``loggops-sim ... --format csv``.

    The arguments are :func:`run`'s. Columns (times in integer ps): ``workload``,
    ``system``, ``nodes``, ``noise_mode``, ``n`` (repetitions), ``mean_ps``, ``std_ps``,
    ``min_ps``, ``p1_ps``, ``p5_ps``, ``q1_ps``, ``median_ps``, ``q3_ps``, ``p95_ps``,
    ``p99_ps``, ``max_ps``, the 95 % confidence intervals of the mean and the median, boxplot
    notches and whiskers, ``outliers_lo``/``outliers_hi``, ``noiseless_ps``,
    ``inflation_mean``/``inflation_median`` (over noiseless), the cost model and USD per run at
    the on-demand and committed prices, ``cost_increase_pct_mean`` (the paper's cost
    inflation) with its 95 % interval, then how the cell was made: ``partial``,
    ``run_status``, ``seed``, ``reps_rule``, ``model``, ``tick_ps``, ``profile``,
    ``profile_sha256``, the LogGOPS parameters near and far, ``workload_path``,
    ``workload_sha256``, ``tool_version``, ``schema_version``. README.md ("Columns") and
    ``crates/report/src/lib.rs`` define each. Missing values (a confidence interval of one
    repetition, a price a profile lacks) are NaN.

    Raises:
        LoggopsError: the CLI's error message.
        KeyboardInterrupt: Ctrl-C; ``partial`` holds the :class:`Run` of what finished.
    """,
)

samples = _part(
    run,
    "samples",
    "samples",
    """Runs a sweep and returns one row per repetition: ``loggops-sim ... --samples FILE``.

    The arguments are :func:`run`'s. Columns: ``workload``, ``system``, ``nodes``,
    ``noise_mode``, ``rep`` (0-based repetition index), ``time_ps`` (simulated time of the
    latest rank), ``noiseless_ps``, ``run_ps`` (the time one run is billed for),
    ``on_demand_usd``, ``committed_usd`` (NaN without a price), ``cost_increase_pct`` (over
    noiseless) and ``partial``. A boxplot of ``time_ps`` per ``nodes`` and ``noise_mode`` is
    the paper's Fig. 14.

    Raises:
        LoggopsError: the CLI's error message.
        KeyboardInterrupt: Ctrl-C; ``partial`` holds the :class:`Run` of what finished.
    """,
)


def critical_path(
    goal: Paths,
    noise: Optional[Paths] = None,
    nodes: Union[int, Sequence[int], None] = None,
    noise_mode: Union[str, Sequence[str], None] = None,
    reps: Optional[Reps] = None,
    seed: Optional[int] = None,
    model: Optional[Model] = None,
    threads: Optional[int] = None,
    *,
    sensitivity: bool = False,
    L: Optional[Quantity] = None,
    o: Optional[Quantity] = None,
    g: Optional[Quantity] = None,
    G: Optional[Quantity] = None,
    O: Optional[Quantity] = None,  # noqa: E741
    S: Optional[Quantity] = None,
    tick: Optional[Quantity] = None,
    order: Optional[Literal["stable", "libstdcxx"]] = None,
    rndv_3l: Optional[bool] = None,
    absolute_latency: bool = False,
    cosched: bool = False,
    nodes_per_switch: Optional[int] = None,
    force_large: bool = False,
    progress: bool = False,
    **params: Quantity,
) -> pd.DataFrame:
    """Why a run takes as long as it does: ``loggops-sim ... --critical-path=FILE --format
    csv``, one workload on at most one system.

    Every picosecond of the critical path is attributed to compute, CPU overhead (o, O),
    NIC gap (g, G), latency, waiting for a busy CPU or NIC, OS detours and network noise.
    Without ``noise``: one row per node count with the columns ``workload``, ``nodes``,
    ``finish_ps``, ``last_rank``, one ``<part>_ps`` column per part, the derivatives
    ``dT_dL``, ``dT_do``, ``dT_dg``, ``dT_dG_per_byte``, ``dT_dO_per_byte``, ``ties`` and, with
    ``sensitivity=True``, the latency tolerances ``tolerance_1pct_ps``/``tolerance_5pct_ps``
    (the extra latency per message that costs 1 % resp. 5 %). With ``noise``: one row per
    cell and part (``part``, its ``mean_ps``, ``p50_ps``, ``p95_ps`` over the repetitions,
    ``noiseless_ps``, ``p95_inflation_ps`` and ``p95_inflation_share``: which part the slow
    repetitions spend their extra time on). The other arguments are :func:`run`'s; runs are
    recorded on the exact global engine (same answers, slower).
    """
    request = _sweep_request(
        goal, noise, nodes, noise_mode, reps, seed, model, threads, L, o, g, G, O, S, tick,
        order, rndv_3l, absolute_latency, cosched, nodes_per_switch, force_large, progress,
        params,
    )
    frame = _native_sweep(request, critical_path=True, sensitivity=sensitivity).critical_path
    assert frame is not None
    return frame


def validate(
    measured: Paths,
    noise: StrPath,
    *,
    noise_mode: Optional[str] = None,
    measure: Optional[Literal["barrier", "collective"]] = None,
    call_overhead: Optional[Quantity] = None,
    clock_resolution: Optional[Quantity] = None,
    clock_read: Optional[Quantity] = None,
    model: Optional[Model] = None,
    mpi_progress: Optional[Literal["async", "polled"]] = None,
    reps: Optional[int] = None,
    seed: Optional[int] = None,
    threads: Optional[int] = None,
    L: Optional[Quantity] = None,
    o: Optional[Quantity] = None,
    g: Optional[Quantity] = None,
    G: Optional[Quantity] = None,
    O: Optional[Quantity] = None,  # noqa: E741
    S: Optional[Quantity] = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Simulated against measured collectives: ``loggops-sim validate MEASURED --noise NOISE
    --format csv``, one row per measured benchmark.

    Args:
        measured: measured CSV files (``<pattern>_<nodes>_<bytes>.csv``, as the paper's
            benchmark programs write them) or directories of them.
        noise: the measured system's noise profile.
        noise_mode: ``"os+net"`` (the default), ``"os"``, ``"net"`` or ``"none"``.
        measure: ``"barrier"`` (the default: as the programs measured, each rank timed from
            its own barrier exit) or ``"collective"`` (the paper's comparison).
        call_overhead: CPU time each rank spends entering the collective (``--call-overhead``).
        clock_resolution, clock_read: the step of the clock the benchmark timed itself with
            and the cost of one read (``--clock-resolution``, ``--clock-read``; default: the
            profile's clock, else a perfect one).
        model: ``"queued"`` (the default) or ``"loggopsim"``.
        mpi_progress: whether a message above the eager threshold advances while a rank
            computes: ``"async"`` or ``"polled"`` (``--mpi-progress``; default: the profile's
            rule, else async).
        reps: repetitions per benchmark (default 1000).
        seed, threads, L, o, g, G, O, S, progress: as in :func:`run`.

    Columns: ``benchmark``, ``pattern``, ``nodes``, ``bytes``, the measured and simulated
    mean, p50, p95 and p99 (ps), their ratios (simulated / measured), the paper's mean error,
    the noiseless time, whether a statistic is off (VALIDATION.md) and the measured ``file``.
    ``attrs["settings"]`` is the JSON output's ``settings`` (a dict): how the comparison was
    made and, when ``mpi_progress`` is not given, ``mpi_progress_evidence`` (the progress rule
    the measured means favour; ``None`` when no benchmark depends on it).

    Raises:
        KeyboardInterrupt: Ctrl-C; ``partial`` holds the DataFrame of the benchmarks finished
            before it (the benchmark in progress and the later ones are left out), with its
            ``attrs["settings"]``.
    """
    request = {
        "measured": _paths(measured, "measured"),
        "noise": _paths(noise, "noise")[0],
        "noise_mode": noise_mode,
        "measure": measure,
        "call_overhead": _quantity(call_overhead, "call_overhead"),
        "clock_resolution": _quantity(clock_resolution, "clock_resolution"),
        "clock_read": _quantity(clock_read, "clock_read"),
        "model": model,
        "mpi_progress": mpi_progress,
        "reps": reps,
        "seed": seed,
        "threads": threads,
        "L": _quantity(L, "L"),
        "o": _quantity(o, "o"),
        "g": _quantity(g, "g"),
        "G": _quantity(G, "G"),
        "O": _quantity(O, "O"),
        "S": _quantity(S, "S"),
        "progress": progress,
    }
    try:
        out = _native.validate(request)
    except KeyboardInterrupt as e:
        partial = getattr(e, "partial", None)
        if isinstance(partial, dict):
            e.partial = _validation_frame(partial)  # type: ignore[attr-defined]
        raise
    return _validation_frame(out)


def _validation_frame(out: Mapping[str, str]) -> pd.DataFrame:
    """The native validate's output as validate's DataFrame, the settings in its attrs."""
    frame = _frame(out["csv"], {"benchmark": str, "pattern": str})
    frame.attrs["settings"] = json.loads(out["settings_json"])
    return frame


def profile(path: StrPath) -> Dict[str, Any]:
    """What a noise profile holds: ``loggops-sim profile show FILE`` as a dict.

    Keys: ``path``, ``system``, ``description``, ``size_bytes``, ``sha256``,
    ``nodes_per_switch``; ``near`` and ``far`` (``None``: same as near), each with ``params``
    (``L_ps``, ``o_ps``, ``g_ps``, ``G_ps_per_byte``, ``O_ps_per_byte``, ``S_bytes``), the
    distributions ``latency_ps``, ``G_ps_per_byte``, ``o_ps``, ``g_ps`` (``None`` when
    absent; else ``{"kind": ..., "quantiles": {"min", "p1", "p5", "p25", "p50", "p75", "p95",
    "p99", "p99.9", "max"}}``, as stored: the noise model scales latency and G draws so that
    their median is L resp. G) and ``bandwidth_block_bytes``; ``os_noise`` with ``traces``
    (``detours``, ``period_ps``, ``busy_fraction``, ``detours_per_s``, ``median_ps``,
    ``max_ps``, ``captured_detours``: the capture's detours when the trace keeps only its first
    ones, else ``None``) and ``process``; ``prices`` (USD per node-hour, ``None`` when unknown);
    ``provenance`` (``created``, ``tool_version``, ``sources``, ``command``, ``notes``).
    """
    text = _native.profile(_paths(path, "path")[0])
    result: Dict[str, Any] = json.loads(text)
    return result
