//! `loggops_sim._native`, the compiled half of the Python module `loggops_sim`: each function
//! takes a request (a dict that `loggops_sim/__init__.py` builds from the keyword arguments),
//! runs it through `loggops_sim::api` with the GIL released, and hands back what the CLI
//! writes (CSV and JSON text, which the Python half turns into pandas DataFrames and dicts).
//!
//! While a call runs, the calling thread asks Python every 50 ms whether a signal arrived
//! (`PyErr_CheckSignals`, so Ctrl-C in a terminal or a notebook's interrupt): then the sweep
//! stops as the CLI's does after Ctrl-C (no new repetition starts, those in progress finish)
//! and the signal's exception (`KeyboardInterrupt`) is raised, carrying what finished in its
//! `partial` attribute. Errors are `loggops_sim.LoggopsError` with the CLI's message.
// pyo3's macros expand to the FFI glue of the module, which is unsafe code.
#![allow(unsafe_code)]

use std::path::PathBuf;

use loggops_sim::api;
use pyo3::conversion::FromPyObjectOwned;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;

pyo3::create_exception!(
    loggops_sim,
    LoggopsError,
    PyException,
    "A refused argument, an unreadable or malformed input, or a run that cannot complete: the \
     message is the loggops-sim command line's (with file, line and column where it names them)."
);

/// The request dict's values by key.
struct Request<'a, 'py>(&'a Bound<'py, PyDict>);

impl<'py> Request<'_, 'py> {
    /// The value of `key` (missing or `None`: `T`'s `None`, for `Option` fields).
    fn get<T: FromPyObjectOwned<'py>>(&self, key: &str) -> PyResult<T> {
        let py = self.0.py();
        let v = self
            .0
            .get_item(key)?
            .unwrap_or_else(|| py.None().into_bound(py));
        v.extract::<T>().map_err(|e| {
            let e: PyErr = e.into();
            pyo3::exceptions::PyTypeError::new_err(format!("{key}: {}", e.value(py)))
        })
    }

    /// The keys `L`, `o`, `g`, `G`, `O`, `S`.
    fn loggops(&self) -> PyResult<api::LogGops> {
        Ok(api::LogGops {
            l: self.get("L")?,
            o: self.get("o")?,
            g: self.get("g")?,
            big_g: self.get("G")?,
            big_o: self.get("O")?,
            s: self.get("S")?,
        })
    }

    /// A list that may be missing or `None` (empty).
    fn list<T: FromPyObjectOwned<'py>>(&self, key: &str) -> PyResult<Vec<T>> {
        Ok(self.get::<Option<Vec<T>>>(key)?.unwrap_or_default())
    }
}

fn sweep_request(d: &Bound<'_, PyDict>) -> PyResult<api::SweepRequest> {
    let r = Request(d);
    Ok(api::SweepRequest {
        goal: r.list::<PathBuf>("goal")?,
        noise: r.list::<PathBuf>("noise")?,
        nodes: r.list("nodes")?,
        noise_mode: r.list("noise_mode")?,
        reps: r.get("reps")?,
        seed: r.get("seed")?,
        model: r.get("model")?,
        threads: r.get("threads")?,
        params: r.list("params")?,
        loggops: r.loggops()?,
        tick: r.get("tick")?,
        order: r.get("order")?,
        rndv_3l: r.get("rndv_3l")?,
        absolute_latency: r.get::<Option<bool>>("absolute_latency")?.unwrap_or(false),
        cosched: r.get::<Option<bool>>("cosched")?.unwrap_or(false),
        nodes_per_switch: r.get("nodes_per_switch")?,
        force_large: r.get::<Option<bool>>("force_large")?.unwrap_or(false),
        progress: r.get::<Option<bool>>("progress")?.unwrap_or(false),
    })
}

fn validate_request(d: &Bound<'_, PyDict>) -> PyResult<api::ValidateRequest> {
    let r = Request(d);
    Ok(api::ValidateRequest {
        measured: r.list::<PathBuf>("measured")?,
        noise: r.get("noise")?,
        loggops: r.loggops()?,
        noise_mode: r.get("noise_mode")?,
        measure: r.get("measure")?,
        call_overhead: r.get("call_overhead")?,
        clock_resolution: r.get("clock_resolution")?,
        clock_read: r.get("clock_read")?,
        model: r.get("model")?,
        mpi_progress: r.get("mpi_progress")?,
        reps: r.get("reps")?,
        seed: r.get("seed")?,
        threads: r.get("threads")?,
        progress: r.get::<Option<bool>>("progress")?.unwrap_or(false),
    })
}

/// Runs `work` with the GIL released, stopping it when a signal handler raises; returns its
/// outcome and that exception.
fn interruptible<T: Send>(
    py: Python<'_>,
    work: impl FnOnce(&mut api::Runner<'_>) -> Result<T, api::Error> + Send,
) -> (Result<T, api::Error>, Option<PyErr>) {
    py.detach(|| {
        let mut signal: Option<PyErr> = None;
        let out = {
            let mut poll = || match Python::attach(|py| py.check_signals()) {
                Ok(()) => false,
                Err(e) => {
                    signal = Some(e);
                    true
                }
            };
            work(&mut api::Runner::stop_when(&mut poll))
        };
        (out, signal)
    })
}

fn error(e: &api::Error) -> PyErr {
    LoggopsError::new_err(e.message().to_string())
}

/// What a sweep hands to Python: the CLI's CSV (cells and samples) and JSON texts.
fn sweep_dict<'py>(
    py: Python<'py>,
    s: &api::Sweep,
    critical_path: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("cells_csv", s.cells_csv())?;
    d.set_item("samples_csv", s.samples_csv())?;
    d.set_item("json", s.json())?;
    d.set_item("complete", s.complete())?;
    d.set_item("critical_path_csv", critical_path)?;
    Ok(d)
}

/// Runs a sweep (`request`: the keys of `api::SweepRequest`); with `critical_path` its runs
/// are recorded for their critical paths (`sensitivity`: `--sensitivity` too). Returns a dict
/// of `cells_csv`, `samples_csv`, `json`, `complete` and `critical_path_csv`.
#[pyfunction]
#[pyo3(signature = (request, critical_path=false, sensitivity=false))]
fn sweep<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyDict>,
    critical_path: bool,
    sensitivity: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let req = sweep_request(request)?;
    let (out, signal) = interruptible(py, |r| {
        if critical_path {
            r.critical_path(&req, sensitivity)
                .map(|x| (x.sweep, Some(x.csv)))
        } else {
            r.sweep(&req).map(|s| (s, None))
        }
    });
    match (out, signal) {
        (Ok((s, cp)), None) => sweep_dict(py, &s, cp.as_deref()),
        (Ok((s, cp)), Some(sig)) => {
            sig.value(py)
                .setattr("partial", sweep_dict(py, &s, cp.as_deref())?)?;
            Err(sig)
        }
        (Err(_), Some(sig)) => Err(sig),
        (Err(e), None) => Err(error(&e)),
    }
}

/// `loggops-sim validate` (`request`: the keys of `api::ValidateRequest`): its CSV (`csv`) and
/// its JSON's `settings` (`settings_json`). On a signal, the exception's `partial` holds the
/// same dict for the benchmarks finished.
#[pyfunction]
fn validate<'py>(py: Python<'py>, request: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyDict>> {
    let req = validate_request(request)?;
    let dict = |v: &api::Validation| -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("csv", v.csv())?;
        d.set_item("settings_json", v.settings.to_string())?;
        Ok(d)
    };
    match interruptible(py, |r| r.validate(&req)) {
        (Ok(v), Some(sig)) => {
            // The benchmarks finished before the signal, as the CLI writes them.
            sig.value(py).setattr("partial", dict(&v)?)?;
            Err(sig)
        }
        (Err(_), Some(sig)) => Err(sig),
        (Ok(v), None) => dict(&v),
        (Err(e), None) => Err(error(&e)),
    }
}

/// `loggops-sim profile show FILE` as JSON text.
#[pyfunction]
fn profile(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    py.detach(|| api::profile(&path))
        .map(|v| v.to_string())
        .map_err(|e| error(&e))
}

/// The compiled half of `loggops_sim` (see `loggops_sim/__init__.py`).
#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(profile, m)?)?;
    m.add("LoggopsError", m.py().get_type::<LoggopsError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
