# Type stub of the compiled half of loggops_sim (crates/python/src/lib.rs). The public API is
# loggops_sim/__init__.py; these functions take the request dicts it builds.
from typing import Any, Mapping, Optional, TypedDict

__version__: str

class LoggopsError(Exception):
    """A refused argument, an unreadable or malformed input, or a run that cannot complete:
    the message is the loggops-sim command line's."""

class SweepOutput(TypedDict):
    cells_csv: str
    samples_csv: str
    json: str
    complete: bool
    critical_path_csv: Optional[str]

def sweep(
    request: Mapping[str, Any], critical_path: bool = False, sensitivity: bool = False
) -> SweepOutput:
    """Runs a sweep; the keys of `request` are those of `loggops_sim::api::SweepRequest`
    (`L`, `o`, `g`, `G`, `O`, `S` for its `l` ... `s`). Raises KeyboardInterrupt (with the
    output of what finished as `partial`) when a signal handler raised during the run."""

class ValidateOutput(TypedDict):
    csv: str
    settings_json: str

def validate(request: Mapping[str, Any]) -> ValidateOutput:
    """`loggops-sim validate`: its CSV and its JSON's `settings`; `request` as
    `loggops_sim::api::ValidateRequest`. Raises KeyboardInterrupt (with the same dict for
    the benchmarks finished as `partial`) when a signal handler raised during the run."""

def profile(path: str) -> str:
    """`loggops-sim profile show FILE` as JSON text."""
